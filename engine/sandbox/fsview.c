/* fsview.c — see fsview.h. The sequence:
 *   1. make every mount private, so nothing propagates back to the host;
 *   2. take detached trees (open_tree clones) of what must stay writable or be re-attached later: workspace,
 *      writable paths, host device nodes, sockets re-bound into /run, the granted agent sockets
 *      (grants.h); note the hidden paths'
 *      parents with mounts below them (hide.h rebuilds those instead of overlaying them);
 *   3. one recursive mount_setattr: the whole host tree read-only and nosuid;
 *   4. fresh tmpfs on /tmp and /run, the new /dev and /proc (in a container that masks parts of
 *      /proc, the container's, read-only: devfs.h; said in one line);
 *   5. overlays with whiteouts for hidden paths, then the covers of /etc (resolv.conf,
 *      ssh_config, the CA bundle) and the copy-on-write home (home_view.h): the covers first
 *      where none can lie in the home (covers_before_home), so that the home's builder goes on
 *      meanwhile;
 *      the folders hidden by rule (hidden_except) come on the finished view, after step 6;
 *   6. attach the detached writable trees (outermost first), then read-only binds inside them
 *      (the workspace's .git and readonly_in_workspace, cordon's own directories).
 * The detached trees are taken before step 3, so they keep the host's flags (read-write) and do not
 * depend on which paths steps 4-5 cover. Step 1 and the detached trees that need no configuration
 * (device nodes, cordon's binary, the list of mounts) are fsview_prepare's, which init runs
 * before the configuration arrives (with the home's builder thread, which waits for it); the
 * home's detached trees and the start of its overlay's build (home_view_prepare) are
 * fsview_configured's, which init runs as soon as it has it. */
#include "sandbox/fsview.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/devfs.h"
#include "sandbox/git_worktree.h"
#include "sandbox/grants.h"
#include "sandbox/hide.h"
#include "sandbox/home_view.h"
#include "base/log.h"
#include "sandbox/mount_ops.h"
#include "sandbox/netns.h"
#include "sandbox/review_view.h"

struct detached_tree {
    char *path;
    int fd;
};

/* The file /etc/resolv.conf is, or the one its link names, in target: 1, 0 when there is none
 * (resolvers fall back to 127.0.0.1, where nothing answers), -1 when the link cannot be read. */
static int resolv_conf_target(char *target, size_t len)
{
    snprintf(target, len, "/etc/resolv.conf");
    struct stat st;
    if (lstat(target, &st) < 0)
        return 0;
    if (S_ISLNK(st.st_mode)) {
        char link[400];
        ssize_t n = readlink(target, link, sizeof link - 1);
        if (n <= 0)
            return -1;
        link[n] = '\0';
        if (link[0] == '/')
            snprintf(target, len, "%s", link);
        else
            snprintf(target, len, "/etc/%s", link);
    }
    return 1;
}

/* The sandbox's /etc/resolv.conf names its own resolver (dns_stub.c, served by the controller
 * on NETNS_DNS_ADDR) and nothing of the host's: no other server is reachable, and the host's
 * search domains would send the command's short names out as queries. /etc/hosts stays the
 * host's. A resolv.conf that is a link into /run (systemd-resolved's) is written there, in the
 * fresh /run; any other is covered by a read-only bind of the generated file. */
static int resolv_conf_build(struct mnt_err *e)
{
    static const char body[] =
        "# cordon: the sandbox's resolver (names some network rule could allow)\n"
        "nameserver " NETNS_DNS_ADDR "\noptions edns0\n";
    static const char generated[] = "/run/.cordon-resolv.conf";
    char target[512];
    struct stat st;
    int found = resolv_conf_target(target, sizeof target);
    if (found <= 0)
        return found < 0 ? mnt_fail(e, "readlink", "/etc/resolv.conf") : 0;
    const char *write_to = strncmp(target, "/run/", 5) == 0 ? target : generated;
    for (char *slash = strchr((char *)write_to + 5, '/'); slash && write_to == target;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        (void)mkdir(target, 0755);
        *slash = '/';
    }
    FILE *f = fopen(write_to, "we");
    if (!f || fputs(body, f) < 0 || fclose(f) != 0)
        return mnt_fail(e, "writing", write_to);
    if (write_to == target)
        return 0;
    if (stat(target, &st) < 0 || !S_ISREG(st.st_mode))
        return 0; /* a link to nowhere: nothing to cover */
    if (mnt_mount(e, generated, target, NULL, MS_BIND, NULL) < 0)
        return -1;
    return mnt_setattr(e, target, false, MOUNT_ATTR_RDONLY, 0);
}

/* Whether the controller bound a grant's file at path (grants.h: "KIND TARGET\tSOURCE"). */
static bool grant_file_bound(const struct sandbox_config *cfg, const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < cfg->grant_binds.len; i++)
        if (strncmp(cfg->grant_binds.items[i] + 1, path, n) == 0 &&
            cfg->grant_binds.items[i][n + 1] == '\t')
            return true;
    return false;
}

/* Cover target, when it is a regular file (a link's target), read-only with the bound file. */
static int cover_file(const char *bound, const char *target, struct mnt_err *e)
{
    struct stat st;
    if (stat(target, &st) < 0 || !S_ISREG(st.st_mode))
        return 0;
    if (mnt_mount(e, bound, target, NULL, MS_BIND, NULL) < 0)
        return -1;
    return mnt_setattr(e, target, false, MOUNT_ATTR_RDONLY, 0);
}

/* With TLS termination the controller bound its CA bundle at SANDBOX_CA_BUNDLE (a grant's
 * file): it covers the system's bundle read-only, after the overlays (one on /etc would cover
 * it), so that a client reading the system's path trusts the sandbox's CA too. Java's store,
 * when the controller made one, covers each of the host's Java stores that exists the same
 * way (every JDK's lib/security/cacerts that links there with them). With no bundle on the
 * host the variables name SANDBOX_CA_BUNDLE itself. */
static int ca_bundle_cover(const struct sandbox_config *cfg, struct mnt_err *e)
{
    if (grant_file_bound(cfg, SANDBOX_CA_BUNDLE) &&
        cover_file(SANDBOX_CA_BUNDLE, SANDBOX_SYSTEM_CA_BUNDLE, e) < 0)
        return -1;
    if (!grant_file_bound(cfg, SANDBOX_JAVA_CACERTS))
        return 0;
    static const char *const stores[] = {SANDBOX_JAVA_STORE_DEBIAN, SANDBOX_JAVA_STORE_RHEL};
    for (size_t i = 0; i < ARRAY_LEN(stores); i++)
        if (cover_file(SANDBOX_JAVA_CACERTS, stores[i], e) < 0)
            return -1;
    return 0;
}

#define SSH_CONFIG_PATH "/etc/ssh/ssh_config"

/* path (absolute) with its "." and ".." taken out by name, in out. */
static void lexical_path(const char *path, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        size_t w = strcspn(p, "/");
        if (w == 0 || (w == 1 && p[0] == '.')) {
            /* nothing */
        } else if (w == 2 && p[0] == '.' && p[1] == '.') {
            while (n > 0 && out[n - 1] != '/')
                n--;
            if (n > 0)
                n--; /* the slash before the name taken out */
        } else if (n + 1 + w < len) {
            out[n++] = '/';
            memcpy(out + n, p, w);
            n += w;
        }
        out[n] = '\0';
        p += w;
    }
    if (n == 0)
        snprintf(out, len, "/");
}

/* Is there a link anywhere on path, the file itself included? Then where it lies is not known
 * by its name. */
static bool linked_on_the_way(const char *path)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = buf + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        struct stat st;
        bool link = lstat(buf, &st) == 0 && S_ISLNK(st.st_mode);
        *s = c;
        if (link)
            return true;
        if (c == '\0')
            return false;
    }
}

/* Whether etc_covers may come before the home's overlay is attached: the builder then goes on
 * while init makes them (init waited for it 0.6-0.85 ms here). Only where no cover can lie in
 * the home (they are under /etc and the sandbox's fresh /run, reached through no link), nor the
 * home in a folder a cover writes to: elsewhere the overlay is attached first, as it was. */
static bool covers_before_home(const struct sandbox_config *cfg)
{
    if (cfg->home_mode == SANDBOX_HOME_READONLY || !cfg->home)
        return true; /* no overlay: home_view_apply attaches nothing */
    static const char *const written[] = {"/etc", "/run", "/var/run"};
    for (size_t i = 0; i < ARRAY_LEN(written); i++)
        if (path_is_within(cfg->home, written[i]))
            return false;
    if (linked_on_the_way(SSH_CONFIG_PATH) || linked_on_the_way(SANDBOX_SYSTEM_CA_BUNDLE))
        return false;
    char target[512], where[512];
    int found = resolv_conf_target(target, sizeof target);
    if (found <= 0)
        return found == 0;
    if (linked_on_the_way(target))
        return false;
    lexical_path(target, where, sizeof where);
    return path_is_within(where, "/etc") || path_is_within(where, "/run") ||
           path_is_within(where, "/var/run");
}

/* The sandbox's /etc/ssh/ssh_config is the host's, word for word, followed by one block that
 * sends every ssh (plain ssh, git, rsync, scp) through `cordon nc`, which the proxy judges by the
 * tcp:// rules: without it ssh would connect directly, and the network namespace has no route.
 * ssh keeps the first value it reads, so a ProxyCommand or ProxyJump of the user's ~/.ssh/config
 * or the host's own settings still wins; `Match host` sees the HostName an alias set. The
 * sandbox's own loopback is left direct (a server the command runs there). Copied rather than
 * included: an Include of /etc/ssh/ssh_config would name this very file. Read after the hidden
 * paths are covered, so a hidden file is never copied in. */
#define SSH_CONFIG_MAX (1 << 20)
static int ssh_config_build(struct mnt_err *e)
{
    static const char target[] = SSH_CONFIG_PATH;
    static const char generated[] = "/run/.cordon-ssh_config";
    static const char block[] =
        "\n# cordon: every ssh but to the sandbox's own loopback goes through the sandbox proxy,\n"
        "# which judges it by the tcp:// rules (--network-allow tcp://HOST:22)\n"
        "Match host *,!127.0.0.1,!localhost,!::1\n"
        "    ProxyCommand " FSVIEW_CORDON_EXE " nc %h %p\n";
    struct stat st;
    if (stat(target, &st) < 0 || !S_ISREG(st.st_mode))
        return 0; /* no ssh client configured here (or its file is hidden): nothing to cover */
    if (st.st_size > SSH_CONFIG_MAX) {
        snprintf(e->buf, e->len, "sandbox set-up: %s is larger than %d bytes: refused", target,
                 SSH_CONFIG_MAX);
        return -1;
    }
    int r = -1;
    char *body = NULL;
    FILE *in = NULL, *out = NULL;
    size_t n = 0;
    if (!(in = fopen(target, "re"))) {
        mnt_fail(e, "reading", target);
        goto out;
    }
    body = xcalloc((size_t)st.st_size + 1, 1);
    n = fread(body, 1, (size_t)st.st_size, in);
    if (ferror(in)) {
        mnt_fail(e, "reading", target);
        goto out;
    }
    if (!(out = fopen(generated, "we")) ||
        fputs("# cordon: the host's /etc/ssh/ssh_config\n", out) < 0 ||
        fwrite(body, 1, n, out) != n || (n && body[n - 1] != '\n' && fputc('\n', out) < 0) ||
        fputs(block, out) < 0) {
        mnt_fail(e, "writing", generated);
        goto out;
    }
    int closed = fclose(out);
    out = NULL;
    if (closed != 0) {
        mnt_fail(e, "writing", generated);
        goto out;
    }
    if (mnt_mount(e, generated, target, NULL, MS_BIND, NULL) < 0 ||
        mnt_setattr(e, target, false, MOUNT_ATTR_RDONLY, 0) < 0)
        goto out;
    r = 0;
out:
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    free(body);
    return r;
}

/* The covers of /etc (after the hidden paths' overlays: one on /etc would cover them). */
static int etc_covers(const struct sandbox_config *cfg, int self_fd, struct mnt_err *e)
{
    if (cfg->net_unrestricted)
        return 0;
    if (resolv_conf_build(e) < 0 || (self_fd >= 0 && ssh_config_build(e) < 0) ||
        ca_bundle_cover(cfg, e) < 0)
        return -1;
    return 0;
}

static int by_length(const void *a, const void *b)
{
    const struct detached_tree *x = a, *y = b;
    size_t lx = strlen(x->path), ly = strlen(y->path);
    return lx < ly ? -1 : lx > ly;
}

/* Keep `.git` a mount point (so it cannot be renamed away and replaced by one with other
 * hooks) and make each readonly_in_workspace path that exists read-only. That list holds, past
 * the profile's entries, what the controller's walk of the workspace's repositories found
 * (git_guard.h): every repository's config, config.worktree, commondir, gitdir, hooks (or the
 * target of a hooks link), worktrees/, submodules' git dirs, `.git` files and core.hooksPath
 * folders. A symbolic link is not bound (a mount cannot sit on one; the after-check compares
 * it instead). */
static int protect_in_workspace(const struct sandbox_config *cfg, struct mnt_err *e)
{
    struct stat st;
    char *git = xasprintf("%s/.git", cfg->workspace);
    int r = 0;
    /* Review mode (docs/review.md): the workspace's own repository is part of the pending
     * changes, which the host sees only when applied; it is not held (the controller dropped its
     * .git entries from the list too: guarded_trees.h). */
    bool in_review = cfg->review && cfg->review_layer;
    if (!cfg->workspace_readonly && !in_review && lstat(git, &st) == 0 && S_ISDIR(st.st_mode)) {
        r = mnt_mount(e, git, git, NULL, MS_BIND | MS_REC, NULL);
        /* A repository without hooks/ is left without: a run creates nothing in the workspace
         * (git runs no hook when the folder is missing, and makes none). A hooks/ a command
         * creates is the repository guard's (git_guard.c recorded it missing: what appears
         * there is undone and said after the command). */
    }
    free(git);
    for (size_t i = 0; r == 0 && i < cfg->readonly_in_workspace.len; i++) {
        char *p = xasprintf("%s/%s", cfg->workspace, cfg->readonly_in_workspace.items[i]);
        if (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode))
            r = mnt_bind_readonly(e, p);
        free(p);
    }
    return r;
}

/* A detached recursive copy of the tree at path (canonical), reached with no symbolic link on
 * the way: the controller resolved the workspace and writable paths, and a link planted since
 * (by a command of a session still running) must not make its target writable. The fd opened
 * is the one bound, so nothing can be swapped between this check and the detached tree. */
static int detached_tree_no_links(struct mnt_err *e, const char *path)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int pfd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (pfd < 0 && errno == ELOOP) {
        snprintf(e->buf, e->len,
                 "sandbox set-up: %s: a symbolic link appeared on the way since "
                 "the path was resolved: refused",
                 path);
        return -1;
    }
    if (pfd < 0)
        return mnt_fail(e, "open", path);
    int fd = open_tree(pfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
    if (fd < 0)
        mnt_fail(e, "open_tree", path);
    close(pfd);
    return fd;
}

/* The innermost writable area (workspace, writable path) that holds path, or NULL. */
static const char *writable_root_of(const struct sandbox_config *cfg, const char *path)
{
    const char *best = NULL;
    if (!cfg->workspace_readonly && path_is_within(path, cfg->workspace))
        best = cfg->workspace;
    for (size_t i = 0; i < cfg->writable.len; i++)
        if (path_is_within(path, cfg->writable.items[i]) &&
            (!best || strlen(cfg->writable.items[i]) > strlen(best)))
            best = cfg->writable.items[i];
    return best;
}

/* cordon's own directories inside a writable area (cfg->protected_paths, outermost first):
 * each bound read-only, and every directory between it and that area bound onto itself first.
 * A mount point cannot be renamed or removed (EBUSY), so a command cannot move ~/.config away
 * and create a ~/.config/cordon of its own in its place; the area itself is a mount already. */
static int protect_own_paths(const struct sandbox_config *cfg, struct mnt_err *e)
{
    struct str_list done = {0};
    size_t n = cfg->protected_paths.len;
    struct detached_tree *order = xcalloc(n + 1, sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i].path = cfg->protected_paths.items[i];
    qsort(order, n, sizeof *order, by_length);
    int r = 0;
    for (size_t i = 0; r == 0 && i < n; i++) {
        const char *p = order[i].path;
        const char *root = writable_root_of(cfg, p);
        if (!root || strcmp(root, p) == 0)
            continue; /* read-only already (or refused by the controller: never the area itself) */
        bool inside_done = false;
        for (size_t j = 0; j < done.len && !inside_done; j++)
            inside_done = path_is_within(p, done.items[j]);
        if (inside_done)
            continue; /* inside a read-only one: nothing there can be renamed or written */
        size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
        char *a = xstrdup(p);
        for (char *s = strchr(a + rl + 1, '/'); r == 0 && s; s = strchr(s + 1, '/')) {
            *s = '\0';
            r = mnt_mount(e, a, a, NULL, MS_BIND | MS_REC, NULL);
            *s = '/';
        }
        free(a);
        if (r == 0 && (r = mnt_bind_readonly(e, p)) == 0)
            str_list_push(&done, p);
    }
    str_list_free(&done);
    free(order);
    return r;
}

#define SELF_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

/* A detached, read-only bind of the running binary, opened by its path in this namespace
 * (/proc/self/exe itself refers to the host's mount, which open_tree refuses). -1 when it cannot
 * be had (e.g. the binary was replaced since it started): then `cordon nc` is not inside. */
static int detached_self(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return -1;
    path[n] = '\0';
    int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (fd < 0)
        return -1;
    /* Without mount_setattr (-ENOSYS), fsview_build sets them once it is attached. */
    int r = mnt_setattr_fd(fd, SELF_ATTRS);
    if (r < 0 && r != -ENOSYS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The container's /proc or /sys stands in for the sandbox's own (procfs_build): the hide plan
 * left the paths below them alone, as below a fresh file system, so one that exists there now
 * would be visible. Stop instead. */
static int shared_hides_nothing(const struct sandbox_config *cfg, struct mnt_err *e)
{
    struct stat st;
    for (size_t i = 0; i < cfg->hidden.len; i++) {
        const char *h = cfg->hidden.items[i];
        bool shared = (procfs_is_shared() && path_is_within(h, "/proc")) ||
                      (!cfg->net_unrestricted && sysfs_is_shared() && path_is_within(h, "/sys"));
        if (shared && lstat(h, &st) == 0) {
            snprintf(e->buf, e->len,
                     "sandbox set-up: %s is hidden, but this container's %s is shared with the "
                     "sandbox (its own is refused) and cannot hide it",
                     h, path_is_within(h, "/proc") ? "/proc" : "/sys");
            return -1;
        }
    }
    return 0;
}

/* The one line a sandbox in such a container starts with: what it sees instead, what that costs,
 * and how to give it its own. */
static void say_shared(bool proc, bool sys)
{
    LOG_W("fsview",
          "this container masks parts of %s, so the kernel refuses the sandbox its own: it sees "
          "the container's, read-only%s%s; run the container with --security-opt unmask=ALL "
          "(Podman) or --security-opt systempaths=unconfined (Docker) for the sandbox's own",
          proc && sys ? "/proc and /sys"
          : proc      ? "/proc"
                      : "/sys",
          proc ? ", and Landlock keeps other processes' memory, environment, files and root from "
                 "it (their pids and command lines show; pids there are the container's, so ps "
                 "fails)"
               : "",
          sys ? "; /sys/class/net lists the container's interfaces" : "");
}

/* The copy-on-write home, as fsview_configured began it: the hidden paths it left to hide.c, and
 * what its start said. */
struct fsview_home {
    struct home_view hv;
    struct str_list hidden;
    int r;
    char err[512];
};

static void home_release(struct fsview_home *h)
{
    if (!h)
        return;
    home_view_free(&h->hv);
    str_list_free(&h->hidden);
    free(h);
}

/* What stays writable: the workspace, then the writable paths, in the configuration's order. */
static void visible_of(const struct sandbox_config *cfg, struct str_list *visible)
{
    str_list_push(visible, cfg->workspace);
    for (size_t i = 0; i < cfg->writable.len; i++)
        str_list_push(visible, cfg->writable.items[i]);
}

void fsview_configured(struct fsview_early *early, const struct sandbox_config *cfg)
{
    if (early->home)
        return;
    struct fsview_home *h = xcalloc(1, sizeof *h);
    struct mnt_err e = {h->err, sizeof h->err};
    struct str_list visible = {0};
    visible_of(cfg, &visible);
    /* The home's hidden names become whiteouts of the home's own overlay; hide.c gets the rest. */
    h->r = home_view_prepare(&h->hv, cfg, &visible, &early->mounts, &h->hidden, &e);
    str_list_free(&visible);
    early->home = h;
}

static void early_release(struct fsview_early *early)
{
    home_release(early->home);
    early->home = NULL;
    for (int i = 0; i < DEVFS_N_NODES; i++) {
        if (early->dev.fds[i] >= 0)
            close(early->dev.fds[i]);
        early->dev.fds[i] = -1;
    }
    if (early->self_fd >= 0)
        close(early->self_fd);
    early->self_fd = -1;
    str_list_free(&early->mounts);
    for (size_t i = 0; i < early->n_trees; i++)
        if (early->trees[i] >= 0)
            close(early->trees[i]);
    free(early->trees);
    early->trees = NULL;
    early->n_trees = 0;
}

int fsview_prepare(struct fsview_early *early, char *err, size_t errlen)
{
    struct mnt_err e = {err, errlen};
    memset(early, 0, sizeof *early);
    for (int i = 0; i < DEVFS_N_NODES; i++)
        early->dev.fds[i] = -1;
    /* 1. nothing propagates back to the host; 2. the detached trees that need no configuration */
    if (mnt_mount(&e, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        devfs_take_nodes(&early->dev, &e) < 0 || hide_read_mount_points(&early->mounts, &e) < 0) {
        early_release(early);
        return -1;
    }
    /* This very binary (init has not exec'd), for `cordon nc` inside. */
    early->self_fd = detached_self();
    home_view_start_early(); /* the home's builder, ready for the configuration */
    return 0;
}

int fsview_build(const struct sandbox_config *cfg, struct fsview_early *early, char *err,
                 size_t errlen)
{
    struct mnt_err e = {err, errlen};
    struct detached_tree *caps = xcalloc(cfg->writable.len + 1, sizeof *caps);
    size_t n_caps = 0;
    struct devfs_nodes dev = early->dev;
    int *run_fds = xcalloc(cfg->run_binds.len + 1, sizeof(int));
    int self_fd = early->self_fd;
    size_t n_run = 0;
    struct hide_plan plan;
    struct fsview_home *home = NULL;
    struct str_list visible = {0};
    struct git_worktree gw = {.admin_fd = -1};
    struct grants_trees grants = {0};
    struct review_view rv = {.layer_fd = -1, .lock_fd = -1};
    int r = -1;

    visible_of(cfg, &visible);
    /* Step 4's file systems (/var/run: a tmpfs of its own, or a link to /run). */
    struct str_list fresh = {0};
    static const char *const fresh_roots[] = {"/tmp", "/run", "/var/run", "/dev", "/proc"};
    for (size_t i = 0; i < ARRAY_LEN(fresh_roots); i++)
        str_list_push(&fresh, fresh_roots[i]);
    if (!cfg->net_unrestricted)
        str_list_push(&fresh, "/sys");
    /* The home's overlay is under way since the configuration came (unless init did not say). */
    fsview_configured(early, cfg);
    home = early->home;
    early->home = NULL;
    hide_plan_build(&home->hidden, &visible, &fresh, &plan);
    str_list_free(&fresh);
    if (home->r < 0) {
        snprintf(err, errlen, "%s", home->err);
        goto out;
    }

    /* 2. detached trees (the rest are fsview_prepare's). A root caller's writable trees may come
     * idmapped from the controller instead (visible is the workspace, then the writable paths,
     * in the order it made them): those are attached as they are. */
    for (size_t i = 0; i < visible.len; i++) {
        if (i < early->n_trees && early->trees[i] >= 0) {
            caps[n_caps].fd = early->trees[i];
            early->trees[i] = -1;
        } else if ((caps[n_caps].fd = detached_tree_no_links(&e, visible.items[i])) < 0) {
            goto out;
        }
        caps[n_caps++].path = visible.items[i];
    }
    if (cfg->net_unrestricted && self_fd >= 0) { /* `cordon nc` is for the proxy only */
        close(self_fd);
        self_fd = -1;
    } else if (!cfg->net_unrestricted && self_fd < 0) {
        LOG_W("fsview",
              "cordon's own binary cannot be bound into the sandbox: no `cordon nc` inside");
    }
    for (; n_run < cfg->run_binds.len; n_run++)
        if ((run_fds[n_run] = mnt_detached_tree(&e, cfg->run_binds.items[n_run])) < 0)
            goto out;
    if (grants_take_trees(cfg, &grants, &e) < 0 || review_view_take(cfg, &rv, &e) < 0)
        goto out;
    if (hide_take_submounts(&plan, &early->mounts, &e) < 0 ||
        git_worktree_prepare(cfg, &gw, &e) < 0)
        goto out;

    /* 3. the host read-only */
    if (mnt_setattr(&e, "/", true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0) < 0)
        goto out;

    /* 4. fresh file systems */
    /* Sized (0, which tmpfs takes as no limit, gets the default): unsized, each sandbox's /tmp
     * could take half the host's RAM. */
    char tmp_opts[48];
    snprintf(tmp_opts, sizeof tmp_opts, "mode=1777,size=%llu",
             cfg->tmp_size ? cfg->tmp_size : SANDBOX_TMP_SIZE_DEFAULT);
    if (mnt_mount(&e, "cordon-tmp", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, tmp_opts) < 0 ||
        mnt_mount(&e, "cordon-run", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
        goto out;
    struct stat st;
    if (lstat("/var/run", &st) == 0 && S_ISDIR(st.st_mode) &&
        mnt_mount(&e, "cordon-run", "/var/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
        goto out;
    for (size_t i = 0; i < n_run; i++) {
        if (mnt_attach(&e, run_fds[i], cfg->run_binds.items[i], true) < 0)
            goto out;
    }
    if (self_fd >= 0 &&
        (mnt_attach(&e, self_fd, FSVIEW_CORDON_EXE, true) < 0 ||
         (mnt_setattr_lacking() && mnt_setattr(&e, FSVIEW_CORDON_EXE, false, SELF_ATTRS, 0) < 0)))
        goto out;
    if (grants_apply(&grants, &e) < 0)
        goto out;
    if (devfs_build(&dev, cfg->shm_size ? cfg->shm_size : SANDBOX_SHM_SIZE_DEFAULT, &e) < 0 ||
        procfs_build(&e) < 0)
        goto out;
    if (!cfg->net_unrestricted && early->enter_network &&
        early->enter_network(early->enter_ctx, err, errlen) < 0)
        goto out;
    if (!cfg->net_unrestricted && sysfs_build(&e) < 0)
        goto out;
    if (procfs_is_shared() || (!cfg->net_unrestricted && sysfs_is_shared())) {
        if (shared_hides_nothing(cfg, &e) < 0)
            goto out;
        say_shared(procfs_is_shared(), !cfg->net_unrestricted && sysfs_is_shared());
    }

    /* 5. hidden paths */
    if (hide_apply(&plan, &e) < 0)
        goto out;
    home_view_close_later(plan.layers_fd); /* off the path, with the home's own detached trees */
    plan.layers_fd = -1;
    bool covers_first = covers_before_home(cfg);
    if ((covers_first && etc_covers(cfg, self_fd, &e) < 0) || home_view_apply(&home->hv, &e) < 0 ||
        (!covers_first && etc_covers(cfg, self_fd, &e) < 0))
        goto out;

    /* 6. writable trees, outermost first so a nested one is not covered by its parent */
    qsort(caps, n_caps, sizeof *caps, by_length);
    for (size_t i = 0; i < n_caps; i++) {
        /* Review mode: the workspace is an overlay over its tree, the writes in the layer. */
        if (rv.layer_fd >= 0 && strcmp(caps[i].path, cfg->workspace) == 0) {
            int ov = review_view_mount(cfg, &rv, caps[i].fd, &e);
            if (ov < 0)
                goto out;
            close(caps[i].fd);
            caps[i].fd = ov;
        }
        if (mnt_attach(&e, caps[i].fd, caps[i].path, true) < 0)
            goto out;
        close(caps[i].fd);
        caps[i].fd = -1;
        if (cfg->workspace_readonly && strcmp(caps[i].path, cfg->workspace) == 0 &&
            mnt_setattr(&e, caps[i].path, true, MOUNT_ATTR_RDONLY, 0) < 0)
            goto out;
    }
    /* Folders hidden by rule, on the finished view (the home's overlay included), then the
     * covers inside writable areas (and of a rule's folder init may not list). */
    if (protect_in_workspace(cfg, &e) < 0 || protect_own_paths(cfg, &e) < 0 ||
        git_worktree_apply(&gw, &e) < 0 ||
        hide_apply_except(&cfg->hidden_except, &visible, cfg->home,
                          cfg->home_mode != SANDBOX_HOME_READONLY, &plan, &e) < 0 ||
        hide_apply_in_writable(&plan, &e) < 0)
        goto out;
    r = 0;
out:
    /* Whatever devfs_build and the attach did not consume. */
    early->dev = dev;
    early->self_fd = self_fd;
    early_release(early);
    for (size_t i = 0; i < n_caps; i++)
        if (caps[i].fd >= 0)
            close(caps[i].fd);
    for (size_t i = 0; i < n_run; i++)
        if (run_fds[i] >= 0)
            close(run_fds[i]);
    free(caps);
    free(run_fds);
    str_list_free(&visible);
    home_release(home);
    hide_plan_free(&plan);
    git_worktree_release(&gw);
    grants_release(&grants);
    review_view_release(&rv);
    return r;
}
