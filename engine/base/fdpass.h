/* fdpass.h — sending and receiving one file descriptor over a Unix socket (SCM_RIGHTS),
 * with a one-byte tag. Used between the sandbox's init and the controller. */
#ifndef CORDON_FDPASS_H
#define CORDON_FDPASS_H
/* 0 or -errno. */
int fdpass_send(int sock, int fd, char tag);
/* Returns the received fd (O_CLOEXEC) and stores the tag, or -errno (-EPIPE on EOF). */
int fdpass_recv(int sock, char *tag);
#endif
