/* test_capture.c — the bounded head and tail of an output stream. */
#include <stdlib.h>
#include <string.h>

#include "controller/capture.h"
#include "base/markers.h"
#include "test.h"
#include "base/util.h"

static void test_short_output_is_kept_whole(void)
{
    struct capture c;
    capture_init(&c, 16, 16);
    capture_feed(&c, "hello ", 6);
    capture_feed(&c, "world", 5);
    size_t len;
    bool truncated;
    char *t = capture_text(&c, &len, &truncated);
    CHECK(!truncated);
    CHECK_EQ_INT(len, 11);
    CHECK(strcmp(t, "hello world") == 0);
    free(t);
    capture_free(&c);
}

static void test_long_output_keeps_head_and_tail(void)
{
    struct capture c;
    capture_init(&c, 4, 6);
    const char *text = "HEADxxxxxxxxxxxxxxxxxxxxxxxxxxxxTAILxx";
    /* fed in uneven pieces, including one larger than the tail */
    size_t n = strlen(text), pieces[] = {3, 1, 20, 2, 7, 5};
    size_t off = 0;
    for (size_t i = 0; off < n && i < sizeof pieces / sizeof pieces[0]; i++) {
        size_t k = pieces[i] < n - off ? pieces[i] : n - off;
        capture_feed(&c, text + off, k);
        off += k;
    }
    if (off < n)
        capture_feed(&c, text + off, n - off);
    size_t len;
    bool truncated;
    char *t = capture_text(&c, &len, &truncated);
    CHECK(truncated);
    CHECK(strncmp(t, "HEAD", 4) == 0);
    CHECK_STR_CONTAINS(t, "bytes not kept");
    CHECK(strcmp(t + len - 6, "TAILxx") == 0);
    free(t);
    capture_free(&c);
}

static void test_memory_is_bounded(void)
{
    struct capture c;
    capture_init(&c, 1024, 1024);
    char block[4096];
    memset(block, 'a', sizeof block);
    for (int i = 0; i < 10000; i++) /* 40 MB through 2 KiB */
        capture_feed(&c, block, sizeof block);
    block[0] = 'Z';
    capture_feed(&c, block, 1);
    size_t len;
    bool truncated;
    char *t = capture_text(&c, &len, &truncated);
    CHECK(truncated);
    CHECK(len < 2048 + 96);
    CHECK_EQ_INT(t[len - 1], 'Z');
    free(t);
    capture_free(&c);
}

/* ---- lines with a marker ---------------------------------------------------------------- */

static const char *const test_markers[] = {"ead-only", "sudo", "bus", "o such file", "rror 2)"};

static struct marker_set *test_set(void)
{
    struct str_list l = {0};
    for (size_t i = 0; i < ARRAY_LEN(test_markers); i++)
        str_list_push(&l, test_markers[i]);
    char err[256];
    struct marker_set *m = marker_set_new(&l, err, sizeof err);
    str_list_free(&l);
    CHECK(m != NULL);
    return m;
}

/* What the detector would keep of text: its lines (as the Lua side splits them) that hold a
 * marker, each with "\n". The plain way, to compare the capture's bookkeeping with. */
static char *reference_candidates(const char *text, size_t len)
{
    char *out = xmalloc(len + 2), *o = out;
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len;
        char *line = xmalloc(end - start + 1);
        memcpy(line, text + start, end - start);
        line[end - start] = '\0';
        bool hit = false;
        for (size_t i = 0; i < ARRAY_LEN(test_markers); i++)
            hit = hit || strstr(line, test_markers[i]);
        if (hit) {
            memcpy(o, line, end - start);
            o += end - start;
            *o++ = '\n';
        }
        free(line);
        start = end + 1;
    }
    *o = '\0';
    return out;
}

static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static void test_candidates_match_the_kept_lines(void)
{
    struct marker_set *m = test_set();
    static const char *const words[] = {"sudo", "bus", "ead-only", "o such file", "rror 2)", "su",
                                        "do",   "b",   "us",       "\n",          "\n",      "x",
                                        "yy ",  "zzz", "ead-",     "only"};
    for (int round = 0; round < 3000; round++) {
        /* a random text of words, markers and pieces of markers */
        char text[4096];
        size_t len = 0, want = rng() % 3000;
        while (len < want) {
            const char *w = words[rng() % ARRAY_LEN(words)];
            size_t wl = strlen(w);
            if (len + wl >= sizeof text)
                break;
            memcpy(text + len, w, wl);
            len += wl;
        }
        struct capture c;
        capture_init(&c, rng() % 200, rng() % 400);
        capture_watch(&c, m);
        size_t off = 0;
        while (off < len) { /* uneven pieces; sometimes told (truthfully) that more is coming */
            size_t k = 1 + rng() % 97;
            if (k > len - off)
                k = len - off;
            size_t rest = len - off - k;
            capture_feed_ahead(&c, text + off, k, rng() % 3 == 0 && rest ? rng() % (rest + 1) : 0);
            off += k;
        }
        size_t tlen, clen;
        bool t_cut, c_cut;
        char *kept = capture_text(&c, &tlen, &t_cut);
        char *want_text = reference_candidates(kept, tlen);
        char *got = capture_candidates(&c, &clen, &c_cut);
        if (strcmp(got, want_text) != 0)
            fprintf(stderr, "  round %d: kept \"%s\"\n  want \"%s\"\n  got  \"%s\"\n", round, kept,
                    want_text, got);
        CHECK(strcmp(got, want_text) == 0);
        CHECK_EQ_INT(clen, strlen(want_text));
        CHECK_EQ_INT(c_cut, t_cut);
        free(kept);
        free(want_text);
        free(got);
        capture_free(&c);
    }
    marker_set_free(m);
}

static void test_bytes_known_to_be_pushed_out_are_skipped(void)
{
    struct capture c;
    capture_init(&c, 4, 8);
    capture_feed_ahead(&c, "HEADaaaaaaaaaaaa", 16, 8); /* 8 more bytes are on their way */
    capture_feed(&c, "TAIL1234", 8);
    size_t len;
    bool truncated;
    char *t = capture_text(&c, &len, &truncated);
    CHECK(truncated);
    CHECK(strcmp(t, "HEAD\n[cordon: 12 bytes not kept]\nTAIL1234") == 0);
    free(t);
    capture_free(&c);
    /* a feeder that said more was coming and then stopped: the tail holds only what came */
    capture_init(&c, 4, 8);
    capture_feed_ahead(&c, "HEADaaaaaaaa", 12, 100);
    capture_feed(&c, "xy", 2);
    t = capture_text(&c, &len, &truncated);
    CHECK(strcmp(t, "HEAD\n[cordon: 8 bytes not kept]\nxy") == 0);
    free(t);
    capture_free(&c);
}

static void test_markers_are_checked(void)
{
    char err[256];
    struct str_list l = {0};
    str_list_push(&l, "x");
    CHECK(marker_set_new(&l, err, sizeof err) == NULL);
    CHECK_STR_CONTAINS(err, "must be 2 to 64 bytes");
    str_list_free(&l);
    str_list_push(&l, "a\nb");
    CHECK(marker_set_new(&l, err, sizeof err) == NULL);
    str_list_free(&l);
    struct marker_set *none = marker_set_new(&l, err, sizeof err);
    CHECK(none != NULL);
    CHECK_EQ_INT(marker_last(none, "sudo", 4), -1);
    marker_set_free(none);
    struct marker_set *m = test_set();
    CHECK_EQ_INT(marker_last(m, "a bus and sudo x", 16), 10);
    CHECK_EQ_INT(marker_last(m, "Read-only", 9), 1);
    CHECK_EQ_INT(marker_last(m, "ead-onl", 7), -1);
    marker_set_free(m);
}

TEST_MAIN({"short output is kept whole", test_short_output_is_kept_whole},
          {"long output keeps head and tail", test_long_output_keeps_head_and_tail},
          {"memory is bounded", test_memory_is_bounded},
          {"candidates match the kept lines", test_candidates_match_the_kept_lines},
          {"bytes known to be pushed out are skipped",
           test_bytes_known_to_be_pushed_out_are_skipped},
          {"markers are checked", test_markers_are_checked})
