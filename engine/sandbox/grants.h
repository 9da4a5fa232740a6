/* Runs in: controller (grants_resolve); init (the binds). */
/* grants.h — the caller's agent sockets a profile grants by name (profile key `grants`,
 * docs/grants.md): `ssh_agent` ($SSH_AUTH_SOCK), `gpg_agent` (gpg-agent's restricted socket,
 * S.gpg-agent.extra, which signs and decrypts but never exports or deletes a key, and the public
 * keyring) and `sockets = { NAME = { from = ... } }`. Each is bound in at a fixed path under
 * /run/cordon; nothing else of the host's sockets becomes reachable. A shifted root caller's
 * relay connects only to the socket it captured at start (grants_relay).
 * Two halves: grants_resolve runs in the controller (on the host, before the sandbox starts) and
 * turns the profile's grants into binds (canonical host path -> fixed path inside); taking their
 * detached trees and attaching them run in init, inside fsview_build.
 * Must never: bind a directory, follow a symbolic link after the controller resolved the path,
 * bind anything of gpg's home but the public keyring files, or start an agent. */
#ifndef CORDON_GRANTS_H
#define CORDON_GRANTS_H
#include <stddef.h>
#include "sandbox/mount_ops.h"
#include "sandbox/sandbox-t.h"

#define GRANTS_DIR "/run/cordon/grants"       /* NAME.sock for ssh_agent and each grants.sockets */
#define GRANTS_GNUPG_HOME "/run/cordon/gnupg" /* GNUPGHOME inside, with gpg_agent */
#define GRANTS_MAX 16                         /* grants.sockets entries at most */

/* Fill cfg->grant_binds from cfg->grant_ssh_agent, grant_gpg_agent and grant_sockets: each
 * source found in the caller's environment env (SSH_AUTH_SOCK, GNUPGHOME) or the profile's
 * `from` ("/abs", "~/x" against home, "$VAR"), made canonical, checked to be a socket (the
 * keyring files: regular files) and to pass no symbolic link inside the workspace or a writable
 * path (a command could have planted one). Fail closed: 0, or -1 with one line in err naming the
 * grant, the path and how to run without it (the sandbox is not started). */
int grants_resolve(struct sandbox_config *cfg, char *const *env, const char *home, char *err,
                   size_t errlen);

/* The binds taken from the host in fsview's step 2 (before anything is covered). */
struct grants_trees {
    size_t n;
    int *fds;       /* detached clones of each source, read-only */
    char **targets; /* where each goes inside */
    bool gnupg;     /* a bind goes into GRANTS_GNUPG_HOME: write its gpg.conf there */
};
/* Open each of cfg->grant_binds with no symbolic link on the way, check its type (a socket or a
 * regular file as the controller found it) on the very fd that is bound, clone it. 0, or -1
 * with one line in e (gc is then released). */
int grants_take_trees(const struct sandbox_config *cfg, struct grants_trees *gc, struct mnt_err *e);
/* Attach the detached trees at their fixed places in the fresh /run (GRANTS_GNUPG_HOME made 0700 with a
 * gpg.conf and common.conf that keep gpg from starting an agent of its own). 0, or -1 with one
 * line in e. */
int grants_apply(struct grants_trees *gc, struct mnt_err *e);
void grants_release(struct grants_trees *gc);
/* A root caller's shifted sandbox (root_writes.h): the sources of cfg->grant_binds as the
 * controller took them detached, idmapped and read-only, in order (init may not reach them by their
 * paths). grants_take_trees checks their type and takes them instead of opening the paths. */
void grants_use_sources(const int *fds, size_t n);
/* Host, a shifted root caller: the sandbox's processes are the kernel's uid 2^31 to a socket's
 * server (SO_PEERCRED), and ssh-agent refuses a peer that is neither root nor its own uid. So
 * a granted socket is relayed: a listening socket of the controller's, bound in at the grant's
 * place, whose connections a process of its own (root on the host, ending with the controller)
 * connects to source, byte for byte, each in a process of its own. source is captured now (an
 * O_PATH descriptor, no symbolic link on the way) and every connection goes to that inode, never
 * to what the path names later (a link or another socket put there: refused with one line). Returns that socket's
 * detached tree (idmapped with owner_ns, read-only) to give init instead of source's, or -1 with why. */
int grants_relay(const char *source, int owner_ns, char *why, size_t len);
#endif
