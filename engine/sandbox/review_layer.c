/* review_layer.c — see review_layer.h. The upper directory is read as overlayfs leaves it: a
 * character device 0:0 is a whiteout (the host's entry removed), a folder with the xattr
 * user.overlay.opaque = "y" hides the host's folder of that name (so what the host has there and
 * the upper does not is removed); any other entry was written: "added" when the host has no entry
 * of that name, "changed" when it differs from the host's (bytes, mode, type or a link's target);
 * an entry equal to the host's (copied up and written back the same) is no change. */
#include "sandbox/review_layer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/cordon_dirs.h"
#include "base/sha256.h"
#include "base/util.h"

/* How deep a layer's folders may go before the walk stops (a bound, not a limit anyone meets). */
#define REVIEW_MAX_DEPTH 256

int review_open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW),
                           .mode = (flags & O_CREAT) ? mode : 0,
                           .resolve =
                               RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd;
    do
        fd = (int)syscall(SYS_openat2, dirfd, rel[0] ? rel : ".", &how, sizeof how);
    while (fd < 0 && errno == EINTR);
    return fd;
}

char *review_layer_root(void)
{
    return cdir_path(CDIR_STATE, "reviews");
}

char *review_layer_dir(const char *workspace)
{
    return cdir_workspace_path(CDIR_STATE, "reviews", workspace);
}

bool review_layer_exists(const char *layer)
{
    struct stat st;
    char *upper = xasprintf("%s/upper", layer);
    bool r = lstat(upper, &st) == 0 && S_ISDIR(st.st_mode);
    free(upper);
    return r;
}

/* mkdir 0700 that accepts an existing folder only when it is a folder of the caller's. */
static int own_folder(const char *path)
{
    struct stat st;
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return -errno;
    if (lstat(path, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if (st.st_uid != geteuid())
        return -EPERM;
    return 0;
}

/* Make layer's folder (when mk_layer) and its upper/, work/ and seen/, each a folder of the
 * caller's. 0, or -errno with *at naming what failed. */
static int make_layer_folders(const char *layer, const char **at)
{
    const char *const subs[] = {"", "/upper", "/work", "/seen"};
    int m = 0;
    for (size_t i = 0; m == 0 && i < ARRAY_LEN(subs); i++) {
        char *p = xasprintf("%s%s", layer, subs[i]);
        m = own_folder(p);
        if (m < 0)
            *at = i == 0 ? layer : subs[i] + 1;
        free(p);
    }
    return m;
}

int review_layer_make(const char *workspace, char **out, char *err, size_t errlen)
{
    char *root = review_layer_root(), *layer = review_layer_dir(workspace);
    int r = -1;
    if (!root || !layer) {
        snprintf(err, errlen,
                 "review mode needs a state folder for the pending changes: set an absolute "
                 "XDG_STATE_HOME or HOME");
        goto out;
    }
    int m = mkdir_parents(root, 0700);
    const char *at = root;
    if (m == 0)
        m = own_folder(root);
    if (m == 0)
        m = make_layer_folders(layer, &at);
    if (m < 0) {
        snprintf(err, errlen, "cannot make the review layer %s (%s): %s", layer, at, strerror(-m));
        goto out;
    }
    char *note = xasprintf("%s/workspace", layer), *text = xasprintf("%s\n", workspace);
    (void)write_private_file(note, text, strlen(text));
    free(note);
    free(text);
    *out = layer;
    layer = NULL;
    r = 0;
out:
    free(root);
    free(layer);
    return r;
}

char *review_fork_dir(const char *layer, const char *fork)
{
    return xasprintf("%s/forks/%s", layer, fork);
}

int review_fork_make(const char *workspace, const char *fork, char **out, char *err, size_t errlen)
{
    char *layer = NULL;
    if (review_layer_make(workspace, &layer, err, errlen) < 0)
        return -1;
    char *forks = xasprintf("%s/forks", layer), *dir = review_fork_dir(layer, fork);
    const char *at = forks;
    int m = own_folder(forks);
    if (m == 0)
        m = make_layer_folders(dir, &at);
    if (m < 0) {
        snprintf(err, errlen, "cannot make the fork's review layer %s (%s): %s", dir, at,
                 strerror(-m));
        free(dir);
    } else {
        char *note = xasprintf("%s/workspace", dir), *text = xasprintf("%s\n", workspace);
        (void)write_private_file(note, text, strlen(text));
        free(note);
        free(text);
        *out = dir;
    }
    free(forks);
    free(layer);
    return m < 0 ? -1 : 0;
}

void review_layer_drop_old(const char *layer)
{
    int lock = review_layer_lock(layer);
    if (lock < 0)
        return; /* a sandbox has the layer: its old views may be mounted; the next start */
    int lfd = open(layer, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lfd >= 0) {
        (void)review_remove_tree(lfd, REVIEW_OLD_DIR);
        close(lfd);
    }
    close(lock);
}

int review_layer_lock(const char *layer)
{
    char *path = xasprintf("%s/lock", layer);
    int fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    free(path);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* ---- the walk ----------------------------------------------------------------------------- */

static void push(struct review_list *l, const char *path, enum review_change change, mode_t mode,
                 mode_t host_mode)
{
    if (l->len == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->items = xrealloc(l->items, l->cap * sizeof *l->items);
    }
    l->items[l->len++] = (struct review_entry){
        .path = xstrdup(path), .change = change, .mode = mode, .host_mode = host_mode};
}

void review_list_free(struct review_list *l)
{
    for (size_t i = 0; i < l->len; i++) {
        free(l->items[i].path);
        free(l->items[i].link);
    }
    free(l->items);
    *l = (struct review_list){0};
}

/* Same bytes in two regular files? */
static bool same_bytes(int a, int b)
{
    char x[16384], y[16384];
    for (;;) {
        ssize_t n = read(a, x, sizeof x);
        if (n < 0)
            return false;
        size_t got = 0;
        while (got < (size_t)n) {
            ssize_t m = read(b, y + got, (size_t)n - got);
            if (m <= 0)
                return false;
            got += (size_t)m;
        }
        if (memcmp(x, y, (size_t)n) != 0)
            return false;
        if (n == 0)
            return read(b, y, 1) == 0;
    }
}

static char *read_link_at(int dfd, const char *name)
{
    char buf[4096];
    ssize_t n = readlinkat(dfd, name, buf, sizeof buf - 1);
    if (n < 0)
        return NULL;
    buf[n] = '\0';
    return xstrdup(buf);
}

struct walk {
    struct review_list *out;
    int ws_fd; /* the host's workspace (O_PATH) */
    char *err;
    size_t errlen;
};

static char *join_rel(const char *rel, const char *name)
{
    return rel[0] ? xasprintf("%s/%s", rel, name) : xstrdup(name);
}

static int walk_dir(struct walk *w, int up_fd, const char *rel, int depth, bool host_none);

/* Everything the host has in rel's folder that the upper folder up_fd lacks: removed (an opaque
 * folder hides them all). */
static void host_removed(struct walk *w, int up_fd, const char *rel)
{
    int hfd = review_open_beneath(w->ws_fd, rel, O_RDONLY | O_DIRECTORY, 0);
    if (hfd < 0)
        return;
    DIR *d = fdopendir(hfd);
    if (!d) {
        close(hfd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        struct stat st, hs;
        if (fstatat(up_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            continue;
        if (fstatat(dirfd(d), de->d_name, &hs, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        char *p = join_rel(rel, de->d_name);
        push(w->out, p, REVIEW_REMOVED, 0, hs.st_mode);
        free(p);
    }
    closedir(d);
}

static bool is_opaque(int dfd)
{
    char v[4];
    ssize_t n = fgetxattr(dfd, "user.overlay.opaque", v, sizeof v);
    return n == 1 && v[0] == 'y';
}

/* One entry name of upper folder up_fd, rel its path; host_none: the host has no folder rel (so
 * nothing in it: a folder added in the sandbox, thousands of files below it, each looked up on
 * the host for nothing). */
static int walk_entry(struct walk *w, int up_fd, const char *rel, const char *name, int depth,
                      bool host_none)
{
    struct stat st, hs;
    if (fstatat(up_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return 0;
    char *path = join_rel(rel, name);
    bool host = false;
    int hdir = host_none ? -1 : review_open_beneath(w->ws_fd, rel, O_PATH | O_DIRECTORY, 0);
    if (hdir >= 0) {
        host = fstatat(hdir, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
        if (!host)
            hs.st_mode = 0;
    } else {
        hs.st_mode = 0;
    }
    int r = 0;
    if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) {
        if (host)
            push(w->out, path, REVIEW_REMOVED, 0, hs.st_mode);
    } else if (S_ISDIR(st.st_mode)) {
        bool host_dir = host && S_ISDIR(hs.st_mode);
        if (!host_dir)
            push(w->out, path, host ? REVIEW_CHANGED : REVIEW_ADDED, st.st_mode, hs.st_mode);
        else if ((st.st_mode & 07777) != (hs.st_mode & 07777))
            push(w->out, path, REVIEW_CHANGED, st.st_mode, hs.st_mode);
        int sub = openat(up_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
            if (host_dir && is_opaque(sub))
                host_removed(w, sub, path);
            r = walk_dir(w, sub, path, depth + 1, !host_dir);
            close(sub);
        }
    } else if (S_ISLNK(st.st_mode)) {
        char *target = read_link_at(up_fd, name);
        char *was = host && S_ISLNK(hs.st_mode) ? read_link_at(hdir, name) : NULL;
        if (!was || !target || strcmp(was, target) != 0) {
            push(w->out, path, host ? REVIEW_CHANGED : REVIEW_ADDED, st.st_mode, hs.st_mode);
            w->out->items[w->out->len - 1].link = target;
            target = NULL;
        }
        free(target);
        free(was);
    } else if (S_ISREG(st.st_mode) && host && S_ISREG(hs.st_mode)) {
        bool same = st.st_size == hs.st_size;
        if (same) {
            int a = openat(up_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
            int b = openat(hdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
            same = a >= 0 && b >= 0 && same_bytes(a, b);
            if (a >= 0)
                close(a);
            if (b >= 0)
                close(b);
        }
        if (!same || (st.st_mode & 07777) != (hs.st_mode & 07777)) {
            push(w->out, path, REVIEW_CHANGED, st.st_mode, hs.st_mode);
            w->out->items[w->out->len - 1].content = !same;
        }
    } else {
        push(w->out, path, host ? REVIEW_CHANGED : REVIEW_ADDED, st.st_mode, hs.st_mode);
        w->out->items[w->out->len - 1].content = true;
    }
    if (hdir >= 0)
        close(hdir);
    free(path);
    return r;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(struct walk *w, int up_fd, const char *rel, int depth, bool host_none)
{
    if (depth > REVIEW_MAX_DEPTH) {
        snprintf(w->err, w->errlen, "the review layer's folders go deeper than %d at %s",
                 REVIEW_MAX_DEPTH, rel);
        return -1;
    }
    int dfd = dup(up_fd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        snprintf(w->err, w->errlen, "cannot read the review layer at %s: %s", rel[0] ? rel : ".",
                 strerror(errno));
        return -1;
    }
    struct str_list names = {0};
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            str_list_push(&names, de->d_name);
    closedir(d);
    if (names.len > 1)
        qsort(names.items, names.len, sizeof *names.items, by_name);
    int r = 0;
    for (size_t i = 0; r == 0 && i < names.len; i++)
        r = walk_entry(w, up_fd, rel, names.items[i], depth, host_none);
    str_list_free(&names);
    return r;
}

int review_layer_list(const char *layer, const char *workspace, struct review_list *out, char *err,
                      size_t errlen)
{
    *out = (struct review_list){0};
    char *upper = xasprintf("%s/upper", layer);
    int up = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int ws = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int r = -1;
    if (up < 0 || ws < 0) {
        snprintf(err, errlen, "cannot open %s: %s", up < 0 ? upper : workspace, strerror(errno));
        goto out;
    }
    struct walk w = {out, ws, err, errlen};
    if (is_opaque(up))
        host_removed(&w, up, "");
    r = walk_dir(&w, up, "", 0, false);
out:
    if (up >= 0)
        close(up);
    if (ws >= 0)
        close(ws);
    free(upper);
    if (r < 0)
        review_list_free(out);
    return r;
}

/* ---- the host's copies at first sight ----------------------------------------------------- */

static char *seen_path(const char *layer, const char *rel)
{
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(rel, strlen(rel), hex);
    return xasprintf("%s/seen/%s", layer, hex);
}

/* The host's copy of rel now, as one record line ("absent", or type, ino, size, mtime). */
static char *host_state(int ws_fd, const char *rel, struct stat *out)
{
    char *slash = strrchr(rel, '/');
    char *parent = slash ? xasprintf("%.*s", (int)(slash - rel), rel) : xstrdup("");
    const char *name = slash ? slash + 1 : rel;
    int hdir = review_open_beneath(ws_fd, parent, O_PATH | O_DIRECTORY, 0);
    free(parent);
    struct stat st;
    bool there = hdir >= 0 && fstatat(hdir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (hdir >= 0)
        close(hdir);
    if (!there)
        return xstrdup("absent");
    if (out)
        *out = st;
    /* A folder's mtime moves when a name is added or removed in it: a removal of the folder
     * is then a conflict, and never takes the person's new files with it. */
    if (S_ISDIR(st.st_mode))
        return xasprintf("dir %lld.%09ld", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    return xasprintf("%o %llu %lld %lld.%09ld", (unsigned)(st.st_mode & S_IFMT),
                     (unsigned long long)st.st_ino, (long long)st.st_size,
                     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

static struct timespec started_at(const char *layer)
{
    char *p = xasprintf("%s/started", layer);
    struct stat st;
    struct timespec t = {0, 0};
    if (stat(p, &st) == 0)
        t = st.st_mtim;
    free(p);
    return t;
}

/* Is rel below the folder path (of length len)? */
static bool below(const char *rel, const char *path, size_t len)
{
    return path && strncmp(rel, path, len) == 0 && rel[len] == '/';
}

/* Does the record at seen say the host had nothing there? false when there is none. */
static bool record_absent(const char *seen)
{
    char *text = NULL;
    size_t len = 0;
    if (read_file(seen, O_NOFOLLOW, 4096 + 64, &text, &len) < 0)
        return false;
    bool absent = strncmp(text, "absent\n", 7) == 0;
    free(text);
    return absent;
}

/* The record of rel's nearest ancestor that has one says "absent": the host had nothing there, so
 * nothing below it either, when that ancestor was first seen. */
static bool ancestor_absent(const char *layer, const char *rel)
{
    char *dir = xstrdup(rel), *slash;
    bool absent = false;
    while ((slash = strrchr(dir, '/'))) {
        *slash = '\0';
        char *seen = seen_path(layer, dir);
        bool found = access(seen, F_OK) == 0;
        absent = found && record_absent(seen);
        free(seen);
        if (found)
            break;
    }
    free(dir);
    return absent;
}

/* Record rel's host copy at seen unless it has a record. Does its record say "absent"? */
static bool record_one(const char *layer, int ws, struct timespec since, const char *rel,
                       const char *seen, bool want_absent)
{
    if (access(seen, F_OK) == 0)
        return want_absent && record_absent(seen);
    /* Seen first below a folder that was added then and is not now (applied, or made on the host
     * since): its record then was that folder's "absent" (review_layer_record), kept as such. */
    struct stat st = {0};
    char *state = ancestor_absent(layer, rel) ? xstrdup("absent") : host_state(ws, rel, &st);
    bool absent = strcmp(state, "absent") == 0;
    /* Changed on the host since the sandbox that wrote it started: the sandbox may have seen
     * either copy, so the record says "changed" and apply refuses it. */
    bool after =
        !absent && (st.st_ctim.tv_sec > since.tv_sec ||
                    (st.st_ctim.tv_sec == since.tv_sec && st.st_ctim.tv_nsec > since.tv_nsec));
    char *text = xasprintf("%s\n%s\n", after ? "changed" : state, rel);
    (void)write_private_file(seen, text, strlen(text));
    free(text);
    free(state);
    return absent;
}

void review_layer_record(const char *layer, const char *workspace, const struct review_list *l)
{
    int ws = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (ws < 0)
        return;
    struct timespec since = started_at(layer);
    struct str_list keep = {0};
    /* The folder pending as added, recorded "absent", that the entries at hand are in (the list
     * has a folder before what it holds): its record stands for all of them (ancestor_absent), so
     * a new tree of thousands of files (node_modules, a build's output) costs one record, not one
     * file each. */
    const char *added = NULL;
    size_t added_len = 0;
    for (size_t i = 0; i < l->len; i++) {
        const struct review_entry *e = &l->items[i];
        if (below(e->path, added, added_len))
            continue;
        bool added_dir = e->change == REVIEW_ADDED && S_ISDIR(e->mode);
        char *seen = seen_path(layer, e->path);
        str_list_push(&keep, strrchr(seen, '/') + 1);
        bool absent = record_one(layer, ws, since, e->path, seen, added_dir);
        added = added_dir && absent ? e->path : NULL;
        added_len = added ? strlen(added) : 0;
        free(seen);
    }
    /* Records of paths no longer pending go (applied, discarded, or written back the same). */
    char *dir = xasprintf("%s/seen", layer);
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.' && !str_list_contains(&keep, de->d_name))
            unlinkat(dirfd(d), de->d_name, 0);
    if (d)
        closedir(d);
    free(dir);
    str_list_free(&keep);
    close(ws);
}

void review_layer_mark_start(const char *layer)
{
    char *p = xasprintf("%s/started", layer);
    int fd = open(p, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        futimens(fd, NULL);
        close(fd);
    }
    free(p);
}

bool review_layer_conflict(const char *layer, const char *workspace, const char *rel)
{
    char *seen = seen_path(layer, rel), *text = NULL;
    size_t len = 0;
    int ws = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    bool conflict = true; /* fail closed: no record, no apply without --all's say */
    if (ws >= 0 && read_file(seen, O_NOFOLLOW, 4096 + 64, &text, &len) == 0) {
        char *nl = strchr(text, '\n');
        if (nl)
            *nl = '\0';
        char *now = host_state(ws, rel, NULL);
        conflict = strcmp(text, "changed") == 0 || strcmp(text, now) != 0;
        free(now);
    } else if (ws >= 0 && access(seen, F_OK) < 0 && errno == ENOENT &&
               ancestor_absent(layer, rel)) {
        /* below a folder added in the sandbox: its record stands for rel's (review_layer_record) */
        char *now = host_state(ws, rel, NULL);
        conflict = strcmp(now, "absent") != 0;
        free(now);
    }
    if (ws >= 0)
        close(ws);
    free(text);
    free(seen);
    return conflict;
}

/* Remove name in dfd, a folder with everything in it. */
static int remove_tree(int dfd, const char *name, int depth)
{
    if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if ((errno != EISDIR && errno != EPERM) || depth > REVIEW_MAX_DEPTH)
        return -errno;
    /* A folder without rwx for its owner (overlayfs's work/work is 0000, a command may chmod
     * one) is opened up first: it is being removed. Never through a link (lstat says folder). */
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
        (st.st_mode & 0700) != 0700 && st.st_uid == geteuid())
        (void)fchmodat(dfd, name, 0700, 0);
    int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0)
        return -errno;
    DIR *d = fdopendir(sub);
    if (!d) {
        close(sub);
        return -errno;
    }
    struct dirent *de;
    int r = 0;
    while (r == 0 && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            r = remove_tree(dirfd(d), de->d_name, depth + 1);
    closedir(d);
    if (r == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        r = -errno;
    return r;
}

int review_remove_tree(int dfd, const char *name)
{
    return remove_tree(dfd, name, 0);
}

int review_layer_drop(const char *layer, const char *rel)
{
    char *upper = xasprintf("%s/upper", layer);
    int up = open(upper, O_PATH | O_DIRECTORY | O_CLOEXEC);
    free(upper);
    if (up < 0)
        return -errno;
    char *slash = strrchr(rel, '/');
    char *parent = slash ? xasprintf("%.*s", (int)(slash - rel), rel) : xstrdup("");
    int pfd = review_open_beneath(up, parent, O_RDONLY | O_DIRECTORY, 0);
    free(parent);
    close(up);
    if (pfd < 0)
        return errno == ENOENT ? 0 : -errno;
    int r = remove_tree(pfd, slash ? slash + 1 : rel, 0);
    close(pfd);
    char *seen = seen_path(layer, rel);
    unlink(seen);
    free(seen);
    return r;
}
