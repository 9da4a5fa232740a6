/* capture.h — a bounded head and tail of one output stream, kept for refusal detection while
 * the bytes themselves go on to the caller. Memory is head + tail whatever the stream's size,
 * and feeding costs the same per byte for a short and a huge output. */
#ifndef CORDON_CAPTURE_H
#define CORDON_CAPTURE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct capture {
    char *head, *tail;        /* tail is a ring of tail_cap bytes */
    size_t head_cap, tail_cap;
    size_t head_len;
    size_t tail_pos, tail_len;
    uint64_t total;
};

void capture_init(struct capture *c, size_t head_cap, size_t tail_cap);
void capture_feed(struct capture *c, const char *p, size_t n);
/* The kept text: the head, then (when bytes were dropped) a marker line, then the tail.
 * Returns a new NUL-terminated string of *len bytes; *truncated tells whether bytes were lost. */
char *capture_text(const struct capture *c, size_t *len, bool *truncated);
void capture_free(struct capture *c);
#endif
