/* json_read.h — a small strict JSON reader (RFC 8259) for files cordon reads: recorded
 * refusal cases (`cordon policy detect`). Owns parsing into a tree of json_value, and lookups.
 * Strict: one value and nothing but white space after it; no trailing commas, comments, NaN,
 * leading zeros or raw control characters; strings must be valid UTF-8, \uXXXX escapes are
 * decoded (surrogate pairs joined; a lone surrogate is an error); duplicate object keys are an
 * error. Limits: JSON_MAX_DEPTH nesting levels; a number is at most 64 characters and within a
 * double's range (1e400 is an error, not infinity; 1e-400 reads as 0); the caller bounds the
 * input size, and time grows as n log n with it.
 * Must never: read past len, accept a prefix of the input, or abort on bad input. */
#ifndef CORDON_JSON_READ_H
#define CORDON_JSON_READ_H
#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_DEPTH 64

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_value {
    enum json_type type;
    bool boolean;             /* JSON_BOOL */
    double number;            /* JSON_NUMBER */
    bool is_integer;          /* JSON_NUMBER written without fraction or exponent */
    char *str;                /* JSON_STRING: NUL-terminated; may hold NUL bytes (\u0000) */
    size_t len;               /* JSON_STRING: length in bytes; ARRAY/OBJECT: element count */
    struct json_value *items; /* ARRAY / OBJECT: len values */
    char **keys;              /* OBJECT: len keys (NUL-terminated, no NUL inside) */
};

/* Parse text[0..len). Returns a new tree (json_free it), or NULL with
 * "offset N: what was wrong" in err. */
struct json_value *json_parse(const char *text, size_t len, char *err, size_t errlen);
void json_free(struct json_value *v);

/* The member `key` of an object, or NULL (also when v is not an object). */
const struct json_value *json_get(const struct json_value *v, const char *key);
/* "string", "number", ...: for messages. */
const char *json_type_name(enum json_type t);
#endif
