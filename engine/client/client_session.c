/* client_session.c — see client_session.h. */
#include "client/client_session.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "client/client_http.h"
#include "client/client_jobs.h"
#include "client/client_ports.h"
#include "client/client_record.h"
#include "base/json_write.h"
#include "client/client_reply.h"
#include "base/session_socket.h"
#include "client/client_table.h"
#include "base/util.h"

/* GET /v1/session. 0 with the answer's body in h (chttp_close it whatever the result) and
 * its tree in *out; 1 after printing why (for a session that is not there or was stale: only
 * when !quiet; h->missing says so). */
static int get_session(struct chttp *h, const char *cmd, const char *name, bool quiet,
                       struct json_value **out)
{
    *out = NULL;
    if (chttp_open(h, cmd, name, quiet) != 0)
        return CORDON_EXIT_SETUP;
    if (chttp_request(h, "GET", "/v1/session", NULL, 0, NULL, NULL) < 0)
        return chttp_lost(h);
    if (!chttp_ok(h))
        return reply_fail(h);
    *out = reply_json(h);
    return *out ? 0 : 1;
}

/* The names of the directory's NAME.sock entries, sorted. A missing directory has none. */
static int session_names(struct str_list *names)
{
    char dir[CSOCK_PATH_MAX];
    if (csock_dir(dir, sizeof dir) < 0)
        return 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        fprintf(stderr, "cordon: session list: cannot read %s: %s\n", dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n <= 5 || strcmp(e->d_name + n - 5, ".sock") != 0)
            continue;
        char *name = xasprintf("%.*s", (int)(n - 5), e->d_name);
        if (csock_name_valid(name))
            str_list_push_owned(names, name);
        else
            free(name);
    }
    closedir(d);
    str_list_sort(names);
    return 0;
}

static void int_cell(struct table *t, const struct json_value *v, const char *key)
{
    long long n;
    char buf[32];
    if (reply_int(v, key, &n))
        snprintf(buf, sizeof buf, "%lld", n);
    else
        snprintf(buf, sizeof buf, "-");
    table_cell(t, buf);
}

static void str_cell(struct table *t, const struct json_value *v, const char *key)
{
    const char *s = reply_str(v, key);
    table_cell(t, s && *s ? s : "-");
}

/* An ended session as session list --json --all shows it. */
static void record_json(const struct crecord *r, struct json_buf *b)
{
    json_buf_lit(b, "{\"name\":");
    json_buf_cstr_or_null(b, r->name);
    json_buf_lit(b, ",\"pid\":");
    if (r->pid > 0)
        json_buf_printf(b, "%lld", r->pid);
    else
        json_buf_lit(b, "null");
    json_buf_lit(b, ",\"profile\":");
    json_buf_cstr_or_null(b, r->profile);
    json_buf_lit(b, ",\"workspace\":");
    json_buf_cstr_or_null(b, r->workspace);
    json_buf_printf(b, ",\"started\":%.3f,\"ended\":", r->started);
    if (r->ended > 0)
        json_buf_printf(b, "%.3f", r->ended);
    else
        json_buf_lit(b, "null");
    json_buf_lit(b, ",\"state\":\"ended\",\"reason\":");
    json_buf_cstr_or_null(b, r->reason);
    json_buf_lit(b, "}");
}

/* session list --all: the sessions of the last day that no longer answer (not in live). */
static size_t list_ended(const struct str_list *live, bool json, struct table *t)
{
    struct str_list names = {0};
    size_t shown = 0;
    crecord_names(&names);
    if (json)
        fputs("],\"ended\":[", stdout);
    for (size_t i = 0; i < names.len; i++) {
        const char *name = names.items[i];
        bool running = false;
        for (size_t k = 0; k < live->len; k++)
            running = running || strcmp(live->items[k], name) == 0;
        struct crecord r;
        if (running || !crecord_read(name, &r))
            continue;
        if (json) {
            struct json_buf b = {0};
            record_json(&r, &b);
            printf("%s%s", shown ? "," : "", b.data);
            json_buf_free(&b);
        } else {
            char pid[32], state[128];
            snprintf(pid, sizeof pid, r.pid > 0 ? "%lld" : "-", r.pid);
            crecord_describe(&r, state, sizeof state);
            table_cell(t, name);
            table_cell(t, pid);
            table_cell(t, r.profile ? r.profile : "-");
            table_cell(t, "-");
            table_cell(t, r.workspace ? r.workspace : "-");
            table_cell(t, state);
        }
        shown++;
        crecord_free(&r);
    }
    str_list_free(&names);
    return shown;
}

int csess_list(bool json, bool all)
{
    static const char *const header[] = {"NAME", "PID", "PROFILE", "JOBS", "WORKSPACE", "STATE"};
    struct str_list names = {0}, live = {0};
    struct table t;
    size_t shown = 0;
    int status = 0;
    if (session_names(&names) < 0) {
        str_list_free(&names);
        return CORDON_EXIT_SETUP;
    }
    table_init(&t, ARRAY_LEN(header) - (all ? 0 : 1), header);
    if (json)
        fputs("{\"sessions\":[", stdout);
    for (size_t i = 0; i < names.len; i++) {
        struct chttp h;
        struct json_value *v;
        const char *name = names.items[i];
        char *cmd = xasprintf("session list: %s", name);
        if (get_session(&h, cmd, name, true, &v) == 0) {
            str_list_push(&live, name);
            if (json) {
                if (shown)
                    fputc(',', stdout);
                size_t len = h.body_len;
                while (len > 0 && strchr(" \t\r\n", h.body[len - 1]))
                    len--;
                fwrite(h.body, 1, len, stdout);
            } else {
                table_cell(&t, name);
                int_cell(&t, v, "pid");
                str_cell(&t, v, "profile");
                int_cell(&t, v, "jobs_running");
                str_cell(&t, v, "workspace");
                if (all)
                    table_cell(&t, "running");
            }
            shown++;
            json_free(v);
        } else if (!h.missing) {
            /* the line saying why is out; the others are still listed; it is not ended */
            str_list_push(&live, name);
            status = CORDON_EXIT_SETUP;
        }
        chttp_close(&h);
        free(cmd);
    }
    if (all)
        shown += list_ended(&live, json, &t);
    if (json)
        fputs("]}\n", stdout);
    else if (shown == 0)
        puts(all ? "no sessions (none ended in the last day either)" : "no sessions");
    else
        table_print(&t, stdout);
    table_free(&t);
    str_list_free(&names);
    str_list_free(&live);
    return status;
}

/* session status of a session that does not answer but ended in the last day. */
static void print_ended(const char *name, const struct crecord *r, bool json)
{
    char buf[64];
    if (json) {
        struct json_buf b = {0};
        record_json(r, &b);
        puts(b.data);
        json_buf_free(&b);
        return;
    }
    printf("name: %s\n", name);
    printf("state: ended\n");
    printf("reason: %s\n", r->reason);
    if (r->pid > 0)
        printf("pid: %lld\n", r->pid);
    printf("profile: %s\n", r->profile ? r->profile : "-");
    printf("workspace: %s\n", r->workspace ? r->workspace : "-");
    cjobs_format_time(r->started, true, buf, sizeof buf);
    printf("started: %s\n", r->started > 0 ? buf : "-");
    cjobs_format_time(r->ended, true, buf, sizeof buf);
    printf("ended: %s\n", r->ended > 0 ? buf : "- (its controller died)");
}

int csess_status(const char *name, bool json)
{
    struct chttp h;
    struct json_value *v;
    long long n;
    double started;
    char buf[64];
    int status = get_session(&h, "session status", name, true, &v);
    struct crecord r;
    if (status != 0 && h.missing && crecord_read(name, &r)) {
        print_ended(name, &r, json);
        crecord_free(&r);
        status = 0;
        goto out;
    }
    if (status != 0 && h.missing) {
        h.quiet_missing = false;
        status = chttp_lost(&h);
    }
    if (status != 0)
        goto out;
    if (json) {
        reply_print_line(stdout, h.body, h.body_len);
        goto out;
    }
    const char *s;
    printf("name: %s\n", (s = reply_str(v, "name")) ? s : name);
    printf("pid: %s\n",
           reply_int(v, "pid", &n) ? (snprintf(buf, sizeof buf, "%lld", n), buf) : "-");
    printf("profile: %s\n", (s = reply_str(v, "profile")) ? s : "-");
    printf("workspace: %s\n", (s = reply_str(v, "workspace")) ? s : "-");
    printf("socket: %s\n", (s = reply_str(v, "socket")) ? s : h.path);
    if (reply_num(v, "started", &started))
        cjobs_format_time(started, true, buf, sizeof buf);
    else
        snprintf(buf, sizeof buf, "-");
    printf("started: %s\n", buf);
    if (reply_int(v, "owner_pid", &n))
        printf("owner_pid: %lld\n", n);
    else
        puts("owner_pid: none (detached)");
    printf("jobs_running: %s\n",
           reply_int(v, "jobs_running", &n) ? (snprintf(buf, sizeof buf, "%lld", n), buf) : "-");
    cports_print_status(v);
out:
    json_free(v);
    chttp_close(&h);
    return status;
}

/* Gone: the socket file was removed, or nobody answers on it any more (a controller that died
 * while stopping; the next client to look removes it as stale). */
static bool session_gone(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0 && errno == ENOENT)
        return true;
    return csock_probe(path) == 0;
}

int csess_stop(const char *name)
{
    struct chttp h;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "session stop", name, false) != 0)
        goto out;
    /* A controller may go before its answer is out: a broken connection here is not an
     * error yet, the wait below tells. */
    int rc = chttp_request(&h, "POST", "/v1/session/stop", NULL, 0, NULL, NULL);
    if (rc < 0 && (h.missing || h.connect_errno)) {
        status = chttp_lost(&h);
        goto out;
    }
    if (rc == 0 && !chttp_ok(&h)) {
        status = reply_fail(&h);
        goto out;
    }
    chttp_close(&h); /* our connection must not be what keeps the controller serving */
    long long deadline = (long long)clock_mono_ms() + CSESS_STOP_WAIT_MS;
    for (;;) {
        if (session_gone(h.path)) {
            status = 0;
            break;
        }
        if ((long long)clock_mono_ms() >= deadline) {
            fprintf(stderr, "cordon: session stop: the session '%s' did not stop within %d s\n",
                    name, CSESS_STOP_WAIT_MS / 1000);
            break;
        }
        struct timespec pause = {0, CSESS_STOP_POLL_MS * 1000000L};
        nanosleep(&pause, NULL);
    }
out:
    chttp_close(&h);
    return status;
}
