/* test_lua_host.c — the Lua host against real files: the built-in policies and profiles, and
 * fixture layers written to a temp datadir (no mocks; lua_host_fixture.h): profiles, the
 * hooks' budgets and errors, the sandboxed globals, loading, check and explain. The network,
 * refusal and escalation decisions are test_lua_decide.c's. Each test runs in its own child. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "lua_host_fixture.h"
#include "policy/lua_embedded.h"
#include "policy/lua_host.h"
#include "sandbox/fsview.h"
#include "sandbox/sandbox_config.h"
#include "test.h"

static const struct sandbox_rlimit *find_rlimit(const struct sandbox_config *cfg, int res)
{
    for (size_t i = 0; i < cfg->n_rlimits; i++)
        if (cfg->rlimits[i].resource == res)
            return &cfg->rlimits[i];
    return NULL;
}

static void test_coding_default(void)
{
    setup();
    open_ok();
    struct run_flags f = flags_for(NULL);
    struct sandbox_config cfg;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    CHECK(strcmp(cfg.profile, "coding") == 0);
    CHECK(strcmp(cfg.workspace, tmp) == 0);
    CHECK(strcmp(cfg.cwd, tmp) == 0);
    CHECK(!cfg.workspace_readonly);
    char *ssh = xasprintf("%s/.ssh", home);
    CHECK(str_list_contains(&cfg.hidden, ssh));
    free(ssh);
    CHECK(str_list_contains(&cfg.hidden, "/etc/shadow"));
    CHECK(str_list_contains(&cfg.hidden, "/root"));
    CHECK(str_list_contains(&cfg.readonly_in_workspace, ".git/hooks"));
    CHECK(str_list_contains(&cfg.readonly_in_workspace, ".cordon"));
    const struct sandbox_rlimit *core = find_rlimit(&cfg, RLIMIT_CORE);
    CHECK(core && core->soft == 0 && core->hard == 0);
    CHECK(cfg.grace_seconds == 3);
    CHECK(str_list_contains(&cfg.env, "CORDON_SANDBOX=1"));
    CHECK(str_list_contains(&cfg.env, "TMPDIR=/tmp"));
    CHECK(!str_list_contains(&cfg.env, "TMPDIR=/var/x"));
    CHECK(str_list_contains(&cfg.env, "PATH=/usr/bin:/bin"));
    CHECK(str_list_contains(&cfg.env, "LANG=C.UTF-8"));
    CHECK(!str_list_contains(&cfg.env, "OPENAI_API_KEY=sk-1"));
    CHECK(!str_list_contains(&cfg.env, "GITHUB_TOKEN=gh"));
    CHECK(!str_list_contains(&cfg.env, "DB_PASSWORD=pw"));
    CHECK(!str_list_contains(&cfg.env, "SSH_AUTH_SOCK=/tmp/a"));
    CHECK(!cfg.block_unix_sockets && !cfg.net_unrestricted && !cfg.json);
    sandbox_config_free(&cfg);
    lh_close();
}

static void test_named_profiles(void)
{
    setup();
    open_ok();
    struct sandbox_config cfg;
    struct run_flags f = flags_for("strict");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    CHECK(cfg.block_unix_sockets);
    CHECK(str_list_contains(&cfg.seccomp_deny, "personality"));
    const struct sandbox_rlimit *nofile = find_rlimit(&cfg, RLIMIT_NOFILE);
    CHECK(nofile && nofile->soft == 1024);
    CHECK(find_rlimit(&cfg, RLIMIT_CORE) != NULL); /* inherited from coding */
    CHECK(find_rlimit(&cfg, RLIMIT_NPROC) == NULL);
    char *p = xasprintf("%s/.config", home);
    CHECK(str_list_contains(&cfg.hidden, p));
    free(p);
    p = xasprintf("%s/.ssh", home);
    CHECK(str_list_contains(&cfg.hidden, p)); /* lists append */
    free(p);
    sandbox_config_free(&cfg);

    f = flags_for("readonly");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    CHECK(cfg.workspace_readonly);
    sandbox_config_free(&cfg);
    f = flags_for("ops");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    CHECK(strcmp(cfg.profile, "ops") == 0);
    sandbox_config_free(&cfg);
    lh_close();
}

static void test_flags(void)
{
    setup();
    open_ok();
    char *w = xasprintf("%s/extra", tmp);
    mkdir(w, 0755);
    char *sub = xasprintf("%s/sub", w);
    mkdir(sub, 0755);
    struct run_flags f = flags_for(NULL);
    str_list_push(&f.writable, w);
    str_list_push(&f.hidden, "~/secret");
    str_list_push(&f.hidden, "rel/dir");
    f.allow_loopback = FLAG_TRUE;
    f.json = FLAG_TRUE;
    f.workspace = home;
    struct sandbox_config cfg;
    CHECK_EQ_INT(lh_resolve_sandbox(&f, sub, home, env_in, &cfg, err, sizeof err), LH_OK);
    CHECK(strcmp(cfg.workspace, home) == 0);
    CHECK(str_list_contains(&cfg.writable, w));
    CHECK(strcmp(cfg.cwd, sub) == 0); /* cwd inside a writable path is kept */
    char *s = xasprintf("%s/secret", home);
    CHECK(str_list_contains(&cfg.hidden, s));
    free(s);
    s = xasprintf("%s/rel/dir", sub);
    CHECK(str_list_contains(&cfg.hidden, s));
    free(s);
    CHECK(cfg.net_loopback && cfg.json);
    sandbox_config_free(&cfg);

    /* cwd outside workspace and writable paths: start in the workspace */
    run_flags_free(&f);
    f = flags_for(NULL);
    f.workspace = home;
    CHECK_EQ_INT(lh_resolve_sandbox(&f, sub, home, env_in, &cfg, err, sizeof err), LH_OK);
    CHECK(strcmp(cfg.cwd, home) == 0);
    sandbox_config_free(&cfg);

    str_list_push(&f.writable, "/nope/missing");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    CHECK_STR_CONTAINS(err, "--allow-write /nope/missing: No such file or directory");
    run_flags_free(&f);
    f = flags_for(NULL);
    f.workspace = "/nope/ws";
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    CHECK_STR_CONTAINS(err, "--workspace /nope/ws: No such file or directory");
    free(w);
    free(sub);
    lh_close();
}

static void test_unknown_profile(void)
{
    setup();
    open_ok();
    struct run_flags f = flags_for("nope");
    struct sandbox_config cfg;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    CHECK_STR_CONTAINS(err, "unknown profile 'nope' (known: coding, ops, readonly, strict)");
    f = flags_for("Bad/Name");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    CHECK_STR_CONTAINS(err, "invalid profile name 'Bad/Name'");
    lh_close();
}

static void test_profile_syntax_error(void)
{
    setup();
    put(data, "profiles/broken.lua", "return {\n  hidden = {\n    ,\n  },\n}\n");
    open_ok();
    struct run_flags f = flags_for("broken");
    struct sandbox_config cfg;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    char *want = xasprintf("%s/profiles/broken.lua:3:", data);
    CHECK_STR_CONTAINS(err, want);
    free(want);
    lh_close();
}

static void test_profile_validation(void)
{
    setup();
    put(data, "profiles/typo.lua", "return {\n  extends = \"coding\",\n  hiden = { \"/x\" },\n}\n");
    put(data, "profiles/wrongtype.lua",
        "return {\n  network = {\n    loopback = \"yes\",\n  },\n}\n");
    put(data, "profiles/loop-a.lua", "return {\n  extends = \"loop-b\",\n}\n");
    put(data, "profiles/loop-b.lua", "return {\n\n  extends = \"loop-a\",\n}\n");
    put(data, "profiles/usehost.lua",
        "local h = host.home()\nreturn { extends = \"coding\", writable = { h } }\n");
    open_ok();
    struct sandbox_config cfg;
    struct run_flags f = flags_for("typo");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    char *want = xasprintf("%s/profiles/typo.lua:3: key 'hiden': unknown key", data);
    CHECK_STR_CONTAINS(err, want);
    free(want);
    f = flags_for("wrongtype");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    want =
        xasprintf("%s/profiles/wrongtype.lua:3: key 'network.loopback': expected a boolean", data);
    CHECK_STR_CONTAINS(err, want);
    free(want);
    f = flags_for("loop-a");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    want = xasprintf("%s/profiles/loop-b.lua:3: extends cycle: loop-a -> loop-b -> loop-a", data);
    CHECK_STR_CONTAINS(err, want);
    free(want);
    f = flags_for("usehost");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    CHECK(str_list_contains(&cfg.writable, home));
    sandbox_config_free(&cfg);
    lh_close();
}

/* A layer over the default policy that misbehaves on request (by profile name). */
static const char bad_layer[] =
    "return {\n"
    "  profile = function(input, next)\n"
    "    if input.name == \"loop\" then while true do end end\n"
    "    if input.name == \"loopcatch\" then\n"
    "      while true do pcall(function() while true do end end) end\n"
    "    end\n"
    "    if input.name == \"bomb\" then\n"
    "      local t = {}\n"
    "      for i = 1, math.maxinteger do t[i] = string.rep(\"x\", 4096) .. i end\n"
    "    end\n"
    "    if input.name == \"bombcatch\" then\n"
    "      pcall(function() local t = {} for i = 1, math.maxinteger do t[i] = {i} end end)\n"
    "      return next({ name = \"coding\", flags = input.flags })\n"
    "    end\n"
    "    if input.name == \"raise\" then error(\"boom\") end\n" /* line 15 */
    "    if input.name == \"bad\" then return 42 end\n"
    "    if input.name == \"badkey\" then return { colour = \"red\" } end\n"
    "    if input.name == \"globals\" then\n"
    "      assert(io == nil and os == nil and debug == nil and package == nil, \"lib visible\")\n"
    "      assert(dofile == nil and loadfile == nil and load == nil, \"loader visible\")\n"
    "      assert(collectgarbage == nil, \"collectgarbage visible\")\n"
    "      assert(not pcall(function() string.upper = nil end), \"string writable\")\n"
    "      assert(getmetatable(\"\") == false, \"string metatable visible\")\n"
    "      assert(not pcall(host.getenv, \"OPENAI_API_KEY\"), \"getenv not filtered\")\n"
    "      assert(not pcall(require, \"io\"), \"require io\")\n"
    "      return next({ name = \"coding\", flags = input.flags })\n"
    "    end\n"
    "    if input.name == \"setglobal\" then leaked = 1 end\n" /* line 28 */
    "    return next(input)\n"
    "  end,\n"
    "  environment = function(input, next)\n"
    "    if input.profile.description == \"badenv\" then return { set = { X = 1 } } end\n"
    "    local r = next(input)\n"
    "    r.set.FROM_LAYER = host.workspace()\n"
    "    return r\n"
    "  end,\n"
    "}\n";

static void setup_bad_layer(void)
{
    setup();
    put(data, "policies/50-bad.lua", bad_layer);
    put(data, "profiles/badenv.lua", "return { extends = \"coding\", description = \"badenv\" }\n");
}

static enum lh_outcome resolve_name(const char *name)
{
    struct run_flags f = flags_for(name);
    struct sandbox_config cfg;
    enum lh_outcome o = resolve(&f, &cfg);
    if (o == LH_OK)
        sandbox_config_free(&cfg);
    return o;
}

/* Every failure of the environment hook, too, stops the run with the policy's file:line. */
static void test_environment_hook_failures(void)
{
    setup();
    put(data, "policies/60-env.lua",
        "return {\n"
        "  environment = function(input, next)\n"
        "    local d = input.profile.description\n"
        "    if d == \"raise\" then error(\"env boom\") end\n" /* line 4 */
        "    if d == \"loop\" then while true do end end\n"    /* line 5 */
        "    if d == \"bomb\" then local t = {} while true do t[#t + 1] = (\"x\"):rep(4096) .. #t end end\n"
        "    return next(input)\n"
        "  end,\n"
        "}\n");
    static const char *const names[] = {"raise", "loop", "bomb"};
    static const enum lh_outcome want[] = {LH_ERROR, LH_TIMEOUT, LH_NOMEM};
    for (size_t i = 0; i < 3; i++) {
        char *file = xasprintf("profiles/env%s.lua", names[i]);
        char *text = xasprintf("return { extends = \"coding\", description = \"%s\" }\n", names[i]);
        put(data, file, text);
        free(file);
        free(text);
    }
    open_ok();
    for (size_t i = 0; i < 3; i++) {
        char *name = xasprintf("env%s", names[i]);
        CHECK_EQ_INT(resolve_name(name), want[i]);
        char *where = xasprintf("%s/policies/60-env.lua:", data);
        CHECK_STR_CONTAINS(err, where);
        free(where);
        free(name);
        CHECK_EQ_INT(resolve_name("coding"), LH_OK); /* the host keeps working */
    }
    lh_close();
}

static void test_hook_timeout(void)
{
    setup_bad_layer();
    open_ok();
    CHECK_EQ_INT(resolve_name("loop"), LH_TIMEOUT);
    char *want = xasprintf("%s/policies/50-bad.lua:3: instruction budget exhausted", data);
    CHECK_STR_CONTAINS(err, want);
    free(want);
    CHECK_EQ_INT(resolve_name("loopcatch"), LH_TIMEOUT);
    CHECK_EQ_INT(resolve_name("coding"), LH_OK);
    lh_close();
}

static void test_hook_nomem(void)
{
    setup_bad_layer();
    open_ok();
    CHECK_EQ_INT(resolve_name("bomb"), LH_NOMEM);
    char *want = xasprintf("%s/policies/50-bad.lua:2: memory cap exceeded", data);
    CHECK_STR_CONTAINS(err, want);
    free(want);
    CHECK_EQ_INT(resolve_name("coding"), LH_OK);       /* the state was rebuilt */
    CHECK_EQ_INT(resolve_name("bombcatch"), LH_NOMEM); /* pcall cannot hide it */
    CHECK_EQ_INT(resolve_name("strict"), LH_OK);
    lh_close();
}

static void test_hook_errors(void)
{
    setup_bad_layer();
    open_ok();
    CHECK_EQ_INT(resolve_name("raise"), LH_ERROR);
    char *want = xasprintf("%s/policies/50-bad.lua:15: boom", data);
    CHECK_STR_CONTAINS(err, want);
    free(want);
    CHECK(strstr(err, "stack traceback") == NULL);
    CHECK_EQ_INT(resolve_name("bad"), LH_BAD_RESULT);
    want = xasprintf("%s/policies/50-bad.lua:2: profile hook returned number", data);
    CHECK_STR_CONTAINS(err, want);
    free(want);
    CHECK_EQ_INT(resolve_name("badkey"), LH_BAD_RESULT);
    CHECK_STR_CONTAINS(err, "key 'colour': unknown key");
    CHECK_EQ_INT(resolve_name("badenv"), LH_BAD_RESULT);
    CHECK_STR_CONTAINS(err, "50-bad.lua:31:");
    CHECK_EQ_INT(resolve_name("setglobal"), LH_ERROR);
    want = xasprintf("%s/policies/50-bad.lua:28: assignment to undeclared global 'leaked'", data);
    CHECK_STR_CONTAINS(err, want);
    free(want);
    lh_close();
}

static void test_sandboxed_globals(void)
{
    setup_bad_layer();
    open_ok();
    struct run_flags f = flags_for("globals");
    struct sandbox_config cfg;
    enum lh_outcome o = resolve(&f, &cfg);
    if (o != LH_OK)
        fprintf(stderr, "  %s\n", err);
    CHECK_EQ_INT(o, LH_OK);
    char *want = xasprintf("FROM_LAYER=%s", tmp);
    CHECK(str_list_contains(&cfg.env, want));
    free(want);
    sandbox_config_free(&cfg);
    lh_close();
}

static void test_bytecode_refused(void)
{
    setup();
    put(data, "policies/10-bin.lua", "\x1bLuaT\x00\x19\x93\r\n\x1a\n");
    struct lh_options opt = {.datadir = data};
    CHECK_EQ_INT(lh_open(&opt, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "10-bin.lua");
    CHECK_STR_CONTAINS(err, "binary chunk");
}

/* The embedded modules are the build's bytecode (a policy file's bytecode is refused above). */
static void test_embedded_bytecode_only(void)
{
    size_t n = 0;
    for (const struct lua_embedded_module *m = lua_embedded_modules; m->name; m++, n++)
        CHECK(m->len > 4 && memcmp(m->code, "\x1bLua", 4) == 0);
    CHECK(n >= 8);
}

/* The line of the first "profile = function" in text (1-based), 0 if none. */
static int profile_hook_line(const char *text)
{
    static const char hook[] = "profile = function";
    int line = 1;
    for (const char *p = text; *p; p++) {
        if (strncmp(p, hook, sizeof hook - 1) == 0)
            return line;
        line += *p == '\n';
    }
    return 0;
}

/* "file:LINE" -> LINE. */
static int where_line(const char *where)
{
    const char *colon = strrchr(where, ':');
    return colon ? atoi(colon + 1) : 0;
}

/* The built-in files' chunks are the tree's text compiled; a file holding exactly that text
 * loads as the text would (its own path, its lines), an edited one is read as the edit. */
static void test_builtin_chunks(void)
{
    size_t n = 0;
    for (const struct lua_builtin_chunk *b = lua_builtin_chunks; b->name; b++, n++) {
        char *src = xasprintf("%s/%s", CORDON_DATADIR, b->name);
        char *text = NULL;
        size_t len = 0;
        CHECK(read_file(src, 0, 1 << 20, &text, &len) == 0);
        CHECK(len == b->text_len && memcmp(text, b->text, len) == 0);
        free(text);
        free(src);
    }
    CHECK(n >= 2);
    setup();
    char *path = xasprintf("%s/policies/00-default.lua", data);
    char *text = slurp(path);
    int line = profile_hook_line(text);
    CHECK(line > 0);
    struct run_flags f = flags_for(NULL);
    struct lh_explanation ex;
    open_ok();
    CHECK_EQ_INT(lh_explain_profile(&f, &ex), LH_OK);
    CHECK_STR_CONTAINS(ex.layer[0].where, path);
    CHECK_EQ_INT(where_line(ex.layer[0].where), line);
    lh_explanation_free(&ex);
    lh_close();
    /* One line more on top: the edit is what loads, its hook a line lower. */
    char *edited = xasprintf("-- edited\n%s", text);
    put(data, "policies/00-default.lua", edited);
    open_ok();
    CHECK_EQ_INT(lh_explain_profile(&f, &ex), LH_OK);
    CHECK_STR_CONTAINS(ex.layer[0].where, path);
    CHECK_EQ_INT(where_line(ex.layer[0].where), line + 1);
    lh_explanation_free(&ex);
    lh_close();
    /* The same text with a syntax error at its end: the file's own message. */
    char *broken = xasprintf("%s\nreturn (\n", text);
    put(data, "policies/00-default.lua", broken);
    struct lh_options opt = {.datadir = data};
    CHECK_EQ_INT(lh_open(&opt, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, path);
    free(broken);
    free(edited);
    free(text);
    free(path);
}

static void test_policy_load_errors(void)
{
    setup();
    put(data, "policies/10-global.lua", "\nx = 1\nreturn {}\n");
    struct lh_options opt = {.datadir = data};
    CHECK_EQ_INT(lh_open(&opt, err, sizeof err), -1);
    char *want =
        xasprintf("%s/policies/10-global.lua:2: assignment to undeclared global 'x'", data);
    CHECK_STR_CONTAINS(err, want);
    free(want);
    put(data, "policies/10-global.lua", "return { netwrok = function() end }\n");
    CHECK_EQ_INT(lh_open(&opt, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "unknown hook 'netwrok'");
    put(data, "policies/10-global.lua", "while true do end\n");
    CHECK_EQ_INT(lh_open(&opt, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "10-global.lua:1: instruction budget exhausted");
}

static void test_user_layer(void)
{
    setup();
    char *ucfg = xasprintf("%s/.config/cordon", home);
    put(ucfg, "policy.lua",
        "return { profile = function(input, next)\n"
        "  local p = next(input)\n"
        "  p.hidden[#p.hidden + 1] = \"/srv/secret\"\n"
        "  return p\n"
        "end }\n");
    put(ucfg, "profiles/mine.lua", "return { extends = \"strict\", json = true }\n");
    struct lh_options opt = {.datadir = data, .user_config_dir = ucfg};
    CHECK_EQ_INT(lh_open(&opt, err, sizeof err), 0);
    struct run_flags f = flags_for("mine");
    struct sandbox_config cfg;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    CHECK(cfg.json && cfg.block_unix_sockets);
    CHECK(str_list_contains(&cfg.hidden, "/srv/secret"));
    sandbox_config_free(&cfg);
    f = flags_for("nope");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    CHECK_STR_CONTAINS(err, "(known: coding, mine, ops, readonly, strict)");
    lh_close();
    free(ucfg);
}

/* The problems, one per line, in a new string (as `policy check` prints them). */
static char *joined(const struct str_list *l)
{
    char *s = xstrdup("");
    for (size_t i = 0; i < l->len; i++) {
        char *t = xasprintf("%s%s\n", s, l->items[i]);
        free(s);
        s = t;
    }
    return s;
}

static void test_check_all(void)
{
    setup();
    struct lh_options opt = {.datadir = CORDON_DATADIR};
    struct str_list problems = {0};
    CHECK_EQ_INT(lh_check_all(&opt, NULL, &problems), 0);
    CHECK_EQ_INT((int)problems.len, 0);
    str_list_free(&problems);

    char *proj = xasprintf("%s/proj", tmp);
    put(proj, ".cordon/profiles/oops.lua", "return {\n  writable = 3,\n}\n");
    put(proj, ".cordon/profiles/Bad.lua", "return {}\n");
    put(proj, ".cordon/policy.lua", "return 1\n");
    put(data, "profiles/syntax.lua", "return {\n  x = = 1 }\n");
    opt.datadir = data;
    int n = lh_check_all(&opt, proj, &problems);
    char *buf = joined(&problems);
    fprintf(stderr, "%s", buf);
    CHECK_EQ_INT(n, 4);
    CHECK_EQ_INT((int)problems.len, 4);
    char *want = xasprintf("%s/.cordon/profiles/oops.lua:2: key 'writable'", proj);
    CHECK_STR_CONTAINS(buf, want);
    free(want);
    CHECK_STR_CONTAINS(buf, "profiles/syntax.lua:2:");
    CHECK_STR_CONTAINS(buf, "Bad.lua: invalid profile name");
    CHECK_STR_CONTAINS(buf, ".cordon/policy.lua: a policy must return a table");
    free(buf);
    str_list_free(&problems);
    free(proj);
}

/* One file: a profile is found in its own profiles/ directory first and resolved alone; a
 * policy is the top layer; a broken one is named with file:line; a missing one is a problem. */
static void test_check_file(void)
{
    setup();
    struct lh_options opt = {.datadir = data};
    struct str_list problems = {0};
    char *dir = xasprintf("%s/elsewhere", tmp);
    put(dir, "profiles/web.lua", "return { extends = \"coding\", json = true }\n");
    put(dir, "profiles/oops.lua", "return {\n  writable = 3,\n}\n");
    put(dir, "good.lua", "return { profile = function(input, next) return next(input) end }\n");
    put(dir, "broken.lua", "return {\n  profile = function(input, next\n}\n");
    char *path = xasprintf("%s/profiles/web.lua", dir);
    CHECK_EQ_INT(lh_check_file(&opt, path, &problems), 0);
    free(path);
    path = xasprintf("%s/good.lua", dir);
    CHECK_EQ_INT(lh_check_file(&opt, path, &problems), 0);
    free(path);
    CHECK_EQ_INT((int)problems.len, 0);

    path = xasprintf("%s/profiles/oops.lua", dir);
    CHECK_EQ_INT(lh_check_file(&opt, path, &problems), 1);
    char *want = xasprintf("%s:2: key 'writable'", path);
    CHECK_STR_CONTAINS(problems.items[0], want);
    free(want);
    free(path);
    str_list_free(&problems);

    path = xasprintf("%s/broken.lua", dir);
    CHECK_EQ_INT(lh_check_file(&opt, path, &problems), 1);
    want = xasprintf("%s:3:", path);
    CHECK_STR_CONTAINS(problems.items[0], want);
    free(want);
    free(path);
    str_list_free(&problems);

    path = xasprintf("%s/missing.lua", dir);
    CHECK_EQ_INT(lh_check_file(&opt, path, &problems), 1);
    CHECK_STR_CONTAINS(problems.items[0], "missing.lua: No such file or directory");
    free(path);
    str_list_free(&problems);
    free(dir);
}

/* Explain returns each layer's answer and the deciding layer; the CLI prints them. */
/* explain --profile: each key credited to the profile file that set it (the extends chain, the
 * base first), and the profile hook's layer only with what it changed itself. */
static void test_explain_profile_files(void)
{
    setup();
    open_ok();
    struct run_flags f = flags_for("strict");
    struct lh_explanation files, ex;
    CHECK_EQ_INT(lh_explain_profile_layers(&f, &files, &ex), LH_OK);
    CHECK_EQ_INT(files.n, 2);
    CHECK_STR_CONTAINS(files.layer[0].where, "/profiles/coding.lua");
    CHECK_STR_CONTAINS(files.layer[1].where, "/profiles/strict.lua");
    CHECK(str_list_contains(&files.layer[0].changed, "seccomp.block_unix_sockets"));
    CHECK(str_list_contains(&files.layer[1].changed, "seccomp.block_unix_sockets"));
    CHECK(str_list_contains(&files.layer[1].changed, "extends"));
    CHECK(!str_list_contains(&files.layer[1].changed, "capture.head")); /* coding's, unchanged */
    CHECK_EQ_INT(ex.n, 1);
    CHECK(!str_list_contains(&ex.layer[0].changed, "seccomp.block_unix_sockets"));
    CHECK(!str_list_contains(&ex.layer[0].changed, "capture.head"));
    lh_explanation_free(&files);
    lh_explanation_free(&ex);
    /* without the files, layer 1 sets everything, as before */
    CHECK_EQ_INT(lh_explain_profile(&f, &ex), LH_OK);
    CHECK(str_list_contains(&ex.layer[0].changed, "capture.head"));
    lh_explanation_free(&ex);
    lh_close();
}

static void test_explain(void)
{
    setup();
    char *ucfg = xasprintf("%s/.config/cordon", home);
    put(ucfg, "policy.lua",
        "return {\n"
        "  network = function(input, next)\n"
        "    if input.host == \"boom.test\" then error(\"nope\") end\n"
        "    if input.host == \"ok.test\" then return { verdict = \"allow\", rule = \"ok.test\" } end\n"
        "    return next(input)\n"
        "  end,\n"
        "  profile = function(input, next)\n"
        "    local p = next(input)\n"
        "    p.json = true\n"
        "    return p\n"
        "  end,\n"
        "}\n");
    struct lh_options opt = {.datadir = data, .user_config_dir = ucfg};
    CHECK_EQ_INT(lh_open(&opt, err, sizeof err), 0);
    struct lh_explanation ex;
    /* no profile resolved yet: nothing to list, and why */
    CHECK_EQ_INT(lh_explain_network(NET_KIND_CONNECT, "ok.test", 443, &ex), LH_ERROR);
    CHECK_EQ_INT(ex.n, 0);
    CHECK_STR_CONTAINS(ex.error, "no profile resolved");
    lh_explanation_free(&ex);

    struct run_flags f = flags_for(NULL);
    struct sandbox_config cfg;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    sandbox_config_free(&cfg);
    CHECK_EQ_INT(lh_explain_network(NET_KIND_CONNECT, "ok.test", 443, &ex), LH_OK);
    CHECK_EQ_INT(ex.n, 2);
    CHECK(!ex.layer[0].net.allow && ex.layer[1].net.allow);
    CHECK_STR_CONTAINS(ex.layer[1].where, ".config/cordon/policy.lua:2");
    CHECK_EQ_INT(ex.decided, 1);
    lh_explanation_free(&ex);
    /* the top layer passes it on: the layer below decided */
    CHECK_EQ_INT(lh_explain_network(NET_KIND_CONNECT, "other.test", 443, &ex), LH_OK);
    CHECK_EQ_INT(ex.n, 2);
    CHECK_EQ_INT(ex.decided, 0);
    lh_explanation_free(&ex);
    CHECK_EQ_INT(lh_explain_network(NET_KIND_CONNECT, "boom.test", 443, &ex), LH_ERROR);
    CHECK_EQ_INT(ex.layer[1].outcome, LH_ERROR);
    CHECK(!ex.layer[1].net.allow);
    CHECK_STR_CONTAINS(ex.layer[1].error, "policy.lua:3: nope");
    CHECK_EQ_INT(ex.decided, 1);
    lh_explanation_free(&ex);

    CHECK_EQ_INT(lh_explain_profile(&f, &ex), LH_OK);
    CHECK_EQ_INT(ex.n, 2);
    CHECK(ex.layer[0].changed.len > 1);
    CHECK_EQ_INT((int)ex.layer[1].changed.len, 1);
    CHECK_STR_CONTAINS(ex.layer[1].changed.items[0], "json");
    CHECK_EQ_INT(ex.decided, 1);
    lh_explanation_free(&ex);

    /* no layer defines `refusal` in this datadir: no refusal, nothing listed */
    struct lh_command_result in = {.command = "true", .cwd = "/"};
    CHECK_EQ_INT(lh_explain_refusals(&in, &ex), LH_OK);
    CHECK_EQ_INT(ex.n, 0);
    CHECK(ex.error[0] == '\0');
    lh_explanation_free(&ex);
    lh_close();
    free(ucfg);
}

/* The run path opens, resolves and closes once per command: fifty rounds must keep working
 * (and, under ASan, leak nothing). Its speed is measured in bench/, never asserted here. */
static void test_repeated_open_close(void)
{
    setup();
    for (int i = 0; i < 50; i++) {
        struct lh_options opt = {.datadir = data};
        CHECK_EQ_INT(lh_open(&opt, err, sizeof err), 0);
        CHECK_EQ_INT(resolve_name("strict"), LH_OK);
        lh_close();
    }
}

TEST_MAIN({"coding is the default", test_coding_default},
          {"strict, readonly, ops resolve", test_named_profiles},
          {"flags merge over the profile", test_flags},
          {"unknown profile names the known ones", test_unknown_profile},
          {"profile syntax error has file:line", test_profile_syntax_error},
          {"profile validation names file:line and key", test_profile_validation},
          {"endless loop -> LH_TIMEOUT", test_hook_timeout},
          {"allocation bomb -> LH_NOMEM, state rebuilt", test_hook_nomem},
          {"raise / bad result -> file:line", test_hook_errors},
          {"policies see only the sandboxed API", test_sandboxed_globals},
          {"bytecode is refused", test_bytecode_refused},
          {"the embedded modules are bytecode", test_embedded_bytecode_only},
          {"a built-in file's chunk only for its exact text", test_builtin_chunks},
          {"policy load errors stop lh_open", test_policy_load_errors},
          {"user layer and user profiles", test_user_layer},
          {"lh_check_all reports every problem", test_check_all},
          {"lh_check_file checks one policy or profile file", test_check_file},
          {"explain: each layer's answer and the deciding layer", test_explain},
          {"explain: profile keys credited to the file that set them", test_explain_profile_files},
          {"open, resolve, close fifty times", test_repeated_open_close},
          {"environment hook failures stop the run with file:line", test_environment_hook_failures})
