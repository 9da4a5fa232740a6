/* Runs in: controller (cordon-session; the re-run is a host process it forks). */
/* session_rerun.h — a session's command run again outside the sandbox, as a person approved
 * (session_questions.h): a separate process on the host, not under the session's init, in its
 * own process group, in the workspace, with escalate_outside_environment(). Its output is
 * handed to the caller as it comes, its end reported once. Never started without an approval. */
#ifndef CORDON_SESSION_RERUN_H
#define CORDON_SESSION_RERUN_H
#include <stddef.h>
#include "base/evloop.h"
#include "sandbox/sandbox-t.h"

struct rerun;

struct rerun_callbacks {
    void *ctx;
    void (*output)(void *ctx, int fd, const char *data, size_t n); /* fd 1 or 2 */
    void (*done)(void *ctx, int exit_code);                        /* 128+N for a signal */
};

/* Start `bash -c command`; NULL with a line in err. */
struct rerun *rerun_start(struct ev_loop *loop, const struct sandbox_config *cfg,
                          const char *command, const struct rerun_callbacks *cb, char *err,
                          size_t errlen);
/* KILL its group if it still runs (the session is ending), and free it. */
void rerun_free(struct rerun *r);
#endif
