/* run_options.h — parses the `cordon run` command line into struct run_flags. Owns the options
 * that are no profile key (a key's flag, with its help, is its row in sandbox/profile_keys.c)
 * and the usage texts of run and session start, each defined once for --help and the usage
 * errors. Never touches Lua or the kernel: it only reads argv. */
#ifndef CORDON_RUN_OPTIONS_H
#define CORDON_RUN_OPTIONS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "base/attrs.h"
#include "sandbox/sandbox-t.h"

/* Parse argv[0..argc) (argv[0] is the first word after "run"). 0 on success; -1 with one line
 * in err (unknown flag, missing value, missing command), ending with the usage. "--help" is not
 * an option here: cli_run_wants_help() comes first. */
int cli_parse_run(int argc, char **argv, struct run_flags *out, char *err, size_t errlen);
/* Whether the words after "run" ask for its usage: "--help" or "-h" among the options, before
 * "--" and before the command (whose own words may be "--help"). */
bool cli_run_wants_help(int argc, char **argv);
/* `cordon session start NAME [OPTIONS]`: the run options (no command) plus --detach or --owner
 * PID (kept as given: session start checks the process). 0 to
 * start; 1 when argv asks for the usage ("--help" or "-h" before any "--"); -1 with one line in
 * err, ending with the usage. */
int cli_parse_session_start(int argc, char **argv, struct run_flags *out, const char **name,
                            char *err, size_t errlen);
/* `cordon run --help` and `cordon session start --help`: the synopsis, then every option. */
void cli_run_usage(FILE *out);
void cli_session_start_usage(FILE *out);
#endif
