/* root_writes.c — see root_writes.h.
 * Owns: the idmapped captures of the writable set (made on the host, in the controller's own
 * mount namespace, where root may idmap the host's file systems) and their hand-over to init.
 * Uses: userns.c for the maps, fdpass.c, the new mount API (open_tree, mount_setattr).
 * Must never: give init a tree that is not idmapped with the sandbox's own user namespace (init
 * would then grant capabilities over the host's real owners), a tree reached through a symbolic
 * link, or a tree that propagates mounts back to the host; on any doubt it sends none. */
#include "sandbox/root_writes.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fdpass.h"
#include "base/util.h"
#include "sandbox/userns.h"

int root_writes_map(int ctl, pid_t init_pid, char *err, size_t errlen)
{
    int done = ns_write_root_maps(init_pid);
    if (done < 0) {
        snprintf(err, errlen, "cannot write the sandbox's uid/gid maps: %s", strerror(-done));
        return -1;
    }
    char msg[2] = {INIT_MSG_MAPS, (char)done};
    /* A failed send means init is gone already; it said why, and the next step sees it. */
    (void)send(ctl, msg, sizeof msg, MSG_NOSIGNAL);
    return done;
}

/* Why the kernel refused an idmapped mount of path, for the one line. */
static void refusal(char *why, size_t len, const char *path, const char *step, int err)
{
    const char *what = strerror(err);
    if (err == ENOSYS)
        what = "this kernel has no idmapped mounts (Linux 5.12 and later have)";
    else if (err == EINVAL && strcmp(step, "idmap") == 0)
        what = "its file system (or one mounted below it) takes no idmapped mount";
    else if (err == EPERM && strcmp(step, "idmap") == 0)
        what = "an idmapped mount needs CAP_SYS_ADMIN over its file system, which this process "
               "lacks (in a container: the host's)";
    snprintf(why, len, "%s: %s", path, what);
}

/* A detached recursive copy of the tree at path, reached with no symbolic link on the way (as
 * init's own captures are, fsview.c), private (what init mounts on it stays in the sandbox)
 * and idmapped with userns_fd. The fd, or -1 with why set. */
static int idmapped_tree(const char *path, int userns_fd, char *why, size_t len)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int pfd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (pfd < 0) {
        refusal(why, len, path, "open", errno);
        return -1;
    }
    int fd = open_tree(pfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
    int err = errno;
    close(pfd);
    if (fd < 0) {
        refusal(why, len, path, "open_tree", err);
        return -1;
    }
    struct mount_attr attr = {
        .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd, .propagation = MS_PRIVATE};
    if (mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0) {
        refusal(why, len, path, "idmap", errno);
        close(fd);
        return -1;
    }
    return fd;
}

int root_writes_send(int ctl, pid_t init_pid, unsigned maps, struct sandbox_config *cfg)
{
    char why[PATH_MAX + 256] = "", nspath[64];
    size_t n = 1 + cfg->writable.len, made = 0;
    int *fds = xcalloc(n, sizeof *fds);
    int ns = -1, r = 0;
    if (!cfg->root_writes)
        goto none; /* the profile's choice: nothing to say */
    if (maps != (NS_MAPS_UID | NS_MAPS_GID)) {
        snprintf(why, sizeof why,
                 "this process may not map other users' ids: it lacks CAP_SETUID or CAP_SETGID");
        goto none;
    }
    snprintf(nspath, sizeof nspath, "/proc/%d/ns/user", (int)init_pid);
    if ((ns = open(nspath, O_RDONLY | O_CLOEXEC)) < 0) {
        r = -errno;
        goto out; /* init is gone (it said why) */
    }
    for (; made < n; made++) {
        const char *path = made == 0 ? cfg->workspace : cfg->writable.items[made - 1];
        if ((fds[made] = idmapped_tree(path, ns, why, sizeof why)) < 0)
            goto none;
    }
    for (size_t i = 0; i < n && r == 0; i++)
        r = fdpass_send(ctl, fds[i], INIT_MSG_IDMAPPED);
    cfg->root_write_caps = r == 0;
    goto out;
none:
    if (why[0])
        fprintf(stderr,
                "cordon: root writes in files of other owners are unavailable (%s): there they "
                "show as nobody and stay read-only to the command\n",
                why);
    int placeholder = open("/dev/null", O_RDONLY | O_CLOEXEC);
    r = placeholder < 0 ? -errno : fdpass_send(ctl, placeholder, INIT_MSG_NO_IDMAP);
    if (placeholder >= 0)
        close(placeholder);
out:
    for (size_t i = 0; i < made; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    if (ns >= 0)
        close(ns);
    return r;
}

int root_writes_wait_maps(int ctl)
{
    char msg[2];
    ssize_t got;
    RETRY_EINTR(got, recv(ctl, msg, sizeof msg, 0));
    if (got < 0)
        return -errno;
    if (got == 0)
        return -EPIPE;
    if (got != (ssize_t)sizeof msg || msg[0] != INIT_MSG_MAPS)
        return -EBADMSG;
    return msg[1] & (int)(NS_MAPS_UID | NS_MAPS_GID);
}

int root_writes_receive(int ctl, size_t n, int *fds)
{
    for (size_t i = 0; i < n; i++)
        fds[i] = -1;
    for (size_t i = 0; i < n; i++) {
        char tag = 0;
        int fd = fdpass_recv(ctl, &tag);
        if (fd >= 0 && tag == INIT_MSG_NO_IDMAP && i == 0) {
            close(fd);
            return 0;
        }
        if (fd < 0 || tag != INIT_MSG_IDMAPPED) {
            int r = fd < 0 ? fd : -EBADMSG;
            if (fd >= 0)
                close(fd);
            for (size_t j = 0; j < i; j++) {
                close(fds[j]);
                fds[j] = -1;
            }
            return r;
        }
        fds[i] = fd;
    }
    return 1;
}
