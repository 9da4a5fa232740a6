/* session_snapshots.c — a review session's snapshots and rollback (docs/review.md, "Snapshots and
 * rollback"; the routes in docs/session-api.md). A snapshot is a copy of the layer's upper/ and
 * seen/ (review_copy.h) in <layer>/snapshots/LABEL/, with a note `info` (when taken, how many
 * pending changes); it is made in a hidden folder beside and renamed into place, so a listed
 * snapshot is always whole. A rollback copies a snapshot into a fresh folder of the layer
 * (upper/, seen/, an empty work/), asks init to put an overlay of it in place of the workspace's
 * (INIT_WIRE_REVIEW_SWAP, review_view.h), then exchanges the folders' names (renameat2
 * RENAME_EXCHANGE) so `cordon review` and `apply` read the new upper, and removes the old one
 * (before Linux 6.5 the old view stays mounted beneath the new: its folder goes to old/).
 * Who still holds the old view: the sandbox's processes (init's descendants) whose
 * cwd, root, executable or an open file lies on a mount of the old tree (mount ids from init),
 * at most HOLDERS_SCAN processes and HOLDER_FDS descriptors each. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/json_write.h"
#include "base/util.h"
#include "sandbox/init_wire.h"
#include "sandbox/review_copy.h"
#include "sandbox/review_layer.h"
#include "session/session_jobs.h"
#include "session/session_snapshots.h"

#define HOLDERS_SCAN 65536 /* /proc entries looked at */
#define HOLDER_FDS 4096    /* descriptors looked at per process */
#define HOLDERS_NAMED 16   /* named in the one line */

bool snapshot_label_valid(const char *label)
{
    size_t n = strlen(label);
    if (n == 0 || n > SNAPSHOT_LABEL_MAX || label[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = label[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* The layer, or NULL after answering 409. */
static const char *review_layer_of(struct session *s, struct api_request *req)
{
    const struct sandbox_config *cfg = s->p.cfg;
    if (s->shutting_down) {
        api_respond_error(req, 409, "the session is stopping");
        return NULL;
    }
    if (!cfg->review || !cfg->review_layer || cfg->workspace_readonly) {
        api_respond_error(req, 409, "session %s is not in review mode: snapshots need --review",
                          s->p.name);
        return NULL;
    }
    return cfg->review_layer;
}

static char *snapshots_dir(const char *layer)
{
    return xasprintf("%s/snapshots", layer);
}

/* The next automatic label: s1, s2, ... one past the highest sN there. */
static void next_label(const char *dir, char *out, size_t n)
{
    long top = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char *end;
        if (de->d_name[0] != 's' || de->d_name[1] < '1' || de->d_name[1] > '9')
            continue;
        long v = strtol(de->d_name + 1, &end, 10);
        if (*end == '\0' && v > top && v < 1000000000)
            top = v;
    }
    if (d)
        closedir(d);
    snprintf(out, n, "s%ld", top + 1);
}

void session_op_snapshot(struct session *s, struct api_request *req, const char *label)
{
    const char *layer = review_layer_of(s, req);
    if (!layer)
        return;
    char *dir = snapshots_dir(layer), *tmp = NULL, *final = NULL, *info = NULL;
    char name[SNAPSHOT_LABEL_MAX + 1], err[512];
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        api_respond_error(req, 500, "cannot make %s: %s", dir, strerror(errno));
        goto out;
    }
    if (label)
        snprintf(name, sizeof name, "%s", label);
    else
        next_label(dir, name, sizeof name);
    final = xasprintf("%s/%s", dir, name);
    struct stat st;
    if (lstat(final, &st) == 0) {
        api_respond_error(req, 409,
                          "session %s has a snapshot %s already (cordon snapshot %s --drop %s "
                          "removes it)",
                          s->p.name, name, s->p.name, name);
        goto out;
    }
    double t0 = clock_mono_ms_f();
    tmp = xasprintf("%s/.new-%s", dir, name);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)review_remove_tree(dfd, strrchr(tmp, '/') + 1); /* a crash's leftover */
        close(dfd);
    }
    int entries = review_layer_copy(layer, tmp, err, sizeof err);
    if (entries < 0) {
        api_respond_error(req, 500, "%s", err);
        goto out_rm;
    }
    /* How many pending changes it holds, as cordon review would count them now. */
    struct review_list l;
    long changes = -1;
    if (review_layer_list(tmp, s->p.cfg->workspace, &l, err, sizeof err) == 0) {
        changes = (long)l.len;
        review_list_free(&l);
    }
    double taken = clock_wall_s();
    info = xasprintf("%s/info", tmp);
    char *text = xasprintf("taken %.3f\nchanges %ld\nentries %d\n", taken, changes, entries);
    int w = write_private_file(info, text, strlen(text));
    free(text);
    if (w < 0 || rename(tmp, final) < 0) {
        api_respond_error(req, 500, "cannot keep the snapshot %s: %s", final,
                          strerror(w < 0 ? -w : errno));
        goto out_rm;
    }
    struct json_buf b = {0};
    json_buf_raw(&b, "{\"label\":", 9);
    json_buf_string(&b, name, strlen(name));
    json_buf_printf(&b, ",\"entries\":%d,\"changes\":%ld,\"taken\":%.3f,\"ms\":%.1f}", entries,
                    changes, taken, clock_mono_ms_f() - t0);
    api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
    goto out;
out_rm:
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)review_remove_tree(dfd, strrchr(tmp, '/') + 1);
        close(dfd);
    }
out:
    free(info);
    free(tmp);
    free(final);
    free(dir);
}

struct snap_row {
    char *label;
    double taken;
    long changes, entries;
};

static int by_taken(const void *a, const void *b)
{
    const struct snap_row *x = a, *y = b;
    if (x->taken != y->taken)
        return x->taken < y->taken ? -1 : 1;
    return strcmp(x->label, y->label);
}

void session_op_snapshots(struct session *s, struct api_request *req)
{
    const char *layer = review_layer_of(s, req);
    if (!layer)
        return;
    char *dir = snapshots_dir(layer);
    struct snap_row *rows = NULL;
    size_t n = 0, cap = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!snapshot_label_valid(de->d_name))
            continue;
        char *info = xasprintf("%s/%s/info", dir, de->d_name), *text = NULL;
        size_t len;
        struct snap_row r = {.changes = -1, .entries = -1};
        if (read_private_file(info, 4096, &text, &len) == 0) {
            (void)sscanf(text, "taken %lf\nchanges %ld\nentries %ld", &r.taken, &r.changes,
                         &r.entries);
            free(text);
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                rows = xrealloc(rows, cap * sizeof *rows);
            }
            r.label = xstrdup(de->d_name);
            rows[n++] = r;
        }
        free(info);
    }
    if (d)
        closedir(d);
    if (n > 1)
        qsort(rows, n, sizeof *rows, by_taken);
    struct json_buf b = {0};
    json_buf_raw(&b, "{\"snapshots\":[", 14);
    for (size_t i = 0; i < n; i++) {
        json_buf_raw(&b, i ? ",{\"label\":" : "{\"label\":", i ? 10 : 9);
        json_buf_string(&b, rows[i].label, strlen(rows[i].label));
        json_buf_printf(&b, ",\"taken\":%.3f,\"changes\":%ld,\"entries\":%ld}", rows[i].taken,
                        rows[i].changes, rows[i].entries);
        free(rows[i].label);
    }
    json_buf_raw(&b, "]}", 2);
    api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
    free(rows);
    free(dir);
}

void session_op_drop_snapshot(struct session *s, struct api_request *req, const char *label)
{
    const char *layer = review_layer_of(s, req);
    if (!layer)
        return;
    char *dir = snapshots_dir(layer);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (dfd < 0 || fstatat(dfd, label, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
        api_respond_error(req, 404, "session %s has no snapshot %s", s->p.name, label);
    } else {
        int r = review_remove_tree(dfd, label);
        if (r < 0)
            api_respond_error(req, 500, "cannot remove the snapshot %s: %s", label, strerror(-r));
        else
            api_respond(req, 200, NULL, "{\"dropped\":true}", 16);
    }
    if (dfd >= 0)
        close(dfd);
    free(dir);
}

/* ---- rollback ------------------------------------------------------------------------------ */

struct rollback {
    struct api_request *req; /* NULL once its client has gone */
    char *label;
    char folder[32]; /* the layer's folder of the new upper, work, seen */
};

static void rollback_req_gone(void *ctx, struct api_request *req)
{
    (void)req;
    struct rollback *rb = ctx;
    rb->req = NULL;
}

/* Remove the layer's folder name (everything in it). */
static void remove_in_layer(const char *layer, const char *name)
{
    int lfd = open(layer, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lfd >= 0) {
        (void)review_remove_tree(lfd, name);
        close(lfd);
    }
}

void session_op_rollback(struct session *s, struct api_request *req, const char *label)
{
    const char *layer = review_layer_of(s, req);
    if (!layer)
        return;
    if (s->rollback) {
        api_respond_error(req, 409, "a rollback of session %s is under way", s->p.name);
        return;
    }
    char *snap = xasprintf("%s/snapshots/%s", layer, label);
    char err[512];
    struct stat st;
    struct rollback *rb = NULL;
    if (lstat(snap, &st) < 0 || !S_ISDIR(st.st_mode)) {
        api_respond_error(req, 404, "session %s has no snapshot %s (cordon snapshot %s --list)",
                          s->p.name, label, s->p.name);
        goto out;
    }
    rb = xcalloc(1, sizeof *rb);
    snprintf(rb->folder, sizeof rb->folder, "rollback-%ld",
             (long)(clock_wall_s() * 1000) % 100000000);
    remove_in_layer(layer, rb->folder);
    char *dst = xasprintf("%s/%s", layer, rb->folder), *work = xasprintf("%s/work", dst);
    int r = review_layer_copy(snap, dst, err, sizeof err);
    if (r >= 0 && mkdir(work, 0700) < 0) {
        snprintf(err, sizeof err, "cannot make %s: %s", work, strerror(errno));
        r = -1;
    }
    free(work);
    free(dst);
    struct init_wire_msg m = {.tag = INIT_WIRE_REVIEW_SWAP};
    int sent = r < 0 ? 0 : init_wire_send(s->p.ctl, &m, rb->folder, strlen(rb->folder), NULL, 0);
    if (r < 0 || sent < 0) {
        if (sent < 0)
            snprintf(err, sizeof err, "cannot reach the sandbox's init: %s", strerror(-sent));
        remove_in_layer(layer, rb->folder);
        api_respond_error(req, 500, "%s", err);
        free(rb);
        rb = NULL;
        goto out;
    }
    rb->req = req;
    rb->label = xstrdup(label);
    api_on_gone(req, rollback_req_gone, rb);
    s->rollback = rb;
out:
    free(snap);
}

static bool in_ids(unsigned id, const unsigned *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* The mount id of what the magic link path leads to, or 0. */
static unsigned mnt_of(const char *path)
{
    struct statx sx;
    if (statx(AT_FDCWD, path, 0, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
        return 0;
    return (unsigned)sx.stx_mnt_id;
}

static bool holds(const char *pid, const unsigned *ids, size_t n)
{
    static const char *const links[] = {"cwd", "root", "exe"};
    char p[320];
    for (size_t i = 0; i < ARRAY_LEN(links); i++) {
        snprintf(p, sizeof p, "/proc/%s/%s", pid, links[i]);
        if (in_ids(mnt_of(p), ids, n))
            return true;
    }
    snprintf(p, sizeof p, "/proc/%s/fd", pid);
    DIR *d = opendir(p);
    struct dirent *de;
    bool held = false;
    for (int k = 0; d && !held && k < HOLDER_FDS && (de = readdir(d)); k++) {
        if (de->d_name[0] == '.')
            continue;
        char fp[600];
        snprintf(fp, sizeof fp, "/proc/%s/fd/%s", pid, de->d_name);
        held = in_ids(mnt_of(fp), ids, n);
    }
    if (d)
        closedir(d);
    return held;
}

/* The pid a process has in the sandbox (the last of NSpid), or its host pid. */
static long pid_inside(const char *pid)
{
    char *p = xasprintf("/proc/%s/status", pid), *text = NULL;
    size_t len;
    long v = atol(pid);
    if (read_file(p, 0, 1 << 16, &text, &len) == 0) {
        char *line = strstr(text, "\nNSpid:");
        if (line) {
            char *end = strchr(line + 1, '\n');
            if (end)
                *end = '\0';
            char *last = strrchr(line, '\t');
            if (last)
                v = atol(last + 1);
        }
    }
    free(text);
    free(p);
    return v;
}

struct proc_link {
    long pid, ppid;
};

static int by_pid(const void *a, const void *b)
{
    long x = ((const struct proc_link *)a)->pid, y = ((const struct proc_link *)b)->pid;
    return x < y ? -1 : x > y;
}

/* Every process of the host with its parent (from /proc/PID/stat, which anyone may read: the
 * sandbox's init is not dumpable, so its ns/ links are not the controller's to read), sorted. */
static size_t proc_links(struct proc_link **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    DIR *d = opendir("/proc");
    struct dirent *de;
    for (int k = 0; d && k < HOLDERS_SCAN && (de = readdir(d)); k++) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        char p[320], *text = NULL;
        size_t len;
        snprintf(p, sizeof p, "/proc/%s/stat", de->d_name);
        if (read_file(p, 0, 4096, &text, &len) < 0)
            continue;
        char *close_paren = strrchr(text, ')');
        long ppid = -1;
        if (close_paren && sscanf(close_paren + 1, " %*c %ld", &ppid) == 1) {
            if (n == cap) {
                cap = cap ? cap * 2 : 256;
                *out = xrealloc(*out, cap * sizeof **out);
            }
            (*out)[n++] = (struct proc_link){atol(de->d_name), ppid};
        }
        free(text);
    }
    if (d)
        closedir(d);
    if (n > 1)
        qsort(*out, n, sizeof **out, by_pid);
    return n;
}

/* Is pid below init (its descendant: every process of the sandbox is, PID 1 reaping orphans)? */
static bool below(const struct proc_link *all, size_t n, long pid, long init)
{
    for (int depth = 0; depth < 256 && pid > 1; depth++) {
        struct proc_link key = {pid, 0};
        const struct proc_link *at = bsearch(&key, all, n, sizeof *all, by_pid);
        if (!at)
            return false;
        if (at->ppid == init)
            return true;
        pid = at->ppid;
    }
    return false;
}

/* {"pid":N,"comm":"..."} of each holder into b, the one line into line. */
static void find_holders(struct session *s, const unsigned *ids, size_t n, struct json_buf *b,
                         struct json_buf *line)
{
    struct proc_link *all;
    size_t n_all = proc_links(&all);
    size_t found = 0;
    json_buf_raw(b, "[", 1);
    for (size_t i = 0; i < n_all; i++) {
        if (!below(all, n_all, all[i].pid, (long)s->p.init_pid))
            continue;
        char pid[24], p[320];
        snprintf(pid, sizeof pid, "%ld", all[i].pid);
        if (!holds(pid, ids, n))
            continue;
        char comm[64] = "?";
        snprintf(p, sizeof p, "/proc/%s/comm", pid);
        char *text = NULL;
        size_t len;
        if (read_file(p, 0, 64, &text, &len) == 0) {
            text[strcspn(text, "\n")] = '\0';
            for (char *c = text; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                    *c = '?'; /* a command names itself: nothing may act on a terminal */
            snprintf(comm, sizeof comm, "%s", text);
        }
        free(text);
        long inside = pid_inside(pid);
        json_buf_printf(b, "%s{\"pid\":%ld,\"comm\":", found ? "," : "", inside);
        json_buf_string(b, comm, strlen(comm));
        json_buf_raw(b, "}", 1);
        if (found < HOLDERS_NAMED)
            json_buf_printf(line, "%spid %ld (%s)", found ? ", " : "", inside, comm);
        else if (found == HOLDERS_NAMED)
            json_buf_raw(line, ", ...", 5);
        found++;
    }
    free(all);
    json_buf_raw(b, "]", 1);
    if (found) {
        char head[96];
        snprintf(head, sizeof head, "%zu process%s still hold%s the old workspace open: ", found,
                 found == 1 ? "" : "es", found == 1 ? "s" : "");
        struct json_buf whole = {0};
        json_buf_raw(&whole, head, strlen(head));
        json_buf_raw(&whole, line->data, line->len);
        json_buf_raw(&whole, "; restart them to see the rollback", 34);
        json_buf_free(line);
        *line = whole;
    }
}

/* Exchange the names of the layer's what and folder/what (the new one takes the layer's name). */
static int exchange(int lfd, const char *folder, const char *what)
{
    char *other = xasprintf("%s/%s", folder, what);
    int r = renameat2(lfd, what, lfd, other, RENAME_EXCHANGE);
    if (r < 0 && errno == ENOENT) /* a layer without seen/ yet */
        r = renameat(lfd, other, lfd, what);
    r = r < 0 ? -errno : 0;
    free(other);
    return r;
}

/* The layer's folder (the old upper, work, seen of a stacked view) moved to old/folder. */
static int keep_old(int lfd, const char *folder)
{
    char *to = xasprintf(REVIEW_OLD_DIR "/%s", folder);
    int r = mkdirat(lfd, REVIEW_OLD_DIR, 0700) < 0 && errno != EEXIST
                ? -1
                : renameat(lfd, folder, lfd, to);
    free(to);
    return r;
}

void session_review_swapped(struct session *s, const struct init_wire_msg *m, const void *payload,
                            size_t len)
{
    struct rollback *rb = s->rollback;
    if (!rb)
        return;
    s->rollback = NULL;
    const char *layer = s->p.cfg->review_layer;
    struct api_request *req = rb->req;
    if (req)
        api_on_gone(req, NULL, NULL);
    if (m->value < 0) {
        remove_in_layer(layer, rb->folder);
        if (req)
            api_respond_error(req, 500, "rollback to %s: %.*s", rb->label, (int)len,
                              (const char *)payload);
        goto out;
    }
    int lfd = open(layer, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int r = lfd < 0 ? -errno : 0;
    static const char *const parts[] = {"upper", "work", "seen"};
    for (size_t i = 0; r == 0 && i < ARRAY_LEN(parts); i++)
        r = exchange(lfd, rb->folder, parts[i]);
    struct json_buf holders = {0}, line = {0};
    find_holders(s, payload, len / sizeof(unsigned), &holders, &line);
    /* The old upper is no one's now: the detached overlay of a holder keeps its own view of the
     * files it has open, and the next rollback or a session's end has no use for it. Stacked
     * (Linux before 6.5), the old overlay is still mounted beneath the new one: its folders stay
     * on disk in old/ until the layer's next start (review_layer_drop_old). */
    if (r == 0 && lfd >= 0 && m->value == INIT_WIRE_SWAP_STACKED)
        (void)keep_old(lfd, rb->folder);
    else if (r == 0 && lfd >= 0)
        (void)review_remove_tree(lfd, rb->folder);
    if (lfd >= 0)
        close(lfd);
    if (req && r < 0) {
        api_respond_error(req, 500,
                          "rollback to %s: the workspace shows it, but the layer's folders could "
                          "not be exchanged (%s): cordon review shows the old pending changes",
                          rb->label, strerror(-r));
    } else if (req) {
        struct json_buf b = {0};
        json_buf_raw(&b, "{\"label\":", 9);
        json_buf_string(&b, rb->label, strlen(rb->label));
        json_buf_raw(&b, ",\"holders\":", 11);
        json_buf_raw(&b, holders.data, holders.len);
        json_buf_raw(&b, ",\"message\":", 11);
        if (line.len)
            json_buf_string(&b, line.data, line.len);
        else
            json_buf_raw(&b, "null", 4);
        json_buf_raw(&b, "}", 1);
        api_respond(req, 200, NULL, b.data, b.len);
        json_buf_free(&b);
    }
    json_buf_free(&holders);
    json_buf_free(&line);
out:
    free(rb->label);
    free(rb);
}

void session_snapshots_free(struct session *s)
{
    struct rollback *rb = s->rollback;
    if (!rb)
        return;
    s->rollback = NULL;
    free(rb->label);
    free(rb);
}
