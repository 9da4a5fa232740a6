-- spec/04-engine/session_approvals_spec.lua — who answers a session's questions
-- (docs/session-api.md, "Approvals"): an approver (`cordon approve --watch NAME` on a terminal,
-- an API client subscribed to GET /v1/approvals?watch=1, the terminal of a foreground
-- `cordon session start`), never the exec's own client; with none, a question is denied at
-- once and the result names the rule that would allow it. Also `session start --owner PID`,
-- and how `jobs` lists a sandbox of its own (--session-exec=false) that its command left
-- processes in.
--
-- Terminals are real ptys (a small Python driver written to a temporary directory) and the
-- destinations an HTTP origin on 127.0.0.2 (a stand-in for a remote host). Waits are bounded;
-- "at once" is checked as "well within a 60 s permission timeout" (the exec runs under a
-- 10 s `timeout`), a hang-catching bound, not a timing measurement.
local h = require("spec.helpers")
local cjson = require("cjson")

-- PTY OUT TIMEOUT ANSWERS -- ARGV...: runs ARGV on a new pseudo-terminal, copies what it shows
-- to OUT as it comes, types the next of the comma-separated ANSWERS (and Enter) at each
-- "[d] deny ?" prompt, and appends "exit=N" when ARGV ends (killed after TIMEOUT seconds).
local PTY_DRIVER = [[
import os, pty, select, sys, time
out_path, timeout = sys.argv[1], float(sys.argv[2])
answers = [a for a in sys.argv[3].split(",") if a]
argv = sys.argv[sys.argv.index("--") + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
seen, prompts, deadline = b"", 0, time.time() + timeout
with open(out_path, "wb", buffering=0) as f:
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        seen += data
        f.write(data)
        while seen.count(b"[d] deny ?") > prompts:
            if prompts < len(answers):
                os.write(fd, (answers[prompts] + "\n").encode())
            prompts += 1
    else:
        os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
with open(out_path, "ab") as f:
    f.write(("\nexit=%d\n" % (os.waitstatus_to_exitcode(status) & 0xff)).encode())
]]

-- An HTTP origin on 127.0.0.2: GET answers "MARKER PATH".
local ORIGIN = [[
import http.server, os, sys
ready, marker = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("%s %s\n" % (marker, self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.2", 0), H)
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(ready + ".tmp", ready)
srv.serve_forever()
]]

local ok = h.ok

local function script(body)
    local path = h.tmpdir() .. "/script.py"
    h.write_file(path, body)
    return path
end

-- { port, marker, url(path) }
local function origin()
    local ready = h.tmpdir() .. "/ready"
    local marker = "cordon-approvals-" .. h.token()
    h.spawn(h.join({ h.python, script(ORIGIN), ready, marker }))
    local port = h.wait_for(function()
        local t = h.read_file(ready)
        return t and tonumber(t:match("^(%d+)"))
    end, 10)
    assert(port, "the origin did not start")
    return { port = port, marker = marker,
        fetch = ("curl -sS --noproxy '' --max-time 30 http://127.0.0.2:%d/x"):format(port) }
end

local function cli(s, args, opts)
    opts = opts or {}
    return h.cordon(args, { cwd = s.cwd, env = s.env, timeout = opts.timeout })
end

local function exec(s, cmd, opts)
    return cli(s, { "exec", s.name, "--", cmd }, opts)
end

-- `cordon exec NAME -- cmd` in the background; returns a function that waits for its end and
-- gives { code, out } (stdout and stderr together).
local function exec_async(s, cmd)
    local out = h.tmpdir() .. "/exec.out"
    local line = h.command_line({ "exec", s.name, "--", cmd }, { env = s.env })
    h.spawn("sh -c " .. h.quote(("cd %s && %s >%s 2>&1; echo \"rc=$?\" >>%s"):format(
        h.quote(s.cwd), line, h.quote(out), h.quote(out))))
    return function()
        local text = h.wait_for(function()
            local t = h.read_file(out)
            return t and t:match("rc=%d+\n$") and t
        end, 30)
        assert(text, "the exec did not end: " .. tostring(h.read_file(out)))
        return { code = tonumber(text:match("rc=(%d+)\n$")), out = text }
    end
end

-- Runs `cordon ARGS` (with s's environment) on a pty answering `answers`; returns the path of
-- what the terminal shows.
local function on_pty(s, args, answers, cwd)
    local out = h.tmpdir() .. "/pty.out"
    local line = h.command_line(args, { env = s.env, timeout = false })
    h.spawn(h.join({ h.python, script(PTY_DRIVER), out, "60", answers, "--", "sh", "-c",
        "cd " .. h.quote(cwd or s.cwd) .. " && exec " .. line }))
    return out
end

-- Waits until the file at path holds text; returns its content.
local function shows(path, text, seconds)
    local t = h.wait_for(function()
        local c = h.read_file(path)
        return c and c:find(text, 1, true) and c
    end, seconds or 15)
    assert(t, ("expected %q in:\n%s"):format(text, tostring(h.read_file(path))))
    return t
end

local function pending(s)
    return h.api(s.socket, "GET", "/v1/approvals").json.approvals
end

describe("cordon session: approvals go to an approver", function()
    after_each(h.cleanup)

    it("with no approver, an unlisted host is refused at once and the result names the rule", function()
        local o = origin()
        local s = h.session_start("appr-" .. h.token(), { flags = { "--permission-timeout", "60s" } })
        -- the exec's own client is attached all along: it is no approver
        local r = exec(s, o.fetch, { timeout = 10 })
        assert.are_not.equal(124, r.code, "the command waited for an answer\n" .. h.describe(r))
        assert.is_nil(r.stdout:find(o.marker, 1, true), "the origin was reached\n" .. h.describe(r))
        assert.truthy(r.stderr:find(("--network-allow 127.0.0.2:%d"):format(o.port), 1, true), h.describe(r))
        assert.are.same({}, pending(s))
    end)

    it("cordon approve --watch on a terminal shows the question; 'once' lets the command go on", function()
        local o = origin()
        local s = h.session_start("appr-" .. h.token(), { flags = { "--permission-timeout", "60s" } })
        local term = on_pty(s, { "approve", "--watch", s.name }, "o")
        shows(term, "answering the approvals of session '" .. s.name .. "'")
        local r = ok(exec(s, o.fetch, { timeout = 40 }))
        assert.truthy(r.stdout:find(o.marker .. " /x", 1, true), h.describe(r))
        -- the exec's client was told the question, not asked
        assert.truthy(r.stderr:find("cordon: approval ", 1, true), h.describe(r))
        local t = shows(term, "allowed while the commands running now run")
        assert.truthy(t:find(("wants to reach 127.0.0.2:%d"):format(o.port), 1, true), t)
        -- "once" ended with that command: the next one is asked again (the approver is still there)
        local done = exec_async(s, o.fetch)
        -- a second prompt, left unanswered: the driver types one answer only
        assert.truthy(h.wait_for(function()
            local _, n = (h.read_file(term) or ""):gsub("%[d%] deny %?", "")
            return n >= 2
        end, 15), "no second question on the terminal\n" .. tostring(h.read_file(term)))
        assert.are.equal(1, #pending(s))
        ok(cli(s, { "session", "stop", s.name }))
        assert.is_nil(done().out:find(o.marker, 1, true))
        shows(term, "exit=0")
    end)

    it("an API client subscribed with ?watch=1 gets the question and answers it; when it leaves, questions are denied at once",
        function()
            local o = origin()
            local s = h.session_start("appr-" .. h.token(), { flags = { "--permission-timeout", "60s" } })
            local stream = h.tmpdir() .. "/watch.ndjson"
            local curl = h.spawn(("sh -c %s"):format(h.quote(("exec curl -sSN --unix-socket %s %s >%s"):format(
                h.quote(s.socket), h.quote("http://cordon/v1/approvals?watch=1"), h.quote(stream)))))
            shows(stream, '"event":"subscribed"')
            local done = exec_async(s, o.fetch)
            local line = shows(stream, '"event":"question"'):match('[^\n]*"event":"question"[^\n]*')
            local q = cjson.decode(line).approval
            assert.are.equal("network", q.kind)
            assert.are.equal("127.0.0.2", q.host)
            assert.are.equal(o.port, math.tointeger(q.port))
            local a = h.api(s.socket, "POST", "/v1/approvals/" .. math.tointeger(q.id),
                '{"answer": "once", "by": "the spec"}')
            assert.are.equal(200, a.status, h.describe_api(a))
            local r = done()
            assert.are.equal(0, r.code, r.out)
            assert.truthy(r.out:find(o.marker, 1, true), r.out)
            local settled = shows(stream, '"event":"settled"'):match('[^\n]*"event":"settled"[^\n]*')
            assert.are.same({ event = "settled", id = q.id, answer = "once", by = "the spec" }, cjson.decode(settled))
            -- the only approver leaves: the next question finds nobody and is denied at once
            os.execute("kill -9 " .. curl)
            r = exec(s, o.fetch:gsub("/x$", "/y"), { timeout = 10 })
            assert.are_not.equal(124, r.code, "the command waited for a gone approver\n" .. h.describe(r))
            assert.is_nil(r.stdout:find(o.marker, 1, true), h.describe(r))
            assert.are.same({}, pending(s))
        end)

    -- A session as root or as uid (the controller then reads its sandbox's processes as that
    -- user): a foreground command runs, a background job asks; the question names the job.
    local function background_asks(uid)
        local o = origin()
        local pre = uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid) or ""
        local runtime, ws = h.runtime_dir(), h.workspace(nil, uid)
        if uid then h.sh_ok(("chown %d:%d %s"):format(uid, uid, h.quote(runtime))) end
        local home = h.secret_home(uid)
        local s = { name = "appr-" .. h.token(), cwd = ws, env = { XDG_RUNTIME_DIR = runtime } }
        s.socket = h.session_socket(runtime, s.name)
        local function run(args, opts)
            opts = opts or {}
            return h.cordon(args, { cwd = ws, env = s.env, uid = uid, home = home, timeout = opts.timeout })
        end
        h.defer(function() run({ "session", "stop", s.name }, { timeout = 30 }) end)
        ok(run({ "session", "start", s.name, "--detach", "--permission-timeout", "60s" }))
        local stream = h.tmpdir() .. "/watch.ndjson"
        h.spawn(("sh -c %s"):format(h.quote(("exec %scurl -sSN --unix-socket %s %s >%s"):format(pre,
            h.quote(s.socket), h.quote("http://cordon/v1/approvals?watch=1"), h.quote(stream)))))
        shows(stream, '"event":"subscribed"')
        -- a foreground command that runs until the session stops, and asks nothing
        local fg_cmd = "sleep 50; echo fg-" .. h.token()
        local fg_out = h.tmpdir() .. "/fg.out"
        h.spawn("sh -c " .. h.quote(("cd %s && %s >%s 2>&1"):format(h.quote(ws),
            h.command_line({ "exec", s.name, "--", fg_cmd }, { env = s.env, uid = uid, home = home }),
            h.quote(fg_out))))
        assert(h.wait_for(function()
            for _, j in ipairs(h.api(s.socket, "GET", "/v1/jobs", nil, { uid = uid }).json.jobs or {}) do
                if j.command == fg_cmd and j.state == "running" then return true end
            end
        end, 15), "the foreground command did not start")
        -- a background job (through a child of it, in a subshell) asks
        local bg_cmd = "( " .. o.fetch .. " ); echo bg-" .. h.token()
        ok(run({ "exec", "--background", s.name, "--", bg_cmd }))
        local line = shows(stream, '"event":"question"'):match('[^\n]*"event":"question"[^\n]*')
        local q = cjson.decode(line).approval
        assert.are.equal("network", q.kind)
        assert.are.equal(bg_cmd, q.command, line)
        local a = h.api(s.socket, "POST", "/v1/approvals/" .. math.tointeger(q.id), '{"answer": "deny"}',
            { uid = uid })
        assert.are.equal(200, a.status, h.describe_api(a))
        ok(run({ "session", "stop", s.name }))
    end

    it("a background job's question names that job's command, not the foreground one's (root)", function()
        background_asks(nil)
    end)

    it("a background job's question names that job's command, not the foreground one's (uid 65534)", function()
        background_asks(65534)
    end)

    it("the terminal of a foreground session start answers its questions", function()
        local o = origin()
        local runtime = h.runtime_dir()
        local s = { name = "appr-" .. h.token(), runtime = runtime, cwd = h.workspace(),
            env = { XDG_RUNTIME_DIR = runtime } }
        s.socket = h.session_socket(runtime, s.name)
        h.defer(function() h.session_reap(s) end)
        local term = on_pty(s, { "session", "start", s.name, "--permission-timeout", "60s" }, "s")
        shows(term, "this terminal answers its approvals")
        shows(term, "answering the approvals of session '" .. s.name .. "'")
        s.pid = math.tointeger(h.api(s.socket, "GET", "/v1/session").json.pid)
        local r = ok(exec(s, o.fetch, { timeout = 40 }))
        assert.truthy(r.stdout:find(o.marker, 1, true), h.describe(r))
        shows(term, "allowed for the session")
        -- "session" holds: no question the next time
        r = ok(exec(s, o.fetch, { timeout = 10 }))
        assert.truthy(r.stdout:find(o.marker, 1, true), h.describe(r))
        assert.is_nil(r.stderr:find("approval", 1, true), h.describe(r))
        ok(cli(s, { "session", "stop", s.name }))
        shows(term, "exit=0")
    end)
end)

describe("cordon session start --owner PID", function()
    after_each(h.cleanup)

    it("the session ends when that process exits, not when the caller does", function()
        local owner = h.spawn("sleep 300." .. tonumber(h.token():sub(1, 6), 16))
        local runtime = h.runtime_dir()
        local s = { name = "owner-" .. h.token(), runtime = runtime, cwd = h.workspace(),
            env = { XDG_RUNTIME_DIR = runtime } }
        s.socket = h.session_socket(runtime, s.name)
        h.defer(function() h.session_reap(s) end)
        -- the caller (h.cordon's shell and timeout) exits as soon as session start returns
        ok(cli(s, { "session", "start", s.name, "--owner", tostring(owner) }))
        local info = h.api(s.socket, "GET", "/v1/session")
        assert.are.equal(200, info.status, h.describe_api(info))
        s.pid = math.tointeger(info.json.pid)
        assert.are.equal(owner, math.tointeger(info.json.owner_pid))
        os.execute("sleep 1")
        assert.is_true(h.is_controller(s.pid), "the session ended with its caller")
        os.execute("kill -9 " .. owner)
        assert.is_true(h.wait_for(function() return not h.is_controller(s.pid) end, 15),
            "the session outlived its owner")
    end)

    it("refuses a pid that is not a live process of the caller's, and --detach with it", function()
        local s = { name = "owner-" .. h.token(), cwd = h.workspace(), env = { XDG_RUNTIME_DIR = h.runtime_dir() } }
        local r = cli(s, { "session", "start", s.name, "--owner", "999999999" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("--owner 999999999: no such process", 1, true), h.describe(r))
        local other = h.spawn("setpriv --reuid=65534 --regid=65534 --clear-groups sleep 300")
        h.wait_for(function() return (h.read_file("/proc/" .. other .. "/status") or ""):find("Uid:%s+65534") end, 5)
        r = cli(s, { "session", "start", s.name, "--owner", tostring(other) })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("belongs to another user", 1, true), h.describe(r))
        r = cli(s, { "session", "start", s.name, "--owner", "1", "--detach" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("cannot take --owner", 1, true), h.describe(r))
        r = cli(s, { "session", "start", s.name, "--owner", "x1" })
        assert.are.equal(125, r.code, h.describe(r))
    end)
end)

describe("cordon jobs: a sandbox of its own that a command left a server in", function()
    after_each(h.cleanup)

    it("is running, with the leader's exit and what it left", function()
        local s = h.session_start("left-" .. h.token(), { flags = { "--session-exec=false" } })
        local arg = "300." .. tonumber(h.token():sub(1, 6), 16)
        h.defer(function()
            for _, p in ipairs(h.pgrep("^sleep " .. arg .. "$")) do os.execute("kill -9 " .. p .. " 2>/dev/null") end
        end)
        ok(exec(s, ("setsid sleep %s >/dev/null 2>&1 & echo started"):format(arg)))
        local j = h.wait_for(function()
            local v = cjson.decode(ok(cli(s, { "jobs", s.name, "--json" })).stdout)
            return v.jobs[1] and v.jobs[1].left == 1 and v.jobs[1]
        end, 10)
        assert.truthy(j, "jobs does not list the sandbox with what it left")
        assert.are.equal("running", j.state)
        assert.are.equal(false, j.leader_running)
        assert.are.equal(0, math.tointeger(j.leader_exit_code))
        assert.are.equal(cjson.null, j.exit_code)
        assert.are.equal(1, #j.left_pids)
        assert.are.equal(true, j.sandbox_running)
        local t = ok(cli(s, { "jobs", s.name })).stdout
        assert.truthy(t:find("\n" .. math.tointeger(j.pid) .. "%s+running%s"), t)
        ok(cli(s, { "stop", s.name, tostring(math.tointeger(j.pid)) }))
        assert.is_true(h.wait_for(function() return #h.pgrep("^sleep " .. arg .. "$") == 0 end, 15),
            "stop left the server running")
    end)
end)
