/* kernel_lacks.c — see kernel_lacks.h. */
#include "base/kernel_lacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

bool kernel_lacks_forced(const char *name)
{
    const char *list = getenv("CORDON_TEST_KERNEL_LACKS");
    size_t n = strlen(name);
    if (!list || n == 0)
        return false;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

bool kernel_older_than(unsigned major, unsigned minor)
{
    struct utsname u;
    unsigned ma = 0, mi = 0;
    if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &ma, &mi) != 2)
        return false;
    return ma < major || (ma == major && mi < minor);
}
