/* root_only.c — see root_only.h. Owns the walk of the scan roots: every directory is opened
 * relative to its parent's fd (openat, O_NOFOLLOW) and every entry judged by fstatat with
 * AT_SYMLINK_NOFOLLOW, so a path is never walked again from / and no symlink is followed (a
 * symlink's target is judged where it lies, if a scan root covers it).
 * Uses: util.c for the lists and path containment; log.c for the one line when the bound is hit.
 * Must never: change the host (it only reads directories), follow a symlink, or show what it
 * could not judge: past the bound the rest is hidden. */
#include "sandbox/root_only.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"

struct walk {
    const struct sandbox_root_only *ro;
    const struct str_list *keep;
    const char *home;
    size_t max, left; /* the bound; entries that may still be judged */
    bool warned;
    struct str_list *hidden;
    int added;
};

bool root_only_judge(const struct stat *st)
{
    if (S_ISLNK(st->st_mode) || st->st_uid != 0)
        return false;
    if (S_ISDIR(st->st_mode))
        return (st->st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH);
    return !(st->st_mode & S_IROTH);
}

/* Is path a keep path, the home, a visible name, or an ancestor of one? Then it is never hidden. */
static bool on_way_to_kept(const struct walk *w, const char *path)
{
    if (w->home && path_is_within(w->home, path))
        return true;
    const struct str_list *lists[] = {w->keep, &w->ro->visible};
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->len; i++)
            if (path_is_within(lists[l]->items[i], path))
                return true;
    return false;
}

/* Is path inside a keep path (the workspace, a writable path)? That area is the caller's to
 * work in, granted by name: nothing in it is judged, as hiding there would break it. */
static bool inside_kept(const struct walk *w, const char *path)
{
    for (size_t i = 0; i < w->keep->len; i++)
        if (path_is_within(path, w->keep->items[i]))
            return true;
    return false;
}

static void add(struct walk *w, const char *path)
{
    if (str_list_contains(w->hidden, path))
        return;
    str_list_push(w->hidden, path);
    w->added++;
}

static char *join(const char *dir, const char *name)
{
    return xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", name);
}

/* Judge the entries of directory dfd (at path; taken over, closed here), descending depth - 1
 * more levels. */
static void walk_dir(struct walk *w, int dfd, const char *path, unsigned depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *full = join(path, de->d_name);
        bool kept = on_way_to_kept(w, full);
        if (str_list_contains(&w->ro->visible, full) || inside_kept(w, full)) {
            free(full);
            continue; /* named visible, or the workspace's: shown as it is, whole */
        }
        if (w->left == 0) {
            /* Fail closed: what is not judged is not shown. */
            if (!w->warned)
                LOG_W("root_only",
                      "more than %zu entries under the root_only scan roots; the rest "
                      "of %s and of the directories not yet scanned is hidden",
                      w->max, path);
            w->warned = true;
            if (!kept)
                add(w, full);
            free(full);
            continue;
        }
        if (de->d_type == DT_LNK) {
            free(full);
            continue; /* a symlink, from the directory itself: no stat needed (/etc/alternatives) */
        }
        w->left--;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK(st.st_mode)) {
            free(full);
            continue; /* gone since readdir, or a symlink: nothing to hide here */
        }
        bool dir = S_ISDIR(st.st_mode);
        bool in_home = w->home && path_is_within(full, w->home);
        /* In the home a root-only directory is looked into while the depth allows, hidden
         * whole at the last level (what is not judged is not shown). */
        if (!kept && root_only_judge(&st) && !(dir && in_home && depth > 1)) {
            add(w, full);
        } else if (dir && depth > 1) {
            int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                walk_dir(w, sub, full, depth - 1);
            else if (!kept)
                add(w, full); /* cannot look inside (as root: rare): do not show it */
        }
        free(full);
    }
    closedir(d);
}

int root_only_scan(const struct sandbox_root_only *ro, const struct str_list *keep,
                   const char *home, size_t max_entries, struct str_list *hidden, char *err,
                   size_t errlen)
{
    struct walk w = {.ro = ro,
                     .keep = keep,
                     .home = home,
                     .max = max_entries,
                     .left = max_entries,
                     .hidden = hidden};
    for (size_t i = 0; i < ro->scan.len; i++) {
        const char *root = ro->scan.items[i];
        int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && (errno == ENOENT || errno == ELOOP || errno == ENOTDIR))
            continue; /* missing, a symlink or not a directory: nothing below it to scan */
        if (fd < 0) {
            snprintf(err, errlen, "root_only: cannot read the scan root %s: %s", root,
                     strerror(errno));
            return -errno;
        }
        struct stat st;
        if (fstat(fd, &st) < 0) {
            int r = -errno;
            close(fd);
            snprintf(err, errlen, "root_only: cannot stat the scan root %s: %s", root,
                     strerror(-r));
            return r;
        }
        if (inside_kept(&w, root)) {
            close(fd);
            continue;
        }
        bool kept = on_way_to_kept(&w, root) || str_list_contains(&ro->visible, root);
        bool in_home = home && path_is_within(root, home);
        if (!kept && !in_home && root_only_judge(&st)) {
            close(fd);
            add(&w, root);
            continue;
        }
        if (ro->depth > 0)
            walk_dir(&w, fd, root, ro->depth);
        else
            close(fd);
    }
    return w.added;
}
