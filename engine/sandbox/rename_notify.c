/* rename_notify.c — see rename_notify.h. A hand-written BPF program: per ABI the main filter
 * covers (x86_64 with x32, i386, aarch64, arm), the six calls' numbers (renames and removals)
 * and the creating calls' (create_notify.h, when asked for) give SECCOMP_RET_USER_NOTIF;
 * anything else, and any other ABI, SECCOMP_RET_ALLOW.
 * Uses the kernel's seccomp(2) only. Must never return anything but ALLOW or USER_NOTIF. */
#include "sandbox/rename_notify.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "base/util.h"
#include "sandbox/create_notify.h"

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

int rename_notify_install(bool creates)
{
    /* Per ABI a block: load arch, compare it (else on to the next block), load nr, the six
     * renames' and removals' comparisons, the creating calls' (create_notify.h), then "allow". At the end the
     * two O_CREAT checks of open's and openat's flags (the low word of argument 1 or 2: every
     * ABI here is little-endian), then the shared returns. Every jump goes forward and the
     * program stays under 256 instructions (8-bit jump offsets). */
    enum { PER_ABI = 3 + N_CALLS + CREATE_NOTIFY_MAX_PER_ABI, TAIL = 2 * 2 + 2 };
    struct sock_filter prog[ARRAY_LEN(abis) * PER_ABI + 1 + TAIL]; /* + 1: the last block's end */
    const unsigned total = (unsigned)ARRAY_LEN(prog);
    const unsigned flags_a1 = total - TAIL, flags_a2 = flags_a1 + 2;
    const unsigned ret_allow = total - 2, ret_notif = total - 1;
    unsigned n = 0;
    for (size_t i = 0; i < ARRAY_LEN(abis); i++) {
        prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                 offsetof(struct seccomp_data, arch));
        unsigned skip_at = n++; /* the arch's comparison, patched once the block's end is known */
        prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                 offsetof(struct seccomp_data, nr));
        for (int k = 0; k < N_CALLS; k++) {
            if (abis[i].nr[k] == NO_NR)
                continue;
            prog[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, abis[i].nr[k],
                                                   (uint8_t)(ret_notif - n - 1), 0);
            n++;
        }
        if (creates)
            create_notify_emit(abis[i].arch, (abis[i].nr[2] & X32_BIT) != 0, prog, &n, ret_notif,
                               flags_a1, flags_a2);
        /* no match: on to the next block (x32 shares x86_64's arch), the last one to allow */
        prog[skip_at] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, abis[i].arch, 0,
                                                     (uint8_t)(n - skip_at - 1));
    }
    /* unused room up to the tail, and the last block's end: on to allow */
    while (n < flags_a1) {
        prog[n] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA | BPF_K, ret_allow - n - 1);
        n++;
    }
    prog[ret_allow] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    prog[ret_notif] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
    static const unsigned arg_of[2] = {1, 2};
    for (int a = 0; a < 2; a++) {
        unsigned at = a == 0 ? flags_a1 : flags_a2;
        prog[at] = (struct sock_filter)BPF_STMT(
            BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, args[arg_of[a]]));
        prog[at + 1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT,
                                                    (uint8_t)(ret_notif - (at + 1) - 1),
                                                    (uint8_t)(ret_allow - (at + 1) - 1));
    }
    struct sock_fprog fprog = {.len = (unsigned short)total, .filter = prog};
    long fd =
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
    return fd < 0 ? -errno : (int)fd;
}
