/* caller_path.h — runs in the controller's thread that answers the sandbox's seccomp
 * notifications (git_publish.c). A path argument of a sandboxed process's call, opened the way
 * the kernel would take it for that process: from its root, its working directory or the
 * directory fd it passed (through /proc/PID), with no symbolic link followed.
 * Owns: nothing kept (each call opens and returns).
 * Uses: openat2 (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_IN_ROOT).
 * Must never: follow a link a command planted, or hand back a descriptor of something other than
 * what the caller named. */
#ifndef CORDON_CALLER_PATH_H
#define CORDON_CALLER_PATH_H
#include <sys/types.h>

/* openat2 with O_CLOEXEC added: the fd, or -errno. */
int cp_openat2(int dirfd, const char *path, int flags, unsigned long long resolve);

/* The parent of path as pid sees it (dirfd its dirfd argument, or AT_FDCWD): an O_PATH fd, and
 * its absolute path in the sandbox (lexical: no link is followed on the way) in *abs (the
 * caller frees it). -errno. */
int cp_open_parent(pid_t pid, int dirfd, const char *path, char **abs);
#endif
