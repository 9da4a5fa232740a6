/* util.c — see util.h. Allocation failure ends the process: cordon cannot build a sandbox
 * without memory, and a half-built one must never run. */
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        die("out of memory");
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die("out of memory");
    return q;
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        die("out of memory");
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    char *s;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        die("out of memory");
    return s;
}

void str_list_push_owned(struct str_list *l, char *s)
{
    if (l->len + 2 > l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->items = xrealloc(l->items, l->cap * sizeof *l->items);
    }
    l->items[l->len++] = s;
    l->items[l->len] = NULL;
}

void str_list_push(struct str_list *l, const char *s)
{
    str_list_push_owned(l, xstrdup(s));
}

bool str_list_contains(const struct str_list *l, const char *s)
{
    for (size_t i = 0; i < l->len; i++)
        if (strcmp(l->items[i], s) == 0)
            return true;
    return false;
}

static int str_ptr_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void str_list_sort(struct str_list *l)
{
    if (l->len > 1)
        qsort(l->items, l->len, sizeof *l->items, str_ptr_cmp);
}

void str_list_free(struct str_list *l)
{
    for (size_t i = 0; i < l->len; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->len = l->cap = 0;
}

int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n;
        RETRY_EINTR(n, write(fd, p, len));
        if (n < 0)
            return -errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int sock_send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n;
        RETRY_EINTR(n, send(fd, p, len, MSG_NOSIGNAL));
        if (n < 0)
            return -errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int read_fd(int fd, size_t max, char **out, size_t *len)
{
    size_t cap = max < 65536 ? max + 1 : 65536, n = 0;
    char *buf = xmalloc(cap);
    int rc = 0;
    for (;;) {
        if (n == cap) {
            if (n > max) { /* one byte past max was read: the file is larger */
                rc = -EFBIG;
                goto out;
            }
            cap = cap > max - cap ? max + 1 : cap * 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t r;
        RETRY_EINTR(r, read(fd, buf + n, cap - n));
        if (r < 0) {
            rc = -errno;
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > max) {
        rc = -EFBIG;
        goto out;
    }
    if (n == cap)
        buf = xrealloc(buf, n + 1);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    buf = NULL;
out:
    free(buf);
    return rc;
}

int read_file(const char *path, int oflags, size_t max, char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | oflags);
    if (fd < 0)
        return -errno;
    int rc = read_fd(fd, max, out, len);
    close(fd);
    return rc;
}

int read_private_file(const char *path, size_t max, char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) < 0 ? -errno : 0;
    if (rc == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) ||
                    (size_t)st.st_size > max))
        rc = -EPERM;
    if (rc == 0)
        rc = read_fd(fd, max, out, len);
    close(fd);
    return rc;
}

int write_private_file(const char *path, const void *buf, size_t len)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    char *tmp = xasprintf("%s.%d.%ld.tmp", path, (int)getpid(), (long)now.tv_nsec);
    int rc = 0, fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = -errno;
    } else {
        rc = write_all(fd, buf, len);
        if (close(fd) < 0 && rc == 0)
            rc = -errno;
        if (rc == 0 && rename(tmp, path) < 0)
            rc = -errno;
        if (rc < 0)
            unlink(tmp);
    }
    free(tmp);
    return rc;
}

int write_file(const char *path, const char *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int r = write_all(fd, buf, len);
    if (close(fd) < 0 && r == 0)
        r = -errno;
    return r;
}

/* mkdir every directory above the last component of path, and the last one too when whole. */
static int mkdir_upto(const char *path, mode_t mode, bool whole)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof buf)
        return -ENAMETOOLONG;
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (whole && mkdir(buf, mode) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

int mkdir_p(const char *path, mode_t mode)
{
    return mkdir_upto(path, mode, true);
}

int mkdir_parents(const char *path, mode_t mode)
{
    return mkdir_upto(path, mode, false);
}

bool path_is_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

char *path_expand_home(const char *path, const char *home)
{
    if (path[0] == '~' && (path[1] == '\0' || path[1] == '/') && home)
        return xasprintf("%s%s", home, path + 1);
    return xstrdup(path);
}

char *path_absolute(const char *path, const char *cwd)
{
    char *joined = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", cwd, path);
    char *out = xmalloc(strlen(joined) + 2);
    size_t o = 0;
    const char *p = joined;
    while (*p) {
        while (*p == '/')
            p++;
        const char *seg = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - seg);
        if (n == 0 || (n == 1 && seg[0] == '.'))
            continue;
        if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, seg, n);
        o += n;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    free(joined);
    return out;
}
