/* capture.c — see capture.h. Bytes first fill the head; after that they go through the tail
 * ring, so the tail holds the last tail_cap bytes after the head (fewer when the feeder said
 * that more bytes were on their way: those would push the skipped ones out anyway).
 *
 * Line tracking: each piece is cut at newlines; a line that holds a marker gets one entry
 * (head lines: the first marker is enough, the head is kept whole; tail lines: the last one,
 * since the start of the oldest line in the ring may be cut off, and only a marker past the cut
 * is still in the kept text). A marker cut in two by a feed is found through `carry`, the last
 * bytes of the line fed so far. Entries whose line has left the ring are dropped as the ring
 * turns, so their number is bounded by the kept lines. */
#include "controller/capture.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void capture_init(struct capture *c, size_t head_cap, size_t tail_cap)
{
    memset(c, 0, sizeof *c);
    c->head_cap = head_cap;
    c->tail_cap = tail_cap;
}

void capture_watch(struct capture *c, const struct marker_set *m)
{
    c->markers = m;
}

static uint64_t head_len(const struct capture *c)
{
    return c->total < c->head_cap ? c->total : c->head_cap;
}

/* Where the kept tail starts (== total: no tail). */
static uint64_t tail_start(const struct capture *c)
{
    if (c->total <= c->head_cap)
        return c->total;
    uint64_t s = c->head_cap;
    if (c->total - s > c->tail_cap)
        s = c->total - c->tail_cap;
    return c->tail_valid > s ? c->tail_valid : s;
}

/* Were bytes between the head and the tail lost? */
static bool dropped(const struct capture *c)
{
    return tail_start(c) > head_len(c);
}

/* ---- line tracking ------------------------------------------------------------------------ */

static void lines_push(struct capture_lines *l, uint64_t start, uint64_t hit)
{
    if (l->len == l->cap && l->first > 0) { /* reuse the room of dropped entries */
        memmove(l->v, l->v + l->first, (l->len - l->first) * sizeof *l->v);
        l->len -= l->first;
        l->first = 0;
    }
    if (l->len == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->len++] = (struct capture_line){.start = start, .hit = hit};
}

static void note_hit(struct capture *c, bool in_head, uint64_t hit)
{
    struct capture_lines *l = in_head ? &c->head_lines : &c->tail_lines;
    struct capture_line *last = l->len > l->first ? &l->v[l->len - 1] : NULL;
    if (last && last->start == c->line_start) {
        if (!in_head && hit > last->hit)
            last->hit = hit;
        return;
    }
    lines_push(l, c->line_start, hit);
}

/* The last `keep` bytes of the current line: the old carry followed by seg. */
static void update_carry(struct capture *c, const char *seg, size_t len, size_t keep)
{
    if (len >= keep) {
        memcpy(c->carry, seg + len - keep, keep);
        c->carry_len = keep;
        return;
    }
    size_t old = c->carry_len + len > keep ? keep - len : c->carry_len;
    memmove(c->carry, c->carry + c->carry_len - old, old);
    memcpy(c->carry + old, seg, len);
    c->carry_len = old + len;
}

/* Note the lines of p[0, n) (stream offset at) that hold a marker. */
static void scan_lines(struct capture *c, bool in_head, const char *p, size_t n, uint64_t at)
{
    size_t keep = marker_set_max_len(c->markers);
    if (keep < MARKER_MIN_LEN)
        return; /* no markers: no line can be a candidate */
    keep--;     /* a marker cut by a feed has at most max_len - 1 bytes before the cut */
    size_t pos = 0;
    while (pos < n) {
        const char *nl = memchr(p + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - p) : n, len = end - pos;
        const char *seg = p + pos;
        bool hit = false;
        uint64_t hit_at = 0;
        if (c->carry_len) { /* only before the piece's first newline: pos == 0 */
            char tmp[2 * MARKER_MAX_LEN];
            size_t more = len < keep ? len : keep;
            memcpy(tmp, c->carry, c->carry_len);
            memcpy(tmp + c->carry_len, seg, more);
            ssize_t s = marker_last(c->markers, tmp, c->carry_len + more);
            if (s >= 0)
                hit = true, hit_at = at + pos - c->carry_len + (uint64_t)s;
        }
        ssize_t s = marker_last(c->markers, seg, len);
        if (s >= 0)
            hit = true, hit_at = at + pos + (uint64_t)s; /* at or after any found above */
        if (hit)
            note_hit(c, in_head, hit_at);
        if (nl) {
            c->line_start = at + end + 1;
            c->carry_len = 0;
            pos = end + 1;
        } else {
            update_carry(c, seg, len, keep);
            pos = n;
        }
    }
}

/* Forget tail lines whose last marker has left the kept tail. */
static void prune_tail_lines(struct capture *c)
{
    if (!dropped(c))
        return; /* everything fed is kept */
    uint64_t ts = tail_start(c);
    struct capture_lines *l = &c->tail_lines;
    while (l->first < l->len && l->v[l->first].hit < ts)
        l->first++;
}

/* ---- feeding ------------------------------------------------------------------------------ */

void capture_feed_ahead(struct capture *c, const char *p, size_t n, uint64_t ahead)
{
    if (c->total < c->head_cap) {
        size_t take = c->head_cap - c->total < n ? (size_t)(c->head_cap - c->total) : n;
        if (!c->head)
            c->head = xmalloc(c->head_cap);
        memcpy(c->head + c->total, p, take);
        if (c->markers)
            scan_lines(c, true, p, take, c->total);
        c->total += take;
        p += take;
        n -= take;
    }
    if (n == 0)
        return;
    /* Only the last tail_cap - ahead bytes of this piece can still be in the tail at the end. */
    uint64_t room = c->tail_cap > ahead ? c->tail_cap - ahead : 0;
    size_t keep = room < n ? (size_t)room : n;
    if (keep < n) {
        c->total += n - keep;
        p += n - keep;
        n = keep;
        c->tail_valid = c->total;
        c->line_start = c->total; /* the kept part of that line starts here */
        c->carry_len = 0;
    }
    if (n > 0) {
        if (!c->tail)
            c->tail = xmalloc(c->tail_cap);
        size_t pos = (size_t)((c->total - c->head_cap) % c->tail_cap);
        size_t first = c->tail_cap - pos < n ? c->tail_cap - pos : n;
        memcpy(c->tail + pos, p, first);
        memcpy(c->tail, p + first, n - first);
        if (c->markers)
            scan_lines(c, false, p, n, c->total);
        c->total += n;
    }
    if (c->markers)
        prune_tail_lines(c);
}

void capture_feed(struct capture *c, const char *p, size_t n)
{
    capture_feed_ahead(c, p, n, 0);
}

/* ---- reading the kept text ---------------------------------------------------------------- */

/* The kept bytes from stream offset x on that lie next to each other in memory (at most
 * up_to - x). x must be kept. */
static const char *span_at(const struct capture *c, uint64_t x, uint64_t up_to, size_t *avail)
{
    uint64_t n;
    const char *p;
    if (x < c->head_cap) {
        p = c->head + x;
        n = c->head_cap - x;
    } else {
        size_t pos = (size_t)((x - c->head_cap) % c->tail_cap);
        p = c->tail + pos;
        n = c->tail_cap - pos;
    }
    *avail = (size_t)(n < up_to - x ? n : up_to - x);
    return p;
}

/* Append stream bytes [from, to) (all kept, one region) to out at o. */
static size_t copy_out(const struct capture *c, uint64_t from, uint64_t to, char *out, size_t o)
{
    while (from < to) {
        size_t avail;
        const char *p = span_at(c, from, to, &avail);
        memcpy(out + o, p, avail);
        o += avail;
        from += avail;
    }
    return o;
}

/* The first newline at or after x before hi, or hi. */
static uint64_t next_newline(const struct capture *c, uint64_t x, uint64_t hi)
{
    while (x < hi) {
        size_t avail;
        const char *p = span_at(c, x, hi, &avail);
        const char *nl = memchr(p, '\n', avail);
        if (nl)
            return x + (uint64_t)(nl - p);
        x += avail;
    }
    return hi;
}

/* "\n[cordon: N bytes not kept]\n" when bytes were dropped, else "". */
static size_t gap_marker(const struct capture *c, char *buf, size_t size)
{
    buf[0] = '\0';
    if (dropped(c))
        snprintf(buf, size, "\n[cordon: %" PRIu64 " bytes not kept]\n",
                 tail_start(c) - head_len(c));
    return strlen(buf);
}

char *capture_text(const struct capture *c, size_t *len, bool *truncated)
{
    char marker[96];
    size_t mlen = gap_marker(c, marker, sizeof marker);
    uint64_t hl = head_len(c), ts = tail_start(c);
    char *out = xmalloc((size_t)(hl + mlen + (c->total - ts)) + 1);
    size_t o = copy_out(c, 0, hl, out, 0);
    memcpy(out + o, marker, mlen);
    o = copy_out(c, ts, c->total, out, o + mlen);
    out[o] = '\0';
    *len = o;
    *truncated = mlen > 0;
    return out;
}

struct text_buf {
    char *p;
    size_t len, cap;
};

static void buf_room(struct text_buf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    while (b->len + more + 1 > b->cap)
        b->cap = b->cap ? 2 * b->cap : 256;
    b->p = xrealloc(b->p, b->cap);
}

/* Append the kept line around hit (starting at start, ending before the next newline or hi)
 * unless it is the line appended last. */
static void add_line(const struct capture *c, struct text_buf *b, uint64_t *last, uint64_t start,
                     uint64_t hit, uint64_t hi)
{
    if (*last != UINT64_MAX && start <= *last)
        return;
    *last = start;
    uint64_t end = next_newline(c, hit, hi);
    buf_room(b, (size_t)(end - start) + 1);
    b->len = copy_out(c, start, end, b->p, b->len);
    b->p[b->len++] = '\n';
}

char *capture_candidates(const struct capture *c, size_t *len, bool *truncated)
{
    struct text_buf b = {0};
    buf_room(&b, 0);
    char marker[96];
    size_t mlen = gap_marker(c, marker, sizeof marker);
    bool cut = mlen > 0;
    uint64_t hl = head_len(c), ts = tail_start(c), last = UINT64_MAX;
    const struct capture_lines *h = &c->head_lines, *t = &c->tail_lines;
    for (size_t i = h->first; i < h->len; i++)
        add_line(c, &b, &last, h->v[i].start, h->v[i].hit, cut ? hl : c->total);
    if (cut && c->markers && marker_last(c->markers, marker + 1, mlen - 2) >= 0) {
        buf_room(&b, mlen - 1);
        memcpy(b.p + b.len, marker + 1, mlen - 1); /* the line and its newline */
        b.len += mlen - 1;
    }
    for (size_t i = t->first; i < t->len; i++) {
        const struct capture_line *e = &t->v[i];
        if (cut && e->hit < ts)
            continue; /* its markers are all in the part that was not kept */
        add_line(c, &b, &last, cut && e->start < ts ? ts : e->start, e->hit, c->total);
    }
    b.p[b.len] = '\0';
    *len = b.len;
    *truncated = cut;
    return b.p;
}

void capture_free(struct capture *c)
{
    free(c->head);
    free(c->tail);
    free(c->head_lines.v);
    free(c->tail_lines.v);
    memset(c, 0, sizeof *c);
}
