/* pty.c — see pty.h. */
#include "sandbox/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/util.h"

int pty_open_pair(int *master, int *slave)
{
    int unlock = 0;
    int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0)
        return -errno;
    if (ioctl(m, TIOCSPTLCK, &unlock) < 0) {
        int err = errno;
        close(m);
        return -err;
    }
    int s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (s < 0) {
        int err = errno;
        close(m);
        return -err;
    }
    *master = m;
    *slave = s;
    return 0;
}

int pty_attach_slave(int slave)
{
    if (ioctl(slave, TIOCSCTTY, 0) < 0)
        return -errno;
    for (int fd = 0; fd < 3; fd++)
        if (dup2(slave, fd) < 0)
            return -errno;
    if (slave > 2)
        close(slave);
    return 0;
}

int pty_raw_mode(int fd, struct termios *saved)
{
    struct termios raw;
    if (tcgetattr(fd, saved) < 0)
        return -errno;
    raw = *saved;
    cfmakeraw(&raw);
    if (tcsetattr(fd, TCSAFLUSH, &raw) < 0)
        return -errno;
    return 0;
}

void pty_restore_mode(int fd, const struct termios *saved)
{
    (void)tcsetattr(fd, TCSAFLUSH, saved);
}

void pty_copy_winsize(int from, int to)
{
    struct winsize ws;
    if (ioctl(from, TIOCGWINSZ, &ws) == 0)
        (void)ioctl(to, TIOCSWINSZ, &ws);
}

ssize_t pty_pump(int from, int to)
{
    char buf[16384];
    ssize_t n = read(from, buf, sizeof buf);
    if (n < 0) {
        if (errno == EIO)
            return 0;
        return -errno;
    }
    if (n == 0)
        return 0;
    int r = write_all(to, buf, (size_t)n);
    return r < 0 ? r : n;
}
