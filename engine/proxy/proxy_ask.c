/* proxy_ask.c — the proxy's questions to its owner (see proxy.h: proxy_set_owner) and the
 * answers kept for the rest of the run. Owns: one question per host:port, shared by every
 * connection that waits for it; its deadline (the permission timeout: no answer denies, and is
 * not kept, so the next connection asks again); the answers and grants (proxy_grant) a later
 * connection to the same host:port is decided by; the list of destinations asked about.
 * Uses: proxy.c's connections (proxy_private.h) to let waiting ones go on, the audit log.
 * Never: lets a connection through without the policy's or a person's allow, keeps a timeout
 * as an answer. */
#include "proxy/proxy_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "proxy/audit_log.h"

static struct grant *find_grant(struct proxy_asking *a, const char *host, uint16_t port)
{
    for (struct grant *g = a->grants; g; g = g->next)
        if (g->port == port && strcmp(g->host, host) == 0)
            return g;
    return NULL;
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
    if (d->ask) {
        struct grant *g = find_grant(a, c->host, c->port);
        if (g) {
            d->allow = g->allow;
            snprintf(d->reason, sizeof d->reason, "%s earlier in this run",
                     g->allow ? "allowed" : "denied");
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
            snprintf(d->reason, sizeof d->reason, "allowed by a person after a refusal");
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
static void settle(struct proxy *px, struct question *q, bool allow, bool keep, const char *how)
{
    struct proxy_asking *a = &px->asking;
    for (struct question **p = &a->questions; *p; p = &(*p)->next) {
        if (*p == q) {
            *p = q->next;
            break;
        }
    }
    if (keep) {
        struct grant *g = xcalloc(1, sizeof *g);
        snprintf(g->host, sizeof g->host, "%s", q->host);
        g->port = q->port;
        g->allow = allow;
        g->next = a->grants;
        a->grants = g;
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
        if (allow)
            proxy_conn_resolve(c);
        else
            proxy_conn_refuse(c, &d);
    }
    free(q);
}

void proxy_answer(struct proxy *px, unsigned id, enum proxy_answer answer)
{
    for (struct question *q = px->asking.questions; q; q = q->next) {
        if (q->id == id) {
            switch (answer) {
            case PROXY_ALLOW_COMMAND:
                settle(px, q, true, true, "allowed for this command by the owner");
                return;
            case PROXY_ALLOW_SESSION:
                settle(px, q, true, true, "allowed for the session by the owner");
                return;
            case PROXY_DENY:
                settle(px, q, false, true, "denied by the owner");
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
            settle(px, q, false, false, "no answer within the permission timeout");
            if (px->asking.owner.closed)
                px->asking.owner.closed(px->asking.owner.ctx, id, "no answer in time: denied");
        }
    }
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
        if (g->port == port && strcmp(g->host, host) == 0) {
            *p = g->next;
            free(g);
        } else {
            p = &g->next;
        }
    }
}

void proxy_grant(struct proxy *px, const char *host, unsigned port, bool allow)
{
    proxy_forget(px, host, port);
    struct grant *g = xcalloc(1, sizeof *g);
    snprintf(g->host, sizeof g->host, "%s", host);
    g->port = (uint16_t)port;
    g->allow = allow;
    g->next = px->asking.grants;
    px->asking.grants = g;
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
    while (a->grants) {
        struct grant *g = a->grants;
        a->grants = g->next;
        free(g);
    }
    str_list_free(&a->asked);
}
