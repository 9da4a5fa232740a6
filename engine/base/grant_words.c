/* grant_words.c — see grant_words.h. */
#include "base/grant_words.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

bool gw_parse_duration(const char *s, double *seconds)
{
    double v = 0;
    size_t i = 0;
    while (s[i] >= '0' && s[i] <= '9' && i < 9)
        v = v * 10 + (s[i++] - '0');
    if (i == 0)
        return false;
    static const struct {
        char unit;
        double s;
    } units[] = {{'\0', 1}, {'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (s[i] != units[k].unit || (s[i] && s[i + 1]))
            continue;
        v *= units[k].s;
        if (v <= 0 || v > GRANT_FOR_MAX_S)
            return false;
        *seconds = v;
        return true;
    }
    return false;
}

bool gw_parse_destination(const char *s, char *host, size_t n, unsigned *port)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || n == 0)
        return false;
    const char *h = s;
    size_t hl = (size_t)(colon - s);
    bool v6 = false;
    if (s[0] == '[') {
        if (hl < 3 || s[hl - 1] != ']')
            return false;
        h = s + 1;
        hl -= 2;
        v6 = true;
    }
    if (hl == 0 || hl >= n || hl > 253)
        return false;
    for (size_t i = 0; i < hl; i++) {
        unsigned char c = (unsigned char)h[i];
        bool ok = v6 ? isxdigit(c) || c == ':' || c == '.'
                     : isalnum(c) || c == '-' || c == '_' || c == '.';
        if (!ok)
            return false;
    }
    if (!v6 && memchr(h, ':', hl))
        return false;
    const char *p = colon + 1;
    size_t pl = strlen(p);
    unsigned v = 0;
    if (pl == 0 || pl > 5)
        return false;
    for (size_t i = 0; i < pl; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        v = v * 10 + (unsigned)(p[i] - '0');
    }
    if (v < 1 || v > 65535)
        return false;
    for (size_t i = 0; i < hl; i++)
        host[i] = (char)tolower((unsigned char)h[i]);
    host[hl] = '\0';
    *port = v;
    return true;
}
