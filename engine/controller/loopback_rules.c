/* loopback_rules.c — see loopback_rules.h. Owns telling a network rule for the sandbox's own
 * loopback from one for another host, and its start-up line. Uses base/util. Must never change
 * the rules or the configuration: the rule stays as given (the sandbox's loopback is what it
 * names), the line only says where the host's service is. */
#include "controller/loopback_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int loopback_rule_port(const char *rule)
{
    if (strncasecmp(rule, "tcp://", 6) == 0)
        rule += 6;
    const char *port = NULL;
    size_t host_len;
    if (rule[0] == '[') {
        const char *end = strchr(rule, ']');
        if (!end)
            return -1;
        host_len = (size_t)(end - rule) + 1;
        port = end[1] == ':' ? end + 2 : NULL;
    } else {
        const char *colon = strchr(rule, ':');
        host_len = colon ? (size_t)(colon - rule) : strlen(rule);
        port = colon ? colon + 1 : NULL;
    }
    char host[64];
    if (host_len == 0 || host_len >= sizeof host)
        return -1;
    memcpy(host, rule, host_len);
    host[host_len] = '\0';
    size_t n = strlen(host);
    if (n > 1 && host[n - 1] == '.')
        host[n - 1] = '\0'; /* a trailing dot names the same host */
    /* the names the sandbox's NO_PROXY lists: clients reach them directly, on the sandbox's
     * own loopback (another 127.x address goes through the proxy to the host's) */
    bool loopback = strcasecmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 ||
                    strcmp(host, "::1") == 0 || strcmp(host, "127.0.0.1") == 0;
    if (!loopback)
        return -1;
    if (!port || !*port)
        return 0;
    char *end;
    long p = strtol(port, &end, 10);
    return *end == '\0' && p >= 1 && p <= 65535 ? (int)p : -1;
}

size_t loopback_rules_say(const struct str_list *allow, const struct sandbox_config *cfg)
{
    size_t said = 0;
    for (size_t i = 0; allow && i < allow->len; i++) {
        int port = loopback_rule_port(allow->items[i]);
        if (port < 0)
            continue;
        bool granted = false;
        for (size_t k = 0; k < cfg->n_host_ports && !granted; k++)
            granted = cfg->host_ports[k] == port;
        if (granted)
            continue;
        if (port > 0)
            fprintf(stderr,
                    "cordon: the network rule %s reaches the host only through the proxy, which "
                    "clients skip for 127.0.0.1, localhost and ::1 (NO_PROXY): they reach the "
                    "sandbox's own loopback; --allow-host-port %d makes the host's 127.0.0.1:%d "
                    "reachable inside\n",
                    allow->items[i], port, port);
        else
            fprintf(stderr,
                    "cordon: the network rule %s reaches the host only through the proxy, which "
                    "clients skip for 127.0.0.1, localhost and ::1 (NO_PROXY): they reach the "
                    "sandbox's own loopback; --allow-host-port PORT makes a port of the host's "
                    "127.0.0.1 reachable inside\n",
                    allow->items[i]);
        said++;
    }
    return said;
}
