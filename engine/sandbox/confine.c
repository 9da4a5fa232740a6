/* confine.c — the last steps of the command's process before exec: resource limits, dropping
 * every capability so that nothing is regained at exec (even as uid 0 in the sandbox's user
 * namespace) — for a root caller with idmapped writable trees every one but the three of
 * CONFINE_ROOT_WRITE_CAPS, kept as ambient capabilities — and no_new_privs.
 * Owns: the securebits we lock and the order of the capability drop.
 * Uses: setrlimit, prctl, the raw capset system call (no libcap: nothing here may allocate).
 * Never: allocates, uses stdio or logs — it runs between fork and exec; errors go back as
 * -errno for the caller to report. */
#include "sandbox/confine.h"

#include <errno.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/securebits.h>

int confine_rlimits(const struct sandbox_config *cfg)
{
    for (size_t i = 0; i < cfg->n_rlimits && i < SANDBOX_MAX_RLIMITS; i++) {
        const struct sandbox_rlimit *l = &cfg->rlimits[i];
        struct rlimit rl = {.rlim_cur = (rlim_t)l->soft, .rlim_max = (rlim_t)l->hard};
        if (setrlimit(l->resource, &rl) < 0)
            return -errno;
    }
    return 0;
}

/* Root-without-privilege: uid 0 gains no capabilities at exec (NOROOT), changing uids does
 * not touch capabilities (NO_SETUID_FIXUP), KEEP_CAPS stays off and no ambient capability can
 * be raised again; each bit locked so a later step cannot undo it. */
#define CONFINE_SECUREBITS                                                                   \
    (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |                         \
     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | \
     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

static int has_effective_setpcap(void)
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};
    if (syscall(SYS_capget, &hdr, data) < 0)
        return 0;
    return (data[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP)) != 0;
}

static int set_capabilities(unsigned long long eff_perm, unsigned long long inh)
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};
    for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
        data[i].effective = data[i].permitted = (uint32_t)(eff_perm >> (32 * i));
        data[i].inheritable = (uint32_t)(inh >> (32 * i));
    }
    return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

int confine_drop_capabilities(void)
{
    return confine_keep_capabilities(0);
}

int confine_keep_capabilities(unsigned long long keep)
{
    /* Everything that needs CAP_SETPCAP comes first; capset to zero comes last. Without
     * CAP_SETPCAP (an unprivileged caller) securebits and the bounding set cannot change:
     * that is fine when not uid 0, since exec then grants nothing without file capabilities,
     * which no_new_privs neutralises. */
    keep &= CONFINE_ROOT_WRITE_CAPS; /* never more, whatever the caller asked */
    int privileged = has_effective_setpcap();
    if (keep && !privileged)
        return -EPERM;
    /* Any of the three uids: a saved uid 0 can be switched back to without privilege. */
    uid_t ruid, euid, suid;
    if (getresuid(&ruid, &euid, &suid) < 0)
        return -errno;
    int is_root = ruid == 0 || euid == 0 || suid == 0;
    /* With capabilities to keep, the ambient ones are raised before the raise is locked off. */
    const unsigned long ambient_bits =
        SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    unsigned long first_bits = keep ? CONFINE_SECUREBITS & ~ambient_bits : CONFINE_SECUREBITS;

    if (privileged) {
        int cur = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
        if (cur < 0)
            return -errno;
        unsigned long want = (unsigned long)cur | first_bits;
        if ((unsigned long)cur != want && prctl(PR_SET_SECUREBITS, want, 0, 0, 0) < 0)
            return -errno;
    } else if (is_root) {
        /* uid 0 that cannot set securebits would regain its bounding set at exec. */
        int cur = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
        if (cur < 0 || (cur & (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED)) !=
                           (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED))
            return -EPERM;
    }

    /* Ambient capabilities survive exec of an unprivileged program: clear them. EINVAL means
     * a kernel without ambient capabilities (before 4.3): nothing to clear. */
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return -errno;

    /* The bounding set, one capability at a time until the kernel says the number is past
     * its last capability (EINVAL), so capabilities newer than our headers go too. Those kept
     * stay in it: an inheritable capability must be in the bounding set. */
    if (privileged) {
        for (unsigned long cap = 0;; cap++) {
            if (cap < 64 && (keep & (1ull << cap)))
                continue;
            if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                if (errno == EINVAL)
                    break;
                return -errno;
            }
        }
    }

    int r;
    if (keep) {
        /* CAP_SETPCAP a moment longer, for the securebits that lock the ambient set. */
        if ((r = set_capabilities(keep | (1ull << CAP_SETPCAP), keep)) < 0)
            return r;
        for (unsigned long cap = 0; cap < 64; cap++)
            if ((keep & (1ull << cap)) &&
                prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
                return -errno;
        int cur = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
        if (cur < 0 || prctl(PR_SET_SECUREBITS, (unsigned long)cur | ambient_bits, 0, 0, 0) < 0)
            return -errno;
    }
    return set_capabilities(keep, keep);
}

int confine_no_new_privs(void)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -errno;
    return 0;
}
