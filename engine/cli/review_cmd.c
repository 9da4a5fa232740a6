/* review_cmd.c — see review_cmd.h. Owns the three commands' syntax, usage and output; the layer
 * itself is review_layer.h's, the flags host_trusted.h's.
 * DIR: the first word, when it is a folder with a review layer (its canonical path's), or any
 * folder when the current one has no layer; else the current folder is the workspace and every
 * word is a PATH, relative to the workspace; a PATH
 * names that pending path and everything pending below it.
 * apply writes each file atomically (a new file beside it, its bytes, mode and mtime, fsync,
 * rename over the name), every name opened beneath the workspace and never through a link
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so nothing a command planted on the way leads
 * the write elsewhere; a link out of the workspace, a device, a fifo or a socket is never applied.
 * apply and discard hold the layer's lock: refused while a review sandbox of the workspace runs.
 * Must never: apply a conflict (the host's copy changed since the sandbox first saw it), or drop
 * a pending change that was not applied or asked to be discarded. */
#include "cli/review_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "base/json_write.h"
#include "base/log.h"
#include "base/util.h"
#include "base/visible.h"
#include "base/session_socket.h"
#include "controller/review_report.h"
#include "sandbox/review_layer.h"

#define REVIEW_SYNOPSIS "cordon review [DIR] [--fork NAME] [--diff] [--json]"
#define APPLY_SYNOPSIS "cordon apply [DIR] [--fork NAME] [PATH...] [--all] [--diff]"
#define DISCARD_SYNOPSIS "cordon discard [DIR] [--fork NAME] [PATH...]"
#define MAX_WORDS 4096

static const char *const change_name[] = {
    [REVIEW_ADDED] = "added", [REVIEW_CHANGED] = "changed", [REVIEW_REMOVED] = "removed"};

/* The workspace and its layer, from the words; *first: the first PATH word. 0, or 125 said. */
struct target {
    char *ws, *layer;
    const char *fork; /* --fork NAME: the fork's layer (review_fork_dir), else NULL */
    const char **paths;
    int n_paths;
};

/* --fork NAME (or --fork=NAME) before any "--", taken out of argv: 0, or 125 said. */
static int take_fork(const char *cmd, int *argc, char **argv, const char **fork)
{
    *fork = NULL;
    int o = 0;
    bool rest = false;
    for (int i = 0; i < *argc; i++) {
        const char *a = argv[i];
        if (!rest && strcmp(a, "--") == 0)
            rest = true;
        if (!rest && (strcmp(a, "--fork") == 0 || strncmp(a, "--fork=", 7) == 0)) {
            const char *v = a[6] == '=' ? a + 7 : i + 1 < *argc ? argv[++i] : NULL;
            if (!v || !csock_name_valid(v))
                return cli_usage_error(cmd,
                                       "--fork takes the name of a fork (the session "
                                       "cordon fork started), not '%s'",
                                       v ? v : "");
            *fork = v;
            continue;
        }
        argv[o++] = argv[i];
    }
    *argc = o;
    return 0;
}

/* --layer DIR (not in the usage: `cordon mcp`'s review_changes names the session's layer as
 * the session answered, whatever this process's state folder): taken out of argv like --fork.
 * 0, or 125 said. */
static int take_layer(int *argc, char **argv, const char **layer)
{
    *layer = NULL;
    int o = 0;
    for (int i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--layer") == 0) {
            if (i + 1 >= *argc || argv[i + 1][0] != '/')
                return cli_usage_error("review", "--layer takes an absolute path");
            *layer = argv[++i];
            continue;
        }
        argv[o++] = argv[i];
    }
    *argc = o;
    return 0;
}

/* The fork's layer in place of the workspace's: 0, or 125 said (no such fork). */
static int select_fork(const char *cmd, struct target *t, const char *fork)
{
    if (!fork)
        return 0;
    char *dir = review_fork_dir(t->layer, fork);
    free(t->layer);
    t->layer = dir;
    t->fork = fork;
    if (review_layer_exists(dir))
        return 0;
    fprintf(stderr,
            "cordon: %s: %s has no fork named '%s' (cordon fork NAME %s starts one; applied or "
            "discarded forks are gone)\n",
            cmd, t->ws, fork, fork);
    return CORDON_EXIT_SETUP;
}

static int resolve(const char *cmd, const char **words, int n, const char *fork, struct target *t)
{
    *t = (struct target){0};
    int first = 0;
    if (n > 0) {
        struct stat st;
        char *real =
            stat(words[0], &st) == 0 && S_ISDIR(st.st_mode) ? realpath(words[0], NULL) : NULL;
        char *layer = real ? review_layer_dir(real) : NULL;
        /* A folder is DIR when it has a layer, or when the current folder has none (then it
         * cannot be a pending PATH either). */
        char *here = realpath(".", NULL), *here_layer = here ? review_layer_dir(here) : NULL;
        bool here_has = here_layer && review_layer_exists(here_layer);
        free(here);
        free(here_layer);
        if (layer && (review_layer_exists(layer) || !here_has)) {
            t->ws = real;
            t->layer = layer;
            first = 1;
        } else {
            free(real);
            free(layer);
        }
    }
    if (!t->ws) {
        t->ws = realpath(".", NULL);
        if (!t->ws) {
            fprintf(stderr, "cordon: %s: the current folder: %s\n", cmd, strerror(errno));
            return CORDON_EXIT_SETUP;
        }
        t->layer = review_layer_dir(t->ws);
        if (!t->layer) {
            fprintf(stderr,
                    "cordon: %s: no state folder (set HOME or XDG_STATE_HOME to an absolute "
                    "path)\n",
                    cmd);
            return CORDON_EXIT_SETUP;
        }
    }
    t->paths = words + first;
    t->n_paths = n - first;
    return select_fork(cmd, t, fork);
}

static void target_free(struct target *t)
{
    free(t->ws);
    free(t->layer);
}

/* A PATH word as the layer names paths: no "./", no trailing or doubled '/'. NULL when it leaves
 * the workspace (absolute, or with a ".." component). */
static char *clean_path(const char *p)
{
    if (p[0] == '/')
        return NULL;
    char *out = xmalloc(strlen(p) + 1);
    size_t o = 0;
    while (*p) {
        while (*p == '/')
            p++;
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            free(out);
            return NULL;
        }
        if (n > 0 && !(n == 1 && p[0] == '.')) {
            if (o)
                out[o++] = '/';
            memcpy(out + o, p, n);
            o += n;
        }
        p += n;
    }
    out[o] = '\0';
    return out;
}

/* Is path the pending path named by sel, or below it? ("" names everything.) */
static bool selected_by(const char *path, const char *sel)
{
    size_t n = strlen(sel);
    return n == 0 || (strncmp(path, sel, n) == 0 && (path[n] == '\0' || path[n] == '/'));
}

/* ---- diff ------------------------------------------------------------------------------- */

/* Does the file at fd hold a NUL in its first 8000 bytes (as diff and git judge "binary")? */
static bool looks_binary(int fd)
{
    char buf[8000];
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    return n > 0 && memchr(buf, '\0', (size_t)n) != NULL;
}

/* Open rel beneath the folder at base (no link followed), read-only; -1 when it is none. */
static int open_file_beneath(const char *base, const char *rel)
{
    int b = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (b < 0)
        return -1;
    int fd = review_open_beneath(b, rel, O_RDONLY, 0);
    close(b);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* diff -u of the host's copy and the pending one of rel (either may be missing: /dev/null). */
static void show_diff(const struct target *t, const char *rel, const char *a_label,
                      const char *b_label)
{
    char *upper = xasprintf("%s/upper", t->layer);
    int a = open_file_beneath(t->ws, rel), b = open_file_beneath(upper, rel);
    free(upper);
    char *shown = visible_dup(rel);
    if ((a >= 0 && looks_binary(a)) || (b >= 0 && looks_binary(b))) {
        printf("Binary file %s differs\n", shown);
    } else if (a >= 0 || b >= 0) {
        char *la = xasprintf("%s/%s", a_label, shown), *lb = xasprintf("%s/%s", b_label, shown);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            /* Out of the way first: dup2 onto the same number would keep O_CLOEXEC. */
            int a2 = a >= 0 ? fcntl(a, F_DUPFD, 10) : -1, b2 = b >= 0 ? fcntl(b, F_DUPFD, 10) : -1;
            if ((a >= 0 && (a2 < 0 || dup2(a2, 3) < 0)) || (b >= 0 && (b2 < 0 || dup2(b2, 4) < 0)))
                _exit(2);
            execlp("diff", "diff", "-u", "--label", a >= 0 ? la : "/dev/null", "--label",
                   b >= 0 ? lb : "/dev/null", a >= 0 ? "/dev/fd/3" : "/dev/null",
                   b >= 0 ? "/dev/fd/4" : "/dev/null", (char *)NULL);
            fprintf(stderr, "cordon: diff(1) is needed for --diff: %s\n", strerror(errno));
            _exit(2);
        }
        int status;
        if (pid > 0)
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
        free(la);
        free(lb);
    }
    free(shown);
    if (a >= 0)
        close(a);
    if (b >= 0)
        close(b);
}

/* The workspace DIR (words[0], required) with the layer --layer named, which must be one. */
static int given_layer(const char **words, int n, const char *layer, struct target *t)
{
    *t = (struct target){0};
    t->ws = n > 0 ? realpath(words[0], NULL) : NULL;
    if (!t->ws || !review_layer_exists(layer)) {
        fprintf(stderr, "cordon: review: --layer %s needs the workspace and a review layer\n",
                layer);
        return CORDON_EXIT_SETUP;
    }
    t->layer = xstrdup(layer);
    t->paths = words + 1;
    t->n_paths = n - 1;
    return 0;
}

/* ---- review ------------------------------------------------------------------------------ */

static void review_usage(void)
{
    fputs(
        "usage: " REVIEW_SYNOPSIS "\n"
        "List the pending changes of a review-mode workspace (cordon run --review, session\n"
        "start --review): what commands wrote, changed or removed there, kept in the\n"
        "workspace's review layer while the host's copy stays as it was. DIR: the workspace\n"
        "(default: the current folder). Each line: added, changed or removed, the path, a\n"
        "mode or link change, and, for each path the host will later run or trust (git hooks\n"
        "and config, .envrc, CI definitions, agents' and editors' configs, build entry\n"
        "points, new executables, links out of the workspace), \"host-trusted\" and why.\n"
        "--diff shows text diffs (binary files named as such); --json prints\n"
        "{\"workspace\", \"changes\": [{\"path\", \"change\", \"host_trusted\", \"why\", \"kind\",\n"
        "\"mode\", \"host_mode\", \"link\"}]}. cordon apply writes them to the host, cordon\n"
        "discard drops them. --fork NAME: the pending changes of fork NAME (cordon fork),\n"
        "kept in a layer of its own.\n",
        stdout);
}

static void print_entry(const struct review_entry *e, const char *why)
{
    char *shown = visible_dup(e->path);
    printf("%-7s %s", change_name[e->change], shown);
    if (S_ISDIR(e->mode))
        putchar('/');
    if (e->link) {
        char *l = visible_dup(e->link);
        printf(" -> %s", l);
        free(l);
    }
    if (e->change == REVIEW_CHANGED && e->mode && e->host_mode &&
        (e->mode & S_IFMT) == (e->host_mode & S_IFMT) &&
        (e->mode & 07777) != (e->host_mode & 07777))
        printf(" (mode %04o -> %04o)", (unsigned)(e->host_mode & 07777),
               (unsigned)(e->mode & 07777));
    if (why)
        printf("  [host-trusted: %s]", why);
    putchar('\n');
    free(shown);
}

static const char *why_of(const struct review_entry *e, const struct review_list *l)
{
    return review_why(e, l);
}

/* The layer's pending changes, recorded (review_layer.h); 0, or 125 said. An absent layer is an
 * empty list. */
static int load(const char *cmd, const struct target *t, struct review_list *l)
{
    *l = (struct review_list){0};
    if (!review_layer_exists(t->layer))
        return 0;
    char err[512];
    if (review_layer_list(t->layer, t->ws, l, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: %s: %s\n", cmd, err);
        return CORDON_EXIT_SETUP;
    }
    review_layer_record(t->layer, t->ws, l);
    return 0;
}

/* The workspace's forks whose layers are still there (each holds its own pending changes, or
 * is empty until discarded), one line: a person reviewing the workspace should not miss them. */
static void say_forks(const char *layer)
{
    char *forks = xasprintf("%s/forks", layer);
    DIR *d = opendir(forks);
    struct str_list names = {0};
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char *dir = review_fork_dir(layer, de->d_name);
        if (review_layer_exists(dir))
            str_list_push(&names, de->d_name);
        free(dir);
    }
    if (d)
        closedir(d);
    if (names.len) {
        str_list_sort(&names);
        printf("forks with layers of their own:");
        for (size_t i = 0; i < names.len; i++) {
            char *shown = visible_dup(names.items[i]);
            printf("%s %s", i ? "," : "", shown);
            free(shown);
        }
        printf(" (cordon review --fork NAME)\n");
    }
    str_list_free(&names);
    free(forks);
}

int review_cmd_main(int argc, char **argv)
{
    bool diff = false, json = false;
    const char *words[1];
    int n, status;
    if (cli_wants_help(argc, argv)) {
        review_usage();
        return 0;
    }
    const char *fork, *layer;
    if ((status = take_fork("review", &argc, argv, &fork)) != 0 ||
        (status = take_layer(&argc, argv, &layer)) != 0)
        return status;
    const struct cli_flag flags[] = {{"--diff", &diff}, {"--json", &json}};
    if ((status = cli_read_words(argc, argv, "review", REVIEW_SYNOPSIS, flags, ARRAY_LEN(flags),
                                 words, 1, &n)) >= 0)
        return status;
    struct target t;
    struct review_list l;
    if ((status = layer ? given_layer(words, n, layer, &t)
                        : resolve("review", words, n, fork, &t)) != 0) {
        target_free(&t);
        return status;
    }
    if (t.n_paths > 0) {
        fprintf(stderr, "cordon: review: %s is not a folder with pending changes (usage: %s)\n",
                t.paths[0], REVIEW_SYNOPSIS);
        target_free(&t);
        return CORDON_EXIT_SETUP;
    }
    if ((status = load("review", &t, &l)) != 0) {
        target_free(&t);
        return status;
    }
    size_t flagged = 0;
    struct json_buf j = {0};
    for (size_t i = 0; i < l.len; i++) {
        const struct review_entry *e = &l.items[i];
        const char *why = why_of(e, &l);
        flagged += why != NULL;
        if (json) {
            review_json_entry(&j, e, why);
            continue;
        }
        print_entry(e, why);
        if (diff && !S_ISDIR(e->mode) && !e->link && (e->change != REVIEW_CHANGED || e->content))
            show_diff(&t, e->path, "a", "b");
    }
    if (json) {
        fputs("{\"workspace\":", stdout);
        json_write_string(stdout, t.ws);
        fputs(",\"changes\":[", stdout);
        fwrite(j.data ? j.data : "", 1, j.len, stdout);
        fputs("]}\n", stdout);
    } else if (l.len == 0) {
        printf("%s: no pending changes\n", t.ws);
    } else {
        printf("%zu pending change%s, %zu host-trusted (cordon apply leaves those pending "
               "without --all)\n",
               l.len, l.len == 1 ? "" : "s", flagged);
    }
    if (!json && !t.fork)
        say_forks(t.layer);
    json_buf_free(&j);
    review_list_free(&l);
    target_free(&t);
    return 0;
}

/* ---- apply ------------------------------------------------------------------------------- */

static void apply_usage(void)
{
    fputs("usage: " APPLY_SYNOPSIS "\n"
          "Write a review-mode workspace's pending changes (cordon review lists them) to the\n"
          "host's workspace, each file atomically, keeping its mode; what is applied leaves the\n"
          "review layer. DIR: the workspace (default: the current folder); PATH: a pending path\n"
          "relative to it, and what is pending below it (default: everything). Without PATH,\n"
          "the changes flagged host-trusted are left pending and listed; --all applies them too\n"
          "(a PATH named applies what it names). A path whose host copy changed since the\n"
          "sandbox first saw it is a conflict: not applied, one line names it (--diff shows\n"
          "both sides). A link out of the workspace, a device, fifo or socket is never applied.\n"
          "Refused while a review sandbox of the workspace runs. Exit 0 when everything chosen\n"
          "was applied (or left pending as flagged), 1 when something was kept back.\n"
          "--fork NAME: fork NAME's changes (cordon fork), its own records of the host's\n"
          "copies deciding the conflicts; refused while session NAME runs.\n",
          stdout);
}

/* A name beside the target for the new file: ".cordon-apply-<16 hex>". */
static void temp_name(char out[32])
{
    unsigned char r[8] = {0};
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        unsigned long long v = (unsigned long long)getpid() ^ (unsigned long long)time(NULL);
        memcpy(r, &v, sizeof r);
    }
    snprintf(out, 32, ".cordon-apply-%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3],
             r[4], r[5], r[6], r[7]);
}

/* The folder holding rel beneath base_fd (the host's workspace, or the layer's upper) and rel's
 * last name. The fd or -1 with errno. */
static int host_parent(int base_fd, const char *rel, const char **name)
{
    const char *slash = strrchr(rel, '/');
    *name = slash ? slash + 1 : rel;
    char *parent = slash ? xasprintf("%.*s", (int)(slash - rel), rel) : xstrdup("");
    int fd = review_open_beneath(base_fd, parent, O_RDONLY | O_DIRECTORY, 0);
    int e = errno;
    free(parent);
    errno = e;
    return fd;
}

/* Copy the pending file up_fd into a new file beside name in pfd and rename it over name. */
static int write_file_at(int pfd, const char *name, int up_fd, const struct stat *st)
{
    char tmp[32];
    temp_name(tmp);
    int out = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0)
        return -errno;
    int r = 0;
    char buf[65536];
    for (;;) {
        ssize_t n = read(up_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = -errno;
            break;
        }
        if (n == 0)
            break;
        if (write_all(out, buf, (size_t)n) < 0) {
            r = -errno;
            break;
        }
    }
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    if (r == 0 &&
        (fchmod(out, st->st_mode & 07777) < 0 || futimens(out, times) < 0 || fsync(out) < 0))
        r = -errno;
    close(out);
    if (r == 0 && renameat(pfd, tmp, pfd, name) < 0)
        r = -errno;
    if (r < 0)
        unlinkat(pfd, tmp, 0);
    return r;
}

/* Apply one entry to the host's workspace; 0 or -errno. */
static int apply_one(int ws_fd, int up_fd, const struct review_entry *e)
{
    const char *name;
    int pfd = host_parent(ws_fd, e->path, &name);
    if (pfd < 0)
        return -errno;
    int r = 0;
    struct stat hs;
    bool host = fstatat(pfd, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
    if (e->change == REVIEW_REMOVED) {
        r = review_remove_tree(pfd, name);
    } else if (S_ISDIR(e->mode)) {
        if (host && !S_ISDIR(hs.st_mode) && (r = review_remove_tree(pfd, name)) < 0)
            goto out;
        if ((!host || !S_ISDIR(hs.st_mode)) && mkdirat(pfd, name, 0700) < 0)
            r = -errno;
        if (r == 0) {
            int d = review_open_beneath(pfd, name, O_RDONLY | O_DIRECTORY, 0);
            if (d < 0 || fchmod(d, e->mode & 07777) < 0)
                r = -errno;
            if (d >= 0)
                close(d);
        }
    } else if (S_ISLNK(e->mode)) {
        char tmp[32];
        temp_name(tmp);
        if (host && S_ISDIR(hs.st_mode) && (r = review_remove_tree(pfd, name)) < 0)
            goto out;
        if (symlinkat(e->link, pfd, tmp) < 0 || renameat(pfd, tmp, pfd, name) < 0) {
            r = -errno;
            unlinkat(pfd, tmp, 0);
        }
    } else if (S_ISREG(e->mode)) {
        int f = review_open_beneath(up_fd, e->path, O_RDONLY, 0);
        struct stat st;
        if (f < 0 || fstat(f, &st) < 0 || !S_ISREG(st.st_mode)) {
            r = f < 0 ? -errno : -EINVAL;
        } else {
            if (host && S_ISDIR(hs.st_mode) && (r = review_remove_tree(pfd, name)) < 0)
                goto close_f;
            r = write_file_at(pfd, name, f, &st);
        }
    close_f:
        if (f >= 0)
            close(f);
    } else {
        r = -EPERM;
    }
out:
    close(pfd);
    return r;
}

static int read_selection(const char *cmd, const struct target *t, struct str_list *sel)
{
    for (int i = 0; i < t->n_paths; i++) {
        char *c = clean_path(t->paths[i]);
        if (!c) {
            fprintf(stderr, "cordon: %s: %s: a PATH is relative to the workspace and stays in it\n",
                    cmd, t->paths[i]);
            return CORDON_EXIT_SETUP;
        }
        str_list_push_owned(sel, c);
    }
    if (sel->len == 0)
        str_list_push(sel, "");
    return 0;
}

static bool in_selection(const struct str_list *sel, const char *path)
{
    for (size_t i = 0; i < sel->len; i++)
        if (selected_by(path, sel->items[i]))
            return true;
    return false;
}

/* Paths of sel that select no entry: one line each. */
static int unmatched(const char *cmd, const struct str_list *sel, const struct review_list *l)
{
    int bad = 0;
    for (size_t i = 0; i < sel->len; i++) {
        bool any = false;
        for (size_t k = 0; k < l->len && !any; k++)
            any = selected_by(l->items[k].path, sel->items[i]);
        if (!any && sel->items[i][0]) {
            char *shown = visible_dup(sel->items[i]);
            fprintf(stderr, "cordon: %s: %s: no pending change there\n", cmd, shown);
            free(shown);
            bad++;
        }
    }
    return bad;
}

/* The layer's lock, or 125 said. */
static int take_lock(const char *cmd, const struct target *t, int *fd)
{
    *fd = review_layer_lock(t->layer);
    if (*fd >= 0)
        return 0;
    if (errno == EWOULDBLOCK)
        fprintf(stderr,
                "cordon: %s: a sandbox in review mode of %s is running (it holds the review "
                "layer); stop it first\n",
                cmd, t->ws);
    else
        fprintf(stderr, "cordon: %s: the review layer's lock in %s: %s\n", cmd, t->layer,
                strerror(errno));
    return CORDON_EXIT_SETUP;
}

int apply_cmd_main(int argc, char **argv)
{
    bool all = false, diff = false;
    const char **words = xcalloc(MAX_WORDS, sizeof *words);
    int n, status, lock = -1, ws_fd = -1, up_fd = -1;
    struct target t = {0};
    struct review_list l = {0};
    struct str_list sel = {0}, dirs = {0};
    if (cli_wants_help(argc, argv)) {
        apply_usage();
        free(words);
        return 0;
    }
    const char *fork;
    if ((status = take_fork("apply", &argc, argv, &fork)) != 0) {
        free(words);
        return status;
    }
    const struct cli_flag flags[] = {{"--all", &all}, {"--diff", &diff}};
    if ((status = cli_read_words(argc, argv, "apply", APPLY_SYNOPSIS, flags, ARRAY_LEN(flags),
                                 words, MAX_WORDS, &n)) >= 0) {
        free(words);
        return status;
    }
    if ((status = resolve("apply", words, n, fork, &t)) != 0 ||
        (status = read_selection("apply", &t, &sel)) != 0)
        goto out;
    if (!review_layer_exists(t.layer)) {
        printf("%s: no pending changes\n", t.ws);
        status = unmatched("apply", &sel, &l) ? 1 : 0;
        goto out;
    }
    if ((status = take_lock("apply", &t, &lock)) != 0 || (status = load("apply", &t, &l)) != 0)
        goto out;
    char *upper = xasprintf("%s/upper", t.layer);
    ws_fd = open(t.ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
    up_fd = open(upper, O_PATH | O_DIRECTORY | O_CLOEXEC);
    free(upper);
    if (ws_fd < 0 || up_fd < 0) {
        fprintf(stderr, "cordon: apply: %s: %s\n", ws_fd < 0 ? t.ws : t.layer, strerror(errno));
        status = CORDON_EXIT_SETUP;
        goto out;
    }
    bool named = t.n_paths > 0;
    size_t applied = 0, kept = 0;
    struct str_list left = {0};
    status = unmatched("apply", &sel, &l) ? 1 : 0;
    for (size_t i = 0; i < l.len; i++) {
        const struct review_entry *e = &l.items[i];
        if (!in_selection(&sel, e->path))
            continue;
        const char *why = why_of(e, &l);
        char *shown = visible_dup(e->path);
        bool never = why && (strstr(why, "never applied") != NULL);
        if (never) {
            printf("not applied: %s: %s\n", shown, why);
            kept++;
        } else if (why && !all && !named) {
            str_list_push_owned(&left, xasprintf("pending %s  [host-trusted: %s]", shown, why));
        } else if (!S_ISDIR(e->mode) && review_layer_conflict(t.layer, t.ws, e->path)) {
            printf("conflict: %s changed on the host since the sandbox first saw it: not applied "
                   "(cordon apply --diff shows both sides)\n",
                   shown);
            if (diff)
                show_diff(&t, e->path, "host", "pending");
            kept++;
        } else {
            int r = apply_one(ws_fd, up_fd, e);
            if (r < 0) {
                printf("not applied: %s: %s\n", shown, strerror(-r));
                kept++;
            } else {
                printf("applied %s %s\n", change_name[e->change], shown);
                applied++;
                if (S_ISDIR(e->mode))
                    str_list_push(&dirs, e->path);
                else
                    review_layer_drop(t.layer, e->path);
            }
        }
        free(shown);
    }
    /* An applied folder leaves the layer once nothing is pending in it (deepest first), its
     * parent opened beneath the upper as every other name is. */
    for (size_t i = dirs.len; i-- > 0;) {
        const char *name;
        int p = host_parent(up_fd, dirs.items[i], &name);
        if (p >= 0) {
            (void)unlinkat(p, name, AT_REMOVEDIR); /* ENOTEMPTY: something stays pending */
            close(p);
        }
    }
    if (left.len) {
        printf("left pending, host-trusted (cordon apply --all applies them):\n");
        for (size_t i = 0; i < left.len; i++)
            printf("  %s\n", left.items[i]);
    }
    if (applied == 0 && kept == 0 && left.len == 0)
        printf("%s: no pending changes%s\n", t.ws, named ? " there" : "");
    str_list_free(&left);
    if (kept)
        status = 1;
out:
    if (ws_fd >= 0)
        close(ws_fd);
    if (up_fd >= 0)
        close(up_fd);
    if (lock >= 0)
        close(lock);
    str_list_free(&sel);
    str_list_free(&dirs);
    review_list_free(&l);
    target_free(&t);
    free(words);
    return status;
}

/* ---- discard ----------------------------------------------------------------------------- */

static void discard_usage(void)
{
    fputs("usage: " DISCARD_SYNOPSIS "\n"
          "Drop pending changes of a review-mode workspace (cordon review lists them): the\n"
          "sandbox's view of each path goes back to the host's copy. DIR: the workspace\n"
          "(default: the current folder); PATH: a pending path relative to it, and what is\n"
          "pending below it (default: everything). Refused while a review sandbox of the\n"
          "workspace runs. --fork NAME: fork NAME's changes (cordon fork); without PATH its\n"
          "layer is removed too, once nothing is pending there.\n",
          stdout);
}

/* discard --fork NAME without PATH: the fork's layer goes as a whole once nothing is pending in
 * it (the caller holds its lock). 0, or 1 said. */
static int remove_fork(const struct target *t)
{
    struct review_list left = {0};
    char err[512];
    if (review_layer_list(t->layer, t->ws, &left, err, sizeof err) < 0 || left.len > 0) {
        printf("the fork '%s' keeps its layer: %s\n", t->fork,
               left.len ? "something is still pending there" : err);
        review_list_free(&left);
        return 1;
    }
    review_list_free(&left);
    /* the fork's snapshots (cordon snapshot) go with it: the person discarded the fork */
    char *snaps = xasprintf("%s/snapshots", t->layer);
    size_t n_snaps = 0;
    DIR *sd = opendir(snaps);
    struct dirent *de;
    while (sd && (de = readdir(sd)))
        n_snaps += de->d_name[0] != '.';
    if (sd)
        closedir(sd);
    free(snaps);
    char *forks = xasprintf("%s", t->layer);
    *strrchr(forks, '/') = '\0'; /* <workspace's layer>/forks */
    int dfd = open(forks, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int r = dfd < 0 ? -errno : review_remove_tree(dfd, t->fork);
    if (dfd >= 0)
        close(dfd);
    free(forks);
    if (r < 0) {
        printf("the fork '%s' keeps its layer: %s\n", t->fork, strerror(-r));
        return 1;
    }
    if (n_snaps)
        printf("removed the fork '%s' of %s, with its %zu snapshot%s\n", t->fork, t->ws, n_snaps,
               n_snaps == 1 ? "" : "s");
    else
        printf("removed the fork '%s' of %s\n", t->fork, t->ws);
    return 0;
}

int discard_cmd_main(int argc, char **argv)
{
    const char **words = xcalloc(MAX_WORDS, sizeof *words);
    int n, status, lock = -1;
    struct target t = {0};
    struct review_list l = {0};
    struct str_list sel = {0};
    if (cli_wants_help(argc, argv)) {
        discard_usage();
        free(words);
        return 0;
    }
    const char *fork;
    if ((status = take_fork("discard", &argc, argv, &fork)) != 0) {
        free(words);
        return status;
    }
    if ((status = cli_read_words(argc, argv, "discard", DISCARD_SYNOPSIS, NULL, 0, words, MAX_WORDS,
                                 &n)) >= 0) {
        free(words);
        return status;
    }
    if ((status = resolve("discard", words, n, fork, &t)) != 0 ||
        (status = read_selection("discard", &t, &sel)) != 0)
        goto out;
    if (!review_layer_exists(t.layer)) {
        printf("%s: no pending changes\n", t.ws);
        goto out;
    }
    if ((status = take_lock("discard", &t, &lock)) != 0 || (status = load("discard", &t, &l)) != 0)
        goto out;
    status = unmatched("discard", &sel, &l) ? 1 : 0;
    size_t dropped = 0;
    for (size_t i = 0; i < l.len; i++) {
        const struct review_entry *e = &l.items[i];
        if (!in_selection(&sel, e->path))
            continue;
        char *shown = visible_dup(e->path);
        int r = review_layer_drop(t.layer, e->path);
        if (r < 0) {
            printf("not discarded: %s: %s\n", shown, strerror(-r));
            status = 1;
        } else {
            printf("discarded %s %s\n", change_name[e->change], shown);
            dropped++;
        }
        free(shown);
    }
    if (dropped == 0 && status == 0)
        printf("%s: no pending changes\n", t.ws);
    if (t.fork && t.n_paths == 0 && status == 0)
        status = remove_fork(&t);
out:
    if (lock >= 0)
        close(lock);
    str_list_free(&sel);
    review_list_free(&l);
    target_free(&t);
    free(words);
    return status;
}
