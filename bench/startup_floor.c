/* bench/startup_floor.c — the floor under bench/startup.sh's sandboxed `true`: what any
 * sandbox with the same namespaces pays before its own work. It does only what the kernel
 * makes unavoidable: clone with a new user, mount, pid, ipc and uts namespace, write the id
 * maps, unshare the network namespace, mount the pid namespace's /proc, vfork and exec the
 * command, and wait. No filesystem view, no seccomp, no policy.
 *
 *   cc -O2 -static -o /tmp/startup_floor bench/startup_floor.c
 *   hyperfine -N '/tmp/startup_floor /bin/true' 'cordon run -- true' ...
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) < 0) {
        perror(path);
        _exit(125);
    }
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: startup_floor COMMAND [ARG...]\n");
        return 2;
    }
    char uid_map[64], gid_map[64];
    snprintf(uid_map, sizeof uid_map, "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
    snprintf(gid_map, sizeof gid_map, "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
    long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid < 0) {
        perror("clone");
        return 125;
    }
    if (pid == 0) {
        write_file("/proc/self/setgroups", "deny");
        write_file("/proc/self/uid_map", uid_map);
        write_file("/proc/self/gid_map", gid_map);
        if (unshare(CLONE_NEWNET) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
            perror("set-up");
            _exit(125);
        }
        pid_t cmd = vfork();
        if (cmd == 0) {
            execvp(argv[1], argv + 1);
            _exit(127);
        }
        int st = 0;
        if (cmd < 0 || waitpid(cmd, &st, 0) < 0)
            _exit(125);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    }
    int st = 0;
    if (waitpid((pid_t)pid, &st, 0) < 0)
        return 125;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 125;
}
