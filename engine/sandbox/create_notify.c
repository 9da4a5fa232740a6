/* create_notify.c — see create_notify.h. */
#include "sandbox/create_notify.h"

#include <linux/audit.h>

#include "base/util.h"

#define X32_BIT 0x40000000u
#define NO_NR 0xffffffffu

enum kind {
    K_OPEN,
    K_OPENAT,
    K_OPENAT2,
    K_CREAT,
    K_MKDIR,
    K_MKDIRAT,
    K_MKNOD,
    K_MKNODAT,
    K_SYMLINK,
    K_SYMLINKAT,
    K_LINK,
    K_LINKAT,
    K_N
};

/* Per kind: directory fd argument, path argument, open_how argument. */
static const struct create_call args[K_N] = {
    [K_OPEN] = {-1, 0, -1},     [K_OPENAT] = {0, 1, -1},  [K_OPENAT2] = {0, 1, 2},
    [K_CREAT] = {-1, 0, -1},    [K_MKDIR] = {-1, 0, -1},  [K_MKDIRAT] = {0, 1, -1},
    [K_MKNOD] = {-1, 0, -1},    [K_MKNODAT] = {0, 1, -1}, [K_SYMLINK] = {-1, 1, -1},
    [K_SYMLINKAT] = {1, 2, -1}, [K_LINK] = {-1, 1, -1},   [K_LINKAT] = {2, 3, -1},
};

/* x32 shares x86_64's arch value; its numbers carry X32_BIT (added where used). */
static const struct {
    uint32_t arch;
    uint32_t nr[K_N];
} abis[] = {
    {AUDIT_ARCH_X86_64, {2, 257, 437, 85, 83, 258, 133, 259, 88, 266, 86, 265}},
    {AUDIT_ARCH_I386, {5, 295, 437, 8, 39, 296, 14, 297, 83, 304, 9, 303}},
    {AUDIT_ARCH_AARCH64, {NO_NR, 56, 437, NO_NR, NO_NR, 34, NO_NR, 33, NO_NR, 36, NO_NR, 37}},
    {AUDIT_ARCH_ARM, {5, 322, 437, 8, 39, 323, 14, 324, 83, 331, 9, 330}},
};

bool create_notify_call(uint32_t arch, int nr, struct create_call *c)
{
    for (size_t i = 0; i < ARRAY_LEN(abis); i++) {
        if (abis[i].arch != arch)
            continue;
        for (int k = 0; k < K_N; k++) {
            uint32_t want = abis[i].nr[k];
            if (want == NO_NR)
                continue;
            if ((uint32_t)nr == want ||
                (arch == AUDIT_ARCH_X86_64 && (uint32_t)nr == (want | X32_BIT))) {
                *c = args[k];
                return true;
            }
        }
    }
    return false;
}

void create_notify_emit(uint32_t arch, bool x32, struct sock_filter *prog, unsigned *n,
                        unsigned notif, unsigned flags_a1, unsigned flags_a2)
{
    for (size_t i = 0; i < ARRAY_LEN(abis); i++) {
        if (abis[i].arch != arch)
            continue;
        for (int k = 0; k < K_N; k++) {
            if (abis[i].nr[k] == NO_NR)
                continue;
            unsigned to = k == K_OPEN ? flags_a1 : k == K_OPENAT ? flags_a2 : notif;
            uint32_t nr = abis[i].nr[k] | (x32 ? X32_BIT : 0);
            prog[*n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr,
                                                    (uint8_t)(to - *n - 1), 0);
            (*n)++;
        }
    }
}
