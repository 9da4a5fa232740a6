/* profile_keys_gen.c — a build-time program: writes the Lua schema of the profile keys
 * (lua/cordon/profile_keys.lua) from the table of profile_keys.c, so that the Lua side checks
 * profiles against the very rows the C side converts. The Lua file is kept in the tree, beside
 * the modules it serves, because lua/ is loaded by plain lua5.4 in spec/01-lua to 03-profiles
 * (no binary there); the build runs this program with --check and fails while the kept copy
 * differs from what the table makes.
 *   profile_keys_gen --write FILE    write the schema to FILE
 *   profile_keys_gen --check FILE    exit 1, with one line, when FILE is not what --write makes */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/profile_keys.h"

static char *render(size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    fputs("-- cordon.profile_keys — every profile key and its kind, written by profile_keys_gen "
          "from\n-- engine/sandbox/profile_keys.c, the one table of profile keys: do not edit "
          "here (a key is\n-- added there, and the build says when this copy differs). "
          "cordon.profile makes its schema\n-- of it; its comment says what each kind "
          "accepts.\nreturn {\n",
          f);
    for (size_t i = 0; i < profile_keys_len; i++)
        fprintf(f, "    { \"%s\", \"%s\" },\n", profile_keys[i].name,
                pk_kind_name(profile_keys[i].kind));
    fputs("}\n", f);
    if (fclose(f) != 0)
        return NULL;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "--write") != 0 && strcmp(argv[1], "--check") != 0)) {
        fprintf(stderr, "usage: profile_keys_gen --write|--check FILE\n");
        return 2;
    }
    size_t len;
    char *want = render(&len);
    if (!want)
        return 1;
    int rc = 0;
    if (strcmp(argv[1], "--write") == 0) {
        FILE *f = fopen(argv[2], "w");
        if (!f || fwrite(want, 1, len, f) != len || fclose(f) != 0) {
            perror(argv[2]);
            rc = 1;
        }
    } else {
        FILE *f = fopen(argv[2], "r");
        char *have = malloc(len + 2);
        size_t n = f && have ? fread(have, 1, len + 1, f) : 0;
        if (f)
            fclose(f);
        if (n != len || memcmp(have, want, len) != 0) {
            fprintf(stderr,
                    "%s is not what engine/sandbox/profile_keys.c makes: run `make "
                    "profile-keys` (or profile_keys_gen --write %s)\n",
                    argv[2], argv[2]);
            rc = 1;
        }
        free(have);
    }
    free(want);
    return rc;
}
