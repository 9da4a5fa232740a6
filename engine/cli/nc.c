/* nc.c — see nc.h. Blocking I/O with poll: one connection, two directions. Usage errors are
 * "cordon: nc: ..." with exit 2; once HOST PORT are good, a failure is "cordon nc: ..." and 1. */
#include "cli/nc.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "sandbox/init.h"
#include "base/util.h"

#define SYNOPSIS "cordon nc HOST PORT"

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "cordon nc: %s%s\n", what, detail ? detail : "");
    return 1;
}

/* Read the proxy's answer to CONNECT up to the blank line; the status code or -1. */
static int read_connect_reply(int fd, char *line, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r;
        RETRY_EINTR(r,
                    read(fd, line + n, 1)); /* byte by byte: nothing after the head may be eaten */
        if (r <= 0)
            return -1;
        n++;
        line[n] = '\0';
        if (n >= 4 && memcmp(line + n - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    int status = -1;
    if (sscanf(line, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    char *eol = strstr(line, "\r\n");
    if (eol)
        *eol = '\0';
    return status;
}

static int relay(int sock)
{
    char buf[65536];
    struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = sock, .events = POLLIN}};
    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return 1;
        }
        if (p[0].revents) {
            ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
            if (n <= 0) {
                shutdown(sock, SHUT_WR);
                p[0].fd = -1;
            } else if (write_all(sock, buf, (size_t)n) < 0) {
                return 1;
            }
        }
        if (p[1].revents) {
            ssize_t n = read(sock, buf, sizeof buf);
            if (n <= 0)
                return 0;
            if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
                return 1;
        }
    }
}

static void usage(void)
{
    fputs("usage: " SYNOPSIS "\n"
          "Inside a cordon sandbox: relay stdin and stdout to HOST:PORT through the sandbox's\n"
          "proxy (a CONNECT tunnel), which decides whether it may be reached; for ssh's\n"
          "ProxyCommand (ProxyCommand cordon nc %h %p) and other raw TCP.\n",
          stdout);
}

/* HOST and PORT from argv, or the exit status of a usage error (-1: go on). */
static int parse_args(int argc, char **argv, const char **host, long *port)
{
    const char *pos[2];
    int npos, status;
    if (cli_wants_help(argc, argv)) {
        usage();
        return 0;
    }
    /* nc takes no option */
    if ((status = cli_read_words(argc, argv, "nc", SYNOPSIS, NULL, 0, pos, 2, &npos)) >= 0)
        return status;
    if (npos < 2)
        return cli_usage_error("nc", "missing %s (usage: " SYNOPSIS ")", npos ? "PORT" : "HOST");
    char *end;
    *port = strtol(pos[1], &end, 10);
    if (!pos[1][0] || *end || *port < 1 || *port > 65535)
        return cli_usage_error("nc", "invalid port '%s' (1..65535)", pos[1]);
    *host = pos[0];
    if (!**host || strpbrk(*host, " \r\n/@%"))
        return cli_usage_error("nc", "invalid host '%s'", *host);
    return -1;
}

static int nc_run(int argc, char **argv)
{
    const char *host = NULL;
    long port = 0;
    int usage_status = parse_args(argc, argv, &host, &port);
    if (usage_status >= 0)
        return usage_status;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(PROXY_HTTP_PORT),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        return fail("no proxy at 127.0.0.1:18080 (cordon nc works inside a cordon sandbox): ",
                    strerror(errno));
    bool v6 = strchr(host, ':') != NULL;
    char *req = xasprintf("CONNECT %s%s%s:%ld HTTP/1.1\r\nHost: %s%s%s:%ld\r\n\r\n", v6 ? "[" : "",
                          host, v6 ? "]" : "", port, v6 ? "[" : "", host, v6 ? "]" : "", port);
    int w = write_all(fd, req, strlen(req));
    free(req);
    char reply[4096];
    int status = w < 0 ? -1 : read_connect_reply(fd, reply, sizeof reply);
    if (status != 200) {
        char what[400];
        snprintf(what, sizeof what, "the sandbox proxy refused %s:%ld: ", host, port);
        return fail(what, status < 0 ? "no reply" : reply);
    }
    return relay(fd);
}

int nc_main(int argc, char **argv)
{
    int code = nc_run(argc, argv);
    /* nc runs inside the sandbox: end without exit handlers (nothing is buffered), so a
     * sanitizer build's leak check, which needs ptrace, does not run where ptrace is refused. */
    fflush(NULL);
    _exit(code);
}
