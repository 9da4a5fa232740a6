/* splice_pipe.h — one direction of a tunnel moved socket -> pipe -> socket with splice(2), so
 * the bytes never pass through the controller's memory (the copies, not the policy, are what
 * limits a relay's throughput). The pipe is taken at the first byte and given back when the
 * tunnel idles or closes with nothing in it: a few empty pipes are kept for the next tunnels
 * (a new tunnel then costs no pipe2, fcntl and two closes per direction). */
#ifndef CORDON_SPLICE_PIPE_H
#define CORDON_SPLICE_PIPE_H
#include <stdbool.h>
#include <stddef.h>

struct splice_pipe {
    int r, w;   /* -1 until the first byte */
    size_t len; /* bytes in the pipe, not yet written to dst */
    size_t cap; /* the pipe's capacity */
    bool took;  /* a byte came from src since the pipe was taken (the caller reads and clears it) */
};

void splice_pipe_init(struct splice_pipe *p);
/* Move what src has into the pipe (unless *src_eof) and what the pipe holds into dst, without
 * blocking. Sets *src_eof at src's end of file. 0, or -errno when a side is broken. */
int splice_pump(struct splice_pipe *p, int src, bool *src_eof, int dst);
bool splice_pipe_full(const struct splice_pipe *p);
/* Give an empty pipe back (an idle tunnel keeps no pipe): kept for the next tunnel while few
 * are spare, else closed. A pipe with bytes in it stays. */
void splice_pipe_release(struct splice_pipe *p);
/* Close the pipe whatever it holds (a closing tunnel's leftover bytes are dropped with it). */
void splice_pipe_close(struct splice_pipe *p);
/* Close the spare pipes (when the proxy stops). */
void splice_pipe_drop_spares(void);
#endif
