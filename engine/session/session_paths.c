/* session_paths.c — see session_paths.h. */
#include "session_paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool session_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > SESSION_NAME_MAX || name[0] == '.' || name[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

int session_dir(char *out, size_t n)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int len = xdg && xdg[0] == '/' ? snprintf(out, n, "%s/cordon", xdg)
                                   : snprintf(out, n, "/tmp/cordon-%u", (unsigned)getuid());
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

int session_dir_ensure(char *err, size_t errlen)
{
    char dir[512];
    if (session_dir(dir, sizeof dir) < 0) {
        snprintf(err, errlen, "the session directory's path is too long");
        return -1;
    }
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) < 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
        snprintf(err, errlen, "%s is not a directory of yours with mode 0700: refusing to put "
                 "session sockets there", dir);
        return -1;
    }
    return 0;
}

int session_file(const char *name, const char *suffix, char *out, size_t n)
{
    char dir[512];
    if (session_dir(dir, sizeof dir) < 0)
        return -1;
    int len = snprintf(out, n, "%s/%s.%s", dir, name, suffix);
    return len < 0 || (size_t)len >= n ? -1 : 0;
}
