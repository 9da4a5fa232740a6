/* session_socket.c — see session_socket.h. */
#include "base/session_socket.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cordon_dirs.h"

_Static_assert(sizeof(((struct sockaddr_un *)0)->sun_path) == CSOCK_PATH_MAX,
               "CSOCK_PATH_MAX must match sun_path");

bool csock_name_valid(const char *name)
{
    size_t n = 0;
    if (name[0] == '.' || name[0] == '-')
        return false;
    for (const char *p = name; *p; p++, n++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
        if (!ok || n >= CSOCK_NAME_MAX)
            return false;
    }
    return n > 0;
}

int csock_dir_for(const char *xdg, uid_t uid, char *out, size_t outlen)
{
    int n;
    if (xdg && xdg[0] == '/') /* a relative XDG_RUNTIME_DIR is ignored (XDG specification) */
        n = snprintf(out, outlen, "%s/cordon", xdg);
    else
        n = snprintf(out, outlen, "/tmp/cordon-%u", (unsigned)uid);
    return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int csock_path_for(const char *xdg, uid_t uid, const char *name, char *out, size_t outlen)
{
    char dir[CSOCK_PATH_MAX];
    if (csock_dir_for(xdg, uid, dir, sizeof dir) < 0)
        return -ENAMETOOLONG;
    int n = snprintf(out, outlen, "%s/%s.sock", dir, name);
    if (n < 0 || (size_t)n >= outlen || (size_t)n >= CSOCK_PATH_MAX)
        return -ENAMETOOLONG;
    return 0;
}

int csock_dir(char *out, size_t outlen)
{
    return csock_dir_for(cdir_runtime(), getuid(), out, outlen);
}

int csock_path(const char *name, char *out, size_t outlen)
{
    return csock_path_for(cdir_runtime(), getuid(), name, out, outlen);
}

/* A refused connect means nobody listens: the controller died. Only a socket is removed (a
 * connect to a regular file is refused too), and with it the jobs file the controller kept. */
void csock_remove_stale(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
        return;
    if (unlink(path) < 0 && errno != ENOENT)
        return;
    size_t n = strlen(path);
    const char *suffix = ".sock";
    size_t sn = strlen(suffix);
    if (n < sn || strcmp(path + n - sn, suffix) != 0)
        return;
    char jobs[CSOCK_PATH_MAX + 16];
    snprintf(jobs, sizeof jobs, "%.*s.jobs.json", (int)(n - sn), path);
    (void)unlink(jobs);
}

int csock_probe(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n >= sizeof addr.sun_path)
        return -ENAMETOOLONG;
    memcpy(addr.sun_path, path, n + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int rc = connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0 ? 1 : -errno;
    close(fd);
    if (rc == -ENOENT || rc == -ECONNREFUSED)
        return 0;
    return rc;
}
