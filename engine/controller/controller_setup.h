/* controller_setup.h — the steps every controller (`cordon run`, a session) takes while its
 * freshly cloned init waits: resolve the profile through the policy layers, hand init the
 * configuration, build the seccomp filter and hand it over too. On failure the caller kills
 * init (which never runs anything) and reports err. */
#ifndef CORDON_CONTROLLER_SETUP_H
#define CORDON_CONTROLLER_SETUP_H
#include <stddef.h>
#include "sandbox/sandbox-t.h"
#include "sandbox/seccomp_filter.h"

/* The policy layers (built-in, user, trusted project of the workspace, --policy) and the
 * profile hook: flags merged over the named profile. 0, or -1 with the reason in err. The
 * profile's network rules are not compiled yet: controller_compile_network() does that once
 * init has the configuration, so that it overlaps with the building of the sandbox. */
int controller_resolve(const struct run_flags *flags, const char *cwd, struct sandbox_config *cfg,
                       char *err, size_t errlen);
/* The resolved configuration to init in a memfd. 0; -EPIPE/-ECONNRESET when init already failed
 * its set-up (it said why); another -errno otherwise. */
int controller_send_config(int ctl, const struct sandbox_config *cfg);
/* Compile the resolved profile's network rules (an invalid entry fails here) for the proxy;
 * when that fails, tell init to abort. 0, or -1 with the reason in err. */
int controller_compile_network(int ctl, char *err, size_t errlen);
/* Compile the filter and send it (or, when that fails, tell init to abort). 0, -EPIPE as above,
 * or -1 with the reason in err. */
int controller_send_filter(int ctl, const struct sandbox_config *cfg, struct sc_program *prog,
                           char *err, size_t errlen);
struct port_relay;
/* Publish what --publish [HOSTADDR:]HOSTPORT:PORT asked for (flags->publish) on ports. 0, or -1
 * with one line in err for the first that cannot be (bad syntax, a taken host port, no network
 * namespace: ports NULL). */
int controller_publish(struct port_relay *ports, const struct run_flags *flags, char *err, size_t errlen);
#endif
