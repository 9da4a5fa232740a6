/* transparent.c — see transparent.h. The original destination: SO_ORIGINAL_DST (IPv4) or
 * IP6T_SO_ORIGINAL_DST (IPv6), which nf_nat keeps for a redirected connection. The name: the
 * SNI (sni_parse.c) or the Host header of a request line "METHOD SP target SP HTTP/1.x"; the
 * caller treats it as a claim only (it connects to what the name resolves to). */
#include "proxy/transparent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proxy/sni_parse.h"

#ifndef IP6T_SO_ORIGINAL_DST
#define IP6T_SO_ORIGINAL_DST 80
#endif

int transparent_original_dst(int fd, struct sockaddr_storage *out, char *ip, size_t iplen,
                             uint16_t *port)
{
    struct sockaddr_storage local;
    socklen_t len = sizeof local;
    memset(out, 0, sizeof *out);
    if (getsockname(fd, (struct sockaddr *)&local, &len) < 0)
        return -errno;
    bool v4 = local.ss_family == AF_INET ||
              (local.ss_family == AF_INET6 &&
               IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&local)->sin6_addr));
    len = sizeof *out;
    if (v4) {
        struct sockaddr_in *sin = (struct sockaddr_in *)out;
        len = sizeof *sin;
        if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, sin, &len) < 0)
            return -errno;
        uint32_t a = ntohl(sin->sin_addr.s_addr);
        if (a == INADDR_LOOPBACK || a == 0x7f000035) /* 127.0.0.1, 127.0.0.53: not redirected */
            return -EACCES;
        inet_ntop(AF_INET, &sin->sin_addr, ip, (socklen_t)iplen);
        *port = ntohs(sin->sin_port);
    } else {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;
        len = sizeof *sin6;
        if (getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, sin6, &len) < 0)
            return -errno;
        if (IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
            return -EACCES;
        inet_ntop(AF_INET6, &sin6->sin6_addr, ip, (socklen_t)iplen);
        *port = ntohs(sin6->sin6_port);
    }
    return 0;
}

static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
}

/* An HTTP/1 request head's Host (the head may be incomplete: NEED_MORE until its end). */
static enum transparent_name http_host(const uint8_t *p, size_t n, char *host, size_t cap)
{
    size_t i = 0;
    while (i < n && p[i] >= 'A' && p[i] <= 'Z')
        i++;
    if (i == n)
        return n < 16 ? TN_NEED_MORE : TN_NONE;
    if (i == 0 || p[i] != ' ')
        return TN_NONE;
    const uint8_t *end = memmem(p, n, "\r\n\r\n", 4);
    const uint8_t *line_end = memmem(p, n, "\r\n", 2);
    if (!line_end)
        return n < 8192 ? TN_NEED_MORE : TN_NONE;
    if (line_end - p < 10 || memcmp(line_end - 8, "HTTP/1.", 7) != 0)
        return TN_NONE;
    for (const uint8_t *l = line_end + 2; l + 5 < p + n;) {
        const uint8_t *e = memmem(l, (size_t)(p + n - l), "\r\n", 2);
        if (!e)
            break;
        if (e == l)
            return TN_NONE; /* end of the head: no Host */
        if (e - l > 5 && strncasecmp((const char *)l, "host:", 5) == 0) {
            const uint8_t *v = l + 5;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            size_t k = 0;
            while (v + k < e && v[k] != ':' && k + 1 < cap) {
                if (!host_char((char)v[k]))
                    return TN_NONE;
                host[k] = (char)v[k];
                k++;
            }
            host[k] = '\0';
            return k > 0 ? TN_FOUND : TN_NONE;
        }
        l = e + 2;
    }
    return end || n >= 8192 ? TN_NONE : TN_NEED_MORE;
}

enum transparent_name transparent_name_from(const uint8_t *p, size_t n, char *host, size_t cap)
{
    if (n == 0)
        return TN_NEED_MORE;
    switch (sni_parse(p, n, host, cap)) {
    case SNI_FOUND:
        return TN_FOUND;
    case SNI_NEED_MORE:
        return TN_NEED_MORE;
    case SNI_NONE:
        return TN_NONE;
    case SNI_NOT_TLS:
        break;
    }
    return http_host(p, n, host, cap);
}
