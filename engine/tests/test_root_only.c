/* test_root_only.c — the root_only scan: what only root may read is found (a directory whole),
 * the rest, symlinks, visible names and the ways to kept paths are not; depth and the entry
 * bound are kept, and past the bound what is not judged is hidden. The scan ahead gives what the
 * scan with the real inputs gives, its own result only when those inputs change no answer, and
 * its guess is the coding profile's root_only. The walk with the last run's kept listings hides
 * what a fresh walk hides (files chmod'ed or added since included), and a bad file is not used.
 * Fixtures under $TMPDIR. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/root_only.h"
#include "test.h"

static void test_judge(void)
{
    struct stat st = {.st_uid = 0, .st_mode = S_IFREG | 0600};
    CHECK(root_only_judge(&st));
    st.st_mode = S_IFREG | 0644;
    CHECK(!root_only_judge(&st));
    st.st_mode = S_IFREG | 0640; /* group-readable only: still root-only to others */
    CHECK(root_only_judge(&st));
    st.st_mode = S_IFDIR | 0755;
    CHECK(!root_only_judge(&st));
    st.st_mode = S_IFDIR | 0751; /* no r for others: cannot be listed */
    CHECK(root_only_judge(&st));
    st.st_mode = S_IFDIR | 0754; /* no x for others: cannot be entered */
    CHECK(root_only_judge(&st));
    st.st_mode = S_IFLNK | 0700;
    CHECK(!root_only_judge(&st));
    st.st_mode = S_IFREG | 0600;
    st.st_uid = 1000;
    CHECK(!root_only_judge(&st));
}

static char base[256];

static void mk(const char *rel, mode_t mode, bool dir)
{
    char *p = xasprintf("%s/%s", base, rel);
    if (dir) {
        CHECK(mkdir(p, 0700) == 0);
    } else {
        int fd = open(p, O_CREAT | O_WRONLY | O_EXCL, 0600);
        CHECK(fd >= 0);
        close(fd);
    }
    CHECK(chmod(p, mode) == 0);
    free(p);
}

static bool hidden_has(const struct str_list *l, const char *rel)
{
    char *p = xasprintf("%s/%s", base, rel);
    bool r = str_list_contains(l, p);
    free(p);
    return r;
}

static void fixture(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/root_only.XXXXXX", tmp && *tmp ? tmp : "/var/tmp");
    CHECK(mkdtemp(base) != NULL);
    CHECK(chmod(base, 0755) == 0);
    mk("secret", 0600, false);
    mk("public", 0644, false);
    mk("named", 0600, false);
    mk("closed", 0700, true);
    mk("closed/inner", 0644, false);
    mk("open", 0755, true);
    mk("open/deep", 0755, true);
    mk("open/deep/secret", 0600, false);
    mk("ws-parent", 0700, true); /* holds the workspace: looked into, not hidden */
    mk("ws-parent/ws", 0755, true);
    mk("ws-parent/other", 0600, false);
    mk("ws-parent/ws/own", 0600, false); /* the workspace's own: never judged */
    char *link = xasprintf("%s/link", base);
    CHECK(symlink("secret", link) == 0);
    free(link);
}

static void scan_cached(unsigned depth, size_t max, struct root_only_cache *cache,
                        struct str_list *hidden, int *n)
{
    struct sandbox_root_only ro = {.hide = true, .depth = depth};
    str_list_push(&ro.scan, base);
    str_list_push_owned(&ro.visible, xasprintf("%s/named", base));
    str_list_push(&ro.scan, "/nonexistent-cordon-root-only");
    struct str_list keep = {0};
    str_list_push_owned(&keep, xasprintf("%s/ws-parent/ws", base));
    char err[256] = "";
    *n = root_only_scan(&ro, &keep, max, cache, hidden, err, sizeof err);
    str_list_free(&ro.scan);
    str_list_free(&ro.visible);
    str_list_free(&keep);
}

static void scan(unsigned depth, size_t max, struct str_list *hidden, int *n)
{
    scan_cached(depth, max, NULL, hidden, n);
}

static void test_scan(void)
{
    if (getuid() != 0)
        TEST_SKIP("needs root: the fixtures must be owned by uid 0");
    fixture();
    struct str_list hidden = {0};
    int n;
    scan(3, ROOT_ONLY_MAX_ENTRIES, &hidden, &n);
    CHECK_EQ_INT(n, 4);
    CHECK(hidden_has(&hidden, "secret"));
    CHECK(hidden_has(&hidden, "closed"));        /* whole */
    CHECK(!hidden_has(&hidden, "closed/inner")); /* not looked into */
    CHECK(hidden_has(&hidden, "open/deep/secret"));
    CHECK(hidden_has(&hidden, "ws-parent/other"));
    CHECK(!hidden_has(&hidden, "ws-parent") && !hidden_has(&hidden, "ws-parent/ws/own"));
    CHECK(!hidden_has(&hidden, "public") && !hidden_has(&hidden, "named") &&
          !hidden_has(&hidden, "link"));
    str_list_free(&hidden);

    scan(2, ROOT_ONLY_MAX_ENTRIES, &hidden, &n); /* open/deep/secret is at level 3 */
    CHECK(!hidden_has(&hidden, "open/deep/secret"));
    CHECK(hidden_has(&hidden, "secret"));
    str_list_free(&hidden);

    scan(3, 0, &hidden, &n); /* bound hit at once: all but the kept hidden */
    CHECK(hidden_has(&hidden, "public") && hidden_has(&hidden, "open") &&
          hidden_has(&hidden, "secret"));
    CHECK(!hidden_has(&hidden, "ws-parent") && !hidden_has(&hidden, "named"));
    str_list_free(&hidden);
    char *cmd = xasprintf("rm -rf '%s'", base);
    CHECK(system(cmd) == 0);
    free(cmd);
}

static bool same_list(const struct str_list *a, const struct str_list *b)
{
    if (a->len != b->len)
        return false;
    for (size_t i = 0; i < a->len; i++)
        if (strcmp(a->items[i], b->items[i]) != 0)
            return false;
    return true;
}

/* The fixture's scan inputs, as scan() uses them; extra_keep (may be NULL) is one more keep
 * path, ws: whether the workspace is kept, named: whether "named" is visible. */
static void inputs(unsigned depth, bool ws, bool named, const char *extra_keep,
                   struct sandbox_root_only *ro, struct str_list *keep)
{
    *ro = (struct sandbox_root_only){.hide = true, .depth = depth};
    str_list_push(&ro->scan, base);
    if (named)
        str_list_push_owned(&ro->visible, xasprintf("%s/named", base));
    str_list_push(&ro->scan, "/nonexistent-cordon-root-only");
    *keep = (struct str_list){0};
    if (ws)
        str_list_push_owned(keep, xasprintf("%s/ws-parent/ws", base));
    if (extra_keep)
        str_list_push(keep, extra_keep);
}

static void inputs_free(struct sandbox_root_only *ro, struct str_list *keep)
{
    str_list_free(&ro->scan);
    str_list_free(&ro->visible);
    str_list_free(keep);
}

/* Guess (depth g_depth, g_ws, g_named, g_extra), then finish with the fixture's real inputs
 * (depth 3, the workspace kept, "named" visible): the result must be the scan's
 * (want), and *used says whether the guess was taken. */
static void ahead_case_max(unsigned g_depth, bool g_ws, bool g_named, const char *g_extra,
                           size_t max, const struct str_list *want, bool *used)
{
    struct sandbox_root_only gro, ro;
    struct str_list gkeep, keep, hidden = {0};
    inputs(g_depth, g_ws, g_named, g_extra, &gro, &gkeep);
    struct root_only_ahead *a = root_only_ahead(&gro, &gkeep, max, NULL);
    CHECK(a != NULL);
    inputs_free(&gro, &gkeep); /* the scan ahead has its own copies */
    inputs(3, true, true, NULL, &ro, &keep);
    str_list_push(&hidden, "/already/hidden"); /* what the list held before stays, first */
    char err[256] = "";
    int n = root_only_finish(a, &ro, &keep, max, &hidden, err, sizeof err, used);
    CHECK_EQ_INT(n, (long long)want->len);
    CHECK(strcmp(hidden.items[0], "/already/hidden") == 0);
    struct str_list rest = {.items = hidden.items + 1, .len = hidden.len - 1};
    CHECK(same_list(&rest, want));
    str_list_free(&hidden);
    inputs_free(&ro, &keep);
}

static void ahead_case(unsigned g_depth, bool g_ws, bool g_named, const char *g_extra,
                       const struct str_list *want, bool *used)
{
    ahead_case_max(g_depth, g_ws, g_named, g_extra, ROOT_ONLY_MAX_ENTRIES, want, used);
}

static void test_ahead(void)
{
    if (getuid() != 0)
        TEST_SKIP("needs root: the fixtures must be owned by uid 0");
    fixture();
    struct str_list want = {0};
    int n;
    scan(3, ROOT_ONLY_MAX_ENTRIES, &want, &n);
    CHECK_EQ_INT(n, 4);
    bool used;
    ahead_case(3, true, true, NULL, &want, &used); /* guessed right */
    CHECK(used);
    /* A keep path the walk never meets changes no answer: the guess still holds. */
    ahead_case(3, true, true, "/nonexistent-cordon-elsewhere/ws", &want, &used);
    CHECK(used);
    /* The guess did not keep the workspace (its parent, 0700, would be hidden whole). */
    ahead_case(3, false, true, NULL, &want, &used);
    CHECK(!used);
    /* The guess did not name "named" visible (it would be hidden). */
    ahead_case(3, true, false, NULL, &want, &used);
    CHECK(!used);
    /* Another depth: scanned again. */
    ahead_case(2, true, true, NULL, &want, &used);
    CHECK(!used);
    /* The bound: each task counts on its own, so when their sum passes it the scan is done
     * again in place, where the bound falls where it falls in order. */
    struct str_list bounded = {0};
    scan(3, 3, &bounded, &n);
    ahead_case_max(3, true, true, NULL, 3, &bounded, &used);
    CHECK(!used);
    str_list_free(&bounded);
    /* Not wanted after all: the thread is stopped and waited for. */
    struct sandbox_root_only ro;
    struct str_list keep;
    inputs(3, true, true, NULL, &ro, &keep);
    root_only_cancel(root_only_ahead(&ro, &keep, ROOT_ONLY_MAX_ENTRIES, NULL));
    root_only_cancel(NULL);
    /* No scan ahead: finish scans in place. */
    struct str_list hidden = {0};
    char err[256] = "";
    CHECK_EQ_INT(
        root_only_finish(NULL, &ro, &keep, ROOT_ONLY_MAX_ENTRIES, &hidden, err, sizeof err, &used),
        4);
    CHECK(!used && same_list(&hidden, &want));
    str_list_free(&hidden);
    inputs_free(&ro, &keep);
    str_list_free(&want);
    char *cmd = xasprintf("rm -rf '%s'", base);
    CHECK(system(cmd) == 0);
    free(cmd);
}

/* The same paths, in any order (a kept listing may come in another order than a fresh one). */
static bool same_set(const struct str_list *a, const struct str_list *b)
{
    if (a->len != b->len)
        return false;
    for (size_t i = 0; i < a->len; i++)
        if (!str_list_contains(b, a->items[i]))
            return false;
    return true;
}

/* One scan of the fixture with the kept listings of file (opened, used, saved); *reused: how
 * many folders were not listed. Checked against a fresh scan: the same paths. */
static void cached_scan(const char *file, bool save, size_t *reused, struct str_list *hidden)
{
    struct str_list fresh = {0};
    int n, nf;
    scan(3, ROOT_ONLY_MAX_ENTRIES, &fresh, &nf);
    struct root_only_cache *c = root_only_cache_open(file);
    CHECK(c != NULL);
    scan_cached(3, ROOT_ONLY_MAX_ENTRIES, c, hidden, &n);
    *reused = root_only_cache_reused(c);
    root_only_cache_close(c, save);
    CHECK_EQ_INT(n, nf);
    CHECK(same_set(hidden, &fresh));
    str_list_free(&fresh);
}

static void write_text(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
    CHECK(fd >= 0);
    CHECK(write(fd, text, len) == (ssize_t)len);
    close(fd);
}

static void test_cache(void)
{
    if (getuid() != 0)
        TEST_SKIP("needs root: the fixtures must be owned by uid 0");
    fixture();
    /* The fixture's folders are new: a ctime this close to the walk is not kept. Past 100 ms it
     * is (a sleep, not a timing assertion: the checks hold whatever the clock). */
    usleep(200 * 1000);
    char *file = xasprintf("%s.walk", base), *tmp = xasprintf("%s.copy", base);
    struct str_list hidden = {0};
    size_t reused;
    /* No file yet: every folder listed, then kept (0600, root's). */
    cached_scan(file, true, &reused, &hidden);
    CHECK_EQ_INT((int)reused, 0);
    struct stat st;
    CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600 &&
          st.st_uid == 0);
    str_list_free(&hidden);
    /* Unchanged: no folder listed (base, open, open/deep, ws-parent), the same paths hidden. */
    cached_scan(file, true, &reused, &hidden);
    CHECK(reused >= 3);
    str_list_free(&hidden);
    /* Made root-only by chmod since: its folder is not listed again, the file is still hidden. */
    mk("open/later", 0644, false);
    usleep(200 * 1000);
    cached_scan(file, true, &reused, &hidden); /* open listed again, and kept */
    CHECK(!hidden_has(&hidden, "open/later"));
    str_list_free(&hidden);
    char *later = xasprintf("%s/open/later", base);
    CHECK(chmod(later, 0600) == 0);
    free(later);
    cached_scan(file, true, &reused, &hidden);
    CHECK(reused >= 3);
    CHECK(hidden_has(&hidden, "open/later"));
    str_list_free(&hidden);
    /* Added since (its folder's ctime moved): listed and judged. */
    mk("open/deep/added", 0600, false);
    cached_scan(file, true, &reused, &hidden);
    CHECK(hidden_has(&hidden, "open/deep/added"));
    str_list_free(&hidden);
    /* A corrupt, cut, foreign or loose file: not used at all, a full walk, the same result. */
    char *text;
    size_t len;
    CHECK(read_file(file, O_NOFOLLOW, 1 << 20, &text, &len) == 0 && len > 24);
    for (int k = 0; k < 6; k++) {
        char *bad = xmalloc(len);
        memcpy(bad, text, len);
        size_t blen = len;
        if (k == 0)
            bad[0] ^= 1; /* the magic */
        else if (k == 1)
            blen--; /* cut */
        else if (k == 2)
            memset(bad + len - 4, '/', 3); /* a name with a '/' */
        else if (k == 3)
            bad[20] ^= 0x40; /* the folder count */
        write_text(tmp, bad, blen);
        if (k == 4)
            CHECK(chown(tmp, 1000, 1000) == 0); /* not root's */
        else if (k == 5)
            CHECK(chmod(tmp, 0644) == 0); /* readable by others */
        CHECK(rename(tmp, file) == 0);
        cached_scan(file, false, &reused, &hidden);
        CHECK_EQ_INT((int)reused, 0);
        str_list_free(&hidden);
        free(bad);
    }
    /* A symlink to a good file: not followed. */
    write_text(tmp, text, len);
    CHECK(unlink(file) == 0);
    CHECK(symlink(tmp, file) == 0);
    cached_scan(file, false, &reused, &hidden);
    CHECK_EQ_INT((int)reused, 0);
    str_list_free(&hidden);
    /* The good file back: used again. */
    CHECK(unlink(file) == 0);
    CHECK(rename(tmp, file) == 0);
    cached_scan(file, false, &reused, &hidden);
    CHECK(reused >= 3);
    str_list_free(&hidden);
    free(text);
    unlink(file);
    char *cmd = xasprintf("rm -rf '%s'", base);
    CHECK(system(cmd) == 0);
    free(cmd);
    free(file);
    free(tmp);
}

/* The quoted strings of the Lua table that follows key (e.g. "scan = {") in text, up to its
 * closing brace, comments left out. */
static void lua_strings(const char *text, const char *key, struct str_list *out)
{
    const char *p = strstr(text, key);
    CHECK(p != NULL);
    for (p += strlen(key); *p && *p != '}'; p++) {
        if (p[0] == '-' && p[1] == '-') {
            p = strchr(p, '\n');
            CHECK(p != NULL);
        } else if (*p == '"') {
            const char *end = strchr(p + 1, '"');
            CHECK(end != NULL);
            str_list_push_owned(out, strndup(p + 1, (size_t)(end - p - 1)));
            p = end;
        }
    }
}

static void test_guess(void)
{
    char *path = xasprintf("%s/profiles/coding.lua", CORDON_DATADIR);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    const char *block = strstr(text, "root_only = {");
    CHECK(block != NULL);
    struct str_list scan_l = {0}, visible = {0};
    lua_strings(block, "scan = {", &scan_l);
    lua_strings(block, "visible = {", &visible);
    const char *d = strstr(block, "depth = ");
    CHECK(d != NULL);
    struct sandbox_root_only g;
    root_only_guess(&g);
    CHECK(g.hide);
    CHECK_EQ_INT(g.depth, atoi(d + strlen("depth = ")));
    CHECK(same_list(&g.scan, &scan_l));
    CHECK(same_list(&g.visible, &visible));
    str_list_free(&g.scan);
    str_list_free(&g.visible);
    str_list_free(&scan_l);
    str_list_free(&visible);
    free(path);
}

TEST_MAIN({"judge", test_judge}, {"scan", test_scan}, {"ahead", test_ahead}, {"cache", test_cache},
          {"guess", test_guess})
