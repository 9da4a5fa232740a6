/* nft_netlink.c — see nft_netlink.h. A netlink message is a header, a struct nfgenmsg and
 * attributes (length, type, value padded to 4 bytes); a nested attribute's value is more
 * attributes, its type has NLA_F_NESTED as nft sets it. nf_tables takes the messages between a
 * batch begin and end as one transaction: the table, chain and rules appear together or not at
 * all. Integers in nf_tables attributes are big-endian. Uses only the kernel's UAPI headers. */
#include "sandbox/nft_netlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TABLE "cordon"
#define CHAIN "out"

/* The message being written: its bytes, how many are in use, and whether one did not fit. */
struct nb {
    uint8_t *buf;
    size_t cap, len;
    bool full;
};

static void *nb_reserve(struct nb *b, size_t n)
{
    size_t padded = NLMSG_ALIGN(n);
    if (b->full || b->cap - b->len < padded) {
        b->full = true;
        return NULL;
    }
    void *p = b->buf + b->len;
    memset(p, 0, padded);
    b->len += padded;
    return p;
}

/* An attribute with a value of n bytes; nested ones are closed by nest_end. */
static void put_attr(struct nb *b, uint16_t type, const void *v, size_t n)
{
    struct nlattr *a = nb_reserve(b, NLA_HDRLEN + n);
    if (!a)
        return;
    a->nla_type = type;
    a->nla_len = (uint16_t)(NLA_HDRLEN + n);
    memcpy((uint8_t *)a + NLA_HDRLEN, v, n);
}

static void put_str(struct nb *b, uint16_t type, const char *s)
{
    put_attr(b, type, s, strlen(s) + 1);
}

static void put_be32(struct nb *b, uint16_t type, uint32_t v)
{
    uint32_t be = htonl(v);
    put_attr(b, type, &be, sizeof be);
}

static size_t nest_start(struct nb *b, uint16_t type)
{
    size_t at = b->len;
    struct nlattr *a = nb_reserve(b, NLA_HDRLEN);
    if (a)
        a->nla_type = type | NLA_F_NESTED;
    return at;
}

static void nest_end(struct nb *b, size_t at)
{
    if (!b->full)
        ((struct nlattr *)(b->buf + at))->nla_len = (uint16_t)(b->len - at);
}

static size_t msg_start(struct nb *b, uint16_t type, uint16_t flags, uint32_t seq, uint8_t family,
                        uint16_t res_id)
{
    size_t at = b->len;
    struct nlmsghdr *h = nb_reserve(b, NLMSG_HDRLEN);
    struct nfgenmsg *g = nb_reserve(b, sizeof *g);
    if (!h || !g)
        return at;
    h->nlmsg_type = type;
    h->nlmsg_flags = NLM_F_REQUEST | flags;
    h->nlmsg_seq = seq;
    g->nfgen_family = family;
    g->version = NFNETLINK_V0;
    g->res_id = htons(res_id);
    return at;
}

static void msg_end(struct nb *b, size_t at)
{
    if (!b->full)
        ((struct nlmsghdr *)(b->buf + at))->nlmsg_len = (uint32_t)(b->len - at);
}

/* ---- expressions ---- */

static size_t expr_start(struct nb *b, const char *name)
{
    size_t elem = nest_start(b, NFTA_LIST_ELEM);
    put_str(b, NFTA_EXPR_NAME, name);
    return elem;
}

/* meta load KEY => reg 1 */
static void expr_meta(struct nb *b, uint32_t key)
{
    size_t e = expr_start(b, "meta"), d = nest_start(b, NFTA_EXPR_DATA);
    put_be32(b, NFTA_META_KEY, key);
    put_be32(b, NFTA_META_DREG, NFT_REG_1);
    nest_end(b, d);
    nest_end(b, e);
}

/* cmp eq reg 1 VALUE */
static void expr_cmp_eq(struct nb *b, const void *v, size_t n)
{
    size_t e = expr_start(b, "cmp"), d = nest_start(b, NFTA_EXPR_DATA);
    put_be32(b, NFTA_CMP_SREG, NFT_REG_1);
    put_be32(b, NFTA_CMP_OP, NFT_CMP_EQ);
    size_t data = nest_start(b, NFTA_CMP_DATA);
    put_attr(b, NFTA_DATA_VALUE, v, n);
    nest_end(b, data);
    nest_end(b, d);
    nest_end(b, e);
}

/* payload load LEN @ network header + OFFSET => reg 1 */
static void expr_payload(struct nb *b, uint32_t offset, uint32_t len)
{
    size_t e = expr_start(b, "payload"), d = nest_start(b, NFTA_EXPR_DATA);
    put_be32(b, NFTA_PAYLOAD_DREG, NFT_REG_1);
    put_be32(b, NFTA_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
    put_be32(b, NFTA_PAYLOAD_OFFSET, offset);
    put_be32(b, NFTA_PAYLOAD_LEN, len);
    nest_end(b, d);
    nest_end(b, e);
}

/* immediate reg 0 return */
static void expr_return(struct nb *b)
{
    size_t e = expr_start(b, "immediate"), d = nest_start(b, NFTA_EXPR_DATA);
    put_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
    size_t data = nest_start(b, NFTA_IMMEDIATE_DATA);
    size_t verdict = nest_start(b, NFTA_DATA_VERDICT);
    put_be32(b, NFTA_VERDICT_CODE, (uint32_t)NFT_RETURN);
    nest_end(b, verdict);
    nest_end(b, data);
    nest_end(b, d);
    nest_end(b, e);
}

/* immediate reg 1 PORT; redir proto_min reg 1 */
static void expr_redirect(struct nb *b, uint16_t port)
{
    size_t e = expr_start(b, "immediate"), d = nest_start(b, NFTA_EXPR_DATA);
    put_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_1);
    size_t data = nest_start(b, NFTA_IMMEDIATE_DATA);
    uint16_t be = htons(port);
    put_attr(b, NFTA_DATA_VALUE, &be, sizeof be);
    nest_end(b, data);
    nest_end(b, d);
    nest_end(b, e);
    e = expr_start(b, "redir");
    d = nest_start(b, NFTA_EXPR_DATA);
    put_be32(b, NFTA_REDIR_REG_PROTO_MIN, NFT_REG_1);
    put_be32(b, NFTA_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
    nest_end(b, d);
    nest_end(b, e);
}

/* ---- messages ---- */

#define NFT_MSG(m) ((uint16_t)((NFNL_SUBSYS_NFTABLES << 8) | (m)))

/* A rule of the chain; the caller writes its expressions between rule_start and rule_end. */
static void rule_start(struct nb *b, uint32_t seq, bool ack, size_t *msg, size_t *exprs)
{
    *msg = msg_start(b, NFT_MSG(NFT_MSG_NEWRULE),
                     NLM_F_CREATE | NLM_F_APPEND | (ack ? NLM_F_ACK : 0), seq, NFPROTO_INET, 0);
    put_str(b, NFTA_RULE_TABLE, TABLE);
    put_str(b, NFTA_RULE_CHAIN, CHAIN);
    *exprs = nest_start(b, NFTA_RULE_EXPRESSIONS);
}

static void rule_end(struct nb *b, size_t msg, size_t exprs)
{
    nest_end(b, exprs);
    msg_end(b, msg);
}

/* "ip daddr A return" (family NFPROTO_IPV4: 4 bytes at 16) or "ip6 daddr A return" (16 at 24) */
static void rule_daddr_return(struct nb *b, uint32_t seq, uint8_t nfproto, const void *addr)
{
    size_t msg, exprs;
    uint32_t proto = nfproto;
    bool v4 = nfproto == NFPROTO_IPV4;
    rule_start(b, seq, false, &msg, &exprs);
    expr_meta(b, NFT_META_NFPROTO);
    /* nft compares a one-byte key in a register of four: the byte, then three zero bytes */
    uint8_t key[4] = {(uint8_t)proto, 0, 0, 0};
    expr_cmp_eq(b, key, 1);
    expr_payload(b, v4 ? 16 : 24, v4 ? 4 : 16);
    expr_cmp_eq(b, addr, v4 ? 4 : 16);
    expr_return(b);
    rule_end(b, msg, exprs);
}

size_t nft_netlink_redirect_batch(uint8_t *buf, size_t cap, uint16_t port, uint32_t seq, bool ack)
{
    struct nb b = {.buf = buf, .cap = cap};
    size_t m = msg_start(&b, NFNL_MSG_BATCH_BEGIN, 0, seq, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
    msg_end(&b, m);

    m = msg_start(&b, NFT_MSG(NFT_MSG_NEWTABLE), 0, seq + 1, NFPROTO_INET, 0);
    put_str(&b, NFTA_TABLE_NAME, TABLE);
    put_be32(&b, NFTA_TABLE_FLAGS, 0);
    msg_end(&b, m);

    m = msg_start(&b, NFT_MSG(NFT_MSG_NEWCHAIN), NLM_F_CREATE, seq + 2, NFPROTO_INET, 0);
    put_str(&b, NFTA_CHAIN_TABLE, TABLE);
    put_str(&b, NFTA_CHAIN_NAME, CHAIN);
    put_str(&b, NFTA_CHAIN_TYPE, "nat");
    put_be32(&b, NFTA_CHAIN_POLICY, NF_ACCEPT);
    size_t hook = nest_start(&b, NFTA_CHAIN_HOOK);
    put_be32(&b, NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_OUT);
    put_be32(&b, NFTA_HOOK_PRIORITY, (uint32_t)-100); /* NF_IP_PRI_NAT_DST: before routing */
    nest_end(&b, hook);
    msg_end(&b, m);

    /* Not redirected: the sandbox's own loopback (init's listeners, the resolver). The rest of
     * 127/8 is the host's loopback as far as the rules go: only a rule naming it reaches it. */
    static const uint8_t lo4[4] = {127, 0, 0, 1}, dns4[4] = {127, 0, 0, 53};
    static const uint8_t lo6[16] = {[15] = 1};
    rule_daddr_return(&b, seq + 3, NFPROTO_IPV4, lo4);
    rule_daddr_return(&b, seq + 4, NFPROTO_IPV4, dns4);
    rule_daddr_return(&b, seq + 5, NFPROTO_IPV6, lo6);

    size_t exprs;
    rule_start(&b, seq + 6, ack, &m, &exprs);
    expr_meta(&b, NFT_META_L4PROTO);
    uint8_t tcp[4] = {IPPROTO_TCP, 0, 0, 0};
    expr_cmp_eq(&b, tcp, 1);
    expr_redirect(&b, port);
    rule_end(&b, m, exprs);

    m = msg_start(&b, NFNL_MSG_BATCH_END, 0, seq + 7, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
    msg_end(&b, m);
    return b.full ? 0 : b.len;
}

static const char *part_name(uint32_t off)
{
    static const char *const parts[] = {"batch",         "table",         "chain",
                                        "loopback rule", "resolver rule", "IPv6 loopback rule",
                                        "redirect rule", "batch"};
    return off < sizeof parts / sizeof parts[0] ? parts[off] : "batch";
}

int nft_netlink_add_redirect(uint16_t port, char *err, size_t errlen)
{
    uint8_t msg[1536];
    /* seq is a bound on which reply is ours; the socket is new, so any small base does */
    const uint32_t seq = 1;
    size_t n = nft_netlink_redirect_batch(msg, sizeof msg, port, seq, true);
    int r = 0;
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (fd < 0) {
        r = -errno;
        if (r == -EPROTONOSUPPORT)
            snprintf(err, errlen, "the kernel has no nf_tables");
        else
            snprintf(err, errlen, "cannot open nf_tables' netlink socket: %s", strerror(-r));
        return r;
    }
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    if (n == 0) {
        r = -EMSGSIZE;
        snprintf(err, errlen, "the nftables batch does not fit");
        goto out;
    }
    if (sendto(fd, msg, n, 0, (struct sockaddr *)&sa, sizeof sa) != (ssize_t)n) {
        r = -errno;
        snprintf(err, errlen, "cannot send the nftables rule: %s", strerror(-r));
        goto out;
    }
    /* nf_tables runs the batch inside sendto: its answers (an error for the part it refused, or
     * the acknowledgement of the last rule) are queued by now; the poll is a bound, not a wait */
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 1000) != 1) {
            r = -ETIMEDOUT;
            snprintf(err, errlen, "nf_tables did not answer the nftables rule");
            goto out;
        }
        uint8_t reply[4096];
        ssize_t got = recv(fd, reply, sizeof reply, 0);
        if (got < 0) {
            r = -errno;
            snprintf(err, errlen, "cannot read nf_tables' answer: %s", strerror(-r));
            goto out;
        }
        for (struct nlmsghdr *h = (struct nlmsghdr *)reply; NLMSG_OK(h, (size_t)got);
             h = NLMSG_NEXT(h, got)) {
            if (h->nlmsg_type != NLMSG_ERROR ||
                h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                continue;
            const struct nlmsgerr *e = NLMSG_DATA(h);
            if (e->error != 0) {
                r = e->error;
                snprintf(err, errlen, "nf_tables refused the %s: %s",
                         part_name(e->msg.nlmsg_seq - seq), strerror(-r));
                goto out;
            }
            if (e->msg.nlmsg_seq == seq + 6)
                goto out; /* the last rule is in: so is the whole batch */
        }
    }
out:
    close(fd);
    return r;
}
