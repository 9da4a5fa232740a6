/* test_said_once.c — a line about the machine is said the first time only; without a place to
 * keep the marker it is said every time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/said_once.h"
#include "test.h"
#include "base/util.h"

static char *fresh_state(void)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = xasprintf("%s/said-once.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    setenv("XDG_STATE_HOME", dir, 1);
    return dir;
}

static void test_said_the_first_time_only(void)
{
    char *dir = fresh_state();
    CHECK(said_once_first("limits.memory", "limits.memory not applied"));
    CHECK(!said_once_first("limits.memory", "limits.memory not applied"));
    CHECK(said_once_first("limits.pids", "limits.pids not applied")); /* another name */
    char *path = xasprintf("%s/cordon/said/limits.memory", dir);
    char *text = NULL;
    size_t len = 0;
    CHECK(read_file(path, 0, 4096, &text, &len) == 0);
    CHECK(text && len == 26 && memcmp(text, "limits.memory not applied\n", len) == 0);
    free(text);
    free(path);
    char *cmd = xasprintf("rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    free(cmd);
    free(dir);
}

static void test_said_every_time_without_a_state_folder(void)
{
    unsetenv("XDG_STATE_HOME");
    char *old = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    unsetenv("HOME");
    CHECK(said_once_dir() == NULL);
    CHECK(said_once_first("limits.memory", "x"));
    CHECK(said_once_first("limits.memory", "x"));
    if (old)
        setenv("HOME", old, 1);
    free(old);
}

static void test_a_bad_name_is_said(void)
{
    char *dir = fresh_state();
    CHECK(said_once_first("../escape", "x"));
    CHECK(said_once_first("../escape", "x"));
    CHECK(said_once_first("", "x"));
    char *cmd = xasprintf("test ! -e '%s/cordon/escape' && rm -rf '%s'", dir, dir);
    CHECK(system(cmd) == 0);
    free(cmd);
    free(dir);
}

TEST_MAIN({"said the first time only", test_said_the_first_time_only},
          {"said every time without a state folder", test_said_every_time_without_a_state_folder},
          {"a bad name is said, and makes nothing", test_a_bad_name_is_said})
