/* test_session_asker.c — asker_tcp_inode() against /proc/net/tcp and tcp6 text: the socket
 * whose local address is the proxy's client, not a listener at it, not the proxy's own side,
 * and none when two match. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "session/session_asker.h"
#include "test.h"

static const char header[] = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
                             "retrnsmt   uid  timeout inode\n";

static struct sockaddr_storage v4(const char *addr, unsigned port)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *a = (struct sockaddr_in *)&ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, addr, &a->sin_addr);
    return ss;
}

static void test_v4(void)
{
    char table[2048];
    /* 127.0.0.1:18080 listening (0A), the proxy's accepted side (local 18080), the client
     * (local 127.0.0.1:40000 = 0x9C40, remote the proxy) */
    snprintf(table, sizeof table,
             "%s"
             "   0: 0100007F:46A0 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534 "
             "       0 111 1 0000000000000000 100 0 0 10 0\n"
             "   1: 0100007F:46A0 0100007F:9C40 01 00000000:00000000 00:00000000 00000000 65534 "
             "       0 222 1 0000000000000000 20 4 30 10 -1\n"
             "   2: 0100007F:9C40 0100007F:46A0 01 00000000:00000000 00:00000000 00000000 65534 "
             "       0 333 1 0000000000000000 20 4 30 10 -1\n",
             header);
    struct sockaddr_storage c = v4("127.0.0.1", 40000);
    CHECK_EQ_INT(asker_tcp_inode(table, &c), 333);
    struct sockaddr_storage other = v4("127.0.0.1", 40001);
    CHECK_EQ_INT(asker_tcp_inode(table, &other), 0);
    /* a listener at the address is no asker */
    struct sockaddr_storage listener = v4("127.0.0.1", 18080);
    CHECK_EQ_INT(asker_tcp_inode(table, &listener), 222);
}

static void test_ambiguous(void)
{
    char table[1024];
    snprintf(table, sizeof table,
             "%s"
             "   0: 0100007F:9C40 0100007F:46A0 01 00000000:00000000 00:00000000 00000000 0 0 "
             "444 1\n"
             "   1: 0100007F:9C40 0200007F:0050 01 00000000:00000000 00:00000000 00000000 0 0 "
             "555 1\n",
             header);
    struct sockaddr_storage c = v4("127.0.0.1", 40000);
    CHECK_EQ_INT(asker_tcp_inode(table, &c), 0);
}

static void test_v6(void)
{
    char table[1024];
    /* ::1 port 40000 */
    snprintf(table, sizeof table,
             "%s"
             "   0: 00000000000000000000000001000000:9C40 00000000000000000000000001000000:46A0 "
             "01 00000000:00000000 00:00000000 00000000 0 0 666 1\n",
             header);
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(40000);
    a->sin6_addr = in6addr_loopback;
    CHECK_EQ_INT(asker_tcp_inode(table, &ss), 666);
    struct sockaddr_storage c4 = v4("127.0.0.1", 40000); /* another family's table */
    CHECK_EQ_INT(asker_tcp_inode(table, &c4), 0);
}

TEST_MAIN({"v4", test_v4}, {"ambiguous", test_ambiguous}, {"v6", test_v6})
