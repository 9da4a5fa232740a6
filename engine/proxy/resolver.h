/* resolver.h — host name resolution off the event loop thread. A small pool of threads runs
 * getaddrinfo(); finished jobs are queued back and announced on an eventfd the loop watches,
 * so a slow resolver never stalls other connections. The sandbox has no DNS of its own: names
 * are resolved on the host side. Never touches the Lua state or any connection. */
#ifndef CORDON_RESOLVER_H
#define CORDON_RESOLVER_H
#include <netdb.h>
#include <stdint.h>

struct resolver;
struct resolve_job;
/* Called on the loop thread with the result (res NULL and err set on failure). The callback
 * owns res (freeaddrinfo). A cancelled job's callback is never called. */
typedef void (*resolve_cb)(void *data, struct addrinfo *res, int gai_err);

/* threads: worker count, started with the first lookup that needs one (a lookup that finds
 * none can be started fails with EAI_AGAIN). Returns NULL with errno set on failure. */
struct resolver *resolver_new(int threads);
/* The fd the loop watches for readability; then call resolver_dispatch(). */
int resolver_fd(const struct resolver *r);
/* Queue a lookup of host:port (numeric hosts are answered without a thread). */
struct resolve_job *resolver_lookup(struct resolver *r, const char *host, uint16_t port,
                                    resolve_cb cb, void *data);
/* The requester went away: drop the job's result when it arrives. Loop thread only. */
void resolver_cancel(struct resolver *r, struct resolve_job *job);
/* Run the callbacks of finished jobs. Loop thread only. */
void resolver_dispatch(struct resolver *r);
void resolver_free(struct resolver *r);
#endif
