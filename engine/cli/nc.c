/* nc.c — see nc.h. Blocking I/O with poll: one connection, two directions. Usage errors are
 * "cordon: nc: ..." and once HOST PORT are good, a failure is "cordon nc: ..."; both exit 125.
 * A refusal by the policy names the rule that would allow it: ssh prints this line (it is the
 * ProxyCommand's stderr), and the refusal detector reads the rule's tcp:// form from it. */
#include "cli/nc.h"

#include <arpa/inet.h>
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
#include "base/log.h"
#include "sandbox/init.h"
#include "base/util.h"

#define SYNOPSIS "cordon nc HOST PORT"

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "cordon nc: %s%s\n", what, detail ? detail : "");
    return CORDON_EXIT_SETUP;
}

/* Read exactly n bytes (nothing after the SOCKS reply may be eaten: it is the server's first
 * payload). 0, or -1 when the proxy hung up first. */
static int read_exact(int fd, unsigned char *buf, size_t n)
{
    size_t have = 0;
    while (have < n) {
        ssize_t r;
        RETRY_EINTR(r, read(fd, buf + have, n - have));
        if (r <= 0)
            return -1;
        have += (size_t)r;
    }
    return 0;
}

/* Why the proxy refused, from its SOCKS5 reply code (RFC 1928 section 6). */
static const char *reply_text(unsigned char rep)
{
    switch (rep) {
    case 0x03:
        return "network unreachable";
    case 0x04:
        return "host unreachable";
    case 0x05:
        return "connection refused";
    case 0x06:
        return "timed out";
    default:
        return "the proxy failed";
    }
}

/* The SOCKS5 handshake for host:port: "no authentication", then CONNECT with the host as an
 * address when it is a literal (so the proxy judges the address written) and as a name
 * otherwise (the proxy resolves it). Returns the reply code (0: connected), or -1 when the
 * proxy said nothing sensible. */
static int socks_connect(int fd, const char *host, long port)
{
    unsigned char req[4 + 1 + 255 + 2] = {0x05, 0x01, 0x00};
    size_t n = 3;
    if (write_all(fd, req, n) < 0 || read_exact(fd, req, 2) < 0 || req[0] != 0x05 || req[1] != 0x00)
        return -1;
    struct in_addr a4;
    struct in6_addr a6;
    req[0] = 0x05, req[1] = 0x01, req[2] = 0x00;
    if (inet_pton(AF_INET, host, &a4) == 1) {
        req[3] = 0x01;
        memcpy(req + 4, &a4, 4);
        n = 8;
    } else if (inet_pton(AF_INET6, host, &a6) == 1) {
        req[3] = 0x04;
        memcpy(req + 4, &a6, 16);
        n = 20;
    } else {
        size_t len = strlen(host);
        if (len > 255)
            return -1;
        req[3] = 0x03;
        req[4] = (unsigned char)len;
        memcpy(req + 5, host, len);
        n = 5 + len;
    }
    req[n++] = (unsigned char)(port >> 8);
    req[n++] = (unsigned char)(port & 0xff);
    unsigned char rep[4 + 16 + 2];
    if (write_all(fd, req, n) < 0 || read_exact(fd, rep, 4) < 0 || rep[0] != 0x05)
        return -1;
    if (rep[1] != 0x00)
        return rep[1];
    /* the bound address after a success: its length depends on its type */
    size_t rest = rep[3] == 0x01 ? 4 + 2 : rep[3] == 0x04 ? 16 + 2 : 0;
    if (rep[3] == 0x03) {
        unsigned char len;
        if (read_exact(fd, &len, 1) < 0)
            return -1;
        rest = (size_t)len + 2;
    }
    unsigned char skip[255 + 2];
    if (!rest || read_exact(fd, skip, rest) < 0)
        return -1;
    return 0;
}

static int relay(int sock)
{
    char buf[65536];
    struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = sock, .events = POLLIN}};
    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return CORDON_EXIT_SETUP;
        }
        if (p[0].revents) {
            ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
            if (n <= 0) {
                shutdown(sock, SHUT_WR);
                p[0].fd = -1;
            } else if (write_all(sock, buf, (size_t)n) < 0) {
                return CORDON_EXIT_SETUP;
            }
        }
        if (p[1].revents) {
            ssize_t n = read(sock, buf, sizeof buf);
            if (n <= 0)
                return 0;
            if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
                return CORDON_EXIT_SETUP;
        }
    }
}

static void usage(void)
{
    fputs("usage: " SYNOPSIS "\n"
          "Inside a cordon sandbox: relay stdin and stdout to HOST:PORT through the sandbox's\n"
          "SOCKS5 proxy, which decides by the tcp:// rules whether it may be reached\n"
          "(--network-allow tcp://HOST:PORT); for ssh's ProxyCommand (ProxyCommand cordon nc\n"
          "%h %p, which the sandbox's /etc/ssh/ssh_config sets) and other raw TCP.\n",
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
    if (!**host || strlen(*host) > 255 || strpbrk(*host, " \r\n/@%"))
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
                             .sin_port = htons(PROXY_SOCKS_PORT),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        return fail("no proxy at 127.0.0.1:18081 (cordon nc works inside a cordon sandbox): ",
                    strerror(errno));
    bool v6 = strchr(host, ':') != NULL;
    char where[300];
    snprintf(where, sizeof where, "tcp://%s%.255s%s:%ld", v6 ? "[" : "", host, v6 ? "]" : "", port);
    int rep = socks_connect(fd, host, port);
    if (rep == 0x02) {
        /* The proxy's refusal: its reason is in the run's closing lines and the audit log. */
        fprintf(stderr,
                "cordon nc: the sandbox's network policy does not allow %s "
                "(--network-allow %s would allow it, unless a deny rule names it)\n",
                where, where);
        return CORDON_EXIT_SETUP;
    }
    if (rep != 0) {
        char what[400];
        snprintf(what, sizeof what, "cannot reach %s through the sandbox proxy: ", where + 6);
        return fail(what, rep < 0 ? "no SOCKS5 reply" : reply_text((unsigned char)rep));
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
