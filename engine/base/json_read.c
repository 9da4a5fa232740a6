/* json_read.c — see json_read.h. Recursive descent over a byte buffer with an explicit depth
 * bound; errors carry the byte offset where the problem was seen.
 * Uses util.h for allocation and json_write's UTF-8 rule. Must never: read past the end of the
 * buffer, or take time that grows faster than n log n with the input (case files come from
 * untrusted repositories). */
#include "base/json_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_write.h"
#include "base/util.h"

struct parser {
    const unsigned char *s;
    size_t len, pos;
    char *err;
    size_t errlen;
    bool failed;
};

static bool fail(struct parser *p, size_t at, const char *what)
{
    if (!p->failed)
        snprintf(p->err, p->errlen, "offset %zu: %s", at, what);
    p->failed = true;
    return false;
}

static void skip_ws(struct parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static bool literal(struct parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return fail(p, p->pos, "invalid literal");
    p->pos += n;
    return true;
}

static bool number(struct parser *p, struct json_value *v)
{
    size_t start = p->pos, i = p->pos;
    const unsigned char *s = p->s;
    bool integer = true;
    if (i < p->len && s[i] == '-')
        i++;
    if (i < p->len && s[i] == '0') {
        i++;
    } else if (i < p->len && s[i] >= '1' && s[i] <= '9') {
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    } else {
        return fail(p, i, "invalid number");
    }
    if (i < p->len && s[i] == '.') {
        integer = false;
        i++;
        if (i >= p->len || s[i] < '0' || s[i] > '9')
            return fail(p, i, "invalid number: digit expected after '.'");
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        integer = false;
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= p->len || s[i] < '0' || s[i] > '9')
            return fail(p, i, "invalid number: digit expected in exponent");
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i - start > 64)
        return fail(p, start, "number too long");
    char buf[80];
    memcpy(buf, s + start, i - start);
    buf[i - start] = '\0';
    v->type = JSON_NUMBER;
    /* The grammar above is a subset of what strtod takes in the C locale (cordon never sets
     * another), so the whole buffer is the number. A value beyond a double's range would be
     * infinity, which no caller's range check is written for: refuse it. */
    v->number = strtod(buf, NULL);
    if (isinf(v->number))
        return fail(p, start, "number out of range");
    v->is_integer = integer;
    p->pos = i;
    return true;
}

static int hex4(const unsigned char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* p->s[p->pos] is '"'. The decoded string goes to *out (malloc'd), its length to *outlen. */
static bool string(struct parser *p, char **out, size_t *outlen)
{
    size_t i = p->pos + 1, start = p->pos;
    /* decoded output is never longer than the input */
    size_t end = i;
    while (end < p->len && p->s[end] != '"') {
        if (p->s[end] == '\\')
            end++;
        end++;
    }
    if (end >= p->len)
        return fail(p, start, "unterminated string");
    char *buf = xmalloc(end - i + 1);
    size_t n = 0;
    while (i < end) {
        unsigned char c = p->s[i];
        if (c < 0x20) {
            free(buf);
            return fail(p, i, "control character in string (escape it)");
        }
        if (c != '\\') {
            size_t k = json_utf8_seq(p->s + i, end - i);
            if (!k) {
                free(buf);
                return fail(p, i, "invalid UTF-8 in string");
            }
            memcpy(buf + n, p->s + i, k);
            n += k;
            i += k;
            continue;
        }
        unsigned char e = p->s[i + 1];
        i += 2;
        switch (e) {
        case '"':
            buf[n++] = '"';
            break;
        case '\\':
            buf[n++] = '\\';
            break;
        case '/':
            buf[n++] = '/';
            break;
        case 'b':
            buf[n++] = '\b';
            break;
        case 'f':
            buf[n++] = '\f';
            break;
        case 'n':
            buf[n++] = '\n';
            break;
        case 'r':
            buf[n++] = '\r';
            break;
        case 't':
            buf[n++] = '\t';
            break;
        case 'u': {
            int cp = end - i >= 4 ? hex4(p->s + i) : -1;
            if (cp < 0) {
                free(buf);
                return fail(p, i - 2, "invalid \\u escape");
            }
            i += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(buf);
                return fail(p, i - 6, "lone low surrogate in \\u escape");
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                int lo =
                    end - i >= 6 && p->s[i] == '\\' && p->s[i + 1] == 'u' ? hex4(p->s + i + 2) : -1;
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    free(buf);
                    return fail(p, i - 6, "high surrogate without a low surrogate");
                }
                i += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            n += put_utf8(buf + n, (unsigned)cp);
            break;
        }
        default:
            free(buf);
            return fail(p, i - 2, "invalid escape in string");
        }
    }
    buf[n] = '\0';
    *out = buf;
    *outlen = n;
    p->pos = end + 1;
    return true;
}

static bool value(struct parser *p, struct json_value *v, int depth);

struct key_ref {
    const char *key;
    size_t index;
};

static int key_ref_cmp(const void *a, const void *b)
{
    const struct key_ref *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Fails on the first key (in document order) that repeats an earlier one. Sorting keeps this
 * n log n: comparing each key with all earlier ones made a 64 MiB object of short keys take
 * hours. key_at[i] is the offset of key i, for the message. */
static bool unique_keys(struct parser *p, const struct json_value *v, const size_t *key_at)
{
    if (v->len < 2)
        return true;
    struct key_ref *refs = xmalloc(v->len * sizeof *refs);
    for (size_t i = 0; i < v->len; i++)
        refs[i] = (struct key_ref){v->keys[i], i};
    qsort(refs, v->len, sizeof *refs, key_ref_cmp);
    size_t first_dup = v->len;
    for (size_t i = 1; i < v->len; i++)
        if (strcmp(refs[i - 1].key, refs[i].key) == 0 && refs[i].index < first_dup)
            first_dup = refs[i].index;
    free(refs);
    if (first_dup == v->len)
        return true;
    return fail(p, key_at[first_dup], "duplicate object key");
}

static bool array_or_object(struct parser *p, struct json_value *v, int depth, bool object)
{
    char close = object ? '}' : ']';
    size_t cap = 0, *key_at = NULL;
    bool ok = false;
    v->type = object ? JSON_OBJECT : JSON_ARRAY;
    if (depth >= JSON_MAX_DEPTH)
        return fail(p, p->pos, "nesting too deep");
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == (unsigned char)close) {
        p->pos++;
        return true;
    }
    for (;;) {
        if (v->len == cap) {
            cap = cap ? cap * 2 : 8;
            v->items = xrealloc(v->items, cap * sizeof *v->items);
            if (object) {
                v->keys = xrealloc(v->keys, cap * sizeof *v->keys);
                key_at = xrealloc(key_at, cap * sizeof *key_at);
            }
        }
        struct json_value *item = &v->items[v->len];
        memset(item, 0, sizeof *item);
        skip_ws(p);
        if (object) {
            if (p->pos >= p->len || p->s[p->pos] != '"') {
                fail(p, p->pos, "object key (a string) expected");
                goto out;
            }
            size_t at = p->pos, klen;
            char *key;
            if (!string(p, &key, &klen))
                goto out;
            if (strlen(key) != klen) {
                free(key);
                fail(p, at, "NUL in object key");
                goto out;
            }
            v->keys[v->len] = key;
            key_at[v->len] = at;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                v->len++; /* the key is owned now */
                fail(p, p->pos, "':' expected");
                goto out;
            }
            p->pos++;
        }
        v->len++;
        if (!value(p, item, depth + 1))
            goto out;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            skip_ws(p);
            if (p->pos < p->len && p->s[p->pos] == (unsigned char)close) {
                fail(p, p->pos, "trailing comma");
                goto out;
            }
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == (unsigned char)close) {
            p->pos++;
            ok = !object || unique_keys(p, v, key_at);
            goto out;
        }
        fail(p, p->pos, object ? "',' or '}' expected" : "',' or ']' expected");
        goto out;
    }
out:
    free(key_at);
    return ok;
}

static bool value(struct parser *p, struct json_value *v, int depth)
{
    skip_ws(p);
    if (p->pos >= p->len)
        return fail(p, p->pos, "value expected, found the end of the input");
    switch (p->s[p->pos]) {
    case '{':
        return array_or_object(p, v, depth, true);
    case '[':
        return array_or_object(p, v, depth, false);
    case '"':
        v->type = JSON_STRING;
        return string(p, &v->str, &v->len);
    case 't':
        v->type = JSON_BOOL;
        v->boolean = true;
        return literal(p, "true");
    case 'f':
        v->type = JSON_BOOL;
        return literal(p, "false");
    case 'n':
        v->type = JSON_NULL;
        return literal(p, "null");
    default:
        return number(p, v);
    }
}

static void free_inner(struct json_value *v)
{
    free(v->str);
    if (v->type == JSON_ARRAY || v->type == JSON_OBJECT) {
        for (size_t i = 0; i < v->len; i++) {
            if (i < v->len)
                free_inner(&v->items[i]);
            if (v->keys)
                free(v->keys[i]);
        }
    }
    free(v->items);
    free(v->keys);
}

void json_free(struct json_value *v)
{
    if (!v)
        return;
    free_inner(v);
    free(v);
}

struct json_value *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    struct parser p = {.s = (const unsigned char *)text, .len = len, .err = err, .errlen = errlen};
    struct json_value *v = xcalloc(1, sizeof *v);
    if (value(&p, v, 0)) {
        skip_ws(&p);
        if (p.pos == p.len)
            return v;
        fail(&p, p.pos, "unexpected data after the value");
    }
    json_free(v);
    return NULL;
}

const struct json_value *json_get(const struct json_value *v, const char *key)
{
    if (!v || v->type != JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->len; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

const char *json_type_name(enum json_type t)
{
    switch (t) {
    case JSON_NULL:
        return "null";
    case JSON_BOOL:
        return "a boolean";
    case JSON_NUMBER:
        return "a number";
    case JSON_STRING:
        return "a string";
    case JSON_ARRAY:
        return "an array";
    case JSON_OBJECT:
        return "an object";
    }
    return "?";
}
