/* Runs in: init (the session's PID 1). */
/* session_init.h — PID 1 of a session. After the set-up `cordon run` does too (init_prepare),
 * it serves the controller's requests (sandbox/init_wire.h) until told to shut down: each command is
 * a fresh `bash -c STRING` in its own session and process group, confined like `cordon run`'s
 * command; every zombie is reaped as soon as it appears; the end of a command's bash is
 * reported; groups are signalled on request. It dies with the controller (PR_SET_PDEATHSIG),
 * and its end makes the kernel kill everything left in the sandbox. */
#ifndef CORDON_SESSION_INIT_H
#define CORDON_SESSION_INIT_H
#include "base/attrs.h"
#include "sandbox/init.h"

/* Where a background command's output is logged, inside the sandbox ($TMPDIR is /tmp). */
#define SESSION_LOG_DIR "/tmp/cordon/processes"

CORDON_NORETURN void session_init_main(const struct init_params *p);
#endif
