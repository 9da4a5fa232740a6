/* test_loopback_rules.c — which network rules name the sandbox's own loopback, and the host's
 * listening loopback ports as the controller reads them (a real socket of this process). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "controller/host_listening.h"
#include "controller/loopback_rules.h"
#include "test.h"
#include "base/util.h"

static void test_rule_ports(void)
{
    CHECK(loopback_rule_port("127.0.0.1:8080") == 8080);
    CHECK(loopback_rule_port("127.0.0.2:5432") == -1); /* through the proxy, the host's */
    CHECK(loopback_rule_port("localhost:3000") == 3000);
    CHECK(loopback_rule_port("LOCALHOST.:3000") == 3000);
    CHECK(loopback_rule_port("tcp://127.0.0.1:22") == 22);
    CHECK(loopback_rule_port("[::1]:80") == 80);
    CHECK(loopback_rule_port("127.0.0.1") == 0);
    CHECK(loopback_rule_port("localhost") == 0);
    CHECK(loopback_rule_port("example.com:80") == -1);
    CHECK(loopback_rule_port("127.0.0.1.example.com:80") == -1);
    CHECK(loopback_rule_port("10.0.0.127:80") == -1);
    CHECK(loopback_rule_port("*:443") == -1);
    CHECK(loopback_rule_port("[::2]:80") == -1);
}

/* A port this process listens on at 127.0.0.1 is listed; one it only bound (not listening) is
 * not: the list is of services, not of sockets. */
static void test_listening_ports(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0), b = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(l >= 0 && b >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
    CHECK(bind(b, (struct sockaddr *)&a, sizeof a) == 0);
    socklen_t len = sizeof a;
    CHECK(getsockname(l, (struct sockaddr *)&a, &len) == 0);
    char lport[8], bport[8];
    snprintf(lport, sizeof lport, "%u", ntohs(a.sin_port));
    len = sizeof a;
    CHECK(getsockname(b, (struct sockaddr *)&a, &len) == 0);
    snprintf(bport, sizeof bport, "%u", ntohs(a.sin_port));
    struct str_list ports = {0};
    CHECK(host_listening_ports(&ports) >= 1);
    CHECK(str_list_contains(&ports, lport));
    CHECK(!str_list_contains(&ports, bport));
    str_list_free(&ports);
    close(l);
    close(b);
}

TEST_MAIN({"rules naming the loopback, and their ports", test_rule_ports},
          {"the listening loopback ports of this namespace", test_listening_ports})
