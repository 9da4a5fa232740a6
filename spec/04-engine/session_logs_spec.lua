-- spec/04-engine/session_logs_spec.lua — a background job's log read the ways an agent or a
-- person reads it: `cordon logs NAME PID [--tail N] [--follow]`, the API's
-- GET /v1/jobs/PID/log?tail=N&follow=1[&format=ndjson] (curl and a raw client on the socket),
-- the Python client's follow_logs, and MCP's read_log with tail_lines and wait_seconds. What is
-- checked is what a user would see: the exact lines, in order, once each; the exit status when
-- the job ends, on SIGINT and SIGTERM; a capped log's drop marker while following; the reason
-- when the session's end closes a followed log; one line and 125 for a job that is not there;
-- bad values refused while the session goes on working; the per-session bound on streams.
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
-- flags: more options of `session start`; log_cap: a profile of that session.log_cap.
local function start(uid, flags, log_cap)
    local name = "spec-logs-" .. h.token()
    local runtime = h.runtime_dir()
    local opts = { env = { XDG_RUNTIME_DIR = runtime } }
    local args = { "session", "start", name, "--detach" }
    for _, f in ipairs(flags or {}) do args[#args + 1] = f end
    if log_cap then
        local config = h.tmpdir()
        h.sh_ok("mkdir -p " .. h.quote(config .. "/cordon/profiles"))
        h.write_file(config .. "/cordon/profiles/speclogcap.lua",
            ('return { extends = "coding", session = { log_cap = %d } }\n'):format(log_cap))
        if uid then h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(config))) end
        opts.env.XDG_CONFIG_HOME = config
        args[#args + 1] = "--profile"
        args[#args + 1] = "speclogcap"
    end
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
    ok(h.cordon(args, opts))
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

        local function session(flags, log_cap)
            if who.uid and not is_root() then h.skip("needs root to switch to uid 65534") end
            return start(who.uid, flags, log_cap)
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

        -- `cordon logs ... --follow` in the background: its stdout, stderr and status in files
        local function follow_in_background(s, pid, extra)
            local dir = h.tmpdir()
            if who.uid then h.sh_ok(("chown %d %s"):format(who.uid, h.quote(dir))) end
            local args = { "logs", s.name, tostring(pid), "--follow" }
            for _, a in ipairs(extra or {}) do args[#args + 1] = a end
            local line = h.command_line(args,
                { env = s.opts.env, uid = s.opts.uid, home = s.opts.home, timeout = 120 })
            h.sh_ok(("cd %s && (%s >%s/out 2>%s/err; echo $? >%s/rc) &"):format(
                h.quote(s.opts.cwd), line, dir, dir, dir))
            return { out = dir .. "/out", err = dir .. "/err", rc = dir .. "/rc" }
        end

        it("--follow of a capped log starts at its drop marker and then shows every new line", function()
            local s = session(nil, 4096)
            local go = "/tmp/go-" .. h.token()
            -- ~10 KB at once (the cap keeps the newest half behind a marker), then 5 lines later
            local pid = background(s, ("for i in $(seq 1 200); do printf 'early %%04d .........................................\\n' $i; done; "
                .. "while [ ! -e %s ]; do sleep 0.05; done; for i in $(seq 1 5); do echo late$i; sleep 0.2; done"):format(go))
            assert(h.wait_for(function()
                return cli(s, { "logs", s.name, tostring(pid), "--tail", "1" }).stdout:match("^early 0200")
            end, 30), "the job never wrote its first lines")
            local f = follow_in_background(s, pid)
            assert(h.wait_for(function() return (h.read_file(f.out) or ""):find("early 0200", 1, true) end, 30),
                "the follower did not print what was there")
            assert.is_nil(h.read_file(f.rc), "the follower ended while the job ran")
            ok(cli(s, { "exec", s.name, "--", "touch " .. go }))
            assert(h.wait_for(function() return h.read_file(f.rc) ~= nil end, 60), "the follower did not end")
            assert.are.equal("0\n", h.read_file(f.rc), h.read_file(f.err))
            local out = h.read_file(f.out)
            assert.matches("^%[cordon: %d+ earlier bytes of this log were dropped%]\n", out)
            assert.are.equal(lines(1, 5, "late"), out:sub(-#lines(1, 5, "late")))
            -- what was kept of the early lines: consecutive, up to the last one, each once
            local first, count, last = nil, 0, nil
            for n in out:gmatch("early (%d%d%d%d)") do
                n = tonumber(n)
                if last then assert.are.equal(last + 1, n, out) end
                first, last, count = first or n, n, count + 1
            end
            assert.are.equal(200, last, out)
            assert.is_true(first > 1 and count > 10, out)
        end)

        it("a follower connected when the session's lifetime ends gets the reason and 125", function()
            local s = session({ "--max-lifetime", "4", "--expiry-warning", "0" })
            local pid = background(s, "while :; do echo tick; sleep 0.2; done")
            local f = follow_in_background(s, pid)
            assert(h.wait_for(function() return h.read_file(f.rc) ~= nil end, 60), "the follower outlived its session")
            assert.are.equal("125\n", h.read_file(f.rc), h.read_file(f.err))
            assert.matches("^tick\n", h.read_file(f.out))
            assert.are.equal("cordon: logs: session '" .. s.name .. "' ended (lifetime) while the log was followed\n",
                h.read_file(f.err))
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

-- A raw client of the socket for what curl cannot do: hold many streams at once, or stop
-- reading one for a while. Prints one JSON object; see each use.
local RAW = [==[
import json, socket, sys, time

sock_path, mode, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])

# HTTP/1.0: no chunks, and the end of the body is the end of the connection
def open_stream(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock_path)
    s.sendall(("GET %s HTTP/1.0\r\nHost: cordon\r\n\r\n" % path).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            break
        head += b
    return s, int(head.split(b" ")[1])

def rest_of(s):
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            return data
        data += b

def job_state():
    s, _ = open_stream("/v1/jobs")
    for j in json.loads(rest_of(s))["jobs"]:
        if j["pid"] == pid:
            return j["state"]

if mode == "limit":
    # as many followers as the session takes, then one more
    held, status, refused = [], 0, None
    for _ in range(40):
        s, status = open_stream("/v1/jobs/%d/log?follow=1" % pid)
        if status != 200:
            refused = rest_of(s).decode()
            break
        held.append(s)
    for s in held:
        s.close()
    after = 0
    for _ in range(50):  # the server notices the closed ones as it reads them
        s, after = open_stream("/v1/jobs/%d/log?follow=1" % pid)
        s.close()
        if after == 200:
            break
        time.sleep(0.1)
    print(json.dumps({"held": len(held), "refused": refused, "status": status, "after": after}))
elif mode == "slow":
    # follow, read nothing while the job writes far more than its cap, then read it all
    s, status = open_stream("/v1/jobs/%d/log?follow=1&format=ndjson" % pid)
    open(sys.argv[4], "w").close()  # the job's go file
    deadline = time.time() + 120
    while job_state() == "running" and time.time() < deadline:
        time.sleep(0.1)
    events = [json.loads(l) for l in rest_of(s).splitlines() if l]
    print(json.dumps({"status": status, "events": events}))
]==]

local function raw(s, mode, pid, extra)
    local r = h.sh(h.join({ h.python, "-c", RAW, s.socket, mode, tostring(pid), extra or "" }))
    local okj, v = pcall(cjson.decode, r.stdout)
    assert(okj and type(v) == "table", h.describe(r))
    return v
end

-- The NDJSON lines of a body, decoded.
local function events_of(body)
    local t = {}
    for line in body:gmatch("[^\n]+") do t[#t + 1] = cjson.decode(line) end
    return t
end

-- The bytes of a stream's output events, in order.
local function output_of(events)
    local t = {}
    for _, e in ipairs(events) do
        if e.event == "output" then t[#t + 1] = e.data end
    end
    return table.concat(t)
end

describe("GET /v1/jobs/PID/log?format=ndjson", function()
    after_each(h.cleanup)

    it("follows as events: lines as they are written, the job's exit last", function()
        local s = start(nil)
        local go = "/tmp/go-" .. h.token()
        local pid = background(s, ("echo first; while [ ! -e %s ]; do sleep 0.05; done; "
            .. "for i in $(seq 1 5); do echo line$i; sleep 0.2; done; exit 3"):format(go))
        local out = h.tmpdir() .. "/stream"
        h.sh_ok(("(curl -sSN --max-time 120 --unix-socket %s %s >%s; echo done >%s.end) &"):format(
            h.quote(s.socket), h.quote("http://cordon/v1/jobs/" .. pid .. "/log?follow=1&format=ndjson"),
            h.quote(out), h.quote(out)))
        -- the first line comes as an event while the job still runs (it waits for us)
        assert(h.wait_for(function() return (h.read_file(out) or ""):find('"data":"first\\n"', 1, true) end, 30),
            "no output event for the first line: " .. (h.read_file(out) or ""))
        assert.are.equal("running", job_state(s, pid))
        ok(cli(s, { "exec", s.name, "--", "touch " .. go }))
        assert(h.wait_for(function() return h.read_file(out .. ".end") ~= nil end, 60), "the stream did not end")
        local events = events_of(h.read_file(out))
        assert.are.equal("first\n" .. lines(1, 5), output_of(events))
        local last = events[#events]
        assert.are.equal("exit", last.event, h.read_file(out))
        assert.are.equal(3, last.exit_code)
        assert.are.equal(pid, math.tointeger(last.pid))
        for i = 1, #events - 1 do assert.are.equal("output", events[i].event, h.read_file(out)) end
        -- tail with NDJSON on the ended job: the last lines, then its exit
        local r = h.api(s.socket, "GET", "/v1/jobs/" .. pid .. "/log?tail=2&format=ndjson")
        assert.are.equal(200, r.status, h.describe_api(r))
        events = events_of(r.body)
        assert.are.equal(lines(4, 5), output_of(events))
        assert.are.equal("exit", events[#events].event)
        -- a UTF-8 character written in two pieces comes whole, as text, in one event
        local euro = background(s, "printf '\\342\\202'; sleep 0.5; printf '\\254\\n'")
        r = h.api(s.socket, "GET", "/v1/jobs/" .. euro .. "/log?follow=1&format=ndjson", nil, { timeout = 60 })
        events = events_of(r.body)
        assert.are.equal("\226\130\172\n", output_of(events), r.body)
        for _, e in ipairs(events) do assert.is_nil(e.data_base64, r.body) end
        -- a format that is not there: 400, one line naming it; the session goes on
        r = h.api(s.socket, "GET", "/v1/jobs/" .. pid .. "/log?format=xml")
        assert.are.equal(400, r.status, h.describe_api(r))
        assert.matches("format must be text", r.json.error, 1, true)
        assert.are.equal(lines(4, 5), h.api(s.socket, "GET", "/v1/jobs/" .. pid .. "/log?tail=2").body)
    end)

    it("a follower that reads slowly is not buffered for: what the cap dropped is one event", function()
        local s = start(nil, nil, 4096)
        local go = s.opts.cwd .. "/go-" .. h.token()
        -- after go: ~6.9 MB of numbered lines, far more than the cap and the client's queue
        local pid = background(s, ("while [ ! -e %s ]; do sleep 0.05; done; seq 1 1000000; echo last")
            :format(go:match("[^/]+$")))
        local v = raw(s, "slow", pid, go)
        assert.are.equal(200, v.status)
        -- between two dropped events the bytes are whole: consecutive lines (but the partial
        -- first and last), and later segments go on with later lines
        local dropped, segments, cur = 0, {}, {}
        for _, e in ipairs(v.events) do
            if e.event == "dropped" then
                dropped = dropped + e.bytes
                segments[#segments + 1], cur = table.concat(cur), {}
            elseif e.event == "output" then
                cur[#cur + 1] = e.data
            end
        end
        segments[#segments + 1] = table.concat(cur)
        assert.is_true(dropped > 0, "no dropped event: " .. #v.events .. " events")
        local prev = 0
        for _, seg in ipairs(segments) do
            local whole = {}
            for line in seg:gmatch("([^\n]*)\n") do whole[#whole + 1] = line end
            local last_seen
            for i = 2, #whole do -- the first may be the end of a line cut by the drop
                local n = tonumber(whole[i])
                if n then
                    if last_seen then assert.are.equal(last_seen + 1, n, "a gap with no dropped event") end
                    assert.is_true(n > prev, ("line %d after %d"):format(n, prev))
                    last_seen, prev = n, n
                end
            end
        end
        assert.matches("1000000\nlast\n$", segments[#segments])
        assert.are.equal("exit", v.events[#v.events].event)
        -- the controller kept its memory: it answers, and its peak stayed far from the output's size
        local controller = math.tointeger(cjson.decode(ok(cli(s, { "session", "status", s.name, "--json" })).stdout).pid)
        local kib = tonumber((h.read_file("/proc/" .. controller .. "/status") or ""):match("VmHWM:%s*(%d+) kB"))
        assert.is_true(kib == nil or kib < 64 * 1024, "controller peak " .. tostring(kib) .. " KiB")
    end)

    it("at most 32 streams per session: the next is refused in one line, and taken once one ends", function()
        local s = start(nil)
        local pid = background(s, "while :; do echo tick; sleep 0.5; done")
        local v = raw(s, "limit", pid)
        assert.are.equal(32, v.held, cjson.encode(v))
        assert.are.equal(429, v.status, cjson.encode(v))
        local err = cjson.decode(v.refused).error
        assert.matches("already streams 32 logs, its limit", err, 1, true)
        assert.is_nil(err:find("\n"), err)
        assert.are.equal(200, v.after)
        ok(cli(s, { "stop", s.name, tostring(pid) }))
    end)

    it("the session's end is the stream's last event, with its reason", function()
        local s = start(nil, { "--max-lifetime", "3", "--expiry-warning", "0" })
        local pid = background(s, "while :; do echo tick; sleep 0.2; done")
        local r = h.api(s.socket, "GET", "/v1/jobs/" .. pid .. "/log?follow=1&format=ndjson", nil, { timeout = 60 })
        assert.are.equal(200, r.status, h.describe_api(r))
        local events = events_of(r.body)
        assert.matches("^tick\n", output_of(events))
        local last, before = events[#events], events[#events - 1]
        assert.are.same({ event = "session_ended", session = s.name, reason = "lifetime" }, last)
        assert.are.equal("exit", before.event, r.body)
    end)
end)

describe("the Python client's follow_logs", function()
    after_each(h.cleanup)

    it("yields the lines as they come and the exit; logs(follow=True) returns at the job's end", function()
        local s = start(nil)
        local go = "/tmp/go-" .. h.token()
        local pid = background(s, ("echo first; while [ ! -e %s ]; do sleep 0.05; done; "
            .. "for i in $(seq 1 3); do echo line$i; sleep 0.2; done; exit 4"):format(go))
        local code = [==[
import json, subprocess, sys
from cordon import Session, Output, Exit
s = Session(sys.argv[1], sys.argv[2])
seen, first_while_running = [], None
for ev in s.follow_logs(int(sys.argv[3])):
    if isinstance(ev, Output):
        seen.append(ev.text)
        if first_while_running is None:
            # the job waits for this file: the first line came before the job could end
            first_while_running = [j.state for j in s.jobs() if j.pid == int(sys.argv[3])] == ["running"]
            subprocess.run(sys.argv[4:], check=True)
    elif isinstance(ev, Exit):
        seen.append({"exit": ev.exit_code})
print(json.dumps({"seen": seen, "first_while_running": first_while_running,
                  "tail": s.logs(int(sys.argv[3]), tail=2, follow=True)}))
]==]
        local touch = h.command_line({ "exec", s.name, "--", "touch " .. go }, { env = s.opts.env })
        local r = h.sh(("cd %s && PYTHONPATH=%s %s -c %s %s %s %d sh -c %s"):format(h.quote(s.opts.cwd),
            h.quote(h.source_dir .. "/clients/python/src"), h.python, h.quote(code), s.name, h.quote(s.socket),
            pid, h.quote(touch)))
        local okj, v = pcall(cjson.decode, r.stdout)
        assert(okj and type(v) == "table", h.describe(r))
        assert.is_true(v.first_while_running)
        local text = {}
        for i = 1, #v.seen - 1 do text[#text + 1] = v.seen[i] end
        assert.are.equal("first\n" .. lines(1, 3), table.concat(text))
        assert.are.same({ exit = 4 }, v.seen[#v.seen])
        assert.are.equal(lines(2, 3), v.tail)
    end)
end)

describe("MCP read_log with wait_seconds", function()
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
        local m, text, r = read_log({ pid = pid, offset = 6, wait_seconds = 30 })
        assert.are.equal("late\n", text, h.describe(r))
        assert.are.equal(11, m.result.structuredContent.next_offset)
        wait_ended(s, pid)
        m, text, r = read_log({ pid = pid, offset = 11, wait_seconds = 30 })
        assert.truthy(text:find("the log has no bytes after offset 11; the job has ended (exit 0)", 1, true),
            h.describe(r))
        assert.are.equal(11, m.result.structuredContent.next_offset)
        text, r = select(2, read_log({ pid = pid, wait_seconds = 61 }))
        assert.truthy(text:find("wait_seconds must be a number of seconds from 0 to 60", 1, true), h.describe(r))
        -- the former name still works (deprecated), with the same bounds
        text, r = select(2, read_log({ pid = pid, offset = 11, wait = 30 }))
        assert.truthy(text:find("the job has ended (exit 0)", 1, true), h.describe(r))
        text, r = select(2, read_log({ pid = pid, wait = 61 }))
        assert.truthy(text:find("wait must be a number of seconds from 0 to 60", 1, true), h.describe(r))
    end)
end)
