/* Runs in: controller (`cordon run`, a session's controller). */
/* sandbox_start.h — what a caller wants of a sandbox's start-up, in one struct that `cordon run`
 * and a session fill; the start-up reads it (no mode setters, no file statics). */
#ifndef CORDON_SANDBOX_START_H
#define CORDON_SANDBOX_START_H
#include <stdbool.h>

struct run_flags;

/* Who starts the sandbox: the steps that differ between them are named after it. */
enum sandbox_start_for {
    SANDBOX_START_RUN,     /* `cordon run`: one command, a one-shot controller */
    SANDBOX_START_SESSION, /* `cordon session start`: init serves a session's commands */
};

struct sandbox_start {
    enum sandbox_start_for kind;
    const struct run_flags *flags; /* what the command line asked for */
    const char *cwd;               /* the caller's current directory */
    /* Resolve the profile through the cache of resolved profiles
     * (lh_resolve_sandbox_config_cached): `cordon run`; a session resolves without it. */
    bool profile_cache;
    /* A root caller's sandbox is to have the shifted maps (sandbox/root_writes.h): then the
     * resolution neither starts nor runs root_only's scan for a profile that takes the shift
     * (the kernel refuses root-only files itself). */
    bool expect_root_shift;
};
#endif
