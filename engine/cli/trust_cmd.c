/* trust_cmd.c — see trust_cmd.h. Owns the command's argument syntax, usage text and output:
 * the per-file description (a policy.lua's hooks, through lua_host over the built-in layers),
 * the trusted/revoked lines. Uses policy/trust.h for the scan and the record, layer_dirs for
 * the user's config directory. Must never: write a record for files it did not just print, or
 * trust a policy.lua that does not load. */
#include "cli/trust_cmd.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "base/util.h"
#include "policy/layer_dirs.h"
#include "policy/lua_host.h"
#include "policy/trust.h"

#define SYNOPSIS "cordon trust [--revoke] [DIR]"

/* What a file of .cordon changes, in words. false when it must not be trusted (policy.lua
 * does not load). */
static bool describe(const char *pdir, const char *rel, char *out, size_t outlen)
{
    size_t l = strlen(rel);
    if (strcmp(rel, "policy.lua") == 0) {
        char *path = xasprintf("%s/%s", pdir, rel);
        char hooks[1024];
        int r = lh_layer_hooks(path, hooks, sizeof hooks);
        free(path);
        if (r < 0) {
            snprintf(out, outlen, "does not load: %s", hooks);
            return false;
        }
        snprintf(out, outlen, "policy layer, hooks: %s", hooks[0] ? hooks : "none");
    } else if (strncmp(rel, "profiles/", 9) == 0 && !strchr(rel + 9, '/') && l > 13 &&
               strcmp(rel + l - 4, ".lua") == 0) {
        snprintf(out, outlen, "profile '%.*s' (used before the user's and built-in ones)",
                 (int)(l - 13), rel + 9);
    } else if (strncmp(rel, "tests/", 6) == 0 && !strchr(rel + 6, '/') && l > 11 &&
               strcmp(rel + l - 5, ".json") == 0) {
        snprintf(out, outlen, "policy test cases");
    } else {
        snprintf(out, outlen, "not read by cordon");
    }
    return true;
}

static void usage(void)
{
    fputs("usage: " SYNOPSIS "\n"
          "Review a project's policy, DIR/.cordon (default: the current directory): print each\n"
          "file, its SHA-256 and what it changes, then trust exactly those files; cordon run\n"
          "loads the project's layer only while they are unchanged. --revoke forgets them.\n",
          stdout);
}

int trust_cmd_main(int argc, char **argv)
{
    bool revoke = false, options = true;
    const char *dir = NULL;
    if (cli_wants_help(argc, argv)) {
        usage();
        return 0;
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (options && strcmp(a, "--") == 0)
            options = false;
        else if (options && strcmp(a, "--revoke") == 0)
            revoke = true;
        else if (options && a[0] == '-' && a[1] != '\0')
            return cli_usage_error("trust", "unknown option '%s' (usage: " SYNOPSIS ")", a);
        else if (!dir)
            dir = a;
        else
            return cli_usage_error("trust", "too many arguments at '%s' (usage: " SYNOPSIS ")", a);
    }
    struct lh_options opt;
    layer_dirs_default(&opt);
    if (!opt.user_config_dir) {
        fprintf(stderr, "cordon: trust: no user config directory (set HOME or XDG_CONFIG_HOME)\n");
        return 1;
    }
    char *root = realpath(dir ? dir : ".", NULL);
    if (!root) {
        fprintf(stderr, "cordon: trust: %s: %s\n", dir ? dir : ".", strerror(errno));
        return 1;
    }
    char *record = trust_record_path(opt.user_config_dir, root);
    char *pdir = xasprintf("%s/.cordon", root);
    char err[PATH_MAX + 256];
    struct trust_set set = {0};
    int rc = 1;

    if (revoke) {
        if (unlink(record) == 0) {
            printf("revoked: %s is no longer trusted\n", pdir);
            rc = 0;
        } else if (errno == ENOENT) {
            printf("%s was not trusted\n", pdir);
            rc = 0;
        } else {
            fprintf(stderr, "cordon: trust: %s: %s\n", record, strerror(errno));
        }
        goto out;
    }
    if (trust_scan(pdir, &set, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: trust: %s\n", err);
        goto out;
    }
    /* A state with the built-in layers only, to say what policy.lua defines. */
    if (lh_open(&opt, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: trust: %s\n", err);
        goto out;
    }
    bool ok = true;
    for (size_t i = 0; i < set.len; i++) {
        char what[1536];
        ok &= describe(pdir, set.items[i].rel, what, sizeof what);
        printf("%s  sha256:%s  %s\n", set.items[i].rel, set.items[i].hash, what);
    }
    lh_close();
    if (!ok) {
        fprintf(stderr, "cordon: trust: not trusted: fix the policy that does not load and run cordon trust again\n");
        goto out;
    }
    if (trust_record_save(record, root, &set, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: trust: %s\n", err);
        goto out;
    }
    printf("trusted: %zu file%s of %s\n", set.len, set.len == 1 ? "" : "s", pdir);
    rc = 0;
out:
    trust_set_free(&set);
    free(pdir);
    free(record);
    free(root);
    return rc;
}
