/* clock.c — see clock.h. */
#include "base/clock.h"

#include <time.h>

static struct timespec now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts); /* cannot fail for these two clocks */
    return ts;
}

uint64_t clock_mono_ms(void)
{
    struct timespec ts = now(CLOCK_MONOTONIC);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

double clock_mono_ms_f(void)
{
    struct timespec ts = now(CLOCK_MONOTONIC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double clock_wall_s(void)
{
    struct timespec ts = now(CLOCK_REALTIME);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
