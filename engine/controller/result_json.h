/* result_json.h — the one JSON object `cordon run --json` prints after the command's output, on
 * a line of its own (run.c ends an unfinished last line first). */
#ifndef CORDON_RESULT_JSON_H
#define CORDON_RESULT_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct lh_refusal;
struct str_list;
struct trusted_changes;

struct run_result {
    int exit_code;
    int signal;         /* 0 when the command exited */
    double duration_ms; /* from before the sandbox's clone to the result */
    double detect_ms;   /* in refusal detection (the hook included); 0 when it did not run */
    const char *profile;
    const struct lh_refusal *refusals; /* what the refusal hook found */
    size_t n_refusals;
    bool ran_outside; /* the command was re-run outside the sandbox, as approved */
    /* the declared credentials, "NAME\tHOST,HOST" each (credentials_summary); NULL: none */
    const struct str_list *credentials;
    const struct trusted_changes *trusted; /* host-trusted paths changed, or NULL (none) */
};

/* One line: {"exit_code":N,"signal":null|"SIGTERM","duration_ms":F,"detect_ms":F,
 * "profile":"coding","refusals":[{"kind":"write","path":"/etc/x","line":"...","reason":"..."}],
 * "ran_outside":false,"credentials":[{"name":"GH_TOKEN","hosts":["github.com"]}],
 * "host_trusted_changes":[{"path":".envrc","change":"added","why":"..."}]}: a credential's name
 * and hosts, never its value; host_trusted_changes always there, [] when none
 * ("host_trusted_truncated":true after it when a walk hit a bound). Times are milliseconds
 * (floats): duration_ms the whole run, detect_ms
 * the part spent judging the output for refusals (bench/output.sh reads it). */
void result_json_print(FILE *out, const struct run_result *r);
#endif
