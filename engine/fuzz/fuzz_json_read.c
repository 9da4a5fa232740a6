/* fuzz_json_read.c — libFuzzer target for base/json_read.c, the reader of case files that come
 * from untrusted repositories. The input is the document. Beyond no crash, leak or undefined
 * behaviour, it aborts when a property the callers rely on breaks:
 *   - a refusal says "offset N: ..." with N within the input;
 *   - an accepted tree is well formed: numbers finite (an integer's value integral), strings
 *     NUL-terminated at len and valid UTF-8, keys without NUL and unique in their object,
 *     nesting within JSON_MAX_DEPTH;
 *   - written back as JSON, the tree reads back to the same tree (so nothing was dropped or
 *     misread), and the document with a byte appended is refused (no prefix is accepted).
 * Built and run by `make fuzz` (engine/fuzz/README.md). Links json_read.c with what it uses,
 * json_write.c (the UTF-8 rule) and log.c; the allocation helpers of util.h are defined here,
 * aborting on failure as util.c ends the process. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "base/json_read.h"
#include "base/util.h"

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    ASSERT(p);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    ASSERT(p);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    ASSERT(p);
    return p;
}

/* ---- checks on an accepted tree ---- */

static int utf8_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i], need, cp, min;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            need = 2;
            min = 0x80;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 3;
            min = 0x800;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 4;
            min = 0x10000;
            cp = c & 0x07;
        } else
            return 0;
        if (n - i < need)
            return 0;
        for (unsigned k = 1; k < need; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += need;
    }
    return 1;
}

static void check_tree(const struct json_value *v, int depth)
{
    ASSERT(depth <= JSON_MAX_DEPTH);
    switch (v->type) {
    case JSON_NULL:
    case JSON_BOOL:
        break;
    case JSON_NUMBER:
        ASSERT(isfinite(v->number));
        if (v->is_integer)
            ASSERT(v->number == floor(v->number));
        break;
    case JSON_STRING:
        ASSERT(v->str && v->str[v->len] == '\0');
        ASSERT(utf8_ok((const unsigned char *)v->str, v->len));
        break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        ASSERT(v->len == 0 || v->items);
        for (size_t i = 0; i < v->len; i++) {
            if (v->type == JSON_OBJECT) {
                ASSERT(v->keys && v->keys[i]);
                ASSERT(utf8_ok((const unsigned char *)v->keys[i], strlen(v->keys[i])));
                for (size_t k = 0; k < i && k < 64; k++) /* bounded: keep each run fast */
                    ASSERT(strcmp(v->keys[k], v->keys[i]) != 0);
                ASSERT(json_get(v, v->keys[i]) == &v->items[i]);
            }
            check_tree(&v->items[i], depth + 1);
        }
        break;
    default:
        abort();
    }
}

/* ---- writing a tree back as JSON ---- */

struct out {
    char *buf;
    size_t n, cap;
};

static void put(struct out *o, const char *s, size_t len)
{
    if (o->n + len + 1 > o->cap) {
        o->cap = (o->n + len + 1) * 2;
        o->buf = xrealloc(o->buf, o->cap);
    }
    memcpy(o->buf + o->n, s, len);
    o->n += len;
    o->buf[o->n] = '\0';
}

static void put_string(struct out *o, const char *s, size_t len)
{
    put(o, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(o, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(o, esc, 6);
        } else {
            put(o, (const char *)&c, 1);
        }
    }
    put(o, "\"", 1);
}

static void write_tree(struct out *o, const struct json_value *v)
{
    char num[64];
    switch (v->type) {
    case JSON_NULL:
        put(o, "null", 4);
        break;
    case JSON_BOOL:
        v->boolean ? put(o, "true", 4) : put(o, "false", 5);
        break;
    case JSON_NUMBER:
        /* %.17g reads back to the same double; it may add an exponent or a fraction, so the
         * is_integer flag is not compared */
        put(o, num, (size_t)snprintf(num, sizeof num, "%.17g", v->number));
        break;
    case JSON_STRING:
        put_string(o, v->str, v->len);
        break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        put(o, v->type == JSON_ARRAY ? "[" : "{", 1);
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                put(o, ",", 1);
            if (v->type == JSON_OBJECT) {
                put_string(o, v->keys[i], strlen(v->keys[i]));
                put(o, ":", 1);
            }
            write_tree(o, &v->items[i]);
        }
        put(o, v->type == JSON_ARRAY ? "]" : "}", 1);
        break;
    }
}

static int same_tree(const struct json_value *a, const struct json_value *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case JSON_NULL:
        return 1;
    case JSON_BOOL:
        return a->boolean == b->boolean;
    case JSON_NUMBER:
        return memcmp(&a->number, &b->number, sizeof a->number) == 0;
    case JSON_STRING:
        return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    case JSON_ARRAY:
    case JSON_OBJECT:
        if (a->len != b->len)
            return 0;
        for (size_t i = 0; i < a->len; i++) {
            if (a->type == JSON_OBJECT && strcmp(a->keys[i], b->keys[i]) != 0)
                return 0;
            if (!same_tree(&a->items[i], &b->items[i]))
                return 0;
        }
        return 1;
    }
    return 0;
}

static void check_error(const char *err, size_t size)
{
    unsigned long long at;
    int used = 0;
    ASSERT(sscanf(err, "offset %llu: %n", &at, &used) == 1 && used > 0);
    ASSERT(at <= size);
    ASSERT(err[used] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[128] = "";
    struct json_value *v = json_parse((const char *)data, size, err, sizeof err);
    if (!v) {
        check_error(err, size);
        return 0;
    }
    check_tree(v, 0);

    struct out o = {0};
    write_tree(&o, v);
    struct json_value *again = json_parse(o.buf, o.n, err, sizeof err);
    ASSERT(again != NULL);
    ASSERT(same_tree(v, again));
    json_free(again);
    free(o.buf);

    /* the same document with one more byte is not a document */
    uint8_t *longer = xmalloc(size + 1);
    memcpy(longer, data, size);
    longer[size] = 'x';
    struct json_value *w = json_parse((const char *)longer, size + 1, err, sizeof err);
    ASSERT(w == NULL);
    check_error(err, size + 1);
    free(longer);

    json_free(v);
    return 0;
}
