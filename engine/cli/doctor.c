/* doctor.c — see doctor.h. Owns the probes of `cordon doctor` and its report (text, or one JSON
 * object). Uses the sandbox's own pieces where a probe must do what the sandbox does (the
 * nftables rule, the cgroup), base/unix_peer.h for the session API's client check, and
 * base/kernel_lacks.h so that a forced lack shows here as it acts in the sandbox. Must never:
 * change the host (the probes' mounts live in a child's own namespaces; the cgroup directory
 * it makes is removed before it returns), or report a capability as full that it did not probe.
 *
 * The probes, in order:
 *   host      sysctls (unprivileged_userns_clone, max_user_namespaces, AppArmor's restriction),
 *             AppArmor's confinement of this process and whether a `cordon` profile is loaded,
 *             Landlock's ABI, mount_setattr, seccomp (filters, user notification), SO_PEERPIDFD
 *             and its fallback (pidfd_open, sock_diag), cgroups (cgroup_create, then removed)
 *   child     as the caller: a user namespace with the caller's ids mapped; mount, pid, ipc,
 *             uts and network namespaces; a tmpfs; overlayfs with its layers given as detached mounts
 *             (/proc/self/fd paths) and by path, the transparent mode's nftables rule
 *   child     (root only) the same user namespace and tmpfs as uid 65534: may other users?
 *   idmap     (root only) an idmapped clone of the current folder's mount */
#include "cli/doctor.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "base/log.h"
#include "base/json_write.h"
#include "base/kernel_lacks.h"
#include "base/unix_peer.h"
#include "base/util.h"
#include "sandbox/cgroup.h"
#include "sandbox/nft_netlink.h"

#define SYNOPSIS "cordon doctor [--json]"
#define NOBODY 65534
#define DOC_LINE 384
#define FORCED 0x7fff   /* an "errno" of our own: the test switch says the mechanism is missing */
#define DIED 0x7ffe     /* ... and another: the probe's child died before it could tell */
#define UNPROBED 0x7ffd /* ... a step not tried: the namespaces it needs could not be made */

/* ---- what the probes found ---- */

/* The child's findings (written whole through a pipe): 0 or an errno per step. */
struct ns_found {
    int userns, maps, ns, tmpfs;
    int ovl_fd, ovl_path; /* overlayfs layers as detached mounts; by path */
    int nft;
    char nft_why[200];
};

struct found {
    struct utsname uts;
    uid_t uid;
    long unpriv_clone;   /* kernel.unprivileged_userns_clone, -1: absent */
    long max_userns;     /* user.max_user_namespaces, -1: absent */
    long aa_restrict;    /* kernel.apparmor_restrict_unprivileged_userns, -1: absent */
    char aa_current[96]; /* this process's AppArmor label, "" when none */
    int aa_profile;      /* a `cordon` profile loaded: 1, 0, -1 cannot tell */
    bool in_container;
    long landlock_abi; /* < 0: none (-errno) */
    bool landlock_forced, landlock_net_forced;
    int mount_setattr; /* 0 present, else errno */
    int idmap;         /* 0 works, else errno; -1 not probed (not root) */
    int seccomp, seccomp_notif;
    int peer_pidfd, pidfd_open, unix_diag;
    int cgroup; /* cgroup_create: 1 all, 0 none here, -1 failed */
    unsigned cgroup_ctl;
    char cgroup_why[DOC_LINE];
    bool cgroup_v1;
    struct ns_found ns;       /* as the caller */
    struct ns_found ns_other; /* as uid 65534 (root only) */
    bool other_probed;
};

static long read_long(const char *path)
{
    char buf[64];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

static void read_line(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, len - 1);
    close(fd);
    out[n > 0 ? n : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

/* 1 when /sys/kernel/security/apparmor/profiles lists a profile named cordon, 0 when not, -1
 * when it cannot be read (no AppArmor, or not allowed). */
static int apparmor_cordon_loaded(void)
{
    FILE *f = fopen("/sys/kernel/security/apparmor/profiles", "re");
    if (!f)
        return -1;
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strncmp(line, "cordon ", 7) == 0;
    fclose(f);
    return found;
}

static int write_str(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    ssize_t n = write(fd, s, strlen(s));
    int e = n < 0 ? errno : 0;
    close(fd);
    return e;
}

/* In the child: a user namespace as the sandbox makes one (the caller's ids mapped to
 * themselves), mount and network namespaces, a tmpfs; then (full) the overlay and nft probes. */
static void ns_probe_child(struct ns_found *r, bool full)
{
    char map[64];
    uid_t uid = getuid();
    gid_t gid = getgid();
    memset(r, 0, sizeof *r);
    r->maps = r->ns = r->tmpfs = r->ovl_fd = r->ovl_path = r->nft = UNPROBED;
    if (unshare(CLONE_NEWUSER) < 0) {
        r->userns = errno;
        return;
    }
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    r->maps = write_str("/proc/self/setgroups", "deny");
    if (r->maps == ENOENT)
        r->maps = 0;
    if (!r->maps)
        r->maps = write_str("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (!r->maps)
        r->maps = write_str("/proc/self/gid_map", map);
    if (r->maps)
        return;
    r->ns = unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0
                ? errno
                : 0;
    if (r->ns)
        return;
    (void)mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
    r->tmpfs = mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0 ? errno : 0;
    if (r->tmpfs || !full)
        return;

    /* overlayfs as the home's: its layers given as detached mounts through /proc/self/fd */
    int fs = -1, mfd = -1, tfd = -1;
    if ((fs = fsopen("tmpfs", FSOPEN_CLOEXEC)) < 0 ||
        fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
        (tfd = fsmount(fs, FSMOUNT_CLOEXEC, 0)) < 0 || mkdirat(tfd, "l", 0755) < 0 ||
        mkdirat(tfd, "u", 0755) < 0 || mkdirat(tfd, "w", 0700) < 0) {
        r->ovl_fd = errno;
    } else {
        char l[64], u[64], w[64];
        snprintf(l, sizeof l, "/proc/self/fd/%d/l", tfd);
        snprintf(u, sizeof u, "/proc/self/fd/%d/u", tfd);
        snprintf(w, sizeof w, "/proc/self/fd/%d/w", tfd);
        close(fs);
        fs = fsopen("overlay", FSOPEN_CLOEXEC);
        if (fs < 0 || fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", l, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", u, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "workdir", w, 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
            (mfd = fsmount(fs, FSMOUNT_CLOEXEC, 0)) < 0)
            r->ovl_fd = errno;
        else
            r->ovl_fd = 0;
    }
    if (mfd >= 0)
        close(mfd);
    if (tfd >= 0)
        close(tfd);
    if (fs >= 0)
        close(fs);

    /* ... and by path, inside this mount namespace (the fallback's way) */
    if (mkdir("/tmp/l", 0755) < 0 || mkdir("/tmp/u", 0755) < 0 || mkdir("/tmp/w", 0700) < 0 ||
        mkdir("/tmp/m", 0755) < 0 ||
        mount("overlay", "/tmp/m", "overlay", 0,
              "userxattr,lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w") < 0)
        r->ovl_path = errno;
    else
        r->ovl_path = 0;

    /* the transparent mode's rule, in this network namespace */
    int rc = nft_netlink_add_redirect(18080, r->nft_why, sizeof r->nft_why);
    r->nft = rc < 0 ? -rc : 0;
}

/* Run ns_probe_child in a child (as uid `as` when as != (uid_t)-1) and collect its findings
 * (a child that died before it reported: r->userns = DIED). 0, -EPERM when it could not
 * become uid `as`, or -errno when there is no child. */
static int ns_probe(struct ns_found *r, uid_t as, bool full)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return -e;
    }
    if (pid == 0) {
        struct ns_found f;
        close(p[0]);
        alarm(20);
        if (as != (uid_t)-1 &&
            (setgroups(0, NULL) < 0 || setresgid(as, as, as) < 0 || setresuid(as, as, as) < 0 ||
             prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)) /* else /proc/self stays root's */
            _exit(3);
        ns_probe_child(&f, full);
        _exit(write(p[1], &f, sizeof f) == (ssize_t)sizeof f ? 0 : 4);
    }
    close(p[1]);
    ssize_t n;
    RETRY_EINTR(n, read(p[0], r, sizeof *r));
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (n == (ssize_t)sizeof *r)
        return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
        return -EPERM; /* could not become uid `as` (inside a sandbox, say) */
    /* It died on the way (a seccomp filter's kill, its alarm): the namespaces are not there. */
    memset(r, 0, sizeof *r);
    r->userns = DIED;
    return 0;
}

/* Root only: can the current folder's mount be cloned with an id mapping (as a shifted root
 * caller's workspace is)? 0 yes, else the errno. */
static int idmap_probe(void)
{
    int go[2], ready[2], rc = 0, ufd = -1, tfd = -1;
    if (pipe2(go, O_CLOEXEC) < 0)
        return errno;
    if (pipe2(ready, O_CLOEXEC) < 0) {
        rc = errno;
        close(go[0]);
        close(go[1]);
        return rc;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(go[1]); /* so that the parent's close ends the read below */
        close(ready[0]);
        char x = unshare(CLONE_NEWUSER) < 0 ? 'e' : 'r';
        alarm(20);
        (void)!write(ready[1], &x, 1);
        (void)!read(go[0], &x, 1);
        _exit(0);
    }
    close(go[0]);
    close(ready[1]);
    char x = 0, path[64];
    if (pid < 0 || read(ready[0], &x, 1) != 1 || x != 'r') {
        rc = pid < 0 ? errno : EPERM;
        goto out;
    }
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    if ((rc = write_str(path, "0 100000 65536\n")) != 0)
        goto out;
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    if ((rc = write_str(path, "0 100000 65536\n")) != 0)
        goto out;
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
    if ((ufd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
        (tfd = open_tree(AT_FDCWD, ".", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) < 0) {
        rc = errno;
        goto out;
    }
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (__u64)ufd};
    rc = mount_setattr(tfd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0 ? errno : 0;
out:
    if (tfd >= 0)
        close(tfd);
    if (ufd >= 0)
        close(ufd);
    close(go[1]); /* the child's read ends */
    close(ready[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    return rc;
}

static void peer_probe(struct found *f)
{
    int sv[2];
    f->peer_pidfd = f->pidfd_open = f->unix_diag = EPROTO;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return;
    int pidfd = -1, rc = unix_peer_pidfd(sv[0], &pidfd);
    f->peer_pidfd = rc < 0 ? -rc : 0;
    if (pidfd >= 0)
        close(pidfd);
    ino_t ino;
    rc = unix_peer_inode(sv[0], &ino);
    f->unix_diag = rc < 0 ? -rc : 0;
    pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    f->pidfd_open = pidfd < 0 ? errno : 0;
    if (pidfd >= 0)
        close(pidfd);
    close(sv[0]);
    close(sv[1]);
}

static int probe_all(struct found *f)
{
    memset(f, 0, sizeof *f);
    (void)uname(&f->uts);
    f->uid = getuid();
    f->unpriv_clone = read_long("/proc/sys/kernel/unprivileged_userns_clone");
    f->max_userns = read_long("/proc/sys/user/max_user_namespaces");
    f->aa_restrict = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    read_line("/proc/self/attr/apparmor/current", f->aa_current, sizeof f->aa_current);
    if (!f->aa_current[0])
        read_line("/proc/self/attr/current", f->aa_current, sizeof f->aa_current);
    f->aa_profile = apparmor_cordon_loaded();
    if (f->aa_profile <= 0 && strncmp(f->aa_current, "cordon ", 7) == 0)
        f->aa_profile = 1; /* confined by it: loaded, whatever the list says */
    f->in_container = access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0;

    f->landlock_forced = kernel_lacks_forced("landlock");
    f->landlock_net_forced = kernel_lacks_forced("landlock_net");
    f->landlock_abi =
        syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (f->landlock_abi < 0)
        f->landlock_abi = -errno;
    if (f->landlock_forced)
        f->landlock_abi = -ENOSYS;
    else if (f->landlock_net_forced && f->landlock_abi >= 4)
        f->landlock_abi = 3;

    f->mount_setattr =
        mount_setattr(-1, "", AT_EMPTY_PATH, NULL, 0) < 0 && errno == ENOSYS ? ENOSYS : 0;
    if (kernel_lacks_forced("mount_setattr"))
        f->mount_setattr = ENOSYS;
    f->idmap = -1;
    if (f->uid == 0)
        f->idmap = kernel_lacks_forced("idmap") ? FORCED
                   : f->mount_setattr           ? ENOSYS
                                                : idmap_probe();

    f->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 ? errno : 0;
    unsigned action = SECCOMP_RET_KILL_PROCESS;
    if (!f->seccomp && syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0)
        f->seccomp = errno;
    struct seccomp_notif_sizes sizes;
    f->seccomp_notif = syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0 ? errno : 0;

    peer_probe(f);
    if (kernel_lacks_forced("peer_pidfd"))
        f->peer_pidfd = ENOPROTOOPT;

    struct cgroup cg;
    memset(&cg, 0, sizeof cg);
    f->cgroup = cgroup_create(&cg, getpid(), CGROUP_PIDS | CGROUP_MEMORY, f->cgroup_why,
                              sizeof f->cgroup_why);
    f->cgroup_ctl = cgroup_controllers(&cg);
    f->cgroup_v1 = cg.n_dirs > 0 && cg.v1[0];
    (void)cgroup_remove(&cg);

    int rc = ns_probe(&f->ns, (uid_t)-1, true);
    if (rc < 0)
        return rc;
    if (f->uid == 0) {
        rc = ns_probe(&f->ns_other, NOBODY, false);
        if (rc < 0 && rc != -EPERM)
            return rc;
        f->other_probed = rc == 0;
    }
    if (kernel_lacks_forced("overlay_userns"))
        f->ns.ovl_fd = f->ns.ovl_path = FORCED;
    else if (kernel_lacks_forced("overlay_fd_layers"))
        f->ns.ovl_fd = FORCED;
    return 0;
}

/* ---- the report ---- */

enum cap_state { CAP_FULL, CAP_FALLBACK, CAP_OFF, CAP_NOT_NEEDED };
static const char *const cap_names[] = {"full", "fallback", "off", "not needed"};
static const char *const cap_json[] = {"full", "fallback", "off", "not_needed"};

struct mech {
    const char *key, *name;
    bool available;
    char detail[DOC_LINE];
};

struct cap {
    const char *key, *name;
    enum cap_state state;
    char detail[DOC_LINE], advice[DOC_LINE];
};

#define N_MECH 12
#define N_CAP 10

struct report {
    struct mech mech[N_MECH];
    struct cap cap[N_CAP];
    size_t n_mech, n_cap;
    bool starts;
};

static struct mech *add_mech(struct report *r, const char *key, const char *name, bool available)
{
    assert(r->n_mech < N_MECH);
    struct mech *m = &r->mech[r->n_mech++];
    m->key = key, m->name = name, m->available = available, m->detail[0] = '\0';
    return m;
}

static struct cap *add_cap(struct report *r, const char *key, const char *name,
                           enum cap_state state)
{
    assert(r->n_cap < N_CAP);
    struct cap *c = &r->cap[r->n_cap++];
    c->key = key, c->name = name, c->state = state, c->detail[0] = c->advice[0] = '\0';
    return c;
}

static const char *err_name(int e)
{
    return e == FORCED     ? "forced missing"
           : e == DIED     ? "the probe was killed (a seccomp filter?)"
           : e == UNPROBED ? "not tried (no namespaces)"
           : e             ? strerror(e)
                           : "ok";
}

/* What to do when user namespaces are refused: AppArmor's profile first where AppArmor
 * restricts them, then the sysctls. */
static void userns_advice(const struct found *f, int err, char *out, size_t len)
{
    if (f->aa_restrict > 0)
        snprintf(out, len,
                 "load cordon's AppArmor profile (apparmor_parser -r /etc/apparmor.d/cordon), or "
                 "sysctl kernel.apparmor_restrict_unprivileged_userns=0");
    else if (err == ENOSPC)
        snprintf(out, len, "raise sysctl user.max_user_namespaces (it is %ld)", f->max_userns);
    else if (f->in_container)
        snprintf(out, len,
                 "in a container: its seccomp profile must allow user namespaces (Docker: "
                 "--security-opt seccomp=unconfined), see the README's \"In a container\"");
    else
        snprintf(out, len,
                 "enable unprivileged user namespaces "
                 "(sysctl kernel.unprivileged_userns_clone=1)");
}

static void build_report(const struct found *f, struct report *r)
{
    struct mech *m;
    struct cap *c;
    const struct ns_found *n = &f->ns;
    bool userns_ok = !n->userns && !n->maps && !n->ns && !n->tmpfs;
    int userns_err = n->userns ? n->userns : n->maps ? n->maps : n->ns ? n->ns : n->tmpfs;

    /* mechanisms */
    m = add_mech(r, "user_namespaces", "user namespaces", userns_ok);
    snprintf(m->detail, sizeof m->detail, "%s%s; user.max_user_namespaces=%ld%s%s",
             userns_ok ? "user, mount, pid and network namespaces with a tmpfs: ok" : "refused: ",
             userns_ok ? "" : err_name(userns_err), f->max_userns,
             f->unpriv_clone >= 0 ? "; kernel.unprivileged_userns_clone=" : "",
             f->unpriv_clone == 0  ? "0"
             : f->unpriv_clone > 0 ? "1"
                                   : "");
    if (f->other_probed) {
        const struct ns_found *o = &f->ns_other;
        bool ok = !o->userns && !o->maps && !o->ns && !o->tmpfs;
        size_t l = strlen(m->detail);
        int e = o->userns ? o->userns : o->maps ? o->maps : o->ns ? o->ns : o->tmpfs;
        snprintf(m->detail + l, sizeof m->detail - l, "; as uid %d: %s%s", NOBODY,
                 ok ? "ok" : "refused: ", ok ? "" : err_name(e));
    }
    m = add_mech(r, "apparmor_userns", "AppArmor's user-namespace restriction", f->aa_restrict > 0);
    snprintf(m->detail, sizeof m->detail,
             "kernel.apparmor_restrict_unprivileged_userns=%s; cordon profile %s; this "
             "process: %s",
             f->aa_restrict < 0 ? "absent"
             : f->aa_restrict   ? "1"
                                : "0",
             f->aa_profile > 0    ? "loaded"
             : f->aa_profile == 0 ? "not loaded"
                                  : "unknown (AppArmor's list is not readable)",
             f->aa_current[0] ? f->aa_current : "no AppArmor label");
    m = add_mech(r, "landlock", "Landlock", f->landlock_abi > 0);
    if (f->landlock_abi > 0)
        snprintf(m->detail, sizeof m->detail, "ABI %ld%s", f->landlock_abi,
                 f->landlock_net_forced ? " (network rules forced missing)" : "");
    else
        snprintf(m->detail, sizeof m->detail, "%s",
                 f->landlock_forced               ? "forced missing"
                 : f->landlock_abi == -EOPNOTSUPP ? "built in but off (add landlock to lsm=)"
                                                  : "not in this kernel (Linux 5.13)");
    m = add_mech(r, "mount_setattr", "mount_setattr", !f->mount_setattr);
    snprintf(m->detail, sizeof m->detail, "%s",
             !f->mount_setattr                      ? "present"
             : kernel_lacks_forced("mount_setattr") ? "forced missing"
                                                    : "missing (Linux 5.12)");
    m = add_mech(r, "idmapped_mounts", "idmapped mounts", f->idmap == 0);
    if (f->idmap < 0)
        snprintf(m->detail, sizeof m->detail, "not probed: only a root caller's ids are shifted");
    else
        snprintf(m->detail, sizeof m->detail, "on the current folder's file system: %s",
                 err_name(f->idmap));
    m = add_mech(r, "overlay_userns", "overlayfs in a user namespace", !n->ovl_fd || !n->ovl_path);
    snprintf(m->detail, sizeof m->detail, "layers as detached mounts: %s; by path: %s",
             err_name(n->ovl_fd), err_name(n->ovl_path));
    m = add_mech(r, "so_peerpidfd", "SO_PEERPIDFD", !f->peer_pidfd);
    snprintf(m->detail, sizeof m->detail, "%s; pidfd_open: %s; sock_diag for Unix sockets: %s",
             !f->peer_pidfd                      ? "present"
             : kernel_lacks_forced("peer_pidfd") ? "forced missing"
                                                 : "missing (Linux 6.5)",
             err_name(f->pidfd_open), err_name(f->unix_diag));
    m = add_mech(r, "nf_tables", "nf_tables", !n->nft);
    snprintf(m->detail, sizeof m->detail, "%s",
             !n->nft         ? "a redirect rule in a fresh network namespace: ok"
             : n->nft_why[0] ? n->nft_why
                             : err_name(n->nft));
    m = add_mech(r, "cgroups", "cgroup delegation", f->cgroup == 1);
    if (f->cgroup == 1)
        snprintf(m->detail, sizeof m->detail, "%s: pids and memory", f->cgroup_v1 ? "v1" : "v2");
    else
        snprintf(m->detail, sizeof m->detail, "%s%.300s",
                 f->cgroup_ctl & CGROUP_PIDS ? "pids only: " : "", f->cgroup_why);
    m = add_mech(r, "seccomp", "seccomp", !f->seccomp);
    snprintf(m->detail, sizeof m->detail, "filters: %s; user notification: %s",
             err_name(f->seccomp), err_name(f->seccomp_notif));

    /* capabilities */
    r->starts = userns_ok && !f->seccomp;
    c = add_cap(r, "sandbox", "the sandbox (cordon run, sessions)", r->starts ? CAP_FULL : CAP_OFF);
    if (!userns_ok) {
        snprintf(c->detail, sizeof c->detail, "user namespaces refused: %s", err_name(userns_err));
        userns_advice(f, userns_err, c->advice, sizeof c->advice);
    } else if (f->seccomp) {
        snprintf(c->detail, sizeof c->detail, "seccomp filters: %s", err_name(f->seccomp));
        snprintf(c->advice, sizeof c->advice, "use a kernel built with CONFIG_SECCOMP_FILTER");
    } else {
        snprintf(c->detail, sizeof c->detail, "namespaces, mounts and seccomp filters");
    }
    if (!userns_ok) {
        c = add_cap(r, "home", "copy-on-write home", CAP_OFF);
        snprintf(c->detail, sizeof c->detail, "not probed: no user namespace here");
        snprintf(c->advice, sizeof c->advice, "make user namespaces work first (above)");
    } else if (!n->ovl_fd) {
        c = add_cap(r, "home", "copy-on-write home", CAP_FULL);
        snprintf(c->detail, sizeof c->detail, "overlayfs, its layers as detached mounts");
    } else if (!n->ovl_path) {
        c = add_cap(r, "home", "copy-on-write home", CAP_FALLBACK);
        snprintf(c->detail, sizeof c->detail,
                 "overlayfs layers by path inside the sandbox's mount namespace (detached "
                 "layers: %s)",
                 err_name(n->ovl_fd));
    } else {
        c = add_cap(r, "home", "copy-on-write home", CAP_OFF);
        snprintf(c->detail, sizeof c->detail,
                 "no overlayfs in a user namespace (%s): the home is read-only",
                 err_name(n->ovl_path));
        snprintf(c->advice, sizeof c->advice,
                 "Linux 5.11 has overlayfs in a user namespace; until then the home is "
                 "read-only, as with --home readonly (profile key home)");
    }
    if (f->uid != 0) {
        c = add_cap(r, "root_shift", "a root caller's shifted ids", CAP_NOT_NEEDED);
        snprintf(c->detail, sizeof c->detail, "the caller is not root");
    } else if (!f->idmap) {
        c = add_cap(r, "root_shift", "a root caller's shifted ids", CAP_FULL);
        snprintf(c->detail, sizeof c->detail, "idmapped mounts of what the caller owns");
    } else {
        c = add_cap(r, "root_shift", "a root caller's shifted ids", CAP_FALLBACK);
        snprintf(c->detail, sizeof c->detail,
                 "no idmapped mounts (%s): root is not shifted; files only root may read are "
                 "hidden by the root-only scan",
                 err_name(f->idmap));
    }
    c = add_cap(r, "mount_attributes", "read-only and nosuid mount attributes",
                f->mount_setattr ? CAP_FALLBACK : CAP_FULL);
    snprintf(c->detail, sizeof c->detail, "%s",
             f->mount_setattr ? "by remounting each mount (no mount_setattr)"
                              : "one recursive mount_setattr");
    c = add_cap(r, "session_clients", "the session API's client check",
                !f->peer_pidfd                    ? CAP_FULL
                : !f->pidfd_open && !f->unix_diag ? CAP_FALLBACK
                                                  : CAP_OFF);
    if (c->state == CAP_FULL)
        snprintf(c->detail, sizeof c->detail, "SO_PEERPIDFD");
    else if (c->state == CAP_FALLBACK)
        snprintf(c->detail, sizeof c->detail,
                 "SO_PEERCRED, a pidfd on its pid, proven to hold the connection");
    else {
        snprintf(c->detail, sizeof c->detail,
                 "no SO_PEERPIDFD, and its fallback lacks %s: sessions do not start",
                 f->pidfd_open ? "pidfd_open (Linux 5.3)" : "sock_diag for Unix sockets");
        snprintf(c->advice, sizeof c->advice, "%s",
                 f->pidfd_open ? "use Linux 5.3 or later" : "modprobe unix_diag");
    }
    c = add_cap(r, "loopback_off", "--allow-loopback=false",
                f->landlock_abi >= 4 ? CAP_FULL : CAP_OFF);
    if (f->landlock_abi >= 4) {
        snprintf(c->detail, sizeof c->detail, "Landlock's network rules (ABI %ld)",
                 f->landlock_abi);
    } else {
        snprintf(c->detail, sizeof c->detail,
                 "needs Landlock's network rules (ABI 4, Linux 6.7); here: %s",
                 f->landlock_abi > 0 ? "ABI 1-3" : "no Landlock");
        snprintf(c->advice, sizeof c->advice,
                 "keep loopback allowed (the default; --allow-loopback, network.loopback = "
                 "true) or use Linux 6.7");
    }
    c = add_cap(r, "container_proc", "a container's masked /proc shared safely",
                f->landlock_abi >= 2 ? CAP_FULL
                : f->in_container    ? CAP_OFF
                                     : CAP_NOT_NEEDED);
    snprintf(c->detail, sizeof c->detail, "%s",
             f->landlock_abi >= 2 ? "Landlock (ABI 2) keeps the command from other processes"
             : f->in_container    ? "needs Landlock ABI 2 (Linux 5.19)"
                                  : "not in a container");
    if (c->state == CAP_OFF)
        snprintf(c->advice, sizeof c->advice,
                 "unmask the container's /proc (Podman --security-opt unmask=ALL)");
    c = add_cap(r, "transparent", "transparent mode (network.transparent)",
                n->nft ? CAP_OFF : CAP_FULL);
    snprintf(c->detail, sizeof c->detail, "%s",
             !userns_ok ? "not probed: no user namespace here"
             : n->nft   ? "no nf_tables in a user namespace"
                        : "an nftables redirect to the proxy");
    if (!userns_ok)
        snprintf(c->advice, sizeof c->advice, "make user namespaces work first (above)");
    else if (n->nft)
        snprintf(c->advice, sizeof c->advice,
                 "modprobe nf_tables (CONFIG_NF_TABLES), or leave network.transparent off");
    c = add_cap(r, "limits", "limits.pids and limits.memory",
                f->cgroup == 1 ? CAP_FULL : CAP_FALLBACK);
    if (f->cgroup == 1) {
        snprintf(c->detail, sizeof c->detail, "a cgroup per sandbox");
    } else {
        snprintf(c->detail, sizeof c->detail,
                 "no cgroup of its own: limits.pids by RLIMIT_NPROC (not for root), "
                 "limits.memory not applied");
        snprintf(c->advice, sizeof c->advice,
                 "delegate a cgroup v2 subtree with pids and memory to this user (systemd: "
                 "Delegate=yes)");
    }
    c = add_cap(r, "seccomp_notify", "seccomp user notification (grants, renames)",
                f->seccomp_notif ? CAP_OFF : CAP_FULL);
    snprintf(c->detail, sizeof c->detail, "%s",
             f->seccomp_notif ? "missing (Linux 5.0)" : "present");
}

static void print_text(const struct found *f, const struct report *r)
{
    const char *forced = getenv("CORDON_TEST_KERNEL_LACKS");
    printf("cordon doctor: Linux %s (%s), uid %u%s\n", f->uts.release, f->uts.machine,
           (unsigned)f->uid, f->in_container ? ", in a container" : "");
    if (forced && *forced)
        printf("forced missing for testing (CORDON_TEST_KERNEL_LACKS): %s\n", forced);
    printf("\nmechanisms\n");
    for (size_t i = 0; i < r->n_mech; i++)
        printf("  %-3s %-38s %s\n", r->mech[i].available ? "yes" : "no", r->mech[i].name,
               r->mech[i].detail);
    printf("\ncapabilities\n");
    for (size_t i = 0; i < r->n_cap; i++) {
        const struct cap *c = &r->cap[i];
        printf("  %-10s %-44s %s\n", cap_names[c->state], c->name, c->detail);
        if (c->advice[0])
            printf("  %-10s   what to do: %s\n", "", c->advice);
    }
    printf("\n%s\n", r->starts ? "the default profile can start here"
                               : "the default profile cannot start here");
}

static void print_json(const struct found *f, const struct report *r)
{
    const char *forced = getenv("CORDON_TEST_KERNEL_LACKS");
    printf("{\"kernel\":");
    json_write_string(stdout, f->uts.release);
    printf(",\"machine\":");
    json_write_string(stdout, f->uts.machine);
    printf(",\"uid\":%u,\"in_container\":%s,\"forced_missing\":", (unsigned)f->uid,
           f->in_container ? "true" : "false");
    if (forced && *forced)
        json_write_string(stdout, forced);
    else
        printf("null");
    printf(",\"landlock_abi\":%ld,\"default_profile_starts\":%s,\"mechanisms\":[",
           f->landlock_abi > 0 ? f->landlock_abi : 0, r->starts ? "true" : "false");
    for (size_t i = 0; i < r->n_mech; i++) {
        printf("%s{\"name\":\"%s\",\"title\":", i ? "," : "", r->mech[i].key);
        json_write_string(stdout, r->mech[i].name);
        printf(",\"available\":%s,\"detail\":", r->mech[i].available ? "true" : "false");
        json_write_string(stdout, r->mech[i].detail);
        printf("}");
    }
    printf("],\"capabilities\":[");
    for (size_t i = 0; i < r->n_cap; i++) {
        const struct cap *c = &r->cap[i];
        printf("%s{\"name\":\"%s\",\"title\":", i ? "," : "", c->key);
        json_write_string(stdout, c->name);
        printf(",\"state\":\"%s\",\"detail\":", cap_json[c->state]);
        json_write_string(stdout, c->detail);
        printf(",\"advice\":");
        if (c->advice[0])
            json_write_string(stdout, c->advice);
        else
            printf("null");
        printf("}");
    }
    printf("]}\n");
}

int doctor_main(int argc, char **argv)
{
    bool json = false;
    const char *pos[1];
    int n_pos = 0, status;
    const struct cli_flag flags[] = {{"--json", &json}};
    if (cli_wants_help(argc, argv)) {
        printf("usage: " SYNOPSIS "\n"
               "What this machine's kernel offers cordon: each mechanism the sandbox uses,\n"
               "probed for real (user namespaces and their limits, AppArmor's restriction,\n"
               "Landlock, idmapped mounts, overlayfs in a user namespace, SO_PEERPIDFD,\n"
               "nf_tables, cgroups, seccomp), and for each capability whether it is full,\n"
               "uses a fallback of equal strength, is off, or is not needed, with what to do.\n"
               "  --json   one JSON object instead of the text\n"
               "Exit status: 0 the default profile can start here, 1 it cannot, 125 bad usage\n"
               "or the probes failed.\n");
        return 0;
    }
    if ((status = cli_read_words(argc, argv, "doctor", SYNOPSIS, flags, ARRAY_LEN(flags), pos, 0,
                                 &n_pos)) >= 0)
        return status;
    struct found *f = xcalloc(1, sizeof *f);
    struct report *r = xcalloc(1, sizeof *r);
    int rc = probe_all(f);
    if (rc < 0) {
        fprintf(stderr, "cordon: doctor: the probes failed: %s\n", strerror(-rc));
        status = CORDON_EXIT_SETUP;
        goto out;
    }
    build_report(f, r);
    if (json)
        print_json(f, r);
    else
        print_text(f, r);
    fflush(stdout);
    status = r->starts ? 0 : 1;
out:
    free(r);
    free(f);
    return status;
}
