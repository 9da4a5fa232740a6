/* json_buf.h — building JSON text in a growable buffer: the session API's responses and
 * events, and the persisted job state. Strings are escaped per RFC 8259; bytes that are not
 * valid UTF-8 become U+FFFD (use json_buf_base64 for bytes that must survive). */
#ifndef CORDON_JSON_BUF_H
#define CORDON_JSON_BUF_H
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
/* A JSON string of s[0..n) (quotes included). */
void json_buf_string(struct json_buf *b, const char *s, size_t n);
/* "s" or null. */
void json_buf_cstr_or_null(struct json_buf *b, const char *s);
/* A JSON string of the base64 of s[0..n). */
void json_buf_base64(struct json_buf *b, const unsigned char *s, size_t n);
/* Is s[0..n) valid UTF-8? */
bool json_utf8_valid(const unsigned char *s, size_t n);
/* How many bytes at the end of s[0..n) are the start of a UTF-8 sequence cut short (0-3). */
size_t json_utf8_incomplete_tail(const unsigned char *s, size_t n);
void json_buf_free(struct json_buf *b);
/* Append s to out as a JSON string (quoted, escaped). */
void json_write_string(FILE *out, const char *s);
#endif
