/* util.h — small helpers shared by every unit: growable string lists, checked allocation,
 * whole-file writes, EINTR-safe I/O and path handling. Owns no global state. */
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

void str_list_push(struct str_list *l, const char *s);          /* copies s */
void str_list_push_owned(struct str_list *l, char *s);           /* takes s */
bool str_list_contains(const struct str_list *l, const char *s);
void str_list_free(struct str_list *l);

/* Write all of buf to path (O_WRONLY|O_CLOEXEC, no create). 0 or -errno. */
int write_file(const char *path, const char *buf, size_t len);
/* Write all of buf to fd, retrying EINTR and short writes. 0 or -errno. */
int write_all(int fd, const void *buf, size_t len);

/* Is `path` equal to `dir` or below it (both absolute, canonical)? */
bool path_is_within(const char *path, const char *dir);
/* Expand a leading "~" or "~/" against home; returns a new string. */
char *path_expand_home(const char *path, const char *home);
/* Make absolute against cwd and lexically normalise "." "..", "//" (no symlink resolution). */
char *path_absolute(const char *path, const char *cwd);
#endif
