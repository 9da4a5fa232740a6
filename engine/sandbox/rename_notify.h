/* Runs in: init (installs the filter the command's process carries); controller (answers). */
/* rename_notify.h — the sandbox's second seccomp filter: rename, renameat, renameat2, unlink,
 * unlinkat and rmdir, and the calls that create a name (create_notify.h), go to a supervisor on
 * the host (seccomp user notification), every other call is allowed (the main filter,
 * seccomp_filter.h, still judges it). The supervisor publishes writes of git's config files
 * onto the read-only copy the sandbox sees (controller/git_publish.h), removes what a
 * repository's hold keeps read-only inside when a command deletes it (controller/hold_unlink.h),
 * and refuses new names where the home's rule keeps them off (controller/home_create_guard.h).
 * Owns the BPF program and the table of those calls' numbers per ABI. Must never refuse a call
 * itself: it only hands these calls to the supervisor, which answers each. */
#ifndef CORDON_RENAME_NOTIFY_H
#define CORDON_RENAME_NOTIFY_H
#include <stdbool.h>
#include <stdint.h>

enum rename_call {
    RENAME_CALL_NONE = -1,
    RENAME_CALL_RENAME,
    RENAME_CALL_RENAMEAT,
    RENAME_CALL_RENAMEAT2,
    RENAME_CALL_UNLINK,
    RENAME_CALL_UNLINKAT,
    RENAME_CALL_RMDIR
};

/* Install the filter in the calling process (with the creating calls when creates: only a
 * sandbox whose home takes the rule of home_own.h needs them answered) (its children inherit it). Returns the listener fd
 * (O_CLOEXEC), or -errno: a kernel without user notification (before 5.0), or a filter chain
 * that already has a listener (-EBUSY). */
int rename_notify_install(bool creates);

/* Which of the six a notification is (seccomp_data's arch and nr), RENAME_CALL_NONE for any
 * other. */
enum rename_call rename_notify_call(uint32_t arch, int nr);
#endif
