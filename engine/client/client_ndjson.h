/* client_ndjson.h — the format of the exec and log streams: splitting NDJSON bytes into lines whatever way
 * they were cut into pieces, decoding one line into an event, and base64. Pure: no I/O, no
 * globals, so it is tested without a session (test_client_args.c).
 * Uses json_read, util. Must never: write output or exit; it only decodes. */
#ifndef CORDON_CLIENT_NDJSON_H
#define CORDON_CLIENT_NDJSON_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The bytes of a line not yet complete. Zero-initialise. */
struct ndjson_lines {
    char *buf;
    size_t len, cap;
};

/* Gets one line (without its '\n' or a '\r' before it; never empty). 0 to go on; a negative
 * value stops ndjson_feed, which returns it. */
typedef int (*ndjson_line_fn)(void *ctx, const char *line, size_t len);

/* Feed the next piece of the stream: fn runs for every line this piece completes; the rest
 * is kept for the next piece. Complete lines inside data are passed without copying. */
int ndjson_feed(struct ndjson_lines *l, const char *data, size_t len, ndjson_line_fn fn, void *ctx);
/* At the end of the stream: a last line without '\n', if any, goes to fn. */
int ndjson_finish(struct ndjson_lines *l, ndjson_line_fn fn, void *ctx);
void ndjson_lines_free(struct ndjson_lines *l);

enum ndjson_kind {
    NDJSON_STARTED,
    NDJSON_OUTPUT,
    NDJSON_EXIT,
    NDJSON_APPROVAL,
    NDJSON_DROPPED,       /* a log's bytes not yet sent were dropped by its cap */
    NDJSON_SESSION_ENDED, /* the stream's last line when the session's end closed it */
    NDJSON_OTHER
};

struct ndjson_event {
    enum ndjson_kind kind;
    long long pid;    /* STARTED, EXIT */
    int fd;           /* OUTPUT: 1 (stdout, and a log's bytes) or 2 (stderr) */
    const char *data; /* OUTPUT: the bytes, `data` or decoded `data_base64` */
    size_t len;
    int exit_code; /* EXIT: 0-255, 128+N for signal N */
    int signal;
    bool timed_out, stopped;
    double duration_ms;
    bool ran_outside;                      /* EXIT: it ran again outside the sandbox, as approved */
    const struct json_value *refusals;     /* EXIT: the array of refusals, or NULL */
    const struct json_value *host_trusted; /* EXIT: host_trusted_changes, or NULL */
    const struct json_value *approval;     /* APPROVAL: the question (an object) */
    unsigned long long bytes;              /* DROPPED */
    const char *reason;                    /* SESSION_ENDED: "idle", "lifetime", "stopped", ... */
    struct json_value *tree_;              /* owned: what data points into */
    char *decoded_;                        /* owned */
};

/* Decode one line. 0, or -1 with the reason in err (malformed JSON, a member missing or of
 * the wrong type). An unknown event is NDJSON_OTHER, not an error. Free with
 * ndjson_event_free, also after an error. */
int ndjson_decode(const char *line, size_t len, struct ndjson_event *ev, char *err, size_t errlen);
void ndjson_event_free(struct ndjson_event *ev);

/* RFC 4648 base64 (standard alphabet; '=' padding optional). out needs len / 4 * 3 + 3
 * bytes. The number of bytes written, or -1 for a character outside the alphabet or a
 * misplaced '='. */
ssize_t ndjson_base64_decode(const char *in, size_t len, unsigned char *out);
#endif
