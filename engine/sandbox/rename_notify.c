/* rename_notify.c — see rename_notify.h. A hand-written BPF program: per ABI the main filter
 * covers (x86_64 with x32, i386, aarch64, arm), the six calls' numbers give
 * SECCOMP_RET_USER_NOTIF; anything else, and any other ABI, SECCOMP_RET_ALLOW.
 * Uses the kernel's seccomp(2) only. Must never return anything but ALLOW or USER_NOTIF. */
#include "sandbox/rename_notify.h"

#include <errno.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "base/util.h"

#define X32_BIT 0x40000000u
#define NO_NR 0xffffffffu

#define N_CALLS 6
#define X32(n) ((n) | X32_BIT)

/* rename, renameat, renameat2, unlink, unlinkat, rmdir of each ABI, in enum rename_call's
 * order (aarch64 has no rename, unlink or rmdir; x32 shares x86_64's arch value, its numbers
 * carry X32_BIT). */
static const struct {
    uint32_t arch;
    uint32_t nr[N_CALLS];
} abis[] = {
    {AUDIT_ARCH_X86_64, {82, 264, 316, 87, 263, 84}},
    {AUDIT_ARCH_X86_64, {X32(82), X32(264), X32(316), X32(87), X32(263), X32(84)}},
    {AUDIT_ARCH_I386, {38, 302, 353, 10, 301, 40}},
    {AUDIT_ARCH_AARCH64, {NO_NR, 38, 276, NO_NR, 35, NO_NR}},
    {AUDIT_ARCH_ARM, {38, 329, 382, 10, 328, 40}},
};

enum rename_call rename_notify_call(uint32_t arch, int nr)
{
    for (size_t i = 0; i < ARRAY_LEN(abis); i++)
        for (int k = 0; k < N_CALLS; k++)
            if (abis[i].arch == arch && abis[i].nr[k] != NO_NR && abis[i].nr[k] == (uint32_t)nr)
                return (enum rename_call)k;
    return RENAME_CALL_NONE;
}

int rename_notify_install(void)
{
    /* Per ABI a block of 9: load arch, compare it, load nr, six comparisons. Every jump goes
     * forward, to the next block or to the notify return at the end (47 instructions in all:
     * 8-bit jump offsets suffice). The last block falls through to "allow". */
    struct sock_filter prog[ARRAY_LEN(abis) * (3 + N_CALLS) + 2];
    unsigned n = 0;
    const unsigned total = (unsigned)ARRAY_LEN(prog);
    const unsigned ret_allow = total - 2, ret_notif = total - 1;
    for (size_t i = 0; i < ARRAY_LEN(abis); i++) {
        /* A = arch; if it is not this ABI's, skip the rest of the block (4) */
        prog[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                               offsetof(struct seccomp_data, arch));
        n++;
        prog[n] =
            (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, abis[i].arch, 0, 1 + N_CALLS);
        n++;
        prog[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                               offsetof(struct seccomp_data, nr));
        n++;
        for (int k = 0; k < N_CALLS; k++, n++) {
            uint8_t to_notif = (uint8_t)(ret_notif - n - 1);
            prog[n] =
                (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, abis[i].nr[k], to_notif, 0);
        }
    }
    prog[ret_allow] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    prog[ret_notif] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
    struct sock_fprog fprog = {.len = (unsigned short)total, .filter = prog};
    long fd =
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
    return fd < 0 ? -errno : (int)fd;
}
