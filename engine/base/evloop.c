/* evloop.c — see evloop.h. A watcher may stop itself or others from inside a callback: events
 * for a stopped watcher still in the current batch are skipped through the active flag, and the
 * owner frees its memory only after the round (see proxy.c's deferred close list). */
#include "base/evloop.h"

#include <errno.h>
#include <unistd.h>

#include "base/clock.h"

#define EV_BATCH 64

int ev_loop_init(struct ev_loop *loop)
{
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    loop->timers = NULL;
    loop->stop = false;
    loop->pending = NULL;
    loop->pending_next = loop->pending_n = 0;
    return loop->epfd < 0 ? -errno : 0;
}

void ev_loop_close(struct ev_loop *loop)
{
    if (loop->epfd >= 0)
        close(loop->epfd);
    loop->epfd = -1;
}

int ev_io_start(struct ev_loop *loop, struct ev_io *w, int fd, uint32_t events, ev_io_cb cb,
                void *data)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    w->fd = fd;
    w->events = events;
    w->cb = cb;
    w->data = data;
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return -errno;
    w->active = true;
    return 0;
}

int ev_io_set(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    if (!w->active || w->events == events)
        return 0;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0)
        return -errno;
    w->events = events;
    return 0;
}

void ev_io_stop(struct ev_loop *loop, struct ev_io *w)
{
    if (!w->active)
        return;
    (void)epoll_ctl(loop->epfd, EPOLL_CTL_DEL, w->fd, NULL);
    w->active = false;
    /* Its events still waiting in this round are dropped: its owner may free it now. */
    for (int i = loop->pending_next; i < loop->pending_n; i++)
        if (loop->pending[i].data.ptr == w)
            loop->pending[i].data.ptr = NULL;
}

void ev_timer_start(struct ev_loop *loop, struct ev_timer *t, uint64_t after_ms, ev_timer_cb cb,
                    void *data)
{
    ev_timer_stop(loop, t);
    t->deadline_ms = clock_mono_ms() + after_ms;
    t->cb = cb;
    t->data = data;
    t->next = loop->timers;
    loop->timers = t;
    t->active = true;
}

void ev_timer_stop(struct ev_loop *loop, struct ev_timer *t)
{
    if (!t->active)
        return;
    for (struct ev_timer **p = &loop->timers; *p; p = &(*p)->next) {
        if (*p == t) {
            *p = t->next;
            break;
        }
    }
    t->active = false;
    t->next = NULL;
}

static void run_due_timers(struct ev_loop *loop)
{
    uint64_t now = clock_mono_ms();
    bool fired;
    do { /* a callback may start or stop timers: rescan after each one */
        fired = false;
        for (struct ev_timer *t = loop->timers; t; t = t->next) {
            if (t->deadline_ms <= now) {
                ev_timer_stop(loop, t);
                t->cb(loop, t);
                fired = true;
                break;
            }
        }
    } while (fired);
}

int ev_run_once(struct ev_loop *loop, int timeout_ms)
{
    struct epoll_event evs[EV_BATCH];
    if (loop->timers) {
        uint64_t now = clock_mono_ms(), next = UINT64_MAX;
        for (struct ev_timer *t = loop->timers; t; t = t->next)
            if (t->deadline_ms < next)
                next = t->deadline_ms;
        int until = next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
        if (timeout_ms < 0 || until < timeout_ms)
            timeout_ms = until;
    }
    int n = epoll_wait(loop->epfd, evs, EV_BATCH, timeout_ms);
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    loop->pending = evs;
    loop->pending_n = n;
    for (int i = 0; i < n; i++) {
        loop->pending_next = i + 1;
        struct ev_io *w = evs[i].data.ptr;
        if (w && w->active)
            w->cb(loop, w, evs[i].events);
    }
    loop->pending = NULL;
    loop->pending_n = loop->pending_next = 0;
    run_due_timers(loop);
    return n;
}
