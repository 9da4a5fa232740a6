/* Runs in: init (opens the pair); the command's process (its terminal); controller (the relay). */
/* pty.h — the command's own pseudo-terminal, created in the sandbox's private devpts, and the
 * controller's relay between the caller's terminal and its master side (raw mode, window size).
 * The caller's terminal itself never enters the sandbox. */
#ifndef CORDON_PTY_H
#define CORDON_PTY_H
#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

/* In the sandbox, after devpts is mounted: a new pair. 0 or -errno. */
int pty_open_pair(int *master, int *slave);
/* In the command child, after setsid(): make slave the controlling terminal and fds 0, 1, 2. */
int pty_attach_slave(int slave);
/* Controller: put the caller's terminal in raw mode, saving the old settings. 0 or -errno. */
int pty_raw_mode(int fd, struct termios *saved);
void pty_restore_mode(int fd, const struct termios *saved);
/* Copy the window size of terminal `from` to the pty master `to`. */
void pty_copy_winsize(int from, int to);
/* Move what is readable on `from` to `to`. >0 bytes moved, 0 on EOF (EIO on a master whose
 * slaves are all closed counts as EOF), -EAGAIN when nothing was readable, else -errno. */
ssize_t pty_pump(int from, int to);
#endif
