/* userns.c — see userns.h. The child writes its own maps (allowed for a single mapping of its
 * own ids), which saves the parent/child round trip bubblewrap makes; only a root caller's
 * wider maps cost that round trip (the kernel lets only a writer with CAP_SETUID in the parent
 * namespace write more than one id). Uses: /proc, capget. */
#include "sandbox/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"

pid_t ns_clone_sandbox(void)
{
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
    /* Raw clone with a NULL stack behaves like fork(): the child continues here. */
    long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid < 0)
        return -errno;
    return (pid_t)pid;
}

int ns_unshare_net(void)
{
    return unshare(CLONE_NEWNET) < 0 ? -errno : 0;
}

int ns_write_id_maps(uid_t uid, gid_t gid, unsigned done)
{
    char line[64];
    /* After a gid map setgroups cannot change: the parent denied it before writing one. */
    int r = done & NS_MAPS_GID ? 0 : write_file("/proc/self/setgroups", "deny", 4);
    if (r < 0 && r != -ENOENT)
        return r;
    int n = snprintf(line, sizeof line, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if (!(done & NS_MAPS_UID) && (r = write_file("/proc/self/uid_map", line, (size_t)n)) < 0)
        return r;
    n = snprintf(line, sizeof line, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (!(done & NS_MAPS_GID) && (r = write_file("/proc/self/gid_map", line, (size_t)n)) < 0)
        return r;
    return 0;
}

bool ns_may_write_wide_maps(void)
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &hdr, data) < 0)
        return false;
    uint32_t want = (1u << CAP_SETUID) | (1u << CAP_SETGID);
    return (data[0].effective & want) == want;
}

int ns_write_root_maps(pid_t child, bool shift)
{
    char path[64], map[64];
    unsigned done = 0;
    /* Shifted only when both maps can be written: one map shifted and the other left to the
     * child (0 -> 0) would leave root's group, or root itself, mapped on the host's files. */
    shift = shift && ns_may_write_wide_maps();
    int n = shift
                ? snprintf(map, sizeof map, "0 %u %u\n", NS_ROOT_SHIFT, NS_ROOT_RANGE + 1u)
                : snprintf(map, sizeof map, "0 0 1\n1 %u %u\n", NS_ROOT_SHIFT + 1u, NS_ROOT_RANGE);
    /* setgroups first: the child may still have to write its own gid map, which needs it. */
    snprintf(path, sizeof path, "/proc/%d/setgroups", (int)child);
    int r = write_file(path, "deny", 4);
    if (r < 0 && r != -ENOENT)
        return r;
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)child);
    if ((r = write_file(path, map, (size_t)n)) == 0)
        done |= NS_MAPS_GID;
    else if (r != -EPERM)
        return r;
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)child);
    if ((r = write_file(path, map, (size_t)n)) == 0)
        done |= NS_MAPS_UID;
    else if (r != -EPERM)
        return r;
    if (shift && done != (NS_MAPS_UID | NS_MAPS_GID))
        return -EPERM; /* half a shift: never start that sandbox */
    return (int)(done | (shift ? NS_MAPS_SHIFT : 0));
}

/* Does AppArmor restrict unprivileged user namespaces here (Ubuntu 23.10 and later)? */
static bool apparmor_restricts_userns(void)
{
    char c = '0';
    int fd = open("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &c, 1) != 1)
            c = '0';
        close(fd);
    }
    return c == '1';
}

const char *ns_explain_clone_error(int err)
{
    /* Container runtimes leave a marker file; their seccomp profiles (Docker's default) refuse
     * CLONE_NEWUSER without CAP_SYS_ADMIN, with EPERM as the sysctls do. */
    bool container = access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0;
    switch (err) {
    case EPERM:
        if (apparmor_restricts_userns())
            return "cannot create a user namespace (permission denied): AppArmor restricts them "
                   "here (kernel.apparmor_restrict_unprivileged_userns=1); load cordon's profile "
                   "as root (apparmor_parser -r /etc/apparmor.d/cordon; `make install` puts it "
                   "there), or set sysctl kernel.apparmor_restrict_unprivileged_userns=0";
        if (container)
            return "cannot create a user namespace (permission denied): in a container, its "
                   "seccomp profile must allow it (Docker's default does not: run it with "
                   "--security-opt seccomp=unconfined), and the host must allow unprivileged user "
                   "namespaces (kernel.apparmor_restrict_unprivileged_userns=0 where it is set)";
        return "cannot create a user namespace (permission denied): enable unprivileged user "
               "namespaces (sysctl kernel.unprivileged_userns_clone=1)";
    case ENOSPC:
        return "cannot create a user namespace: the limit is reached or zero "
               "(raise sysctl user.max_user_namespaces)";
    case EINVAL:
        return "cannot create namespaces: this kernel lacks user, mount, pid, ipc, uts or net "
               "namespaces (CONFIG_USER_NS and friends)";
    case EUSERS:
        return "cannot create a user namespace: nesting limit reached";
    default:
        return strerror(err);
    }
}
