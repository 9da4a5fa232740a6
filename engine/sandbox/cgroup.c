/* cgroup.c — see cgroup.h. Where the cgroup goes, per controller (pids, memory):
 *
 *  cgroup v2 (the unified hierarchy offers the controller to the caller's cgroup C, as its
 *  cgroup.controllers says). v2's "no internal processes" rule: a cgroup other than the root
 *  that hands a controller to its children (cgroup.subtree_control) may hold no process
 *  itself. C holds the caller (and usually its shell and more), so:
 *   1. a child of C, when C may hand the controller down: it already does, or enabling it
 *      in C/cgroup.subtree_control is allowed — always at the root cgroup (exempt from the
 *      rule), refused (EBUSY) anywhere else that holds processes;
 *   2. else a sibling of C, a child of its parent P: C's cgroup.controllers lists the
 *      controller exactly when P hands it down, and P must be writable — as root, or in a
 *      delegated subtree (systemd's user@UID.service: a user's app scopes are children of
 *      app.slice, which the user owns). Moving init from C to P/cordon-PID needs write access
 *      to P's cgroup.procs, the common ancestor's (the kernel's rule for a migration).
 *  Either way only init moves (nobody else's cgroup changes), and every descendant of init is
 *  born in the new cgroup.
 *
 *  cgroup v1 (a hierarchy mounted with the controller, as systemd's hybrid mode and older
 *  hosts have): a child of the caller's cgroup in that hierarchy; v1 has no such rule.
 *
 * Uses /proc/self/mountinfo and /proc/self/cgroup to find both. Must never: move any process
 * but the one it is given, write outside the directories it made (but C's subtree_control in
 * case 1), or report a cgroup it could not fully set up. */
#include "sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

/* Indexed by bit: CGROUP_PIDS is bit 0, CGROUP_MEMORY bit 1. */
static const char *const controller_names[] = {"pids", "memory"};

/* One directory to make a child in, and the controllers it serves. */
struct place {
    char parent[PATH_MAX];
    bool v1;
    unsigned mask;
};

static int write_str(const char *dir, const char *file, const char *value)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, value, strlen(value));
    int r = n < 0 ? -errno : n == (ssize_t)strlen(value) ? 0 : -EIO;
    close(fd);
    return r;
}

/* The first bytes of dir/file, NUL-terminated. 0 or -errno. */
static int read_str(const char *dir, const char *file, char *buf, size_t len)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, len - 1);
    int r = n < 0 ? -errno : 0;
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
    return r;
}

/* Is word among the separator-separated words of list? */
static bool has_word(const char *list, const char *word, const char *seps)
{
    size_t wl = strlen(word);
    for (const char *p = list; *p;) {
        size_t l = strcspn(p, seps);
        if (l == wl && strncmp(p, word, wl) == 0)
            return true;
        p += l;
        p += strspn(p, seps);
    }
    return false;
}

/* The v2 mount point and, for each v1 controller, its hierarchy's mount point and root, from
 * /proc/self/mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SOURCE SUPER". */
struct mounts {
    char v2[PATH_MAX];
    char v1[ARRAY_LEN(controller_names)][PATH_MAX];
    char v1_root[ARRAY_LEN(controller_names)][PATH_MAX];
};

static void read_mounts(struct mounts *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char root[PATH_MAX], mnt[PATH_MAX], fstype[64], super[1024];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
            sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
            continue;
        if (strcmp(fstype, "cgroup2") == 0 && !m->v2[0] && strcmp(root, "/") == 0)
            snprintf(m->v2, sizeof m->v2, "%s", mnt);
        if (strcmp(fstype, "cgroup") != 0)
            continue;
        for (size_t i = 0; i < ARRAY_LEN(controller_names); i++) {
            if (!m->v1[i][0] && has_word(super, controller_names[i], ",")) {
                snprintf(m->v1[i], sizeof m->v1[i], "%s", mnt);
                snprintf(m->v1_root[i], sizeof m->v1_root[i], "%s", root);
            }
        }
    }
    fclose(f);
}

/* The caller's cgroup paths from /proc/self/cgroup: "0::PATH" (v2) and "N:CTRL,CTRL:PATH". */
struct own {
    char v2[PATH_MAX];
    char v1[ARRAY_LEN(controller_names)][PATH_MAX];
};

static void read_own(struct own *o)
{
    memset(o, 0, sizeof *o);
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return;
    char line[PATH_MAX + 256];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c2 = '\0';
        if (strcmp(line, "0:") == 0 && c1[1] == '\0') { /* "0::" split at both colons */
            snprintf(o->v2, sizeof o->v2, "%s", c2 + 1);
            continue;
        }
        for (size_t i = 0; i < ARRAY_LEN(controller_names); i++)
            if (has_word(c1 + 1, controller_names[i], ","))
                snprintf(o->v1[i], sizeof o->v1[i], "%s", c2 + 1);
    }
    fclose(f);
}

/* dir = mount point + the caller's path below the mount's root; false when the caller's cgroup
 * is outside what is mounted. */
static bool join_path(char *dir, size_t n, const char *mnt, const char *root, const char *path)
{
    size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
    if (rl && (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0')))
        return false;
    const char *rest = path + rl;
    if (strcmp(rest, "/") == 0)
        rest = "";
    return (size_t)snprintf(dir, n, "%s%s", mnt, rest) < n;
}

static bool writable_dir(const char *dir)
{
    char procs[PATH_MAX + 16];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
    return access(dir, W_OK) == 0 && access(procs, W_OK) == 0;
}

/* The v2 place for the controllers in mask (see the top of this file). 1 found, 0 none (why). */
static int v2_place(const char *c_dir, bool c_is_root, unsigned mask, struct place *pl, char *err,
                    size_t errlen)
{
    char sub[512];
    bool down = read_str(c_dir, "cgroup.subtree_control", sub, sizeof sub) == 0;
    for (size_t i = 0; down && i < ARRAY_LEN(controller_names); i++) {
        if (!(mask & (1u << i)) || has_word(sub, controller_names[i], " \n"))
            continue;
        char plus[32];
        snprintf(plus, sizeof plus, "+%s", controller_names[i]);
        down = write_str(c_dir, "cgroup.subtree_control", plus) == 0;
    }
    if (down && writable_dir(c_dir)) {
        snprintf(pl->parent, sizeof pl->parent, "%s", c_dir);
        return 1;
    }
    if (!c_is_root) {
        char p_dir[PATH_MAX];
        snprintf(p_dir, sizeof p_dir, "%s", c_dir);
        *strrchr(p_dir, '/') = '\0';
        if (writable_dir(p_dir)) {
            snprintf(pl->parent, sizeof pl->parent, "%s", p_dir);
            return 1;
        }
    }
    snprintf(err, errlen,
             "the caller's cgroup (%s) cannot hand the controllers to a child of its "
             "own (it holds processes, or is not writable) and its parent is %s",
             c_dir, c_is_root ? "out of sight" : "not writable");
    return 0;
}

/* Where each controller in need goes: places filled, their number returned; 0 with why in err
 * when one controller has no place. */
static size_t find_places(unsigned need, struct place *pl, char *err, size_t errlen)
{
    struct mounts m;
    struct own o;
    read_mounts(&m);
    read_own(&o);
    size_t n = 0;
    unsigned left = need;
    char c_dir[PATH_MAX], avail[512] = "";
    if (m.v2[0] && o.v2[0] && join_path(c_dir, sizeof c_dir, m.v2, "/", o.v2) &&
        read_str(c_dir, "cgroup.controllers", avail, sizeof avail) == 0) {
        unsigned v2mask = 0;
        for (size_t i = 0; i < ARRAY_LEN(controller_names); i++)
            if ((need & (1u << i)) && has_word(avail, controller_names[i], " \n"))
                v2mask |= 1u << i;
        if (v2mask) {
            if (v2_place(c_dir, strcmp(o.v2, "/") == 0, v2mask, &pl[n], err, errlen) == 0)
                return 0;
            pl[n].v1 = false;
            pl[n++].mask = v2mask;
            left &= ~v2mask;
        }
    }
    for (size_t i = 0; i < ARRAY_LEN(controller_names); i++) {
        if (!(left & (1u << i)))
            continue;
        char dir[PATH_MAX];
        if (!m.v1[i][0] || !o.v1[i][0] ||
            !join_path(dir, sizeof dir, m.v1[i], m.v1_root[i], o.v1[i])) {
            snprintf(err, errlen, "no cgroup offers the %s controller", controller_names[i]);
            return 0;
        }
        if (!writable_dir(dir)) {
            snprintf(err, errlen, "the caller's %s cgroup (%s) is not writable",
                     controller_names[i], dir);
            return 0;
        }
        size_t j = 0; /* co-mounted controllers share one directory */
        while (j < n && !(pl[j].v1 && strcmp(pl[j].parent, dir) == 0))
            j++;
        if (j == n) {
            snprintf(pl[n].parent, sizeof pl[n].parent, "%s", dir);
            pl[n].v1 = true;
            pl[n++].mask = 0;
        }
        pl[j].mask |= 1u << i;
    }
    return n;
}

/* A controller killed by SIGKILL leaves its cgroup behind, empty (init died with it). Such a
 * directory's pid is no live process: remove it (rmdir removes only empty cgroups, so one that
 * still holds processes stays). */
static void sweep_stale(const char *parent)
{
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        int pid, end = 0;
        if (sscanf(de->d_name, "cordon-%d%n", &pid, &end) != 1 || de->d_name[end] != '\0' ||
            pid <= 0)
            continue;
        if (kill(pid, 0) < 0 && errno == ESRCH) {
            char dir[PATH_MAX];
            if (snprintf(dir, sizeof dir, "%s/%s", parent, de->d_name) < (int)sizeof dir)
                (void)rmdir(dir);
        }
    }
    closedir(d);
}

unsigned cgroup_controllers(const struct cgroup *cg)
{
    unsigned m = 0;
    for (size_t i = 0; i < cg->n_dirs; i++)
        m |= cg->controllers[i];
    return m;
}

int cgroup_create(struct cgroup *cg, pid_t pid, unsigned controllers, char *err, size_t errlen)
{
    unsigned need = controllers & ~cgroup_controllers(cg);
    if (!need)
        return 1;
    struct place pl[CGROUP_MAX_DIRS];
    size_t n = find_places(need, pl, err, errlen);
    if (n == 0)
        return 0;
    size_t before = cg->n_dirs;
    int r = 0;
    for (size_t i = 0; i < n && r == 0; i++) {
        char dir[PATH_MAX];
        if (snprintf(dir, sizeof dir, "%s/cordon-%d", pl[i].parent, (int)pid) >= (int)sizeof dir) {
            r = -ENAMETOOLONG;
            snprintf(err, errlen, "the caller's cgroup path is too long");
            break;
        }
        /* v2 has one directory for every controller: one made before serves these too */
        size_t j = 0;
        while (j < cg->n_dirs && strcmp(cg->dirs[j], dir) != 0)
            j++;
        if (j < cg->n_dirs) {
            cg->controllers[j] |= pl[i].mask;
            continue;
        }
        if (cg->n_dirs == CGROUP_MAX_DIRS) {
            r = -ENOSPC;
            snprintf(err, errlen, "the sandbox's cgroup would need more than %d directories",
                     CGROUP_MAX_DIRS);
            break;
        }
        sweep_stale(pl[i].parent);
        /* A directory of this name is a dead controller's (pids are unique among live ones). */
        if (mkdir(dir, 0755) < 0 && (errno != EEXIST || rmdir(dir) < 0 || mkdir(dir, 0755) < 0)) {
            r = -errno;
            snprintf(err, errlen, "cannot make the sandbox's cgroup %s: %s", dir, strerror(errno));
            break;
        }
        j = cg->n_dirs++;
        snprintf(cg->dirs[j], sizeof cg->dirs[j], "%s", dir);
        cg->v1[j] = pl[i].v1;
        cg->controllers[j] = pl[i].mask;
        cg->entered[j] = false;
    }
    if (r < 0) {
        while (cg->n_dirs > before)
            (void)rmdir(cg->dirs[--cg->n_dirs]); /* nobody entered these yet: empty */
        return -1;
    }
    return 1;
}

int cgroup_set_limits(const struct cgroup *cg, unsigned long long pids_max,
                      unsigned long long memory_max)
{
    char v[32];
    int r = 0;
    for (size_t i = 0; i < cg->n_dirs && r == 0; i++) {
        const char *dir = cg->dirs[i];
        bool v1 = cg->v1[i];
        if ((cg->controllers[i] & CGROUP_PIDS) && pids_max) {
            snprintf(v, sizeof v, "%llu", pids_max);
            r = write_str(dir, "pids.max", v);
        }
        if (r == 0 && (cg->controllers[i] & CGROUP_MEMORY) && memory_max) {
            snprintf(v, sizeof v, "%llu", memory_max);
            r = write_str(dir, v1 ? "memory.limit_in_bytes" : "memory.max", v);
            /* Swap counts too, where the kernel accounts it: the limit is the sandbox's
             * memory, not its RAM share. Absent (no swap accounting): nothing to bound. */
            if (r == 0)
                (void)write_str(dir, v1 ? "memory.memsw.limit_in_bytes" : "memory.swap.max",
                                v1 ? v : "0");
        }
    }
    return r;
}

int cgroup_enter(struct cgroup *cg, pid_t pid)
{
    char v[24];
    snprintf(v, sizeof v, "%d", (int)pid);
    for (size_t i = 0; i < cg->n_dirs; i++) {
        if (cg->entered[i])
            continue;
        int r = write_str(cg->dirs[i], "cgroup.procs", v);
        if (r < 0)
            return r;
        cg->entered[i] = true;
    }
    return 0;
}

/* The counter "key N" of file name in the directories of cg serving controller; 0 when none
 * has it. */
static unsigned long long event_count(const struct cgroup *cg, unsigned controller,
                                      const char *v1_name, const char *v2_name, const char *key)
{
    size_t klen = strlen(key);
    for (size_t i = 0; i < cg->n_dirs; i++) {
        char buf[4096];
        if (!(cg->controllers[i] & controller) ||
            read_str(cg->dirs[i], cg->v1[i] ? v1_name : v2_name, buf, sizeof buf) < 0)
            continue;
        for (const char *p = buf; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
            if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
                return strtoull(p + klen + 1, NULL, 10);
        }
    }
    return 0;
}

unsigned long long cgroup_oom_kills(const struct cgroup *cg)
{
    return event_count(cg, CGROUP_MEMORY, "memory.oom_control", "memory.events", "oom_kill");
}

unsigned long long cgroup_pids_refused(const struct cgroup *cg)
{
    /* v1 and v2 alike: "max N", the forks refused because pids.max was reached */
    return event_count(cg, CGROUP_PIDS, "pids.events", "pids.events", "max");
}

/* Without cgroup.kill: signal what cgroup.procs lists (the sandbox's own processes only:
 * nothing else was ever moved in, and children are born where their parent is). */
static void kill_listed(const char *dir)
{
    char buf[16384];
    if (read_str(dir, "cgroup.procs", buf, sizeof buf) < 0)
        return;
    for (char *p = buf; *p;) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 1)
            (void)kill((pid_t)pid, SIGKILL);
        p = end + strspn(end, "\n");
    }
}

int cgroup_remove(struct cgroup *cg)
{
    int r = 0;
    for (size_t i = 0; i < cg->n_dirs; i++) {
        /* Bounded: 200 tries 10 ms apart; killed processes are gone in well under that. */
        int rr = -EBUSY;
        for (int tries = 0; tries < 200; tries++) {
            if (rmdir(cg->dirs[i]) == 0 || errno == ENOENT) {
                rr = 0;
                break;
            }
            if (errno != EBUSY) {
                rr = -errno;
                break;
            }
            /* v2's cgroup.kill since Linux 5.14; before, and in v1, one by one */
            if (tries == 0 && (cg->v1[i] || write_str(cg->dirs[i], "cgroup.kill", "1") < 0))
                kill_listed(cg->dirs[i]);
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (rr < 0 && r == 0)
            r = rr;
    }
    cg->n_dirs = 0;
    return r;
}
