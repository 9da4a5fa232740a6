/* test_json_write.c — the one JSON string writer: a table of inputs (bytes and length) and the
 * exact JSON text each must become, checked through both front-ends (the growable buffer and
 * the FILE* writer), and every output checked to be valid UTF-8 that json_read reads back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_read.h"
#include "base/json_write.h"
#include "test.h"

#define FFFD "\xEF\xBF\xBD"

struct json_case {
    const char *name;
    const char *in;
    size_t len; /* the bytes of in, a NUL among them included */
    const char *want;
};

#define CASE(name, in, want)           \
    {                                  \
        name, in, sizeof(in) - 1, want \
    }

static const struct json_case json_cases[] = {
    CASE("empty", "", "\"\""),
    CASE("plain", "git status --short", "\"git status --short\""),
    CASE("quote and backslash", "say \"hi\" \\ bye", "\"say \\\"hi\\\" \\\\ bye\""),
    CASE("short forms", "a\nb\rc\td", "\"a\\nb\\rc\\td\""),
    CASE("other controls", "\x01\x08\x0b\x0c\x1b\x1f",
         "\"\\u0001\\u0008\\u000b\\u000c\\u001b\\u001f\""),
    CASE("DEL",
         "a\x7f"
         "b",
         "\"a\\u007fb\""),
    CASE("embedded NUL, length form", "a\0b", "\"a\\u0000b\""),
    CASE("slash stays", "/usr/bin", "\"/usr/bin\""),
    CASE("valid 2-byte", "caf\xC3\xA9", "\"caf\xC3\xA9\""),
    CASE("valid 3-byte", "\xE2\x82\xAC 5", "\"\xE2\x82\xAC 5\""),
    CASE("valid 4-byte", "\xF0\x9F\x98\x80", "\"\xF0\x9F\x98\x80\""),
    CASE("U+FFFD itself stays", FFFD, "\"" FFFD "\""),
    CASE("highest code point", "\xF4\x8F\xBF\xBF", "\"\xF4\x8F\xBF\xBF\""),
    CASE("lone 0xff",
         "a\xff"
         "b",
         "\"a" FFFD "b\""),
    CASE("lone continuation byte", "\x80", "\"" FFFD "\""),
    CASE("overlong '/' (2 bytes)", "\xC0\xAF", "\"" FFFD FFFD "\""),
    CASE("overlong NUL (2 bytes)", "\xC1\x80", "\"" FFFD FFFD "\""),
    CASE("overlong 3-byte", "\xE0\x80\xAF", "\"" FFFD FFFD FFFD "\""),
    CASE("overlong 4-byte", "\xF0\x80\x80\xAF", "\"" FFFD FFFD FFFD FFFD "\""),
    CASE("surrogate D800", "\xED\xA0\x80", "\"" FFFD FFFD FFFD "\""),
    CASE("surrogate DFFF", "\xED\xBF\xBF", "\"" FFFD FFFD FFFD "\""),
    CASE("past U+10FFFF", "\xF4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""),
    CASE("0xF5 lead", "\xF5\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""),
    CASE("truncated 2-byte at the end", "ab\xC3", "\"ab" FFFD "\""),
    CASE("truncated 3-byte at the end", "\xE2\x82", "\"" FFFD FFFD "\""),
    CASE("truncated 4-byte, then ASCII", "\xF0\x9F\x98z", "\"" FFFD FFFD FFFD "z\""),
    CASE("lead then a quote", "\xC3\"", "\"" FFFD "\\\"\""),
    CASE("bad byte between valid ones", "\xC3\xA9\xff\xC3\xA9", "\"\xC3\xA9" FFFD "\xC3\xA9\""),
};

static char *via_buf(const struct json_case *c)
{
    struct json_buf b = {0};
    json_buf_string(&b, c->in, c->len);
    return b.data;
}

static char *via_file(const struct json_case *c)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    CHECK(f);
    json_write_stringn(f, c->in, c->len);
    CHECK(fclose(f) == 0);
    return s;
}

static void check_case(const struct json_case *c, const char *got)
{
    if (!got || strcmp(got, c->want) != 0) {
        fprintf(stderr, "  case \"%s\": got [%s], expected [%s]\n", c->name, got ? got : "(null)",
                c->want);
        _exit(1);
    }
    CHECK(json_utf8_valid((const unsigned char *)got, strlen(got)));
    char err[128];
    struct json_value *v = json_parse(got, strlen(got), err, sizeof err);
    if (!v || v->type != JSON_STRING) {
        fprintf(stderr, "  case \"%s\": json_read rejects [%s]: %s\n", c->name, got, v ? "" : err);
        _exit(1);
    }
    json_free(v);
}

static void test_buffer_front_end(void)
{
    for (size_t i = 0; i < sizeof json_cases / sizeof json_cases[0]; i++) {
        char *got = via_buf(&json_cases[i]);
        check_case(&json_cases[i], got);
        free(got);
    }
}

static void test_file_front_end(void)
{
    for (size_t i = 0; i < sizeof json_cases / sizeof json_cases[0]; i++) {
        char *got = via_file(&json_cases[i]);
        check_case(&json_cases[i], got);
        free(got);
    }
}

static void test_string_round_trips_when_valid(void)
{
    /* What json_read gives back for a valid input is the input itself, NULs included. */
    static const char in[] = "a\"\\\n\x01\x7f\0\xC3\xA9\xF0\x9F\x98\x80z";
    struct json_buf b = {0};
    json_buf_string(&b, in, sizeof in - 1);
    char err[128];
    struct json_value *v = json_parse(b.data, b.len, err, sizeof err);
    CHECK(v && v->type == JSON_STRING);
    CHECK_EQ_INT(v->len, sizeof in - 1);
    CHECK(memcmp(v->str, in, sizeof in - 1) == 0);
    json_free(v);
    json_buf_free(&b);
}

static void test_nul_terminated_forms(void)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    CHECK(f);
    json_write_string(f, "x\xff");
    CHECK(fclose(f) == 0);
    CHECK(strcmp(s, "\"x" FFFD "\"") == 0);
    free(s);
    struct json_buf b = {0};
    json_buf_cstr_or_null(&b, NULL);
    json_buf_lit(&b, ",");
    json_buf_cstr_or_null(&b, "\t");
    CHECK(strcmp(b.data, "null,\"\\t\"") == 0);
    json_buf_free(&b);
}

TEST_MAIN({"the buffer front-end writes each case", test_buffer_front_end},
          {"the FILE front-end writes each case", test_file_front_end},
          {"a valid string reads back as it was", test_string_round_trips_when_valid},
          {"the NUL-terminated forms", test_nul_terminated_forms})
