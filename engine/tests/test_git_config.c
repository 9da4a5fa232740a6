/* test_git_config.c — git's config syntax read as git reads it (tables of text and the entries
 * or the error they give), and the judgement of which keys run code (a table of keys, values
 * and whether they are refused). Cross-checks the reader against real git when it is
 * installed: each parse case's text is given to `git config --file X --list`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/git_config.h"
#include "base/util.h"
#include "test.h"

struct parse_case {
    const char *text;
    const char *want; /* the entries as "key=value\n" lines ("key\n" for a bare key), or NULL
                       * for a syntax error */
    int stricter;     /* a syntax error here that git reads anyway: refused on purpose */
};

static const struct parse_case parse_cases[] = {
    {"[core]\n\tbare = false\n", "core.bare=false\n"},
    {"[Core]\n\tBare = false\n", "core.bare=false\n"},
    {"[core]\n\tbare\n", "core.bare\n"},
    {"[core]\n\tbare", "core.bare\n"},
    {"[core]\r\n\tbare = true\r\n", "core.bare=true\n"},
    {"[core]\n\tbare =\n", "core.bare=\n"},
    {"[core] bare = true\n", "core.bare=true\n"},
    {"[remote \"Origin\"]\n\turl = /x/y.git\n\tfetch = +refs/heads/*:refs/remotes/Origin/*\n",
     "remote.Origin.url=/x/y.git\nremote.Origin.fetch=+refs/heads/*:refs/remotes/Origin/*\n"},
    {"[remote.Origin]\n\turl = a\n", "remote.origin.url=a\n"},
    {"[a \"x\\\"y\\\\z\\q\"]\n\tk = 1\n", "a.x\"y\\zq.k=1\n"},
    {"[credential \"https://e.com\"]\n\thelper = store\n",
     "credential.https://e.com.helper=store\n"},
    {"# c\n; c\n[user]\n\tname = A  B   # comment\n", "user.name=A  B\n"},
    {"[user]\n\tname = \"  A ; B  \"\n", "user.name=  A ; B  \n"},
    {"[user]\n\tname = a\\tb\\nc\\\\d\\\"e\n", "user.name=a\tb\nc\\d\"e\n"},
    {"[user]\n\tname = one \\\n two\n", "user.name=one  two\n"},
    {"[alias]\n\tst = \"!echo hi\"\n", "alias.st=!echo hi\n"},
    {"\xef\xbb\xbf[user]\nname=x\n", "user.name=x\n"},
    {"[user]\n\tname = \"a\" \"b\"\n", "user.name=a b\n"},
    {"[user]\n\tname = a\"#\"b\n", "user.name=a#b\n"},
    {"[user]\n\tna-me2 = x\n", "user.na-me2=x\n"},
    {"", ""},
    {"\n\n", ""},
    /* errors */
    {"bare = true\n", NULL, 1}, /* git reads a key "bare" of no section */
    {"[core\n\tbare = true\n", NULL},
    {"[]\nk = v\n", NULL},
    {"[a b]\nk = v\n", NULL},
    {"[a \"b\" c]\nk = v\n", NULL},
    {"[a \"b\nk = v\n", NULL},
    {"[a_b]\nk = v\n", NULL},
    {"[user]\n\tname = \"open\n", NULL},
    {"[user]\n\tname = a\\x\n", NULL},
    {"[user]\n\tname = a\\", NULL, 1}, /* git reads the end as a continuation */
    {"[user]\n\t1name = a\n", NULL},
    {"[user]\n\tna_me = a\n", NULL},
    {"[user]\n\tbare # comment\n", NULL},
    {"[user]\n\tname : a\n", NULL},
};

static char *entries_text(const struct git_config *c)
{
    char *s = xstrdup("");
    for (size_t i = 0; i < c->len; i++) {
        char *n = c->items[i].value ? xasprintf("%s%s=%s\n", s, c->items[i].key, c->items[i].value)
                                    : xasprintf("%s%s\n", s, c->items[i].key);
        free(s);
        s = n;
    }
    return s;
}

static void test_parse_table(void)
{
    int bad = 0;
    for (size_t i = 0; i < ARRAY_LEN(parse_cases); i++) {
        const struct parse_case *pc = &parse_cases[i];
        struct git_config c = {0};
        char err[200];
        int rc = git_config_parse(pc->text, strlen(pc->text), &c, err, sizeof err);
        if (!pc->want) {
            if (rc != -EINVAL || c.len != 0 || c.items || strncmp(err, "line ", 5) != 0) {
                fprintf(stderr, "  case %zu: rc %d, %zu entries, err '%s'; want a syntax error\n",
                        i, rc, c.len, err);
                bad++;
            }
            git_config_free(&c);
            continue;
        }
        char *got = rc == 0 ? entries_text(&c) : xasprintf("error %d: %s", rc, err);
        if (strcmp(got, pc->want) != 0) {
            fprintf(stderr, "  case %zu: got\n%s\n  want\n%s\n", i, got, pc->want);
            bad++;
        }
        free(got);
        git_config_free(&c);
    }
    CHECK_EQ_INT(bad, 0);
}

static void test_error_names_its_line(void)
{
    const char *text = "[user]\n\tname = a\n\n\temail = \"open\n";
    struct git_config c = {0};
    char err[200];
    CHECK_EQ_INT(git_config_parse(text, strlen(text), &c, err, sizeof err), -EINVAL);
    CHECK_STR_CONTAINS(err, "line 4: ");
    CHECK_STR_CONTAINS(err, "unterminated");
}

static void test_line_numbers_and_length(void)
{
    /* len bounds the text: what follows is not read (no NUL terminator needed) */
    const char text[] = "[core]\n\tbare = true\n[user]\n\tname = x\n[junk";
    struct git_config c = {0};
    char err[200];
    CHECK_EQ_INT(git_config_parse(text, sizeof text - 1 - 5, &c, err, sizeof err), 0);
    CHECK_EQ_INT(c.len, 2);
    CHECK_EQ_INT(c.items[0].line, 2);
    CHECK_EQ_INT(c.items[1].line, 4);
    CHECK(strcmp(c.items[1].key, "user.name") == 0);
    git_config_free(&c);
    CHECK_EQ_INT(c.len, 0);
}

static void test_nul_byte_is_an_error(void)
{
    const char text[] = "[user]\n\tname = a\0b\n";
    struct git_config c = {0};
    char err[200];
    CHECK_EQ_INT(git_config_parse(text, sizeof text - 1, &c, err, sizeof err), -EINVAL);
    CHECK_EQ_INT(c.len, 0);
}

/* Where git is installed, it must read each accepted case's text to the same entries and
 * refuse each rejected one (cordon refusing more than git would be safe; accepting text git
 * reads differently would not be). */
static void test_parse_table_matches_git(void)
{
    if (system("git --version >/dev/null 2>&1") != 0)
        TEST_SKIP("git is not installed");
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *path = xasprintf("%s/test_git_config.%d", tmp, (int)getpid());
    int bad = 0;
    for (size_t i = 0; i < ARRAY_LEN(parse_cases); i++) {
        const struct parse_case *pc = &parse_cases[i];
        FILE *f = fopen(path, "w");
        CHECK(f);
        fputs(pc->text, f);
        fclose(f);
        /* -z: key NL value NUL, so values with newlines compare exactly */
        char *cmd = xasprintf("git config --file '%s' --list -z 2>/dev/null", path);
        FILE *p = popen(cmd, "r");
        CHECK(p);
        char out[4096];
        size_t n = fread(out, 1, sizeof out - 1, p);
        int status = pclose(p);
        out[n] = '\0';
        free(cmd);
        if (!pc->want) {
            if (status == 0 && !pc->stricter) {
                fprintf(stderr, "  case %zu: git accepts text cordon refuses\n", i);
                bad++;
            }
            continue;
        }
        /* turn git's "key\nvalue\0" / "key\0" records into our "key=value\n" / "key\n" */
        char *got = xstrdup("");
        for (size_t at = 0; at < n;) {
            const char *rec = out + at;
            size_t rlen = strlen(rec);
            const char *nl = memchr(rec, '\n', rlen);
            char *line = nl ? xasprintf("%s%.*s=%s\n", got, (int)(nl - rec), rec, nl + 1)
                            : xasprintf("%s%s\n", got, rec);
            free(got);
            got = line;
            at += rlen + 1;
        }
        if (status != 0 || strcmp(got, pc->want) != 0) {
            fprintf(stderr, "  case %zu: git reads\n%s\n  cordon wants\n%s\n", i, got, pc->want);
            bad++;
        }
        free(got);
    }
    unlink(path);
    free(path);
    CHECK_EQ_INT(bad, 0);
}

struct key_case {
    const char *key, *value;
    const char *why; /* NULL: safe; else a word the reason must contain */
};

static const struct key_case key_cases[] = {
    /* safe: what the sandbox must be able to set */
    {"user.name", "A", NULL},
    {"user.email", "a@b", NULL},
    {"user.signingkey", "ABC", NULL},
    {"remote.origin.url", "https://e.com/x.git", NULL},
    {"remote.origin.pushurl", "/srv/x.git", NULL},
    {"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*", NULL},
    {"branch.main.remote", "origin", NULL},
    {"branch.main.merge", "refs/heads/main", NULL},
    {"submodule.lib.url", "../lib", NULL},
    {"submodule.lib.active", "true", NULL},
    {"submodule.lib.update", "rebase", NULL},
    {"core.autocrlf", "input", NULL},
    {"core.bare", "false", NULL},
    {"core.repositoryformatversion", "0", NULL},
    {"core.filemode", "true", NULL},
    {"core.logallrefupdates", "true", NULL},
    {"core.fsmonitor", "false", NULL},
    {"core.fsmonitor", "true", NULL},
    {"core.fsmonitor", NULL, NULL},
    {"pull.rebase", "true", NULL},
    {"push.default", "simple", NULL},
    {"push.autosetupremote", "true", NULL},
    {"init.defaultbranch", "main", NULL},
    {"alias.st", "status -sb", NULL},
    {"pager.log", "false", NULL},
    {"pager.branch", NULL, NULL},
    {"protocol.allow", "never", NULL},
    {"protocol.file.allow", "always", NULL},
    {"protocol.ext.allow", "never", NULL},
    {"url.https://github.com/.insteadof", "gh:", NULL},
    {"diff.tool", "vimdiff", NULL},
    {"merge.tool", "meld", NULL},
    {"diff.lua.xfuncname", "^function", NULL},
    {"merge.ours.name", "keep ours", NULL},
    {"credential.usehttppath", "true", NULL},
    {"core.x.hookspath", "/tmp", NULL}, /* not core.hooksPath: git reads no such key */
    /* code-running */
    {"core.hookspath", ".husky", "hooks"},
    {"core.hooksPath", ".husky", "hooks"},
    {"core.fsmonitor", "./watch.sh", "program"},
    {"core.sshcommand", "ssh -i k", "ssh"},
    {"core.gitproxy", "proxy.sh", "git://"},
    {"core.pager", "less", "pager"},
    {"core.editor", "vim", "editor"},
    {"core.askpass", "/bin/ask", "passwords"},
    {"core.alternaterefscommand", "x", "alternates"},
    {"sequence.editor", "vim", "rebase"},
    {"diff.external", "x", "diff"},
    {"diff.pdf.textconv", "pdftotext", "convert"},
    {"diff.Pdf.command", "x", "diff driver"},
    {"difftool.x.cmd", "x", "difftool"},
    {"difftool.x.path", "x", "difftool"},
    {"mergetool.x.cmd", "x", "mergetool"},
    {"mergetool.x.path", "x", "mergetool"},
    {"merge.custom.driver", "x %O %A %B", "merge driver"},
    {"filter.lfs.clean", "git-lfs clean -- %f", "adds"},
    {"filter.lfs.smudge", "git-lfs smudge -- %f", "checks out"},
    {"filter.lfs.process", "git-lfs filter-process", "filter"},
    {"credential.helper", "store", "credential"},
    {"credential.https://e.com.helper", "store", "credential"},
    {"gpg.program", "gpg2", "sign"},
    {"gpg.ssh.program", "ssh-keygen", "sign"},
    {"gpg.x509.program", "gpgsm", "sign"},
    {"gpg.ssh.defaultkeycommand", "ssh-add -L", "key"},
    {"alias.x", "!rm -rf ~", "alias"},
    {"alias.x", "  !sh", "alias"},
    {"include.path", "/x", "another file"},
    {"includeif.gitdir:/x/.path", "/y", "another file"},
    {"uploadpack.packobjectshook", "x", "pack-objects"},
    {"remote.origin.uploadpack", "touch /x; git-upload-pack", "fetch"},
    {"remote.origin.receivepack", "x", "push"},
    {"remote.origin.url", "ext::sh -c touch% /x", "transport"},
    {"remote.origin.pushurl", "EXT::sh", "transport"},
    {"submodule.lib.url", "ext::sh -c x", "transport"},
    {"submodule.lib.update", "!sh -c x", "submodule"},
    {"protocol.allow", "always", "ext::"},
    {"protocol.ext.allow", "user", "ext::"},
    {"url.ext::sh -c x.insteadof", "https://", "ext::"},
    {"man.viewer", "x", "help"},
    {"man.x.cmd", "x", "help"},
    {"man.x.path", "x", "help"},
    {"web.browser", "firefox", "program"},
    {"help.browser", "firefox", "program"},
    {"browser.x.cmd", "x", "browser"},
    {"browser.x.path", "x", "browser"},
    {"instaweb.httpd", "x", "web server"},
    {"instaweb.browser", "x", "instaweb"},
    {"pager.log", "less -S", "pager"},
    {"interactive.difffilter", "diff-highlight", "add -p"},
    {"sendemail.smtpserver", "/usr/bin/x", "send-email"},
    {"sendemail.tocmd", "x", "send-email"},
    {"sendemail.work.sendmailcmd", "x", "send-email"},
    {"imap.tunnel", "x", "imap-send"},
    {"guitool.x.cmd", "x", "gui"},
    {"trailer.sign.command", "x", "interpret-trailers"},
    {"trailer.sign.cmd", "x", "interpret-trailers"},
    {"hook.lint.command", "x", "hooks"},
    {"hook.lint.event", "pre-commit", "hooks"},
    {"gc.recentobjectshook", "x", "gc"},
    {"init.templatedir", "/x", "hooks"},
    {"svn.authorsprog", "x", "svn"},
    {"svn-remote.svn.authorsprog", "x", "svn"},
    {"nodot", "x", "not a key"},
};

static void test_key_table(void)
{
    int bad = 0;
    for (size_t i = 0; i < ARRAY_LEN(key_cases); i++) {
        const struct key_case *kc = &key_cases[i];
        const char *why = git_config_key_runs_code(kc->key, kc->value);
        bool ok = kc->why ? why && strstr(why, kc->why) : !why;
        if (!ok) {
            fprintf(stderr, "  %s=%s: got \"%s\", want %s%s\n", kc->key,
                    kc->value ? kc->value : "(bare)", why ? why : "(safe)",
                    kc->why ? "a reason with " : "safe", kc->why ? kc->why : "");
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

TEST_MAIN({"parse table", test_parse_table},
          {"a syntax error names its line", test_error_names_its_line},
          {"entries keep their lines; len bounds the text", test_line_numbers_and_length},
          {"a NUL byte is a syntax error", test_nul_byte_is_an_error},
          {"the parse table reads the same in real git", test_parse_table_matches_git},
          {"code-running key table", test_key_table})
