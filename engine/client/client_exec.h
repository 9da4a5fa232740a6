/* client_exec.h — `cordon exec NAME [--timeout S] [--background [--restart POLICY [--backoff
 * D]]] [--turn ID] [--json] -- 'shell string' [options...]`: its arguments, the POST /v1/exec body, and the run (the
 * foreground NDJSON stream written out as it arrives, or the background answer).
 * Uses client_http, client_reply, client_ndjson, client_output. Must never: buffer the
 * command's output (it goes out with write(2) as each event arrives), or stop the command (a
 * client going away leaves it running, as the API says). */
#ifndef CORDON_CLIENT_EXEC_H
#define CORDON_CLIENT_EXEC_H
#include <stdbool.h>
#include <stddef.h>

struct cexec_args {
    const char *name; /* the session (validated) */
    char *command;    /* owned: the shell string, later plain words joined by ' ' */
    bool background;
    bool json; /* --json: the exit event / background answer as a line */
    bool has_timeout;
    double timeout;      /* seconds, > 0, when has_timeout */
    const char *turn;    /* or NULL */
    const char *restart; /* --restart as given (checked), or NULL */
    bool has_backoff;
    double backoff; /* seconds, when has_backoff */
};

enum cexec_parse { CEXEC_RUN, CEXEC_HELP, CEXEC_USAGE };

/* Parse argv[0..argc) where argv[0] is "exec". Options may come before "--" or after the
 * shell string (the first word after "--"); other words after it are joined to it with single
 * spaces, as ssh does. CEXEC_USAGE leaves one line (without "cordon: exec: ") in err. Pure
 * apart from allocating out->command; free with cexec_args_free whatever the result. */
enum cexec_parse cexec_parse_args(int argc, char **argv, struct cexec_args *out, char *err,
                                  size_t errlen);
void cexec_args_free(struct cexec_args *a);
/* A positive, finite number of seconds (fractions allowed). */
bool cexec_parse_timeout(const char *s, double *out);
/* Format seconds the shortest way that reads back the same ("30", "1.5"). */
void cexec_format_seconds(double s, char *out, size_t outlen);
/* The request body {"command","background","timeout","turn","restart","backoff"} (absent ones omitted); malloc'd,
 * NUL-terminated, its length in *len. */
char *cexec_body(const struct cexec_args *a, size_t *len);

/* Run it against the session: the exit status (the command's; 124 when it timed out; 1 when
 * the session refused or went away). */
int cexec_run(const struct cexec_args *a);
void cexec_usage(void);
#endif
