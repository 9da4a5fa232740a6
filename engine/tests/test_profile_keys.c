/* test_profile_keys.c — the table of profile keys is whole: each name once, no key both a value
 * and a table of keys, each flag once with its help, each number key with its C type, each key
 * init gets with a field. */
#include <string.h>

#include "sandbox/profile_keys.h"
#include "test.h"

static bool is_number_kind(enum pk_kind k)
{
    return k == PK_NUMBER || k == PK_INTEGER || k == PK_DEPTH || k == PK_DURATION || k == PK_SIZE ||
           k == PK_SIZE_OR_UNLIMITED || k == PK_PIDS;
}

static void test_names(void)
{
    for (size_t i = 0; i < profile_keys_len; i++) {
        const char *a = profile_keys[i].name;
        CHECK(a && a[0] && a[0] != '.' && a[strlen(a) - 1] != '.');
        CHECK(strcmp(pk_kind_name(profile_keys[i].kind), "?") != 0);
        CHECK(pk_find(a) == &profile_keys[i]);
        for (size_t j = 0; j < profile_keys_len; j++) {
            const char *b = profile_keys[j].name;
            size_t n = strlen(a);
            /* "network" beside "network.allow" would make network both a value and a table */
            if (i != j && strncmp(a, b, n) == 0 && b[n] == '.')
                fprintf(stderr, "  %s is a key and a table of keys (%s)\n", a, b);
            CHECK(i == j || strncmp(a, b, n) != 0 || b[n] != '.');
        }
    }
    CHECK(pk_find("no.such") == NULL);
}

static void test_flags(void)
{
    for (size_t i = 0; i < profile_keys_len; i++) {
        const struct profile_key *k = &profile_keys[i];
        if (!k->flag) {
            CHECK(!k->flag_arg && !k->flag_help && !k->flag_negates);
            continue;
        }
        CHECK(k->flag_help && k->flag_help[0]);
        CHECK(k->flag_field > 0); /* 0 is --profile, no key's flag */
        /* a boolean flag takes no value (but =true or =false); any other one does */
        CHECK((k->kind == PK_BOOLEAN) == (k->flag_arg == NULL));
        CHECK(!k->flag_negates || k->kind == PK_BOOLEAN);
        CHECK(pk_find_flag(k->flag, strlen(k->flag)) == k);
    }
}

static void test_fields(void)
{
    for (size_t i = 0; i < profile_keys_len; i++) {
        const struct profile_key *k = &profile_keys[i];
        CHECK(!k->to_init || k->field != PK_NO_FIELD);
        if (k->field != PK_NO_FIELD)
            CHECK(k->field < sizeof(struct sandbox_config));
        bool number = k->field != PK_NO_FIELD && is_number_kind(k->kind);
        CHECK(number == (k->ctype != PK_C_NONE));
        if (k->expect)
            CHECK(k->min <= k->dflt && k->dflt <= k->max);
    }
}

TEST_MAIN({"names", test_names}, {"flags", test_flags}, {"fields", test_fields})
