/* Runs in: controller (writes); init (reads). */
/* config_wire.h — the part of struct sandbox_config that init needs (paths, flags, rlimits, the
 * command's environment), written by the controller into a memfd and read back by init. The
 * controller clones init first and resolves the profile meanwhile, so the two overlap; this is
 * how the result crosses over. Records: one tag byte, then a NUL-terminated value. The profile
 * keys init gets are the rows of sandbox/profile_keys.c marked to_init, each value a record
 * "NAME=VALUE" typed by the key's kind; the rest (the resolved workspace and cwd, the home, the
 * environment, binds, rlimits) have tags of their own. */
#ifndef CORDON_CONFIG_WIRE_H
#define CORDON_CONFIG_WIRE_H
#include <stddef.h>

#include "sandbox/sandbox-t.h"

/* Write cfg to fd (positioned at its start). 0 or -errno. */
int config_wire_write(int fd, const struct sandbox_config *cfg);
/* Fill a zeroed cfg from fd. 0, or -1 with one line in err (malformed, or I/O). */
int config_wire_read(int fd, struct sandbox_config *cfg, char *err, size_t errlen);
#endif
