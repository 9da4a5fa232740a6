/* test_shell_quote.c — argv as one shell line, read back by a real shell. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/shell_quote.h"
#include "test.h"
#include "base/util.h"

static void test_plain_words_stay(void)
{
    char *const argv[] = {(char *)"git", (char *)"commit", (char *)"-m", (char *)"fix", NULL};
    char *s = shell_join(argv);
    CHECK(strcmp(s, "git commit -m fix") == 0);
    free(s);
}

static void test_special_words_round_trip_through_sh(void)
{
    char *const argv[] = {(char *)"bash", (char *)"-c",   (char *)"echo 'a b' > \"$HOME/x\"; ls",
                          (char *)"",     (char *)"it's", NULL};
    char *s = shell_join(argv);
    /* sh re-splits the line: printf shows each word between brackets */
    char *cmd = xasprintf("set -- %s; for w; do printf '[%%s]' \"$w\"; done", s);
    FILE *f = popen(cmd, "r");
    char out[512] = "";
    CHECK(f && fgets(out, sizeof out, f));
    pclose(f);
    CHECK(strcmp(out, "[bash][-c][echo 'a b' > \"$HOME/x\"; ls][][it's]") == 0);
    free(cmd);
    free(s);
}

TEST_MAIN({"plain words stay as they are", test_plain_words_stay},
          {"special words round-trip through sh", test_special_words_round_trip_through_sh})
