/* json_write.c — see json_write.h. Nothing here decides what a field holds: the callers' JSON
 * shape is theirs; the escaping of every string is json_escape's alone. */
#include "base/json_write.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

static void reserve(struct json_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d)
        die("out of memory");
    b->data = d;
    b->cap = cap;
}

void json_buf_raw(struct json_buf *b, const char *s, size_t n)
{
    reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void json_buf_printf(struct json_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        json_buf_raw(b, small, (size_t)n);
        return;
    }
    reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

size_t json_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned min;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, cp = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, cp = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

bool json_utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = json_utf8_seq(s + i, n - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

size_t json_utf8_incomplete_tail(const unsigned char *s, size_t n)
{
    /* Walk back over at most 3 continuation bytes to a lead byte whose sequence runs past n. */
    for (size_t back = 1; back <= 4 && back <= n; back++) {
        unsigned char c = s[n - back];
        if ((c & 0xC0) == 0x80)
            continue;
        size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return want > back ? back : 0;
    }
    return 0;
}

void json_escape(const char *str, size_t n, json_sink *emit, void *ctx)
{
    const unsigned char *s = (const unsigned char *)str;
    emit(ctx, "\"", 1);
    size_t start = 0; /* the run of bytes that go out as they are */
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        const char *esc = NULL;
        char ubuf[8];
        size_t k = 1;
        if (c == '"')
            esc = "\\\"";
        else if (c == '\\')
            esc = "\\\\";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\r')
            esc = "\\r";
        else if (c == '\t')
            esc = "\\t";
        else if (c < 0x20 || c == 0x7f) {
            snprintf(ubuf, sizeof ubuf, "\\u%04x", c);
            esc = ubuf;
        } else if (c >= 0x80) {
            k = json_utf8_seq(s + i, n - i);
            if (!k) {
                esc = "\xEF\xBF\xBD"; /* U+FFFD, one per byte that starts no valid sequence */
                k = 1;
            }
        }
        if (esc) {
            if (i > start)
                emit(ctx, str + start, i - start);
            emit(ctx, esc, strlen(esc));
            start = i + k;
        }
        i += k;
    }
    if (n > start)
        emit(ctx, str + start, n - start);
    emit(ctx, "\"", 1);
}

static void buf_sink(void *ctx, const char *p, size_t n)
{
    json_buf_raw(ctx, p, n);
}

void json_buf_string(struct json_buf *b, const char *s, size_t n)
{
    reserve(b, n + 2);
    json_escape(s, n, buf_sink, b);
}

void json_buf_cstr_or_null(struct json_buf *b, const char *s)
{
    if (s)
        json_buf_string(b, s, strlen(s));
    else
        json_buf_raw(b, "null", 4);
}

void json_buf_base64(struct json_buf *b, const unsigned char *s, size_t n)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    reserve(b, (n + 2) / 3 * 4 + 2);
    char *o = b->data + b->len;
    *o++ = '"';
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
        *o++ = tbl[v >> 18];
        *o++ = tbl[(v >> 12) & 63];
        *o++ = tbl[(v >> 6) & 63];
        *o++ = tbl[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0);
        *o++ = tbl[v >> 18];
        *o++ = tbl[(v >> 12) & 63];
        *o++ = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
    b->data[b->len] = '\0';
}

void json_buf_free(struct json_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static void file_sink(void *ctx, const char *p, size_t n)
{
    fwrite(p, 1, n, ctx);
}

void json_write_stringn(FILE *out, const char *s, size_t n)
{
    json_escape(s, n, file_sink, out);
}

void json_write_string(FILE *out, const char *s)
{
    json_write_stringn(out, s, strlen(s));
}
