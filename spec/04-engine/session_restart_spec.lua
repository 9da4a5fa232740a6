-- spec/04-engine/session_restart_spec.lua — supervised background jobs: `exec --background
-- --restart on-failure[:N]|always[:N] [--backoff D]`. A job exiting 3 with on-failure:3 runs 4
-- times in all, each restart one line in its log with a growing wait, then stays ended with
-- last_exit 3; `always` restarts a job exiting 0; on-failure does not; `cordon stop` during the
-- wait ends the supervision; what a run left in its group is stopped before the next run; the
-- shell string is kept while a script it runs is read anew (docs/sessions.md says so); the
-- counters are in `cordon jobs`, its --json and the state file; bad values are one line and 125.
-- Root and uid 65534 (a session of its own, in a home and runtime folder it owns). Every wait is
-- bounded and generous; no timing is asserted but the order of the log's lines and the waits
-- the lines say.
local h = require("spec.helpers")
local cjson = require("cjson")

local NOBODY = 65534
local ok = h.ok
local WITHIN = 60 -- seconds: a generous bound for a few restarts of 0.2 s to 0.8 s

local function is_root()
    return h.chomp(h.sh_ok("id -u")) == "0"
end

-- A detached session of uid (nil: the spec's own caller). Returns s with s.opts (the h.cordon
-- options of every command of it). Stopped at clean-up.
local function start(uid)
    local name = "spec-restart-" .. h.token()
    local runtime = h.runtime_dir()
    local opts = { env = { XDG_RUNTIME_DIR = runtime } }
    if uid then
        local home = h.tmpdir()
        h.sh_ok(("chown %d:%d %s %s"):format(uid, uid, h.quote(home), h.quote(runtime)))
        opts.uid, opts.home, opts.cwd = uid, home, h.workspace(nil, uid)
    else
        opts.cwd = h.workspace()
    end
    local s = { name = name, runtime = runtime, opts = opts }
    h.defer(function() h.cordon({ "session", "stop", name }, opts) end)
    ok(h.cordon({ "session", "start", name, "--detach" }, opts))
    return s
end

local function cli(s, args)
    return h.cordon(args, s.opts)
end

-- Start a supervised job; its pid (the one it keeps).
local function job(s, command, flags)
    local args = { "exec", s.name, "--background" }
    for _, f in ipairs(flags) do args[#args + 1] = f end
    args[#args + 1] = "--"
    args[#args + 1] = command
    local r = ok(cli(s, args))
    local pid = tonumber(r.stdout:match("PID: (%d+)"))
    assert(pid, h.describe(r))
    assert.matches("\nRestart: ", r.stdout, 1, true)
    assert.matches("\nStop: cordon stop " .. s.name .. " " .. pid, r.stdout, 1, true)
    return pid
end

local function job_of(s, pid)
    local list = cjson.decode(ok(cli(s, { "jobs", s.name, "--json" })).stdout)
    for _, j in ipairs(list.jobs) do
        if j.pid == pid then return j end
    end
    error("job " .. pid .. " is not listed")
end

local function wait_state(s, pid, state)
    local last
    local done = h.wait_for(function()
        last = job_of(s, pid)
        return last.state == state
    end, WITHIN)
    assert(done, ("job %d never was %s: %s"):format(pid, state, cjson.encode(last)))
    return last
end

local function log_of(s, pid)
    return ok(cli(s, { "logs", s.name, tostring(pid) })).stdout
end

-- The log's lines, and the waits its restart lines say, in order.
local function restart_lines(log)
    local waits, numbers = {}, {}
    for n, w in log:gmatch("cordon: restart (%d+)[^\n]* after exit status %d+ and a wait of ([%d.]+)s") do
        numbers[#numbers + 1] = tonumber(n)
        waits[#waits + 1] = tonumber(w)
    end
    return numbers, waits
end

local function count(text, plain)
    local n, from = 0, 1
    while true do
        local a, b = text:find(plain, from, true)
        if not a then return n end
        n, from = n + 1, b + 1
    end
end

for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
    describe("supervised jobs as " .. who.name, function()
        local function session()
            if who.uid and not is_root() then h.skip("needs root to switch to uid 65534") end
            return start(who.uid)
        end

        it("a job exiting 3 with on-failure:3 runs 4 times with growing waits, then stays ended", function()
            local s = session()
            local pid = job(s, "sh -c 'echo run; exit 3'", { "--restart", "on-failure:3", "--backoff", "0.2s" })
            local j = wait_state(s, pid, "exited")
            assert.are.equal("on-failure:3", j.restart)
            assert.are.equal(0.2, j.backoff)
            assert.are.equal(3, j.restarts)
            assert.are.equal(3, j.last_exit)
            assert.are.equal(3, j.exit_code)
            assert.is_nil(j.next_start ~= cjson.null and j.next_start or nil)
            local log = log_of(s, pid)
            assert.are.equal(4, count(log, "run\n"), log)
            local numbers, waits = restart_lines(log)
            assert.are.same({ 1, 2, 3 }, numbers, log)
            assert(waits[1] < waits[2] and waits[2] < waits[3], "the waits do not grow:\n" .. log)
            -- each restart line comes after a run's output and before the next run's
            assert.matches("^run\ncordon: restart 1 of 3 [^\n]*\nrun\ncordon: restart 2 of 3 [^\n]*\nrun\n"
                .. "cordon: restart 3 of 3 [^\n]*\nrun\ncordon: exit status 3 after 3 restarts: "
                .. "on%-failure:3 allows no more[^\n]*\n$", log)
            -- the table says it too
            local t = ok(cli(s, { "jobs", s.name })).stdout
            assert.matches("RESTARTS +LAST_EXIT +NEXT_START", t)
            assert.matches("\n" .. pid .. " +exited +3 +3/3 +3 +%- ", t)
        end)

        it("always restarts a job that exits 0; on-failure does not", function()
            local s = session()
            local a = job(s, "echo again", { "--restart", "always:2", "--backoff", "0.2" })
            local f = job(s, "echo once", { "--restart", "on-failure", "--backoff", "0.2" })
            local ja = wait_state(s, a, "exited")
            assert.are.equal(2, ja.restarts)
            assert.are.equal(0, ja.last_exit)
            assert.are.equal(3, count(log_of(s, a), "again\n"))
            local jf = wait_state(s, f, "exited")
            assert.are.equal(0, jf.restarts)
            assert.are.equal(0, jf.last_exit)
            local log = log_of(s, f)
            assert.are.equal(1, count(log, "once\n"), log)
            assert.matches("cordon: exit status 0: on-failure restarts only a failed run", log, 1, true)
        end)

        it("cordon stop during the wait ends the supervision", function()
            local s = session()
            local pid = job(s, "echo try; exit 1", { "--restart", "on-failure", "--backoff", "3s" })
            local j = wait_state(s, pid, "restarting")
            assert.are.equal(1, j.last_exit)
            assert.is_number(j.next_start)
            assert.are.equal(cjson.null, j.current_pid)
            ok(cli(s, { "stop", s.name, tostring(pid) }))
            j = job_of(s, pid)
            assert.are.equal("stopped", j.state)
            -- well past the wait it was in: nothing started again
            os.execute("sleep 5")
            j = job_of(s, pid)
            assert.are.equal("stopped", j.state)
            assert.are.equal(0, j.restarts)
            local log = log_of(s, pid)
            assert.are.equal(1, count(log, "try\n"), log)
            assert.matches("cordon: stopped (cordon stop): no more restarts (0 so far)", log, 1, true)
        end)

        it("what a run left in its group is stopped before the next run", function()
            local s = session()
            local mark = ("sleep 9%d.%d"):format(math.random(100, 999), math.random(100000, 999999))
            local pid = job(s, mark .. " & exit 1", { "--restart", "on-failure:2", "--backoff", "0.2" })
            wait_state(s, pid, "exited")
            -- the last run's sleep is left, as an unsupervised job's would be; the two before
            -- were stopped with their runs
            local left = h.pgrep("[s]" .. mark:sub(2))
            assert.are.equal(1, #left, "sleeps left: " .. #left)
            ok(cli(s, { "stop", s.name, tostring(pid) }))
        end)

        it("keeps the shell string; a script it runs is read anew at each start", function()
            local s = session()
            local script = s.opts.cwd .. "/job.sh"
            h.write_file(script, "echo v1; exit 1\n")
            if who.uid then h.sh_ok(("chown %d %s"):format(who.uid, h.quote(script))) end
            local pid = job(s, "sh job.sh", { "--restart", "on-failure:1", "--backoff", "2s" })
            wait_state(s, pid, "restarting")
            h.write_file(script, "echo v2; exit 1\n")
            local j = wait_state(s, pid, "exited")
            assert.are.equal("sh job.sh", j.command)
            assert.are.equal(1, j.restarts)
            local log = log_of(s, pid)
            assert.matches("^v1\ncordon: restart 1 of 1 [^\n]*files it runs are read anew\nv2\n", log)
        end)

        it("the state file carries the counters", function()
            local s = session()
            local pid = job(s, "exit 2", { "--restart", "on-failure:1", "--backoff", "0.2" })
            wait_state(s, pid, "exited")
            local state
            assert(h.wait_for(function()
                local text = h.read_file(s.runtime .. "/cordon/" .. s.name .. ".jobs.json")
                state = text and cjson.decode(text)
                return state and state.jobs[1] and state.jobs[1].restarts == 1
            end, WITHIN), "the state file has no restarts")
            local j = state.jobs[1]
            assert.are.equal(pid, j.pid)
            assert.are.equal("on-failure:1", j.restart)
            assert.are.equal(2, j.last_exit)
        end)

        it("bad values are refused in one line with 125", function()
            local s = session()
            for _, args in ipairs({
                { "--background", "--restart", "sometimes" },
                { "--background", "--restart", "on-failure:-1" },
                { "--background", "--restart", "on-failure", "--backoff", "x" },
                { "--background", "--restart", "always", "--backoff", "0" },
                { "--restart", "on-failure" },
                { "--background", "--backoff", "1s" },
            }) do
                local a = { "exec", s.name }
                for _, x in ipairs(args) do a[#a + 1] = x end
                a[#a + 1] = "--"
                a[#a + 1] = "true"
                local r = cli(s, a)
                assert.are.equal(125, r.code, h.describe(r))
                assert.are.equal(1, select(2, r.stderr:gsub("\n", "")), h.describe(r))
            end
            -- the API refuses the same (a foreground exec with a restart)
            local as = who.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(who.uid, who.uid) or ""
            local r = h.sh(("%scurl -sS --unix-socket %s -d %s http://cordon/v1/exec"):format(as,
                h.quote(s.runtime .. "/cordon/" .. s.name .. ".sock"),
                h.quote('{"command":"true","restart":"always"}')))
            assert.matches('"error":"\\"restart\\" is for background jobs', r.stdout, 1, true)
            local list = cjson.decode(ok(cli(s, { "jobs", s.name, "--json" })).stdout)
            assert.are.equal(0, #list.jobs)
        end)
    end)
end

describe("supervised jobs through cordon mcp", function()
    after_each(h.cleanup)

    it("start_background takes restart and backoff; list_jobs shows the counters", function()
        local runtime = h.runtime_dir()
        local line = "cd " .. h.quote(h.workspace()) .. " && exec " ..
            h.command_line({ "mcp" }, { env = { XDG_RUNTIME_DIR = runtime }, timeout = 150 })
        local function call(id, tool, arguments)
            return { send_json = { jsonrpc = "2.0", id = id, method = "tools/call",
                params = { name = tool, arguments = arguments } } }
        end
        local steps = {
            { send_json = { jsonrpc = "2.0", id = 1, method = "initialize", params = {
                protocolVersion = "2025-06-18", capabilities = {},
                clientInfo = { name = "restart-spec", version = "1" } } } },
            { expect = 1, as = "init" },
            call(2, "start_background", { command = "echo m; exit 4", restart = "on-failure:1", backoff = 0.2 }),
            { expect = 2, as = "bg" },
            { poll = { name = "list_jobs", arguments = {} }, as = "jobs", ["until"] = "exited" },
            call(3, "start_background", { command = "true", restart = "sometimes" }), { expect = 3, as = "bad" },
            call(4, "start_background", { command = "true", backoff = 0 }), { expect = 4, as = "bad_backoff" },
            { close = true },
        }
        local script = h.tmpdir() .. "/script.json"
        h.write_file(script, cjson.encode(steps))
        local r = h.sh(h.join({ h.python, h.fixtures .. "/mcp/raw_client.py", script, "--" }) .. " " .. h.quote(line))
        local okj, rep = pcall(cjson.decode, r.stdout)
        assert(okj and type(rep) == "table", "raw_client.py failed\n" .. h.describe(r))
        local k = rep.kept
        local function text(msg)
            local parts = {}
            for _, c in ipairs(msg.result and msg.result.content or {}) do parts[#parts + 1] = c.text or "" end
            return table.concat(parts)
        end
        assert.matches("\nRestart: on-failure:1, backoff 0.2s", text(k.bg), 1, true)
        assert.matches("restart=on-failure:1 restarts=1 last_exit=4", text(k.jobs), 1, true)
        local j = k.jobs.result.structuredContent.jobs[1]
        assert.are.equal(1, j.restarts)
        assert.are.equal(4, j.last_exit)
        -- refused as invalid arguments, naming the argument
        assert.matches("restart must be", k.bad.error.message, 1, true)
        assert.matches("backoff must be", k.bad_backoff.error.message, 1, true)
    end)
end)

describe("supervised jobs through the clients", function()
    after_each(h.cleanup)
    local src = h.source_dir:sub(1, 1) == "/" and h.source_dir or (os.getenv("PWD") or ".") .. "/" .. h.source_dir

    -- A session, and the clients' sources as they are in the checkout.
    local function session()
        local s = start(nil)
        s.env = "XDG_RUNTIME_DIR=" .. h.quote(s.runtime) .. " CORDON_BIN=" .. h.quote(h.bin)
        return s
    end

    it("Python: background() takes restart and backoff; jobs() has the counters", function()
        local s = session()
        local r = h.sh(("cd %s && %s PYTHONPATH=%s %s -c %s %s"):format(h.quote(s.opts.cwd), s.env,
            h.quote(src .. "/clients/python/src"), h.python, h.quote([==[
import json, sys, time
from cordon import Session, APIError
s = Session.attach(sys.argv[1])
j = s.background("echo py; exit 6", restart="on-failure:1", backoff=0.2)
for _ in range(600):
    k = j.info()
    if k and k.state == "exited":
        break
    time.sleep(0.1)
try:
    s.background("true", restart="sometimes")
    bad = None
except APIError as e:
    bad = str(e)
print(json.dumps({"restart": k.restart, "backoff": k.backoff, "restarts": k.restarts,
                  "last_exit": k.last_exit, "next_start": k.next_start, "bad": bad}))
]==]), h.quote(s.name)))
        local out = h.last_json(r.stdout)
        assert(out, h.describe(r))
        assert.are.same({ restart = "on-failure:1", backoff = 0.2, restarts = 1, last_exit = 6 },
            { restart = out.restart, backoff = out.backoff, restarts = out.restarts, last_exit = out.last_exit })
        assert.are.equal(cjson.null, out.next_start)
        assert.matches("invalid restart policy 'sometimes'", out.bad, 1, true)
    end)

    it("TypeScript: background() takes restart and backoff; jobs() has the counters", function()
        if h.sh("command -v node").code ~= 0 then h.skip("node is not installed") end
        local s = session()
        local file = h.tmpdir() .. "/restart.mjs"
        h.write_file(file, ([==[
import { Session } from %q;
const s = await Session.attach(process.argv[2]);
const j = await s.background("echo ts; exit 7", { restart: "always:1", backoff: 0.2 });
let k;
for (let i = 0; i < 600; i++) {
  k = (await s.jobs()).find((x) => x.pid === j.pid);
  if (k && k.state === "exited") break;
  await new Promise((r) => setTimeout(r, 100));
}
console.log(JSON.stringify({ restart: k.restart, backoff: k.backoff, restarts: k.restarts,
  lastExit: k.lastExit, nextStart: k.nextStart }));
await s.dispose();
]==]):format(src .. "/clients/typescript/index.js"))
        local r = h.sh(("cd %s && %s node %s %s"):format(h.quote(s.opts.cwd), s.env, h.quote(file), h.quote(s.name)))
        local out = h.last_json(r.stdout)
        assert(out, h.describe(r))
        assert.are.same({ restart = "always:1", backoff = 0.2, restarts = 1, lastExit = 7, nextStart = cjson.null }, out)
    end)
end)
