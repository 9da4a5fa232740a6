/* dns_msg.h — the DNS wire format the sandbox's stub resolver speaks (RFC 1035, EDNS per
 * RFC 6891): parse one query, build one reply. Pure functions over byte buffers: no I/O, no
 * allocation, no policy. Owns the bounds a hostile query must not get past (name length,
 * compression pointers, counts, trailing bytes); never trusts a length it has not checked. */
#ifndef CORDON_DNS_MSG_H
#define CORDON_DNS_MSG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_TYPE_A 1
#define DNS_TYPE_CNAME 5
#define DNS_TYPE_AAAA 28
#define DNS_TYPE_OPT 41
#define DNS_CLASS_IN 1

#define DNS_RCODE_NOERROR 0
#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_NOTIMP 4
#define DNS_RCODE_REFUSED 5
#define DNS_RCODE_BADVERS 16 /* extended: only with EDNS */

#define DNS_HEADER_LEN 12
#define DNS_UDP_PLAIN 512     /* a reply to a query without EDNS */
#define DNS_UDP_EDNS_MAX 1232 /* the largest UDP reply sent, whatever the query offers */
#define DNS_MAX_ANSWERS 16    /* addresses in one reply */

struct dns_query {
    uint16_t id;
    bool rd;           /* recursion desired: echoed */
    bool has_question; /* the question was read (a reply can repeat it) */
    char name[254];    /* the question's name, dotted, lower case, no trailing dot */
    char echo[254];    /* the same in the case it came in: the reply repeats it (0x20 clients) */
    bool name_ok;      /* only letters, digits, '-', '_' in its labels (else: refused) */
    uint16_t qtype, qclass;
    bool edns; /* an OPT record came */
    uint8_t edns_version;
    uint16_t edns_size; /* the requester's UDP payload size (at least 512) */
};

/* Parse one query message of n bytes. Returns the rcode to answer with (DNS_RCODE_NOERROR when
 * the query is well formed and answerable by type and class; FORMERR, NOTIMP (opcode other than
 * QUERY, class other than IN), BADVERS (EDNS version above 0)), or -1 when no reply may be sent
 * at all (shorter than a header, or a response rather than a query). q is filled as far as it
 * was read. */
int dns_msg_parse_query(const uint8_t *p, size_t n, struct dns_query *q);

struct dns_answer_addr {
    int family; /* AF_INET or AF_INET6 */
    uint8_t addr[16];
};

/* Build the reply to q with rcode and the addresses of q->qtype's family among addrs (at most
 * DNS_MAX_ANSWERS of them), each with ttl, into out (cap bytes). limit: the largest message
 * the transport takes (UDP: dns_msg_udp_limit(q); TCP: 65535); a reply that does not fit is
 * sent with TC set and no answers. Returns the length, or 0 when even that does not fit. */
size_t dns_msg_build_reply(const struct dns_query *q, int rcode,
                           const struct dns_answer_addr *addrs, size_t n_addrs, uint32_t ttl,
                           size_t limit, uint8_t *out, size_t cap);

/* The largest UDP reply for q: 512 without EDNS, else its payload size capped at 1232. */
size_t dns_msg_udp_limit(const struct dns_query *q);
#endif
