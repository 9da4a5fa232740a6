/* controller_setup.c — see controller_setup.h. */
#include "controller/controller_setup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/config_wire.h"
#include "policy/layer_dirs.h"
#include "base/fdpass.h"
#include "sandbox/init.h"
#include "sandbox/loopback_guard.h"
#include "policy/lua_host.h"
#include "base/session_socket.h"
#include "base/log.h"
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

/* The fallback for limits.pids without a cgroup: RLIMIT_NPROC, which the kernel counts per
 * real uid (per uid within the sandbox's user namespace since Linux 5.14, all of the user's
 * processes on the host before) and does not enforce for root. A profile's own rlimits.nproc
 * wins. */
static void nproc_fallback(struct sandbox_config *cfg)
{
    for (size_t i = 0; i < cfg->n_rlimits; i++)
        if (cfg->rlimits[i].resource == RLIMIT_NPROC)
            return;
    if (cfg->n_rlimits < SANDBOX_MAX_RLIMITS)
        cfg->rlimits[cfg->n_rlimits++] =
            (struct sandbox_rlimit){.resource = RLIMIT_NPROC, .soft = cfg->pids_max, .hard = cfg->pids_max};
}

int controller_cgroup(struct sandbox_config *cfg, pid_t init_pid, struct cgroup *cg, char *err,
                      size_t errlen)
{
    char why[512];
    int r = cgroup_create(cg, getpid(), cfg->pids_max, cfg->memory_max, why, sizeof why);
    if (r < 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (r > 0) {
        if ((r = cgroup_enter(cg, init_pid)) < 0) {
            snprintf(err, errlen, "cannot move the sandbox into its cgroup %s: %s", cg->dirs[0], strerror(-r));
            (void)cgroup_remove(cg);
            return -1;
        }
        return 1;
    }
    bool root = getuid() == 0;
    if (cfg->memory_max || (cfg->pids_max && root))
        LOG_W("limits", "no cgroup for this sandbox (%s): %s not applied", why,
              cfg->memory_max && cfg->pids_max && root ? "limits.memory and limits.pids"
              : cfg->memory_max ? "limits.memory" : "limits.pids");
    if (cfg->pids_max && !root)
        nproc_fallback(cfg);
    return 0;
}

/* bytes as "64M", "2G" when exact, else in bytes */
static void format_size(unsigned long long v, char *out, size_t n)
{
    static const char units[] = "TGMK";
    for (int i = 0; i < 4; i++) {
        unsigned shift = (unsigned)(4 - i) * 10;
        if (v >= (1ull << shift) && v % (1ull << shift) == 0) {
            snprintf(out, n, "%llu%c", v >> shift, units[i]);
            return;
        }
    }
    snprintf(out, n, "%llu bytes", v);
}

void controller_oom_line(const struct sandbox_config *cfg, const struct cgroup *cg, char *line,
                         size_t len)
{
    line[0] = '\0';
    unsigned long long kills = cgroup_oom_kills(cg);
    if (!kills)
        return;
    char limit[32];
    format_size(cfg->memory_max, limit, sizeof limit);
    if (kills == 1)
        snprintf(line, len, "killed: out of memory (limit %s)", limit);
    else
        snprintf(line, len, "killed: out of memory (limit %s; %llu processes)", limit, kills);
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
