/* test_root_only.c — the root_only scan: what only root may read is found (a directory whole),
 * the rest, symlinks, visible names and the ways to kept paths are not; depth and the entry
 * bound are kept, and past the bound what is not judged is hidden. Fixtures under $TMPDIR. */
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
    *n = root_only_scan(&ro, &keep, NULL, max, hidden, err, sizeof err);
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

TEST_MAIN({"judge", test_judge}, {"scan", test_scan})
