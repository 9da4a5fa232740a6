/* client_reply.c — see client_reply.h. */
#include "client/client_reply.h"
#include "base/log.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int reply_malformed(const char *cmd, const char *what)
{
    fprintf(stderr, "cordon: %s: the session answered with malformed JSON: %s\n", cmd, what);
    return CORDON_EXIT_SETUP;
}

static struct json_value *parse_object(const struct chttp *h)
{
    char err[160];
    struct json_value *v = json_parse(h->body ? h->body : "", h->body_len, err, sizeof err);
    if (!v) {
        reply_malformed(h->cmd, err);
        return NULL;
    }
    if (v->type != JSON_OBJECT) {
        snprintf(err, sizeof err, "an answer is an object, not a %s", json_type_name(v->type));
        reply_malformed(h->cmd, err);
        json_free(v);
        return NULL;
    }
    return v;
}

struct json_value *reply_json(const struct chttp *h)
{
    return parse_object(h);
}

int reply_fail(const struct chttp *h)
{
    struct json_value *v = parse_object(h);
    if (!v)
        return CORDON_EXIT_SETUP;
    const char *msg = reply_str(v, "error");
    if (msg)
        fprintf(stderr, "cordon: %s: %s\n", h->cmd, msg);
    else
        fprintf(stderr, "cordon: %s: the session answered HTTP %ld without saying why\n", h->cmd,
                h->status);
    json_free(v);
    return CORDON_EXIT_SETUP;
}

const char *reply_str(const struct json_value *obj, const char *key)
{
    const struct json_value *m = json_get(obj, key);
    return m && m->type == JSON_STRING ? m->str : NULL;
}

const struct json_value *reply_array(const struct json_value *obj, const char *key)
{
    const struct json_value *m = json_get(obj, key);
    return m && m->type == JSON_ARRAY ? m : NULL;
}

bool reply_num(const struct json_value *obj, const char *key, double *out)
{
    const struct json_value *m = json_get(obj, key);
    if (!m || m->type != JSON_NUMBER)
        return false;
    *out = m->number;
    return true;
}

bool reply_int(const struct json_value *obj, const char *key, long long *out)
{
    double d;
    /* 2^53: every integer below it is exact in a double */
    if (!reply_num(obj, key, &d) || d != floor(d) || fabs(d) > 9007199254740992.0)
        return false;
    *out = (long long)d;
    return true;
}

void reply_print_line(FILE *out, const char *text, size_t len)
{
    while (len > 0 && strchr(" \t\r\n", text[len - 1]))
        len--;
    fwrite(text, 1, len, out);
    fputc('\n', out);
}

struct json_value *reply_request_json(struct chttp *h, const char *method, const char *path,
                                      const char *body, size_t len, int *status)
{
    *status = CORDON_EXIT_SETUP;
    if (chttp_request(h, method, path, body, len, NULL, NULL) < 0) {
        *status = chttp_lost(h);
        return NULL;
    }
    if (!chttp_ok(h)) {
        *status = reply_fail(h);
        return NULL;
    }
    return reply_json(h);
}
