/* repo_watch.c — see repo_watch.h. The thread owns the inotify descriptor, the table of watches
 * and the walks; the caller's side (take, flush) meets it only under the mutex. */
#include "controller/repo_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <linux/openat2.h>

#include "base/log.h"
#include "sandbox/home_own.h"

#define WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)
/* Folders one walk looks into at most (a bound on the loop, not on the trees people have). */
#define WALK_MAX_DIRS 4000000u

struct wd_ent {
    size_t root;
    char *rel; /* NULL: no watch */
};

struct repo_watch {
    size_t n_roots;
    char **root;
    int *root_fd;
    struct repo_hold *hold;
    long long since_ns;
    int ino, efd, cmd;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu */
    struct repo_found *found;
    size_t n_found, cap_found;
    struct str_list lines;
    bool stop;           /* repo_watch_free: the thread does nothing more */
    bool working;        /* a side has the work (claim) */
    bool working_thread; /* ... and it is the thread */
    int refs;            /* the caller and the thread */
    /* the work's (under working) */
    bool walked; /* the first walk done */
    /* the thread's own */
    struct wd_ent *wds;
    size_t n_wds;
    bool limited, limit_said;
    struct str_list seen;  /* "ROOT:b:REL" of what was reported */
    struct str_list bound; /* held since the start (sorted): not asked for again */
    /* the copy-on-write home's top (NULL: none), watched for names the host adds: the view
     * bound its entries at the start, and what comes later is held read-only as it appears */
    char *home;
    struct str_list home_tools; /* its names the layer takes (home_tool_dirs) */
    int home_wd;
};

static int open_in(const struct repo_watch *w, size_t root, const char *rel, int flags)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
                           .resolve =
                               RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, w->root_fd[root], rel[0] ? rel : ".", &how, sizeof how);
}

static char *join(const char *a, const char *b)
{
    return a[0] ? xasprintf("%s/%s", a, b) : xstrdup(b);
}

static const char *base_name(const char *rel)
{
    const char *s = strrchr(rel, '/');
    return s ? s + 1 : rel;
}

/* The name of rel's parent folder ("" at the top). */
static bool parent_named(const char *rel, const char *name)
{
    const char *s = strrchr(rel, '/');
    if (!s)
        return false;
    size_t n = strlen(name), at = (size_t)(s - rel);
    return at >= n && strncmp(s - n, name, n) == 0 && (at == n || s[-(long)n - 1] == '/');
}

static bool has(int dfd, const char *name, mode_t type, struct stat *st)
{
    struct stat tmp;
    struct stat *p = st ? st : &tmp;
    return fstatat(dfd, name, p, AT_SYMLINK_NOFOLLOW) == 0 && (p->st_mode & S_IFMT) == type;
}

static bool before(const struct repo_watch *w, const struct stat *st)
{
    long long ns = (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
    return ns < w->since_ns;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void hold(struct repo_watch *w, size_t root, const char *rel)
{
    if (!w->hold)
        return;
    char *abs = rel[0] ? xasprintf("%s/%s", w->root[root], rel) : xstrdup(w->root[root]);
    const char *key = abs;
    if (w->bound.len &&
        bsearch(&key, w->bound.items, w->bound.len, sizeof *w->bound.items, by_str)) {
        free(abs);
        return;
    }
    int r = repo_hold_path(w->hold, abs);
    if (r < 0 && r != -ENOENT)
        LOG_W("git", "holding %s read-only in the sandbox: %s", abs, strerror(-r));
    free(abs);
}

static void poke(struct repo_watch *w)
{
    uint64_t one = 1;
    (void)!write(w->efd, &one, sizeof one);
}

/* A name held since the start made again (removed through hold_unlink.h, then created): no
 * longer the mount made at the start, so held anew. */
static void unbind(struct repo_watch *w, size_t root, const char *rel, const char *name)
{
    char *abs = rel[0] ? xasprintf("%s/%s/%s", w->root[root], rel, name)
                       : xasprintf("%s/%s", w->root[root], name);
    const char *key = abs;
    char **at = w->bound.len
                    ? bsearch(&key, w->bound.items, w->bound.len, sizeof *w->bound.items, by_str)
                    : NULL;
    if (at) {
        free(*at);
        size_t i = (size_t)(at - w->bound.items);
        memmove(at, at + 1, (w->bound.len - i) * sizeof *at); /* items[len]: NULL */
        w->bound.len--;
    }
    free(abs);
}

/* Found (once), and the caller's loop woken: a name git follows appeared in a repository already
 * found (a planted commondir, which no hold can refuse: a new name) is looked at now. */
static void report(struct repo_watch *w, size_t root, const char *rel, bool bare, bool existing)
{
    char *key = xasprintf("%zu:%c:%s", root, bare ? 'b' : 'w', rel);
    if (str_list_contains(&w->seen, key)) {
        free(key);
        poke(w);
        return;
    }
    str_list_push_owned(&w->seen, key);
    pthread_mutex_lock(&w->mu);
    if (w->n_found == w->cap_found) {
        w->cap_found = w->cap_found ? w->cap_found * 2 : 16;
        w->found = xrealloc(w->found, w->cap_found * sizeof *w->found);
    }
    w->found[w->n_found++] =
        (struct repo_found){.root = root, .rel = xstrdup(rel), .bare = bare, .existing = existing};
    pthread_mutex_unlock(&w->mu);
    uint64_t one = 1;
    (void)!write(w->efd, &one, sizeof one);
}

static void say(struct repo_watch *w, char *line)
{
    pthread_mutex_lock(&w->mu);
    str_list_push_owned(&w->lines, line);
    pthread_mutex_unlock(&w->mu);
    uint64_t one = 1;
    (void)!write(w->efd, &one, sizeof one);
}

/* The folder rel (open at dfd) as a git dir: held and reported once it is one. A `.git` folder
 * is its worktree's (reported as the folder holding it), anything else bare. Returns whether
 * it is a git dir (its objects/, refs/, logs/ then go unwatched). */
static bool look_at_gitdir(struct repo_watch *w, size_t root, const char *rel, int dfd)
{
    static const char *const held[] = {"config", "config.worktree", "hooks", "commondir", "gitdir"};
    bool admin = parent_named(rel, "worktrees") &&
                 (has(dfd, "gitdir", S_IFREG, NULL) || has(dfd, "commondir", S_IFREG, NULL));
    /* HEAD, objects/, refs/: a git dir; objects/, refs/ and a config without HEAD: a common dir
     * a commondir pointer may name (git looks for objects/ and refs/ there) */
    bool gitdir = !admin && has(dfd, "objects", S_IFDIR, NULL) && has(dfd, "refs", S_IFDIR, NULL) &&
                  (has(dfd, "HEAD", S_IFREG, NULL) || has(dfd, "config", S_IFREG, NULL));
    if (!admin && !gitdir)
        return false;
    /* there before the sandbox: its config (a git dir has one once made) and each of the others
     * it has, changed before the start. An admin folder by its commondir and gitdir alone (git
     * writes them when it makes the folder): a config.worktree planted in one that was there
     * is held as it appears, not taken for a folder made during the run. */
    bool existing = true, present[ARRAY_LEN(held)];
    for (size_t i = 0; i < ARRAY_LEN(held); i++) {
        struct stat st;
        bool pointer = strcmp(held[i], "commondir") == 0 || strcmp(held[i], "gitdir") == 0;
        present[i] = fstatat(dfd, held[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                     (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
        if (fstatat(dfd, held[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
            existing = existing && !(i == 0 && !admin);
        else if (!before(w, &st) && (!admin || pointer))
            existing = false;
    }
    /* A linked worktree's admin folder made during the run is compared, not held, so that
     * `git worktree remove` and `prune` can delete it (the check judges its pointers). */
    for (size_t i = 0; i < ARRAY_LEN(held) && (existing || !admin); i++) {
        if (!present[i])
            continue;
        char *p = join(rel, held[i]);
        hold(w, root, p);
        free(p);
    }
    if (strcmp(base_name(rel), ".git") == 0) {
        const char *s = strrchr(rel, '/');
        char *worktree = s ? xasprintf("%.*s", (int)(s - rel), rel) : xstrdup("");
        report(w, root, worktree, false, existing);
        free(worktree);
    } else {
        report(w, root, rel, true, existing);
    }
    return gitdir;
}

/* A `.git` that is a file in the folder rel: its worktree reported. Held only when it was there
 * before the sandbox (`git submodule add` writes a new one twice; what it names is a git dir,
 * held by itself when it lies in the trees, and the check compares the file). */
static void look_at_gitfile(struct repo_watch *w, size_t root, const char *rel, int dfd)
{
    struct stat st;
    if (!has(dfd, ".git", S_IFREG, &st))
        return;
    bool existing = before(w, &st);
    if (existing) {
        char *p = join(rel, ".git");
        hold(w, root, p);
        free(p);
    }
    report(w, root, rel, false, existing);
}

/* Watch the folder open at dfd (rel in root). false when the watches ran out. */
static bool add_watch(struct repo_watch *w, size_t root, const char *rel, int dfd)
{
    if (w->limited)
        return false;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", dfd);
    int wd = inotify_add_watch(w->ino, self, WATCH_MASK);
    if (wd < 0) {
        if (errno == ENOSPC) {
            pthread_mutex_lock(&w->mu); /* read by repo_watch_flush */
            w->limited = true;
            pthread_mutex_unlock(&w->mu);
            if (!w->limit_said) {
                w->limit_said = true;
                say(w, xasprintf("git: the writable trees have more folders than inotify may "
                                 "watch (fs.inotify.max_user_watches): repositories past them "
                                 "are found when each command ends, not as they appear"));
            }
        }
        return false;
    }
    if ((size_t)wd >= w->n_wds) {
        size_t n = (size_t)wd * 2 + 16;
        w->wds = xrealloc(w->wds, n * sizeof *w->wds);
        memset(w->wds + w->n_wds, 0, (n - w->n_wds) * sizeof *w->wds);
        w->n_wds = n;
    }
    free(w->wds[wd].rel); /* the same folder again (moved): its new name */
    w->wds[wd] = (struct wd_ent){.root = root, .rel = xstrdup(rel)};
    return true;
}

/* The walk's state: the folder's path from the root (built in place), the folders left for a
 * walk from the root (deeper than WALK_DEPTH), how many were looked into, one getdents buffer
 * per level. */
#define WALK_DEPTH 128
#define DENTS_BUF (32 * 1024)
#define DENT_MAX (sizeof(struct dirent64) + NAME_MAX + 8) /* the largest record, aligned */
struct walk {
    size_t root, dirs;
    char rel[PATH_MAX];
    struct str_list deeper;
    char *buf[WALK_DEPTH + 1];
};

/* The folder open at fd (taken), rel in w->rel (len bytes): watched, looked at, and its
 * sub-folders walked from its descriptor (no path walked again from the root), depth first. */
static void walk_dir(struct repo_watch *w, struct walk *k, int fd, size_t len, int depth)
{
    k->dirs++;
    add_watch(w, k->root, k->rel, fd);
    if (!k->buf[depth])
        k->buf[depth] = xmalloc(DENTS_BUF);
    char *buf = k->buf[depth];
    /* the names that may make it a git dir or hold one, seen in the listing: only then looked
     * at (most folders cost no call beyond their listing) */
    bool objects = false, pointer = false;
    size_t n_subs = 0, cap = 0;
    char **subs = NULL;
    for (ssize_t got = DENTS_BUF; got > (ssize_t)(DENTS_BUF - DENT_MAX);) {
        /* a listing that left room for the largest entry was the folder's last: no call more
         * to be told so (a sixth of the walk's calls) */
        got = getdents64(fd, buf, DENTS_BUF);
        if (got <= 0)
            break;
        for (ssize_t off = 0; off < got;) {
            struct dirent64 *de = (struct dirent64 *)(buf + off);
            off += de->d_reclen;
            const char *n = de->d_name;
            if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
                continue;
            unsigned char type = de->d_type;
            if (type == DT_UNKNOWN) {
                struct stat st;
                if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
                    continue;
                type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
            }
            if (strcmp(n, "objects") == 0)
                objects = true;
            else if (strcmp(n, "gitdir") == 0 || strcmp(n, "commondir") == 0)
                pointer = true;
            if (type == DT_REG && strcmp(n, ".git") == 0)
                look_at_gitfile(w, k->root, k->rel, fd);
            if (type != DT_DIR)
                continue;
            if (n_subs == cap) {
                cap = cap ? cap * 2 : 16;
                subs = xrealloc(subs, cap * sizeof *subs);
            }
            subs[n_subs++] = xstrdup(n);
        }
    }
    bool gitdir = (objects || pointer) && look_at_gitdir(w, k->root, k->rel, fd);
    for (size_t i = 0; i < n_subs; i++) {
        const char *n = subs[i];
        size_t nl = strlen(n);
        bool skip = (gitdir && (strcmp(n, "objects") == 0 || strcmp(n, "refs") == 0 ||
                                strcmp(n, "logs") == 0 || strcmp(n, "lfs") == 0)) ||
                    k->dirs >= WALK_MAX_DIRS || len + 1 + nl >= sizeof k->rel;
        if (!skip) {
            size_t at = len ? len + 1 : 0;
            if (len)
                k->rel[len] = '/';
            memcpy(k->rel + at, n, nl + 1);
            if (depth + 1 > WALK_DEPTH) {
                str_list_push(&k->deeper, k->rel); /* from the root, later */
            } else {
                int sfd = openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sfd >= 0)
                    walk_dir(w, k, sfd, at + nl, depth + 1);
            }
            k->rel[len] = '\0';
        }
        free(subs[i]);
    }
    free(subs);
    close(fd);
}

/* Walk rel (in root) and everything below it: watch each folder, look at each for a
 * repository. Recursion to WALK_DEPTH levels, then again from the root for what lies deeper (a
 * command may nest folders without end). */
static void walk(struct repo_watch *w, size_t root, const char *start)
{
    struct walk *k = xcalloc(1, sizeof *k);
    k->root = root;
    str_list_push(&k->deeper, start);
    while (k->deeper.len && k->dirs < WALK_MAX_DIRS) {
        char *rel = k->deeper.items[--k->deeper.len];
        int fd = strlen(rel) < sizeof k->rel ? open_in(w, root, rel, O_RDONLY | O_DIRECTORY) : -1;
        if (fd >= 0) {
            snprintf(k->rel, sizeof k->rel, "%s", rel);
            walk_dir(w, k, fd, strlen(k->rel), 0);
        }
        free(rel);
    }
    if (k->deeper.len)
        say(w, xasprintf("git: stopped looking for repositories in %s after %u folders",
                         w->root[root], WALK_MAX_DIRS));
    str_list_free(&k->deeper);
    for (size_t i = 0; i < ARRAY_LEN(k->buf); i++)
        free(k->buf[i]);
    free(k);
}

static void walk_all(struct repo_watch *w)
{
    for (size_t i = 0; i < w->n_roots; i++)
        walk(w, i, "");
}

/* The names whose making can turn a folder into a git dir, or add to what a git dir holds. */
static bool git_name(const char *n)
{
    static const char *const names[] = {"HEAD",  "objects",   "refs",  "config", "config.worktree",
                                        "hooks", "commondir", "gitdir"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (strcmp(n, names[i]) == 0)
            return true;
    return false;
}

/* A name the host made at the home's top while the sandbox runs: the person's own unless the
 * layer takes it (a dot-entry, a tool folder). The view bound the home's entries at the start
 * (sandbox/home_own.h); this one would show through the layer, where a write to it would land
 * and change nothing on the host. Held read-only inside, as the others are. */
static void on_home_event(struct repo_watch *w, const struct inotify_event *ev)
{
    if (!ev->len || !(ev->mask & (IN_CREATE | IN_MOVED_TO)) || ev->name[0] == '.' ||
        home_own_is_tools(ev->name, &w->home_tools) || !w->hold)
        return;
    char *abs = join(w->home, ev->name);
    int r = repo_hold_path(w->hold, abs);
    if (r < 0 && r != -ENOENT && r != -ELOOP)
        say(w, xasprintf("home: %s, made on the host while the sandbox ran, could not be made "
                         "read-only inside (%s): writes to it inside stay in the sandbox's home "
                         "layer",
                         abs, strerror(-r)));
    free(abs);
}

static void on_event(struct repo_watch *w, const struct inotify_event *ev)
{
    if (ev->mask & IN_Q_OVERFLOW) {
        walk_all(w); /* what the lost events said, found by looking again */
        return;
    }
    if (w->home && ev->wd == w->home_wd) {
        on_home_event(w, ev);
        return;
    }
    if (ev->wd < 0 || (size_t)ev->wd >= w->n_wds || !w->wds[ev->wd].rel)
        return;
    struct wd_ent *e = &w->wds[ev->wd];
    if (ev->mask & IN_IGNORED) {
        free(e->rel);
        e->rel = NULL;
        return;
    }
    if (!ev->len || !(ev->mask & (IN_CREATE | IN_MOVED_TO)))
        return;
    size_t root = e->root;
    char *rel = xstrdup(e->rel); /* a walk may grow the table */
    if (ev->mask & IN_ISDIR) {
        char *sub = join(rel, ev->name);
        walk(w, root, sub);
        free(sub);
    }
    if (strcmp(ev->name, ".git") == 0 || git_name(ev->name)) {
        unbind(w, root, rel, ev->name);
        int dfd = open_in(w, root, rel, O_PATH | O_DIRECTORY);
        if (dfd >= 0) {
            if (strcmp(ev->name, ".git") == 0)
                look_at_gitfile(w, root, rel, dfd);
            else
                look_at_gitdir(w, root, rel, dfd);
            close(dfd);
        }
    }
    free(rel);
}

/* Handle every event queued now. */
static void drain(struct repo_watch *w)
{
    union {
        char buf[64 * 1024];
        struct inotify_event align;
    } u;
    for (int rounds = 0; rounds < 100000; rounds++) {
        ssize_t n = read(w->ino, u.buf, sizeof u.buf);
        if (n <= 0)
            return; /* EAGAIN: nothing queued */
        for (ssize_t off = 0; off < n;) {
            const struct inotify_event *ev = (const struct inotify_event *)(u.buf + off);
            off += (ssize_t)(sizeof *ev + ev->len);
            on_event(w, ev);
        }
    }
}

static void free_all(struct repo_watch *w);

/* The last close of an inotify descriptor with watches waits for the kernel's SRCU grace period
 * (fsnotify_destroy_group: 10-20 ms on a busy machine), and so would cordon's exit. A child
 * sharing this memory (no copy of it) but with a copy of the descriptor table makes the last
 * close instead, with every other descriptor closed first (no pipe of the caller kept open),
 * while this process goes on. Only system calls on its own stack there. */
#define RELEASE_STACK (64 * 1024)
struct release {
    int fd;   /* the inotify descriptor */
    int hang; /* read end of a pipe whose write end this process holds, or -1 */
};

static int release_child(void *arg)
{
    struct release r = *(struct release *)arg;
    int keep_lo = r.hang >= 0 && r.hang < r.fd ? r.hang : r.fd;
    int keep_hi = r.hang >= 0 && r.hang > r.fd ? r.hang : r.fd;
    if (keep_lo > 0)
        (void)syscall(SYS_close_range, 0u, (unsigned)keep_lo - 1, 0u);
    if (keep_hi > keep_lo + 1)
        (void)syscall(SYS_close_range, (unsigned)keep_lo + 1, (unsigned)keep_hi - 1, 0u);
    (void)syscall(SYS_close_range, (unsigned)keep_hi + 1, ~0u, 0u);
    if (r.hang >= 0) { /* until this process is gone (its pipe hangs up), 2 s at most */
        struct pollfd p = {.fd = r.hang, .events = POLLIN};
        (void)syscall(SYS_poll, &p, 1, 2000);
    }
    (void)syscall(SYS_close, r.fd);
    syscall(SYS_exit, 0);
    return 0;
}

/* Hand fd to a child that closes it last. With wait_exit, the child keeps it until this process
 * has exited (or 2 s): a thread of ours may still hold the file (in poll) when we close ours,
 * and the last reference, whoever drops it, pays the grace period. */
static void release_inotify(int fd, bool wait_exit)
{
    /* its own stack, left to it (never freed: the child may run after this returns; one per
     * watcher, which a process has one of). Each is kept on a list, reachable, so that a leak
     * checker does not count it: the list's link sits at the stack's far end, which the child,
     * growing down from the top, never reaches. */
    static void *kept;
    static struct release arg; /* read by the child before it is written again: one watcher */
    int pipefd[2] = {-1, -1};
    char *stack = malloc(RELEASE_STACK);
    if (stack) {
        memcpy(stack, &kept, sizeof kept);
        kept = stack;
    }
    if (wait_exit && pipe2(pipefd, O_CLOEXEC) < 0)
        pipefd[0] = pipefd[1] = -1;
    arg = (struct release){.fd = fd, .hang = pipefd[0]};
    if (stack)
        (void)clone(release_child, stack + RELEASE_STACK, CLONE_VM | SIGCHLD, &arg);
    if (pipefd[0] >= 0)
        close(pipefd[0]); /* the write end stays open until this process exits (CLOEXEC) */
    close(fd);
}

/* Take the work (the walks, the table of watches): wait while the other side has it. false: the
 * watcher is stopping (the thread's side only asks). Under w->mu. */
static bool claim(struct repo_watch *w, bool thread)
{
    while (w->working)
        pthread_cond_wait(&w->cv, &w->mu);
    if (thread && w->stop)
        return false;
    w->working = true;
    w->working_thread = thread;
    return true;
}

static void unclaim(struct repo_watch *w)
{
    w->working = false;
    pthread_cond_broadcast(&w->cv);
}

/* The work owed: the first walk, the queued events, a walk past the watches when asked. */
static void work(struct repo_watch *w, bool flush)
{
    if (!w->walked) {
        walk_all(w);
        w->walked = true;
    }
    drain(w);
    if (flush && w->limited)
        walk_all(w); /* past the watches: looked at again each time */
}

/* Whichever side lets go last frees. Under w->mu (released). */
static void drop(struct repo_watch *w)
{
    bool last = --w->refs == 0;
    pthread_mutex_unlock(&w->mu);
    if (last)
        free_all(w);
}

static void *thread_main(void *arg)
{
    struct repo_watch *w = arg;
    struct pollfd p[2] = {{.fd = -1, .events = POLLIN}, {.fd = w->cmd, .events = POLLIN}};
    for (;;) {
        pthread_mutex_lock(&w->mu);
        if (!claim(w, true))
            break;
        pthread_mutex_unlock(&w->mu);
        work(w, false);
        pthread_mutex_lock(&w->mu);
        unclaim(w);
        p[0].fd = w->ino; /* -1 once repo_watch_free took it */
        pthread_mutex_unlock(&w->mu);
        if (poll(p, 2, -1) < 0)
            continue; /* EINTR */
        if (p[1].revents & POLLIN) {
            uint64_t v;
            (void)!read(w->cmd, &v, sizeof v);
        }
    }
    drop(w); /* w->mu held since the claim refused */
    return NULL;
}

struct repo_watch *repo_watch_start(const struct str_list *roots, struct repo_hold *hold,
                                    long long since_ns, const struct str_list *bound,
                                    const char *home, const struct str_list *home_tools)
{
    struct repo_watch *w = xcalloc(1, sizeof *w);
    w->home_wd = -1;
    if (home && hold) {
        w->home = xstrdup(home);
        for (size_t i = 0; home_tools && i < home_tools->len; i++)
            str_list_push(&w->home_tools, home_tools->items[i]);
    }
    for (size_t i = 0; bound && i < bound->len; i++)
        str_list_push(&w->bound, bound->items[i]);
    str_list_sort(&w->bound);
    w->n_roots = roots->len;
    w->root = xcalloc(roots->len + 1, sizeof *w->root);
    w->root_fd = xcalloc(roots->len + 1, sizeof *w->root_fd);
    w->hold = hold;
    w->since_ns = since_ns;
    w->ino = w->efd = w->cmd = -1;
    w->refs = 1;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    for (size_t i = 0; i < roots->len; i++) {
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        w->root[i] = xstrdup(roots->items[i]);
        w->root_fd[i] = (int)syscall(SYS_openat2, AT_FDCWD, w->root[i], &how, sizeof how);
        if (w->root_fd[i] < 0) {
            fprintf(stderr, "cordon: git: cannot watch %s for repositories: %s\n", w->root[i],
                    strerror(errno));
            goto fail;
        }
    }
    w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    w->cmd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->ino < 0 || w->efd < 0 || w->cmd < 0) {
        fprintf(stderr, "cordon: git: cannot watch the writable trees for repositories: %s\n",
                strerror(errno));
        goto fail;
    }
    if (w->home) {
        w->home_wd = inotify_add_watch(w->ino, w->home,
                                       IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW);
        if (w->home_wd < 0) {
            free(w->home);
            w->home = NULL; /* said by no one: the home's other rules hold all the same */
        }
    }
    w->refs = 2;
    int r = pthread_create(&w->th, NULL, thread_main, w);
    if (r != 0) {
        w->refs = 1;
        fprintf(stderr, "cordon: git: cannot start the repositories' watcher: %s\n", strerror(r));
        goto fail;
    }
    pthread_detach(w->th);
    return w;
fail:
    w->hold = NULL; /* not taken: the caller keeps it */
    repo_watch_free(w);
    return NULL;
}

long long repo_watch_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int repo_watch_fd(const struct repo_watch *w)
{
    return w ? w->efd : -1;
}

size_t repo_watch_take(struct repo_watch *w, struct repo_found **out, struct str_list *lines)
{
    uint64_t v;
    (void)!read(w->efd, &v, sizeof v);
    pthread_mutex_lock(&w->mu);
    size_t n = w->n_found;
    *out = w->found;
    w->found = NULL;
    w->n_found = w->cap_found = 0;
    for (size_t i = 0; i < w->lines.len; i++)
        str_list_push(lines, w->lines.items[i]);
    str_list_free(&w->lines);
    pthread_mutex_unlock(&w->mu);
    return n;
}

void repo_watch_flush(struct repo_watch *w)
{
    if (!w)
        return;
    /* Done here, on the caller's thread, unless the thread is at it (then waited for): a
     * command that ended before the thread ran costs no hand-off to it. */
    pthread_mutex_lock(&w->mu);
    claim(w, false);
    pthread_mutex_unlock(&w->mu);
    work(w, true);
    pthread_mutex_lock(&w->mu);
    unclaim(w);
    pthread_mutex_unlock(&w->mu);
}

void repo_watch_free(struct repo_watch *w)
{
    if (!w)
        return;
    /* The thread may not have run yet, or be at work: it is not waited for but told, and frees
     * (the holder too) when it goes; it takes no work once stop is set. Parked (not at work), it
     * touches the inotify descriptor no more: it is handed over here, to a child that closes it
     * after this process exits, so that neither this process's exit nor the thread's waits for
     * the kernel's teardown of the watches. */
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    if (!(w->working && w->working_thread) && w->ino >= 0) {
        release_inotify(w->ino, true);
        w->ino = -1;
    }
    if (w->refs > 1) {
        uint64_t one = 1;
        (void)!write(w->cmd, &one, sizeof one);
    }
    drop(w);
}

static void free_all(struct repo_watch *w)
{
    repo_hold_stop(w->hold);
    for (size_t i = 0; i < w->n_found; i++)
        free(w->found[i].rel);
    free(w->found);
    str_list_free(&w->lines);
    str_list_free(&w->seen);
    str_list_free(&w->bound);
    free(w->home);
    str_list_free(&w->home_tools);
    for (size_t i = 0; i < w->n_wds; i++)
        free(w->wds[i].rel);
    free(w->wds);
    for (size_t i = 0; i < w->n_roots; i++) {
        free(w->root[i]);
        if (w->root_fd[i] > 0)
            close(w->root_fd[i]);
    }
    free(w->root);
    free(w->root_fd);
    if (w->ino >= 0)
        release_inotify(w->ino, false);
    if (w->efd >= 0)
        close(w->efd);
    if (w->cmd >= 0)
        close(w->cmd);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}
