-- spec/04-engine/completions_spec.lua — the shell completions (completions/cordon.bash,
-- completions/_cordon) loaded in a real bash and zsh, with the built cordon first on PATH:
-- `cordon ru<TAB>`, `cordon run --pro<TAB>`, a profile name after --profile, subcommands, the
-- name of a running session after `cordon exec`; as root and as uid 65534 (bash). Nothing is
-- typed at a terminal: bash calls the completion function as `complete -F` would, with
-- COMP_WORDS and COMP_CWORD set; zsh runs the completion file as its completion system would,
-- with `words` and `CURRENT` set and `compadd` recording what it was given that matches the
-- word being completed (as compadd does).
-- Each case uses its own XDG_RUNTIME_DIR; every wait is bounded; nothing is timed.
local h = require("spec.helpers")

-- The completion file as uid may read it: the checkout itself may lie in a folder only root
-- may enter (CI clones into a mode-0700 one), so uid 65534 gets a copy of its own.
local function completion_file(name, uid)
    local path = h.source_dir .. "/completions/" .. name
    if not uid then return path end
    local dir = h.tmpdir()
    h.sh_ok(("cp %s %s/ && chmod 755 %s && chmod 644 %s/%s"):format(h.quote(path), h.quote(dir), h.quote(dir),
        h.quote(dir), name))
    return dir .. "/" .. name
end

-- The bin directory (a copy everyone may enter, for uid 65534) and the env for the shell.
local function bindir(uid)
    local bin = h.bin
    if uid then
        local copy, why = h.unprivileged_copy(uid)
        if not copy then h.skip(why) end
        bin = copy.bin
    end
    return bin:match("^(.*)/[^/]+$")
end

local function shell(uid, runtime, program)
    local env = { "HOME=/nonexistent", "PATH=" .. bindir(uid) .. ":" .. h.path,
        "XDG_RUNTIME_DIR=" .. runtime, "XDG_CONFIG_HOME=/nonexistent" }
    if uid then
        local copy = h.unprivileged_copy(uid)
        env[#env + 1] = "CORDON_DATADIR=" .. copy.datadir
    end
    local pre = uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid) or ""
    return "cd / && timeout -k 5 60 " .. pre .. "env -i " .. h.join(env) .. " " .. program
end

-- What the bash completion offers for the words (the last one is being completed).
local function bash_complete(words, opts)
    opts = opts or {}
    local script = ([[
source %s || exit 3
complete -p cordon >/dev/null || exit 4
COMP_WORDS=(%s)
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_cordon
printf '%%s\n' "${COMPREPLY[@]}"
]]):format(h.quote(completion_file("cordon.bash", opts.uid)), h.join(words))
    local r = h.sh(shell(opts.uid, opts.runtime or h.runtime_dir(), "bash --norc --noprofile -c " .. h.quote(script)))
    assert.are.equal(0, r.code, h.describe(r))
    local got = {}
    for l in r.stdout:gmatch("[^\n]+") do got[l] = true end
    return got, r
end

local function zsh_complete(words, opts)
    opts = opts or {}
    local script = ([=[
typeset -ga offered
compadd() { local a; for a in "$@"; do [[ $a == -- || $a != ${words[CURRENT]}* ]] || offered+=("$a"); done }
_files() { offered+=("<files>") }
_normal() { offered+=("<normal>") }
words=(%s)
CURRENT=${#words}
source %s
printf '%%s\n' "${offered[@]}"
]=]):format(h.join(words), h.quote(completion_file("_cordon", opts.uid)))
    local r = h.sh(shell(opts.uid, opts.runtime or h.runtime_dir(), "zsh -f -c " .. h.quote(script)))
    assert.are.equal(0, r.code, h.describe(r))
    local got = {}
    for l in r.stdout:gmatch("[^\n]+") do got[l] = true end
    return got, r
end

local function keys(t)
    local k = {}
    for name in pairs(t) do k[#k + 1] = name end
    table.sort(k)
    return table.concat(k, " ")
end

local shells = {
    { name = "bash", complete = bash_complete, have = "bash" },
    { name = "zsh", complete = zsh_complete, have = "zsh" },
}

for _, sh in ipairs(shells) do
    for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = 65534 } }) do
        describe(("%s completion (%s)"):format(sh.name, who.name), function()
            after_each(h.cleanup)
            before_each(function()
                if h.sh("command -v " .. sh.have).code ~= 0 then
                    h.skip(sh.have .. " is not installed (apt-get install " .. sh.have .. ")")
                end
            end)

            it("completes commands, subcommands, flags and profile names", function()
                local o = { uid = who.uid }
                local got = sh.complete({ "cordon", "ru" }, o)
                assert.are.equal("run", keys(got))
                got = sh.complete({ "cordon", "run", "--pro" }, o)
                assert.are.equal("--profile", keys(got))
                got = sh.complete({ "cordon", "run", "--profile", "" }, o)
                for _, p in ipairs({ "coding", "ops", "strict", "readonly" }) do
                    assert.is_true(got[p], p .. " not offered: " .. keys(got))
                end
                got = sh.complete({ "cordon", "session", "st" }, o)
                assert.are.equal("start status stop", keys(got))
                got = sh.complete({ "cordon", "policy", "ne" }, o)
                assert.are.equal("net", keys(got))
                got = sh.complete({ "cordon", "session", "start", "--det" }, o)
                assert.are.equal("--detach", keys(got))
                got = sh.complete({ "cordon", "exec", "x", "--time" }, o)
                assert.are.equal("--timeout", keys(got))
                got = sh.complete({ "cordon", "exec", "x", "--background", "--rest" }, o)
                assert.are.equal("--restart", keys(got))
                got = sh.complete({ "cordon", "exec", "x", "--restart", "" }, o)
                assert.are.equal("always on-failure", keys(got))
                got = sh.complete({ "cordon", "exec", "x", "--back" }, o)
                assert.are.equal("--background --backoff", keys(got))
                got = sh.complete({ "cordon", "run", "--home", "" }, o)
                assert.are.equal("overlay readonly tmpfs", keys(got))
                got = sh.complete({ "cordon", "logs", "x", "1", "--" }, o)
                assert.is_true(got["--tail"] and got["--follow"] and true, keys(got))
                got = sh.complete({ "cordon", "trust", "--st" }, o)
                assert.are.equal("--status", keys(got))
                got = sh.complete({ "cordon", "home", "--js" }, o)
                assert.are.equal("--json", keys(got))
                got = sh.complete({ "cordon", "help", "pol" }, o)
                assert.are.equal("policy", keys(got))
                -- and a word that no command starts with: nothing
                got = sh.complete({ "cordon", "zz" }, o)
                assert.are.equal("", keys(got))
            end)

            it("completes the names of running sessions", function()
                local runtime = h.runtime_dir()
                if who.uid then h.sh_ok(("chown %d %s"):format(who.uid, h.quote(runtime))) end
                local name = "comp-" .. h.token()
                local before = sh.complete({ "cordon", "exec", "" }, { uid = who.uid, runtime = runtime })
                assert.is_nil(before[name])
                local ws = h.workspace(nil, who.uid)
                local opts = { cwd = ws, env = { XDG_RUNTIME_DIR = runtime }, uid = who.uid }
                if who.uid then opts.home = h.secret_home(who.uid) end
                local r = h.cordon({ "session", "start", name, "--detach" }, opts)
                h.defer(function()
                    h.cordon({ "session", "stop", name }, { cwd = ws, env = opts.env, uid = who.uid, home = opts.home })
                end)
                assert.are.equal(0, r.code, h.describe(r))
                for _, words in ipairs({ { "cordon", "exec", "" }, { "cordon", "session", "status", "" },
                    { "cordon", "jobs", "co" } }) do
                    local got = sh.complete(words, { uid = who.uid, runtime = runtime })
                    assert.is_true(got[name], table.concat(words, " ") .. ": " .. keys(got))
                end
            end)
        end)
    end
end
