/* trust_cmd.c — see trust_cmd.h. Owns the command's argument syntax, usage text and output:
 * the per-file description (a policy.lua's hooks, through lua_host over the built-in layers),
 * the trusted/revoked lines. Uses policy/trust.h for the scan and the record, layer_dirs for
 * the user's config directory, the session client (GET /v1/session of each of the user's
 * sessions) to refuse while a session whose workspace holds the .cordon runs. Must never: write a record for files it did not just print, or
 * trust a policy.lua that does not load. */
#include "cli/trust_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "base/json_read.h"
#include "base/json_write.h"
#include "base/log.h"
#include "base/session_socket.h"
#include "client/client_http.h"
#include "client/client_reply.h"
#include "base/util.h"
#include "policy/layer_dirs.h"
#include "policy/lua_host.h"
#include "policy/trust.h"

#define SYNOPSIS "cordon trust [--revoke | --status | --list] [--json] [DIR]"

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

/* A session of this user whose workspace holds pdir: its commands could have changed what the
 * person reviewed between the review and this command (a .cordon created in a session is
 * read-only only from its next command on, and a process already inside keeps its open
 * descriptors). So trusting waits for the session to end rather than pin what it may have
 * written. 0 none; 1 after printing the line that names it (or the one that says a session
 * could not be asked: refused too, since it cannot be told). */
static int session_in_the_way(const char *pdir)
{
    char dir[CSOCK_PATH_MAX];
    if (csock_dir(dir, sizeof dir) < 0)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* no socket folder: no session */
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n <= 5 || strcmp(e->d_name + n - 5, ".sock") != 0)
            continue;
        char *name = xasprintf("%.*s", (int)(n - 5), e->d_name);
        struct chttp h;
        if (!csock_name_valid(name)) {
            free(name);
            continue;
        }
        if (chttp_open(&h, "trust", name, true) == 0) {
            if (chttp_request(&h, "GET", "/v1/session", NULL, 0, NULL, NULL) < 0) {
                if (!h.missing) {
                    chttp_lost(&h);
                    fprintf(stderr,
                            "cordon: trust: cannot tell whether session '%s' can write %s: "
                            "refused (stop it, then run cordon trust again)\n",
                            name, pdir);
                    rc = CORDON_EXIT_SETUP;
                }
            } else if (chttp_ok(&h)) {
                struct json_value *v = reply_json(&h);
                const char *ws = v ? reply_str(v, "workspace") : NULL;
                if (ws && path_is_within(pdir, ws)) {
                    fprintf(stderr,
                            "cordon: trust: session '%s' of workspace %s is running, and its "
                            "commands may have changed %s since you reviewed it: refused (stop it "
                            "with cordon session stop %s, review again, then run cordon trust)\n",
                            name, ws, pdir, name);
                    rc = CORDON_EXIT_SETUP;
                }
                json_free(v);
            }
        }
        chttp_close(&h);
        free(name);
    }
    closedir(d);
    return rc;
}

static const char *state_name(enum trust_state st)
{
    switch (st) {
    case TRUST_NO_PROJECT:
        return "no_project";
    case TRUST_TRUSTED:
        return "trusted";
    case TRUST_UNTRUSTED:
        return "untrusted";
    }
    return "untrusted";
}

/* `cordon trust --status`: whether root's .cordon is trusted now, and if not why. 0, as the
 * answer was found. */
static int print_status(const char *config_dir, const char *root, const char *pdir, bool json)
{
    char canon[PATH_MAX], why[1024] = "";
    enum trust_state st = trust_check(config_dir, root, canon, why, sizeof why);
    const char *name = state_name(st);
    if (json) {
        fputs("{\"project\":", stdout);
        json_write_string(stdout, pdir);
        printf(",\"state\":\"%s\",\"why\":", name);
        if (st == TRUST_UNTRUSTED)
            json_write_string(stdout, why);
        else
            fputs("null", stdout);
        fputs("}\n", stdout);
    } else if (st == TRUST_NO_PROJECT) {
        printf("%s: no project policy (nothing to trust)\n", pdir);
    } else if (st == TRUST_TRUSTED) {
        printf("%s: trusted\n", pdir);
    } else {
        printf("%s: not trusted: %s\n", pdir, why);
    }
    return 0;
}

/* `cordon trust --list`: every record under config_dir/trusted, sorted by file name, with its
 * project and whether it is trusted now. A record that cannot be read is named on stderr and
 * makes the exit 125 (the others are still listed). */
static int print_list(const char *config_dir, bool json)
{
    char *dir = xasprintf("%s/trusted", config_dir);
    struct str_list names = {0};
    int rc = 0;
    DIR *d = opendir(dir);
    if (!d && errno != ENOENT) {
        fprintf(stderr, "cordon: trust: %s: %s\n", dir, strerror(errno));
        free(dir);
        return CORDON_EXIT_SETUP;
    }
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".json") == 0)
            str_list_push(&names, e->d_name);
    }
    if (d)
        closedir(d);
    str_list_sort(&names);
    if (json)
        fputs("{\"projects\":[", stdout);
    size_t shown = 0;
    for (size_t i = 0; i < names.len; i++) {
        char *path = xasprintf("%s/%s", dir, names.items[i]), *text = NULL, jerr[160];
        size_t len = 0;
        struct json_value *v = NULL;
        const struct json_value *files;
        const char *root;
        if (read_file(path, O_NOFOLLOW, 1 << 20, &text, &len) < 0 ||
            !(v = json_parse(text, len, jerr, sizeof jerr)) || !(root = reply_str(v, "project")) ||
            !(files = json_get(v, "files")) || files->type != JSON_OBJECT) {
            fprintf(stderr, "cordon: trust: %s: not a trust record cordon can read\n", path);
            rc = CORDON_EXIT_SETUP;
        } else {
            char canon[PATH_MAX], why[1024] = "";
            enum trust_state st = trust_check(config_dir, root, canon, why, sizeof why);
            if (json) {
                fputs(shown ? ",{\"project\":" : "{\"project\":", stdout);
                json_write_string(stdout, root);
                printf(",\"files\":%zu,\"state\":\"%s\",\"why\":", files->len, state_name(st));
                if (st == TRUST_UNTRUSTED)
                    json_write_string(stdout, why);
                else
                    fputs("null", stdout);
                fputc('}', stdout);
            } else {
                printf("%s  %zu file%s  %s%s%s\n", root, files->len, files->len == 1 ? "" : "s",
                       st == TRUST_TRUSTED      ? "trusted"
                       : st == TRUST_NO_PROJECT ? "no project policy any more"
                                                : "not trusted",
                       st == TRUST_UNTRUSTED ? ": " : "", st == TRUST_UNTRUSTED ? why : "");
            }
            shown++;
        }
        json_free(v);
        free(text);
        free(path);
    }
    if (json)
        fputs("]}\n", stdout);
    else if (shown == 0 && rc == 0)
        puts("no trusted projects");
    str_list_free(&names);
    free(dir);
    return rc;
}

static void usage(void)
{
    fputs("usage: " SYNOPSIS "\n"
          "Review a project's policy, DIR/.cordon (default: the current directory): print each\n"
          "file, its SHA-256 and what it changes, then trust exactly those files; cordon run\n"
          "loads the project's layer only while they are unchanged. --revoke forgets them;\n"
          "--status only says whether they are trusted now (and if not, why); --list says it of\n"
          "every project you trusted. --json prints one JSON object instead of the lines.\n",
          stdout);
}

int trust_cmd_main(int argc, char **argv)
{
    bool revoke = false, status_only = false, list = false, json = false;
    const char *dir = NULL;
    int n_dirs, status;
    if (cli_wants_help(argc, argv)) {
        usage();
        return 0;
    }
    const struct cli_flag flags[] = {
        {"--revoke", &revoke}, {"--status", &status_only}, {"--list", &list}, {"--json", &json}};
    if ((status = cli_read_words(argc, argv, "trust", SYNOPSIS, flags, ARRAY_LEN(flags), &dir, 1,
                                 &n_dirs)) >= 0)
        return status;
    if (revoke + status_only + list > 1)
        return cli_usage_error(
            "trust", "--revoke, --status and --list exclude each other (usage: " SYNOPSIS ")");
    if (list && n_dirs)
        return cli_usage_error("trust", "--list takes no DIR (usage: " SYNOPSIS ")");
    struct lh_options opt;
    layer_dirs_default(&opt);
    if (!opt.user_config_dir) {
        fprintf(
            stderr,
            "cordon: trust: no user config directory (set HOME or XDG_CONFIG_HOME to an absolute "
            "path)\n");
        return CORDON_EXIT_SETUP;
    }
    if (list)
        return print_list(opt.user_config_dir, json);
    char *root = realpath(dir ? dir : ".", NULL);
    if (!root) {
        fprintf(stderr, "cordon: trust: %s: %s\n", dir ? dir : ".", strerror(errno));
        return CORDON_EXIT_SETUP;
    }
    char *record = trust_record_path(opt.user_config_dir, root);
    char *pdir = xasprintf("%s/.cordon", root);
    char err[PATH_MAX + 256];
    struct trust_set set = {0};
    int rc = CORDON_EXIT_SETUP;

    if (status_only) {
        rc = print_status(opt.user_config_dir, root, pdir, json);
        goto out;
    }
    if (revoke) {
        bool was = unlink(record) == 0;
        if (was || errno == ENOENT) {
            if (json) {
                fputs("{\"project\":", stdout);
                json_write_string(stdout, pdir);
                printf(",\"revoked\":%s}\n", was ? "true" : "false");
            } else if (was) {
                printf("revoked: %s is no longer trusted\n", pdir);
            } else {
                printf("%s was not trusted\n", pdir);
            }
            rc = 0;
        } else {
            fprintf(stderr, "cordon: trust: %s: %s\n", record, strerror(errno));
        }
        goto out;
    }
    if (session_in_the_way(pdir))
        goto out;
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
    struct json_buf files = {0};
    for (size_t i = 0; i < set.len; i++) {
        char what[1536];
        bool loads = describe(pdir, set.items[i].rel, what, sizeof what);
        ok &= loads;
        if (json && !loads) /* why, where a person reads it: stdout stays empty */
            fprintf(stderr, "cordon: trust: %s: %s\n", set.items[i].rel, what);
        if (json) {
            json_buf_lit(&files, "{\"path\":");
            json_buf_string(&files, set.items[i].rel, strlen(set.items[i].rel));
            json_buf_printf(&files, ",\"sha256\":\"%s\",\"what\":", set.items[i].hash);
            json_buf_string(&files, what, strlen(what));
            json_buf_printf(&files, "}%s", i + 1 < set.len ? "," : "");
        } else {
            printf("%s  sha256:%s  %s\n", set.items[i].rel, set.items[i].hash, what);
        }
    }
    lh_close();
    if (ok && json) {
        /* after the record is written; kept here while the buffer is at hand */
        if (trust_record_save(record, root, &set, err, sizeof err) < 0) {
            fprintf(stderr, "cordon: trust: %s\n", err);
            json_buf_free(&files);
            goto out;
        }
        fputs("{\"project\":", stdout);
        json_write_string(stdout, pdir);
        printf(",\"trusted\":true,\"files\":[%.*s]}\n", (int)files.len,
               files.data ? files.data : "");
        json_buf_free(&files);
        rc = 0;
        goto out;
    }
    json_buf_free(&files);
    if (!ok) {
        fprintf(
            stderr,
            "cordon: trust: not trusted: fix the policy that does not load and run cordon trust again\n");
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
