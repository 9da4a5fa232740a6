/* self_path.c — see self_path.h. */
#include "base/self_path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int self_helper_path(const char *program, char *buf, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0)
        return -errno;
    if (n == 0)
        return -ENOENT;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -ENOENT;
    *slash = '\0'; /* self: the binary's directory */
    if ((size_t)snprintf(buf, len, "%s/%s", self, program) >= len)
        return -ENAMETOOLONG;
    if (access(buf, X_OK) == 0)
        return 0;
    /* The parent by name, not "..": an error then shows PREFIX/libexec/cordon/PROGRAM. */
    slash = strrchr(self, '/');
    int parent_len = slash ? (int)(slash - self) : 0;
    if ((size_t)snprintf(buf, len, "%.*s/libexec/cordon/%s", parent_len, self, program) >= len)
        return -ENAMETOOLONG;
    return 0;
}
