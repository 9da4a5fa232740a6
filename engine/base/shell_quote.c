/* shell_quote.c — see shell_quote.h. A word with only safe characters stays as it is; any other
 * is single-quoted, with each ' written as '\''. */
#include "base/shell_quote.h"

#include <string.h>

#include "base/util.h"

static bool word_is_safe(const char *w)
{
    if (!*w)
        return false;
    for (const char *p = w; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=@%+", *p))
            return false;
    return true;
}

char *shell_join(char *const *argv)
{
    size_t n = 1;
    for (char *const *a = argv; a && *a; a++)
        n += strlen(*a) * 4 + 3;
    char *out = xmalloc(n), *o = out;
    for (char *const *a = argv; a && *a; a++) {
        if (a != argv)
            *o++ = ' ';
        if (word_is_safe(*a)) {
            o = stpcpy(o, *a);
            continue;
        }
        *o++ = '\'';
        for (const char *p = *a; *p; p++) {
            if (*p == '\'')
                o = stpcpy(o, "'\\''");
            else
                *o++ = *p;
        }
        *o++ = '\'';
    }
    *o = '\0';
    return out;
}
