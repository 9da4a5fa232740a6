/* Runs in: controller (cordon-session). */
/* job_log.h — a background job's log file with a size cap. Bytes are appended; when the file
 * would pass the cap, its oldest part is dropped: the newest half of the cap is kept, behind a
 * marker line that says how many bytes were dropped in all. Appends never block on the reader
 * and cost amortised O(1) per byte; memory use is one copy buffer. */
#ifndef CORDON_JOB_LOG_H
#define CORDON_JOB_LOG_H
#include <stddef.h>
#include <stdint.h>

struct job_log {
    int fd;           /* read-write, opened by init inside the sandbox; -1 when none */
    uint64_t size;    /* bytes in the file now */
    uint64_t dropped; /* bytes of output dropped so far */
    uint64_t marker;  /* bytes of the marker line at the start of the file (0: none) */
    size_t cap;
};

void job_log_init(struct job_log *l, int fd, size_t cap);
/* 0, or -errno (the log stops growing; the job runs on). */
int job_log_append(struct job_log *l, const char *data, size_t n);
void job_log_close(struct job_log *l);
#endif
