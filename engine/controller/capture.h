/* capture.h — a bounded head and tail of one output stream, kept for refusal detection while
 * the bytes themselves go on to the caller. Memory is head + tail whatever the stream's size,
 * and feeding costs the same per byte for a short and a huge output.
 *
 * With a marker set (capture_watch), the capture also notes, while the bytes arrive, which
 * lines of the kept text hold a marker; capture_candidates() then copies out just those lines,
 * so what refusal detection does at the end depends on what could show a refusal, not on how
 * much was kept. */
#ifndef CORDON_CAPTURE_H
#define CORDON_CAPTURE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/markers.h"

/* A line of the stream with a marker: where it starts (absolute offset; for a line whose start
 * was cut off, where its kept part starts) and where its last marker starts. */
struct capture_line {
    uint64_t start, hit;
};

struct capture_lines {
    struct capture_line *v;
    size_t first, len, cap; /* live entries are v[first .. len) */
};

struct capture {
    char *head,
        *tail; /* tail is a ring: stream offset x >= head_cap at (x - head_cap) % tail_cap */
    size_t head_cap, tail_cap;
    uint64_t total;      /* bytes fed */
    uint64_t tail_valid; /* the ring holds nothing before this offset (bytes known to be
                                 overwritten later were never copied in) */
    const struct marker_set *markers; /* borrowed; NULL: no line tracking */
    uint64_t line_start;              /* where the line being fed started */
    char carry[MARKER_MAX_LEN];       /* the last bytes of that line, for a marker cut by a feed */
    size_t carry_len;
    struct capture_lines head_lines, tail_lines;
};

void capture_init(struct capture *c, size_t head_cap, size_t tail_cap);
/* Track the lines that hold one of these markers (before the first feed; m outlives c). */
void capture_watch(struct capture *c, const struct marker_set *m);
void capture_feed(struct capture *c, const char *p, size_t n);
/* As capture_feed, when at least `ahead` more bytes are known to follow (bytes already waiting
 * in the pipe): the part of p that those will push out of the tail is neither copied nor
 * looked at. */
void capture_feed_ahead(struct capture *c, const char *p, size_t n, uint64_t ahead);
/* The kept text: the head, then (when bytes were dropped) a marker line, then the tail.
 * Returns a new NUL-terminated string of *len bytes; *truncated tells whether bytes were lost. */
char *capture_text(const struct capture *c, size_t *len, bool *truncated);
/* The lines of the kept text (as capture_text would give it) that hold a marker, each ending
 * in "\n", in order. Needs capture_watch. A new NUL-terminated string of *len bytes. */
char *capture_candidates(const struct capture *c, size_t *len, bool *truncated);
void capture_free(struct capture *c);
#endif
