/* session_socket.h — where a session's control socket lives and whether anyone answers on it
 * (csock_*: the control socket), for the session's controller and its clients alike.
 * Owns session-name validation, the socket directory and path rules of docs/session-api.md,
 * a connect probe, and removing a stale session's files (socket and NAME.jobs.json).
 * Uses only libc. Must never: speak HTTP (client_http.c does), print, or remove a file that is
 * not a socket nobody answers on (or that socket's jobs file). */
#ifndef CORDON_SESSION_SOCKET_H
#define CORDON_SESSION_SOCKET_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* sizeof(struct sockaddr_un.sun_path): a socket path is shorter than this. */
#define CSOCK_PATH_MAX 108
#define CSOCK_NAME_MAX 64

/* 1 to 64 characters of [A-Za-z0-9_.-], not starting with '.' or '-'. */
bool csock_name_valid(const char *name);

/* The socket directory: "$xdg/cordon" when xdg is an absolute path, else
 * "/tmp/cordon-UID". 0, or -ENAMETOOLONG when it does not fit in out. Pure. */
int csock_dir_for(const char *xdg, uid_t uid, char *out, size_t outlen);
/* "<dir>/NAME.sock" for a valid name; 0, or -ENAMETOOLONG when the result would not fit in
 * out or in a Unix socket address. Pure. */
int csock_path_for(const char *xdg, uid_t uid, const char *name, char *out, size_t outlen);
/* The same, for this process ($XDG_RUNTIME_DIR, getuid()). */
int csock_dir(char *out, size_t outlen);
int csock_path(const char *name, char *out, size_t outlen);

/* A stale session's files: the socket at path (only if it is a socket) and the NAME.jobs.json
 * beside it. For a path whose connect was refused. */
void csock_remove_stale(const char *path);
/* Does a controller answer on path? 1 yes (a connect succeeded; it is closed again), 0 no
 * (no socket there, or its connect was refused), -errno when that cannot be told (EACCES,
 * ...). Removes nothing. */
int csock_probe(const char *path);
#endif
