/* cred_rewrite.c — see cred_rewrite.h. Owns the credential set (the only copy of the values a
 * sandbox's requests get) and the per-connection request rewriter. Uses http_parse.c for the
 * request framing, so that the rewriter and the proxy agree on where a request goes and where
 * its body ends. Allocates with malloc (no xmalloc: the fuzz target links this file alone). */
#include "proxy/cred_rewrite.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/http_parse.h"

/* A request head bigger than this is refused (the proxy's own limits are below it). */
#define CRED_HEAD_MAX (64 * 1024)
/* A Content-Length body to a credential's host whose value and placeholder differ in length is
 * read whole (to say the new length) up to this size; a bigger one is passed as it is. */
#define CRED_BODY_BUFFER_MAX (1024 * 1024)

struct cred_host {
    char *name; /* lower case; "*.example.com" matches every name below example.com */
    int port;   /* 0: any port */
};

struct cred {
    char *name;
    char *placeholder, *value;
    size_t ph_len, value_len;
    struct cred_host *hosts;
    size_t n_hosts;
};

struct cred_set {
    struct cred *v;
    size_t n;
    size_t max_ph; /* the longest placeholder */
};

#define CRED_ALLOWED 1 /* its value may go to this request's destination */
#define CRED_USED 2    /* its value was put into this request (reported at its end) */

enum rw_state {
    RW_HEAD,         /* reading a request head */
    RW_BODY_LENGTH,  /* a Content-Length body, streamed */
    RW_BODY_BUFFER,  /* a Content-Length body, read whole before the head goes */
    RW_BODY_CHUNKED, /* a chunked body */
    RW_TUNNEL,       /* not HTTP any more (after CONNECT or Upgrade): bytes pass unchanged */
    RW_FAILED,
};

struct cred_rewrite {
    const struct cred_set *set;
    char *host; /* NULL: each request names its destination (forward proxy) */
    int port;
    cred_use_fn *on_use;
    void *use_ctx;

    enum rw_state state;
    char *head; /* the head being read, and (RW_BODY_BUFFER) the body after it */
    size_t head_len, head_cap;
    size_t body_start; /* RW_BODY_BUFFER: where the body starts in head */

    /* the current request */
    char dest_host[HTTP_HOST_MAX + 1];
    int dest_port;
    unsigned char *allowed; /* per credential: CRED_ALLOWED, CRED_USED */
    bool substitute;        /* substitute in the body (else only look for placeholders) */
    uint64_t body_left;     /* RW_BODY_LENGTH, RW_BODY_BUFFER */
    struct http_chunked chunked;
    bool tunnel_after; /* CONNECT or Upgrade: no more HTTP after this request */
    char *carry;       /* body bytes held back: a prefix of some placeholder */
    size_t carry_len;
};

/* --- output buffers --- */

static int out_append(struct cred_out *o, const char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (o->len + n < o->len)
        return -1;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + n)
            cap *= 2;
        char *np = realloc(o->p, cap);
        if (!np)
            return -1;
        o->p = np;
        o->cap = cap;
    }
    memcpy(o->p + o->len, p, n);
    o->len += n;
    return 0;
}

static int out_append_str(struct cred_out *o, const char *s)
{
    return out_append(o, s, strlen(s));
}

/* Overwrite and free a buffer that held a value. */
static void wipe_free(char *p, size_t n)
{
    if (!p)
        return;
    volatile char *v = p;
    for (size_t i = 0; i < n; i++)
        v[i] = 0;
    free(p);
}

/* --- the set --- */

struct cred_set *cred_set_new(void)
{
    return calloc(1, sizeof(struct cred_set));
}

size_t cred_set_count(const struct cred_set *set)
{
    return set ? set->n : 0;
}

static bool valid_name(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/* A placeholder must survive URLs, headers and JSON unchanged: unreserved characters only. */
static bool valid_placeholder(const char *s)
{
    if (strlen(s) < 16)
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

/* Parse "host", "host:port" or "[v6]:port" into h (host lower-cased). NULL or the reason. */
static const char *parse_host_rule(const char *s, struct cred_host *h)
{
    const char *end = s + strlen(s), *colon = NULL;
    const char *hb = s, *he;
    if (*s == '[') {
        const char *rb = strchr(s, ']');
        if (!rb)
            return "an IPv6 host without its ']'";
        hb = s + 1;
        he = rb;
        if (rb[1] == ':')
            colon = rb + 1;
        else if (rb[1])
            return "text after ']'";
    } else {
        colon = strrchr(s, ':');
        if (colon && strchr(s, ':') != colon)
            return "an IPv6 host must be written in brackets";
        he = colon ? colon : end;
    }
    if (he == hb || he - hb > HTTP_HOST_MAX)
        return "an empty or too long host";
    h->port = 0;
    if (colon) {
        long port = 0;
        const char *p = colon + 1;
        if (!*p)
            return "an empty port";
        for (; *p; p++) {
            if (*p < '0' || *p > '9')
                return "a port that is not a number";
            port = port * 10 + (*p - '0');
            if (port > 65535)
                return "a port out of range";
        }
        if (port == 0)
            return "a port out of range";
        h->port = (int)port;
    }
    size_t n = (size_t)(he - hb);
    h->name = malloc(n + 1);
    if (!h->name)
        return "out of memory";
    for (size_t i = 0; i < n; i++) {
        char c = hb[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
                  c == '_' || (c == ':' && *s == '[') ||
                  (c == '*' && i == 0 && n > 2 && hb[1] == '.');
        if (!ok) {
            free(h->name);
            h->name = NULL;
            return "a character a host name cannot hold";
        }
        h->name[i] = c;
    }
    h->name[n] = 0;
    return NULL;
}

static void cred_clear(struct cred *c)
{
    free(c->name);
    free(c->placeholder);
    wipe_free(c->value, c->value_len);
    for (size_t i = 0; i < c->n_hosts; i++)
        free(c->hosts[i].name);
    free(c->hosts);
    memset(c, 0, sizeof *c);
}

int cred_set_add(struct cred_set *set, const char *name, const char *placeholder, const char *value,
                 const char *const *hosts, size_t n_hosts, char *why, size_t whylen)
{
    if (!valid_name(name)) {
        snprintf(why, whylen, "credential %s: a name is letters, digits and '_'", name);
        return -1;
    }
    if (!valid_placeholder(placeholder)) {
        snprintf(why, whylen, "credential %s: a bad placeholder", name);
        return -1;
    }
    if (!*value) {
        snprintf(why, whylen, "credential %s: the value is empty", name);
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)value; *p; p++)
        if (*p < 0x20 || *p == 0x7f) {
            snprintf(why, whylen, "credential %s: the value holds a control character", name);
            return -1;
        }
    if (n_hosts == 0) {
        snprintf(why, whylen, "credential %s: no host to send it to", name);
        return -1;
    }
    for (size_t i = 0; i < set->n; i++) {
        if (strcmp(set->v[i].name, name) == 0) {
            snprintf(why, whylen, "credential %s: declared twice", name);
            return -1;
        }
        /* No placeholder may hold another: the first found must be the one meant. */
        if (strstr(set->v[i].placeholder, placeholder) ||
            strstr(placeholder, set->v[i].placeholder)) {
            snprintf(why, whylen, "credential %s: its placeholder is not unique", name);
            return -1;
        }
    }
    struct cred c = {0};
    c.name = strdup(name);
    c.placeholder = strdup(placeholder);
    c.value_len = strlen(value);
    c.value = malloc(c.value_len + 1);
    c.hosts = calloc(n_hosts, sizeof *c.hosts);
    if (!c.name || !c.placeholder || !c.value || !c.hosts) {
        cred_clear(&c);
        snprintf(why, whylen, "credential %s: out of memory", name);
        return -1;
    }
    memcpy(c.value, value, c.value_len + 1);
    c.ph_len = strlen(placeholder);
    for (size_t i = 0; i < n_hosts; i++) {
        const char *err = parse_host_rule(hosts[i], &c.hosts[c.n_hosts]);
        if (err) {
            snprintf(why, whylen, "credential %s: host '%s': %s", name, hosts[i], err);
            cred_clear(&c);
            return -1;
        }
        c.n_hosts++;
    }
    struct cred *nv = realloc(set->v, (set->n + 1) * sizeof *nv);
    if (!nv) {
        cred_clear(&c);
        snprintf(why, whylen, "credential %s: out of memory", name);
        return -1;
    }
    set->v = nv;
    set->v[set->n++] = c;
    if (c.ph_len > set->max_ph)
        set->max_ph = c.ph_len;
    return 0;
}

void cred_set_free(struct cred_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++)
        cred_clear(&set->v[i]);
    free(set->v);
    free(set);
}

static bool host_matches(const struct cred_host *h, const char *host, int port)
{
    if (h->port && h->port != port)
        return false;
    if (h->name[0] == '*') {
        size_t hl = strlen(host), sl = strlen(h->name + 1); /* ".example.com" */
        return hl > sl && strcasecmp(host + hl - sl, h->name + 1) == 0;
    }
    return strcasecmp(h->name, host) == 0;
}

static bool cred_allows(const struct cred *c, const char *host, int port)
{
    for (size_t i = 0; i < c->n_hosts; i++)
        if (host_matches(&c->hosts[i], host, port))
            return true;
    return false;
}

const char *cred_set_name(const struct cred_set *set, size_t i)
{
    return set->v[i].name;
}

const char *cred_set_placeholder(const struct cred_set *set, size_t i)
{
    return set->v[i].placeholder;
}

bool cred_set_allows(const struct cred_set *set, size_t i, const char *host, int port)
{
    return host && cred_allows(&set->v[i], host, port);
}

bool cred_set_matches_host(const struct cred_set *set, const char *host, int port)
{
    if (!set || !host)
        return false;
    for (size_t i = 0; i < set->n; i++)
        if (cred_allows(&set->v[i], host, port))
            return true;
    return false;
}

/* --- substitution in a byte range --- */

/* The credential whose placeholder starts at p[0..n), or -1. With partial, also one whose
 * placeholder p[0..n) is a proper prefix of (the caller holds those bytes back). */
static int placeholder_at(const struct cred_set *set, const char *p, size_t n, bool *partial)
{
    *partial = false;
    for (size_t i = 0; i < set->n; i++) {
        const struct cred *c = &set->v[i];
        if (c->placeholder[0] != p[0])
            continue;
        if (n >= c->ph_len) {
            if (memcmp(p, c->placeholder, c->ph_len) == 0)
                return (int)i;
        } else if (memcmp(p, c->placeholder, n) == 0) {
            *partial = true;
        }
    }
    return -1;
}

static void refuse_placeholder(struct cred_rewrite *rw, const struct cred *c, char *why,
                               size_t whylen)
{
    snprintf(why, whylen, "the placeholder of credential %s went to %s:%d, which it may not reach",
             c->name, rw->dest_host, rw->dest_port);
    rw->state = RW_FAILED;
}

/* Copy p[0..n) to out, putting each allowed credential's value for its placeholder (when
 * substitute) and refusing another's. Without final, a tail that may begin a placeholder is
 * not copied: *kept says how many bytes at the end were held back. */
static int substitute_range(struct cred_rewrite *rw, const char *p, size_t n, bool final,
                            bool substitute, struct cred_out *out, size_t *kept, char *why,
                            size_t whylen)
{
    const struct cred_set *set = rw->set;
    size_t i = 0, copied = 0;
    *kept = 0;
    while (i < n) {
        bool partial;
        int k = placeholder_at(set, p + i, n - i, &partial);
        if (k < 0) {
            if (partial && !final) {
                *kept = n - i;
                break;
            }
            i++;
            continue;
        }
        const struct cred *c = &set->v[k];
        if (!rw->allowed[k]) {
            refuse_placeholder(rw, c, why, whylen);
            return -1;
        }
        if (substitute) {
            if (out_append(out, p + copied, i - copied) < 0 ||
                out_append(out, c->value, c->value_len) < 0)
                goto nomem;
            copied = i + c->ph_len;
            rw->allowed[k] |= CRED_USED;
        }
        i += c->ph_len;
    }
    if (out_append(out, p + copied, n - copied - *kept) < 0)
        goto nomem;
    return 0;
nomem:
    snprintf(why, whylen, "out of memory rewriting a request");
    rw->state = RW_FAILED;
    return -1;
}

/* --- base64 (RFC 4648), for Authorization: Basic --- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(char c)
{
    const char *p = c ? strchr(B64, c) : NULL;
    return p ? (int)(p - B64) : -1;
}

/* Decode p[0..n) (padding required when the length asks for it) into a new buffer. */
static char *b64_decode(const char *p, size_t n, size_t *outlen)
{
    if (n == 0 || n % 4 != 0)
        return NULL;
    char *o = malloc(n / 4 * 3 + 1);
    if (!o)
        return NULL;
    size_t w = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int j = 0; j < 4; j++) {
            if (p[i + j] == '=' && i + 4 == n && j >= 2 && (j == 3 || p[i + 3] == '='))
                v[j] = -2;
            else if ((v[j] = b64_value(p[i + j])) < 0) {
                free(o);
                return NULL;
            }
        }
        o[w++] = (char)(v[0] << 2 | v[1] >> 4);
        if (v[2] >= 0)
            o[w++] = (char)((v[1] & 15) << 4 | v[2] >> 2);
        if (v[3] >= 0) {
            if (v[2] < 0) {
                free(o);
                return NULL;
            }
            o[w++] = (char)((v[2] & 3) << 6 | v[3]);
        }
    }
    *outlen = w;
    return o;
}

static int b64_encode(struct cred_out *out, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? s[i + 2] : 0);
        char q[4] = {B64[v >> 18 & 63], B64[v >> 12 & 63], i + 1 < n ? B64[v >> 6 & 63] : '=',
                     i + 2 < n ? B64[v & 63] : '='};
        if (out_append(out, q, 4) < 0)
            return -1;
    }
    return 0;
}

/* --- the head --- */

static bool name_is(const char *p, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(p, name, n) == 0;
}

/* One header field line (without CRLF): an Authorization's Basic credentials are decoded,
 * rewritten and encoded again; every line is also rewritten as it is. */
static int rewrite_field(struct cred_rewrite *rw, const char *line, size_t n, struct cred_out *out,
                         char *why, size_t whylen)
{
    const char *colon = memchr(line, ':', n);
    size_t kept;
    if (colon && (name_is(line, (size_t)(colon - line), "Authorization") ||
                  name_is(line, (size_t)(colon - line), "Proxy-Authorization"))) {
        const char *v = colon + 1, *end = line + n;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        if (end - v > 6 && strncasecmp(v, "Basic ", 6) == 0) {
            const char *b = v + 6;
            while (b < end && *b == ' ')
                b++;
            const char *be = end;
            while (be > b && (be[-1] == ' ' || be[-1] == '\t'))
                be--;
            size_t dlen;
            char *dec = b64_decode(b, (size_t)(be - b), &dlen);
            if (dec) {
                struct cred_out plain = {0};
                int r = substitute_range(rw, dec, dlen, true, true, &plain, &kept, why, whylen);
                wipe_free(dec, dlen);
                if (r < 0) {
                    wipe_free(plain.p, plain.cap);
                    return -1;
                }
                r = out_append(out, line, (size_t)(b - line));
                if (r == 0)
                    r = b64_encode(out, (const unsigned char *)plain.p, plain.len);
                if (r == 0)
                    r = out_append(out, be, (size_t)(end - be));
                wipe_free(plain.p, plain.cap);
                if (r < 0) {
                    snprintf(why, whylen, "out of memory rewriting a request");
                    return -1;
                }
                return 0;
            }
        }
    }
    return substitute_range(rw, line, n, true, true, out, &kept, why, whylen);
}

/* Rewrite head[0..len) (through its blank line) into out. With new_length, its Content-Length
 * field says new_length instead. */
static int rewrite_head(struct cred_rewrite *rw, const char *head, size_t len, bool set_length,
                        uint64_t new_length, struct cred_out *out, char *why, size_t whylen)
{
    size_t pos = 0;
    while (pos < len) {
        const char *eol = memchr(head + pos, '\n', len - pos);
        size_t end = eol ? (size_t)(eol - head) + 1 : len;
        size_t body = end - pos;
        size_t text = body;
        while (text > 0 && (head[pos + text - 1] == '\n' || head[pos + text - 1] == '\r'))
            text--;
        const char *line = head + pos;
        const char *colon = memchr(line, ':', text);
        if (set_length && pos > 0 && colon &&
            name_is(line, (size_t)(colon - line), "Content-Length")) {
            char num[48];
            snprintf(num, sizeof num, "Content-Length: %llu", (unsigned long long)new_length);
            if (out_append_str(out, num) < 0)
                goto nomem;
        } else if (rewrite_field(rw, line, text, out, why, whylen) < 0) {
            return -1;
        }
        if (out_append(out, line + text, body - text) < 0)
            goto nomem;
        pos = end;
    }
    return 0;
nomem:
    snprintf(why, whylen, "out of memory rewriting a request");
    rw->state = RW_FAILED;
    return -1;
}

/* The head's framing and, for a forward proxy stream, its destination: http_parse_request reads
 * absolute-form; an origin-form head (TLS termination) is read as if it named rw's host. */
static enum http_parse_result parse_head(struct cred_rewrite *rw, const char *head, size_t len,
                                         struct http_request *req)
{
    struct http_limits lim = http_limits_default();
    if (!rw->host)
        return http_parse_request(head, len, &lim, req);
    const char *sp = memchr(head, ' ', len);
    if (!sp || (size_t)(sp - head) + 1 >= len || sp[1] != '/')
        return http_parse_request(head, len, &lim, req); /* its error says what is wrong */
    size_t mlen = (size_t)(sp - head) + 1;
    size_t extra = 7 + HTTP_HOST_MAX + 2 + 6;
    char *tmp = malloc(len + extra);
    if (!tmp) {
        req->status = 500;
        req->error = "out of memory";
        return HTTP_PARSE_ERROR;
    }
    bool v6 = strchr(rw->host, ':') != NULL;
    int k = snprintf(tmp + mlen, extra, v6 ? "http://[%s]:%d" : "http://%s:%d", rw->host,
                     rw->port > 0 ? rw->port : 80);
    memcpy(tmp, head, mlen);
    memcpy(tmp + mlen + (size_t)k, sp + 1, len - mlen);
    enum http_parse_result r = http_parse_request(tmp, len + (size_t)k, &lim, req);
    free(tmp);
    return r;
}

static void report_use(struct cred_rewrite *rw)
{
    for (size_t i = 0; i < rw->set->n; i++) {
        if ((rw->allowed[i] & CRED_USED) && rw->on_use)
            rw->on_use(rw->use_ctx, rw->set->v[i].name, rw->dest_host, rw->dest_port);
        rw->allowed[i] &= (unsigned char)~CRED_USED;
    }
}

static void request_done(struct cred_rewrite *rw)
{
    report_use(rw);
    rw->state = rw->tunnel_after ? RW_TUNNEL : RW_HEAD;
}

static bool head_has_field(const char *head, size_t len, const char *name)
{
    size_t nl = strlen(name), pos = 0;
    while (pos < len) {
        const char *eol = memchr(head + pos, '\n', len - pos);
        size_t end = eol ? (size_t)(eol - head) + 1 : len;
        if (pos > 0 && end - pos > nl && strncasecmp(head + pos, name, nl) == 0 &&
            head[pos + nl] == ':')
            return true;
        pos = end;
    }
    return false;
}

/* A complete head of hlen bytes is at rw->head: decide the request, emit its head (or wait for
 * its body), and say how its body is read. */
static int start_request(struct cred_rewrite *rw, size_t hlen, struct cred_out *out, char *why,
                         size_t whylen)
{
    struct http_request *req = malloc(sizeof *req);
    if (!req) {
        snprintf(why, whylen, "out of memory rewriting a request");
        return -1;
    }
    enum http_parse_result pr = parse_head(rw, rw->head, hlen, req);
    if (pr != HTTP_PARSE_OK) {
        /* Fail closed: where a malformed request would go, and where its body ends, are not
         * known, so no byte of it is passed on. */
        snprintf(why, whylen, "a malformed request: %s", req->error ? req->error : "unreadable");
        free(req);
        return -1;
    }
    if (rw->host) {
        snprintf(rw->dest_host, sizeof rw->dest_host, "%s", rw->host);
        rw->dest_port = rw->port;
    } else {
        snprintf(rw->dest_host, sizeof rw->dest_host, "%s", req->host);
        rw->dest_port = req->port;
    }
    bool any_allowed = false, equal_lengths = true;
    for (size_t i = 0; i < rw->set->n; i++) {
        const struct cred *c = &rw->set->v[i];
        rw->allowed[i] = cred_allows(c, rw->dest_host, rw->dest_port) ? CRED_ALLOWED : 0;
        if (rw->allowed[i]) {
            any_allowed = true;
            if (c->ph_len != c->value_len)
                equal_lengths = false;
        }
    }
    rw->carry_len = 0;
    /* After CONNECT, and after an Upgrade the server may accept, the stream is no longer
     * HTTP. A forward proxy drops Upgrade (hop-by-hop): its stream stays HTTP. */
    rw->tunnel_after = req->is_connect || (rw->host && head_has_field(rw->head, hlen, "Upgrade"));
    /* A body with a Content-Encoding is passed as it is: its bytes are not the text a
     * placeholder was written in (docs/network.md). */
    bool encoded = head_has_field(rw->head, hlen, "Content-Encoding");
    rw->substitute = any_allowed && !encoded;
    enum http_body body = req->body;
    uint64_t length = req->content_length;
    free(req);

    if (body == HTTP_BODY_CONTENT_LENGTH && length > 0 && rw->substitute && !equal_lengths) {
        if (length <= CRED_BODY_BUFFER_MAX) {
            /* Read the body whole: the head must say its new length. */
            rw->body_start = hlen;
            rw->body_left = length;
            rw->state = RW_BODY_BUFFER;
            return 0;
        }
        rw->substitute = false; /* too big to hold: passed as it is (docs/network.md) */
    }
    struct cred_out head_out = {0};
    int r = rewrite_head(rw, rw->head, hlen, false, 0, &head_out, why, whylen);
    if (r == 0 && out_append(out, head_out.p, head_out.len) < 0) {
        snprintf(why, whylen, "out of memory rewriting a request");
        r = -1;
    }
    wipe_free(head_out.p, head_out.cap);
    if (r < 0)
        return -1;
    if (body == HTTP_BODY_CONTENT_LENGTH && length > 0) {
        rw->body_left = length;
        rw->state = RW_BODY_LENGTH;
    } else if (body == HTTP_BODY_CHUNKED) {
        http_chunked_init(&rw->chunked);
        rw->state = RW_BODY_CHUNKED;
    } else {
        request_done(rw);
    }
    return 0;
}

/* Body bytes p[0..n), all of this request's: rewritten (or only looked at) through the carry.
 * With final, the carry is flushed. The result goes to out. */
static int body_bytes(struct cred_rewrite *rw, const char *p, size_t n, bool final,
                      struct cred_out *out, char *why, size_t whylen)
{
    size_t total = rw->carry_len + n;
    char *joined = malloc(total ? total : 1);
    if (!joined) {
        snprintf(why, whylen, "out of memory rewriting a request");
        return -1;
    }
    memcpy(joined, rw->carry, rw->carry_len);
    if (n > 0)
        memcpy(joined + rw->carry_len, p, n);
    size_t kept;
    int r = substitute_range(rw, joined, total, final, rw->substitute, out, &kept, why, whylen);
    if (r == 0) {
        memcpy(rw->carry, joined + total - kept, kept);
        rw->carry_len = kept;
    }
    wipe_free(joined, total);
    return r;
}

/* Chunked: the data bytes are rewritten through the carry and sent as chunks of their own;
 * the client's framing is read (http_chunked_feed), not copied. Trailers are dropped. */
static int chunked_bytes(struct cred_rewrite *rw, const char *in, size_t n, size_t *used,
                         struct cred_out *out, char *why, size_t whylen)
{
    size_t pos = 0;
    struct cred_out data = {0};
    int r = 0;
    bool done = false;
    while (pos < n && !done) {
        uint64_t data_left = http_chunked_data_left(&rw->chunked);
        size_t take = n - pos;
        if (data_left > 0 && data_left < take)
            take = (size_t)data_left;
        if (data_left == 0) {
            /* framing: feed up to where data starts (one byte at a time is simplest and the
             * framing is short) */
            take = 1;
        }
        size_t consumed = 0;
        enum http_chunked_result cr = http_chunked_feed(&rw->chunked, in + pos, take, &consumed);
        if (cr == HTTP_CHUNKED_ERROR) {
            snprintf(why, whylen, "a malformed chunked body: %s",
                     rw->chunked.error ? rw->chunked.error : "unreadable");
            r = -1;
            break;
        }
        if (data_left > 0 &&
            (r = body_bytes(rw, in + pos, consumed, false, &data, why, whylen)) < 0)
            break;
        pos += consumed;
        if (cr == HTTP_CHUNKED_DONE)
            done = true;
    }
    if (r == 0 && done)
        r = body_bytes(rw, NULL, 0, true, &data, why, whylen);
    if (r == 0 && data.len > 0) {
        char size[32];
        snprintf(size, sizeof size, "%zx\r\n", data.len);
        if (out_append_str(out, size) < 0 || out_append(out, data.p, data.len) < 0 ||
            out_append(out, "\r\n", 2) < 0)
            r = -1;
    }
    if (r == 0 && done && out_append(out, "0\r\n\r\n", 5) < 0)
        r = -1;
    wipe_free(data.p, data.cap);
    if (r < 0) {
        if (!why[0])
            snprintf(why, whylen, "out of memory rewriting a request");
        rw->state = RW_FAILED;
        return -1;
    }
    *used = pos;
    if (done)
        request_done(rw);
    return 0;
}

struct cred_rewrite *cred_rewrite_new(const struct cred_set *set, const char *host, int port)
{
    struct cred_rewrite *rw = calloc(1, sizeof *rw);
    if (!rw)
        return NULL;
    rw->set = set;
    rw->port = port;
    rw->allowed = calloc(set->n ? set->n : 1, 1);
    rw->carry = malloc(set->max_ph ? set->max_ph : 1);
    if (host)
        rw->host = strdup(host);
    if (!rw->allowed || !rw->carry || (host && !rw->host)) {
        cred_rewrite_free(rw);
        return NULL;
    }
    return rw;
}

const char *cred_rewrite_destination(const struct cred_rewrite *rw, int *port)
{
    *port = rw->dest_port;
    return rw->dest_host;
}

void cred_rewrite_on_use(struct cred_rewrite *rw, cred_use_fn *fn, void *ctx)
{
    rw->on_use = fn;
    rw->use_ctx = ctx;
}

void cred_rewrite_free(struct cred_rewrite *rw)
{
    if (!rw)
        return;
    free(rw->host);
    free(rw->allowed);
    wipe_free(rw->carry, rw->set && rw->set->max_ph ? rw->set->max_ph : 1);
    wipe_free(rw->head, rw->head_cap);
    free(rw);
}

static int head_append(struct cred_rewrite *rw, const char *p, size_t n)
{
    if (rw->head_len + n > rw->head_cap) {
        size_t cap = rw->head_cap ? rw->head_cap : 1024;
        while (cap < rw->head_len + n)
            cap *= 2;
        char *np = realloc(rw->head, cap);
        if (!np)
            return -1;
        rw->head = np;
        rw->head_cap = cap;
    }
    memcpy(rw->head + rw->head_len, p, n);
    rw->head_len += n;
    return 0;
}

/* The end of the head in rw->head (just after its blank line), or 0. */
static size_t head_end(const struct cred_rewrite *rw, size_t from)
{
    size_t start = from >= 3 ? from - 3 : 0;
    for (size_t i = start; i + 4 <= rw->head_len; i++)
        if (memcmp(rw->head + i, "\r\n\r\n", 4) == 0)
            return i + 4;
    return 0;
}

int cred_rewrite_feed(struct cred_rewrite *rw, const char *in, size_t n, struct cred_out *out,
                      char *why, size_t whylen)
{
    if (whylen)
        why[0] = 0;
    size_t pos = 0;
    while (pos < n) {
        switch (rw->state) {
        case RW_FAILED:
            if (!why[0])
                snprintf(why, whylen, "the request stream was refused before");
            return -1;
        case RW_TUNNEL:
            if (out_append(out, in + pos, n - pos) < 0)
                goto nomem;
            return 0;
        case RW_HEAD: {
            size_t before = rw->head_len;
            size_t room = CRED_HEAD_MAX + 1 - rw->head_len;
            size_t take = n - pos < room ? n - pos : room;
            if (head_append(rw, in + pos, take) < 0)
                goto nomem;
            size_t end = head_end(rw, before);
            if (end == 0) {
                if (rw->head_len > CRED_HEAD_MAX) {
                    snprintf(why, whylen, "a request head over %d bytes", CRED_HEAD_MAX);
                    rw->state = RW_FAILED;
                    return -1;
                }
                pos += take;
                break;
            }
            /* Bytes after the head go back to the input. */
            pos += take - (rw->head_len - end);
            rw->head_len = end;
            if (start_request(rw, end, out, why, whylen) < 0) {
                rw->state = RW_FAILED;
                return -1;
            }
            if (rw->state != RW_BODY_BUFFER)
                rw->head_len = 0;
            break;
        }
        case RW_BODY_LENGTH: {
            size_t take = n - pos;
            if (take > rw->body_left)
                take = (size_t)rw->body_left;
            rw->body_left -= take;
            if (body_bytes(rw, in + pos, take, rw->body_left == 0, out, why, whylen) < 0)
                return -1;
            pos += take;
            if (rw->body_left == 0)
                request_done(rw);
            break;
        }
        case RW_BODY_BUFFER: {
            size_t take = n - pos;
            if (take > rw->body_left)
                take = (size_t)rw->body_left;
            if (head_append(rw, in + pos, take) < 0)
                goto nomem;
            rw->body_left -= take;
            pos += take;
            if (rw->body_left > 0)
                break;
            struct cred_out body = {0}, head = {0};
            size_t kept;
            int r = substitute_range(rw, rw->head + rw->body_start, rw->head_len - rw->body_start,
                                     true, true, &body, &kept, why, whylen);
            if (r == 0)
                r = rewrite_head(rw, rw->head, rw->body_start, true, body.len, &head, why, whylen);
            if (r == 0 &&
                (out_append(out, head.p, head.len) < 0 || out_append(out, body.p, body.len) < 0)) {
                snprintf(why, whylen, "out of memory rewriting a request");
                r = -1;
            }
            wipe_free(head.p, head.cap);
            wipe_free(body.p, body.cap);
            rw->head_len = 0;
            if (rw->head_cap > CRED_HEAD_MAX) { /* the body's room goes back */
                wipe_free(rw->head, rw->head_cap);
                rw->head = NULL;
                rw->head_cap = 0;
            }
            if (r < 0) {
                rw->state = RW_FAILED;
                return -1;
            }
            request_done(rw);
            break;
        }
        case RW_BODY_CHUNKED: {
            size_t used = 0;
            if (chunked_bytes(rw, in + pos, n - pos, &used, out, why, whylen) < 0)
                return -1;
            pos += used;
            break;
        }
        }
    }
    return 0;
nomem:
    snprintf(why, whylen, "out of memory rewriting a request");
    rw->state = RW_FAILED;
    return -1;
}
