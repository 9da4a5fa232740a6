/* git_config.c — see git_config.h. Reads git's config syntax the way git's own reader does
 * (config.c: sections, "[a.b]" and [a "b"] subsections, keys, quoted values, escapes,
 * continuation lines, comments, CRLF line ends); judges an entry against the allowlist of
 * settings written for a sandboxed command (key, then value by the key's rule; a remote URL
 * read as git's transport_get reads it); and keeps the table of keys that make git run a
 * program or load code (the reasons the refusals name; the repository guard's comparison).
 * Uses base/util (allocation). Must never: touch the file system (a local path is the
 * caller's to judge, on the host), write, follow an include, or guess: where this reader and
 * git could disagree about a byte, it is a syntax error (the caller then refuses); a key not
 * listed, or a value its rule does not take, is refused. */
#include "base/git_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

/* The text being read: git's get_next_char() reads "\r\n" as "\n" and the end as "\n". */
struct reader {
    const char *s;
    size_t len, pos;
    int line;
    bool eof;
};

static int next_char(struct reader *r)
{
    if (r->pos >= r->len) {
        r->eof = true;
        return '\n'; /* the last line need not end with a newline */
    }
    unsigned char c = (unsigned char)r->s[r->pos++];
    if (c == '\r' && r->pos < r->len && r->s[r->pos] == '\n')
        c = (unsigned char)r->s[r->pos++];
    if (c == '\n')
        r->line++;
    return c;
}

/* A growable NUL-terminated buffer. */
struct buf {
    char *s;
    size_t len, cap;
};

static void buf_add(struct buf *b, char c)
{
    if (b->len + 2 > b->cap) {
        b->cap = b->cap ? b->cap * 2 : 64;
        b->s = xrealloc(b->s, b->cap);
    }
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
}

static bool is_key_char(int c)
{
    return isalnum(c) || c == '-';
}

struct parse {
    struct reader r;
    struct buf section; /* "core" or "remote.origin": what prefixes every key below it */
    char *err;
    size_t errlen;
    int err_line;
};

static int fail(struct parse *p, const char *fmt, ...) CORDON_PRINTF(2, 3);
static int fail(struct parse *p, const char *fmt, ...)
{
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (p->err && p->errlen)
        snprintf(p->err, p->errlen, "line %d: %s", p->err_line, why);
    return -EINVAL;
}

/* After "[section": a space, then "subsection" in quotes, then ']'. git keeps the subsection
 * as written; inside the quotes a backslash takes the next character literally. */
static int parse_subsection(struct parse *p)
{
    int c;
    do
        c = next_char(&p->r);
    while (c == ' ' || c == '\t');
    if (c != '"')
        return fail(p, "a space in a section name (a subsection must be in quotes)");
    buf_add(&p->section, '.');
    for (;;) {
        c = next_char(&p->r);
        if (c == '\n' || p->r.eof)
            return fail(p, "unterminated subsection name");
        if (c == '"')
            break;
        if (c == '\\') {
            c = next_char(&p->r);
            if (c == '\n' || p->r.eof)
                return fail(p, "unterminated subsection name");
        }
        if (c == '\0')
            return fail(p, "a NUL byte in a subsection name");
        buf_add(&p->section, (char)c);
    }
    if (next_char(&p->r) != ']')
        return fail(p, "text after a subsection name before ']'");
    return 0;
}

/* "[" has been read: the section name up to ']' (lower-cased, dots allowed: the old "[a.B]"
 * syntax, which git lower-cases whole) or up to a space and a quoted subsection. */
static int parse_section(struct parse *p)
{
    p->section.len = 0;
    if (p->section.s)
        p->section.s[0] = '\0';
    for (;;) {
        int c = next_char(&p->r);
        if (p->r.eof)
            return fail(p, "unterminated section header");
        if (c == ']')
            break;
        if (isspace(c)) {
            if (p->section.len == 0)
                return fail(p, "empty section name");
            return parse_subsection(p);
        }
        if (!is_key_char(c) && c != '.')
            return fail(p, "a '%c' in a section name", isprint(c) ? c : '?');
        buf_add(&p->section, (char)tolower(c));
    }
    if (p->section.len == 0)
        return fail(p, "empty section name");
    return 0;
}

/* After '=': the value to the end of its line, as git's parse_value() reads it. */
static int parse_value(struct parse *p, struct buf *v)
{
    bool quote = false, comment = false;
    size_t space = 0;
    buf_add(v, 'x'); /* a value, even empty, is never NULL */
    v->len = 0;
    v->s[0] = '\0';
    for (;;) {
        int c = next_char(&p->r);
        if (c == '\n') {
            if (quote)
                return fail(p, "unterminated quoted value");
            return 0;
        }
        if (comment)
            continue;
        if (c == '\0')
            return fail(p, "a NUL byte in a value");
        if (!quote) {
            if (isspace(c)) {
                if (v->len)
                    space++; /* inner spaces are kept, trailing ones dropped */
                continue;
            }
            if (c == ';' || c == '#') {
                comment = true;
                continue;
            }
        }
        for (; space; space--)
            buf_add(v, ' ');
        if (c == '\\') {
            c = next_char(&p->r);
            if (p->r.eof)
                return fail(p, "a backslash at the end of the file");
            switch (c) {
            case '\n':
                continue; /* a continuation line */
            case 't':
                c = '\t';
                break;
            case 'b':
                c = '\b';
                break;
            case 'n':
                c = '\n';
                break;
            case '\\':
            case '"':
                break;
            default:
                return fail(p, "an unknown escape in a value");
            }
            buf_add(v, (char)c);
            continue;
        }
        if (c == '"') {
            quote = !quote;
            continue;
        }
        buf_add(v, (char)c);
    }
}

static void push_entry(struct git_config *out, char *key, char *value, int line)
{
    if (out->len == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 16;
        out->items = xrealloc(out->items, out->cap * sizeof *out->items);
    }
    out->items[out->len++] = (struct git_config_entry){.key = key, .value = value, .line = line};
}

/* c is the first letter of a key: the rest of the name, then '=' and a value, or nothing. */
static int parse_entry(struct parse *p, int c, struct git_config *out)
{
    int rc = 0;
    struct buf key = {0}, value = {0};
    bool has_value = false;
    if (p->section.len == 0) {
        rc = fail(p, "a key before any section header");
        goto out;
    }
    for (size_t i = 0; i < p->section.len; i++)
        buf_add(&key, p->section.s[i]);
    buf_add(&key, '.');
    while (is_key_char(c)) {
        buf_add(&key, (char)tolower(c));
        c = next_char(&p->r);
    }
    while (c == ' ' || c == '\t')
        c = next_char(&p->r);
    if (c != '\n') {
        if (c != '=') {
            rc = fail(p, "a '%c' after a key name (expected '=')", isprint(c) ? c : '?');
            goto out;
        }
        rc = parse_value(p, &value);
        if (rc < 0)
            goto out;
        has_value = true;
    }
    push_entry(out, key.s, has_value ? value.s : NULL, p->err_line);
    key.s = value.s = NULL;
out:
    free(key.s);
    free(value.s);
    return rc;
}

int git_config_parse(const char *text, size_t len, struct git_config *out, char *err, size_t errlen)
{
    int rc = 0;
    struct parse p = {.r = {.s = text, .len = len, .line = 1}, .err = err, .errlen = errlen};
    if (err && errlen)
        err[0] = '\0';
    /* git skips a UTF-8 byte order mark at the start */
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        p.r.pos = 3;
    bool comment = false;
    for (;;) {
        p.err_line = p.r.line;
        int c = next_char(&p.r);
        if (c == '\n') {
            if (p.r.eof)
                break;
            comment = false;
            continue;
        }
        if (comment || isspace(c))
            continue;
        if (c == '#' || c == ';') {
            comment = true;
            continue;
        }
        if (c == '[') {
            rc = parse_section(&p);
            if (rc < 0)
                goto out;
            continue;
        }
        if (!isalpha(c)) {
            rc = fail(&p, c == '\0' ? "a NUL byte" : "a line that is neither a section nor a key");
            goto out;
        }
        rc = parse_entry(&p, c, out);
        if (rc < 0)
            goto out;
        if (p.r.eof)
            break;
    }
out:
    free(p.section.s);
    if (rc < 0)
        git_config_free(out);
    return rc;
}

void git_config_free(struct git_config *c)
{
    for (size_t i = 0; i < c->len; i++) {
        free(c->items[i].key);
        free(c->items[i].value);
    }
    free(c->items);
    *c = (struct git_config){0};
}

/* ---- the judgement ------------------------------------------------------------------- */

/* How a table row matches the subsection: there must be none, there must be one, or either. */
enum sub_rule { SUB_NONE, SUB_ANY, SUB_EITHER };

/* When a matching key runs code: always, only when its value is not a boolean (the key is
 * "true/false, or a program"), only when the value starts with '!' (a shell command), only
 * when it is not "never" (a protocol policy), or when the value starts with "ext::" (git's
 * transport that runs a command). */
enum value_rule { V_ALWAYS, V_NOT_BOOL, V_BANG, V_NOT_NEVER, V_EXT };

struct rule {
    const char *section;
    enum sub_rule sub;
    const char *name; /* NULL: every name in the section */
    enum value_rule when;
    const char *why;
};

/* The keys that make git (or a program git ships: git gui, send-email, instaweb, svn) start a
 * program or read code or more config on the developer's next use of the repository. Names are
 * lower-case, as git compares them. */
static const struct rule rules[] = {
    {"core", SUB_NONE, "hookspath", V_ALWAYS, "runs hooks from that folder"},
    {"core", SUB_NONE, "fsmonitor", V_NOT_BOOL, "runs that program on every git status"},
    {"core", SUB_NONE, "sshcommand", V_ALWAYS, "runs that command in place of ssh"},
    {"core", SUB_NONE, "gitproxy", V_ALWAYS, "runs that command to connect to git:// remotes"},
    {"core", SUB_NONE, "pager", V_ALWAYS, "runs that command as the pager"},
    {"core", SUB_NONE, "editor", V_ALWAYS, "runs that command as the editor"},
    {"core", SUB_NONE, "askpass", V_ALWAYS, "runs that program to ask for passwords"},
    {"core", SUB_NONE, "alternaterefscommand", V_ALWAYS,
     "runs that command to list the refs of alternates"},
    {"sequence", SUB_NONE, "editor", V_ALWAYS, "runs that command as the rebase editor"},
    {"diff", SUB_NONE, "external", V_ALWAYS, "runs that program for every diff"},
    {"diff", SUB_ANY, "textconv", V_ALWAYS, "runs that program to convert files for diff"},
    {"diff", SUB_ANY, "command", V_ALWAYS, "runs that program as a diff driver"},
    {"difftool", SUB_ANY, "cmd", V_ALWAYS, "runs that command from git difftool"},
    {"difftool", SUB_ANY, "path", V_ALWAYS, "runs that program from git difftool"},
    {"mergetool", SUB_ANY, "cmd", V_ALWAYS, "runs that command from git mergetool"},
    {"mergetool", SUB_ANY, "path", V_ALWAYS, "runs that program from git mergetool"},
    {"merge", SUB_ANY, "driver", V_ALWAYS, "runs that command as a merge driver"},
    {"filter", SUB_ANY, "clean", V_ALWAYS, "runs that command on files git adds"},
    {"filter", SUB_ANY, "smudge", V_ALWAYS, "runs that command on files git checks out"},
    {"filter", SUB_ANY, "process", V_ALWAYS, "runs that program as a long-running filter"},
    {"credential", SUB_EITHER, "helper", V_ALWAYS, "runs that program as a credential helper"},
    {"gpg", SUB_NONE, "program", V_ALWAYS, "runs that program to sign and verify"},
    {"gpg", SUB_ANY, "program", V_ALWAYS, "runs that program to sign and verify"},
    {"gpg", SUB_ANY, "defaultkeycommand", V_ALWAYS, "runs that command to pick a signing key"},
    {"alias", SUB_EITHER, NULL, V_BANG, "runs that shell command as a git alias"},
    {"include", SUB_EITHER, NULL, V_ALWAYS, "loads more settings from another file"},
    {"includeif", SUB_EITHER, NULL, V_ALWAYS, "loads more settings from another file"},
    {"uploadpack", SUB_NONE, "packobjectshook", V_ALWAYS,
     "runs that command in place of pack-objects"},
    {"remote", SUB_ANY, "uploadpack", V_ALWAYS, "runs that program on fetch from local remotes"},
    {"remote", SUB_ANY, "receivepack", V_ALWAYS, "runs that program on push to local remotes"},
    {"remote", SUB_ANY, "url", V_EXT, "runs that command as the transport"},
    {"remote", SUB_ANY, "pushurl", V_EXT, "runs that command as the transport"},
    {"submodule", SUB_ANY, "url", V_EXT, "runs that command as the transport"},
    {"submodule", SUB_ANY, "update", V_BANG, "runs that shell command on submodule update"},
    {"protocol", SUB_NONE, "allow", V_NOT_NEVER, "allows the ext:: transport, which runs commands"},
    {"man", SUB_NONE, "viewer", V_ALWAYS, "names the program git help starts"},
    {"man", SUB_ANY, "cmd", V_ALWAYS, "runs that command from git help"},
    {"man", SUB_ANY, "path", V_ALWAYS, "runs that program from git help"},
    {"web", SUB_NONE, "browser", V_ALWAYS, "names the program git web--browse starts"},
    {"help", SUB_NONE, "browser", V_ALWAYS, "names the program git help --web starts"},
    {"browser", SUB_ANY, "cmd", V_ALWAYS, "runs that command as the web browser"},
    {"browser", SUB_ANY, "path", V_ALWAYS, "runs that program as the web browser"},
    {"instaweb", SUB_NONE, "httpd", V_ALWAYS, "runs that web server from git instaweb"},
    {"instaweb", SUB_NONE, "browser", V_ALWAYS, "names the program git instaweb starts"},
    {"pager", SUB_NONE, NULL, V_NOT_BOOL, "runs that command as the pager"},
    {"interactive", SUB_NONE, "difffilter", V_ALWAYS, "runs that filter on git add -p"},
    {"sendemail", SUB_EITHER, NULL, V_ALWAYS,
     "git send-email runs the programs its settings name: sendmailCmd, toCmd, smtpServer"},
    {"imap", SUB_NONE, "tunnel", V_ALWAYS, "runs that command from git imap-send"},
    {"guitool", SUB_ANY, "cmd", V_ALWAYS, "runs that command from git gui"},
    {"trailer", SUB_ANY, "command", V_ALWAYS, "runs that command from git interpret-trailers"},
    {"trailer", SUB_ANY, "cmd", V_ALWAYS, "runs that command from git interpret-trailers"},
    {"hook", SUB_EITHER, NULL, V_ALWAYS, "defines hooks that git runs"},
    {"gc", SUB_NONE, "recentobjectshook", V_ALWAYS, "runs that command on every gc"},
    {"init", SUB_NONE, "templatedir", V_ALWAYS, "git init copies hooks from that folder"},
    {"svn", SUB_NONE, "authorsprog", V_ALWAYS, "runs that program from git svn"},
    {"svn-remote", SUB_ANY, "authorsprog", V_ALWAYS, "runs that program from git svn"},
};

/* Is value one git reads as a boolean (git_parse_maybe_bool)? A bare key (NULL) is true. */
static bool value_is_bool(const char *v)
{
    static const char *const words[] = {"true", "yes", "on", "false", "no", "off"};
    if (!v || !*v)
        return true;
    for (size_t i = 0; i < ARRAY_LEN(words); i++)
        if (strcasecmp(v, words[i]) == 0)
            return true;
    const char *d = v + (*v == '-' || *v == '+');
    if (!*d)
        return false;
    for (; *d; d++)
        if (!isdigit((unsigned char)*d))
            return false;
    return true;
}

static bool value_matches(enum value_rule when, const char *value)
{
    const char *v = value ? value : "";
    switch (when) {
    case V_ALWAYS:
        return true;
    case V_NOT_BOOL:
        return !value_is_bool(value);
    case V_BANG:
        while (isspace((unsigned char)*v))
            v++;
        return *v == '!';
    case V_NOT_NEVER:
        return strcasecmp(v, "never") != 0;
    case V_EXT:
        while (isspace((unsigned char)*v))
            v++;
        return strncasecmp(v, "ext::", 5) == 0;
    }
    return true;
}

const char *git_config_key_runs_code(const char *key, const char *value)
{
    /* section = up to the first dot, name = after the last, subsection = between (it may
     * itself hold dots: credential.https://example.com.helper) */
    const char *first = strchr(key, '.'), *last = strrchr(key, '.');
    if (!first)
        return "is not a key git can read"; /* fail closed: the caller made it up */
    size_t section_len = (size_t)(first - key);
    bool has_sub = last != first;
    const char *name = last + 1;
    const char *sub = first + 1;
    size_t sub_len = has_sub ? (size_t)(last - sub) : 0;

    /* url.<base>.insteadOf rewrites URLs to <base>: an "ext::" base runs a command */
    if (section_len == 3 && strncasecmp(key, "url", 3) == 0 && has_sub && value_matches(V_EXT, sub))
        return "rewrites URLs to the ext:: transport, which runs commands";
    /* protocol.ext.allow: of the per-transport policies only ext's runs commands */
    if (section_len == 8 && strncasecmp(key, "protocol", 8) == 0 && sub_len == 3 &&
        strncasecmp(sub, "ext", 3) == 0 && strcasecmp(name, "allow") == 0 &&
        value_matches(V_NOT_NEVER, value))
        return "allows the ext:: transport, which runs commands";

    for (size_t i = 0; i < ARRAY_LEN(rules); i++) {
        const struct rule *r = &rules[i];
        if (strlen(r->section) != section_len || strncasecmp(key, r->section, section_len) != 0)
            continue;
        if ((r->sub == SUB_NONE && has_sub) || (r->sub == SUB_ANY && !has_sub))
            continue;
        if (r->name && strcasecmp(name, r->name) != 0)
            continue;
        if (value_matches(r->when, value))
            return r->why;
    }
    return NULL;
}

/* ---- the allowlist ---------------------------------------------------------------------- */

/* What a listed key's value must be. */
enum value_kind {
    VK_TEXT,          /* free text (a name, an address, a description): no control characters */
    VK_TOKEN,         /* a ref, refspec, branch, filter spec: printable, no space, no leading '-' */
    VK_BOOL,          /* a boolean as git reads it */
    VK_WORDS,         /* one of words (case-insensitive, '|'-separated) */
    VK_BOOL_OR_WORDS, /* a boolean or one of words */
    VK_URL,           /* git_config_url */
    VK_REMOTE,        /* ".", a remote this config defines with a url, else git_config_url */
    VK_WORK_TREE,     /* the caller's rule (GIT_CONFIG_WORK_TREE) */
};

struct allowed {
    const char *section;
    enum sub_rule sub; /* SUB_NONE or SUB_ANY */
    const char *name;
    enum value_kind kind;
    const char *words;
};

/* The settings a team needs day to day, and what git itself writes at init, clone, remote add,
 * push -u, checkout --track, submodule add and sparse-checkout. Each row's reasoning is in
 * docs/git.md ("The settings written"); a key not here is refused until it is listed. */
static const struct allowed allowed[] = {
    {"user", SUB_NONE, "name", VK_TEXT, NULL},
    {"user", SUB_NONE, "email", VK_TEXT, NULL},
    {"user", SUB_NONE, "signingkey", VK_TEXT, NULL},
    {"remote", SUB_ANY, "url", VK_URL, NULL},
    {"remote", SUB_ANY, "pushurl", VK_URL, NULL},
    {"remote", SUB_ANY, "fetch", VK_TOKEN, NULL},
    {"remote", SUB_ANY, "push", VK_TOKEN, NULL},
    {"remote", SUB_ANY, "tagopt", VK_WORDS, "--no-tags|--tags"},
    {"remote", SUB_ANY, "prune", VK_BOOL, NULL},
    {"remote", SUB_ANY, "prunetags", VK_BOOL, NULL},
    {"remote", SUB_ANY, "promisor", VK_BOOL, NULL},
    {"remote", SUB_ANY, "partialclonefilter", VK_TOKEN, NULL},
    {"remote", SUB_NONE, "pushdefault", VK_REMOTE, NULL},
    {"branch", SUB_ANY, "remote", VK_REMOTE, NULL},
    {"branch", SUB_ANY, "pushremote", VK_REMOTE, NULL},
    {"branch", SUB_ANY, "merge", VK_TOKEN, NULL},
    {"branch", SUB_ANY, "rebase", VK_BOOL_OR_WORDS, "merges|interactive|i|m"},
    {"branch", SUB_ANY, "description", VK_TEXT, NULL},
    {"submodule", SUB_ANY, "url", VK_URL, NULL},
    {"submodule", SUB_ANY, "active", VK_BOOL, NULL},
    {"submodule", SUB_ANY, "branch", VK_TOKEN, NULL},
    {"submodule", SUB_ANY, "update", VK_WORDS, "checkout|rebase|merge|none"},
    {"submodule", SUB_NONE, "active", VK_TEXT, NULL},
    {"core", SUB_NONE, "autocrlf", VK_BOOL_OR_WORDS, "input"},
    {"core", SUB_NONE, "eol", VK_WORDS, "lf|crlf|native"},
    {"core", SUB_NONE, "safecrlf", VK_BOOL_OR_WORDS, "warn"},
    {"core", SUB_NONE, "repositoryformatversion", VK_WORDS, "0|1"},
    {"core", SUB_NONE, "filemode", VK_BOOL, NULL},
    {"core", SUB_NONE, "bare", VK_BOOL, NULL},
    {"core", SUB_NONE, "logallrefupdates", VK_BOOL_OR_WORDS, "always"},
    {"core", SUB_NONE, "ignorecase", VK_BOOL, NULL},
    {"core", SUB_NONE, "precomposeunicode", VK_BOOL, NULL},
    {"core", SUB_NONE, "symlinks", VK_BOOL, NULL},
    {"core", SUB_NONE, "sparsecheckout", VK_BOOL, NULL},
    {"core", SUB_NONE, "sparsecheckoutcone", VK_BOOL, NULL},
    {"core", SUB_NONE, "worktree", VK_WORK_TREE, NULL},
    {"index", SUB_NONE, "sparse", VK_BOOL, NULL},
    {"extensions", SUB_NONE, "objectformat", VK_WORDS, "sha1|sha256"},
    {"extensions", SUB_NONE, "refstorage", VK_WORDS, "files|reftable"},
    {"extensions", SUB_NONE, "worktreeconfig", VK_BOOL, NULL},
    {"extensions", SUB_NONE, "partialclone", VK_REMOTE, NULL},
    {"init", SUB_NONE, "defaultbranch", VK_TOKEN, NULL},
    {"pull", SUB_NONE, "rebase", VK_BOOL_OR_WORDS, "merges|interactive|i|m"},
    {"pull", SUB_NONE, "ff", VK_BOOL_OR_WORDS, "only"},
    {"push", SUB_NONE, "default", VK_WORDS, "nothing|current|upstream|tracking|simple|matching"},
    {"push", SUB_NONE, "autosetupremote", VK_BOOL, NULL},
    {"fetch", SUB_NONE, "prune", VK_BOOL, NULL},
    {"fetch", SUB_NONE, "prunetags", VK_BOOL, NULL},
    {"rerere", SUB_NONE, "enabled", VK_BOOL, NULL},
    {"merge", SUB_NONE, "conflictstyle", VK_WORDS, "merge|diff3|zdiff3"},
    {"diff", SUB_NONE, "algorithm", VK_WORDS, "default|myers|minimal|patience|histogram"},
    {"color", SUB_NONE, "ui", VK_BOOL_OR_WORDS, "auto|always|never"},
    {"lfs", SUB_NONE, "repositoryformatversion", VK_WORDS, "0"},
};

/* No byte below ' ' but a tab, no DEL: what a terminal would act on, what git's readers of
 * these values never expect. */
static bool has_control(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < ' ' && c != '\t') || c == 0x7f)
            return true;
    }
    return false;
}

static bool is_token(const char *v)
{
    if (!v || !*v || *v == '-')
        return false;
    for (; *v; v++)
        if ((unsigned char)*v <= ' ' || *v == 0x7f)
            return false;
    return true;
}

static bool in_words(const char *v, const char *words)
{
    size_t n = v ? strlen(v) : 0;
    if (!v || !n)
        return false;
    for (const char *w = words; *w;) {
        const char *end = strchr(w, '|');
        size_t len = end ? (size_t)(end - w) : strlen(w);
        if (len == n && strncasecmp(v, w, n) == 0)
            return true;
        if (!end)
            break;
        w = end + 1;
    }
    return false;
}

/* git's is_urlschemechar: the first character a letter, then letters, digits, '+', '-', '.'. */
static size_t scheme_len(const char *v)
{
    size_t n = 0;
    if (!isalpha((unsigned char)v[0]))
        return 0;
    while (isalnum((unsigned char)v[n]) || v[n] == '+' || v[n] == '-' || v[n] == '.')
        n++;
    return n;
}

/* The host or the port of "[user@]host[:port]/..." reads as a command-line option to ssh. */
static bool host_is_option(const char *h)
{
    const char *at = strchr(h, '@'), *slash = strchr(h, '/');
    if (at && (!slash || at < slash))
        h = at + 1;
    if (*h == '[')
        h++;
    if (*h == '-')
        return true;
    size_t authority = slash ? (size_t)(slash - h) : strlen(h);
    for (size_t i = 0; i + 1 < authority; i++)
        if (h[i] == ':' && h[i + 1] == '-')
            return true;
    return false;
}

enum git_config_verdict git_config_url(const char *value, const char **why, const char **path)
{
    const char *v = value ? value : "";
    *why = NULL;
    *path = NULL;
    if (!*v) {
        *why = "an empty URL";
        return GIT_CONFIG_REFUSE;
    }
    if (has_control(v, strlen(v)) || strchr(v, '\t')) {
        *why = "a URL with control characters";
        return GIT_CONFIG_REFUSE;
    }
    size_t n = scheme_len(v);
    /* transport_get(): "<name>::<address>" runs git-remote-<name>, ext:: and fd:: included */
    if (n && v[n] == ':' && v[n + 1] == ':') {
        *why = "names a transport helper such as ext:: or fd::, a program the host's git would run";
        return GIT_CONFIG_REFUSE;
    }
    if (n && strncmp(v + n, "://", 3) == 0) {
        const char *rest = v + n + 3;
        if (n == 4 && strncmp(v, "file", 4) == 0) {
            /* git decodes %-escapes of URLs; a host part reads as a path: neither guessed */
            if (*rest != '/' || strchr(rest, '%')) {
                *why = "a file:// URL with a host or %-escapes";
                return GIT_CONFIG_REFUSE;
            }
            *path = rest;
            return GIT_CONFIG_LOCAL_PATH;
        }
        bool http =
            (n == 4 && strncmp(v, "http", 4) == 0) || (n == 5 && strncmp(v, "https", 5) == 0);
        bool ssh = (n == 3 && (strncmp(v, "ssh", 3) == 0 || strncmp(v, "git", 3) == 0)) ||
                   (n == 7 && (strncmp(v, "git+ssh", 7) == 0 || strncmp(v, "ssh+git", 7) == 0));
        if (!http && !ssh) {
            *why = "a URL scheme git hands to a helper program";
            return GIT_CONFIG_REFUSE;
        }
        if (host_is_option(rest) || (ssh && strchr(v, '%'))) {
            *why = "a host that reads as an option, or %-escapes git would decode into one";
            return GIT_CONFIG_REFUSE;
        }
        return GIT_CONFIG_ALLOW;
    }
    /* url_is_local_not_ssh(): a ':' before any '/' is an scp-like [user@]host:path */
    const char *colon = strchr(v, ':'), *slash = strchr(v, '/');
    if (colon && (!slash || colon < slash)) {
        if (host_is_option(v)) {
            *why = "a host that reads as an option";
            return GIT_CONFIG_REFUSE;
        }
        return GIT_CONFIG_ALLOW;
    }
    /* git's upload-pack expands ~ and ~user in a local path: where that lands is the host's */
    if (*v == '~') {
        *why = "a path starting with ~, which git expands on the host";
        return GIT_CONFIG_REFUSE;
    }
    *path = v;
    return GIT_CONFIG_LOCAL_PATH;
}

/* Does c define remote name with a url (section.subsection.name exactly as the parser keys
 * it)? A remote without one is no remote to git: the name is then read as a URL. */
static bool defines_remote(const struct git_config *c, const char *name)
{
    if (!*name || strchr(name, '/') || strcmp(name, "..") == 0)
        return false;
    size_t n = strlen(name);
    for (size_t i = 0; i < c->len; i++) {
        const char *k = c->items[i].key;
        if (strncmp(k, "remote.", 7) == 0 && strncmp(k + 7, name, n) == 0 &&
            strcmp(k + 7 + n, ".url") == 0 && c->items[i].value)
            return true;
    }
    return false;
}

enum git_config_verdict git_config_judge(const struct git_config *c,
                                         const struct git_config_entry *e, const char **why,
                                         const char **path)
{
    const char *key = e->key, *v = e->value;
    const char *first = strchr(key, '.'), *last = strrchr(key, '.');
    *why = NULL;
    *path = NULL;
    if (!first) {
        *why = "is not a key git can read";
        return GIT_CONFIG_REFUSE;
    }
    size_t section_len = (size_t)(first - key);
    bool has_sub = last != first;
    const char *name = last + 1, *sub = first + 1;
    size_t sub_len = has_sub ? (size_t)(last - sub) : 0;
    const struct allowed *a = NULL;
    for (size_t i = 0; i < ARRAY_LEN(allowed) && !a; i++) {
        const struct allowed *r = &allowed[i];
        if (strlen(r->section) == section_len && strncmp(key, r->section, section_len) == 0 &&
            (r->sub == SUB_ANY) == has_sub && strcmp(name, r->name) == 0)
            a = r;
    }
    if (!a) {
        const char *code = git_config_key_runs_code(key, v);
        *why = code ? code : "not on the list of settings cordon writes for a sandboxed command";
        return GIT_CONFIG_REFUSE;
    }
    if (has_sub && (sub_len == 0 || has_control(sub, sub_len))) {
        *why = "an empty name, or one with control characters";
        return GIT_CONFIG_REFUSE;
    }
    bool fits = false;
    switch (a->kind) {
    case VK_TEXT:
        fits = !v || !has_control(v, strlen(v));
        break;
    case VK_TOKEN:
        fits = is_token(v);
        break;
    case VK_BOOL:
        fits = value_is_bool(v);
        break;
    case VK_WORDS:
        fits = in_words(v, a->words);
        break;
    case VK_BOOL_OR_WORDS:
        fits = value_is_bool(v) || in_words(v, a->words);
        break;
    case VK_REMOTE:
        if (v && (strcmp(v, ".") == 0 || defines_remote(c, v)))
            return GIT_CONFIG_ALLOW;
        return git_config_url(v, why, path);
    case VK_URL:
        return git_config_url(v, why, path);
    case VK_WORK_TREE:
        if (!v || !*v || has_control(v, strlen(v))) {
            *why = "an empty work tree, or one with control characters";
            return GIT_CONFIG_REFUSE;
        }
        *path = v;
        return GIT_CONFIG_WORK_TREE;
    }
    if (!fits) {
        *why = "a value this key does not take from a sandboxed command";
        return GIT_CONFIG_REFUSE;
    }
    return GIT_CONFIG_ALLOW;
}

const char *git_config_judge_kept(const struct git_config *old, const struct git_config *next,
                                  const struct git_config_entry *e)
{
    const char *first = strchr(e->key, '.'), *last = strrchr(e->key, '.');
    if (!first || !e->value)
        return NULL;
    size_t section_len = (size_t)(first - e->key);
    bool has_sub = last != first;
    for (size_t i = 0; i < ARRAY_LEN(allowed); i++) {
        const struct allowed *r = &allowed[i];
        if (r->kind != VK_REMOTE || strlen(r->section) != section_len ||
            strncmp(e->key, r->section, section_len) != 0 || (r->sub == SUB_ANY) != has_sub ||
            strcmp(last + 1, r->name) != 0)
            continue;
        if (defines_remote(old, e->value) && !defines_remote(next, e->value))
            return "names a remote whose url this write removes: git would read the name as a "
                   "path";
        return NULL;
    }
    return NULL;
}
