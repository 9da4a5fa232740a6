/* controller_setup.c — see controller_setup.h. */
#include "controller/controller_setup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/config_wire.h"
#include "policy/layer_dirs.h"
#include "base/fdpass.h"
#include "sandbox/init.h"
#include "sandbox/loopback_guard.h"
#include "policy/lua_host.h"
#include "proxy/port_relay.h"
#include "base/session_socket.h"
#include "base/util.h"

extern char **environ;

/* The sessions' control sockets are never reachable from inside: a command could otherwise
 * drive a session, or answer a question about running itself outside the sandbox (the API also
 * refuses clients from another user namespace). Hiding their directory covers it where the
 * sandbox would show it; under the sandbox's own /tmp or /run there is nothing to cover. */
static void hide_session_sockets(struct sandbox_config *cfg)
{
    char dir[512];
    if (csock_dir(dir, sizeof dir) == 0 && !str_list_contains(&cfg->hidden, dir))
        str_list_push(&cfg->hidden, dir);
}

int controller_resolve(const struct run_flags *flags, const char *cwd, struct sandbox_config *cfg,
                       char *err, size_t errlen)
{
    struct lh_options lopt;
    layer_dirs_default(&lopt);
    /* The project layer: the workspace's .cordon, only when the user trusts it (else one line
     * says why and the lower layers apply). --policy FILE is the user's own choice: no check. */
    layer_dirs_add_project(&lopt, flags->workspace ? flags->workspace : cwd);
    lopt.extra_policy = flags->policy_file;
    if (lh_open(&lopt, err, errlen) < 0)
        return -1;
    /* The network rules are compiled after init has the configuration (controller_compile_network). */
    enum lh_outcome o = lh_resolve_sandbox_config(flags, cwd, getenv("HOME"), environ, cfg, err, errlen);
    if (o != LH_OK)
        return -1;
    if (flags->json != FLAG_UNSET)
        cfg->json = flags->json == FLAG_TRUE;
    hide_session_sockets(cfg);
    /* Fail closed: a sandbox that cannot keep its commands off the loopback is not started. */
    if (loopback_guard_wanted(cfg) && loopback_guard_check(err, errlen) < 0)
        return -1;
    return 0;
}

int controller_send_config(int ctl, const struct sandbox_config *cfg)
{
    int fd = memfd_create("cordon-config", MFD_CLOEXEC);
    int r = fd < 0 ? -errno : config_wire_write(fd, cfg);
    if (r == 0)
        r = fdpass_send(ctl, fd, INIT_MSG_CONFIG);
    if (fd >= 0)
        close(fd);
    return r;
}

static void tell_init_to_abort(int ctl)
{
    char abort_msg = INIT_MSG_ABORT;
    (void)send(ctl, &abort_msg, 1, MSG_NOSIGNAL);
}

int controller_compile_network(int ctl, char *err, size_t errlen)
{
    if (lh_resolve_network(err, errlen) == LH_OK)
        return 0;
    tell_init_to_abort(ctl);
    return -1;
}

int controller_send_filter(int ctl, const struct sandbox_config *cfg, struct sc_program *prog,
                           char *err, size_t errlen)
{
    if (sc_build(cfg, prog, err, errlen) < 0) {
        tell_init_to_abort(ctl);
        return -1;
    }
    size_t len = (size_t)prog->len * sizeof prog->insns[0];
    char *msg = xmalloc(len + 1);
    msg[0] = INIT_MSG_FILTER;
    memcpy(msg + 1, prog->insns, len);
    int r = send(ctl, msg, len + 1, MSG_NOSIGNAL) < 0 ? -errno : 0;
    free(msg);
    return r;
}

/* --publish [HOSTADDR:]HOSTPORT:PORT (HOSTADDR may be bracketed: [::1]). 0, or -1 with err. */
static int parse_publish(const char *spec, char *addr, size_t addrlen, long *host_port, long *port,
                         char *err, size_t errlen)
{
    const char *last = strrchr(spec, ':');
    char *end;
    addr[0] = '\0';
    if (!last || last == spec)
        goto bad;
    *port = strtol(last + 1, &end, 10);
    if (*end || end == last + 1)
        goto bad;
    /* The word before the port is the host port; what is before that, the address. */
    const char *mid = NULL;
    for (const char *p = last - 1; p >= spec && !mid; p--)
        if (*p == ':')
            mid = p;
    const char *hp = mid ? mid + 1 : spec;
    *host_port = strtol(hp, &end, 10);
    if (end != last || end == hp)
        goto bad;
    if (mid) {
        const char *a = spec;
        size_t n = (size_t)(mid - spec);
        if (n >= 2 && a[0] == '[' && a[n - 1] == ']') {
            a++;
            n -= 2;
        }
        if (n == 0 || n >= addrlen)
            goto bad;
        memcpy(addr, a, n);
        addr[n] = '\0';
    }
    return 0;
bad:
    snprintf(err, errlen, "--publish '%.80s': expected [HOSTADDR:]HOSTPORT:PORT (such as 8080:3000 or "
             "127.0.0.1:8080:3000)", spec);
    return -1;
}

int controller_publish(struct port_relay *ports, const struct run_flags *flags, char *err, size_t errlen)
{
    for (size_t i = 0; i < flags->publish.len; i++) {
        char addr[64], why[256];
        long host_port, port;
        if (parse_publish(flags->publish.items[i], addr, sizeof addr, &host_port, &port, err, errlen) < 0)
            return -1;
        if (!ports) {
            snprintf(err, errlen, "--publish: this session has no network of its own (network.unrestricted)");
            return -1;
        }
        if (port < 1 || port > 65535 || host_port < 0 || host_port > 65535) {
            snprintf(err, errlen, "--publish '%s': ports are 1 to 65535 (a host port of 0: any free one)",
                     flags->publish.items[i]);
            return -1;
        }
        struct port_binding b;
        if (port_relay_publish(ports, addr[0] ? addr : NULL, (unsigned)host_port, (unsigned)port, &b, why,
                               sizeof why) < 0) {
            snprintf(err, errlen, "--publish %s: %s", flags->publish.items[i], why);
            return -1;
        }
    }
    return 0;
}
