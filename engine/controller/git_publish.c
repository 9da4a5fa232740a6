/* git_publish.c — see git_publish.h. A thread of its own polls the listener and answers each
 * notification at once:
 *   1. read the two paths from /proc/PID/mem, then check the notification is still live (the
 *      pid named the caller while we read);
 *   2. a target whose last component is not config / config.worktree: CONTINUE at once (the
 *      cost of every other rename is this much);
 *   3. resolve both parents as the caller sees them (its root, cwd or dirfd, through /proc/PID)
 *      with no symbolic link; a parent that is a git directory (HEAD, and objects/ or
 *      commondir) inside a mediated tree (the workspace, a writable path outside it), found
 *      again from the host's fd of that tree as the same
 *      inode, holding the same target (or none on both sides: git creating it), with the source
 *      being the target's ".lock" beside it: mediate; else CONTINUE (the kernel renames; onto
 *      the read-only bind that fails with EBUSY);
 *   4. mediate: read the lock and the current file on the host (openat2 beneath the workspace,
 *      no links, regular files of at most GIT_PUBLISH_MAX bytes, the same inodes the caller
 *      sees), parse both; an entry the current file does not have that is not on the allowlist
 *      (base/git_config.h: key and value; a remote URL's local path must lie outside every
 *      writable area as the host resolves it; core.worktree only a submodule's, inside its
 *      tree, with no link on the way): EPERM and one line per key; else write
 *      the new text into the host's file in place (the sandbox's bind pins that inode; a new
 *      one is created exclusively), unlink the lock, reply 0.
 * An unlink, unlinkat or rmdir (the same filter's) is read the same way and handed to
 * hold_unlink.h, which lets most go at once and removes what a repository's hold keeps
 * read-only inside on the host.
 * Uses base/git_config, base/util, base/log, sandbox/rename_notify, controller/caller_path,
 * controller/hold_unlink, and the sandbox's
 * configuration (sandbox/sandbox-t.h) for what it writes on the host. The lines go to the
 * caller's own stderr (its fd 2, taken with pidfd_getfd: written only when that cannot block),
 * else to cordon's log. */
#include "controller/git_publish.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>

#include "base/git_config.h"
#include "base/log.h"
#include "base/util.h"
#include "controller/caller_path.h"
#include "controller/hold_unlink.h"
#include "controller/home_create_guard.h"
#include "controller/repo_watch.h"
#include "sandbox/rename_notify.h"
#include "sandbox/review_layer.h"
#include "sandbox/sandbox-t.h"

/* Linux 6.6: the listener's wake-ups switch straight to the supervisor and back, on the
 * caller's CPU, instead of through the scheduler (older uapi headers lack the names). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* A git config larger than this is not one git wrote for a person: refused. */
#define GIT_PUBLISH_MAX (1024 * 1024)

struct git_publish {
    pthread_t thread;
    int stop_fd; /* eventfd: the thread ends when it is readable */
    int listener;
    /* The trees mediated (the workspace, writable paths outside it: guarded_trees_roots), each
     * canonical with an O_PATH fd of it on the host (-1: that tree is not mediated). */
    size_t n_roots;
    char **root;
    int *root_fd;
    /* Every host path the sandbox writes (the workspace, writable paths, the home's layer),
     * canonical: a remote URL into one of them is refused. */
    struct str_list writable;
    /* /proc/PID/mem of the last caller: a process renaming many files (a package manager)
     * costs one open. It holds that process's memory only: a pid used again by another
     * process reads nothing through it (the old memory is gone), and is opened anew. */
    int mem_fd;
    pid_t mem_pid;
    /* when the listener came, before any command ran: a repository born later is a command's
     * (hold_unlink.h) */
    long long since_ns;
    struct str_list dead_admins; /* admin folders of gone worktrees (worktree_admin.h) */
    struct seccomp_notif_sizes sizes;
    struct seccomp_notif *req;
    struct seccomp_notif_resp *resp;
    /* new names in the copy-on-write home (home_create_guard.h), or NULL */
    struct home_create_guard *home_guard;
};

/* What one rename gets. */
struct verdict {
    bool cont;   /* let the kernel do it */
    int error;   /* else: 0 (done) or a positive errno */
    char *lines; /* what to tell the caller, "\n"-separated, or NULL */
};

static void add_line(struct verdict *v, const char *fmt, ...) CORDON_PRINTF(2, 3);
static void add_line(struct verdict *v, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char *n = xasprintf("%s%s\n", v->lines ? v->lines : "", line);
    free(v->lines);
    v->lines = n;
}

/* The NUL-terminated string at addr in pid's memory, into buf. 0 or -errno. */
static int read_string(int mem, uint64_t addr, char *buf, size_t size)
{
    size_t got = 0;
    while (got < size) {
        /* up to the end of the page: the next one may be unmapped */
        size_t room = 4096 - (size_t)((addr + got) % 4096);
        if (room > size - got)
            room = size - got;
        ssize_t n = pread(mem, buf + got, room, (off_t)(addr + got));
        if (n <= 0)
            return n < 0 ? -errno : -EFAULT;
        if (memchr(buf + got, '\0', (size_t)n))
            return 0;
        got += (size_t)n;
    }
    return -ENAMETOOLONG;
}

static bool is_config_name(const char *base)
{
    return strcmp(base, "config") == 0 || strcmp(base, "config.worktree") == 0;
}

static const char *last_component(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The string at addr in pid's memory, into buf (the open /proc/PID/mem kept for the next). */
static int mem_string(struct git_publish *g, pid_t pid, uint64_t addr, char *buf, size_t size)
{
    int r = -ESRCH;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (g->mem_fd < 0 || g->mem_pid != pid || attempt > 0) {
            char mem_path[64];
            if (g->mem_fd >= 0)
                close(g->mem_fd);
            snprintf(mem_path, sizeof mem_path, "/proc/%d/mem", (int)pid);
            g->mem_fd = open(mem_path, O_RDONLY | O_CLOEXEC);
            g->mem_pid = pid;
            if (g->mem_fd < 0)
                return -errno;
        }
        r = read_string(g->mem_fd, addr, buf, size);
        if (r == 0 || r == -ENAMETOOLONG)
            break;
    }
    return r;
}

/* The target path and, when it names a config file, the source path, from pid's memory. */
static int read_paths(struct git_publish *g, pid_t pid, uint64_t to_addr, char *to,
                      uint64_t from_addr, char *from, size_t size)
{
    int r = mem_string(g, pid, to_addr, to, size);
    if (r < 0)
        return r;
    if (!is_config_name(last_component(to)))
        return 1;
    return read_string(g->mem_fd, from_addr, from, size);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static bool is_git_dir(int dfd)
{
    struct stat st;
    if (fstatat(dfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) < 0)
        return false;
    if (fstatat(dfd, "objects", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
        return true;
    return fstatat(dfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* Read the regular file name in host_dir (no link, at most GIT_PUBLISH_MAX bytes), which must
 * be the inode want: its fd (flags O_RDONLY or O_RDWR) and its text. -errno. */
static int read_host_file(int host_dir, const char *name, int flags, const struct stat *want,
                          int *fd_out, char **text, size_t *len)
{
    struct stat st;
    int fd = cp_openat2(host_dir, name, flags | O_NOFOLLOW | O_NONBLOCK,
                        RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    if (fd < 0)
        return fd;
    int r = fstat(fd, &st) < 0 ? -errno : 0;
    if (r == 0 && (!S_ISREG(st.st_mode) || !same_file(&st, want)))
        r = -ESTALE; /* not the file the sandbox names */
    if (r == 0 && st.st_size > GIT_PUBLISH_MAX)
        r = -EFBIG;
    if (r == 0)
        r = read_fd(fd, GIT_PUBLISH_MAX, text, len);
    if (r < 0 || !fd_out)
        close(fd);
    else
        *fd_out = fd;
    return r;
}

/* git's own spelling of the section and name (base/git_config.h lower-cases them), so that the
 * line names the key as its documentation does. */
static char *display_key(const char *key)
{
    static const char *const names[] = {"hooksPath",
                                        "sshCommand",
                                        "gitProxy",
                                        "askPass",
                                        "alternateRefsCommand",
                                        "packObjectsHook",
                                        "diffFilter",
                                        "recentObjectsHook",
                                        "templateDir",
                                        "authorsProg",
                                        "defaultKeyCommand",
                                        "includeIf",
                                        "smtpServer",
                                        "sendmailCmd",
                                        "toCmd",
                                        "ccCmd",
                                        "headerCmd",
                                        "cookieFile",
                                        "saveCookies",
                                        "sslVerify",
                                        "sslCAInfo",
                                        "insteadOf",
                                        "pushInsteadOf",
                                        "excludesFile",
                                        "attributesFile"};
    char *out = xstrdup(key);
    char *first = strchr(out, '.'), *last = strrchr(out, '.');
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        if (first && strncasecmp(out, names[i], (size_t)(first - out)) == 0 &&
            strlen(names[i]) == (size_t)(first - out))
            memcpy(out, names[i], strlen(names[i]));
        if (last && strcasecmp(last + 1, names[i]) == 0)
            memcpy(last + 1, names[i], strlen(names[i]));
    }
    return out;
}

static bool has_entry(const struct git_config *c, const struct git_config_entry *e)
{
    for (size_t i = 0; i < c->len; i++) {
        const struct git_config_entry *o = &c->items[i];
        if (strcmp(o->key, e->key) != 0)
            continue;
        if ((!o->value && !e->value) || (o->value && e->value && strcmp(o->value, e->value) == 0))
            return true;
    }
    return false;
}

/* "." or ".." as a component of path, after its leading ".." (when lead) */
static bool has_dot_component(const char *path, bool lead)
{
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        const char *seg = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - seg);
        bool dotdot = n == 2 && seg[0] == '.' && seg[1] == '.';
        if (lead && dotdot)
            continue;
        lead = false;
        if ((n == 1 && seg[0] == '.') || dotdot)
            return true;
    }
    return false;
}

/* Where the host's kernel takes path (absolute): its longest leading part that exists,
 * resolved (links followed, as git's open would), with the rest appended. NULL when that
 * cannot be told: the rest holds "." or "..", or a part cannot be looked at. */
static char *host_resolve(const char *path)
{
    size_t cut = strlen(path);
    for (;;) {
        char *prefix = cut ? xasprintf("%.*s", (int)cut, path) : xstrdup("/");
        char *real = realpath(prefix, NULL);
        int e = errno;
        free(prefix);
        if (real) {
            const char *rest = path + cut;
            char *out = NULL;
            if (!has_dot_component(rest, false))
                out = path_absolute(*rest ? rest + 1 : ".", real);
            free(real);
            return out;
        }
        if ((e != ENOENT && e != ENOTDIR) || cut == 0)
            return NULL;
        while (cut > 0 && path[cut - 1] == '/')
            cut--;
        while (cut > 0 && path[cut - 1] != '/')
            cut--;
        while (cut > 1 && path[cut - 1] == '/')
            cut--;
        if (cut == 1)
            cut = 0;
    }
}

/* The writable area that holds abs (lexically), or NULL. */
static const char *in_writable(const struct git_publish *g, const char *abs)
{
    for (size_t i = 0; i < g->writable.len; i++)
        if (path_is_within(abs, g->writable.items[i]))
            return g->writable.items[i];
    return NULL;
}

/* A remote URL naming the local path path, in the config of git_dir (the sandbox's name for it,
 * the same as the host's: every mediated tree is seen at its own path): NULL when the host's
 * git would open a repository outside every writable area; else why not. A relative path is
 * taken against the git directory, its parent and the config's work tree (git resolves it
 * against where it runs), and must be outside for each; the kernel's reading (links followed)
 * and the lexical one must both be outside. */
static const char *local_path_why(const struct git_publish *g, const char *path,
                                  const char *git_dir, const char *work_tree)
{
    char *parent = path_absolute("..", git_dir);
    char *tree = work_tree ? path_absolute(work_tree, git_dir) : NULL;
    const char *bases[] = {git_dir, parent, tree};
    const char *why = NULL;
    for (size_t i = 0; i < ARRAY_LEN(bases) && !why; i++) {
        if (!bases[i] || (path[0] == '/' && i > 0))
            continue;
        char *raw = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", bases[i], path);
        char *lexical = path_absolute(raw, "/");
        char *real = host_resolve(raw);
        if (!real)
            why = "a local path whose place on the host cannot be told";
        else if (in_writable(g, lexical) || in_writable(g, real))
            why = "a local path the sandbox writes, in the workspace, a writable path or the "
                  "home's layer, where the command can plant a repository whose hooks the host's "
                  "git runs";
        free(raw);
        free(lexical);
        free(real);
    }
    free(parent);
    free(tree);
    return why;
}

/* core.worktree names where the host's git checks the repository's files out (relative: to the
 * git directory). git writes it for a submodule (.git/modules/<name>, its work tree in the
 * superproject's); anywhere else it only serves to move a checkout. Written when the git
 * directory is a submodule's, the value climbs with leading ".." only, lands inside the same
 * tree, and no part of the way that exists on the host is a link. NULL, or why not. */
static const char *work_tree_why(const struct git_publish *g, size_t root, const char *value,
                                 const char *git_dir)
{
    if (!strstr(git_dir, "/.git/modules/"))
        return "moves the work tree of a repository that is not a submodule's";
    if (value[0] == '~' || has_dot_component(value, value[0] != '/'))
        return "a work tree that is not a plain path";
    char *where = path_absolute(value, git_dir);
    const char *why = NULL;
    if (!path_is_within(where, g->root[root]) || strcmp(where, g->root[root]) == 0) {
        why = "points the work tree outside the tree the repository is in";
        goto out;
    }
    /* the part of the way that exists, beneath the tree, with no link: ENOENT cuts one part */
    char *rel = xstrdup(where + strlen(g->root[root]) + 1);
    for (;;) {
        int fd = cp_openat2(g->root_fd[root], rel, O_PATH,
                            RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (fd >= 0) {
            close(fd);
            break;
        }
        char *slash = strrchr(rel, '/');
        if (fd != -ENOENT || !slash) {
            if (fd == -ELOOP || fd == -EXDEV)
                why = "a work tree whose way on the host passes a link";
            else if (fd != -ENOENT)
                why = "a work tree whose way on the host cannot be looked at";
            break;
        }
        *slash = '\0';
    }
    free(rel);
out:
    free(where);
    return why;
}

/* value as a shell word for the line's `git config` (single-quoted when needed), or NULL when
 * it is too long or not plain text: the line then says VALUE. */
static char *shell_word(const char *value)
{
    if (!value)
        return xstrdup("true");
    size_t n = strlen(value);
    bool plain = n > 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)value[i];
        if (c < ' ' || c == 0x7f || c >= 0x80)
            return NULL;
        if (!(isalnum(c) || strchr("@%+=:,./_-", c)))
            plain = false;
    }
    if (n > 200)
        return NULL;
    if (plain)
        return xstrdup(value);
    char *out = xmalloc(4 * n + 3), *o = out;
    *o++ = '\'';
    for (size_t i = 0; i < n; i++) {
        if (value[i] == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = value[i];
        }
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

/* The key as the line shows it: git's spelling, with any byte a terminal could act on shown
 * as \xNN (a subsection may hold them; such a key is refused anyway). */
static char *shown_key(const char *key)
{
    char *k = display_key(key);
    size_t n = strlen(k);
    char *out = xmalloc(4 * n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)k[i];
        if (c <= ' ' || c == 0x7f || c >= 0x80)
            o += sprintf(o, "\\x%02x", c);
        else
            *o++ = (char)c;
    }
    *o = '\0';
    free(k);
    return out;
}

/* The value of key in c (the last one, as git reads it), or NULL. */
static const char *config_get(const struct git_config *c, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < c->len; i++)
        if (strcmp(c->items[i].key, key) == 0)
            v = c->items[i].value;
    return v;
}

/* Why e (an entry the command adds or changes in the config of git_dir, in tree root) is not
 * written, or NULL: the allowlist (base/git_config.h), and where a value names a place, that
 * place as the host sees it. */
static const char *refusal(const struct git_publish *g, size_t root, const struct git_config *c,
                           const struct git_config_entry *e, const char *git_dir)
{
    const char *why = NULL, *path = NULL;
    switch (git_config_judge(c, e, &why, &path)) {
    case GIT_CONFIG_ALLOW:
        return NULL;
    case GIT_CONFIG_REFUSE:
        return why;
    case GIT_CONFIG_LOCAL_PATH:
        return local_path_why(g, path, git_dir, config_get(c, "core.worktree"));
    case GIT_CONFIG_WORK_TREE:
        return work_tree_why(g, root, path, git_dir);
    }
    return "cannot be judged";
}

/* Mediated writes against the guard's check: see git_publish_writes_pause. */
static pthread_mutex_t writes_lock = PTHREAD_MUTEX_INITIALIZER;

void git_publish_writes_pause(void)
{
    pthread_mutex_lock(&writes_lock);
}

void git_publish_writes_resume(void)
{
    pthread_mutex_unlock(&writes_lock);
}

/* Step 4: rel is the config's path, for the lines; git_dir its directory as the sandbox and the
 * host both name it; root the mediated tree holding it. */
static void mediate(const struct git_publish *g, size_t root, int host_dir, const char *base,
                    const char *lock, const struct stat *target, const struct stat *source,
                    const char *rel, const char *git_dir, struct verdict *v)
{
    char *new_text = NULL, *old_text = NULL, err[200];
    size_t new_len = 0, old_len = 0;
    int cfg_fd = -1;
    struct git_config new_cfg = {0}, old_cfg = {0};
    size_t refused = 0;
    v->error = EPERM;
    int r = read_host_file(host_dir, lock, O_RDONLY, source, NULL, &new_text, &new_len);
    if (r < 0) {
        add_line(v, "cordon: refused writing %s: cannot read its new text: %s", rel, strerror(-r));
        goto out;
    }
    if (target) {
        r = read_host_file(host_dir, base, O_RDWR, target, &cfg_fd, &old_text, &old_len);
        if (r < 0) {
            add_line(v, "cordon: refused writing %s: cannot open it on the host: %s", rel,
                     strerror(-r));
            goto out;
        }
    } else {
        old_text = xstrdup(""); /* a config git creates: judged against nothing */
    }
    if (git_config_parse(new_text, new_len, &new_cfg, err, sizeof err) < 0) {
        add_line(v, "cordon: refused writing %s: its new text is not git config (%s)", rel, err);
        goto out;
    }
    if (git_config_parse(old_text, old_len, &old_cfg, err, sizeof err) < 0) {
        add_line(v, "cordon: refused writing %s: its current text is not git config (%s)", rel,
                 err);
        goto out;
    }
    for (size_t i = 0; i < new_cfg.len; i++) {
        const struct git_config_entry *e = &new_cfg.items[i];
        /* there before: the host's own setting, kept as it was, unless the write changes
         * what it means */
        bool kept = has_entry(&old_cfg, e);
        const char *why = kept ? git_config_judge_kept(&old_cfg, &new_cfg, e)
                               : refusal(g, root, &new_cfg, e, git_dir);
        if (!why || refused++ >= 8)
            continue;
        char *shown = shown_key(e->key), *word = shell_word(e->value), *file = shell_word(rel);
        if (kept)
            add_line(v,
                     "cordon: refused git setting %s (%s): if you mean it, run the same git "
                     "command outside the sandbox; %s is unchanged",
                     shown, why, rel);
        else
            add_line(v,
                     "cordon: refused git setting %s (%s): if you mean it, run outside the "
                     "sandbox: git config --file %s %s %s; %s is unchanged",
                     shown, why, file ? file : "FILE", shown, word ? word : "VALUE", rel);
        free(shown);
        free(word);
        free(file);
    }
    if (refused)
        goto out;
    /* A config git creates (config.worktree, a new repository's) is made here once its text
     * is judged, never by the kernel's rename of a text nobody read, and never before: an
     * empty file the guard's walk saw for a moment would be put back as "removed". */
    if (!target) {
        struct open_how how = {.flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               .mode = source->st_mode & 0666,
                               .resolve =
                                   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        cfg_fd = (int)syscall(SYS_openat2, host_dir, base, &how, sizeof how);
        if (cfg_fd < 0) {
            add_line(v, "cordon: refused writing %s: cannot make it on the host: %s", rel,
                     strerror(errno));
            goto out;
        }
    }
    /* In place: the sandbox's read-only bind is of this inode; a rename on the host would
     * leave the sandbox reading the old file. Room first (a full disk fails before any byte
     * changes, where the file system can say; the size kept, so no reader sees a tail of
     * zeros), written, then cut: a reader in between sees the new text followed by the old
     * one's tail at worst, for a moment. A write that fails half-way puts the old text back. */
    int fr = new_len > old_len && fallocate(cfg_fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)new_len) < 0
                 ? errno
                 : 0;
    if (fr != 0 && fr != EOPNOTSUPP && fr != ENOSYS) {
        add_line(v, "cordon: refused writing %s: no room for it on the host: %s", rel,
                 strerror(fr));
        goto out;
    }
    ssize_t n = new_len ? pwrite(cfg_fd, new_text, new_len, 0) : 0;
    if (n != (ssize_t)new_len || ftruncate(cfg_fd, (off_t)new_len) < 0) {
        int e = n >= 0 && n != (ssize_t)new_len ? ENOSPC : errno;
        bool restored = target ? pwrite(cfg_fd, old_text, old_len, 0) == (ssize_t)old_len &&
                                     ftruncate(cfg_fd, (off_t)old_len) == 0
                               : unlinkat(host_dir, base, 0) == 0;
        add_line(v, "cordon: refused writing %s: writing it on the host failed: %s%s", rel,
                 strerror(e),
                 restored ? "" : " (and putting the old text back failed: look at it)");
        goto out;
    }
    if (unlinkat(host_dir, lock, 0) < 0)
        LOG_W("git", "%s published, but its lock file stays: %s", rel, strerror(errno));
    v->error = 0;
out:
    if (cfg_fd >= 0)
        close(cfg_fd);
    git_config_free(&new_cfg);
    git_config_free(&old_cfg);
    free(new_text);
    free(old_text);
}

/* Steps 3 and 4 for a rename of from onto to (dirfds as the caller passed them). */
static void judge(struct git_publish *g, pid_t pid, int from_dirfd, const char *from, int to_dirfd,
                  const char *to, struct verdict *v)
{
    char *to_abs = NULL, *from_abs = NULL, *lock = NULL;
    int to_dir = -1, from_dir = -1, host_dir = -1;
    struct stat st_to_dir, st_from_dir, st_host_dir, st_target, st_host_target, st_source;
    const char *base = last_component(to);
    v->cont = true;
    lock = xasprintf("%s.lock", base);
    if (strcmp(last_component(from), lock) != 0)
        goto out; /* not git's commit of its lock */
    if ((to_dir = cp_open_parent(pid, to_dirfd, to, &to_abs)) < 0 ||
        (from_dir = cp_open_parent(pid, from_dirfd, from, &from_abs)) < 0)
        goto out;
    if (fstat(to_dir, &st_to_dir) < 0 || fstat(from_dir, &st_from_dir) < 0 ||
        !same_file(&st_to_dir, &st_from_dir) || !is_git_dir(to_dir))
        goto out;
    /* the innermost mediated tree holding it (a writable path inside the workspace is the
     * workspace's) */
    size_t best = g->n_roots;
    for (size_t i = 0; i < g->n_roots; i++)
        if (g->root_fd[i] >= 0 && path_is_within(to_abs, g->root[i]) &&
            (best == g->n_roots || strlen(g->root[i]) > strlen(g->root[best])))
            best = i;
    if (best == g->n_roots)
        goto out; /* a repository of the sandbox's own (in /tmp): its business */
    const char *workspace = g->root[best];
    const char *rel = to_abs + strlen(workspace);
    while (*rel == '/')
        rel++;
    host_dir = cp_openat2(g->root_fd[best], *rel ? rel : ".", O_PATH | O_DIRECTORY,
                          RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    if (host_dir < 0 || fstat(host_dir, &st_host_dir) < 0 || !same_file(&st_host_dir, &st_to_dir))
        goto out; /* not the host's directory (a view of its own): the kernel decides */
    /* the target as both sides see it: the same regular file, or missing on both (git
     * creating it: config.worktree, a new repository's config) */
    bool creating = false;
    if (fstatat(to_dir, base, &st_target, AT_SYMLINK_NOFOLLOW) == 0) {
        if (!S_ISREG(st_target.st_mode) ||
            fstatat(host_dir, base, &st_host_target, AT_SYMLINK_NOFOLLOW) < 0 ||
            !same_file(&st_target, &st_host_target))
            goto out; /* not the host's file: the kernel decides */
    } else if (errno == ENOENT &&
               fstatat(host_dir, base, &st_host_target, AT_SYMLINK_NOFOLLOW) < 0 &&
               errno == ENOENT) {
        creating = true;
    } else {
        goto out;
    }
    v->cont = false;
    /* by its full path: the tree may be the workspace or a writable path elsewhere */
    char *shown = xasprintf("%s/%s", to_abs, base);
    if (fstatat(from_dir, lock, &st_source, AT_SYMLINK_NOFOLLOW) < 0) {
        v->error = EPERM;
        add_line(v, "cordon: refused writing %s: its lock file is gone: %s", shown,
                 strerror(errno));
    } else {
        pthread_mutex_lock(&writes_lock);
        mediate(g, best, host_dir, base, lock, creating ? NULL : &st_target, &st_source, shown,
                to_abs, v);
        pthread_mutex_unlock(&writes_lock);
    }
    free(shown);
out:
    if (to_dir >= 0)
        close(to_dir);
    if (from_dir >= 0)
        close(from_dir);
    if (host_dir >= 0)
        close(host_dir);
    free(to_abs);
    free(from_abs);
    free(lock);
}

/* Write the lines to the caller's fd 2 when that cannot block (a pipe with room, a terminal,
 * a file, a socket without waiting); false when they could not go there. */
static bool tell_caller(pid_t pid, const char *lines)
{
    long pidfd = syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return false;
    long fd = syscall(SYS_pidfd_getfd, (int)pidfd, 2, 0);
    close((int)pidfd);
    if (fd < 0)
        return false;
    size_t len = strlen(lines);
    bool ok = false;
    struct stat st;
    if (fstat((int)fd, &st) == 0) {
        if (S_ISFIFO(st.st_mode)) {
            int size = fcntl((int)fd, F_GETPIPE_SZ), queued = 0;
            ok = size > 0 && ioctl((int)fd, FIONREAD, &queued) == 0 &&
                 (size_t)queued + len <= (size_t)size && write((int)fd, lines, len) == (ssize_t)len;
        } else if (S_ISSOCK(st.st_mode)) {
            ok = send((int)fd, lines, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len;
        } else if (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)) {
            ok = write((int)fd, lines, len) == (ssize_t)len;
        }
    }
    close((int)fd);
    return ok;
}

static void reply(struct git_publish *g, uint64_t id, const struct verdict *v)
{
    memset(g->resp, 0, g->sizes.seccomp_notif_resp);
    g->resp->id = id;
    if (v->cont)
        g->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    else
        g->resp->error = v->error ? -v->error : 0;
    /* ENOENT: the caller is gone (killed while waiting), nothing to answer */
    if (ioctl(g->listener, SECCOMP_IOCTL_NOTIF_SEND, g->resp) < 0 && errno != ENOENT)
        LOG_W("git", "answering a rename: %s", strerror(errno));
}

/* An unlink, unlinkat or rmdir: the kernel's, unless it lands on a hold (hold_unlink.h). */
static void handle_removal(struct git_publish *g, enum rename_call call, struct verdict *v)
{
    const __u64 *a = g->req->data.args;
    pid_t pid = (pid_t)g->req->pid;
    char path[PATH_MAX];
    int dirfd = call == RENAME_CALL_UNLINKAT ? (int)a[0] : AT_FDCWD;
    int flags = call == RENAME_CALL_UNLINKAT ? (int)a[2]
                : call == RENAME_CALL_RMDIR  ? AT_REMOVEDIR
                                             : 0;
    uint64_t addr = call == RENAME_CALL_UNLINKAT ? a[1] : a[0];
    if (mem_string(g, pid, addr, path, sizeof path) < 0 || !hold_unlink_maybe(pid, dirfd, path))
        return;
    /* the pid still names the caller, so what was read is its */
    if (ioctl(g->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &g->req->id) < 0)
        return;
    int r = hold_unlink(pid, dirfd, path, flags, g->n_roots, g->root, g->root_fd, g->since_ns,
                        &g->dead_admins);
    if (r <= 0) {
        v->cont = false;
        v->error = -r;
    }
}

static void handle(struct git_publish *g)
{
    struct seccomp_notif *req = g->req;
    struct verdict v = {.cont = true};
    char from[PATH_MAX], to[PATH_MAX];
    pid_t pid = (pid_t)req->pid;
    enum rename_call call = rename_notify_call(req->data.arch, req->data.nr);
    int refused = 0;
    if (call == RENAME_CALL_NONE) {
        /* a creating call (sandbox/create_notify.h): the home's guard answers it */
        if (home_create_guard_judge(g->home_guard, pid, &req->data, &refused) && refused &&
            ioctl(g->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0)
            v = (struct verdict){.cont = false, .error = refused};
        goto answer;
    }
    const __u64 *a = req->data.args;
    if (call == RENAME_CALL_UNLINK || call == RENAME_CALL_UNLINKAT || call == RENAME_CALL_RMDIR) {
        bool at = call == RENAME_CALL_UNLINKAT;
        if (g->home_guard &&
            (refused = home_create_guard_remove(g->home_guard, pid, at ? (int)a[0] : AT_FDCWD,
                                                at ? a[1] : a[0])) != 0 &&
            ioctl(g->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0)
            v = (struct verdict){.cont = false, .error = refused};
        else if (g->n_roots)
            handle_removal(g, call, &v);
        goto answer;
    }
    int from_dirfd = AT_FDCWD, to_dirfd = AT_FDCWD;
    uint64_t from_addr = a[0], to_addr = a[1];
    if (call != RENAME_CALL_RENAME) {
        from_dirfd = (int)a[0];
        from_addr = a[1];
        to_dirfd = (int)a[2];
        to_addr = a[3];
    }
    /* a rename may make a new name in the home too (RENAME_EXCHANGE makes none), and moves
     * its source away from the home's top */
    bool exchange = call == RENAME_CALL_RENAMEAT2 && (a[4] & RENAME_EXCHANGE);
    if (g->home_guard && !exchange &&
        ((refused = home_create_guard_rename(g->home_guard, pid, to_dirfd, to_addr)) != 0 ||
         (refused = home_create_guard_remove(g->home_guard, pid, from_dirfd, from_addr)) != 0) &&
        ioctl(g->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0) {
        v = (struct verdict){.cont = false, .error = refused};
        goto answer;
    }
    if (g->n_roots == 0 || (call == RENAME_CALL_RENAMEAT2 && a[4] != 0))
        goto answer; /* RENAME_NOREPLACE / EXCHANGE / WHITEOUT: not git's commit */
    if (read_paths(g, pid, to_addr, to, from_addr, from, sizeof to) != 0)
        goto answer; /* not a config file, or unreadable: the kernel's */
    /* the pid still names the caller, so what was read is its */
    if (ioctl(g->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
        goto done;
    judge(g, pid, from_dirfd, from, to_dirfd, to, &v);
    if (v.lines && ioctl(g->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0 &&
        !tell_caller(pid, v.lines))
        fprintf(stderr, "%s", v.lines);
answer:
    reply(g, req->id, &v);
done:
    free(v.lines);
}

/* The thread: poll (so that the listener's hang-up, when the last process of the sandbox is
 * gone, is seen) and answer each notification at once. poll rather than the controller's epoll
 * loop: with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP a poll waiter is woken on the caller's CPU and
 * the caller resumes on the answer's, where epoll's relay of the wake-up loses that (and the
 * loop may be busy with the proxy or the output when a rename comes). */
static void *serve(void *arg)
{
    struct git_publish *g = arg;
    struct pollfd p[2] = {{.fd = g->listener, .events = POLLIN},
                          {.fd = g->stop_fd, .events = POLLIN}};
    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            LOG_E("git", "waiting for the sandbox's renames: %s", strerror(errno));
            break;
        }
        if (p[1].revents)
            break;
        if (p[0].revents & POLLIN) {
            memset(g->req, 0, g->sizes.seccomp_notif);
            if (ioctl(g->listener, SECCOMP_IOCTL_NOTIF_RECV, g->req) == 0)
                handle(g);
            else if (errno != EINTR && errno != ENOENT)
                LOG_W("git", "reading a rename notification: %s", strerror(errno));
        } else if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
            break; /* every process of the sandbox is gone */
        }
    }
    return NULL;
}

/* Add path to g's writable areas, canonical (as it is when it exists). */
static void add_writable(struct git_publish *g, const char *path)
{
    if (!path || path[0] != '/')
        return;
    char *real = realpath(path, NULL);
    str_list_push_owned(&g->writable, real ? real : path_absolute(path, "/"));
}

struct git_publish *git_publish_start(int listener, const struct str_list *roots,
                                      const struct sandbox_config *cfg)
{
    struct git_publish *g = xcalloc(1, sizeof *g);
    g->listener = listener;
    g->mem_fd = -1;
    g->since_ns = repo_watch_now_ns();
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &g->sizes) < 0) {
        g->sizes.seccomp_notif = sizeof(struct seccomp_notif);
        g->sizes.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
    }
    if (g->sizes.seccomp_notif < sizeof(struct seccomp_notif))
        g->sizes.seccomp_notif = sizeof(struct seccomp_notif);
    if (g->sizes.seccomp_notif_resp < sizeof(struct seccomp_notif_resp))
        g->sizes.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
    /* best effort: without it (before 6.6) each rename waits for the scheduler twice */
    (void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    g->home_guard = cfg ? home_create_guard_new(cfg) : NULL;
    g->req = xcalloc(1, g->sizes.seccomp_notif);
    g->resp = xcalloc(1, g->sizes.seccomp_notif_resp);
    g->n_roots = roots ? roots->len : 0;
    g->root = xcalloc(g->n_roots + 1, sizeof *g->root);
    g->root_fd = xcalloc(g->n_roots + 1, sizeof *g->root_fd);
    for (size_t i = 0; i < g->n_roots; i++) {
        g->root[i] = xstrdup(roots->items[i]);
        g->root_fd[i] = open(g->root[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (g->root_fd[i] < 0)
            LOG_W("git", "cannot open %s (%s): its git config writes are not published", g->root[i],
                  strerror(errno));
        add_writable(g, g->root[i]);
    }
    if (cfg) {
        if (cfg->workspace && !cfg->workspace_readonly)
            add_writable(g, cfg->workspace);
        for (size_t i = 0; i < cfg->writable.len; i++)
            add_writable(g, cfg->writable.items[i]);
        /* what a command writes in its home lands in its layer, on the host; the folder
         * holding every workspace's layer, as another workspace's commands write theirs */
        if (cfg->home_mode == SANDBOX_HOME_OVERLAY && cfg->home_layer) {
            char *layers = path_absolute("..", cfg->home_layer);
            add_writable(g, layers);
            free(layers);
        }
    }
    /* what a command writes in a workspace in review mode lands in that workspace's review
     * layer, on the host (the folder of every workspace's layer: review_layer.h) */
    char *reviews = review_layer_root();
    if (reviews)
        add_writable(g, reviews);
    free(reviews);
    /* No rename may wait unanswered: without the thread, no sandbox (the caller's init dies
     * with this process, and the command with it). Signals stay the main thread's. */
    g->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (g->stop_fd < 0)
        die_errno("cannot answer the sandbox's renames: eventfd");
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int r = pthread_create(&g->thread, NULL, serve, g);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0)
        die("cannot answer the sandbox's renames: %s", strerror(r));
    return g;
}

void git_publish_stop(struct git_publish *g)
{
    if (!g)
        return;
    uint64_t one = 1;
    if (write(g->stop_fd, &one, sizeof one) != (ssize_t)sizeof one)
        LOG_W("git", "stopping the rename answers: %s", strerror(errno));
    pthread_join(g->thread, NULL);
    close(g->stop_fd);
    close(g->listener);
    for (size_t i = 0; i < g->n_roots; i++) {
        if (g->root_fd[i] >= 0)
            close(g->root_fd[i]);
        free(g->root[i]);
    }
    free(g->root);
    free(g->root_fd);
    str_list_free(&g->dead_admins);
    str_list_free(&g->writable);
    home_create_guard_free(g->home_guard);
    if (g->mem_fd >= 0)
        close(g->mem_fd);
    free(g->req);
    free(g->resp);
    free(g);
}
