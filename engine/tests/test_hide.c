/* test_hide.c — hide.c's host-side part: the target a hidden path names through symbolic links
 * (hide_link_target), on a real tree of folders and links under TMPDIR. The mounts are the
 * busted specs' (spec/04-engine/run_hidden_rules_spec.lua). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/hide.h"
#include "test.h"

static char root[PATH_MAX];

static void make_tree(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/hide.XXXXXX", tmp ? tmp : "/tmp");
    CHECK(mkdtemp(root) != NULL);
    char *real = realpath(root, NULL); /* TMPDIR itself may pass a link */
    CHECK(real != NULL);
    snprintf(root, sizeof root, "%s", real);
    free(real);
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p home/dotfiles/aws home/real-config/gh srv && "
             "ln -s dotfiles/aws home/.aws && ln -s real-config home/.config && "
             "ln -s dotfiles/kube home/.kube && ln -s ../srv/vault home/.vault && "
             "ln -s .aws home/.aws2 && ln -s loop home/loop && touch srv/file",
             root);
    CHECK(system(cmd) == 0);
}

static void check_target(const char *rel, const char *want_rel)
{
    char *path = xasprintf("%s/%s", root, rel);
    char *got = hide_link_target(path);
    if (!want_rel) {
        CHECK(got == NULL);
    } else {
        char *want = xasprintf("%s/%s", root, want_rel);
        CHECK(got != NULL);
        if (got)
            CHECK_STR_CONTAINS(got, want);
        CHECK(got && strcmp(got, want) == 0);
        free(want);
    }
    free(got);
    free(path);
}

static void test_link_targets(void)
{
    make_tree();
    check_target("home/.aws", "home/dotfiles/aws"); /* stow: relative link */
    check_target("home/.aws/credentials", "home/dotfiles/aws/credentials"); /* not there yet */
    check_target("home/.config/gh", "home/real-config/gh");                 /* a link on the way */
    check_target("home/.kube", "home/dotfiles/kube"); /* its target is missing */
    check_target("home/.kube/config", "home/dotfiles/kube/config");
    check_target("home/.vault", "srv/vault");        /* out of the home, missing */
    check_target("home/.aws2", "home/dotfiles/aws"); /* a link to a link */
    check_target("home/dotfiles/aws", NULL);         /* no link: itself */
    check_target("home/nothing/here", NULL);
    check_target("home/dotfiles/aws/new/deeper", NULL); /* missing below a real folder */
    check_target("srv/file", NULL);                     /* a file, no link */
    check_target("srv/file/below", NULL);               /* a file on the way */
    check_target("home/.aws/new/deeper", "home/dotfiles/aws/new/deeper");
    char *loop = xasprintf("%s/home/loop", root);
    char *got = hide_link_target(loop); /* a loop ends; whatever it gives is not a crash */
    free(got);
    free(loop);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

TEST_MAIN({"link targets", test_link_targets})
