/* visible.c — see visible.h. Owns the decision of which bytes a terminal would act on and how
 * each is shown. Uses nothing but the string functions. Never lets a control byte, an invalid
 * UTF-8 byte or a listed format character through unescaped, never cuts inside an escape. */
#include "base/visible.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

/* The length of the valid UTF-8 sequence at s[0, n) (2 to 4) and its code point, or 0 when
 * s does not start one (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF). */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char b = s[0];
    size_t len;
    uint32_t c, min;
    if (b >= 0xc2 && b <= 0xdf)
        len = 2, c = b & 0x1f, min = 0x80;
    else if (b >= 0xe0 && b <= 0xef)
        len = 3, c = b & 0x0f, min = 0x800;
    else if (b >= 0xf0 && b <= 0xf4)
        len = 4, c = b & 0x07, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

/* A code point shown as <U+XXXX>: C1 controls, bidi controls, zero-width characters, line and
 * paragraph separators. */
static bool shown_as_code_point(uint32_t c)
{
    return (c >= 0x80 && c <= 0x9f) || c == 0x061c || (c >= 0x200b && c <= 0x200f) ||
           (c >= 0x2028 && c <= 0x202e) || c == 0x2060 || (c >= 0x2066 && c <= 0x2069) ||
           c == 0xfeff;
}

size_t visible_render(const char *src, size_t n, char *out, size_t cap)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        char piece[16];
        size_t plen, used = 1;
        uint32_t cp = 0;
        unsigned char b = s[i];
        if (b == '\t' || b == '\n' || b == '\r') {
            plen = (size_t)snprintf(piece, sizeof piece, "\\%c",
                                    b == '\t'   ? 't'
                                    : b == '\n' ? 'n'
                                                : 'r');
        } else if (b < 0x20 || b == 0x7f) {
            plen = (size_t)snprintf(piece, sizeof piece, "\\x%02x", b);
        } else if (b < 0x80) {
            piece[0] = (char)b;
            plen = 1;
        } else if ((used = utf8_seq(s + i, n - i, &cp)) == 0) {
            used = 1;
            plen = (size_t)snprintf(piece, sizeof piece, "\\x%02x", b);
        } else if (shown_as_code_point(cp)) {
            plen = (size_t)snprintf(piece, sizeof piece, "<U+%04X>", (unsigned)cp);
        } else {
            memcpy(piece, s + i, used);
            plen = used;
        }
        if (o + plen >= cap)
            break;
        memcpy(out + o, piece, plen);
        o += plen;
        i += used;
    }
    out[o] = '\0';
    return o;
}

char *visible_dup(const char *s)
{
    size_t n = strlen(s);
    size_t cap = n * 4 + 1; /* at most 4 shown per byte: \xNN for 1, <U+XXXX> for 2 or 3 */
    char *out = xmalloc(cap);
    visible_render(s, n, out, cap);
    return out;
}
