/* self_path.h — where a helper program of cordon's is, found from the running binary's own
 * path: beside it (the build tree, where every program lands at the top) or, installed, in
 * ../libexec/cordon/ relative to its directory (PREFIX/bin/cordon finds
 * PREFIX/libexec/cordon/cordon-session). Uses /proc/self/exe. Never a path fixed at build
 * time, never $PATH. */
#ifndef CORDON_SELF_PATH_H
#define CORDON_SELF_PATH_H
#include <stddef.h>

/* The path of `program` in buf[0..len): beside the binary when an executable file is there,
 * else in ../libexec/cordon/ (returned even when missing: exec names it in its error).
 * 0, or -errno (/proc/self/exe unreadable: its errno; the path too long: -ENAMETOOLONG). */
int self_helper_path(const char *program, char *buf, size_t len);
#endif
