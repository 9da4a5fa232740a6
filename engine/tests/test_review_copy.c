/* test_review_copy.c — review_layer_copy on a layer folder made in TMPDIR as overlayfs leaves
 * one: files (bytes, mode, mtime), folders (mode, the opaque mark), a whiteout, a link out of the
 * layer kept as a link, hard links kept as one inode, a fifo, seen/'s records; the count of
 * entries; an existing empty destination accepted, a filled one or a link refused; a source whose
 * upper/ is a link refused. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sandbox/review_copy.h"
#include "sandbox/review_layer.h"
#include "test.h"

static char root[1024];

static char *at(const char *rel)
{
    static char p[4][8192];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", root, rel);
    return p[i];
}

static void mk(const char *rel, mode_t mode)
{
    CHECK(mkdir(at(rel), mode) == 0 || errno == EEXIST);
}

static void put(const char *rel, const char *text, mode_t mode)
{
    int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC, mode);
    CHECK(fd >= 0);
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    CHECK(fchmod(fd, mode) == 0);
    struct timespec t[2] = {{1000000000, 5}, {1000000000, 5}};
    CHECK(futimens(fd, t) == 0);
    close(fd);
}

static const char *get(const char *rel)
{
    static char buf[256];
    int fd = open(at(rel), O_RDONLY | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n < 0 ? 0 : n] = 0;
    return buf;
}

static void fixture(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/review-copy.XXXXXX", tmp ? tmp : "/var/tmp");
    CHECK(mkdtemp(root) != NULL);
    mk("layer", 0700);
    mk("layer/upper", 0755);
    mk("layer/work", 0700);
    mk("layer/seen", 0700);
    put("layer/upper/notes.txt", "hello\n", 0640);
    put("layer/upper/tool.sh", "#!/bin/sh\n", 0755);
    mk("layer/upper/src", 0750);
    mk("layer/upper/src/deep", 0700);
    put("layer/upper/src/deep/a.c", "int a;\n", 0600);
    CHECK(link(at("layer/upper/src/deep/a.c"), at("layer/upper/a-link.c")) == 0);
    CHECK(symlink("/etc/passwd", at("layer/upper/out")) == 0);
    CHECK(mknod(at("layer/upper/gone"), S_IFCHR, makedev(0, 0)) == 0);
    CHECK(mkfifo(at("layer/upper/pipe"), 0600) == 0);
    mk("layer/upper/opaque", 0755);
    put("layer/upper/opaque/only", "o", 0644);
    put("layer/seen/0123abcd", "absent\nnotes.txt\n", 0600);
}

static void done(void)
{
    CHECK_EQ_INT(review_remove_tree(AT_FDCWD, root), 0);
}

static void test_copies_upper_and_seen(void)
{
    fixture();
    bool xattrs = setxattr(at("layer/upper/opaque"), "user.overlay.opaque", "y", 1, 0) == 0;
    struct timespec dt[2] = {{1100000000, 0}, {1100000000, 0}};
    CHECK(utimensat(AT_FDCWD, at("layer/upper/src"), dt, 0) == 0);
    char err[512] = "";
    int n = review_layer_copy(at("layer"), at("snap"), err, sizeof err);
    if (n < 0)
        fprintf(stderr, "  %s\n", err);
    /* notes.txt tool.sh src src/deep src/deep/a.c a-link.c out gone pipe opaque opaque/only */
    CHECK_EQ_INT(n, 11);
    CHECK(strcmp(get("snap/upper/notes.txt"), "hello\n") == 0);
    CHECK(strcmp(get("snap/upper/src/deep/a.c"), "int a;\n") == 0);
    CHECK(strcmp(get("snap/seen/0123abcd"), "absent\nnotes.txt\n") == 0);
    struct stat a, b;
    CHECK(lstat(at("snap/upper/notes.txt"), &a) == 0);
    CHECK_EQ_INT(a.st_mode & 07777, 0640);
    CHECK_EQ_INT(a.st_mtim.tv_sec, 1000000000);
    CHECK_EQ_INT(a.st_mtim.tv_nsec, 5);
    CHECK(lstat(at("snap/upper/tool.sh"), &a) == 0);
    CHECK_EQ_INT(a.st_mode & 07777, 0755);
    CHECK(lstat(at("snap/upper/src"), &a) == 0);
    CHECK(S_ISDIR(a.st_mode));
    CHECK_EQ_INT(a.st_mode & 07777, 0750);
    CHECK_EQ_INT(a.st_mtim.tv_sec, 1100000000);
    CHECK(lstat(at("snap/upper"), &a) == 0);
    CHECK_EQ_INT(a.st_mode & 07777, 0755);
    /* hard links stay one inode, apart from the source's */
    CHECK(lstat(at("snap/upper/a-link.c"), &a) == 0 &&
          lstat(at("snap/upper/src/deep/a.c"), &b) == 0);
    CHECK(a.st_ino == b.st_ino);
    CHECK(lstat(at("layer/upper/a-link.c"), &b) == 0);
    CHECK(a.st_ino != b.st_ino);
    /* the link is a link, never followed */
    CHECK(lstat(at("snap/upper/out"), &a) == 0 && S_ISLNK(a.st_mode));
    char target[64] = "";
    CHECK(readlink(at("snap/upper/out"), target, sizeof target - 1) == 11);
    CHECK(strcmp(target, "/etc/passwd") == 0);
    CHECK(lstat(at("snap/upper/gone"), &a) == 0);
    CHECK(S_ISCHR(a.st_mode) && a.st_rdev == makedev(0, 0));
    CHECK(lstat(at("snap/upper/pipe"), &a) == 0 && S_ISFIFO(a.st_mode));
    if (xattrs) {
        char v[4] = "";
        CHECK_EQ_INT(getxattr(at("snap/upper/opaque"), "user.overlay.opaque", v, sizeof v), 1);
        CHECK(v[0] == 'y');
    }
    CHECK(lstat(at("snap/work"), &a) < 0); /* work/ is the overlay's, never copied */
    /* a copy of the copy (a rollback's fresh upper) into an existing empty folder */
    mk("again", 0700);
    mk("again/upper", 0700);
    CHECK_EQ_INT(review_layer_copy(at("snap"), at("again"), err, sizeof err), 11);
    CHECK(strcmp(get("again/upper/opaque/only"), "o") == 0);
    done();
}

static void test_refuses_filled_or_linked_destination(void)
{
    fixture();
    char err[512] = "";
    mk("full", 0700);
    mk("full/upper", 0700);
    put("full/upper/x", "x", 0600);
    CHECK_EQ_INT(review_layer_copy(at("layer"), at("full"), err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "upper");
    mk("linked", 0700);
    CHECK(symlink(root, at("linked/upper")) == 0);
    CHECK_EQ_INT(review_layer_copy(at("layer"), at("linked"), err, sizeof err), -1);
    CHECK(symlink(at("layer"), at("dst-link")) == 0);
    CHECK_EQ_INT(review_layer_copy(at("layer"), at("dst-link"), err, sizeof err), -1);
    /* nothing written through the links */
    CHECK(access(at("upper"), F_OK) < 0);
    done();
}

static void test_refuses_linked_source(void)
{
    fixture();
    mk("evil", 0700);
    CHECK(symlink(at("layer/upper"), at("evil/upper")) == 0);
    char err[512] = "";
    CHECK_EQ_INT(review_layer_copy(at("evil"), at("snap"), err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "upper");
    done();
}

static void test_layer_without_seen(void)
{
    fixture();
    CHECK(rmdir(at("layer/work")) == 0);
    CHECK_EQ_INT(review_remove_tree(AT_FDCWD, at("layer/seen")), 0);
    char err[512] = "";
    CHECK_EQ_INT(review_layer_copy(at("layer"), at("snap"), err, sizeof err), 11);
    struct stat st;
    CHECK(lstat(at("snap/seen"), &st) == 0 && S_ISDIR(st.st_mode));
    done();
}

TEST_MAIN({"copies_upper_and_seen", test_copies_upper_and_seen},
          {"refuses_filled_or_linked_destination", test_refuses_filled_or_linked_destination},
          {"refuses_linked_source", test_refuses_linked_source},
          {"layer_without_seen", test_layer_without_seen})
