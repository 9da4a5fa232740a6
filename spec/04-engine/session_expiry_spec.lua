-- spec/04-engine/session_expiry_spec.lua — a session's own end: `session start --idle-timeout D`
-- ends a session once no exec, no job and no API client was there for D, and not while an exec
-- or a background job runs; `--max-lifetime D` ends it D after its start whatever runs, every
-- process of it gone (a `setsid` daemon too); the end is announced `--expiry-warning` before in
-- its log and to its approvers (an "expiring" event), and `cordon session status NAME`,
-- `session list --all` and any command for it say after why it ended. Root and uid 65534 (a
-- session of its own, in a home and runtime folder it owns). Every wait is bounded; no timing
-- is asserted beyond "ended within a generous bound": a job that must outlast the idle timeout
-- waits for a file the test creates.
local h = require("spec.helpers")
local cjson = require("cjson")

local NOBODY = 65534
local ok = h.ok
local ENDED_WITHIN = 30 -- seconds: a generous bound for a 1-3 s timeout and its grace

local function is_root()
    return h.chomp(h.sh_ok("id -u")) == "0"
end

-- A detached session of uid (nil: the spec's own caller) started with flags. Returns s with
-- s.opts (the h.cordon options of every command of it) and s.pid (its controller). Stopped at
-- clean-up (its controller killed if left).
local function start(uid, flags)
    local name = "spec-expiry-" .. h.token()
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
    h.defer(function()
        h.cordon({ "session", "stop", name }, opts)
        if s.pid and not h.wait_for(function() return not h.is_controller(s.pid) end, 10) then
            os.execute("kill -9 " .. s.pid .. " 2>/dev/null")
        end
    end)
    local args = { "session", "start", name, "--detach" }
    for _, f in ipairs(flags) do args[#args + 1] = f end
    ok(h.cordon(args, opts))
    local st = ok(h.cordon({ "session", "status", name, "--json" }, opts))
    s.pid = math.tointeger(cjson.decode(st.stdout).pid)
    assert(s.pid and h.is_controller(s.pid), h.describe(st))
    return s
end

local function cli(s, args)
    return h.cordon(args, s.opts)
end

local function ended(s)
    return h.wait_for(function() return not h.is_controller(s.pid) end, ENDED_WITHIN)
end

local function log_of(s)
    return h.read_file(s.runtime .. "/cordon/" .. s.name .. ".log") or ""
end

-- A sleep whose command line no other process has: its host pids are found by pgrep.
local function marked_sleep()
    return ("sleep 9%d.%d"):format(math.random(100, 999), math.random(100000, 999999))
end

-- Its host pids (the pattern "[s]leep ..." does not match the shell that runs pgrep).
local function pids_of(sleep)
    return h.pgrep("[s]" .. sleep:sub(2))
end

-- After the end: `session status` says why, `session list --all` lists it with why, and a
-- command for it says why it is not there (125, one line).
local function assert_ended(s, reason)
    local st = ok(cli(s, { "session", "status", s.name }))
    assert.matches("state: ended\n", st.stdout, 1, true)
    assert.matches("reason: " .. reason .. "\n", st.stdout, 1, true)
    local list = cjson.decode(ok(cli(s, { "session", "list", "--all", "--json" })).stdout)
    local found
    for _, e in ipairs(list.ended) do
        if e.name == s.name then found = e end
    end
    assert(found, "session list --all does not list it: " .. cjson.encode(list))
    assert.are.equal(reason, found.reason)
    assert.are.equal("ended", found.state)
    assert.are.same({}, list.sessions)
    local r = cli(s, { "exec", s.name, "--", "true" })
    assert.are.equal(125, r.code, h.describe(r))
    assert.matches("no session named '" .. s.name .. "': it ended", r.stderr, 1, true)
    assert.matches("(" .. reason .. ")\n", r.stderr, 1, true)
    assert.are.equal(1, select(2, r.stderr:gsub("\n", "")), h.describe(r))
    -- the Python client's error carries the reason too
    local py = h.sh(("PYTHONPATH=%s %s -c %s %s"):format(
        h.quote(h.source_dir .. "/clients/python/src"), h.python, h.quote([==[
import sys
from cordon import Session, SessionNotFound
try:
    Session(sys.argv[1].rsplit("/", 1)[1][:-5], sys.argv[1]).status()
except SessionNotFound as e:
    print(e.reason)
    print(e)
]==]), h.quote(s.runtime .. "/cordon/" .. s.name .. ".sock")))
    assert.are.equal(reason, py.stdout:match("^([^\n]*)\n"), h.describe(py))
    assert.matches("no session named '" .. s.name .. "': it ended", py.stdout, 1, true)
end

for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
    describe("session expiry as " .. who.name, function()
        after_each(h.cleanup)

        local function session(flags)
            if who.uid and not is_root() then h.skip("needs root to switch to uid 65534") end
            return start(who.uid, flags)
        end

        it("an idle session ends after its idle timeout, and says so in its log", function()
            local s = session({ "--idle-timeout", "1" })
            assert(ended(s), "the idle session did not end within " .. ENDED_WITHIN .. " s")
            assert.matches("session '" .. s.name .. "' ends: idle for 1 s", log_of(s), 1, true)
            assert_ended(s, "idle")
        end)

        it("an idle session does not end while an exec runs", function()
            local s = session({ "--idle-timeout", "2" })
            local r = ok(cli(s, { "exec", s.name, "--", "sleep 5; echo still here" }))
            assert.are.equal("still here\n", r.stdout)
            assert(ended(s), "the session did not end once idle")
        end)

        it("an idle session does not end while a background job runs", function()
            local s = session({ "--idle-timeout", "2" })
            local go = s.opts.cwd .. "/go"
            ok(cli(s, { "exec", s.name, "--background", "--", "while [ ! -e go ]; do sleep 0.1; done" }))
            -- two idle timeouts and more with no client: the job keeps the session
            os.execute("sleep 5")
            assert.is_true(h.is_controller(s.pid), "the session ended while its job ran")
            h.write_file(go, "")
            assert(ended(s), "the session did not end once its job had")
        end)

        it("an approver keeps a session from being idle until it leaves", function()
            local s = session({ "--idle-timeout", "2" })
            local as = who.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(who.uid, who.uid) or ""
            local done = h.tmpdir() .. "/done"
            -- watches for 5 s (two idle timeouts and more), then leaves without a word
            h.spawn(("sh -c %s"):format(h.quote(("%scurl -sSN --max-time 5 --unix-socket %s %s >/dev/null; touch %s"):format(
                as, h.quote(s.runtime .. "/cordon/" .. s.name .. ".sock"),
                h.quote("http://cordon/v1/approvals?watch=1"), h.quote(done)))))
            assert(h.wait_for(function() return h.read_file(done) ~= nil end, 30), "the approver did not end")
            assert.is_true(h.is_controller(s.pid), "the session ended while an approver was there")
            assert(ended(s), "the session did not end once its approver had left")
            assert_ended(s, "idle")
        end)

        it("a lifetime ends a session with a job and a setsid daemon, every process gone", function()
            local s = session({ "--max-lifetime", "3", "--expiry-warning", "1" })
            local job, daemon = marked_sleep(), marked_sleep()
            ok(cli(s, { "exec", s.name, "--background", "--", job }))
            ok(cli(s, { "exec", s.name, "--", "setsid " .. daemon .. " </dev/null >/dev/null 2>&1 &" }))
            assert(h.wait_for(function() return #pids_of(job) > 0 and #pids_of(daemon) > 0 end, 10),
                "the job and the daemon did not start")
            assert(ended(s), "the session outlived its lifetime")
            assert(h.wait_for(function() return #pids_of(job) == 0 and #pids_of(daemon) == 0 end, 10),
                "a process of the session outlived it")
            local log = log_of(s)
            assert.matches("session '" .. s.name .. "' ends in 1 s: its maximum lifetime (3 s) is reached",
                log, 1, true)
            assert.matches("session '" .. s.name .. "' ends: its maximum lifetime (3 s) is reached",
                log, 1, true)
            assert_ended(s, "lifetime")
        end)

        it("clients connected when the lifetime ends are told why, in one line", function()
            local s = session({ "--max-lifetime", "4", "--expiry-warning", "0" })
            local r = ok(cli(s, { "exec", s.name, "--background", "--", "while :; do echo tick; sleep 0.2; done" }))
            local pid = assert(r.stdout:match("PID: (%d+)"), h.describe(r))
            local dir = h.tmpdir()
            if who.uid then h.sh_ok(("chown %d %s"):format(who.uid, h.quote(dir))) end
            -- each client in the background: its stdout, stderr and exit status in dir
            local function connect(tag, args, stdin)
                local line = h.command_line(args, { env = s.opts.env, uid = s.opts.uid,
                    home = s.opts.home, timeout = 90 })
                h.spawn("sh -c " .. h.quote(("cd %s && %s <%s >%s/%s.out 2>%s/%s.err; echo $? >%s/%s.rc"):format(
                    h.quote(s.opts.cwd), line, stdin, dir, tag, dir, tag, dir, tag)))
            end
            connect("logs", { "logs", s.name, pid, "--follow" }, "/dev/null")
            connect("exec", { "exec", s.name, "--", "sleep 60" }, "/dev/null")
            -- an approver's stdin stays open (its end would end it first): a fifo kept open
            local fifo = dir .. "/stdin"
            h.sh_ok("mkfifo -m 0666 " .. h.quote(fifo))
            h.spawn("sh -c " .. h.quote("exec sleep 60 >" .. h.quote(fifo)))
            connect("watch", { "approve", "--watch", s.name }, fifo)
            assert(ended(s), "the session outlived its lifetime")
            for _, tag in ipairs({ "logs", "exec", "watch" }) do
                assert(h.wait_for(function() return h.read_file(dir .. "/" .. tag .. ".rc") ~= nil end, 30),
                    tag .. " did not end with the session")
            end
            local function said(tag) return h.read_file(dir .. "/" .. tag .. ".err") or "" end
            -- the follower saw lines before the end, then the reason, and 125
            assert.matches("^tick\n", h.read_file(dir .. "/logs.out") or "")
            assert.are.equal("125\n", h.read_file(dir .. "/logs.rc"), said("logs"))
            assert.are.equal("cordon: logs: session '" .. s.name .. "' ended (lifetime) while the log was followed\n",
                said("logs"))
            -- the exec's status stays its command's: the TERM of the session's stop
            assert.are.equal("143\n", h.read_file(dir .. "/exec.rc"), said("exec"))
            assert.are.equal("cordon: exec: session '" .. s.name .. "' ended (lifetime) while the command ran\n",
                said("exec"))
            assert.are.equal("0\n", h.read_file(dir .. "/watch.rc"), said("watch"))
            assert.matches("cordon: session '" .. s.name .. "' has ended (lifetime)\n",
                h.read_file(dir .. "/watch.out") or "", 1, true)
        end)

        it("an approver is told before the lifetime ends the session", function()
            local s = session({ "--max-lifetime", "3", "--expiry-warning", "2" })
            local dir = h.tmpdir()
            if who.uid then h.sh_ok(("chown %d %s"):format(who.uid, h.quote(dir))) end
            local out = dir .. "/watch.ndjson"
            local as = who.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(who.uid, who.uid) or ""
            h.spawn(("sh -c %s"):format(h.quote(("exec %scurl -sSN --max-time 60 --unix-socket %s %s >%s"):format(
                as, h.quote(s.runtime .. "/cordon/" .. s.name .. ".sock"),
                h.quote("http://cordon/v1/approvals?watch=1"), h.quote(out)))))
            assert(ended(s), "the session outlived its lifetime")
            local events = {}
            for line in (h.read_file(out) or ""):gmatch("[^\n]+") do
                local okj, e = pcall(cjson.decode, line)
                if okj and type(e) == "table" then events[#events + 1] = e end
            end
            local warning
            for _, e in ipairs(events) do
                if e.event == "expiring" then warning = e end
            end
            assert(warning, "no expiring event: " .. (h.read_file(out) or ""))
            assert.are.equal("lifetime", warning.reason)
            assert.are.equal(s.name, warning.session)
            assert.are.equal(2, warning.in_seconds)
        end)

        it("the reason is kept for a stop and for a controller killed", function()
            local s = session({})
            ok(cli(s, { "session", "stop", s.name }))
            assert_ended(s, "stopped")
            local k = session({ "--idle-timeout", "1h" })
            os.execute("kill -9 " .. k.pid)
            assert(ended(k), "the killed controller is still there")
            assert_ended(k, "controller killed")
        end)

        it("a bad duration is refused in one line with 125", function()
            if who.uid and not is_root() then h.skip("needs root to switch to uid 65534") end
            local opts = { env = { XDG_RUNTIME_DIR = h.runtime_dir() } }
            if who.uid then
                h.sh_ok(("chown %d:%d %s"):format(who.uid, who.uid, h.quote(opts.env.XDG_RUNTIME_DIR)))
                opts.uid, opts.home, opts.cwd = who.uid, h.tmpdir(), h.workspace(nil, who.uid)
                h.sh_ok(("chown %d:%d %s"):format(who.uid, who.uid, h.quote(opts.home)))
            end
            for _, flag in ipairs({ "--idle-timeout", "--max-lifetime", "--expiry-warning" }) do
                local r = h.cordon({ "session", "start", "spec-expiry-bad", "--detach", flag, "5x" }, opts)
                assert.are.equal(125, r.code, h.describe(r))
                assert.are.equal(1, select(2, r.stderr:gsub("\n", "")), h.describe(r))
                assert.matches("session%.", r.stderr)
            end
        end)
    end)
end

describe("session expiry through cordon mcp", function()
    after_each(h.cleanup)

    it("cordon mcp passes --idle-timeout to its session, and ends with it saying why", function()
        local runtime, ws = h.runtime_dir(), h.workspace()
        local dir = h.tmpdir()
        -- stdin stays open (a client that is still there): only the session's end may end it
        local fifo = dir .. "/stdin"
        h.sh_ok("mkfifo " .. h.quote(fifo))
        h.spawn("sh -c " .. h.quote(("exec >%s; printf '%%s\\n' %s; exec sleep 60"):format(
            h.quote(fifo), h.quote(cjson.encode({ jsonrpc = "2.0", id = 1, method = "initialize",
                params = { protocolVersion = "2025-06-18", capabilities = {},
                    clientInfo = { name = "expiry-spec", version = "1" } } })))))
        local line = ("cd %s && %s <%s >%s 2>%s; echo $? >%s"):format(
            h.quote(ws),
            h.command_line({ "mcp", "--idle-timeout", "2", "--expiry-warning", "0" },
                { env = { XDG_RUNTIME_DIR = runtime }, timeout = 90 }),
            h.quote(fifo), h.quote(dir .. "/out"), h.quote(dir .. "/err"), h.quote(dir .. "/rc"))
        h.spawn("sh -c " .. h.quote(line))
        assert(h.wait_for(function() return h.read_file(dir .. "/rc") ~= nil end, 50),
            "cordon mcp outlived its idle session: " .. (h.read_file(dir .. "/err") or ""))
        local err = h.read_file(dir .. "/err") or ""
        assert.are.equal("0\n", h.read_file(dir .. "/rc"), err)
        assert.matches("cordon: mcp: session 'mcp%-%d+' ended at [^\n]* %(idle%): stopping\n", err)
        -- the initialize was answered, and nothing else came on stdout
        local out = h.read_file(dir .. "/out") or ""
        assert.are.equal(1, select(2, out:gsub("\n", "")), out)
        assert.are.equal(1, cjson.decode(out).id)
    end)
end)
