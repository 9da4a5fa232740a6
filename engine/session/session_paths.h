/* session_paths.h — where a session's socket, job state and controller log live, and which
 * names a session may have. `$XDG_RUNTIME_DIR/cordon/` when that is set, else
 * `/tmp/cordon-$UID/`; the directory must be ours and 0700 (a directory another user made in
 * /tmp is refused, not used). */
#ifndef CORDON_SESSION_PATHS_H
#define CORDON_SESSION_PATHS_H
#include <stdbool.h>
#include <stddef.h>

#define SESSION_NAME_MAX 64

/* 1-64 of [A-Za-z0-9_.-], not starting with '.' or '-'. */
bool session_name_valid(const char *name);
/* The directory, without creating it. 0, or -1 when the path would not fit. */
int session_dir(char *out, size_t n);
/* Create the directory if missing and check it is ours and 0700. 0, or -1 with a line in err. */
int session_dir_ensure(char *err, size_t errlen);
/* DIR/NAME.SUFFIX, e.g. suffix "sock", "jobs.json", "log". 0, or -1 when it would not fit. */
int session_file(const char *name, const char *suffix, char *out, size_t n);
#endif
