/* resolver.c — see resolver.h. Two queues under one mutex: pending (for the workers) and done
 * (for the loop). A job is owned by the queue it is on; cancellation only marks it, and the loop
 * frees it when it comes back. */
#include "proxy/resolver.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

struct resolve_job {
    char host[256];
    char port[8];
    resolve_cb cb;
    void *data;
    bool cancelled;
    struct addrinfo *res;
    int err;
    struct resolve_job *next;
};

struct resolver {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct resolve_job *pending, *pending_tail;
    struct resolve_job *done;
    int efd;
    bool quit;
    int want_threads; /* started on the first lookup that needs one */
    int n_threads;
    pthread_t threads[8];
};

static void push_done(struct resolver *r, struct resolve_job *j)
{
    uint64_t one = 1;
    pthread_mutex_lock(&r->lock);
    j->next = r->done;
    r->done = j;
    pthread_mutex_unlock(&r->lock);
    if (write(r->efd, &one, sizeof one) < 0) { /* eventfd counter full: the loop wakes anyway */
    }
}

/* CORDON_HOSTS_FILE, when set, is a test hook: names are looked up in that hosts(5)-format file
 * only ("ADDR NAME..." lines, exact names, case-insensitive), never in DNS, so specs can give
 * names to their stand-in origins on 127.0.0.2 without the network. A name not in it does not
 * exist (EAI_NONAME). Unset (always, outside tests): getaddrinfo. */
static int hosts_file_lookup(const char *path, const char *host, const char *port,
                             struct addrinfo **out)
{
    FILE *f = fopen(path, "re");
    *out = NULL;
    if (!f)
        return EAI_SYSTEM;
    struct addrinfo *head = NULL, **tail = &head;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *save = NULL, *addr = strtok_r(line, " \t\r\n", &save);
        if (!addr || addr[0] == '#')
            continue;
        for (char *name = strtok_r(NULL, " \t\r\n", &save); name;
             name = strtok_r(NULL, " \t\r\n", &save)) {
            if (strcasecmp(name, host) != 0)
                continue;
            struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST},
                            *res = NULL;
            if (getaddrinfo(addr, port, &hints, &res) == 0) {
                *tail = res;
                while (res->ai_next)
                    res = res->ai_next;
                tail = &res->ai_next;
            }
            break;
        }
    }
    fclose(f);
    *out = head;
    return head ? 0 : EAI_NONAME;
}

static void *worker(void *arg)
{
    struct resolver *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        while (!r->pending && !r->quit)
            pthread_cond_wait(&r->wake, &r->lock);
        if (r->quit) {
            pthread_mutex_unlock(&r->lock);
            return NULL;
        }
        struct resolve_job *j = r->pending;
        r->pending = j->next;
        if (!r->pending)
            r->pending_tail = NULL;
        pthread_mutex_unlock(&r->lock);

        struct addrinfo hints = {
            .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG};
        const char *hosts = getenv("CORDON_HOSTS_FILE");
        if (hosts && hosts[0])
            j->err = hosts_file_lookup(hosts, j->host, j->port, &j->res);
        else
            j->err = getaddrinfo(j->host, j->port, &hints, &j->res);
        push_done(r, j);
    }
}

/* The workers start with the first name to resolve, not with the resolver: most sandboxed
 * commands never open a connection, and two threads (stacks, clone, join at exit) are a
 * measurable part of a short command's start-up. false when not one could be started. */
static bool start_workers(struct resolver *r)
{
    if (r->n_threads > 0)
        return true;
    /* Workers must not take the signals the controller reads from its signalfd. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (int i = 0; i < r->want_threads; i++) {
        if (pthread_create(&r->threads[i], NULL, worker, r) != 0)
            break;
        r->n_threads++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r->n_threads > 0;
}

struct resolver *resolver_new(int threads)
{
    struct resolver *r = xcalloc(1, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (r->efd < 0) {
        free(r);
        return NULL;
    }
    if (threads > (int)ARRAY_LEN(r->threads))
        threads = (int)ARRAY_LEN(r->threads);
    r->want_threads = threads > 0 ? threads : 1;
    return r;
}

int resolver_fd(const struct resolver *r)
{
    return r->efd;
}

struct resolve_job *resolver_lookup(struct resolver *r, const char *host, uint16_t port,
                                    resolve_cb cb, void *data)
{
    struct resolve_job *j = xcalloc(1, sizeof *j);
    snprintf(j->host, sizeof j->host, "%s", host);
    snprintf(j->port, sizeof j->port, "%u", (unsigned)port);
    j->cb = cb;
    j->data = data;
    /* A numeric host needs no thread: answer through the done queue so the callback still
     * runs from the loop, never from inside this call. */
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
    if (getaddrinfo(j->host, j->port, &hints, &j->res) == 0) {
        push_done(r, j);
        return j;
    }
    j->res = NULL;
    if (!start_workers(r)) { /* no thread to resolve it: the lookup fails (fail closed) */
        j->err = EAI_AGAIN;
        push_done(r, j);
        return j;
    }
    pthread_mutex_lock(&r->lock);
    if (r->pending_tail)
        r->pending_tail->next = j;
    else
        r->pending = j;
    r->pending_tail = j;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->lock);
    return j;
}

void resolver_cancel(struct resolver *r, struct resolve_job *job)
{
    pthread_mutex_lock(&r->lock);
    job->cancelled = true;
    pthread_mutex_unlock(&r->lock);
}

void resolver_dispatch(struct resolver *r)
{
    uint64_t count;
    if (read(r->efd, &count, sizeof count) < 0) { /* nothing new; the queue decides */
    }
    pthread_mutex_lock(&r->lock);
    struct resolve_job *list = r->done;
    r->done = NULL;
    pthread_mutex_unlock(&r->lock);
    while (list) {
        struct resolve_job *j = list;
        list = j->next;
        bool cancelled;
        pthread_mutex_lock(&r->lock);
        cancelled = j->cancelled;
        pthread_mutex_unlock(&r->lock);
        if (cancelled) {
            if (j->res)
                freeaddrinfo(j->res);
        } else {
            j->cb(j->data, j->err ? NULL : j->res, j->err);
        }
        free(j);
    }
}

void resolver_free(struct resolver *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->quit = true;
    pthread_cond_broadcast(&r->wake);
    pthread_mutex_unlock(&r->lock);
    /* Idle workers end at once. One stuck in getaddrinfo must not delay cordon's exit: after a
     * short wait it is detached, and the struct it may still touch stays allocated. */
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += 200 * 1000 * 1000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000;
    }
    bool all_joined = true;
    for (int i = 0; i < r->n_threads; i++) {
        if (pthread_timedjoin_np(r->threads[i], NULL, &deadline) != 0) {
            pthread_detach(r->threads[i]);
            all_joined = false;
        }
    }
    close(r->efd);
    if (!all_joined)
        return;
    for (struct resolve_job *j = r->pending, *next; j; j = next) {
        next = j->next;
        free(j);
    }
    for (struct resolve_job *j = r->done, *next; j; j = next) {
        next = j->next;
        if (j->res)
            freeaddrinfo(j->res);
        free(j);
    }
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->wake);
    free(r);
}
