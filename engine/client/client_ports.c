/* client_ports.c — see client_ports.h. */
#include "client/client_ports.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli_opt.h"
#include "base/log.h"
#include "base/session_socket.h"
#include "base/util.h"
#include "client/client_http.h"
#include "client/client_reply.h"

#define PUBLISH_SYNOPSIS "cordon publish NAME PORT [HOSTPORT] [--host-addr ADDR] [--json]"
#define UNPUBLISH_SYNOPSIS "cordon unpublish NAME PORT"

static void publish_usage(void)
{
    printf("usage: " PUBLISH_SYNOPSIS "\n"
           "Make session NAME's port PORT (a server listening on the sandbox's 127.0.0.1 or\n"
           "0.0.0.0) reachable from the host at ADDR:HOSTPORT: any TCP (HTTP, WebSocket, ...).\n"
           "HOSTPORT defaults to PORT (0: any free port), ADDR to 127.0.0.1. At most 256\n"
           "connections at once per port. The port stays published until cordon unpublish\n"
           "NAME PORT or the session's end; cordon session status NAME lists them. --json\n"
           "prints the session's answer, {\"port\", \"host_addr\", \"host_port\"}, instead.\n");
}

static void unpublish_usage(void)
{
    printf("usage: " UNPUBLISH_SYNOPSIS "\n"
           "Stop publishing session NAME's port PORT: its listener on the host and its open\n"
           "connections close.\n");
}

/* "8080" -> 8080 when it is lo..65535; -1 otherwise. */
static long parse_port(const char *s, long lo)
{
    char *end;
    if (!s[0] || s[0] < '0' || s[0] > '9' || strlen(s) > 5)
        return -1;
    long v = strtol(s, &end, 10);
    return *end || v < lo || v > 65535 ? -1 : v;
}

int cports_publish_main(int argc, char **argv)
{
    const char *pos[3] = {0}, *addr = NULL;
    int npos = 0;
    bool options = true, json = false;
    if (cli_wants_help(argc - 1, argv + 1)) {
        publish_usage();
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options && strcmp(a, "--") == 0) {
            options = false;
        } else if (options && strcmp(a, "--json") == 0) {
            json = true;
        } else if (options && strncmp(a, "--host-addr", 11) == 0 &&
                   (a[11] == '\0' || a[11] == '=')) {
            if (a[11] == '=')
                addr = a + 12;
            else if (i + 1 < argc)
                addr = argv[++i];
            if (!addr || !addr[0])
                return cli_usage_error("publish", "--host-addr needs an address (usage: %s)",
                                       PUBLISH_SYNOPSIS);
        } else if (options && a[0] == '-' && a[1]) {
            return cli_usage_error("publish", "unknown option '%s' (usage: " PUBLISH_SYNOPSIS ")",
                                   a);
        } else if (npos < 3) {
            pos[npos++] = a;
        } else {
            return cli_usage_error("publish",
                                   "unexpected argument '%s' (usage: " PUBLISH_SYNOPSIS ")", a);
        }
    }
    if (npos < 2)
        return cli_usage_error("publish", "missing %s (usage: " PUBLISH_SYNOPSIS ")",
                               npos ? "PORT" : "NAME");
    if (!csock_name_valid(pos[0]))
        return cli_usage_error("publish", "invalid session name '%s'", pos[0]);
    long port = parse_port(pos[1], 1), host_port = npos > 2 ? parse_port(pos[2], 0) : -1;
    if (port < 0)
        return cli_usage_error("publish", "invalid PORT '%s' (a port in the sandbox, 1 to 65535)",
                               pos[1]);
    if (npos > 2 && host_port < 0)
        return cli_usage_error("publish",
                               "invalid HOSTPORT '%s' (a port on the host, 1 to 65535, or 0 for "
                               "any free one)",
                               pos[2]);
    char *body = NULL;
    struct chttp h;
    struct json_value *v = NULL;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "publish", pos[0], false) != 0)
        goto out;
    char hp[40] = "";
    if (host_port >= 0)
        snprintf(hp, sizeof hp, ",\"host_port\":%ld", host_port);
    if (addr) {
        /* an address holds no quote or backslash worth keeping: refuse them rather than escape */
        if (strpbrk(addr, "\"\\") || strlen(addr) > 63) {
            status = cli_usage_error("publish", "invalid --host-addr '%s' (an IP address)", addr);
            goto out;
        }
        body = xasprintf("{\"port\":%ld%s,\"host_addr\":\"%s\"}", port, hp, addr);
    } else {
        body = xasprintf("{\"port\":%ld%s}", port, hp);
    }
    if (!(v = reply_request_json(&h, "POST", "/v1/ports", body, strlen(body), &status)))
        goto out;
    const char *a = reply_str(v, "host_addr");
    long long got_port, got_host_port;
    if (!a || !reply_int(v, "port", &got_port) || !reply_int(v, "host_port", &got_host_port)) {
        status = reply_malformed("publish",
                                 "the answer has no \"port\", \"host_addr\" and \"host_port\"");
        goto out;
    }
    bool v6 = strchr(a, ':') != NULL;
    if (json)
        reply_print_line(stdout, h.body, h.body_len);
    else
        printf("%s's port %lld is published at %s%s%s:%lld\n", pos[0], got_port, v6 ? "[" : "", a,
               v6 ? "]" : "", got_host_port);
    status = 0;
out:
    free(body);
    json_free(v);
    chttp_close(&h);
    return status;
}

int cports_unpublish_main(int argc, char **argv)
{
    const char *pos[2] = {0};
    int npos = 0;
    if (cli_wants_help(argc - 1, argv + 1)) {
        unpublish_usage();
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("unpublish", "unknown option '%s' (usage: %s)", argv[i],
                                   UNPUBLISH_SYNOPSIS);
        if (npos == 2)
            return cli_usage_error("unpublish", "unexpected argument '%s' (usage: %s)", argv[i],
                                   UNPUBLISH_SYNOPSIS);
        pos[npos++] = argv[i];
    }
    if (npos < 2)
        return cli_usage_error("unpublish", "missing %s (usage: %s)", npos ? "PORT" : "NAME",
                               UNPUBLISH_SYNOPSIS);
    if (!csock_name_valid(pos[0]))
        return cli_usage_error("unpublish", "invalid session name '%s'", pos[0]);
    long port = parse_port(pos[1], 1);
    if (port < 0)
        return cli_usage_error("unpublish", "invalid PORT '%s' (a port in the sandbox, 1 to 65535)",
                               pos[1]);
    struct chttp h;
    struct json_value *v = NULL;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "unpublish", pos[0], false) != 0)
        goto out;
    char path[32];
    snprintf(path, sizeof path, "/v1/ports/%ld", port);
    if (!(v = reply_request_json(&h, "DELETE", path, NULL, 0, &status)))
        goto out;
    printf("%s's port %ld is no longer published\n", pos[0], port);
    status = 0;
out:
    json_free(v);
    chttp_close(&h);
    return status;
}

void cports_print_status(const struct json_value *session)
{
    const struct json_value *hp = reply_array(session, "host_ports");
    if (hp && hp->len > 0) {
        fputs("host_ports:", stdout);
        for (size_t i = 0; i < hp->len; i++)
            if (hp->items[i].type == JSON_NUMBER)
                printf(" %.0f", hp->items[i].number);
        putchar('\n');
    }
    const struct json_value *ports = reply_array(session, "ports");
    if (!ports)
        return;
    if (ports->len == 0) {
        puts("published: none");
        return;
    }
    puts("published:");
    for (size_t i = 0; i < ports->len; i++) {
        const struct json_value *p = &ports->items[i];
        long long port, host_port, open;
        const char *addr = reply_str(p, "host_addr");
        if (!addr || !reply_int(p, "port", &port) || !reply_int(p, "host_port", &host_port))
            continue;
        bool v6 = strchr(addr, ':') != NULL;
        printf("  %lld -> %s%s%s:%lld", port, v6 ? "[" : "", addr, v6 ? "]" : "", host_port);
        if (reply_int(p, "open", &open))
            printf(" (%lld open)", open);
        putchar('\n');
    }
}
