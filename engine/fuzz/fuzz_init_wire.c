/* fuzz_init_wire.c — libFuzzer target for the receiver's check of sandbox/init_wire.c. Byte 0:
 * bits 0-1 the descriptors that came with the packet (0..3), bit 2 the kernel cut it; the rest
 * is the packet. Beyond no crash: an accepted packet's payload is exactly what follows the
 * header and within its tag's limits, its tag has a name, its descriptors are the header's
 * count (at most two); the same packet one byte shorter, or with one descriptor fewer or more,
 * is refused. Built and run by `make fuzz`. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "sandbox/init_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int nfds = data[0] & 3, truncated = (data[0] >> 2) & 1;
    const uint8_t *packet = data + 1;
    size_t n = size - 1;
    struct init_wire_msg m;
    long r = init_wire_parse(packet, n, nfds, truncated, &m);
    if (r < 0) {
        ASSERT(init_wire_refused(r));
        ASSERT(init_wire_strerror(r)[0] != '\0');
        return 0;
    }
    ASSERT(!truncated && n >= sizeof m && (size_t)r == n - sizeof m && m.len == (uint32_t)r);
    ASSERT(m.tag > 0 && m.tag < INIT_WIRE_TAG_END);
    ASSERT(strncmp(init_wire_tag_name(m.tag), "INIT_WIRE_", 10) == 0);
    ASSERT(m.nfds == nfds && nfds <= 2 && m.pad == 0);
    ASSERT((m.flags & ~(INIT_WIRE_BACKGROUND | INIT_WIRE_FRESH)) == 0);
    ASSERT(m.tag != INIT_WIRE_SPAWN || (r >= 1 && r <= INIT_WIRE_MAX_COMMAND && nfds == 2));
    ASSERT(m.tag != INIT_WIRE_STATUS || (size_t)r == sizeof(struct init_wire_status));
    struct init_wire_msg other;
    ASSERT(init_wire_parse(packet, n - 1, nfds, 0, &other) < 0);
    ASSERT(init_wire_parse(packet, n, nfds + 1, 0, &other) == -EBADFD);
    if (nfds > 0)
        ASSERT(init_wire_parse(packet, n, nfds - 1, 0, &other) == -EBADFD);
    return 0;
}
