/* init.c — see init.h. One loop on a signalfd: each wake-up reaps with WNOHANG
 * until nothing is left. Everything the loop needs is set up before it starts. */
#include "sandbox/init.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/filter.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/command.h"
#include "sandbox/config_wire.h"
#include "base/fdpass.h"
#include "sandbox/init_wire.h"
#include "sandbox/fsview.h"
#include "sandbox/grants.h"
#include "sandbox/home_view.h"
#include "base/log.h"
#include "sandbox/mount_ops.h"
#include "sandbox/netns.h"
#include "sandbox/pty.h"
#include "sandbox/review_view.h"
#include "sandbox/root_writes.h"
#include "sandbox/home_own.h"
#include "sandbox/rename_notify.h"
#include "sandbox/userns.h"
#include "base/util.h"

static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

static void ignore_signal(int sig)
{
    (void)sig;
}

CORDON_NORETURN static void setup_failed(const char *what, int err)
{
    /* The controller is gone (it stopped on an error it printed itself, or died): a second line
     * about the socket to it would only bury the cause. */
    if (err == EPIPE)
        _exit(CORDON_EXIT_SETUP);
    /* a mount step's line (mount_ops.c) carries the prefix already: one is enough */
    static const char prefix[] = "sandbox set-up: ";
    if (strncmp(what, prefix, sizeof prefix - 1) == 0)
        what += sizeof prefix - 1;
    fprintf(stderr, "cordon: sandbox set-up: %s%s%s\n", what, err ? ": " : "",
            err ? strerror(err) : "");
    _exit(CORDON_EXIT_SETUP);
}

/* A message from the controller that is no message of the wire (init_wire.h): one line. Its
 * end (EPIPE) says nothing: the controller stopped on an error it printed itself. */
CORDON_NORETURN static void wire_failed(const char *what, long r)
{
    if (r == -EPIPE)
        _exit(CORDON_EXIT_SETUP);
    fprintf(stderr, "cordon: sandbox set-up: %s: %s\n", what, init_wire_strerror(r));
    _exit(CORDON_EXIT_SETUP);
}

/* The next message from the controller, which must be tag: its payload's length. Another
 * message (INIT_WIRE_ABORT) or the socket's end: the controller failed and says why itself. */
static long expect(int sock, enum init_wire_tag tag, const char *what, void *buf, size_t cap,
                   int fds[2])
{
    struct init_wire_msg m;
    long r = init_wire_recv(sock, &m, buf, cap, fds, 0);
    if (init_wire_refused(r))
        wire_failed(what, r);
    if (r < 0 || m.tag != tag)
        _exit(CORDON_EXIT_SETUP);
    return r;
}

/* PR_SET_PDEATHSIG fires only if the parent dies after it is set: check it has not already. */
static void die_with_controller(int alive_fd)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
        setup_failed("PR_SET_PDEATHSIG", errno);
    struct pollfd pfd = {.fd = alive_fd, .events = POLLIN};
    if (poll(&pfd, 1, 0) != 0)
        _exit(CORDON_EXIT_SETUP);
}

/* Signals from the parent namespace reach PID 1 only if it has a handler: install a no-op one,
 * block them all, and read them from a signalfd. */
static int supervisor_signals(void)
{
    sigset_t set;
    struct sigaction sa = {.sa_handler = ignore_signal};
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    for (size_t i = 0; i < ARRAY_LEN(forwarded_signals); i++)
        sigaddset(&set, forwarded_signals[i]);
    sigprocmask(SIG_BLOCK, &set, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(&set, sig))
            sigaction(sig, &sa, NULL);
    return signalfd(-1, &set, SFD_CLOEXEC);
}

/* The sandbox's own network: a namespace with loopback up and, in it, the proxy's two
 * listening sockets and the resolver's two, handed to the controller, which accepts on them and
 * connects out from the host's namespace (dns_stub.c serves the resolver; /etc/resolv.conf in
 * the view names it): no relay process, no socket a command could reach other than these. Then
 * what the configuration adds: the host ports' listeners and the transparent one. With
 * early_network a thread of init does it (network_thread) while init waits for the
 * configuration and builds the view, which enters the thread's namespace before /sys
 * (enter_network); init itself reports a failure, once the thread is through (an _exit on the
 * thread would cut short one of the view's mounts half-way). */
struct network {
    int ctl;
    int ns_fd;          /* the thread's namespace, which init enters (enter_network); else -1 */
    const char *failed; /* the step that failed, in setup_failed's words, or NULL */
    int err;            /* and its errno */
    char no_transparent[512]; /* why the kernel cannot (network.transparent), or "" */
    /* Under lock: the thread made the namespace (or failed), the configuration came, who
     * makes what it adds (whichever of the two gets there first), the thread is done. */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool made, done;
    const struct sandbox_config *cfg;
    enum { MORE_UNCLAIMED, MORE_BY_THREAD, MORE_BY_INIT } more;
    pthread_t thread;
    bool threaded, entered;
};
static struct network net = {
    .ns_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

/* -1, so that a step can end with `return network_failed(...)`. */
static int network_failed(struct network *n, const char *what, int err)
{
    n->failed = what;
    n->err = err;
    return -1;
}

/* fd (closed here) with tag, or tag alone when fd is -1. */
static int send_fd(struct network *n, int fd, enum init_wire_tag tag, const char *what)
{
    int r = init_wire_send_fd(n->ctl, tag, 0, fd);
    if (fd >= 0)
        close(fd);
    return r < 0 ? network_failed(n, what, -r) : 0;
}

static int proxy_listener(uint16_t port)
{
    int one = 1, r;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0)
        return -errno;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 1024) < 0) {
        r = -errno;
        close(fd);
        return r;
    }
    return fd;
}

/* In the calling task only: a network namespace is per task, so on a thread the rest of init
 * stays where it is until it enters this one. 0 or -1 (n->failed). */
static int make_network(struct network *n)
{
    int r, udp, tcp;
    static const struct {
        uint16_t port;
        enum init_wire_tag tag;
    } proxy[] = {
        {PROXY_HTTP_PORT, INIT_WIRE_HTTP_LISTENER},
        {PROXY_SOCKS_PORT, INIT_WIRE_SOCKS_LISTENER},
    };
    if ((r = ns_unshare_net()) < 0)
        return network_failed(n, "creating the network namespace", -r);
    if ((r = netns_loopback_up()) < 0)
        return network_failed(n, "bringing up loopback", -r);
    for (size_t i = 0; i < ARRAY_LEN(proxy); i++) {
        if ((r = proxy_listener(proxy[i].port)) < 0)
            return network_failed(n, "creating the proxy listeners", -r);
        if (send_fd(n, r, proxy[i].tag, "passing the proxy listeners to the controller") < 0)
            return -1;
    }
    if ((r = netns_dns_listeners(&udp, &tcp)) < 0)
        return network_failed(n, "creating the resolver's sockets", -r);
    if (send_fd(n, udp, INIT_WIRE_DNS_UDP, "passing the resolver's sockets to the controller") <
        0) {
        close(tcp);
        return -1;
    }
    return send_fd(n, tcp, INIT_WIRE_DNS_TCP, "passing the resolver's sockets to the controller");
}

/* network.transparent: every TCP connection from inside not to its loopback lands on one more
 * listener, handed over like the others. A kernel that cannot: with "required" no sandbox;
 * with true one line, and the command gets the proxy variables only (network_report says
 * which). */
static struct netns_transparent transparent = {.listen_fd = -1};

static int transparent_started(struct network *n, const struct sandbox_config *cfg)
{
    if (netns_transparent_start(&transparent, n->no_transparent, sizeof n->no_transparent) < 0) {
        if (cfg->net_transparent == NET_TRANSPARENT_REQUIRED)
            return -1;
        return send_fd(n, -1, INIT_WIRE_NO_TRANSPARENT,
                       "passing the transparent listener to the controller");
    }
    return send_fd(n, transparent.listen_fd, INIT_WIRE_TRANSPARENT,
                   "passing the transparent listener to the controller");
}

/* The listeners of the host ports granted (network.host_ports), on the sandbox's 127.0.0.1,
 * handed to the controller like the proxy's: it connects to the host's 127.0.0.1:PORT for each
 * connection accepted. Made here, by init, so that no command can have bound the port first. */
static int hand_over_host_ports(struct network *n, const struct sandbox_config *cfg)
{
    for (size_t i = 0; i < cfg->n_host_ports; i++) {
        int one = 1, r;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons(cfg->host_ports[i]),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 256) < 0) {
            r = errno;
            if (fd >= 0)
                close(fd);
            return network_failed(n, "creating the listener of a host port", r);
        }
        if ((r = init_wire_send_fd(n->ctl, INIT_WIRE_HOST_PORT, 0, fd)) < 0) {
            close(fd);
            return network_failed(n, "passing a host port's listener to the controller", -r);
        }
        /* [::1]:PORT as well, when the sandbox's loopback has IPv6 */
        int fd6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6,
                                   .sin6_port = htons(cfg->host_ports[i]),
                                   .sin6_addr = IN6ADDR_LOOPBACK_INIT};
        bool v6 = fd6 >= 0 && setsockopt(fd6, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
                  setsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) == 0 &&
                  bind(fd6, (struct sockaddr *)&sa6, sizeof sa6) == 0 && listen(fd6, 256) == 0;
        r = v6 ? init_wire_send_fd(n->ctl, INIT_WIRE_HOST_PORT6, 0, fd6)
               : init_wire_send_fd(n->ctl, INIT_WIRE_NO_HOST_PORT6, 0, -1);
        if (fd6 >= 0)
            close(fd6);
        close(fd);
        if (r < 0)
            return network_failed(n, "passing a host port's listener to the controller", -r);
    }
    return 0;
}

/* What the configuration adds, in the sandbox's namespace. 0 or -1. */
static int hand_over_more_listeners(struct network *n, const struct sandbox_config *cfg)
{
    if (hand_over_host_ports(n, cfg) < 0)
        return -1;
    return cfg->net_transparent == NET_TRANSPARENT_OFF ? 0 : transparent_started(n, cfg);
}

/* What went wrong, in today's words, or the one line of a kernel without transparent mode:
 * exits on a failure (and when network.transparent is required), returns otherwise. */
static void network_report(const struct network *n, const struct sandbox_config *cfg)
{
    if (n->failed)
        setup_failed(n->failed, n->err);
    if (!n->no_transparent[0])
        return;
    if (cfg->net_transparent == NET_TRANSPARENT_REQUIRED) {
        fprintf(stderr, "cordon: network.transparent is required, but %s\n", n->no_transparent);
        _exit(CORDON_EXIT_SETUP);
    }
    fprintf(stderr,
            "cordon: no transparent network (%s): only clients that use the proxy "
            "variables reach the network\n",
            n->no_transparent);
}

/* The namespace, then what the configuration adds, unless init got to the view's /sys first
 * and makes that itself (enter_network): a thread woken late would keep it waiting. */
static void *network_thread(void *arg)
{
    struct network *n = arg;
    bool ok = make_network(n) == 0;
    if (ok && (n->ns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0) {
        network_failed(n, "opening the network namespace", errno);
        ok = false;
    }
    pthread_mutex_lock(&n->lock);
    n->made = true;
    pthread_cond_broadcast(&n->changed);
    while (ok && !n->cfg && n->more == MORE_UNCLAIMED)
        pthread_cond_wait(&n->changed, &n->lock);
    if (ok && n->more == MORE_UNCLAIMED)
        n->more = MORE_BY_THREAD;
    bool mine = ok && n->more == MORE_BY_THREAD;
    pthread_mutex_unlock(&n->lock);
    if (mine)
        (void)hand_over_more_listeners(n, n->cfg);
    pthread_mutex_lock(&n->lock);
    n->done = true;
    pthread_cond_broadcast(&n->changed);
    pthread_mutex_unlock(&n->lock);
    return NULL;
}

/* early_network: the thread starts at once, and init goes on. A thread that cannot be
 * started leaves it to init, in line once the configuration came (set_up_network). */
static void start_network(struct network *n, int ctl)
{
    n->ctl = ctl;
    n->threaded = pthread_create(&n->thread, NULL, network_thread, n) == 0;
}

/* The configuration came (and wants the sandbox's own network): the thread goes on with it. */
static void network_configured(struct network *n, const struct sandbox_config *cfg)
{
    pthread_mutex_lock(&n->lock);
    n->cfg = cfg;
    pthread_cond_broadcast(&n->changed);
    pthread_mutex_unlock(&n->lock);
}

static bool network_refused(const struct network *n)
{
    return n->failed ||
           (n->no_transparent[0] && n->cfg && n->cfg->net_transparent == NET_TRANSPARENT_REQUIRED);
}

/* fsview_build's enter_network, just before /sys is mounted: once the thread made its namespace
 * (and, if it had begun them, the configuration's listeners), that namespace becomes init's,
 * and so the command's, which init starts; init makes the configuration's listeners itself if
 * the thread had not begun them. The thread's own end is not waited for here (network_join).
 * A refusal is network_report's to tell, once fsview_build has returned. */
static int enter_network(void *ctx, char *err, size_t errlen)
{
    struct network *n = ctx;
    pthread_mutex_lock(&n->lock);
    while (!n->made)
        pthread_cond_wait(&n->changed, &n->lock);
    if (n->more == MORE_UNCLAIMED) {
        n->more = MORE_BY_INIT;
        pthread_cond_broadcast(&n->changed);
    }
    while (n->more == MORE_BY_THREAD && !n->done)
        pthread_cond_wait(&n->changed, &n->lock);
    pthread_mutex_unlock(&n->lock);
    n->entered = true;
    if (!n->failed && setns(n->ns_fd, CLONE_NEWNET) < 0)
        network_failed(n, "entering the network namespace", errno);
    if (n->ns_fd >= 0)
        close(n->ns_fd);
    n->ns_fd = -1;
    if (!n->failed && n->more == MORE_BY_INIT)
        (void)hand_over_more_listeners(n, n->cfg);
    if (network_refused(n)) {
        snprintf(err, errlen, "sandbox set-up: the network namespace is refused");
        return -1;
    }
    network_report(n, n->cfg); /* the one line of a kernel without transparent mode, if any */
    return 0;
}

/* After the view: the thread has ended, or is about to (it has nothing left to do). */
static void network_join(struct network *n)
{
    int r = pthread_join(n->thread, NULL);
    if (r != 0)
        setup_failed("waiting for the network namespace's thread", r);
}

/* Without the thread (no early_network, or none could start): in line, once the configuration
 * came, before the view. */
static void set_up_network(struct network *n, int ctl, const struct sandbox_config *cfg)
{
    n->ctl = ctl;
    n->cfg = cfg;
    if (make_network(n) == 0)
        (void)hand_over_more_listeners(n, cfg);
    network_report(n, cfg);
}

/* The resolved configuration, as a memfd (config_wire.c). EOF or anything else: the controller
 * failed to resolve the profile, says why itself, and no command runs. */
static void receive_config(int sock, struct sandbox_config *cfg)
{
    char err[256];
    int fds[2];
    (void)expect(sock, INIT_WIRE_CONFIG, "receiving the configuration", NULL, 0, fds);
    int fd = fds[0];
    if (config_wire_read(fd, cfg, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: %s\n", err);
        _exit(CORDON_EXIT_SETUP);
    }
    close(fd);
}

/* Wait for the controller's filter; any other message or EOF means: do not run the command. */
static void receive_filter(int sock, struct sc_program *prog)
{
    static struct sock_filter insns[BPF_MAXINSNS];
    int fds[2];
    size_t body = (size_t)expect(sock, INIT_WIRE_FILTER, "receiving the seccomp filter", insns,
                                 sizeof insns, fds);
    if (body % sizeof(struct sock_filter) != 0)
        wire_failed("receiving the seccomp filter", -EBADMSG);
    prog->insns = insns;
    prog->len = (unsigned short)(body / sizeof(struct sock_filter));
}

void init_answer_connect(int ctl, const struct init_wire_msg *req, int send_flags)
{
    struct init_wire_msg reply = {.tag = INIT_WIRE_CONNECTED, .id = req->id};
    int fd = -1;
    if (req->value < 1 || req->value > 65535) {
        reply.value = -EINVAL;
    } else if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
        reply.value = -errno;
    } else {
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)req->value),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) {
            reply.value = -errno;
            close(fd);
            fd = -1;
        }
    }
    (void)init_wire_send_flags(ctl, &reply, NULL, 0, fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0,
                               send_flags);
    if (fd >= 0)
        close(fd);
}

/* While `cordon run`'s command runs, only INIT_WIRE_CONNECT comes this way. */
static void connect_inside(int ctl)
{
    struct init_wire_msg req;
    int fds[2];
    long n = init_wire_recv(ctl, &req, NULL, 0, fds, MSG_DONTWAIT);
    for (int i = 0; i < 2; i++) /* INIT_WIRE_CONNECT has none; another message might */
        if (fds[i] >= 0)
            close(fds[i]);
    if (n >= 0 && req.tag == INIT_WIRE_CONNECT)
        init_answer_connect(ctl, &req, MSG_DONTWAIT);
}

/* A root caller's writable trees, idmapped by the controller (root_writes.h), or word that there
 * are none: then init takes them detached itself and the command keeps no capability. Shifted
 * (NS_MAPS_SHIFT in maps), the rest of what the caller owns follows (root_writes_receive_shift):
 * the home and the paths root_only.visible names, attached here at their places before anything
 * of the view is built (the home's overlay, the covers of hidden paths and every detached tree reach
 * them by path, as they would the host's), the home's layer folder for the overlay, the granted
 * sockets for grants.c, cordon's own binary for `cordon nc`. */
#define SHIFT_STAGE "/run"
static void receive_root_trees(int ctl, struct sandbox_config *cfg, struct fsview_early *early,
                               unsigned maps)
{
    size_t n = 1 + cfg->writable.len;
    int *fds = xcalloc(n, sizeof *fds);
    int r = root_writes_receive(ctl, n, fds);
    if (r == -EPIPE)
        _exit(CORDON_EXIT_SETUP);
    if (r < 0)
        setup_failed("receiving the idmapped writable trees", -r);
    if (r == 0) {
        free(fds);
        if (maps & NS_MAPS_SHIFT)
            setup_failed("the controller sent no idmapped writable trees for a shifted sandbox", 0);
        return;
    }
    early->trees = fds;
    early->n_trees = n;
    cfg->root_write_caps = true;
    if (!(maps & NS_MAPS_SHIFT))
        return;
    size_t nb = cfg->shift_binds.len, m = nb + 2 + cfg->grant_binds.len + 1;
    int *more = xcalloc(m, sizeof *more);
    if ((r = root_writes_receive_shift(ctl, m, more)) == -EPIPE)
        _exit(CORDON_EXIT_SETUP);
    if (r < 0)
        setup_failed("receiving the idmapped home and visible paths", -r);
    char err[512];
    struct mnt_err e = {err, sizeof err};
    /* The view takes the layer folder, and its lock, by a path (home_view_use_layer): the
     * controller's idmapped detached tree of it is attached on a staging tmpfs on /run, which the
     * view's fresh /run covers (left there: an unmount would wait for the kernel's RCU grace
     * period on init's path). What init would
     * re-bind from the host's /run (run_binds) is attached in it at the same place. */
    bool staged = more[nb] >= 0;
    if (staged) {
        if (mnt_mount(&e, "cordon-stage", SHIFT_STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") <
                0 ||
            (mkdir(SHIFT_STAGE "/.cordon-layer", 0700) < 0 &&
             mnt_fail(&e, "mkdir", SHIFT_STAGE "/.cordon-layer")) ||
            mnt_attach(&e, more[nb], SHIFT_STAGE "/.cordon-layer", false) < 0)
            setup_failed(err, 0);
        close(more[nb]);
        home_view_use_layer(SHIFT_STAGE "/.cordon-layer");
    }
    /* The review layer's folder the same way (review_view_use_layer). */
    if (more[nb + 1] >= 0) {
        if ((!staged && mnt_mount(&e, "cordon-stage", SHIFT_STAGE, "tmpfs", MS_NOSUID | MS_NODEV,
                                  "mode=0700") < 0) ||
            (mkdir(SHIFT_STAGE "/.cordon-review", 0700) < 0 &&
             mnt_fail(&e, "mkdir", SHIFT_STAGE "/.cordon-review")) ||
            mnt_attach(&e, more[nb + 1], SHIFT_STAGE "/.cordon-review", false) < 0)
            setup_failed(err, 0);
        close(more[nb + 1]);
        review_view_use_layer(SHIFT_STAGE "/.cordon-review");
        staged = true;
    }
    for (size_t i = 0; i < nb; i++) {
        const char *path = cfg->shift_binds.items[i];
        bool in_stage = staged && path_is_within(path, SHIFT_STAGE);
        int made = in_stage ? mkdir_parents(path, 0755) : 0;
        if (made < 0) {
            errno = -made;
            mnt_fail(&e, "mkdir", path);
            setup_failed(err, 0);
        }
        if (more[i] < 0 || mnt_attach(&e, more[i], path, in_stage) < 0) {
            if (more[i] < 0)
                snprintf(err, sizeof err, "no idmapped detached tree of %s", path);
            setup_failed(err, 0);
        }
        close(more[i]);
    }
    /* The covers of hidden paths rebuild a folder with mounts below it rather than lay an
     * overlay on it (hide.h): they must know these (what is mounted below them is listed
     * already, at the same places). */
    for (size_t i = 0; i < nb; i++)
        if (!str_list_contains(&early->mounts, cfg->shift_binds.items[i]))
            str_list_push(&early->mounts, cfg->shift_binds.items[i]);
    grants_use_sources(more + nb + 2, cfg->grant_binds.len);
    /* cordon's binary, when init could not take it detached itself (its folder is root's alone).
     * Not needed: closed off init's path, as the last close of a detached mount never attached
     * waits for the kernel's RCU grace period (0.4-0.6 ms of init's start, measured). */
    int self = more[m - 1];
    if (self >= 0 && early->self_fd < 0)
        early->self_fd = self;
    else if (self >= 0)
        home_view_close_later(self);
    free(more);
}

static void forward_signal(pid_t group, int sig)
{
    if (group <= 1)
        return; /* never signal 0, 1 or -1 */
    if (kill(-group, sig) < 0 && errno == ESRCH)
        (void)kill(group, sig); /* the child may not have called setsid() yet */
}

/* The rename filter, once, before any command: every process of the sandbox inherits it, so
 * each rename is answered by the controller (git's config writes published, refused or let
 * through). Without it (an old kernel, a listener above cordon) one line, and the kernel
 * answers renames itself: onto a protected file they fail with EBUSY, as without cordon's
 * help. */
static void hand_over_rename_listener(int ctl, const struct sandbox_config *cfg)
{
    /* new names in the home go to the controller too where its rule applies (home_own.h) */
    int r, fd = rename_notify_install(home_own_applies(cfg));
    if (fd < 0)
        fprintf(stderr,
                "cordon: no rename supervision (%s): writes of the repository's protected git "
                "config fail\n",
                strerror(-fd));
    r = init_wire_send_fd(ctl, fd >= 0 ? INIT_WIRE_RENAME_NOTIFY : INIT_WIRE_NO_RENAME_NOTIFY, 0,
                          fd >= 0 ? fd : -1);
    if (r < 0)
        setup_failed("passing the rename listener to the controller", -r);
    if (fd >= 0)
        close(fd);
}

void init_prepare(const struct init_params *p, struct init_ready *out)
{
    char err[512];
    out->slave = -1;
    die_with_controller(p->parent_alive_fd);
    /* The network namespace takes longest of what needs no configuration: its thread starts
     * first, before the maps (the owner of a new user namespace has CAP_SYS_ADMIN in it from
     * the clone on, and nothing of the network needs the ids mapped). A root caller's maps,
     * which the controller writes, come first as before. */
    if (p->early_network && p->uid != 0)
        start_network(&net, p->ctl_sock);
    /* A root caller's controller writes the wider maps (root_writes.h) and says which. */
    int r = p->uid == 0 ? root_writes_wait_maps(p->ctl_sock) : 0;
    if (r == -EPIPE)
        _exit(CORDON_EXIT_SETUP); /* the controller is gone, or said why itself */
    if (r < 0)
        setup_failed("waiting for the uid/gid maps", -r);
    unsigned maps = (unsigned)r;
    r = ns_write_id_maps(p->uid, p->gid, maps);
    if (r < 0)
        setup_failed("writing the uid/gid maps", -r);
    /* Shifted, init's own ids (the host's 0) are unmapped in its namespace: it becomes the
     * namespace's root, the kernel's NS_ROOT_SHIFT, before any thread or file is made (a file
     * made with an unmapped id is refused). Unshifted it is a no-op. */
    if (p->uid == 0 && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
        setup_failed("becoming the namespace's root", errno);
    /* A change of credentials clears the parent-death signal: set it again (and look again
     * whether the controller is still there). */
    if (p->uid == 0)
        die_with_controller(p->parent_alive_fd);
    if (p->early_network && p->uid == 0)
        start_network(&net, p->ctl_sock);
    struct fsview_early early;
    if (fsview_prepare(&early, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: %s\n", err);
        _exit(CORDON_EXIT_SETUP);
    }
    if (net.threaded) {
        early.enter_network = enter_network;
        early.enter_ctx = &net;
    }
    /* The controller resolves the profile while this process starts: wait for the result. */
    struct sandbox_config *cfg = &out->cfg;
    memset(cfg, 0, sizeof *cfg);
    receive_config(p->ctl_sock, cfg);
    if (p->uid == 0)
        receive_root_trees(p->ctl_sock, cfg, &early, maps);
    if (p->early_network && cfg->net_unrestricted)
        setup_failed("the profile wants the host's network, but the sandbox already has its own",
                     0);
    if (net.threaded)
        network_configured(&net, cfg); /* the thread can make the listeners meanwhile */
    fsview_configured(&early, cfg);    /* the home's overlay is built meanwhile */
    if (!net.threaded && !cfg->net_unrestricted)
        set_up_network(&net, p->ctl_sock, cfg);
    if (fsview_build(cfg, &early, err, sizeof err) < 0) {
        if (net.entered && network_refused(&net))
            network_report(&net, cfg);
        fprintf(stderr, "cordon: %s\n", err);
        _exit(CORDON_EXIT_SETUP);
    }
    if (net.threaded)
        network_join(&net);
    /* Each exec in a fresh sandbox of its own (session/fresh_sandbox.h) gets a copy of this view,
     * made when it starts; the repositories' holds come later, here (controller/repo_hold.h).
     * Shared from now on, and slaves there, every hold made here reaches every fresh sandbox,
     * and nothing a fresh sandbox mounts comes back (nor goes to the host: the view's mounts
     * were made private first). */
    if (cfg->exec_per_command) {
        struct mnt_err e = {err, sizeof err};
        if (mnt_mount(&e, NULL, "/", NULL, MS_REC | MS_SHARED, NULL) < 0) {
            fprintf(stderr, "cordon: %s\n", err);
            _exit(CORDON_EXIT_SETUP);
        }
    }
    /* The UTS namespace is the sandbox's either way; a container's seccomp profile (Podman's
     * default) refuses sethostname without CAP_SYS_ADMIN in the container, so the sandbox then
     * keeps the container's name, which its /etc/hostname shows anyway. */
    if (sethostname("cordon", 6) < 0 && errno != EPERM)
        setup_failed("sethostname", errno);
    if (p->want_pty) {
        int master;
        if ((r = pty_open_pair(&master, &out->slave)) < 0)
            setup_failed("opening a pseudo-terminal", -r);
        if ((r = init_wire_send_fd(p->ctl_sock, INIT_WIRE_PTY, 0, master)) < 0)
            setup_failed("passing the pseudo-terminal to the controller", -r);
        close(master);
    }
    /* The command (same uid) must not be able to ptrace or read init's memory. */
    (void)prctl(PR_SET_DUMPABLE, 0);

    receive_filter(p->ctl_sock, &out->filter);
    hand_over_rename_listener(p->ctl_sock, cfg);

    out->sfd = supervisor_signals();
    if (out->sfd < 0)
        setup_failed("signalfd", errno);
}

void init_setup_done(int ctl)
{
    int r = init_wire_send_fd(ctl, INIT_WIRE_SETUP_DONE, 0, -1);
    if (r < 0)
        setup_failed("telling the controller the set-up is done", -r);
}

CORDON_NORETURN void init_main(const struct init_params *p)
{
    struct init_ready ready;
    /* While the controller still resolves the profile, not on the way to the command's exec;
     * nothing in init sets a disposition to SIG_IGN (supervisor_signals installs handlers, which
     * the exec resets itself). */
    command_note_ignored_signals();
    init_prepare(p, &ready);
    init_setup_done(p->ctl_sock);
    struct sandbox_config cfg = ready.cfg;
    struct sc_program filter = ready.filter;
    int slave = ready.slave, sfd = ready.sfd;

    /* Caught signals reset to default at exec. */
    pid_t cmd =
        command_vfork(&cfg, &filter, p->argv, &p->command_mask, slave, p->out_pipe, p->err_pipe);
    if (cmd < 0)
        setup_failed("vfork", errno);
    if (slave >= 0)
        close(slave);
    /* Only the command holds the output pipes: their end of file is its (and its children's). */
    if (p->out_pipe >= 0)
        close(p->out_pipe);
    if (p->err_pipe >= 0)
        close(p->err_pipe);

    int status = 0;
    struct pollfd pfd[2] = {{.fd = sfd, .events = POLLIN}, {.fd = p->ctl_sock, .events = POLLIN}};
    for (;;) {
        if (poll(pfd, 2, -1) < 0)
            continue; /* EINTR */
        if (pfd[1].revents & (POLLHUP | POLLERR))
            pfd[1].fd = -1; /* the controller is gone: PR_SET_PDEATHSIG ends this process */
        else if (pfd[1].revents & POLLIN)
            connect_inside(p->ctl_sock);
        if (!(pfd[0].revents & POLLIN))
            continue;
        struct signalfd_siginfo si;
        ssize_t n;
        RETRY_EINTR(n, read(sfd, &si, sizeof si));
        if (n != (ssize_t)sizeof si)
            continue; /* cannot happen with a blocking signalfd; keep supervising */
        if ((int)si.ssi_signo != SIGCHLD) {
            forward_signal(cmd, (int)si.ssi_signo);
            continue;
        }
        bool command_done = false;
        for (;;) {
            int st;
            pid_t w = waitpid(-1, &st, WNOHANG);
            if (w <= 0)
                break;
            if (w == cmd) {
                status = st;
                command_done = true;
            }
        }
        if (command_done)
            break;
    }

    struct init_wire_status msg = {0};
    if (WIFSIGNALED(status)) {
        msg.signal = WTERMSIG(status);
        msg.exit_code = 128 + msg.signal;
    } else {
        msg.exit_code = WEXITSTATUS(status);
    }
    /* Everything the command left behind (daemons, setsid'd or double-forked children) is
     * killed and reaped before the status goes out, so none is alive when `cordon` returns. */
    (void)kill(-1, SIGKILL);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
        ;
    home_view_release();
    struct init_wire_msg head = {.tag = INIT_WIRE_STATUS};
    (void)init_wire_send(p->ctl_sock, &head, &msg, sizeof msg, NULL, 0);
    _exit(msg.exit_code);
}
