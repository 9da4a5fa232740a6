/* controller_setup.c — see controller_setup.h. Also owns what keeps the host's trust out of a
 * sandbox's reach before it is built: a workspace that is the home refused unless asked for,
 * cordon's own directories listed for the view to bind read-only or hide. Creates only those
 * directories (0700, when they are missing inside a writable area); never changes a file. */
#include "controller/controller_setup.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/filter.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sandbox/config_wire.h"
#include "sandbox/git_worktree.h"
#include "sandbox/grants.h"
#include "sandbox/home_view.h"
#include "policy/layer_dirs.h"
#include "sandbox/review_layer.h"
#include "base/cordon_dirs.h"
#include "base/fdpass.h"
#include "sandbox/init_wire.h"
#include "sandbox/init.h"
#include "sandbox/loopback_guard.h"
#include "sandbox/mount_ops.h"
#include "sandbox/root_only.h"
#include "sandbox/sandbox_config.h"
#include "policy/lua_host.h"
#include "proxy/proxy.h"
#include "proxy/port_relay.h"
#include "base/session_socket.h"
#include "base/kernel_lacks.h"
#include "base/log.h"
#include "base/util.h"
#include "base/said_once.h"
#include "controller/loopback_rules.h"
#include "controller/sandbox_start.h"

extern char **environ;

/* cordon's own directories, as the host finds them later: a command must never change what
 * a later run trusts (the user's policy and profiles, the trust records, getenv-allow, the
 * cache of resolved profiles), the audit log, or where a session's socket lives. Both the XDG
 * place and the HOME place are listed when they differ, since the next run may be started with
 * either. The configuration stays readable (it is the person's policy, no secret, and commands
 * may well read it); the trust records, the state (the audit log names destinations), the
 * cache and the socket folders are hidden. */
#define OWN_DIRS_MAX 10
struct own_dir {
    char *path;
    const char *what;
    bool hide;
};

static size_t own_dirs(struct own_dir *out, size_t max)
{
    const char *xr = cdir_runtime();
    char *cands[OWN_DIRS_MAX];
    const char *whats[OWN_DIRS_MAX];
    bool hides[OWN_DIRS_MAX];
    size_t n = 0;
    /* each place from the XDG variable and from HOME (cordon_dirs.h: relative ones count
     * nowhere), NULL ones skipped */
#define OWN(p, w, hd) (cands[n] = (p), whats[n] = (w), hides[n] = (hd), n += cands[n] != NULL)
    OWN(cdir_xdg_path(CDIR_CONFIG, NULL), "configuration", false);
    OWN(cdir_xdg_path(CDIR_CONFIG, "trusted"), "trust records", true);
    OWN(cdir_home_path(CDIR_CONFIG, NULL), "configuration", false);
    OWN(cdir_home_path(CDIR_CONFIG, "trusted"), "trust records", true);
    OWN(cdir_xdg_path(CDIR_STATE, NULL), "state", true);
    OWN(cdir_home_path(CDIR_STATE, NULL), "state", true);
    char dir[512];
    if (xr && csock_dir_for(xr, getuid(), dir, sizeof dir) == 0)
        OWN(xstrdup(dir), "session sockets", true);
    if (csock_dir_for(NULL, getuid(), dir, sizeof dir) == 0)
        OWN(xstrdup(dir), "session sockets", true);
    /* the resolved profiles a later run serves without evaluating the policy again */
    OWN(cdir_xdg_path(CDIR_CACHE, NULL), "cache", true);
    OWN(cdir_home_path(CDIR_CACHE, NULL), "cache", true);
#undef OWN
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        bool dup = m >= max;
        for (size_t j = 0; j < m && !dup; j++)
            dup = strcmp(out[j].path, cands[i]) == 0;
        if (dup) {
            free(cands[i]);
            continue;
        }
        out[m++] = (struct own_dir){cands[i], whats[i], hides[i]};
    }
    return m;
}

/* path made canonical as far as it exists: its deepest existing ancestor resolved, the missing
 * rest appended. NULL (errno set) when that ancestor cannot be resolved. */
static char *canonical_prefix(const char *path)
{
    char *p = xstrdup(path), *out = NULL;
    for (;;) {
        char *r = realpath(p, NULL);
        if (r) {
            const char *rest = path + strlen(p);
            out = strcmp(r, "/") == 0 && *rest ? xstrdup(rest) : xasprintf("%s%s", r, rest);
            free(r);
            break;
        }
        char *slash = strrchr(p, '/');
        if (errno == ENOENT && slash == p && path[0] == '/') {
            out = xstrdup(path); /* nothing below / exists: "/" is the ancestor (HOME=/) */
            break;
        }
        if (errno != ENOENT || !slash || slash == p)
            break;
        *slash = '\0';
    }
    free(p);
    return out;
}

/* Is path inside what the sandbox can write (the workspace unless read-only, a writable path)? */
static bool writable_from_inside(const struct sandbox_config *cfg, const char *path)
{
    if (!cfg->workspace_readonly && path_is_within(path, cfg->workspace))
        return true;
    for (size_t i = 0; i < cfg->writable.len; i++)
        if (path_is_within(path, cfg->writable.items[i]))
            return true;
    return false;
}

/* Keep cordon's own directories out of every sandbox's reach, wherever the workspace is. One
 * inside a writable area is created now when missing (0700: a command could otherwise create
 * it, and the host would later trust what it put there), bound read-only by the view with its
 * ancestors pinned (cfg->protected_paths), and hidden when it holds records or sockets. A
 * workspace or writable path inside one of them is refused. 0, or -1 with one line in err. */
static int protect_own_dirs(struct sandbox_config *cfg, char *err, size_t errlen)
{
    struct own_dir dirs[OWN_DIRS_MAX];
    size_t n = own_dirs(dirs, OWN_DIRS_MAX);
    struct str_list areas = {0};
    if (!cfg->workspace_readonly)
        str_list_push(&areas, cfg->workspace);
    for (size_t i = 0; i < cfg->writable.len; i++)
        str_list_push(&areas, cfg->writable.items[i]);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        /* The host finds the directory by this very path later: a link on the way that a
         * command can replace (inside a writable area) would let it put another one there. */
        char *link = sandbox_config_link_within(dirs[i].path, &areas);
        if (link) {
            snprintf(err, errlen,
                     "cordon's %s directory %s passes the symbolic link %s inside "
                     "the writable %s, which a command could replace: refused",
                     dirs[i].what, dirs[i].path, link,
                     path_is_within(link, cfg->workspace) ? "workspace" : "path");
            free(link);
            rc = -1;
            break;
        }
        char *c = canonical_prefix(dirs[i].path);
        if (!c) {
            snprintf(err, errlen, "cordon's %s directory %s: %s", dirs[i].what, dirs[i].path,
                     strerror(errno));
            rc = -1;
            break;
        }
        const char *inner = path_is_within(cfg->workspace, c) ? cfg->workspace : NULL;
        for (size_t j = 0; !inner && j < cfg->writable.len; j++)
            if (path_is_within(cfg->writable.items[j], c))
                inner = cfg->writable.items[j];
        if (inner) {
            snprintf(err, errlen,
                     "%s %s is inside cordon's own %s directory %s: refused (a "
                     "command could change what later runs trust)",
                     inner == cfg->workspace ? "workspace" : "writable path", inner, dirs[i].what,
                     c);
            rc = -1;
        } else if (writable_from_inside(cfg, c)) {
            struct stat st;
            int m = 0;
            if (lstat(c, &st) < 0 && (m = mkdir_parents(c, 0700)) == 0 && mkdir(c, 0700) < 0 &&
                errno != EEXIST)
                m = -errno;
            char *r = m == 0 ? realpath(c, NULL) : NULL;
            if (!r || strcmp(r, c) != 0 || lstat(c, &st) < 0 || !S_ISDIR(st.st_mode)) {
                snprintf(err, errlen,
                         "cordon's %s directory %s is inside the writable %s and "
                         "cannot be made a directory of its own: %s",
                         dirs[i].what, c, path_is_within(c, cfg->workspace) ? "workspace" : "path",
                         m < 0 ? strerror(-m) : "not a plain directory");
                rc = -1;
            } else if (!str_list_contains(&cfg->protected_paths, c)) {
                str_list_push(&cfg->protected_paths, c);
            }
            free(r);
        }
        if (rc == 0 && dirs[i].hide && !str_list_contains(&cfg->hidden, c))
            str_list_push(&cfg->hidden, c);
        free(c);
    }
    for (size_t i = 0; i < n; i++)
        free(dirs[i].path);
    str_list_free(&areas);
    return rc;
}

/* A workspace that is the caller's home or an ancestor of it (/, /home) makes every dotfile
 * writable (shell start-up files, git's and ssh's configuration): refused unless asked for.
 * The home is $HOME (canonical), the one cordon reads everything else from. 0, or -1 with one line in err. */
static int check_home_workspace(const struct sandbox_config *cfg, char *err, size_t errlen)
{
    if (cfg->allow_home_workspace || cfg->workspace_readonly)
        return 0;
    const char *home = cdir_home();
    {
        char *h = home ? realpath(home, NULL) : NULL;
        bool bad = h && path_is_within(h, cfg->workspace);
        if (bad)
            snprintf(err, errlen,
                     "workspace %s is %s%s: refused (every dotfile there would be "
                     "writable); pass --allow-home-workspace (profile key allow_home_workspace) "
                     "to use it",
                     cfg->workspace,
                     strcmp(h, cfg->workspace) == 0 ? "your home directory"
                                                    : "an ancestor of your home ",
                     strcmp(h, cfg->workspace) == 0 ? "" : h);
        free(h);
        if (bad)
            return -1;
    }
    return 0;
}

/* A folder of the home layer, made when missing (parents too when parents): a directory of the
 * caller's, mode 0700 whatever the umask or an older cordon left (the layer holds copies of home
 * files; set only when it differs, a chmod being a journalled change). 0, or -errno; -EPERM with
 * *owner when it is another user's: a layer is its owner's alone, since what a root caller's
 * sandbox writes into another user's layer (HOME kept by sudo -E) is root's, which that user's
 * own sandboxes could then neither clear nor use. */
static int layer_folder(const char *path, bool parents, uid_t *owner)
{
    int m = 0;
    if (parents)
        m = mkdir_p(path, 0700);
    else if (mkdir(path, 0700) < 0 && errno != EEXIST)
        m = -errno;
    struct stat st;
    if (m == 0 && lstat(path, &st) < 0)
        m = -errno;
    if (m == 0 && !S_ISDIR(st.st_mode))
        m = -ENOTDIR;
    if (m == 0 && st.st_uid != getuid()) {
        *owner = st.st_uid;
        m = -EPERM;
    }
    if (m == 0 && (st.st_mode & 07777) != 0700 && chmod(path, 0700) < 0)
        m = -errno;
    return m;
}

/* Linux before 5.11 mounts no overlayfs in a user namespace (nor knows its option userxattr),
 * and nothing else gives a copy-on-write home there: the home is read-only instead, the stricter
 * view (a write fails, as anywhere else on the host), and one line says so, once on this machine
 * (said_once.h), naming the kernel that has it and the key that says read-only on purpose. */
static bool home_overlay_missing(void)
{
    if (!kernel_lacks_forced("overlay_userns") && !kernel_older_than(5, 11))
        return false;
    static const char line[] =
        "this kernel mounts no overlayfs in a user namespace (Linux 5.11 and later do): the home "
        "is read-only in the sandbox, not copy-on-write; profile key home = \"readonly\" "
        "(--home readonly) asks for that and avoids this line";
    if (said_once_first("kernel.home-overlay", line))
        LOG_W("home", "%s (said once on this machine: cordon doctor lists it)", line);
    else
        LOG_D("home", "%s", line);
    return true;
}

/* The home the sandbox shows (profile key home) and, for "overlay", the workspace's layer folder,
 * made here on the host side: only the caller can enter it (0700 up from the homes folder). The
 * homes folder itself is hidden inside every sandbox: no command reads another workspace's layer,
 * or its own from underneath the overlay. */
static int prepare_home(struct sandbox_config *cfg, char *err, size_t errlen)
{
    char *root = home_view_layers_root();
    if (root && !str_list_contains(&cfg->hidden, root))
        str_list_push(&cfg->hidden, root);
    int r = 0;
    char *layer = NULL;
    if (cfg->home_mode != SANDBOX_HOME_READONLY && home_overlay_missing())
        cfg->home_mode = SANDBOX_HOME_READONLY;
    /* A read-only home is named too: a shifted root caller's home is bound in as the caller's
     * own (sandbox/root_writes.h) whatever the mode, /root being a home like any other. */
    char real[PATH_MAX];
    const char *home = cdir_home();
    struct stat st;
    if (!home || !realpath(home, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
        if (cfg->home_mode == SANDBOX_HOME_READONLY)
            goto out; /* no home to show: the host's tree as it is */
        snprintf(err, errlen,
                 "the home directory (HOME=%s) is not a directory, so no copy-on-write "
                 "home can be built over it; profile key home = \"readonly\" (--home readonly) "
                 "avoids it",
                 home ? home : "");
        r = -1;
        goto out;
    }
    /* A home inside the workspace or a writable path is writable as that path already. */
    bool writable = path_is_within(real, cfg->workspace);
    for (size_t i = 0; i < cfg->writable.len; i++)
        writable |= path_is_within(real, cfg->writable.items[i]);
    if (writable) {
        cfg->home_mode = SANDBOX_HOME_READONLY;
        goto out;
    }
    cfg->home = xstrdup(real);
    /* Hidden paths were expanded against HOME as given; the overlay is mounted on the canonical
     * home, so a HOME reached through a symlink must not leave its hidden names outside it. */
    char *given = path_absolute(home, "/");
    if (strcmp(given, real) != 0) {
        for (size_t i = 0; i < cfg->hidden.len; i++) {
            char *h = cfg->hidden.items[i];
            if (path_is_within(h, given)) {
                cfg->hidden.items[i] = xasprintf("%s%s", real, h + strlen(given));
                free(h);
            }
        }
    }
    free(given);
    if (cfg->home_mode != SANDBOX_HOME_OVERLAY)
        goto out;
    layer = home_view_layer_dir(cfg->workspace);
    char *upper = layer ? xasprintf("%s/upper", layer) : NULL,
         *work = layer ? xasprintf("%s/work", layer) : NULL;
    uid_t owner = 0;
    const char *at = NULL;
    const char *const folders[] = {root, layer, work};
    int m = layer ? 0 : -ENOENT;
    for (size_t i = 0; m == 0 && i < ARRAY_LEN(folders); i++)
        m = layer_folder((at = folders[i]), i == 0, &owner);
    /* The upper folder takes the home's own mode at the mount; overlayfs judges the rest. */
    if (m == 0 && mkdir((at = upper), 0700) < 0 && errno != EEXIST)
        m = -errno;
    if (m == -EPERM)
        snprintf(err, errlen,
                 "the home layer folder %s belongs to uid %u, not to this caller (uid %u): a "
                 "home layer is its owner's alone (run as that user, remove it, or set profile "
                 "key home = \"tmpfs\" or \"readonly\": --home tmpfs, --home readonly)",
                 at, (unsigned)owner, (unsigned)getuid());
    else if (m < 0)
        snprintf(err, errlen,
                 "cannot make the home layer %s: %s; profile key home = \"tmpfs\" or "
                 "\"readonly\" (--home tmpfs, --home readonly) avoids it",
                 at ? at : "(no absolute XDG_STATE_HOME or HOME)", strerror(-m));
    free(upper);
    free(work);
    if (m < 0) {
        r = -1;
        goto out;
    }
    cfg->home_layer = layer;
    layer = NULL;
out:
    free(layer);
    free(root);
    return r;
}

/* Review mode (profile key workspace_review, --review): the workspace's review layer, made here on
 * the host side (0700 up from the reviews folder, hidden from every sandbox like the rest of the
 * state). The pending paths an earlier sandbox left unrecorded (a session killed with SIGKILL
 * among them) are recorded before this start is marked (review_layer.h). A kernel that mounts no
 * overlayfs in a user namespace refuses review mode with one line: there is no fallback that
 * keeps the host's workspace unchanged. */
static int prepare_review(struct sandbox_config *cfg, const char *fork, char *err, size_t errlen)
{
    char *root = review_layer_root();
    if (root && !str_list_contains(&cfg->hidden, root))
        str_list_push(&cfg->hidden, root);
    free(root);
    if (fork && (!cfg->review || cfg->workspace_readonly)) {
        snprintf(err, errlen,
                 "--review-fork %.60s needs review mode of a writable workspace (--review)", fork);
        return -1;
    }
    if (fork && !csock_name_valid(fork)) {
        snprintf(err, errlen, "--review-fork: invalid fork name '%.60s' (a session's name)", fork);
        return -1;
    }
    if (!cfg->review || cfg->workspace_readonly) /* a read-only workspace has nothing pending */
        return 0;
    if (kernel_lacks_forced("overlay_userns") || kernel_older_than(5, 11)) {
        struct utsname u;
        snprintf(err, errlen,
                 "review mode needs overlayfs in a user namespace, which Linux 5.11 and later "
                 "have (this kernel is %s); run without --review (profile key workspace_review = "
                 "false)",
                 uname(&u) == 0 ? u.release : "older");
        return -1;
    }
    char *layer = NULL;
    /* A fork (cordon fork) has a layer of its own under the workspace's (review_layer.h). */
    if ((fork ? review_fork_make(cfg->workspace, fork, &layer, err, errlen)
              : review_layer_make(cfg->workspace, &layer, err, errlen)) < 0)
        return -1;
    struct review_list pending;
    char why[256];
    if (review_layer_list(layer, cfg->workspace, &pending, why, sizeof why) == 0) {
        review_layer_record(layer, cfg->workspace, &pending);
        review_list_free(&pending);
    }
    review_layer_drop_old(layer);
    review_layer_mark_start(layer);
    cfg->review_layer = layer;
    return 0;
}

/* Profile key root_only, for a caller of uid 0 only: a uid-0 command reads every file whose
 * owner bit lets root read it, capabilities or not, so what only root may read under the scan
 * roots joins the hidden paths. Judged anew on every start (a file made root-only since the
 * last run is hidden at the next); only the listings of folders unchanged since the last run come
 * from $XDG_STATE_HOME/cordon/root-walk (root_only_cache; hidden from every sandbox with the rest
 * of the state, protect_own_dirs). Never looked at: the workspace, the writable paths and the
 * home (nor anything in them): the caller's own, whose credentials the hidden list covers as any
 * home's; the ways down to them are never hidden.
 * The scan costs as much as the rest of the set-up put together (a stat of every entry under
 * /etc, /var, /root), so it is started ahead, on a thread, while the profile is resolved, with
 * the coding profile's scan roots and the workspace the flags name; root_only_finish uses it
 * only when the resolved profile would have walked the very same way, and scans again if not. */

/* The scan's inputs as the walk takes them: absolute scan roots and visible names, the keep
 * paths, the home among them (new strings, freed by root_only_inputs_free). */
static void root_only_inputs(const struct sandbox_root_only *from, const char *workspace,
                             const char *cwd, const struct str_list *writable,
                             struct sandbox_root_only *ro, struct str_list *keep)
{
    *ro = (struct sandbox_root_only){.hide = true, .depth = from->depth};
    for (size_t i = 0; i < from->scan.len; i++)
        str_list_push_owned(&ro->scan, path_absolute(from->scan.items[i], "/"));
    for (size_t i = 0; i < from->visible.len; i++)
        str_list_push_owned(&ro->visible, path_absolute(from->visible.items[i], "/"));
    *keep = (struct str_list){0};
    str_list_push(keep, workspace);
    str_list_push(keep, cwd);
    for (size_t i = 0; i < writable->len; i++)
        str_list_push(keep, writable->items[i]);
    /* The home is the caller's own, as a user's home is theirs: never walked. A home of "/"
     * (HOME=/ in some containers) is no home: it would spare the whole host. */
    const char *h = cdir_home();
    char *home = h ? realpath(h, NULL) : NULL;
    if (home && strcmp(home, "/") != 0)
        str_list_push_owned(keep, home);
    else
        free(home);
}

static void root_only_inputs_free(struct sandbox_root_only *ro, struct str_list *keep)
{
    str_list_free(&ro->scan);
    str_list_free(&ro->visible);
    str_list_free(keep);
}

/* The file keeping the walk's listings between runs, its folder made (0700); NULL when there is
 * no state directory or it cannot be made: every folder is then listed. */
static char *root_only_cache_path(void)
{
    char *dir = cdir_path(CDIR_STATE, NULL);
    if (!dir || mkdir_p(dir, 0700) < 0) {
        free(dir);
        return NULL;
    }
    char *path = xasprintf("%s/root-walk", dir);
    free(dir);
    return path;
}

/* root_only's walk of ro started on its thread, with the listings kept between runs. */
static struct root_only_ahead *start_walk(const struct sandbox_root_only *ro,
                                          const struct str_list *keep)
{
    char *cache = root_only_cache_path();
    struct root_only_ahead *a =
        root_only_ahead(ro, keep, ROOT_ONLY_MAX_ENTRIES, root_only_cache_open(cache));
    free(cache);
    return a;
}

/* The scan ahead, for a caller of uid 0 whose sandbox is not to be shifted, before the profile
 * is known: NULL otherwise. */
static struct root_only_ahead *root_only_start(const struct sandbox_start *want)
{
    if (getuid() != 0 || want->expect_root_shift)
        return NULL;
    const struct run_flags *flags = want->flags;
    const char *cwd = want->cwd;
    struct sandbox_root_only guess, ro;
    struct str_list keep, writable = {0};
    root_only_guess(&guess);
    char *ws = flags->workspace ? realpath(flags->workspace, NULL) : NULL;
    for (size_t i = 0; i < flags->writable.len; i++)
        str_list_push_owned(&writable, path_absolute(flags->writable.items[i], cwd));
    root_only_inputs(&guess, ws ? ws : cwd, cwd, &writable, &ro, &keep);
    struct root_only_ahead *a = ro.scan.len > 0 ? start_walk(&ro, &keep) : NULL;
    root_only_inputs_free(&ro, &keep);
    str_list_free(&guess.scan);
    str_list_free(&guess.visible);
    str_list_free(&writable);
    free(ws);
    return a;
}

/* 0, or -1 with one line in err. Takes over ahead. shifted: the root caller's maps are to be
 * shifted (the start-up's expect_root_shift). */
static int hide_root_only(struct sandbox_config *cfg, struct root_only_ahead *ahead, bool shifted,
                          char *err, size_t errlen)
{
    /* Shifted, every file of root's on the host's tree but the caller's own (the home, the
     * writable set, the visible names) is unmapped in the sandbox: the kernel refuses what only
     * root may read, wherever it is (sandbox/root_writes.h), so there is nothing to walk. */
    if (!cfg->root_only.hide || getuid() != 0 || (shifted && cfg->root_writes)) {
        root_only_cancel(ahead);
        return 0;
    }
    struct sandbox_root_only ro;
    struct str_list keep;
    root_only_inputs(&cfg->root_only, cfg->workspace, cfg->cwd, &cfg->writable, &ro, &keep);
    int n = 0;
    if (ro.scan.len == 0) {
        root_only_cancel(ahead);
    } else {
        if (!ahead) /* none was started: the same walk, with the kept listings */
            ahead = start_walk(&ro, &keep);
        bool used;
        n = root_only_finish(ahead, &ro, &keep, ROOT_ONLY_MAX_ENTRIES, &cfg->hidden, err, errlen,
                             &used);
        LOG_D("root_only", "%s",
              used ? "the scan done ahead is used"
                   : "scanned now (the profile's inputs differ from the guess)");
    }
    root_only_inputs_free(&ro, &keep);
    return n < 0 ? -1 : 0;
}

int controller_root_only_scan(struct sandbox_config *cfg, char *err, size_t errlen)
{
    return hide_root_only(cfg, NULL, false, err, errlen);
}

/* The workspace is a linked worktree: its repository's common dir (outside the workspace)
 * joins the writable paths, with a guard of its own (guarded_trees.h), as git needs it to work
 * there as in a main worktree; sandbox/git_worktree.h holds what the host's git follows. */
static void add_linked_common(struct sandbox_config *cfg)
{
    char *common = git_worktree_common_dir(cfg);
    for (size_t i = 0; common && i < cfg->writable.len; i++)
        if (path_is_within(common, cfg->writable.items[i])) {
            free(common);
            common = NULL;
        }
    if (common)
        str_list_push_owned(&cfg->writable, common);
}

int controller_resolve(const struct sandbox_start *want, struct sandbox_config *cfg, char *err,
                       size_t errlen)
{
    const struct run_flags *flags = want->flags;
    const char *cwd = want->cwd;
    /* First, so that the walk overlaps the resolution of the profile (joined on every way out). */
    struct root_only_ahead *ahead = root_only_start(want);
    struct lh_options lopt;
    layer_dirs_default(&lopt);
    /* The project layer: the workspace's .cordon, only when the user trusts it (else one line
     * says why and the lower layers apply). --policy FILE is the user's own choice: no check. */
    layer_dirs_add_project(&lopt, flags->workspace ? flags->workspace : cwd);
    lopt.extra_policy = flags->policy_file;
    /* The network rules are compiled after init has the configuration (controller_compile_network). */
    enum lh_outcome o;
    if (want->profile_cache)
        o = lh_resolve_sandbox_config_cached(&lopt, flags, cwd, getenv("HOME"), environ, cfg, err,
                                             errlen);
    else if (lh_open(&lopt, err, errlen) < 0)
        goto fail;
    else
        o = lh_resolve_sandbox_config(flags, cwd, getenv("HOME"), environ, cfg, err, errlen);
    if (o != LH_OK)
        goto fail;
    if (flags->json != FLAG_UNSET)
        cfg->json = flags->json == FLAG_TRUE;
    add_linked_common(cfg);
    if (check_home_workspace(cfg, err, errlen) < 0 || protect_own_dirs(cfg, err, errlen) < 0 ||
        prepare_home(cfg, err, errlen) < 0 ||
        prepare_review(cfg, flags->review_fork, err, errlen) < 0)
        goto fail;
    int r = hide_root_only(cfg, ahead, want->expect_root_shift, err, errlen);
    ahead = NULL;
    if (r < 0 || grants_resolve(cfg, environ, getenv("HOME"), err, errlen) < 0)
        return -1;
    loopback_rules_say(&flags->network_allow, cfg);
    /* Fail closed: a sandbox that cannot keep its commands off the loopback is not started. */
    if (loopback_guard_wanted(cfg) && loopback_guard_check(err, errlen) < 0)
        return -1;
    return 0;
fail:
    root_only_cancel(ahead);
    return -1;
}

bool controller_pids_by_rlimit(bool host_root_inside)
{
    if (host_root_inside)
        return false; /* the kernel holds the host's root to no RLIMIT_NPROC */
    struct utsname u;
    unsigned major = 0, minor = 0;
    return uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
           (major > 5 || (major == 5 && minor >= 14));
}

/* limits.pids as RLIMIT_NPROC, which the kernel counts per real uid (per uid within the
 * sandbox's user namespace since Linux 5.14, all of the user's processes on the host before) and
 * does not enforce for the host's root. A profile's own rlimits.nproc wins. */
static void nproc_fallback(struct sandbox_config *cfg)
{
    for (size_t i = 0; i < cfg->n_rlimits; i++)
        if (cfg->rlimits[i].resource == RLIMIT_NPROC)
            return;
    if (cfg->n_rlimits < SANDBOX_MAX_RLIMITS)
        cfg->rlimits[cfg->n_rlimits++] = (struct sandbox_rlimit){
            .resource = RLIMIT_NPROC, .soft = cfg->pids_max, .hard = cfg->pids_max};
}

static void *cgroup_thread(void *arg)
{
    struct controller_cgroup *cc = arg;
    cc->made = cgroup_create(&cc->cg, getpid(), CGROUP_PIDS, cc->why, sizeof cc->why);
    cc->moved = cc->cg;
    (void)sem_post(&cc->created);
    cc->entered = cgroup_enter(&cc->moved, cc->init_pid);
    return NULL;
}

void controller_cgroup_begin(struct controller_cgroup *cc, pid_t init_pid)
{
    memset(cc, 0, sizeof *cc);
    cc->init_pid = init_pid;
    /* No thread to be had: controller_cgroup() and controller_cgroup_enter() do it all. */
    cc->started = sem_init(&cc->created, 0, 0) == 0 &&
                  pthread_create(&cc->thread, NULL, cgroup_thread, cc) == 0;
}

/* Wait for the thread's cgroup_create (cc->cg is ours from then on). */
static void wait_created(struct controller_cgroup *cc)
{
    while (cc->started && sem_wait(&cc->created) < 0 && errno == EINTR)
        ;
}

/* Wait for the thread to end; the directories it moved init into are marked entered. */
static void join_thread(struct controller_cgroup *cc, pid_t init_pid)
{
    if (!cc->started || cc->joined)
        return;
    (void)pthread_join(cc->thread, NULL);
    cc->joined = true;
    if (cc->entered == 0 && cc->init_pid == init_pid)
        for (size_t i = 0; i < cc->moved.n_dirs; i++)
            cc->cg.entered[i] = true;
}

void controller_cgroup_join(struct controller_cgroup *cc)
{
    join_thread(cc, -1);
}

void controller_cgroup_abandon(struct controller_cgroup *cc)
{
    join_thread(cc, -1);
    (void)cgroup_remove(&cc->cg);
}

int controller_cgroup(struct sandbox_config *cfg, struct controller_cgroup *cc,
                      bool host_root_inside, char *err, size_t errlen)
{
    struct cgroup *cg = &cc->cg;
    unsigned need = (cfg->pids_max ? CGROUP_PIDS : 0) | (cfg->memory_max ? CGROUP_MEMORY : 0);
    char why[PATH_MAX + 128] = "";
    int r = 0;
    if (controller_pids_by_rlimit(host_root_inside) && !cc->started && !(need & CGROUP_MEMORY)) {
        if (need & CGROUP_PIDS)
            nproc_fallback(cfg);
        return 0;
    }
    wait_created(cc);
    if (cc->started && cc->made < 0 && (need & CGROUP_PIDS)) {
        snprintf(err, errlen, "%s", cc->why);
        goto fail;
    }
    /* The thread found no place for pids: asked again for pids alone, cgroup_create reads the
     * same files to the same answer (as much again as the thread took, on the way to init's
     * configuration). Another controller wanted (memory) is asked for again, with pids. */
    unsigned known_absent = 0;
    if (cc->started && cc->made == 0) {
        snprintf(why, sizeof why, "%s", cc->why);
        known_absent = CGROUP_PIDS;
    }
    if (need & ~cgroup_controllers(cg) & ~known_absent) {
        char more[PATH_MAX + 128];
        r = cgroup_create(cg, getpid(), need, more, sizeof more);
        if (r < 0) {
            snprintf(err, errlen, "%s", more);
            goto fail;
        }
        if (r == 0)
            snprintf(why, sizeof why, "%s", more);
    }
    if ((r = cgroup_set_limits(cg, cfg->pids_max, cfg->memory_max)) < 0) {
        snprintf(err, errlen, "cannot set the limits of the sandbox's cgroup %s: %s", cg->dirs[0],
                 strerror(-r));
        goto fail;
    }
    unsigned missing = need & ~cgroup_controllers(cg);
    /* pids has RLIMIT_NPROC but for the host's root; the rest is only a cgroup's to give */
    unsigned lost = missing & (host_root_inside ? (CGROUP_PIDS | CGROUP_MEMORY) : CGROUP_MEMORY);
    if (lost) {
        /* the machine's, not the run's: said once per machine (base/said_once), then kept for
         * cordon doctor and the debug log */
        bool both = lost == (CGROUP_PIDS | CGROUP_MEMORY);
        char line[PATH_MAX + 256];
        snprintf(line, sizeof line, "no cgroup for this sandbox (%s): %s not applied", why,
                 both                    ? "limits.memory and limits.pids"
                 : lost == CGROUP_MEMORY ? "limits.memory"
                                         : "limits.pids");
        if (said_once_first(both                    ? "limits.memory-pids"
                            : lost == CGROUP_MEMORY ? "limits.memory"
                                                    : "limits.pids",
                            line))
            LOG_W("limits", "%s (said once on this machine: cordon doctor lists it)", line);
        else
            LOG_D("limits", "%s", line);
    }
    if ((missing & CGROUP_PIDS) && !host_root_inside)
        nproc_fallback(cfg);
    return cg->n_dirs > 0;
fail:
    controller_cgroup_abandon(cc);
    return -1;
}

int controller_cgroup_enter(struct controller_cgroup *cc, pid_t init_pid, char *err, size_t errlen)
{
    join_thread(cc, init_pid);
    int r = cgroup_enter(&cc->cg, init_pid); /* what the thread did not (or not for this init) */
    if (r < 0) {
        snprintf(err, errlen, "cannot move the sandbox into its cgroup: %s", strerror(-r));
        return -1;
    }
    return 0;
}

/* bytes as "64M", "2G" when exact, else in bytes */
static void format_size(unsigned long long v, char *out, size_t n)
{
    static const char units[] = "TGMK";
    for (int i = 0; i < 4; i++) {
        unsigned shift = (unsigned)(4 - i) * 10;
        if (v >= (1ull << shift) && v % (1ull << shift) == 0) {
            snprintf(out, n, "%llu%c", v >> shift, units[i]);
            return;
        }
    }
    snprintf(out, n, "%llu bytes", v);
}

void controller_oom_line(const struct sandbox_config *cfg, const struct cgroup *cg, char *line,
                         size_t len)
{
    line[0] = '\0';
    unsigned long long kills = cgroup_oom_kills(cg);
    if (!kills)
        return;
    char limit[32];
    format_size(cfg->memory_max, limit, sizeof limit);
    if (kills == 1)
        snprintf(line, len, "the command was killed: out of memory (limits.memory = %s)", limit);
    else
        snprintf(line, len,
                 "the command was killed: out of memory (limits.memory = %s; %llu processes "
                 "killed)",
                 limit, kills);
}

void controller_pids_line(const struct sandbox_config *cfg, const struct cgroup *cg, char *line,
                          size_t len)
{
    line[0] = '\0';
    unsigned long long refused = cfg->pids_max ? cgroup_pids_refused(cg) : 0;
    if (refused)
        snprintf(line, len,
                 "fork refused: the sandbox reached limits.pids = %llu (refused %llu %s)",
                 cfg->pids_max, refused, refused == 1 ? "time" : "times");
}

void controller_limit_news(const struct sandbox_config *cfg, const struct cgroup *cg,
                           struct limit_seen *seen, char *oom, size_t oom_len, char *pids,
                           size_t pids_len)
{
    oom[0] = pids[0] = '\0';
    unsigned long long kills = cfg->memory_max ? cgroup_oom_kills(cg) : 0;
    unsigned long long refused = cfg->pids_max ? cgroup_pids_refused(cg) : 0;
    if (kills > seen->oom_kills) {
        char limit[32];
        format_size(cfg->memory_max, limit, sizeof limit);
        snprintf(oom, oom_len,
                 "out of memory while the command ran: the kernel killed %llu %s of the "
                 "session's sandbox (limits.memory = %s)",
                 kills - seen->oom_kills, kills - seen->oom_kills == 1 ? "process" : "processes",
                 limit);
    }
    if (refused > seen->pids_refused)
        snprintf(pids, pids_len,
                 "fork refused while the command ran: the session's sandbox reached "
                 "limits.pids = %llu (refused %llu %s)",
                 cfg->pids_max, refused - seen->pids_refused,
                 refused - seen->pids_refused == 1 ? "time" : "times");
    seen->oom_kills = kills > seen->oom_kills ? kills : seen->oom_kills;
    seen->pids_refused = refused > seen->pids_refused ? refused : seen->pids_refused;
}

int controller_send_config(int ctl, const struct sandbox_config *cfg)
{
    int fd = memfd_create("cordon-config", MFD_CLOEXEC);
    int r = fd < 0 ? -errno : config_wire_write(fd, cfg);
    if (r == 0)
        r = init_wire_send_fd(ctl, INIT_WIRE_CONFIG, 0, fd);
    if (fd >= 0)
        close(fd);
    return r;
}

static void tell_init_to_abort(int ctl)
{
    (void)init_wire_send_fd(ctl, INIT_WIRE_ABORT, 0, -1);
}

int controller_compile_network(int ctl, char *err, size_t errlen)
{
    if (lh_resolve_network(err, errlen) == LH_OK)
        return 0;
    tell_init_to_abort(ctl);
    return -1;
}

int controller_send_filter(int ctl, const struct sandbox_config *cfg, struct sc_program *prog,
                           char *err, size_t errlen)
{
    if (sc_build(cfg, prog, err, errlen) < 0) {
        tell_init_to_abort(ctl);
        return -1;
    }
    struct init_wire_msg m = {.tag = INIT_WIRE_FILTER};
    return init_wire_send(ctl, &m, prog->insns, (size_t)prog->len * sizeof prog->insns[0], NULL, 0);
}

/* --publish [HOSTADDR:]HOSTPORT:PORT (HOSTADDR may be bracketed: [::1]). 0, or -1 with err. */
static int parse_publish(const char *spec, char *addr, size_t addrlen, long *host_port, long *port,
                         char *err, size_t errlen)
{
    const char *last = strrchr(spec, ':');
    char *end;
    addr[0] = '\0';
    if (!last || last == spec)
        goto bad;
    *port = strtol(last + 1, &end, 10);
    if (*end || end == last + 1)
        goto bad;
    /* The word before the port is the host port; what is before that, the address. */
    const char *mid = NULL;
    for (const char *p = last - 1; p >= spec && !mid; p--)
        if (*p == ':')
            mid = p;
    const char *hp = mid ? mid + 1 : spec;
    *host_port = strtol(hp, &end, 10);
    if (end != last || end == hp)
        goto bad;
    if (mid) {
        const char *a = spec;
        size_t n = (size_t)(mid - spec);
        if (n >= 2 && a[0] == '[' && a[n - 1] == ']') {
            a++;
            n -= 2;
        }
        if (n == 0 || n >= addrlen)
            goto bad;
        memcpy(addr, a, n);
        addr[n] = '\0';
    }
    return 0;
bad:
    snprintf(err, errlen,
             "--publish '%.80s': expected [HOSTADDR:]HOSTPORT:PORT (such as 8080:3000 or "
             "127.0.0.1:8080:3000)",
             spec);
    return -1;
}

int controller_publish(struct port_relay *ports, const struct run_flags *flags, char *err,
                       size_t errlen)
{
    for (size_t i = 0; i < flags->publish.len; i++) {
        char addr[64], why[256];
        long host_port, port;
        if (parse_publish(flags->publish.items[i], addr, sizeof addr, &host_port, &port, err,
                          errlen) < 0)
            return -1;
        if (!ports) {
            snprintf(err, errlen,
                     "--publish: this session has no network of its own (network.unrestricted)");
            return -1;
        }
        if (port < 1 || port > 65535 || host_port < 0 || host_port > 65535) {
            snprintf(err, errlen,
                     "--publish '%s': ports are 1 to 65535 (a host port of 0: any free one)",
                     flags->publish.items[i]);
            return -1;
        }
        struct port_binding b;
        if (port_relay_publish(ports, addr[0] ? addr : NULL, (unsigned)host_port, (unsigned)port,
                               &b, why, sizeof why) < 0) {
            snprintf(err, errlen, "--publish %s: %s", flags->publish.items[i], why);
            return -1;
        }
    }
    return 0;
}
