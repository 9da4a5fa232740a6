/* controller_setup.c — see controller_setup.h. */
#include "controller/controller_setup.h"

#include <errno.h>
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
#include "proxy/proxy.h"
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

/* The extra listeners of this process's sandbox (see controller_setup.h). */
static struct {
    int expected;
    int dns_udp, dns_tcp, transparent;
    bool no_transparent; /* init said the kernel cannot; the profile goes on without */
} extra = {0, -1, -1, -1, false};

int controller_extra_listeners(void) { return extra.expected; }

bool controller_take_listener(char tag, int fd)
{
    int *slot = tag == INIT_MSG_DNS_UDP ? &extra.dns_udp : tag == INIT_MSG_DNS_TCP ? &extra.dns_tcp
              : tag == INIT_MSG_TRANSPARENT ? &extra.transparent : NULL;
    if (tag == INIT_MSG_NO_TRANSPARENT) {
        extra.no_transparent = true;
        close(fd); /* a placeholder */
        return true;
    }
    if (!slot)
        return false;
    if (*slot >= 0)
        close(*slot);
    *slot = fd;
    return true;
}

void controller_attach_listeners(struct proxy *px)
{
    if (px && (extra.dns_udp >= 0 || extra.dns_tcp >= 0))
        (void)proxy_attach_dns(px, extra.dns_udp, extra.dns_tcp);
    else {
        if (extra.dns_udp >= 0)
            close(extra.dns_udp);
        if (extra.dns_tcp >= 0)
            close(extra.dns_tcp);
    }
    if (px && extra.transparent >= 0)
        (void)proxy_attach_transparent(px, extra.transparent);
    else if (extra.transparent >= 0)
        close(extra.transparent);
    extra.dns_udp = extra.dns_tcp = extra.transparent = -1;
}

int controller_send_config(int ctl, const struct sandbox_config *cfg)
{
    extra.expected = cfg->net_unrestricted ? 0 : 2 + (cfg->net_transparent != NET_TRANSPARENT_OFF ? 1 : 0);
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
