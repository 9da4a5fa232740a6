/* proxy_ask.c — the proxy's questions to its owner (see proxy.h: proxy_set_owner) and the
 * answers kept for the rest of the run. Owns: one question per host:port, shared by every
 * connection that waits for it; its deadline (the permission timeout: no answer denies, and is
 * not kept, so the next connection asks again); the answers and grants (proxy_grant) a later
 * connection to the same host:port is decided by, each allow with an id, its author and its
 * end (a grant whose time is over counts as never given, and is dropped with an audit line at
 * the next sweep); revoking one, which closes the connections it let through; the list of
 * destinations asked about. At most PROXY_GRANTS_MAX are kept.
 * Uses: proxy.c's connections (proxy_private.h) to let waiting ones go on, the audit log.
 * Never: lets a connection through without the policy's or a person's allow, keeps a timeout
 * as an answer, lets a grant outlive its time. */
#include "proxy/proxy_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "base/log.h"
#include "proxy/audit_log.h"
#include "proxy/dns_stub.h"

/* One host as rules compare it: case-insensitive, a trailing dot naming the same host. */
static bool same_host(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 1 && a[la - 1] == '.')
        la--;
    if (lb > 1 && b[lb - 1] == '.')
        lb--;
    return la == lb && strncasecmp(a, b, la) == 0;
}

static bool grant_over(const struct grant *g, uint64_t now_ms)
{
    return g->expires_ms && now_ms >= g->expires_ms;
}

/* The answer kept for host:port that is still in force. */
static struct grant *find_grant(struct proxy_asking *a, const char *host, uint16_t port)
{
    uint64_t now = clock_mono_ms();
    for (struct grant *g = a->grants; g; g = g->next)
        if (g->port == port && same_host(g->host, host) && !grant_over(g, now))
            return g;
    return NULL;
}

/* "g3" and its terms, for the audit log's "rule" and "reason". */
static void grant_words(const struct grant *g, char *rule, size_t rn, char *reason, size_t n,
                        const char *what)
{
    snprintf(rule, rn, "grant g%u", g->id);
    if (g->expires > 0)
        snprintf(reason, n, "%s by %s, for %.0f s", what, g->by, g->expires - g->granted);
    else
        snprintf(reason, n, "%s by %s%s", what, g->by,
                 g->command ? ", while the commands running then run" : "");
}

static void drop(struct proxy_asking *a, struct grant **p);

/* Drop every grant whose time is over, one audit line each: at each sweep, and before anything
 * reads the grants (so the line is there by the time a connection is refused or a list no
 * longer shows it). */
static void end_expired(struct proxy *px, uint64_t now_ms)
{
    for (struct grant **p = &px->asking.grants; *p;) {
        struct grant *g = *p;
        if (!grant_over(g, now_ms)) {
            p = &g->next;
            continue;
        }
        char rule[32], reason[200];
        grant_words(g, rule, sizeof rule, reason, sizeof reason, "expired: given");
        audit_log_event(px->audit, "grant_expired", g->host, g->port, false, rule, reason,
                        px->command);
        LOG_I("proxy", "grant g%u for %s:%u has expired", g->id, g->host, (unsigned)g->port);
        drop(&px->asking, p);
    }
}

/* Keep a new answer (the one kept for the same host:port is replaced); NULL when the table is
 * full (said in one line). */
static struct grant *keep(struct proxy *px, const char *host, unsigned port, bool allow,
                          bool command, const struct proxy_grant_terms *t)
{
    struct proxy_asking *a = &px->asking;
    /* the connections the grant it replaces let through are the new one's to revoke */
    struct grant *old = find_grant(a, host, (uint16_t)port);
    unsigned old_id = old ? old->id : 0;
    proxy_forget(px, host, port);
    if (a->n_grants >= PROXY_GRANTS_MAX) {
        LOG_W("proxy",
              "at most %d answers and grants are kept: the one for %s:%u is not (revoke one: "
              "cordon revoke NAME ID)",
              PROXY_GRANTS_MAX, host, port);
        return NULL;
    }
    struct grant *g = xcalloc(1, sizeof *g);
    snprintf(g->host, sizeof g->host, "%s", host);
    g->port = (uint16_t)port;
    g->allow = allow;
    g->command = command;
    g->id = allow ? ++a->next_grant : 0;
    snprintf(g->by, sizeof g->by, "%s", t && t->by ? t->by : "the owner");
    g->granted = clock_wall_s();
    if (allow && t && t->for_s > 0) {
        g->expires = g->granted + t->for_s;
        g->expires_ms = clock_mono_ms() + (uint64_t)(t->for_s * 1000);
    }
    /* oldest first, as they are listed */
    struct grant **tail = &a->grants;
    while (*tail)
        tail = &(*tail)->next;
    *tail = g;
    a->n_grants++;
    for (struct conn *c = px->conns; old_id && g->id && c; c = c->next)
        if (c->grant == old_id)
            c->grant = g->id;
    if (allow) {
        dns_stub_forget(px->dns, g->host); /* a refusal of the name, kept, ends here */
        char rule[32], reason[200];
        grant_words(g, rule, sizeof rule, reason, sizeof reason, "granted");
        audit_log_event(px->audit, "grant", g->host, g->port, true, rule, reason, px->command);
    }
    return g;
}

static void drop(struct proxy_asking *a, struct grant **p)
{
    struct grant *g = *p;
    *p = g->next;
    a->n_grants--;
    free(g);
}

/* The question about host:port, asked now if nobody asked yet. */
static struct question *question_for(struct proxy_asking *a, const struct conn *c)
{
    for (struct question *q = a->questions; q; q = q->next)
        if (q->port == c->port && strcmp(q->host, c->host) == 0)
            return q;
    struct question *q = xcalloc(1, sizeof *q);
    q->id = ++a->next_question;
    snprintf(q->host, sizeof q->host, "%s", c->host);
    q->port = c->port;
    q->client_len = sizeof q->client;
    if (getpeername(c->cfd, (struct sockaddr *)&q->client, &q->client_len) < 0)
        q->client_len = 0; /* the owner cannot tell who asked: it says so */
    q->deadline_ms = clock_mono_ms() + a->timeout_ms;
    q->next = a->questions;
    a->questions = q;
    char dest[300];
    snprintf(dest, sizeof dest, "%s:%u", c->host, (unsigned)c->port);
    if (!str_list_contains(&a->asked, dest))
        str_list_push(&a->asked, dest);
    char text[512];
    /* a SOCKS destination (cordon nc, ssh) as its rule is written: tcp://HOST:PORT */
    snprintf(text, sizeof text, "the command wants to reach %s%.255s:%u (%s), which no rule allows",
             c->net_kind == NET_KIND_SOCKS ? "tcp://" : "", c->host, (unsigned)c->port,
             net_kind_name(c->net_kind));
    a->owner.ask(a->owner.ctx, q->id, text);
    return q;
}

bool proxy_ask_amend(struct conn *c, struct net_decision *d)
{
    struct proxy_asking *a = &c->px->asking;
    end_expired(c->px, clock_mono_ms());
    if (d->ask) {
        struct grant *g = find_grant(a, c->host, c->port);
        if (g) {
            d->allow = g->allow;
            c->grant = g->id;
            if (g->id)
                snprintf(d->reason, sizeof d->reason, "allowed by grant g%u (%.90s)", g->id, g->by);
            else
                snprintf(d->reason, sizeof d->reason, "denied earlier in this run");
        } else if (a->owner.ask) {
            c->question = question_for(a, c)->id;
            return true;
        } else {
            snprintf(d->reason + strlen(d->reason), sizeof d->reason - strlen(d->reason),
                     "; nobody can be asked (no terminal, no attached API client)");
        }
    } else if (!d->allow && d->suggest[0]) {
        /* Unlisted (no deny rule matched: it has a flag that would allow it) where the policy
         * does not ask: a person's grant made after a refusal (proxy_grant) still counts. */
        struct grant *g = find_grant(a, c->host, c->port);
        if (g && g->allow) {
            d->allow = true;
            c->grant = g->id;
            snprintf(d->reason, sizeof d->reason, "allowed by grant g%u (%.90s)", g->id, g->by);
        }
    }
    return false;
}

void proxy_set_owner(struct proxy *px, const struct proxy_owner *owner, double timeout_s)
{
    px->asking.owner = *owner;
    px->asking.timeout_ms = timeout_s > 0 ? (uint64_t)(timeout_s * 1000) : 0;
}

/* Settle question q and let every waiting connection go on. keep: remember the answer for later
 * connections (an owner's answer; a timeout is not one, so the next connection asks again). */
static void settle(struct proxy *px, struct question *q, bool allow, bool keep_it, bool command,
                   const struct proxy_grant_terms *t, const char *how)
{
    struct proxy_asking *a = &px->asking;
    for (struct question **p = &a->questions; *p; p = &(*p)->next) {
        if (*p == q) {
            *p = q->next;
            break;
        }
    }
    unsigned grant = 0;
    if (keep_it) {
        struct grant *g = keep(px, q->host, q->port, allow, command, t);
        grant = g ? g->id : 0;
    }
    for (struct conn *c = px->conns, *next; c; c = next) {
        next = c->next;
        if (c->state != ST_ASKING || c->question != q->id)
            continue;
        struct net_decision d = {.allow = allow};
        snprintf(d.reason, sizeof d.reason, "%s", how);
        snprintf(d.suggest, sizeof d.suggest, "--network-allow %s%s:%u",
                 c->net_kind == NET_KIND_SOCKS ? "tcp://" : "", c->host, (unsigned)c->port);
        audit_log_decision(px->audit, c->net_kind, c->host, c->port, &d, LH_OK, px->command);
        c->grant = grant;
        if (allow)
            proxy_conn_resolve(c);
        else
            proxy_conn_refuse(c, &d);
    }
    free(q);
}

void proxy_answer(struct proxy *px, unsigned id, enum proxy_answer answer,
                  const struct proxy_grant_terms *terms)
{
    for (struct question *q = px->asking.questions; q; q = q->next) {
        if (q->id == id) {
            switch (answer) {
            case PROXY_ALLOW_COMMAND:
                settle(px, q, true, true, true, terms, "allowed for this command by the owner");
                return;
            case PROXY_ALLOW_SESSION:
                settle(px, q, true, true, false, terms,
                       terms && terms->for_s > 0 ? "allowed for a time by the owner"
                                                 : "allowed for the session by the owner");
                return;
            case PROXY_DENY:
                settle(px, q, false, true, false, terms, "denied by the owner");
                return;
            }
        }
    }
}

void proxy_ask_expire(struct proxy *px, uint64_t now_ms)
{
    /* No answer in time means deny. */
    for (struct question *q = px->asking.questions, *next; q; q = next) {
        next = q->next;
        if (now_ms >= q->deadline_ms) {
            unsigned id = q->id;
            settle(px, q, false, false, false, NULL, "no answer within the permission timeout");
            if (px->asking.owner.closed)
                px->asking.owner.closed(px->asking.owner.ctx, id, "no answer in time: denied");
        }
    }
    end_expired(px, now_ms);
}

bool proxy_question_target(const struct proxy *px, unsigned id, char *host, size_t n,
                           unsigned *port)
{
    for (const struct question *q = px->asking.questions; q; q = q->next) {
        if (q->id == id) {
            snprintf(host, n, "%s", q->host);
            *port = q->port;
            return true;
        }
    }
    return false;
}

bool proxy_question_client(const struct proxy *px, unsigned id, struct sockaddr_storage *client)
{
    for (const struct question *q = px->asking.questions; q; q = q->next)
        if (q->id == id && q->client_len > 0) {
            *client = q->client;
            return true;
        }
    return false;
}

void proxy_forget(struct proxy *px, const char *host, unsigned port)
{
    for (struct grant **p = &px->asking.grants; *p;) {
        struct grant *g = *p;
        if (g->port == port && same_host(g->host, host))
            drop(&px->asking, p);
        else
            p = &g->next;
    }
}

int proxy_grant(struct proxy *px, const char *host, unsigned port, bool allow,
                const struct proxy_grant_terms *terms)
{
    struct grant *g = keep(px, host, port, allow, terms && terms->command, terms);
    return g ? (int)g->id : -ENOSPC;
}

bool proxy_name_granted(void *ctx, const char *host)
{
    struct proxy *px = ctx;
    uint64_t now = clock_mono_ms();
    end_expired(px, now);
    for (const struct grant *g = px->asking.grants; g; g = g->next)
        if (g->allow && same_host(g->host, host) && !grant_over(g, now))
            return true;
    return false;
}

size_t proxy_grants(struct proxy *px, struct proxy_grant_info *out, size_t max)
{
    size_t n = 0;
    uint64_t now = clock_mono_ms();
    end_expired(px, now);
    for (const struct grant *g = px->asking.grants; g; g = g->next) {
        if (!g->allow || grant_over(g, now))
            continue;
        if (n < max) {
            struct proxy_grant_info *i = &out[n];
            memset(i, 0, sizeof *i);
            i->id = g->id;
            snprintf(i->host, sizeof i->host, "%s", g->host);
            i->port = g->port;
            snprintf(i->by, sizeof i->by, "%s", g->by);
            i->granted = g->granted;
            i->expires = g->expires;
            i->command = g->command;
            for (const struct conn *c = px->conns; c; c = c->next)
                i->open += c->grant == g->id && !c->closed;
        }
        n++;
    }
    return n;
}

int proxy_revoke(struct proxy *px, unsigned id, const char *by)
{
    struct grant **p = &px->asking.grants;
    while (*p && !((*p)->allow && (*p)->id == id))
        p = &(*p)->next;
    if (id == 0 || !*p)
        return -ENOENT;
    struct grant *g = *p;
    char rule[32], reason[300];
    snprintf(rule, sizeof rule, "grant g%u", id);
    snprintf(reason, sizeof reason, "revoked by %s (given by %s)", by ? by : "the owner", g->by);
    audit_log_event(px->audit, "grant_revoked", g->host, g->port, false, rule, reason, px->command);
    int closed = 0;
    for (struct conn *c = px->conns, *next; c; c = next) {
        next = c->next;
        if (c->grant != id || c->closed)
            continue;
        audit_log_event(px->audit, "grant_closed", c->host, c->port, false, rule,
                        "an open connection under a revoked grant: closed", px->command);
        proxy_conn_close(c);
        closed++;
    }
    LOG_I("proxy", "grant g%u for %s:%u revoked by %s: %d connection(s) closed", id, g->host,
          (unsigned)g->port, by ? by : "the owner", closed);
    drop(&px->asking, p);
    return closed;
}

const struct str_list *proxy_asked(const struct proxy *px)
{
    return &px->asking.asked;
}

void proxy_ask_free(struct proxy *px)
{
    struct proxy_asking *a = &px->asking;
    while (a->questions) {
        struct question *q = a->questions;
        a->questions = q->next;
        free(q);
    }
    while (a->grants)
        drop(a, &a->grants);
    str_list_free(&a->asked);
}
