/* controller_setup.c — see controller_setup.h. */
#include "controller/controller_setup.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/config_wire.h"
#include "sandbox/home_view.h"
#include "policy/layer_dirs.h"
#include "base/fdpass.h"
#include "sandbox/init.h"
#include "sandbox/loopback_guard.h"
#include "policy/lua_host.h"
#include "base/session_socket.h"
#include "base/util.h"

extern char **environ;

/* The sessions' control sockets are never reachable from inside: a command could otherwise
 * drive a session, or answer a question about running itself outside the sandbox (the API also
 * refuses clients from another user namespace). Hiding their directory covers it where the
 * sandbox would show it; under the sandbox's own /tmp or /run there is nothing to cover. */
static void hide_session_sockets(struct sandbox_config *cfg)
{
    char dir[512];
    if (csock_dir(dir, sizeof dir) == 0 && !str_list_contains(&cfg->hidden, dir))
        str_list_push(&cfg->hidden, dir);
}

/* The home the sandbox shows (profile key home) and, for "overlay", the workspace's layer folder,
 * made here on the host side: only the caller can enter it (0700 up from the homes folder). The
 * homes folder itself is hidden inside every sandbox: no command reads another workspace's layer,
 * or its own from underneath the overlay. */
static int prepare_home(struct sandbox_config *cfg, char *err, size_t errlen)
{
    char *root = home_view_layers_root();
    if (root && !str_list_contains(&cfg->hidden, root))
        str_list_push(&cfg->hidden, root);
    int r = 0;
    char *layer = NULL;
    if (cfg->home_mode == SANDBOX_HOME_READONLY)
        goto out;
    char real[PATH_MAX];
    const char *home = getenv("HOME");
    struct stat st;
    if (!home || !realpath(home, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "the home directory (HOME=%s) is not a directory, so no copy-on-write "
                 "home can be built over it; profile key home = \"readonly\" (--home readonly) "
                 "avoids it", home ? home : "");
        r = -1;
        goto out;
    }
    /* A home inside the workspace or a writable path is writable as that path already. */
    bool writable = path_is_within(real, cfg->workspace);
    for (size_t i = 0; i < cfg->writable.len; i++)
        writable |= path_is_within(real, cfg->writable.items[i]);
    if (writable) {
        cfg->home_mode = SANDBOX_HOME_READONLY;
        goto out;
    }
    cfg->home = xstrdup(real);
    /* Hidden paths were expanded against HOME as given; the overlay is mounted on the canonical
     * home, so a HOME reached through a symlink must not leave its hidden names outside it. */
    char *given = path_absolute(home, "/");
    if (strcmp(given, real) != 0) {
        for (size_t i = 0; i < cfg->hidden.len; i++) {
            char *h = cfg->hidden.items[i];
            if (path_is_within(h, given)) {
                cfg->hidden.items[i] = xasprintf("%s%s", real, h + strlen(given));
                free(h);
            }
        }
    }
    free(given);
    if (cfg->home_mode != SANDBOX_HOME_OVERLAY)
        goto out;
    layer = home_view_layer_dir(cfg->workspace);
    char *upper = layer ? xasprintf("%s/upper", layer) : NULL, *work = layer ? xasprintf("%s/work", layer) : NULL;
    int m = !layer ? -ENOENT : mkdir_p(root, 0700);
    if (m == 0 && mkdir(layer, 0700) < 0 && errno != EEXIST)
        m = -errno;
    if (m == 0 && mkdir(upper, 0700) < 0 && errno != EEXIST)
        m = -errno;
    if (m == 0 && mkdir(work, 0700) < 0 && errno != EEXIST)
        m = -errno;
    /* Made 0700 whatever the umask or an older cordon left: the layer holds copies of home files. */
    if (m == 0 && (chmod(root, 0700) < 0 || chmod(layer, 0700) < 0 || chmod(work, 0700) < 0))
        m = -errno;
    free(upper);
    free(work);
    if (m < 0) {
        snprintf(err, errlen, "cannot make the home layer %s: %s; profile key home = \"tmpfs\" or "
                 "\"readonly\" (--home tmpfs, --home readonly) avoids it", layer ? layer : "(no XDG_STATE_HOME or HOME)",
                 strerror(-m));
        r = -1;
        goto out;
    }
    cfg->home_layer = layer;
    layer = NULL;
out:
    free(layer);
    free(root);
    return r;
}

int controller_resolve(const struct run_flags *flags, const char *cwd, struct sandbox_config *cfg,
                       char *err, size_t errlen)
{
    struct lh_options lopt;
    layer_dirs_default(&lopt);
    /* The project layer: the workspace's .cordon, only when the user trusts it (else one line
     * says why and the lower layers apply). --policy FILE is the user's own choice: no check. */
    layer_dirs_add_project(&lopt, flags->workspace ? flags->workspace : cwd);
    lopt.extra_policy = flags->policy_file;
    if (lh_open(&lopt, err, errlen) < 0)
        return -1;
    /* The network rules are compiled after init has the configuration (controller_compile_network). */
    enum lh_outcome o = lh_resolve_sandbox_config(flags, cwd, getenv("HOME"), environ, cfg, err, errlen);
    if (o != LH_OK)
        return -1;
    if (flags->json != FLAG_UNSET)
        cfg->json = flags->json == FLAG_TRUE;
    hide_session_sockets(cfg);
    if (prepare_home(cfg, err, errlen) < 0)
        return -1;
    /* Fail closed: a sandbox that cannot keep its commands off the loopback is not started. */
    if (loopback_guard_wanted(cfg) && loopback_guard_check(err, errlen) < 0)
        return -1;
    return 0;
}

int controller_send_config(int ctl, const struct sandbox_config *cfg)
{
    int fd = memfd_create("cordon-config", MFD_CLOEXEC);
    int r = fd < 0 ? -errno : config_wire_write(fd, cfg);
    if (r == 0)
        r = fdpass_send(ctl, fd, INIT_MSG_CONFIG);
    if (fd >= 0)
        close(fd);
    return r;
}

static void tell_init_to_abort(int ctl)
{
    char abort_msg = INIT_MSG_ABORT;
    (void)send(ctl, &abort_msg, 1, MSG_NOSIGNAL);
}

int controller_compile_network(int ctl, char *err, size_t errlen)
{
    if (lh_resolve_network(err, errlen) == LH_OK)
        return 0;
    tell_init_to_abort(ctl);
    return -1;
}

int controller_send_filter(int ctl, const struct sandbox_config *cfg, struct sc_program *prog,
                           char *err, size_t errlen)
{
    if (sc_build(cfg, prog, err, errlen) < 0) {
        tell_init_to_abort(ctl);
        return -1;
    }
    size_t len = (size_t)prog->len * sizeof prog->insns[0];
    char *msg = xmalloc(len + 1);
    msg[0] = INIT_MSG_FILTER;
    memcpy(msg + 1, prog->insns, len);
    int r = send(ctl, msg, len + 1, MSG_NOSIGNAL) < 0 ? -errno : 0;
    free(msg);
    return r;
}
