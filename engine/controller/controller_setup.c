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

static void *cgroup_thread(void *arg)
{
    struct controller_cgroup *cc = arg;
    cc->made = cgroup_create(&cc->cg, getpid(), CGROUP_PIDS, cc->why, sizeof cc->why);
    cc->moved = cc->cg;
    (void)sem_post(&cc->created);
    cc->entered = cgroup_enter(&cc->moved, cc->init_pid);
    return NULL;
}

void controller_cgroup_begin(struct controller_cgroup *cc, pid_t init_pid)
{
    memset(cc, 0, sizeof *cc);
    cc->init_pid = init_pid;
    /* No thread to be had: controller_cgroup() and controller_cgroup_enter() do it all. */
    cc->started = sem_init(&cc->created, 0, 0) == 0 &&
                  pthread_create(&cc->thread, NULL, cgroup_thread, cc) == 0;
}

/* Wait for the thread's cgroup_create (cc->cg is ours from then on). */
static void wait_created(struct controller_cgroup *cc)
{
    while (cc->started && sem_wait(&cc->created) < 0 && errno == EINTR)
        ;
}

/* Wait for the thread to end; the directories it moved init into are marked entered. */
static void join_thread(struct controller_cgroup *cc, pid_t init_pid)
{
    if (!cc->started || cc->joined)
        return;
    (void)pthread_join(cc->thread, NULL);
    cc->joined = true;
    if (cc->entered == 0 && cc->init_pid == init_pid)
        for (size_t i = 0; i < cc->moved.n_dirs; i++)
            cc->cg.entered[i] = true;
}

void controller_cgroup_join(struct controller_cgroup *cc)
{
    join_thread(cc, -1);
}

void controller_cgroup_abandon(struct controller_cgroup *cc)
{
    join_thread(cc, -1);
    (void)cgroup_remove(&cc->cg);
}

int controller_cgroup(struct sandbox_config *cfg, struct controller_cgroup *cc, char *err,
                      size_t errlen)
{
    struct cgroup *cg = &cc->cg;
    unsigned need = (cfg->pids_max ? CGROUP_PIDS : 0) | (cfg->memory_max ? CGROUP_MEMORY : 0);
    char why[PATH_MAX + 128] = "";
    int r = 0;
    wait_created(cc);
    if (cc->started && cc->made < 0 && (need & CGROUP_PIDS)) {
        snprintf(err, errlen, "%s", cc->why);
        goto fail;
    }
    if (cc->started && cc->made == 0)
        snprintf(why, sizeof why, "%s", cc->why);
    if (need & ~cgroup_controllers(cg)) {
        char more[PATH_MAX + 128];
        r = cgroup_create(cg, getpid(), need, more, sizeof more);
        if (r < 0) {
            snprintf(err, errlen, "%s", more);
            goto fail;
        }
        if (r == 0)
            snprintf(why, sizeof why, "%s", more);
    }
    if ((r = cgroup_set_limits(cg, cfg->pids_max, cfg->memory_max)) < 0) {
        snprintf(err, errlen, "cannot set the limits of the sandbox's cgroup %s: %s", cg->dirs[0], strerror(-r));
        goto fail;
    }
    unsigned missing = need & ~cgroup_controllers(cg);
    bool root = getuid() == 0;
    /* pids for a caller other than root has a fallback; the rest is only a cgroup's to give */
    unsigned lost = missing & (root ? (CGROUP_PIDS | CGROUP_MEMORY) : CGROUP_MEMORY);
    if (lost)
        LOG_W("limits", "no cgroup for this sandbox (%s): %s not applied", why,
              lost == (CGROUP_PIDS | CGROUP_MEMORY) ? "limits.memory and limits.pids"
              : lost == CGROUP_MEMORY ? "limits.memory" : "limits.pids");
    if ((missing & CGROUP_PIDS) && !root)
        nproc_fallback(cfg);
    return cg->n_dirs > 0;
fail:
    controller_cgroup_abandon(cc);
    return -1;
}

int controller_cgroup_enter(struct controller_cgroup *cc, pid_t init_pid, char *err, size_t errlen)
{
    join_thread(cc, init_pid);
    int r = cgroup_enter(&cc->cg, init_pid); /* what the thread did not (or not for this init) */
    if (r < 0) {
        snprintf(err, errlen, "cannot move the sandbox into its cgroup: %s", strerror(-r));
        return -1;
    }
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
