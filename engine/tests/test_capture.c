/* test_capture.c — the bounded head and tail of an output stream. */
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "test.h"

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

TEST_MAIN({"short output is kept whole", test_short_output_is_kept_whole},
          {"long output keeps head and tail", test_long_output_keeps_head_and_tail},
          {"memory is bounded", test_memory_is_bounded})
