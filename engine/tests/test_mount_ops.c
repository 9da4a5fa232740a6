/* test_mount_ops.c — sandbox/mount_ops: mnt_setattr's fallback for kernels without
 * mount_setattr (forced with the test switch), against the flags the mechanism sets: a tree
 * of mounts made read-only and nosuid recursively, the locked flags a user namespace inherits
 * kept, a mount under a symbolic link's target not reached through the link. Needs root (it
 * mounts in a mount namespace of its own). */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "sandbox/mount_ops.h"
#include "test.h"

static char base[4096];

/* base/a (tmpfs: nodev, noexec, noatime), base/a/b (tmpfs), base/a/c (tmpfs), in a mount
 * namespace of this child's own, private. */
static void tree(void)
{
    if (getuid() != 0)
        TEST_SKIP("needs root: it mounts");
    if (unshare(CLONE_NEWNS) < 0)
        TEST_SKIP("no mount namespace to be had here");
    CHECK_EQ_INT(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/mount-ops.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    CHECK(mkdtemp(base) != NULL);
    CHECK_EQ_INT(mount("t", base, "tmpfs", 0, "mode=0755"), 0);
    char p[4200];
    snprintf(p, sizeof p, "%s/a", base);
    CHECK_EQ_INT(mkdir(p, 0755), 0);
    CHECK_EQ_INT(mount("t", p, "tmpfs", MS_NODEV | MS_NOEXEC | MS_NOATIME, "mode=0755"), 0);
    snprintf(p, sizeof p, "%s/a/b", base);
    CHECK_EQ_INT(mkdir(p, 0755), 0);
    CHECK_EQ_INT(mount("t", p, "tmpfs", 0, "mode=0755"), 0);
    snprintf(p, sizeof p, "%s/a/c", base);
    CHECK_EQ_INT(mkdir(p, 0755), 0);
    CHECK_EQ_INT(mount("t", p, "tmpfs", 0, "mode=0755"), 0);
}

static unsigned long flags_of(const char *rel)
{
    char p[4200];
    struct statvfs sv;
    snprintf(p, sizeof p, "%s/%s", base, rel);
    CHECK_EQ_INT(statvfs(p, &sv), 0);
    return sv.f_flag;
}

/* In a user namespace of its own (root mapped to root): the mounts it inherited are locked. */
static void enter_userns(void)
{
    CHECK_EQ_INT(unshare(CLONE_NEWUSER | CLONE_NEWNS), 0);
    FILE *f = fopen("/proc/self/uid_map", "w");
    CHECK(f && fputs("0 0 1\n", f) >= 0 && fclose(f) == 0);
    f = fopen("/proc/self/setgroups", "w");
    CHECK(f && fputs("deny\n", f) >= 0 && fclose(f) == 0);
    f = fopen("/proc/self/gid_map", "w");
    CHECK(f && fputs("0 0 1\n", f) >= 0 && fclose(f) == 0);
}

static void check_tree(unsigned long set)
{
    char err[512];
    struct mnt_err e = {err, sizeof err};
    char a[4200];
    snprintf(a, sizeof a, "%s/a", base);
    CHECK(!(flags_of("a/b") & ST_RDONLY));
    if (mnt_setattr(&e, a, true, set, 0) < 0) {
        fprintf(stderr, "  %s\n", err);
        CHECK(0);
    }
    static const char *const all[] = {"a", "a/b", "a/c"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        unsigned long f = flags_of(all[i]);
        CHECK(f & ST_RDONLY);
        CHECK(f & ST_NOSUID);
    }
    /* what a had, kept; what b had not, not added */
    CHECK(flags_of("a") & ST_NODEV);
    CHECK(flags_of("a") & ST_NOEXEC);
    CHECK(flags_of("a") & ST_NOATIME);
    CHECK(!(flags_of("a/b") & ST_NOEXEC));
    CHECK(!(flags_of(".") & ST_RDONLY)); /* above the path: untouched */
}

static void test_fallback_recursive(void)
{
    tree();
    CHECK_EQ_INT(setenv("CORDON_TEST_KERNEL_LACKS", "mount_setattr", 1), 0);
    check_tree(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID);
    CHECK(mnt_setattr_lacking());
}

static void test_fallback_keeps_locked_flags(void)
{
    tree();
    enter_userns();
    CHECK_EQ_INT(setenv("CORDON_TEST_KERNEL_LACKS", "mount_setattr", 1), 0);
    check_tree(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID);
}

static void test_mechanism_same(void)
{
    tree();
    CHECK_EQ_INT(unsetenv("CORDON_TEST_KERNEL_LACKS"), 0);
    check_tree(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID);
    CHECK(!mnt_setattr_lacking());
}

static void test_fallback_refuses_a_link(void)
{
    tree();
    CHECK_EQ_INT(setenv("CORDON_TEST_KERNEL_LACKS", "mount_setattr", 1), 0);
    char link[4200], target[4200], err[512];
    struct mnt_err e = {err, sizeof err};
    snprintf(link, sizeof link, "%s/link", base);
    snprintf(target, sizeof target, "%s/a/b", base);
    CHECK_EQ_INT(symlink(target, link), 0);
    CHECK_EQ_INT(mnt_setattr(&e, link, false, MOUNT_ATTR_RDONLY, 0), -1);
    CHECK_STR_CONTAINS(err, "link");
    CHECK(!(flags_of("a/b") & ST_RDONLY)); /* not followed */
}

TEST_MAIN({"fallback_recursive", test_fallback_recursive},
          {"fallback_keeps_locked_flags", test_fallback_keeps_locked_flags},
          {"mechanism_same", test_mechanism_same},
          {"fallback_refuses_a_link", test_fallback_refuses_a_link})
