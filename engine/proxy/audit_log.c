/* audit_log.c — see audit_log.h. One write(2) per line on an O_APPEND fd, so lines of several
 * cordon processes never interleave. */
#include "proxy/audit_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/json_write.h"
#include "base/log.h"
#include "base/util.h"

struct audit_log {
    int fd;
    char *path;
    bool failed; /* reported once */
};

const char *net_kind_name(enum net_kind kind)
{
    switch (kind) {
    case NET_KIND_HTTP: return "http";
    case NET_KIND_CONNECT: return "connect";
    case NET_KIND_SOCKS: return "socks";
    }
    return "?";
}

static char *audit_path(void)
{
    const char *explicit_path = getenv("CORDON_AUDIT_LOG");
    if (explicit_path && *explicit_path)
        return xstrdup(explicit_path);
    const char *state = getenv("XDG_STATE_HOME");
    if (state && *state)
        return xasprintf("%s/cordon/audit.jsonl", state);
    const char *home = getenv("HOME");
    return home && *home ? xasprintf("%s/.local/state/cordon/audit.jsonl", home) : NULL;
}

struct audit_log *audit_log_open(void)
{
    struct audit_log *log = xcalloc(1, sizeof *log);
    log->fd = -1;
    log->path = audit_path();
    return log;
}

/* Opened at the first decision: a run that never uses the network leaves no file behind. */
static bool ensure_open(struct audit_log *log)
{
    if (log->fd >= 0)
        return true;
    if (!log->path || log->failed)
        return false;
    (void)mkdir_parents(log->path, 0700); /* the open below says what went wrong */
    log->fd = open(log->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (log->fd < 0) {
        log->failed = true;
        LOG_W("audit", "cannot open the audit log %s: %s", log->path, strerror(errno));
        return false;
    }
    return true;
}

void audit_log_decision(struct audit_log *log, enum net_kind kind, const char *host, unsigned port,
                        const struct net_decision *d, enum lh_outcome outcome, const char *command)
{
    if (!log || !ensure_open(log))
        return;
    char *line = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&line, &len);
    if (!f)
        return;
    fprintf(f, "{\"time\":%.3f,\"pid\":%d,\"kind\":\"%s\",\"host\":", clock_wall_s(),
            (int)getpid(), net_kind_name(kind));
    json_write_string(f, host);
    fprintf(f, ",\"port\":%u,\"verdict\":\"%s\",\"rule\":", port, d->allow ? "allow" : "deny");
    json_write_string(f, d->rule);
    fputs(",\"reason\":", f);
    json_write_string(f, d->reason);
    fprintf(f, ",\"policy_error\":%s,\"command\":", outcome == LH_OK ? "false" : "true");
    json_write_string(f, command ? command : "");
    fputs("}\n", f);
    fclose(f);
    if (write_all(log->fd, line, len) < 0) { /* a full disk must not stop the proxy */ }
    free(line);
}

void audit_log_close(struct audit_log *log)
{
    if (!log)
        return;
    if (log->fd >= 0)
        close(log->fd);
    free(log->path);
    free(log);
}
