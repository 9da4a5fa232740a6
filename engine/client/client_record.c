/* client_record.c — see client_record.h. */
#include "client/client_record.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/json_read.h"
#include "base/session_socket.h"
#include "client/client_jobs.h"
#include "client/client_reply.h"

#define RECORD_SUFFIX ".record.json"
#define RECORD_MAX (64 * 1024)

static int record_path(const char *name, char *out, size_t n)
{
    char dir[CSOCK_PATH_MAX];
    if (csock_dir(dir, sizeof dir) < 0)
        return -1;
    int len = snprintf(out, n, "%s/%s" RECORD_SUFFIX, dir, name);
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

bool crecord_read(const char *name, struct crecord *r)
{
    memset(r, 0, sizeof *r);
    r->pid = -1;
    char path[CSOCK_PATH_MAX + 64];
    if (record_path(name, path, sizeof path) < 0)
        return false;
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    struct stat st;
    char *text = malloc(RECORD_MAX);
    size_t len = text ? fread(text, 1, RECORD_MAX - 1, f) : 0;
    bool have_stat = fstat(fileno(f), &st) == 0;
    fclose(f);
    char err[128];
    struct json_value *v = text && len ? json_parse(text, len, err, sizeof err) : NULL;
    free(text);
    if (!v)
        return false;
    double ended = 0;
    const char *reason = reply_str(v, "reason");
    (void)reply_num(v, "ended", &ended);
    (void)reply_num(v, "started", &r->started);
    (void)reply_int(v, "pid", &r->pid);
    r->name = dup_or_null(reply_str(v, "name"));
    r->profile = dup_or_null(reply_str(v, "profile"));
    r->workspace = dup_or_null(reply_str(v, "workspace"));
    r->reason_owned = dup_or_null(reason);
    r->reason = r->reason_owned ? r->reason_owned : "controller killed";
    r->ended = reason ? ended : 0;
    json_free(v);
    /* a day after its end, or (when the end is unknown) after its last write */
    double since = r->ended > 0 ? r->ended : have_stat ? (double)st.st_mtime : 0;
    if (since > 0 && clock_wall_s() - since > CRECORD_KEPT_S) {
        (void)unlink(path);
        /* its log goes with it: an ended session leaves nothing in the directory for long */
        size_t base = strlen(path) - strlen(RECORD_SUFFIX);
        char log[CSOCK_PATH_MAX + 64];
        if (snprintf(log, sizeof log, "%.*s.log", (int)base, path) < (int)sizeof log)
            (void)unlink(log);
        crecord_free(r);
        return false;
    }
    return true;
}

void crecord_free(struct crecord *r)
{
    free(r->name);
    free(r->profile);
    free(r->workspace);
    free(r->reason_owned);
    memset(r, 0, sizeof *r);
}

void crecord_describe(const struct crecord *r, char *out, size_t n)
{
    char when[64];
    if (r->ended > 0) {
        cjobs_format_time(r->ended, true, when, sizeof when);
        snprintf(out, n, "ended at %s (%s)", when, r->reason);
    } else {
        snprintf(out, n, "ended (%s)", r->reason);
    }
}

void crecord_names(struct str_list *names)
{
    char dir[CSOCK_PATH_MAX];
    if (csock_dir(dir, sizeof dir) < 0)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    size_t suffix = strlen(RECORD_SUFFIX);
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n <= suffix || strcmp(e->d_name + n - suffix, RECORD_SUFFIX) != 0)
            continue;
        char *name = xasprintf("%.*s", (int)(n - suffix), e->d_name);
        if (csock_name_valid(name))
            str_list_push_owned(names, name);
        else
            free(name);
    }
    closedir(d);
    str_list_sort(names);
}
