/* client_ndjson.c — see client_ndjson.h. */
#include "client/client_ndjson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_read.h"
#include "base/session_protocol.h"
#include "base/util.h"

static int emit(const char *line, size_t len, ndjson_line_fn fn, void *ctx)
{
    if (len > 0 && line[len - 1] == '\r')
        len--;
    return len ? fn(ctx, line, len) : 0;
}

static void keep(struct ndjson_lines *l, const char *data, size_t len)
{
    if (l->len + len > l->cap) {
        size_t cap = l->cap ? l->cap : 256;
        while (cap < l->len + len)
            cap *= 2;
        l->buf = xrealloc(l->buf, cap);
        l->cap = cap;
    }
    memcpy(l->buf + l->len, data, len);
    l->len += len;
}

int ndjson_feed(struct ndjson_lines *l, const char *data, size_t len, ndjson_line_fn fn, void *ctx)
{
    const char *end = data + len;
    while (data < end) {
        const char *nl = memchr(data, '\n', (size_t)(end - data));
        if (!nl) {
            keep(l, data, (size_t)(end - data));
            return 0;
        }
        int rc;
        if (l->len) {
            /* the line began in an earlier piece */
            keep(l, data, (size_t)(nl - data));
            rc = emit(l->buf, l->len, fn, ctx);
            l->len = 0;
        } else {
            rc = emit(data, (size_t)(nl - data), fn, ctx);
        }
        if (rc < 0)
            return rc;
        data = nl + 1;
    }
    return 0;
}

int ndjson_finish(struct ndjson_lines *l, ndjson_line_fn fn, void *ctx)
{
    size_t n = l->len;
    l->len = 0;
    return n ? emit(l->buf, n, fn, ctx) : 0;
}

void ndjson_lines_free(struct ndjson_lines *l)
{
    free(l->buf);
    l->buf = NULL;
    l->len = l->cap = 0;
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

ssize_t ndjson_base64_decode(const char *in, size_t len, unsigned char *out)
{
    size_t n = 0, pad = 0;
    unsigned acc = 0, bits = 0, chars = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == '=') {
            pad++;
            continue;
        }
        int v = b64_value(c);
        if (v < 0 || pad)
            return -1; /* not base64, or data after padding */
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        chars++;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    /* A lone sixth bit group cannot hold a byte; padding only completes a quantum. */
    if (chars % 4 == 1 || pad > 2 || (pad && (chars + pad) % 4 != 0))
        return -1;
    return (ssize_t)n;
}

static int bad(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s", what);
    return -1;
}

static bool get_int(const struct json_value *o, const char *key, long long *out)
{
    const struct json_value *m = json_get(o, key);
    if (!m || m->type != JSON_NUMBER || !m->is_integer || m->number < -2147483648.0 ||
        m->number > 2147483647.0)
        return false;
    *out = (long long)m->number;
    return true;
}

static bool get_bool(const struct json_value *o, const char *key, bool *out)
{
    const struct json_value *m = json_get(o, key);
    if (!m)
        return true; /* absent: false */
    if (m->type != JSON_BOOL)
        return false;
    *out = m->boolean;
    return true;
}

static int decode_output(struct ndjson_event *ev, char *err, size_t errlen)
{
    const struct json_value *o = ev->tree_;
    const struct json_value *stream = json_get(o, API_FIELD_STREAM);
    if (stream && stream->type != JSON_STRING)
        return bad(err, errlen, "an output event's \"stream\" is not a string");
    if (!stream) /* a job log's bytes (GET /v1/jobs/PID/log?format=ndjson): ours to print */
        ev->fd = 1;
    else if (strcmp(stream->str, "stdout") == 0)
        ev->fd = 1;
    else if (strcmp(stream->str, "stderr") == 0)
        ev->fd = 2;
    else
        return bad(err, errlen, "an output event's \"stream\" is neither stdout nor stderr");
    const struct json_value *d = json_get(o, API_FIELD_DATA);
    if (d && d->type == JSON_STRING) {
        ev->data = d->str;
        ev->len = d->len;
        return 0;
    }
    d = json_get(o, API_FIELD_DATA_BASE64);
    if (!d || d->type != JSON_STRING)
        return bad(err, errlen, "an output event without a \"data\" or \"data_base64\" string");
    ev->decoded_ = xmalloc(d->len / 4 * 3 + 3);
    ssize_t n = ndjson_base64_decode(d->str, d->len, (unsigned char *)ev->decoded_);
    if (n < 0)
        return bad(err, errlen, "an output event's \"data_base64\" is not base64");
    ev->data = ev->decoded_;
    ev->len = (size_t)n;
    return 0;
}

static int decode_exit(struct ndjson_event *ev, char *err, size_t errlen)
{
    const struct json_value *o = ev->tree_;
    long long code, sig = 0;
    if (!get_int(o, API_FIELD_EXIT_CODE, &code) || code < 0 || code > 255)
        return bad(err, errlen, "an exit event without an \"exit_code\" from 0 to 255");
    const struct json_value *s = json_get(o, API_FIELD_SIGNAL);
    if (s && s->type != JSON_NULL && !get_int(o, API_FIELD_SIGNAL, &sig))
        return bad(err, errlen, "an exit event's \"signal\" is not an integer");
    if (!get_bool(o, API_FIELD_TIMED_OUT, &ev->timed_out) ||
        !get_bool(o, API_FIELD_STOPPED, &ev->stopped))
        return bad(err, errlen, "an exit event's \"timed_out\" or \"stopped\" is not a boolean");
    const struct json_value *d = json_get(o, API_FIELD_DURATION_MS);
    if (d && d->type == JSON_NUMBER)
        ev->duration_ms = d->number;
    ev->exit_code = (int)code;
    ev->signal = (int)sig;
    (void)get_bool(o, API_FIELD_RAN_OUTSIDE, &ev->ran_outside);
    const struct json_value *r = json_get(o, API_FIELD_REFUSALS);
    if (r && r->type != JSON_ARRAY)
        return bad(err, errlen, "an exit event's \"refusals\" is not an array");
    ev->refusals = r;
    const struct json_value *t = json_get(o, API_FIELD_HOST_TRUSTED_CHANGES);
    if (t && t->type != JSON_ARRAY)
        return bad(err, errlen, "an exit event's \"host_trusted_changes\" is not an array");
    ev->host_trusted = t;
    return 0;
}

int ndjson_decode(const char *line, size_t len, struct ndjson_event *ev, char *err, size_t errlen)
{
    memset(ev, 0, sizeof *ev);
    ev->kind = NDJSON_OTHER;
    ev->tree_ = json_parse(line, len, err, errlen);
    if (!ev->tree_)
        return -1;
    const struct json_value *o = ev->tree_;
    if (o->type != JSON_OBJECT)
        return bad(err, errlen, "a stream line is not an object");
    const struct json_value *event = json_get(o, API_EVENT);
    if (!event || event->type != JSON_STRING)
        return bad(err, errlen, "a stream line without an \"event\" string");
    (void)get_int(o, API_FIELD_PID, &ev->pid);
    if (strcmp(event->str, API_EVENT_OUTPUT) == 0) {
        ev->kind = NDJSON_OUTPUT;
        return decode_output(ev, err, errlen);
    }
    if (strcmp(event->str, API_EVENT_EXIT) == 0) {
        ev->kind = NDJSON_EXIT;
        return decode_exit(ev, err, errlen);
    }
    if (strcmp(event->str, API_EVENT_APPROVAL) == 0) {
        ev->kind = NDJSON_APPROVAL;
        ev->approval = json_get(o, API_FIELD_APPROVAL);
        if (!ev->approval || ev->approval->type != JSON_OBJECT)
            return bad(err, errlen, "an approval event without an \"approval\" object");
        return 0;
    }
    if (strcmp(event->str, API_EVENT_DROPPED) == 0) {
        ev->kind = NDJSON_DROPPED;
        const struct json_value *b = json_get(o, API_FIELD_BYTES);
        if (!b || b->type != JSON_NUMBER || !b->is_integer || b->number < 0)
            return bad(err, errlen, "a dropped event without a \"bytes\" count");
        ev->bytes = (unsigned long long)b->number;
        return 0;
    }
    if (strcmp(event->str, API_EVENT_SESSION_ENDED) == 0) {
        ev->kind = NDJSON_SESSION_ENDED;
        const struct json_value *r = json_get(o, API_FIELD_REASON);
        if (!r || r->type != JSON_STRING)
            return bad(err, errlen, "a session_ended event without a \"reason\" string");
        ev->reason = r->str;
        return 0;
    }
    if (strcmp(event->str, API_EVENT_STARTED) == 0)
        ev->kind = NDJSON_STARTED;
    return 0;
}

void ndjson_event_free(struct ndjson_event *ev)
{
    json_free(ev->tree_);
    ev->tree_ = NULL;
    free(ev->decoded_);
    ev->decoded_ = NULL;
}
