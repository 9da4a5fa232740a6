/* fuzz_socks5.c — libFuzzer target for socks5.c. The input is what a client sends; it is fed
 * once whole (as the event loop would after one read) and once in pieces whose sizes come
 * from the first byte, and both runs must produce the same events at the same offsets. A
 * request's host must be NUL-terminated, 1..255 bytes of the allowed characters, and its port
 * non-zero. Built and run by `make fuzz` (engine/fuzz/README.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "proxy/socks5.h"

#define MAX_EVENTS 8

struct event {
    enum socks5_result r;
    size_t at; /* offset in the input just after the bytes the event consumed */
};

/* Feed data in pieces of at most `piece` bytes; record every non-NEED_MORE result. */
static size_t run(const uint8_t *data, size_t size, size_t piece, struct event *ev,
                  struct socks5_parser *p)
{
    size_t nev = 0, pos = 0;
    socks5_init(p);
    while (pos < size && nev < MAX_EVENTS) {
        size_t n = size - pos < piece ? size - pos : piece;
        size_t used = 0;
        enum socks5_result r = socks5_feed(p, data + pos, n, &used);
        ASSERT(used <= n);
        pos += used;
        if (r == SOCKS5_NEED_MORE) {
            ASSERT(used == n);
            continue;
        }
        ASSERT(used > 0);
        ev[nev++] = (struct event){r, pos};
        if (r == SOCKS5_GREETING_REPLY) {
            unsigned char reply[2];
            socks5_greeting_reply(p, reply);
            ASSERT(reply[0] == 5 && (reply[1] == 0 || reply[1] == 0xFF));
            if (reply[1] == 0xFF)
                break;
        } else if (r == SOCKS5_REQUEST) {
            size_t hl = strnlen(p->host, sizeof p->host);
            ASSERT(hl >= 1 && hl < sizeof p->host);
            for (size_t i = 0; i < hl; i++) {
                unsigned char c = (unsigned char)p->host[i];
                ASSERT(c > ' ' && c < 0x7f && c != '%' && c != '/' && c != '@' && c != '\\');
            }
            ASSERT(p->port != 0 && p->cmd == SOCKS5_CMD_CONNECT);
            break; /* the rest is payload */
        } else {
            unsigned char reply[10];
            ASSERT(p->error != NULL && p->reply_code >= 1 && p->reply_code <= 8);
            socks5_reply(p->reply_code, reply);
            break;
        }
    }
    return nev;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t piece = 1 + data[0] % 16;
    data++;
    size--;
    struct event a[MAX_EVENTS], b[MAX_EVENTS];
    static struct socks5_parser pa, pb;
    size_t na = run(data, size, size ? size : 1, a, &pa);
    size_t nb = run(data, size, piece, b, &pb);
    ASSERT(na == nb);
    for (size_t i = 0; i < na; i++)
        ASSERT(a[i].r == b[i].r && a[i].at == b[i].at);
    if (na && a[na - 1].r == SOCKS5_REQUEST) {
        ASSERT(strcmp(pa.host, pb.host) == 0 && pa.port == pb.port && pa.atyp == pb.atyp);
    }
    return 0;
}
