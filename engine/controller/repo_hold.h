/* repo_hold.h — runs in the controller (cordon run, cordon-session); its helper process runs in
 * the sandbox's user and mount namespaces. Holds a path read-only INSIDE a running sandbox: a
 * read-only bind of the path onto itself in the sandbox's mount namespace, made after the view
 * is built and while commands run, so that what the host's git follows (a repository's config,
 * hooks, pointers) cannot be rewritten or re-planted from inside once a repository is seen
 * (controller/repo_watch.h finds them, controller/git_guards.h asks for the holds).
 *
 * The helper is forked once, right after init is cloned (repo_hold_fork), joins init's user
 * namespace (where the controller's uid owns every capability) and mount namespace (the view:
 * init builds it in place, so the sandbox's paths are the host's) once the view is built, and
 * answers one request at a time on a socketpair: the path, absolute as the sandbox sees it; the
 * answer, 0 or -errno.
 * It opens the path with no symbolic link followed (a command may have planted one), clones
 * what is there (recursively: a hooks folder's own mounts come along), makes the clone
 * read-only and nosuid, and moves it onto the very file it opened: nothing can be swapped in
 * between. A path already read-only there is left as it is (one mount per hold).
 * Owns: the helper's life (killed and reaped by repo_hold_stop, dead with the controller).
 * Uses: openat2, open_tree, mount_setattr, move_mount; nothing else runs in the helper (it is
 * forked from a process with threads: system calls and its own stack only, no allocation).
 * Must never: follow a link, hold anything the caller did not name, make anything writable, or
 * act on the host's mount namespace. */
#ifndef CORDON_REPO_HOLD_H
#define CORDON_REPO_HOLD_H
#include <sys/types.h>

struct repo_hold;

/* Fork the helper right after init is cloned, while this process is small (a fork copies its
 * page tables, and every page either writes afterwards is copied). The helper opens init's user
 * and mount namespaces at once (init is dumpable until it has built the view; afterwards
 * /proc/PID/ns is closed to an unprivileged caller) and joins them at the first request. NULL
 * when it cannot fork. */
struct repo_hold *repo_hold_fork(pid_t init_pid);

/* The helper's word on the namespaces: 0, or -errno (they could not be opened). Waits for it:
 * call it before init gets its configuration, so that the opening came first. */
int repo_hold_ready(struct repo_hold *h);

/* Hold path (absolute, as the sandbox sees it) read-only inside. 0, or -errno: -ENOENT when it is
 * gone, -ELOOP when a link is on the way, -EPIPE when the helper is gone. Safe from any thread
 * (one request at a time). NULL h: -ENOSYS. */
int repo_hold_path(struct repo_hold *h, const char *path);

/* Kill and reap the helper. NULL is fine. */
void repo_hold_stop(struct repo_hold *h);
#endif
