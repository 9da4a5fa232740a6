/* test_cordon_dirs.c — cdir_*() under each combination of HOME and the XDG variables: an
 * absolute XDG variable wins, a relative one is ignored (as the XDG specification says), a
 * relative or missing HOME gives no folder; and the session socket folder's rule beside it. */
#include <stdlib.h>
#include <string.h>

#include "base/cordon_dirs.h"
#include "base/session_socket.h"
#include "test.h"

/* s equals want (both may be NULL); frees s. */
static void check_path(char *s, const char *want)
{
    if (!want) {
        if (s)
            fprintf(stderr, "  got \"%s\", expected none\n", s);
        CHECK(s == NULL);
        return;
    }
    if (!s || strcmp(s, want) != 0)
        fprintf(stderr, "  got \"%s\", expected \"%s\"\n", s ? s : "(null)", want);
    CHECK(s && strcmp(s, want) == 0);
    free(s);
}

static void clear_env(void)
{
    unsetenv("HOME");
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("XDG_STATE_HOME");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("XDG_RUNTIME_DIR");
}

static void test_home_defaults(void)
{
    clear_env();
    setenv("HOME", "/home/p", 1);
    check_path(cdir_path(CDIR_CONFIG, NULL), "/home/p/.config/cordon");
    check_path(cdir_path(CDIR_STATE, "audit.jsonl"), "/home/p/.local/state/cordon/audit.jsonl");
    check_path(cdir_path(CDIR_CACHE, "profiles"), "/home/p/.cache/cordon/profiles");
    check_path(cdir_base(CDIR_CONFIG), "/home/p/.config");
    check_path(cdir_xdg_path(CDIR_STATE, NULL), NULL);
    CHECK(strcmp(cdir_home(), "/home/p") == 0);
}

static void test_absolute_xdg_wins(void)
{
    clear_env();
    setenv("HOME", "/home/p", 1);
    setenv("XDG_CONFIG_HOME", "/x/conf", 1);
    setenv("XDG_STATE_HOME", "/x/state/", 1);
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    check_path(cdir_path(CDIR_CONFIG, "trusted"), "/x/conf/cordon/trusted");
    check_path(cdir_path(CDIR_STATE, "homes"), "/x/state/cordon/homes");
    check_path(cdir_path(CDIR_CACHE, NULL), "/x/cache/cordon");
    check_path(cdir_base(CDIR_CONFIG), "/x/conf");
    /* the HOME place stays known: cordon's folders are hidden at both */
    check_path(cdir_home_path(CDIR_STATE, NULL), "/home/p/.local/state/cordon");
}

static void test_relative_xdg_ignored(void)
{
    clear_env();
    setenv("HOME", "/home/p", 1);
    setenv("XDG_CONFIG_HOME", "conf", 1);
    setenv("XDG_STATE_HOME", ".", 1);
    setenv("XDG_CACHE_HOME", "", 1);
    setenv("XDG_RUNTIME_DIR", "run", 1);
    check_path(cdir_path(CDIR_CONFIG, NULL), "/home/p/.config/cordon");
    check_path(cdir_path(CDIR_STATE, "audit.jsonl"), "/home/p/.local/state/cordon/audit.jsonl");
    check_path(cdir_path(CDIR_CACHE, NULL), "/home/p/.cache/cordon");
    check_path(cdir_xdg_path(CDIR_STATE, NULL), NULL);
    check_path(cdir_base(CDIR_STATE), "/home/p/.local/state");
    CHECK(cdir_runtime() == NULL);
    char dir[CSOCK_PATH_MAX];
    CHECK_EQ_INT(csock_dir(dir, sizeof dir), 0);
    char want[64];
    snprintf(want, sizeof want, "/tmp/cordon-%u", (unsigned)getuid());
    CHECK(strcmp(dir, want) == 0);
}

static void test_no_home(void)
{
    clear_env();
    check_path(cdir_path(CDIR_STATE, NULL), NULL);
    check_path(cdir_base(CDIR_CONFIG), NULL);
    setenv("HOME", "relative/home", 1);
    check_path(cdir_path(CDIR_CONFIG, NULL), NULL);
    CHECK(cdir_home() == NULL);
    setenv("XDG_STATE_HOME", "/s", 1);
    check_path(cdir_path(CDIR_STATE, NULL), "/s/cordon");
}

static void test_root_home(void)
{
    clear_env();
    setenv("HOME", "/", 1);
    check_path(cdir_path(CDIR_CONFIG, NULL), "/.config/cordon");
    check_path(cdir_base(CDIR_CACHE), "/.cache");
}

static void test_runtime(void)
{
    clear_env();
    setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
    CHECK(strcmp(cdir_runtime(), "/run/user/7") == 0);
    char dir[CSOCK_PATH_MAX];
    CHECK_EQ_INT(csock_dir(dir, sizeof dir), 0);
    CHECK(strcmp(dir, "/run/user/7/cordon") == 0);
    CHECK_EQ_INT(csock_dir_for("rel", 5, dir, sizeof dir), 0);
    CHECK(strcmp(dir, "/tmp/cordon-5") == 0);
}

TEST_MAIN({"home_defaults", test_home_defaults}, {"absolute_xdg_wins", test_absolute_xdg_wins},
          {"relative_xdg_ignored", test_relative_xdg_ignored}, {"no_home", test_no_home},
          {"root_home", test_root_home}, {"runtime", test_runtime})
