/* client_call.c — see client_call.h. */
#include "client/client_call.h"

#include <stdio.h>
#include <string.h>

#include "base/session_protocol.h"
#include "client/client_record.h"
#include "client/client_reply.h"

int ccall_request(struct chttp *h, const char *session, const char *method, const char *path,
                  const char *body, size_t body_len, chttp_sink sink, void *ctx,
                  unsigned long long deadline_ms, char *err, size_t errlen)
{
    if (chttp_open(h, "mcp", session, true) != 0) {
        snprintf(err, errlen, "the socket path of session '%s' is too long", session);
        return -1;
    }
    h->body_deadline_ms = deadline_ms;
    int rc = chttp_request(h, method, path, body, body_len, sink, ctx);
    if (h->sink_stopped)
        return 0; /* the sink stopped it and keeps why */
    if (rc < 0 && !h->status) {
        struct crecord r;
        char ended[128] = "ended";
        if (h->missing && crecord_read(session, &r)) {
            crecord_describe(&r, ended, sizeof ended);
            crecord_free(&r);
        }
        if (h->missing)
            snprintf(err, errlen, "the sandbox session '%s' is not running (it %s)", session,
                     ended);
        else if (h->connect_errno)
            snprintf(err, errlen, "cannot connect to the sandbox session '%s': %s", session,
                     strerror(h->connect_errno));
        else
            snprintf(err, errlen, "lost the connection to the sandbox session '%s': %s", session,
                     h->failure[0] ? h->failure : "the HTTP exchange failed");
        return -1;
    }
    if (!chttp_ok(h)) {
        char perr[160];
        struct json_value *v = h->body ? json_parse(h->body, h->body_len, perr, sizeof perr) : NULL;
        const char *e = reply_str(v, API_FIELD_ERROR);
        if (e)
            snprintf(err, errlen, "%s", e);
        else
            snprintf(err, errlen, "the session answered HTTP %ld", h->status);
        json_free(v);
        return -1;
    }
    if (rc < 0) {
        snprintf(err, errlen, "lost the connection to the sandbox session '%s': %s", session,
                 h->failure[0] ? h->failure : "the HTTP exchange failed");
        return -1;
    }
    return 0;
}

struct json_value *ccall_json(struct chttp *h, const char *session, const char *method,
                              const char *path, const char *body, char *err, size_t errlen)
{
    if (ccall_request(h, session, method, path, body, body ? strlen(body) : 0, NULL, NULL, 0, err,
                      errlen) < 0)
        return NULL;
    char perr[160];
    struct json_value *v = json_parse(h->body ? h->body : "", h->body_len, perr, sizeof perr);
    if (!v || v->type != JSON_OBJECT) {
        snprintf(err, errlen, "the session answered with malformed JSON: %s",
                 v ? "not an object" : perr);
        json_free(v);
        return NULL;
    }
    return v;
}
