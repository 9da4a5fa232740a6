/* log_stream.c — see log_stream.h. */
#include "session/log_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/json_write.h"
#include "base/session_protocol.h"
#include "base/util.h"

#define LOG_CHUNK (256u * 1024)
#define LOG_RETRY_MS 5 /* the client's queue is full: look again this much later */

struct log_stream {
    struct log_stream *next;
    struct session *s;
    struct api_request *req;
    struct job *job;            /* while the job exists, then NULL */
    const struct job_log *live; /* the job's log while the job exists, then NULL */
    uint64_t dropped, marker;   /* the log's layout as last seen (kept once the job is gone) */
    int fd;                     /* our own descriptor of the file */
    uint64_t pos, end;          /* output bytes: next to send, end of the snapshot */
    bool mid_line;              /* the last byte sent was not a newline */
    bool follow;                /* go on with what the job writes next */
    bool ndjson;                /* events, not the bare bytes (struct log_query) */
    bool waiting;               /* following, all sent: until log_stream_wake */
    bool ended;                 /* the job has ended: exit_code, signal, stopped hold its end */
    bool stopped;
    int exit_code, signal;
    long pid;
    struct ev_timer retry_t;
    char *buf;
};

static void stream_free(struct log_stream *ls)
{
    for (struct log_stream **pp = &ls->s->log_streams; *pp; pp = &(*pp)->next) {
        if (*pp == ls) {
            *pp = ls->next;
            break;
        }
    }
    ev_timer_stop(ls->s->loop, &ls->retry_t);
    if (ls->fd >= 0)
        close(ls->fd);
    free(ls->buf);
    free(ls);
}

static void on_gone(void *ctx, struct api_request *req)
{
    (void)req;
    stream_free(ctx);
}

/* Keep how j ended (once it has), for the exit event. */
static void note_end(struct log_stream *ls, const struct job *j)
{
    if (job_running(j))
        return;
    ls->ended = true;
    ls->exit_code = job_exit_status(j);
    ls->signal = j->signal;
    ls->stopped = j->stop_requested;
}

/* n bytes of the log, as they are or as an output event. */
static void send_bytes(struct log_stream *ls, const char *data, size_t n)
{
    if (!ls->ndjson) {
        api_stream_write(ls->req, data, n);
        return;
    }
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"" API_EVENT "\":\"" API_EVENT_OUTPUT "\",");
    if (json_utf8_valid((const unsigned char *)data, n)) {
        json_buf_lit(&b, "\"" API_FIELD_DATA "\":");
        json_buf_string(&b, data, n);
    } else {
        json_buf_lit(&b, "\"" API_FIELD_DATA_BASE64 "\":");
        json_buf_base64(&b, (const unsigned char *)data, n);
    }
    json_buf_lit(&b, "}\n");
    api_stream_write(ls->req, b.data, b.len);
    json_buf_free(&b);
}

/* Bytes not yet sent were dropped by the log's cap: one line in the text, an event in NDJSON. */
static void send_dropped(struct log_stream *ls, uint64_t bytes)
{
    char line[160];
    int n = ls->ndjson ? snprintf(line, sizeof line,
                                  "{\"" API_EVENT "\":\"" API_EVENT_DROPPED "\",\"" API_FIELD_BYTES
                                  "\":%" PRIu64 "}\n",
                                  bytes)
                       : snprintf(line, sizeof line,
                                  "%s[cordon: %" PRIu64
                                  " bytes of this log were dropped while it was read]\n",
                                  ls->mid_line ? "\n" : "", bytes);
    ls->mid_line = false;
    api_stream_write(ls->req, line, (size_t)n);
}

/* The end of the stream: in NDJSON, the job's exit (once it has ended) and, when the
 * session's end closed it, why. */
static void finish(struct log_stream *ls)
{
    if (ls->ndjson) {
        struct json_buf b = {0};
        if (ls->job)
            note_end(ls, ls->job);
        if (ls->ended)
            json_buf_printf(&b,
                            "{\"" API_EVENT "\":\"" API_EVENT_EXIT "\",\"" API_FIELD_PID
                            "\":%ld,\"" API_FIELD_EXIT_CODE "\":%d,\"" API_FIELD_SIGNAL
                            "\":%d,\"" API_FIELD_STOPPED "\":%s}\n",
                            ls->pid, ls->exit_code, ls->signal, ls->stopped ? "true" : "false");
        session_ended_event(ls->s, &b);
        if (b.len)
            api_stream_write(ls->req, b.data, b.len);
        json_buf_free(&b);
    }
    api_stream_end(ls->req);
    stream_free(ls);
}

static void pump(struct log_stream *ls);

/* Can more output come? Its leader (or its own sandbox) still runs, or a pipe is still open
 * (what the job left running may write on until it closes it). */
static bool job_writing(const struct job *j)
{
    return job_running(j) || j->out.fd >= 0 || j->err.fd >= 0;
}

static void on_retry(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    pump(t->data);
}

static void pump(struct log_stream *ls)
{
    while (api_stream_pending(ls->req) < STREAM_HIGH_WATER) {
        if (ls->live) {
            ls->dropped = ls->live->dropped;
            ls->marker = ls->live->marker;
        }
        if (ls->pos < ls->dropped) { /* trimmed under our feet: say so, go on with the rest */
            send_dropped(ls, ls->dropped - ls->pos);
            ls->pos = ls->dropped;
        }
        if (ls->follow && ls->live) /* what the job wrote since is ours too */
            ls->end = ls->dropped + ls->live->size - ls->marker;
        if (ls->pos >= ls->end) {
            if (ls->follow && ls->job && job_writing(ls->job)) {
                ls->waiting = true; /* log_stream_wake goes on */
                return;
            }
            finish(ls);
            return;
        }
        uint64_t want = ls->end - ls->pos < LOG_CHUNK ? ls->end - ls->pos : LOG_CHUNK;
        ssize_t got;
        off_t at = (off_t)(ls->marker + ls->pos - ls->dropped);
        RETRY_EINTR(got, pread(ls->fd, ls->buf, (size_t)want, at));
        if (got <= 0) { /* the file is shorter than its bookkeeping: end with what was sent */
            finish(ls);
            return;
        }
        if (ls->ndjson) {
            /* a UTF-8 sequence cut at the chunk's end is sent whole with the next one, or with
             * what the job writes next; as it is (base64) once nothing more can come */
            size_t cut = json_utf8_incomplete_tail((const unsigned char *)ls->buf, (size_t)got);
            bool writing = ls->follow && ls->job && job_writing(ls->job);
            if (cut > 0 && cut < (size_t)got && (ls->pos + (uint64_t)got < ls->end || writing)) {
                got -= (ssize_t)cut;
            } else if (cut > 0 && writing) { /* only the cut sequence is there yet */
                ls->waiting = true;
                return;
            }
        }
        send_bytes(ls, ls->buf, (size_t)got);
        ls->mid_line = ls->buf[got - 1] != '\n';
        ls->pos += (uint64_t)got;
    }
    ev_timer_start(ls->s->loop, &ls->retry_t, LOG_RETRY_MS, on_retry, ls);
}

/* The file offset where the last `lines` lines of the log start (a last line without a
 * newline counts; the marker line counts as one). Reads the file backwards, a chunk at a time. */
static uint64_t tail_start(int fd, uint64_t size, long lines, char *buf)
{
    if (lines == 0)
        return size;
    uint64_t at = size;
    long seen = 0;
    bool last = true; /* the file's last byte: its newline ends the last line, not one before */
    while (at > 0) {
        size_t want = at < LOG_CHUNK ? (size_t)at : LOG_CHUNK;
        ssize_t got;
        RETRY_EINTR(got, pread(fd, buf, want, (off_t)(at - want)));
        if (got != (ssize_t)want)
            return 0; /* shorter than its bookkeeping: the whole file */
        for (size_t i = want; i > 0; i--) {
            if (buf[i - 1] == '\n' && !(last && i == want) && ++seen == lines)
                return at - want + i;
            last = false;
        }
        at -= want;
    }
    return 0;
}

void log_stream_start(struct session *s, struct job *j, struct api_request *req,
                      const struct log_query *q)
{
    const struct job_log *l = &j->log;
    unsigned streams = 0;
    for (const struct log_stream *o = s->log_streams; o; o = o->next)
        streams++;
    if (streams >= API_LOG_STREAMS_MAX) {
        api_respond_error(req, 429,
                          "session '%s' already streams %u logs, its limit: wait for one to end "
                          "or close one",
                          s->p.name, streams);
        return;
    }
    int fd = fcntl(l->fd, F_DUPFD_CLOEXEC, 3);
    char *buf = malloc(LOG_CHUNK);
    struct log_stream *ls = calloc(1, sizeof *ls);
    if (fd < 0 || !buf || !ls) {
        if (fd >= 0)
            close(fd);
        free(buf);
        free(ls);
        api_respond_error(req, 500, "reading the log: %s",
                          fd < 0 ? "cannot duplicate its descriptor" : "out of memory");
        return;
    }
    *ls = (struct log_stream){.next = s->log_streams,
                              .s = s,
                              .req = req,
                              .job = j,
                              .live = l,
                              .follow = q->follow,
                              .ndjson = q->ndjson,
                              .pid = (long)job_shown_pid(j),
                              .dropped = l->dropped,
                              .marker = l->marker,
                              .fd = fd,
                              .pos = l->dropped,
                              .end = l->dropped + l->size - l->marker,
                              .buf = buf};
    s->log_streams = ls;
    api_stream_begin(req, q->ndjson ? "application/x-ndjson" : "text/plain");
    api_on_gone(req, on_gone, ls);
    uint64_t from = q->tail < 0 ? 0 : tail_start(fd, l->size, q->tail, buf);
    if (from >= ls->marker) { /* the tail starts after the marker: skip to it */
        ls->pos = l->dropped + from - ls->marker;
    } else { /* the line saying how much was dropped before, as the file has it */
        ssize_t n = pread(fd, buf, (size_t)ls->marker, 0);
        if (n > 0)
            send_bytes(ls, buf, (size_t)n);
    }
    pump(ls);
}

void log_stream_wake(struct session *s, struct job *j)
{
    /* pump may finish (and unlink) the stream: take the next one first */
    for (struct log_stream *ls = s->log_streams, *next; ls; ls = next) {
        next = ls->next;
        if (ls->job == j && ls->waiting) {
            ls->waiting = false;
            pump(ls);
        }
    }
}

void log_stream_job_gone(struct session *s, struct job *j)
{
    for (struct log_stream *ls = s->log_streams; ls; ls = ls->next) {
        if (ls->live == &j->log) {
            note_end(ls, j);
            ls->dropped = j->log.dropped;
            ls->marker = j->log.marker;
            if (ls->follow) /* all it wrote is to be sent */
                ls->end = ls->dropped + j->log.size - ls->marker;
            ls->live = NULL;
            ls->job = NULL;
        }
    }
    /* a waiting follower sends the rest and ends; it is not called back from here (the
     * caller is freeing j) but from the loop, soon */
    for (struct log_stream *ls = s->log_streams; ls; ls = ls->next) {
        if (!ls->job && ls->waiting) {
            ls->waiting = false;
            ev_timer_start(s->loop, &ls->retry_t, 0, on_retry, ls);
        }
    }
}
