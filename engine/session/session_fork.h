/* Runs in: controller (cordon-session). */
/* session_fork.h — forks for best-of-N (docs/review.md) and the session's pending changes, on the
 * control API: POST /v1/fork {"name": NEW} starts session NEW over this session's workspace in
 * review mode, with a layer of its own (review_fork_dir) that begins as a copy of this session's
 * pending changes (its upper/ and seen/, not work/; none when this session is not in review
 * mode: the host's workspace is then the fork's base), and with this session's start options
 * (session_params.start_argv: the words session start was given, but its NAME, --detach, --owner
 * and --review-fork) plus --review --review-fork NEW, owned by this session's owner (detached
 * when this one is). The new session is started by `cordon-session session start` in a child
 * process, from this session's start folder and environment; the request is answered once that
 * returns ({"name", "socket", "workspace", "layer", "pending_copied"}), without holding up the
 * loop. GET /v1/review answers `cordon review --json` of the session's layer.
 * Must never: start a fork over a fork layer that holds pending changes (they are the person's
 * until applied or discarded), or name another session's socket in its answer. */
#ifndef CORDON_SESSION_FORK_H
#define CORDON_SESSION_FORK_H
#include "session/api_server.h"

struct session;

void session_op_fork(struct session *s, struct api_request *req, const char *name);
void session_op_review(struct session *s, struct api_request *req);
#endif
