/* cred_scan.c — see cred_scan.h. */
#include "proxy/cred_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cred_scan {
    const struct cred_set *set;
    bool *skip;  /* per credential: it may go to this destination */
    size_t keep; /* longest placeholder looked for - 1: the bytes kept between feeds */
    char *tail;  /* the stream's last tail_len (<= keep) bytes */
    size_t tail_len;
    char *window;  /* tail + the first keep bytes of a feed: the placeholders across them */
    char first[9]; /* the stream's first bytes, for cred_scan_began_http */
    size_t first_len;
};

struct cred_scan *cred_scan_new(const struct cred_set *set, const char *host, int port)
{
    struct cred_scan *s = calloc(1, sizeof *s);
    size_t n = cred_set_count(set);
    if (!s)
        return NULL;
    s->set = set;
    s->skip = calloc(n ? n : 1, sizeof *s->skip);
    size_t longest = 1;
    for (size_t i = 0; s->skip && i < n; i++) {
        s->skip[i] = cred_set_allows(set, i, host, port);
        size_t len = strlen(cred_set_placeholder(set, i));
        if (!s->skip[i] && len > longest)
            longest = len;
    }
    s->keep = longest - 1;
    s->tail = malloc(s->keep + 1);
    s->window = malloc(2 * s->keep + 1);
    if (!s->skip || !s->tail || !s->window) {
        cred_scan_free(s);
        return NULL;
    }
    return s;
}

/* The first credential looked for whose placeholder is in p[0..n), or -1. */
static long find_any(const struct cred_scan *s, const char *p, size_t n)
{
    for (size_t i = 0; i < cred_set_count(s->set); i++) {
        if (s->skip[i])
            continue;
        const char *ph = cred_set_placeholder(s->set, i);
        if (memmem(p, n, ph, strlen(ph)))
            return (long)i;
    }
    return -1;
}

long cred_scan_feed(struct cred_scan *s, const char *p, size_t n)
{
    if (n == 0)
        return -1;
    if (s->first_len < sizeof s->first - 1) {
        size_t k = sizeof s->first - 1 - s->first_len < n ? sizeof s->first - 1 - s->first_len : n;
        memcpy(s->first + s->first_len, p, k);
        s->first_len += k;
    }
    /* A placeholder across the feeds: it ends in the first keep bytes of this one (a match
     * wholly in the tail is shorter than any placeholder, so none is found twice). */
    if (s->tail_len > 0) {
        size_t head = n < s->keep ? n : s->keep;
        memcpy(s->window, s->tail, s->tail_len);
        memcpy(s->window + s->tail_len, p, head);
        long k = find_any(s, s->window, s->tail_len + head);
        if (k >= 0)
            return k;
    }
    long k = find_any(s, p, n);
    if (k >= 0)
        return k;
    /* keep the stream's last keep bytes */
    if (n >= s->keep) {
        memcpy(s->tail, p + n - s->keep, s->keep);
        s->tail_len = s->keep;
    } else {
        size_t old = s->tail_len + n > s->keep ? s->keep - n : s->tail_len;
        memmove(s->tail, s->tail + s->tail_len - old, old);
        memcpy(s->tail + old, p, n);
        s->tail_len = old + n;
    }
    return -1;
}

bool cred_scan_began_http(const struct cred_scan *s)
{
    size_t i = 0;
    while (i < s->first_len && s->first[i] >= 'A' && s->first[i] <= 'Z')
        i++;
    return i >= 3 && i < s->first_len && s->first[i] == ' ';
}

void cred_scan_refusal(const struct cred_set *set, long k, const char *host, int port, char *why,
                       size_t whylen)
{
    snprintf(why, whylen, "the placeholder of credential %s went to %s:%d, which it may not reach",
             cred_set_name(set, (size_t)k), host, port);
}

void cred_scan_free(struct cred_scan *s)
{
    if (!s)
        return;
    free(s->skip);
    free(s->tail);
    free(s->window);
    free(s);
}
