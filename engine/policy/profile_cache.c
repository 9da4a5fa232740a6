/* profile_cache.c — see profile_cache.h. A resolved profile is a pure function of the files
 * the layers read, the flags, and what the host API answered: the key pins the inputs that are
 * known before any Lua runs, the transcript every answer the Lua side got, and an entry is
 * served only when each of those questions, asked again now, gets the same answer.
 * Uses: base/record.h (the checked reader under its entries), sha256.c, util.c
 * (read_private_file, write_private_file), trust.c's sets,
 * dl_iterate_phdr for the build-id.
 * Must never: follow a link to an entry or keep one that is not the caller's 0600 file,
 * trust a length or count it has not checked against what is left, or print. */
#include "policy/profile_cache.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "base/cordon_dirs.h"
#include "base/record.h"
#include "policy/trust.h"
#include "sandbox/profile_keys.h"

/* An entry is a kept file of base/record.h; its magic and version are part of the key too. */
#define PC_MAGIC "CORDPC2\n"
#define PC_MAGIC_LEN REC_MAGIC_LEN
#define PC_VERSION 2u
#define PC_ENTRY_MAX ((size_t)1 << 20)   /* an entry larger than this is not kept */
#define PC_TABLE_MAX ((size_t)512 << 10) /* the serialised profile */
#define PC_TABLE_DEPTH 16
#define PC_TABLE_NODES 20000
#define PC_ENTRIES_KEPT 64                /* the oldest beyond these are removed at a write */
#define PC_GETENV_ALLOW_MAX (1 << 20)     /* a larger getenv-allow makes the run uncacheable */
#define PC_FILE_INLINE ((size_t)64 << 10) /* a file up to this size is kept whole, not hashed */

/* ---- buffers ------------------------------------------------------------------------------ */

void pc_buf_put(struct pc_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->data = xrealloc(b->data, cap);
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* Writing: base/record.h's field types (the host's byte order: an entry never leaves it), into
 * the pc_buf the callers hold. */
static void put_u8(struct pc_buf *b, unsigned v)
{
    uint8_t c = (uint8_t)v;
    pc_buf_put(b, &c, sizeof c);
}

static void put_u32(struct pc_buf *b, uint32_t v)
{
    pc_buf_put(b, &v, sizeof v);
}

static void put_u64(struct pc_buf *b, uint64_t v)
{
    pc_buf_put(b, &v, sizeof v);
}

static void put_bytes(struct pc_buf *b, const void *p, size_t n)
{
    put_u32(b, (uint32_t)n);
    pc_buf_put(b, p, n);
}

static void put_str(struct pc_buf *b, const char *s)
{
    put_bytes(b, s, strlen(s));
}

/* A string that may be absent: present flag, then the bytes. */
static void put_opt(struct pc_buf *b, const char *s)
{
    put_u8(b, s != NULL);
    if (s)
        put_str(b, s);
}

static void put_list(struct pc_buf *b, const struct str_list *l)
{
    put_u32(b, (uint32_t)l->len);
    for (size_t i = 0; i < l->len; i++)
        put_str(b, l->items[i]);
}

void pc_buf_free(struct pc_buf *b)
{
    free(b->data);
    *b = (struct pc_buf){0};
}

/* Reading is base/record.h's checked reader (struct rec_in): every get checks what is left,
 * and after one failure all fail. Bytes with their length: a pointer into the buffer, or NULL
 * (r->bad) when they overrun. */
static const unsigned char *get_bytes(struct rec_in *r, size_t *n)
{
    return rec_get_blob(r, SIZE_MAX, n);
}

/* A list of strings, each without a NUL inside; count bounded by what is left. */
static bool get_list(struct rec_in *r, struct str_list *out)
{
    uint32_t n = rec_get_u32(r);
    if (r->bad || n > rec_left(r) / 4) {
        r->bad = true;
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        size_t len;
        const unsigned char *s = get_bytes(r, &len);
        if (!s || memchr(s, '\0', len)) {
            r->bad = true;
            return false;
        }
        str_list_push_owned(out, xasprintf("%.*s", (int)len, (const char *)s));
    }
    return true;
}

/* ---- probes ------------------------------------------------------------------------------- */

unsigned pc_stat_type(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (unsigned)(st.st_mode & S_IFMT) : 0;
}

int pc_dir_entries(const char *path, size_t max, struct str_list *out)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    bool too_many = false;
    struct dirent *de;
    while (!too_many && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        too_many = out->len >= max;
        str_list_push(out, de->d_name);
    }
    closedir(d);
    if (too_many) {
        str_list_free(out);
        return -1;
    }
    str_list_sort(out);
    return 0;
}

int pc_lua_names(const char *dir, struct str_list *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] != '.' && l > 4 && strcmp(e->d_name + l - 4, ".lua") == 0)
            str_list_push(out, e->d_name);
    }
    closedir(d);
    str_list_sort(out);
    return 0;
}

/* ---- answers, encoded the one way the recording and the replay both use ------------------- */

/* A file's answer: its errno, or its bytes. Up to PC_FILE_INLINE bytes are kept themselves (a
 * replay then compares them, which costs less than hashing them again), a larger file by its
 * SHA-256. */
static void enc_file(struct pc_buf *a, int err, const void *data, size_t len)
{
    put_u32(a, (uint32_t)-err);
    if (err != 0)
        return;
    if (len <= PC_FILE_INLINE) {
        put_u8(a, 'b');
        put_bytes(a, data, len);
        return;
    }
    struct sha256_ctx c;
    uint8_t d[SHA256_DIGEST_LEN];
    sha256_init(&c);
    sha256_update(&c, data, len);
    sha256_final(&c, d);
    put_u8(a, 'h');
    pc_buf_put(a, d, sizeof d);
}

static void enc_names(struct pc_buf *a, int err, const struct str_list *names)
{
    put_u32(a, (uint32_t)-err);
    if (err == 0)
        put_list(a, names);
}

static void enc_project(struct pc_buf *a, const struct lh_options *opt)
{
    const struct trust_set *s = opt->project_dir ? opt->project_files : NULL;
    put_opt(a, opt->project_dir);
    put_u8(a, s != NULL);
    put_u32(a, s ? (uint32_t)s->len : 0);
    for (size_t i = 0; s && i < s->len; i++) {
        put_str(a, s->items[i].rel);
        put_str(a, s->items[i].hash);
        put_u8(a, s->items[i].data != NULL);
    }
}

/* The trusted entry of path when it lies in opt's trusted project directory (*inside then). */
static const struct trust_entry *trusted(const struct lh_options *opt, const char *path,
                                         bool *inside)
{
    *inside = false;
    if (!opt->project_dir || !opt->project_files)
        return NULL;
    size_t n = strlen(opt->project_dir);
    if (strncmp(path, opt->project_dir, n) != 0 || path[n] != '/')
        return NULL;
    *inside = true;
    return trust_set_find(opt->project_files, path + n + 1);
}

/* What lh_push_file answers for path: the bytes it would load, or the errno it would give. */
static void live_file(struct pc_buf *a, const struct lh_options *opt, const char *path)
{
    bool inside;
    const struct trust_entry *t = trusted(opt, path, &inside);
    if (inside) {
        if (t && t->data)
            enc_file(a, 0, t->data, t->len);
        else
            enc_file(a, -ENOENT, NULL, 0);
        return;
    }
    struct stat st;
    if (stat(path, &st) < 0) {
        enc_file(a, -errno, NULL, 0);
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        enc_file(a, -EISDIR, NULL, 0);
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    /* lh_push_file reads at most the size stat gave; a file growing meanwhile differs anyway */
    int r = read_file(path, 0, (size_t)st.st_size + 1, &buf, &len);
    if (r == -EFBIG)
        r = -EAGAIN; /* grew since the stat: never equal to a recorded answer */
    enc_file(a, r, buf, len);
    free(buf);
}

/* The getenv-allow file as lh_api_open sees it: absent (an errno) or these bytes. */
static int read_getenv_allow(const char *path, char **buf, size_t *len)
{
    return read_file(path, 0, PC_GETENV_ALLOW_MAX, buf, len);
}

/* ---- recording ---------------------------------------------------------------------------- */

static struct {
    bool on;
    bool uncacheable;
    uint32_t n;
    struct pc_buf rec;
} R;

bool pc_recording(void)
{
    return R.on;
}

void pc_uncacheable(const char *why)
{
    (void)why;
    if (R.on)
        R.uncacheable = true;
}

static void note(enum pc_kind kind, const char *question, const struct pc_buf *answer)
{
    put_u8(&R.rec, kind);
    put_str(&R.rec, question);
    put_bytes(&R.rec, answer ? answer->data : NULL, answer ? answer->len : 0);
    R.n++;
    if (R.rec.len > PC_ENTRY_MAX)
        R.uncacheable = true;
}

void pc_record_begin(const struct lh_options *opt)
{
    pc_buf_free(&R.rec);
    R.n = 0;
    /* a project directory without its trusted files would be read from disk by paths the
     * transcript does not record (lh_file_exists): layer_dirs never names one so */
    R.uncacheable = opt->project_dir && !opt->project_files;
    R.on = true;
    struct pc_buf a = {0};
    enc_project(&a, opt);
    note(PC_PROJECT, "", &a);
    pc_buf_free(&a);
}

void pc_record_end(void)
{
    R.on = false;
}

void pc_note_file(enum pc_kind kind, const char *path, int err, const void *data, size_t len)
{
    if (!R.on)
        return;
    if (kind == PC_GETENV_ALLOW) { /* read as the replay will, whatever lh_api_open read */
        char *buf = NULL;
        size_t n = 0;
        err = read_getenv_allow(path, &buf, &n);
        if (err == -EFBIG)
            R.uncacheable = true;
        struct pc_buf a = {0};
        enc_file(&a, err, buf, n);
        note(kind, path, &a);
        pc_buf_free(&a);
        free(buf);
        return;
    }
    struct pc_buf a = {0};
    enc_file(&a, err, data, len);
    note(kind, path, &a);
    pc_buf_free(&a);
}

void pc_note_names(enum pc_kind kind, const char *path, int err, const struct str_list *names)
{
    if (!R.on)
        return;
    struct pc_buf a = {0};
    enc_names(&a, err, names);
    note(kind, path, &a);
    pc_buf_free(&a);
}

void pc_note_access(const char *path, bool exists)
{
    if (!R.on)
        return;
    struct pc_buf a = {0};
    put_u8(&a, exists);
    note(PC_ACCESS, path, &a);
    pc_buf_free(&a);
}

void pc_note_stat(const char *path, unsigned type)
{
    if (!R.on)
        return;
    struct pc_buf a = {0};
    put_u32(&a, type);
    note(PC_STAT, path, &a);
    pc_buf_free(&a);
}

void pc_note_value(enum pc_kind kind, const char *question, const char *value)
{
    if (!R.on)
        return;
    struct pc_buf a = {0};
    put_opt(&a, value);
    note(kind, question, &a);
    pc_buf_free(&a);
}

void pc_note_print(const char *line)
{
    if (R.on)
        note(PC_PRINT, line, NULL);
}

/* ---- the key ------------------------------------------------------------------------------ */

struct build_id {
    unsigned char id[64];
    size_t len;
};

/* The GNU build-id note of the executable (the first object dl_iterate_phdr reports). */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct build_id *b = data;
    for (int i = 0; i < info->dlpi_phnum && !b->len; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        size_t left = ph->p_memsz;
        while (left >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
            size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;
            size_t total = sizeof *n + name + desc;
            if (total > left)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
                memcmp(p + sizeof *n, "GNU", 4) == 0 && n->n_descsz > 0 &&
                n->n_descsz <= sizeof b->id) {
                memcpy(b->id, p + sizeof *n + name, n->n_descsz);
                b->len = n->n_descsz;
                break;
            }
            p += total;
            left -= total;
        }
    }
    return 1; /* the executable only */
}

static const struct build_id *build_id(void)
{
    static struct build_id b;
    static bool looked;
    if (!looked) {
        dl_iterate_phdr(find_build_id, &b);
        looked = true;
    }
    return &b;
}

static void put_flag(struct pc_buf *b, enum flag_state f)
{
    put_u8(b, (unsigned)f);
}

/* Every field of run_flags but the command (which no part of the resolution reads): the flags of
 * profile keys by their rows (sandbox/profile_keys.c), then the options that are no key's. A
 * field added to the struct changes its size, and this assertion asks for it to be keyed: a
 * key's flag already is. */
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(struct run_flags) == 320,
               "run_flags changed: key the new field in profile_cache.c's put_flags unless it "
               "is a profile key's flag, then set the new size");
#endif
static void put_flags(struct pc_buf *b, const struct run_flags *f)
{
    for (size_t i = 0; i < profile_keys_len; i++) {
        const struct profile_key *k = &profile_keys[i];
        if (!k->flag)
            continue;
        const void *field = (const char *)f + k->flag_field;
        if (k->kind == PK_BOOLEAN)
            put_flag(b, *(const enum flag_state *)field);
        else if (pk_kind_is_list(k->kind))
            put_list(b, field);
        else
            put_opt(b, *(const char *const *)field);
    }
    put_opt(b, f->profile);
    put_list(b, &f->publish);
    put_opt(b, f->policy_file);
    put_u8(b, f->detach);
    put_opt(b, f->owner);
    put_list(b, &f->credentials);
    put_opt(b, f->review_fork);
}

int pc_key(const struct run_flags *flags, const char *cwd, const char *home,
           char *const *environ_in, const struct lh_options *opt, uint8_t key[PC_KEY_LEN])
{
    const struct build_id *id = build_id();
    if (!id->len)
        return -ENOTSUP;
    struct pc_buf b = {0};
    pc_buf_put(&b, PC_MAGIC, PC_MAGIC_LEN);
    put_bytes(&b, id->id, id->len);
    put_u32(&b, (uint32_t)getuid());
    put_opt(&b, cwd);
    put_opt(&b, home);
    put_flags(&b, flags);
    size_t n = 0;
    for (char *const *e = environ_in; e && *e; e++)
        n++;
    put_u32(&b, (uint32_t)n);
    for (char *const *e = environ_in; e && *e; e++)
        put_str(&b, *e);
    put_opt(&b, opt->datadir);
    put_opt(&b, opt->user_config_dir);
    put_opt(&b, opt->project_dir);
    put_opt(&b, opt->extra_policy);
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, b.data, b.len);
    sha256_final(&c, key);
    pc_buf_free(&b);
    return 0;
}

/* $XDG_CACHE_HOME/cordon/profiles, else ~/.cache/cordon/profiles; NULL when neither is
 * absolute (a relative one would name a different place from every directory). */
static char *cache_dir(void)
{
    return cdir_path(CDIR_CACHE, "profiles");
}

char *pc_entry_path(const uint8_t key[PC_KEY_LEN])
{
    char *dir = cache_dir();
    if (!dir)
        return NULL;
    char hex[PC_KEY_LEN * 2 + 1];
    for (size_t i = 0; i < PC_KEY_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", key[i]);
    char *path = xasprintf("%s/%s", dir, hex);
    free(dir);
    return path;
}

/* ---- the profile table -------------------------------------------------------------------- */

struct dump {
    lua_State *L;
    int seen; /* absolute index of a table of the tables dumped */
    size_t nodes;
    struct pc_buf *out;
};

struct tkey {
    bool is_int;
    lua_Integer i;
    const char *s;
    size_t len;
};

static int tkey_cmp(const void *a, const void *b)
{
    const struct tkey *x = a, *y = b;
    if (x->is_int != y->is_int)
        return x->is_int ? -1 : 1;
    if (x->is_int)
        return x->i < y->i ? -1 : x->i > y->i;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

static int dump_value(struct dump *d, int idx, int depth);

/* A table: 'T', its pair count, then its pairs in key order (integers, then strings). */
static int dump_table(struct dump *d, int idx, int depth)
{
    lua_State *L = d->L;
    idx = lua_absindex(L, idx);
    if (depth > PC_TABLE_DEPTH || !lua_checkstack(L, 6))
        return -1;
    if (lua_getmetatable(L, idx)) {
        lua_pop(L, 1);
        return -1;
    }
    lua_pushvalue(L, idx);
    if (lua_rawget(L, d->seen) != LUA_TNIL) { /* shared or cyclic: not plain data */
        lua_pop(L, 1);
        return -1;
    }
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
    lua_pushboolean(L, 1);
    lua_rawset(L, d->seen);
    size_t n = 0, cap = 0;
    struct tkey *keys = NULL;
    int rc = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) { /* [k, v] */
        lua_pop(L, 1);
        struct tkey k = {0};
        if (lua_type(L, -1) == LUA_TSTRING) {
            k.s = lua_tolstring(L, -1, &k.len); /* alive: a key of the table */
        } else if (lua_isinteger(L, -1)) {
            k.is_int = true;
            k.i = lua_tointeger(L, -1);
        } else {
            rc = -1;
        }
        if (rc == 0 && ++d->nodes > PC_TABLE_NODES)
            rc = -1;
        if (rc < 0) {
            lua_pop(L, 1);
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            keys = xrealloc(keys, cap * sizeof *keys);
        }
        keys[n++] = k;
    }
    if (rc == 0) {
        if (n)
            qsort(keys, n, sizeof *keys, tkey_cmp);
        put_u8(d->out, 'T');
        put_u32(d->out, (uint32_t)n);
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (keys[i].is_int) {
                put_u8(d->out, 'i');
                put_u64(d->out, (uint64_t)keys[i].i);
                lua_pushinteger(L, keys[i].i);
            } else {
                put_u8(d->out, 's');
                put_bytes(d->out, keys[i].s, keys[i].len);
                lua_pushlstring(L, keys[i].s, keys[i].len);
            }
            lua_rawget(L, idx);
            rc = dump_value(d, -1, depth + 1);
            lua_pop(L, 1);
            if (d->out->len > PC_TABLE_MAX)
                rc = -1;
        }
    }
    free(keys);
    return rc;
}

static int dump_value(struct dump *d, int idx, int depth)
{
    lua_State *L = d->L;
    switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        put_u8(d->out, 's');
        put_bytes(d->out, s, len);
        return 0;
    }
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            put_u8(d->out, 'i');
            put_u64(d->out, (uint64_t)lua_tointeger(L, idx));
        } else {
            double v = lua_tonumber(L, idx);
            uint64_t bits;
            memcpy(&bits, &v, sizeof bits);
            put_u8(d->out, 'f');
            put_u64(d->out, bits);
        }
        return 0;
    case LUA_TBOOLEAN:
        put_u8(d->out, 'b');
        put_u8(d->out, (unsigned)lua_toboolean(L, idx));
        return 0;
    case LUA_TTABLE:
        return dump_table(d, idx, depth);
    default:
        return -1; /* a function, userdata, thread: no plain data */
    }
}

int pc_table_dump(lua_State *L, int idx, struct pc_buf *out)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE)
        return -1;
    lua_newtable(L);
    struct dump d = {.L = L, .seen = lua_gettop(L), .out = out};
    int rc = dump_value(&d, idx, 0);
    lua_pop(L, 1);
    return rc;
}

/* Push one value of a dump: [-0, +1] on success, nothing on failure. */
static int push_value(lua_State *L, struct rec_in *r, int depth, size_t *nodes)
{
    if (depth > PC_TABLE_DEPTH || !lua_checkstack(L, 4) || ++*nodes > PC_TABLE_NODES)
        return -1;
    unsigned tag = rec_get_u8(r);
    size_t len;
    const unsigned char *s;
    switch (r->bad ? 0 : tag) {
    case 's':
        if (!(s = get_bytes(r, &len)))
            return -1;
        lua_pushlstring(L, (const char *)s, len);
        return 0;
    case 'i': {
        uint64_t v = rec_get_u64(r);
        if (r->bad)
            return -1;
        lua_pushinteger(L, (lua_Integer)v);
        return 0;
    }
    case 'f': {
        uint64_t bits = rec_get_u64(r);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (r->bad)
            return -1;
        lua_pushnumber(L, v);
        return 0;
    }
    case 'b': {
        unsigned v = rec_get_u8(r);
        if (r->bad || v > 1)
            return -1;
        lua_pushboolean(L, (int)v);
        return 0;
    }
    case 'T': {
        uint32_t n = rec_get_u32(r);
        if (r->bad || n > (size_t)(r->end - r->p) / 2)
            return -1;
        lua_createtable(L, 0, 0);
        for (uint32_t i = 0; i < n; i++) {
            unsigned kt = r->p < r->end ? *r->p : 0;
            if ((kt != 's' && kt != 'i') || push_value(L, r, depth + 1, nodes) < 0) {
                lua_pop(L, 1);
                return -1;
            }
            if (push_value(L, r, depth + 1, nodes) < 0) {
                lua_pop(L, 2);
                return -1;
            }
            lua_rawset(L, -3);
        }
        return 0;
    }
    default:
        return -1;
    }
}

int pc_table_push(lua_State *L, const unsigned char *p, size_t len)
{
    struct rec_in r = rec_in_of(p, len);
    size_t nodes = 0;
    if (len == 0 || *p != 'T' || push_value(L, &r, 0, &nodes) < 0)
        return -1;
    if (r.p != r.end) {
        lua_pop(L, 1);
        return -1;
    }
    return 0;
}

/* ---- entries ------------------------------------------------------------------------------ */

bool pc_entry_build(const uint8_t key[PC_KEY_LEN], const struct pc_buf *table,
                    const struct str_list *env, bool markers_known, const struct str_list *markers,
                    struct pc_buf *out)
{
    *out = (struct pc_buf){0};
    if (R.uncacheable || R.on)
        return false;
    struct pc_buf p = {0};
    pc_buf_put(&p, key, PC_KEY_LEN);
    put_u32(&p, R.n);
    put_bytes(&p, R.rec.data, R.rec.len);
    put_bytes(&p, table->data, table->len);
    put_list(&p, env);
    put_u8(&p, markers_known);
    put_list(&p, markers);
    /* a kept file of base/record.h around it: magic, version, length, check */
    struct rec_out payload = {.data = p.data, .len = p.len, .cap = p.cap}, file = {0};
    rec_file_seal(&file, PC_MAGIC, PC_VERSION, &payload);
    pc_buf_free(&p);
    *out = (struct pc_buf){.data = file.data, .len = file.len, .cap = file.cap};
    if (out->len > PC_ENTRY_MAX) {
        pc_buf_free(out);
        return false;
    }
    return true;
}

void pc_entry_free(struct pc_entry *e)
{
    free(e->buf);
    str_list_free(&e->env);
    str_list_free(&e->markers);
    str_list_free(&e->prints);
    free(e->workspace_seen);
    *e = (struct pc_entry){0};
}

/* One record: kind, question (no NUL inside), answer. false on a malformed one. */
static bool get_record(struct rec_in *r, unsigned *kind, const char **q, size_t *qlen,
                       const unsigned char **a, size_t *alen)
{
    *kind = rec_get_u8(r);
    const unsigned char *qs = get_bytes(r, qlen);
    *a = qs ? get_bytes(r, alen) : NULL;
    if (r->bad || !*a || *kind < PC_PROJECT || *kind >= PC_KIND_END || memchr(qs, '\0', *qlen))
        return false;
    *q = (const char *)qs;
    return true;
}

int pc_entry_parse(char *buf, size_t len, const uint8_t key[PC_KEY_LEN], struct pc_entry *e)
{
    *e = (struct pc_entry){.buf = buf, .len = len};
    struct rec_in r;
    unsigned char k[PC_KEY_LEN];
    if (!rec_file_open(buf, len, PC_MAGIC, PC_VERSION, &r) || !rec_get(&r, k, sizeof k) ||
        memcmp(k, key, sizeof k) != 0)
        goto bad;
    e->n_records = rec_get_u32(&r);
    if (!(e->records = get_bytes(&r, &e->records_len)) ||
        !(e->table = get_bytes(&r, &e->table_len)) || !get_list(&r, &e->env))
        goto bad;
    unsigned mk = rec_get_u8(&r);
    if (r.bad || mk > 1 || !get_list(&r, &e->markers) || !rec_in_done(&r))
        goto bad;
    e->markers_known = mk;
    /* The records must be exactly n well-formed ones. */
    struct rec_in rr = rec_in_of(e->records, e->records_len);
    for (uint32_t i = 0; i < e->n_records; i++) {
        unsigned kind;
        const char *q;
        const unsigned char *a;
        size_t ql, al;
        if (!get_record(&rr, &kind, &q, &ql, &a, &al))
            goto bad;
    }
    if (rr.p != rr.end)
        goto bad;
    return 0;
bad:
    pc_entry_free(e);
    return -1;
}

int pc_entry_load(const char *path, const uint8_t key[PC_KEY_LEN], struct pc_entry *e)
{
    char *buf = NULL;
    size_t len = 0;
    *e = (struct pc_entry){0};
    if (read_private_file(path, PC_ENTRY_MAX, &buf, &len) < 0)
        return -1;
    return pc_entry_parse(buf, len, key, e);
}

/* The live answer to one recorded question (into a). false: a question the replay cannot ask
 * (nothing is served then). */
static bool live_answer(struct pc_entry *e, unsigned kind, const char *q,
                        const struct lh_options *opt, const char *home, struct pc_buf *a)
{
    switch ((enum pc_kind)kind) {
    case PC_PROJECT:
        enc_project(a, opt);
        return true;
    case PC_FILE:
        live_file(a, opt, q);
        return true;
    case PC_GETENV_ALLOW: {
        char *buf = NULL;
        size_t n = 0;
        int err = read_getenv_allow(q, &buf, &n);
        enc_file(a, err, buf, n);
        free(buf);
        return err != -EFBIG;
    }
    case PC_LIST: {
        struct str_list names = {0};
        int err = pc_lua_names(q, &names);
        enc_names(a, err, &names);
        str_list_free(&names);
        return true;
    }
    case PC_ACCESS:
        put_u8(a, access(q, F_OK) == 0);
        return true;
    case PC_STAT:
        put_u32(a, pc_stat_type(q));
        return true;
    case PC_ENTRIES: {
        struct str_list names = {0};
        int err = pc_dir_entries(q, PC_HOST_ENTRIES_MAX, &names);
        enc_names(a, err, &names);
        str_list_free(&names);
        return true;
    }
    case PC_GETENV:
        put_opt(a, getenv(q));
        return true;
    case PC_HOME:
        put_opt(a, home);
        return true;
    case PC_WORKSPACE:
    case PC_PRINT:
    case PC_KIND_END:
        break;
    }
    (void)e;
    return false;
}

int pc_replay(struct pc_entry *e, const struct lh_options *opt, const char *home)
{
    struct rec_in r = rec_in_of(e->records, e->records_len);
    struct pc_buf a = {0};
    int rc = 0;
    for (uint32_t i = 0; i < e->n_records && rc == 0; i++) {
        unsigned kind;
        const char *q;
        const unsigned char *ans;
        size_t ql, al;
        if (!get_record(&r, &kind, &q, &ql, &ans, &al)) {
            rc = -1;
            break;
        }
        char *question = xasprintf("%.*s", (int)ql, q);
        if (kind == PC_PRINT) {
            str_list_push_owned(&e->prints, question);
            continue;
        }
        if (kind == PC_WORKSPACE) {
            /* nil is the profile hook's answer, always; a path must be the live workspace,
             * which only the C checks after the replay can say: kept for them */
            struct rec_in v = rec_in_of(ans, al);
            size_t n;
            const unsigned char *s = rec_get_u8(&v) ? get_bytes(&v, &n) : NULL;
            if (v.bad || v.p != v.end || (s && memchr(s, '\0', n)))
                rc = -1;
            else if (s && !e->workspace_seen)
                e->workspace_seen = xasprintf("%.*s", (int)n, (const char *)s);
            else if (s && (strlen(e->workspace_seen) != n || memcmp(e->workspace_seen, s, n)))
                rc = -1;
            free(question);
            continue;
        }
        a.len = 0;
        if (!live_answer(e, kind, question, opt, home, &a) || a.len != al ||
            memcmp(a.data, ans, al) != 0)
            rc = -1;
        free(question);
    }
    pc_buf_free(&a);
    return rc;
}

/* An entry's file name: 64 lower-case hex digits. */
static bool entry_name(const char *n)
{
    size_t i = 0;
    for (; n[i]; i++)
        if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
            return false;
    return i == PC_KEY_LEN * 2;
}

struct aged {
    char *name;
    struct timespec mtime;
};

static int aged_cmp(const void *a, const void *b)
{
    const struct aged *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : x->mtime.tv_nsec > y->mtime.tv_nsec;
}

/* Remove the oldest entries beyond PC_ENTRIES_KEPT (by modification time). */
static void prune(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    struct aged *all = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 4096) {
        struct stat st;
        if (!entry_name(de->d_name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 128;
            all = xrealloc(all, cap * sizeof *all);
        }
        all[n++] = (struct aged){xstrdup(de->d_name), st.st_mtim};
    }
    if (n > PC_ENTRIES_KEPT) {
        qsort(all, n, sizeof *all, aged_cmp);
        for (size_t i = 0; i < n - PC_ENTRIES_KEPT; i++)
            (void)unlinkat(dirfd(d), all[i].name, 0);
    }
    for (size_t i = 0; i < n; i++)
        free(all[i].name);
    free(all);
    closedir(d);
}

void pc_entry_store(const char *path, const struct pc_buf *entry)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir_p(dir, 0700) == 0 && write_private_file(path, entry->data, entry->len) == 0)
            prune(dir);
    }
    free(dir);
}
