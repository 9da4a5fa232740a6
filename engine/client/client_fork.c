/* client_fork.c — see client_fork.h. */
#include "client/client_fork.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli_opt.h"
#include "base/json_read.h"
#include "base/json_write.h"
#include "base/log.h"
#include "base/session_socket.h"
#include "base/util.h"
#include "client/client_http.h"
#include "client/client_reply.h"

#define FORK_SYNOPSIS "cordon fork NAME NEW [--json]"

static void fork_usage(void)
{
    printf(
        "usage: " FORK_SYNOPSIS "\n"
        "Start session NEW over session NAME's workspace, NAME's pending changes included\n"
        "and copy-on-write from there: NEW runs in review mode with a layer of its own\n"
        "(cordon review|apply|discard --fork NEW), so several attempts run side by side and\n"
        "each is applied or discarded on its own. NEW gets NAME's start options (profile,\n"
        "network rules, credentials, ...) and NAME's owner (detached when NAME is). When NAME\n"
        "is not in review mode, NEW starts from the host's workspace. --json prints the\n"
        "session's answer, {\"name\", \"socket\", \"workspace\", \"layer\", \"pending_copied\"}.\n");
}

int cfork_main(int argc, char **argv)
{
    const char *pos[2] = {0};
    int npos = 0, status;
    bool json = false;
    if (cli_wants_help(argc - 1, argv + 1)) {
        fork_usage();
        return 0;
    }
    const struct cli_flag flags[] = {{"--json", &json}};
    if ((status = cli_read_words(argc - 1, argv + 1, "fork", FORK_SYNOPSIS, flags, ARRAY_LEN(flags),
                                 pos, 2, &npos)) >= 0)
        return status;
    if (npos < 2)
        return cli_usage_error("fork", "missing %s (usage: " FORK_SYNOPSIS ")",
                               npos ? "NEW" : "NAME");
    for (int i = 0; i < 2; i++)
        if (!csock_name_valid(pos[i]))
            return cli_usage_error("fork",
                                   "invalid session name '%s' (letters, digits, '_', '.', '-'; at "
                                   "most %d; not starting with '.' or '-')",
                                   pos[i], CSOCK_NAME_MAX);
    struct chttp h;
    struct json_value *v = NULL;
    status = CORDON_EXIT_SETUP;
    struct json_buf body = {0};
    if (chttp_open(&h, "fork", pos[0], false) != 0)
        goto out;
    json_buf_lit(&body, "{\"name\":");
    json_buf_string(&body, pos[1], strlen(pos[1]));
    json_buf_lit(&body, "}");
    if (!(v = reply_request_json(&h, "POST", "/v1/fork", body.data, body.len, &status)))
        goto out;
    const char *name = reply_str(v, "name"), *layer = reply_str(v, "layer");
    const struct json_value *copied = json_get(v, "pending_copied");
    if (!name || !layer || !copied || copied->type != JSON_BOOL) {
        status = reply_malformed("fork", "the answer has no \"name\", \"layer\" and "
                                         "\"pending_copied\"");
        goto out;
    }
    if (json)
        reply_print_line(stdout, h.body, h.body_len);
    else if (copied->boolean)
        printf("session '%s' started: a fork of '%s' with its pending changes (cordon review "
               "--fork %s)\n",
               name, pos[0], name);
    else
        printf("session '%s' started: '%s' is not in review mode, so the fork starts from the "
               "host's workspace with an empty layer (cordon review --fork %s)\n",
               name, pos[0], name);
    status = 0;
out:
    json_buf_free(&body);
    json_free(v);
    chttp_close(&h);
    return status;
}
