/* record.h — the one reader and writer under cordon's kept files: typed fields (u8, u16, u32,
 * u64, i64 and length-prefixed bytes) in the host's byte order (a kept file never leaves the
 * host that wrote it), read back with every length checked against what is left, and a file
 * envelope around them:
 *   8 bytes of magic (what the file is), u32 version, u32 payload length, the payload,
 *   8 bytes of check over everything before them (a 64-bit mix that any change of one 8-byte
 *   word changes: against torn and corrupted files, not a MAC).
 * A file whose magic, version, length or check is not exactly the expected one is absent to its
 * reader: the caller rebuilds what it held (a file of an older format is such a file).
 * Uses: base/util.h (read_private_file, write_private_file).
 * Must never: read past the end of its input, trust a length it has not checked, or hand back
 * a payload whose check failed. */
#ifndef CORDON_RECORD_H
#define CORDON_RECORD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REC_MAGIC_LEN 8
#define REC_CHECK_LEN 8
#define REC_HEAD_LEN (REC_MAGIC_LEN + 4 + 4)
/* What the envelope adds to a payload. */
#define REC_FILE_OVERHEAD (REC_HEAD_LEN + REC_CHECK_LEN)

/* ---- writing ------------------------------------------------------------------------------ */

/* A growable buffer of fields; zero-initialised is empty. */
struct rec_out {
    unsigned char *data;
    size_t len, cap;
};
void rec_put(struct rec_out *o, const void *p, size_t n); /* n raw bytes */
void rec_put_u8(struct rec_out *o, uint8_t v);
void rec_put_u16(struct rec_out *o, uint16_t v);
void rec_put_u32(struct rec_out *o, uint32_t v);
void rec_put_u64(struct rec_out *o, uint64_t v);
void rec_put_i64(struct rec_out *o, int64_t v);
/* u32 length, then the n bytes. */
void rec_put_blob(struct rec_out *o, const void *p, uint32_t n);
void rec_out_free(struct rec_out *o);

/* ---- reading ------------------------------------------------------------------------------ */

/* A view of bytes being read. Once a read fails (fewer bytes left than asked), bad stays set,
 * every later read fails too and gives zeros: a caller may read a group of fields and test
 * bad once. */
struct rec_in {
    const unsigned char *p, *end;
    bool bad;
};
struct rec_in rec_in_of(const void *data, size_t len);
size_t rec_left(const struct rec_in *in);
bool rec_get(struct rec_in *in, void *out, size_t n);
uint8_t rec_get_u8(struct rec_in *in);
uint16_t rec_get_u16(struct rec_in *in);
uint32_t rec_get_u32(struct rec_in *in);
uint64_t rec_get_u64(struct rec_in *in);
int64_t rec_get_i64(struct rec_in *in);
/* n raw bytes in place (NULL, and bad set, when fewer are left). */
const unsigned char *rec_get_raw(struct rec_in *in, size_t n);
/* A blob rec_put_blob wrote, of at most max bytes: its bytes in place and *n, or NULL (bad
 * set) when its length is past max or past what is left. */
const unsigned char *rec_get_blob(struct rec_in *in, size_t max, size_t *n);
/* Everything read, nothing bad: a reader's last test. */
bool rec_in_done(const struct rec_in *in);

/* ---- files -------------------------------------------------------------------------------- */

/* The whole file for payload: the envelope around it, into file (emptied first). */
void rec_file_seal(struct rec_out *file, const char magic[REC_MAGIC_LEN], uint32_t version,
                   const struct rec_out *payload);
/* The payload of a whole file in buf, when its magic and version are these, its length is
 * what buf holds and its check holds: true and *payload reading it; else false. */
bool rec_file_open(const void *buf, size_t len, const char magic[REC_MAGIC_LEN], uint32_t version,
                   struct rec_in *payload);
/* Write payload sealed to path (write_private_file: 0600, renamed over it). 0 or -errno. */
int rec_file_write(const char *path, const char magic[REC_MAGIC_LEN], uint32_t version,
                   const struct rec_out *payload);
/* Read path (read_private_file: this euid's 0600 regular file, at most max_payload bytes of
 * payload) and open it: 0 with *buf (the caller frees it) and *payload reading into it, or
 * -errno (-EBADMSG for a file that is not one of these: another format, version, a torn or
 * changed one). */
int rec_file_read(const char *path, const char magic[REC_MAGIC_LEN], uint32_t version,
                  size_t max_payload, char **buf, struct rec_in *payload);
#endif
