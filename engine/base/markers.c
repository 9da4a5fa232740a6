/* markers.c — see markers.h. Each marker is anchored on one of its byte pairs, the one made of
 * the least common bytes (so that plain text rarely hits an anchor); a bitmap of the anchor
 * pairs is the first test at each position, and only a hit compares the markers anchored
 * there. */
#include "base/markers.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct anchor {
    uint16_t pair; /* p[0] | p[1] << 8 at the anchor */
    uint8_t off;   /* where the anchor sits in the marker */
    uint16_t marker;
};

struct marker_set {
    size_t n, max_len;
    char **text;
    size_t *len;
    struct anchor *anchors; /* one per marker */
    uint8_t pairs[65536 / 8];
};

/* How common a byte is in program output (higher: more common); a rough order is enough. */
static int commonness(unsigned char c)
{
    if (c == ' ')
        return 10;
    if (strchr("etaoinsrhl", c) && c)
        return 8;
    if (c >= 'a' && c <= 'z')
        return 6;
    if (c >= '0' && c <= '9')
        return 5;
    if (c >= 'A' && c <= 'Z')
        return 3;
    if (strchr(".,:-_/=", c) && c)
        return 4;
    return 2;
}

struct marker_set *marker_set_new(const struct str_list *markers, char *err, size_t errlen)
{
    size_t n = markers ? markers->len : 0;
    if (n > MARKER_MAX_COUNT) {
        snprintf(err, errlen, "%zu refusal markers, at most %d", n, MARKER_MAX_COUNT);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(markers->items[i]);
        if (l < MARKER_MIN_LEN || l > MARKER_MAX_LEN || memchr(markers->items[i], '\n', l)) {
            snprintf(err, errlen,
                     "refusal marker '%.80s': must be %d to %d bytes without a newline",
                     markers->items[i], MARKER_MIN_LEN, MARKER_MAX_LEN);
            return NULL;
        }
    }
    struct marker_set *s = xcalloc(1, sizeof *s);
    s->n = n;
    s->text = xcalloc(n + 1, sizeof *s->text);
    s->len = xcalloc(n + 1, sizeof *s->len);
    s->anchors = xcalloc(n + 1, sizeof *s->anchors);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *m = (const unsigned char *)markers->items[i];
        s->text[i] = xstrdup(markers->items[i]);
        s->len[i] = strlen(markers->items[i]);
        if (s->len[i] > s->max_len)
            s->max_len = s->len[i];
        size_t best = 0;
        int best_score = 1000;
        for (size_t o = 0; o + 1 < s->len[i]; o++) {
            int score = commonness(m[o]) + commonness(m[o + 1]);
            if (score < best_score)
                best_score = score, best = o;
        }
        uint16_t pair = (uint16_t)(m[best] | m[best + 1] << 8);
        s->anchors[i] = (struct anchor){.pair = pair, .off = (uint8_t)best, .marker = (uint16_t)i};
        s->pairs[pair >> 3] |= (uint8_t)(1u << (pair & 7));
    }
    return s;
}

void marker_set_free(struct marker_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->text[i]);
    free(s->text);
    free(s->len);
    free(s->anchors);
    free(s);
}

size_t marker_set_max_len(const struct marker_set *s)
{
    return s->max_len;
}

/* The markers anchored on the pair at p[i]: the start of the last one found there, or -1. */
static ssize_t match_at(const struct marker_set *s, const char *p, size_t n, size_t i,
                        uint16_t pair)
{
    ssize_t last = -1;
    for (size_t k = 0; k < s->n; k++) {
        const struct anchor *a = &s->anchors[k];
        if (a->pair != pair || a->off > i)
            continue;
        size_t start = i - a->off, l = s->len[a->marker];
        if (start + l <= n && memcmp(p + start, s->text[a->marker], l) == 0 &&
            (ssize_t)start > last)
            last = (ssize_t)start;
    }
    return last;
}

ssize_t marker_last(const struct marker_set *s, const char *p, size_t n)
{
    ssize_t last = -1;
    const unsigned char *u = (const unsigned char *)p;
    if (s->n == 0)
        return -1;
    for (size_t i = 0; i + 1 < n; i++) {
        uint16_t pair = (uint16_t)(u[i] | u[i + 1] << 8);
        if (!(s->pairs[pair >> 3] & (1u << (pair & 7))))
            continue;
        ssize_t at = match_at(s, p, n, i, pair);
        if (at > last)
            last = at;
    }
    return last;
}
