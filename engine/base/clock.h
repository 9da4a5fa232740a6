/* clock.h — the two clocks cordon reads: CLOCK_MONOTONIC for timers, deadlines and durations
 * (never goes back, ignores changes to the date), CLOCK_REALTIME for timestamps people read
 * (the audit log, a job's start and end). Uses only libc; owns no state. */
#ifndef CORDON_CLOCK_H
#define CORDON_CLOCK_H
#include <stdint.h>

/* Monotonic milliseconds, whole. */
uint64_t clock_mono_ms(void);
/* The same clock in fractional milliseconds (to the nanosecond), for measured durations. */
double clock_mono_ms_f(void);
/* Seconds since the epoch, fractional (to the microsecond or better). */
double clock_wall_s(void);
#endif
