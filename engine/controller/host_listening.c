/* host_listening.c — see host_listening.h. Owns reading the kernel's TCP socket tables of the
 * controller's (the host's) network namespace for listening sockets on loopback or wildcard
 * addresses. Uses base/util (str_list). Must never be called from inside a sandbox's network
 * namespace (it would list the sandbox's own ports), nor connect anywhere to find out. */
#include "controller/host_listening.h"

#include <stdio.h>
#include <string.h>

/* TCP_LISTEN in the st column of /proc/net/tcp{,6} */
#define TCP_STATE_LISTEN 0x0A

/* Is the local address of a /proc/net/tcp (8 hex digits, the IPv4 address as the kernel stores
 * it, little-endian on x86) or /proc/net/tcp6 (32 hex digits) line loopback or wildcard? */
static bool loopback_or_any(const char *hex, size_t len)
{
    unsigned a, b, c, d;
    if (len == 8) {
        unsigned v;
        if (sscanf(hex, "%8x", &v) != 1)
            return false;
            /* the kernel prints the __be32 as a host-order number: the first octet is its low
         * byte on little-endian machines, its high byte on big-endian ones */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return v == 0 || (v & 0xff) == 127;
#else
        return v == 0 || (v >> 24) == 127;
#endif
    }
    if (len != 32)
        return false;
    if (strncmp(hex, "00000000000000000000000000000000", 32) == 0)
        return true; /* :: */
    /* ::1 is 0..0 then 01000000 (little-endian words) or 00000001 */
    if (strncmp(hex, "000000000000000000000000", 24) == 0 &&
        (strncmp(hex + 24, "01000000", 8) == 0 || strncmp(hex + 24, "00000001", 8) == 0))
        return true;
    /* ::ffff:127.x.x.x, a v4-mapped loopback (its last word printed as above) */
    if (strncmp(hex, "0000000000000000FFFF0000", 24) == 0 &&
        sscanf(hex + 24, "%2x%2x%2x%2x", &a, &b, &c, &d) == 4)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return d == 127;
#else
        return a == 127;
#endif
    return false;
}

static size_t scan(const char *path, struct str_list *out)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t added = 0;
    char line[512];
    if (!fgets(line, sizeof line, f)) /* the header */
        goto out;
    while (fgets(line, sizeof line, f)) {
        char local[64];
        unsigned port, state;
        if (sscanf(line, " %*u: %63[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", local, &port, &state) != 3)
            continue;
        if (state != TCP_STATE_LISTEN || !loopback_or_any(local, strlen(local)))
            continue;
        char num[8];
        snprintf(num, sizeof num, "%u", port);
        if (!str_list_contains(out, num)) {
            str_list_push(out, num);
            added++;
        }
    }
out:
    fclose(f);
    return added;
}

size_t host_listening_ports(struct str_list *out)
{
    return scan("/proc/net/tcp", out) + scan("/proc/net/tcp6", out);
}
