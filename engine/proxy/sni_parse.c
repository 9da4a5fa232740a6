/* sni_parse.c — see sni_parse.h. Walks record header -> handshake header -> ClientHello
 * (version, random, session id, cipher suites, compression methods) -> extensions, each length
 * checked against the one around it before it is used. A name is accepted only as a host
 * name would be: 1..253 bytes of letters, digits, '-', '_', '.', no empty label. */
#include "proxy/sni_parse.h"

#include <stdbool.h>
#include <string.h>

#define TLS_RECORD_MAX 16384

static size_t rd16(const uint8_t *p)
{
    return (size_t)p[0] << 8 | p[1];
}

static bool name_ok(const uint8_t *s, size_t n)
{
    if (n == 0 || n > 253 || s[0] == '.' || s[n - 1] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.';
        if (!ok || (c == '.' && s[i + 1] == '.'))
            return false;
    }
    return true;
}

/* The server_name extension's body: a list of (type, name); the host_name (type 0) entry. */
static enum sni_result server_name(const uint8_t *p, size_t n, char *name, size_t cap)
{
    if (n < 2 || rd16(p) != n - 2)
        return SNI_NONE;
    for (size_t off = 2; off + 3 <= n;) {
        uint8_t type = p[off];
        size_t len = rd16(p + off + 1);
        if (off + 3 + len > n)
            return SNI_NONE;
        if (type == 0) {
            if (!name_ok(p + off + 3, len) || len + 1 > cap)
                return SNI_NONE;
            for (size_t i = 0; i < len; i++) {
                uint8_t c = p[off + 3 + i];
                name[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            }
            name[len] = '\0';
            return SNI_FOUND;
        }
        off += 3 + len;
    }
    return SNI_NONE;
}

enum sni_result sni_parse(const uint8_t *p, size_t n, char *name, size_t name_cap)
{
    /* record: type 22 (handshake), version 3.x, length */
    if (n >= 1 && p[0] != 22)
        return SNI_NOT_TLS;
    if (n >= 2 && p[1] != 3)
        return SNI_NOT_TLS;
    if (n < 5)
        return SNI_NEED_MORE;
    size_t rec = rd16(p + 3);
    if (rec < 4 || rec > TLS_RECORD_MAX)
        return SNI_NOT_TLS;
    if (n < 6)
        return SNI_NEED_MORE;
    if (p[5] != 1)
        return SNI_NOT_TLS; /* not a ClientHello */
    if (n < 5 + rec)
        return SNI_NEED_MORE;
    const uint8_t *h = p + 5;
    size_t hlen = (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
    if (hlen + 4 > rec)
        return SNI_NONE; /* spread over several records: no client does this for a first flight */
    const uint8_t *b = h + 4, *end = b + hlen;
    /* version (2), random (32) */
    if (end - b < 34)
        return SNI_NONE;
    b += 34;
    /* session id */
    if (end - b < 1 || (size_t)(end - b) < 1 + (size_t)b[0])
        return SNI_NONE;
    b += 1 + b[0];
    /* cipher suites */
    if (end - b < 2 || (size_t)(end - b) < 2 + rd16(b))
        return SNI_NONE;
    b += 2 + rd16(b);
    /* compression methods */
    if (end - b < 1 || (size_t)(end - b) < 1 + (size_t)b[0])
        return SNI_NONE;
    b += 1 + b[0];
    /* extensions */
    if (end - b < 2)
        return SNI_NONE;
    size_t ext_len = rd16(b);
    b += 2;
    if ((size_t)(end - b) < ext_len)
        return SNI_NONE;
    const uint8_t *ext_end = b + ext_len;
    while (ext_end - b >= 4) {
        size_t type = rd16(b), len = rd16(b + 2);
        b += 4;
        if ((size_t)(ext_end - b) < len)
            return SNI_NONE;
        if (type == 0)
            return server_name(b, len, name, name_cap);
        b += len;
    }
    return SNI_NONE;
}
