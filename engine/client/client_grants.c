/* client_grants.c — see client_grants.h. */
#include "client/client_grants.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cli_opt.h"
#include "base/clock.h"
#include "base/grant_words.h"
#include "base/log.h"
#include "base/session_socket.h"
#include "base/util.h"
#include "base/visible.h"
#include "client/client_http.h"
#include "client/client_reply.h"
#include "client/client_table.h"

#define GRANT_SYNOPSIS "cordon grant NAME --network HOST:PORT [--for D]"
#define GRANTS_SYNOPSIS "cordon grants NAME [--json]"
#define REVOKE_SYNOPSIS "cordon revoke NAME ID"

static void grant_usage(void)
{
    printf("usage: " GRANT_SYNOPSIS "\n"
           "Allow session NAME's commands to reach HOST:PORT (an exact host or IP literal, or\n"
           "[IPV6]:PORT) ahead of any question, as if a person had answered one: until the\n"
           "session ends, or for D (90, 90s, 10m, 2h, 1d; at most a week). The policy's deny\n"
           "rules still win. Prints the grant's id; cordon grants NAME lists the grants and\n"
           "cordon revoke NAME ID ends one.\n");
}

static void grants_usage(void)
{
    printf(
        "usage: " GRANTS_SYNOPSIS "\n"
        "List the grants in force in session NAME: network destinations a person allowed\n"
        "(ids gN) and commands allowed to run again outside the sandbox for the session\n"
        "(ids rN), each with its scope, who gave it, when it ends and, for a destination,\n"
        "the connections open under it. --json prints the session's answer, {\"grants\": [...]}.\n");
}

static void revoke_usage(void)
{
    printf("usage: " REVOKE_SYNOPSIS "\n"
           "End grant ID of session NAME now (cordon grants NAME lists them): the next\n"
           "connection or refused command is decided as if it had never been given, and the\n"
           "connections open under a network grant are closed.\n");
}

/* The positional words of a command that takes only them (and --json when json != NULL). */
static int words(int argc, char **argv, const char *cmd, const char *synopsis, const char **pos,
                 int want, bool *json)
{
    int n = 0;
    bool options = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options && strcmp(a, "--") == 0)
            options = false;
        else if (options && json && strcmp(a, "--json") == 0)
            *json = true;
        else if (options && a[0] == '-' && a[1])
            return cli_usage_error(cmd, "unknown option '%s' (usage: %s)", a, synopsis);
        else if (n < want)
            pos[n++] = a;
        else
            return cli_usage_error(cmd, "unexpected argument '%s' (usage: %s)", a, synopsis);
    }
    if (n < want)
        return cli_usage_error(cmd, "missing %s (usage: %s)", n ? "ID" : "NAME", synopsis);
    if (!csock_name_valid(pos[0]))
        return cli_usage_error(cmd, "invalid session name '%s'", pos[0]);
    return -1;
}

/* "in 9m59s", "in 2h03m", "in 1d02h" from now to expires. */
static void say_left(double expires, char *out, size_t n)
{
    double left = expires - clock_wall_s();
    long s = left > 0 ? (long)(left + 0.5) : 0;
    if (s >= 86400)
        snprintf(out, n, "in %ldd%02ldh", s / 86400, s % 86400 / 3600);
    else if (s >= 3600)
        snprintf(out, n, "in %ldh%02ldm", s / 3600, s % 3600 / 60);
    else if (s >= 60)
        snprintf(out, n, "in %ldm%02lds", s / 60, s % 60);
    else
        snprintf(out, n, "in %lds", s);
}

int cgrants_grant_main(int argc, char **argv)
{
    const char *name = NULL, *dest = NULL, *dur = NULL;
    bool options = true;
    if (cli_wants_help(argc - 1, argv + 1)) {
        grant_usage();
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        bool missing = false;
        const char *v;
        if (options && strcmp(argv[i], "--") == 0) {
            options = false;
        } else if (options && (v = cli_opt_value(argc, argv, &i, "--network", &missing))) {
            dest = v;
        } else if (options && (v = cli_opt_value(argc, argv, &i, "--for", &missing))) {
            dur = v;
        } else if (missing) {
            return cli_usage_error("grant", "%s needs a value (usage: " GRANT_SYNOPSIS ")",
                                   argv[i]);
        } else if (options && argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("grant", "unknown option '%s' (usage: " GRANT_SYNOPSIS ")",
                                   argv[i]);
        } else if (!name) {
            name = argv[i];
        } else {
            return cli_usage_error("grant", "unexpected argument '%s' (usage: " GRANT_SYNOPSIS ")",
                                   argv[i]);
        }
    }
    if (!name)
        return cli_usage_error("grant", "missing NAME (usage: " GRANT_SYNOPSIS ")");
    if (!csock_name_valid(name))
        return cli_usage_error("grant", "invalid session name '%s'", name);
    if (!dest)
        return cli_usage_error("grant", "missing --network HOST:PORT (usage: " GRANT_SYNOPSIS ")");
    char host[256];
    unsigned port;
    if (!gw_parse_destination(dest, host, sizeof host, &port))
        return cli_usage_error("grant",
                               "invalid --network '%s' (one destination: HOST:PORT or "
                               "[IPV6]:PORT, an exact host and a port 1 to 65535)",
                               dest);
    double for_s = 0;
    if (dur && !gw_parse_duration(dur, &for_s))
        return cli_usage_error("grant",
                               "invalid --for '%s' (a duration: 90, 90s, 10m, 2h or 1d; more "
                               "than 0, at most a week)",
                               dur);
    struct chttp h;
    struct json_value *v = NULL;
    char *body = NULL;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "grant", name, false) != 0)
        goto out;
    bool v6 = strchr(host, ':') != NULL;
    /* host holds only letters, digits, '-', '_', '.', ':' (gw_parse_destination): no escaping */
    if (for_s > 0)
        body = xasprintf("{\"network\":\"%s%s%s:%u\",\"for\":%.0f,\"by\":\"cordon grant\"}",
                         v6 ? "[" : "", host, v6 ? "]" : "", port, for_s);
    else
        body = xasprintf("{\"network\":\"%s%s%s:%u\",\"by\":\"cordon grant\"}", v6 ? "[" : "", host,
                         v6 ? "]" : "", port);
    if (!(v = reply_request_json(&h, "POST", "/v1/grants", body, strlen(body), &status)))
        goto out;
    const char *id = reply_str(v, "id");
    if (!id) {
        status = reply_malformed("grant", "the answer has no \"id\"");
        goto out;
    }
    char *shown = visible_dup(id);
    printf("%s\n", shown);
    free(shown);
    double expires = 0;
    char until[64] = "until the session ends";
    if (reply_num(v, "expires", &expires) && expires > 0) {
        char left[32];
        say_left(expires, left, sizeof left);
        snprintf(until, sizeof until, "ending %s", left);
    }
    fprintf(stderr, "cordon: %s%s%s:%u allowed in session '%s', %s (cordon revoke %s ID ends it)\n",
            v6 ? "[" : "", host, v6 ? "]" : "", port, name, until, name);
    status = 0;
out:
    free(body);
    json_free(v);
    chttp_close(&h);
    return status;
}

int cgrants_list_main(int argc, char **argv)
{
    const char *pos[1];
    bool json = false;
    if (cli_wants_help(argc - 1, argv + 1)) {
        grants_usage();
        return 0;
    }
    int r = words(argc, argv, "grants", GRANTS_SYNOPSIS, pos, 1, &json);
    if (r >= 0)
        return r;
    struct chttp h;
    struct json_value *v = NULL;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "grants", pos[0], false) != 0)
        goto out;
    if (!(v = reply_request_json(&h, "GET", "/v1/grants", NULL, 0, &status)))
        goto out;
    const struct json_value *list = reply_array(v, "grants");
    if (!list) {
        status = reply_malformed("grants", "the answer has no \"grants\" list");
        goto out;
    }
    status = 0;
    if (json) {
        reply_print_line(stdout, h.body, h.body_len);
        goto out;
    }
    if (list->len == 0) {
        printf("no grants in force in session '%s'\n", pos[0]);
        goto out;
    }
    static const char *const header[] = {"ID", "KIND", "SCOPE", "EXPIRES", "OPEN", "BY", "TARGET"};
    struct table t;
    table_init(&t, ARRAY_LEN(header), header);
    for (size_t i = 0; i < list->len; i++) {
        const struct json_value *g = &list->items[i];
        const char *id = reply_str(g, "id"), *kind = reply_str(g, "kind");
        const char *scope = reply_str(g, "scope"), *by = reply_str(g, "by");
        const char *target = reply_str(g, "target");
        double expires = 0;
        long long open = -1;
        char left[32] = "-", opened[24] = "-";
        if (reply_num(g, "expires", &expires) && expires > 0)
            say_left(expires, left, sizeof left);
        if (reply_int(g, "open", &open))
            snprintf(opened, sizeof opened, "%lld", open);
        const char *cells[] = {id, kind, scope, left, opened, by, target};
        for (size_t k = 0; k < ARRAY_LEN(cells); k++) {
            /* from the session, a command's words among them: nothing may act on the terminal */
            char *shown = visible_dup(cells[k] ? cells[k] : "?");
            table_cell(&t, shown);
            free(shown);
        }
    }
    table_print(&t, stdout);
    table_free(&t);
out:
    json_free(v);
    chttp_close(&h);
    return status;
}

int cgrants_revoke_main(int argc, char **argv)
{
    const char *pos[2];
    if (cli_wants_help(argc - 1, argv + 1)) {
        revoke_usage();
        return 0;
    }
    int r = words(argc, argv, "revoke", REVOKE_SYNOPSIS, pos, 2, NULL);
    if (r >= 0)
        return r;
    struct chttp h;
    struct json_value *v = NULL;
    char *escaped = NULL, *path = NULL;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "revoke", pos[0], false) != 0)
        goto out;
    escaped = chttp_escape(pos[1]);
    path = xasprintf("/v1/grants/%s", escaped);
    if (!(v = reply_request_json(&h, "DELETE", path, NULL, 0, &status)))
        goto out;
    long long closed = 0;
    (void)reply_int(v, "closed", &closed);
    char *shown = visible_dup(pos[1]);
    printf("grant %s of session '%s' revoked", shown, pos[0]);
    if (closed > 0)
        printf(" (%lld open connection%s closed)", closed, closed == 1 ? "" : "s");
    putchar('\n');
    free(shown);
    status = 0;
out:
    free(path);
    free(escaped);
    json_free(v);
    chttp_close(&h);
    return status;
}
