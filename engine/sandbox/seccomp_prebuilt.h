/* Runs in: controller (filters compiled at build time). */
/* seccomp_prebuilt.h — the filters of the common rule sets, compiled at build time by
 * engine/sandbox/seccomp_prebuilt_gen.c (see there). A length of 0: not prebuilt, compile at run
 * time. Only seccomp_filter.c uses these. */
#ifndef CORDON_SECCOMP_PREBUILT_H
#define CORDON_SECCOMP_PREBUILT_H
#include <linux/filter.h>

/* The default refusals alone. */
extern const unsigned short sc_prebuilt_default_len;
extern const struct sock_filter sc_prebuilt_default[];
/* The default refusals and socket(AF_UNIX, ...) (block_unix_sockets). */
extern const unsigned short sc_prebuilt_no_unix_len;
extern const struct sock_filter sc_prebuilt_no_unix[];
/* Each of those with a root caller's set-id rules (root_write_caps, root writes). */
extern const unsigned short sc_prebuilt_root_writes_len;
extern const struct sock_filter sc_prebuilt_root_writes[];
extern const unsigned short sc_prebuilt_root_writes_no_unix_len;
extern const struct sock_filter sc_prebuilt_root_writes_no_unix[];
#endif
