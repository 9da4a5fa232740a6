/* test_said_once.c — base/said_once (a line said once per machine and kernel) and
 * kernel_older_than (base/kernel_lacks). */
#include <stdlib.h>
#include <sys/stat.h>

#include "base/kernel_lacks.h"
#include "base/said_once.h"
#include "test.h"

/* A fresh state folder under TMPDIR, as XDG_STATE_HOME. */
static void fresh_state(void)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/said-once.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    CHECK_EQ_INT(setenv("XDG_STATE_HOME", dir, 1), 0);
}

static void test_first_then_quiet(void)
{
    fresh_state();
    CHECK(said_once_first("a-line"));
    CHECK(!said_once_first("a-line"));
    CHECK(!said_once_first("a-line"));
    CHECK(said_once_first("another")); /* each line on its own */
    /* the markers live where no sandbox writes: cordon's state folder, 0700 */
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/cordon/said", getenv("XDG_STATE_HOME"));
    CHECK_EQ_INT(stat(path, &st), 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0700);
}

static void test_said_when_no_marker_can_be_made(void)
{
    /* Nowhere to keep the marker: said every time rather than never. */
    CHECK_EQ_INT(setenv("XDG_STATE_HOME", "/proc/cordon-nowhere", 1), 0);
    CHECK(said_once_first("a-line"));
    CHECK(said_once_first("a-line"));
    CHECK_EQ_INT(unsetenv("XDG_STATE_HOME"), 0);
    CHECK_EQ_INT(unsetenv("HOME"), 0);
    CHECK(said_once_first("a-line"));
}

static void test_kernel_older_than(void)
{
    CHECK(!kernel_older_than(0, 0));
    CHECK(!kernel_older_than(3, 0)); /* this kernel is newer than 3.0 */
    CHECK(kernel_older_than(999, 0));
}

TEST_MAIN({"first_then_quiet", test_first_then_quiet},
          {"said_when_no_marker_can_be_made", test_said_when_no_marker_can_be_made},
          {"kernel_older_than", test_kernel_older_than})
