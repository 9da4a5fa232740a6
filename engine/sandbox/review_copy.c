/* review_copy.c — see review_copy.h. The walk goes by descriptors: each folder is opened beneath
 * its parent with O_NOFOLLOW (a name read from a folder has no slash), so a link planted in the
 * source or the destination is copied as a link and never crossed. Folders are made 0700 and take
 * their own mode and times once their entries are in (a folder's mtime moves as names are added;
 * a read-only folder could not take them). */
#include "sandbox/review_copy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/util.h"
#include "sandbox/review_layer.h"

/* As deep as review_layer.c's walk goes. */
#define COPY_MAX_DEPTH 256

/* A source inode with more than one name, and where its first copy went (relative to the copy's
 * root), so the next name becomes a hard link to it. */
struct linked {
    dev_t dev;
    ino_t ino;
    char *rel;
};

struct copy {
    int dst_root; /* the folder being filled (upper/ or seen/ of dst_dir) */
    struct linked *links;
    size_t n_links, cap_links;
    int entries;
    const char *what; /* "upper" or "seen", for messages */
    char *err;
    size_t errlen;
};

static int fail(struct copy *c, const char *doing, const char *rel, int e)
{
    snprintf(c->err, c->errlen, "cannot copy the review layer's %s: %s %s: %s", c->what, doing,
             rel[0] ? rel : ".", strerror(e));
    return -1;
}

static char *join_rel(const char *rel, const char *name)
{
    return rel[0] ? xasprintf("%s/%s", rel, name) : xstrdup(name);
}

/* The user.* extended attributes of in onto out (both open descriptors). Others (security.*,
 * trusted.*) are the kernel's or root's and not part of what overlayfs in a user namespace keeps. */
static int copy_xattrs(int in, int out)
{
    char names[4096];
    ssize_t n = flistxattr(in, names, sizeof names);
    if (n < 0)
        return errno == ENOTSUP || errno == EOPNOTSUPP ? 0 : -errno;
    for (ssize_t at = 0; at < n; at += (ssize_t)strlen(names + at) + 1) {
        const char *name = names + at;
        if (strncmp(name, "user.", 5) != 0)
            continue;
        char value[4096];
        ssize_t v = fgetxattr(in, name, value, sizeof value);
        if (v < 0)
            return -errno;
        if (fsetxattr(out, name, value, (size_t)v, 0) < 0)
            return -errno;
    }
    return 0;
}

/* Owner (as far as this process may), mode, user xattrs and times of st onto out, in that order:
 * a chown clears set-id bits, and every change but the times moves the ctime only. */
static int copy_attrs(int in, int out, const struct stat *st)
{
    /* What this process makes is its own, but for a set-gid folder's group: a look first only
     * when the source is another's (most of a layer is the caller's own). */
    struct stat now = {.st_uid = geteuid(), .st_gid = getegid()};
    if ((now.st_uid != st->st_uid || now.st_gid != st->st_gid) && fstat(out, &now) < 0)
        return -errno;
    if ((now.st_uid != st->st_uid || now.st_gid != st->st_gid) &&
        fchown(out, st->st_uid, st->st_gid) < 0 && errno != EPERM && errno != EINVAL)
        return -errno;
    if (fchmod(out, st->st_mode & 07777) < 0)
        return -errno;
    int r = copy_xattrs(in, out);
    if (r < 0)
        return r;
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    return futimens(out, times) < 0 ? -errno : 0;
}

/* The bytes of in (size bytes when it was looked at) into out: a clone where the file system
 * shares extents, else the kernel's copy, else read and write. */
static int copy_bytes(int in, int out, off_t size)
{
    if (ioctl(out, FICLONE, in) == 0)
        return 0;
    bool plain = false;
    off_t done = 0;
    for (;;) {
        /* the size seen is the copy's (a command may be writing): no last call to find the end */
        if (!plain && done >= size && size > 0)
            return 0;
        ssize_t n;
        if (!plain) {
            n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
            if (n < 0 &&
                (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
                plain = true;
                continue;
            }
        } else {
            char buf[65536];
            n = read(in, buf, sizeof buf);
            if (n > 0 && write_all(out, buf, (size_t)n) < 0)
                n = -1;
        }
        if (n == 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n > 0)
            done += n;
    }
}

/* Was this inode copied already under another name? Then link name to that copy. 1 when linked,
 * 0 when it is the first name (remembered), -1 on failure. */
static int link_known(struct copy *c, int dst, const char *name, const char *rel,
                      const struct stat *st)
{
    if (st->st_nlink < 2)
        return 0;
    for (size_t i = 0; i < c->n_links; i++)
        if (c->links[i].dev == st->st_dev && c->links[i].ino == st->st_ino) {
            if (linkat(c->dst_root, c->links[i].rel, dst, name, 0) < 0)
                return fail(c, "link", rel, errno);
            return 1;
        }
    if (c->n_links == c->cap_links) {
        c->cap_links = c->cap_links ? c->cap_links * 2 : 16;
        c->links = xrealloc(c->links, c->cap_links * sizeof *c->links);
    }
    c->links[c->n_links++] = (struct linked){st->st_dev, st->st_ino, xstrdup(rel)};
    return 0;
}

static int copy_file(struct copy *c, int src, int dst, const char *name, const char *rel,
                     const struct stat *st)
{
    int in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY), out = -1, r = -1;
    if (in < 0)
        return fail(c, "open", rel, errno);
    out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
        fail(c, "create", rel, errno);
        goto out;
    }
    int e = copy_bytes(in, out, st->st_size);
    if (e < 0) {
        fail(c, "copy", rel, -e);
        goto out;
    }
    if ((e = copy_attrs(in, out, st)) < 0) {
        fail(c, "keep the mode, owner, attributes and times of", rel, -e);
        goto out;
    }
    r = 0;
out:
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return r;
}

/* A link, whiteout, fifo or socket: made anew, owner and times kept (no descriptor to open). */
static int copy_special(struct copy *c, int src, int dst, const char *name, const char *rel,
                        const struct stat *st)
{
    int r;
    if (S_ISLNK(st->st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(src, name, target, sizeof target - 1);
        if (n < 0)
            return fail(c, "read the link", rel, errno);
        target[n] = '\0';
        r = symlinkat(target, dst, name);
    } else if (S_ISFIFO(st->st_mode)) {
        r = mkfifoat(dst, name, st->st_mode & 07777);
    } else {
        /* a whiteout (0:0, which an unprivileged mknod may make since Linux 5.8), a socket, or
         * a device a privileged caller's layer may hold */
        r = mknodat(dst, name, st->st_mode, st->st_rdev);
    }
    if (r < 0)
        return fail(c, "make", rel, errno);
    if (fchownat(dst, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != EPERM &&
        errno != EINVAL)
        return fail(c, "keep the owner of", rel, errno);
    if (!S_ISLNK(st->st_mode) && fchmodat(dst, name, st->st_mode & 07777, 0) < 0)
        return fail(c, "keep the mode of", rel, errno);
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    if (utimensat(dst, name, times, AT_SYMLINK_NOFOLLOW) < 0)
        return fail(c, "keep the times of", rel, errno);
    return 0;
}

static int copy_dir(struct copy *c, int src, int dst, const char *rel, int depth);

static int copy_entry(struct copy *c, int src, int dst, const char *name, const char *rel,
                      int depth)
{
    struct stat st;
    if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : fail(c, "stat", rel, errno); /* gone while we read */
    c->entries++;
    if (S_ISDIR(st.st_mode)) {
        if (mkdirat(dst, name, 0700) < 0)
            return fail(c, "make the folder", rel, errno);
        int sfd = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int dfd = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r = -1;
        if (sfd < 0 || dfd < 0)
            fail(c, "open the folder", rel, errno);
        else
            r = copy_dir(c, sfd, dfd, rel, depth + 1);
        if (sfd >= 0)
            close(sfd);
        if (dfd >= 0)
            close(dfd);
        return r;
    }
    int k = link_known(c, dst, name, rel, &st);
    if (k != 0)
        return k < 0 ? -1 : 0;
    if (S_ISREG(st.st_mode))
        return copy_file(c, src, dst, name, rel, &st);
    return copy_special(c, src, dst, name, rel, &st);
}

/* Every entry of folder src into the empty folder dst, then src's own attributes onto dst. */
static int copy_dir(struct copy *c, int src, int dst, const char *rel, int depth)
{
    if (depth > COPY_MAX_DEPTH)
        return fail(c, "walk (folders nested too deep)", rel, ELOOP);
    struct stat st;
    if (fstat(src, &st) < 0)
        return fail(c, "stat", rel, errno);
    int dfd = dup(src);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return fail(c, "read the folder", rel, errno);
    }
    rewinddir(d);
    int r = 0;
    struct dirent *de;
    errno = 0;
    while (r == 0 && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char *sub = join_rel(rel, de->d_name);
        r = copy_entry(c, src, dst, de->d_name, sub, depth);
        free(sub);
        errno = 0;
    }
    if (r == 0 && errno != 0)
        r = fail(c, "read the folder", rel, errno);
    closedir(d);
    if (r == 0 && (r = copy_attrs(src, dst, &st)) < 0)
        r = fail(c, "keep the mode, owner, attributes and times of", rel, -r);
    return r;
}

/* dst_dir/name as an empty folder of ours, opened; or -1 with errno. */
static int empty_folder(int dst_dir, const char *name)
{
    if (mkdirat(dst_dir, name, 0700) < 0 && errno != EEXIST)
        return -1;
    int fd = review_open_beneath(dst_dir, name, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0)
        return -1;
    int probe = dup(fd);
    DIR *d = probe >= 0 ? fdopendir(probe) : NULL;
    if (!d) {
        int e = errno;
        if (probe >= 0)
            close(probe);
        close(fd);
        errno = e;
        return -1;
    }
    struct dirent *de;
    bool empty = true;
    while (empty && (de = readdir(d)))
        empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
    closedir(d);
    if (!empty) {
        close(fd);
        errno = ENOTEMPTY;
        return -1;
    }
    return fd;
}

/* src_layer/what into dst_dir/what. */
static int copy_part(struct copy *c, int src_layer, int dst_dir, const char *what)
{
    c->what = what;
    for (size_t i = 0; i < c->n_links; i++) /* links are within one part */
        free(c->links[i].rel);
    c->n_links = 0;
    int src = review_open_beneath(src_layer, what, O_RDONLY | O_DIRECTORY, 0);
    if (src < 0 && errno == ENOENT && strcmp(what, "seen") == 0)
        src = -2; /* a layer from before seen/ existed: an empty one */
    else if (src < 0)
        return fail(c, "open", "", errno);
    int dst = empty_folder(dst_dir, what);
    if (dst < 0) {
        int e = errno;
        if (src >= 0)
            close(src);
        return fail(c, "make the copy's folder", "", e);
    }
    c->dst_root = dst;
    int r = src >= 0 ? copy_dir(c, src, dst, "", 0) : 0;
    if (src >= 0)
        close(src);
    close(dst);
    return r;
}

int review_layer_copy(const char *src_layer, const char *dst_dir, char *err, size_t errlen)
{
    struct copy c = {.err = err, .errlen = errlen, .what = "folder"};
    int src = -1, dst = -1, r = -1;
    src = open(src_layer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (src < 0) {
        snprintf(err, errlen, "cannot open the review layer %s: %s", src_layer, strerror(errno));
        goto out;
    }
    if (mkdir(dst_dir, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot make %s: %s", dst_dir, strerror(errno));
        goto out;
    }
    dst = open(dst_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dst < 0) {
        snprintf(err, errlen, "cannot open %s: %s", dst_dir, strerror(errno));
        goto out;
    }
    if (copy_part(&c, src, dst, "upper") < 0)
        goto out;
    int entries = c.entries;
    if (copy_part(&c, src, dst, "seen") < 0)
        goto out;
    r = entries;
out:
    for (size_t i = 0; i < c.n_links; i++)
        free(c.links[i].rel);
    free(c.links);
    if (src >= 0)
        close(src);
    if (dst >= 0)
        close(dst);
    return r;
}
