/* Runs in: controller (cordon-session). */
/* session_snapshots.h — a review session's snapshots of its pending changes and its rollback to
 * one (POST/GET /v1/snapshots, DELETE /v1/snapshots/LABEL, POST /v1/rollback). Snapshots live in
 * the workspace's review layer (review_layer.h), beside upper/: they outlive the session, and
 * `cordon discard` leaves them. Uses: review_copy.h, review_layer.h, init_wire.h (the swap is
 * init's, review_view.h). Must never: change the layer's upper/ while the overlay mounts it (a
 * rollback prepares a new one beside it and exchanges the names once init has swapped). */
#ifndef CORDON_SESSION_SNAPSHOTS_H
#define CORDON_SESSION_SNAPSHOTS_H
#include <stdbool.h>
#include <stddef.h>
#include "session/session_ctl.h"

#define SNAPSHOT_LABEL_MAX 64

struct init_wire_msg;

/* A plain name: [A-Za-z0-9._-], 1 to 64 bytes, not starting with '.'. */
bool snapshot_label_valid(const char *label);
/* label NULL: the next automatic one (s1, s2, ...). */
void session_op_snapshot(struct session *s, struct api_request *req, const char *label);
void session_op_snapshots(struct session *s, struct api_request *req);
void session_op_drop_snapshot(struct session *s, struct api_request *req, const char *label);
void session_op_rollback(struct session *s, struct api_request *req, const char *label);
/* Init's INIT_WIRE_REVIEW_SWAPPED: the rollback under way is answered. */
void session_review_swapped(struct session *s, const struct init_wire_msg *m, const void *payload,
                            size_t len);
#endif
