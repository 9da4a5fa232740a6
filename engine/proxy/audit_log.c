/* audit_log.c — see audit_log.h. One write(2) per line on an O_APPEND fd, so lines of several
 * cordon processes never interleave. The log is opened without following a symbolic link (at
 * the file or at its directory) and written only when it is a regular file of the caller's: a
 * link planted there cannot make cordon append to a file it points at. */
#include "proxy/audit_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cordon_dirs.h"
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
    const char *name = lh_net_kind_name(kind); /* the policy's names, one table */
    return name ? name : "?";
}

static char *audit_path(void)
{
    const char *explicit_path = getenv("CORDON_AUDIT_LOG");
    if (explicit_path && *explicit_path)
        return xstrdup(explicit_path);
    /* a relative XDG_STATE_HOME is ignored: it would put the log in the workspace */
    return cdir_path(CDIR_STATE, "audit.jsonl");
}

struct audit_log *audit_log_open(void)
{
    struct audit_log *log = xcalloc(1, sizeof *log);
    log->fd = -1;
    log->path = audit_path();
    return log;
}

/* Why fd (the opened log) must not be written, or NULL: only a regular file of the caller's
 * own takes the lines (not a device, a FIFO, or another user's file reached some other way). */
static const char *unfit(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return strerror(errno);
    if (!S_ISREG(st.st_mode))
        return "not a regular file";
    if (st.st_uid != geteuid())
        return "owned by another user";
    return NULL;
}

/* Open path for appending without following a link: its directory is opened with O_NOFOLLOW
 * (a link there, planted or not, is refused rather than followed to wherever it points) and the
 * file under it with O_NOFOLLOW too. An fd, or -1 with why set. */
static int open_no_follow(const char *path, const char **why)
{
    int fd = -1, dfd = -1;
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    const char *name = slash ? slash + 1 : path;
    if (slash)
        *slash = '\0';
    dfd = open(slash ? (*dir ? dir : "/") : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        *why = errno == ELOOP ? "its directory is a symbolic link" : strerror(errno);
        goto out;
    }
    fd = openat(dfd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
    if (fd < 0) {
        *why = errno == ELOOP ? "it is a symbolic link" : strerror(errno);
        goto out;
    }
    if ((*why = unfit(fd))) {
        close(fd);
        fd = -1;
    }
out:
    if (dfd >= 0)
        close(dfd);
    free(dir);
    return fd;
}

/* Opened at the first decision: a run that never uses the network leaves no file behind. */
static bool ensure_open(struct audit_log *log)
{
    if (log->fd >= 0)
        return true;
    if (!log->path || log->failed)
        return false;
    (void)mkdir_parents(log->path, 0700); /* the open below says what went wrong */
    const char *why = NULL;
    log->fd = open_no_follow(log->path, &why);
    if (log->fd < 0) {
        log->failed = true;
        LOG_W("audit", "not writing the audit log %s: %s", log->path, why ? why : "cannot open it");
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
    fprintf(f, "{\"time\":%.3f,\"pid\":%d,\"kind\":\"%s\",\"host\":", clock_wall_s(), (int)getpid(),
            net_kind_name(kind));
    json_write_string(f, host);
    fprintf(f, ",\"port\":%u,\"verdict\":\"%s\",\"rule\":", port, d->allow ? "allow" : "deny");
    json_write_string(f, d->rule);
    fputs(",\"reason\":", f);
    json_write_string(f, d->reason);
    fprintf(f, ",\"policy_error\":%s,\"command\":", outcome == LH_OK ? "false" : "true");
    json_write_string(f, command ? command : "");
    fputs("}\n", f);
    fclose(f);
    if (write_all(log->fd, line, len) < 0) { /* a full disk must not stop the proxy */
    }
    free(line);
}

void audit_log_event(struct audit_log *log, const char *kind, const char *host, unsigned port,
                     bool allow, const char *rule, const char *reason, const char *command)
{
    if (!log || !ensure_open(log))
        return;
    char *line = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&line, &len);
    if (!f)
        return;
    fprintf(f, "{\"time\":%.3f,\"pid\":%d,\"kind\":", clock_wall_s(), (int)getpid());
    json_write_string(f, kind);
    fputs(",\"host\":", f);
    json_write_string(f, host);
    fprintf(f, ",\"port\":%u,\"verdict\":\"%s\",\"rule\":", port, allow ? "allow" : "deny");
    json_write_string(f, rule ? rule : "");
    fputs(",\"reason\":", f);
    json_write_string(f, reason ? reason : "");
    fputs(",\"policy_error\":false,\"command\":", f);
    json_write_string(f, command ? command : "");
    fputs("}\n", f);
    fclose(f);
    if (write_all(log->fd, line, len) < 0) { /* a full disk must not stop the relays */
    }
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
