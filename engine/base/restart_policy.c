/* restart_policy.c — see restart_policy.h. */
#include "base/restart_policy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole decimal number 1..RESTART_MAX_COUNT, nothing else. */
static bool parse_count(const char *s, unsigned *out)
{
    unsigned long v = 0;
    if (!*s || strlen(s) > 7)
        return false;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (v < 1 || v > RESTART_MAX_COUNT)
        return false;
    *out = (unsigned)v;
    return true;
}

bool restart_policy_parse(const char *s, struct restart_policy *out, char *err, size_t errlen)
{
    static const struct {
        const char *word;
        enum restart_when when;
    } words[] = {{"on-failure", RESTART_ON_FAILURE}, {"always", RESTART_ALWAYS}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i].word);
        if (strncmp(s, words[i].word, n) != 0 || (s[n] != '\0' && s[n] != ':'))
            continue;
        unsigned max = 0;
        if (s[n] == ':' && !parse_count(s + n + 1, &max)) {
            snprintf(err, errlen,
                     "invalid restart count in '%.40s' (%s:N takes N from 1 to %u; without :N "
                     "there is no limit)",
                     s, words[i].word, RESTART_MAX_COUNT);
            return false;
        }
        out->when = words[i].when;
        out->max = max;
        return true;
    }
    snprintf(err, errlen, "invalid restart policy '%.40s' (on-failure[:N] or always[:N])", s);
    return false;
}

bool restart_backoff_valid(double seconds)
{
    return isfinite(seconds) && seconds >= RESTART_BACKOFF_MIN && seconds <= RESTART_WAIT_CEILING;
}

bool restart_backoff_parse(const char *s, double *out, char *err, size_t errlen)
{
    size_t n = strlen(s);
    double unit = 1;
    if (n > 1 && strchr("smh", s[n - 1])) {
        unit = s[n - 1] == 'm' ? 60 : s[n - 1] == 'h' ? 3600 : 1;
        n--;
    }
    /* digits with at most one '.': strtod alone would take signs, blanks, hex, "inf" */
    bool ok = n > 0 && n < 32 && strspn(s, "0123456789.") >= n;
    char num[32] = "";
    if (ok) {
        memcpy(num, s, n);
        num[n] = '\0';
        const char *dot = strchr(num, '.');
        ok = strcmp(num, ".") != 0 && (!dot || !strchr(dot + 1, '.'));
    }
    double v = 0;
    if (ok) {
        errno = 0;
        char *end;
        v = strtod(num, &end) * unit;
        ok = *end == '\0' && errno == 0 && restart_backoff_valid(v);
    }
    if (!ok) {
        snprintf(err, errlen,
                 "invalid backoff '%.40s' (a duration from %gs to %gm: seconds like 0.5, or 10s, "
                 "2m)",
                 s, RESTART_BACKOFF_MIN, RESTART_WAIT_CEILING / 60);
        return false;
    }
    *out = v;
    return true;
}

double restart_wait(const struct restart_policy *p, unsigned long n, bool *capped)
{
    double wait = p->backoff;
    /* doubling past the ceiling stops early: 2^63 waits never come */
    for (unsigned long i = 1; i < n && wait < RESTART_WAIT_CEILING; i++)
        wait *= 2;
    *capped = wait >= RESTART_WAIT_CEILING;
    return *capped ? RESTART_WAIT_CEILING : wait;
}

void restart_policy_format(const struct restart_policy *p, char *out, size_t outlen)
{
    const char *word = p->when == RESTART_ALWAYS       ? "always"
                       : p->when == RESTART_ON_FAILURE ? "on-failure"
                                                       : "no";
    if (p->when != RESTART_NO && p->max > 0)
        snprintf(out, outlen, "%s:%u", word, p->max);
    else
        snprintf(out, outlen, "%s", word);
}

void restart_say_seconds(double seconds, char *out, size_t outlen)
{
    if (seconds < 60) {
        snprintf(out, outlen, "%gs", round(seconds * 1000) / 1000);
        return;
    }
    long whole = lround(seconds);
    if (whole % 60)
        snprintf(out, outlen, "%ldm%lds", whole / 60, whole % 60);
    else
        snprintf(out, outlen, "%ldm", whole / 60);
}
