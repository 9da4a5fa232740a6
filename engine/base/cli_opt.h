/* cli_opt.h — the option readers every command's parser shares: one long option's value, and
 * the one-line usage error. Knows no command and no cordon concept. */
#ifndef CORDON_CLI_OPT_H
#define CORDON_CLI_OPT_H
#include <stdbool.h>
#include "base/attrs.h"

/* "--name VALUE" or "--name=VALUE" at argv[*i] gives the
 * value and advances *i; NULL when argv[*i] is not this option (or, with *missing set, when its
 * value is absent). */
const char *cli_opt_value(int argc, char **argv, int *i, const char *name, bool *missing);
/* Whether argv[0..argc) asks for the command's usage: "--help" or "-h" anywhere before the
 * first "--" (the words after it are the command's own). */
bool cli_wants_help(int argc, char **argv);
/* "cordon: <command>: <message>" on stderr; returns 2, the exit status of a usage error. */
int cli_usage_error(const char *command, const char *fmt, ...) CORDON_PRINTF(2, 3);
#endif
