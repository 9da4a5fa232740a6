/* test_root_only.c — the root_only scan: what only root may read is found (a directory whole),
 * the rest, symlinks, visible names and the ways to kept paths are not; depth and the entry
 * bound are kept, and past the bound what is not judged is hidden. The scan ahead gives what the
 * scan with the real inputs gives, its own result only when those inputs change no answer, and
 * its guess is the coding profile's root_only. Fixtures under $TMPDIR. */
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

static void scan(unsigned depth, size_t max, struct str_list *hidden, int *n)
{
    struct sandbox_root_only ro = {.hide = true, .depth = depth};
    str_list_push(&ro.scan, base);
    str_list_push_owned(&ro.visible, xasprintf("%s/named", base));
    str_list_push(&ro.scan, "/nonexistent-cordon-root-only");
    struct str_list keep = {0};
    str_list_push_owned(&keep, xasprintf("%s/ws-parent/ws", base));
    char err[256] = "";
    *n = root_only_scan(&ro, &keep, NULL, max, NULL, hidden, err, sizeof err);
    str_list_free(&ro.scan);
    str_list_free(&ro.visible);
    str_list_free(&keep);
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

/* Guess (depth g_depth, g_ws, g_named, g_extra, g_home), then finish with the fixture's real
 * inputs (depth 3, the workspace kept, "named" visible, no home): the result must be the scan's
 * (want), and *used says whether the guess was taken. */
static void ahead_case_max(unsigned g_depth, bool g_ws, bool g_named, const char *g_extra,
                           const char *g_home, size_t max, const struct str_list *want, bool *used)
{
    struct sandbox_root_only gro, ro;
    struct str_list gkeep, keep, hidden = {0};
    inputs(g_depth, g_ws, g_named, g_extra, &gro, &gkeep);
    struct root_only_ahead *a = root_only_ahead(&gro, &gkeep, g_home, max, NULL);
    CHECK(a != NULL);
    inputs_free(&gro, &gkeep); /* the scan ahead has its own copies */
    inputs(3, true, true, NULL, &ro, &keep);
    str_list_push(&hidden, "/already/hidden"); /* what the list held before stays, first */
    char err[256] = "";
    int n = root_only_finish(a, &ro, &keep, NULL, max, &hidden, err, sizeof err, used);
    CHECK_EQ_INT(n, (long long)want->len);
    CHECK(strcmp(hidden.items[0], "/already/hidden") == 0);
    struct str_list rest = {.items = hidden.items + 1, .len = hidden.len - 1};
    CHECK(same_list(&rest, want));
    str_list_free(&hidden);
    inputs_free(&ro, &keep);
}

static void ahead_case(unsigned g_depth, bool g_ws, bool g_named, const char *g_extra,
                       const char *g_home, const struct str_list *want, bool *used)
{
    ahead_case_max(g_depth, g_ws, g_named, g_extra, g_home, ROOT_ONLY_MAX_ENTRIES, want, used);
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
    ahead_case(3, true, true, NULL, NULL, &want, &used); /* guessed right */
    CHECK(used);
    /* A keep path the walk never meets changes no answer: the guess still holds. */
    ahead_case(3, true, true, "/nonexistent-cordon-elsewhere/ws", NULL, &want, &used);
    CHECK(used);
    /* The guess did not keep the workspace (its parent, 0700, would be hidden whole). */
    ahead_case(3, false, true, NULL, NULL, &want, &used);
    CHECK(!used);
    /* The guess did not name "named" visible (it would be hidden). */
    ahead_case(3, true, false, NULL, NULL, &want, &used);
    CHECK(!used);
    /* Another depth, another home: scanned again. */
    ahead_case(2, true, true, NULL, NULL, &want, &used);
    CHECK(!used);
    ahead_case(3, true, true, NULL, "/nonexistent-cordon-home", &want, &used);
    CHECK(!used);
    /* The bound: each task counts on its own, so when their sum passes it the scan is done
     * again in place, where the bound falls where it falls in order. */
    struct str_list bounded = {0};
    scan(3, 3, &bounded, &n);
    ahead_case_max(3, true, true, NULL, NULL, 3, &bounded, &used);
    CHECK(!used);
    str_list_free(&bounded);
    /* Not wanted after all: the thread is stopped and waited for. */
    struct sandbox_root_only ro;
    struct str_list keep;
    inputs(3, true, true, NULL, &ro, &keep);
    root_only_cancel(root_only_ahead(&ro, &keep, NULL, ROOT_ONLY_MAX_ENTRIES, NULL));
    root_only_cancel(NULL);
    /* No scan ahead: finish scans in place. */
    struct str_list hidden = {0};
    char err[256] = "";
    CHECK_EQ_INT(root_only_finish(NULL, &ro, &keep, NULL, ROOT_ONLY_MAX_ENTRIES, &hidden, err,
                                  sizeof err, &used),
                 4);
    CHECK(!used && same_list(&hidden, &want));
    str_list_free(&hidden);
    inputs_free(&ro, &keep);
    str_list_free(&want);
    char *cmd = xasprintf("rm -rf '%s'", base);
    CHECK(system(cmd) == 0);
    free(cmd);
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

TEST_MAIN({"judge", test_judge}, {"scan", test_scan}, {"ahead", test_ahead}, {"guess", test_guess})
