/* hide.c — see hide.h. Whiteouts are character devices 0:0, which a user namespace may create
 * on tmpfs (Linux >= 5.8); overlayfs may be mounted in a user namespace (Linux >= 5.11).
 * A directory with mounts below it is rebuilt instead (build_rebuilt): the kernel refuses it as
 * an overlay's lower layer. */
#include "sandbox/hide.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/kernel_lacks.h"
#include "base/log.h"
#include "sandbox/overlay_stage.h"

struct hide_group {
    char *target;        /* directory the overlay covers */
    struct str_list rel; /* whiteouts, relative to target */
    bool rebuilt;        /* mounts below target: rebuilt on a tmpfs, not overlaid */
};

static char *parent_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return xstrdup("/");
    return strndup(path, (size_t)(slash - path));
}

static bool any_within(const struct str_list *paths, const char *dir, bool strictly)
{
    for (size_t i = 0; i < paths->len; i++)
        if (path_is_within(paths->items[i], dir) &&
            !(strictly && strcmp(paths->items[i], dir) == 0))
            return true;
    return false;
}

static bool inside_any(const char *path, const struct str_list *dirs)
{
    for (size_t i = 0; i < dirs->len; i++)
        if (path_is_within(path, dirs->items[i]))
            return true;
    return false;
}

/* Is path strictly below one of dirs? */
static bool below_any(const char *path, const struct str_list *dirs)
{
    for (size_t i = 0; i < dirs->len; i++)
        if (strcmp(path, dirs->items[i]) != 0 && path_is_within(path, dirs->items[i]))
            return true;
    return false;
}

static struct hide_group *group_for(struct hide_plan *plan, const char *target)
{
    for (size_t i = 0; i < plan->n_groups; i++)
        if (strcmp(plan->groups[i].target, target) == 0)
            return &plan->groups[i];
    plan->groups = xrealloc(plan->groups, (plan->n_groups + 1) * sizeof *plan->groups);
    struct hide_group *g = &plan->groups[plan->n_groups++];
    memset(g, 0, sizeof *g);
    g->target = xstrdup(target);
    return g;
}

/* Whiteout every entry of dir (relative prefix rel) except the ways down to visible paths. */
static void whiteout_contents(struct hide_group *g, const char *dir, const char *rel,
                              const struct str_list *visible)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *full = xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", de->d_name);
        char *sub = rel[0] ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
        if (str_list_contains(visible, full))
            ; /* a visible path itself: keep */
        else if (any_within(visible, full, true))
            whiteout_contents(g, full, sub, visible);
        else
            str_list_push(&g->rel, sub);
        free(full);
        free(sub);
    }
    closedir(d);
}

/* Does path exist (lstat), by the memo when it knows: an answer it keeps, or a prefix it knows
 * to be missing (every longer path fails then too, whatever the reason the prefix failed).
 * mode: the lstat's file type and mode, when it exists. */
static bool lookup_exists(struct hide_lookup *lk, const char *path, mode_t *mode)
{
    for (size_t i = 0; i < lk->len; i++) {
        const struct hide_seen *s = &lk->items[i];
        if (strcmp(s->path, path) == 0) {
            if (mode)
                *mode = s->mode;
            return s->exists;
        }
        if (!s->exists && path_is_within(path, s->path))
            return false;
    }
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    lk->items = xrealloc(lk->items, (lk->len + 1) * sizeof *lk->items);
    lk->items[lk->len++] = (struct hide_seen){xstrdup(path), exists ? st.st_mode : 0, exists};
    if (mode)
        *mode = exists ? st.st_mode : 0;
    return exists;
}

void hide_lookup_free(struct hide_lookup *lk)
{
    for (size_t i = 0; i < lk->len; i++)
        free(lk->items[i].path);
    free(lk->items);
    lk->items = NULL;
    lk->len = 0;
}

/* The first component of path (absolute, normalised) that does not exist: a new string, or NULL
 * when all of it exists. */
static char *first_missing(struct hide_lookup *lk, const char *path)
{
    char *p = xstrdup(path);
    for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
        if (s)
            *s = '\0';
        if (!lookup_exists(lk, p, NULL))
            return p;
        if (!s)
            break;
        *s = '/';
    }
    free(p);
    return NULL;
}

/* A hidden path that does not exist now must stay missing whatever the host creates there
 * later: whiteout its first missing component c in the overlay of that component's parent (which
 * exists). Not possible at the top level ("/" takes no overlay), below a fresh file system (the
 * host's path is not shown there) or in a writable area (covers need an existing path). */
static void hide_missing(struct hide_plan *plan, struct hide_lookup *lk, const char *c,
                         const struct str_list *visible, const struct str_list *fresh)
{
    char *parent = parent_of(c);
    struct stat st;
    mode_t mode = 0;
    /* The parent exists (the walk found it): a directory by its lstat needs no stat to say so;
     * a symbolic link is followed, as before. */
    bool dir = strcmp(parent, "/") != 0 && lookup_exists(lk, parent, &mode) &&
               (S_ISDIR(mode) || (S_ISLNK(mode) && stat(parent, &st) == 0 && S_ISDIR(st.st_mode)));
    if (dir && !inside_any(c, visible) && !below_any(c, fresh) && !inside_any(c, fresh))
        str_list_push(&group_for(plan, parent)->rel, strrchr(c, '/') + 1);
    free(parent);
}

void hide_whiteouts_for(struct hide_lookup *lk, const char *target, const char *h,
                        const struct str_list *visible, struct str_list *rel)
{
    size_t n = strlen(target);
    if (!path_is_within(h, target) || strcmp(h, target) == 0)
        return;
    char *c = first_missing(lk, h); /* NULL: h exists */
    if (c) {
        if (path_is_within(c, target) && strcmp(c, target) != 0 &&
            !str_list_contains(rel, c + n + 1))
            str_list_push(rel, c + n + 1);
        free(c);
        return;
    }
    if (any_within(visible, h, true)) {
        struct hide_group g = {0};
        whiteout_contents(&g, h, h + n + 1, visible);
        for (size_t i = 0; i < g.rel.len; i++)
            if (!str_list_contains(rel, g.rel.items[i]))
                str_list_push(rel, g.rel.items[i]);
        str_list_free(&g.rel);
        return;
    }
    if (!str_list_contains(rel, h + n + 1))
        str_list_push(rel, h + n + 1);
}

void hide_plan_build(const struct str_list *hidden, const struct str_list *visible,
                     const struct str_list *fresh, struct hide_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->layers_fd = -1;
    struct hide_lookup lk = {0};
    for (size_t i = 0; i < hidden->len; i++) {
        const char *h = hidden->items[i];
        if (strcmp(h, "/") == 0)
            continue; /* "/" cannot be hidden */
        if (str_list_contains(visible, h)) {
            LOG_W("hide", "%s is both hidden and writable; it stays visible", h);
            continue;
        }
        /* Inside a writable area: judged once that area is attached (hide_apply_in_writable),
         * where init reaches it; here, on the host's tree, a shifted root caller's init may not
         * search a folder on the way (a workspace under a 0700 folder of /tmp) and would take
         * the path for missing. */
        if (inside_any(h, visible)) {
            str_list_push(&plan->in_writable, h);
            continue;
        }
        /* NULL: h exists */
        char *c = first_missing(&lk, h);
        if (c) {
            hide_missing(plan, &lk, c, visible, fresh);
            free(c);
            continue;
        }
        if (below_any(h, fresh))
            continue; /* below a fresh file system: the host's path is not shown there */
        char *parent = parent_of(h);
        if (strcmp(parent, "/") == 0 || any_within(visible, h, true)) {
            /* Cover the directory itself, keep it as an empty-looking directory. */
            whiteout_contents(group_for(plan, h), h, "", visible);
        } else {
            str_list_push(&group_for(plan, parent)->rel, strrchr(h, '/') + 1);
        }
        free(parent);
    }
    /* Fold a group whose target lies inside another group's target into the outer one, so
     * no overlay is stacked on another. */
    for (size_t i = 0; i < plan->n_groups; i++) {
        for (size_t j = 0; j < plan->n_groups; j++) {
            struct hide_group *outer = &plan->groups[j], *inner = &plan->groups[i];
            if (i == j || !inner->target || !outer->target ||
                !path_is_within(inner->target, outer->target))
                continue;
            const char *suffix =
                inner->target + strlen(outer->target) + (strcmp(outer->target, "/") ? 1 : 0);
            for (size_t k = 0; k < inner->rel.len; k++)
                str_list_push_owned(&outer->rel, xasprintf("%s/%s", suffix, inner->rel.items[k]));
            free(inner->target);
            inner->target = NULL;
            str_list_free(&inner->rel);
            break;
        }
    }
    hide_lookup_free(&lk);
}

int hide_read_mount_points(struct str_list *out, struct mnt_err *e)
{
    return mnt_read_mount_points(out, e);
}

int hide_take_submounts(struct hide_plan *plan, const struct str_list *mounts, struct mnt_err *e)
{
    (void)e;
    /* A mount below a covered directory makes the overlay impossible: in a user namespace every
     * inherited mount is locked (it may not be taken off to reveal what it covers), and the
     * kernel refuses a lower layer with locked mounts below it (overlayfs: "failed to clone
     * lowerpath", EINVAL) -- a container's /etc/hosts, /etc/resolv.conf, /etc/hostname, or a
     * volume in a home. Such a directory is rebuilt instead, its mounts included. */
    for (size_t m = 0; m < mounts->len; m++) {
        const char *point = mounts->items[m];
        for (size_t i = 0; i < plan->n_groups; i++) {
            const char *t = plan->groups[i].target;
            if (t && strcmp(point, t) != 0 && path_is_within(point, t))
                plan->groups[i].rebuilt = true;
        }
    }
    return 0;
}

/* One entry of a rebuilt directory, relative to its target: a directory of the tmpfs (the way
 * down to a hidden name), a symbolic link made anew, or a detached copy of the host's entry. */
struct rebuilt_entry {
    char *rel;
    int fd;     /* the copy (open_tree), or -1 */
    char *link; /* a symbolic link's target, or NULL */
    struct stat st;
};

struct rebuilt {
    struct rebuilt_entry *items;
    size_t len;
};

/* Enough for any /etc or home; beyond it the entries' copies would run out of descriptors. */
#define REBUILT_MAX 4096

static bool leads_to_hidden(const struct hide_group *g, const char *rel)
{
    size_t n = strlen(rel);
    for (size_t i = 0; i < g->rel.len; i++)
        if (strncmp(g->rel.items[i], rel, n) == 0 && g->rel.items[i][n] == '/')
            return true;
    return false;
}

/* The entries of dir (rel: its path below the target, "" for the target), parents before their
 * children. Every name but the hidden ones, each copied as it shows now (a mount on it
 * included, read-only like the host tree); the directories leading to a hidden name listed
 * and descended into. */
static int rebuilt_collect(const struct hide_group *g, const char *dir, const char *rel,
                           struct rebuilt *out, struct mnt_err *e)
{
    DIR *d = opendir(dir);
    if (!d)
        return mnt_fail(e, "list", dir);
    int r = 0;
    struct dirent *de;
    while (r == 0 && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *sub = rel[0] ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
        char *full = xasprintf("%s/%s", dir, de->d_name);
        struct rebuilt_entry en = {.rel = sub, .fd = -1};
        if (str_list_contains(&g->rel, sub)) {
            free(sub);
            free(full);
            continue; /* hidden */
        }
        if (out->len == REBUILT_MAX) {
            snprintf(e->buf, e->len,
                     "sandbox set-up: cannot hide in %s: more than %d entries "
                     "to rebuild (it has mounts below it)",
                     g->target, REBUILT_MAX);
            r = -1;
        } else if (lstat(full, &en.st) < 0) {
            r = errno == ENOENT ? 0 : mnt_fail(e, "stat", full); /* gone since the listing */
        } else if (leads_to_hidden(g, sub) && !(access(full, X_OK) < 0 && errno == EACCES)) {
            /* A symbolic link on the way is followed, as the overlay's layer would. (A folder
             * on the way that may not be searched is copied whole below: no command reaches
             * what it holds either.) */
            if (stat(full, &en.st) < 0 || !S_ISDIR(en.st.st_mode)) {
                errno = ENOTDIR;
                r = mnt_fail(e, "rebuild", full);
            }
        } else if (S_ISLNK(en.st.st_mode)) {
            char target[4096];
            ssize_t n = readlink(full, target, sizeof target - 1);
            if (n < 0) {
                r = mnt_fail(e, "readlink", full);
            } else {
                target[n] = '\0';
                en.link = xstrdup(target);
            }
        } else if ((en.fd = open_tree(AT_FDCWD, full,
                                      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
                                          AT_SYMLINK_NOFOLLOW)) < 0) {
            r = mnt_fail(e, "open_tree", full);
        }
        if (r == 0 && (en.fd >= 0 || en.link || S_ISDIR(en.st.st_mode))) {
            out->items = xrealloc(out->items, (out->len + 1) * sizeof *out->items);
            out->items[out->len++] = en;
            sub = NULL; /* owned by the entry */
            if (en.fd < 0 && !en.link)
                r = rebuilt_collect(g, full, en.rel, out, e);
        } else if (en.fd >= 0) {
            close(en.fd);
        }
        free(sub);
        free(full);
    }
    closedir(d);
    return r;
}

/* Make name (in the tmpfs tmpfs_fd) what entry en needs there: its directory, its link, or a
 * mount point of its type. Directories take the host's owner and mode, as in an overlay. */
static int rebuilt_make(int tmpfs_fd, const struct rebuilt_entry *en, struct mnt_err *e)
{
    int r;
    if (en->link) {
        r = symlinkat(en->link, tmpfs_fd, en->rel);
    } else if (S_ISDIR(en->st.st_mode)) {
        r = mkdirat(tmpfs_fd, en->rel, en->fd >= 0 ? 0755 : en->st.st_mode & 07777);
        if (r == 0 && en->fd < 0 &&
            fchownat(tmpfs_fd, en->rel, en->st.st_uid, en->st.st_gid, 0) < 0) {
            /* unmapped owner: keep ours */
        }
    } else {
        int fd = openat(tmpfs_fd, en->rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        r = fd < 0 ? -1 : close(fd);
    }
    return r < 0 ? mnt_fail(e, "create in the rebuilt directory", en->rel) : 0;
}

/* The group's target rebuilt on a tmpfs: every entry but the hidden names, each a read-only
 * copy of the host's (with the mounts on and below it), links made anew. What the host adds to
 * the target later does not show; what changes in an entry does. */
static int build_rebuilt(const struct hide_group *g, struct mnt_err *e)
{
    struct rebuilt list = {0};
    struct stat st;
    int tmpfs_fd = -1, r = -1;
    char mode[8];
    if (stat(g->target, &st) < 0) {
        mnt_fail(e, "stat", g->target);
        goto out;
    }
    /* A folder this process may not search is out of every command's reach too (a command has
     * no id or capability init lacks): nothing in it needs hiding. So it is for a shifted root
     * caller's init in a folder only the host's root may enter (/root, not the home, with a
     * mount below it). One it may search but not list is still reached by name: it is rebuilt,
     * and its listing fails closed. */
    if (access(g->target, X_OK) < 0 && errno == EACCES) {
        LOG_D("hide", "%s: not reachable from the sandbox, nothing hidden in it", g->target);
        r = 0;
        goto out;
    }
    if (rebuilt_collect(g, g->target, "", &list, e) < 0)
        goto out;
    snprintf(mode, sizeof mode, "%o", (unsigned)(st.st_mode & 07777));
    if ((tmpfs_fd = mnt_detached_tmpfs(e, mode)) < 0)
        goto out;
    if (fchownat(tmpfs_fd, "", st.st_uid, st.st_gid, AT_EMPTY_PATH) < 0) { /* as above */
    }
    for (size_t i = 0; i < list.len; i++)
        if (rebuilt_make(tmpfs_fd, &list.items[i], e) < 0)
            goto out;
    if (mnt_attach(e, tmpfs_fd, g->target, false) < 0)
        goto out;
    for (size_t i = 0; i < list.len; i++) {
        if (list.items[i].fd < 0)
            continue;
        char *path = xasprintf("%s/%s", g->target, list.items[i].rel);
        int m = mnt_attach(e, list.items[i].fd, path, false);
        free(path);
        if (m < 0)
            goto out;
    }
    /* The tmpfs and every copy read-only, as the host tree they stand for. */
    if (mnt_setattr(e, g->target, true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0) < 0)
        goto out;
    r = 0;
out:
    if (tmpfs_fd >= 0)
        close(tmpfs_fd);
    for (size_t i = 0; i < list.len; i++) {
        if (list.items[i].fd >= 0)
            close(list.items[i].fd);
        free(list.items[i].rel);
        free(list.items[i].link);
    }
    free(list.items);
    return r;
}

/* Overlay options treat ',' ':' and '\' as separators unless escaped. */
static char *escape_overlay_path(const char *p)
{
    char *out = xmalloc(strlen(p) * 2 + 1), *o = out;
    for (; *p; p++) {
        if (*p == ',' || *p == ':' || *p == '\\')
            *o++ = '\\';
        *o++ = *p;
    }
    *o = '\0';
    return out;
}

/* Is some other entry of rel a proper ancestor of path (both relative)? */
static bool has_hidden_ancestor(const struct str_list *rel, const char *path)
{
    for (size_t i = 0; i < rel->len; i++) {
        size_t n = strlen(rel->items[i]);
        if (strncmp(path, rel->items[i], n) == 0 && path[n] == '/')
            return true;
    }
    return false;
}

/* hide_build_layer's whiteouts, in its layer folder: a name inside another of rel is skipped
 * (inside a whiteout already). 0, or -1 with e. */
static int add_whiteouts(const char *target, int target_fd, const struct str_list *rel,
                         int tmpfs_fd, const char *layer, struct mnt_err *e)
{
    /* Each intermediate directory is looked up and made once, however many names it holds. */
    struct str_list tried = {0};
    int r = 0;
    for (size_t i = 0; i < rel->len && r == 0; i++) {
        if (has_hidden_ancestor(rel, rel->items[i]))
            continue; /* already inside a whiteout */
        char *path = xasprintf("%s/%s", layer, rel->items[i]);
        /* Intermediate directories mirror the host's, for the same reason. */
        for (char *s = strchr(path + strlen(layer) + 1, '/'); s; s = strchr(s + 1, '/')) {
            *s = '\0';
            const char *sub = path + strlen(layer) + 1;
            if (!str_list_contains(&tried, sub)) {
                str_list_push(&tried, sub);
                char *host = xasprintf("%s/%s", target, sub);
                struct stat hs;
                int got = target_fd >= 0 ? fstatat(target_fd, sub, &hs, 0) : stat(host, &hs);
                if (got == 0 && mkdirat(tmpfs_fd, path, hs.st_mode & 07777) == 0)
                    if (fchownat(tmpfs_fd, path, hs.st_uid, hs.st_gid, 0) < 0) { /* as above */
                    }
                free(host);
            }
            *s = '/';
        }
        struct stat ws;
        /* A repeated name finds its whiteout there: nothing more to do. */
        if (mknodat(tmpfs_fd, path, S_IFCHR | 0, makedev(0, 0)) < 0 &&
            (errno != EEXIST || fstatat(tmpfs_fd, path, &ws, AT_SYMLINK_NOFOLLOW) < 0 ||
             !S_ISCHR(ws.st_mode) || ws.st_rdev != makedev(0, 0)))
            r = mnt_fail(e, "create whiteout for", rel->items[i]);
        free(path);
    }
    str_list_free(&tried);
    return r;
}

int hide_build_layer(const char *target, int target_fd, const struct str_list *rel, int tmpfs_fd,
                     const char *layer, struct mnt_err *e)
{
    struct stat st;
    if ((target_fd >= 0 ? fstat(target_fd, &st) : stat(target, &st)) < 0)
        return mnt_fail(e, "stat", target);
    /* The overlay's directories take their owner and mode from this top layer. */
    if (mkdirat(tmpfs_fd, layer, st.st_mode & 07777) < 0)
        return mnt_fail(e, "mkdir whiteout layer for", target);
    if (fchownat(tmpfs_fd, layer, st.st_uid, st.st_gid, 0) < 0) { /* unmapped owner: keep ours */
    }
    return add_whiteouts(target, target_fd, rel, tmpfs_fd, layer, e);
}

/* hide_apply's overlays, built on a staging thread (overlay_stage.h): each overlaid group's
 * detached mount in fds[i], or -1 with the errno of the refusal in errs[i]. */
struct staged_overlays {
    struct hide_plan *plan;
    int tmpfs_fd;
    int *fds, *errs;
};

static int build_overlays(void *arg)
{
    struct staged_overlays *o = arg;
    struct overlay_stage sg = {.saved_ns = -1};
    char buf[512];
    struct mnt_err e = {buf, sizeof buf};
    /* No staging (no mount namespace to be had): each group is rebuilt instead. */
    bool staged = overlay_stage_begin(&sg, o->tmpfs_fd, false, &e) == 0;
    for (size_t i = 0; i < o->plan->n_groups; i++) {
        struct hide_group *g = &o->plan->groups[i];
        if (!g->target || g->rebuilt)
            continue;
        o->errs[i] = EINVAL;
        if (!staged)
            continue;
        char *target = escape_overlay_path(g->target);
        char *opts = xasprintf("lowerdir=./l%zu:%s", i, target);
        o->fds[i] = overlay_stage_mount(opts, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, g->target, &e);
        o->errs[i] = o->fds[i] < 0 ? errno : 0;
        free(opts);
        free(target);
    }
    overlay_stage_end(&sg);
    return 0;
}

int hide_apply(struct hide_plan *plan, struct mnt_err *e)
{
    int r = -1, tmpfs_fd = -1;
    bool any = false, overlays = false;
    for (size_t i = 0; i < plan->n_groups; i++)
        any |= plan->groups[i].target != NULL;
    if (!any)
        return 0;
    if ((tmpfs_fd = mnt_detached_tmpfs(e, "0755")) < 0)
        return -1;
    int *fds = xcalloc(plan->n_groups, sizeof *fds), *errs = xcalloc(plan->n_groups, sizeof *errs);
    /* No overlayfs in a user namespace before Linux 5.11 (or by the test switch): each folder
     * is rebuilt, with no try. */
    bool refused = kernel_lacks_forced("overlay_userns") || kernel_older_than(5, 11);
    for (size_t i = 0; i < plan->n_groups; i++)
        fds[i] = -1;
    for (size_t i = 0; i < plan->n_groups; i++) {
        struct hide_group *g = &plan->groups[i];
        errs[i] = refused ? EPERM : 0;
        if (!g->target || g->rebuilt || refused)
            continue;
        char layer[32];
        snprintf(layer, sizeof layer, "l%zu", i);
        if (hide_build_layer(g->target, -1, &g->rel, tmpfs_fd, layer, e) < 0)
            goto out;
        overlays = true;
    }
    struct staged_overlays so = {plan, tmpfs_fd, fds, errs};
    if (overlays && overlay_stage_run(build_overlays, &so) < 0) {
        for (size_t i = 0; i < plan->n_groups; i++)
            errs[i] = EINVAL; /* no thread: rebuilt, below */
    }
    for (size_t i = 0; i < plan->n_groups; i++) {
        struct hide_group *g = &plan->groups[i];
        if (!g->target)
            continue;
        if (fds[i] >= 0) {
            if (mnt_attach(e, fds[i], g->target, false) < 0)
                goto out;
            continue;
        }
        /* EINVAL: a mount below target that the list missed, or a stack of overlays too deep
         * for another (a container whose root is an overlay on an overlay); EPERM: no
         * overlayfs in a user namespace (before Linux 5.11): rebuild instead. */
        if (!g->rebuilt && errs[i] != EINVAL && errs[i] != EPERM) {
            errno = errs[i];
            mnt_fail(e, "mount overlayfs on", g->target);
            goto out;
        }
        if (build_rebuilt(g, e) < 0)
            goto out;
    }
    r = 0;
out:
    for (size_t i = 0; i < plan->n_groups; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    free(errs);
    plan->layers_fd = tmpfs_fd; /* the overlays keep the layers alive; nothing else reaches them */
    return r;
}

/* Covers for hidden paths inside a writable area, where an overlay would make the area read-only.
 * A file is covered by a dangling symlink: open, stat and writes through it fail with ENOENT, and
 * it cannot be removed (a mount point); the target can never exist (no fd is -1). A directory is
 * covered by a directory removed after it was mounted: looking up or listing anything in it
 * fails with ENOENT, and nothing can be created in it; only stat of the directory itself
 * succeeds. */
#define HIDDEN_FILE_TARGET "/proc/self/fd/-1"
/* The covers are made on a tmpfs attached on this folder of the sandbox's fresh /run, which goes
 * once they are placed: Linux before 6.15 clones no mount of a detached tree (open_tree of an
 * fsmount's folder: EINVAL), so a detached tmpfs cannot give them there. */
#define COVER_STAGE "/run/.cordon-covers"

/* The covers' tmpfs, attached on COVER_STAGE, holding "file" (a dangling link) and "dir": an fd
 * of its root, or -1 with one line in e. */
static int cover_stage_open(struct mnt_err *e)
{
    if (mkdir(COVER_STAGE, 0700) < 0)
        return mnt_fail(e, "mkdir", COVER_STAGE);
    if (mnt_mount(e, "cordon-covers", COVER_STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
        return -1;
    int fd = open(COVER_STAGE, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return mnt_fail(e, "open", COVER_STAGE);
    if (symlinkat(HIDDEN_FILE_TARGET, fd, "file") < 0 || mkdirat(fd, "dir", 0555) < 0) {
        close(fd);
        return mnt_fail(e, "create cover in", COVER_STAGE);
    }
    return fd;
}

/* The stage gone from the view: the covers placed keep its tmpfs alive, nothing else. */
static void cover_stage_close(int fd)
{
    close(fd);
    if (umount2(COVER_STAGE, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
        LOG_W("hide", "cannot detach %s: %s", COVER_STAGE, strerror(errno));
    if (rmdir(COVER_STAGE) < 0 && errno != ENOENT)
        LOG_W("hide", "cannot remove %s: %s", COVER_STAGE, strerror(errno));
}

int hide_apply_in_writable(struct hide_plan *plan, struct mnt_err *e)
{
    int tmpfs_fd = -1, r = -1;
    for (size_t i = 0; i < plan->in_writable.len; i++) {
        const char *h = plan->in_writable.items[i];
        struct stat st;
        if (lstat(h, &st) < 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                continue; /* nothing there: what a command makes there is its own */
            mnt_fail(e, "look up hidden path", h); /* not knowing is no reason to show it */
            goto out;
        }
        if (tmpfs_fd < 0 && (tmpfs_fd = cover_stage_open(e)) < 0)
            goto out;
        bool dir = S_ISDIR(st.st_mode);
        int cover = open_tree(tmpfs_fd, dir ? "dir" : "file",
                              OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
        if (cover < 0) {
            mnt_fail(e, "open_tree cover for", h);
            goto out;
        }
        int m = mnt_attach(e, cover, h, false);
        close(cover);
        if (m < 0)
            goto out;
    }
    /* Removing the cover directory after it is mounted makes it a dead directory: every name
     * looked up in it, and reading it, fails with ENOENT. */
    if (tmpfs_fd >= 0 && unlinkat(tmpfs_fd, "dir", AT_REMOVEDIR) < 0) {
        mnt_fail(e, "remove the cover directory for", "hidden directories");
        goto out;
    }
    r = 0;
out:
    if (tmpfs_fd >= 0)
        cover_stage_close(tmpfs_fd);
    return r;
}

void hide_plan_free(struct hide_plan *plan)
{
    for (size_t i = 0; i < plan->n_groups; i++) {
        free(plan->groups[i].target);
        str_list_free(&plan->groups[i].rel);
    }
    free(plan->groups);
    str_list_free(&plan->in_writable);
    if (plan->layers_fd >= 0)
        close(plan->layers_fd);
    memset(plan, 0, sizeof *plan);
    plan->layers_fd = -1;
}

/* ---- hidden by rule (hidden_except) -------------------------------------------------------- */

/* Matching entries of one rule's folder at most: a folder of keys and host lists, not a tree. */
#define EXCEPT_MAX 256

struct except_entry {
    char *name;
    int fd;     /* the copy (open_tree), or -1 for a link */
    char *link; /* a symbolic link's target, or NULL */
    mode_t mode;
};

static bool except_matches(const struct str_list *pats, const char *name)
{
    for (size_t i = 0; i < pats->len; i++)
        if (fnmatch(pats->items[i], name, 0) == 0)
            return true;
    return false;
}

/* The entries of dfd (the folder dir) whose names match pats, each copied as it shows now. */
static int except_collect(int dfd, const char *dir, const struct str_list *pats,
                          struct except_entry **out, size_t *n, struct mnt_err *e)
{
    int lfd = dup(dfd);
    DIR *d = lfd < 0 ? NULL : fdopendir(lfd);
    if (!d) {
        if (lfd >= 0)
            close(lfd);
        return mnt_fail(e, "list", dir);
    }
    int r = 0;
    struct dirent *de;
    errno = 0;
    while (r == 0 && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            !except_matches(pats, de->d_name))
            continue;
        struct stat st;
        struct except_entry en = {.fd = -1};
        if (*n == EXCEPT_MAX) {
            snprintf(e->buf, e->len,
                     "sandbox set-up: hidden_except %s: more than %d names match: refused", dir,
                     EXCEPT_MAX);
            r = -1;
        } else if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno != ENOENT) /* gone since the listing: not shown */
                r = mnt_fail(e, "stat in", dir);
            continue;
        } else if (S_ISLNK(st.st_mode)) {
            char target[4096];
            ssize_t len = readlinkat(dfd, de->d_name, target, sizeof target - 1);
            if (len < 0) {
                r = mnt_fail(e, "readlink in", dir);
                continue;
            }
            target[len] = '\0';
            en.link = xstrdup(target);
        } else if ((en.fd = open_tree(dfd, de->d_name,
                                      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
                                          AT_SYMLINK_NOFOLLOW)) < 0) {
            r = mnt_fail(e, "open_tree in", dir);
            continue;
        }
        en.name = xstrdup(de->d_name);
        en.mode = st.st_mode;
        *out = xrealloc(*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = en;
        errno = 0;
    }
    if (r == 0 && errno != 0)
        r = mnt_fail(e, "list", dir);
    closedir(d);
    return r;
}

/* One rule: real (the folder's canonical path in the view), shown only as pats allow. */
static int except_apply_one(const char *real, int dfd, const struct str_list *pats, bool writable,
                            struct mnt_err *e)
{
    struct except_entry *list = NULL;
    size_t n = 0;
    struct stat st;
    int tmpfs_fd = -1, r = -1;
    char mode[8];
    if (fstat(dfd, &st) < 0) {
        mnt_fail(e, "stat", real);
        goto out;
    }
    if (except_collect(dfd, real, pats, &list, &n, e) < 0)
        goto out;
    snprintf(mode, sizeof mode, "%o", (unsigned)(st.st_mode & 07777));
    if ((tmpfs_fd = mnt_detached_tmpfs(e, mode)) < 0)
        goto out;
    if (fchownat(tmpfs_fd, "", st.st_uid, st.st_gid, AT_EMPTY_PATH) < 0) { /* unmapped: ours */
    }
    for (size_t i = 0; i < n; i++) {
        int m;
        if (list[i].link) {
            m = symlinkat(list[i].link, tmpfs_fd, list[i].name);
        } else if (S_ISDIR(list[i].mode)) {
            m = mkdirat(tmpfs_fd, list[i].name, 0755);
        } else {
            int fd = openat(tmpfs_fd, list[i].name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            m = fd < 0 ? -1 : close(fd);
        }
        if (m < 0) {
            mnt_fail(e, "create in the cover of", real);
            goto out;
        }
    }
    if (mnt_attach(e, tmpfs_fd, real, false) < 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        if (list[i].fd < 0)
            continue;
        char *path = xasprintf("%s/%s", strcmp(real, "/") ? real : "", list[i].name);
        int m = mnt_attach(e, list[i].fd, path, false);
        free(path);
        if (m < 0)
            goto out;
    }
    /* The folder itself: nothing new in it from a command where the home is read-only; the
     * entries keep their own mounts' flags (a known_hosts of the copy-on-write home stays
     * writable there, as before). */
    if (mnt_setattr(e, real, false, (writable ? 0 : MOUNT_ATTR_RDONLY) | MOUNT_ATTR_NOSUID, 0) < 0)
        goto out;
    r = 0;
out:
    if (tmpfs_fd >= 0)
        close(tmpfs_fd);
    for (size_t i = 0; i < n; i++) {
        if (list[i].fd >= 0)
            close(list[i].fd);
        free(list[i].name);
        free(list[i].link);
    }
    free(list);
    return r;
}

int hide_apply_except(const struct str_list *rules, const struct str_list *visible,
                      const char *home, bool home_writable, struct hide_plan *plan,
                      struct mnt_err *e)
{
    for (size_t i = 0; i < rules->len; i++) {
        struct str_list pats = {0};
        char *dir = xstrdup(rules->items[i]), *tab = strchr(dir, '\t'), *real = NULL;
        int r = -1, dfd = -1;
        for (char *p = tab; p; p = strchr(p, '\t')) {
            *p++ = '\0';
            char *end = strchr(p, '\t');
            str_list_push_owned(&pats, end ? strndup(p, (size_t)(end - p)) : xstrdup(p));
        }
        if (dir[0] != '/' || pats.len == 0) {
            snprintf(e->buf, e->len, "sandbox set-up: a malformed hidden_except rule");
            goto next;
        }
        /* dir is the host's canonical path (the controller followed the host's links). No link
         * is followed here: one on the way now was planted in the copy-on-write home by a
         * command, and the host's folder does not show through it. */
        struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        dfd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
        if (dfd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)) {
            r = 0; /* hidden, in a hidden folder or replaced by the sandbox's own: not shown */
            goto next;
        }
        if (dfd < 0 && errno == EACCES) {
            /* Not listable by init, so not by any command: covered whole (a dead folder). */
            str_list_push(&plan->in_writable, dir);
            r = 0;
            goto next;
        }
        if (dfd < 0) {
            mnt_fail(e, "open", dir);
            goto next;
        }
        real = xstrdup(dir);
        if (any_within(visible, real, false)) {
            snprintf(e->buf, e->len,
                     "sandbox set-up: hidden_except %s holds the workspace or a writable path "
                     "(%s): refused; name a folder beside it",
                     dir, real);
            goto next;
        }
        r = except_apply_one(real, dfd, &pats, home_writable && home && path_is_within(real, home),
                             e);
    next:
        if (dfd >= 0)
            close(dfd);
        free(real);
        free(dir);
        str_list_free(&pats);
        if (r < 0)
            return -1;
    }
    return 0;
}

void hide_except_hidden_now(const struct str_list *rules, struct str_list *out)
{
    for (size_t i = 0; i < rules->len; i++) {
        struct str_list pats = {0};
        char *dir = xstrdup(rules->items[i]), *tab = strchr(dir, '\t');
        for (char *p = tab; p; p = strchr(p, '\t')) {
            *p++ = '\0';
            char *end = strchr(p, '\t');
            str_list_push_owned(&pats, end ? strndup(p, (size_t)(end - p)) : xstrdup(p));
        }
        DIR *d = opendir(dir);
        size_t n = 0;
        struct dirent *de;
        while (d && n < EXCEPT_MAX && (de = readdir(d))) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                except_matches(&pats, de->d_name))
                continue;
            str_list_push_owned(out, xasprintf("%s/%s", dir, de->d_name));
            n++;
        }
        if (d)
            closedir(d);
        free(dir);
        str_list_free(&pats);
    }
}

/* ---- links on the way to a hidden path (host side) ----------------------------------------- */

/* a + "/" + b, without a doubled slash when a is "/". */
static char *join_path(const char *a, const char *b)
{
    return b[0] ? xasprintf("%s/%s", strcmp(a, "/") ? a : "", b) : xstrdup(a);
}

/* Written as realpath writes: absolute, no empty, "." or ".." component, no trailing slash. */
static bool written_canonically(const char *h)
{
    if (h[0] != '/')
        return false;
    if (h[1] == '\0')
        return true;
    for (const char *c = h + 1;; c++) {
        const char *end = strchrnul(c, '/');
        size_t len = (size_t)(end - c);
        if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (!*end)
            return true;
        c = end;
    }
}

/* The common case in one lookup instead of a stat and a readlink per folder on the way: a path
 * written canonically that the kernel resolves without meeting any link (RESOLVE_NO_SYMLINKS
 * refuses every one, a dangling one included) either exists whole or stops at a name that does
 * not exist at all; the walk below then finds no link either and gives the path as written.
 * Any other answer (a link, a file on the way, no permission, a kernel without openat2) is
 * left to the walk. */
static bool has_no_link_on_the_way(const char *h)
{
    if (!written_canonically(h))
        return false;
    /* No O_NOFOLLOW: with it a link at the end would be opened itself, not refused. */
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, h, &how, sizeof how);
    if (fd >= 0) {
        close(fd);
        return true;
    }
    return errno == ENOENT;
}

char *hide_link_target(const char *h)
{
    if (has_no_link_on_the_way(h))
        return NULL;
    char *cur = xstrdup(h);
    for (int hops = 0; hops < 40; hops++) {
        /* The longest prefix of cur that stat (following links) finds, made canonical. */
        char *p = xstrdup(cur), *rest = NULL;
        struct stat st;
        for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
            if (s)
                *s = '\0';
            if (stat(p, &st) < 0) {
                rest = xstrdup(cur + (strrchr(p, '/') - p) + 1); /* from the failing component */
                *strrchr(p, '/') = '\0';
                break;
            }
            if (!s)
                break;
            *s = '/';
        }
        char *base = realpath(p[0] ? p : "/", NULL);
        free(p);
        if (!base) {
            free(rest);
            break; /* cannot be looked into: cur stands */
        }
        if (!rest) { /* all of it exists */
            free(cur);
            cur = base;
            break;
        }
        /* The failing component: a link to a missing target is followed by hand. */
        char *slash = strchr(rest, '/');
        char *first = slash ? strndup(rest, (size_t)(slash - rest)) : xstrdup(rest);
        char *at = join_path(base, first), target[4096];
        ssize_t n = -1;
        if (lstat(at, &st) == 0 && S_ISLNK(st.st_mode))
            n = readlink(at, target, sizeof target - 1);
        free(cur);
        if (n > 0) {
            target[n] = '\0';
            char *t = target[0] == '/' ? xstrdup(target) : join_path(base, target);
            cur = slash ? xasprintf("%s%s", t, slash) : xstrdup(t);
            free(t);
        } else {
            cur = join_path(base, rest); /* missing, or not to be looked into: as written */
        }
        free(at);
        free(first);
        free(base);
        free(rest);
        if (n <= 0)
            break;
    }
    /* Lexical tidy of what followed a missing component ("a/./b", "a//b"); ".." is left. */
    char *norm = path_absolute(cur, "/");
    free(cur);
    if (strcmp(norm, h) == 0) {
        free(norm);
        return NULL;
    }
    return norm;
}
