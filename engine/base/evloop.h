/* evloop.h — the controller's one event loop: epoll over file descriptors, each watched by a
 * callback, plus coarse timers. Single-threaded: everything that touches the Lua state or the
 * proxy's connections runs from here. Other threads (the resolver) talk to it through an fd. */
#ifndef CORDON_EVLOOP_H
#define CORDON_EVLOOP_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

struct ev_loop;
struct ev_io;
typedef void (*ev_io_cb)(struct ev_loop *loop, struct ev_io *w, uint32_t events);

/* One watched fd. Embed it in the owner's struct; the callback finds the owner with
 * container_of-style arithmetic or through data. */
struct ev_io {
    int fd;
    uint32_t events; /* EPOLLIN | EPOLLOUT ... currently registered */
    ev_io_cb cb;
    void *data;
    bool active;
};

struct ev_timer;
typedef void (*ev_timer_cb)(struct ev_loop *loop, struct ev_timer *t);
struct ev_timer {
    uint64_t deadline_ms; /* CLOCK_MONOTONIC */
    ev_timer_cb cb;
    void *data;
    struct ev_timer *next; /* in the loop's unsorted list; few timers exist at a time */
    bool active;
};

struct ev_loop {
    int epfd;
    struct ev_timer *timers;
    bool stop;
    /* The events of the round being dispatched, [pending_next, pending_n) still to come:
     * ev_io_stop() drops a watcher's, so a callback may stop and free any watcher. */
    struct epoll_event *pending;
    int pending_next, pending_n;
};

int ev_loop_init(struct ev_loop *loop);
void ev_loop_close(struct ev_loop *loop);

/* Start watching fd for events; 0 or -errno. */
int ev_io_start(struct ev_loop *loop, struct ev_io *w, int fd, uint32_t events, ev_io_cb cb,
                void *data);
/* Change the events of an active watcher; 0 or -errno. */
int ev_io_set(struct ev_loop *loop, struct ev_io *w, uint32_t events);
/* Stop watching (the fd is not closed). Safe on an inactive watcher; after it the watcher's
 * memory may be freed, even from a callback of the same round. */
void ev_io_stop(struct ev_loop *loop, struct ev_io *w);

void ev_timer_start(struct ev_loop *loop, struct ev_timer *t, uint64_t after_ms, ev_timer_cb cb,
                    void *data);
void ev_timer_stop(struct ev_loop *loop, struct ev_timer *t);

/* Wait for and dispatch one round of events (and due timers). timeout_ms -1 waits for ever
 * (bounded by the next timer). Returns the number of fd events handled, or -errno. */
int ev_run_once(struct ev_loop *loop, int timeout_ms);
#endif
