-- spec/04-engine/session_logs_spec.lua — a background job's log read the ways an agent or a
-- person reads it: `cordon logs NAME PID [--tail N] [--follow]`, the API's
-- GET /v1/jobs/PID/log?tail=N&follow=1 (curl on the socket), and MCP's read_log with tail_lines
-- and wait. What is checked is what a user would see: the exact lines, in order, once each;
-- the exit status when the job ends, on SIGINT and SIGTERM; one line and 125 for a job that is
-- not there; bad values refused while the session goes on working.
-- The CLI cases run as root and as uid 65534 (a session of its own, in a home and runtime
-- folder it owns). Every wait is bounded (h.wait_for, timeout(1) around each cordon); no
-- timing is asserted: a job that must wait for the test waits for a file the test creates.
local h = require("spec.helpers")
local cjson = require("cjson")

local NOBODY = 65534
local ok = h.ok

local function is_root()
    return h.chomp(h.sh_ok("id -u")) == "0"
end

-- A detached session of uid (nil: the spec's own caller). Returns s with s.opts, the h.cordon
-- options every command of it uses. Stopped at clean-up (then its controller killed if left).
local function start(uid)
    local name = "spec-logs-" .. h.token()
    local runtime = h.runtime_dir()
    local opts = { env = { XDG_RUNTIME_DIR = runtime } }
    if uid then
        local home = h.tmpdir()
        h.sh_ok(("chown %d:%d %s %s"):format(uid, uid, h.quote(home), h.quote(runtime)))
        opts.uid, opts.home, opts.cwd = uid, home, h.workspace(nil, uid)
    else
        opts.cwd = h.workspace()
    end
    local s = { name = name, runtime = runtime, socket = h.session_socket(runtime, name), opts = opts }
    h.defer(function()
        local st = h.cordon({ "session", "status", name, "--json" }, opts)
        local okj, info = pcall(cjson.decode, st.stdout)
        h.cordon({ "session", "stop", name }, opts)
        local pid = okj and type(info) == "table" and math.tointeger(info.pid)
        if pid and not h.wait_for(function() return not h.is_controller(pid) end, 10) then
            os.execute("kill -9 " .. pid .. " 2>/dev/null")
        end
    end)
    ok(h.cordon({ "session", "start", name, "--detach" }, opts))
    return s
end

local function cli(s, args)
    return h.cordon(args, s.opts)
end

-- `cordon exec NAME --background -- CMD`: its pid.
local function background(s, cmd)
    local r = ok(cli(s, { "exec", s.name, "--background", "--", cmd }))
    return assert(tonumber(r.stdout:match("PID: (%d+)")), h.describe(r))
end

local function job_state(s, pid)
    local r = ok(cli(s, { "jobs", s.name, "--json" }))
    for _, j in ipairs(cjson.decode(r.stdout).jobs) do
        if math.tointeger(j.pid) == pid then return j.state end
    end
end

local function wait_ended(s, pid)
    assert(h.wait_for(function() return job_state(s, pid) ~= "running" end, 30),
        "job " .. pid .. " did not end")
end

local function lines(from, to, prefix)
    local t = {}
    for i = from, to do t[#t + 1] = (prefix or "line") .. i .. "\n" end
    return table.concat(t)
end

for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
    describe("cordon logs as " .. who.name, function()
        after_each(h.cleanup)

        local function session()
            if who.uid and not is_root() then h.skip("needs root to switch to uid 65534") end
            return start(who.uid)
        end

        it("--tail N prints exactly the last N lines", function()
            local s = session()
            local pid = background(s, "for i in $(seq 1 10); do echo line$i; done")
            wait_ended(s, pid)
            -- without --tail: the whole log (so the tail below is a choice, not all there is)
            assert.are.equal(lines(1, 10), ok(cli(s, { "logs", s.name, tostring(pid) })).stdout)
            assert.are.equal(lines(8, 10), ok(cli(s, { "logs", s.name, tostring(pid), "--tail", "3" })).stdout)
            assert.are.equal(lines(10, 10), ok(cli(s, { "logs", s.name, tostring(pid), "--tail=1" })).stdout)
            assert.are.equal("", ok(cli(s, { "logs", s.name, tostring(pid), "--tail", "0" })).stdout)
            assert.are.equal(lines(1, 10), ok(cli(s, { "logs", s.name, tostring(pid), "--tail", "50" })).stdout)
            -- a last line without a newline is a line, as for tail(1)
            local p2 = background(s, "printf 'a\\nb\\nc'")
            wait_ended(s, p2)
            assert.are.equal("b\nc", ok(cli(s, { "logs", s.name, tostring(p2), "--tail", "2" })).stdout)
        end)

        it("--follow prints every line in order as the job writes, and exits 0 when it ends", function()
            local s = session()
            local go = "/tmp/go-" .. h.token()
            local pid = background(s, ("echo first; while [ ! -e %s ]; do sleep 0.05; done; "
                .. "for i in $(seq 1 10); do echo line$i; sleep 0.1; done"):format(go))
            assert(h.wait_for(function()
                return cli(s, { "logs", s.name, tostring(pid) }).stdout == "first\n"
            end, 30), "the job never wrote its first line")
            -- a plain read is what there is now, and returns: the job is waiting for us
            assert.are.equal("first\n", ok(cli(s, { "logs", s.name, tostring(pid) })).stdout)
            local dir = h.tmpdir()
            if who.uid then h.sh_ok(("chown %d %s"):format(who.uid, h.quote(dir))) end
            local out, rc = dir .. "/out", dir .. "/rc"
            local line = h.command_line({ "logs", s.name, tostring(pid), "--follow" },
                { env = s.opts.env, uid = s.opts.uid, home = s.opts.home, timeout = 120 })
            h.sh_ok(("cd %s && (%s >%s 2>%s.err; echo $? >%s) &"):format(
                h.quote(s.opts.cwd), line, h.quote(out), h.quote(out), h.quote(rc)))
            assert(h.wait_for(function() return h.read_file(out) == "first\n" end, 30),
                "the follower did not print what was there")
            assert.is_nil(h.read_file(rc), "the follower ended while the job ran")
            ok(cli(s, { "exec", s.name, "--", "touch " .. go }))
            assert(h.wait_for(function() return h.read_file(rc) ~= nil end, 60), "the follower did not end")
            assert.are.equal("0\n", h.read_file(rc), h.read_file(out .. ".err"))
            assert.are.equal("first\n" .. lines(1, 10), h.read_file(out))
            -- --tail with --follow of an ended job: the last lines, at once
            assert.are.equal(lines(9, 10),
                ok(cli(s, { "logs", s.name, tostring(pid), "--tail", "2", "--follow" })).stdout)
        end)

        it("--follow ends on SIGINT (130 in a shell) and SIGTERM (143)", function()
            local s = session()
            local pid = background(s, "while :; do echo tick; sleep 0.2; done")
            local line = h.command_line({ "logs", s.name, tostring(pid), "--follow" },
                { env = s.opts.env, uid = s.opts.uid, home = s.opts.home, timeout = 120 })
            -- python starts it with SIGINT at its default (a shell's `&` would ignore it)
            local code = [==[
import signal, subprocess, sys, time
for sig in (signal.SIGINT, signal.SIGTERM):
    p = subprocess.Popen(["sh", "-c", "exec " + sys.argv[1]], stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"tick\n"
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=30)
        print(128 - rc if rc < 0 else rc)  # a shell's number for a signal's end
    except subprocess.TimeoutExpired:
        p.kill(); print("alive")
]==]
            local r = ok(h.sh(("cd %s && %s -c %s %s"):format(h.quote(s.opts.cwd), h.python,
                h.quote(code), h.quote(line))))
            assert.are.equal("130\n143\n", r.stdout, h.describe(r))
            ok(cli(s, { "stop", s.name, tostring(pid) }))
        end)

        it("a job that is not there is one line and 125; bad --tail values are refused", function()
            local s = session()
            local r = cli(s, { "logs", s.name, "99999" })
            assert.are.equal(125, r.code, h.describe(r))
            assert.are.equal("", r.stdout)
            assert.are.equal(1, select(2, r.stderr:gsub("\n", "")), h.describe(r))
            assert.truthy(r.stderr:find("no background job with pid 99999", 1, true), h.describe(r))
            local pid = background(s, "echo still")
            wait_ended(s, pid)
            for _, bad in ipairs({ { "--tail", "-1" }, { "--tail", "x" }, { "--tail" }, { "--tail=" } }) do
                local args = { "logs", s.name, tostring(pid) }
                for _, w in ipairs(bad) do args[#args + 1] = w end
                r = cli(s, args)
                assert.are.equal(125, r.code, h.describe(r))
                assert.truthy(r.stderr:find("cordon: logs: --tail", 1, true), h.describe(r))
            end
            assert.are.equal("still\n", ok(cli(s, { "logs", s.name, tostring(pid) })).stdout)
        end)
    end)
end

describe("GET /v1/jobs/PID/log?tail=N&follow=1", function()
    after_each(h.cleanup)

    it("tails, follows to the job's end, and refuses bad values with a 400", function()
        local s = start(nil)
        local pid = background(s, "for i in $(seq 1 10); do echo line$i; done")
        wait_ended(s, pid)
        local path = "/v1/jobs/" .. pid .. "/log"
        local r = h.api(s.socket, "GET", path .. "?tail=3")
        assert.are.equal(200, r.status, h.describe_api(r))
        assert.are.equal(lines(8, 10), r.body)
        r = h.api(s.socket, "GET", path .. "?tail=2&follow=1")
        assert.are.equal(lines(9, 10), r.body, h.describe_api(r))
        for _, q in ipairs({ "?tail=abc", "?tail=-1", "?follow=yes" }) do
            r = h.api(s.socket, "GET", path .. q)
            assert.are.equal(400, r.status, h.describe_api(r))
            assert.is_string(r.json and r.json.error, h.describe_api(r))
        end
        -- the session goes on answering
        assert.are.equal(lines(1, 10), h.api(s.socket, "GET", path).body)
        -- followed from the start while the job writes: every line once, in order
        local p2 = background(s, "for i in $(seq 1 8); do echo line$i; sleep 0.1; done")
        r = h.api(s.socket, "GET", "/v1/jobs/" .. p2 .. "/log?follow=1")
        assert.are.equal(200, r.status, h.describe_api(r))
        assert.are.equal(lines(1, 8), r.body)
    end)
end)

describe("MCP read_log with wait", function()
    after_each(h.cleanup)

    it("waits for the job's next output, then says when the job has ended", function()
        local s = start(nil)
        local go = "/tmp/go-" .. h.token()
        local pid = background(s, ("echo first; while [ ! -e %s ]; do sleep 0.05; done; echo late"):format(go))
        assert(h.wait_for(function()
            return cli(s, { "logs", s.name, tostring(pid) }).stdout == "first\n"
        end, 30))
        -- the job waits for the file; the touch runs while the MCP call below waits
        local line = h.command_line({ "exec", s.name, "--", "sleep 1; touch " .. go },
            { env = s.opts.env, timeout = 60 })
        h.sh_ok(("cd %s && (%s >/dev/null 2>&1) &"):format(h.quote(s.opts.cwd), line))
        -- one read_log call through spec/fixtures/mcp/raw_client.py (which waits for its answer)
        local function read_log(args)
            local steps = {
                { send_json = { jsonrpc = "2.0", id = 1, method = "initialize", params = {
                    protocolVersion = "2025-06-18", capabilities = {},
                    clientInfo = { name = "spec", version = "1" } } } },
                { expect = 1, as = "init" },
                { send_json = { jsonrpc = "2.0", method = "notifications/initialized" } },
                { send_json = { jsonrpc = "2.0", id = 2, method = "tools/call",
                    params = { name = "read_log", arguments = args } } },
                { expect = 2, as = "log" },
                { close = true },
            }
            local script = h.tmpdir() .. "/script.json"
            h.write_file(script, cjson.encode(steps))
            local server = "cd " .. h.quote(s.opts.cwd) .. " && exec " ..
                h.command_line({ "mcp", "--session", s.name }, { env = s.opts.env, timeout = 150 })
            local r = h.sh(h.join({ h.python, h.fixtures .. "/mcp/raw_client.py", script, "--" }) .. " " .. h.quote(server))
            local okj, rep = pcall(cjson.decode, r.stdout)
            assert(okj and type(rep) == "table" and rep.kept and rep.kept.log, h.describe(r))
            local m = rep.kept.log
            return m, (m.result and m.result.content and m.result.content[1].text or "") ..
                (m.error and m.error.message or ""), r
        end
        local m, text, r = read_log({ pid = pid, offset = 6, wait = 30 })
        assert.are.equal("late\n", text, h.describe(r))
        assert.are.equal(11, m.result.structuredContent.next_offset)
        wait_ended(s, pid)
        m, text, r = read_log({ pid = pid, offset = 11, wait = 30 })
        assert.truthy(text:find("the log has no bytes after offset 11; the job has ended", 1, true), h.describe(r))
        assert.are.equal(11, m.result.structuredContent.next_offset)
        text, r = select(2, read_log({ pid = pid, wait = 61 }))
        assert.truthy(text:find("wait must be a number of seconds from 0 to 60", 1, true), h.describe(r))
    end)
end)
