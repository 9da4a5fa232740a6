/* policy_detect.h — `cordon policy detect`: run refusal detection and the escalation decision
 * on a recorded command result, with the very code the controller runs after a foreground
 * command (the Lua host's `refusal` and `escalate` hooks over the resolved profile).
 * Also owns the recorded-result case format, which `policy explain --input` and the
 * "refusals" cases of `policy test` read through detect_case_*(). */
#ifndef CORDON_POLICY_DETECT_H
#define CORDON_POLICY_DETECT_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include "base/json_read.h"
#include "policy/lua_host.h"
#include "sandbox/sandbox_config.h"
#include "base/util.h"

/* One recorded result, checked field by field (docs/policy-cli.md "cordon policy detect"). Strings
 * are borrowed from the JSON tree, which must outlive the case; the lists are owned. */
struct detect_case {
    const char *command, *cwd;
    const struct json_value *stdout_v, *stderr_v;
    int exit_code, signal;
    bool truncated, interactive, plan, background, have_host;
    struct str_list writable, hidden, network_denied, host_exists, host_sockets;
    bool have_writable, have_hidden;
    /* where the workspace was and what in it was protected (the refusal's wording) */
    const char *workspace, *profile_name;
    bool workspace_readonly, block_unix_sockets;
    struct str_list readonly_in_workspace;
    bool root;                      /* the caller was root */
    struct str_list host_listening; /* the host's loopback ports with a service, as strings */
    /* filled by detect_case_prepare() */
    struct lh_command_result in;
    struct sandbox_config cfg;
    bool have_cfg;
    struct str_list in_writable;
    char *cand_out,
        *cand_err; /* the texts' lines with a refusal marker, when the layers declared theirs */
    char cwdbuf[PATH_MAX];
};

/* Read root (one JSON object) into c, zeroed by the caller. 0, or -1 with one line naming the
 * field in err (unknown field, wrong type, missing field). detect_case_free() either way. */
int detect_case_read(const struct json_value *root, struct detect_case *c, char *err,
                     size_t errlen);
/* With the Lua host open: resolve `profile` (NULL: coding) with the case's cwd (default
 * default_cwd) as the workspace — against "/" when that directory does not exist here — and
 * fill c->in as the controller would (writable defaults to the workspace, the profile's
 * writable paths and /tmp; hidden to the profile's; stdout and stderr narrowed to the lines with
 * a refusal marker, through a capture, when the layers declared their markers). LH_OK, or the
 * outcome with err. */
enum lh_outcome detect_case_prepare(struct detect_case *c, const char *profile,
                                    const char *default_cwd, char *err, size_t errlen);
/* Set (on) or clear the host override from the case's "host" object, when it has one. */
void detect_case_host(const struct detect_case *c, bool on);
void detect_case_free(struct detect_case *c);
/* The whole file at path ("-": stdin, at most 64 MiB) in a new buffer; NULL with errno set. */
char *detect_read_file(const char *path, size_t *len);

/* --repeat N of `policy net` and `policy detect` (a measuring aid): N (1..1e9), or -1. */
long policy_repeat_count(const char *s);
/* Print "decisions: N, per decision: X.XX us" on stderr for n decisions in elapsed_ms. */
void policy_repeat_report(long n, double elapsed_ms);

/* argv: the words after "policy detect". Usage:
 *   --input FILE [--json] [--profile NAME] [--policy FILE] [--repeat N]
 * Layers: those `cordon run` would load in the current directory (a trusted project's .cordon,
 * with the one-line notice when untrusted) plus --policy FILE. Prints one line per refusal
 * ("KIND PATH: REASON") or "no refusal", or with --json exactly
 * {"ask":BOOL,"refusals":[{"kind":..,"path":..,"line":..,"reason":..}]}. --repeat N (a
 * measuring aid) runs the detection N more times after the first and prints
 * "decisions: N, per decision: X.XX us" on stderr. Returns 0; 1 when a policy failed
 * (detection reports no refusal, the message on stderr); 2 for bad usage or a bad case file
 * (one "cordon: policy detect: ..." line naming the field or the byte offset). */
int policy_detect_main(int argc, char **argv);
#endif
