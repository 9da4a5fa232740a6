/* mcp_bound.h — what one tool result carries of a stream that may be of any size: the first
 * and the last bytes of it (a head and a tail ring of fixed sizes) and how many bytes between
 * them were dropped. Owns that buffer and its rendering as text with the cut said in a line.
 * Uses util (allocation), json_buf. Must never: hold more than its two fixed buffers, whatever
 * the stream's size, or do I/O. */
#ifndef CORDON_MCP_BOUND_H
#define CORDON_MCP_BOUND_H
#include <stdbool.h>
#include <stddef.h>

#include "base/json_write.h"

struct mcp_bound {
    size_t head_cap, tail_cap;
    char *head; /* the first head_cap bytes */
    size_t head_len;
    char *tail;                /* a ring of the last tail_cap bytes after the head */
    size_t tail_len, tail_pos; /* bytes in the ring; where the next byte goes */
    unsigned long long total;  /* every byte fed */
};

void mcp_bound_init(struct mcp_bound *b, size_t head_cap, size_t tail_cap);
void mcp_bound_add(struct mcp_bound *b, const char *data, size_t len);
/* Bytes dropped between the head and the tail (0 when the stream fit). */
unsigned long long mcp_bound_dropped(const struct mcp_bound *b);
/* The kept bytes in order, as plain bytes (NUL-terminated; free it): the head, then, when some
 * were dropped, the line "\n[cordon: N bytes of WHAT omitted here]\n", then the tail. */
char *mcp_bound_text(const struct mcp_bound *b, const char *what, size_t *len);
void mcp_bound_free(struct mcp_bound *b);
#endif
