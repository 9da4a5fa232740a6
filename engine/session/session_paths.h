/* Runs in: controller (cordon-session). */
/* session_paths.h — the files of a session's controller beside its socket (session_socket.h
 * says where that is): the job state and the controller's log; and making that directory,
 * which must be ours and 0700 (a directory another user made in /tmp is refused, not used). */
#ifndef CORDON_SESSION_PATHS_H
#define CORDON_SESSION_PATHS_H
#include <stdbool.h>
#include <stddef.h>

/* Create the directory if missing and check it is ours and 0700. 0, or -1 with a line in err. */
int session_dir_ensure(char *err, size_t errlen);
/* DIR/NAME.SUFFIX, e.g. suffix "sock", "jobs.json", "log". 0, or -1 when it would not fit. */
int session_file(const char *name, const char *suffix, char *out, size_t n);
#endif
