-- spec/04-engine/run_cli_spec.lua — `cordon run` as a caller sees it: bad input, exit codes,
-- signals, --json, stdin, the environment, `cordon policy check`; and the conventions every
-- command keeps: --help, --version, one usage line for a usage error.
-- Drives the built binary ($CORDON_BIN); loopback only.
local h = require("spec.helpers")

local function one_cordon_line(r)
    local lines = {}
    for line in r.stderr:gmatch("[^\n]+") do lines[#lines + 1] = line end
    assert.are.equal(1, #lines, "expected exactly one stderr line\n" .. h.describe(r))
    assert.truthy(lines[1]:match("^cordon: "), "stderr must start with 'cordon: '\n" .. h.describe(r))
end

-- Every command and subcommand (policy check and explain are tested with their own code).
-- Every usage error exits 125, as all of cordon's own refusals (2 could be the command's own:
-- docs/exit-status.md); names: what the usage error's line must contain.
local commands = {
    { words = { "run" } },
    { words = { "session" } },
    { words = { "session", "start" } },
    { words = { "session", "list" } },
    { words = { "session", "status" } },
    { words = { "session", "stop" } },
    -- exec's messages are client_exec.c's: they point at --help instead of repeating it
    { words = { "exec" }, names = "cordon exec --help" },
    { words = { "jobs" } },
    { words = { "logs" } },
    { words = { "stop" } },
    { words = { "cancel" } },
    { words = { "approve" } },
    { words = { "policy" } },
    { words = { "policy", "net" } },
    { words = { "policy", "detect" } },
    { words = { "policy", "test" } },
    { words = { "trust" } },
    { words = { "nc" } },
}

local function with(words, ...)
    local t = {}
    for _, w in ipairs(words) do t[#t + 1] = w end
    for _, w in ipairs({ ... }) do t[#t + 1] = w end
    return t
end

describe("every command: --help, --version, usage errors", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)
    -- session commands never reach a session here: a runtime directory of their own
    local function env() return { env = { XDG_RUNTIME_DIR = h.runtime_dir() } } end

    for _, c in ipairs(commands) do
        local name = table.concat(c.words, " ")
        it(("cordon %s --help, -h, and --help after an unknown option: usage on stdout, exit 0"):format(name),
            function()
                for _, flags in ipairs({ { "--help" }, { "-h" }, { "--no-such-option", "--help" } }) do
                    local r = h.cordon(with(c.words, table.unpack(flags)), env())
                    assert.are.equal(0, r.code, h.describe(r))
                    assert.are.equal("usage: cordon " .. name .. " ",
                        r.stdout:sub(1, #name + 15), h.describe(r))
                    assert.are.equal("", r.stderr, h.describe(r))
                end
            end)

        it(("cordon help %s prints what cordon %s --help prints"):format(name, name), function()
            local want = h.cordon(with(c.words, "--help"), env())
            local r = h.cordon(with({ "help" }, table.unpack(c.words)), env())
            assert.are.equal(0, r.code, h.describe(r))
            assert.are.equal(want.stdout, r.stdout, h.describe(r))
            assert.are.equal("", r.stderr, h.describe(r))
        end)

        it(("cordon %s --no-such-option: one line naming the usage, exit 125"):format(name),
            function()
                local r = h.cordon(with(c.words, "--no-such-option"), env())
                assert.are.equal(125, r.code, h.describe(r))
                one_cordon_line(r)
                assert.truthy(r.stderr:find("cordon: " .. name .. ": ", 1, true), h.describe(r))
                assert.truthy(r.stderr:find("'--no-such-option'", 1, true), h.describe(r))
                assert.truthy(r.stderr:find(c.names or ("usage: cordon " .. name .. " "), 1, true), h.describe(r))
                assert.are.equal("", r.stdout, h.describe(r))
            end)
    end

    it("cordon --help lists every command; so do -h and help", function()
        for _, flag in ipairs({ "--help", "-h", "help" }) do
            local r = h.cordon({ flag })
            assert.are.equal(0, r.code, h.describe(r))
            assert.are.equal("usage: cordon ", r.stdout:sub(1, 14), h.describe(r))
            for _, c in ipairs(commands) do
                assert.truthy(r.stdout:find("\n  " .. c.words[1] .. " ", 1, true), c.words[1] .. "\n" .. h.describe(r))
            end
        end
    end)

    it("cordon --version and cordon version print the project's VERSION", function()
        local cmake = assert(h.read_file(h.source_dir .. "/CMakeLists.txt"))
        local version = assert(cmake:match("project%(cordon VERSION (%d+%.%d+%.%d+)"), "no VERSION in CMakeLists.txt")
        for _, word in ipairs({ "--version", "version" }) do
            local r = h.cordon({ word })
            assert.are.equal(0, r.code, h.describe(r))
            assert.are.equal("cordon " .. version .. "\n", r.stdout, h.describe(r))
            assert.are.equal("", r.stderr, h.describe(r))
        end
    end)

    it("cordon help: the command list; cordon help of an unknown command: exit 125", function()
        local top = h.cordon({ "--help" })
        local r = h.cordon({ "help" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal(top.stdout, r.stdout, h.describe(r))
        assert.truthy(r.stdout:find("cordon help COMMAND", 1, true), h.describe(r))
        r = h.cordon({ "help", "no-such-command" })
        assert.are.equal(125, r.code, h.describe(r))
        one_cordon_line(r)
        assert.truthy(r.stderr:find("cordon: help: unknown command 'no-such-command'", 1, true), h.describe(r))
    end)

    it("no command, an unknown command or option: one line naming the usage, exit 125", function()
        for _, args in ipairs({ {}, { "no-such-command" }, { "--no-such-option" } }) do
            local r = h.cordon(args)
            assert.are.equal(125, r.code, h.describe(r))
            one_cordon_line(r)
            assert.truthy(r.stderr:find("usage: cordon COMMAND", 1, true), h.describe(r))
        end
    end)

    it("a missing value or argument: one line naming the usage, exit 125", function()
        local cases = {
            { { "run", "--profile" }, 125, "usage: cordon run " },
            { { "run", "--json" }, 125, "usage: cordon run " },
            { { "session", "start" }, 125, "usage: cordon session start " },
            { { "session", "start", "--profile" }, 125, "usage: cordon session start " },
            { { "session" }, 125, "usage: cordon session " },
            { { "session", "status" }, 125, "usage: cordon session status " },
            { { "jobs" }, 125, "usage: cordon jobs " },
            { { "logs", "web" }, 125, "usage: cordon logs " },
            { { "approve", "web", "7" }, 125, "usage: cordon approve " },
            { { "policy" }, 125, "usage: cordon policy " },
            { { "policy", "net", "--allow" }, 125, "usage: cordon policy net " },
            { { "policy", "net", "a.test" }, 125, "usage: cordon policy net " },
            { { "policy", "detect" }, 125, "usage: cordon policy detect " },
            { { "policy", "detect", "--input" }, 125, "usage: cordon policy detect " },
            { { "policy", "test", "a", "b" }, 125, "usage: cordon policy test " },
            { { "trust", "a", "b" }, 125, "usage: cordon trust " },
            { { "nc", "a.test" }, 125, "usage: cordon nc " },
        }
        for _, c in ipairs(cases) do
            local r = h.cordon(c[1], env())
            assert.are.equal(c[2], r.code, h.describe(r))
            one_cordon_line(r)
            assert.truthy(r.stderr:find(c[3], 1, true), h.describe(r))
        end
    end)

    it("after --, --help is the command's own", function()
        local r = h.cordon({ "run", "--", "sh", "-c", 'echo "$1"', "sh", "--help" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("--help\n", r.stdout, h.describe(r))
        -- without --, the command starts at the first word that is not an option
        r = h.cordon({ "run", "sh", "-c", 'echo "$1"', "sh", "-h" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("-h\n", r.stdout, h.describe(r))
    end)
end)

describe("cordon run: bad input exits 125 with one 'cordon:' line", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("an unknown flag", function()
        local r = h.cordon({ "run", "--no-such-flag", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
        one_cordon_line(r)
    end)

    it("an unknown profile", function()
        local r = h.cordon({ "run", "--profile", "no-such-profile-xyz", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
        one_cordon_line(r)
    end)

    it("no command after --", function()
        local r = h.cordon({ "run", "--" })
        assert.are.equal(125, r.code, h.describe(r))
        one_cordon_line(r)
    end)

    it("--workspace that does not exist", function()
        local r = h.cordon({ "run", "--workspace", "/nonexistent/cordon-spec", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
        one_cordon_line(r)
    end)

    it("--allow-write that does not exist", function()
        local r = h.cordon({ "run", "--allow-write", "/nonexistent/cordon-spec", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
        one_cordon_line(r)
    end)

    it("a kernel that allows no user namespace names the sysctl to change", function()
        -- A user namespace of our own whose limit for nested ones is 0 stands in for a kernel
        -- with user namespaces disabled, without touching the host's sysctl.
        local r = h.sh("unshare -Ur sh -c " .. h.quote("echo 0 > /proc/sys/user/max_user_namespaces && exec "
            .. h.quote(h.bin) .. " run -- true"))
        assert.are.equal(125, r.code, h.describe(r))
        one_cordon_line(r)
        assert.truthy(r.stderr:match("user%.max_user_namespaces"), h.describe(r))
    end)

    it("does not run the command when it refuses", function()
        local ws = h.workspace()
        local r = h.cordon({ "run", "--profile", "no-such-profile-xyz", "--", "touch", ws .. "/ran" },
            { workspace = ws })
        assert.are.equal(125, r.code, h.describe(r))
        assert.is_nil(h.read_file(ws .. "/ran"))
    end)
end)

describe("cordon run: exit codes pass through", function()
    after_each(h.cleanup)

    it("0 for true", function()
        local r = h.cordon({ "run", "--", "true" })
        assert.are.equal(0, r.code, h.describe(r))
    end)

    it("exit 3 -> 3", function()
        local r = h.run_sh("exit 3")
        assert.are.equal(3, r.code, h.describe(r))
    end)

    it("killed by SIGTERM -> 143", function()
        local r = h.run_sh("kill -TERM $$")
        assert.are.equal(143, r.code, h.describe(r))
    end)

    it("killed by SIGKILL -> 137", function()
        local r = h.run_sh("kill -KILL $$")
        assert.are.equal(137, r.code, h.describe(r))
    end)

    it("a missing command -> 127", function()
        local r = h.cordon({ "run", "--", "cordon-spec-no-such-command" })
        assert.are.equal(127, r.code, h.describe(r))
    end)

    it("a file that is not executable -> 126", function()
        local ws = h.workspace()
        h.write_file(ws .. "/notexec", "#!/bin/sh\necho ran\n", "644")
        local r = h.cordon({ "run", "--", "./notexec" }, { workspace = ws })
        assert.are.equal(126, r.code, h.describe(r))
        assert.is_nil(r.stdout:match("ran"))
    end)

    it("a refusal hook that fails: one line naming file:line, the command's own exit code", function()
        local ws = h.workspace()
        local policy = h.tmpdir() .. "/broken-refusal.lua"
        h.write_file(policy, "return {\n  refusal = function(input, next)\n    error('detector broke')\n  end,\n}\n")
        local r = h.cordon({ "run", "--policy", policy, "--", "sh", "-c", "exit 3" }, { workspace = ws })
        assert.are.equal(3, r.code, h.describe(r))
        one_cordon_line(r)
        assert.truthy(r.stderr:find(policy .. ":3: detector broke", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("no refusal reported", 1, true), h.describe(r))
    end)

    it("an escalate hook that fails: the refusal, then one line naming file:line; denied", function()
        local ws = h.workspace()
        local policy = h.tmpdir() .. "/broken-escalate.lua"
        h.write_file(policy, "return {\n  escalate = function(input, next)\n    error('judge broke')\n  end,\n}\n")
        local r = h.cordon({ "run", "--ask-sandbox-off", "--policy", policy, "--", "touch", "/etc/cordon-spec" },
            { workspace = ws })
        assert.are.equal(1, r.code, h.describe(r))
        local _, failures = r.stderr:gsub("judge broke", "")
        assert.are.equal(1, failures, h.describe(r))
        assert.truthy(r.stderr:find(policy .. ":3: judge broke", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("refused a write to /etc/cordon-spec", 1, true), h.describe(r))
        assert.is_nil(r.stderr:find("outside the sandbox", 1, true), h.describe(r))
    end)

    it("stdout and stderr of the command reach the caller separately", function()
        local r = h.run_sh("echo to-out; echo to-err >&2")
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("to-out\n", r.stdout)
        assert.truthy(r.stderr:match("to%-err"), h.describe(r))
        assert.is_nil(r.stderr:match("to%-out"))
    end)
end)

describe("cordon run: --json", function()
    after_each(h.cleanup)

    it("prints one result object on the last line, after the command's output", function()
        local r = h.cordon({ "run", "--json", "--", "/bin/bash", "-c", "echo out-line; exit 3" })
        assert.are.equal(3, r.code, h.describe(r))
        local v, last = h.last_json(r.stdout)
        assert.is_table(v, "last line is not JSON: " .. tostring(last) .. "\n" .. h.describe(r))
        assert.are.equal(3, v.exit_code)
        assert.are.equal("coding", v.profile)
        assert.are.equal(require("cjson").null, v.signal)
        assert.is_number(v.duration_ms)
        assert.is_true(v.duration_ms >= 0)
        assert.is_number(v.detect_ms) -- the refusal hook ran on the failed command's output
        assert.is_true(v.detect_ms > 0 and v.detect_ms <= v.duration_ms, h.describe(r))
        assert.are.same({}, v.credentials) -- none declared (run_cred_spec: the declared ones)
        assert.are.equal(1, select(2, r.stdout:gsub("out%-line", "")), h.describe(r))
        assert.truthy(r.stdout:find("out%-line\n.*{"), "command output must come first\n" .. h.describe(r))
    end)

    it("names the profile that ran", function()
        local r = h.cordon({ "run", "--json", "--profile", "strict", "--", "true" })
        assert.are.equal(0, r.code, h.describe(r))
        local v = h.last_json(r.stdout)
        assert.is_table(v, h.describe(r))
        assert.are.equal("strict", v.profile)
        assert.are.equal(0, v.exit_code)
    end)

    it("reports the signal that killed the command", function()
        local r = h.cordon({ "run", "--json", "--", "/bin/bash", "-c", "kill -TERM $$" })
        assert.are.equal(143, r.code, h.describe(r))
        local v = h.last_json(r.stdout)
        assert.is_table(v, h.describe(r))
        assert.truthy(v.signal == 15 or (type(v.signal) == "string" and v.signal:match("TERM")),
            "signal: " .. tostring(v.signal))
    end)
end)

describe("cordon run: stdin and signals", function()
    after_each(h.cleanup)

    it("passes stdin through", function()
        local r = h.cordon({ "run", "--", "cat" }, { stdin = "hi\n" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("hi\n", r.stdout)
    end)

    it("passes a large stdin through whole", function()
        local data = ("0123456789abcdef"):rep(64 * 1024) -- 1 MiB
        local r = h.cordon({ "run", "--", "wc", "-c" }, { stdin = data })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal(tostring(#data), h.chomp(r.stdout))
    end)

    for _, sig in ipairs({ { "TERM", 143 }, { "INT", 130 } }) do
        it("SIG" .. sig[1] .. " sent to cordon reaches the command #slow", function()
            local ws = h.workspace()
            local script = ("trap 'echo trapped > %s/trapped; exit %d' %s; touch %s/ready; "
                .. "for i in $(seq 600); do sleep 0.1; done; exit 9"):format(ws, sig[2], sig[1], ws)
            local res = h.drive({ "run", "--", "/bin/bash", "-c", script }, { workspace = ws },
                { ready_file = ws .. "/ready", signal = sig[1], timeout = 30 })
            assert.is_true(res.ready, "command never started: " .. res.cmd)
            assert.is_false(res.timed_out, "cordon did not exit after SIG" .. sig[1])
            assert.are.equal("trapped\n", h.read_file(ws .. "/trapped"), "the trap did not run")
            assert.are.equal(sig[2], res.returncode)
        end)
    end
end)

describe("cordon run: environment", function()
    after_each(h.cleanup)

    it("sets CORDON_SANDBOX=1 and TMPDIR=/tmp", function()
        local r = h.run_sh('printf "%s|%s\\n" "$CORDON_SANDBOX" "$TMPDIR"', { env = { TMPDIR = "/var/tmp" } })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("1|/tmp\n", r.stdout)
    end)

    it("strips *_API_KEY and *_TOKEN variables", function()
        local r = h.run_sh("env", { env = { FOO_API_KEY = "x-secret-key", GITHUB_TOKEN = "x-secret-token",
            CORDON_SPEC_PLAIN = "kept" } })
        assert.are.equal(0, r.code, h.describe(r))
        assert.is_nil(r.stdout:match("FOO_API_KEY"), h.describe(r))
        assert.is_nil(r.stdout:match("x%-secret"), h.describe(r))
        assert.truthy(r.stdout:match("CORDON_SPEC_PLAIN=kept"), "ordinary variables must pass\n" .. h.describe(r))
    end)

    it("keeps the caller's other variables and HOME", function()
        local home = h.home()
        local r = h.run_sh('printf "%s\\n" "$HOME"')
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal(home .. "\n", r.stdout)
    end)
end)

describe("cordon policy check", function()
    after_each(h.cleanup)

    it("exits 0 with the built-in policies", function()
        local r = h.cordon({ "policy", "check" })
        assert.are.equal(0, r.code, h.describe(r))
    end)

    it("reports every problem of a project with file and line, and exits 1", function()
        local dir = h.tmpdir()
        h.sh_ok("mkdir -p " .. h.quote(dir .. "/.cordon/profiles"))
        h.write_file(dir .. "/.cordon/profiles/web.lua",
            'return {\n    extends = "coding",\n    network = { allow = { "*" } },\n}\n')
        h.write_file(dir .. "/.cordon/policy.lua", "return {\n    profile = function(input, next\n}\n")
        local r = h.cordon({ "policy", "check", dir })
        assert.are.equal(1, r.code, h.describe(r))
        assert.truthy(r.stdout:find(dir .. "/.cordon/policy.lua:3:", 1, true), h.describe(r))
        assert.truthy(r.stdout:find(dir .. "/.cordon/profiles/web.lua:3: invalid network rule '*'", 1, true),
            h.describe(r))
        assert.truthy(r.stdout:find("policy check: 2 problems", 1, true), h.describe(r))
    end)

    it("checks one good policy file", function()
        local dir = h.tmpdir()
        h.write_file(dir .. "/mine.lua",
            "return {\n    profile = function(input, next)\n        local p = next(input)\n" ..
            "        p.json = true\n        return p\n    end,\n}\n")
        local r = h.cordon({ "policy", "check", dir .. "/mine.lua" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("policy check: 0 problems", 1, true), h.describe(r))
    end)

    it("checks one good profile file, found in its own profiles/ directory", function()
        local dir = h.tmpdir()
        h.sh_ok("mkdir -p " .. h.quote(dir .. "/profiles"))
        h.write_file(dir .. "/profiles/web.lua",
            'return {\n    extends = "coding",\n    network = { allow = { "example.com:443" } },\n}\n')
        local r = h.cordon({ "policy", "check", dir .. "/profiles/web.lua" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("policy check: 0 problems", 1, true), h.describe(r))
    end)

    it("names file:line of a broken policy or profile file, and exits 1", function()
        local dir = h.tmpdir()
        h.write_file(dir .. "/broken.lua", "return {\n    profile = function(input, next\n}\n")
        local r = h.cordon({ "policy", "check", dir .. "/broken.lua" })
        assert.are.equal(1, r.code, h.describe(r))
        assert.truthy(r.stdout:find(dir .. "/broken.lua:3:", 1, true), h.describe(r))
        assert.truthy(r.stdout:find("policy check: 1 problem\n", 1, true), h.describe(r))
        h.sh_ok("mkdir -p " .. h.quote(dir .. "/profiles"))
        h.write_file(dir .. "/profiles/web.lua",
            'return {\n    extends = "coding",\n    network = { allow = { "*" } },\n}\n')
        r = h.cordon({ "policy", "check", dir .. "/profiles/web.lua" })
        assert.are.equal(1, r.code, h.describe(r))
        assert.truthy(r.stdout:find(dir .. "/profiles/web.lua:3: invalid network rule '*'", 1, true),
            h.describe(r))
        assert.falsy(r.stdout:find("Not a directory", 1, true), h.describe(r))
    end)

    it("reports a missing file as a problem, and exits 1", function()
        local dir = h.tmpdir()
        local r = h.cordon({ "policy", "check", dir .. "/missing.lua" })
        assert.are.equal(1, r.code, h.describe(r))
        assert.truthy(r.stdout:find(dir .. "/missing.lua: No such file or directory", 1, true), h.describe(r))
    end)

    it("prints its usage for --help and exits 0; an unknown option exits 125", function()
        local r = h.cordon({ "policy", "check", "--help" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("usage: cordon policy check [--json] [DIR | FILE]", 1, true), h.describe(r))
        r = h.cordon({ "policy", "check", "--bogus" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("unknown option '--bogus'", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("usage: cordon policy check", 1, true), h.describe(r))
        r = h.cordon({ "policy", "explain", "--help" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("usage: cordon policy explain", 1, true), h.describe(r))
    end)
end)

describe("cordon run: --json with bytes that are not UTF-8", function()
    after_each(h.cleanup)

    it("writes a valid UTF-8 line, each bad byte as U+FFFD", function()
        -- bash names the path it cannot write, raw byte and all: the refusal's line, path and
        -- reason carry it into the result.
        local r = h.run_sh("echo x > \"/usr/cordon-bad-$(printf '\\xff')-byte\"", { flags = { "--json" } })
        assert.are.equal(1, r.code, h.describe(r))
        local v, last = h.last_json(r.stdout)
        assert.is_table(v, "last line is not JSON: " .. tostring(last) .. "\n" .. h.describe(r))
        assert.is_truthy(utf8.len(last), "the result line is not valid UTF-8: " .. last)
        local f = assert(v.refusals[1], "no refusal\n" .. h.describe(r))
        assert.are.equal("write", f.kind)
        assert.are.equal("/usr/cordon-bad-\u{FFFD}-byte", f.path)
        assert.truthy(f.line:find("/usr/cordon-bad-\u{FFFD}-byte", 1, true), f.line)
    end)
end)

describe("cordon run: --json starts the result on a line of its own", function()
    after_each(h.cleanup)

    it("after output without a final newline, a newline comes first", function()
        local r = h.cordon({ "run", "--json", "--", "printf", "x" })
        assert.are.equal(0, r.code, h.describe(r))
        local lines = {}
        for line in r.stdout:gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
        assert.are.equal(2, #lines, h.describe(r))
        assert.are.equal("x", lines[1])
        local ok, v = pcall(require("cjson").decode, lines[2])
        assert.is_true(ok, "second line is not JSON: " .. lines[2])
        assert.are.equal(0, v.exit_code)
        assert.are.equal("x\n" .. lines[2] .. "\n", r.stdout, "nothing else is printed")
    end)

    it("after output ending in a newline, and after none, no empty line", function()
        local r = h.cordon({ "run", "--json", "--", "echo", "x" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:match("^x\n{[^\n]*}\n$"), h.describe(r))
        r = h.cordon({ "run", "--json", "--", "true" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:match("^{[^\n]*}\n$"), h.describe(r))
    end)
end)
