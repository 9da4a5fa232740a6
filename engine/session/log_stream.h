/* Runs in: controller (cordon-session). */
/* log_stream.h — GET /v1/jobs/PID/log as a stream: the job's log as it was when asked, read
 * from the file in chunks as the client takes them, so a 64 MiB log costs the controller about
 * one chunk and the client's queue (STREAM_HIGH_WATER), not two copies of the log.
 * The log keeps growing and may drop its oldest part (job_log.c) while it is read: positions
 * are counted in output bytes, so a stream never repeats or mixes bytes; when bytes it had yet
 * to send were dropped, it says how many in one line and goes on with what is there.
 * Asked for, it starts at the last N lines (tail) and goes on with what the job writes next
 * (follow) until the job has ended and its output is drained, the client leaves or the
 * session ends.
 * Bounded: at most API_LOG_STREAMS_MAX streams per session (the next is a 429 in one line);
 * each holds one chunk and never more than STREAM_HIGH_WATER queued for its client, so a
 * follower that reads slowly is sent less often, not buffered for: while it lags, what the
 * log's cap drops is not sent to it, and it gets one line (or a dropped event) saying how much. */
#ifndef CORDON_LOG_STREAM_H
#define CORDON_LOG_STREAM_H
#include <stdbool.h>

#include "session/session_jobs.h"

/* What a reader asked for: tail < 0 is the whole log. ndjson: the bytes as output events,
 * and, last, the job's exit event once it has ended and a session_ended event when the
 * session's end closed the stream (docs/session-api.md). */
struct log_query {
    long tail;
    bool follow;
    bool ndjson;
};

/* Answer req with j's log (j is a background job with a log). */
void log_stream_start(struct session *s, struct job *j, struct api_request *req,
                      const struct log_query *q);
/* j wrote to its log, or its leader or an output pipe ended: followers go on or finish. */
void log_stream_wake(struct session *s, struct job *j);
/* j is about to be freed: its readers keep their own descriptor of the file and go on. */
void log_stream_job_gone(struct session *s, struct job *j);
#endif
