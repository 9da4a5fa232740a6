/* said_once.c — see said_once.h. Owns the said/ folder under cordon's state folder and its
 * markers. Uses base/cordon_dirs (where the state folder is), base/util (mkdir_p, xasprintf).
 * Must never follow a link to make a marker (O_NOFOLLOW, O_EXCL), nor fail a run: every error
 * means "say it". */
#include "base/said_once.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cordon_dirs.h"
#include "base/util.h"

char *said_once_dir(void)
{
    return cdir_path(CDIR_STATE, "said");
}

static bool good_name(const char *name)
{
    size_t n = strlen(name);
    return n > 0 && n <= 64 && name[0] != '.' &&
           strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

bool said_once_first(const char *name, const char *line)
{
    bool say = true;
    char *dir = said_once_dir(), *path = NULL;
    if (!dir || !good_name(name) || mkdir_p(dir, 0700) < 0)
        goto out;
    path = xasprintf("%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        say = errno != EEXIST; /* there: said before */
        goto out;
    }
    size_t len = strlen(line);
    bool whole = write(fd, line, len) == (ssize_t)len && write(fd, "\n", 1) == 1;
    close(fd);
    if (!whole)
        unlink(path); /* a marker without its line: say it again next time */
out:
    free(path);
    free(dir);
    return say;
}
