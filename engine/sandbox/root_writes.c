/* root_writes.c — see root_writes.h.
 * Owns: the idmapped detached trees of what a root caller owns (made on the host, in the controller's
 * own mount namespace, where root may idmap the host's file systems) and their hand-over to
 * init: the writable set, and, shifted, the home, its layer folder, the visible paths, the
 * run_binds paths, the granted keyring files (the sockets' relays are grants.c's) and cordon's
 * own binary; the namespace that maps root alone (their idmap), a session's throwaway trial
 * namespace, the mark of a `cordon run` that could not keep the shift.
 * Uses: userns.c for the maps, init_wire.c, grants.c (relays), the new mount API (open_tree,
 * mount_setattr).
 * Must never: give init a writable tree that is not idmapped with the sandbox's own user
 * namespace (init would then grant capabilities over the host's real owners), idmap anything
 * outside the writable set with more than root mapped (the command's capabilities would reach
 * other users' files there), a tree reached through a symbolic link, or a tree that propagates
 * mounts back to the host; on any doubt it sends none, and the shift falls back to the scan. */
#include "sandbox/root_writes.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cordon_dirs.h"
#include "base/kernel_lacks.h"
#include "base/log.h"
#include "base/said_once.h"
#include "base/sha256.h"
#include "base/util.h"
#include "sandbox/grants.h"
#include "sandbox/init_wire.h"
#include "sandbox/mount_ops.h"
#include "sandbox/userns.h"

int root_writes_map(int ctl, pid_t init_pid, bool shift, char *err, size_t errlen)
{
    int done = ns_write_root_maps(init_pid, shift);
    if (done < 0) {
        snprintf(err, errlen, "cannot write the sandbox's uid/gid maps: %s", strerror(-done));
        return -1;
    }
    /* A failed send means init is gone already; it said why, and the next step sees it. */
    (void)init_wire_send_fd(ctl, INIT_WIRE_MAPS, done, -1);
    return done;
}

#define NO_IDMAP "this kernel has no idmapped mounts (Linux 5.12 and later have)"

/* Why the kernel refused an idmapped mount of path, for the one line. */
static void refusal(char *why, size_t len, const char *path, const char *step, int err)
{
    const char *what = strerror(err);
    if (err == ENOSYS)
        what = NO_IDMAP;
    else if (err == EINVAL && strcmp(step, "idmap") == 0)
        what = "its file system (or one mounted below it) takes no idmapped mount";
    else if (err == EPERM && strcmp(step, "idmap") == 0)
        what = "an idmapped mount needs CAP_SYS_ADMIN over its file system, which this process "
               "lacks (in a container: the host's)";
    snprintf(why, len, "%s: %s", path, what);
}

/* A detached copy of the tree at path (with its submounts when recursive), reached with no
 * symbolic link on the way (as init's own detached trees are, fsview.c), private (what init mounts
 * on it stays in the sandbox), idmapped with userns_fd, and given attrs (MOUNT_ATTR_RDONLY...).
 * kind: 'd' a directory, 's' a socket, 'f' a regular file, 0 anything; checked on the very fd
 * that is cloned. The fd, or -1 with why set. */
static int take_tree(const char *path, int userns_fd, bool recursive, uint64_t attrs, char kind,
                     char *why, size_t len)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int pfd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (pfd < 0) {
        refusal(why, len, path, "open", errno);
        return -1;
    }
    struct stat st;
    if (kind && (fstat(pfd, &st) < 0 || (kind == 'd' && !S_ISDIR(st.st_mode)) ||
                 (kind == 's' && !S_ISSOCK(st.st_mode)) || (kind == 'f' && !S_ISREG(st.st_mode)))) {
        refusal(why, len, path, "open", ENOTDIR);
        close(pfd);
        return -1;
    }
    int fd = open_tree(pfd, "",
                       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
                           (recursive ? AT_RECURSIVE : 0));
    int err = errno;
    close(pfd);
    if (fd < 0) {
        refusal(why, len, path, "open_tree", err);
        return -1;
    }
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP | attrs,
                              .userns_fd = (uint64_t)userns_fd,
                              .propagation = MS_PRIVATE};
    /* No idmapped mounts without mount_setattr (Linux 5.12), or by the test switch. */
    bool lacking = kernel_lacks_forced("idmap") || mnt_setattr_lacking();
    if (lacking || mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
                                 sizeof attr) < 0) {
        refusal(why, len, path, "idmap", lacking ? ENOSYS : errno);
        close(fd);
        return -1;
    }
    return fd;
}

static int idmapped_tree(const char *path, int userns_fd, char *why, size_t len)
{
    return take_tree(path, userns_fd, true, 0, 0, why, len);
}

int root_writes_send(int ctl, pid_t init_pid, unsigned maps, struct sandbox_config *cfg)
{
    char why[PATH_MAX + 256] = "";
    size_t n = 1 + cfg->writable.len, made = 0;
    int *fds = xcalloc(n, sizeof *fds);
    int ns = -1, r = 0;
    bool no_idmap = false;
    if (!cfg->root_writes)
        goto none; /* the profile's choice: nothing to say */
    if ((maps & (NS_MAPS_UID | NS_MAPS_GID)) != (NS_MAPS_UID | NS_MAPS_GID)) {
        snprintf(why, sizeof why,
                 "this process may not map other users' ids: it lacks CAP_SETUID or CAP_SETGID");
        goto none;
    }
    if ((ns = root_writes_userns_of(init_pid)) < 0) {
        r = ns;
        goto out; /* init is gone (it said why) */
    }
    for (; made < n; made++) {
        const char *path = made == 0 ? cfg->workspace : cfg->writable.items[made - 1];
        if ((fds[made] = idmapped_tree(path, ns, why, sizeof why)) < 0) {
            no_idmap = strstr(why, NO_IDMAP) != NULL;
            goto none;
        }
    }
    for (size_t i = 0; i < n && r == 0; i++)
        r = init_wire_send_fd(ctl, INIT_WIRE_IDMAPPED, 0, fds[i]);
    cfg->root_write_caps = r == 0;
    goto out;
none:
    if (why[0]) {
        char line[sizeof why + 160];
        snprintf(line, sizeof line,
                 "root writes in files of other owners are unavailable (%s): there they show as "
                 "nobody and stay read-only to the command",
                 why);
        /* A kernel without idmapped mounts is the machine's: said once (said_once.h). */
        if (!no_idmap)
            fprintf(stderr, "cordon: %s\n", line);
        else if (said_once_first("kernel.idmap", line))
            fprintf(stderr, "cordon: %s (said once on this machine: cordon doctor lists it)\n",
                    line);
    }
    r = init_wire_send_fd(ctl, INIT_WIRE_NO_IDMAP, 0, -1);
out:
    for (size_t i = 0; i < made; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    if (ns >= 0)
        close(ns);
    return r;
}

int root_writes_wait_maps(int ctl)
{
    struct init_wire_msg m;
    int fds[2];
    long r = init_wire_recv(ctl, &m, NULL, 0, fds, 0);
    if (r < 0)
        return (int)r;
    if (m.tag != INIT_WIRE_MAPS)
        return -EBADMSG;
    return m.value & (int)(NS_MAPS_UID | NS_MAPS_GID | NS_MAPS_SHIFT);
}

/* The first n of what init received, closed (each -1 after) when a later message is wrong. */
static void close_received(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
        fds[i] = -1;
    }
}

int root_writes_receive(int ctl, size_t n, int *fds)
{
    for (size_t i = 0; i < n; i++)
        fds[i] = -1;
    for (size_t i = 0; i < n; i++) {
        struct init_wire_msg m;
        int got[2];
        long r = init_wire_recv(ctl, &m, NULL, 0, got, 0);
        if (r == 0 && m.tag == INIT_WIRE_NO_IDMAP && i == 0)
            return 0;
        if (r < 0 || m.tag != INIT_WIRE_IDMAPPED) {
            close_received(got, 2);
            close_received(fds, i);
            return r < 0 ? (int)r : -EBADMSG;
        }
        fds[i] = got[0];
    }
    return 1;
}

int root_writes_receive_shift(int ctl, size_t n, int *fds)
{
    for (size_t i = 0; i < n; i++)
        fds[i] = -1;
    for (size_t i = 0; i < n; i++) {
        struct init_wire_msg m;
        int got[2];
        long r = init_wire_recv(ctl, &m, NULL, 0, got, 0);
        if (r == 0 && m.tag == INIT_WIRE_SHIFT_BIND) {
            fds[i] = got[0];
            continue;
        }
        if (r == 0 && m.tag == INIT_WIRE_NO_SHIFT_BIND)
            continue;
        close_received(got, 2);
        close_received(fds, i);
        return r < 0 ? (int)r : -EBADMSG;
    }
    return 0;
}

/* ---- the shift (host side) -------------------------------------------------------------- */

bool root_writes_shift_wanted(const struct sandbox_config *cfg)
{
    return cfg->root_writes && cfg->root_only.hide;
}

void root_writes_shift_free(struct root_shift *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->fds[i] >= 0)
            close(s->fds[i]);
    free(s->fds);
    memset(s, 0, sizeof *s);
}

static void shift_push(struct root_shift *s, int fd)
{
    s->fds = xrealloc(s->fds, (s->n + 1) * sizeof *s->fds);
    s->fds[s->n++] = fd;
}

static bool within_any(const char *path, const struct str_list *dirs)
{
    for (size_t i = 0; i < dirs->len; i++)
        if (path_is_within(path, dirs->items[i]))
            return true;
    return false;
}

static int by_length(const void *a, const void *b)
{
    size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);
    return la < lb ? -1 : la > lb;
}

/* The paths root_only.visible names that the shift would otherwise refuse: canonical, existing,
 * none inside another, the home, a writable area or a hidden path (those are reached, or
 * covered, anyway). */
static void visible_binds(const struct sandbox_config *cfg, struct str_list *out)
{
    struct str_list areas = {0}, found = {0};
    str_list_push(&areas, cfg->workspace);
    for (size_t i = 0; i < cfg->writable.len; i++)
        str_list_push(&areas, cfg->writable.items[i]);
    if (cfg->home)
        str_list_push(&areas, cfg->home);
    for (size_t i = 0; i < cfg->root_only.visible.len; i++) {
        char *abs = path_absolute(cfg->root_only.visible.items[i], "/");
        char *real = realpath(abs, NULL);
        free(abs);
        if (real && strcmp(real, "/") != 0 && !within_any(real, &areas) &&
            !within_any(real, &cfg->hidden) && !str_list_contains(&found, real))
            str_list_push(&found, real);
        free(real);
    }
    if (found.len > 1) /* qsort takes no NULL array, even empty */
        qsort(found.items, found.len, sizeof *found.items, by_length);
    for (size_t i = 0; i < found.len; i++)
        if (!within_any(found.items[i], out))
            str_list_push(out, found.items[i]);
    str_list_free(&found);
    str_list_free(&areas);
}

int root_writes_userns_of(pid_t pid)
{
    char nspath[64];
    snprintf(nspath, sizeof nspath, "/proc/%d/ns/user", (int)pid);
    int fd = open(nspath, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* A user namespace of its own with map (uid and gid alike), its process gone (the fd keeps it).
 * The fd, or -errno. */
static int userns_with(const char *map)
{
    int p[2], fd = -1;
    if (!ns_may_write_wide_maps())
        return -EPERM;
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    pid_t child = fork();
    if (child < 0) {
        fd = -errno;
        close(p[0]);
        close(p[1]);
        return fd;
    }
    if (child == 0) {
        /* Only system calls here: the controller may have threads. */
        char c = unshare(CLONE_NEWUSER) == 0 ? 'u' : 'x';
        close(p[0]);
        (void)!write(p[1], &c, 1);
        pause();
        _exit(0);
    }
    close(p[1]);
    char c = 0, path[64];
    ssize_t got;
    RETRY_EINTR(got, read(p[0], &c, 1));
    close(p[0]);
    fd = got == 1 && c == 'u' ? 0 : -EPERM;
    static const char *const files[] = {"gid_map", "uid_map"};
    for (size_t i = 0; i < ARRAY_LEN(files) && fd == 0; i++) {
        snprintf(path, sizeof path, "/proc/%d/%s", (int)child, files[i]);
        fd = write_file(path, map, strlen(map));
    }
    if (fd == 0)
        fd = root_writes_userns_of(child);
    (void)kill(child, SIGKILL);
    (void)waitpid(child, NULL, 0);
    return fd;
}

int root_writes_probe_userns(void)
{
    char map[64];
    snprintf(map, sizeof map, "0 %u %u\n", NS_ROOT_SHIFT, NS_ROOT_RANGE + 1u);
    return userns_with(map);
}

/* The owner namespace's child: it shares this process's memory and descriptors and runs while
 * this process waits (CLONE_VM | CLONE_FILES | CLONE_VFORK), so it makes only raw system calls
 * (a libc wrapper of setresuid would signal this process's threads). As the kernel's
 * NS_ROOT_SHIFT it makes a user namespace and writes its one-line maps itself, which the kernel
 * allows a process for its own ids, then opens the namespace into owner_fd: the descriptor is in
 * the shared table and keeps the namespace once the child is gone. No fork: its page tables
 * would be copied, and its scheduling waited for, on every start. */
struct owner_job {
    char map[32];
    int fd; /* the namespace, or -errno */
};

static int owner_child(void *arg)
{
    struct owner_job *j = arg;
    long id = NS_ROOT_SHIFT;
    static const char *const files[] = {"/proc/self/setgroups", "/proc/self/uid_map",
                                        "/proc/self/gid_map"};
    if (syscall(SYS_setresgid, id, id, id) < 0 || syscall(SYS_setresuid, id, id, id) < 0 ||
        syscall(SYS_unshare, CLONE_NEWUSER) < 0) {
        j->fd = -EPERM;
        return 0;
    }
    /* The change of ids made it undumpable, which leaves its /proc files root's: dumpable for
     * the writes (a process of uid NS_ROOT_SHIFT elsewhere, a shifted sandbox's, sees no host
     * pid to reach it by, and its filter refuses ptrace anyway). Dumpable is the memory's, which
     * is the controller's too: the controller puts back its own once the child is gone. */
    syscall(SYS_prctl, PR_SET_DUMPABLE, 1L, 0L, 0L, 0L);
    for (size_t i = 0; i < ARRAY_LEN(files); i++) {
        const char *body = i == 0 ? "deny" : j->map;
        long fd = syscall(SYS_openat, AT_FDCWD, files[i], O_WRONLY | O_CLOEXEC);
        long n = fd < 0 ? -1 : syscall(SYS_write, fd, body, strlen(body));
        if (fd >= 0)
            syscall(SYS_close, fd);
        if (n != (long)strlen(body)) {
            j->fd = -EPERM;
            return 0;
        }
    }
    long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    j->fd = fd < 0 ? -EPERM : (int)fd;
    return 0;
}

int root_writes_owner_userns(void)
{
    static char stack[16384] __attribute__((aligned(16)));
    struct owner_job j = {.fd = -EPERM};
    snprintf(j.map, sizeof j.map, "0 %u 1\n", NS_ROOT_SHIFT);
    /* Left undumpable, the controller would make every init it clones after this undumpable
     * too, whose /proc/PID/ns a controller without CAP_SYS_PTRACE (in a container) may then not
     * open. */
    int dumpable = prctl(PR_GET_DUMPABLE);
    pid_t pid = clone(owner_child, stack + sizeof stack,
                      CLONE_VM | CLONE_FILES | CLONE_VFORK | SIGCHLD, &j);
    int err = errno;
    if (pid > 0)
        (void)waitpid(pid, NULL, 0);
    if (dumpable >= 0)
        (void)prctl(PR_SET_DUMPABLE, (unsigned long)dumpable);
    return pid < 0 ? -err : j.fd;
}

/* Can init reach path by its name, shifted? Every folder on the way must let "other" search it
 * (root's own are unmapped there), unless it lies in one that init attached before (via: the
 * home, the visible paths) or in a file system of the sandbox's own (fsview.c's step 4). */
static bool reachable(const char *path, const struct str_list *via, char *why, size_t len)
{
    static const char *const fresh[] = {"/tmp", "/run", "/var/run", "/dev", "/proc"};
    struct str_list own = {0};
    for (size_t i = 0; i < ARRAY_LEN(fresh); i++)
        str_list_push(&own, fresh[i]);
    char *a = xstrdup(path);
    bool ok = true;
    for (char *slash = strchr(a + 1, '/'); ok && slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        struct stat st;
        if (within_any(a, via) || within_any(a, &own))
            break;
        if (stat(a, &st) < 0 || !(st.st_mode & S_IXOTH)) {
            snprintf(why, len,
                     "%s: its folder %s lets no other user through, and the sandbox's "
                     "root is no owner on the host",
                     path, a);
            ok = false;
        }
        *slash = '/';
    }
    free(a);
    str_list_free(&own);
    return ok;
}

/* A detached read-only clone of the running binary, or -1 (then init tries its own). */
static int own_binary(void)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return -1;
    path[n] = '\0';
    int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                              .propagation = MS_PRIVATE};
    if (fd >= 0 && mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int root_writes_shift_prepare(int ns, int owner_ns, struct sandbox_config *cfg,
                              struct root_shift *s, bool trial, char *why, size_t len)
{
    int r = -1;
    memset(s, 0, sizeof *s);
    str_list_free(&cfg->shift_binds);
    /* The writable trees, read-write, with what is mounted below them. */
    for (size_t i = 0; i < 1 + cfg->writable.len; i++) {
        const char *path = i == 0 ? cfg->workspace : cfg->writable.items[i - 1];
        int fd = idmapped_tree(path, ns, why, len);
        if (fd < 0)
            goto out;
        shift_push(s, fd);
    }
    s->n_trees = s->n;
    /* The home (the copy-on-write home's lower layer, or the home itself), unless it
     * is hidden: then the covers show nothing of it anyway. It, the visible paths and the
     * granted sockets are idmapped with owner_ns, which maps root alone: root's files there are
     * the command's own, every other user's stay unmapped, as on the rest of the host (the
     * sandbox's namespace would hand the command's capabilities over them too). */
    /* Not read-only yet: init writes in the host's tree before it turns it read-only as a whole
     * (fsview.c step 3, which takes these too), as it did without the shift (a linked
     * worktree's config.worktree in its admin folder under /var/tmp). */
    const uint64_t ro = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (cfg->home && strcmp(cfg->home, "/") != 0 && !within_any(cfg->home, &cfg->hidden))
        str_list_push(&cfg->shift_binds, cfg->home);
    visible_binds(cfg, &cfg->shift_binds);
    /* The host's paths init re-binds into the fresh /run (run_binds: /run/docker.sock with
     * allow_docker): root's there are the caller's, as they were before the shift (a socket
     * of root:docker 0660 is connected to through its owner bits). */
    for (size_t i = 0; i < cfg->run_binds.len; i++) {
        struct stat st;
        const char *b = cfg->run_binds.items[i];
        if (lstat(b, &st) == 0 && !S_ISLNK(st.st_mode) && !within_any(b, &cfg->shift_binds))
            str_list_push(&cfg->shift_binds, b);
    }
    /* Outermost first: init reaches a home under /var/tmp's 0700 folders through /var/tmp. */
    if (cfg->shift_binds.len > 1)
        qsort(cfg->shift_binds.items, cfg->shift_binds.len, sizeof *cfg->shift_binds.items,
              by_length);
    for (size_t i = 0; i < cfg->shift_binds.len; i++) {
        int fd = take_tree(cfg->shift_binds.items[i], owner_ns, true, ro, 0, why, len);
        if (fd < 0)
            goto out;
        shift_push(s, fd);
    }
    /* init attaches the writable trees, the home and the visible paths by their names (fsview.c,
     * init.c: outermost first, so an inner one is reached through an outer one), and the command
     * starts in the current folder: each must be reachable through what init can search. A home
     * under a folder only root may search is not: no shift then, as for such a workspace. */
    struct str_list via = {0};
    for (size_t i = 0; i < cfg->shift_binds.len; i++)
        str_list_push(&via, cfg->shift_binds.items[i]);
    str_list_push(&via, cfg->workspace);
    for (size_t i = 0; i < cfg->writable.len; i++)
        str_list_push(&via, cfg->writable.items[i]);
    bool all = true;
    for (size_t i = 0; all && i < 2 + cfg->writable.len; i++) {
        const char *path = i == 0 ? cfg->workspace : i == 1 ? cfg->cwd : cfg->writable.items[i - 2];
        all = !path || reachable(path, &via, why, len);
    }
    for (size_t i = 0; all && i < cfg->shift_binds.len; i++)
        all = reachable(cfg->shift_binds.items[i], &via, why, len);
    str_list_free(&via);
    if (!all)
        goto out;
    /* The home's layer folder: read-write, the upper and work directories and the lock. */
    int layer = -1;
    if (cfg->home_mode == SANDBOX_HOME_OVERLAY && cfg->home_layer &&
        (layer = take_tree(cfg->home_layer, ns, false, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 'd',
                           why, len)) < 0)
        goto out;
    shift_push(s, layer);
    /* The review layer's folder (review_view.h): read-write, as the home's. */
    layer = -1;
    if (cfg->review && cfg->review_layer &&
        (layer = take_tree(cfg->review_layer, ns, false, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 'd',
                           why, len)) < 0)
        goto out;
    shift_push(s, layer);
    /* The granted sockets (relayed: grants.h) and keyring files, as grants.c checks them; a
     * trial starts no relay. */
    for (size_t i = 0; i < cfg->grant_binds.len && !trial; i++) {
        const char *b = cfg->grant_binds.items[i], *tab = strchr(b, '\t');
        if (!tab || (b[0] != 's' && b[0] != 'f')) {
            snprintf(why, len, "a malformed grant");
            goto out;
        }
        int fd = b[0] == 's'
                     ? grants_relay(tab + 1, owner_ns, why, len)
                     : take_tree(tab + 1, owner_ns, false,
                                 ro | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC, b[0], why, len);
        if (fd < 0)
            goto out;
        shift_push(s, fd);
    }
    /* cordon's own binary, for `cordon nc` inside (fsview.c binds it): init may not reach the
     * folder it lies in (a copy in a 0700 folder of /tmp). Not idmapped: it is run, not owned. */
    shift_push(s, own_binary());
    cfg->root_write_caps = true;
    r = 0;
out:
    if (r < 0) {
        root_writes_shift_free(s);
        str_list_free(&cfg->shift_binds);
    }
    return r;
}

int root_writes_shift_send(int ctl, struct root_shift *s)
{
    int r = 0;
    for (size_t i = 0; i < s->n && r == 0; i++) {
        if (s->fds[i] >= 0)
            r = init_wire_send_fd(ctl, i < s->n_trees ? INIT_WIRE_IDMAPPED : INIT_WIRE_SHIFT_BIND,
                                  0, s->fds[i]);
        else
            r = init_wire_send_fd(ctl, INIT_WIRE_NO_SHIFT_BIND, 0, -1);
    }
    root_writes_shift_free(s);
    return r;
}

/* ---- the hint (host side, `cordon run`) -------------------------------------------------- */

/* $XDG_STATE_HOME/cordon/root-shift/<sha256 of the inputs: the profile's name, workspace and
 * current folder, and where profiles are found>, or NULL (no state folder). */
static char *hint_path(const char *profile, const char *workspace, const char *cwd, bool make)
{
    const char *home = cdir_home();
    char *dir = cdir_path(CDIR_STATE, "root-shift");
    if (!dir || (make && mkdir_p(dir, 0700) < 0)) {
        free(dir);
        return NULL;
    }
    /* The configuration folder too: a profile of the same name elsewhere is another profile. */
    char *config = cdir_path(CDIR_CONFIG, NULL);
    char *key = xasprintf("%s\n%s\n%s\n%s\n%s", profile ? profile : "", workspace ? workspace : "",
                          cwd, config ? config : "", home ? home : "");
    free(config);
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(key, strlen(key), hex);
    char *path = xasprintf("%s/%s", dir, hex);
    free(key);
    free(dir);
    return path;
}

bool root_writes_hint_no_shift(const char *profile, const char *workspace, const char *cwd)
{
    char *path = hint_path(profile, workspace, cwd, false);
    struct stat st;
    bool no = path && lstat(path, &st) == 0;
    free(path);
    return no;
}

void root_writes_hint_note(const char *profile, const char *workspace, const char *cwd,
                           bool no_shift)
{
    if (no_shift == root_writes_hint_no_shift(profile, workspace, cwd))
        return;
    char *path = hint_path(profile, workspace, cwd, no_shift);
    if (path && no_shift) {
        int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
            close(fd);
    } else if (path) {
        (void)unlink(path);
    }
    free(path);
}
