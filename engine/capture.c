/* capture.c — see capture.h. Bytes first fill the head; after that every byte goes through the
 * tail ring, so the tail always holds the last tail_cap bytes after the head. */
#include "capture.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void capture_init(struct capture *c, size_t head_cap, size_t tail_cap)
{
    memset(c, 0, sizeof *c);
    c->head_cap = head_cap;
    c->tail_cap = tail_cap;
}

void capture_feed(struct capture *c, const char *p, size_t n)
{
    c->total += n;
    if (c->head_len < c->head_cap) {
        size_t take = c->head_cap - c->head_len < n ? c->head_cap - c->head_len : n;
        if (!c->head)
            c->head = xmalloc(c->head_cap);
        memcpy(c->head + c->head_len, p, take);
        c->head_len += take;
        p += take;
        n -= take;
    }
    if (n == 0 || c->tail_cap == 0)
        return;
    if (!c->tail)
        c->tail = xmalloc(c->tail_cap);
    if (n >= c->tail_cap) { /* only the last tail_cap bytes of this piece can survive */
        p += n - c->tail_cap;
        n = c->tail_cap;
    }
    size_t first = c->tail_cap - c->tail_pos < n ? c->tail_cap - c->tail_pos : n;
    memcpy(c->tail + c->tail_pos, p, first);
    memcpy(c->tail, p + first, n - first);
    c->tail_pos = (c->tail_pos + n) % c->tail_cap;
    c->tail_len = c->tail_len + n > c->tail_cap ? c->tail_cap : c->tail_len + n;
}

char *capture_text(const struct capture *c, size_t *len, bool *truncated)
{
    uint64_t dropped = c->total - c->head_len - c->tail_len;
    char marker[96] = "";
    if (dropped)
        snprintf(marker, sizeof marker, "\n[cordon: %" PRIu64 " bytes not kept]\n", dropped);
    size_t mlen = strlen(marker);
    char *out = xmalloc(c->head_len + mlen + c->tail_len + 1);
    if (c->head_len)
        memcpy(out, c->head, c->head_len);
    memcpy(out + c->head_len, marker, mlen);
    size_t o = c->head_len + mlen;
    if (c->tail_len) { /* the ring's oldest byte is tail_len before tail_pos: two runs */
        size_t start = (c->tail_pos + c->tail_cap - c->tail_len) % c->tail_cap;
        size_t first = c->tail_cap - start < c->tail_len ? c->tail_cap - start : c->tail_len;
        memcpy(out + o, c->tail + start, first);
        memcpy(out + o + first, c->tail, c->tail_len - first);
        o += c->tail_len;
    }
    out[o] = '\0';
    *len = o;
    *truncated = dropped > 0;
    return out;
}

void capture_free(struct capture *c)
{
    free(c->head);
    free(c->tail);
    memset(c, 0, sizeof *c);
}
