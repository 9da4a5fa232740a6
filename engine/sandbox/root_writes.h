/* Runs in: controller (the maps and mounts); init (receives them). */
/* root_writes.h — a caller of uid 0 working in files of other owners (a bind-mounted checkout of
 * uid 1001): inside the writable set (the workspace, the writable paths) its commands write as
 * root does outside; everywhere else they see and may do what they did without this (profile
 * key root_writes; docs/root-callers.md).
 *
 * How, in three parts that hold only together:
 *   - the sandbox's user namespace maps inside ids 0..NS_ROOT_RANGE, root included, to an unused
 *     range of kernel ids (userns.h, "shifted"): on the host's tree every file, root's too, is
 *     unmapped, shown as nobody, and no capability of the namespace applies to it; so what only
 *     root may read is refused by the kernel itself, wherever it is but in what the caller owns
 *     (below): the home is a home like any other, its credentials hidden by the profile's list;
 *   - the controller (root on the host: only it may) attaches the workspace and each writable
 *     path as detached trees idmapped with that very namespace, which turns on-disk id k into
 *     inside id k there: files keep their real owners, new ones are root's, chown works; and,
 *     with a namespace mapping root alone, what the caller owns outside them: its home (the
 *     lower layer of the copy-on-write home), the paths root_only.visible names (both made
 *     read-only with the rest of the host's tree), the granted keyring files (a granted socket
 *     is relayed: grants.h); and with the sandbox's, the home's layer folder (read-write,
 *     staged by init for the overlay);
 *   - the command keeps CONFINE_ROOT_WRITE_CAPS (confine.h), which act only where owners are
 *     mapped: in those trees; and its seccomp filter refuses set-id mode bits (a set-user-ID
 *     root program in a checkout other users run things from would be root's for them).
 * The shift needs root_writes and root_only.hide both on, the wide maps and every idmap above.
 * Without it (the fallback): inside 0 is 0, init takes detached trees of the home and the sockets itself,
 * root_only's scan hides root-only files, and the writable trees come idmapped as before when
 * root_writes is on and the kernel takes the idmap, else no capability at all and the trees init
 * took detached itself, with one line saying why when the key is on. Never more power without the
 * idmapped trees.
 *
 * Host side: root_writes_map right after the clone (`cordon run` asks for the shift at once and
 * clones init anew without it when the profile or the kernel refuses it: root_writes_shift_prepare
 * says); then root_writes_shift_prepare + root_writes_shift_send, or root_writes_send, after the
 * configuration. Init side: root_writes_wait_maps before anything else, root_writes_receive and
 * root_writes_receive_shift after the configuration. Only for a caller whose real uid is 0; the
 * messages below go on init's control socket only then. Uses: userns.h, init_wire.h, the new mount
 * API. */
#ifndef CORDON_ROOT_WRITES_H
#define CORDON_ROOT_WRITES_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "sandbox/sandbox-t.h"

/* Controller to init (init_wire.h): the maps written (INIT_WIRE_MAPS, value: NS_MAPS_* bits),
 * first of all; after the configuration, one INIT_WIRE_IDMAPPED tree per writable area (the
 * workspace, then cfg->writable in order) or one INIT_WIRE_NO_IDMAP. Shifted, after the trees:
 * one INIT_WIRE_SHIFT_BIND per cfg->shift_binds entry (attached there by init before the view
 * is built), the home's layer folder (INIT_WIRE_NO_SHIFT_BIND when there is none), one per
 * cfg->grant_binds entry, cordon's own binary (or none). */

/* Host: write init's maps (ns_write_root_maps, shifted when shift is asked and can be) and tell
 * init which are done. The NS_MAPS_* bits, or -1 with one line in err. */
int root_writes_map(int ctl, pid_t init_pid, bool shift, char *err, size_t errlen);
/* Does the resolved profile take the shift? root_writes and root_only.hide both on. */
bool root_writes_shift_wanted(const struct sandbox_config *cfg);
/* Host, shifted maps, before the configuration goes to init: every idmapped detached tree the shifted
 * sandbox needs, in the order sent (the header's comment). */
struct root_shift {
    int *fds; /* -1: nothing for that entry (no layer) */
    size_t n, n_trees;
};
/* Make them: the writable trees and the layer folder idmapped with the user namespace userns_fd
 * (init's: root_writes_userns_of), the home, the visible paths and the granted sockets with
 * owner_fd (root_writes_owner_userns: on-disk 0 is inside 0 there, every other id unmapped);
 * fill cfg->shift_binds (the home and the visible paths, outermost first) and set
 * cfg->root_write_caps. 0, or -1 with why (a path and the kernel's refusal) when one cannot be
 * had: nothing is kept, and the sandbox must go without the shift (a new init). trial: only to
 * learn whether it would succeed (root_writes_probe_userns), nothing sent: no grant's relay. */
int root_writes_shift_prepare(int userns_fd, int owner_fd, struct sandbox_config *cfg,
                              struct root_shift *s, bool trial, char *why, size_t len);
/* A user namespace mapping inside 0 alone, to the kernel's NS_ROOT_SHIFT (the shifted sandbox's
 * root), as the idmap of what the caller owns outside the writable set. Its fd, or -errno. */
int root_writes_owner_userns(void);
/* /proc/PID/ns/user opened, or -errno. */
int root_writes_userns_of(pid_t pid);
/* A throwaway user namespace with the shifted maps (its process is gone), for a session's
 * controller to learn whether root_writes_shift_prepare would succeed before it writes init's
 * maps (the detached trees made with it are closed, never sent: the kernel's verdict on an idmap
 * depends on the file system and the maps only). Its fd, or -errno. */
int root_writes_probe_userns(void);
/* Send them after the configuration, and close them. 0 or -errno. */
int root_writes_shift_send(int ctl, struct root_shift *s);
void root_writes_shift_free(struct root_shift *s);
/* Host, unshifted maps, after the configuration went to init: the idmapped trees when
 * cfg->root_writes, the maps are both wide (maps: root_writes_map's result) and every tree takes
 * the idmap, and then cfg->root_write_caps is set (the seccomp filter, built next, depends on
 * it); else INIT_WIRE_NO_IDMAP, with one line on stderr when the key asked for it. 0 or -errno
 * (sending). */
int root_writes_send(int ctl, pid_t init_pid, unsigned maps, struct sandbox_config *cfg);
/* Host, `cordon run`: its init is cloned before the profile is known, so whether to ask for the
 * shift is a guess, and a wrong one costs a second init. The last run with the same --profile,
 * --workspace and current directory that could not keep the shift (the profile turns a key off,
 * or an idmap was refused) leaves a mark in cordon's state folder (root-shift/, hidden in every
 * sandbox, like the rest of it); the next asks for no shift then. A wrong mark only costs a
 * scan or a second init, never the shift's protection: root_only's scan stands in for it. */
bool root_writes_hint_no_shift(const char *profile, const char *workspace, const char *cwd);
/* After the run's choice: no_shift = the profile or the kernel kept it from the shift. */
void root_writes_hint_note(const char *profile, const char *workspace, const char *cwd,
                           bool no_shift);
/* Init: the NS_MAPS_* bits the controller wrote, or -errno (-EPIPE: it is gone). */
int root_writes_wait_maps(int ctl);
/* Init: n trees into fds (the workspace first), or none. 1 with trees, 0 without (fds all -1),
 * -errno when the controller sent anything else. */
int root_writes_receive(int ctl, size_t n, int *fds);
/* Init, shifted: the n detached trees after the trees (INIT_WIRE_SHIFT_BIND; -1 for
 * INIT_WIRE_NO_SHIFT_BIND). 0, or -errno (every fd then closed). */
int root_writes_receive_shift(int ctl, size_t n, int *fds);
#endif
