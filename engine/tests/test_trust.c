/* test_trust.c — the trust unit: scanning .cordon (regular files only, sorted, hashed),
 * records written atomically with mode 0600 and read back, the comparison's wording, and
 * trust_check's three states. Works in a fresh directory under /tmp. */
#include "test.h"

#include <limits.h>
#include <sys/stat.h>

#include "policy/trust.h"
#include "base/util.h"

static char root[] = "/tmp/cordon-trust-XXXXXX";

static void put(const char *rel, const char *content)
{
    char *p = xasprintf("%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(content, f);
    fclose(f);
    free(p);
}

static void make_project(void)
{
    CHECK(mkdtemp(root) != NULL);
    char *d = xasprintf("%s/.cordon", root);
    char *p = xasprintf("%s/.cordon/profiles", root);
    CHECK(mkdir(d, 0755) == 0);
    CHECK(mkdir(p, 0755) == 0);
    free(d);
    free(p);
    put(".cordon/policy.lua", "return {}\n");
    put(".cordon/profiles/web.lua", "return { extends = 'coding' }\n");
}

static void test_scan(void)
{
    make_project();
    struct trust_set s;
    char err[512];
    char *pdir = xasprintf("%s/.cordon", root);
    CHECK_EQ_INT(trust_scan(pdir, &s, err, sizeof err), 0);
    CHECK_EQ_INT(s.len, 2);
    CHECK(strcmp(s.items[0].rel, "policy.lua") == 0);
    CHECK(strcmp(s.items[1].rel, "profiles/web.lua") == 0);
    char want[SHA256_HEX_LEN + 1];
    sha256_hex("return {}\n", 10, want);
    CHECK(strcmp(s.items[0].hash, want) == 0);
    trust_set_free(&s);

    char *link = xasprintf("%s/.cordon/profiles/x.lua", root);
    CHECK(symlink("/etc/passwd", link) == 0);
    CHECK_EQ_INT(trust_scan(pdir, &s, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "x.lua: a symbolic link");
    unlink(link);
    CHECK(mkfifo(link, 0600) == 0);
    CHECK_EQ_INT(trust_scan(pdir, &s, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "not a regular file");
    free(link);
    free(pdir);
}

static void test_compare(void)
{
    struct trust_set a = {0}, b = {0};
    char why[256];
    a.items = xcalloc(3, sizeof *a.items);
    b.items = xcalloc(3, sizeof *b.items);
    const char *ra[] = {"a.lua", "b.lua", "c.lua"}, *rb[] = {"b.lua", "c.lua", "d.lua"};
    for (int i = 0; i < 3; i++) {
        a.items[i].rel = xstrdup(ra[i]);
        b.items[i].rel = xstrdup(rb[i]);
        strcpy(a.items[i].hash, "00");
        strcpy(b.items[i].hash, strcmp(rb[i], "c.lua") == 0 ? "11" : "00");
    }
    a.len = b.len = 3;
    trust_compare(&a, &b, why, sizeof why);
    CHECK(strcmp(why, "a.lua removed, c.lua changed, d.lua added") == 0);
    trust_compare(&a, &a, why, sizeof why);
    CHECK(strcmp(why, "") == 0);
    trust_set_free(&a);
    trust_set_free(&b);
}

static void test_record_and_check(void)
{
    make_project();
    char cfg[PATH_MAX], canon[PATH_MAX], why[512], err[512];
    snprintf(cfg, sizeof cfg, "%s/config", root);
    CHECK_EQ_INT(trust_check(cfg, root, canon, why, sizeof why), TRUST_UNTRUSTED);
    CHECK(strcmp(why, "not trusted yet") == 0);

    struct trust_set s, back;
    char *pdir = xasprintf("%s/.cordon", canon);
    CHECK_EQ_INT(trust_scan(pdir, &s, err, sizeof err), 0);
    char *rec = trust_record_path(cfg, canon);
    CHECK_EQ_INT(trust_record_save(rec, canon, &s, err, sizeof err), 0);
    struct stat st;
    CHECK(stat(rec, &st) == 0);
    CHECK_EQ_INT(st.st_mode & 07777, 0600);
    CHECK_EQ_INT(trust_record_load(rec, &back, err, sizeof err), 0);
    CHECK_EQ_INT(back.len, s.len);
    trust_compare(&back, &s, why, sizeof why);
    CHECK(strcmp(why, "") == 0);
    CHECK_EQ_INT(trust_check(cfg, root, canon, why, sizeof why), TRUST_TRUSTED);
    trust_set_free(&back);
    trust_set_free(&s);
    free(rec);
    free(pdir);

    put(".cordon/policy.lua", "return { }\n");
    CHECK_EQ_INT(trust_check(cfg, root, canon, why, sizeof why), TRUST_UNTRUSTED);
    CHECK(strcmp(why, "policy.lua changed") == 0);

    CHECK_EQ_INT(trust_check(cfg, cfg, canon, why, sizeof why), TRUST_NO_PROJECT);
    CHECK_EQ_INT(trust_check(NULL, root, canon, why, sizeof why), TRUST_UNTRUSTED);

    put("config/trusted/broken.json", "{\"files\": [}");
    char *broken = xasprintf("%s/config/trusted/broken.json", root);
    CHECK(trust_record_load(broken, &back, err, sizeof err) < 0);
    CHECK_STR_CONTAINS(err, "offset");
    free(broken);
}

TEST_MAIN({"scan", test_scan}, {"compare", test_compare},
          {"record_and_check", test_record_and_check})
