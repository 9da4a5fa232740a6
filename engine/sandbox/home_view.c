/* home_view.c — see home_view.h. The overlay's options: `userxattr` (the only xattr namespace a
 * user namespace may use for overlayfs' own attributes), redirect_dir=nofollow and metacopy=off
 * (neither is allowed with userxattr: both would follow attributes a command could forge),
 * index=off (the whiteout layer is a new tmpfs each time, so an index would never verify),
 * xino=off (no inode-number games on the host's file system) and `volatile`: without it every
 * sandbox's end (the unmount) syncs the host's whole file system, which with a few hundred MB
 * of dirty pages took 170 ms here, on each command. The price: writes to the layer in the last
 * seconds before a host crash may be lost (caches, a config). What is hidden does not depend on
 * the layer: the whiteouts are made anew on every start. */
#include "sandbox/home_view.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "base/cordon_dirs.h"
#include "base/log.h"
#include "sandbox/hide.h"
#include "sandbox/home_layers.h"
#include "sandbox/home_own.h"
#include "sandbox/overlay_stage.h"

#define HOME_OVERLAY_OPTS "userxattr,redirect_dir=nofollow,metacopy=off,index=off,xino=off,volatile"

/* The layer's lock: held by this init until everything else in the sandbox is gone. */
static int held_lock = -1;
/* This sandbox's pending upper and the ended ones it shows (home_layers.h); read by the
 * builder, which starts after they are taken. */
static struct hl_taken layers = {.own_lock = -1};
/* A pending sandbox's own detached tree of the layer folder, to mark its end through (home_layers.h). */
static int end_fd = -1;

/* The builder says the overlay is built (hv->mnt_fd or hv->err set) here, and then goes on to
 * tidy the layer's spare work directory (tidy_spare) while the command starts: init waits for
 * the first, home_view_release for the second. Static, not in the home_view: the builder must
 * not touch what init frees once it has said so. */
static pthread_mutex_t built_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t built_cv = PTHREAD_COND_INITIALIZER;
static bool built;
static pthread_t tidier;
static bool tidying;
/* The builder has tidied the layer (or had nothing to tidy): what it does after that (going
 * back to init's namespace, which tears its staging copy down, and closing detached trees:
 * each waits for the kernel's RCU grace period, 0.2 to 7 ms here) is no longer on anyone's
 * path, so home_view_release waits for this, not for the thread's end. */
static bool tidied;
/* Descriptors init gave the builder to close when it is done (home_view_close_later); n_later
 * is SIZE_MAX once it has closed them. */
static bool builder_started;
static int later[4];
static size_t n_later;
/* The builder started ahead (home_view_start_early), waiting for go: then building go_hv, or
 * (NULL) nothing. */
static pthread_cond_t go_cv = PTHREAD_COND_INITIALIZER;
static bool early, go;
static pthread_t early_builder;
static struct home_view *go_hv;

void home_view_release(void)
{
    /* The tidy is the lock holder's: the next sandbox takes the spare only once it is done.
     * The thread's teardown after it goes on while init reports and exits (its exit ends it). */
    if (tidying) {
        pthread_mutex_lock(&built_mu);
        while (!tidied)
            pthread_cond_wait(&built_cv, &built_mu);
        pthread_mutex_unlock(&built_mu);
        pthread_detach(tidier);
    }
    tidying = false;
    hl_release(&layers, end_fd);
    if (end_fd >= 0)
        close(end_fd);
    end_fd = -1;
    if (held_lock >= 0)
        close(held_lock);
    held_lock = -1;
}

char *home_view_layers_root(void)
{
    return cdir_path(CDIR_STATE, "homes");
}

char *home_view_layer_dir(const char *workspace)
{
    return cdir_workspace_path(CDIR_STATE, "homes", workspace);
}

/* The lock is a regular file of the layer: a descriptor of it leads nowhere else (one of the
 * layer's directory would be a way into the host's tree for whoever could reach it). */
static int open_lock(const char *layer)
{
    char *path = xasprintf("%s/lock", layer);
    /* Read-only: a descriptor open for writing would keep the host's mount from turning
     * read-only (EBUSY); flock needs none. */
    int fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    free(path);
    return fd;
}

int home_view_layer_lock(const char *layer)
{
    int fd = open_lock(layer);
    if (fd < 0)
        return -errno;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int r = errno == EWOULDBLOCK ? -EBUSY : -errno;
        close(fd);
        return r;
    }
    return fd;
}

/* Where init attached the controller's detached tree of the layer folder for a shifted root caller
 * (home_view_use_layer), or NULL: the layer's own path. */
static const char *staged_layer;

void home_view_use_layer(const char *path)
{
    staged_layer = path;
}

static bool inside_any(const char *path, const struct str_list *dirs)
{
    for (size_t i = 0; i < dirs->len; i++)
        if (path_is_within(path, dirs->items[i]))
            return true;
    return false;
}

static void *build(void *arg);
static void *build_early(void *arg);
static void say_tidied(void);

void home_view_start_early(void)
{
    if (early || pthread_create(&early_builder, NULL, build_early, NULL) != 0)
        return; /* without it, home_view_prepare starts the builder itself */
    early = true;
    pthread_mutex_lock(&built_mu);
    builder_started = true;
    pthread_mutex_unlock(&built_mu);
}

/* Hand hv to the builder (the early one, or one started now). 0, or -1 with e set. */
static int start_build(struct home_view *hv, struct mnt_err *e)
{
    if (early) {
        pthread_mutex_lock(&built_mu);
        go_hv = hv;
        go = true;
        pthread_cond_signal(&go_cv);
        pthread_mutex_unlock(&built_mu);
        hv->builder = early_builder;
    } else {
        int r = pthread_create(&hv->builder, NULL, build, hv);
        if (r != 0) {
            errno = r;
            return mnt_fail(e, "start building", hv->home);
        }
        pthread_mutex_lock(&built_mu);
        builder_started = true;
        pthread_mutex_unlock(&built_mu);
    }
    hv->building = true;
    return 0;
}

/* Nothing to build: the early builder closes what it made and ends (home_view_release joins it). */
static void stop_early(void)
{
    if (!early || go)
        return;
    pthread_mutex_lock(&built_mu);
    go = true;
    go_hv = NULL;
    pthread_cond_signal(&go_cv);
    pthread_mutex_unlock(&built_mu);
    tidier = early_builder;
    tidying = true;
}

/* A detached clone of the one mount at path (not its submounts): a layer, or the home's lower. */
static int detached_tree_of(struct mnt_err *e, const char *path)
{
    int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    return fd < 0 ? mnt_fail(e, "open_tree", path) : fd;
}

/* Is the layer folder on an overlay file system (which overlayfs refuses as an upper layer)? */
static bool layer_on_overlay(const char *layer)
{
    struct statfs fs;
    return statfs(layer, &fs) == 0 && fs.f_type == OVERLAYFS_SUPER_MAGIC;
}

/* Lock the layer, or learn that another sandbox holds it: then this one writes a pending upper
 * of its own (home_layers.h), at once, without waiting for the other. Either way the ended
 * sandboxes' pending uppers are merged or shown. 0, or -1 with e set. */
static int take_layer(struct home_view *hv, const char *layer, struct mnt_err *e)
{
    int fd = open_lock(layer);
    if (fd < 0)
        return mnt_fail(e, "open the lock of the home layer", layer);
    bool got = flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (!got && errno != EWOULDBLOCK) {
        close(fd);
        return mnt_fail(e, "lock the home layer", layer);
    }
    if (got)
        held_lock = fd;
    else
        close(fd);
    int lfd = open(layer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (lfd < 0)
        return mnt_fail(e, "open the home layer", layer);
    char why[256];
    int r = got ? hl_take_holder(lfd, &layers, why, sizeof why)
                : hl_take_pending(lfd, &layers, why, sizeof why);
    close(lfd);
    if (r < 0) {
        snprintf(e->buf, e->len, "sandbox set-up: %s (%s)", why, layer);
        return -1;
    }
    hv->shared = !got;
    return 0;
}

/* The first mount strictly below home, or NULL. */
static const char *mount_below(const char *home, const struct str_list *mounts)
{
    for (size_t i = 0; i < mounts->len; i++)
        if (strcmp(mounts->items[i], home) != 0 && path_is_within(mounts->items[i], home))
            return mounts->items[i];
    return NULL;
}

/* The outermost mounts strictly below the home that stay shown (not hidden, not under a path
 * that is bound on top anyway): the overlay covers them, so they are taken detached and put back. */
static int take_submounts(struct home_view *hv, const struct sandbox_config *cfg,
                          const struct str_list *visible, const struct str_list *mounts,
                          struct mnt_err *e)
{
    struct str_list found = {0};
    for (size_t i = 0; i < mounts->len; i++) {
        const char *m = mounts->items[i];
        if (strcmp(m, hv->home) == 0 || !path_is_within(m, hv->home) ||
            inside_any(m, &cfg->hidden) || inside_any(m, visible) || str_list_contains(&found, m))
            continue;
        str_list_push(&found, m);
    }
    int r = 0;
    for (size_t i = 0; i < found.len && r == 0; i++) {
        bool nested = false;
        for (size_t j = 0; j < found.len && !nested; j++)
            nested = j != i && path_is_within(found.items[i], found.items[j]);
        if (nested)
            continue;
        int fd = mnt_detached_tree(e, found.items[i]);
        if (fd < 0) {
            r = -1;
            break;
        }
        hv->sub_fds = xrealloc(hv->sub_fds, (hv->sub_paths.len + 1) * sizeof(int));
        hv->sub_fds[hv->sub_paths.len] = fd;
        str_list_push(&hv->sub_paths, found.items[i]);
    }
    str_list_free(&found);
    return r;
}

/* home_view_prepare but for its builder: 0 with hv->mode SANDBOX_HOME_READONLY when there is
 * nothing to build. */
static int prepare(struct home_view *hv, const struct sandbox_config *cfg,
                   const struct str_list *visible, const struct str_list *mounts,
                   struct str_list *hidden_rest, struct mnt_err *e)
{
    memset(hv, 0, sizeof *hv);
    hv->home_fd = hv->layer_fd = hv->mnt_fd = -1;
    bool home_hidden = false;
    for (size_t i = 0; cfg->home && i < cfg->hidden.len; i++)
        home_hidden |= path_is_within(cfg->home, cfg->hidden.items[i]);
    /* A hidden home stays hidden: hiding wins over every home mode. */
    if (cfg->home_mode == SANDBOX_HOME_READONLY || !cfg->home || home_hidden) {
        for (size_t i = 0; i < cfg->hidden.len; i++)
            str_list_push(hidden_rest, cfg->hidden.items[i]);
        return 0;
    }
    hv->mode = cfg->home_mode;
    hv->home = cfg->home;
    hv->own = home_own_applies(cfg);
    home_own_keep(hv->home, visible, &hv->keep);
    for (size_t i = 0; i < cfg->home_tool_dirs.len; i++)
        str_list_push(&hv->tool_dirs, cfg->home_tool_dirs.items[i]);
    if (strcmp(hv->home, "/") == 0) {
        snprintf(e->buf, e->len,
                 "the home directory is /, which cannot take a copy-on-write home "
                 "(profile key home = \"readonly\", --home readonly, avoids it)");
        return -1;
    }
    const char *below = mount_below(hv->home, mounts);
    if (below) {
        /* In the sandbox's user namespace every mount it inherited is locked to what lies under
         * it, and overlayfs refuses a lower layer with locked mounts below it: no copy-on-write
         * home can be built over this one. A read-only home is the stricter view, so the
         * sandbox starts with it rather than not at all (a project mounted under the home is
         * the usual container set-up), and says so. */
        LOG_W("home",
              "%s is a mount below the home %s, and the kernel refuses a copy-on-write "
              "home over it: the home is read-only in this sandbox (mount it elsewhere, "
              "or set home = \"readonly\" to say so yourself)",
              below, hv->home);
        hv->mode = SANDBOX_HOME_READONLY;
        for (size_t i = 0; i < cfg->hidden.len; i++)
            str_list_push(hidden_rest, cfg->hidden.items[i]);
        return 0;
    }
    struct hide_lookup lk = {0}; /* the home's parents, looked up once for all its names */
    for (size_t i = 0; i < cfg->hidden.len; i++) {
        const char *h = cfg->hidden.items[i];
        /* Inside the workspace or a writable path, hide.c's covers apply (bound on top). */
        if (path_is_within(h, hv->home) && !inside_any(h, visible))
            hide_whiteouts_for(&lk, hv->home, h, visible, &hv->rel);
        else
            str_list_push(hidden_rest, h);
    }
    hide_lookup_free(&lk);
    if (hv->mode == SANDBOX_HOME_OVERLAY) {
        if (!cfg->home_layer) {
            snprintf(e->buf, e->len,
                     "no folder for the home layer (neither XDG_STATE_HOME nor "
                     "HOME is set; profile key home = \"tmpfs\" or \"readonly\" avoids it)");
            return -1;
        }
        /* A shifted root caller's init reaches the layer only where it staged it. */
        const char *layer = staged_layer ? staged_layer : cfg->home_layer;
        if (layer_on_overlay(layer)) {
            /* A container's root file system is an overlay, and overlayfs takes no upper layer
             * on an overlay: the home stays copy-on-write, with a fresh layer (as "tmpfs"). */
            LOG_W("home",
                  "the home layer's folder %s is on an overlay file system (a container's?), "
                  "which cannot hold another overlay's writes: this sandbox's home writes "
                  "are not kept (a volume mounted at the state folder keeps them)",
                  cfg->home_layer);
            hv->mode = SANDBOX_HOME_TMPFS;
        } else if (take_layer(hv, layer, e) < 0 ||
                   (hv->layer_fd = detached_tree_of(e, layer)) < 0) {
            return -1;
        } else if (hv->shared && (end_fd = fcntl(hv->layer_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
            return mnt_fail(e, "keep a detached tree of the home layer", layer);
        }
    }
    if ((hv->home_fd = detached_tree_of(e, hv->home)) < 0 ||
        take_submounts(hv, cfg, visible, mounts, e) < 0)
        return -1;
    return 0;
}

int home_view_prepare(struct home_view *hv, const struct sandbox_config *cfg,
                      const struct str_list *visible, const struct str_list *mounts,
                      struct str_list *hidden_rest, struct mnt_err *e)
{
    int r = prepare(hv, cfg, visible, mounts, hidden_rest, e);
    if (r == 0 && hv->mode != SANDBOX_HOME_READONLY)
        return start_build(hv, e);
    stop_early();
    return r;
}

/* A `volatile` mount leaves work/work/incompat/volatile/dirty behind, and overlayfs refuses the
 * next mount while it is there (its way of saying the upper layer may have missed writes in a
 * crash). Only the sandbox holding the layer's lock gets here: remove it. */
static int clear_volatile(int layer_fd, struct mnt_err *e)
{
    static const struct {
        const char *path;
        int flags;
    } marks[] = {{"work/work/incompat/volatile/dirty", 0},
                 {"work/work/incompat/volatile", AT_REMOVEDIR},
                 {"work/work/incompat", AT_REMOVEDIR}};
    for (size_t i = 0; i < ARRAY_LEN(marks); i++)
        if (unlinkat(layer_fd, marks[i].path, marks[i].flags) < 0 && errno != ENOENT &&
            errno != ENOTDIR)
            return mnt_fail(e, "remove overlayfs' mark", marks[i].path);
    return 0;
}

/* The previous mount's work directory, taken out of the way in one rename: the layer keeps a
 * spare next to `work`, emptied by the last sandbox after its command had started (tidy_spare),
 * and the two are exchanged. Removing the old one's contents here instead (clear_volatile, and
 * the kernel's own removal of work/work at the mount) took more than half a millisecond of
 * journalled changes on every start. Both must be directories (no link is followed to one): a
 * `work` that is none stays, and overlayfs refuses it as before. Without a spare (the first
 * start, an older cordon's layer, a file system without RENAME_EXCHANGE) nothing changes, and
 * clear_volatile does the work in place. What a crash leaves in the spare (the removal cut
 * short) is no more than a used `work` holds: clear_volatile and the kernel clear it as ever. */
#define SPARE_WORK "work.spare"

static bool dir_at(int fd, const char *name)
{
    struct stat st;
    return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static void swap_work(int layer_fd)
{
    if (dir_at(layer_fd, "work") && dir_at(layer_fd, SPARE_WORK))
        (void)renameat2(layer_fd, SPARE_WORK, layer_fd, "work", RENAME_EXCHANGE);
}

/* Remove what directory fd holds, depth-first, at most depth levels down (an overlay's work
 * directory holds two or three); nothing is followed: links are removed as names, directories
 * opened with O_NOFOLLOW. Best effort: what stays is cleared at the next start. */
static void empty_dir(int fd, int depth)
{
    int dfd = dup(fd);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) {
            (void)unlinkat(fd, de->d_name, 0);
            continue;
        }
        if (unlinkat(fd, de->d_name, AT_REMOVEDIR) == 0 || errno == ENOENT)
            continue;
        if (errno == ENOTDIR) {
            (void)unlinkat(fd, de->d_name, 0);
            continue;
        }
        int sub = -1;
        if (depth > 0)
            sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
            continue;
        empty_dir(sub, depth - 1);
        close(sub);
        (void)unlinkat(fd, de->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

/* The spare emptied for the next start, or made when there is none (an older layer's first
 * start). Only the holder of the layer's lock, after its mount. */
static void tidy_spare(int layer_fd)
{
    int fd = openat(layer_fd, SPARE_WORK, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT) {
        /* Not a directory (a link, a file): never the spare. */
        if (unlinkat(layer_fd, SPARE_WORK, 0) < 0 && errno != ENOENT)
            return;
    }
    if (fd < 0) {
        (void)mkdirat(layer_fd, SPARE_WORK, 0700);
        return;
    }
    /* What a volatile mount leaves, removed by name; only anything more (a crash's leftovers,
     * overlayfs' temporary files) needs the walk. */
    static const struct {
        const char *path;
        int flags;
    } left[] = {{"work/incompat/volatile/dirty", 0},
                {"work/incompat/volatile", AT_REMOVEDIR},
                {"work/incompat", AT_REMOVEDIR},
                {"work", AT_REMOVEDIR}};
    bool more = false;
    for (size_t i = 0; i < ARRAY_LEN(left); i++)
        more |= unlinkat(fd, left[i].path, left[i].flags) < 0 && errno != ENOENT;
    if (more)
        empty_dir(fd, 4);
    close(fd);
}

/* The layers' names in the staging (overlay_stage.h): "./wl" and the others are folders of the
 * whiteout tmpfs, on which the builder stages the detached trees. */
#define STAGE_HOME "lower"
#define STAGE_LAYER "layer"
#define STAGE_BASE "base"
#define HOME_ATTRS (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

/* Build the home's overlay, detached: the whiteout layer, the fresh upper when nothing is kept,
 * the mount itself. Runs on a thread of its own while init builds the rest of the view (the
 * mount's work on the host's file system is mostly waiting). hv->mnt_fd, or hv->err; then, the
 * overlay said built, the layer's spare tidied. tmpfs_fd: the whiteout layer's file system when
 * made ahead (taken), or -1. */
static void build_with(struct home_view *hv, int tmpfs_fd, struct overlay_stage *staged)
{
    struct mnt_err e = {hv->err, sizeof hv->err};
    struct overlay_stage own = {.saved_ns = -1};
    struct overlay_stage *sgp = staged ? staged : &own;
    int base_fd = -1;
    bool tidy = false;
    char *opts = NULL, *upper = NULL, *work = NULL;
    struct stat st, ust;
    if (fstat(hv->home_fd, &st) < 0) { /* the host's home: its owner and mode */
        mnt_fail(&e, "stat", hv->home);
        goto out;
    }
    if (tmpfs_fd < 0 && (tmpfs_fd = mnt_detached_tmpfs(&e, "0755")) < 0)
        goto out;
    const char *wl = "wl"; /* the whiteout layer's folder in tmpfs_fd */
    if (hide_build_layer(hv->home, hv->home_fd, &hv->rel, tmpfs_fd, wl, &e) < 0)
        goto out;
    bool fresh_upper = hv->mode == SANDBOX_HOME_TMPFS;
    /* Where this sandbox writes in the layer folder: the layer's upper, or (another sandbox
     * holds it) a pending upper of its own (home_layers.h). */
    upper = hv->shared ? xasprintf("pending/%s/upper", layers.own) : xstrdup("upper");
    work = hv->shared ? xasprintf("pending/%s/work", layers.own) : xstrdup("work");
    if (fresh_upper) {
        if (mkdirat(tmpfs_fd, "u", st.st_mode & 07777) < 0 || mkdirat(tmpfs_fd, "w", 0700) < 0) {
            mnt_fail(&e, "mkdir the home's tmpfs layer for", hv->home);
            goto out;
        }
        if (fchownat(tmpfs_fd, "u", st.st_uid, st.st_gid, 0) < 0) { /* unmapped owner: keep ours */
        }
    } else if (!hv->shared && (swap_work(hv->layer_fd), clear_volatile(hv->layer_fd, &e) < 0)) {
        goto out;
    } else if (fstatat(hv->layer_fd, upper, &ust, AT_SYMLINK_NOFOLLOW) < 0 ||
               ((ust.st_mode & 07777) != (st.st_mode & 07777) &&
                fchmodat(hv->layer_fd, upper, st.st_mode & 07777, 0) < 0)) {
        /* The overlay's root takes the upper directory's mode: show the home's own. */
        mnt_fail(&e, "chmod the home layer of", hv->home);
        goto out;
    }
    /* What an older cordon let commands write beside the rule must not mask the host's files. */
    if (!fresh_upper)
        home_own_clean_layer(hv->layer_fd, &hv->keep, &hv->tool_dirs);
    /* The layers by their staging names, relative to the builder's working directory: "." is
     * the whiteout tmpfs (overlay_stage.h). */
    if ((!staged && overlay_stage_begin(&own, tmpfs_fd, true, &e) < 0) ||
        overlay_stage_attach(tmpfs_fd, hv->home_fd, STAGE_HOME, &e) < 0 ||
        (hv->layer_fd >= 0 && overlay_stage_attach(tmpfs_fd, hv->layer_fd, STAGE_LAYER, &e) < 0))
        goto out;
    if (!fresh_upper && (hv->shared || layers.lowers.len > 0)) {
        /* Lower layers in the layer folder (the layer's upper under a pending one, ended
         * sandboxes' pending uppers): the folder lies inside the home, and overlayfs refuses two
         * lower layers one inside the other (ELOOP). So first a read-only overlay of the home
         * with its whiteouts, and that mount (a file system of its own) is the lowest layer. */
        opts = xasprintf("lowerdir=./%s:" STAGE_HOME, wl);
        if ((base_fd = overlay_stage_mount(opts, HOME_ATTRS | MOUNT_ATTR_RDONLY, "the home", &e)) <
                0 ||
            overlay_stage_attach(tmpfs_fd, base_fd, STAGE_BASE, &e) < 0)
            goto out;
        free(opts);
        char *lowers = xstrdup("");
        for (size_t i = 0; i < layers.lowers.len; i++) {
            char *l = xasprintf("%s" STAGE_LAYER "/%s:", lowers, layers.lowers.items[i]);
            free(lowers);
            lowers = l;
        }
        opts = xasprintf(HOME_OVERLAY_OPTS ",lowerdir=%s%s" STAGE_BASE ",upperdir=" STAGE_LAYER
                                           "/%s,workdir=" STAGE_LAYER "/%s",
                         lowers, hv->shared ? STAGE_LAYER "/upper:" : "", upper, work);
        free(lowers);
    } else if (fresh_upper) {
        opts = xasprintf(HOME_OVERLAY_OPTS ",lowerdir=./%s:" STAGE_HOME ",upperdir=./u,workdir=./w",
                         wl);
    } else {
        opts = xasprintf(HOME_OVERLAY_OPTS ",lowerdir=./%s:" STAGE_HOME ",upperdir=" STAGE_LAYER
                                           "/upper,workdir=" STAGE_LAYER "/work",
                         wl);
    }
    hv->mnt_fd = overlay_stage_mount(opts, HOME_ATTRS, "the home", &e);
    if (hv->mnt_fd >= 0 && hv->own) {
        /* the person's own entries read-only, on the overlay before init attaches it */
        int tree = home_own_stage(tmpfs_fd, hv->mnt_fd, STAGE_HOME, &hv->keep, &hv->tool_dirs,
                                  &hv->rel, &e);
        close(hv->mnt_fd);
        hv->mnt_fd = tree;
    }
    tidy = hv->mnt_fd >= 0 && !fresh_upper && !hv->shared; /* the spare is the lock holder's */
out:
    free(opts);
    free(upper);
    free(work);
    /* The detached trees are the builder's to close from here on: init no longer needs them once the
     * overlay is built (it holds clones of its layers), and the last close of a detached mount
     * waits for the kernel's RCU grace period (a tenth of a millisecond or more, each). */
    int home_fd = hv->home_fd, layer_fd = hv->layer_fd;
    hv->home_fd = hv->layer_fd = -1;
    pthread_mutex_lock(&built_mu);
    built = true; /* from here on hv is init's alone */
    pthread_cond_broadcast(&built_cv);
    pthread_mutex_unlock(&built_mu);
    if (tidy)
        tidy_spare(layer_fd);
    say_tidied();
    overlay_stage_end(sgp);
    /* The overlay keeps its layers; nothing else can reach them. */
    int fds[] = {tmpfs_fd, base_fd, home_fd, layer_fd};
    for (size_t i = 0; i < ARRAY_LEN(fds); i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

static void say_tidied(void)
{
    pthread_mutex_lock(&built_mu);
    tidied = true;
    pthread_cond_broadcast(&built_cv);
    pthread_mutex_unlock(&built_mu);
}

/* The builder's last act: what init gave it to close (home_view_close_later). */
static void close_later_ones(void)
{
    pthread_mutex_lock(&built_mu);
    size_t n = n_later;
    n_later = SIZE_MAX; /* closes nothing more: home_view_close_later closes at once */
    pthread_mutex_unlock(&built_mu);
    for (size_t i = 0; i < n; i++)
        close(later[i]);
}

/* The builder outlives the view's build (its tidy runs while the command starts): no signal
 * meant for init's supervisor (signalfd) may land on it. */
static void block_signals(void)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
}

static void *build(void *arg)
{
    block_signals();
    build_with(arg, -1, NULL);
    close_later_ones();
    return NULL;
}

/* Started before the configuration is known, while init waits for it: the thread's own start,
 * its tmpfs and its staging namespace (the unshare copies init's mount namespace: 0.1 to 0.8 ms
 * here) are then off the path, and the build begins as soon as home_view_prepare says. The
 * copy is of init's namespace before the view changes it, as the build's own was: the staging
 * reaches the layers by descriptors only (overlay_stage.h). */
static void *build_early(void *arg)
{
    (void)arg;
    block_signals();
    char err[256];
    struct mnt_err e = {err, sizeof err};
    struct overlay_stage sg = {.saved_ns = -1};
    int tmpfs_fd = mnt_detached_tmpfs(&e, "0755"); /* failed: build_with tries again, and says */
    bool staged = tmpfs_fd >= 0 && overlay_stage_begin(&sg, tmpfs_fd, true, &e) == 0;
    if (!staged)
        overlay_stage_end(&sg); /* build_with stages again, and says what fails */
    pthread_mutex_lock(&built_mu);
    while (!go)
        pthread_cond_wait(&go_cv, &built_mu);
    struct home_view *hv = go_hv;
    pthread_mutex_unlock(&built_mu);
    if (hv) {
        build_with(hv, tmpfs_fd, staged ? &sg : NULL);
    } else {
        say_tidied();
        overlay_stage_end(&sg);
        if (tmpfs_fd >= 0)
            close(tmpfs_fd);
    }
    close_later_ones();
    return NULL;
}

void home_view_close_later(int fd)
{
    if (fd < 0)
        return;
    pthread_mutex_lock(&built_mu);
    bool taken = builder_started && n_later < ARRAY_LEN(later);
    if (taken)
        later[n_later++] = fd;
    pthread_mutex_unlock(&built_mu);
    if (!taken)
        close(fd);
}

/* Wait until the builder has said the overlay built; its tidy goes on, for home_view_release. */
static void join(struct home_view *hv)
{
    if (!hv->building)
        return;
    pthread_mutex_lock(&built_mu);
    while (!built)
        pthread_cond_wait(&built_cv, &built_mu);
    pthread_mutex_unlock(&built_mu);
    tidier = hv->builder;
    tidying = true;
    hv->building = false;
}

int home_view_apply(struct home_view *hv, struct mnt_err *e)
{
    if (hv->mode == SANDBOX_HOME_READONLY)
        return 0;
    join(hv);
    if (hv->mnt_fd < 0) {
        snprintf(e->buf, e->len,
                 "the copy-on-write home cannot be built on this kernel or file "
                 "system (%s); profile key home = \"readonly\" (--home readonly) "
                 "avoids it",
                 hv->err[0] ? hv->err : "no reason given");
        return -1;
    }
    /* A home below the sandbox's own /tmp or /run is not shown there: its mount point is made
     * in that fresh file system. */
    if (mkdir_p(hv->home, 0755) < 0 && errno != EEXIST)
        return mnt_fail(e, "make the mount point", hv->home);
    if (move_mount(hv->mnt_fd, "", AT_FDCWD, hv->home, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        return mnt_fail(e, "attach the home's overlay on", hv->home);
    close(hv->mnt_fd);
    hv->mnt_fd = -1;
    for (size_t i = 0; i < hv->sub_paths.len; i++) {
        if (mnt_attach(e, hv->sub_fds[i], hv->sub_paths.items[i], false) < 0)
            return -1;
        close(hv->sub_fds[i]);
        hv->sub_fds[i] = -1;
    }
    return 0;
}

void home_view_free(struct home_view *hv)
{
    join(hv);
    if (hv->mnt_fd >= 0)
        close(hv->mnt_fd);
    if (hv->home_fd >= 0)
        close(hv->home_fd);
    if (hv->layer_fd >= 0)
        close(hv->layer_fd);
    for (size_t i = 0; i < hv->sub_paths.len; i++)
        if (hv->sub_fds[i] >= 0)
            close(hv->sub_fds[i]);
    free(hv->sub_fds);
    str_list_free(&hv->sub_paths);
    str_list_free(&hv->rel);
    str_list_free(&hv->keep);
    str_list_free(&hv->tool_dirs);
    memset(hv, 0, sizeof *hv);
    hv->home_fd = hv->layer_fd = hv->mnt_fd = -1;
}
