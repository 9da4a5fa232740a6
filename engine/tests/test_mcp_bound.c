/* test_mcp_bound.c — the head-and-tail bound on what one MCP result carries of a stream:
 * a stream that fits comes back whole; a longer one, fed in pieces of every size, comes back
 * as its first and last bytes with one line saying how many were left out between them. */
#include "test.h"

#include "mcp/mcp_bound.h"

/* The reference: the head, the marker, the tail of data[0..n). */
static char *expected(const char *data, size_t n, size_t head, size_t tail, size_t *len)
{
    char *out = malloc(n + 128), *o = out;
    if (n <= head + tail) {
        memcpy(o, data, n);
        *len = n;
        return out;
    }
    memcpy(o, data, head);
    o += head;
    o += sprintf(o, "\n[cordon: %zu bytes of out omitted here]\n", n - head - tail);
    memcpy(o, data + n - tail, tail);
    o += tail;
    *len = (size_t)(o - out);
    return out;
}

static void check(size_t n, size_t head, size_t tail, size_t piece)
{
    char *data = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)('a' + (i * 7 + i / 26) % 26);
    struct mcp_bound b;
    mcp_bound_init(&b, head, tail);
    for (size_t i = 0; i < n; i += piece)
        mcp_bound_add(&b, data + i, n - i < piece ? n - i : piece);
    size_t got_len, want_len;
    char *got = mcp_bound_text(&b, "out", &got_len);
    char *want = expected(data, n, head, tail, &want_len);
    if (got_len != want_len || memcmp(got, want, got_len) != 0) {
        fprintf(stderr, "  n=%zu head=%zu tail=%zu piece=%zu: got %zu bytes, want %zu\n", n, head,
                tail, piece, got_len, want_len);
        _exit(1);
    }
    CHECK_EQ_INT(b.total, n);
    CHECK_EQ_INT(mcp_bound_dropped(&b), n > head + tail ? n - head - tail : 0);
    CHECK_EQ_INT(got[got_len], '\0');
    free(got);
    free(want);
    free(data);
    mcp_bound_free(&b);
}

static void test_fits(void)
{
    check(0, 8, 8, 1);
    check(5, 8, 8, 1);
    check(16, 8, 8, 3);
    check(16, 8, 8, 16);
}

static void test_cut_in_pieces(void)
{
    static const size_t pieces[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 4096};
    for (size_t p = 0; p < sizeof pieces / sizeof *pieces; p++) {
        check(17, 8, 8, pieces[p]);
        check(100, 8, 8, pieces[p]);
        check(5000, 32, 64, pieces[p]);
        check(70000, 32768, 32768, pieces[p]);
    }
}

static void test_tail_only_and_head_only(void)
{
    check(100, 0, 10, 3); /* read_log's tail_lines: the last bytes only */
    check(100, 0, 10, 100);
    check(100, 10, 0, 7);
    check(10, 0, 10, 1);
}

TEST_MAIN({"fits", test_fits}, {"cut_in_pieces", test_cut_in_pieces},
          {"tail_only_and_head_only", test_tail_only_and_head_only})
