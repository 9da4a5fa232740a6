/* policy_check.c — see policy_check.h.
 * cordon policy check [DIR | FILE]
 * cordon policy check --help
 * Uses: the Lua host's checks (policy/lua_host.h) and the layer directories (layer_dirs.h).
 * Must never decide what is a problem itself: it prints what the host found. */
#include "cli/policy_check.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json_write.h"
#include "base/log.h"
#include "base/util.h"
#include "policy/layer_dirs.h"
#include "policy/lua_host.h"

#define USAGE "usage: cordon policy check [--json] [DIR | FILE]"

int policy_check_main(int argc, char **argv)
{
    const char *arg = NULL;
    bool options_done = false, json = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!options_done && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            printf(USAGE "\n"
                         "  no argument: every layer and profile cordon run would load here\n"
                         "  DIR: DIR/.cordon (trusted or not) over the built-in and user layers\n"
                         "  FILE: one policy file, or one profile file (in a profiles/ directory)\n"
                         "  --json: one JSON object, {\"problems\": [\"FILE:LINE: ...\", ...]}\n");
            return 0;
        }
        if (!options_done && strcmp(a, "--") == 0) {
            options_done = true;
        } else if (!options_done && strcmp(a, "--json") == 0) {
            json = true;
        } else if (!options_done && a[0] == '-' && a[1]) {
            fprintf(stderr, "cordon: policy check: unknown option '%s' (" USAGE ")\n", a);
            return CORDON_EXIT_SETUP;
        } else if (arg) {
            fprintf(stderr, "cordon: policy check: too many arguments (" USAGE ")\n");
            return CORDON_EXIT_SETUP;
        } else {
            arg = a;
        }
    }

    struct lh_options opt;
    struct str_list problems = {0};
    struct stat st;
    char cwd[PATH_MAX];
    int n;
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, "/");
    layer_dirs_default(&opt);
    if (!arg) { /* no DIR: the current directory's project, when trusted */
        layer_dirs_add_project(&opt, cwd);
        n = lh_check_all(&opt, NULL, &problems);
    } else if (stat(arg, &st) < 0) {
        str_list_push_owned(&problems, xasprintf("%s: %s", arg, strerror(errno)));
        n = 1;
    } else if (S_ISDIR(st.st_mode)) {
        /* absolute: DIR is also the directory its profiles are resolved in */
        char *dir = path_absolute(arg, cwd);
        n = lh_check_all(&opt, dir, &problems);
        free(dir);
    } else {
        n = lh_check_file(&opt, arg, &problems);
    }
    if (json) {
        fputs("{\"problems\":[", stdout);
        for (size_t i = 0; i < problems.len; i++) {
            if (i)
                fputc(',', stdout);
            json_write_string(stdout, problems.items[i]);
        }
        fputs("]}\n", stdout);
    } else {
        for (size_t i = 0; i < problems.len; i++)
            printf("%s\n", problems.items[i]);
        printf("policy check: %d problem%s\n", n, n == 1 ? "" : "s");
    }
    str_list_free(&problems);
    return n ? 1 : 0;
}
