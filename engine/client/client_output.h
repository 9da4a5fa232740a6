/* client_output.h — writing what the session sends (a command's output, a job's log) to our
 * stdout / stderr as it arrives: every byte, with write(2) and no buffering. Owns retrying
 * EINTR, short writes, and EAGAIN on a descriptor a parent left non-blocking (it waits with
 * poll until the descriptor takes more). Must never: buffer, or drop bytes. */
#ifndef CORDON_CLIENT_OUTPUT_H
#define CORDON_CLIENT_OUTPUT_H
#include <stddef.h>

/* 0, or -errno (EPIPE when SIGPIPE is ignored and the reader went away, ...). */
int cout_write(int fd, const void *buf, size_t len);
#endif
