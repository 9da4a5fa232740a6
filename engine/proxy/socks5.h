/* socks5.h — the server side of SOCKS version 5 (RFC 1928) as the egress proxy speaks it:
 * the "no authentication" method only, and the CONNECT command only.
 *
 * Owns a per-connection parser state and the reply encodings; no I/O, no allocation, no
 * globals. The caller (the proxy's event loop) reads the socket, feeds the bytes, writes the
 * replies, asks the policy, connects and relays. Must never: consume bytes past the request
 * (the client may pipeline its first payload), or hand the caller a host name that holds
 * bytes a resolver or a policy could read two ways. */
#ifndef CORDON_SOCKS5_H
#define CORDON_SOCKS5_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum socks5_result {
    SOCKS5_NEED_MORE,      /* every byte was taken; feed more */
    SOCKS5_GREETING_REPLY, /* the greeting is complete: send socks5_greeting_reply(); if it
                            * refused (second byte 0xFF) close after sending it */
    SOCKS5_REQUEST,        /* a CONNECT request is complete: cmd, atyp, host, port are set */
    SOCKS5_ERROR,          /* send socks5_reply(p->reply_code) and close (after a bad greeting
                            * version just close: the client does not speak SOCKS5) */
};

enum socks5_reply_code {
    SOCKS5_REP_SUCCEEDED = 0x00,
    SOCKS5_REP_GENERAL_FAILURE = 0x01,
    SOCKS5_REP_NOT_ALLOWED = 0x02,
    SOCKS5_REP_NET_UNREACHABLE = 0x03,
    SOCKS5_REP_HOST_UNREACHABLE = 0x04,
    SOCKS5_REP_CONN_REFUSED = 0x05,
    SOCKS5_REP_TTL_EXPIRED = 0x06,
    SOCKS5_REP_CMD_NOT_SUPPORTED = 0x07,
    SOCKS5_REP_ATYP_NOT_SUPPORTED = 0x08,
};

enum socks5_cmd {
    SOCKS5_CMD_CONNECT = 0x01,
    SOCKS5_CMD_BIND = 0x02,
    SOCKS5_CMD_UDP_ASSOCIATE = 0x03
};
enum socks5_atyp { SOCKS5_ATYP_IPV4 = 0x01, SOCKS5_ATYP_DOMAIN = 0x03, SOCKS5_ATYP_IPV6 = 0x04 };

#define SOCKS5_MSG_MAX 262 /* the longest request: 4 + 1 + 255 + 2 */

struct socks5_parser {
    int state;
    size_t have;                       /* bytes of the current message in msg */
    unsigned char msg[SOCKS5_MSG_MAX]; /* the current message, kept across feeds */
    bool no_auth_offered;              /* after GREETING_REPLY */
    /* After SOCKS5_REQUEST: */
    unsigned char cmd;  /* SOCKS5_CMD_CONNECT */
    unsigned char atyp; /* enum socks5_atyp: was host a name or a literal */
    char host[256];     /* a name as sent (1..255 bytes of letters, digits, '-', '.',
                                         * '_', ':'), or the address as inet_ntop text */
    uint16_t port;      /* 1..65535 */
    /* After SOCKS5_ERROR: */
    unsigned char reply_code; /* enum socks5_reply_code */
    const char *error;        /* a short static text for the log */
};

void socks5_init(struct socks5_parser *p);
/* Feed the next len bytes the client sent. *consumed is the bytes taken: all of them on
 * NEED_MORE; through the end of the greeting on GREETING_REPLY (feed the rest again: a
 * client may send greeting and request together); through the end of the request on REQUEST
 * (the rest is payload for the relay). After REQUEST, ERROR or a refused greeting, every
 * further feed is an ERROR. */
enum socks5_result socks5_feed(struct socks5_parser *p, const unsigned char *buf, size_t len,
                               size_t *consumed);
/* The method-selection reply: 05 00 when "no authentication" was offered, else 05 FF. */
void socks5_greeting_reply(const struct socks5_parser *p, unsigned char out[2]);
/* A reply to a request: VER 5, REP code, RSV 0, ATYP IPv4, BND.ADDR 0.0.0.0, BND.PORT 0. */
void socks5_reply(unsigned char code, unsigned char out[10]);
#endif
