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
    {"[Remote \"Origin\"]\n\tURL = x\n", "remote.Origin.url=x\n"},
    {"[branch \"Main\"]\n\tRemote = origin\n[branch \"main\"]\n\tremote = up\n",
     "branch.Main.remote=origin\nbranch.main.remote=up\n"},
    {"[branch.Main]\n\tremote = origin\n", "branch.main.remote=origin\n"},
    {"[remote\t\"o\"]\n\turl = x\n", "remote.o.url=x\n"},
    {"[remote \"a.b\"]\n\turl = x\n", "remote.a.b.url=x\n"},
    {"[user]\n\tname = \"one \\\n two\"\n", "user.name=one  two\n"},
    {"[user] name = a ; c\n  email = b\n", "user.name=a\nuser.email=b\n"},
    {"[core]\n[user]\nname=a\n[core]\nbare\n", "user.name=a\ncore.bare\n"},
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

/* The allowlist: an entry added to a config that defines remote "origin" (so that a branch's
 * remote is a name), and the verdict. */
struct judge_case {
    const char *key, *value;
    enum git_config_verdict want;
    const char *detail; /* ALLOW: NULL; REFUSE: a word of the reason; LOCAL_PATH, WORK_TREE:
                         * the path handed to the caller */
};

static const struct judge_case judge_cases[] = {
    /* everyday settings */
    {"user.name", "Sandbox Person", GIT_CONFIG_ALLOW, NULL},
    {"user.email", "a@example.com", GIT_CONFIG_ALLOW, NULL},
    {"user.signingkey", "ABCDEF0123456789", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.url", "https://example.com/x.git", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.url", "http://example.com/x.git", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.url", "ssh://git@example.com/x.git", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.url", "git://example.com/x.git", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.url", "git@github.com:o/x.git", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.pushurl", "example.com:x.git", GIT_CONFIG_ALLOW, NULL},
    {"remote.Origin.url", "/srv/x.git", GIT_CONFIG_LOCAL_PATH, "/srv/x.git"},
    {"remote.origin.url", "file:///srv/x.git", GIT_CONFIG_LOCAL_PATH, "/srv/x.git"},
    {"remote.origin.url", "../x.git", GIT_CONFIG_LOCAL_PATH, "../x.git"},
    {"remote.origin.url", "./a:b", GIT_CONFIG_LOCAL_PATH, "./a:b"},
    {"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.push", "refs/heads/main:refs/heads/main", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.tagopt", "--no-tags", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.prune", "true", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.promisor", "true", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.partialclonefilter", "blob:none", GIT_CONFIG_ALLOW, NULL},
    {"branch.main.remote", "origin", GIT_CONFIG_ALLOW, NULL},
    {"branch.x.remote", ".", GIT_CONFIG_ALLOW, NULL},
    {"branch.main.merge", "refs/heads/main", GIT_CONFIG_ALLOW, NULL},
    {"branch.main.rebase", "merges", GIT_CONFIG_ALLOW, NULL},
    {"branch.main.pushremote", "origin", GIT_CONFIG_ALLOW, NULL},
    {"branch.main.description", "work on the parser", GIT_CONFIG_ALLOW, NULL},
    {"remote.pushdefault", "origin", GIT_CONFIG_ALLOW, NULL},
    {"submodule.lib.url", "https://example.com/lib.git", GIT_CONFIG_ALLOW, NULL},
    {"submodule.lib.url", "/srv/lib", GIT_CONFIG_LOCAL_PATH, "/srv/lib"},
    {"submodule.lib.active", "true", GIT_CONFIG_ALLOW, NULL},
    {"submodule.lib.branch", "main", GIT_CONFIG_ALLOW, NULL},
    {"submodule.lib.update", "rebase", GIT_CONFIG_ALLOW, NULL},
    {"submodule.active", ".", GIT_CONFIG_ALLOW, NULL},
    {"core.autocrlf", "input", GIT_CONFIG_ALLOW, NULL},
    {"core.autocrlf", "true", GIT_CONFIG_ALLOW, NULL},
    {"core.eol", "lf", GIT_CONFIG_ALLOW, NULL},
    {"core.safecrlf", "warn", GIT_CONFIG_ALLOW, NULL},
    {"core.repositoryformatversion", "0", GIT_CONFIG_ALLOW, NULL},
    {"core.filemode", "true", GIT_CONFIG_ALLOW, NULL},
    {"core.bare", "false", GIT_CONFIG_ALLOW, NULL},
    {"core.logallrefupdates", "true", GIT_CONFIG_ALLOW, NULL},
    {"core.ignorecase", "true", GIT_CONFIG_ALLOW, NULL},
    {"core.symlinks", "false", GIT_CONFIG_ALLOW, NULL},
    {"core.sparsecheckout", "true", GIT_CONFIG_ALLOW, NULL},
    {"core.worktree", "../../../lib", GIT_CONFIG_WORK_TREE, "../../../lib"},
    {"extensions.objectformat", "sha256", GIT_CONFIG_ALLOW, NULL},
    {"extensions.worktreeconfig", "true", GIT_CONFIG_ALLOW, NULL},
    {"extensions.partialclone", "origin", GIT_CONFIG_ALLOW, NULL},
    {"init.defaultbranch", "trunk", GIT_CONFIG_ALLOW, NULL},
    {"pull.rebase", "true", GIT_CONFIG_ALLOW, NULL},
    {"pull.ff", "only", GIT_CONFIG_ALLOW, NULL},
    {"push.default", "simple", GIT_CONFIG_ALLOW, NULL},
    {"push.autosetupremote", "true", GIT_CONFIG_ALLOW, NULL},
    {"fetch.prune", "true", GIT_CONFIG_ALLOW, NULL},
    {"rerere.enabled", "true", GIT_CONFIG_ALLOW, NULL},
    {"merge.conflictstyle", "zdiff3", GIT_CONFIG_ALLOW, NULL},
    {"diff.algorithm", "histogram", GIT_CONFIG_ALLOW, NULL},
    {"color.ui", "auto", GIT_CONFIG_ALLOW, NULL},
    {"lfs.repositoryformatversion", "0", GIT_CONFIG_ALLOW, NULL},
    {"lfs.url", "https://example.com/lfs", GIT_CONFIG_REFUSE, "not on the list"},
    /* the attacks of issue 26 and their kin */
    {"alias.st", "-c core.fsmonitor=./x status", GIT_CONFIG_REFUSE, "not on the list"},
    {"alias.f", "fetch --upload-pack=./x", GIT_CONFIG_REFUSE, "not on the list"},
    {"alias.x", "!sh", GIT_CONFIG_REFUSE, "shell command"},
    {"http.cookiefile", "/root/.bash_aliases", GIT_CONFIG_REFUSE, "not on the list"},
    {"http.savecookies", "true", GIT_CONFIG_REFUSE, "not on the list"},
    {"url.https://evil.example/.insteadof", "https://github.com/", GIT_CONFIG_REFUSE, "list"},
    {"http.proxy", "http://127.0.0.2:8080", GIT_CONFIG_REFUSE, "not on the list"},
    {"http.sslverify", "false", GIT_CONFIG_REFUSE, "not on the list"},
    {"http.https://github.com.sslcainfo", "./ca.pem", GIT_CONFIG_REFUSE, "not on the list"},
    {"include.path", "../x", GIT_CONFIG_REFUSE, "another file"},
    {"includeif.onbranch:main.path", "../x", GIT_CONFIG_REFUSE, "another file"},
    {"core.fsmonitor", "./watch.sh", GIT_CONFIG_REFUSE, "git status"},
    {"core.fsmonitor", "false", GIT_CONFIG_REFUSE, "not on the list"},
    {"core.hookspath", ".husky", GIT_CONFIG_REFUSE, "hooks"},
    {"core.sshcommand", "ssh", GIT_CONFIG_REFUSE, "ssh"},
    {"gpg.program", "gpg", GIT_CONFIG_REFUSE, "sign"},
    {"filter.lfs.smudge", "git-lfs smudge %f", GIT_CONFIG_REFUSE, "checks out"},
    {"credential.helper", "store", GIT_CONFIG_REFUSE, "credential"},
    {"protocol.file.allow", "always", GIT_CONFIG_REFUSE, "not on the list"},
    {"submodule.lib.update", "!sh -c x", GIT_CONFIG_REFUSE, "value"},
    {"submodule.lib.path", "lib", GIT_CONFIG_REFUSE, "not on the list"},
    {"remote.origin.uploadpack", "./x", GIT_CONFIG_REFUSE, "fetch"},
    {"remote.origin.receivepack", "./x", GIT_CONFIG_REFUSE, "push"},
    {"remote.origin.mirror", "true", GIT_CONFIG_REFUSE, "not on the list"},
    {"branch.main.mergeoptions", "-s ours", GIT_CONFIG_REFUSE, "not on the list"},
    {"core.excludesfile", "./x", GIT_CONFIG_REFUSE, "not on the list"},
    {"gc.auto", "0", GIT_CONFIG_REFUSE, "not on the list"},
    {"safe.directory", "*", GIT_CONFIG_REFUSE, "not on the list"},
    {"feature.experimental", "true", GIT_CONFIG_REFUSE, "not on the list"},
    {"newgit.somethingnew", "x", GIT_CONFIG_REFUSE, "not on the list"},
    {"extensions.someday", "true", GIT_CONFIG_REFUSE, "not on the list"},
    {"user.x.name", "a", GIT_CONFIG_REFUSE, "not on the list"},
    {"remote.url", "https://example.com/x", GIT_CONFIG_REFUSE, "not on the list"},
    {"nodot", "x", GIT_CONFIG_REFUSE, "not a key"},
    /* values a listed key does not take */
    {"core.bare", "maybe", GIT_CONFIG_REFUSE, "value"},
    {"core.repositoryformatversion", "2", GIT_CONFIG_REFUSE, "value"},
    {"push.default", "everything", GIT_CONFIG_REFUSE, "value"},
    {"remote.origin.fetch", "--upload-pack=x", GIT_CONFIG_REFUSE, "value"},
    {"remote.origin.fetch", "a b", GIT_CONFIG_REFUSE, "value"},
    {"remote.origin.tagopt", "--upload-pack=x", GIT_CONFIG_REFUSE, "value"},
    {"user.name", "a\x1b]0;x\x07", GIT_CONFIG_REFUSE, "value"},
    {"init.defaultbranch", "-x", GIT_CONFIG_REFUSE, "value"},
    {"remote.\x1b[2J.url", "https://e.com/x", GIT_CONFIG_REFUSE, "control"},
    {"remote..url", "https://e.com/x", GIT_CONFIG_REFUSE, "empty"},
    /* URLs */
    {"remote.origin.url", "ext::sh -c touch% /x", GIT_CONFIG_REFUSE, "transport helper"},
    {"remote.origin.pushurl", "fd::3", GIT_CONFIG_REFUSE, "transport helper"},
    {"remote.origin.url", "testgit::/x", GIT_CONFIG_REFUSE, "transport helper"},
    {"submodule.lib.url", "ext::sh -c x", GIT_CONFIG_REFUSE, "transport helper"},
    {"remote.origin.url", "ftp://example.com/x", GIT_CONFIG_REFUSE, "scheme"},
    {"remote.origin.url", "foo://example.com/x", GIT_CONFIG_REFUSE, "scheme"},
    {"remote.origin.url", "HTTPS://example.com/x", GIT_CONFIG_REFUSE, "scheme"},
    {"remote.origin.url", "ssh://-oProxyCommand=x/y", GIT_CONFIG_REFUSE, "option"},
    {"remote.origin.url", "ssh://%2doProxyCommand=x/y", GIT_CONFIG_REFUSE, "option"},
    {"remote.origin.url", "-oProxyCommand=x:y", GIT_CONFIG_REFUSE, "option"},
    {"remote.origin.url", "u@-x:y", GIT_CONFIG_REFUSE, "option"},
    {"remote.origin.url", "ssh://host:-oProxyCommand=x/y", GIT_CONFIG_REFUSE, "option"},
    {"remote.origin.url", "ssh://host:22/y", GIT_CONFIG_ALLOW, NULL},
    {"remote.origin.url", "file://host/x", GIT_CONFIG_REFUSE, "file://"},
    {"remote.origin.url", "file:///x%2fy", GIT_CONFIG_REFUSE, "file://"},
    {"remote.origin.url", "~/x.git", GIT_CONFIG_REFUSE, "~"},
    {"remote.origin.url", "https://e.com/x\ny", GIT_CONFIG_REFUSE, "control"},
    {"remote.origin.url", "", GIT_CONFIG_REFUSE, "empty"},
    /* a branch's remote: a remote the config defines, ".", else read as a URL, as git does */
    {"branch.main.remote", "evil.git", GIT_CONFIG_LOCAL_PATH, "evil.git"},
    {"branch.main.remote", "ext::sh -c x", GIT_CONFIG_REFUSE, "transport helper"},
    {"branch.main.remote", "https://example.com/x", GIT_CONFIG_ALLOW, NULL},
    {"branch.main.pushremote", "/srv/x", GIT_CONFIG_LOCAL_PATH, "/srv/x"},
    {"branch.main.remote", "nourl", GIT_CONFIG_LOCAL_PATH, "nourl"},
};

static const char *verdict_name(enum git_config_verdict v)
{
    switch (v) {
    case GIT_CONFIG_ALLOW:
        return "allow";
    case GIT_CONFIG_REFUSE:
        return "refuse";
    case GIT_CONFIG_LOCAL_PATH:
        return "local path";
    case GIT_CONFIG_WORK_TREE:
        return "work tree";
    }
    return "?";
}

static void test_judge_table(void)
{
    const char *base = "[remote \"origin\"]\n\turl = https://example.com/x.git\n"
                       "[remote \"nourl\"]\n\tfetch = +refs/heads/*:refs/remotes/nourl/*\n";
    int bad = 0;
    for (size_t i = 0; i < ARRAY_LEN(judge_cases); i++) {
        const struct judge_case *jc = &judge_cases[i];
        struct git_config c = {0};
        char err[200];
        CHECK_EQ_INT(git_config_parse(base, strlen(base), &c, err, sizeof err), 0);
        struct git_config_entry e = {.key = (char *)jc->key, .value = (char *)jc->value};
        const char *why = (const char *)1, *path = (const char *)1;
        enum git_config_verdict v = git_config_judge(&c, &e, &why, &path);
        bool ok = v == jc->want;
        if (ok && v == GIT_CONFIG_ALLOW)
            ok = !why && !path;
        else if (ok && v == GIT_CONFIG_REFUSE)
            ok = why && strstr(why, jc->detail) && !path;
        else if (ok)
            ok = !why && path && strcmp(path, jc->detail) == 0;
        if (!ok) {
            fprintf(stderr, "  %s=%s: got %s (%s, %s), want %s (%s)\n", jc->key, jc->value,
                    verdict_name(v), why && why != (const char *)1 ? why : "-",
                    path && path != (const char *)1 ? path : "-", verdict_name(jc->want),
                    jc->detail ? jc->detail : "-");
            bad++;
        }
        git_config_free(&c);
    }
    CHECK_EQ_INT(bad, 0);
}

/* A kept entry is refused only when the write takes the url of the remote it names. */
static void test_judge_kept(void)
{
    const char *old_text = "[remote \"origin\"]\n\turl = /srv/x.git\n"
                           "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n"
                           "[user]\n\tname = A\n";
    const char *cases[][2] = {
        /* the new text, and a word of the reason the kept branch.main.remote gets (or "") */
        {"[remote \"origin\"]\n\tfetch = x\n[branch \"main\"]\n\tremote = origin\n", "path"},
        {"[branch \"main\"]\n\tremote = origin\n", "path"},
        {"[remote \"origin\"]\n\turl = /srv/y.git\n[branch \"main\"]\n\tremote = origin\n", ""},
        {"[remote \"origin\"]\n\turl = /srv/x.git\n[branch \"main\"]\n\tremote = origin\n", ""},
    };
    struct git_config old = {0};
    char err[200];
    CHECK_EQ_INT(git_config_parse(old_text, strlen(old_text), &old, err, sizeof err), 0);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct git_config next = {0};
        CHECK_EQ_INT(git_config_parse(cases[i][0], strlen(cases[i][0]), &next, err, sizeof err), 0);
        const char *why = NULL;
        for (size_t j = 0; j < next.len; j++)
            if (strcmp(next.items[j].key, "branch.main.remote") == 0)
                why = git_config_judge_kept(&old, &next, &next.items[j]);
        if (*cases[i][1])
            CHECK(why && strstr(why, cases[i][1]));
        else
            CHECK(!why);
        git_config_free(&next);
    }
    /* a kept entry of no remote-naming key is never refused */
    struct git_config_entry user = {.key = (char *)"user.name", .value = (char *)"A"};
    CHECK(!git_config_judge_kept(&old, &(struct git_config){0}, &user));
    git_config_free(&old);
}

/* Whatever the key, an unlisted one is refused: every key of the code-running table is. */
static void test_code_running_keys_refused(void)
{
    struct git_config c = {0};
    int bad = 0;
    for (size_t i = 0; i < ARRAY_LEN(key_cases); i++) {
        const struct key_case *kc = &key_cases[i];
        if (!kc->why)
            continue;
        struct git_config_entry e = {.key = (char *)kc->key, .value = (char *)kc->value};
        const char *why, *path;
        enum git_config_verdict v = git_config_judge(&c, &e, &why, &path);
        if (v != GIT_CONFIG_REFUSE) {
            fprintf(stderr, "  %s=%s: %s\n", kc->key, kc->value, verdict_name(v));
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
          {"code-running key table", test_key_table},
          {"the allowlist: key and value to verdict", test_judge_table},
          {"every code-running key is refused by the allowlist", test_code_running_keys_refused},
          {"a kept branch remote whose url the write removes is refused", test_judge_kept})
