/* fuzz_git_config.c — libFuzzer target for base/git_config.c, the reader of git config files a
 * sandboxed command wrote (controller/git_publish.c judges them before they reach the host).
 * The input is the file. Beyond no crash, leak or undefined behaviour, it aborts when a
 * property the judgement relies on breaks:
 *   - a refusal is -EINVAL with nothing returned and says "line N: ..." with N within the text;
 *   - an accepted entry's key is SECTION.NAME or SECTION.SUBSECTION.NAME with SECTION of
 *     lower-case letters, digits, '-' and '.' (possibly empty before its first dot), and NAME a lower-case letter then letters,
 *     digits or '-' (so the table's comparisons see what git compares); lines never go back
 *     and stay within the text;
 *   - the same text reads the same twice, and judging every entry answers (NULL or a reason);
 *   - the allowlist's verdict on every entry is one of its four, with a reason exactly when it
 *     refuses and a path (inside the value) exactly when the caller must judge one.
 * Built and run by `make fuzz` (engine/fuzz/README.md). Links git_config.c only; the
 * allocation helper of util.h is defined here, aborting on failure as util.c ends the process. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "base/git_config.h"
#include "base/util.h"

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    ASSERT(p);
    return p;
}

static int lower_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

static void check_key(const char *key)
{
    const char *first = strchr(key, '.'), *last = strrchr(key, '.');
    ASSERT(first); /* "[.a]" is git's too: an empty first part, which no table key has */
    for (const char *p = key; p < first; p++)
        ASSERT(lower_key_char(*p));
    const char *name = last + 1;
    ASSERT(*name >= 'a' && *name <= 'z');
    for (const char *p = name; *p; p++)
        ASSERT(lower_key_char(*p));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    int lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    struct git_config a = {0}, b = {0};
    char err[200];
    int r = git_config_parse(text, size, &a, err, sizeof err);
    if (r < 0) {
        int n = 0;
        ASSERT(r == -EINVAL && a.len == 0 && !a.items);
        ASSERT(sscanf(err, "line %d: ", &n) == 1 && n >= 1 && n <= lines);
    } else {
        ASSERT(r == 0);
        int prev = 1;
        for (size_t i = 0; i < a.len; i++) {
            check_key(a.items[i].key);
            ASSERT(a.items[i].line >= prev && a.items[i].line <= lines);
            prev = a.items[i].line;
            (void)git_config_key_runs_code(a.items[i].key, a.items[i].value);
            const char *why, *path;
            switch (git_config_judge(&a, &a.items[i], &why, &path)) {
            case GIT_CONFIG_ALLOW:
                ASSERT(!why && !path);
                break;
            case GIT_CONFIG_REFUSE:
                ASSERT(why && !path);
                break;
            case GIT_CONFIG_LOCAL_PATH:
            case GIT_CONFIG_WORK_TREE:
                ASSERT(!why && path && a.items[i].value && path >= a.items[i].value &&
                       path < a.items[i].value + strlen(a.items[i].value));
                break;
            }
        }
    }
    int r2 = git_config_parse(text, size, &b, err, sizeof err);
    ASSERT(r2 == r && b.len == a.len);
    for (size_t i = 0; i < a.len; i++) {
        ASSERT(strcmp(a.items[i].key, b.items[i].key) == 0);
        ASSERT((!a.items[i].value && !b.items[i].value) ||
               (a.items[i].value && b.items[i].value &&
                strcmp(a.items[i].value, b.items[i].value) == 0));
    }
    git_config_free(&a);
    git_config_free(&b);
    return 0;
}
