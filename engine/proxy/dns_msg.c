/* dns_msg.c — see dns_msg.h. A query is accepted only in the shape stub resolvers send: one
 * question, no answer or authority records, at most one additional record and that an OPT
 * (RFC 6891), nothing after it. Compression pointers in the question's name are followed only
 * backwards and at most DNS_MAX_HOPS times, so a loop or a forward jump is a FORMERR, never a
 * hang. The reply repeats the question uncompressed and points its answers at it. */
#include "proxy/dns_msg.h"

#include <string.h>
#include <sys/socket.h>

#define DNS_MAX_HOPS 16
#define DNS_NAME_MAX 253

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static bool label_char_ok(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

/* Read the name at *off into q->name; *off moves past it (past the first pointer when there is
 * one). 0, or -1 when malformed. */
static int read_name(const uint8_t *p, size_t n, size_t *off, struct dns_query *q)
{
    size_t pos = *off, end_after = 0, len = 0;
    int hops = 0;
    bool jumped = false;
    q->name_ok = true;
    for (;;) {
        if (pos >= n)
            return -1;
        uint8_t l = p[pos];
        if ((l & 0xC0) == 0xC0) {
            if (pos + 1 >= n)
                return -1;
            size_t target = (size_t)(l & 0x3F) << 8 | p[pos + 1];
            /* only backwards, and a bounded number of times: no loop can hold the parser */
            if (target >= pos || ++hops > DNS_MAX_HOPS)
                return -1;
            if (!jumped)
                end_after = pos + 2;
            jumped = true;
            pos = target;
            continue;
        }
        if (l & 0xC0)
            return -1; /* 0x40 and 0x80: extended label types, not in a query */
        if (l == 0) {
            pos++;
            break;
        }
        if (pos + 1 + l > n || len + (len ? 1 : 0) + l > DNS_NAME_MAX)
            return -1;
        if (len) {
            q->echo[len] = '.';
            q->name[len++] = '.';
        }
        for (size_t i = 0; i < l; i++) {
            uint8_t c = p[pos + 1 + i];
            if (!label_char_ok(c))
                q->name_ok = false;
            char keep = (char)((c == 0 || c == '.') ? '?' : c);
            q->echo[len] = keep;
            q->name[len++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : keep);
        }
        pos += 1 + l;
    }
    q->name[len] = q->echo[len] = '\0';
    if (len == 0)
        q->name_ok = false; /* the root: nothing a rule names */
    *off = jumped ? end_after : pos;
    return 0;
}

int dns_msg_parse_query(const uint8_t *p, size_t n, struct dns_query *q)
{
    memset(q, 0, sizeof *q);
    if (n < DNS_HEADER_LEN)
        return -1;
    q->id = rd16(p);
    uint16_t flags = rd16(p + 2);
    q->rd = flags & 0x0100;
    if (flags & 0x8000)
        return -1; /* a response: answering it could start a loop between two resolvers */
    if (((flags >> 11) & 0xF) != 0)
        return DNS_RCODE_NOTIMP; /* only QUERY */
    uint16_t qd = rd16(p + 4), an = rd16(p + 6), ns = rd16(p + 8), ar = rd16(p + 10);
    if (qd != 1 || an != 0 || ns != 0 || ar > 1)
        return DNS_RCODE_FORMERR;
    size_t off = DNS_HEADER_LEN;
    if (read_name(p, n, &off, q) < 0 || off + 4 > n)
        return DNS_RCODE_FORMERR;
    q->qtype = rd16(p + off);
    q->qclass = rd16(p + off + 2);
    off += 4;
    q->has_question = true;
    if (ar == 1) {
        /* the OPT record: root name, type 41, class = payload size, TTL = ext rcode/version/flags */
        if (off + 11 > n || p[off] != 0 || rd16(p + off + 1) != DNS_TYPE_OPT)
            return DNS_RCODE_FORMERR;
        uint16_t size = rd16(p + off + 3);
        q->edns_version = p[off + 6];
        uint16_t rdlen = rd16(p + off + 9);
        off += 11;
        if (off + rdlen > n)
            return DNS_RCODE_FORMERR;
        off += rdlen; /* options (cookies, padding): read past, none is acted on */
        q->edns = true;
        q->edns_size = size < DNS_UDP_PLAIN ? DNS_UDP_PLAIN : size;
    }
    if (off != n)
        return DNS_RCODE_FORMERR; /* trailing bytes */
    if (q->edns && q->edns_version > 0)
        return DNS_RCODE_BADVERS;
    if (q->qclass != DNS_CLASS_IN)
        return DNS_RCODE_NOTIMP;
    if (q->qtype == DNS_TYPE_OPT)
        return DNS_RCODE_FORMERR;
    return DNS_RCODE_NOERROR;
}

size_t dns_msg_udp_limit(const struct dns_query *q)
{
    if (!q->edns)
        return DNS_UDP_PLAIN;
    return q->edns_size > DNS_UDP_EDNS_MAX ? DNS_UDP_EDNS_MAX : q->edns_size;
}

/* Write name (dotted) as labels at out; returns the bytes written, 0 when it does not fit. */
static size_t put_name(const char *name, uint8_t *out, size_t cap)
{
    size_t w = 0;
    const char *s = name;
    while (*s) {
        const char *dot = strchr(s, '.');
        size_t l = dot ? (size_t)(dot - s) : strlen(s);
        if (l == 0 || l > 63 || w + 1 + l > cap)
            return 0;
        out[w++] = (uint8_t)l;
        memcpy(out + w, s, l);
        w += l;
        s += l + (dot ? 1 : 0);
    }
    if (w + 1 > cap)
        return 0;
    out[w++] = 0;
    return w;
}

size_t dns_msg_build_reply(const struct dns_query *q, int rcode,
                           const struct dns_answer_addr *addrs, size_t n_addrs, uint32_t ttl,
                           size_t limit, uint8_t *out, size_t cap)
{
    if (limit > cap)
        limit = cap;
    if (limit < DNS_HEADER_LEN)
        return 0;
    bool edns = q->edns && DNS_HEADER_LEN + 11 <= limit; /* no room: a plain reply */
    size_t opt_len = edns ? 11 : 0;
    size_t w = DNS_HEADER_LEN;
    bool question = q->has_question;
    if (question) {
        size_t nl = put_name(q->echo, out + w, limit - w);
        if (nl == 0 || w + nl + 4 + opt_len > limit) {
            question = false;
        } else {
            w += nl;
            wr16(out + w, q->qtype);
            wr16(out + w + 2, q->qclass);
            w += 4;
        }
    }
    size_t qend = w;
    int family = q->qtype == DNS_TYPE_A ? AF_INET : q->qtype == DNS_TYPE_AAAA ? AF_INET6 : 0;
    size_t alen = family == AF_INET ? 4 : 16, count = 0;
    bool truncated = false;
    if (question && rcode == DNS_RCODE_NOERROR && family) {
        for (size_t i = 0; i < n_addrs && count < DNS_MAX_ANSWERS; i++) {
            if (addrs[i].family != family)
                continue;
            if (w + 12 + alen + opt_len > limit) {
                truncated = true;
                break;
            }
            wr16(out + w, 0xC000 | DNS_HEADER_LEN); /* the question's name */
            wr16(out + w + 2, q->qtype);
            wr16(out + w + 4, DNS_CLASS_IN);
            wr16(out + w + 6, (uint16_t)(ttl >> 16));
            wr16(out + w + 8, (uint16_t)ttl);
            wr16(out + w + 10, (uint16_t)alen);
            memcpy(out + w + 12, addrs[i].addr, alen);
            w += 12 + alen;
            count++;
        }
    }
    if (truncated) { /* RFC 2181: a truncated reply carries no partial answer set */
        w = qend;
        count = 0;
    }
    if (edns) {
        out[w] = 0;
        wr16(out + w + 1, DNS_TYPE_OPT);
        wr16(out + w + 3, DNS_UDP_EDNS_MAX);
        out[w + 5] = (uint8_t)(rcode >> 4); /* extended rcode bits */
        out[w + 6] = 0;                     /* version */
        wr16(out + w + 7, 0);
        wr16(out + w + 9, 0);
        w += 11;
    }
    wr16(out, q->id);
    uint16_t flags = 0x8000 | 0x0080 | (q->rd ? 0x0100 : 0) | (truncated ? 0x0200 : 0) |
                     (uint16_t)((edns ? rcode : (rcode > 15 ? DNS_RCODE_FORMERR : rcode)) & 0xF);
    wr16(out + 2, flags);
    wr16(out + 4, question ? 1 : 0);
    wr16(out + 6, (uint16_t)count);
    wr16(out + 8, 0);
    wr16(out + 10, edns ? 1 : 0);
    return w;
}
