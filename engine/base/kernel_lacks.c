/* kernel_lacks.c — see kernel_lacks.h. */
#include "base/kernel_lacks.h"

#include <stdlib.h>
#include <string.h>

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
