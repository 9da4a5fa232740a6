/* mcp_bound.c — see mcp_bound.h. */
#include "mcp/mcp_bound.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void mcp_bound_init(struct mcp_bound *b, size_t head_cap, size_t tail_cap)
{
    memset(b, 0, sizeof *b);
    b->head_cap = head_cap;
    b->tail_cap = tail_cap;
    b->head = xmalloc(head_cap + 1);
    b->tail = xmalloc(tail_cap + 1);
}

void mcp_bound_add(struct mcp_bound *b, const char *data, size_t len)
{
    b->total += len;
    size_t h = b->head_cap - b->head_len;
    if (h > len)
        h = len;
    memcpy(b->head + b->head_len, data, h);
    b->head_len += h;
    data += h;
    len -= h;
    if (len == 0 || b->tail_cap == 0)
        return;
    /* only the last tail_cap bytes of this piece can survive in the ring */
    if (len > b->tail_cap) {
        data += len - b->tail_cap;
        len = b->tail_cap;
    }
    while (len > 0) {
        size_t room = b->tail_cap - b->tail_pos;
        size_t n = len < room ? len : room;
        memcpy(b->tail + b->tail_pos, data, n);
        b->tail_pos = (b->tail_pos + n) % b->tail_cap;
        b->tail_len = b->tail_len + n > b->tail_cap ? b->tail_cap : b->tail_len + n;
        data += n;
        len -= n;
    }
}

unsigned long long mcp_bound_dropped(const struct mcp_bound *b)
{
    return b->total - b->head_len - b->tail_len;
}

char *mcp_bound_text(const struct mcp_bound *b, const char *what, size_t *len)
{
    char marker[128] = "";
    unsigned long long dropped = mcp_bound_dropped(b);
    if (dropped)
        snprintf(marker, sizeof marker, "\n[cordon: %llu bytes of %s omitted here]\n", dropped,
                 what);
    size_t m = strlen(marker);
    char *out = xmalloc(b->head_len + m + b->tail_len + 1), *o = out;
    memcpy(o, b->head, b->head_len);
    o += b->head_len;
    memcpy(o, marker, m);
    o += m;
    /* the ring's oldest byte is at tail_pos once it is full, at 0 before */
    size_t start = b->tail_len == b->tail_cap ? b->tail_pos : 0;
    size_t first = b->tail_len < b->tail_cap - start ? b->tail_len : b->tail_cap - start;
    memcpy(o, b->tail + start, first);
    o += first;
    memcpy(o, b->tail, b->tail_len - first);
    o += b->tail_len - first;
    *o = '\0';
    *len = (size_t)(o - out);
    return out;
}

void mcp_bound_free(struct mcp_bound *b)
{
    free(b->head);
    free(b->tail);
    b->head = b->tail = NULL;
}
