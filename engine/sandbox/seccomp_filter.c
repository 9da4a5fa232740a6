/* seccomp_filter.c — builds the command's seccomp filter with libseccomp and compiles it to
 * classic BPF in the controller; loads the compiled program in the command's process.
 * Owns: the default refusal list (mechanism; a profile adds to it through seccomp.deny and
 * seccomp.block_unix_sockets, never removes from it), the socket families a command may use,
 * the architecture set, and the hand-written checks put in front of libseccomp's program.
 * Uses: libseccomp (build/export only), memfd for the export, prctl for the load; for the
 * common rule sets the program libseccomp made at build time (seccomp_prebuilt.h).
 * Never: loads a filter through libseccomp (seccomp_load would allocate after fork), runs a
 * command unfiltered because an architecture or a rule is unknown, allocates in sc_load(). */
#include "sandbox/seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "sandbox/loopback_guard.h"
#include "base/util.h"
#ifndef CORDON_SC_GENERATOR
#include "sandbox/seccomp_prebuilt.h"
#endif

/* Refused outright with EPERM: debugging other processes, kernel keyrings, eBPF, perf,
 * userfaultfd and io_uring (large kernel attack surface, and io_uring bypasses seccomp for
 * the operations it carries), kexec/modules/reboot/swap/accounting, raw handles, syslog,
 * every mount-API call, namespace changes. A name missing on one architecture is skipped
 * for that architecture by libseccomp. */
static const char *const default_denied[] = {
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "open_by_handle_at",
    "name_to_handle_at",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot", /* umount: the x86 ABI's old call */
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "setns",
    "unshare",
};

/* personality(2) values that change nothing dangerous (as Docker's default profile):
 * PER_LINUX, PER_LINUX | UNAME26 (8), PER_LINUX32 (0x20000), PER_LINUX32 | UNAME26, and
 * 0xffffffff (query). The kernel takes an unsigned int, so only the low 32 bits count. */
#define PERS_FREE_BITS ((uint32_t)0x00020008u) /* the bits the allowed values vary in */

static void set_err(char *err, size_t errlen, const char *fmt, ...) CORDON_PRINTF(3, 4);
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* The kernel's name for the machine ("riscv64", ...), for the refusal message. */
static const char *machine_name(struct utsname *u)
{
    return uname(u) == 0 ? u->machine : "(unknown)";
}

/* Every ABI a process of the native architecture can enter the kernel through gets the same
 * rules: x86_64 processes can use int 0x80 (x86) and x32 system calls, aarch64 ones AArch32
 * on kernels with COMPAT. Anything else is refused rather than filtered for one ABI only. */
static int add_arches(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    static const uint32_t x86_64_extra[] = {SCMP_ARCH_X86, SCMP_ARCH_X32};
    static const uint32_t aarch64_extra[] = {SCMP_ARCH_ARM};
    static const char *const extra_names[] = {"x86", "x32", "arm"};
    uint32_t native = seccomp_arch_native();
    const uint32_t *extra;
    size_t n, name0;

    if (native == SCMP_ARCH_X86_64) {
        extra = x86_64_extra;
        n = ARRAY_LEN(x86_64_extra);
        name0 = 0;
    } else if (native == SCMP_ARCH_AARCH64) {
        extra = aarch64_extra;
        n = ARRAY_LEN(aarch64_extra);
        name0 = 2;
    } else {
        struct utsname u;
        set_err(err, errlen,
                "seccomp: architecture %s is not supported; refusing to run unfiltered",
                machine_name(&u));
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int r = seccomp_arch_add(ctx, extra[i]);
        if (r < 0 && r != -EEXIST) {
            set_err(err, errlen, "seccomp: cannot add architecture %s: %s", extra_names[name0 + i],
                    strerror(-r));
            return -1;
        }
    }
    return 0;
}

static int add_rule(scmp_filter_ctx ctx, uint32_t action, const char *name, int nr, unsigned n_args,
                    const struct scmp_arg_cmp *args, char *err, size_t errlen)
{
    int r = seccomp_rule_add_array(ctx, action, nr, n_args, args);
    if (r < 0) {
        set_err(err, errlen, "seccomp: cannot add a rule for %s: %s", name, strerror(-r));
        return -1;
    }
    return 0;
}

static int resolve(const char *name, char *err, size_t errlen)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
        set_err(err, errlen, "seccomp: unknown system call '%s' in the default refusals", name);
    return nr;
}

/* personality(x) is refused unless x (low 32 bits) is one of the allowed values. libseccomp
 * allows one comparison per argument in a rule, so the refused set is covered by masked-equal
 * rules: with F the 30 bits outside PERS_FREE_BITS, x is allowed iff x&F is 0 with any free
 * bits, or x is all ones. "x&F is neither 0 nor F" is covered by 30 rules "bit f[i] set and
 * bit f[i+1] clear" around the cycle of F's bits (a non-constant cycle has such a step);
 * "x&F == F but x != all ones" by 2 rules, one per free bit being clear. */
static int add_personality_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    const uint32_t fixed = ~PERS_FREE_BITS;
    int bits[32], nb = 0;
    for (int b = 0; b < 32; b++)
        if (fixed & (1u << b))
            bits[nb++] = b;
    int nr = SCMP_SYS(personality);
    for (int i = 0; i < nb; i++) {
        uint32_t set = 1u << bits[i], clear = 1u << bits[(i + 1) % nb];
        struct scmp_arg_cmp a = SCMP_A0_64(SCMP_CMP_MASKED_EQ, set | clear, set);
        if (add_rule(ctx, SCMP_ACT_ERRNO(EPERM), "personality", nr, 1, &a, err, errlen) < 0)
            return -1;
    }
    for (int b = 0; b < 32; b++) {
        if (!(PERS_FREE_BITS & (1u << b)))
            continue;
        struct scmp_arg_cmp a = SCMP_A0_64(SCMP_CMP_MASKED_EQ, fixed | (1u << b), fixed);
        if (add_rule(ctx, SCMP_ACT_ERRNO(EPERM), "personality", nr, 1, &a, err, errlen) < 0)
            return -1;
    }
    return 0;
}

static int add_default_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);

    for (size_t i = 0; i < ARRAY_LEN(default_denied); i++) {
        int nr = resolve(default_denied[i], err, errlen);
        if (nr == __NR_SCMP_ERROR)
            return -1;
        if (add_rule(ctx, eperm, default_denied[i], nr, 0, NULL, err, errlen) < 0)
            return -1;
    }

    /* A new user namespace through clone(2); its flags are the first argument on x86,
     * x86_64, x32 and arm/aarch64 (s390 swaps the first two: not a supported arch here). */
    struct scmp_arg_cmp newuser =
        SCMP_A0_64(SCMP_CMP_MASKED_EQ, (uint64_t)CLONE_NEWUSER, (uint64_t)CLONE_NEWUSER);
    if (add_rule(ctx, eperm, "clone", SCMP_SYS(clone), 1, &newuser, err, errlen) < 0)
        return -1;
    /* clone3 takes its flags in memory, which seccomp cannot read: ENOSYS makes libc fall
     * back to clone(2), which the rule above filters. */
    if (add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", SCMP_SYS(clone3), 0, NULL, err, errlen) < 0)
        return -1;

    /* Pushing input into a terminal (TIOCSTI) or the Linux console's selection (TIOCLINUX).
     * The request is an unsigned int to the kernel: compare only the low 32 bits so garbage
     * in the upper half cannot slip past. */
    static const unsigned long tty_requests[] = {TIOCSTI, TIOCLINUX};
    for (size_t i = 0; i < ARRAY_LEN(tty_requests); i++) {
        struct scmp_arg_cmp a =
            SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint64_t)tty_requests[i]);
        if (add_rule(ctx, eperm, "ioctl", SCMP_SYS(ioctl), 1, &a, err, errlen) < 0)
            return -1;
    }
    return add_personality_rules(ctx, err, errlen);
}

/* Without loopback service (loopback_guard.h) the command's inet sockets are TCP only: Landlock
 * governs TCP binds and connects but no other protocol. Refused for AF_INET and AF_INET6: every
 * type but SOCK_STREAM (UDP, raw, SCTP's seqpacket, ...), and any protocol but 0 and
 * IPPROTO_TCP (6) (MPTCP, SCTP and SMC are stream protocols too). One comparison per argument
 * per rule: the protocol's low 32 bits (the kernel's int) are 0 or 6 iff no bit outside 0b110
 * is set and bits 1 and 2 are equal; the types are the 16 values of the type mask. */
static int add_inet_tcp_only_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    static const int domains[] = {AF_INET, AF_INET6};
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
    int nr = SCMP_SYS(socket);
    for (size_t d = 0; d < ARRAY_LEN(domains); d++) {
        struct scmp_arg_cmp a[2] = {
            SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint64_t)domains[d])};
        for (uint64_t type = 0; type <= 0xf; type++) {
            if (type == SOCK_STREAM)
                continue;
            a[1] = SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xf, type);
            if (add_rule(ctx, eperm, "socket", nr, 2, a, err, errlen) < 0)
                return -1;
        }
        for (int b = 0; b < 32; b++) {
            uint64_t bit = (uint64_t)1 << b;
            if (bit & 6)
                continue;
            a[1] = SCMP_A2_64(SCMP_CMP_MASKED_EQ, bit, bit);
            if (add_rule(ctx, eperm, "socket", nr, 2, a, err, errlen) < 0)
                return -1;
        }
        for (uint64_t odd = 2; odd <= 4; odd += 2) {
            a[1] = SCMP_A2_64(SCMP_CMP_MASKED_EQ, 6, odd);
            if (add_rule(ctx, eperm, "socket", nr, 2, a, err, errlen) < 0)
                return -1;
        }
    }
    return 0;
}

/* A TCP Fast Open send connects without passing Landlock's connect check (seen on 6.18): it
 * would reach a listener that listen() bound implicitly. Refused on every send call; the flag
 * lies in the low 32 bits, so garbage above cannot hide it. */
static int add_no_fastopen_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
    struct scmp_arg_cmp to = SCMP_A3_64(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
    struct scmp_arg_cmp msg = SCMP_A2_64(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
    struct scmp_arg_cmp mmsg = SCMP_A3_64(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
    if (add_rule(ctx, eperm, "sendto", SCMP_SYS(sendto), 1, &to, err, errlen) < 0 ||
        add_rule(ctx, eperm, "sendmsg", SCMP_SYS(sendmsg), 1, &msg, err, errlen) < 0 ||
        add_rule(ctx, eperm, "sendmmsg", SCMP_SYS(sendmmsg), 1, &mmsg, err, errlen) < 0)
        return -1;
    return 0;
}

/* A root caller's command with root writes (sandbox/root_writes.h) owns the files it makes in a
 * checkout that other users run programs from: a set-user-ID or set-group-ID bit set there would
 * run a program of its choosing with root's ids for them, outside the sandbox. Every call that
 * sets a mode refuses those bits with EPERM: the chmod family, mknod, and the opens that create
 * (O_CREAT, O_TMPFILE; the mode of a plain open is ignored, so only those). openat2 carries its
 * mode in a struct no filter can read: it fails with ENOSYS, as on a kernel without it, and
 * callers fall back to openat. A name the build's libseccomp does not know is skipped: its
 * number fails with ENOSYS anyway (prepend_checks). */
static int add_setid_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        unsigned mode_arg;
        int flags_arg; /* -1: the call always sets the mode */
    } calls[] = {
        {"chmod", 1, -1},     {"fchmod", 1, -1}, {"fchmodat", 2, -1},
        {"fchmodat2", 2, -1}, {"mknod", 1, -1},  {"mknodat", 2, -1},
        {"creat", 1, -1},     {"open", 2, 1},    {"openat", 3, 2},
    };
    static const scmp_datum_t setid[] = {S_ISUID, S_ISGID, S_ISUID | S_ISGID};
    static const scmp_datum_t creating[] = {O_CREAT, O_TMPFILE};
    for (size_t i = 0; i < ARRAY_LEN(calls); i++) {
        int nr = seccomp_syscall_resolve_name(calls[i].name);
        if (nr == __NR_SCMP_ERROR)
            continue;
        for (size_t s = 0; s < ARRAY_LEN(setid); s++) {
            struct scmp_arg_cmp mode = {.arg = calls[i].mode_arg,
                                        .op = SCMP_CMP_MASKED_EQ,
                                        .datum_a = S_ISUID | S_ISGID,
                                        .datum_b = setid[s]};
            if (calls[i].flags_arg < 0) {
                if (add_rule(ctx, SCMP_ACT_ERRNO(EPERM), calls[i].name, nr, 1, &mode, err, errlen) <
                    0)
                    return -1;
                continue;
            }
            for (size_t c = 0; c < ARRAY_LEN(creating); c++) {
                struct scmp_arg_cmp both[2] = {{.arg = (unsigned)calls[i].flags_arg,
                                                .op = SCMP_CMP_MASKED_EQ,
                                                .datum_a = creating[c],
                                                .datum_b = creating[c]},
                                               mode};
                if (add_rule(ctx, SCMP_ACT_ERRNO(EPERM), calls[i].name, nr, 2, both, err, errlen) <
                    0)
                    return -1;
            }
        }
    }
    int nr = seccomp_syscall_resolve_name("openat2");
    if (nr != __NR_SCMP_ERROR &&
        add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "openat2", nr, 0, NULL, err, errlen) < 0)
        return -1;
    return 0;
}

static int add_profile_rules(const struct sandbox_config *cfg, scmp_filter_ctx ctx, char *err,
                             size_t errlen)
{
    if (cfg->root_write_caps && add_setid_rules(ctx, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < cfg->seccomp_deny.len; i++) {
        const char *name = cfg->seccomp_deny.items[i];
        int nr = seccomp_syscall_resolve_name(name);
        if (nr == __NR_SCMP_ERROR) {
            set_err(err, errlen, "seccomp: unknown system call '%s' in profile key seccomp.deny",
                    name);
            return -1;
        }
        if (add_rule(ctx, SCMP_ACT_ERRNO(EPERM), name, nr, 0, NULL, err, errlen) < 0)
            return -1;
    }
    if (cfg->block_unix_sockets) {
        /* socket(AF_UNIX, ...) only: socketpair() stays, it reaches nothing outside. On x86
         * libseccomp also refuses socketcall(SYS_SOCKET), whose arguments it cannot see. */
        struct scmp_arg_cmp a = SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint64_t)AF_UNIX);
        if (add_rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket", SCMP_SYS(socket), 1, &a, err, errlen) <
            0)
            return -1;
    }
    if (loopback_guard_wanted(cfg) && (add_inet_tcp_only_rules(ctx, err, errlen) < 0 ||
                                       add_no_fastopen_rules(ctx, err, errlen) < 0))
        return -1;
    return 0;
}

/* ---- checks in front of libseccomp's program ----
 * A few rules libseccomp cannot express are hand-written classic BPF put before its program,
 * which loads what it needs itself: they run first, and every call they do not refuse goes on
 * to libseccomp's rules.
 *
 * Socket families. A sandboxed command may create local sockets, IPv4 and IPv6 ones (which the
 * network namespace, Landlock and the proxy govern) and netlink ones (which libc and iproute2
 * need to read addresses and routes, confined to the sandbox's namespace). Every other family
 * (AF_VSOCK reaches the hypervisor or other VMs, AF_PACKET sees and forges raw frames, and
 * AF_BLUETOOTH, AF_ALG, AF_KEY, AF_TIPC, AF_RDS, ... are kernel attack surface nothing here
 * needs) fails for socket() and socketpair() with EAFNOSUPPORT: what a kernel built without
 * that family says, so a program that probes one takes its fallback, where EPERM reads as an
 * error to report. The kernel reads the family as an int: the check compares the argument's
 * low 32 bits only (little-endian, as every supported ABI), so high bits can neither hide a
 * refused family nor make an allowed one refused. This is not a libseccomp rule because on the
 * x86 ABI libseccomp turns a socket() rule into a socketcall(SYS_SOCKET) rule without the
 * arguments, which then clashes with the block_unix_sockets rule's EPERM.
 * socketcall(2) (the x86 ABI's multiplexer) carries its arguments in memory, out of the
 * filter's sight: its SYS_SOCKET and SYS_SOCKETPAIR are refused whole with the same errno. */
static const uint32_t allowed_families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
#define SOCKETCALL_SOCKET 1     /* SYS_SOCKET of <linux/net.h> */
#define SOCKETCALL_SOCKETPAIR 8 /* SYS_SOCKETPAIR */

/* System calls newer than libseccomp. A rule can only name a call libseccomp knows; one added
 * to the kernel after the build's libseccomp (open_tree_attr, file_setattr, ... for 2.5.4)
 * would reach the kernel unfiltered, whatever attack surface it brings. So every number above
 * the highest one libseccomp knows for an ABI fails with ENOSYS, what a kernel that predates
 * the call says, so programs take their fallback; so does every number between an ABI's table
 * and the block of calls of its own above it (x32's 512-547, ARM's private calls at 0xf0000).
 * The highest known numbers are read from libseccomp when the filter is compiled (at build time
 * for the prebuilt programs), so a newer libseccomp moves the line with it. */

/* The ABIs a filter may hold, the seccomp_data.arch each is seen with (x32 shares x86_64's,
 * with bit 30 set in the number), where its numbers lie, and its socket calls' numbers (fixed
 * by each ABI; on x86 libseccomp names only socketcall's multiplexed forms, so they are not
 * looked up). */
#define NO_CALL UINT32_MAX
struct abi_numbers {
    uint32_t scmp_arch, audit_arch;
    uint32_t table_lo, table_hi; /* where its ordinary table lies */
    uint32_t extra_lo, extra_hi; /* a block of calls of its own above the table, or 0, 0 */
    uint32_t last;               /* its last number (x86_64: the one below x32's bit) */
    uint32_t socket, socketpair, socketcall;
};

static const struct abi_numbers abi_numbers[] = {
    {SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, 0, 0x3ff, 0, 0, 0x3fffffff, 41, 53, NO_CALL},
    {SCMP_ARCH_X32, AUDIT_ARCH_X86_64, 0x40000000, 0x400001ff, 0x40000200, 0x400003ff, 0xffffffff,
     0x40000000 | 41, 0x40000000 | 53, NO_CALL},
    {SCMP_ARCH_X86, AUDIT_ARCH_I386, 0, 0x3ff, 0, 0, 0xffffffff, 359, 360, 102},
    {SCMP_ARCH_AARCH64, AUDIT_ARCH_AARCH64, 0, 0x3ff, 0, 0, 0xffffffff, 198, 199, NO_CALL},
    /* socketcall: the old ARM ABI's only, which AArch32 compat does not run */
    {SCMP_ARCH_ARM, AUDIT_ARCH_ARM, 0, 0x1ff, 0xf0000, 0xf07ff, 0xffffffff, 281, 288, NO_CALL},
};

/* The highest number in [lo, hi] libseccomp has a name for on arch; false when none. */
static bool highest_known(uint32_t arch, uint32_t lo, uint32_t hi, uint32_t *out)
{
    for (uint64_t nr = (uint64_t)hi + 1; nr-- > lo;) {
        char *name = seccomp_syscall_resolve_num_arch(arch, (int)nr);
        if (name) {
            free(name);
            *out = (uint32_t)nr;
            return true;
        }
    }
    return false;
}

/* A small forward-only assembler: jumps name labels, resolved once everything is emitted. */
enum { LBL_NEXT = -1, LBL_END, LBL_FAMILY, LBL_NO_FAMILY, LBL_SOCKETCALL, LBL_ENOSYS, LBL_FREE };
#define PRE_MAX 160
#define LBL_MAX 64

struct prefix {
    struct sock_filter insn[PRE_MAX];
    int jt[PRE_MAX], jf[PRE_MAX]; /* labels; a BPF_JA's target is in jt */
    size_t n;
    size_t at[LBL_MAX]; /* where each label is, once placed */
    bool placed[LBL_MAX];
    int labels; /* labels handed out by new_label() */
    bool overflow;
};

static int new_label(struct prefix *p)
{
    if (p->labels == LBL_MAX) {
        p->overflow = true;
        return LBL_END; /* resolve_jumps() is not reached */
    }
    return p->labels++;
}

static void emit(struct prefix *p, uint16_t code, uint32_t k, int jt, int jf)
{
    if (p->n == PRE_MAX) {
        p->overflow = true;
        return;
    }
    p->insn[p->n] = (struct sock_filter){.code = code, .k = k};
    p->jt[p->n] = jt;
    p->jf[p->n] = jf;
    p->n++;
}

static void place(struct prefix *p, int label)
{
    if (p->overflow)
        return;
    p->at[label] = p->n;
    p->placed[label] = true;
}

static int resolve_jumps(struct prefix *p)
{
    for (size_t i = 0; i < p->n; i++) {
        int labels[2] = {p->jt[i], p->jf[i]};
        size_t off[2] = {0, 0};
        for (int w = 0; w < 2; w++) {
            if (labels[w] == LBL_NEXT)
                continue;
            if (!p->placed[labels[w]] || p->at[labels[w]] <= i)
                return -1;
            off[w] = p->at[labels[w]] - i - 1;
        }
        if (BPF_CLASS(p->insn[i].code) == BPF_JMP && BPF_OP(p->insn[i].code) == BPF_JA) {
            p->insn[i].k = (uint32_t)off[0];
        } else if (BPF_CLASS(p->insn[i].code) == BPF_JMP) {
            if (off[0] > 255 || off[1] > 255)
                return -1;
            p->insn[i].jt = (uint8_t)off[0];
            p->insn[i].jf = (uint8_t)off[1];
        }
    }
    return 0;
}

#define LD_ABS(field) (BPF_LD | BPF_W | BPF_ABS), (uint32_t)offsetof(struct seccomp_data, field)
#define ARG0_LOW ((uint32_t)offsetof(struct seccomp_data, args)) /* little-endian: low word first */

/* Refuse numbers in [lo, hi] (the number is loaded) with ENOSYS. */
static void emit_range(struct prefix *p, uint32_t lo, uint32_t hi)
{
    int after = new_label(p);
    emit(p, BPF_JMP | BPF_JGE | BPF_K, lo, LBL_NEXT, after);
    emit(p, BPF_JMP | BPF_JGT | BPF_K, hi, after, LBL_ENOSYS);
    place(p, after);
}

/* The checks of one ABI (the number is loaded): the numbers libseccomp does not know, the
 * socket calls. */
static int emit_abi(struct prefix *p, const struct abi_numbers *a, char *err, size_t errlen)
{
    uint32_t top, extra_top;
    if (!highest_known(a->scmp_arch, a->table_lo, a->table_hi, &top)) {
        set_err(err, errlen,
                "seccomp: libseccomp knows no system call of an architecture in the filter");
        return -1;
    }
    uint32_t gap_end = a->extra_hi ? a->extra_lo - 1 : a->last;
    if (top < gap_end)
        emit_range(p, top + 1, gap_end);
    if (a->extra_hi) {
        /* A block libseccomp knows nothing of is refused whole: it could filter none of it. */
        uint32_t from = highest_known(a->scmp_arch, a->extra_lo, a->extra_hi, &extra_top)
                            ? extra_top + 1
                            : a->extra_lo;
        emit_range(p, from, a->last);
    }
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, a->socket, LBL_FAMILY, LBL_NEXT);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, a->socketpair, LBL_FAMILY, LBL_NEXT);
    if (a->socketcall != NO_CALL)
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, a->socketcall, LBL_SOCKETCALL, LBL_NEXT);
    return 0;
}

/* Put the checks in front of prog (libseccomp's, for the ABIs ctx holds). */
static int prepend_checks(scmp_filter_ctx ctx, struct sc_program *prog, char *err, size_t errlen)
{
    static struct prefix zero;
    struct prefix *p = xmalloc(sizeof *p);
    *p = zero;
    int ret = -1;
    p->labels = LBL_FREE;
    emit(p, LD_ABS(arch), LBL_NEXT, LBL_NEXT);
    for (size_t i = 0; i < ARRAY_LEN(abi_numbers);) {
        if (seccomp_arch_exist(ctx, abi_numbers[i].scmp_arch) != 0) {
            i++;
            continue;
        }
        /* One group per seccomp_data.arch: x86_64 and x32 share theirs. */
        uint32_t audit = abi_numbers[i].audit_arch;
        int next_group = new_label(p);
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, audit, LBL_NEXT, next_group);
        emit(p, LD_ABS(nr), LBL_NEXT, LBL_NEXT);
        for (; i < ARRAY_LEN(abi_numbers) && abi_numbers[i].audit_arch == audit; i++)
            if (seccomp_arch_exist(ctx, abi_numbers[i].scmp_arch) == 0 &&
                emit_abi(p, &abi_numbers[i], err, errlen) < 0)
                goto out;
        emit(p, BPF_JMP | BPF_JA, 0, LBL_END, LBL_NEXT);
        place(p, next_group);
    }
    emit(p, BPF_JMP | BPF_JA, 0, LBL_END, LBL_NEXT); /* an ABI not listed: libseccomp kills it */
    place(p, LBL_SOCKETCALL);
    emit(p, BPF_LD | BPF_W | BPF_ABS, ARG0_LOW, LBL_NEXT, LBL_NEXT);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, SOCKETCALL_SOCKET, LBL_NO_FAMILY, LBL_NEXT);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, SOCKETCALL_SOCKETPAIR, LBL_NO_FAMILY, LBL_NEXT);
    emit(p, BPF_JMP | BPF_JA, 0, LBL_END, LBL_NEXT);
    place(p, LBL_FAMILY);
    emit(p, BPF_LD | BPF_W | BPF_ABS, ARG0_LOW, LBL_NEXT, LBL_NEXT);
    for (size_t i = 0; i < ARRAY_LEN(allowed_families); i++)
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, allowed_families[i], LBL_END, LBL_NEXT);
    place(p, LBL_NO_FAMILY);
    emit(p, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EAFNOSUPPORT & SECCOMP_RET_DATA), LBL_NEXT,
         LBL_NEXT);
    place(p, LBL_ENOSYS);
    emit(p, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA), LBL_NEXT, LBL_NEXT);
    place(p, LBL_END);
    if (p->overflow || resolve_jumps(p) < 0 || p->n + prog->len > BPF_MAXINSNS) {
        set_err(err, errlen, "seccomp: the filter's own checks do not fit");
        goto out;
    }
    struct sock_filter *all = xmalloc((p->n + prog->len) * sizeof *all);
    memcpy(all, p->insn, p->n * sizeof *all);
    memcpy(all + p->n, prog->insns, prog->len * sizeof *all);
    free(prog->insns);
    prog->insns = all;
    prog->len = (unsigned short)(prog->len + p->n);
    ret = 0;
out:
    free(p);
    return ret;
}

/* libseccomp 2.5 exports BPF only to a file descriptor: write it to a memfd, read it back. */
static int export_program(scmp_filter_ctx ctx, struct sc_program *out, char *err, size_t errlen)
{
    int ret = -1;
    void *buf = NULL;
    int fd = memfd_create("cordon-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        set_err(err, errlen, "seccomp: memfd_create: %s", strerror(errno));
        goto out;
    }
    int r = seccomp_export_bpf(ctx, fd);
    if (r < 0) {
        set_err(err, errlen, "seccomp: cannot compile the filter: %s", strerror(-r));
        goto out;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        set_err(err, errlen, "seccomp: fstat: %s", strerror(errno));
        goto out;
    }
    size_t size = (size_t)st.st_size;
    size_t n = size / sizeof(struct sock_filter);
    if (size == 0 || size % sizeof(struct sock_filter) != 0 || n > BPF_MAXINSNS) {
        set_err(err, errlen, "seccomp: compiled filter has a bad size (%zu bytes)", size);
        goto out;
    }
    buf = xmalloc(size);
    size_t got = 0;
    while (got < size) {
        ssize_t k;
        RETRY_EINTR(k, pread(fd, (char *)buf + got, size - got, (off_t)got));
        if (k <= 0) {
            set_err(err, errlen, "seccomp: reading the compiled filter: %s",
                    k < 0 ? strerror(errno) : "short read");
            goto out;
        }
        got += (size_t)k;
    }
    out->insns = buf;
    out->len = (unsigned short)n;
    buf = NULL;
    ret = 0;
out:
    free(buf);
    if (fd >= 0)
        close(fd);
    return ret;
}

int sc_compile(const struct sandbox_config *cfg, struct sc_program *out, char *err, size_t errlen)
{
    int ret = -1;
    out->insns = NULL;
    out->len = 0;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        set_err(err, errlen, "seccomp: cannot initialise libseccomp");
        return -1;
    }
    int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (r < 0) {
        set_err(err, errlen, "seccomp: cannot set the bad-architecture action: %s", strerror(-r));
        goto out;
    }
    /* A binary search over syscall numbers instead of a linear chain: every system call of
     * every sandboxed command runs this program. */
    r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (r < 0) {
        set_err(err, errlen, "seccomp: cannot enable the binary-tree layout: %s", strerror(-r));
        goto out;
    }
    if (add_arches(ctx, err, errlen) < 0 || add_default_rules(ctx, err, errlen) < 0 ||
        add_profile_rules(cfg, ctx, err, errlen) < 0 || export_program(ctx, out, err, errlen) < 0)
        goto out;
    if (prepend_checks(ctx, out, err, errlen) < 0) {
        sc_program_free(out);
        goto out;
    }
    ret = 0;
out:
    seccomp_release(ctx);
    return ret;
}

#ifndef CORDON_SC_GENERATOR
/* The build-time program for cfg's rule set, or NULL when it has none. The prebuilt sets are
 * the default refusals with and without block_unix_sockets, for a sandbox with loopback
 * service (every built-in profile), each with and without a root caller's set-id rules; whatever
 * else add_profile_rules() reads (a deny list, the rules of a sandbox without loopback service)
 * is compiled at run time. A new input there must
 * be checked here too: test_seccomp_filter compares both ways. */
static const struct sock_filter *prebuilt_for(const struct sandbox_config *cfg, unsigned short *len)
{
    if (cfg->seccomp_deny.len > 0 || loopback_guard_wanted(cfg))
        return NULL;
    static const struct {
        const unsigned short *len;
        const struct sock_filter *insns;
    } sets[2][2] = {
        {{&sc_prebuilt_default_len, sc_prebuilt_default},
         {&sc_prebuilt_no_unix_len, sc_prebuilt_no_unix}},
        {{&sc_prebuilt_root_writes_len, sc_prebuilt_root_writes},
         {&sc_prebuilt_root_writes_no_unix_len, sc_prebuilt_root_writes_no_unix}},
    };
    const bool rw = cfg->root_write_caps, nu = cfg->block_unix_sockets;
    *len = *sets[rw][nu].len;
    return *len ? sets[rw][nu].insns : NULL;
}

int sc_build(const struct sandbox_config *cfg, struct sc_program *out, char *err, size_t errlen)
{
    unsigned short len = 0;
    const struct sock_filter *pre = prebuilt_for(cfg, &len);
    if (!pre)
        return sc_compile(cfg, out, err, errlen);
    out->insns = xmalloc((size_t)len * sizeof *pre);
    memcpy(out->insns, pre, (size_t)len * sizeof *pre);
    out->len = len;
    return 0;
}
#endif

int sc_load(const struct sc_program *prog)
{
    struct sock_fprog fprog = {.len = prog->len, .filter = prog->insns};
    if (!prog->insns || prog->len == 0)
        return -EINVAL;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) < 0)
        return -errno;
    return 0;
}

void sc_program_free(struct sc_program *prog)
{
    free(prog->insns);
    prog->insns = NULL;
    prog->len = 0;
}
