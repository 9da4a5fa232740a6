/* late_names.c — see late_names.h. */
#include "sandbox/late_names.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int late_names_send(int fd, const struct str_list *names)
{
    size_t len = 1;
    for (size_t i = 0; i < names->len; i++)
        len += strlen(names->items[i]) + 1;
    char *buf = xmalloc(len), *p = buf;
    for (size_t i = 0; i < names->len; i++) {
        size_t n = strlen(names->items[i]) + 1;
        memcpy(p, names->items[i], n);
        p += n;
    }
    *p = '\0'; /* the end mark */
    int r = sock_send_all(fd, buf, len);
    free(buf);
    return r;
}

/* Is name absolute, canonical and strictly inside home (itself canonical)? */
static bool name_ok(const char *name, const char *home)
{
    if (name[0] != '/' || !path_is_within(name, home) || strcmp(name, home) == 0)
        return false;
    for (const char *c = name; *c;) {
        const char *next = strchr(c + 1, '/');
        size_t n = next ? (size_t)(next - c - 1) : strlen(c + 1);
        if (n == 0 || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
            return false;
        if (!next)
            break;
        c = next;
    }
    return true;
}

int late_names_recv(int fd, const char *home, struct str_list *out, char *err, size_t errlen)
{
    size_t len = 0, cap = 4096, end = 0;
    char *buf = xmalloc(cap);
    bool whole = false;
    while (!whole) {
        if (len == cap) {
            if (cap >= LATE_NAMES_MAX_BYTES) {
                snprintf(err, errlen,
                         "sandbox set-up: the root-only names of the home exceed %u bytes: "
                         "refused",
                         LATE_NAMES_MAX_BYTES);
                goto fail;
            }
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, errlen,
                     "sandbox set-up: the controller's walk of the home for root-only files "
                     "did not finish (%s)",
                     n < 0 ? strerror(errno) : "the list ended before its end mark");
            goto fail;
        }
        /* The end mark is a NUL that begins a record: at the start, or right after a NUL. */
        for (size_t i = len; i < len + (size_t)n && !whole; i++)
            if (buf[i] == '\0' && (i == 0 || buf[i - 1] == '\0')) {
                end = i;
                whole = true;
            }
        len += (size_t)n;
    }
    if (end != len - 1) { /* nothing follows the end mark */
        snprintf(err, errlen, "sandbox set-up: the root-only names of the home are malformed");
        goto fail;
    }
    /* Before the mark: names, each ended by its NUL (the byte before the mark is one). */
    for (size_t off = 0; off < end;) {
        const char *name = buf + off;
        if (!name_ok(name, home)) {
            snprintf(err, errlen,
                     "sandbox set-up: the controller sent a root-only name that is not a "
                     "canonical path inside the home %s: refused",
                     home);
            goto fail;
        }
        str_list_push(out, name); /* the walk sends each once */
        off += strlen(name) + 1;
    }
    free(buf);
    return 0;
fail:
    free(buf);
    return -1;
}
