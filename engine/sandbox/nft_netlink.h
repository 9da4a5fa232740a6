/* Runs in: init (its network thread, else its main thread); `cordon doctor` probes. */
/* nft_netlink.h — the transparent mode's nftables rule, sent to the kernel over netlink
 * (NETLINK_NETFILTER, one nf_tables batch) instead of by running nft(8): a small hand-written
 * builder of the exact messages nft sends for the same rules, and the one call that sends them.
 * Owns the message layout only; uses no libnftnl or libmnl; never reads or changes any rule but
 * its own table (it adds "inet cordon", in the namespace the caller is in). */
#ifndef CORDON_NFT_NETLINK_H
#define CORDON_NFT_NETLINK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The batch that `nft -f` sends for
 *   table inet cordon {
 *     chain out {
 *       type nat hook output priority -100; policy accept;
 *       ip daddr 127.0.0.1 return
 *       ip daddr 127.0.0.53 return
 *       ip6 daddr ::1 return
 *       meta l4proto tcp redirect to :PORT
 *     }
 *   }
 * with sequence numbers from seq (the batch's begin is seq, its end seq + 7). ack: ask for an
 * acknowledgement of the last rule (nft asks none; the bytes are nft's exactly without it).
 * The length written, or 0 when cap is too small. */
size_t nft_netlink_redirect_batch(uint8_t *buf, size_t cap, uint16_t port, uint32_t seq, bool ack);

/* Send that batch in the caller's network namespace and wait for the kernel's answer: 0, or
 * -errno with the reason in err (which part the kernel refused, and why). Needs CAP_NET_ADMIN
 * over the namespace. */
int nft_netlink_add_redirect(uint16_t port, char *err, size_t errlen);
#endif
