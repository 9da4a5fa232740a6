/* test_record.c — base/record.c: typed fields written and read back, every short read refused
 * and sticky, blobs bounded, and the kept file's envelope: a sealed file opens, and one that
 * differs in any byte, is one byte shorter or longer, or has another magic or version does
 * not; the file written to disk reads back, a file of another format is -EBADMSG. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/record.h"
#include "base/util.h"
#include "test.h"

#define MAGIC "testrec\n"

static void sample(struct rec_out *o)
{
    rec_put_u8(o, 0xab);
    rec_put_u16(o, 0xbeef);
    rec_put_u32(o, 0xdeadbeefu);
    rec_put_u64(o, 0x0123456789abcdefull);
    rec_put_i64(o, -42);
    rec_put_blob(o, "hello", 5);
    rec_put_blob(o, "", 0);
}

static void test_fields(void)
{
    struct rec_out o = {0};
    sample(&o);
    CHECK_EQ_INT(o.len, 1 + 2 + 4 + 8 + 8 + 4 + 5 + 4);
    struct rec_in in = rec_in_of(o.data, o.len);
    CHECK_EQ_INT(rec_get_u8(&in), 0xab);
    CHECK_EQ_INT(rec_get_u16(&in), 0xbeef);
    CHECK(rec_get_u32(&in) == 0xdeadbeefu);
    CHECK(rec_get_u64(&in) == 0x0123456789abcdefull);
    CHECK_EQ_INT(rec_get_i64(&in), -42);
    size_t n = 0;
    const unsigned char *b = rec_get_blob(&in, 16, &n);
    CHECK(b && n == 5 && memcmp(b, "hello", 5) == 0);
    b = rec_get_blob(&in, 16, &n);
    CHECK(b && n == 0);
    CHECK(rec_in_done(&in));
    rec_out_free(&o);
    CHECK(o.data == NULL && o.len == 0);
}

/* Every prefix of the sample fails somewhere, and once failed every read gives zero. */
static void test_short_reads(void)
{
    struct rec_out o = {0};
    sample(&o);
    for (size_t cut = 0; cut < o.len; cut++) {
        struct rec_in in = rec_in_of(o.data, cut);
        size_t n;
        (void)rec_get_u8(&in);
        (void)rec_get_u16(&in);
        (void)rec_get_u32(&in);
        (void)rec_get_u64(&in);
        (void)rec_get_i64(&in);
        (void)rec_get_blob(&in, 16, &n);
        (void)rec_get_blob(&in, 16, &n);
        CHECK(in.bad && !rec_in_done(&in));
        CHECK_EQ_INT(rec_get_u32(&in), 0);
        CHECK(rec_get_raw(&in, 0) == NULL);
    }
    rec_out_free(&o);
}

/* A blob longer than its reader's bound, or than what is left, is refused. */
static void test_blob_bounds(void)
{
    struct rec_out o = {0};
    rec_put_blob(&o, "hello", 5);
    struct rec_in in = rec_in_of(o.data, o.len);
    size_t n = 99;
    CHECK(rec_get_blob(&in, 4, &n) == NULL && n == 0 && in.bad);
    o.len = 0;
    rec_put_u32(&o, 0xffffffffu); /* a length past the input */
    rec_put(&o, "abc", 3);
    in = rec_in_of(o.data, o.len);
    CHECK(rec_get_blob(&in, SIZE_MAX, &n) == NULL && in.bad);
    rec_out_free(&o);
}

static void test_envelope(void)
{
    struct rec_out p = {0}, f = {0};
    sample(&p);
    rec_file_seal(&f, MAGIC, 3, &p);
    CHECK_EQ_INT(f.len, p.len + REC_FILE_OVERHEAD);
    struct rec_in in;
    CHECK(rec_file_open(f.data, f.len, MAGIC, 3, &in));
    CHECK_EQ_INT(rec_left(&in), p.len);
    CHECK(memcmp(in.p, p.data, p.len) == 0);
    CHECK(!rec_file_open(f.data, f.len, MAGIC, 4, &in));
    CHECK(!rec_file_open(f.data, f.len, "otherrec", 3, &in));
    for (size_t i = 0; i < f.len; i++) { /* any byte changed: refused */
        f.data[i] ^= 0x40;
        CHECK(!rec_file_open(f.data, f.len, MAGIC, 3, &in));
        f.data[i] ^= 0x40;
    }
    for (size_t cut = 0; cut < f.len; cut++)
        CHECK(!rec_file_open(f.data, cut, MAGIC, 3, &in));
    rec_put_u8(&f, 0);
    CHECK(!rec_file_open(f.data, f.len, MAGIC, 3, &in));
    struct rec_out empty = {0};
    rec_file_seal(&f, MAGIC, 1, &empty); /* reused: emptied first */
    CHECK(rec_file_open(f.data, f.len, MAGIC, 1, &in) && rec_in_done(&in));
    rec_out_free(&p);
    rec_out_free(&f);
}

static void test_file(void)
{
    const char *base = getenv("TMPDIR");
    char *path = xasprintf("%s/cordon-record-XXXXXX", base && *base ? base : "/tmp");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    struct rec_out p = {0};
    sample(&p);
    CHECK_EQ_INT(rec_file_write(path, MAGIC, 7, &p), 0);
    char *buf = NULL;
    struct rec_in in;
    CHECK_EQ_INT(rec_file_read(path, MAGIC, 7, p.len, &buf, &in), 0);
    CHECK(rec_left(&in) == p.len && memcmp(in.p, p.data, p.len) == 0);
    free(buf);
    /* a payload past the reader's bound is not read */
    CHECK(rec_file_read(path, MAGIC, 7, p.len - 1, &buf, &in) < 0 && buf == NULL);
    /* another format (what a kept file held before record.h): absent to the reader */
    CHECK_EQ_INT(rec_file_read(path, MAGIC, 8, p.len, &buf, &in), -EBADMSG);
    CHECK(buf == NULL);
    CHECK_EQ_INT(write_private_file(path, "cordon git walk\n\1\0\0\0", 20), 0);
    CHECK_EQ_INT(rec_file_read(path, MAGIC, 7, p.len, &buf, &in), -EBADMSG);
    unlink(path);
    CHECK(rec_file_read(path, MAGIC, 7, p.len, &buf, &in) == -ENOENT);
    rec_out_free(&p);
    free(path);
}

TEST_MAIN({"fields read back as written", test_fields},
          {"a short read fails and stays failed", test_short_reads},
          {"a blob past its bound or the input is refused", test_blob_bounds},
          {"the envelope: any change, cut or addition refused", test_envelope},
          {"a kept file reads back; another format is -EBADMSG", test_file})
