/* fuzz_http_request.c — libFuzzer target for http_parse.c. The first byte picks what is fuzzed:
 * a request head (with default or tiny limits, then the upstream head and, for a chunked
 * request, its body), a chunked body alone, or a response head. Besides "no crash, no UB",
 * it checks the properties the proxy relies on:
 *   - a prefix of the input never parses differently from the whole (incremental parsing),
 *     and a head still INCOMPLETE is shorter than the limits allow (the caller's buffer bound);
 *   - an accepted request's upstream head fits in a bounded buffer, has only CRLF line ends
 *     and no NUL, and always ends in the blank line;
 *   - a chunked body split anywhere ends at the same byte as the body fed at once.
 * Built and run by `make fuzz` (engine/fuzz/README.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "base/http_parse.h"

static struct http_request full, part;

static void check_prefix(const char *buf, size_t len, const struct http_limits *lim,
                         enum http_parse_result r_full, size_t k)
{
    enum http_parse_result r = http_parse_request(buf, k, lim, &part);
    if (r_full == HTTP_PARSE_OK) {
        if (k < full.head_len) {
            ASSERT(r == HTTP_PARSE_INCOMPLETE);
        } else {
            ASSERT(r == HTTP_PARSE_OK && part.head_len == full.head_len);
        }
    } else if (r_full == HTTP_PARSE_ERROR) {
        ASSERT(r != HTTP_PARSE_OK);
    } else {
        ASSERT(r == HTTP_PARSE_INCOMPLETE);
    }
    if (r == HTTP_PARSE_ERROR)
        ASSERT(part.status >= 400 && part.error != NULL);
    (void)len;
}

static void check_chunked(const char *p, size_t n, size_t split)
{
    struct http_chunked a, b;
    size_t ca = 0, cb1 = 0, cb2 = 0;
    http_chunked_init(&a);
    enum http_chunked_result ra = http_chunked_feed(&a, p, n, &ca);
    ASSERT(ca <= n);
    if (ra == HTTP_CHUNKED_MORE)
        ASSERT(ca == n);
    if (split > n)
        split = n;
    http_chunked_init(&b);
    enum http_chunked_result rb = http_chunked_feed(&b, p, split, &cb1);
    ASSERT(cb1 <= split);
    if (rb == HTTP_CHUNKED_MORE) {
        rb = http_chunked_feed(&b, p + split, n - split, &cb2);
        ASSERT(cb2 <= n - split);
        cb1 += cb2;
    }
    ASSERT(ra == rb);
    ASSERT(ca == cb1);
}

static void fuzz_request(const char *buf, size_t len, const struct http_limits *lim)
{
    enum http_parse_result r = http_parse_request(buf, len, lim, &full);
    if (r == HTTP_PARSE_ERROR) {
        ASSERT(full.error != NULL);
        ASSERT(full.status == 400 || full.status == 414 || full.status == 431 ||
               full.status == 501 || full.status == 505);
    }
    /* The caller's buffer is bounded: past the limits, a head is complete or refused. */
    if (r == HTTP_PARSE_INCOMPLETE) {
        struct http_limits d = http_limits_default();
        const struct http_limits *l = lim ? lim : &d;
        ASSERT(len < l->max_request_line + l->max_header_bytes + 12);
    }
    /* Every split point of short inputs, a sample of long ones. */
    size_t step = len <= 256 ? 1 : len / 64;
    for (size_t k = 0; k < len; k += step)
        check_prefix(buf, len, lim, r, k);
    if (r != HTTP_PARSE_OK)
        return;
    ASSERT(full.head_len <= len);
    ASSERT(full.port != 0);
    ASSERT(full.host[0] != '\0' && strlen(full.host) <= HTTP_HOST_MAX);
    ASSERT(full.n_headers <= HTTP_MAX_HEADERS);
    for (size_t i = 0; i < full.n_headers; i++) {
        ASSERT(full.headers[i].name.off + full.headers[i].name.len <= full.head_len);
        ASSERT(full.headers[i].value.off + full.headers[i].value.len <= full.head_len);
    }
    if (!full.is_connect) {
        /* The upstream head is never longer than the client's plus the new Host and
         * Connection lines, a "/", and one space per header ("A:b" becomes "A: b"). */
        size_t cap = full.head_len + HTTP_HOST_MAX + 64 + full.n_headers;
        char *out = malloc(cap);
        ASSERT(out);
        size_t n = http_build_upstream(&full, buf, out, cap);
        ASSERT(n > 0 && n <= cap);
        ASSERT(n >= 4 && memcmp(out + n - 4, "\r\n\r\n", 4) == 0);
        for (size_t i = 0; i < n; i++) {
            ASSERT(out[i] != '\0');
            if (out[i] == '\n')
                ASSERT(i > 0 && out[i - 1] == '\r');
            if (out[i] == '\r')
                ASSERT(i + 1 < n && out[i + 1] == '\n');
        }
        if (n > 1)
            ASSERT(http_build_upstream(&full, buf, out, n - 1) == 0);
        free(out);
    }
    if (full.body == HTTP_BODY_CHUNKED)
        check_chunked(buf + full.head_len, len - full.head_len, (len - full.head_len) / 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    unsigned mode = data[0] % 4;
    /* Copy without the selector bytes so ASan sees the exact end of the input. */
    size_t len = size - 4;
    char *buf = malloc(len ? len : 1);
    if (!buf)
        return 0;
    memcpy(buf, data + 4, len);
    switch (mode) {
    case 0:
        fuzz_request(buf, len, NULL);
        break;
    case 1: {
        /* Tiny limits, so every limit path is reachable with short inputs. */
        struct http_limits lim = {.max_request_line = 8 + data[1] % 128,
                                  .max_header_bytes = (size_t)data[2] * 2,
                                  .max_headers = data[3] % 8};
        fuzz_request(buf, len, &lim);
        break;
    }
    case 2:
        check_chunked(buf, len, data[1] | (size_t)data[2] << 8);
        break;
    default: {
        struct http_response resp;
        enum http_parse_result r = http_parse_response(buf, len, data[1] & 1, &resp);
        if (r == HTTP_PARSE_OK) {
            ASSERT(resp.head_len <= len);
            ASSERT(resp.status_code >= 100 && resp.status_code <= 999);
            for (size_t k = 0; k < resp.head_len; k += 1 + resp.head_len / 32) {
                struct http_response p2;
                ASSERT(http_parse_response(buf, k, data[1] & 1, &p2) != HTTP_PARSE_OK);
            }
        } else if (r == HTTP_PARSE_ERROR) {
            ASSERT(resp.error != NULL);
        }
        char out[1024];
        size_t n =
            http_error_response(data[1] + 300, NULL, len < 512 ? NULL : "x", out, sizeof out);
        ASSERT(n > 0 && n < sizeof out);
        break;
    }
    }
    free(buf);
    return 0;
}
