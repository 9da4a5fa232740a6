/* refusal_report.c — see refusal_report.h. */
#include "controller/refusal_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

/* What the hook gets of one stream: the lines with a marker, or the whole kept text. */
static char *hook_text(const struct capture *c, bool candidates, size_t *len, bool *cut)
{
    return candidates ? capture_candidates(c, len, cut) : capture_text(c, len, cut);
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
    struct str_list writable = {0};
    str_list_push(&writable, cfg->workspace_readonly ? "/tmp" : cfg->workspace);
    str_list_push(&writable, "/tmp");
    for (size_t i = 0; i < cfg->writable.len; i++)
        str_list_push(&writable, cfg->writable.items[i]);
    struct lh_command_result in = {
        .command = command, .exit_code = exit_code, .signal = sig,
        .stdout_text = out_text, .stdout_len = out_len, .stderr_text = err_text, .stderr_len = err_len,
        .truncated = out_cut || err_cut, .cwd = cfg->cwd, .writable = &writable, .hidden = &cfg->hidden,
        .network_denied = network_denied, .merged = merged, .candidates = candidates,
    };
    char msg[1024];
    enum lh_outcome o = lh_detect_refusals(&in, found, max, &n, msg, sizeof msg);
    if (o != LH_OK) {
        LOG_E("refusal", "refusal detection failed, no refusal reported: %s", msg);
        n = 0;
    }
    bool ask_sandbox_off = false, plan = false;
    lh_profile_escalation(&ask_sandbox_off, &plan);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "cordon: %s%s\n", found[i].reason,
                ask_sandbox_off || strcmp(found[i].kind, "network") == 0 ? "" : "; run with --ask-sandbox-off to be asked next time");
    str_list_free(&writable);
    free(out_text);
    free(err_text);
    return n;
}
