/* socks5.c — see socks5.h. A byte-at-a-time state machine over a bounded message buffer, so
 * any split of the client's bytes gives the same result. */
#include "proxy/socks5.h"

#include <arpa/inet.h>
#include <string.h>

enum { ST_GREETING, ST_REQUEST, ST_DONE };

void socks5_init(struct socks5_parser *p)
{
    memset(p, 0, sizeof *p);
    p->state = ST_GREETING;
}

static enum socks5_result fail(struct socks5_parser *p, unsigned char code, const char *why)
{
    p->state = ST_DONE;
    p->reply_code = code;
    p->error = why;
    return SOCKS5_ERROR;
}

/* Letters, digits, '-', '.', '_', and ':' (a client may send an IPv6 literal as a name). Refuses
 * NUL, CR, LF, space, '%', '/', '@', '\' and every other byte a name never needs. */
static bool is_name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == ':';
}

/* The request is complete in p->msg[0..p->have): decode address and port. */
static enum socks5_result finish_request(struct socks5_parser *p)
{
    const unsigned char *m = p->msg;
    size_t addr_end;
    switch (m[3]) {
    case SOCKS5_ATYP_IPV4:
        inet_ntop(AF_INET, m + 4, p->host, sizeof p->host);
        addr_end = 8;
        break;
    case SOCKS5_ATYP_IPV6:
        inet_ntop(AF_INET6, m + 4, p->host, sizeof p->host);
        addr_end = 20;
        break;
    default: /* SOCKS5_ATYP_DOMAIN; feed() refused the others */
        for (size_t i = 0; i < m[4]; i++)
            if (!is_name_char(m[5 + i]))
                return fail(p, SOCKS5_REP_GENERAL_FAILURE, "invalid character in host name");
        memcpy(p->host, m + 5, m[4]);
        p->host[m[4]] = '\0';
        addr_end = 5 + (size_t)m[4];
        break;
    }
    p->port = (uint16_t)(m[addr_end] << 8 | m[addr_end + 1]);
    if (p->port == 0)
        return fail(p, SOCKS5_REP_GENERAL_FAILURE, "port 0");
    p->cmd = m[1];
    p->atyp = m[3];
    p->state = ST_DONE;
    return SOCKS5_REQUEST;
}

/* How long the current request is, once enough of it is known; 0 while unknown. Sets an
 * error through *res when the known bytes already refuse it. */
static size_t request_length(struct socks5_parser *p, enum socks5_result *res)
{
    const unsigned char *m = p->msg;
    size_t h = p->have;
    if (h >= 1 && m[0] != 5) {
        *res = fail(p, SOCKS5_REP_GENERAL_FAILURE, "request is not SOCKS version 5");
        return 0;
    }
    if (h >= 2 && m[1] != SOCKS5_CMD_CONNECT) {
        *res = fail(p, SOCKS5_REP_CMD_NOT_SUPPORTED,
                    m[1] == SOCKS5_CMD_BIND            ? "BIND is not supported"
                    : m[1] == SOCKS5_CMD_UDP_ASSOCIATE ? "UDP ASSOCIATE is not supported"
                                                       : "unknown command");
        return 0;
    }
    if (h >= 3 && m[2] != 0) {
        *res = fail(p, SOCKS5_REP_GENERAL_FAILURE, "reserved byte is not zero");
        return 0;
    }
    if (h < 4)
        return 0;
    switch (m[3]) {
    case SOCKS5_ATYP_IPV4:
        return 4 + 4 + 2;
    case SOCKS5_ATYP_IPV6:
        return 4 + 16 + 2;
    case SOCKS5_ATYP_DOMAIN:
        if (h < 5)
            return 0;
        if (m[4] == 0) {
            *res = fail(p, SOCKS5_REP_GENERAL_FAILURE, "empty host name");
            return 0;
        }
        return 5 + (size_t)m[4] + 2;
    default:
        *res = fail(p, SOCKS5_REP_ATYP_NOT_SUPPORTED, "address type not supported");
        return 0;
    }
}

enum socks5_result socks5_feed(struct socks5_parser *p, const unsigned char *buf, size_t len,
                               size_t *consumed)
{
    for (size_t i = 0; i < len; i++) {
        *consumed = i + 1;
        if (p->state == ST_DONE)
            return fail(p, SOCKS5_REP_GENERAL_FAILURE, "bytes after the end of the negotiation");
        /* Every message is shorter than msg: the greeting is at most 2 + 255 bytes, a request
         * at most SOCKS5_MSG_MAX, and each is finished the moment its last byte arrives. */
        p->msg[p->have++] = buf[i];
        if (p->state == ST_GREETING) {
            if (p->msg[0] != 5)
                return fail(p, SOCKS5_REP_GENERAL_FAILURE, "greeting is not SOCKS version 5");
            if (p->have < 2 || p->have < 2 + (size_t)p->msg[1])
                continue;
            p->no_auth_offered = memchr(p->msg + 2, 0x00, p->msg[1]) != NULL;
            p->state = p->no_auth_offered ? ST_REQUEST : ST_DONE;
            p->have = 0;
            return SOCKS5_GREETING_REPLY;
        }
        enum socks5_result res = SOCKS5_NEED_MORE;
        size_t need = request_length(p, &res);
        if (res == SOCKS5_ERROR)
            return res;
        if (need && p->have == need)
            return finish_request(p);
    }
    *consumed = len;
    return SOCKS5_NEED_MORE;
}

void socks5_greeting_reply(const struct socks5_parser *p, unsigned char out[2])
{
    out[0] = 5;
    out[1] = p->no_auth_offered ? 0x00 : 0xFF;
}

void socks5_reply(unsigned char code, unsigned char out[10])
{
    static const unsigned char tmpl[10] = {5, 0, 0, SOCKS5_ATYP_IPV4, 0, 0, 0, 0, 0, 0};
    memcpy(out, tmpl, sizeof tmpl);
    out[1] = code;
}
