/* cli_opt.c — see cli_opt.h. */
#include "base/cli_opt.h"
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *cli_opt_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

int cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cordon: %s: ", command);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CORDON_EXIT_SETUP;
}

int cli_read_words(int argc, char **argv, const char *command, const char *synopsis,
                   const struct cli_flag *flags, size_t nflags, const char **pos, int max_pos,
                   int *n_pos)
{
    bool options = true;
    *n_pos = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (options && strcmp(a, "--") == 0) {
            options = false;
            continue;
        }
        if (options && a[0] == '-' && a[1] != '\0') {
            size_t f = 0;
            while (f < nflags && strcmp(a, flags[f].name) != 0)
                f++;
            if (f == nflags)
                return cli_usage_error(command, "unknown option '%s' (usage: %s)", a, synopsis);
            *flags[f].set = true;
        } else if (*n_pos < max_pos) {
            pos[(*n_pos)++] = a;
        } else {
            return cli_usage_error(command, "too many arguments at '%s' (usage: %s)", a, synopsis);
        }
    }
    return -1;
}
