/* util.h — small helpers shared by every unit: growable string lists, checked allocation,
 * whole-file reads and writes, mkdir -p, EINTR-safe I/O and path handling. Owns no global
 * state; chooses no path and no mode (the callers do). */
#ifndef CORDON_UTIL_H
#define CORDON_UTIL_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "base/attrs.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* var = expr, again while it fails with EINTR (expr returns < 0 and sets errno on failure).
 * A statement: RETRY_EINTR(n, recv(fd, buf, len, 0)); needs <errno.h>. */
#define RETRY_EINTR(var, expr) \
    do                         \
        (var) = (expr);        \
    while ((var) < 0 && errno == EINTR)

/* A list of owned, NUL-terminated strings; items[len] is always NULL (usable as argv/envp). */
struct str_list {
    char **items;
    size_t len, cap;
};

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) CORDON_PRINTF(1, 2);

void str_list_push(struct str_list *l, const char *s); /* copies s */
void str_list_push_owned(struct str_list *l, char *s); /* takes s */
bool str_list_contains(const struct str_list *l, const char *s);
/* Sort the items by strcmp (byte order), the one order cordon lists names in. */
void str_list_sort(struct str_list *l);
void str_list_free(struct str_list *l);

/* Write all of buf to path (O_WRONLY|O_CLOEXEC, no create). 0 or -errno. */
int write_file(const char *path, const char *buf, size_t len);
/* Write all of buf to fd, retrying EINTR and short writes. 0 or -errno. */
int write_all(int fd, const void *buf, size_t len);
/* The same on a socket, with MSG_NOSIGNAL: a peer gone mid-write is -EPIPE for the caller to
 * say, not a SIGPIPE. */
int sock_send_all(int fd, const void *buf, size_t len);
/* Everything fd has left to read (at most max bytes) into a new NUL-terminated buffer *out
 * of *len bytes. 0, -errno, or -EFBIG when there is more than max (nothing is returned then). */
int read_fd(int fd, size_t max, char **out, size_t *len);
/* read_fd of the file at path, opened O_RDONLY|O_CLOEXEC|oflags (e.g. O_NOFOLLOW). */
int read_file(const char *path, int oflags, size_t max, char **out, size_t *len);
/* A file this process keeps for itself (state between runs): read_file of path only when it is
 * a regular file (no link followed, no fifo waited on) of this euid, mode 0600 or narrower, of
 * at most max bytes; else -EPERM (or -errno) and nothing returned. */
int read_private_file(const char *path, size_t max, char **out, size_t *len);
/* Replace path with len bytes of buf, mode 0600: written to a new file beside it (O_EXCL, no
 * link followed) and renamed over it, so that a reader sees the old file or the whole new one.
 * 0 or -errno (the new file removed). */
int write_private_file(const char *path, const void *buf, size_t len);

/* mkdir -p: make path and every missing directory above it with mode (directories that
 * exist are left as they are). 0 or -errno. Allocates nothing. */
int mkdir_p(const char *path, mode_t mode);
/* mkdir -p of the directory holding path (its last component is not made). */
int mkdir_parents(const char *path, mode_t mode);

/* Is `path` equal to `dir` or below it (both absolute, canonical)? */
bool path_is_within(const char *path, const char *dir);
/* Expand a leading "~" or "~/" against home; returns a new string. */
char *path_expand_home(const char *path, const char *home);
/* Make absolute against cwd and lexically normalise "." "..", "//" (no symlink resolution). */
char *path_absolute(const char *path, const char *cwd);
#endif
