/* session_grants.c — see session_grants.h. */
#include "session/session_grants.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "proxy/proxy.h"
#include "session/session_jobs.h"

static bool rerun_over(const struct rerun_grant *g, double now)
{
    return g->expires > 0 && now >= g->expires;
}

/* Drop the re-run grants whose time is over, one line each. */
static void rerun_prune(struct session *s)
{
    double now = clock_wall_s();
    for (struct rerun_grant **p = &s->reruns_kept.list; *p;) {
        struct rerun_grant *g = *p;
        if (!rerun_over(g, now)) {
            p = &g->next;
            continue;
        }
        LOG_I("session", "grant r%u has expired: '%s' is asked about again before it runs outside",
              g->id, g->command);
        *p = g->next;
        s->reruns_kept.n--;
        free(g->command);
        free(g);
    }
}

bool rerun_grant_add(struct session *s, const char *command, const char *by, double for_s)
{
    struct rerun_grants *r = &s->reruns_kept;
    rerun_prune(s);
    if (r->n >= RERUN_GRANTS_MAX) {
        LOG_W("session",
              "at most %d re-runs outside are allowed for the session at once: '%s' is not kept "
              "(revoke one: cordon revoke %s ID)",
              RERUN_GRANTS_MAX, command, s->p.name);
        return false;
    }
    struct rerun_grant *g = xcalloc(1, sizeof *g);
    g->id = ++r->next_id;
    g->command = xstrdup(command);
    snprintf(g->by, sizeof g->by, "%s", by ? by : "api");
    g->granted = clock_wall_s();
    g->expires = for_s > 0 ? g->granted + for_s : 0;
    struct rerun_grant **tail = &r->list;
    while (*tail)
        tail = &(*tail)->next;
    *tail = g;
    r->n++;
    return true;
}

bool rerun_grant_covers(struct session *s, const char *command)
{
    rerun_prune(s);
    for (const struct rerun_grant *g = s->reruns_kept.list; g; g = g->next)
        if (strcmp(g->command, command) == 0)
            return true;
    return false;
}

void rerun_grants_free(struct rerun_grants *r)
{
    while (r->list) {
        struct rerun_grant *g = r->list;
        r->list = g->next;
        free(g->command);
        free(g);
    }
    r->n = 0;
}

/* ---- the API ------------------------------------------------------------------------------- */

static void expires_json(struct json_buf *b, double expires)
{
    if (expires > 0)
        json_buf_printf(b, ",\"expires\":%.3f}", expires);
    else
        json_buf_lit(b, ",\"expires\":null}");
}

static void network_json(struct json_buf *b, const struct proxy_grant_info *g)
{
    bool v6 = strchr(g->host, ':') != NULL;
    char target[300];
    snprintf(target, sizeof target, "%s%s%s:%u", v6 ? "[" : "", g->host, v6 ? "]" : "", g->port);
    json_buf_printf(b, "{\"id\":\"g%u\",\"kind\":\"network\",\"scope\":\"%s\",\"target\":", g->id,
                    g->command       ? "command"
                    : g->expires > 0 ? "timed"
                                     : "session");
    json_buf_cstr_or_null(b, target);
    json_buf_lit(b, ",\"host\":");
    json_buf_cstr_or_null(b, g->host);
    json_buf_printf(b, ",\"port\":%u,\"command\":null,\"open\":%u,\"by\":", g->port, g->open);
    json_buf_cstr_or_null(b, g->by);
    json_buf_printf(b, ",\"granted\":%.3f", g->granted);
    expires_json(b, g->expires);
}

static void rerun_json(struct json_buf *b, const struct rerun_grant *g)
{
    json_buf_printf(b, "{\"id\":\"r%u\",\"kind\":\"rerun\",\"scope\":\"%s\",\"target\":", g->id,
                    g->expires > 0 ? "timed" : "session");
    json_buf_cstr_or_null(b, g->command);
    json_buf_lit(b, ",\"host\":null,\"port\":null,\"command\":");
    json_buf_cstr_or_null(b, g->command);
    json_buf_lit(b, ",\"open\":null,\"by\":");
    json_buf_cstr_or_null(b, g->by);
    json_buf_printf(b, ",\"granted\":%.3f", g->granted);
    expires_json(b, g->expires);
}

void session_op_grants(struct session *s, struct api_request *req)
{
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"grants\":[");
    bool first = true;
    if (s->p.proxy) {
        /* bounded by the proxy's own table */
        struct proxy_grant_info *gs = xcalloc(PROXY_GRANTS_MAX, sizeof *gs);
        size_t n = proxy_grants(s->p.proxy, gs, PROXY_GRANTS_MAX);
        for (size_t i = 0; i < n && i < PROXY_GRANTS_MAX; i++) {
            json_buf_printf(&b, "%s", first ? "" : ",");
            network_json(&b, &gs[i]);
            first = false;
        }
        free(gs);
    }
    rerun_prune(s);
    for (const struct rerun_grant *g = s->reruns_kept.list; g; g = g->next) {
        json_buf_printf(&b, "%s", first ? "" : ",");
        rerun_json(&b, g);
        first = false;
    }
    json_buf_lit(&b, "]}");
    api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
}

void session_op_grant(struct session *s, struct api_request *req, const char *host, unsigned port,
                      double for_s, const char *by)
{
    if (s->shutting_down) {
        api_respond_error(req, 409, "the session is stopping");
        return;
    }
    if (!s->p.proxy) {
        api_respond_error(req, 409,
                          "this session has no network of its own (network.unrestricted): there "
                          "is nothing to grant");
        return;
    }
    struct proxy_grant_terms t = {.by = by ? by : "api", .for_s = for_s};
    int id = proxy_grant(s->p.proxy, host, port, true, &t);
    if (id < 0) {
        api_respond_error(req, 409,
                          "at most %d answers and grants are kept in a session; revoke one first "
                          "(cordon grants %s lists them)",
                          PROXY_GRANTS_MAX, s->p.name);
        return;
    }
    LOG_I("session", "grant g%d: %s:%u allowed by %s%s", id, host, port, t.by,
          for_s > 0 ? " for a time" : " for the session");
    struct proxy_grant_info *gs = xcalloc(PROXY_GRANTS_MAX, sizeof *gs);
    size_t n = proxy_grants(s->p.proxy, gs, PROXY_GRANTS_MAX);
    struct json_buf b = {0};
    for (size_t i = 0; i < n && i < PROXY_GRANTS_MAX; i++)
        if (gs[i].id == (unsigned)id)
            network_json(&b, &gs[i]);
    free(gs);
    if (!b.data)
        json_buf_printf(&b, "{\"id\":\"g%d\"}", id);
    api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
}

/* "g12" / "r3" -> the kind letter and the number; false for anything else. */
static bool parse_id(const char *id, char *kind, unsigned *n)
{
    if ((id[0] != 'g' && id[0] != 'r') || id[1] < '1' || id[1] > '9' || strlen(id) > 10)
        return false;
    unsigned v = 0;
    for (const char *p = id + 1; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (unsigned)(*p - '0');
    }
    *kind = id[0];
    *n = v;
    return true;
}

void session_op_revoke(struct session *s, struct api_request *req, const char *id)
{
    char kind;
    unsigned n;
    int closed = -ENOENT;
    if (parse_id(id, &kind, &n)) {
        if (kind == 'g' && s->p.proxy) {
            closed = proxy_revoke(s->p.proxy, n, "api");
        } else if (kind == 'r') {
            rerun_prune(s);
            for (struct rerun_grant **p = &s->reruns_kept.list; *p; p = &(*p)->next) {
                struct rerun_grant *g = *p;
                if (g->id != n)
                    continue;
                LOG_I("session", "grant r%u revoked: '%s' is asked about again", g->id, g->command);
                *p = g->next;
                s->reruns_kept.n--;
                free(g->command);
                free(g);
                closed = 0;
                break;
            }
        }
    }
    if (closed < 0) {
        api_respond_error(req, 404,
                          "no grant %.40s in force in session '%s' (ended, revoked or never "
                          "given; cordon grants %s lists them)",
                          id, s->p.name, s->p.name);
        return;
    }
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"id\":");
    json_buf_cstr_or_null(&b, id);
    json_buf_printf(&b, ",\"revoked\":true,\"closed\":%d}", closed);
    api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
}
