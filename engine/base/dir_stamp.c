/* dir_stamp.c — see dir_stamp.h. */
#include "base/dir_stamp.h"

#include <stddef.h>
#include <sys/statfs.h>
#include <time.h>

#include "base/util.h"

#define SETTLE_NS (100 * 1000 * 1000LL)
#define SETTLE_WHOLE_NS (2 * 1000 * 1000 * 1000LL) /* a file system stamping whole seconds */

bool dir_stamp_fs_trusted(int fd)
{
    static const unsigned long trusted[] = {
        0xEF53,     /* ext2, ext3, ext4 */
        0x58465342, /* xfs */
        0x9123683E, /* btrfs */
        0x01021994, /* tmpfs */
        0x858458F6, /* ramfs */
        0x794C7630, /* overlayfs (its upper layer's stamps) */
        0xF2F52010, /* f2fs */
        0xCA451A4E, /* bcachefs */
        0x2FC12FC1, /* zfs */
    };
    struct statfs sf;
    if (fstatfs(fd, &sf) < 0)
        return false;
    for (size_t i = 0; i < ARRAY_LEN(trusted); i++)
        if ((unsigned long)sf.f_type == trusted[i])
            return true;
    return false;
}

long long dir_stamp_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

bool dir_stamp_settled(const struct stat *st, long long walk_start_ns)
{
    long long ct = (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
    return ct < walk_start_ns - (st->st_ctim.tv_nsec ? SETTLE_NS : SETTLE_WHOLE_NS);
}
