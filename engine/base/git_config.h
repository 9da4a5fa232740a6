/* git_config.h — git's config file syntax, read only, and the judgement of which keys make git
 * run a program or load code when somebody next uses the repository.
 * Owns: the parser (sections, quoted subsections, continuation lines, comments, quoted values
 * with git's escapes) and the table of code-running keys with the reason for each.
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
#endif
