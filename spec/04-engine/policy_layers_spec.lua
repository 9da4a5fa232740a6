-- spec/04-engine/policy_layers_spec.lua — the `cordon policy` toolbox loads the layers a run in
-- that directory would (a trusted project's .cordon, with the one-line notice when untrusted,
-- and --policy FILE): `policy net` and `policy detect` answer with the project's rules only once
-- trusted; `policy explain --input` shows each layer's refusals and which layer decided;
-- `policy test` runs the project's refusal cases; --repeat measures. Drives the built binary.
local h = require("spec.helpers")

local fixture = h.fixtures .. "/project"
local corpus = h.fixtures .. "/refusal"

-- A workspace with a copy of the fixture project's .cordon and a private config directory.
local function project()
    local ws = h.workspace()
    h.sh_ok(("mkdir -p %s/.cordon && cp -r %s/policy.lua %s/profiles %s/tests %s/.cordon/"):format(
        h.quote(ws), h.quote(fixture), h.quote(fixture), h.quote(fixture), h.quote(ws)))
    return ws, { XDG_CONFIG_HOME = h.tmpdir() }
end

local function cordon(ws, env, args)
    return h.cordon(args, { cwd = ws, env = env })
end

local function not_trusted_line(ws)
    return ("cordon: project policy in %s/.cordon is not trusted (not trusted yet); review it and run: cordon trust %s\n")
        :format(ws, ws)
end

local function esc(s) return (s:gsub("%p", "%%%0")) end

-- the fixture project's in-house tool message: a write refusal only by the project's layer
local buildtool = '{"command": "buildtool", "exit_code": 1, "stdout": "", '
    .. '"stderr": "buildtool: cannot write cache /opt/cache\\n"}'

-- a project layer that drops every "hidden" refusal of the layers below
local drop_hidden = [[
return {
    refusal = function(input, next)
        local out = {}
        for _, r in ipairs(next(input) or {}) do
            if r.kind ~= "hidden" then out[#out + 1] = r end
        end
        return out
    end,
}
]]

describe("cordon policy net and detect load the run's layers", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("policy net: untrusted project skipped with the one line; trusted applied", function()
        local ws, env = project()
        local args = { "policy", "net", "--kind", "connect", "registry.internal.example", "443" }
        local r = cordon(ws, env, args)
        assert.are.equal(1, r.code, h.describe(r))
        assert.are.equal(not_trusted_line(ws), r.stderr)
        assert.are.equal(0, cordon(ws, env, { "trust" }).code)
        r = cordon(ws, env, args)
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("", r.stderr, h.describe(r))
        assert.are.equal("allow\nrule: registry.internal.example:443\nreason: the team registry\n", r.stdout)
        -- the project's deny of the metadata address, under the project's profile too
        r = cordon(ws, env, { "policy", "net", "--profile", "web", "--kind", "http", "169.254.169.254", "80" })
        assert.are.equal(1, r.code, h.describe(r))
        assert.matches("reason: cloud metadata is never reachable\n", r.stdout)
    end)

    it("policy net: --policy FILE adds a layer on top", function()
        local ws, env = project()
        local r = cordon(ws, env, { "policy", "net", "--policy", fixture .. "/policy.lua",
            "registry.internal.example", "443" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.matches("^allow\n", r.stdout)
        r = cordon(ws, env, { "policy", "net", "--policy", "/nonexistent/p.lua", "example.com", "443" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.matches("\ncordon: policy net: /nonexistent/p%.lua: No such file or directory\n$", r.stderr)
    end)

    it("policy detect: the project's refusal rule only once trusted, or with --policy", function()
        local ws, env = project()
        local case = h.tmpdir() .. "/case.json"
        h.write_file(case, buildtool)
        local r = cordon(ws, env, { "policy", "detect", "--input", case })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal(not_trusted_line(ws), r.stderr)
        assert.are.equal("no refusal\n", r.stdout)
        r = cordon(ws, env, { "policy", "detect", "--input", case, "--policy", fixture .. "/policy.lua" })
        assert.matches("^write /opt/cache: buildtool cache outside the writable set", r.stdout, nil, h.describe(r))
        assert.are.equal(0, cordon(ws, env, { "trust" }).code)
        r = cordon(ws, env, { "policy", "detect", "--input", case })
        assert.are.equal("", r.stderr, h.describe(r))
        assert.matches("^write /opt/cache: buildtool cache outside the writable set", r.stdout)
    end)

    it("--repeat N prints the measuring line on stderr and keeps the answer", function()
        local ws, env = project()
        assert.are.equal(0, cordon(ws, env, { "trust" }).code)
        local r = cordon(ws, env, { "policy", "net", "--repeat", "50", "registry.internal.example", "443" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.matches("^allow\n", r.stdout)
        assert.matches("^decisions: 50, per decision: %d+%.%d%d us\n$", r.stderr)
        r = cordon(ws, env, { "policy", "detect", "--repeat", "7", "--input", corpus .. "/01-touch-outside.json" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.matches("^write ", r.stdout)
        assert.matches("^decisions: 7, per decision: %d+%.%d%d us\n$", r.stderr)
        for _, bad in ipairs({ "0", "-3", "x", "" }) do
            r = cordon(ws, env, { "policy", "net", "--repeat", bad, "example.com", "443" })
            assert.are.equal(125, r.code, h.describe(r))
            r = cordon(ws, env, { "policy", "detect", "--repeat=" .. bad, "--input", corpus .. "/01-touch-outside.json" })
            assert.are.equal(125, r.code, h.describe(r))
        end
    end)
end)

describe("cordon policy explain --input", function()
    after_each(h.cleanup)

    local function dropping_project()
        local ws, env = project()
        h.write_file(ws .. "/.cordon/policy.lua", drop_hidden)
        assert.are.equal(0, cordon(ws, env, { "trust" }).code)
        return ws, env
    end

    it("shows each layer's refusals and the project layer that dropped one kind", function()
        local ws, env = dropping_project()
        local r = cordon(ws, env, { "policy", "explain", "--input", corpus .. "/19-cat-hidden.json" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("", r.stderr, h.describe(r))
        assert.matches("^refusal cat /etc/shadow %(exit 1, profile coding%)\n", r.stdout)
        assert.matches("\n1%. [^\n]*/policies/10%-refusal%.lua:%d+  hidden /etc/shadow\n", r.stdout)
        assert.matches("\n2%. " .. esc(ws) .. "/%.cordon/policy%.lua:%d+  no refusal\n", r.stdout)
        assert.matches("\nrefusals: no refusal\ndecided by: " .. esc(ws) .. "/%.cordon/policy%.lua %(layer 2%)\n$", r.stdout)
    end)

    it("leaves the decision to the lower layer when the project changes nothing", function()
        local ws, env = dropping_project()
        local r = cordon(ws, env, { "policy", "explain", "--input", corpus .. "/01-touch-outside.json" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.matches("\n2%. [^\n]*/%.cordon/policy%.lua:%d+  write /var/tmp/cordon%-corpus/outside/file%.txt\n", r.stdout)
        assert.matches("\nrefusals: write /var/tmp/cordon%-corpus/outside/file%.txt\n"
            .. "decided by: [^\n]*/policies/10%-refusal%.lua %(layer 1%)\n$", r.stdout)
    end)

    it("skips an untrusted project with the one line; --policy adds a layer", function()
        local ws, env = project()
        h.write_file(ws .. "/.cordon/policy.lua", drop_hidden)
        local r = cordon(ws, env, { "policy", "explain", "--input", corpus .. "/19-cat-hidden.json" })
        assert.are.equal(not_trusted_line(ws), r.stderr)
        assert.matches("decided by: [^\n]*/policies/10%-refusal%.lua %(layer 1%)\n$", r.stdout)
        r = cordon(ws, env, { "policy", "explain", "--policy", ws .. "/.cordon/policy.lua",
            "--input", corpus .. "/19-cat-hidden.json" })
        assert.matches("decided by: " .. esc(ws) .. "/%.cordon/policy%.lua %(layer 2%)\n$", r.stdout)
    end)

    it("a failing layer reports no refusal with its error, exit 1", function()
        local ws, env = project()
        h.write_file(ws .. "/.cordon/policy.lua", "return { refusal = function() error('boom') end }\n")
        assert.are.equal(0, cordon(ws, env, { "trust" }).code)
        local r = cordon(ws, env, { "policy", "explain", "--input", corpus .. "/19-cat-hidden.json" })
        assert.are.equal(1, r.code, h.describe(r))
        assert.matches("\n2%. [^\n]*/%.cordon/policy%.lua:1  no refusal  policy error %(error%): [^\n]*boom", r.stdout)
    end)

    it("bad input: exit 125 naming the field; --input with HOST PORT is a usage error", function()
        local ws, env = project()
        local case = h.tmpdir() .. "/case.json"
        h.write_file(case, '{"command": "x", "exit_code": 1, "stdout": ""}')
        local r = cordon(ws, env, { "policy", "explain", "--input", case })
        assert.are.equal(125, r.code, h.describe(r))
        assert.matches("missing field 'stderr'", r.stderr)
        r = cordon(ws, env, { "policy", "explain", "--input", case, "example.com", "443" })
        assert.are.equal(125, r.code, h.describe(r))
    end)
end)

describe("cordon policy test: refusal cases", function()
    after_each(h.cleanup)

    it("runs them: a passing and a failing case, kinds compared as a multiset", function()
        local ws, env = project()
        h.write_file(ws .. "/.cordon/tests/refusals.json", ([[
{"refusals": [
  {"input": %s, "expect": {"kinds": ["write"]}},
  {"input": {"command": "cat /srv/x/key", "exit_code": 1, "stdout": "",
             "stderr": "cat: /srv/x/key: No such file or directory\ntouch: cannot touch '/etc/motd': Read-only file system\n",
             "cwd": "/", "hidden": ["/srv/x"], "host": {"exists": ["/srv/x/key"]}},
   "expect": {"kinds": ["write", "hidden"]}},
  {"input": %s, "expect": {"kinds": ["hidden"]}},
  {"input": %s, "expect": {"none": true}},
  {"input": {"command": "x"}, "expect": {"none": true}}
]}]]):format(buildtool, buildtool, buildtool))
        local r = cordon(ws, env, { "policy", "test" })
        assert.are.equal(1, r.code, h.describe(r))
        assert.matches("tests/refusals.json: refusals%[2%]: buildtool: expected hidden, got write\n", r.stdout)
        assert.matches("tests/refusals.json: refusals%[3%]: buildtool: expected none, got write\n", r.stdout)
        assert.matches("tests/refusals.json: refusals%[4%]: input: missing field 'exit_code'\n", r.stdout)
        -- fixture: 6; this file: 2 pass, 3 fail
        assert.matches("\n8 passed, 3 failed\n$", r.stdout)
    end)

    it("names a malformed case", function()
        local ws, env = project()
        h.write_file(ws .. "/.cordon/tests/refusals.json", '{"refusals": [{"input": {}, "expect": {"kinds": "write"}}]}')
        local r = cordon(ws, env, { "policy", "test" })
        assert.are.equal(1, r.code, h.describe(r))
        assert.matches("refusals%[0%]: needs \"input\"", r.stdout)
    end)
end)
