/* test_dns_msg.c — dns_msg.c: queries parsed as stub resolvers send them (plain, EDNS, a
 * compressed question), and refused when malformed, truncated, oversized, looping, of another
 * opcode or class; replies built with their answers, truncated (TC) when they do not fit. */
#include <arpa/inet.h>
#include <sys/socket.h>

#include "proxy/dns_msg.h"
#include "test.h"

/* A query for name/type (class IN), optionally with an OPT record of payload size edns. */
static size_t make_query(uint8_t *out, const char *name, uint16_t type, uint16_t edns)
{
    static const uint8_t head[] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
    size_t w = sizeof head;
    memcpy(out, head, w);
    const char *s = name;
    while (*s) {
        const char *dot = strchr(s, '.');
        size_t l = dot ? (size_t)(dot - s) : strlen(s);
        out[w++] = (uint8_t)l;
        memcpy(out + w, s, l);
        w += l;
        s += l + (dot ? 1 : 0);
    }
    out[w++] = 0;
    out[w++] = (uint8_t)(type >> 8);
    out[w++] = (uint8_t)type;
    out[w++] = 0;
    out[w++] = 1;
    if (edns) {
        out[11] = 1;
        const uint8_t opt[] = {0, 0, 41, (uint8_t)(edns >> 8), (uint8_t)edns, 0, 0, 0, 0, 0, 0};
        memcpy(out + w, opt, sizeof opt);
        w += sizeof opt;
    }
    return w;
}

static void test_plain_query(void)
{
    uint8_t m[512];
    struct dns_query q;
    size_t n = make_query(m, "Api.Example.COM", DNS_TYPE_A, 0);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_NOERROR);
    CHECK_EQ_INT(q.id, 0x1234);
    CHECK(q.rd && q.name_ok && !q.edns);
    CHECK(strcmp(q.name, "api.example.com") == 0);
    CHECK(strcmp(q.echo, "Api.Example.COM") == 0);
    CHECK_EQ_INT(q.qtype, DNS_TYPE_A);
    CHECK_EQ_INT(dns_msg_udp_limit(&q), 512);
}

static void test_edns_query(void)
{
    uint8_t m[512];
    struct dns_query q;
    size_t n = make_query(m, "example.com", DNS_TYPE_AAAA, 4096);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_NOERROR);
    CHECK(q.edns);
    CHECK_EQ_INT(q.edns_size, 4096);
    CHECK_EQ_INT(dns_msg_udp_limit(&q), DNS_UDP_EDNS_MAX);
    /* a payload size under 512 counts as 512 */
    n = make_query(m, "example.com", DNS_TYPE_AAAA, 100);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_NOERROR);
    CHECK_EQ_INT(dns_msg_udp_limit(&q), 512);
    /* version 1: BADVERS */
    n = make_query(m, "example.com", DNS_TYPE_AAAA, 1232);
    m[n - 5] = 1;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_BADVERS);
    /* an OPT record whose options run past the end */
    n = make_query(m, "example.com", DNS_TYPE_AAAA, 1232);
    m[n - 1] = 8;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_FORMERR);
    /* an additional record that is not OPT */
    n = make_query(m, "example.com", DNS_TYPE_AAAA, 1232);
    m[n - 9] = 1;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_FORMERR);
}

static void test_malformed(void)
{
    uint8_t m[600];
    struct dns_query q;
    size_t n = make_query(m, "example.com", DNS_TYPE_A, 0);
    /* shorter than a header, or a response: no reply at all */
    CHECK_EQ_INT(dns_msg_parse_query(m, 11, &q), -1);
    CHECK_EQ_INT(dns_msg_parse_query(m, 0, &q), -1);
    m[2] |= 0x80;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), -1);
    m[2] &= 0x7f;
    /* every truncation of a good query is refused, never read past */
    for (size_t k = DNS_HEADER_LEN; k < n; k++)
        CHECK_EQ_INT(dns_msg_parse_query(m, k, &q), DNS_RCODE_FORMERR);
    /* trailing bytes */
    m[n] = 0;
    CHECK_EQ_INT(dns_msg_parse_query(m, n + 1, &q), DNS_RCODE_FORMERR);
    /* two questions, an answer record, an authority record */
    m[5] = 2;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_FORMERR);
    m[5] = 1;
    m[7] = 1;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_FORMERR);
    m[7] = 0;
    m[9] = 1;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_FORMERR);
    m[9] = 0;
    /* opcode STATUS / NOTIFY: not implemented */
    m[2] = 0x10;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_NOTIMP);
    m[2] = 0x01;
    /* class CH (version.bind): not implemented */
    m[n - 1] = 3;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_NOTIMP);
    m[n - 1] = 1;
    /* extended label types */
    m[12] = 0x47;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_FORMERR);
}

static void test_oversized_name(void)
{
    uint8_t m[700];
    struct dns_query q;
    char name[5 * 64]; /* 5 labels of 63 and their dots, with the NUL */
    /* 5 labels of 63: 319 bytes, over 253 */
    size_t w = 0;
    for (int i = 0; i < 5; i++) {
        if (i)
            name[w++] = '.';
        memset(name + w, 'a', 63);
        w += 63;
    }
    name[w] = 0;
    size_t n = make_query(m, name, DNS_TYPE_A, 0);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_FORMERR);
    /* a 64-byte label reads as an extended label type (0x40) */
    memset(name, 'b', 64);
    name[64] = 0;
    n = make_query(m, name, DNS_TYPE_A, 0);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_FORMERR);
    /* the longest name (253 bytes) is fine */
    memset(name, 'c', 253);
    for (int i = 63; i < 253; i += 64)
        name[i] = '.';
    name[253] = 0;
    n = make_query(m, name, DNS_TYPE_A, 0);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_NOERROR);
    CHECK_EQ_INT(strlen(q.name), 253);
}

static void test_compression(void)
{
    uint8_t m[64];
    struct dns_query q;
    static const uint8_t head[] = {0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    memcpy(m, head, sizeof head);
    /* a pointer to itself: a loop */
    m[12] = 0xC0;
    m[13] = 12;
    m[14] = 0;
    m[15] = 1;
    m[16] = 0;
    m[17] = 1;
    CHECK_EQ_INT(dns_msg_parse_query(m, 18, &q), DNS_RCODE_FORMERR);
    /* a pointer forwards */
    m[13] = 14;
    CHECK_EQ_INT(dns_msg_parse_query(m, 18, &q), DNS_RCODE_FORMERR);
    /* a pointer into the header (backwards: followed; the header bytes read as labels) */
    m[13] = 4; /* 0x00 0x01 ...: an empty name at offset 4 is the root (0x00) */
    CHECK_EQ_INT(dns_msg_parse_query(m, 18, &q), DNS_RCODE_NOERROR);
    CHECK(!q.name_ok); /* the root is not a name any rule names */
    /* label "a", then a pointer back to the label: a loop through backward pointers */
    m[12] = 1;
    m[13] = 'a';
    m[14] = 0xC0;
    m[15] = 12;
    m[16] = 0;
    m[17] = 1;
    m[18] = 0;
    m[19] = 1;
    CHECK_EQ_INT(dns_msg_parse_query(m, 20, &q), DNS_RCODE_FORMERR);
}

static void test_odd_names(void)
{
    uint8_t m[512];
    struct dns_query q;
    size_t n = make_query(m, "a b.example.com", DNS_TYPE_A, 0);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_NOERROR);
    CHECK(!q.name_ok);
    n = make_query(m, "_http._tcp.example.com", DNS_TYPE_A, 0);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_NOERROR);
    CHECK(q.name_ok);
    /* a dot or NUL inside a label cannot be written back as text: refused as a name */
    n = make_query(m, "ab.example.com", DNS_TYPE_A, 0);
    m[14] = 0;
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), DNS_RCODE_NOERROR);
    CHECK(!q.name_ok);
}

static void test_reply(void)
{
    uint8_t m[512], out[2048];
    struct dns_query q;
    size_t n = make_query(m, "Example.com", DNS_TYPE_A, 0);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), 0);
    struct dns_answer_addr a[3] = {
        {AF_INET, {93, 184, 216, 34}}, {AF_INET6, {0x20, 0x01}}, {AF_INET, {10, 0, 0, 1}}};
    size_t r = dns_msg_build_reply(&q, DNS_RCODE_NOERROR, a, 3, 60, 512, out, sizeof out);
    CHECK_EQ_INT(r, n + 2 * 16);
    CHECK_EQ_INT(out[0], 0x12);
    CHECK_EQ_INT(out[2], 0x81);                   /* QR, RD */
    CHECK_EQ_INT(out[3], 0x80);                   /* RA, NOERROR */
    CHECK_EQ_INT(out[7], 2);                      /* two A records, not the AAAA */
    CHECK(memcmp(out + 12, m + 12, n - 12) == 0); /* the question, in its own case */
    CHECK_EQ_INT(out[n], 0xC0);
    CHECK_EQ_INT(out[n + 1], 12);
    CHECK_EQ_INT(out[n + 9], 60);
    CHECK(memcmp(out + n + 12, a[0].addr, 4) == 0);
    /* the reply parses as a response: never answered back */
    struct dns_query back;
    CHECK_EQ_INT(dns_msg_parse_query(out, r, &back), -1);
    /* refused: the question, no answers */
    r = dns_msg_build_reply(&q, DNS_RCODE_REFUSED, a, 3, 60, 512, out, sizeof out);
    CHECK_EQ_INT(r, n);
    CHECK_EQ_INT(out[3] & 0xF, DNS_RCODE_REFUSED);
    CHECK_EQ_INT(out[7], 0);
    /* too small a limit: TC, no answers */
    r = dns_msg_build_reply(&q, DNS_RCODE_NOERROR, a, 3, 60, n + 20, out, sizeof out);
    CHECK_EQ_INT(r, n);
    CHECK(out[2] & 0x02);
    CHECK_EQ_INT(out[7], 0);
    /* EDNS: an OPT record at the end; BADVERS in its extended bits */
    n = make_query(m, "example.com", DNS_TYPE_AAAA, 1232);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), 0);
    r = dns_msg_build_reply(&q, DNS_RCODE_NOERROR, a, 3, 60, dns_msg_udp_limit(&q), out,
                            sizeof out);
    CHECK_EQ_INT(r, n + 28);
    CHECK_EQ_INT(out[11], 1);
    r = dns_msg_build_reply(&q, DNS_RCODE_BADVERS, NULL, 0, 0, 512, out, sizeof out);
    CHECK_EQ_INT(out[3] & 0xF, 0);
    CHECK_EQ_INT(out[r - 6], 1);
    /* never more than DNS_MAX_ANSWERS */
    struct dns_answer_addr many[40];
    for (int i = 0; i < 40; i++)
        many[i] = (struct dns_answer_addr){AF_INET, {10, 0, 0, (uint8_t)i}};
    n = make_query(m, "example.com", DNS_TYPE_A, 0);
    CHECK_EQ_INT(dns_msg_parse_query(m, n, &q), 0);
    r = dns_msg_build_reply(&q, DNS_RCODE_NOERROR, many, 40, 60, 65535, out, sizeof out);
    CHECK_EQ_INT(out[7], DNS_MAX_ANSWERS);
    /* a header-only reply (no question read) to a FORMERR */
    CHECK_EQ_INT(dns_msg_parse_query(m, 14, &q), DNS_RCODE_FORMERR);
    r = dns_msg_build_reply(&q, DNS_RCODE_FORMERR, NULL, 0, 0, 512, out, sizeof out);
    CHECK_EQ_INT(r, DNS_HEADER_LEN);
    CHECK_EQ_INT(out[5], 0);
    CHECK_EQ_INT(dns_msg_build_reply(&q, DNS_RCODE_FORMERR, NULL, 0, 0, 11, out, sizeof out), 0);
}

TEST_MAIN({"plain query", test_plain_query}, {"EDNS", test_edns_query},
          {"malformed", test_malformed}, {"oversized name", test_oversized_name},
          {"compression", test_compression}, {"odd names", test_odd_names}, {"reply", test_reply})
