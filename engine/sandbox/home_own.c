/* home_own.c — see home_own.h. Costs: the home's top is listed once (the overlay's merged
 * listing, what the sandbox would see), and each entry to protect is one clone of the host's
 * entry and one move_mount (25-35 us each here, more when other sandboxes mount meanwhile): no
 * walk below the top but along the way to a kept path. Done by the home's builder in its
 * staging namespace, off init's path, on the overlay before init attaches it: init moves one
 * tree, whatever the number of entries. */
#include "sandbox/home_own.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "sandbox/overlay_stage.h"
#include "sandbox/sandbox-t.h"

/* The overlay's name in the builder's staging (overlay_stage.h). */
#define OWN_STAGE "own"

/* Bounds: a folder on the way to a kept path is at most this deep below the home, and a stale
 * tree in the layer is removed down to this depth (what is deeper stays, covered). */
#define OWN_MAX_DEPTH 64

bool home_own_applies(const struct sandbox_config *cfg)
{
    if (cfg->home_mode == SANDBOX_HOME_READONLY || !cfg->home || strcmp(cfg->home, "/") == 0)
        return false;
    if (cfg->workspace && !cfg->workspace_readonly && path_is_within(cfg->home, cfg->workspace))
        return false;
    for (size_t i = 0; i < cfg->writable.len; i++)
        if (path_is_within(cfg->home, cfg->writable.items[i]))
            return false;
    return true;
}

bool home_own_is_tools(const char *name, const struct str_list *tool_dirs)
{
    return name[0] == '.' || str_list_contains(tool_dirs, name);
}

void home_own_keep(const char *home, const struct str_list *visible, struct str_list *out)
{
    size_t n = strlen(home);
    for (size_t i = 0; i < visible->len; i++) {
        const char *v = visible->items[i];
        if (strcmp(v, home) != 0 && path_is_within(v, home))
            str_list_push(out, v + n + (strcmp(home, "/") == 0 ? 0 : 1));
    }
}

/* What rel (relative to the home) is to the kept paths: 0 nothing, 1 one of them, 2 a folder on
 * the way to one. */
static int kept_as(const char *rel, const struct str_list *keep)
{
    size_t n = strlen(rel);
    int r = 0;
    for (size_t i = 0; i < keep->len; i++) {
        const char *k = keep->items[i];
        if (strcmp(k, rel) == 0)
            return 1;
        if (strncmp(k, rel, n) == 0 && k[n] == '/')
            r = 2;
    }
    return r;
}

/* Does a hidden name (rel: relative to the home) lie in rel, or is it rel? */
static bool holds_hidden(const char *rel, const struct str_list *hidden)
{
    for (size_t i = 0; i < hidden->len; i++)
        if (path_is_within(hidden->items[i], rel))
            return true;
    return false;
}

/* The names of directory fd but "." and "..", with their types (DT_*), or -errno. */
static int list_dir(int fd, struct str_list *names, struct str_list *types)
{
    int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    if (!d) {
        int r = -errno;
        if (dfd >= 0)
            close(dfd);
        return r;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        unsigned char t = de->d_type;
        struct stat st;
        if (t == DT_UNKNOWN && fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
        char tc[2] = {(char)t, '\0'};
        str_list_push(names, de->d_name);
        str_list_push(types, tc);
    }
    closedir(d);
    return 0;
}

/* Remove name in dirfd, a tree removed depth-first to depth levels; no link followed. */
static void remove_tree(int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
        return;
    if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
        return;
    int fd = depth > 0 ? openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0)
        return;
    struct str_list names = {0}, types = {0};
    if (list_dir(fd, &names, &types) == 0)
        for (size_t i = 0; i < names.len; i++)
            remove_tree(fd, names.items[i], depth - 1);
    str_list_free(&names);
    str_list_free(&types);
    close(fd);
    (void)unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* One folder of the layer's upper: at the top (prefix "") dot-entries and tool folders stay;
 * below, only the way on. */
static void clean_level(int fd, const char *prefix, int depth, const struct str_list *keep,
                        const struct str_list *tool_dirs)
{
    struct str_list names = {0}, types = {0};
    if (depth > OWN_MAX_DEPTH || list_dir(fd, &names, &types) < 0)
        goto out;
    for (size_t i = 0; i < names.len; i++) {
        const char *name = names.items[i];
        if (!prefix[0] && home_own_is_tools(name, tool_dirs))
            continue;
        char *rel = prefix[0] ? xasprintf("%s/%s", prefix, name) : xstrdup(name);
        int k = kept_as(rel, keep);
        if (k == 2) {
            int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                clean_level(sub, rel, depth + 1, keep, tool_dirs);
                close(sub);
            }
        } else if (k == 0) {
            LOG_D("home",
                  "removing %s from the home layer: not the home's dot-entry or tool "
                  "folder",
                  rel);
            remove_tree(fd, name, OWN_MAX_DEPTH);
        }
        free(rel);
    }
out:
    str_list_free(&names);
    str_list_free(&types);
}

void home_own_clean_layer(int layer_fd, const struct str_list *keep,
                          const struct str_list *tool_dirs)
{
    int fd = openat(layer_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    clean_level(fd, "", 0, keep, tool_dirs);
    close(fd);
}

/* Bind name of the folder at path (the overlay's; host_fd the host's same folder or -1)
 * read-only: the host's entry when it has one of the same kind and no hidden name lies in it,
 * else the overlay's own. */
static int protect(const char *path, int dir_fd, int host_fd, const char *name, const char *rel,
                   const struct str_list *hidden, struct mnt_err *e)
{
    struct stat mine, theirs;
    if (fstatat(dir_fd, name, &mine, AT_SYMLINK_NOFOLLOW) < 0)
        return 0; /* gone since the listing */
    if (S_ISLNK(mine.st_mode))
        return 0; /* a link: what it leads to is judged where it lies */
    char *target = xasprintf("%s/%s", path, name);
    int r = 0, tree = -1;
    if (host_fd >= 0 && !holds_hidden(rel, hidden) &&
        fstatat(host_fd, name, &theirs, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISDIR(theirs.st_mode) == S_ISDIR(mine.st_mode) && !S_ISLNK(theirs.st_mode))
        tree = open_tree(host_fd, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
    if (tree >= 0) {
        /* a clone keeps its mount's flags: the host's tree is read-only and nosuid here already
         * (run_home_own_spec's rows write to such entries and get EROFS) */
        if (move_mount(tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
            r = mnt_fail(e, "bind the host's", target);
        close(tree);
    } else {
        r = mnt_bind_readonly(e, target);
    }
    free(target);
    return r;
}

static int bind_level(const char *path, int host_fd, const char *prefix, int depth,
                      const struct str_list *keep, const struct str_list *tool_dirs,
                      const struct str_list *hidden, struct mnt_err *e)
{
    struct str_list names = {0}, types = {0};
    int r = 0;
    int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        r = mnt_fail(e, "open", path);
        goto out;
    }
    if (depth > OWN_MAX_DEPTH) {
        snprintf(e->buf, e->len,
                 "sandbox set-up: %s is more than %d levels below the home: refused", path,
                 OWN_MAX_DEPTH);
        r = -1;
        goto out;
    }
    int lr = list_dir(fd, &names, &types);
    if (lr < 0) {
        errno = -lr;
        r = mnt_fail(e, "list", path);
        goto out;
    }
    for (size_t i = 0; r == 0 && i < names.len; i++) {
        const char *name = names.items[i];
        if (!prefix[0] && home_own_is_tools(name, tool_dirs))
            continue;
        char *rel = prefix[0] ? xasprintf("%s/%s", prefix, name) : xstrdup(name);
        int k = kept_as(rel, keep);
        if (k == 2 && types.items[i][0] == (char)DT_DIR) {
            char *sub = xasprintf("%s/%s", path, name);
            int host_sub =
                host_fd < 0 ? -1
                            : openat(host_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            r = bind_level(sub, host_sub, rel, depth + 1, keep, tool_dirs, hidden, e);
            if (host_sub >= 0)
                close(host_sub);
            free(sub);
        } else if (k == 0) {
            r = protect(path, fd, host_fd, name, rel, hidden, e);
        }
        free(rel);
    }
out:
    if (fd >= 0)
        close(fd);
    str_list_free(&names);
    str_list_free(&types);
    return r;
}

int home_own_stage(int tmpfs_fd, int overlay_fd, const char *lower, const struct str_list *keep,
                   const struct str_list *tool_dirs, const struct str_list *rel, struct mnt_err *e)
{
    int host = -1, tree = -1;
    /* The host's home as staged is read-write (taken detached before the host's tree turned
     * read-only): read-only first, so every clone of an entry is (a clone keeps its flags; the
     * overlay holds a private clone of its own, unchanged). */
    if (overlay_stage_attach(tmpfs_fd, overlay_fd, OWN_STAGE, e) < 0 ||
        mnt_setattr(e, lower, false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) <
            0)
        goto out;
    if ((host = openat(tmpfs_fd, lower, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
        mnt_fail(e, "open the staged", "home");
        goto out;
    }
    if (bind_level(OWN_STAGE, host, "", 0, keep, tool_dirs, rel, e) < 0)
        goto out;
    tree = open_tree(tmpfs_fd, OWN_STAGE, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (tree < 0)
        mnt_fail(e, "clone the staged", "home");
out:
    if (host >= 0)
        close(host);
    return tree;
}
