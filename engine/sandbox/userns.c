/* userns.c — see userns.h. The child writes its own maps (allowed for a single mapping of its
 * own ids), which saves the parent/child round trip bubblewrap makes. */
#include "sandbox/userns.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
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

int ns_write_id_maps(uid_t uid, gid_t gid)
{
    char line[64];
    int r = write_file("/proc/self/setgroups", "deny", 4);
    if (r < 0 && r != -ENOENT)
        return r;
    int n = snprintf(line, sizeof line, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if ((r = write_file("/proc/self/uid_map", line, (size_t)n)) < 0)
        return r;
    n = snprintf(line, sizeof line, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    return write_file("/proc/self/gid_map", line, (size_t)n);
}

const char *ns_explain_clone_error(int err)
{
    /* Container runtimes leave a marker file; their seccomp profiles (Docker's default) refuse
     * CLONE_NEWUSER without CAP_SYS_ADMIN, with EPERM as the sysctls do. */
    bool container = access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0;
    switch (err) {
    case EPERM:
        if (container)
            return "cannot create a user namespace (permission denied): in a container, its "
                   "seccomp profile must allow it (Docker's default does not: run it with "
                   "--security-opt seccomp=unconfined), and the host must allow unprivileged user "
                   "namespaces (kernel.apparmor_restrict_unprivileged_userns=0 where it is set)";
        return "cannot create a user namespace (permission denied): enable unprivileged user "
               "namespaces (sysctl kernel.unprivileged_userns_clone=1, or "
               "kernel.apparmor_restrict_unprivileged_userns=0)";
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
