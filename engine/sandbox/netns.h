/* netns.h — the sandbox's own network namespace: bring loopback up, nothing else.
 * Runs inside the namespace (init, before any command). */
#ifndef CORDON_NETNS_H
#define CORDON_NETNS_H
/* 0 or -errno. */
int netns_loopback_up(void);
#endif
