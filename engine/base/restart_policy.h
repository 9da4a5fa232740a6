/* restart_policy.h — a supervised job's restart policy as `cordon exec --restart`, POST /v1/exec
 * and `cordon mcp` take it ("on-failure[:N]" | "always[:N]"), its backoff (a duration: "0.5",
 * "0.5s", "2m", "1h") and the wait before each restart (doubling from the backoff, up to a
 * ceiling). Written once here so that the CLI refuses what the session would refuse, with the
 * same words. Pure: no state, no I/O. Must never: accept a value it cannot say back. */
#ifndef CORDON_RESTART_POLICY_H
#define CORDON_RESTART_POLICY_H
#include <stdbool.h>
#include <stddef.h>

enum restart_when {
    RESTART_NO,         /* not supervised */
    RESTART_ON_FAILURE, /* again when it ends with a non-zero status (or a signal) */
    RESTART_ALWAYS,     /* again whatever its status */
};

#define RESTART_MAX_COUNT 1000000u  /* N of on-failure:N / always:N */
#define RESTART_BACKOFF_DEFAULT 1.0 /* seconds, when --backoff is not given */
#define RESTART_BACKOFF_MIN 0.1     /* seconds: a smaller one would spin */
#define RESTART_WAIT_CEILING 300.0  /* seconds: the doubling wait stops growing here */
#define RESTART_POLICY_TEXT_MAX 32  /* "on-failure:1000000" and its NUL fit */

struct restart_policy {
    enum restart_when when;
    unsigned max;   /* restarts allowed; 0: no limit (the wait's ceiling still holds) */
    double backoff; /* seconds before the first restart; each next one waits twice as long */
};

/* "on-failure", "on-failure:N", "always", "always:N" (N 1 to RESTART_MAX_COUNT): sets
 * out->when and out->max (backoff untouched). false with one line in err (for "no" too: a job
 * without --restart is not supervised). */
bool restart_policy_parse(const char *s, struct restart_policy *out, char *err, size_t errlen);
/* A duration as the profile's keys take it (plain seconds "0.5", or a number with s, m or h),
 * RESTART_BACKOFF_MIN to RESTART_WAIT_CEILING seconds. false with one line in err. */
bool restart_backoff_parse(const char *s, double *out, char *err, size_t errlen);
/* The same check for a number of seconds (the API's "backoff"). */
bool restart_backoff_valid(double seconds);
/* The wait before restart number n (1 for the first): backoff * 2^(n-1), at most
 * RESTART_WAIT_CEILING; *capped says whether the ceiling cut it. */
double restart_wait(const struct restart_policy *p, unsigned long n, bool *capped);
/* "on-failure:3", "always" (as parse takes it back); "no" for RESTART_NO. */
void restart_policy_format(const struct restart_policy *p, char *out, size_t outlen);
/* Seconds said shortly: "0.2s", "12.8s", "5m", "1m30s". */
void restart_say_seconds(double seconds, char *out, size_t outlen);
#endif
