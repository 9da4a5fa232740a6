/* doctor.h — `cordon doctor [--json]`: what this machine's kernel offers cordon. Each mechanism
 * the sandbox uses is probed for real, as the sandbox would use it (namespaces, mounts and the
 * nftables rule in a child of its own user namespace), honouring the test switch that makes a
 * mechanism look missing (base/kernel_lacks.h); then each capability is told full, fallback
 * (another mechanism gives the same guarantee), off (not available here), or not needed, with
 * one line of what to do. Runs in the `cordon` process and children it forks and reaps; changes
 * nothing on the host but a cgroup directory it makes and removes at once. */
#ifndef CORDON_DOCTOR_H
#define CORDON_DOCTOR_H
/* argv: the words after "doctor". Exit code: 0 when the default profile can start here, 1 when
 * it cannot (the report says why), 2 bad usage, 125 when the probes themselves failed. */
int doctor_main(int argc, char **argv);
#endif
