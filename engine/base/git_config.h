/* git_config.h — git's config file syntax, read only; the allowlist of settings written to the
 * host's config on a sandboxed command's behalf (judged by key and value); and the table of keys
 * that make git run a program or load code when somebody next uses the repository.
 * Owns: the parser (sections, quoted subsections, continuation lines, comments, quoted values
 * with git's escapes), the allowlist with each key's value rule, git's reading of a remote URL
 * (transport helper, network URL, scp-like address, local path), and the code-running table.
 * Must never: write a file, follow an include (an include is itself a code-running key), or
 * accept a file it cannot parse as "nothing dangerous": a syntax error is an error. */
#ifndef CORDON_GIT_CONFIG_H
#define CORDON_GIT_CONFIG_H
#include <stddef.h>

struct git_config_entry {
    char *key;   /* "section.name" or "section.subsection.name": section and name lower-cased
                  * (git compares them without case), the subsection exactly as written */
    char *value; /* unquoted, escapes applied; NULL for a bare key ("[core]\n\tbare"), which
                  * git reads as true */
    int line;    /* 1-based line of the key */
};

struct git_config {
    struct git_config_entry *items;
    size_t len, cap;
};

/* Parse text (len bytes, need not be NUL-terminated) into out (zeroed by the caller). Returns 0,
 * or -EINVAL with err set to "line N: why" (out then holds nothing); -ENOMEM never returns
 * (allocation failure aborts, as everywhere in cordon). */
int git_config_parse(const char *text, size_t len, struct git_config *out, char *err,
                     size_t errlen);
void git_config_free(struct git_config *c);

/* NULL when setting key (as git_config_entry.key spells it) to value cannot make git run a
 * program or load code; else a short static phrase saying why, e.g. "runs hooks from that
 * folder" for core.hooksPath. alias.* is code-running only when its value starts with '!'. */
const char *git_config_key_runs_code(const char *key, const char *value);

/* The verdict on writing one entry on a sandboxed command's behalf (docs/git.md, Settings). */
enum git_config_verdict {
    GIT_CONFIG_ALLOW,      /* on the allowlist, and its value fits the key's rule */
    GIT_CONFIG_REFUSE,     /* *why says why, a short static phrase */
    GIT_CONFIG_LOCAL_PATH, /* a remote (or submodule) URL naming a local path: *path, as git
                            * will open it (file:// taken off; relative: to the repository).
                            * Allowed only outside every writable area, which only the caller
                            * can tell, on the host */
    GIT_CONFIG_WORK_TREE,  /* core.worktree: allowed only where the caller's rule holds (a
                            * submodule's work tree inside the same tree); *path is the value */
};

/* Judge entry e of c (the whole new config: a branch's remote is a name only when c defines
 * that remote's url). Everything not on the allowlist is refused, keys git adds in future
 * releases included; *why then names the reason (the code-running table's when it has one).
 * why and path are always set (NULL when they do not apply). */
enum git_config_verdict git_config_judge(const struct git_config *c,
                                         const struct git_config_entry *e, const char **why,
                                         const char **path);

/* Entry e of the new config next, which old had too, unchanged: why keeping it refuses the
 * write, or NULL. A removal runs nothing by itself, with one exception: a branch's remote (or
 * another key naming one) whose remote the write takes the url of. git then reads the name as
 * a path (or the .git/remotes file of that name), which the command can plant. */
const char *git_config_judge_kept(const struct git_config *old, const struct git_config *next,
                                  const struct git_config_entry *e);

/* How git reads value as a remote URL: GIT_CONFIG_ALLOW (a network URL: https, http, ssh,
 * git, scp-like user@host:path), GIT_CONFIG_LOCAL_PATH (*path: the local path), or
 * GIT_CONFIG_REFUSE (*why: a transport helper such as ext:: or fd::, another scheme, a host
 * that reads as an option, %-escapes where git decodes them, control characters, ~). */
enum git_config_verdict git_config_url(const char *value, const char **why, const char **path);
#endif
