/* fuzz_dns.c — libFuzzer target for dns_msg.c. The input is one query as the stub resolver
 * receives it (UDP payload, or a TCP message without its length). Beyond no crash: a parse
 * returns -1 or an rcode the stub answers with; an accepted question's name is 1..253 bytes
 * of dotted text without NUL, lower case; the reply built for it (and for every rcode) fits
 * the limit it was given, is a response with the same id, and never parses as a query (so two
 * stubs cannot answer each other forever). Built and run by `make fuzz` (engine/fuzz/README.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz/fuzz.h"
#include "proxy/dns_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dns_query q;
    int rc = dns_msg_parse_query(data, size, &q);
    ASSERT(rc == -1 || rc == DNS_RCODE_NOERROR || rc == DNS_RCODE_FORMERR ||
           rc == DNS_RCODE_NOTIMP || rc == DNS_RCODE_BADVERS);
    if (rc < 0)
        return 0;
    if (rc == DNS_RCODE_NOERROR) {
        size_t len = strlen(q.name);
        ASSERT(len <= 253 && strlen(q.echo) == len);
        for (size_t i = 0; i < len; i++)
            ASSERT(!(q.name[i] >= 'A' && q.name[i] <= 'Z'));
        if (q.name_ok)
            ASSERT(len > 0 && q.name[0] != '.' && q.name[len - 1] != '.' && !strstr(q.name, ".."));
    }
    static const struct dns_answer_addr addrs[3] = {
        {AF_INET, {10, 0, 0, 1}}, {AF_INET6, {0x20, 0x01, 0x0d, 0xb8}}, {AF_INET, {192, 0, 2, 1}}};
    static const int rcodes[] = {DNS_RCODE_NOERROR, DNS_RCODE_REFUSED, DNS_RCODE_SERVFAIL,
                                 DNS_RCODE_FORMERR, DNS_RCODE_BADVERS};
    uint8_t out[2048];
    size_t limits[] = {12, 64, dns_msg_udp_limit(&q), sizeof out};
    for (size_t r = 0; r < sizeof rcodes / sizeof rcodes[0]; r++) {
        for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
            size_t n = dns_msg_build_reply(&q, rcodes[r], addrs, 3, 60, limits[l], out, sizeof out);
            ASSERT(n <= limits[l]);
            if (n == 0)
                continue;
            ASSERT(n >= 12 && out[0] == data[0] && out[1] == data[1] && (out[2] & 0x80));
            struct dns_query back;
            ASSERT(dns_msg_parse_query(out, n, &back) == -1);
        }
    }
    return 0;
}
