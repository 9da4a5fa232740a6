/* loopback_guard.c — see loopback_guard.h.
 * Owns: the Landlock ruleset of a command without loopback service (TCP connect to the proxy's
 * ports and the granted host ports only, no TCP bind at all).
 * Uses: the raw Landlock system calls (Debian 12's headers predate the network rules, so the
 * few definitions needed are spelled out here).
 * Never: allocates or logs in loopback_guard_apply() (it runs between fork and exec). */
#include "sandbox/loopback_guard.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/kernel_lacks.h"
#include "sandbox/init.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

/* From <linux/landlock.h> of Linux 6.7 (ABI 4). */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_NET_PORT 2
#define LL_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LL_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define LL_NET_ABI 4

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
};

struct ll_net_port_attr {
    uint64_t allowed_access;
    uint64_t port;
};

bool loopback_guard_wanted(const struct sandbox_config *cfg)
{
    return !cfg->net_loopback && !cfg->net_unrestricted;
}

int loopback_guard_check(char *err, size_t errlen)
{
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (kernel_lacks_forced("landlock")) { /* the test switch */
        abi = -1;
        errno = ENOSYS;
    } else if (abi >= LL_NET_ABI && kernel_lacks_forced("landlock_net")) {
        abi = LL_NET_ABI - 1;
    }
    if (abi >= LL_NET_ABI)
        return 0;
    if (abi < 0 && (errno == ENOSYS || errno == EOPNOTSUPP))
        snprintf(err, errlen,
                 "network.loopback = false needs Landlock's network rules (ABI 4, Linux 6.7), "
                 "and this kernel %s Landlock; allow loopback (--allow-loopback)%s",
                 errno == ENOSYS ? "does not have" : "has disabled",
                 errno == ENOSYS ? "" : " or enable it (lsm=landlock)");
    else if (abi < 0)
        snprintf(err, errlen, "network.loopback = false: probing Landlock: %s", strerror(errno));
    else
        snprintf(err, errlen,
                 "network.loopback = false needs Landlock's network rules (ABI 4, Linux 6.7); "
                 "this kernel has ABI %ld: allow loopback (--allow-loopback) or upgrade",
                 abi);
    return -1;
}

int loopback_guard_apply(const struct sandbox_config *cfg)
{
    struct ll_ruleset_attr attr = {.handled_access_net =
                                       LL_ACCESS_NET_BIND_TCP | LL_ACCESS_NET_CONNECT_TCP};
    int fd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (fd < 0)
        return -errno;
    static const uint16_t proxy_ports[] = {PROXY_HTTP_PORT, PROXY_SOCKS_PORT};
    int r = 0;
    for (size_t i = 0; i < sizeof proxy_ports / sizeof proxy_ports[0] && r == 0; i++) {
        struct ll_net_port_attr port = {.allowed_access = LL_ACCESS_NET_CONNECT_TCP,
                                        .port = proxy_ports[i]};
        if (syscall(__NR_landlock_add_rule, fd, LL_RULE_NET_PORT, &port, 0) < 0)
            r = -errno;
    }
    /* A host port's listener is init's (a command cannot bind at all): a connect to that port
     * reaches the relay to the host's service it was granted, nothing else. */
    for (size_t i = 0; i < cfg->n_host_ports && r == 0; i++) {
        struct ll_net_port_attr port = {.allowed_access = LL_ACCESS_NET_CONNECT_TCP,
                                        .port = cfg->host_ports[i]};
        if (syscall(__NR_landlock_add_rule, fd, LL_RULE_NET_PORT, &port, 0) < 0)
            r = -errno;
    }
    if (r == 0 && syscall(__NR_landlock_restrict_self, fd, 0) < 0)
        r = -errno;
    close(fd);
    return r;
}
