/* git_worktree.c — see git_worktree.h. Owns which parts of a git repository outside the
 * workspace a linked worktree may write, and the checks that the workspace's `.git` file leads
 * to that worktree's own admin folder. Uses mount_ops.c for the detached trees and binds, util.c for
 * paths and reading files. Must never: follow a symlink at the `.git` file or at `commondir`
 * (O_NOFOLLOW), grant anything when a check fails, or make a name appear at the top of the
 * host's common dir. */
#include "sandbox/git_worktree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

/* The common dir's top holds a few dozen names; more is not a repository git made. */
#define MAX_ENTRIES 512
/* `gitdir: PATH` and `commondir` hold one path. */
#define MAX_POINTER PATH_MAX

struct git_worktree_entry {
    char *name;
    mode_t type; /* S_IFDIR, S_IFREG or S_IFLNK */
    bool writable;
    bool placeholder; /* missing on the host: an empty mount point, so that no rename makes it */
    int fd;           /* the detached tree, or -1 (a symlink, a placeholder) */
    char *link;       /* a symlink's target */
};

/* What git writes in the common dir for commit, branch, stash, fetch, rebase (and git-lfs and
 * rerere): the object, ref and log stores. Everything else at the top stays read-only. */
static const char *const writable_names[] = {"objects",     "refs",     "logs",
                                             "packed-refs", "rr-cache", "lfs"};
/* Files git replaces by a rename at the top: when missing on the host, a mount point stands in
 * for them, so that the rename fails instead of landing in the tmpfs (a packed-refs written
 * there would be lost while the loose refs it packed are deleted from the host). */
static const char *const placeholder_names[] = {"packed-refs", "shallow"};

static bool in_list(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, list[i]) == 0)
            return true;
    return false;
}

/* The one path a pointer file (`.git`, `commondir`, `gitdir`) holds, with prefix removed,
 * made absolute against base and canonical. NULL with why set. */
static char *read_pointer(const char *file, const char *prefix, const char *base, char *why,
                          size_t whylen)
{
    char *buf = NULL, *abs = NULL, *r = NULL;
    size_t len = 0;
    int rc = read_file(file, O_NOFOLLOW, MAX_POINTER, &buf, &len);
    if (rc < 0) {
        snprintf(why, whylen, "%s cannot be read (%s)", file, strerror(-rc));
        goto out;
    }
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        buf[--len] = '\0';
    size_t plen = strlen(prefix);
    if (strlen(buf) != len || strncmp(buf, prefix, plen) != 0 || len == plen) {
        snprintf(why, whylen, "%s does not hold one %spath", file, prefix);
        goto out;
    }
    const char *p = buf + plen;
    abs = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", base, p);
    r = realpath(abs, NULL);
    if (!r)
        snprintf(why, whylen, "%s leads to %s (%s)", file, abs, strerror(errno));
out:
    free(buf);
    free(abs);
    return r;
}

/* path is a directory (or, with dir false, a regular file) the caller owns, not a symlink. */
static bool owned(const char *path, bool dir)
{
    struct stat st;
    if (lstat(path, &st) < 0 || st.st_uid != geteuid())
        return false;
    return dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

static char *parent_of(const char *path)
{
    char *p = xstrdup(path);
    char *slash = strrchr(p, '/');
    if (slash == p)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    return p;
}

/* Check that the `.git` file leads to this worktree's own admin folder C/worktrees/NAME of a
 * repository the caller owns; set gw->admin and gw->common. 0, or -1 with why. */
static int resolve(const struct sandbox_config *cfg, struct git_worktree *gw, char *why,
                   size_t whylen)
{
    char *admin = NULL, *common = NULL, *back = NULL, *up = NULL, *upup = NULL, *f = NULL;
    int r = -1;
    if (!(admin = read_pointer(gw->git_file, "gitdir: ", cfg->workspace, why, whylen)))
        goto out;
    up = parent_of(admin);
    upup = parent_of(up);
    const char *base = strrchr(up, '/');
    if (!owned(admin, true) || !base || strcmp(base, "/worktrees") != 0) {
        snprintf(why, whylen, "%s leads to %s, not a worktree's admin folder you own", gw->git_file,
                 admin);
        goto out;
    }
    f = xasprintf("%s/commondir", admin);
    if (!(common = read_pointer(f, "", admin, why, whylen)))
        goto out;
    if (strcmp(common, upup) != 0 || !owned(common, true)) {
        snprintf(why, whylen, "%s leads to %s, not the repository %s you own", f, common, upup);
        goto out;
    }
    static const char *const dirs[] = {"objects", "refs"};
    for (size_t i = 0; i < ARRAY_LEN(dirs) + 1; i++) {
        free(f);
        f = xasprintf("%s/%s", common, i < ARRAY_LEN(dirs) ? dirs[i] : "config");
        if (!owned(f, i < ARRAY_LEN(dirs))) {
            snprintf(why, whylen, "%s is not a git repository you own (%s)", common, f);
            goto out;
        }
    }
    /* The admin folder must be this worktree's: its gitdir file names this .git file. */
    free(f);
    f = xasprintf("%s/gitdir", admin);
    if (!(back = read_pointer(f, "", admin, why, whylen)))
        goto out;
    if (strcmp(back, gw->git_file) != 0) {
        snprintf(why, whylen, "%s belongs to the worktree at %s, not to this one", admin, back);
        goto out;
    }
    if (path_is_within(common, cfg->workspace) || path_is_within(cfg->workspace, common)) {
        snprintf(why, whylen, "its repository %s and the workspace contain one another", common);
        goto out;
    }
    for (size_t i = 0; i < cfg->hidden.len; i++) {
        if (path_is_within(common, cfg->hidden.items[i]) ||
            path_is_within(cfg->hidden.items[i], common)) {
            snprintf(why, whylen, "its repository %s is hidden (%s)", common, cfg->hidden.items[i]);
            goto out;
        }
    }
    gw->admin = admin;
    gw->common = common;
    admin = common = NULL;
    r = 0;
out:
    free(admin);
    free(common);
    free(back);
    free(up);
    free(upup);
    free(f);
    return r;
}

/* Is path writable in the view already (inside the workspace or a writable path)? */
static bool already_writable(const struct sandbox_config *cfg, const char *path)
{
    if (path_is_within(path, cfg->workspace))
        return true;
    for (size_t i = 0; i < cfg->writable.len; i++)
        if (path_is_within(path, cfg->writable.items[i]))
            return true;
    return false;
}

char *git_worktree_common_dir(const struct sandbox_config *cfg)
{
    if (cfg->workspace_readonly || !cfg->workspace)
        return NULL;
    struct git_worktree gw = {.admin_fd = -1};
    char why[PATH_MAX * 2 + 128];
    struct stat st;
    char *r = NULL;
    gw.git_file = xasprintf("%s/.git", cfg->workspace);
    if (lstat(gw.git_file, &st) == 0 && S_ISREG(st.st_mode) &&
        resolve(cfg, &gw, why, sizeof why) == 0) {
        r = gw.common;
        gw.common = NULL;
    }
    git_worktree_release(&gw);
    return r;
}

static void add_entry(struct git_worktree *gw, const char *name, mode_t type, int fd, char *link,
                      bool placeholder)
{
    struct git_worktree_entry *x = &gw->entries[gw->n_entries++];
    x->name = xstrdup(name);
    x->type = type;
    x->fd = fd;
    x->link = link;
    x->placeholder = placeholder;
    x->writable = !placeholder && in_list(name, writable_names, ARRAY_LEN(writable_names));
}

/* A detached recursive copy of the entry name of dir, which must still be of type (a symbolic
 * link swapped in since the readdir is refused, not followed: a command of a session whose
 * workspace is the main worktree may change the common dir while this runs). */
static int detached_entry(int dir, const char *name, mode_t type, const char *path,
                          struct mnt_err *e)
{
    struct stat st;
    int pfd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (pfd < 0)
        return mnt_fail(e, "open", path);
    if (fstat(pfd, &st) < 0 || (st.st_mode & S_IFMT) != type) {
        close(pfd);
        errno = ELOOP;
        return mnt_fail(e, "changed while read:", path);
    }
    int fd = open_tree(pfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
    if (fd < 0)
        mnt_fail(e, "open_tree", path);
    close(pfd);
    return fd;
}

/* Take detached trees of the admin folder and every entry at the common dir's top (before the host is made
 * read-only, so that the writable ones keep the host's read-write flags). */
static int take_tree(struct git_worktree *gw, struct mnt_err *e)
{
    int r = -1;
    char *p = NULL;
    DIR *d = opendir(gw->common);
    if (!d)
        return mnt_fail(e, "opendir", gw->common);
    gw->entries = xcalloc(MAX_ENTRIES + ARRAY_LEN(placeholder_names), sizeof *gw->entries);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (gw->n_entries == MAX_ENTRIES) {
            errno = E2BIG;
            mnt_fail(e, "git common dir", gw->common);
            goto out;
        }
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue; /* gone since readdir: nothing to show */
        free(p);
        p = xasprintf("%s/%s", gw->common, de->d_name);
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t n = readlink(p, target, sizeof target - 1);
            if (n < 0)
                continue;
            target[n] = '\0';
            add_entry(gw, de->d_name, S_IFLNK, -1, xstrdup(target), false);
        } else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
            int fd = detached_entry(dirfd(d), de->d_name, st.st_mode & S_IFMT, p, e);
            if (fd < 0)
                goto out;
            add_entry(gw, de->d_name, st.st_mode & S_IFMT, fd, NULL, false);
        }
    }
    for (size_t i = 0; i < ARRAY_LEN(placeholder_names); i++) {
        bool seen = false;
        for (size_t k = 0; k < gw->n_entries && !seen; k++)
            seen = strcmp(gw->entries[k].name, placeholder_names[i]) == 0;
        if (!seen)
            add_entry(gw, placeholder_names[i], S_IFREG, -1, NULL, true);
    }
    if ((gw->admin_fd = mnt_detached_tree(e, gw->admin)) < 0)
        goto out;
    r = 0;
out:
    free(p);
    closedir(d);
    return r;
}

int git_worktree_prepare(const struct sandbox_config *cfg, struct git_worktree *gw,
                         struct mnt_err *e)
{
    memset(gw, 0, sizeof *gw);
    gw->admin_fd = -1;
    if (cfg->workspace_readonly) /* nothing in it is written: no repository either */
        return 0;
    gw->workspace = xstrdup(cfg->workspace);
    char *dotgit = xasprintf("%s/.git", cfg->workspace);
    struct stat st;
    if (lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode)) {
        char *wt = xasprintf("%s/worktrees", dotgit);
        if (lstat(wt, &st) == 0 && S_ISDIR(st.st_mode))
            gw->main_worktrees = wt;
        else
            free(wt);
        free(dotgit);
        return 0;
    }
    if (lstat(dotgit, &st) < 0 || !S_ISREG(st.st_mode)) {
        free(dotgit);
        return 0;
    }
    gw->git_file = dotgit;
    char why[PATH_MAX * 2 + 128];
    if (resolve(cfg, gw, why, sizeof why) < 0) {
        LOG_W("git",
              "the workspace's git repository is not writable in this sandbox (git commit "
              "will fail): %s",
              why);
        return 0;
    }
    /* An empty config.worktree, held read-only below: else a command could make one, which the
     * host's git reads (core.fsmonitor, core.hooksPath) once extensions.worktreeConfig is on. */
    char *cw = xasprintf("%s/config.worktree", gw->admin);
    int fd = open(cw, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int saved = errno;
    free(cw);
    if (fd >= 0)
        close(fd);
    else if (saved != EEXIST) {
        errno = saved;
        mnt_fail(e, "create", "config.worktree");
        git_worktree_release(gw);
        return -1;
    }
    /* Inside a writable root the common dir is writable already (the caller asked for it):
     * only the admin folder's pointers are held read-only then. */
    if (already_writable(cfg, gw->common)) {
        gw->common_writable = true;
        return 0;
    }
    if (take_tree(gw, e) < 0) {
        git_worktree_release(gw);
        return -1;
    }
    return 0;
}

static int bind_readonly_in(struct mnt_err *e, const char *dir, const char *name)
{
    char *p = xasprintf("%s/%s", dir, name);
    struct stat st;
    int r = 0;
    if (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode))
        r = mnt_bind_readonly(e, p);
    free(p);
    return r;
}

/* The common dir: a tmpfs with each entry re-attached (or re-made, for a symlink). */
static int build_common(struct git_worktree *gw, struct mnt_err *e)
{
    struct stat st;
    int r = ensure_mount_point(gw->common, true); /* e.g. under /tmp, which is the sandbox's */
    if (r < 0) {
        errno = -r;
        return mnt_fail(e, "create mount point", gw->common);
    }
    if (mnt_mount(e, "cordon-git", gw->common, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
        return -1;
    for (size_t i = 0; i < gw->n_entries; i++) {
        struct git_worktree_entry *x = &gw->entries[i];
        char *p = xasprintf("%s/%s", gw->common, x->name);
        r = 0;
        if (x->type == S_IFLNK) {
            if (symlink(x->link, p) < 0)
                r = mnt_fail(e, "symlink", p);
        } else if ((r = ensure_mount_point(p, x->type == S_IFDIR)) < 0) {
            errno = -r;
            r = mnt_fail(e, "create mount point", p);
        } else if (x->placeholder) {
            r = mnt_bind_readonly(e, p);
        } else {
            r = mnt_attach(e, x->fd, p, false);
            if (r == 0) {
                close(x->fd);
                x->fd = -1;
            }
            if (r == 0 && !x->writable)
                r = mnt_setattr(e, p, true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0);
        }
        free(p);
        if (r < 0)
            return -1;
    }
    /* The admin folder, writable, over the read-only worktrees/. */
    if (stat(gw->admin, &st) < 0 || mnt_attach(e, gw->admin_fd, gw->admin, false) < 0)
        return mnt_fail(e, "attach", gw->admin);
    close(gw->admin_fd);
    gw->admin_fd = -1;
    return 0;
}

/* A linked worktree's folder in the workspace (that of the `.git` file its gitdir names):
 * bound onto itself, writable as it is, so that it cannot be renamed (`git worktree move`
 * would move it, then fail to rewrite the admin folder's gitdir, which is held: the host's
 * worktree list would lose it). Only a folder reached without a link, inside the workspace. */
static int own_folder(const char *gitfile, const char *workspace, struct mnt_err *e)
{
    char *dir = parent_of(gitfile);
    char *real = realpath(dir, NULL);
    int r = 0;
    if (real && strcmp(real, dir) == 0 && strcmp(dir, workspace) != 0 &&
        path_is_within(dir, workspace))
        r = mnt_mount(e, dir, dir, NULL, MS_BIND | MS_REC, NULL);
    free(real);
    free(dir);
    return r;
}

/* The admin folders in worktrees/ (but own, the workspace's) whose worktree lies outside the
 * workspace (by the path their gitdir holds, as git reads it) and is there: their HEAD and
 * index read-only,
 * so that the person's checkout there keeps its branch and staged changes whatever a command
 * does (`rm -rf` of the folder stops at them); the rest stays writable, for the HEAD.lock and
 * logs/HEAD that `git gc` writes in each. */
static int others_state_readonly(const char *worktrees, const char *workspace, const char *own,
                                 struct mnt_err *e)
{
    DIR *d = opendir(worktrees);
    if (!d)
        return mnt_fail(e, "opendir", worktrees);
    int r = 0;
    for (struct dirent *de; r == 0 && (de = readdir(d));) {
        if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *admin = xasprintf("%s/%s", worktrees, de->d_name);
        char *f = xasprintf("%s/gitdir", admin), *buf = NULL, *abs = NULL;
        size_t len = 0;
        if (read_file(f, O_NOFOLLOW, MAX_POINTER, &buf, &len) == 0 && strlen(buf) == len) {
            while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
                buf[--len] = '\0';
            abs = len ? path_absolute(buf, admin) : NULL;
        }
        bool inside = abs && path_is_within(abs, workspace);
        struct stat st;
        /* a worktree gone from the host (git calls its admin folder prunable), as git's own
         * test asks it: no checkout to keep, and `git worktree prune` removes the folder */
        bool gone = abs && stat(abs, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
        if ((own && strcmp(admin, own) == 0) || gone) {
            /* the workspace's own: writable, its folder the workspace */
        } else if (inside) {
            r = own_folder(abs, workspace, e);
        } else {
            r = bind_readonly_in(e, admin, "HEAD");
            if (r == 0)
                r = bind_readonly_in(e, admin, "index");
        }
        free(abs);
        free(buf);
        free(f);
        free(admin);
    }
    closedir(d);
    return r;
}

/* The main worktree's .git/worktrees: a mount point (so it cannot be renamed away) that stays
 * writable, and so does each admin folder in it, the other worktrees' included: `git worktree
 * add` makes one there, a commit in a linked worktree inside the workspace writes its index and
 * HEAD there, `git gc` expires every worktree's HEAD log, and `git worktree remove` or `prune`
 * delete one. What the host's git follows in them (commondir, gitdir, config.worktree) is held
 * read-only by the controller (readonly_in_workspace from its first walk, then its watcher:
 * controller/repo_watch.h), as are the `.git` files of the worktrees inside the workspace. */
static int main_worktrees_apply(const char *wt, const char *workspace, struct mnt_err *e)
{
    if (mnt_mount(e, wt, wt, NULL, MS_BIND | MS_REC, NULL) < 0)
        return -1;
    return others_state_readonly(wt, workspace, NULL, e);
}

/* A common dir writable as it is on the host (a writable path): its stores, packed-refs (git
 * rewrites it by a rename of packed-refs.lock at the top) and worktrees/ stay writable; every
 * other entry at its top that is there now (the main worktree's HEAD and index, info/,
 * modules/, config and hooks/, which the controller's guard of that tree holds too) read-only.
 * A name made at the top later is the guard's and the watcher's to judge (a planted commondir). */
static int common_state_readonly(const char *common, struct mnt_err *e)
{
    DIR *d = opendir(common);
    if (!d)
        return mnt_fail(e, "opendir", common);
    int r = 0;
    for (struct dirent *de; r == 0 && (de = readdir(d));) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            strcmp(de->d_name, "worktrees") == 0 ||
            in_list(de->d_name, writable_names, ARRAY_LEN(writable_names)))
            continue;
        r = bind_readonly_in(e, common, de->d_name); /* a symlink is left: git writes none */
    }
    closedir(d);
    return r;
}

int git_worktree_apply(struct git_worktree *gw, struct mnt_err *e)
{
    /* The .git file, whether or not it got a grant: a command must not repoint it. */
    if (gw->git_file && mnt_bind_readonly(e, gw->git_file) < 0)
        return -1;
    if (gw->main_worktrees && main_worktrees_apply(gw->main_worktrees, gw->workspace, e) < 0)
        return -1;
    if (!gw->admin)
        return 0;
    if (gw->admin_fd >= 0 && build_common(gw, e) < 0)
        return -1;
    if (gw->common_writable) {
        char *wts = xasprintf("%s/worktrees", gw->common);
        int r = common_state_readonly(gw->common, e);
        if (r == 0)
            r = others_state_readonly(wts, gw->workspace, gw->admin, e);
        free(wts);
        if (r < 0)
            return -1;
    }
    static const char *const pointers[] = {"commondir", "gitdir", "config.worktree"};
    for (size_t i = 0; i < ARRAY_LEN(pointers); i++)
        if (bind_readonly_in(e, gw->admin, pointers[i]) < 0)
            return -1;
    return 0;
}

void git_worktree_release(struct git_worktree *gw)
{
    for (size_t i = 0; i < gw->n_entries; i++) {
        if (gw->entries[i].fd >= 0)
            close(gw->entries[i].fd);
        free(gw->entries[i].name);
        free(gw->entries[i].link);
    }
    free(gw->entries);
    if (gw->admin_fd >= 0)
        close(gw->admin_fd);
    free(gw->git_file);
    free(gw->admin);
    free(gw->common);
    free(gw->main_worktrees);
    free(gw->workspace);
    memset(gw, 0, sizeof *gw);
    gw->admin_fd = -1;
}
