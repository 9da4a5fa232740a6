/* log_stream.h — GET /v1/jobs/PID/log as a stream: the job's log as it was when asked, read
 * from the file in chunks as the client takes them, so a 64 MiB log costs the controller about
 * one chunk and the client's queue (STREAM_HIGH_WATER), not two copies of the log.
 * The log keeps growing and may drop its oldest part (job_log.c) while it is read: positions
 * are counted in output bytes, so a stream never repeats or mixes bytes; when bytes it had yet
 * to send were dropped, it says how many in one line and goes on with what is there. */
#ifndef CORDON_LOG_STREAM_H
#define CORDON_LOG_STREAM_H
#include "session/session_jobs.h"

/* Answer req with j's log (j is a background job with a log). */
void log_stream_start(struct session *s, struct job *j, struct api_request *req);
/* j is about to be freed: its readers keep their own descriptor of the file and go on. */
void log_stream_job_gone(struct session *s, struct job *j);
#endif
