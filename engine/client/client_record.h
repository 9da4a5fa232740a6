/* client_record.h — reading a session's record, NAME.record.json beside its socket (written by
 * its controller: session/session_record.h), for a session that no longer answers: when it
 * ended and why. A record is kept for a day after the end (an older one is removed when read,
 * and the session's log NAME.log with it);
 * one without a reason whose session is gone is a controller that died: `controller killed`.
 * Must never: say anything of a session that answers (its controller does). */
#ifndef CORDON_CLIENT_RECORD_H
#define CORDON_CLIENT_RECORD_H
#include <stdbool.h>
#include <stddef.h>
#include "base/util.h"

#define CRECORD_KEPT_S (24 * 3600.0)

struct crecord {
    char *name, *profile, *workspace; /* NULL when the record has none */
    long long pid;                    /* the controller's, -1: none */
    double started, ended;            /* Unix seconds; ended 0: unknown (the controller died) */
    const char *reason; /* "idle", "lifetime", "stopped", "owner exited", "controller killed" */
    char *reason_owned;
};

/* The record of session `name`, which does not answer: true with *r filled (crecord_free it),
 * false when there is none (or none of the last day). */
bool crecord_read(const char *name, struct crecord *r);
void crecord_free(struct crecord *r);
/* "ended at 2026-12-07 13:22:05 (idle)". */
void crecord_describe(const struct crecord *r, char *out, size_t n);
/* The names of the records in the session directory (of any age), sorted. */
void crecord_names(struct str_list *names);
#endif
