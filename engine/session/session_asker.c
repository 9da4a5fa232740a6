/* session_asker.c — see session_asker.h. Owns the reading of /proc/net/tcp{,6} lines and the
 * walk from a socket to a job. Uses the host's /proc. Never writes, never names a job it did
 * not trace the socket to. */
#include "session/session_asker.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "session/session_jobs.h"

/* Parents followed from the asking process up to a job's leader. */
#define ANCESTRY_MAX 64
/* Bytes of a /proc/net/tcp file read: 150 bytes a socket, some thousands of sockets. */
#define TABLE_MAX (4u << 20)

/* The address and port of client as /proc/net/tcp prints them: each 32-bit word of the
 * address as the kernel holds it (network order, printed as a native integer) and the port in
 * host order. n: words (1 for IPv4, 4 for IPv6). false for another family. */
static bool words_of(const struct sockaddr_storage *client, uint32_t w[4], size_t *n,
                     unsigned *port)
{
    if (client->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)client;
        memcpy(w, &a->sin_addr, 4);
        *n = 1;
        *port = ntohs(a->sin_port);
        return true;
    }
    if (client->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)client;
        memcpy(w, &a->sin6_addr, 16);
        *n = 4;
        *port = ntohs(a->sin6_port);
        return true;
    }
    return false;
}

unsigned long asker_tcp_inode(const char *table, const struct sockaddr_storage *client)
{
    uint32_t want[4];
    size_t n;
    unsigned port;
    if (!words_of(client, want, &n, &port))
        return 0;
    unsigned long found = 0;
    unsigned matches = 0;
    const char *line = strchr(table, '\n'); /* the header */
    while (line && *++line) {
        /* "  sl: LOCAL:PORT REMOTE:PORT ST TX:RX TR:WHEN RETR UID TIMEOUT INODE ..." */
        char local[33], st[3];
        unsigned lport;
        unsigned long inode;
        if (sscanf(
                line,
                " %*u: %32[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %2[0-9A-Fa-f] %*x:%*x %*x:%*x %*x %*u %*u %lu",
                local, &lport, st, &inode) == 4 &&
            strlen(local) == n * 8 && lport == port) {
            bool same = true;
            for (size_t i = 0; i < n && same; i++) {
                char word[9];
                memcpy(word, local + 8 * i, 8);
                word[8] = '\0';
                same = (uint32_t)strtoul(word, NULL, 16) == want[i];
            }
            /* the listening socket of a server bound there is not the asker */
            if (same && strcmp(st, "0A") != 0 && inode) {
                found = inode;
                matches++;
            }
        }
        line = strchr(line, '\n');
    }
    return matches == 1 ? found : 0;
}

/* The text of path, or NULL (also when it holds more than TABLE_MAX bytes: then no asker is
 * named rather than one found in part of a table). */
static char *read_text(const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    return read_file(path, 0, TABLE_MAX, &buf, &len) == 0 ? buf : NULL;
}

/* The inode of the client's socket in the sandbox's network (init's /proc/net), or 0. An IPv4
 * client of an IPv6 listener shows as ::ffff:a.b.c.d: its socket is in the IPv4 table. */
static unsigned long client_inode(pid_t init_pid, const struct sockaddr_storage *client)
{
    struct sockaddr_storage c = *client;
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)client;
    if (client->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&c;
        memset(&c, 0, sizeof c);
        a4->sin_family = AF_INET;
        a4->sin_port = a6->sin6_port;
        memcpy(&a4->sin_addr, &a6->sin6_addr.s6_addr[12], 4);
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/net/%s", (int)init_pid,
             c.ss_family == AF_INET ? "tcp" : "tcp6");
    char *table = read_text(path);
    unsigned long inode = table ? asker_tcp_inode(table, &c) : 0;
    free(table);
    return inode;
}

static bool link_is(const char *path, const char *want)
{
    char buf[128];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return strcmp(buf, want) == 0;
}

/* The host pid of a process that holds socket inode, or 0. Socket inodes are unique on the
 * host, so no namespace is compared: init's own is not readable to an unprivileged controller
 * (init changed its credentials without an exec, so it is not dumpable), and a process the
 * controller may not look into is skipped at its fd folder. */
static pid_t holder_of(unsigned long inode)
{
    char path[64], sock[40];
    snprintf(sock, sizeof sock, "socket:[%lu]", inode);
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    pid_t found = 0;
    for (struct dirent *de; !found && (de = readdir(proc));) {
        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        long pid = strtol(de->d_name, NULL, 10);
        snprintf(path, sizeof path, "/proc/%ld/fd", pid);
        DIR *fds = opendir(path);
        for (struct dirent *fe; fds && !found && (fe = readdir(fds));) {
            char fdpath[96];
            if (!isdigit((unsigned char)fe->d_name[0]))
                continue;
            snprintf(fdpath, sizeof fdpath, "/proc/%ld/fd/%ld", pid, strtol(fe->d_name, NULL, 10));
            if (link_is(fdpath, sock))
                found = (pid_t)pid;
        }
        if (fds)
            closedir(fds);
    }
    closedir(proc);
    return found;
}

/* From /proc/PID/status: the parent's host pid, and the pid, process group and session in
 * the namespace `level` levels below the host's (NSpid, NSpgid, NSsid: one value a level).
 * false when the process is gone or is not that deep. */
struct ids {
    pid_t ppid, pid, pgid, sid;
};

static bool level_value(const char *text, const char *key, int level, pid_t *out)
{
    const char *p = strstr(text, key);
    if (!p)
        return false;
    p += strlen(key);
    for (int i = 0;; i++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            return false;
        if (i == level) {
            *out = (pid_t)v;
            return true;
        }
        p = end;
    }
}

static bool ids_of(pid_t pid, int level, struct ids *ids)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *text = read_text(path);
    bool ok = text && level_value(text, "\nPPid:", 0, &ids->ppid) &&
              level_value(text, "\nNSpid:", level, &ids->pid) &&
              level_value(text, "\nNSpgid:", level, &ids->pgid) &&
              level_value(text, "\nNSsid:", level, &ids->sid);
    free(text);
    return ok;
}

/* The running job whose leader has this pid inside the sandbox. */
static struct job *running_job(struct session *s, pid_t pid)
{
    struct job *j = pid > 1 ? job_by_pid(s, pid) : NULL;
    return j && job_running(j) ? j : NULL;
}

struct job *asker_job(struct session *s, const struct sockaddr_storage *client)
{
    pid_t init = s->p.init_pid;
    unsigned long inode = init > 0 ? client_inode(init, client) : 0;
    pid_t p = inode ? holder_of(inode) : 0;
    if (!p)
        return NULL;
    /* The sandbox's level: the last of init's NSpid values (init is pid 1 of its namespace). */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)init);
    char *text = read_text(path);
    const char *ns = text ? strstr(text, "\nNSpid:") : NULL;
    int level = -1;
    for (const char *q = ns ? ns + 7 : NULL; q && *q && *q != '\n'; q++)
        if (isdigit((unsigned char)*q) && !isdigit((unsigned char)q[-1]))
            level++;
    free(text);
    if (level < 0)
        return NULL;
    struct ids first = {0}, ids;
    struct job *j = NULL;
    /* the asker or an ancestor of it is a job's leader (each job is a process group of its
     * own, started by init) */
    for (int i = 0; !j && i < ANCESTRY_MAX && p > 1 && p != init && ids_of(p, level, &ids); i++) {
        if (i == 0)
            first = ids;
        j = running_job(s, ids.pid);
        p = ids.ppid;
    }
    /* left its parents (a daemon, reparented to init): its group, else its session */
    if (!j && first.pid)
        j = running_job(s, first.pgid);
    if (!j && first.pid)
        j = running_job(s, first.sid);
    return j;
}
