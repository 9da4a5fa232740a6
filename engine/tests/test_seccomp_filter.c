/* test_seccomp_filter.c — sc_build/sc_load against the real kernel: each test runs in its own
 * forked child (test.h), loads the filter there and checks what the kernel answers. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "sandbox/seccomp_filter.h"
#include "test.h"

/* Build the filter for cfg and load it into this (test) process. */
static void load(const struct sandbox_config *cfg)
{
    struct sc_program prog;
    char err[256] = "";
    int r = sc_build(cfg, &prog, err, sizeof err);
    if (r != 0)
        fprintf(stderr, "  sc_build: %s\n", err);
    CHECK_EQ_INT(r, 0);
    CHECK(prog.len > 0);
    CHECK_EQ_INT(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
    test_leak_check_early(); /* the filter refuses ptrace, which LeakSanitizer needs */
    CHECK_EQ_INT(sc_load(&prog), 0);
    sc_program_free(&prog);
    CHECK(prog.insns == NULL);
}

/* syscall() and return errno on failure, 0 on success. */
#define ERRNO_OF(...) (syscall(__VA_ARGS__) < 0 ? errno : 0)

static void test_default_refusals(void)
{
    struct sandbox_config cfg = {0};
    load(&cfg);
    CHECK_EQ_INT(ERRNO_OF(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_add_key, "user", "x", "y", 1, -3), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_bpf, 0, NULL, 0), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_userfaultfd, 0), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_io_uring_setup, 1, NULL), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_unshare, CLONE_NEWUSER), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_unshare, CLONE_NEWNS), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_setns, -1, 0), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_mount, "none", "/mnt", "tmpfs", 0, NULL), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_chroot, "/"), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_fsopen, "tmpfs", 0), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), EPERM);
    /* Ordinary calls still work. */
    CHECK(getpid() > 0);
    char buf[4096];
    CHECK(syscall(SYS_getcwd, buf, sizeof buf) > 0);
}

static void test_clone_newuser_refused_fork_allowed(void)
{
    struct sandbox_config cfg = {0};
    load(&cfg);
    /* With CLONE_NEWUSER the kernel never sees the call; the flag alone decides. */
    CHECK_EQ_INT(ERRNO_OF(SYS_clone, (long)(CLONE_NEWUSER | SIGCHLD), 0, 0, 0, 0), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_clone, (long)(CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD), 0, 0, 0, 0),
                 EPERM);
    /* clone3 carries its flags in memory: ENOSYS, so libc falls back to clone. */
    struct clone_args ca = {.flags = 0, .exit_signal = SIGCHLD};
    CHECK_EQ_INT(ERRNO_OF(SYS_clone3, &ca, sizeof ca), ENOSYS);
    /* fork() (glibc: clone without CLONE_NEWUSER) still works. */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(7);
    int st = 0;
    CHECK_EQ_INT(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
}

static void test_tty_injection_refused(void)
{
    struct sandbox_config cfg = {0};
    load(&cfg);
    char c = 'x';
    int fd = open("/dev/null", O_RDONLY);
    CHECK(fd >= 0);
    CHECK_EQ_INT(ERRNO_OF(SYS_ioctl, fd, (unsigned long)TIOCSTI, &c), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_ioctl, fd, (unsigned long)TIOCLINUX, &c), EPERM);
    /* The kernel reads the request as 32 bits: upper garbage must not get past the filter. */
    CHECK_EQ_INT(ERRNO_OF(SYS_ioctl, fd, (1UL << 32) | (unsigned long)TIOCSTI, &c), EPERM);
    /* Other ioctls reach the kernel (ENOTTY on /dev/null). */
    int n = 0;
    CHECK_EQ_INT(ERRNO_OF(SYS_ioctl, fd, (unsigned long)FIONREAD, &n) == EPERM, 0);
}

static void test_personality(void)
{
    struct sandbox_config cfg = {0};
    load(&cfg);
    static const unsigned long allowed[] = {0, 8, 0x20000, 0x20008, 0xffffffff};
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        CHECK_EQ_INT(ERRNO_OF(SYS_personality, allowed[i]), 0);
    CHECK_EQ_INT(ERRNO_OF(SYS_personality, 0UL), 0); /* back to PER_LINUX */
    static const unsigned long refused[] = {
        ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, 1,          7,          9,      0x20001,
        0x20009,           0xfffffffe,        0x7fffffff, 0x80000000, 0x40008};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        if (ERRNO_OF(SYS_personality, refused[i]) != EPERM)
            fprintf(stderr, "  personality(0x%lx) not refused\n", refused[i]);
        CHECK_EQ_INT(ERRNO_OF(SYS_personality, refused[i]), EPERM);
    }
}

static void test_unix_sockets_default_allowed(void)
{
    struct sandbox_config cfg = {0};
    load(&cfg);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    close(fd);
}

static void test_block_unix_sockets(void)
{
    struct sandbox_config cfg = {.block_unix_sockets = true};
    load(&cfg);
    errno = 0;
    CHECK_EQ_INT(socket(AF_UNIX, SOCK_STREAM, 0), -1);
    CHECK_EQ_INT(errno, EPERM);
    CHECK_EQ_INT(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), -1);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    close(fd);
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void test_deny_list(void)
{
    struct sandbox_config cfg = {0};
    str_list_push(&cfg.seccomp_deny, "getcwd");
    str_list_push(&cfg.seccomp_deny, "ptrace"); /* already refused: no conflict */
    str_list_push(&cfg.seccomp_deny, "clone3"); /* already ENOSYS: stays refused */
    load(&cfg);
    char buf[256];
    CHECK_EQ_INT(ERRNO_OF(SYS_getcwd, buf, sizeof buf), EPERM);
    CHECK(getcwd(buf, sizeof buf) == NULL);
    CHECK_EQ_INT(errno, EPERM);
    struct clone_args ca = {.exit_signal = SIGCHLD};
    CHECK(syscall(SYS_clone3, &ca, sizeof ca) < 0);
    str_list_free(&cfg.seccomp_deny);
}

/* Root writes: set-id bits refused in every call that sets a mode; other modes, and the mode
 * of an open that creates nothing, pass; openat2 is ENOSYS. */
static void test_root_writes_no_setid(void)
{
    char dir[] = "/tmp/cordon-test-setid.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char file[64], made[64];
    snprintf(file, sizeof file, "%s/f", dir);
    snprintf(made, sizeof made, "%s/made", dir);
    int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0755);
    CHECK(fd >= 0);
    struct sandbox_config cfg = {.root_write_caps = true};
    load(&cfg);
    CHECK_EQ_INT(ERRNO_OF(SYS_chmod, file, 04755), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_chmod, file, 02755), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_fchmod, fd, 06755), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_fchmodat, AT_FDCWD, file, 04700), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_chmod, file, 0700), 0);
    CHECK_EQ_INT(ERRNO_OF(SYS_fchmod, fd, 01755), 0); /* the sticky bit is no set-id bit */
    CHECK_EQ_INT(ERRNO_OF(SYS_openat, AT_FDCWD, made, O_CREAT | O_WRONLY, 04755), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_openat, AT_FDCWD, dir, O_TMPFILE | O_WRONLY, 02755), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_mknodat, AT_FDCWD, made, S_IFREG | 04644, 0), EPERM);
    CHECK_EQ_INT(ERRNO_OF(SYS_openat2, AT_FDCWD, made, NULL, 0), ENOSYS);
    int rd = (int)syscall(SYS_openat, AT_FDCWD, file, O_RDONLY | O_CLOEXEC, 04755);
    CHECK(rd >= 0); /* no O_CREAT: the mode is ignored, and so is it here */
    close(rd);
    close(fd);
    CHECK_EQ_INT(unlink(file), 0);
    CHECK_EQ_INT(rmdir(dir), 0);
}

static void test_unknown_name(void)
{
    struct sandbox_config cfg = {0};
    str_list_push(&cfg.seccomp_deny, "getpid");
    str_list_push(&cfg.seccomp_deny, "no_such_call");
    struct sc_program prog = {0};
    char err[256] = "";
    CHECK_EQ_INT(sc_build(&cfg, &prog, err, sizeof err), -1);
    CHECK(prog.insns == NULL);
    CHECK_STR_CONTAINS(err,
                       "seccomp: unknown system call 'no_such_call' in profile key seccomp.deny");
    str_list_free(&cfg.seccomp_deny);
}

static void test_build_twice_and_free(void)
{
    struct sandbox_config cfg = {.block_unix_sockets = true};
    struct sc_program a, b;
    char err[256];
    CHECK_EQ_INT(sc_build(&cfg, &a, err, sizeof err), 0);
    CHECK_EQ_INT(sc_build(&cfg, &b, err, sizeof err), 0);
    CHECK_EQ_INT(a.len, b.len);
    CHECK(memcmp(a.insns, b.insns, a.len * 8u) == 0);
    CHECK(a.len <= 4096);
    sc_program_free(&a);
    sc_program_free(&b);
    sc_program_free(&b); /* idempotent */
    struct sc_program empty = {0};
    CHECK_EQ_INT(sc_load(&empty), -EINVAL);
}

/* The programs compiled at build time are exactly what libseccomp makes here for the same rule
 * set (else the build machine's libseccomp differs from this one: rebuild); without loopback
 * service the program has rules of its own, compiled at run time, and must be that one too. */
static void test_prebuilt_matches_libseccomp(void)
{
    for (int variant = 0; variant < 8; variant++) {
        struct sandbox_config cfg = {.block_unix_sockets = variant & 1,
                                     .net_loopback = variant & 2,
                                     .root_write_caps = variant & 4};
        struct sc_program built, compiled;
        char err[256];
        CHECK_EQ_INT(sc_build(&cfg, &built, err, sizeof err), 0);
        CHECK_EQ_INT(sc_compile(&cfg, &compiled, err, sizeof err), 0);
        CHECK_EQ_INT(built.len, compiled.len);
        CHECK(memcmp(built.insns, compiled.insns, built.len * sizeof *built.insns) == 0);
        sc_program_free(&built);
        sc_program_free(&compiled);
    }
    /* A profile's deny list is compiled at run time, with the list in it. */
    struct sandbox_config cfg = {.net_loopback = true};
    struct sc_program plain, more;
    char err[256];
    CHECK_EQ_INT(sc_build(&cfg, &plain, err, sizeof err), 0);
    str_list_push(&cfg.seccomp_deny, "getcwd");
    CHECK_EQ_INT(sc_build(&cfg, &more, err, sizeof err), 0);
    CHECK(more.len != plain.len ||
          memcmp(more.insns, plain.insns, plain.len * sizeof *plain.insns) != 0);
    sc_program_free(&plain);
    sc_program_free(&more);
    str_list_free(&cfg.seccomp_deny);
}

/* A classic-BPF evaluator for the instructions libseccomp emits, so the rules for the other
 * ABIs (x86 through int $0x80, x32) can be checked on any kernel, even one that cannot run
 * them. Returns the filter's SECCOMP_RET_* value for one seccomp_data. */
static uint32_t bpf_run(const struct sc_program *p, const struct seccomp_data *d)
{
    uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
    for (unsigned pc = 0; pc < p->len; pc++) {
        const struct sock_filter *f = &p->insns[pc];
        switch (f->code) {
        case BPF_LD | BPF_W | BPF_ABS:
            CHECK(f->k + 4 <= sizeof *d && f->k % 4 == 0);
            memcpy(&a, (const char *)d + f->k, 4);
            break;
        case BPF_LD | BPF_MEM:
            a = mem[f->k];
            break;
        case BPF_LDX | BPF_MEM:
            x = mem[f->k];
            break;
        case BPF_LD | BPF_IMM:
            a = f->k;
            break;
        case BPF_ST:
            mem[f->k] = a;
            break;
        case BPF_STX:
            mem[f->k] = x;
            break;
        case BPF_MISC | BPF_TAX:
            x = a;
            break;
        case BPF_MISC | BPF_TXA:
            a = x;
            break;
        case BPF_ALU | BPF_AND | BPF_K:
            a &= f->k;
            break;
        case BPF_ALU | BPF_OR | BPF_K:
            a |= f->k;
            break;
        case BPF_JMP | BPF_JA:
            pc += f->k;
            break;
        case BPF_JMP | BPF_JEQ | BPF_K:
            pc += a == f->k ? f->jt : f->jf;
            break;
        case BPF_JMP | BPF_JGT | BPF_K:
            pc += a > f->k ? f->jt : f->jf;
            break;
        case BPF_JMP | BPF_JGE | BPF_K:
            pc += a >= f->k ? f->jt : f->jf;
            break;
        case BPF_JMP | BPF_JSET | BPF_K:
            pc += (a & f->k) ? f->jt : f->jf;
            break;
        case BPF_RET | BPF_K:
            return f->k;
        case BPF_RET | BPF_A:
            return a;
        default:
            fprintf(stderr, "  bpf_run: opcode 0x%x not handled\n", f->code);
            CHECK(0);
        }
    }
    CHECK(!"fell off the end of the program");
    return 0;
}

static uint32_t verdict(const struct sc_program *p, uint32_t arch, int nr, uint64_t a0, uint64_t a1)
{
    struct seccomp_data d = {.nr = nr, .arch = arch, .args = {a0, a1}};
    return bpf_run(p, &d);
}

#define RET_EPERM (SECCOMP_RET_ERRNO | EPERM)
#define RET_ENOSYS (SECCOMP_RET_ERRNO | ENOSYS)
#define RET_EAFNOSUPPORT (SECCOMP_RET_ERRNO | EAFNOSUPPORT)

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef AF_MCTP
#define AF_MCTP 45
#endif

/* Families socket() and socketpair() refuse: every one the kernel knows but the four allowed,
 * AF_UNSPEC, values past AF_MAX, and negative ones. */
static const uint64_t refused_families[] = {AF_UNSPEC,
                                            AF_AX25,
                                            AF_IPX,
                                            AF_APPLETALK,
                                            AF_NETROM,
                                            AF_BRIDGE,
                                            AF_ATMPVC,
                                            AF_X25,
                                            AF_ROSE,
                                            AF_DECnet,
                                            AF_NETBEUI,
                                            AF_SECURITY,
                                            AF_KEY,
                                            AF_PACKET,
                                            AF_ASH,
                                            AF_ECONET,
                                            AF_ATMSVC,
                                            AF_RDS,
                                            AF_SNA,
                                            AF_IRDA,
                                            AF_PPPOX,
                                            AF_WANPIPE,
                                            AF_LLC,
                                            AF_IB,
                                            AF_MPLS,
                                            AF_CAN,
                                            AF_TIPC,
                                            AF_BLUETOOTH,
                                            AF_IUCV,
                                            AF_RXRPC,
                                            AF_ISDN,
                                            AF_PHONET,
                                            AF_IEEE802154,
                                            AF_CAIF,
                                            AF_ALG,
                                            AF_NFC,
                                            AF_VSOCK,
                                            AF_KCM,
                                            AF_QIPCRTR,
                                            AF_SMC,
                                            AF_XDP,
                                            AF_MCTP,
                                            46,
                                            47,
                                            63,
                                            64,
                                            255,
                                            0x7fffffff,
                                            0xffffffff,
                                            0xffffffffffffffffull};
static const uint64_t allowed_families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};

static void test_every_abi_has_the_rules(void)
{
    struct sandbox_config cfg = {.block_unix_sockets = true, .net_loopback = true};
    struct sc_program p;
    char err[256];
    CHECK_EQ_INT(sc_build(&cfg, &p, err, sizeof err), 0);
#if defined(__x86_64__)
    const uint32_t native = AUDIT_ARCH_X86_64, i386 = AUDIT_ARCH_I386;
    const int x32 = 0x40000000; /* __X32_SYSCALL_BIT */
    /* native: keyctl 250, getpid 39, personality 135 */
    CHECK_EQ_INT(verdict(&p, native, 250, 0, 0), RET_EPERM);
    CHECK_EQ_INT(verdict(&p, native, 39, 0, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict(&p, native, 135, 0x100000008ull, 0),
                 SECCOMP_RET_ALLOW); /* kernel sees 8 */
    CHECK_EQ_INT(verdict(&p, native, 135, 0x100040000ull, 0), RET_EPERM);
    /* i386: keyctl 288, getpid 20, clone 120, clone3 435, personality 136, ioctl 54,
     * socket 359, socketcall 102 (SYS_SOCKET = 1: its arguments are out of sight) */
    CHECK_EQ_INT(verdict(&p, i386, 288, 0, 0), RET_EPERM);
    CHECK_EQ_INT(verdict(&p, i386, 20, 0, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict(&p, i386, 120, CLONE_NEWUSER | SIGCHLD, 0), RET_EPERM);
    CHECK_EQ_INT(verdict(&p, i386, 120, SIGCHLD, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict(&p, i386, 435, 0, 0), RET_ENOSYS);
    CHECK_EQ_INT(verdict(&p, i386, 136, 0x20008, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict(&p, i386, 136, 0xffffffff, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict(&p, i386, 136, 0x0040000, 0), RET_EPERM);
    CHECK_EQ_INT(verdict(&p, i386, 54, 3, TIOCSTI), RET_EPERM);
    CHECK_EQ_INT(verdict(&p, i386, 54, 3, FIONREAD), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict(&p, i386, 359, AF_UNIX, 0), RET_EPERM);
    CHECK_EQ_INT(verdict(&p, i386, 359, AF_INET, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict(&p, i386, 102, 1, 0), RET_EAFNOSUPPORT); /* before libseccomp's EPERM */
    /* x32: same numbers as x86_64 with the x32 bit */
    CHECK_EQ_INT(verdict(&p, native, x32 | 250, 0, 0), RET_EPERM);
    CHECK_EQ_INT(verdict(&p, native, x32 | 39, 0, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict(&p, native, x32 | 56, CLONE_NEWUSER, 0), RET_EPERM);
    CHECK_EQ_INT(verdict(&p, native, x32 | 41, AF_UNIX, 0), RET_EPERM);
    /* an ABI outside the filter kills the process */
    CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_AARCH64, 0, 0, 0), SECCOMP_RET_KILL_PROCESS);
#elif defined(__aarch64__)
    /* aarch64: keyctl 219, getpid 172; arm (AArch32): keyctl 311, getpid 20 */
    CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_AARCH64, 219, 0, 0), RET_EPERM);
    CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_AARCH64, 172, 0, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_ARM, 311, 0, 0), RET_EPERM);
    CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_ARM, 20, 0, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_X86_64, 0, 0, 0), SECCOMP_RET_KILL_PROCESS);
#endif
    sc_program_free(&p);
}

static uint32_t verdict4(const struct sc_program *p, int nr, uint64_t a0, uint64_t a1, uint64_t a2,
                         uint64_t a3)
{
#if defined(__x86_64__)
    const uint32_t arch = AUDIT_ARCH_X86_64;
#else
    const uint32_t arch = AUDIT_ARCH_AARCH64;
#endif
    struct seccomp_data d = {.nr = nr, .arch = arch, .args = {a0, a1, a2, a3}};
    return bpf_run(p, &d);
}

/* network.loopback = false: inet sockets are TCP only, and no TCP Fast Open send (Landlock does
 * the rest; loopback_guard.c). The kernel reads the int arguments' low 32 bits only. */
static void test_no_loopback_inet_is_tcp_only(void)
{
    struct sandbox_config cfg = {.net_loopback = false};
    struct sc_program p;
    char err[256];
    CHECK_EQ_INT(sc_build(&cfg, &p, err, sizeof err), 0);
    const int so = __NR_socket, st = __NR_sendto, sm = __NR_sendmsg;
    const uint64_t hi = 0x100000000ull;
    CHECK_EQ_INT(verdict4(&p, so, AF_INET, SOCK_STREAM, 0, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 6, 0),
                 SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET, SOCK_STREAM, hi | 6, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET, SOCK_DGRAM, 0, 0), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET6, SOCK_RAW, 0, 0), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET, SOCK_SEQPACKET, 0, 0), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, so, hi | AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0, 0), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET, SOCK_STREAM, 262 /* MPTCP */, 0), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET6, SOCK_STREAM, 132 /* SCTP */, 0), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET, SOCK_STREAM, 2, 0), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET, SOCK_STREAM, 4, 0), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET, SOCK_STREAM, 0x80000006u, 0), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, so, AF_UNIX, SOCK_DGRAM, 0, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict4(&p, st, 3, 0, 1, MSG_FASTOPEN), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, st, 3, 0, 1, hi | MSG_FASTOPEN | MSG_NOSIGNAL), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, st, 3, 0, 1, MSG_NOSIGNAL), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict4(&p, sm, 3, 0, MSG_FASTOPEN, 0), RET_EPERM);
    CHECK_EQ_INT(verdict4(&p, sm, 3, 0, 0, 0), SECCOMP_RET_ALLOW);
    sc_program_free(&p);

    /* With loopback service (and with the host's network) none of it applies. */
    struct sandbox_config on = {.net_loopback = true}, host = {.net_unrestricted = true};
    CHECK_EQ_INT(sc_build(&on, &p, err, sizeof err), 0);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET, SOCK_DGRAM, 0, 0), SECCOMP_RET_ALLOW);
    CHECK_EQ_INT(verdict4(&p, st, 3, 0, 1, MSG_FASTOPEN), SECCOMP_RET_ALLOW);
    sc_program_free(&p);
    CHECK_EQ_INT(sc_build(&host, &p, err, sizeof err), 0);
    CHECK_EQ_INT(verdict4(&p, so, AF_INET, SOCK_DGRAM, 0, 0), SECCOMP_RET_ALLOW);
    sc_program_free(&p);
}

/* socket() and socketpair() of a family outside AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK fail
 * with EAFNOSUPPORT on every ABI, judged by the low 32 bits the kernel reads. */
static void test_socket_families(void)
{
    for (int unix_blocked = 0; unix_blocked < 2; unix_blocked++) {
        struct sandbox_config cfg = {.net_loopback = true, .block_unix_sockets = unix_blocked};
        struct sc_program p;
        char err[256];
        CHECK_EQ_INT(sc_build(&cfg, &p, err, sizeof err), 0);
        const uint64_t hi = 0x100000000ull;
#if defined(__x86_64__)
        const uint32_t native = AUDIT_ARCH_X86_64, i386 = AUDIT_ARCH_I386;
        const int x32 = 0x40000000;
        /* socket and socketpair: x86_64 41, 53; x32 the same with the x32 bit; i386 359, 360 */
        const struct {
            uint32_t arch;
            int nr;
        } calls[] = {{native, 41},       {native, 53}, {native, x32 | 41},
                     {native, x32 | 53}, {i386, 359},  {i386, 360}};
        /* socketcall: SYS_SOCKET and SYS_SOCKETPAIR refused whole (arguments in memory), others
         * (SYS_CONNECT 3) go on to libseccomp's rules */
        CHECK_EQ_INT(verdict(&p, i386, 102, 1, 0), RET_EAFNOSUPPORT);
        CHECK_EQ_INT(verdict(&p, i386, 102, 8, 0), RET_EAFNOSUPPORT);
        CHECK_EQ_INT(verdict(&p, i386, 102, 3, 0), SECCOMP_RET_ALLOW);
#elif defined(__aarch64__)
        /* socket and socketpair: aarch64 198, 199; arm 281, 288 */
        const struct {
            uint32_t arch;
            int nr;
        } calls[] = {{AUDIT_ARCH_AARCH64, 198},
                     {AUDIT_ARCH_AARCH64, 199},
                     {AUDIT_ARCH_ARM, 281},
                     {AUDIT_ARCH_ARM, 288}};
#endif
        for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
            for (size_t i = 0; i < sizeof refused_families / sizeof refused_families[0]; i++) {
                uint32_t v =
                    verdict(&p, calls[c].arch, calls[c].nr, refused_families[i], SOCK_STREAM);
                if (v != RET_EAFNOSUPPORT)
                    fprintf(stderr, "  nr %d family 0x%llx: 0x%x\n", calls[c].nr,
                            (unsigned long long)refused_families[i], v);
                CHECK_EQ_INT(v, RET_EAFNOSUPPORT);
                /* high bits set cannot make a refused family pass */
                CHECK_EQ_INT(verdict(&p, calls[c].arch, calls[c].nr, hi | refused_families[i], 1),
                             RET_EAFNOSUPPORT);
            }
            for (size_t i = 0; i < sizeof allowed_families / sizeof allowed_families[0]; i++) {
                uint64_t fam = allowed_families[i];
                /* block_unix_sockets still refuses socket(AF_UNIX) with EPERM (socketpair stays) */
                bool eperm = unix_blocked && fam == AF_UNIX && (c % 2) == 0;
                uint32_t want = eperm ? RET_EPERM : SECCOMP_RET_ALLOW;
                CHECK_EQ_INT(verdict(&p, calls[c].arch, calls[c].nr, fam, SOCK_STREAM), want);
                /* the kernel reads the low 32 bits: an allowed family with garbage above stays one */
                CHECK_EQ_INT(verdict(&p, calls[c].arch, calls[c].nr, hi | fam, SOCK_STREAM), want);
            }
        }
        sc_program_free(&p);
    }
}

/* The same against the kernel: socket() of a refused family fails with EAFNOSUPPORT whatever
 * the high bits, the allowed families still work. */
static void test_socket_families_kernel(void)
{
    struct sandbox_config cfg = {.net_loopback = true};
    load(&cfg);
    static const int refused[] = {AF_VSOCK,     AF_PACKET, AF_ALG, AF_KEY,
                                  AF_BLUETOOTH, AF_TIPC,   AF_XDP};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CHECK_EQ_INT(ERRNO_OF(SYS_socket, refused[i], SOCK_STREAM, 0), EAFNOSUPPORT);
        CHECK_EQ_INT(ERRNO_OF(SYS_socket, (1ull << 32) | (unsigned)refused[i], SOCK_DGRAM, 0),
                     EAFNOSUPPORT);
        int sv[2];
        CHECK_EQ_INT(ERRNO_OF(SYS_socketpair, refused[i], SOCK_STREAM, 0, sv), EAFNOSUPPORT);
    }
    int ok[] = {socket(AF_UNIX, SOCK_STREAM, 0), socket(AF_INET, SOCK_STREAM, 0),
                socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0 /* NETLINK_ROUTE */)};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        CHECK(ok[i] >= 0);
        close(ok[i]);
    }
    int fd = (int)syscall(SYS_socket, (1ull << 32) | AF_UNIX, SOCK_STREAM, 0); /* kernel: AF_UNIX */
    CHECK(fd >= 0);
    close(fd);
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

/* The highest number in [lo, hi] libseccomp knows on arch (test-side, independent scan). */
static uint32_t top_known(uint32_t arch, uint32_t lo, uint32_t hi)
{
    for (int64_t nr = hi; nr >= lo; nr--) {
        char *name = seccomp_syscall_resolve_num_arch(arch, (int)nr);
        if (name) {
            free(name);
            return (uint32_t)nr;
        }
    }
    CHECK(!"libseccomp knows no number in the range");
    return 0;
}

/* Numbers above the highest one libseccomp knows fail with ENOSYS on every ABI; the highest
 * known one, which no rule refuses, is allowed. */
static void test_unknown_numbers_enosys(void)
{
    struct sandbox_config none = {.net_loopback = true};
    struct sandbox_config deny = {.net_loopback = true};
    str_list_push(&deny.seccomp_deny, "getcwd"); /* compiled at run time, not prebuilt */
    const struct sandbox_config *cfgs[] = {&none, &deny};
    for (size_t k = 0; k < 2; k++) {
        struct sc_program p;
        char err[256];
        CHECK_EQ_INT(sc_build(cfgs[k], &p, err, sizeof err), 0);
#if defined(__x86_64__)
        const uint32_t native = AUDIT_ARCH_X86_64, i386 = AUDIT_ARCH_I386, x32 = 0x40000000;
        uint32_t top64 = top_known(SCMP_ARCH_X86_64, 0, 1023);
        uint32_t top32 = top_known(SCMP_ARCH_X86, 0, 1023);
        uint32_t topx32 = top_known(SCMP_ARCH_X32, x32, x32 + 511);
        uint32_t topx32_own = top_known(SCMP_ARCH_X32, x32 + 512, x32 + 1023);
        CHECK_EQ_INT(verdict(&p, native, (int)top64, 0, 0), SECCOMP_RET_ALLOW);
        CHECK_EQ_INT(verdict(&p, native, (int)top64 + 1, 0, 0), RET_ENOSYS);
        if (top64 < 467) /* open_tree_attr, newer than libseccomp 2.5.4 */
            CHECK_EQ_INT(verdict(&p, native, 467, 0, 0), RET_ENOSYS);
        CHECK_EQ_INT(verdict(&p, native, 511, 0, 0), RET_ENOSYS);
        CHECK_EQ_INT(verdict(&p, native, 0x3fffffff, 0, 0), RET_ENOSYS);
        CHECK_EQ_INT(verdict(&p, i386, (int)top32, 0, 0), SECCOMP_RET_ALLOW);
        CHECK_EQ_INT(verdict(&p, i386, (int)top32 + 1, 0, 0), RET_ENOSYS);
        CHECK_EQ_INT(verdict(&p, i386, -1, 0, 0), RET_ENOSYS);
        /* x32: its ordinary table, the gap up to its own calls at 512, those, and past them */
        CHECK_EQ_INT(verdict(&p, native, (int)topx32, 0, 0), SECCOMP_RET_ALLOW);
        CHECK_EQ_INT(verdict(&p, native, (int)topx32 + 1, 0, 0), RET_ENOSYS);
        CHECK_EQ_INT(verdict(&p, native, (int)(x32 + 511), 0, 0), RET_ENOSYS);
        CHECK_EQ_INT(verdict(&p, native, (int)(x32 + 512), 0, 0),
                     SECCOMP_RET_ALLOW); /* rt_sigaction */
        CHECK_EQ_INT(verdict(&p, native, (int)topx32_own, 0, 0), SECCOMP_RET_ALLOW);
        CHECK_EQ_INT(verdict(&p, native, (int)topx32_own + 1, 0, 0), RET_ENOSYS);
        CHECK_EQ_INT(verdict(&p, native, (int)0x80000000u, 0, 0), RET_ENOSYS);
        CHECK_EQ_INT(verdict(&p, native, -1, 0, 0), RET_ENOSYS);
        /* the refusals by name are unchanged around it */
        CHECK_EQ_INT(verdict(&p, native, 250 /* keyctl */, 0, 0), RET_EPERM);
        CHECK_EQ_INT(verdict(&p, native, 39 /* getpid */, 0, 0), SECCOMP_RET_ALLOW);
        CHECK_EQ_INT(verdict(&p, native, 79 /* getcwd */, 0, 0),
                     k == 1 ? RET_EPERM : SECCOMP_RET_ALLOW);
#elif defined(__aarch64__)
        uint32_t top = top_known(SCMP_ARCH_AARCH64, 0, 1023),
                 arm = top_known(SCMP_ARCH_ARM, 0, 511);
        CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_AARCH64, (int)top, 0, 0), SECCOMP_RET_ALLOW);
        CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_AARCH64, (int)top + 1, 0, 0), RET_ENOSYS);
        CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_ARM, (int)arm, 0, 0), SECCOMP_RET_ALLOW);
        CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_ARM, (int)arm + 1, 0, 0), RET_ENOSYS);
        CHECK_EQ_INT(verdict(&p, AUDIT_ARCH_ARM, 0xf0005 /* set_tls */, 0, 0), SECCOMP_RET_ALLOW);
#endif
        sc_program_free(&p);
    }
    str_list_free(&deny.seccomp_deny);
}

/* The same against the kernel: open_tree_attr (467, unknown to libseccomp 2.5.4) and 1000 are
 * ENOSYS. */
static void test_unknown_numbers_kernel(void)
{
    char *known = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, 467);
    struct sandbox_config cfg = {.net_loopback = true};
    load(&cfg);
    if (!known)
        CHECK_EQ_INT(ERRNO_OF(467, -1, NULL, 0, NULL, 0), ENOSYS);
    free(known);
    CHECK_EQ_INT(ERRNO_OF(1000, 0), ENOSYS);
    CHECK(getpid() > 0);
}

#if defined(__x86_64__)
/* The 32-bit x86 ABI, reachable from a 64-bit process through int $0x80, gets the same rules. */
static long int80(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
    return ret;
}

/* Can this kernel take int $0x80 at all? Some (ia32_emulation=0, some VMs) answer -ENOSYS
 * or a SIGSEGV: probe in a child before relying on it. */
static int int80_works(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would report the expected fault */
        _exit(int80(20 /* getpid */, 0, 0, 0) == getpid() ? 0 : 1);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void test_x86_32_abi_filtered(void)
{
    if (!int80_works())
        TEST_SKIP("no usable IA32 emulation on this kernel (int $0x80)");
    struct sandbox_config cfg = {0};
    str_list_push(&cfg.seccomp_deny, "getcwd");
    load(&cfg);
    /* i386 numbers: keyctl 288, unshare 310, getpid 20, getcwd 183. */
    CHECK_EQ_INT(int80(20, 0, 0, 0), getpid());
    CHECK_EQ_INT(int80(288, 0, -3, 0), -EPERM);
    CHECK_EQ_INT(int80(310, CLONE_NEWUSER, 0, 0), -EPERM);
    CHECK_EQ_INT(int80(183, 0, 0, 0), -EPERM);
}
#define ARCH_CASES                                                  \
    ,                                                               \
    {                                                               \
        "x86 (int 0x80) ABI filtered too", test_x86_32_abi_filtered \
    }
#else
#define ARCH_CASES
#endif

TEST_MAIN(
    {"default refusals return EPERM", test_default_refusals},
    {"clone(CLONE_NEWUSER) refused, clone3 ENOSYS, fork works",
     test_clone_newuser_refused_fork_allowed},
    {"TIOCSTI/TIOCLINUX refused", test_tty_injection_refused},
    {"personality: only harmless values", test_personality},
    {"socket(AF_UNIX) allowed by default", test_unix_sockets_default_allowed},
    {"block_unix_sockets refuses socket(AF_UNIX) only", test_block_unix_sockets},
    {"seccomp.deny entries refused", test_deny_list},
    {"unknown name in seccomp.deny is an error", test_unknown_name},
    {"root writes: set-id mode bits refused, openat2 ENOSYS", test_root_writes_no_setid},
    {"build is deterministic; free and empty load", test_build_twice_and_free},
    {"prebuilt programs are libseccomp's for the same rules", test_prebuilt_matches_libseccomp},
    {"x86, x32 (or arm) ABIs get the same rules (BPF evaluated)", test_every_abi_has_the_rules},
    {"no loopback service: inet is TCP only, no Fast Open (BPF evaluated)",
     test_no_loopback_inet_is_tcp_only},
    {"socket families other than unix, inet, inet6, netlink refused (BPF evaluated)",
     test_socket_families},
    {"socket families refused by the kernel-loaded filter", test_socket_families_kernel},
    {"numbers above libseccomp's table are ENOSYS (BPF evaluated)", test_unknown_numbers_enosys},
    {"a number above libseccomp's table is ENOSYS from the kernel",
     test_unknown_numbers_kernel} ARCH_CASES)
