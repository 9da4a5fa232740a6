/* test_kernel_lacks.c — base/kernel_lacks: the test switch names exact items of its list, and
 * kernel_older_than compares the running kernel's release. */
#include <stdlib.h>

#include "base/kernel_lacks.h"
#include "test.h"

static void test_forced_exact_items(void)
{
    CHECK_EQ_INT(unsetenv("CORDON_TEST_KERNEL_LACKS"), 0);
    CHECK(!kernel_lacks_forced("idmap"));
    CHECK_EQ_INT(setenv("CORDON_TEST_KERNEL_LACKS", "mount_setattr,idmap", 1), 0);
    CHECK(kernel_lacks_forced("idmap"));
    CHECK(kernel_lacks_forced("mount_setattr"));
    CHECK(!kernel_lacks_forced("mount")); /* a prefix is not an item */
    CHECK(!kernel_lacks_forced("landlock"));
    CHECK(!kernel_lacks_forced(""));
}

static void test_older_than(void)
{
    CHECK(!kernel_older_than(0, 0));
    CHECK(!kernel_older_than(3, 0)); /* this kernel is newer than 3.0 */
    CHECK(kernel_older_than(999, 0));
}

TEST_MAIN({"forced_exact_items", test_forced_exact_items}, {"older_than", test_older_than})
