/* test_unix_peer.c — what the kernel says about a Unix socket's peer (base/unix_peer.h), on real
 * socket pairs and processes: the peer's socket inode (sock_diag) is the other end's, and none
 * once that end is closed; a process holds a socket it has open and not one it closed or never
 * had; a pidfd's pid is its process's while it lives and no longer once it is reaped;
 * SO_PEERPIDFD names the connecting process where the kernel has it (6.5). */
#include "test.h"

#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "base/unix_peer.h"

static ino_t inode_of(int fd)
{
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    return st.st_ino;
}

static void test_peer_inode(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    ino_t peer = 0;
    CHECK_EQ_INT(unix_peer_inode(sv[0], &peer), 0);
    CHECK(peer == inode_of(sv[1]));
    CHECK_EQ_INT(unix_peer_inode(sv[1], &peer), 0);
    CHECK(peer == inode_of(sv[0]));
    close(sv[1]);
    CHECK_EQ_INT(unix_peer_inode(sv[0], &peer), -ENOTCONN);
    close(sv[0]);
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CHECK_EQ_INT(unix_peer_inode(fd, &peer), -ENOTSOCK);
    close(fd);
}

static void test_pid_holds(void)
{
    int sv[2], go[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    CHECK(pipe2(go, O_CLOEXEC) == 0);
    ino_t a = inode_of(sv[0]), b = inode_of(sv[1]);
    CHECK_EQ_INT(unix_peer_pid_holds(getpid(), a), 1);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) { /* keeps sv[1] only, then waits */
        char x;
        close(sv[0]);
        close(go[1]);
        (void)!read(go[0], &x, 1);
        _exit(0);
    }
    close(go[0]);
    close(sv[1]);
    /* the child's table: without the end it closed (bounded wait for its close) */
    for (int i = 0; i < 1000 && unix_peer_pid_holds(child, a) == 1; i++)
        usleep(1000);
    CHECK_EQ_INT(unix_peer_pid_holds(child, a), 0);
    CHECK_EQ_INT(unix_peer_pid_holds(child, b), 1);
    CHECK_EQ_INT(unix_peer_pid_holds(getpid(), b), 0);
    close(go[1]);
    CHECK(waitpid(child, NULL, 0) == child);
    CHECK(unix_peer_pid_holds(child, b) < 0); /* reaped: no table */
    close(sv[0]);
}

static void test_pidfd_pid(void)
{
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    CHECK(pidfd >= 0);
    CHECK_EQ_INT(unix_peer_pidfd_pid(pidfd), child);
    kill(child, SIGKILL);
    CHECK(waitpid(child, NULL, 0) == child);
    CHECK(unix_peer_pidfd_pid(pidfd) <= 0);
    close(pidfd);
    CHECK_EQ_INT(unix_peer_pidfd_pid(-1), -1);
}

static void test_peer_pidfd(void)
{
    int sv[2], pidfd = -1;
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    int rc = unix_peer_pidfd(sv[0], &pidfd);
    if (rc == -ENOPROTOOPT) {
        close(sv[0]);
        close(sv[1]);
        TEST_SKIP("no SO_PEERPIDFD (Linux 6.5)");
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(unix_peer_pidfd_pid(pidfd), getpid());
    close(pidfd);
    close(sv[0]);
    close(sv[1]);
}

TEST_MAIN({"peer_inode", test_peer_inode}, {"pid_holds", test_pid_holds},
          {"pidfd_pid", test_pidfd_pid}, {"peer_pidfd", test_peer_pidfd})
