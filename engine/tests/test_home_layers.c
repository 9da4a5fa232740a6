/* test_home_layers.c — the pending uppers of a home layer, on a layer folder made in TMPDIR as
 * overlayfs leaves one: the holder merges an ended pending upper into upper/ (files replaced,
 * whiteouts and an opaque folder applied, a link kept as a link, the pending folder gone), leaves
 * a live one alone, never follows a link of the layer out of it; a sandbox beside the holder takes
 * an ended pending folder over as its own; `cordon home` sees which are live. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sandbox/home_layers.h"
#include "test.h"

static char root[1024];

static void mk(const char *rel)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    CHECK(mkdir(p, 0700) == 0 || errno == EEXIST);
}

static void put(const char *rel, const char *text)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(text, f);
    CHECK(fclose(f) == 0);
}

static const char *get(const char *rel)
{
    static char buf[256];
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static bool exists(const char *rel, struct stat *st)
{
    char p[8192];
    struct stat tmp;
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return lstat(p, st ? st : &tmp) == 0;
}

/* A layer folder with upper/ and work/; its descriptor. */
static int layer(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/home-layers.XXXXXX", tmp ? tmp : "/var/tmp");
    CHECK(mkdtemp(root) != NULL);
    mk("upper");
    mk("work");
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(fd >= 0);
    return fd;
}

/* The layer folder closed and removed. */
static void done(int lfd)
{
    close(lfd);
    CHECK_EQ_INT(hl_remove_tree(AT_FDCWD, root), 0);
}

/* An ended pending folder "name" (its lock made, held by nobody). */
static void pending(const char *name)
{
    char p[512];
    mk("pending");
    snprintf(p, sizeof p, "pending/%s", name);
    mk(p);
    snprintf(p, sizeof p, "pending/%s/upper", name);
    mk(p);
    snprintf(p, sizeof p, "pending/%s/work", name);
    mk(p);
    snprintf(p, sizeof p, "pending/%s/lock", name);
    put(p, "");
}

#define P1 "p0000000000000001-00000001"

static void test_holder_merges(void)
{
    int lfd = layer();
    mk("upper/d");
    put("upper/d/x", "x");
    put("upper/a", "old");
    put("upper/gone", "g");
    pending(P1);
    put("pending/" P1 "/upper/a", "new");
    mk("pending/" P1 "/upper/d");
    put("pending/" P1 "/upper/d/y", "y");
    char p[8192];
    snprintf(p, sizeof p, "%s/pending/" P1 "/upper/d", root);
    bool xattrs = setxattr(p, "user.overlay.opaque", "y", 1, 0) == 0;
    snprintf(p, sizeof p, "%s/pending/" P1 "/upper/gone", root);
    CHECK(mknod(p, S_IFCHR, makedev(0, 0)) == 0);
    snprintf(p, sizeof p, "%s/pending/" P1 "/upper/link", root);
    CHECK(symlink("/etc/hostname", p) == 0);
    mk("pending/" P1 "/upper/newdir");
    put("pending/" P1 "/upper/newdir/n", "n");
    struct hl_taken t;
    char err[256] = "";
    CHECK_EQ_INT(hl_take_holder(lfd, &t, err, sizeof err), 0);
    CHECK_EQ_INT((int)t.lowers.len, 0);
    CHECK(strcmp(get("upper/a"), "new") == 0);
    CHECK(strcmp(get("upper/d/y"), "y") == 0);
    if (xattrs) /* the opaque folder replaced the layer's */
        CHECK(!exists("upper/d/x", NULL));
    struct stat st;
    CHECK(exists("upper/gone", &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0));
    CHECK(exists("upper/link", &st) && S_ISLNK(st.st_mode));
    CHECK(strcmp(get("upper/newdir/n"), "n") == 0);
    CHECK(!exists("pending/" P1, NULL));
    hl_release(&t, lfd);
    done(lfd);
}

static void test_live_one_left_alone(void)
{
    int lfd = layer();
    pending(P1);
    put("pending/" P1 "/upper/a", "live");
    char p[8192];
    snprintf(p, sizeof p, "%s/pending/" P1 "/lock", root);
    int held = open(p, O_RDONLY | O_CLOEXEC);
    CHECK(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0);
    CHECK(hl_any_live(lfd));
    struct hl_taken t;
    char err[256] = "";
    CHECK_EQ_INT(hl_take_holder(lfd, &t, err, sizeof err), 0);
    CHECK(!exists("upper/a", NULL));
    CHECK(strcmp(get("pending/" P1 "/upper/a"), "live") == 0);
    hl_release(&t, lfd);
    close(held);
    CHECK(!hl_any_live(lfd));
    done(lfd);
}

static void test_no_link_followed(void)
{
    int lfd = layer();
    char outside[2048], p[8192];
    snprintf(outside, sizeof outside, "%s/outside", root);
    CHECK(mkdir(outside, 0700) == 0);
    snprintf(p, sizeof p, "%s/upper/evil", root);
    CHECK(symlink(outside, p) == 0);
    pending(P1);
    mk("pending/" P1 "/upper/evil");
    put("pending/" P1 "/upper/evil/f", "planted");
    struct hl_taken t;
    char err[256] = "";
    CHECK_EQ_INT(hl_take_holder(lfd, &t, err, sizeof err), 0);
    struct stat st;
    CHECK(exists("upper/evil", &st) && S_ISDIR(st.st_mode));
    CHECK(strcmp(get("upper/evil/f"), "planted") == 0);
    CHECK(!exists("outside/f", NULL));
    hl_release(&t, lfd);
    done(lfd);
}

static void test_pending_takes_over(void)
{
    int lfd = layer();
    pending(P1);
    put("pending/" P1 "/upper/a", "a");
    mk("pending/" P1 "/work/work");
    mk("pending/" P1 "/work/work/incompat");
    mk("pending/" P1 "/work/work/incompat/volatile");
    put("pending/" P1 "/work/work/incompat/volatile/dirty", "");
    struct hl_taken t;
    char err[256] = "";
    CHECK_EQ_INT(hl_take_pending(lfd, &t, err, sizeof err), 0);
    CHECK(strcmp(t.own, P1) == 0); /* taken over: no copy, no second folder */
    CHECK(strcmp(get("pending/" P1 "/upper/a"), "a") == 0);
    CHECK(!exists("pending/" P1 "/work/work/incompat", NULL));
    CHECK(hl_any_live(lfd));
    hl_release(&t, lfd);
    CHECK(!hl_any_live(lfd));
    /* a second one beside it, with nothing ended to take: a folder of its own */
    char p[8192];
    snprintf(p, sizeof p, "%s/pending/" P1 "/lock", root);
    int held = open(p, O_RDONLY | O_CLOEXEC);
    CHECK(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0);
    CHECK_EQ_INT(hl_take_pending(lfd, &t, err, sizeof err), 0);
    CHECK(strcmp(t.own, P1) != 0);
    char rel[128];
    snprintf(rel, sizeof rel, "pending/%s/upper", t.own);
    CHECK(exists(rel, NULL));
    hl_release(&t, lfd);
    close(held);
    done(lfd);
}

TEST_MAIN({"the holder merges an ended pending upper", test_holder_merges},
          {"a live pending upper is left alone", test_live_one_left_alone},
          {"a merge never follows a link of the layer", test_no_link_followed},
          {"a sandbox beside the holder takes an ended one over", test_pending_takes_over})
