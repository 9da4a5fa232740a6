/* client_snapshots.c — see client_snapshots.h. */
#include "client/client_snapshots.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cli_opt.h"
#include "base/log.h"
#include "base/session_socket.h"
#include "base/util.h"
#include "base/visible.h"
#include "client/client_http.h"
#include "client/client_reply.h"
#include "client/client_table.h"

#define SNAPSHOT_SYNOPSIS \
    "cordon snapshot NAME [LABEL] [--json] | NAME --list [--json] | NAME --drop LABEL"
#define ROLLBACK_SYNOPSIS "cordon rollback NAME LABEL [--json]"

static void snapshot_usage(void)
{
    printf("usage: " SNAPSHOT_SYNOPSIS "\n"
           "Record the pending changes of session NAME (started with --review) as they are,\n"
           "under LABEL (a plain name: letters, digits, '.', '_', '-'; at most 64 bytes, not\n"
           "starting with '.'), or the next of s1, s2, ... Only what is pending is copied.\n"
           "Prints the label and how many entries it holds. --list lists the snapshots (label,\n"
           "when taken, pending changes); --drop LABEL removes one. cordon rollback NAME LABEL\n"
           "returns the session's workspace to one. Snapshots stay with the workspace's review\n"
           "layer: cordon discard drops pending changes, not snapshots.\n");
}

static void rollback_usage(void)
{
    printf("usage: " ROLLBACK_SYNOPSIS "\n"
           "Return the workspace of session NAME to snapshot LABEL (cordon snapshot NAME --list):\n"
           "its commands see the pending changes as they were then, the host's workspace does not\n"
           "change, and the snapshot stays. Processes that still have the old workspace open\n"
           "(their folder, a file) keep seeing it: they are named in one line on stderr; restart\n"
           "them to see the rollback. Needs Linux 6.5.\n");
}

/* The label rule of the session (session_snapshots.h), checked before asking. */
static bool label_ok(const char *l)
{
    size_t n = strlen(l);
    if (n == 0 || n > 64 || l[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", l[i]))
            return false;
    return true;
}

static int bad_label(const char *cmd, const char *label)
{
    char *shown = visible_dup(label);
    fprintf(stderr,
            "cordon: %s: invalid label '%s' (a plain name: letters, digits, '.', '_' and '-', 1 "
            "to 64 bytes, not starting with '.')\n",
            cmd, shown);
    free(shown);
    return CORDON_EXIT_SETUP;
}

static int list(const char *name, bool json)
{
    struct chttp h;
    struct json_value *v = NULL;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "snapshot", name, false) != 0)
        goto out;
    if (!(v = reply_request_json(&h, "GET", "/v1/snapshots", NULL, 0, &status)))
        goto out;
    const struct json_value *l = json_get(v, "snapshots");
    if (!l || l->type != JSON_ARRAY) {
        status = reply_malformed("snapshot", "the answer has no \"snapshots\" list");
        goto out;
    }
    status = 0;
    if (json) {
        reply_print_line(stdout, h.body, h.body_len);
        goto out;
    }
    if (l->len == 0) {
        printf("no snapshots of session '%s'\n", name);
        goto out;
    }
    static const char *const header[] = {"LABEL", "TAKEN", "CHANGES"};
    struct table t;
    table_init(&t, ARRAY_LEN(header), header);
    for (size_t i = 0; i < l->len; i++) {
        const struct json_value *s = &l->items[i];
        const char *label = reply_str(s, "label");
        double taken = 0;
        long long changes = -1;
        char when[32] = "?", count[24] = "?";
        if (reply_num(s, "taken", &taken)) {
            time_t tt = (time_t)taken;
            struct tm tm;
            if (localtime_r(&tt, &tm))
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        }
        if (reply_int(s, "changes", &changes) && changes >= 0)
            snprintf(count, sizeof count, "%lld", changes);
        char *shown = visible_dup(label ? label : "?");
        table_cell(&t, shown);
        free(shown);
        table_cell(&t, when);
        table_cell(&t, count);
    }
    table_print(&t, stdout);
    table_free(&t);
out:
    json_free(v);
    chttp_close(&h);
    return status;
}

static int drop(const char *name, const char *label)
{
    struct chttp h;
    struct json_value *v = NULL;
    int status = CORDON_EXIT_SETUP;
    char *path = xasprintf("/v1/snapshots/%s", label); /* a checked label needs no escaping */
    if (chttp_open(&h, "snapshot", name, false) != 0)
        goto out;
    if (!(v = reply_request_json(&h, "DELETE", path, NULL, 0, &status)))
        goto out;
    printf("snapshot %s of session '%s' removed\n", label, name);
    status = 0;
out:
    free(path);
    json_free(v);
    chttp_close(&h);
    return status;
}

int csnap_snapshot_main(int argc, char **argv)
{
    const char *name = NULL, *label = NULL, *dropped = NULL;
    bool json = false, listing = false, options = true;
    if (cli_wants_help(argc - 1, argv + 1)) {
        snapshot_usage();
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        bool missing = false;
        const char *v;
        if (options && strcmp(argv[i], "--") == 0)
            options = false;
        else if (options && strcmp(argv[i], "--json") == 0)
            json = true;
        else if (options && strcmp(argv[i], "--list") == 0)
            listing = true;
        else if (options && (v = cli_opt_value(argc, argv, &i, "--drop", &missing)))
            dropped = v;
        else if (missing)
            return cli_usage_error("snapshot", "%s needs a value (usage: " SNAPSHOT_SYNOPSIS ")",
                                   argv[i]);
        else if (options && argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("snapshot", "unknown option '%s' (usage: " SNAPSHOT_SYNOPSIS ")",
                                   argv[i]);
        else if (!name)
            name = argv[i];
        else if (!label)
            label = argv[i];
        else
            return cli_usage_error(
                "snapshot", "unexpected argument '%s' (usage: " SNAPSHOT_SYNOPSIS ")", argv[i]);
    }
    if (!name)
        return cli_usage_error("snapshot", "missing NAME (usage: " SNAPSHOT_SYNOPSIS ")");
    if (!csock_name_valid(name))
        return cli_usage_error("snapshot", "invalid session name '%s'", name);
    if ((listing && (label || dropped)) || (dropped && label))
        return cli_usage_error("snapshot",
                               "--list, --drop LABEL and LABEL go one at a time (usage: "
                               "" SNAPSHOT_SYNOPSIS ")");
    if (listing)
        return list(name, json);
    if (dropped)
        return label_ok(dropped) ? drop(name, dropped) : bad_label("snapshot", dropped);
    if (label && !label_ok(label))
        return bad_label("snapshot", label);
    struct chttp h;
    struct json_value *v = NULL;
    int status = CORDON_EXIT_SETUP;
    char *body = label ? xasprintf("{\"label\":\"%s\"}", label) : xstrdup("{}");
    if (chttp_open(&h, "snapshot", name, false) != 0)
        goto out;
    if (!(v = reply_request_json(&h, "POST", "/v1/snapshots", body, strlen(body), &status)))
        goto out;
    const char *got = reply_str(v, "label");
    long long entries = 0, changes = -1;
    if (!got || !reply_int(v, "entries", &entries)) {
        status = reply_malformed("snapshot", "the answer has no \"label\" or \"entries\"");
        goto out;
    }
    (void)reply_int(v, "changes", &changes);
    status = 0;
    if (json) {
        reply_print_line(stdout, h.body, h.body_len);
        goto out;
    }
    char *shown = visible_dup(got);
    printf("%s\n", shown);
    fprintf(stderr,
            "cordon: snapshot %s of session '%s': %lld entr%s, %lld pending change%s (cordon "
            "rollback %s %s returns to it)\n",
            shown, name, entries, entries == 1 ? "y" : "ies", changes, changes == 1 ? "" : "s",
            name, shown);
    free(shown);
out:
    free(body);
    json_free(v);
    chttp_close(&h);
    return status;
}

int csnap_rollback_main(int argc, char **argv)
{
    const char *pos[2] = {NULL, NULL};
    bool json = false;
    int n = 0, status;
    if (cli_wants_help(argc - 1, argv + 1)) {
        rollback_usage();
        return 0;
    }
    const struct cli_flag flags[] = {{"--json", &json}};
    if ((status = cli_read_words(argc - 1, argv + 1, "rollback", ROLLBACK_SYNOPSIS, flags,
                                 ARRAY_LEN(flags), pos, 2, &n)) >= 0)
        return status;
    if (n < 2)
        return cli_usage_error("rollback", "missing %s (usage: " ROLLBACK_SYNOPSIS ")",
                               n ? "LABEL" : "NAME");
    if (!csock_name_valid(pos[0]))
        return cli_usage_error("rollback", "invalid session name '%s'", pos[0]);
    if (!label_ok(pos[1]))
        return bad_label("rollback", pos[1]);
    struct chttp h;
    struct json_value *v = NULL;
    status = CORDON_EXIT_SETUP;
    char *body = xasprintf("{\"label\":\"%s\"}", pos[1]);
    if (chttp_open(&h, "rollback", pos[0], false) != 0)
        goto out;
    if (!(v = reply_request_json(&h, "POST", "/v1/rollback", body, strlen(body), &status)))
        goto out;
    status = 0;
    const char *line = reply_str(v, "message");
    if (json)
        reply_print_line(stdout, h.body, h.body_len);
    else
        fprintf(stderr, "cordon: session '%s' rolled back to snapshot %s\n", pos[0], pos[1]);
    if (line) {
        char *shown = visible_dup(line);
        fprintf(stderr, "cordon: %s\n", shown);
        free(shown);
    }
out:
    free(body);
    json_free(v);
    chttp_close(&h);
    return status;
}
