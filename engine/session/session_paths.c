/* session_paths.c — see session_paths.h. */
#include "session/session_paths.h"
#include "base/session_socket.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int session_dir_ensure(char *err, size_t errlen)
{
    char dir[512];
    if (csock_dir(dir, sizeof dir) < 0) {
        snprintf(err, errlen, "the session directory's path is too long");
        return -1;
    }
    int rc = mkdir_p(dir, 0700);
    if (rc < 0) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(-rc));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) < 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
        snprintf(err, errlen,
                 "%s is not a directory of yours with mode 0700: refusing to put "
                 "session sockets there",
                 dir);
        return -1;
    }
    return 0;
}

int session_file(const char *name, const char *suffix, char *out, size_t n)
{
    char dir[512];
    if (csock_dir(dir, sizeof dir) < 0)
        return -1;
    int len = snprintf(out, n, "%s/%s.%s", dir, name, suffix);
    return len < 0 || (size_t)len >= n ? -1 : 0;
}
