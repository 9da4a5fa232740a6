/* name_glob.c — see name_glob.h. Uses nothing. Must never recurse: a pattern of many stars
 * comes from a policy file and must not grow the stack. */
#include "base/name_glob.h"

#include <stddef.h>

bool name_glob_match(const char *p, const char *s)
{
    /* Iterative `*` matcher: remember the last star and retry from one character further. */
    const char *star = NULL, *retry = NULL;
    while (*s) {
        if (*p == '*') {
            star = p++;
            retry = s;
        } else if (*p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++retry;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}
