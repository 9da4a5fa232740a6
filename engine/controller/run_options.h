/* run_options.h — parses the `cordon run` command line into struct run_flags. Owns the option table
 * and the usage text. Never touches Lua or the kernel: it only reads argv. */
#ifndef CORDON_RUN_OPTIONS_H
#define CORDON_RUN_OPTIONS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "base/attrs.h"
#include "sandbox/sandbox-t.h"

/* Parse argv[0..argc) (argv[0] is the first word after "run"). 0 on success; -1 with one line
 * in err (unknown flag, missing value, missing command). */
int cli_parse_run(int argc, char **argv, struct run_flags *out, char *err, size_t errlen);
/* `cordon session start NAME [OPTIONS]`: the run options (no command) plus --detach. */
int cli_parse_session_start(int argc, char **argv, struct run_flags *out, const char **name,
                            char *err, size_t errlen);
void cli_usage(FILE *out);
#endif
