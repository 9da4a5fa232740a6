/* git_guard_undo.c — the undo: a new snapshot compared with the last, and each difference undone
 * with one line saying so: a changed or removed file gets its previous bytes back; a new hook,
 * pointer or code-running config entry is neutralised (renamed NAME.cordon-refused, exec bits
 * off; a new repository's config has those lines commented out); a pointer planted in a git dir
 * that was there gets an empty stand-in held in its place. Also which new pointers are git's
 * own (a submodule, a linked worktree). Uses: git_guard_access.c, git_guard_digest.c,
 * git_guard_snapshot.c. Must never: write outside the workspace or through a link, or leave a
 * difference it could not undo unsaid. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/git_config.h"
#include "controller/git_guard_private.h"
#include "controller/worktree_admin.h"

/* One line for a difference (counted in g->diffs even when a later round repeats it). */
CORDON_PRINTF(4, 5)
static void say(struct git_guard *g, struct str_list *lines, const struct gg_item *x,
                const char *fmt, ...)
{
    g->diffs++;
    char what[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char *line = xasprintf("git: repository %s: %s: %s", x->repo, x->rel, what);
    if (str_list_contains(lines, line)) /* the same failure in a later round */
        free(line);
    else
        str_list_push_owned(lines, line);
}

/* Rename rel out of git's way (NAME.cordon-refused, or .2 ... .9 when taken), exec bits off
 * for a regular file. The new name, or NULL. */
/* Rename from (a name in the folder pfd, rel's) to rel's name with REFUSED, or REFUSED.N when
 * that is taken, its exec bits off first: the new name (malloc'd), or NULL. */
static char *neutralise_at(struct git_guard *g, int pfd, const char *from, const char *rel)
{
    const char *slash = strrchr(rel, '/');
    const char *base = slash ? slash + 1 : rel;
    int fd = openat(pfd, from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        (void)fchmod(fd, st.st_mode & 07666);
    if (fd >= 0)
        close(fd);
    char *to = NULL;
    for (int i = 1; i < 10; i++) {
        free(to);
        to = i == 1 ? xasprintf("%s" REFUSED, base) : xasprintf("%s" REFUSED ".%d", base, i);
        if (renameat2(pfd, from, pfd, to, RENAME_NOREPLACE) == 0) {
            char *dir = gg_parent_rel(rel);
            str_list_push_owned(&g->made, gg_join(dir, to));
            free(dir);
            break;
        }
        if (errno != EEXIST) {
            free(to);
            to = NULL;
            break;
        }
        if (i == 9) {
            free(to);
            to = NULL;
        }
    }
    return to;
}

static char *neutralise(struct git_guard *g, const char *rel)
{
    const char *base;
    int pfd = gg_open_parent(g, rel, &base);
    if (pfd < 0)
        return NULL;
    char *to = neutralise_at(g, pfd, base, rel);
    close(pfd);
    return to;
}

/* Put x back as it was: its bytes (and mode), or its link. 0 or -errno. A folder in its place
 * is renamed away first: *away (when not NULL) gets its new name. */
static int restore(struct git_guard *g, const struct gg_item *x, char **away_out)
{
    const char *base;
    if (x->type != S_IFLNK && (x->type != S_IFREG || !x->bytes))
        return -EOPNOTSUPP;
    int pfd = gg_open_parent(g, x->rel, &base);
    if (pfd < 0)
        return pfd;
    struct stat st;
    int r = 0;
    if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        close(pfd);
        char *away = neutralise(g, x->rel); /* a folder where the file was */
        if (!away)
            return -EEXIST;
        if (away_out)
            *away_out = away;
        else
            free(away);
        if ((pfd = gg_open_parent(g, x->rel, &base)) < 0)
            return pfd;
    }
    char *tmp = xasprintf(".%s.cordon-new", base);
    (void)unlinkat(pfd, tmp, 0);
    if (x->type == S_IFLNK) {
        if (symlinkat(x->bytes, pfd, tmp) < 0)
            r = -errno;
    } else {
        int fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            r = -errno;
        if (r == 0)
            r = write_all(fd, x->bytes, x->len);
        if (r == 0 && fchmod(fd, x->perm) < 0)
            r = -errno;
        if (fd >= 0)
            close(fd);
    }
    if (r == 0 && renameat(pfd, tmp, pfd, base) < 0)
        r = -errno;
    if (r < 0)
        (void)unlinkat(pfd, tmp, 0);
    free(tmp);
    close(pfd);
    return r;
}

/* A new config whose guarded entries (entry_guarded) are commented out; NULL when that leaves
 * it with one or unparseable (the caller renames it then). */
static char *config_defused(const struct gg_item *x, size_t *outlen)
{
    struct git_config c = {0};
    char err[256];
    if (!x->bytes || git_config_parse(x->bytes, x->len, &c, err, sizeof err) < 0)
        return NULL;
    size_t n_lines = 1;
    for (size_t i = 0; i < x->len; i++)
        n_lines += x->bytes[i] == '\n';
    bool *off = xcalloc(n_lines + 1, sizeof *off);
    for (size_t i = 0; i < c.len; i++)
        if (gg_entry_guarded(&c, &c.items[i]) && c.items[i].line > 0 &&
            (size_t)c.items[i].line <= n_lines)
            off[c.items[i].line - 1] = true;
    git_config_free(&c);
    static const char mark[] = "# cordon-refused: ";
    char *out = xmalloc(x->len + n_lines * (sizeof mark - 1) + 1);
    size_t o = 0, line = 0;
    for (size_t i = 0; i < x->len; i++) {
        if ((i == 0 || x->bytes[i - 1] == '\n') && off[line]) {
            memcpy(out + o, mark, sizeof mark - 1);
            o += sizeof mark - 1;
        }
        out[o++] = x->bytes[i];
        if (x->bytes[i] == '\n')
            line++;
    }
    out[o] = '\0';
    free(off);
    char *d = gg_config_digest(out, o, NULL);
    bool clean = d && !d[0];
    free(d);
    if (!clean) {
        free(out);
        return NULL;
    }
    *outlen = o;
    return out;
}

static int write_over(struct git_guard *g, const struct gg_item *x, const char *bytes, size_t len)
{
    struct gg_item y = *x;
    y.bytes = (char *)bytes;
    y.len = len;
    y.type = S_IFREG;
    return restore(g, &y, NULL);
}

static bool same(const struct gg_item *o, const struct gg_item *n)
{
    if (o->type != n->type)
        return false;
    if (o->kind == GG_CONFIG && o->type == S_IFREG && o->digest && n->digest)
        return gg_digest_same(o->digest, n->digest);
    if (o->type == S_IFREG) {
        if (o->too_big || n->too_big)
            return o->too_big == n->too_big && o->size == n->size && o->ino == n->ino &&
                   o->mtime.tv_sec == n->mtime.tv_sec && o->mtime.tv_nsec == n->mtime.tv_nsec;
        if ((o->kind == GG_HOOK || o->kind == GG_PROGRAM) && (o->perm & 0111) != (n->perm & 0111))
            return false;
        return o->len == n->len && memcmp(o->bytes, n->bytes, o->len) == 0;
    }
    if (o->type == S_IFLNK)
        return strcmp(o->bytes, n->bytes) == 0;
    return true; /* a folder, a fifo: nothing git reads as code by itself */
}

static void say_neutralised(struct git_guard *g, struct str_list *lines, const struct gg_item *x,
                            const char *what)
{
    struct stat st;
    if (!gg_lstat_rel(g, x->rel, &st))
        return; /* gone with its folder, which an earlier line named */
    char *to = neutralise(g, x->rel);
    if (to)
        say(g, lines, x, "%s: renamed to %s (exec bits off), so that git does not run it", what,
            to);
    else
        say(g, lines, x, "%s: could NOT be renamed away; look at it before running git there",
            what);
    free(to);
}

/* A new name in a git dir that was there (a planted commondir, which no mount can refuse: it was
 * not there to be held) is taken for the rest of the run: an empty file, read-only (so that no
 * command without capabilities can open it for writing), made under a name of its own and held
 * read-only inside the sandbox, then swapped with the plant in one step (RENAME_EXCHANGE: the
 * hold moves with its file, and the name is never free for a command to plant again), and the
 * plant, now under the stand-in's first name, renamed away as any plant is. Re-planting it
 * inside then fails (EROFS, or EBUSY for a rename or unlink). The host's git refuses that
 * repository (an empty commondir) until the command ends, when it is removed
 * (git_guard_free); one line says so. Not for a `.git` file (a folder, not a git dir), not at
 * the last check, not without a holder: false then, and the caller neutralises the plant. */
static bool stand_in(struct git_guard *g, struct str_list *lines, const struct gg_item *x,
                     const char *what)
{
    const char *base = strrchr(x->rel, '/');
    base = base ? base + 1 : x->rel;
    if (!g->hold || g->last || x->kind != GG_POINTER || strcmp(base, ".git") == 0 ||
        str_list_contains(&g->stand_ins, x->rel))
        return false;
    char *tmp = xasprintf("%s.cordon-stand-in", x->rel);
    const char *tbase;
    int pfd = gg_open_parent(g, tmp, &tbase), fd = -1, r = -1;
    bool swapped = false;
    if (pfd >= 0)
        fd = openat(pfd, tbase, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
    if (fd >= 0) {
        close(fd);
        r = g->hold(g->hold_ctx, tmp);
        if (r == 0) {
            swapped = renameat2(pfd, tbase, pfd, base, RENAME_EXCHANGE) == 0;
            /* the plant gone meanwhile: the stand-in takes the free name */
            r = swapped || renameat2(pfd, tbase, pfd, base, RENAME_NOREPLACE) == 0 ? 0 : -errno;
        }
        if (r < 0)
            (void)unlinkat(pfd, tbase, 0);
    }
    if (r == 0 && swapped) {
        char *to = neutralise_at(g, pfd, tbase, x->rel);
        if (to)
            say(g, lines, x, "%s: renamed to %s (exec bits off), so that git does not run it", what,
                to);
        else
            say(g, lines, x,
                "%s: could NOT be renamed away (it is %s); look at it before running "
                "git there",
                what, tbase);
        free(to);
    }
    if (pfd >= 0)
        gg_close_parent(g, pfd);
    free(tmp);
    if (r < 0)
        return false;
    str_list_push(&g->stand_ins, x->rel);
    say(g, lines, x,
        "an empty %s is held in its place until the command ends (git on the host refuses "
        "this repository until then)",
        base);
    return true;
}

void gg_stand_ins_remove(struct git_guard *g)
{
    for (size_t i = 0; i < g->stand_ins.len; i++) {
        const char *base;
        int pfd = gg_open_parent(g, g->stand_ins.items[i], &base);
        struct stat st;
        if (pfd >= 0 && fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_size == 0)
            (void)unlinkat(pfd, base, 0);
        if (pfd >= 0)
            close(pfd);
    }
    str_list_free(&g->stand_ins);
}

/* A `.git` file at rel (workspace-relative) whose text names target, outside the workspace: is
 * it one `git worktree add` made in a linked-worktree workspace, naming a new admin folder
 * own_common/worktrees/NAME (no link on the way) whose gitdir names this file back? */
static bool own_admin_gitfile(const struct git_guard *g, const char *rel, const char *text,
                              size_t len)
{
    static const char prefix[] = "gitdir: ";
    if (!g->own_common || !text || strlen(text) != len || strncmp(text, prefix, 8) != 0)
        return false;
    char *target = xasprintf("%.*s", (int)(len - 8), text + 8);
    size_t n = strlen(target);
    while (n && (target[n - 1] == '\n' || target[n - 1] == '\r'))
        target[--n] = '\0';
    char *wts = xasprintf("%s/worktrees/", g->own_common);
    const char *name = target + strlen(wts);
    bool ok = false;
    if (strncmp(target, wts, strlen(wts)) == 0 && name[0] && !strchr(name, '/') &&
        strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        int cfd = (int)syscall(SYS_openat2, AT_FDCWD, g->own_common, &how, sizeof how);
        char *admin_gitdir = xasprintf("worktrees/%s/gitdir", name);
        int fd = cfd >= 0 ? gg_open_beneath(cfd, admin_gitdir, O_RDONLY | O_NOFOLLOW) : -1;
        char back[PATH_MAX + 2];
        ssize_t got = fd >= 0 ? read(fd, back, sizeof back - 1) : -1;
        if (got > 0) {
            back[got] = '\0';
            while (got && (back[got - 1] == '\n' || back[got - 1] == '\r'))
                back[--got] = '\0';
            char *self = rel[0] ? xasprintf("%s/%s", g->ws, rel) : xstrdup(g->ws);
            ok = strcmp(back, self) == 0;
            free(self);
        }
        if (fd >= 0)
            close(fd);
        if (cfd >= 0)
            close(cfd);
        free(admin_gitdir);
    }
    free(wts);
    free(target);
    return ok;
}

/* Is a new pointer file one git itself writes and harmless: a `.git` file or a worktree's
 * commondir naming a git dir inside the workspace (which the guard then looks into), or a
 * worktree's gitdir (the worktree's place, which git reads no program from)? */
static bool new_pointer_ok(struct git_guard *g, const struct gg_item *x)
{
    if (x->type != S_IFREG)
        return false;
    const char *base = strrchr(x->rel, '/');
    base = base ? base + 1 : x->rel;
    char *dir = gg_parent_rel(x->rel);
    bool ok = false;
    if (strcmp(base, "gitdir") == 0) {
        ok = true;
    } else if (strcmp(base, ".git") == 0) {
        char *t = gg_pointer_target(g, x, dir, "gitdir: ");
        int fd = t ? gg_open_beneath(g->wsfd, t, O_PATH | O_DIRECTORY) : -1;
        ok = fd >= 0 || (!t && own_admin_gitfile(g, x->rel, x->bytes, x->len));
        if (fd >= 0)
            close(fd);
        free(t);
    } else if (strcmp(base, "commondir") == 0) {
        /* G/worktrees/NAME/commondir naming G, as `git worktree add` writes it */
        char *t = gg_pointer_target(g, x, dir, "");
        char *up = gg_parent_rel(dir), *upup = gg_parent_rel(up);
        const char *wt = strrchr(up, '/');
        ok = t && strcmp(wt ? wt + 1 : up, "worktrees") == 0 && strcmp(t, upup) == 0;
        free(t);
        free(up);
        free(upup);
    }
    free(dir);
    return ok;
}

static const char *kind_name(const struct gg_item *x)
{
    switch (x->kind) {
    case GG_CONFIG:
        return "config";
    case GG_HOOK:
        return "hook";
    case GG_HOOKS_LINK:
        return "hooks folder link";
    case GG_PROGRAM:
        return "program a config entry runs";
    case GG_POINTER:
        break;
    }
    return "pointer file";
}

/* rel is (or is inside) what this check renamed something to. */
static bool made_here(const struct git_guard *g, const char *rel)
{
    for (size_t i = 0; i < g->made.len; i++) {
        size_t n = strlen(g->made.items[i]);
        if (strncmp(rel, g->made.items[i], n) == 0 && (rel[n] == '\0' || rel[n] == '/'))
            return true;
    }
    return false;
}

static void undo_new(struct git_guard *g, struct str_list *lines, const struct gg_item *x)
{
    if (made_here(g, x->rel))
        return;
    char what[512];
    if (x->kind == GG_CONFIG) {
        if (x->type == S_IFREG && x->digest && !x->digest[0])
            return; /* a new repository's config that runs nothing */
        size_t len = 0;
        char *fixed = x->type == S_IFREG ? config_defused(x, &len) : NULL;
        if (fixed) {
            char keys[512];
            gg_digest_minus(x->digest, "", keys, sizeof keys);
            int r = write_over(g, x, fixed, len);
            free(fixed);
            if (r == 0) {
                say(g, lines, x,
                    "a new config with entries refused for a command (%s): those lines "
                    "commented out (# cordon-refused)",
                    keys);
                return;
            }
        }
        snprintf(what, sizeof what, "a new config git would run code from (%s)",
                 x->type != S_IFREG ? "not a regular file"
                 : x->digest        ? "entries refused for a command"
                                    : "it does not parse");
        say_neutralised(g, lines, x, what);
        return;
    }
    if (x->kind == GG_POINTER && new_pointer_ok(g, x))
        return;
    if (str_list_contains(&g->stand_ins, x->rel) && x->type == S_IFREG && x->size == 0)
        return; /* this guard's own, still empty */
    snprintf(what, sizeof what, "a new %s%s", kind_name(x),
             x->type == S_IFLNK ? " (a symbolic link)" : "");
    if (!stand_in(g, lines, x, what))
        say_neutralised(g, lines, x, what);
}

static void undo_changed(struct git_guard *g, struct str_list *lines, const struct gg_item *o,
                         const struct gg_item *n)
{
    char what[1536], keys[1024] = "";
    /* A pointer git itself writes twice while it makes a repository (`git submodule add` makes
     * the `.git` file absolute, then relative; `git worktree add` the admin folder's gitdir):
     * what an existing repository holds is read-only inside, so a change is one of a repository
     * made during the run, judged as a new one would be. */
    if (o->kind == GG_POINTER && n->kind == GG_POINTER && new_pointer_ok(g, n))
        return;
    if (o->kind == GG_CONFIG && o->digest && n->digest && o->type == n->type) {
        char added[256], gone[256];
        gg_digest_minus(n->digest, o->digest, added, sizeof added);
        gg_digest_minus(o->digest, n->digest, gone, sizeof gone);
        snprintf(keys, sizeof keys, " (refused entries%s%s%s%s)", added[0] ? " set: " : "", added,
                 gone[0] ? " removed: " : "", gone);
    }
    snprintf(what, sizeof what, "%s changed by the command%s", kind_name(o), keys);
    char *away = NULL;
    int r = restore(g, o, &away);
    if (r == 0) {
        say(g, lines, o, "%s: its previous content restored%s%s%s", what,
            away ? " (the folder there renamed to " : "", away ? away : "", away ? ")" : "");
        free(away);
        return;
    }
    free(away);
    if (n->type == S_IFDIR && o->type != S_IFDIR) /* restore moved it away and failed after */
        snprintf(what + strlen(what), sizeof what - strlen(what), " (became a folder)");
    say_neutralised(g, lines, n, what);
}

/* Was rel's folder made during the run (its birth time at or after the sandbox's start)? */
static bool folder_made_during_run(const struct git_guard *g, const char *rel)
{
    if (!g->since_ns)
        return false;
    char *dir = gg_parent_rel(rel);
    struct statx sx;
    bool made = statx(g->wsfd, dir[0] ? dir : ".", AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) == 0 &&
                (sx.stx_mask & STATX_BTIME) &&
                (long long)sx.stx_btime.tv_sec * 1000000000LL + sx.stx_btime.tv_nsec >= g->since_ns;
    free(dir);
    return made;
}

/* o is not in the new snapshot: removed, or not looked at this time (its hooks folder is no
 * longer the one git uses, which a line of its own undoes). */
/* Whether rel lies in a linked worktree's admin folder (open as pfd) whose worktree is gone, by
 * the gitdir the snapshot kept: `git worktree prune` removes such a folder a file at a time,
 * its gitdir among them (worktree_admin.h). */
static bool in_gone_admin(const struct git_guard *g, int pfd, const char *rel)
{
    char *admin = gg_parent_rel(rel);
    bool gone = false;
    if (worktree_admin_rel(admin)) {
        char *gitdir = gg_join(admin, "gitdir");
        const struct gg_item *x = gg_find_item(&g->snap, gitdir);
        gone = x && x->type == S_IFREG && x->bytes &&
               worktree_admin_points_nowhere(pfd, x->bytes, x->len,
                                             g->since_ns ? g->since_ns : LLONG_MAX);
        free(gitdir);
    }
    free(admin);
    return gone;
}

static void undo_removed(struct git_guard *g, struct str_list *lines, const struct gg_item *o)
{
    const char *base;
    int pfd = gg_open_parent(g, o->rel, &base);
    if (pfd < 0)
        return; /* its repository is gone with it: nothing to run */
    bool pruned = in_gone_admin(g, pfd, o->rel);
    close(pfd);
    if (pruned)
        return; /* git's own prune, part way: nothing of a live worktree to put back */
    struct gg_snap here = {0};
    struct gg_item *n = gg_record(g, &here, o->rel, o->kind, o->repo, NULL);
    bool present = n != NULL;
    if (present && !same(o, n))
        undo_changed(g, lines, o, n);
    gg_snap_free(&here);
    if (present)
        return;
    /* A repository the command made holds nothing of the person's to put back: its held names
     * are removed from the host side when a command removes it (hold_unlink.c), and putting
     * one back in the middle of that rm -rf would leave the folder behind. */
    if (str_list_contains(&g->made_repos, o->repo) || folder_made_during_run(g, o->rel))
        return;
    char *away = NULL;
    int r = restore(g, o, &away);
    if (r == 0)
        say(g, lines, o, "%s removed by the command: restored%s%s%s", kind_name(o),
            away ? " (the folder there renamed to " : "", away ? away : "", away ? ")" : "");
    free(away);
    if (r < 0 && r != -EOPNOTSUPP)
        say(g, lines, o, "%s removed by the command: could not be restored (%s)", kind_name(o),
            strerror(-r));
}

/* While commands run, a pointer file git has not finished (`git submodule add` writes the
 * `.git` file twice, `git worktree add` its admin folder's files one by one, each created
 * empty and then written) in a folder made during the run (its birth time after the
 * sandbox's start) is judged only when it looks like one git writes, or at the command's end
 * (g->last). A new name in a folder that was there (`.git/commondir`) is judged at once. */
static bool defer_pointer(const struct git_guard *g, const struct gg_item *x)
{
    return !g->last && x->kind == GG_POINTER && !new_pointer_ok((struct git_guard *)g, x) &&
           folder_made_during_run(g, x->rel);
}

/* Compare now with the snapshot and undo each difference: the number of lines said. A deferred
 * pointer stays what the snapshot said (new: left out of now; changed: the old item kept). */
int gg_undo_differences(struct git_guard *g, struct gg_snap *now, struct str_list *lines)
{
    int before = g->diffs;
    struct gg_snap *o = &g->snap;
    size_t i = 0, k = 0;
    g->n_deferred = 0;
    while (i < o->n || k < now->n) {
        int c = i == o->n ? 1 : k == now->n ? -1 : strcmp(o->items[i].rel, now->items[k].rel);
        if (c < 0) {
            /* a pointer of a repository made during the run, removed (`git worktree remove`
             * deletes its admin folder a file at a time): git's own undoing, nothing to put
             * back */
            if (!(o->items[i].kind == GG_POINTER && folder_made_during_run(g, o->items[i].rel)))
                undo_removed(g, lines, &o->items[i]);
            i++;
        } else if (c > 0) {
            struct gg_item *x = &now->items[k++];
            if (defer_pointer(g, x)) {
                gg_item_free(x);
                x->rel = NULL; /* dropped from now below */
                g->n_deferred++;
            } else {
                undo_new(g, lines, x);
            }
        } else {
            if (!same(&o->items[i], &now->items[k])) {
                if (defer_pointer(g, &now->items[k])) {
                    struct gg_item t = o->items[i];
                    o->items[i] = now->items[k];
                    now->items[k] = t;
                    g->n_deferred++;
                } else {
                    undo_changed(g, lines, &o->items[i], &now->items[k]);
                }
            }
            i++, k++;
        }
    }
    if (g->n_deferred) {
        size_t m = 0;
        for (size_t j = 0; j < now->n; j++)
            if (now->items[j].rel)
                now->items[m++] = now->items[j];
        now->n = m;
    }
    return g->diffs - before;
}
