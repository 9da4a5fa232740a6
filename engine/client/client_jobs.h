/* client_jobs.h — `cordon jobs NAME [--json]`, `logs NAME PID [--tail N] [--follow]`, `stop NAME PID [--json]`,
 * `cancel NAME TURN [--json]`: one request each (GET /v1/jobs, GET /v1/jobs/PID/log,
 * POST /v1/jobs/PID/stop, POST /v1/turns/TURN/cancel) and their human forms.
 * Uses client_http, client_reply, client_table, client_output. Must never: buffer a log (it
 * can be 64 MiB; it goes to stdout as it arrives). */
#ifndef CORDON_CLIENT_JOBS_H
#define CORDON_CLIENT_JOBS_H
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* A PID as the user typed it: decimal digits only, 1 to INT_MAX. Pure. */
bool cjobs_parse_pid(const char *s, long *out);
/* A command on one line: '\n' '\r' '\t' as \n \r \t, other control bytes as \xNN. Returns a
 * new string. Pure. */
char *cjobs_command_line(const char *s);
/* Unix seconds as local "HH:MM:SS" (with_date: "YYYY-MM-DD HH:MM:SS"). */
void cjobs_format_time(double t, bool with_date, char *out, size_t outlen);

/* Each returns the exit status: 0, or 125 after printing why. */
int cjobs_list(const char *name, bool json);
/* What `cordon logs` asks for: tail < 0 is the whole log. */
struct cjobs_log_opts {
    long tail;
    bool follow;
};
int cjobs_log(const char *name, long pid, const struct cjobs_log_opts *o);
/* json: the session's answer (the job; {"turn", "stopped"}) as one line instead of the words */
int cjobs_stop(const char *name, long pid, bool json);
int cjobs_cancel(const char *name, const char *turn, bool json);
#endif
