/* log.c — see log.h. Writes whole lines with one fprintf so concurrent writers do not interleave
 * mid-line. Must never allocate: it is used on out-of-memory paths. */
#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum log_level current_level = LOG_WARN;

void log_set_level(enum log_level level)
{
    current_level = level;
}

void log_msg(enum log_level level, const char *unit, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    if (level > current_level)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (level >= LOG_INFO)
        fprintf(stderr, "cordon: [%s] %s\n", unit, line);
    else
        fprintf(stderr, "cordon: %s\n", line);
}

static CORDON_NORETURN void vdie(int err, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    if (err)
        fprintf(stderr, "cordon: %s: %s\n", line, strerror(err));
    else
        fprintf(stderr, "cordon: %s\n", line);
    exit(CORDON_EXIT_SETUP);
}

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdie(0, fmt, ap);
}

void die_errno(const char *fmt, ...)
{
    int err = errno;
    va_list ap;
    va_start(ap, fmt);
    vdie(err, fmt, ap);
}
