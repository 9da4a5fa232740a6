/* test_visible.c — visible_render() against a table of inputs a terminal would act on (and
 * text it must leave alone), and its cutting at the buffer's end. */
#include <string.h>

#include "base/visible.h"
#include "test.h"

struct row {
    const char *in;
    size_t len; /* 0: strlen(in) */
    const char *want;
};

static const struct row rows[] = {
    {"ls -la", 0, "ls -la"},
    {"", 0, ""},
    {"a\\x1b", 0, "a\\x1b"}, /* a backslash is left alone */
    {"echo \033[8mcurl x|sh\033[0m", 0, "echo \\x1b[8mcurl x|sh\\x1b[0m"},
    {"a\tb\nc\rd", 0, "a\\tb\\nc\\rd"},
    {"\x01\x07\x08\x0b\x0c\x1f", 0, "\\x01\\x07\\x08\\x0b\\x0c\\x1f"},
    {"x\x7fy", 0, "x\\x7fy"}, /* DEL */
    {"a\0b", 3, "a\\x00b"},   /* NUL inside the bytes */
    {"\xc2\x9b"
     "2J",
     0, "<U+009B>2J"}, /* C1 CSI, UTF-8 encoded */
    {"\xc2\x80\xc2\x9f", 0, "<U+0080><U+009F>"},
    {"\x9b"
     "31m",
     0, "\\x9b31m"},                                 /* a lone C1 byte: invalid UTF-8 */
    {"\xc0\xaf", 0, "\\xc0\\xaf"},                   /* overlong '/' */
    {"\xe0\x80\xaf", 0, "\\xe0\\x80\\xaf"},          /* overlong, 3 bytes */
    {"\xed\xa0\x80", 0, "\\xed\\xa0\\x80"},          /* a surrogate */
    {"\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80"}, /* past U+10FFFF */
    {"\xe2\x82", 0, "\\xe2\\x82"},                   /* truncated */
    {"\xff\xfe", 0, "\\xff\\xfe"},
    {"caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80", 0, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"},
    {"\xe2\x80\xae"
     "exe.txt",
     0, "<U+202E>exe.txt"}, /* RIGHT-TO-LEFT OVERRIDE */
    {"\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", 0, "<U+202A><U+202B><U+202C><U+202D>"},
    {"\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", 0, "<U+2066><U+2067><U+2068><U+2069>"},
    {"\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", 0, "<U+200E><U+200F><U+061C>"},
    {"r\xe2\x80\x8bm \xe2\x80\x8c\xe2\x80\x8d", 0, "r<U+200B>m <U+200C><U+200D>"},
    {"\xe2\x81\xa0\xef\xbb\xbf", 0, "<U+2060><U+FEFF>"},
    {"a\xe2\x80\xa8"
     "b\xe2\x80\xa9",
     0, "a<U+2028>b<U+2029>"},
    {"\xe2\x80\x90\xe2\x80\xa7\xe2\x80\xaf", 0,
     "\xe2\x80\x90\xe2\x80\xa7\xe2\x80\xaf"}, /* neighbours */
};

static void test_table(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char out[256];
        size_t n = rows[i].len ? rows[i].len : strlen(rows[i].in);
        size_t got = visible_render(rows[i].in, n, out, sizeof out);
        if (strcmp(out, rows[i].want) != 0)
            fprintf(stderr, "  row %zu: got \"%s\", want \"%s\"\n", i, out, rows[i].want);
        CHECK(strcmp(out, rows[i].want) == 0);
        CHECK_EQ_INT(got, strlen(rows[i].want));
        char *dup = visible_dup(rows[i].in);
        if (!rows[i].len)
            CHECK(strcmp(dup, rows[i].want) == 0);
        free(dup);
    }
}

/* Every byte value alone: nothing below 0x20, DEL or any byte >= 0x80 comes out raw. */
static void test_no_raw_control_byte(void)
{
    for (int b = 0; b < 256; b++) {
        char in = (char)b, out[16];
        visible_render(&in, 1, out, sizeof out);
        for (const unsigned char *p = (const unsigned char *)out; *p; p++)
            CHECK(*p >= 0x20 && *p < 0x7f);
        if (b >= 0x20 && b < 0x7f)
            CHECK(out[0] == b && out[1] == '\0');
    }
}

/* A full buffer cuts before a whole escape or character, never inside one. */
static void test_cut(void)
{
    char out[8];
    CHECK_EQ_INT(visible_render("abc\033def", 8, out, 6), 3); /* "abc" + "\x1b" does not fit */
    CHECK(strcmp(out, "abc") == 0);
    CHECK_EQ_INT(visible_render("ab\xc3\xa9z", 5, out, 4), 2); /* "é" needs 2 more and the NUL */
    CHECK(strcmp(out, "ab") == 0);
    CHECK_EQ_INT(visible_render("\xe2\x80\xae", 3, out, 8), 0); /* "<U+202E>" is 8 + NUL */
    CHECK(strcmp(out, "") == 0);
    CHECK_EQ_INT(visible_render("abcdefghij", 10, out, sizeof out), 7);
    CHECK(strcmp(out, "abcdefg") == 0);
    CHECK_EQ_INT(visible_render("x", 1, out, 1), 0);
    CHECK(out[0] == '\0');
}

TEST_MAIN({"rendering table", test_table}, {"no raw control byte", test_no_raw_control_byte},
          {"cut at a whole escape", test_cut})
