/* test_json_read.c — the strict JSON reader (base/json_read.c) from tables: valid documents
 * and the tree they give (written back in a compact form), malformed ones and the error
 * ("offset N: what") they give, nesting at and past the limit, every truncation of a document,
 * and duplicate keys in large objects. Each input is copied into a buffer of exactly its
 * length, so that under AddressSanitizer a read past len is a failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_read.h"
#include "base/util.h"
#include "test.h"

/* ---- a compact dump of a tree, to compare with the tables ---- */

struct dump {
    char buf[4096];
    size_t n;
};

static void put(struct dump *d, const char *s, size_t len)
{
    CHECK(d->n + len < sizeof d->buf);
    memcpy(d->buf + d->n, s, len);
    d->n += len;
    d->buf[d->n] = '\0';
}

static void puts_(struct dump *d, const char *s)
{
    put(d, s, strlen(s));
}

/* A string between quotes: printable ASCII as it is, every other byte as \xHH. */
static void put_str(struct dump *d, const char *s, size_t len)
{
    puts_(d, "\"");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char hex[8];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            put(d, (const char *)&c, 1);
        } else {
            snprintf(hex, sizeof hex, "\\x%02x", c);
            puts_(d, hex);
        }
    }
    puts_(d, "\"");
}

/* null true false; an integer as %.17g, any other number as ~%.17g; [a,b]; {"k":v}. */
static void dump_value(struct dump *d, const struct json_value *v)
{
    char num[64];
    switch (v->type) {
    case JSON_NULL:
        puts_(d, "null");
        break;
    case JSON_BOOL:
        puts_(d, v->boolean ? "true" : "false");
        break;
    case JSON_NUMBER:
        snprintf(num, sizeof num, "%s%.17g", v->is_integer ? "" : "~", v->number);
        puts_(d, num);
        break;
    case JSON_STRING:
        CHECK(v->str[v->len] == '\0');
        put_str(d, v->str, v->len);
        break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        puts_(d, v->type == JSON_ARRAY ? "[" : "{");
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                puts_(d, ",");
            if (v->type == JSON_OBJECT) {
                put_str(d, v->keys[i], strlen(v->keys[i]));
                puts_(d, ":");
            }
            dump_value(d, &v->items[i]);
        }
        puts_(d, v->type == JSON_ARRAY ? "]" : "}");
        break;
    }
}

/* json_parse over an exact-size copy of in[0..len). */
static struct json_value *parse_exact(const char *in, size_t len, char *err, size_t errlen)
{
    char *copy = xmalloc(len ? len : 1);
    memcpy(copy, in, len);
    err[0] = '\0';
    struct json_value *v = json_parse(copy, len, err, errlen);
    free(copy);
    return v;
}

/* ---- valid documents ---- */

struct valid_case {
    const char *in;
    size_t len; /* 0: strlen(in) */
    const char *tree;
};

static const struct valid_case valid[] = {
    {"null", 0, "null"},
    {"true", 0, "true"},
    {"false", 0, "false"},
    {" \t\r\n 1 \n\t", 0, "1"},
    {"0", 0, "0"},
    {"-0", 0, "-0"},
    {"42", 0, "42"},
    {"-17", 0, "-17"},
    {"1.5", 0, "~1.5"},
    {"-1.25e2", 0, "~-125"},
    {"1E+2", 0, "~100"},
    {"1e-2", 0, "~0.01"},
    {"0.0", 0, "~0"},
    /* huge and tiny numbers: an integer beyond 2^53 keeps is_integer, the value rounds */
    {"123456789012345678901234567890", 0, "1.2345678901234568e+29"},
    {"9007199254740993", 0, "9007199254740992"},
    {"1e308", 0, "~1e+308"},
    {"-1.7976931348623157e308", 0, "~-1.7976931348623157e+308"},
    {"1e-400", 0, "~0"},
    {"1234567890123456789012345678901234567890123456789012345678901234", 0,
     "1.2345678901234568e+63"}, /* 64 characters: the longest accepted */
    {"\"\"", 0, "\"\""},
    {"\"plain text\"", 0, "\"plain text\""},
    {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", 0, "\"\\x22\\x5c/\\x08\\x0c\\x0a\\x0d\\x09\""},
    {"\"\\u0041\\u00e9\\u20AC\"", 0, "\"A\\xc3\\xa9\\xe2\\x82\\xac\""},
    {"\"\\ud83d\\ude00\"", 0, "\"\\xf0\\x9f\\x98\\x80\""}, /* a surrogate pair joined */
    {"\"\\uDBFF\\uDFFF\"", 0, "\"\\xf4\\x8f\\xbf\\xbf\""}, /* U+10FFFF */
    {"\"a\\u0000b\"", 0, "\"a\\x00b\""},                   /* NUL inside a value is kept */
    {"\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", 0,
     "\"\\xc3\\xa9\\xe2\\x82\\xac\\xf0\\x9f\\x98\\x80\""},
    {"\"\x7f\"", 0, "\"\\x7f\""}, /* DEL is not a control character to JSON */
    {"[]", 0, "[]"},
    {"{}", 0, "{}"},
    {"[ ]", 0, "[]"},
    {"{ \n}", 0, "{}"},
    {"[1,[2,[3,[]]]]", 0, "[1,[2,[3,[]]]]"},
    {"[null,true,false,\"s\",1.5,{}]", 0, "[null,true,false,\"s\",~1.5,{}]"},
    {"{\"a\":{\"b\":[]},\"c\":null}", 0, "{\"a\":{\"b\":[]},\"c\":null}"},
    {" { \"a\" : 1 , \"b\" : [ 2 , 3 ] } ", 0, "{\"a\":1,\"b\":[2,3]}"},
    {"{\"a\":1,\"A\":2,\"a \":3}", 0, "{\"a\":1,\"A\":2,\"a \":3}"}, /* keys differ by a byte */
    {"{\"\":0}", 0, "{\"\":0}"},
    {"{\"\\u00e9\":1,\"\xc3\xa9x\":2}", 0, "{\"\\xc3\\xa9\":1,\"\\xc3\\xa9x\":2}"},
};

static void test_valid_documents(void)
{
    for (size_t i = 0; i < ARRAY_LEN(valid); i++) {
        const struct valid_case *c = &valid[i];
        char err[128];
        struct json_value *v = parse_exact(c->in, c->len ? c->len : strlen(c->in), err, sizeof err);
        if (!v) {
            fprintf(stderr, "  valid[%zu] %s: refused: %s\n", i, c->in, err);
            CHECK(v != NULL);
        }
        struct dump d = {.n = 0};
        dump_value(&d, v);
        if (strcmp(d.buf, c->tree) != 0) {
            fprintf(stderr, "  valid[%zu] %s: got %s, expected %s\n", i, c->in, d.buf, c->tree);
            CHECK(strcmp(d.buf, c->tree) == 0);
        }
        json_free(v);
    }
}

/* ---- malformed documents ---- */

struct bad_case {
    const char *in;
    size_t len;      /* 0: strlen(in) */
    const char *err; /* the whole message */
};

static const struct bad_case bad[] = {
    /* nothing, or not one value */
    {"", 0, "offset 0: value expected, found the end of the input"},
    {"   \n", 0, "offset 4: value expected, found the end of the input"},
    {"1 2", 0, "offset 2: unexpected data after the value"},
    {"[]]", 0, "offset 2: unexpected data after the value"},
    {"{}x", 0, "offset 2: unexpected data after the value"},
    {"1\0", 2, "offset 1: unexpected data after the value"},
    {"null\0", 5, "offset 4: unexpected data after the value"},
    {"\xef\xbb\xbf{}", 0, "offset 0: invalid number"}, /* no byte-order mark */
    /* literals */
    {"nul", 0, "offset 0: invalid literal"},
    {"tru", 0, "offset 0: invalid literal"},
    {"fals", 0, "offset 0: invalid literal"},
    {"nulL", 0, "offset 0: invalid literal"},
    {"nullx", 0, "offset 4: unexpected data after the value"},
    {"True", 0, "offset 0: invalid number"},
    {"undefined", 0, "offset 0: invalid number"},
    /* numbers */
    {"-", 0, "offset 1: invalid number"},
    {"+1", 0, "offset 0: invalid number"},
    {".5", 0, "offset 0: invalid number"},
    {"01", 0, "offset 1: unexpected data after the value"},
    {"-01", 0, "offset 2: unexpected data after the value"},
    {"1.", 0, "offset 2: invalid number: digit expected after '.'"},
    {"1.e3", 0, "offset 2: invalid number: digit expected after '.'"},
    {"1e", 0, "offset 2: invalid number: digit expected in exponent"},
    {"1e+", 0, "offset 3: invalid number: digit expected in exponent"},
    {"1E-x", 0, "offset 3: invalid number: digit expected in exponent"},
    {"0x10", 0, "offset 1: unexpected data after the value"},
    {"NaN", 0, "offset 0: invalid number"},
    {"Infinity", 0, "offset 0: invalid number"},
    {"-Infinity", 0, "offset 1: invalid number"},
    {"1e400", 0, "offset 0: number out of range"},
    {"-1e400", 0, "offset 0: number out of range"},
    {"[1.8e308]", 0, "offset 1: number out of range"},
    {"12345678901234567890123456789012345678901234567890123456789012345", 0,
     "offset 0: number too long"},
    {"1,", 0, "offset 1: unexpected data after the value"},
    /* strings: ends, escapes, surrogates */
    {"\"abc", 0, "offset 0: unterminated string"},
    {"\"abc\\\"", 0, "offset 0: unterminated string"},
    {"\"\\", 0, "offset 0: unterminated string"},
    {"[\"a\",\"b]", 0, "offset 5: unterminated string"},
    {"\"a\\x\"", 0, "offset 2: invalid escape in string"},
    {"\"\\'\"", 0, "offset 1: invalid escape in string"},
    {"\"\\U0041\"", 0, "offset 1: invalid escape in string"},
    {"\"\\\x01\"", 0, "offset 1: invalid escape in string"},
    {"\"\\u12\"", 0, "offset 1: invalid \\u escape"},
    {"\"\\u12G4\"", 0, "offset 1: invalid \\u escape"},
    {"\"\\u-123\"", 0, "offset 1: invalid \\u escape"},
    {"\"\\u\"", 0, "offset 1: invalid \\u escape"},
    {"\"\\ud800\"", 0, "offset 1: high surrogate without a low surrogate"},
    {"\"\\ud800x\"", 0, "offset 1: high surrogate without a low surrogate"},
    {"\"\\ud800\\u0041\"", 0, "offset 1: high surrogate without a low surrogate"},
    {"\"\\ud800\\ud800\"", 0, "offset 1: high surrogate without a low surrogate"},
    {"\"\\ud800\\n\"", 0, "offset 1: high surrogate without a low surrogate"},
    {"\"\\ud800\\udc0\"", 0, "offset 1: high surrogate without a low surrogate"},
    {"\"ab\\udc00\"", 0, "offset 3: lone low surrogate in \\u escape"},
    {"\"\\uDFFF\\uD800\"", 0, "offset 1: lone low surrogate in \\u escape"},
    /* raw control characters and bad UTF-8 in strings */
    {"\"a\x01z\"", 0, "offset 2: control character in string (escape it)"},
    {"\"a\tb\"", 0, "offset 2: control character in string (escape it)"},
    {"\"a\nb\"", 0, "offset 2: control character in string (escape it)"},
    {"\"a\0b\"", 5, "offset 2: control character in string (escape it)"},
    {"\"\xff\"", 0, "offset 1: invalid UTF-8 in string"},
    {"\"\x80\"", 0, "offset 1: invalid UTF-8 in string"},             /* lone continuation */
    {"\"\xc0\x80\"", 0, "offset 1: invalid UTF-8 in string"},         /* overlong NUL */
    {"\"\xc1\xbf\"", 0, "offset 1: invalid UTF-8 in string"},         /* overlong */
    {"\"\xe0\x80\xaf\"", 0, "offset 1: invalid UTF-8 in string"},     /* overlong '/' */
    {"\"\xf0\x80\x80\xaf\"", 0, "offset 1: invalid UTF-8 in string"}, /* overlong '/' */
    {"\"\xed\xa0\x80\"", 0, "offset 1: invalid UTF-8 in string"},     /* an encoded surrogate */
    {"\"\xf4\x90\x80\x80\"", 0, "offset 1: invalid UTF-8 in string"}, /* above U+10FFFF */
    {"\"\xf5\x80\x80\x80\"", 0, "offset 1: invalid UTF-8 in string"},
    {"\"x\xe2\x82\"", 0, "offset 2: invalid UTF-8 in string"}, /* cut short by the quote */
    {"\"\xc3\"", 0, "offset 1: invalid UTF-8 in string"},
    {"\"\xc3(\"", 0, "offset 1: invalid UTF-8 in string"},
    /* arrays */
    {"[", 0, "offset 1: value expected, found the end of the input"},
    {"[1", 0, "offset 2: ',' or ']' expected"},
    {"[1,", 0, "offset 3: value expected, found the end of the input"},
    {"[1,]", 0, "offset 3: trailing comma"},
    {"[1 2]", 0, "offset 3: ',' or ']' expected"},
    {"[,1]", 0, "offset 1: invalid number"},
    {"[1,,2]", 0, "offset 3: invalid number"},
    {"[1}", 0, "offset 2: ',' or ']' expected"},
    {"]", 0, "offset 0: invalid number"},
    /* objects */
    {"{", 0, "offset 1: object key (a string) expected"},
    {"{\"a\"", 0, "offset 4: ':' expected"},
    {"{\"a\":", 0, "offset 5: value expected, found the end of the input"},
    {"{\"a\" 1}", 0, "offset 5: ':' expected"},
    {"{\"a\":1", 0, "offset 6: ',' or '}' expected"},
    {"{\"a\":1,}", 0, "offset 7: trailing comma"},
    {"{\"a\":1 \"b\":2}", 0, "offset 7: ',' or '}' expected"},
    {"{1:2}", 0, "offset 1: object key (a string) expected"},
    {"{a:1}", 0, "offset 1: object key (a string) expected"},
    {"{'a':1}", 0, "offset 1: object key (a string) expected"},
    {"{\"a\":1]", 0, "offset 6: ',' or '}' expected"},
    {"{\"a\\u0000b\":1}", 0, "offset 1: NUL in object key"},
    {"{\"a\":1,\"a\":2}", 0, "offset 7: duplicate object key"},
    {"{\"\\u0061\":1,\"a\":2}", 0, "offset 12: duplicate object key"}, /* equal once decoded */
    {"{\"a\":1,\"b\":{\"c\":1,\"c\":2}}", 0, "offset 18: duplicate object key"},
    /* the first key in document order that repeats an earlier one is named */
    {"{\"b\":1,\"a\":2,\"b\":3,\"a\":4}", 0, "offset 13: duplicate object key"},
    {"{\"a\":1,\"b\":2,\"c\":3,\"b\":4,\"a\":5}", 0, "offset 19: duplicate object key"},
    /* a syntax error inside a duplicate's value is still an error */
    {"{\"a\":1,\"a\":[}", 0, "offset 12: invalid number"},
    /* what other readers take but RFC 8259 does not */
    {"/* c */ 1", 0, "offset 0: invalid number"},
    {"// c\n1", 0, "offset 0: invalid number"},
    {"\f1", 0, "offset 0: invalid number"}, /* form feed is not JSON white space */
    {"\xc2\xa0"
     "1",
     0, "offset 0: invalid number"}, /* nor is U+00A0 */
};

static void test_malformed_documents(void)
{
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        const struct bad_case *c = &bad[i];
        char err[128];
        struct json_value *v = parse_exact(c->in, c->len ? c->len : strlen(c->in), err, sizeof err);
        if (v || strcmp(err, c->err) != 0) {
            fprintf(stderr, "  bad[%zu] %s: got %s \"%s\", expected \"%s\"\n", i, c->in,
                    v ? "a tree and" : "error", err, c->err);
            CHECK(!v && strcmp(err, c->err) == 0);
        }
    }
}

/* ---- nesting ---- */

static char *nested(int depth, char open, char close)
{
    char *s = xmalloc((size_t)depth * 2 + 1);
    memset(s, open, (size_t)depth);
    memset(s + depth, close, (size_t)depth);
    s[depth * 2] = '\0';
    return s;
}

static void test_nesting_limit(void)
{
    char err[128];
    /* JSON_MAX_DEPTH levels parse; one more is refused where it opens */
    char *s = nested(JSON_MAX_DEPTH, '[', ']');
    struct json_value *v = parse_exact(s, strlen(s), err, sizeof err);
    CHECK(v != NULL);
    const struct json_value *in = v;
    for (int i = 1; i < JSON_MAX_DEPTH; i++) {
        CHECK(in->type == JSON_ARRAY && in->len == 1);
        in = &in->items[0];
    }
    CHECK(in->type == JSON_ARRAY && in->len == 0);
    json_free(v);
    free(s);

    s = nested(JSON_MAX_DEPTH + 1, '[', ']');
    CHECK(parse_exact(s, strlen(s), err, sizeof err) == NULL);
    CHECK(strcmp(err, "offset 64: nesting too deep") == 0);
    free(s);

    /* objects and arrays count alike */
    char buf[JSON_MAX_DEPTH * 8 + 8];
    size_t n = 0;
    for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, i % 2 ? "[" : "{\"k\":");
    CHECK(parse_exact(buf, n, err, sizeof err) == NULL);
    CHECK_STR_CONTAINS(err, "nesting too deep");

    /* a document far deeper than the limit is refused, not a stack overflow */
    s = nested(1 << 20, '[', ']');
    CHECK(parse_exact(s, strlen(s), err, sizeof err) == NULL);
    CHECK(strcmp(err, "offset 64: nesting too deep") == 0);
    free(s);
    s = nested(1 << 20, '[', '[');
    CHECK(parse_exact(s, strlen(s), err, sizeof err) == NULL);
    CHECK(strcmp(err, "offset 64: nesting too deep") == 0);
    free(s);
}

/* ---- truncation ---- */

static void test_every_truncation_is_refused(void)
{
    /* no proper prefix of these is itself a document */
    static const char *docs[] = {
        "{\"a\":[1,true,null,\"x\\u00e9\\ud83d\\ude00\"],\"b\":{\"c\":-1.5e3,\"d\":\"\xc3\xa9\"}}",
        "[\"\\\\\",\"\\\"\",[[]],{},false]",
        "\"\xf0\x9f\x98\x80 \\/\"",
    };
    for (size_t d = 0; d < ARRAY_LEN(docs); d++) {
        size_t len = strlen(docs[d]);
        char err[128];
        struct json_value *whole = parse_exact(docs[d], len, err, sizeof err);
        CHECK(whole != NULL);
        json_free(whole);
        for (size_t cut = 0; cut < len; cut++) {
            struct json_value *v = parse_exact(docs[d], cut, err, sizeof err);
            if (v) {
                fprintf(stderr, "  doc %zu cut at %zu parsed\n", d, cut);
                CHECK(v == NULL);
            }
            CHECK(strncmp(err, "offset ", 7) == 0);
        }
    }
}

/* ---- duplicate keys in large objects ---- */

static char *big_object(size_t keys, long dup_of, size_t *len_out)
{
    size_t cap = keys * 24 + 32, n = 0;
    char *s = xmalloc(cap);
    s[n++] = '{';
    for (size_t i = 0; i < keys; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s\"key%zu\":%zu", i ? "," : "", i, i);
    if (dup_of >= 0)
        n += (size_t)snprintf(s + n, cap - n, ",\"key%ld\":0", dup_of);
    s[n++] = '}';
    *len_out = n;
    return s;
}

static void test_large_objects(void)
{
    char err[128];
    size_t len;
    /* many unique keys parse, and json_get finds each of them */
    char *s = big_object(50000, -1, &len);
    struct json_value *v = parse_exact(s, len, err, sizeof err);
    CHECK(v != NULL);
    CHECK_EQ_INT(v->len, 50000);
    const struct json_value *x = json_get(v, "key31337");
    CHECK(x && x->type == JSON_NUMBER && x->is_integer && x->number == 31337);
    CHECK(json_get(v, "key50000") == NULL);
    CHECK(json_get(v, "key") == NULL);
    json_free(v);
    free(s);

    /* one repeat of an early key, at the very end, is found and placed */
    s = big_object(50000, 7, &len);
    CHECK(parse_exact(s, len, err, sizeof err) == NULL);
    char want[64];
    /* the document ends ,"key7":0} and the repeat's opening quote is 9 bytes from the end */
    snprintf(want, sizeof want, "offset %zu: duplicate object key", len - 9);
    if (strcmp(err, want) != 0) {
        fprintf(stderr, "  got %s, expected %s\n", err, want);
        CHECK(strcmp(err, want) == 0);
    }
    free(s);
}

/* ---- lookups and messages ---- */

static void test_get_and_type_names(void)
{
    char err[128];
    const char *doc = "{\"a\":1,\"b\":[\"x\"],\"c\":{\"a\":false}}";
    struct json_value *v = parse_exact(doc, strlen(doc), err, sizeof err);
    CHECK(v != NULL);
    CHECK(json_get(v, "a")->type == JSON_NUMBER);
    CHECK(json_get(v, "b")->type == JSON_ARRAY);
    CHECK(json_get(json_get(v, "c"), "a")->type == JSON_BOOL);
    CHECK(json_get(v, "d") == NULL);
    CHECK(json_get(json_get(v, "b"), "x") == NULL); /* not an object */
    CHECK(json_get(NULL, "a") == NULL);
    json_free(v);
    json_free(NULL);
    CHECK(strcmp(json_type_name(JSON_NULL), "null") == 0);
    CHECK(strcmp(json_type_name(JSON_BOOL), "a boolean") == 0);
    CHECK(strcmp(json_type_name(JSON_NUMBER), "a number") == 0);
    CHECK(strcmp(json_type_name(JSON_STRING), "a string") == 0);
    CHECK(strcmp(json_type_name(JSON_ARRAY), "an array") == 0);
    CHECK(strcmp(json_type_name(JSON_OBJECT), "an object") == 0);
}

static void test_short_error_buffer(void)
{
    /* the message is cut to the buffer, never written past it */
    char err[12];
    memset(err, 'Z', sizeof err);
    CHECK(parse_exact("[1,]", 4, err, 8) == NULL);
    CHECK(strcmp(err, "offset ") == 0);
    CHECK(err[8] == 'Z');
}

TEST_MAIN({"valid documents", test_valid_documents},
          {"malformed documents", test_malformed_documents}, {"nesting limit", test_nesting_limit},
          {"every truncation is refused", test_every_truncation_is_refused},
          {"large objects", test_large_objects}, {"get and type names", test_get_and_type_names},
          {"short error buffer", test_short_error_buffer})
