/* test_confine.c — confine_* against the real kernel. The capability tests become uid 0 with
 * every capability in a fresh user namespace (as the sandbox's command process is), confine,
 * exec /bin/cat /proc/self/status and read what the kernel reports after exec. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "sandbox/confine.h"
#include "test.h"

/* Become uid/gid 0 with a full capability set in a new user namespace, mapping our ids. */
static void enter_userns_as_root(void)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    CHECK_EQ_INT(unshare(CLONE_NEWUSER), 0);
    char map[64];
    int fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    CHECK_EQ_INT(write(fd, "deny", 4), 4);
    close(fd);
    int n = snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
    fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    CHECK_EQ_INT(write(fd, map, (size_t)n), n);
    close(fd);
    n = snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
    fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    CHECK_EQ_INT(write(fd, map, (size_t)n), n);
    close(fd);
    CHECK_EQ_INT(getuid(), 0);
}

/* Run `/bin/cat /proc/self/status` (after exec: what the command would have) into buf. */
static void status_after_exec(char *buf, size_t len)
{
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 1);
        execl("/bin/cat", "cat", "/proc/self/status", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    size_t got = 0;
    ssize_t k;
    while (got + 1 < len && (k = read(p[0], buf + got, len - 1 - got)) > 0)
        got += (size_t)k;
    buf[got] = '\0';
    close(p[0]);
    int st = 0;
    CHECK_EQ_INT(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void check_all_caps_zero(const char *status)
{
    CHECK_STR_CONTAINS(status, "CapInh:\t0000000000000000\n");
    CHECK_STR_CONTAINS(status, "CapPrm:\t0000000000000000\n");
    CHECK_STR_CONTAINS(status, "CapEff:\t0000000000000000\n");
    CHECK_STR_CONTAINS(status, "CapBnd:\t0000000000000000\n");
    CHECK_STR_CONTAINS(status, "CapAmb:\t0000000000000000\n");
    CHECK_STR_CONTAINS(status, "NoNewPrivs:\t1\n");
}

static void test_userns_root_loses_everything(void)
{
    enter_userns_as_root();
    /* Precondition: uid 0 in the namespace really starts with capabilities after exec. */
    char before[8192];
    status_after_exec(before, sizeof before);
    CHECK(strstr(before, "CapEff:\t0000000000000000\n") == NULL);
    CHECK(strstr(before, "CapBnd:\t0000000000000000\n") == NULL);

    CHECK_EQ_INT(confine_drop_capabilities(), 0);
    CHECK_EQ_INT(confine_no_new_privs(), 0);
    char after[8192];
    status_after_exec(after, sizeof after);
    CHECK_STR_CONTAINS(after, "Uid:\t0\t0\t0\t0\n"); /* still uid 0, yet powerless */
    check_all_caps_zero(after);
    /* Securebits locked: uid 0 cannot turn NOROOT back off, nor regain a capability. */
    int sb = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    CHECK(sb >= 0);
    CHECK((sb & 0x3) == 0x3); /* SECBIT_NOROOT | SECBIT_NOROOT_LOCKED */
    CHECK_EQ_INT(prctl(PR_SET_SECUREBITS, 0, 0, 0, 0), -1);
    CHECK_EQ_INT(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 0 /* CAP_CHOWN */, 0, 0), -1);
    /* A second call (nothing left to drop) is still fine. */
    CHECK_EQ_INT(confine_drop_capabilities(), 0);
}

static void test_unprivileged(void)
{
    /* An ordinary uid with no capabilities: nothing to drop, nothing fails. */
    if (getuid() == 0) {
        CHECK_EQ_INT(setresgid(65534, 65534, 65534), 0);
        CHECK_EQ_INT(setresuid(65534, 65534, 65534), 0);
    }
    CHECK_EQ_INT(confine_drop_capabilities(), 0);
    CHECK_EQ_INT(confine_no_new_privs(), 0);
    char st[8192];
    status_after_exec(st, sizeof st);
    CHECK_STR_CONTAINS(st, "CapEff:\t0000000000000000\n");
    CHECK_STR_CONTAINS(st, "CapPrm:\t0000000000000000\n");
    CHECK_STR_CONTAINS(st, "CapAmb:\t0000000000000000\n");
    CHECK_STR_CONTAINS(st, "NoNewPrivs:\t1\n");
}

static void test_root_without_setpcap_refused(void)
{
    /* uid 0 that cannot lock SECBIT_NOROOT would get its bounding set back at exec: refuse. */
    enter_userns_as_root();
    struct __attribute__((packed)) {
        uint32_t version;
        int pid;
    } hdr = {0x20080522, 0};
    uint32_t data[6] = {0}; /* all capabilities cleared */
    CHECK_EQ_INT(syscall(SYS_capset, &hdr, data), 0);
    CHECK_EQ_INT(confine_drop_capabilities(), -EPERM);
}

/* Root writes: the three file capabilities survive exec as ambient ones, nothing else does
 * (CAP_SYS_ADMIN asked for too is not kept), and nothing more can be raised. */
static void test_root_writes_keeps_three(void)
{
    enter_userns_as_root();
    CHECK_EQ_INT(confine_keep_capabilities(CONFINE_ROOT_WRITE_CAPS | (1ull << CAP_SYS_ADMIN)), 0);
    CHECK_EQ_INT(confine_no_new_privs(), 0);
    char after[8192];
    status_after_exec(after, sizeof after);
    /* CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER: bits 0, 1, 3 */
    CHECK_STR_CONTAINS(after, "CapInh:\t000000000000000b\n");
    CHECK_STR_CONTAINS(after, "CapPrm:\t000000000000000b\n");
    CHECK_STR_CONTAINS(after, "CapEff:\t000000000000000b\n");
    CHECK_STR_CONTAINS(after, "CapBnd:\t000000000000000b\n");
    CHECK_STR_CONTAINS(after, "CapAmb:\t000000000000000b\n");
    CHECK_STR_CONTAINS(after, "NoNewPrivs:\t1\n");
    int sb = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    CHECK(sb >= 0);
    CHECK((sb & 0x3) == 0x3);   /* SECBIT_NOROOT | SECBIT_NOROOT_LOCKED */
    CHECK((sb & 0xc0) == 0xc0); /* SECBIT_NO_CAP_AMBIENT_RAISE | its lock */
    CHECK_EQ_INT(prctl(PR_SET_SECUREBITS, 0, 0, 0, 0), -1);
    CHECK_EQ_INT(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_FSETID, 0, 0), -1);
}

static void test_root_writes_without_setpcap_refused(void)
{
    enter_userns_as_root();
    struct __attribute__((packed)) {
        uint32_t version;
        int pid;
    } hdr = {0x20080522, 0};
    uint32_t data[6] = {0xb, 0xb, 0}; /* the three kept capabilities, no CAP_SETPCAP */
    CHECK_EQ_INT(syscall(SYS_capset, &hdr, data), 0);
    CHECK_EQ_INT(confine_keep_capabilities(CONFINE_ROOT_WRITE_CAPS), -EPERM);
}

static void test_rlimits(void)
{
    struct sandbox_config cfg = {0};
    cfg.rlimits[0] = (struct sandbox_rlimit){RLIMIT_CORE, 0, 0};
    cfg.rlimits[1] = (struct sandbox_rlimit){RLIMIT_NOFILE, 256, 512};
    cfg.rlimits[2] = (struct sandbox_rlimit){RLIMIT_STACK, 8u << 20, RLIM_INFINITY};
    cfg.n_rlimits = 3;
    CHECK_EQ_INT(confine_rlimits(&cfg), 0);
    struct rlimit rl;
    CHECK_EQ_INT(getrlimit(RLIMIT_CORE, &rl), 0);
    CHECK_EQ_INT(rl.rlim_cur, 0);
    CHECK_EQ_INT(rl.rlim_max, 0);
    CHECK_EQ_INT(getrlimit(RLIMIT_NOFILE, &rl), 0);
    CHECK_EQ_INT(rl.rlim_cur, 256);
    CHECK_EQ_INT(rl.rlim_max, 512);
    char st[8192];
    status_after_exec(st, sizeof st); /* limits survive exec: cat still runs */
    /* soft above hard is refused by the kernel, and reported as -errno */
    cfg.rlimits[0] = (struct sandbox_rlimit){RLIMIT_NOFILE, 1024, 64};
    cfg.n_rlimits = 1;
    CHECK_EQ_INT(confine_rlimits(&cfg), -EINVAL);
    struct sandbox_config none = {0};
    CHECK_EQ_INT(confine_rlimits(&none), 0);
}

TEST_MAIN({"uid 0 in a user namespace keeps no capability after exec",
           test_userns_root_loses_everything},
          {"unprivileged caller: drop and no_new_privs succeed", test_unprivileged},
          {"uid 0 without CAP_SETPCAP is refused", test_root_without_setpcap_refused},
          {"root writes keep three file capabilities as ambient, nothing else",
           test_root_writes_keeps_three},
          {"root writes without CAP_SETPCAP are refused", test_root_writes_without_setpcap_refused},
          {"rlimits applied (core=0), bad limit reported", test_rlimits})
