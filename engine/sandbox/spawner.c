/* spawner.c — see spawner.h. Owns the confined thread and the one request it serves at a time:
 * the caller fills it in and waits on it, the thread vforks and says the pid. The vfork child
 * runs on the thread's stack (the thread is suspended until the child's exec), with every
 * signal unblocked again, as command_exec's caller does.
 * Uses: command.c for the confinement and the command's own steps; pthreads.
 * Must never: make a system call on the confined thread beyond waiting, vfork and unlocking
 * (the filter is the commands'; what it refuses, the thread cannot do either). */
#include "sandbox/spawner.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

#include "sandbox/command.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

/* The thread's state, under mu. */
static bool running;
static const struct sandbox_config *config;
static const struct sc_program *program;
static int confined;             /* 0 while confining, 1 when done, -errno when it failed */
static const char *confine_what; /* the step that failed */

/* The request at hand, under mu: pending from the caller's fill-in to the thread's answer. */
static struct {
    bool pending;
    char **argv;
    int slave, out_fd, err_fd;
    pid_t pid;
} req;

static void *serve(void *arg)
{
    (void)arg;
    const char *what = NULL;
    int r = command_confine_thread(config, program, &what);
    pthread_mutex_lock(&mu);
    confined = r < 0 ? r : 1;
    confine_what = what;
    pthread_cond_broadcast(&cv);
    if (r < 0) {
        pthread_mutex_unlock(&mu);
        return NULL;
    }
    sigset_t none;
    sigemptyset(&none);
    for (;;) {
        while (!req.pending || req.pid != 0)
            pthread_cond_wait(&cv, &mu);
        pid_t pid = command_vfork(config, NULL, req.argv, &none, req.slave, req.out_fd, req.err_fd);
        req.pid = pid < 0 ? -errno : pid;
        pthread_cond_broadcast(&cv);
    }
}

int spawner_start(const struct sandbox_config *cfg, const struct sc_program *filter,
                  const char **what)
{
    config = cfg;
    program = filter;
    confined = 0;
    /* Every signal blocked on the thread: a signal for init must reach its signalfd, never
     * this thread's default action. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_attr_t attr;
    int r = pthread_attr_init(&attr);
    if (r == 0)
        r = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (r == 0)
        r = pthread_create(&t, &attr, serve, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0) {
        *what = "starting the thread that starts commands";
        return -r;
    }
    pthread_mutex_lock(&mu);
    while (confined == 0)
        pthread_cond_wait(&cv, &mu);
    r = confined < 0 ? confined : 0;
    *what = confine_what;
    running = r == 0;
    pthread_mutex_unlock(&mu);
    return r;
}

bool spawner_running(void)
{
    return running;
}

pid_t spawner_spawn(char **argv, int slave, int out_fd, int err_fd)
{
    pthread_mutex_lock(&mu);
    req.argv = argv;
    req.slave = slave;
    req.out_fd = out_fd;
    req.err_fd = err_fd;
    req.pid = 0;
    req.pending = true;
    pthread_cond_broadcast(&cv);
    while (req.pid == 0)
        pthread_cond_wait(&cv, &mu);
    pid_t pid = req.pid;
    req.pending = false;
    pthread_mutex_unlock(&mu);
    return pid;
}
