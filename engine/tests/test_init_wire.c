/* test_init_wire.c — the wire between the controller and init (sandbox/init_wire.h), on real
 * SOCK_SEQPACKET pairs: a message comes back as sent with its payload and descriptors; a packet
 * too short, of the wrong length for its tag, of an unknown tag, with a flag its tag has not, or
 * without the descriptor its tag carries is refused with its own error and no descriptor left
 * open; the end of the socket is -EPIPE. */
#include "test.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "sandbox/init_wire.h"

static void pair(int sv[2])
{
    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
}

static ino_t inode_of(int fd)
{
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    return st.st_ino;
}

/* Raw bytes and descriptors, as a broken or hostile sender would put them. */
static void send_raw(int sock, const void *bytes, size_t n, const int *fds, int nfds)
{
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {.iov_base = (void *)bytes, .iov_len = n};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > 0) {
        memset(u.buf, 0, sizeof u.buf);
        m.msg_control = u.buf;
        m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    }
    CHECK(sendmsg(sock, &m, 0) == (ssize_t)n);
}

static void test_round_trip(void)
{
    int sv[2], fds[2];
    pair(sv);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CHECK(null >= 0);
    CHECK_EQ_INT(init_wire_send_fd(sv[0], INIT_WIRE_CONFIG, 0, null), 0);
    struct init_wire_msg m;
    CHECK_EQ_INT(init_wire_recv(sv[1], &m, NULL, 0, fds, 0), 0);
    CHECK_EQ_INT(m.tag, INIT_WIRE_CONFIG);
    CHECK(fds[0] >= 0 && fds[1] == -1);
    CHECK(inode_of(fds[0]) == inode_of(null));
    CHECK(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
    close(fds[0]);

    /* a session's spawn: flags, a payload and two descriptors */
    int two[2] = {null, null};
    struct init_wire_msg spawn = {
        .tag = INIT_WIRE_SPAWN, .flags = INIT_WIRE_BACKGROUND, .id = 7, .pid = -3, .value = 9};
    CHECK_EQ_INT(init_wire_send(sv[0], &spawn, "echo hi", 7, two, 2), 0);
    char buf[64];
    CHECK_EQ_INT(init_wire_recv(sv[1], &m, buf, sizeof buf, fds, 0), 7);
    CHECK(memcmp(buf, "echo hi", 7) == 0);
    CHECK(m.tag == INIT_WIRE_SPAWN && m.flags == INIT_WIRE_BACKGROUND && m.id == 7 && m.pid == -3 &&
          m.value == 9 && m.nfds == 2 && m.len == 7);
    CHECK(fds[0] >= 0 && fds[1] >= 0);
    close(fds[0]);
    close(fds[1]);

    /* a message without descriptor, and the status with its payload */
    CHECK_EQ_INT(init_wire_send_fd(sv[1], INIT_WIRE_SETUP_DONE, 0, -1), 0);
    CHECK_EQ_INT(init_wire_recv(sv[0], &m, NULL, 0, fds, 0), 0);
    CHECK(m.tag == INIT_WIRE_SETUP_DONE && fds[0] == -1 && fds[1] == -1);
    struct init_wire_status st = {.exit_code = 130, .signal = 2}, got;
    struct init_wire_msg sm = {.tag = INIT_WIRE_STATUS};
    CHECK_EQ_INT(init_wire_send(sv[1], &sm, &st, sizeof st, NULL, 0), 0);
    CHECK_EQ_INT(init_wire_recv(sv[0], &m, &got, sizeof got, fds, 0), (long)sizeof got);
    CHECK(got.exit_code == 130 && got.signal == 2);

    close(sv[1]);
    CHECK_EQ_INT(init_wire_recv(sv[0], &m, NULL, 0, fds, 0), -EPIPE);
    close(sv[0]);
    close(null);
}

/* The descriptors a refused packet brought are closed: the lowest free descriptor is the same
 * before and after. */
static int lowest_free(void)
{
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    close(fd);
    return fd;
}

static void expect_refused(const struct init_wire_msg *head, const void *payload, size_t len,
                           int nfds, size_t cap, long want)
{
    int sv[2], fds[2];
    pair(sv);
    char packet[sizeof *head + 64];
    CHECK(len <= 64);
    memcpy(packet, head, sizeof *head);
    if (len)
        memcpy(packet + sizeof *head, payload, len);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int three[3] = {null, null, null};
    send_raw(sv[0], packet, sizeof *head + len, three, nfds);
    close(null);
    int before = lowest_free();
    char buf[64];
    struct init_wire_msg m;
    CHECK_EQ_INT(init_wire_recv(sv[1], &m, buf, cap, fds, 0), want);
    CHECK(fds[0] == -1 && fds[1] == -1);
    CHECK_EQ_INT(lowest_free(), before);
    CHECK(init_wire_strerror(want)[0] != '\0');
    CHECK(init_wire_refused(want));
    close(sv[0]);
    close(sv[1]);
}

static void test_refused(void)
{
    struct init_wire_msg h = {.tag = INIT_WIRE_CONFIG, .nfds = 1};
    /* the config's descriptor missing, or one too many */
    struct init_wire_msg no_fd = {.tag = INIT_WIRE_CONFIG, .nfds = 0};
    expect_refused(&no_fd, NULL, 0, 0, 0, -EBADFD);
    struct init_wire_msg said_one = {.tag = INIT_WIRE_CONFIG, .nfds = 1};
    expect_refused(&said_one, NULL, 0, 0, 0, -EBADFD); /* said one, none came */
    struct init_wire_msg two = {.tag = INIT_WIRE_CONFIG, .nfds = 2};
    expect_refused(&two, NULL, 0, 2, 0, -EBADFD);
    /* three descriptors: more than the wire carries, cut by the kernel */
    expect_refused(&h, NULL, 0, 3, 0, -EBADMSG);
    /* an unknown tag, tag 0, a flag the tag has not, padding set */
    struct init_wire_msg unknown = {.tag = INIT_WIRE_TAG_END};
    expect_refused(&unknown, NULL, 0, 0, 0, -EPROTO);
    struct init_wire_msg zero = {.tag = 0};
    expect_refused(&zero, NULL, 0, 0, 0, -EPROTO);
    struct init_wire_msg flagged = {.tag = INIT_WIRE_SETUP_DONE, .flags = 1};
    expect_refused(&flagged, NULL, 0, 0, 0, -EBADMSG);
    struct init_wire_msg padded = {.tag = INIT_WIRE_SETUP_DONE, .pad = 1};
    expect_refused(&padded, NULL, 0, 0, 0, -EBADMSG);
    /* a length other than the payload's, a payload the tag has not, the status one byte short,
     * a payload bigger than the receiver's room, a filter of no instruction */
    struct init_wire_msg lying = {.tag = INIT_WIRE_SETUP_DONE, .len = 4};
    expect_refused(&lying, NULL, 0, 0, 0, -EBADMSG);
    struct init_wire_msg extra = {.tag = INIT_WIRE_SETUP_DONE, .len = 4};
    expect_refused(&extra, "abcd", 4, 0, 64, -EBADMSG);
    struct init_wire_msg short_status = {.tag = INIT_WIRE_STATUS, .len = 7};
    expect_refused(&short_status, "1234567", 7, 0, 64, -EBADMSG);
    struct init_wire_msg big = {.tag = INIT_WIRE_STATUS, .len = 8};
    expect_refused(&big, "12345678", 8, 0, 4, -EBADMSG);
    struct init_wire_msg empty_filter = {.tag = INIT_WIRE_FILTER, .len = 0};
    expect_refused(&empty_filter, NULL, 0, 0, 64, -EBADMSG);
}

/* A packet shorter than the header, and the pure check on its own. */
static void test_short(void)
{
    int sv[2], fds[2];
    pair(sv);
    send_raw(sv[0], "\x15", 1, NULL, 0);
    struct init_wire_msg m;
    CHECK_EQ_INT(init_wire_recv(sv[1], &m, NULL, 0, fds, 0), -EBADMSG);
    CHECK_EQ_INT(init_wire_parse("\x15", 1, 0, 0, &m), -EBADMSG);
    struct init_wire_msg ok = {.tag = INIT_WIRE_PTY, .nfds = 1};
    CHECK_EQ_INT(init_wire_parse(&ok, sizeof ok, 1, 0, &m), 0);
    CHECK_EQ_INT(init_wire_parse(&ok, sizeof ok, 1, 1, &m), -EBADMSG); /* truncated */
    CHECK_EQ_INT(init_wire_parse(&ok, sizeof ok, 0, 0, &m), -EBADFD);
    CHECK(strcmp(init_wire_tag_name(INIT_WIRE_PTY), "INIT_WIRE_PTY") == 0);
    CHECK(strcmp(init_wire_tag_name(200), "an unknown tag") == 0);
    CHECK(!init_wire_refused(-EPIPE) && !init_wire_refused(-EBADF) && !init_wire_refused(0));
    /* -EAGAIN without a message */
    CHECK_EQ_INT(init_wire_recv(sv[1], &m, NULL, 0, fds, MSG_DONTWAIT), -EAGAIN);
    close(sv[0]);
    close(sv[1]);
}

/* Every tag has its row: a name, and a message of it as its row allows passes. */
/* A packet of tag with len payload bytes, as init_wire_parse sees it. */
static long parse_packet(unsigned tag, size_t len, int nfds)
{
    static char packet[sizeof(struct init_wire_msg) + 256];
    struct init_wire_msg head = {.tag = (uint8_t)tag, .nfds = (uint8_t)nfds, .len = (uint32_t)len};
    CHECK(len <= 256);
    memcpy(packet, &head, sizeof head);
    memset(packet + sizeof head, 'a', len);
    struct init_wire_msg m;
    return init_wire_parse(packet, sizeof head + len, nfds, 0, &m);
}

/* A rollback's swap names a folder of 1 to 64 bytes and carries no descriptor; its answer is a
 * payload (mount ids or the line why) and no descriptor either. */
static void test_review_swap(void)
{
    CHECK_EQ_INT(parse_packet(INIT_WIRE_REVIEW_SWAP, 12, 0), 12);
    CHECK_EQ_INT(parse_packet(INIT_WIRE_REVIEW_SWAP, 64, 0), 64);
    CHECK(init_wire_refused(parse_packet(INIT_WIRE_REVIEW_SWAP, 0, 0)));
    CHECK(init_wire_refused(parse_packet(INIT_WIRE_REVIEW_SWAP, 65, 0)));
    CHECK(init_wire_refused(parse_packet(INIT_WIRE_REVIEW_SWAP, 12, 1)));
    CHECK_EQ_INT(parse_packet(INIT_WIRE_REVIEW_SWAPPED, 0, 0), 0);
    CHECK_EQ_INT(parse_packet(INIT_WIRE_REVIEW_SWAPPED, 8, 0), 8);
    CHECK(init_wire_refused(parse_packet(INIT_WIRE_REVIEW_SWAPPED, 8, 1)));
}

static void test_every_tag_named(void)
{
    for (unsigned t = 1; t < INIT_WIRE_TAG_END; t++)
        CHECK(strncmp(init_wire_tag_name(t), "INIT_WIRE_", 10) == 0);
}

TEST_MAIN({"round_trip", test_round_trip}, {"refused", test_refused}, {"short", test_short},
          {"every_tag_named", test_every_tag_named}, {"review_swap", test_review_swap})
