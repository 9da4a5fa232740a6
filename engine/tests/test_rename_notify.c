/* test_rename_notify.c — the rename filter: which calls it names per ABI, and, installed in a
 * child, that rename, renameat and renameat2 reach its listener (whose answer the caller gets:
 * an error, or the kernel's own rename), and so do unlink, unlinkat and rmdir, while other
 * calls (open without O_CREAT) never do; and the same for the calls that create a name
 * (create_notify.h), open only with O_CREAT. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/seccomp.h>

#include "base/util.h"
#include "sandbox/create_notify.h"
#include "sandbox/rename_notify.h"
#include "test.h"

static void test_call_table(void)
{
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_X86_64, 82), RENAME_CALL_RENAME);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_X86_64, 264), RENAME_CALL_RENAMEAT);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_X86_64, 316), RENAME_CALL_RENAMEAT2);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_X86_64, 0x40000000 | 316), RENAME_CALL_RENAMEAT2);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_I386, 38), RENAME_CALL_RENAME);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_I386, 353), RENAME_CALL_RENAMEAT2);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_AARCH64, 38), RENAME_CALL_RENAMEAT);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_AARCH64, 276), RENAME_CALL_RENAMEAT2);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_AARCH64, -1), RENAME_CALL_NONE);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_ARM, 382), RENAME_CALL_RENAMEAT2);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_X86_64, 87), RENAME_CALL_UNLINK);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_X86_64, 263), RENAME_CALL_UNLINKAT);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_X86_64, 84), RENAME_CALL_RMDIR);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_X86_64, 0x40000000 | 263), RENAME_CALL_UNLINKAT);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_I386, 301), RENAME_CALL_UNLINKAT);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_AARCH64, 35), RENAME_CALL_UNLINKAT);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_ARM, 40), RENAME_CALL_RMDIR);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_X86_64, 2 /* open */), RENAME_CALL_NONE);
    CHECK_EQ_INT(rename_notify_call(AUDIT_ARCH_I386, 82), RENAME_CALL_NONE);
    CHECK_EQ_INT(rename_notify_call(0x12345678, 82), RENAME_CALL_NONE);
}

/* Answer one notification within a few seconds: error (positive errno) or 0 to let the
 * kernel do it. Returns the call it was, or -1 when none came. */
static int answer_one(int listener, int error)
{
    struct pollfd p = {.fd = listener, .events = POLLIN};
    if (poll(&p, 1, 5000) != 1)
        return -1;
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    memset(&req, 0, sizeof req);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        return -1;
    memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    if (error)
        resp.error = -error;
    else
        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
        return -1;
    return (int)rename_notify_call(req.data.arch, req.data.nr);
}

static void test_renames_reach_the_listener(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *dir = xasprintf("%s/test_rename_notify.%d", tmp, (int)getpid());
    CHECK(mkdir(dir, 0700) == 0);
    CHECK(chdir(dir) == 0);
    close(open("a", O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    close(open("u", O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    /* the filter needs no_new_privs without CAP_SYS_ADMIN; this process is the test's own */
    CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
    int listener = rename_notify_install(false);
    if (listener == -ENOSYS || listener == -EINVAL || listener == -EBUSY)
        TEST_SKIP("no seccomp user notification here");
    CHECK(listener >= 0);
    pid_t kid = fork();
    if (kid == 0) {
        close(listener);
        /* refused by the listener, then let through, then the other two calls */
        int r1 = rename("a", "b") == 0 ? 0 : errno;
        int r2 = rename("a", "b") == 0 ? 0 : errno;
        int r3 = syscall(SYS_renameat, AT_FDCWD, "b", AT_FDCWD, "c") == 0 ? 0 : errno;
        int r4 = syscall(SYS_renameat2, AT_FDCWD, "c", AT_FDCWD, "d", 0) == 0 ? 0 : errno;
        int r5 = unlink("u") == 0 ? 0 : errno;
        int r6 = close(open("v", O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == 0 ? 0 : errno;
        struct stat sb;
        bool files = stat("d", &sb) == 0 && stat("u", &sb) < 0 && stat("v", &sb) == 0;
        /* the clean-up's removals are notified too (this process has the filter) */
        bool cleaned = unlink("d") == 0 && unlink("v") == 0 && chdir("/") == 0 && rmdir(dir) == 0;
        _exit(r1 == EPERM && r2 == 0 && r3 == 0 && r4 == 0 && r5 == 0 && r6 == 0 && files && cleaned
                  ? 0
                  : 1);
    }
    CHECK(kid > 0);
    CHECK_EQ_INT(answer_one(listener, EPERM), RENAME_CALL_RENAME);
    CHECK_EQ_INT(answer_one(listener, 0), RENAME_CALL_RENAME);
    CHECK_EQ_INT(answer_one(listener, 0), RENAME_CALL_RENAMEAT);
    CHECK_EQ_INT(answer_one(listener, 0), RENAME_CALL_RENAMEAT2);
    int r5 = answer_one(listener, 0); /* unlink, or glibc's unlinkat */
    CHECK(r5 == RENAME_CALL_UNLINK || r5 == RENAME_CALL_UNLINKAT);
    /* the child's clean-up: unlink, unlink, rmdir (or their *at forms) */
    for (int i = 0; i < 3; i++) {
        int c = answer_one(listener, 0);
        CHECK(c == RENAME_CALL_UNLINK || c == RENAME_CALL_UNLINKAT || c == RENAME_CALL_RMDIR);
    }
    int st = 0;
    CHECK(waitpid(kid, &st, 0) == kid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* this process has the filter too: its own removals would wait for an answer */
    close(listener);
    free(dir);
}

/* Answer one notification of a creating call: 1 when it is one (create_notify_call), 0 when
 * another call came, -1 when none came. */
static int answer_create(int listener, int error)
{
    struct pollfd p = {.fd = listener, .events = POLLIN};
    if (poll(&p, 1, 5000) != 1)
        return -1;
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    memset(&req, 0, sizeof req);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        return -1;
    memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    if (error)
        resp.error = -error;
    else
        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
        return -1;
    struct create_call c;
    return create_notify_call(req.data.arch, req.data.nr, &c) ? 1 : 0;
}

static void test_create_call_table(void)
{
    struct create_call c;
    CHECK(create_notify_call(AUDIT_ARCH_X86_64, 83, &c) && c.path_arg == 0 && c.dirfd_arg < 0);
    CHECK(create_notify_call(AUDIT_ARCH_X86_64, 257, &c) && c.dirfd_arg == 0 && c.path_arg == 1);
    CHECK(create_notify_call(AUDIT_ARCH_X86_64, 437, &c) && c.how_arg == 2);
    CHECK(create_notify_call(AUDIT_ARCH_X86_64, 0x40000000 | 258, &c) && c.path_arg == 1);
    CHECK(create_notify_call(AUDIT_ARCH_X86_64, 265, &c) && c.dirfd_arg == 2 && c.path_arg == 3);
    CHECK(create_notify_call(AUDIT_ARCH_AARCH64, 34, &c) && c.path_arg == 1);
    CHECK(create_notify_call(AUDIT_ARCH_I386, 39, &c) && c.path_arg == 0);
    CHECK(create_notify_call(AUDIT_ARCH_ARM, 331, &c) && c.dirfd_arg == 1 && c.path_arg == 2);
    CHECK(!create_notify_call(AUDIT_ARCH_X86_64, 87 /* unlink */, &c));
    CHECK(!create_notify_call(AUDIT_ARCH_AARCH64, 83, &c));
}

static void test_creates_reach_the_listener(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *dir = xasprintf("%s/test_create_notify.%d", tmp, (int)getpid());
    CHECK(mkdir(dir, 0700) == 0);
    CHECK(chdir(dir) == 0);
    close(open("old", O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    pid_t kid = fork();
    if (kid == 0) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            _exit(3);
        int listener = rename_notify_install(true);
        if (listener < 0)
            _exit(listener == -ENOSYS || listener == -EINVAL || listener == -EBUSY ? 2 : 3);
        pid_t answerer = fork();
        if (answerer == 0) {
            /* the answers, in the order the parent expects them */
            int a1 = answer_create(listener, EROFS); /* mkdir */
            int a2 = answer_create(listener, 0);     /* open O_CREAT */
            int a3 = answer_create(listener, 0);     /* symlinkat */
            int a4 = answer_create(listener, 0);     /* rename: not a creating call */
            _exit(a1 == 1 && a2 == 1 && a3 == 1 && a4 == 0 ? 0 : 1);
        }
        close(listener);
        int r1 = mkdir("m", 0700) == 0 ? 0 : errno;
        int fd = open("f", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        int r2 = fd >= 0 ? 0 : errno;
        if (fd >= 0)
            close(fd);
        fd = open("old", O_RDONLY | O_CLOEXEC); /* never notified: answered by nobody */
        int r3 = fd >= 0 ? 0 : errno;
        if (fd >= 0)
            close(fd);
        int r4 = symlinkat("x", AT_FDCWD, "l") == 0 ? 0 : errno;
        int r5 = rename("l", "l2") == 0 ? 0 : errno;
        int st = 0;
        if (waitpid(answerer, &st, 0) != answerer || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            _exit(4);
        _exit(r1 == EROFS && r2 == 0 && r3 == 0 && r4 == 0 && r5 == 0 ? 0 : 1);
    }
    CHECK(kid > 0);
    int st = 0;
    CHECK(waitpid(kid, &st, 0) == kid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
        TEST_SKIP("no seccomp user notification here");
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    struct stat sb;
    CHECK(stat("m", &sb) < 0 && stat("f", &sb) == 0 && lstat("l2", &sb) == 0);
    unlink("f");
    unlink("l2");
    unlink("old");
    CHECK(chdir("/") == 0);
    rmdir(dir);
    free(dir);
}

TEST_MAIN({"which calls the filter names, per ABI", test_call_table},
          {"renames and removals reach the listener, other calls do not",
           test_renames_reach_the_listener},
          {"which creating calls the filter names, per ABI", test_create_call_table},
          {"creating calls reach the listener, open only with O_CREAT",
           test_creates_reach_the_listener})
