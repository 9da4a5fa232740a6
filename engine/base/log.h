/* log.h — one-line diagnostics on stderr, and die() for set-up failures.
 * Owns the "cordon:" prefix and the verbosity switch. Uses only stdio.
 * Never used after the supervisor loop starts to end the process: after that, log and keep going. */
#ifndef CORDON_LOG_H
#define CORDON_LOG_H
#include "base/attrs.h"

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level level);
void log_msg(enum log_level level, const char *unit, const char *fmt, ...) CORDON_PRINTF(3, 4);

#define LOG_E(unit, ...) log_msg(LOG_ERROR, unit, __VA_ARGS__)
#define LOG_W(unit, ...) log_msg(LOG_WARN, unit, __VA_ARGS__)
#define LOG_I(unit, ...) log_msg(LOG_INFO, unit, __VA_ARGS__)
#define LOG_D(unit, ...) log_msg(LOG_DEBUG, unit, __VA_ARGS__)

/* "cordon: <message>" and exit(125). Only before the supervisor loop. */
CORDON_NORETURN void die(const char *fmt, ...) CORDON_PRINTF(1, 2);
/* Same, with ": strerror(errno)" appended. */
CORDON_NORETURN void die_errno(const char *fmt, ...) CORDON_PRINTF(1, 2);

/* The exit statuses of every command (docs/exit-status.md): the command's own, 128+N for
 * signal N, 126/127 as a shell does, and these two. CORDON_EXIT_SETUP: cordon itself refused or
 * failed (a usage error, a missing session, a policy error; like env(1)). CORDON_EXIT_TIMEOUT:
 * the command ran out of its time and was stopped (as GNU timeout). */
#define CORDON_EXIT_SETUP 125
#define CORDON_EXIT_TIMEOUT 124
#endif
