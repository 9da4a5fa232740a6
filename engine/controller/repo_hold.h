/* repo_hold.h — runs in the controller (cordon run, cordon-session); its helper process runs in
 * the sandbox's user and mount namespaces. Holds a path read-only INSIDE a running sandbox: a
 * read-only bind of the path onto itself in the sandbox's mount namespace, made after the view
 * is built and while commands run, so that what the host's git follows (a repository's config,
 * hooks, pointers) cannot be rewritten or re-planted from inside once a repository is seen
 * (controller/repo_watch.h finds them, controller/guarded_trees.h asks for the holds).
 *
 * The helper is forked at the first hold (after init has built the view), joins init's user
 * namespace (where the controller's uid owns every capability) and mount namespace (the view:
 * init builds it in place, so the sandbox's paths are the host's), and answers one request at a
 * time on a socketpair: the path, absolute as the sandbox sees it; the answer, 0 or -errno.
 * It opens the path with no symbolic link followed (a command may have planted one), clones
 * what is there (recursively: a hooks folder's own mounts come along), makes the clone
 * read-only and nosuid, and moves it onto the very file it opened: nothing can be swapped in
 * between. A path already read-only there is left as it is (one mount per hold).
 * Owns: the helper's life (killed and reaped by repo_hold_stop, dead with the thread that
 * forked it), and the namespaces' descriptors.
 * Uses: openat2, open_tree, mount_setattr, move_mount; nothing else runs in the helper (it is
 * forked from a process with threads: system calls and its own stack only, no allocation).
 * Must never: follow a link, hold anything the caller did not name, make anything writable, or
 * act on the host's mount namespace. */
#ifndef CORDON_REPO_HOLD_H
#define CORDON_REPO_HOLD_H
#include <sys/types.h>

struct repo_hold;

/* Open init_pid's user and mount namespaces, before init has its configuration (init turns
 * undumpable once its view is built, and /proc/PID/ns is then closed to an unprivileged
 * caller). The helper itself is forked at the first hold, from whichever thread asks, and dies
 * with that thread: a sandbox in which no repository appears costs no process and no copy of
 * this one's pages. 0 (*out set) or -errno (*out NULL). */
int repo_hold_open(pid_t init_pid, struct repo_hold **out);

/* Hold path (absolute, as the sandbox sees it) read-only inside. 0, or -errno: -ENOENT when it is
 * gone, -ELOOP when a link is on the way, -EPIPE when the helper is gone. Safe from any thread
 * (one request at a time). NULL h: -ENOSYS. */
int repo_hold_path(struct repo_hold *h, const char *path);

/* Kill and reap the helper. NULL is fine. */
void repo_hold_stop(struct repo_hold *h);
#endif
