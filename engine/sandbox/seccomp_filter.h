/* Runs in: controller (compiles); the command's process (loads). */
/* seccomp_filter.h — the libseccomp filter a profile asks for, compiled once to classic BPF in
 * the controller (so an error stops cordon before any namespace exists) and loaded in the
 * command's process right before exec. Uses libseccomp; never loads a filter itself except
 * through sc_load(). Unknown architectures are an error, never "run unfiltered". */
#ifndef CORDON_SECCOMP_FILTER_H
#define CORDON_SECCOMP_FILTER_H
#include <stddef.h>
#include "sandbox/sandbox-t.h"

struct sock_filter;
struct sc_program {
    struct sock_filter *insns;
    unsigned short len;
};

/* Build the filter for cfg: the default refusals (socket families other than AF_UNIX,
 * AF_INET, AF_INET6 and AF_NETLINK among them, EAFNOSUPPORT), cfg->seccomp_deny, and
 * socket(AF_UNIX) when cfg->block_unix_sockets. 0, or -1 with one line in err (unknown syscall
 * name in the profile, unsupported architecture, libseccomp failure). */
int sc_build(const struct sandbox_config *cfg, struct sc_program *out, char *err, size_t errlen);
/* The same, always through libseccomp (sc_build takes the program compiled at build time when
 * cfg asks for no more than the default refusals and block_unix_sockets). */
int sc_compile(const struct sandbox_config *cfg, struct sc_program *out, char *err, size_t errlen);
/* Load a built program into the calling thread (no_new_privs must already be set).
 * Async-signal-safe: called between fork and exec. 0 or -errno. */
int sc_load(const struct sc_program *prog);
void sc_program_free(struct sc_program *prog);
#endif
