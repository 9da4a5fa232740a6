/* dns_stub.h — the sandbox's resolver: the address its /etc/resolv.conf names (DNS_STUB_ADDR,
 * port 53, UDP and TCP, listening inside the sandbox's network namespace and served here on
 * the controller's loop). It answers A and AAAA queries for names some rule could allow (the
 * network hook's kind dns) with the host's answer (resolver.c), under the asked name (no CNAME
 * chain), TTL DNS_STUB_TTL; other names get REFUSED. Bounded: queries per second, answers per
 * reply, names cached, TCP clients, queries waiting. Keeps the address -> name map of what it
 * answered, for the transparent path. Never sends a query anywhere: the host's resolver does. */
#ifndef CORDON_DNS_STUB_H
#define CORDON_DNS_STUB_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "base/evloop.h"

#define DNS_STUB_ADDR "127.0.0.53"
#define DNS_STUB_TTL 30 /* seconds: answers and the cache; the host's resolver keeps the real TTL */

struct dns_stub;
struct resolver;
struct audit_log;

/* Called with every name refused (for refusal detection). */
typedef void (*dns_refused_cb)(void *ctx, const char *name);

/* Takes the two fds (either may be -1). command: for the decisions and the audit log (kept, not
 * copied). NULL on failure (logged). */
struct dns_stub *dns_stub_new(struct ev_loop *loop, int udp_fd, int tcp_fd, struct resolver *res,
                              struct audit_log *audit, const char *command, dns_refused_cb refused,
                              void *ctx);
/* The names the stub answered with the address sa (AF_INET / AF_INET6), most recent first (one
 * address often serves several names: a CDN's, or the spec's 127.0.0.2): up to max of them into
 * names (each 254 bytes). Returns how many. */
size_t dns_stub_names_for(const struct dns_stub *s, const struct sockaddr *sa, char (*names)[254],
                          size_t max);
/* Names a person granted (proxy_grant): granted(ctx, name) true makes a name the policy refuses
 * answerable, as a rule naming it would (the connection is then decided by the proxy, with the
 * grant). NULL: none. */
void dns_stub_set_granted(struct dns_stub *s, bool (*granted)(void *ctx, const char *name));
/* Forget the answer kept for name (a grant for it was made: a refusal kept must not outlive it). */
void dns_stub_forget(struct dns_stub *s, const char *name);
void dns_stub_free(struct dns_stub *s);
#endif
