/* trust.c — see trust.h. The mechanism only: `cordon trust` itself is cli/trust_cmd.c. */
#include "policy/trust.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json_read.h"
#include "base/json_write.h"
#include "base/util.h"

#define TRUST_MAX_FILES 1000
#define TRUST_MAX_DEPTH 16
#define TRUST_RECORD_MAX (1 << 20)
#define TRUST_FILE_MAX (4u << 20)

void trust_set_free(struct trust_set *s)
{
    for (size_t i = 0; i < s->len; i++) {
        free(s->items[i].rel);
        free(s->items[i].data);
    }
    free(s->items);
    s->items = NULL;
    s->len = s->cap = 0;
}

/* Append an entry (no content: a scan attaches it). */
static void set_push(struct trust_set *s, const char *rel, const char *hash)
{
    if (s->len == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->items = xrealloc(s->items, s->cap * sizeof *s->items);
    }
    s->items[s->len].rel = xstrdup(rel);
    snprintf(s->items[s->len].hash, sizeof s->items[s->len].hash, "%s", hash);
    s->items[s->len].data = NULL;
    s->items[s->len].len = 0;
    s->len++;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct trust_entry *)a)->rel, ((const struct trust_entry *)b)->rel);
}

const struct trust_entry *trust_set_find(const struct trust_set *s, const char *rel)
{
    struct trust_entry key = {.rel = (char *)rel};
    if (!s->len)
        return NULL;
    return bsearch(&key, s->items, s->len, sizeof *s->items, cmp_entry);
}

/* Read the regular file fd whole (at most TRUST_FILE_MAX bytes). The buffer (NUL-terminated)
 * or NULL with errno set. */
static char *read_whole(int fd, size_t *len_out)
{
    size_t cap = 4096, len = 0;
    char *buf = xmalloc(cap + 1);
    for (;;) {
        if (len == cap) {
            if (cap >= TRUST_FILE_MAX) {
                free(buf);
                errno = EFBIG;
                return NULL;
            }
            cap *= 2;
            buf = xrealloc(buf, cap + 1);
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    *len_out = len;
    return buf;
}

/* Walk the directory dfd (taken over, closed here), shown as dir in messages, whose path
 * relative to .cordon is rel ("" at the top). Every name is opened relative to dfd with
 * O_NOFOLLOW: a directory renamed or replaced by a link while the walk runs is not followed. */
static int scan_dir(int dfd, const char *dir, const char *rel, int depth, struct trust_set *out,
                    char *err, size_t errlen)
{
    if (depth > TRUST_MAX_DEPTH) {
        snprintf(err, errlen, "%s: nested too deep", dir);
        close(dfd);
        return -1;
    }
    int rc = 0;
    DIR *d = fdopendir(dfd);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        close(dfd);
        return -1;
    }
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        char *r = xasprintf("%s%s%s", rel, *rel ? "/" : "", e->d_name);
        struct stat st;
        int fd =
            openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 && errno == ELOOP) {
            snprintf(err, errlen,
                     "%s: a symbolic link (refused: only regular files can be trusted)", path);
            rc = -1;
        } else if (fd < 0 || fstat(fd, &st) < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            rc = -1;
        } else if (S_ISDIR(st.st_mode)) {
            rc = scan_dir(fd, path, r, depth + 1, out, err, errlen);
            fd = -1; /* taken over */
        } else if (!S_ISREG(st.st_mode)) {
            snprintf(err, errlen,
                     "%s: not a regular file (refused: only regular files can be trusted)", path);
            rc = -1;
        } else if (out->len >= TRUST_MAX_FILES) {
            snprintf(err, errlen, "%s: more than %d files", dir, TRUST_MAX_FILES);
            rc = -1;
        } else {
            size_t len;
            char *data = read_whole(fd, &len);
            if (!data) {
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                rc = -1;
            } else {
                char hash[SHA256_HEX_LEN + 1];
                sha256_hex(data, len, hash);
                set_push(out, r, hash);
                out->items[out->len - 1].data = data; /* taken over */
                out->items[out->len - 1].len = len;
            }
        }
        if (fd >= 0)
            close(fd);
        free(path);
        free(r);
    }
    closedir(d);
    return rc;
}

int trust_scan(const char *policy_dir, struct trust_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int dfd = open(policy_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ELOOP || errno == ENOTDIR)
            snprintf(err, errlen, "%s: not a directory (a symbolic link or a file is refused)",
                     policy_dir);
        else
            snprintf(err, errlen, "%s: %s", policy_dir, strerror(errno));
        return -1;
    }
    if (scan_dir(dfd, policy_dir, "", 0, out, err, errlen) < 0) {
        trust_set_free(out);
        return -1;
    }
    if (out->len)
        qsort(out->items, out->len, sizeof *out->items, cmp_entry);
    return 0;
}

char *trust_record_path(const char *config_dir, const char *root)
{
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(root, strlen(root), hex);
    return xasprintf("%s/trusted/%s.json", config_dir, hex);
}

int trust_record_load(const char *path, struct trust_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    size_t len = 0;
    int rc = read_file(path, O_NOFOLLOW, TRUST_RECORD_MAX, &buf, &len);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-rc));
        return rc;
    }
    rc = -EINVAL;
    char jerr[256];
    struct json_value *v = json_parse(buf, len, jerr, sizeof jerr);
    const struct json_value *files = v ? json_get(v, "files") : NULL;
    if (!v) {
        snprintf(err, errlen, "%s: %s", path, jerr);
    } else if (!files || files->type != JSON_OBJECT) {
        snprintf(err, errlen, "%s: no \"files\" object", path);
    } else {
        rc = 0;
        for (size_t i = 0; i < files->len; i++) {
            const struct json_value *h = &files->items[i];
            if (h->type != JSON_STRING || h->len != SHA256_HEX_LEN) {
                snprintf(err, errlen, "%s: \"%s\" is not a SHA-256 hex digest", path,
                         files->keys[i]);
                rc = -EINVAL;
                break;
            }
            set_push(out, files->keys[i], h->str);
        }
        if (rc == 0 && out->len)
            qsort(out->items, out->len, sizeof *out->items, cmp_entry);
    }
    if (rc < 0)
        trust_set_free(out);
    json_free(v);
    free(buf);
    return rc;
}

int trust_record_save(const char *path, const char *root, const struct trust_set *s, char *err,
                      size_t errlen)
{
    int rc = mkdir_parents(path, 0700); /* the record's directories are the user's alone */
    if (rc < 0) {
        snprintf(err, errlen, "%s: cannot create its directory: %s", path, strerror(-rc));
        return rc;
    }
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    char *tmp = xasprintf("%s/.trust-XXXXXX", dir);
    FILE *f = NULL;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        goto out;
    }
    if (fchmod(fd, 0600) < 0 || !(f = fdopen(fd, "w"))) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        close(fd);
        goto out_unlink;
    }
    fputs("{\"project\":", f);
    json_write_string(f, root);
    fputs(",\"files\":{", f);
    for (size_t i = 0; i < s->len; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        json_write_string(f, s->items[i].rel);
        fprintf(f, ":\"%s\"", s->items[i].hash);
    }
    fputs("\n}}\n", f);
    if (fflush(f) != 0 || fsync(fileno(f)) < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        fclose(f);
        goto out_unlink;
    }
    if (fclose(f) != 0 || rename(tmp, path) < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto out_unlink;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    rc = 0;
    goto out;
out_unlink:
    unlink(tmp);
out:
    free(tmp);
    free(dir);
    return rc;
}

static void why_add(char *why, size_t whylen, size_t *used, const char *rel, const char *what)
{
    if (*used >= whylen)
        return;
    int n = snprintf(why + *used, whylen - *used, "%s%s %s", *used ? ", " : "", rel, what);
    if (n > 0)
        *used += (size_t)n;
}

void trust_compare(const struct trust_set *recorded, const struct trust_set *current, char *why,
                   size_t whylen)
{
    size_t i = 0, j = 0, used = 0;
    if (whylen)
        why[0] = '\0';
    while (i < recorded->len || j < current->len) {
        int c = i >= recorded->len  ? 1
                : j >= current->len ? -1
                                    : strcmp(recorded->items[i].rel, current->items[j].rel);
        if (c == 0) {
            if (strcmp(recorded->items[i].hash, current->items[j].hash) != 0)
                why_add(why, whylen, &used, current->items[j].rel, "changed");
            i++, j++;
        } else if (c < 0) {
            why_add(why, whylen, &used, recorded->items[i++].rel, "removed");
        } else {
            why_add(why, whylen, &used, current->items[j++].rel, "added");
        }
    }
}

enum trust_state trust_check(const char *config_dir, const char *root, char *canon_root, char *why,
                             size_t whylen)
{
    return trust_check_files(config_dir, root, canon_root, why, whylen, NULL);
}

enum trust_state trust_check_files(const char *config_dir, const char *root, char *canon_root,
                                   char *why, size_t whylen, struct trust_set *files)
{
    if (files)
        memset(files, 0, sizeof *files);
    char *r = realpath(root, NULL);
    snprintf(canon_root, PATH_MAX, "%s", r ? r : root);
    free(r);
    char *pdir = xasprintf("%s/.cordon", canon_root);
    struct stat st;
    enum trust_state ts = TRUST_UNTRUSTED;
    struct trust_set cur = {0}, rec = {0};
    char err[PATH_MAX + 128];
    if (lstat(pdir, &st) < 0 && errno == ENOENT) {
        ts = TRUST_NO_PROJECT;
        goto out;
    }
    if (trust_scan(pdir, &cur, err, sizeof err) < 0) {
        snprintf(why, whylen, "%s", err);
        goto out;
    }
    if (!config_dir) {
        snprintf(why, whylen, "no user config directory to keep trust in (HOME is not set)");
        goto out;
    }
    char *rp = trust_record_path(config_dir, canon_root);
    int lr = trust_record_load(rp, &rec, err, sizeof err);
    free(rp);
    if (lr == -ENOENT) {
        snprintf(why, whylen, "not trusted yet");
        goto out;
    }
    if (lr < 0) {
        snprintf(why, whylen, "unreadable trust record: %s", err);
        goto out;
    }
    trust_compare(&rec, &cur, why, whylen);
    if (why[0] == '\0') {
        ts = TRUST_TRUSTED;
        if (files) { /* the very bytes just hashed: the caller loads these */
            *files = cur;
            memset(&cur, 0, sizeof cur);
        }
    }
out:
    trust_set_free(&cur);
    trust_set_free(&rec);
    free(pdir);
    return ts;
}
