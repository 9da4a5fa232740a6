-- spec/04-engine/exit_codes_spec.lua — one exit-status contract for every command
-- (docs/exit-status.md): the command's own status, 128+N when signal N ended it, 124 for a
-- timeout, 126/127 as a shell does, 125 when cordon itself refused or failed. Checked across
-- `cordon run`, `cordon exec` (foreground, timeout, signal, a missing session), the other
-- session commands on a missing session, usage errors, and the MCP tool's result; as root and
-- as uid 65534. Each status a command gives is first taken from bash outside the sandbox, so
-- the spec compares with what a shell does rather than with numbers of its own.
-- Each case uses its own XDG_RUNTIME_DIR; every wait is bounded; nothing is timed.
local h = require("spec.helpers")
local cjson = require("cjson")

local NOBODY = 65534
local RAW = h.fixtures .. "/mcp/raw_client.py"

-- The commands and what a shell says of them: the same words run by bash on the host.
local SCRIPTS = {
    { "its own status", "exit 3" },
    { "a signal (TERM)", "kill -TERM $$" },
    { "a signal (KILL)", "kill -KILL $$" },
    { "a command not found", "no-such-command-x9" },
    { "a file that cannot be run", "/etc/passwd" },
}

local function outside(script)
    return h.sh(h.join({ "/bin/bash", "-c", script })).code
end

local function identities()
    return { { name = "root" }, { name = "uid 65534", uid = NOBODY } }
end

-- opts for h.cordon as `who`: its uid and, for uid 65534, a home of its own.
local function as(who, opts)
    opts.uid = who.uid
    if who.uid then opts.home = h.secret_home(who.uid) end
    return opts
end

-- A detached session for `who` in a workspace it may write; reaped after the case.
local function start(who)
    local runtime = h.runtime_dir()
    if who.uid then h.sh(h.join({ "chown", tostring(who.uid), runtime })) end
    local s = { name = "exit-" .. h.token(), runtime = runtime, cwd = h.workspace(nil, who.uid),
        env = { XDG_RUNTIME_DIR = runtime }, uid = who.uid }
    s.opts = as(who, { cwd = s.cwd, env = s.env })
    local r = h.cordon({ "session", "start", s.name, "--detach" }, s.opts)
    h.defer(function()
        h.cordon({ "session", "stop", s.name }, { cwd = s.cwd, env = s.env, uid = who.uid, home = s.opts.home,
            timeout = 30 })
    end)
    assert.are.equal(0, r.code, h.describe(r))
    return s
end

for _, who in ipairs(identities()) do
    describe("exit status (" .. who.name .. "):", function()
        after_each(h.cleanup)

        it("cordon run: the command's, 128+N, 126/127 as bash; 125 for cordon's own refusal", function()
            local ws = h.workspace(nil, who.uid)
            for _, c in ipairs(SCRIPTS) do
                local want = outside(c[2])
                local r = h.run_sh(c[2], as(who, { workspace = ws }))
                assert.are.equal(want, r.code, c[1] .. "\n" .. h.describe(r))
            end
            assert.are.equal(127, h.cordon({ "run", "--", "no-such-command-x9" }, as(who, { cwd = ws })).code)
            assert.are.equal(126, h.cordon({ "run", "--", "/etc/passwd" }, as(who, { cwd = ws })).code)
            for _, bad in ipairs({ { "run", "--no-such-flag", "--", "true" },
                { "run", "--profile", "no-such-profile", "--", "true" } }) do
                local r = h.cordon(bad, as(who, { cwd = ws }))
                assert.are.equal(125, r.code, h.describe(r))
                assert.truthy(r.stderr:find("^cordon: "), h.describe(r))
            end
        end)

        it("cordon exec: the command's, 128+N, 126/127 as bash, 124 for --timeout", function()
            local s = start(who)
            for _, c in ipairs(SCRIPTS) do
                local want = outside(c[2])
                local r = h.cordon({ "exec", s.name, "--", c[2] }, s.opts)
                assert.are.equal(want, r.code, c[1] .. "\n" .. h.describe(r))
            end
            -- GNU timeout's number, not the TERM that stopped it (143)
            local r = h.cordon({ "exec", s.name, "--timeout", "0.5", "--", "sleep 60" }, s.opts)
            assert.are.equal(124, r.code, h.describe(r))
            assert.truthy(r.stderr:find("timed out", 1, true), h.describe(r))
            -- a command that exits 124, 125 or 2 itself is passed as it is
            for _, n in ipairs({ 2, 124, 125 }) do
                r = h.cordon({ "exec", s.name, "--", "exit " .. n }, s.opts)
                assert.are.equal(n, r.code, h.describe(r))
                assert.are.equal("", r.stderr, h.describe(r))
            end
            -- cordon's own refusals: a usage error, a bad timeout
            for _, bad in ipairs({ { "exec", s.name, "--bogus", "--", "true" },
                { "exec", s.name, "--timeout", "x", "--", "true" }, { "exec" } }) do
                r = h.cordon(bad, s.opts)
                assert.are.equal(125, r.code, h.describe(r))
            end
        end)

        it("a missing session: 125 from every session command, one line naming it", function()
            local runtime = h.runtime_dir()
            if who.uid then h.sh(h.join({ "chown", tostring(who.uid), runtime })) end
            local name = "nosuch-" .. h.token()
            local opts = as(who, { cwd = h.workspace(nil, who.uid), env = { XDG_RUNTIME_DIR = runtime } })
            for _, args in ipairs({ { "exec", name, "--", "true" }, { "exec", name, "--background", "--", "true" },
                { "jobs", name }, { "logs", name, "2" }, { "stop", name, "2" }, { "cancel", name, "t" },
                { "session", "status", name }, { "session", "stop", name }, { "approve", name, "1", "deny" },
                { "publish", name, "8000" }, { "unpublish", name, "8000" } }) do
                local r = h.cordon(args, opts)
                assert.are.equal(125, r.code, h.describe(r))
                assert.truthy(r.stderr:find(name, 1, true), h.describe(r))
                local _, lines = r.stderr:gsub("\n", "")
                assert.are.equal(1, lines, h.describe(r))
            end
        end)
    end)
end

describe("exit status: usage errors of every command are 125", function()
    after_each(h.cleanup)

    it("unknown options and missing words", function()
        local env = { XDG_RUNTIME_DIR = h.runtime_dir() }
        for _, args in ipairs({ { "no-such-command" }, { "help", "no-such-command" }, { "jobs" },
            { "session", "bogus" }, { "session", "start", "--bogus" }, { "policy", "net", "--bogus" },
            { "policy", "check", "--bogus" }, { "trust", "--bogus" }, { "home", "--bogus" },
            { "nc", "--bogus" }, { "mcp", "--session" }, { "logs", "x", "notapid" } }) do
            local r = h.cordon(args, { env = env })
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find("^cordon: "), h.describe(r))
        end
    end)
end)

-- `cordon mcp --session NAME` driven with raw JSON-RPC lines (as session_mcp_spec.lua does).
local function mcp(s, steps)
    local line = "cd " .. h.quote(s.cwd) .. " && exec " ..
        h.command_line({ "mcp", "--session", s.name }, { env = s.env, uid = s.uid, home = s.opts.home,
            timeout = 150 })
    local script = h.tmpdir() .. "/script.json"
    h.write_file(script, cjson.encode(steps))
    h.sh(h.join({ "chmod", "0644", script }))
    local r = h.sh(h.join({ h.python, RAW, script, "--" }) .. " " .. h.quote(line))
    local ok, rep = pcall(cjson.decode, r.stdout)
    assert(ok and type(rep) == "table", "raw_client.py failed\n" .. h.describe(r))
    rep.describe = r.stdout:sub(1, 3000)
    return rep
end

local function call(id, arguments)
    return { send_json = { jsonrpc = "2.0", id = id, method = "tools/call",
        params = { name = "run_command", arguments = arguments } } }
end

for _, who in ipairs(identities()) do
    describe("exit status (" .. who.name .. "): the MCP tool", function()
        after_each(h.cleanup)

        it("run_command reports the CLI's numbers: own, 128+N, 127, 124 for a timeout", function()
            local s = start(who)
            local rep = mcp(s, {
                { send_json = { jsonrpc = "2.0", id = 1, method = "initialize", params = {
                    protocolVersion = "2025-06-18", capabilities = {},
                    clientInfo = { name = "exit-spec", version = "1" } } } },
                { expect = 1, as = "init" },
                { send_json = { jsonrpc = "2.0", method = "notifications/initialized" } },
                call(2, { command = "exit 3" }), { expect = 2, as = "own" },
                call(3, { command = "kill -TERM $$" }), { expect = 3, as = "term" },
                call(4, { command = "no-such-command-x9" }), { expect = 4, as = "missing" },
                call(5, { command = "sleep 60", timeout = 0.5 }), { expect = 5, as = "slow" },
                { close = true },
            })
            assert.is_true(rep.error == nil or rep.error == cjson.null, rep.describe)
            local function sc(k) return rep.kept[k].result.structuredContent end
            assert.are.equal(outside("exit 3"), sc("own").exit_code, rep.describe)
            assert.are.equal(outside("kill -TERM $$"), sc("term").exit_code, rep.describe)
            assert.are.equal(outside("no-such-command-x9"), sc("missing").exit_code, rep.describe)
            assert.is_true(sc("slow").timed_out, rep.describe)
            assert.are.equal(124, sc("slow").exit_code, rep.describe)
            local text = rep.kept.slow.result.content[1].text
            assert.truthy(text:find("[exit code 124] timed out", 1, true), text)
            -- the CLI says the same of the same command
            local r = h.cordon({ "exec", s.name, "--timeout", "0.5", "--", "sleep 60" }, s.opts)
            assert.are.equal(sc("slow").exit_code, r.code, h.describe(r))
        end)
    end)
end
