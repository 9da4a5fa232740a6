/* record.c — see record.h. */
#include "base/record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* ---- writing ------------------------------------------------------------------------------ */

void rec_put(struct rec_out *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + n)
            cap *= 2;
        o->data = xrealloc(o->data, cap);
        o->cap = cap;
    }
    if (n)
        memcpy(o->data + o->len, p, n);
    o->len += n;
}

void rec_put_u8(struct rec_out *o, uint8_t v)
{
    rec_put(o, &v, sizeof v);
}

void rec_put_u16(struct rec_out *o, uint16_t v)
{
    rec_put(o, &v, sizeof v);
}

void rec_put_u32(struct rec_out *o, uint32_t v)
{
    rec_put(o, &v, sizeof v);
}

void rec_put_u64(struct rec_out *o, uint64_t v)
{
    rec_put(o, &v, sizeof v);
}

void rec_put_i64(struct rec_out *o, int64_t v)
{
    rec_put(o, &v, sizeof v);
}

void rec_put_blob(struct rec_out *o, const void *p, uint32_t n)
{
    rec_put_u32(o, n);
    rec_put(o, p, n);
}

void rec_out_free(struct rec_out *o)
{
    free(o->data);
    *o = (struct rec_out){0};
}

/* ---- reading ------------------------------------------------------------------------------ */

struct rec_in rec_in_of(const void *data, size_t len)
{
    const unsigned char *p = data;
    return (struct rec_in){.p = p, .end = p + len};
}

size_t rec_left(const struct rec_in *in)
{
    return (size_t)(in->end - in->p);
}

bool rec_get(struct rec_in *in, void *out, size_t n)
{
    if (in->bad || rec_left(in) < n) {
        in->bad = true;
        memset(out, 0, n);
        return false;
    }
    memcpy(out, in->p, n);
    in->p += n;
    return true;
}

uint8_t rec_get_u8(struct rec_in *in)
{
    uint8_t v;
    rec_get(in, &v, sizeof v);
    return v;
}

uint16_t rec_get_u16(struct rec_in *in)
{
    uint16_t v;
    rec_get(in, &v, sizeof v);
    return v;
}

uint32_t rec_get_u32(struct rec_in *in)
{
    uint32_t v;
    rec_get(in, &v, sizeof v);
    return v;
}

uint64_t rec_get_u64(struct rec_in *in)
{
    uint64_t v;
    rec_get(in, &v, sizeof v);
    return v;
}

int64_t rec_get_i64(struct rec_in *in)
{
    int64_t v;
    rec_get(in, &v, sizeof v);
    return v;
}

const unsigned char *rec_get_raw(struct rec_in *in, size_t n)
{
    if (in->bad || rec_left(in) < n) {
        in->bad = true;
        return NULL;
    }
    const unsigned char *p = in->p;
    in->p += n;
    return p;
}

const unsigned char *rec_get_blob(struct rec_in *in, size_t max, size_t *n)
{
    uint32_t len = rec_get_u32(in);
    *n = 0;
    if (in->bad || len > max) {
        in->bad = true;
        return NULL;
    }
    const unsigned char *p = rec_get_raw(in, len);
    if (p)
        *n = len;
    return p;
}

bool rec_in_done(const struct rec_in *in)
{
    return !in->bad && in->p == in->end;
}

/* ---- files -------------------------------------------------------------------------------- */

/* The check: each step is a bijection of the state, so a change of any one 8-byte word always
 * changes the result, at a small fraction of a hash's cost (a kept walk of a large workspace
 * is megabytes, read at every run's start). Not a MAC: a kept file is trusted for being the
 * caller's private file in a directory no sandbox sees; the check catches a torn or corrupted
 * one (a disk, a hand edit). */
static void check_of(const void *data, size_t n, unsigned char out[REC_CHECK_LEN])
{
    const unsigned char *p = data;
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t h = 0x243F6A8885A308D3ull ^ ((uint64_t)n * k);
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * k;
        h ^= h >> 31;
    }
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ w ^ ((uint64_t)n << 56)) * k;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    memcpy(out, &h, REC_CHECK_LEN);
}

void rec_file_seal(struct rec_out *file, const char magic[REC_MAGIC_LEN], uint32_t version,
                   const struct rec_out *payload)
{
    unsigned char check[REC_CHECK_LEN];
    file->len = 0;
    rec_put(file, magic, REC_MAGIC_LEN);
    rec_put_u32(file, version);
    rec_put_u32(file, (uint32_t)payload->len);
    rec_put(file, payload->data, payload->len);
    check_of(file->data, file->len, check);
    rec_put(file, check, sizeof check);
}

bool rec_file_open(const void *buf, size_t len, const char magic[REC_MAGIC_LEN], uint32_t version,
                   struct rec_in *payload)
{
    struct rec_in in = rec_in_of(buf, len);
    const unsigned char *m = rec_get_raw(&in, REC_MAGIC_LEN);
    uint32_t v = rec_get_u32(&in), n = rec_get_u32(&in);
    if (in.bad || memcmp(m, magic, REC_MAGIC_LEN) != 0 || v != version ||
        rec_left(&in) != (size_t)n + REC_CHECK_LEN)
        return false;
    unsigned char check[REC_CHECK_LEN];
    check_of(buf, REC_HEAD_LEN + (size_t)n, check);
    if (memcmp(check, in.p + n, REC_CHECK_LEN) != 0)
        return false;
    *payload = rec_in_of(in.p, n);
    return true;
}

int rec_file_write(const char *path, const char magic[REC_MAGIC_LEN], uint32_t version,
                   const struct rec_out *payload)
{
    struct rec_out file = {0};
    rec_file_seal(&file, magic, version, payload);
    int r = write_private_file(path, file.data, file.len);
    rec_out_free(&file);
    return r;
}

int rec_file_read(const char *path, const char magic[REC_MAGIC_LEN], uint32_t version,
                  size_t max_payload, char **buf, struct rec_in *payload)
{
    size_t len = 0;
    *buf = NULL;
    int r = read_private_file(path, max_payload + REC_FILE_OVERHEAD, buf, &len);
    if (r < 0)
        return r;
    if (!rec_file_open(*buf, len, magic, version, payload)) {
        free(*buf);
        *buf = NULL;
        return -EBADMSG;
    }
    return 0;
}
