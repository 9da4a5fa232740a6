/* dir_stamp.h — when a folder's (dev, ino, ctime) may stand for its entries between two walks:
 * adding, removing or renaming an entry moves the folder's ctime, which no call can put back.
 * Shared by the walks that keep folder listings between runs (controller/git_guard_walk.c,
 * sandbox/root_only.c). Owns the list of file systems whose ctime is trusted and the margin a
 * stamp must keep from the walk's start. Must never trust a file system it does not know. */
#ifndef CORDON_DIR_STAMP_H
#define CORDON_DIR_STAMP_H
#include <stdbool.h>
#include <sys/stat.h>

/* Does the file system of fd stamp every change of a folder's entries as it happens? Local
 * ones only: NFS, CIFS/SMB, FUSE, 9p, Ceph, FAT, ... may cache or make up their attributes. */
bool dir_stamp_fs_trusted(int fd);

/* The realtime clock in ns: a walk's start, to compare ctimes with. */
long long dir_stamp_now_ns(void);

/* Is st's ctime far enough before walk_start_ns (100 ms; 2 s for a stamp of whole seconds)
 * that a change made after the walk listed the folder must have moved it? Else the folder is
 * listed again next time. */
bool dir_stamp_settled(const struct stat *st, long long walk_start_ns);
#endif
