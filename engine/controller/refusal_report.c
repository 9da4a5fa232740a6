/* refusal_report.c — see refusal_report.h. Owns the hook's input for one command (where the
 * workspace is and what in it is protected, so the reason can say why) and merging what the
 * hook returned into one line per refused thing. Uses policy/lua_host (the hook). Must never
 * add a refusal the hook did not return, nor change what a kept one says. */
#include "controller/refusal_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "base/visible.h"
#include "sandbox/hide.h"
#include "controller/host_listening.h"

/* One line per refused thing: a refusal with the kind and path of one kept before it says
 * nothing new, and one without a path says less than one of its kind with a path. Keeps the
 * order; returns the number kept. */
static size_t merge_refusals(struct lh_refusal *found, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        bool drop = false;
        for (size_t j = 0; j < n && !drop; j++) {
            if (j == i || strcmp(found[j].kind, found[i].kind) != 0)
                continue;
            if (!found[i].path[0] && found[j].path[0])
                drop = true; /* the same kind, said with its path */
            else if (j < i && strcmp(found[j].path, found[i].path) == 0)
                drop = true; /* said already */
        }
        if (drop)
            continue;
        if (kept != i)
            found[kept] = found[i];
        kept++;
    }
    return kept;
}

/* What the hook gets of one stream: the lines with a marker, or the whole kept text. */
static char *hook_text(const struct capture *c, bool candidates, size_t *len, bool *cut)
{
    return candidates ? capture_candidates(c, len, cut) : capture_text(c, len, cut);
}

/* Does text hold a client's line for a refused connection (the words the default detector's
 * cordon.refusal.refused_patterns key on)? */
static bool shows_refused_connection(const char *text, size_t len)
{
    static const char *const words[] = {"onnection refused", "ECONNREFUSED",     "Errno 111",
                                        "os error 111",      "Couldn't connect", "(111)"};
    for (size_t i = 0; text && i < sizeof words / sizeof words[0]; i++)
        if (memmem(text, len, words[i], strlen(words[i])))
            return true;
    return false;
}

size_t refusal_report(const struct sandbox_config *cfg, const char *command, int exit_code, int sig,
                      const struct capture *out, const struct capture *err,
                      const struct str_list *network_denied, bool merged, struct lh_refusal *found,
                      size_t max)
{
    size_t out_len, err_len, n = 0;
    bool out_cut, err_cut;
    /* Captures that tracked the policy's markers give just the lines holding one. */
    bool candidates = out->markers && err->markers;
    char *out_text = hook_text(out, candidates, &out_len, &out_cut);
    char *err_text = hook_text(err, candidates, &err_len, &err_cut);
    /* Every layer defining the hook declared its markers, no kept line holds one and the proxy
     * refused nothing: a line without a marker cannot show a layer a refusal (lua/HOOKS.md,
     * refusal_markers), so the answer is none, known without the hook's call. */
    if (candidates && out_len == 0 && err_len == 0 && network_denied->len == 0) {
        free(out_text);
        free(err_text);
        return 0;
    }
    struct str_list writable = {0};
    str_list_push(&writable, cfg->workspace_readonly ? "/tmp" : cfg->workspace);
    str_list_push(&writable, "/tmp");
    for (size_t i = 0; i < cfg->writable.len; i++)
        str_list_push(&writable, cfg->writable.items[i]);
    /* the protected paths inside the workspace, absolute, for the wording */
    struct str_list protected_in_ws = {0};
    for (size_t i = 0; cfg->workspace && i < cfg->readonly_in_workspace.len; i++) {
        char *p = xasprintf("%s/%s", cfg->workspace, cfg->readonly_in_workspace.items[i]);
        str_list_push(&protected_in_ws, p);
        free(p);
    }
    /* What looks missing: the hidden paths, and the names a folder hidden by rule holds on the
     * host now (a key made there during the run included). */
    struct str_list hidden = {0};
    for (size_t i = 0; i < cfg->hidden.len; i++)
        str_list_push(&hidden, cfg->hidden.items[i]);
    hide_except_hidden_now(&cfg->hidden_except, &hidden);
    /* a refused connection may be to a port the host serves: which ones it does, looked up
     * only when a kept line shows a refusal of the kind (lua/HOOKS.md, host_listening) */
    struct str_list listening = {0};
    if (shows_refused_connection(out_text, out_len) || shows_refused_connection(err_text, err_len))
        host_listening_ports(&listening);
    struct lh_command_result in = {
        .command = command,
        .exit_code = exit_code,
        .signal = sig,
        .stdout_text = out_text,
        .stdout_len = out_len,
        .stderr_text = err_text,
        .stderr_len = err_len,
        .truncated = out_cut || err_cut,
        .cwd = cfg->cwd,
        .writable = &writable,
        .hidden = &hidden,
        .network_denied = network_denied,
        .merged = merged,
        .candidates = candidates,
        .workspace = cfg->workspace,
        .workspace_readonly = cfg->workspace_readonly,
        .profile = cfg->profile,
        .readonly_in_workspace = &protected_in_ws,
        .block_unix_sockets = cfg->block_unix_sockets,
        .grant_ssh_agent = cfg->grant_ssh_agent,
        .grant_gpg_agent = cfg->grant_gpg_agent,
        .root = geteuid() == 0,
        .host_listening = &listening,
    };
    char msg[1024];
    enum lh_outcome o = lh_detect_refusals(&in, found, max, &n, msg, sizeof msg);
    if (o != LH_OK) {
        LOG_E("refusal", "refusal detection failed, no refusal reported: %s", msg);
        n = 0;
    }
    n = merge_refusals(found, n);
    bool ask_sandbox_off = false, plan = false;
    lh_profile_escalation(&ask_sandbox_off, &plan);
    for (size_t i = 0; i < n; i++) {
        /* a reason names what the command chose (a path, a host): through the one renderer */
        char *shown = visible_dup(found[i].reason);
        fprintf(stderr, "cordon: %s%s\n", shown,
                ask_sandbox_off || strcmp(found[i].kind, "network") == 0
                    ? ""
                    : "; run with --ask-sandbox-off to be asked next time");
        free(shown);
    }
    str_list_free(&writable);
    str_list_free(&hidden);
    str_list_free(&protected_in_ws);
    str_list_free(&listening);
    free(out_text);
    free(err_text);
    return n;
}
