/* json_write.h — the one writer of JSON text: every JSON string cordon emits (the run result,
 * the audit log, the session API's responses and events, policy test/net/detect, the trust
 * records) is escaped by json_escape, whichever front-end carries it: the growable buffer
 * (struct json_buf) or a FILE* (json_write_*). What comes out is always valid UTF-8 and valid
 * JSON: `"` and `\` are backslashed; \n \r \t take their short forms; other control characters
 * and DEL become \u00XX; each byte that starts no valid UTF-8 sequence (a stray continuation
 * byte, an overlong form, a surrogate, a code point past U+10FFFF, a sequence cut short)
 * becomes U+FFFD. Use json_buf_base64 for bytes that must survive. Uses only libc; never
 * decides what a field holds. */
#ifndef CORDON_JSON_WRITE_H
#define CORDON_JSON_WRITE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "base/attrs.h"

struct json_buf {
    char *data;
    size_t len, cap;
};

void json_buf_raw(struct json_buf *b, const char *s, size_t n);
/* A string literal, as is. */
#define json_buf_lit(b, lit) json_buf_raw((b), "" lit, sizeof(lit) - 1)
void json_buf_printf(struct json_buf *b, const char *fmt, ...) CORDON_PRINTF(2, 3);
/* Where json_escape sends its output, in pieces. */
typedef void json_sink(void *ctx, const char *p, size_t n);
/* The JSON string of s[0..n) (quotes included, NULs escaped), as described above. */
void json_escape(const char *s, size_t n, json_sink *emit, void *ctx);

/* A JSON string of s[0..n) (quotes included). */
void json_buf_string(struct json_buf *b, const char *s, size_t n);
/* "s" or null. */
void json_buf_cstr_or_null(struct json_buf *b, const char *s);
/* A JSON string of the base64 of s[0..n). */
void json_buf_base64(struct json_buf *b, const unsigned char *s, size_t n);
/* Length of the valid UTF-8 sequence at s (n bytes available), 0 when s starts none (json_read
 * checks its input with the same rule). */
size_t json_utf8_seq(const unsigned char *s, size_t n);
/* Is s[0..n) valid UTF-8? */
bool json_utf8_valid(const unsigned char *s, size_t n);
/* How many bytes at the end of s[0..n) are the start of a UTF-8 sequence cut short (0-3). */
size_t json_utf8_incomplete_tail(const unsigned char *s, size_t n);
void json_buf_free(struct json_buf *b);
/* Write s (NUL-terminated) to out as a JSON string. */
void json_write_string(FILE *out, const char *s);
/* Write s[0..n) to out as a JSON string (embedded NULs become \u0000). */
void json_write_stringn(FILE *out, const char *s, size_t n);
#endif
