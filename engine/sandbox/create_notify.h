/* Runs in: the command's process (the filter); controller (the answers, home_create_guard.c). */
/* create_notify.h — the calls that make a new name, handed to the same supervisor as renames
 * (rename_notify.h, one filter and one listener: the kernel allows one listener per process):
 * mkdir(at), mknod(at), symlink(at), link(at), creat, openat2, and open/openat only with O_CREAT
 * in their flags (checked by the filter, so the many opens without it never wait). The
 * supervisor (controller/home_create_guard.h) lets each through but a new name at the top of the
 * copy-on-write home that the layer does not take (home_own.h).
 * Owns the table of those calls' numbers and arguments per ABI, and their part of the filter.
 * Runs in init (the filter) and in the controller (create_notify_call). */
#ifndef CORDON_CREATE_NOTIFY_H
#define CORDON_CREATE_NOTIFY_H
#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>

/* Where one call keeps what it names: the argument indexes of the directory fd (-1: AT_FDCWD)
 * and of the new name's path; openat2's flags are in its struct open_how (how: its index). */
struct create_call {
    int dirfd_arg, path_arg, how_arg;
};

/* Is (arch, nr) one of them? Fills *c. */
bool create_notify_call(uint32_t arch, int nr, struct create_call *c);
/* Emit the comparisons of one ABI's numbers into prog at *n (the call's number loaded in A):
 * each jumps to notif, or for open/openat to flags_a1/flags_a2 (the checks of O_CREAT in
 * argument 1 or 2). Instruction indexes are absolute; every jump goes forward. */
void create_notify_emit(uint32_t arch, bool x32, struct sock_filter *prog, unsigned *n,
                        unsigned notif, unsigned flags_a1, unsigned flags_a2);
/* The most instructions create_notify_emit adds for one ABI. */
#define CREATE_NOTIFY_MAX_PER_ABI 12
#endif
