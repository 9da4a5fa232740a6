/* Runs in: init (its network thread, else its main thread). */
/* netns.h — the sandbox's own network namespace: loopback up, the resolver's listeners and,
 * for network.transparent, the redirection of every other TCP connection to one listener.
 * Runs inside the namespace (init, before any command). */
#ifndef CORDON_NETNS_H
#define CORDON_NETNS_H
#include <stddef.h>

/* The sandbox's resolver: what its /etc/resolv.conf names (dns_stub.h serves it). */
#define NETNS_DNS_ADDR "127.0.0.53"
/* Where transparent connections land (IPv4 127.0.0.1 and IPv6 ::1, one dual-stack socket). */
#define NETNS_TRANSPARENT_PORT 18082

/* 0 or -errno. */
int netns_loopback_up(void);
/* A UDP socket and a TCP listener on NETNS_DNS_ADDR:53. 0 or -errno (nothing left open). */
int netns_dns_listeners(int *udp_fd, int *tcp_fd);
/* network.transparent: a local route for every address (IPv4 and IPv6), so a connect() to any
 * address is accepted by this namespace, and an nftables rule redirecting every TCP connection
 * not to the sandbox's own loopback to NETNS_TRANSPARENT_PORT, where t->listen_fd listens (the
 * original destination is SO_ORIGINAL_DST). Needs nf_tables with nat and redirect in the kernel
 * (nothing on the host: the rule goes over netlink, nft_netlink.h). 0, or -1 with the reason in
 * err (nothing left open, no rule added). */
struct netns_transparent {
    int listen_fd;
};
int netns_transparent_start(struct netns_transparent *t, char *err, size_t errlen);
#endif
