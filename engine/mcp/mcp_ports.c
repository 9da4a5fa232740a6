/* mcp_ports.c — the tools about the session's ports (mcp_call.h): publish_port (POST
 * /v1/ports; an address beyond loopback only after a person's yes, asked with an
 * elicitation), unpublish_port, and session_status (GET /v1/session). */
#include "mcp/mcp_call.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "base/visible.h"
#include "client/client_call.h"
#include "client/client_reply.h"
#include "mcp/mcp_wire.h"

/* ADDR:PORT as a URL's authority: an IPv6 address in brackets. */
static void host_and_port(struct json_buf *t, const char *addr, long long port)
{
    bool v6 = strchr(addr, ':') != NULL;
    json_buf_printf(t, "%s%s%s:%lld", v6 ? "[" : "", addr, v6 ? "]" : "", port);
}

/* Whether addr is an IP address other than loopback (127.0.0.0/8, ::1, ::ffff:127.x.y.z): one
 * that other machines may reach. A string that is no address is the session's to refuse. */
static bool beyond_loopback(const char *addr)
{
    unsigned char b[16];
    if (inet_pton(AF_INET, addr, b) == 1)
        return b[0] != 127;
    if (inet_pton(AF_INET6, addr, b) != 1)
        return false;
    static const unsigned char loop6[16] = {[15] = 1};
    static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
    if (memcmp(b, loop6, 16) == 0)
        return false;
    return !(memcmp(b, mapped, 12) == 0 && b[12] == 127);
}

/* How long the person has to answer whether a port may be published beyond loopback. */
#define PUBLISH_ASK_S 120.0

/* A port published on an address other than loopback is reachable from other machines: the
 * agent asked for it, so a person says yes (an elicitation) or it is refused. 0 when the person
 * allowed it, else -1 with the one line in err (declined, no answer, a client that cannot ask). */
static int publish_asked(const struct mcp_server *s, const struct args *a, char *err, size_t errlen)
{
    static atomic_llong next_tag = -1; /* approvals' tags are their (positive) ids */
    char *addr = visible_dup(a->host_addr);
    char port[24] = "the same port";
    if (a->has_host_port)
        snprintf(port, sizeof port, "port %lld", a->host_port);
    snprintf(err, errlen,
             "publishing sandbox port %lld on %s (not loopback: other machines could reach it) "
             "needs a person's yes",
             a->port, addr);
    if (!s->elicitation) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n,
                 ", and this MCP client cannot ask one: refused (publish on 127.0.0.1, or run "
                 "`cordon publish %s %lld --host-addr %s` yourself)",
                 s->session, a->port, addr);
        free(addr);
        return -1;
    }
    char *message = xasprintf("cordon (the sandbox running this agent's commands) asks: the "
                              "agent wants sandbox port %lld published on the host at %s, %s: "
                              "not loopback, so other machines on that network can reach it. "
                              "allow: publish it; deny: refuse it.",
                              a->port, addr, port);
    static const char *const choices[] = {"allow", "deny"};
    const char *answer = NULL;
    char why[256];
    int rc = -1;
    if (mcp_elicit_choice(message, NULL, choices, 2, atomic_fetch_sub(&next_tag, 1), PUBLISH_ASK_S,
                          &answer, why, sizeof why) < 0) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, ": refused (%s)", why);
    } else if (answer && strcmp(answer, "allow") == 0) {
        rc = 0;
    } else {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, ": the person did not allow it, refused");
    }
    free(message);
    free(addr);
    return rc;
}

void mcp_publish_port(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    if (a->host_addr && beyond_loopback(a->host_addr) && publish_asked(s, a, err, sizeof err) < 0) {
        mcp_result_error(id, &res, "cordon: %s", err);
        return;
    }
    struct json_buf body = {0};
    json_buf_printf(&body, "{\"port\":%lld", a->port);
    if (a->has_host_port)
        json_buf_printf(&body, ",\"host_port\":%lld", a->host_port);
    if (a->host_addr) {
        json_buf_lit(&body, ",\"host_addr\":");
        json_buf_string(&body, a->host_addr, strlen(a->host_addr));
    }
    json_buf_lit(&body, "}");
    struct json_value *v =
        ccall_json(&h, s->session, "POST", "/v1/ports", body.data, err, sizeof err);
    const char *addr = reply_str(v, "host_addr");
    long long port, host_port;
    if (!v) {
        mcp_result_error(id, &res, "cordon: %s", err);
    } else if (!addr || !reply_int(v, "port", &port) || !reply_int(v, "host_port", &host_port)) {
        mcp_result_error(id, &res,
                         "cordon: the session's answer has no port, host_addr or host_port");
    } else {
        json_buf_printf(&res.text, "sandbox port %lld is published on the host at ", port);
        host_and_port(&res.text, addr, host_port);
        json_buf_lit(&res.text, " (open it at http://");
        host_and_port(&res.text, addr, host_port);
        json_buf_lit(&res.text, "/ for a web server)\n");
        mcp_result_object(&res, v);
        mcp_result_send(id, &res);
    }
    json_free(v);
    json_buf_free(&body);
    chttp_close(&h);
}

void mcp_unpublish_port(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512], path[48];
    snprintf(path, sizeof path, "/v1/ports/%lld", a->port);
    struct json_value *v = ccall_json(&h, s->session, "DELETE", path, NULL, err, sizeof err);
    if (!v) {
        mcp_result_error(id, &res, "cordon: %s", err);
    } else {
        json_buf_printf(&res.text, "sandbox port %lld is no longer published on the host\n",
                        a->port);
        mcp_result_object(&res, v);
        mcp_result_send(id, &res);
    }
    json_free(v);
    chttp_close(&h);
}

/* The session's published ports and granted host ports, for session_status's text. */
static void ports_lines(struct json_buf *t, const struct json_value *v)
{
    const struct json_value *ports = json_get(v, "ports");
    if (ports && ports->type == JSON_ARRAY) {
        json_buf_lit(t, "published ports:");
        if (ports->len == 0)
            json_buf_lit(t, " none");
        json_buf_lit(t, "\n");
        for (size_t i = 0; i < ports->len; i++) {
            const struct json_value *p = &ports->items[i];
            const char *addr = reply_str(p, "host_addr");
            long long port, host_port, open;
            if (!addr || !reply_int(p, "port", &port) || !reply_int(p, "host_port", &host_port))
                continue;
            json_buf_printf(t, "  %lld -> ", port);
            host_and_port(t, addr, host_port);
            if (reply_int(p, "open", &open))
                json_buf_printf(t, " (%lld open)", open);
            json_buf_lit(t, "\n");
        }
    }
    const struct json_value *hp = json_get(v, "host_ports");
    if (hp && hp->type == JSON_ARRAY) {
        json_buf_lit(t, "host ports reachable inside:");
        size_t n = 0;
        for (size_t i = 0; i < hp->len; i++)
            if (hp->items[i].type == JSON_NUMBER) {
                json_buf_printf(t, " %.0f", hp->items[i].number);
                n++;
            }
        json_buf_printf(t, "%s\n", n ? "" : " none");
    }
}

void mcp_session_status(const struct mcp_server *s, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    long long n;
    struct json_value *v = ccall_json(&h, s->session, "GET", "/v1/session", NULL, err, sizeof err);
    if (!v) {
        mcp_result_error(id, &res, "cordon: %s", err);
    } else {
        static const char *const keys[] = {"name", "profile", "workspace"};
        for (size_t i = 0; i < ARRAY_LEN(keys); i++) {
            const char *val = reply_str(v, keys[i]);
            json_buf_printf(&res.text, "%s: %s\n", keys[i], val ? val : "-");
        }
        if (reply_int(v, "jobs_running", &n))
            json_buf_printf(&res.text, "jobs_running: %lld\n", n);
        ports_lines(&res.text, v);
        mcp_result_object(&res, v);
        mcp_result_send(id, &res);
    }
    json_free(v);
    chttp_close(&h);
}
