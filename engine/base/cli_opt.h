/* cli_opt.h — the option readers every command's parser shares: one long option's value, and
 * the one-line usage error. Knows no command and no cordon concept. */
#ifndef CORDON_CLI_OPT_H
#define CORDON_CLI_OPT_H
#include <stdbool.h>
#include <stddef.h>
#include "base/attrs.h"

/* "--name VALUE" or "--name=VALUE" at argv[*i] gives the
 * value and advances *i; NULL when argv[*i] is not this option (or, with *missing set, when its
 * value is absent). */
const char *cli_opt_value(int argc, char **argv, int *i, const char *name, bool *missing);
/* Whether argv[0..argc) asks for the command's usage: "--help" or "-h" anywhere before the
 * first "--" (the words after it are the command's own). */
bool cli_wants_help(int argc, char **argv);
/* A flag of a command that takes only flags and positional words ("--diff", "--revoke"). */
struct cli_flag {
    const char *name;
    bool *set;
};
/* The words of such a command: each flag in flags[0..nflags) sets its bool; every other word
 * (or any word after "--") is positional, kept in pos[0..max_pos) with *n_pos their count. An
 * unknown option or a word beyond max_pos is a usage error naming command and synopsis: its exit
 * status (125) is returned; -1 when the words were all taken. */
int cli_read_words(int argc, char **argv, const char *command, const char *synopsis,
                   const struct cli_flag *flags, size_t nflags, const char **pos, int max_pos,
                   int *n_pos);
/* "cordon: <command>: <message>" on stderr; returns 125 (CORDON_EXIT_SETUP), the exit status of
 * a usage error, as for every other error of cordon's own. */
int cli_usage_error(const char *command, const char *fmt, ...) CORDON_PRINTF(2, 3);
#endif
