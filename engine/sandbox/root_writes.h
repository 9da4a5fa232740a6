/* root_writes.h — a caller of uid 0 working in files of other owners (a bind-mounted checkout of
 * uid 1001): inside the writable set (the workspace, the writable paths) its commands write as
 * root does outside; everywhere else they see and may do what they did without this (profile
 * key root_writes; docs/root-callers.md).
 *
 * How, in three parts that hold only together:
 *   - the sandbox's user namespace maps 0 to 0 and inside ids 1..NS_ROOT_RANGE to an unused
 *     range of kernel ids (userns.h): outside the writable set a file of another user is
 *     unmapped, shown as nobody, and no capability of the namespace applies to it;
 *   - the controller (root on the host: only it may) attaches the workspace and each writable
 *     path as detached trees idmapped with that very namespace, which turns on-disk id k into
 *     inside id k there: files keep their real owners, new ones are root's, chown works;
 *   - the command keeps CONFINE_ROOT_WRITE_CAPS (confine.h), which act only where owners are
 *     mapped: in those trees, and on root's own files (read-only outside, and the root-only ones
 *     hidden: root_only.h); and its seccomp filter refuses set-id mode bits (a set-user-ID root
 *     program in a checkout other users run things from would be root's for them).
 * Anything missing (the parent may not write the wide maps, a tree's file system refuses an
 * idmap, the key is off): no capability at all and the trees init captured itself, as before,
 * with one line saying why when the key is on. Never more power without the idmapped trees.
 *
 * Host side: root_writes_map right after the clone, root_writes_send after the configuration.
 * Init side: root_writes_wait_maps before anything else, root_writes_receive after the
 * configuration. Only for a caller whose real uid is 0; the messages below go on init's control
 * socket only then. Uses: userns.h, mount_ops.h, fdpass.h. */
#ifndef CORDON_ROOT_WRITES_H
#define CORDON_ROOT_WRITES_H
#include <stddef.h>
#include <sys/types.h>
#include "sandbox/sandbox-t.h"

/* Controller to init: the maps written (one more byte: NS_MAPS_* bits), first of all; after
 * the configuration, one INIT_MSG_IDMAPPED tree per writable area (the workspace, then
 * cfg->writable in order) or one INIT_MSG_NO_IDMAP (with /dev/null: a message carries an fd). */
#define INIT_MSG_MAPS 'M'
#define INIT_MSG_IDMAPPED 'I'
#define INIT_MSG_NO_IDMAP 'i'

/* Host: write init's maps (ns_write_root_maps) and tell init which are done. The NS_MAPS_* bits,
 * or -1 with one line in err. */
int root_writes_map(int ctl, pid_t init_pid, char *err, size_t errlen);
/* Host, after the configuration went to init: the idmapped trees when cfg->root_writes, the maps
 * are both wide (maps: root_writes_map's result) and every tree takes the idmap, and then
 * cfg->root_write_caps is set (the seccomp filter, built next, depends on it); else
 * INIT_MSG_NO_IDMAP, with one line on stderr when the key asked for it. 0 or -errno (sending). */
int root_writes_send(int ctl, pid_t init_pid, unsigned maps, struct sandbox_config *cfg);
/* Init: the NS_MAPS_* bits the controller wrote, or -errno (-EPIPE: it is gone). */
int root_writes_wait_maps(int ctl);
/* Init: n trees into fds (the workspace first), or none. 1 with trees, 0 without (fds all -1),
 * -errno when the controller sent anything else. */
int root_writes_receive(int ctl, size_t n, int *fds);
#endif
