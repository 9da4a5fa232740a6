/* cli.h — parses the `cordon run` command line into struct run_flags. Owns the option table
 * and the usage text. Never touches Lua or the kernel: it only reads argv. */
#ifndef CORDON_CLI_H
#define CORDON_CLI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "attrs.h"
#include "sandbox-t.h"

/* Parse argv[0..argc) (argv[0] is the first word after "run"). 0 on success; -1 with one line
 * in err (unknown flag, missing value, missing command). */
int cli_parse_run(int argc, char **argv, struct run_flags *out, char *err, size_t errlen);
/* `cordon session start NAME [OPTIONS]`: the run options (no command) plus --detach. */
int cli_parse_session_start(int argc, char **argv, struct run_flags *out, const char **name,
                            char *err, size_t errlen);
void cli_usage(FILE *out);
/* For the `cordon policy ...` commands: "--name VALUE" or "--name=VALUE" at argv[*i] gives the
 * value and advances *i; NULL when argv[*i] is not this option (or, with *missing set, when its
 * value is absent). */
const char *cli_opt_value(int argc, char **argv, int *i, const char *name, bool *missing);
/* "cordon: <command>: <message>" on stderr; returns 2, the exit status of a usage error. */
int cli_usage_error(const char *command, const char *fmt, ...) CORDON_PRINTF(2, 3);
#endif
