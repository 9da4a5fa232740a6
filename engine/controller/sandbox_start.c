/* sandbox_start.c — see sandbox_start.h. The start-up is the list in sandbox_start_up(), in the
 * order that keeps the slow parts overlapping: init is cloned first, while this process is small,
 * and makes its network namespace while the profile is resolved; the cgroup's thread moves init
 * meanwhile; the filter is compiled while init builds the view. A step that only one caller
 * takes says so and does nothing for the other. */
#include "controller/sandbox_start.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "controller/credentials.h"
#include "controller/guarded_trees.h"
#include "controller/repo_hold.h"
#include "policy/lua_host.h"
#include "proxy/tls_terminate.h"
#include "sandbox/root_writes.h"
#include "sandbox/sandbox_config.h"
#include "sandbox/userns.h"

#define RETURN_ON_FAILURE(step) \
    do {                        \
        int step_r_ = (step);   \
        if (step_r_ < 0)        \
            return step_r_;     \
    } while (0)

void sandbox_start_prepare(struct sandbox_start *s, enum sandbox_start_for kind)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->alive_w = -1;
    for (size_t i = 0; i < SANDBOX_START_MAX_CLOSE; i++)
        s->child_close[i] = -1;
    s->ip.ctl_sock = s->ip.parent_alive_fd = -1;
    s->ip.out_pipe = s->ip.err_pipe = -1;
    s->ctl = -1;
    s->owner_ns = -1;
    init_handover_prepare(&s->handover);
}

/* One line into s->err; -1. */
static int fail(struct sandbox_start *s, const char *fmt, ...) CORDON_PRINTF(2, 3);
static int fail(struct sandbox_start *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return -1;
}

/* init failed its set-up and said why (r: a send's -EPIPE or -ECONNRESET): a run goes on, and
 * sees init's exit when it supervises; a session stops here. Any other r is returned. */
static int init_said_why(const struct sandbox_start *s, int r)
{
    if (r == -EPIPE || r == -ECONNRESET)
        return s->kind == SANDBOX_START_RUN ? 0 : -2;
    return r;
}

/* Clone init with s->ip (its control socket made here). With maps_at_clone, a root caller's
 * init waits for its maps from here (root_writes.h). */
static int clone_init(struct sandbox_start *s)
{
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
        return fail(s, "socketpair: %s", strerror(errno));
    pid_t pid = ns_clone_sandbox();
    /* Inside a sandbox the kernel's refusal (seccomp) is the same EPERM a host without user
     * namespaces gives, and its advice (a host sysctl) would mislead. CORDON_SANDBOX (set in
     * every sandbox's environment) only picks the message: the refusal itself is seccomp's. */
    const char *inside = getenv("CORDON_SANDBOX");
    if (s->kind == SANDBOX_START_RUN && pid == -EPERM && inside && strcmp(inside, "1") == 0)
        return fail(s, "already inside a cordon sandbox, which refuses nested sandboxes: run the "
                       "command itself, without the inner `cordon run`");
    if (pid < 0) {
        close(sp[0]);
        close(sp[1]);
        return fail(s, "%s", ns_explain_clone_error(-pid));
    }
    if (pid == 0) {
        close(sp[0]);
        if (s->alive_w >= 0)
            close(s->alive_w);
        for (size_t i = 0; i < SANDBOX_START_MAX_CLOSE; i++)
            if (s->child_close[i] >= 0)
                close(s->child_close[i]);
        struct init_params mine = s->ip;
        mine.ctl_sock = sp[1];
        s->init_main(&mine);
        _exit(CORDON_EXIT_SETUP);
    }
    close(sp[1]);
    s->init_pid = pid;
    s->ctl = sp[0];
    if (!s->maps_at_clone || s->ip.uid != 0)
        return 0;
    s->root_maps = root_writes_map(s->ctl, pid, !s->no_shift, s->err, sizeof s->err);
    if (s->root_maps < 0)
        return -1;
    if ((s->root_maps & (int)NS_MAPS_SHIFT) && s->owner_ns < 0)
        s->owner_ns = root_writes_owner_userns();
    return 0;
}

/* A run's: the pids cgroup made and init moved into it on a thread, while the profile is
 * resolved, when limits.pids will want a cgroup. A run's shift expectation is what the clone
 * wrote. */
static int begin_cgroup_ahead(struct sandbox_start *s)
{
    if (s->maps_at_clone)
        s->expect_root_shift = s->ip.uid == 0 && (s->root_maps & (int)NS_MAPS_SHIFT);
    if (s->cgroup_ahead &&
        !controller_pids_by_rlimit(s->ip.uid == 0 && !(s->root_maps & (int)NS_MAPS_SHIFT)))
        controller_cgroup_begin(&s->cgroup, s->init_pid);
    return 0;
}

static int resolve_profile(struct sandbox_start *s)
{
    if (controller_resolve(s, s->cfg, s->err, sizeof s->err) < 0)
        return -1;
    s->rules_after_filter = lh_network_rules_cached();
    return 0;
}

/* A session's: a root caller's maps, once the profile is resolved: shifted when it takes the
 * shift and every idmapped detached tree it needs can be had (tried first with a throwaway namespace
 * of the same maps, root_writes_probe_userns: a session's init cannot be cloned anew), the
 * detached trees then made with init's own namespace into shift; else unshifted, after root_only's
 * scan, which the resolution skipped for the shift. */
static int maps_after_resolve(struct sandbox_start *s, struct root_shift *shift)
{
    if (s->maps_at_clone || s->ip.uid != 0)
        return 0;
    struct sandbox_config *cfg = s->cfg;
    char why[1024] = "";
    bool wanted = s->expect_root_shift && root_writes_shift_wanted(cfg);
    bool ok = wanted;
    int owner = wanted ? root_writes_owner_userns() : -1, r = -1;
    if (ok) {
        int probe = root_writes_probe_userns();
        struct root_shift tried;
        ok = probe >= 0 && owner >= 0 &&
             root_writes_shift_prepare(probe, owner, cfg, &tried, true, why, sizeof why) == 0;
        if (probe >= 0)
            close(probe);
        if (ok)
            root_writes_shift_free(&tried);
        str_list_free(&cfg->shift_binds); /* made again below, with init's namespace */
        cfg->root_write_caps = false;
    }
    if ((s->root_maps = root_writes_map(s->ctl, s->init_pid, ok, s->err, sizeof s->err)) < 0)
        goto out;
    s->shifted = s->root_maps & (int)NS_MAPS_SHIFT;
    if (wanted && !s->shifted) {
        LOG_D("root_writes", "no shift (%s): root_only's scan instead", why[0] ? why : "the maps");
        r = controller_root_only_scan(cfg, s->err, sizeof s->err);
        goto out;
    }
    r = 0;
    if (!s->shifted)
        goto out;
    int ns = root_writes_userns_of(s->init_pid);
    if (ns < 0 || root_writes_shift_prepare(ns, owner, cfg, shift, false, why, sizeof why) < 0)
        r = fail(s, "the shifted sandbox's idmapped detached trees failed (%s)",
                 ns < 0 ? strerror(-ns) : why);
    if (ns >= 0)
        close(ns);
out:
    if (owner >= 0)
        close(owner);
    return r;
}

/* The repositories' snapshots, before the command can change them; what they find to hold
 * read-only joins readonly_in_workspace and protected_paths, which init binds. */
static int snapshot_repositories(struct sandbox_start *s)
{
    if (!(s->guard = guarded_trees_new(s->cfg)))
        return fail(s, "the writable trees' git repositories cannot be checked: refused");
    return 0;
}

/* A run's: a readonly_in_workspace path that does not exist when the view is built cannot be
 * bound (hiding or holding never creates files in the workspace), so the command may create it:
 * .vscode/tasks.json, .claude/settings.json, which an editor or agent on the host runs without
 * asking. cordon run cannot take it back; it says so when the command ends, naming each (a
 * session binds it before its next command instead). Noted before init, and so the command, has
 * the configuration; every entry the guards added exists. */
static int note_absent_readonly(struct sandbox_start *s)
{
    if (s->kind != SANDBOX_START_RUN)
        return 0;
    const struct sandbox_config *cfg = s->cfg;
    size_t n = cfg->readonly_in_workspace.len;
    bool *absent = xcalloc(n + 1, sizeof *absent);
    for (size_t i = 0; i < n && !cfg->workspace_readonly; i++) {
        char *p = xasprintf("%s/%s", cfg->workspace, cfg->readonly_in_workspace.items[i]);
        struct stat st;
        absent[i] = lstat(p, &st) < 0 && errno == ENOENT;
        free(p);
    }
    s->ro_absent = absent;
    return 0;
}

/* A root caller's shifted maps written at the clone: the idmapped detached trees the shift needs, into
 * shift. false when the shift cannot be kept (the profile turns root_writes or root_only.hide
 * off, or the kernel refuses an idmap): then no_shift is set, root_only's scan has run when the
 * profile wants it, and a new init must be cloned. Fails closed on a failed scan (-1). */
static int keep_shift(struct sandbox_start *s, struct root_shift *shift)
{
    char why[1024];
    int ns = -1;
    bool wanted = root_writes_shift_wanted(s->cfg);
    snprintf(why, sizeof why, "%s", s->owner_ns < 0 ? strerror(-s->owner_ns) : "init is gone");
    if (wanted && s->owner_ns >= 0 && (ns = root_writes_userns_of(s->init_pid)) >= 0 &&
        root_writes_shift_prepare(ns, s->owner_ns, s->cfg, shift, false, why, sizeof why) == 0) {
        close(ns);
        return 1;
    }
    if (ns >= 0)
        close(ns);
    if (wanted) /* the scan was skipped for the shift: it is needed after all */
        LOG_D("root_writes", "no shift (%s): root_only's scan instead", why);
    if (wanted && controller_root_only_scan(s->cfg, s->err, sizeof s->err) < 0)
        return -1;
    s->no_shift = true;
    return 0;
}

/* A new init, when the first cannot serve the profile: it made its network namespace before the
 * profile was known (early_network), and the profile wants the host's network; or a root
 * caller's maps were shifted at the clone, and the profile or the kernel refuses the shift. Then
 * no other init will be cloned: what only init needed is closed. */
static int clone_again_if_needed(struct sandbox_start *s, struct root_shift *shift)
{
    bool had_shift = s->maps_at_clone && s->expect_root_shift;
    if (had_shift) {
        int k = keep_shift(s, shift);
        if (k < 0)
            return -1;
        s->shifted = k > 0;
    }
    bool without_network = s->cfg->net_unrestricted && s->ip.early_network;
    if (without_network || (had_shift && !s->shifted)) {
        controller_cgroup_join(&s->cgroup); /* no other thread at the clone */
        (void)kill(s->init_pid, SIGKILL);
        (void)waitpid(s->init_pid, NULL, 0);
        close(s->ctl);
        if (without_network)
            s->ip.early_network = false;
        RETURN_ON_FAILURE(clone_init(s));
    }
    /* Only init and the command hold these now. */
    close(s->ip.parent_alive_fd);
    s->ip.parent_alive_fd = -1;
    if (s->ip.out_pipe >= 0) {
        close(s->ip.out_pipe);
        close(s->ip.err_pipe);
        s->ip.out_pipe = s->ip.err_pipe = -1;
    }
    return 0;
}

/* The sandbox's cgroup (controller_cgroup), before init has its configuration; without a
 * thread ahead (a session), init is moved into it at once. */
static int make_cgroup(struct sandbox_start *s)
{
    int r =
        controller_cgroup(s->cfg, &s->cgroup, s->ip.uid == 0 && !s->shifted, s->err, sizeof s->err);
    if (r < 0)
        return -1;
    s->have_cgroup = r > 0;
    if (!s->cgroup_ahead)
        return controller_cgroup_enter(&s->cgroup, s->init_pid, s->err, sizeof s->err);
    return 0;
}

/* The declared credentials: their values read here, their placeholders put into the command's
 * environment before init gets it (credentials.h). */
static int declare_credentials(struct sandbox_start *s)
{
    if ((!s->flags || s->flags->credentials.len == 0) && s->cfg->credentials.len == 0)
        return 0;
    if (s->cfg->net_unrestricted)
        return fail(s, "credentials need the proxy: the profile gives the host's network "
                       "(network.unrestricted), where a placeholder would go out as it is");
    if (credentials_prepare(&s->cfg->credentials, s->flags ? &s->flags->credentials : NULL,
                            &s->cfg->env, &s->creds, s->err, sizeof s->err) < 0)
        return -1;
    return 0;
}

/* Credentials over HTTPS need the sandbox to trust its own CA: the bundle's file is reserved
 * and bound now, before a root caller's trees are taken (maps_after_resolve); it is filled once
 * the CA exists (make_terminator). */
static int reserve_trust_bundle(struct sandbox_start *s)
{
    bool any = (s->flags && s->flags->credentials.len > 0) || s->cfg->credentials.len > 0;
    if (!any || s->cfg->net_unrestricted)
        return 0;
    return trust_bundle_reserve(&s->trust, s->cfg, s->err, sizeof s->err);
}

/* The sandbox's CA and TLS termination for the credentials' hosts (proxy/tls_terminate.h),
 * made after every clone of init, so that no init's memory ever held the CA's key. Without a
 * credential there is nothing to terminate, but a network.upstream_ca is still checked: a bad
 * file fails the start as any bad key does. */
static int make_terminator(struct sandbox_start *s)
{
    if (!s->creds && !s->cfg->upstream_ca)
        return 0;
    struct tls_terminator *t =
        tls_terminator_new(s->cfg->upstream_ca, true, s->creds, s->err, sizeof s->err);
    if (!t)
        return -1;
    if (!s->creds || !s->trust.dir[0]) {
        tls_terminator_free(t);
        return 0;
    }
    s->tls = t;
    return trust_bundle_fill(&s->trust, tls_terminator_ca_pem(t), s->err, sizeof s->err);
}

/* init's namespaces, for the holds inside (repo_hold.h), then its configuration and a root
 * caller's maps' detached trees. */
static int send_configuration(struct sandbox_start *s, struct root_shift *shift)
{
    s->hold_err = repo_hold_open(s->init_pid, &s->hold);
    int r = controller_send_config(s->ctl, s->cfg);
    if (r == 0 && s->ip.uid == 0)
        r = s->shifted ? root_writes_shift_send(s->ctl, shift)
                       : root_writes_send(s->ctl, s->init_pid, (unsigned)s->root_maps, s->cfg);
    /* Unshifted, the next run tries the shift again when the profile takes it and the writable
     * trees took their idmap (the likeliest sign that the rest will). */
    if (s->maps_at_clone && s->ip.uid == 0)
        root_writes_hint_note(s->flags->profile, s->flags->workspace, s->cwd,
                              !s->shifted &&
                                  !(root_writes_shift_wanted(s->cfg) && s->cfg->root_write_caps));
    if (r < 0 && init_said_why(s, r) == 0)
        r = 0;
    else if (r < 0 && s->kind == SANDBOX_START_RUN)
        return fail(s, "cannot hand the configuration to the sandbox's init");
    else if (r < 0)
        return -2; /* a session's init is gone */
    if (s->while_init_builds)
        s->while_init_builds(s->ctx, s->cfg);
    return 0;
}

/* The filter as early as it can go, so that it is there when init has built the view (which is
 * when init takes it) rather than after the rules' compilation. After a miss of the profile
 * cache (and always in a session) the rules are compiled first, so that an invalid one stops the
 * start before any command runs; after a hit they compiled before, from the same inputs, and are
 * compiled meanwhile (~0.7 ms: the policy state opens only now). Either way before the sandbox
 * is served: what a command asks before waits in the listeners' backlogs. */
static int send_filter_and_rules(struct sandbox_start *s)
{
    bool rules_later = s->rules_after_filter;
    if (!rules_later && controller_compile_network(s->ctl, s->err, sizeof s->err) < 0)
        return -1;
    /* init runs nothing before it has the filter: in its cgroup by then */
    if (s->cgroup_ahead &&
        controller_cgroup_enter(&s->cgroup, s->init_pid, s->err, sizeof s->err) < 0)
        return -1;
    int r = controller_send_filter(s->ctl, s->cfg, s->prog, s->err, sizeof s->err);
    if (r == -1)
        return -1;
    if (r < 0 && (r = init_said_why(s, r)) < 0 && s->kind == SANDBOX_START_RUN)
        LOG_W("run", "sending the seccomp filter: %s", strerror(-r));
    else if (r < 0)
        return -2;
    if (rules_later && controller_compile_network(s->ctl, s->err, sizeof s->err) < 0)
        return -1;
    return 0;
}

/* What init hands over, until it says its set-up is done (init_handover.h). */
static int take_handover(struct sandbox_start *s)
{
    s->handover.git_roots = guarded_trees_roots(s->guard);
    s->handover.cfg = s->cfg;
    int r = init_handover_receive(s->ctl, &s->handover, s->err, sizeof s->err);
    return r == -2 && s->kind == SANDBOX_START_RUN ? 0 : r;
}

static int start_steps(struct sandbox_start *s, struct root_shift *shift)
{
    RETURN_ON_FAILURE(clone_init(s));
    RETURN_ON_FAILURE(begin_cgroup_ahead(s));
    RETURN_ON_FAILURE(resolve_profile(s));
    RETURN_ON_FAILURE(reserve_trust_bundle(s));
    RETURN_ON_FAILURE(maps_after_resolve(s, shift));
    RETURN_ON_FAILURE(snapshot_repositories(s));
    RETURN_ON_FAILURE(note_absent_readonly(s));
    RETURN_ON_FAILURE(clone_again_if_needed(s, shift));
    RETURN_ON_FAILURE(make_cgroup(s));
    RETURN_ON_FAILURE(declare_credentials(s));
    RETURN_ON_FAILURE(make_terminator(s));
    RETURN_ON_FAILURE(send_configuration(s, shift));
    RETURN_ON_FAILURE(send_filter_and_rules(s));
    RETURN_ON_FAILURE(take_handover(s));
    return 0;
}

int sandbox_start_up(struct sandbox_start *s)
{
    struct root_shift shift = {0};
    int r = start_steps(s, &shift);
    root_writes_shift_free(&shift);
    /* init has bound the bundle (or failed): the bind keeps the file, nothing else needs it */
    trust_bundle_remove(&s->trust);
    return r;
}

void sandbox_start_abandon(struct sandbox_start *s)
{
    if (s->init_pid > 0) {
        (void)kill(s->init_pid, SIGKILL);
        (void)waitpid(s->init_pid, NULL, 0);
    }
    controller_cgroup_abandon(&s->cgroup);
}
