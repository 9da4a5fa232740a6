/* said_once.c — see said_once.h. */
#include "base/said_once.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/util.h"

/* The folder of the markers, or NULL (no XDG_STATE_HOME and no HOME: then every run says it). */
static char *said_dir(void)
{
    const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (state && state[0] == '/')
        return xasprintf("%s/cordon/said", state);
    if (home && home[0] == '/')
        return xasprintf("%s/.local/state/cordon/said", strcmp(home, "/") ? home : "");
    return NULL;
}

bool said_once_first(const char *name)
{
    struct utsname u;
    char *dir = said_dir();
    if (!dir || uname(&u) < 0) {
        free(dir);
        return true;
    }
    /* The release, not only the name: a kernel that changes may change what it lacks. */
    for (char *c = u.release; *c; c++)
        if (*c == '/')
            *c = '_';
    char *path = xasprintf("%s/%s@%s", dir, name, u.release);
    bool first = true;
    if (mkdir_p(dir, 0700) == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
            close(fd);
        else if (errno == EEXIST)
            first = false;
    }
    free(path);
    free(dir);
    return first;
}
