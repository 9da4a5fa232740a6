/* test_name_glob.c — the `unset` pattern matcher (base/name_glob.c) from a table of cases:
 * literal names, `*` at either end, in the middle and repeated, and the bytes that are special
 * to other glob or pattern languages but literal here. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/name_glob.h"
#include "base/util.h"
#include "test.h"

static const struct {
    const char *pattern, *name;
    bool match;
} globs[] = {
    /* a name without `*` matches only itself */
    {"SSH_AUTH_SOCK", "SSH_AUTH_SOCK", true},
    {"SSH_AUTH_SOCK", "SSH_AUTH_SOCKET", false},
    {"SSH_AUTH_SOCK", "SSH_AUTH_SOC", false},
    {"SSH_AUTH_SOCK", "ssh_auth_sock", false}, /* case matters */
    {"A", "", false},
    /* a leading star */
    {"*_API_KEY", "OPENAI_API_KEY", true},
    {"*_API_KEY", "_API_KEY", true}, /* the star matches none */
    {"*_API_KEY", "OPENAI_API_KEYS", false},
    {"*_API_KEY", "API_KEY", false},
    {"*_TOKEN", "GITHUB_TOKEN", true},
    {"*_TOKEN", "TOKEN", false},
    {"*_TOKEN", "A_TOKEN_TOKEN", true}, /* the last occurrence ends the name */
    {"*_TOKEN", "A_TOKEN_TOKENX", false},
    /* a trailing star */
    {"AWS_*", "AWS_SECRET_ACCESS_KEY", true},
    {"AWS_*", "AWS_", true},
    {"AWS_*", "AWS", false},
    {"AWS_*", "XAWS_KEY", false},
    /* stars in the middle, and several */
    {"A*B*C", "AxxBxxC", true},
    {"A*B*C", "ABC", true},
    {"A*B*C", "AxxCxxB", false},
    {"A*B*C", "ABCBC", true},
    {"A*B*C", "ABCB", false},
    {"*SECRET*", "MY_SECRET_VALUE", true},
    {"*SECRET*", "SECRET", true},
    {"*SECRET*", "SECRE", false},
    {"A**B", "AB", true},
    {"A**B", "AxB", true},
    {"**", "", true},
    {"*", "ANYTHING", true},
    {"*", "", true},
    {"", "", true},
    {"", "A", false},
    /* the retry after a failed partial match: "aab" against "*ab" */
    {"*ab", "aab", true},
    {"*aab", "aaab", true},
    {"*a*ab", "aaab", true},
    {"*ab*ab", "abab", true},
    {"*ab*ab", "abba", false},
    /* bytes special elsewhere are literal */
    {"A.B", "AxB", false},
    {"A.B", "A.B", true},
    {"A?", "AB", false},
    {"A?", "A?", true},
    {"A[BC]", "AB", false},
    {"A[BC]", "A[BC]", true},
    {"A%B", "A%B", true},
    {"A\\*", "A\\xyz", true}, /* a backslash does not escape the star */
    {"A\\*", "A*", false},
    {"^A$", "A", false},
    {"^A$", "^A$", true},
    {"A+", "AA", false},
    /* bytes beyond ASCII compare as bytes */
    {"*\xc3\xa9", "CAF\xc3\xa9", true},
    {"*\xc3\xa9", "CAF\xc3", false},
};

static void test_table(void)
{
    int bad = 0;
    for (size_t i = 0; i < ARRAY_LEN(globs); i++) {
        bool got = name_glob_match(globs[i].pattern, globs[i].name);
        if (got != globs[i].match) {
            fprintf(stderr, "  \"%s\" vs \"%s\": %s, expected %s\n", globs[i].pattern,
                    globs[i].name, got ? "match" : "no match",
                    globs[i].match ? "match" : "no match");
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

static void test_many_stars_long_name(void)
{
    /* "*a*a*...*b" against a long run of 'a': no match, and no recursion or blow-up */
    size_t n = 4096;
    char *p = xmalloc(2 * 64 + 2), *s = xmalloc(n + 1);
    for (size_t i = 0; i < 64; i++) {
        p[2 * i] = '*';
        p[2 * i + 1] = 'a';
    }
    p[128] = 'b';
    p[129] = '\0';
    memset(s, 'a', n);
    s[n] = '\0';
    CHECK(!name_glob_match(p, s));
    s[n - 1] = 'b';
    CHECK(name_glob_match(p, s));
    free(p);
    free(s);
}

TEST_MAIN({"table", test_table}, {"many stars, long name", test_many_stars_long_name})
