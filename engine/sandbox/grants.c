/* grants.c — see grants.h. Owns the profile's socket grants from the caller's environment to
 * the mounts init makes of them: where each source is on the host, that it is what it claims to
 * be, and the fixed place it gets inside.
 * Uses: the caller's environment and `gpgconf --list-dirs` (run on the host, before the sandbox
 * starts, to learn gpg's home and its agent's socket), realpath/stat, openat2 and the new mount
 * API (open_tree, mount_setattr) in init, mount_ops.h to attach; for a shifted root caller
 * (root_writes.h) the relay of each granted socket, a process of the controller's.
 * Must never: bind a directory or a private key, follow a symbolic link planted where a
 * sandboxed command could write, start a gpg-agent or ssh-agent, or go on without a grant it
 * was asked for (the controller stops with one line instead). */
#include "sandbox/grants.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"
#include "sandbox/sandbox_config.h"

static char *dup_n(const char *s, size_t n)
{
    char *d = xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* The caller's value of name in env, or NULL (empty counts as unset). */
static const char *env_get(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; env && env[i]; i++)
        if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
            return env[i][n + 1] ? env[i] + n + 1 : NULL;
    return NULL;
}

/* One bind: src (absolute, maybe with links) checked and made canonical, pushed as
 * "KIND TARGET\tSOURCE" (KIND 's' socket, 'f' regular file). what names the grant in the message. */
static int add_bind(struct sandbox_config *cfg, const struct str_list *areas, char kind,
                    const char *target, const char *src, const char *what, char *err, size_t errlen)
{
    static const char stop[] = "the sandbox was not started";
    struct stat st;
    char *planted = sandbox_config_link_within(src, areas);
    if (planted) {
        snprintf(err, errlen,
                 "%s: %s passes the symbolic link %s, where a sandboxed command could have put "
                 "it: refused; %s",
                 what, src, planted, stop);
        free(planted);
        return -1;
    }
    char *real = realpath(src, NULL);
    if (!real || stat(real, &st) < 0) {
        snprintf(err, errlen, "%s: %s: %s; %s", what, src, strerror(errno), stop);
        free(real);
        return -1;
    }
    if (kind == 's' ? !S_ISSOCK(st.st_mode) : !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: %s is not a %s; %s", what, src,
                 kind == 's' ? "socket" : "regular file", stop);
        free(real);
        return -1;
    }
    str_list_push_owned(&cfg->grant_binds, xasprintf("%c%s\t%s", kind, target, real));
    free(real);
    return 0;
}

/* %XX-unescape s in place (gpgconf escapes ':' and '%' in its values). */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        unsigned v;
        if (r[0] == '%' && r[1] && r[2] && sscanf(r + 1, "%2x", &v) == 1 && v) {
            *w++ = (char)v;
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* gpg's home and its agent's restricted socket as the caller's gpg sees them: `gpgconf
 * --list-dirs` (it knows /run/user/UID/gnupg, GNUPGHOME and the d.HASH directories of a home
 * elsewhere), else $GNUPGHOME or ~/.gnupg and its S.gpg-agent.extra. The extra socket is the one
 * gpg-agent made for forwarding to other machines: it signs and decrypts, and refuses to export
 * or delete a key (and to preset a passphrase); the main socket does all of those. Both strings
 * new. */
static void gpg_dirs(char *const *env, const char *home, char **homedir, char **socket_path)
{
    *homedir = *socket_path = NULL;
    int fds[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    bool fa_ok = false;
    pid_t pid = -1;
    char buf[8192];
    size_t len = 0;
    if (pipe2(fds, O_CLOEXEC) < 0 || posix_spawn_file_actions_init(&fa) != 0)
        goto fallback;
    fa_ok = true;
    char arg0[] = "gpgconf", arg1[] = "--list-dirs";
    char *argv[] = {arg0, arg1, NULL};
    if (posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, fds[1], 1) != 0 ||
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0) != 0 ||
        posix_spawnp(&pid, "gpgconf", &fa, NULL, argv, (char **)env) != 0)
        pid = -1;
    close(fds[1]);
    fds[1] = -1;
    for (ssize_t n; pid > 0 && len < sizeof buf - 1 &&
                    (n = read(fds[0], buf + len, sizeof buf - 1 - len)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    int status = 0;
    if (pid > 0 &&
        (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
        len = 0;
    for (char *save = NULL, *line = strtok_r(buf, "\n", &save); len && line;
         line = strtok_r(NULL, "\n", &save)) {
        char **dst = strncmp(line, "homedir:", 8) == 0               ? homedir
                     : strncmp(line, "agent-extra-socket:", 19) == 0 ? socket_path
                                                                     : NULL;
        if (dst && !*dst) {
            *dst = xstrdup(strchr(line, ':') + 1);
            unescape(*dst);
        }
    }
fallback:
    if (fa_ok)
        posix_spawn_file_actions_destroy(&fa);
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    if (!*homedir) {
        const char *g = env_get(env, "GNUPGHOME");
        *homedir = g ? xstrdup(g) : xasprintf("%s/.gnupg", home);
    }
    if (!*socket_path)
        *socket_path = xasprintf("%s/S.gpg-agent.extra", *homedir);
}

static int resolve_gpg(struct sandbox_config *cfg, const struct str_list *areas, char *const *env,
                       const char *home, char *err, size_t errlen)
{
    static const char what[] = "grants.gpg_agent (--allow-gpg-agent)";
    /* The public keyring only: the keys' owners and the trust in them. The private keys stay
     * with the agent (private-keys-v1.d, never bound), which, on its restricted socket, signs
     * and decrypts without handing them out. Inside, gpg finds that socket under the main
     * socket's name. */
    static const char *const keyring[] = {"pubring.kbx", "pubring.gpg", "trustdb.gpg"};
    char *homedir, *sock;
    gpg_dirs(env, home, &homedir, &sock);
    int r = -1;
    struct stat st;
    if (homedir[0] != '/' || sock[0] != '/') {
        snprintf(err, errlen,
                 "%s: gpg's home %s is not an absolute path; the sandbox was not "
                 "started",
                 what, homedir);
        goto out;
    }
    if (lstat(sock, &st) < 0 && errno == ENOENT) {
        snprintf(err, errlen,
                 "%s: no gpg-agent is listening at %s, its restricted socket (gpgconf --launch "
                 "gpg-agent starts one; extra-socket must not be disabled); the sandbox was not "
                 "started",
                 what, sock);
        goto out;
    }
    if (add_bind(cfg, areas, 's', GRANTS_GNUPG_HOME "/S.gpg-agent", sock, what, err, errlen) < 0)
        goto out;
    size_t found = 0;
    for (size_t i = 0; i < ARRAY_LEN(keyring); i++) {
        char *p = xasprintf("%s/%s", homedir, keyring[i]);
        char *t = xasprintf("%s/%s", GRANTS_GNUPG_HOME, keyring[i]);
        int rc = 0;
        if (lstat(p, &st) == 0) {
            rc = add_bind(cfg, areas, 'f', t, p, what, err, errlen);
            found += i < 2;
        }
        free(p);
        free(t);
        if (rc < 0)
            goto out;
    }
    if (!found) {
        snprintf(err, errlen,
                 "%s: %s holds no public keyring (pubring.kbx or pubring.gpg); the sandbox was "
                 "not started",
                 what, homedir);
        goto out;
    }
    r = 0;
out:
    free(homedir);
    free(sock);
    return r;
}

int grants_resolve(struct sandbox_config *cfg, char *const *env, const char *home, char *err,
                   size_t errlen)
{
    if (!cfg->grant_ssh_agent && !cfg->grant_gpg_agent && cfg->grant_sockets.len == 0)
        return 0;
    if (cfg->block_unix_sockets) {
        snprintf(err, errlen,
                 "profile '%s' grants agent sockets but refuses Unix sockets "
                 "(seccomp.block_unix_sockets): no command could use them; the sandbox was not "
                 "started",
                 cfg->profile ? cfg->profile : "?");
        return -1;
    }
    /* Where a sandboxed command could have planted a link (sandbox_config_link_within). */
    struct str_list areas = {0};
    str_list_push(&areas, cfg->workspace);
    for (size_t i = 0; i < cfg->writable.len; i++)
        str_list_push(&areas, cfg->writable.items[i]);
    int r = -1;
    if (cfg->grant_ssh_agent) {
        static const char what[] = "grants.ssh_agent (--allow-ssh-agent)";
        const char *s = env_get(env, "SSH_AUTH_SOCK");
        if (!s || s[0] != '/') {
            snprintf(err, errlen,
                     "%s: SSH_AUTH_SOCK %s: no ssh-agent to grant; the sandbox was not started "
                     "(--allow-ssh-agent=false runs without it)",
                     what, s ? "is not an absolute path" : "is not set");
            goto out;
        }
        if (add_bind(cfg, &areas, 's', GRANTS_DIR "/ssh_agent.sock", s, what, err, errlen) < 0)
            goto out;
    }
    if (cfg->grant_gpg_agent && resolve_gpg(cfg, &areas, env, home, err, errlen) < 0)
        goto out;
    for (size_t i = 0; i < cfg->grant_sockets.len; i++) {
        const char *item = cfg->grant_sockets.items[i];
        const char *tab = strchr(item, '\t');
        if (!tab)
            continue; /* lua_conv writes every entry with its tab */
        char *name = dup_n(item, (size_t)(tab - item));
        const char *from = tab + 1;
        char *what = xasprintf("grants.sockets.%s", name);
        char *target = xasprintf("%s/%s.sock", GRANTS_DIR, name);
        char *src = NULL;
        if (from[0] == '$') {
            const char *v = env_get(env, from + 1);
            if (v && v[0] == '/')
                src = xstrdup(v);
            else
                snprintf(err, errlen, "%s: from %s: %s; the sandbox was not started", what, from,
                         v ? "not an absolute path" : "the variable is not set");
        } else {
            src = path_expand_home(from, home);
        }
        int rc = src ? add_bind(cfg, &areas, 's', target, src, what, err, errlen) : -1;
        free(name);
        free(what);
        free(target);
        free(src);
        if (rc < 0)
            goto out;
    }
    r = 0;
out:
    str_list_free(&areas);
    return r;
}

/* ---- the relay (host side, a shifted root caller) ----------------------------------------- */

/* Both ways between a and b until neither has more; then the process ends. */
static void relay_copy(int a, int b)
{
    struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
    char buf[16384];
    int open = 2;
    while (open > 0) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        for (int i = 0; i < 2; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = read(p[i].fd, buf, sizeof buf);
            if (n <= 0 || write_all(p[1 - i].fd, buf, (size_t)n) < 0) {
                (void)shutdown(p[1 - i].fd, SHUT_WR);
                p[i].fd = -1; /* poll skips it */
                open--;
            }
        }
    }
}

/* The relay's process: each connection accepted on lfd is connected to the socket captured at
 * start (pfd, an O_PATH descriptor of its inode), from the host's namespace and as root (a
 * process of its own, which dies with its parent). Never returns. */
static char relay_dir[32], relay_path[40];

/* The controller is gone: the relay's socket and folder go with it. */
static void relay_end(int sig)
{
    (void)sig;
    (void)unlink(relay_path);
    (void)rmdir(relay_dir);
    _exit(0);
}

/* Connections relayed at once at most: each is a process of root's on the host, outside the
 * sandbox's cgroup, so a command may not make them without bound. */
#define RELAY_MAX_CONNS 64

/* The socket captured at start: its O_PATH descriptor, device and inode, and its path (named in
 * the line a failed connection gets). */
struct relay_source {
    int pfd;
    dev_t dev;
    ino_t ino;
    const char *path;
};

/* Connect to exactly the captured socket: through /proc/self/fd/N, which the kernel resolves to
 * the descriptor's own inode, never by its path, which a link or another socket may have taken
 * since (root on the host would otherwise connect wherever it names). The inode is checked again
 * on every connection. The connected socket, or -1 after one line on stderr. */
static int relay_connect(const struct relay_source *src)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct stat st;
    int t = -1;
    if (fstat(src->pfd, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_dev != src->dev ||
        st.st_ino != src->ino) {
        errno = ESTALE;
        goto fail;
    }
    snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d", src->pfd);
    t = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (t >= 0 && connect(t, (struct sockaddr *)&sa, sizeof sa) == 0)
        return t;
fail:
    dprintf(2,
            "cordon: grant %s: the socket captured at start does not answer (%s); what its path "
            "names now is not connected to\n",
            src->path, strerror(errno));
    if (t >= 0)
        close(t);
    return -1;
}

CORDON_NORETURN static void relay_serve(int lfd, const struct relay_source *src)
{
    signal(SIGTERM, relay_end);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    unsigned active = 0;
    for (;;) {
        while (active > 0 && waitpid(-1, NULL, WNOHANG) > 0)
            active--;
        if (active >= RELAY_MAX_CONNS) { /* the next waits for one to end */
            if (waitpid(-1, NULL, 0) > 0)
                active--;
            continue;
        }
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            _exit(0);
        }
        pid_t pid = fork();
        if (pid == 0) {
            (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
            close(lfd);
            int t = relay_connect(src);
            if (t >= 0)
                relay_copy(c, t);
            _exit(0);
        }
        if (pid > 0)
            active++;
        close(c);
    }
}

/* The source socket, opened O_PATH with no symbolic link on the way (the controller made the
 * path canonical; one swapped in since is refused) and checked to be a socket. */
static int relay_capture_source(const char *source, struct relay_source *src, char *why, size_t len)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    struct stat st;
    int pfd = (int)syscall(SYS_openat2, AT_FDCWD, source, &how, sizeof how);
    if (pfd < 0) {
        snprintf(why, len, "the relay of %s: %s", source,
                 errno == ELOOP ? "a symbolic link appeared on the way since the path was "
                                  "resolved: refused"
                                : strerror(errno));
        return -1;
    }
    if (fstat(pfd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
        snprintf(why, len, "the relay of %s: no longer a socket: refused", source);
        close(pfd);
        return -1;
    }
    *src = (struct relay_source){.pfd = pfd, .dev = st.st_dev, .ino = st.st_ino, .path = source};
    return 0;
}

int grants_relay(const char *source, int owner_ns, char *why, size_t len)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char dir[] = "/tmp/cordon-grant.XXXXXX";
    struct relay_source src = {.pfd = -1};
    int lfd = -1, fd = -1;
    if (relay_capture_source(source, &src, why, len) < 0)
        return -1;
    if (!mkdtemp(dir)) {
        snprintf(why, len, "mkdtemp %s: %s", dir, strerror(errno));
        close(src.pfd);
        return -1;
    }
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/s", dir);
    lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 64) < 0) {
        snprintf(why, len, "the relay of %s: %s", source, strerror(errno));
        goto out;
    }
    /* The socket's own inode, bound in at the grant's place: a connection to it inside reaches
     * this listener, whatever becomes of the path here. */
    fd = open_tree(AT_FDCWD, sa.sun_path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                          MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                              .userns_fd = (uint64_t)owner_ns,
                              .propagation = MS_PRIVATE};
    if (fd < 0 || mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
        snprintf(why, len, "the relay of %s: %s", source, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
        goto out;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, len, "the relay of %s: fork: %s", source, strerror(errno));
        close(fd);
        fd = -1;
        goto out;
    }
    if (pid == 0) {
        /* The path must stay while init attaches the detached tree (the kernel attaches no mount
         * whose root is unlinked): the relay removes it when the controller ends. */
        snprintf(relay_dir, sizeof relay_dir, "%s", dir);
        snprintf(relay_path, sizeof relay_path, "%s/s", dir);
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() == 1)
            relay_end(0);
        /* Nothing of the controller's but the listener, the source and stderr (for the one
         * line a refused connection gets; the relay ends with the controller, so it holds the
         * caller's pipe no longer than the controller does). */
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int i = 0; i < 2 && null >= 0; i++)
            (void)dup2(null, i);
        int keep_lo = lfd < src.pfd ? lfd : src.pfd, keep_hi = lfd < src.pfd ? src.pfd : lfd;
        (void)syscall(SYS_close_range, 3u, (unsigned)keep_lo - 1u, 0u);
        if (keep_hi > keep_lo + 1)
            (void)syscall(SYS_close_range, (unsigned)keep_lo + 1u, (unsigned)keep_hi - 1u, 0u);
        (void)syscall(SYS_close_range, (unsigned)keep_hi + 1u, ~0u, 0u);
        relay_serve(lfd, &src);
    }
    close(lfd);
    close(src.pfd);
    return fd;
out:
    if (src.pfd >= 0)
        close(src.pfd);
    (void)unlink(sa.sun_path);
    (void)rmdir(dir);
    if (lfd >= 0)
        close(lfd);
    return fd;
}

/* ---- in init ---------------------------------------------------------------------------- */

void grants_release(struct grants_trees *gc)
{
    for (size_t i = 0; i < gc->n; i++) {
        if (gc->fds[i] >= 0)
            close(gc->fds[i]);
        free(gc->targets[i]);
    }
    free(gc->fds);
    free(gc->targets);
    memset(gc, 0, sizeof *gc);
}

/* Nothing is written through a grant: a socket is connected to (which a read-only mount allows),
 * a keyring file only read. */
#define GRANT_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)

/* The source of one "KIND TARGET\tSOURCE" bind, opened with no link on the way and checked on
 * the fd that is then cloned: a socket swapped for a link or a directory since the controller
 * looked is refused, not followed. */
static int detached_tree_of(const char *bind, struct mnt_err *e)
{
    const char *src = strchr(bind, '\t') + 1;
    struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int pfd = (int)syscall(SYS_openat2, AT_FDCWD, src, &how, sizeof how);
    struct stat st;
    if (pfd < 0 && errno == ELOOP) {
        snprintf(e->buf, e->len,
                 "sandbox set-up: grant %s: a symbolic link appeared on the way since the path "
                 "was resolved: refused",
                 src);
        return -1;
    }
    if (pfd < 0)
        return mnt_fail(e, "open", src);
    if (fstat(pfd, &st) < 0 || (bind[0] == 's' ? !S_ISSOCK(st.st_mode) : !S_ISREG(st.st_mode))) {
        snprintf(e->buf, e->len, "sandbox set-up: grant %s: no longer a %s: refused", src,
                 bind[0] == 's' ? "socket" : "regular file");
        close(pfd);
        return -1;
    }
    int fd = open_tree(pfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
    close(pfd);
    if (fd < 0)
        return mnt_fail(e, "open_tree", src);
    int r = mnt_setattr_fd(fd, GRANT_ATTRS); /* -ENOSYS: grants_apply sets them */
    if (r < 0 && r != -ENOSYS) {
        errno = -r;
        mnt_fail(e, "mount_setattr", src);
        close(fd);
        return -1;
    }
    return fd;
}

static int *given;
static size_t n_given;

void grants_use_sources(const int *fds, size_t n)
{
    given = xcalloc(n + 1, sizeof *given);
    memcpy(given, fds, n * sizeof *given);
    n_given = n;
}

/* A source the controller took detached (grants_use_sources): its type checked on the very mount. */
static int take_given(size_t i, const char *bind, struct mnt_err *e)
{
    const char *src = strchr(bind, '\t') + 1;
    struct stat st;
    int fd = given[i];
    given[i] = -1;
    if (fd < 0 || fstat(fd, &st) < 0 ||
        (bind[0] == 's' ? !S_ISSOCK(st.st_mode) : !S_ISREG(st.st_mode))) {
        snprintf(e->buf, e->len, "sandbox set-up: grant %s: no longer a %s: refused", src,
                 bind[0] == 's' ? "socket" : "regular file");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int grants_take_trees(const struct sandbox_config *cfg, struct grants_trees *gc, struct mnt_err *e)
{
    memset(gc, 0, sizeof *gc);
    size_t n = cfg->grant_binds.len;
    gc->fds = xcalloc(n + 1, sizeof *gc->fds);
    gc->targets = xcalloc(n + 1, sizeof *gc->targets);
    for (size_t i = 0; i < n; i++) {
        const char *b = cfg->grant_binds.items[i];
        const char *tab = strchr(b, '\t');
        if ((b[0] != 's' && b[0] != 'f') || !tab || b[1] != '/') {
            snprintf(e->buf, e->len, "sandbox set-up: a malformed grant from the controller");
            grants_release(gc);
            return -1;
        }
        if ((gc->fds[gc->n] = i < n_given ? take_given(i, b, e) : detached_tree_of(b, e)) < 0) {
            grants_release(gc);
            return -1;
        }
        gc->targets[gc->n] = dup_n(b + 1, (size_t)(tab - b - 1));
        gc->gnupg |= path_is_within(gc->targets[gc->n++], GRANTS_GNUPG_HOME);
    }
    return 0;
}

/* GNUPGHOME inside: the caller's uid's own directory (0700, so gpg finds nothing unsafe) with
 * a configuration that keeps gpg and gpgsm from starting an agent of their own there, which
 * would hold no keys; and with no trust database check that would try to write the caller's
 * read-only trustdb.gpg. */
static int gnupg_home(struct mnt_err *e)
{
    static const char conf[] = "# cordon: the caller's gpg-agent, granted (--allow-gpg-agent)\n"
                               "no-autostart\nno-auto-check-trustdb\n";
    static const char common[] = "# cordon: the caller's gpg-agent, granted (--allow-gpg-agent)\n"
                                 "no-autostart\n";
    if (mkdir_parents(GRANTS_GNUPG_HOME, 0755) < 0 ||
        (mkdir(GRANTS_GNUPG_HOME, 0700) < 0 && errno != EEXIST))
        return mnt_fail(e, "mkdir", GRANTS_GNUPG_HOME);
    static const char *const names[] = {GRANTS_GNUPG_HOME "/gpg.conf",
                                        GRANTS_GNUPG_HOME "/common.conf"};
    const char *const bodies[] = {conf, common};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        int fd = open(names[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        int r = fd < 0 ? -errno : write_all(fd, bodies[i], strlen(bodies[i]));
        if (fd >= 0 && close(fd) < 0 && r == 0)
            r = -errno;
        if (r < 0) {
            errno = -r;
            return mnt_fail(e, "writing", names[i]);
        }
    }
    return 0;
}

int grants_apply(struct grants_trees *gc, struct mnt_err *e)
{
    if (gc->gnupg && gnupg_home(e) < 0)
        return -1;
    for (size_t i = 0; i < gc->n; i++) {
        if (mnt_attach(e, gc->fds[i], gc->targets[i], true) < 0 ||
            (mnt_setattr_lacking() && mnt_setattr(e, gc->targets[i], false, GRANT_ATTRS, 0) < 0))
            return -1;
        close(gc->fds[i]);
        gc->fds[i] = -1;
    }
    return 0;
}
