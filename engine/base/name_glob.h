/* name_glob.h — the pattern language of an environment hook's `unset` list: a variable name,
 * or a glob where only `*` is special and matches any run of bytes (none included); every
 * other byte, `?`, `[` and `\` among them, stands for itself. Owns only the matching.
 * Must never allocate, read past either NUL, or take time beyond pattern length times name
 * length. */
#ifndef CORDON_NAME_GLOB_H
#define CORDON_NAME_GLOB_H
#include <stdbool.h>

/* Does name match pattern? Both are NUL-terminated. */
bool name_glob_match(const char *pattern, const char *name);
#endif
