/* visible.h — a byte string made safe to show a person on a terminal: every byte that a
 * terminal would act on instead of showing, or that would change how the rest of the line
 * reads, is shown as an escape in plain ASCII. Used for every question cordon puts to a person
 * (the command line, a refusal's reason, a destination), so that what is asked about is what is
 * seen: an `ESC[8m` cannot hide the part of a command that runs outside, a cursor movement
 * cannot rewrite a line, a bidi override cannot reorder it.
 *
 * The notation (one for every caller):
 *   \t \n \r                  tab, line feed, carriage return
 *   \xNN                      any other C0 control (U+0000-U+001F), DEL (0x7f), and each byte
 *                             that is not part of valid UTF-8 (a lone 0x9b, an overlong form,
 *                             a surrogate, a truncated sequence), two lower-case hex digits
 *   <U+XXXX>                  C1 controls encoded in UTF-8 (U+0080-U+009F), the bidi controls
 *                             U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, the
 *                             zero-width characters U+200B-U+200D, U+2060, U+FEFF, and the
 *                             line and paragraph separators U+2028, U+2029
 * Everything else (printable ASCII, the backslash itself, valid UTF-8 text) is copied as it is:
 * the rendering is for reading, not for parsing back. Never allocates except visible_dup(). */
#ifndef CORDON_VISIBLE_H
#define CORDON_VISIBLE_H
#include <stddef.h>

/* The rendering of src[0, n) into out (cap bytes, cap > 0), always NUL-terminated; what does
 * not fit is cut before a whole escape or character, never inside one. Returns the length
 * written (without the NUL). */
size_t visible_render(const char *src, size_t n, char *out, size_t cap);
/* The rendering of the C string s, newly allocated (never NULL: xmalloc). */
char *visible_dup(const char *s);
#endif
