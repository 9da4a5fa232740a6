-- spec/04-engine/session_peer_spec.lua — who may drive a session: the control API's client
-- check, on this kernel's SO_PEERPIDFD and on the fallback for kernels without it (Linux < 6.5:
-- SO_PEERCRED's pid, a pidfd opened on it, proven to be the process that connected), forced
-- with CORDON_TEST_KERNEL_LACKS=peer_pidfd. For each, as root and as uid 65534 (the session,
-- its clients and the refused ones all of that uid): a host client is served (the CLI and
-- curl); a client in another user namespace (as inside a sandbox) is refused, where the same
-- curl from the host is served; a client that connects and exits before the session looks at
-- the connection (the session is stopped with SIGSTOP meanwhile; a child keeps the connection
-- and reads the answer) is refused, where the same client that stays is served.
-- And (root: ns_last_pid) a client in another user namespace that connects, leaves its
-- connection to a child and exits, its pid then given to a host process of the session's uid
-- before the session looks: refused (without the fallback's proof that the process holds the
-- connection, it was served: 200). engine/tests/test_api_server.c has the same attack with
-- clone3's set_tid. Waits are bounded; nothing is timed.
local h = require("spec.helpers")

local NOBODY = 65534

local MODES = {
    { name = "SO_PEERPIDFD", env = {} },
    { name = "the SO_PEERCRED fallback (forced)", env = { CORDON_TEST_KERNEL_LACKS = "peer_pidfd" } },
}
local USERS = { { name = "root" }, { name = "uid 65534", uid = NOBODY } }

local function as_user(uid)
    if not uid then return "" end
    return ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid)
end

-- Starts a detached session of uid (nil: root) with env; registers its end. Returns
-- { name, runtime, socket, cwd, env, uid, pid }.
local function start(uid, env)
    local runtime = h.runtime_dir()
    local cwd = h.workspace(nil, uid)
    if uid then h.sh_ok(("chown %d:%d %s"):format(uid, uid, h.quote(runtime))) end
    local s = { name = "peer-" .. h.token():sub(1, 8), runtime = runtime, cwd = cwd, uid = uid,
        env = { XDG_RUNTIME_DIR = runtime } }
    for k, v in pairs(env) do s.env[k] = v end
    s.socket = h.session_socket(runtime, s.name)
    local opts = { cwd = cwd, env = s.env, uid = uid, home = uid and h.secret_home(uid) or nil }
    s.opts = opts
    h.defer(function()
        h.cordon({ "session", "stop", s.name }, { cwd = cwd, env = s.env, uid = uid, home = opts.home, timeout = 30 })
        if s.pid then
            os.execute("kill -CONT " .. s.pid .. " 2>/dev/null")
            if not h.wait_for(function() return not h.is_controller(s.pid) end, 10) then
                os.execute("kill -9 " .. s.pid .. " 2>/dev/null")
            end
        end
    end)
    local r = h.cordon({ "session", "start", s.name, "--detach" }, opts)
    assert(r.code == 0, "session start failed\n" .. h.describe(r))
    local info = h.api(s.socket, "GET", "/v1/session", nil, { uid = uid })
    assert(info.status == 200 and info.json, "GET /v1/session failed after start\n" .. h.describe_api(info))
    s.pid = math.tointeger(info.json.pid)
    assert(h.is_controller(s.pid), "no controller at pid " .. tostring(s.pid))
    return s
end

-- A raw HTTP client in python: connects to the socket, sends GET /v1/session, then (when
-- `leave`) forks a child that keeps the connection and the parent exits at once (else it marks
-- `out`.connected). Whoever keeps it waits for the answer and writes its status line and body to `out`.
local CLIENT = [[
import os, socket, sys
path, out, leave = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.settimeout(30)
c.connect(path)
c.sendall(b"GET /v1/session HTTP/1.1\r\nHost: cordon\r\nConnection: close\r\n\r\n")
with open(out + ".pid", "w") as f:
    f.write(str(os.getpid()))
open(out + ".connected", "w").close()
if leave and os.fork() != 0:
    os._exit(0)
data = b""
while True:
    b = c.recv(65536)
    if not b:
        break
    data += b
head, _, body = data.partition(b"\r\n\r\n")
with open(out + ".part", "wb") as f:
    f.write(head.split(b"\r\n")[0] + b"\n" + body)
os.rename(out + ".part", out)
]]

-- Runs CLIENT against session s with the controller stopped (SIGSTOP) while it connects, so
-- the session looks at the connection only after the client's parent is gone (leave) or
-- while it waits (not leave). Returns the status line and body the client read.
local function client_while_stopped(s, leave, opts)
    opts = opts or {}
    local dir = h.tmpdir()
    h.sh_ok("chmod 777 " .. h.quote(dir))
    local script, out = dir .. "/client.py", dir .. "/answer"
    h.write_file(script, CLIENT, "644")
    h.sh_ok("kill -STOP " .. s.pid)
    local cont = false
    h.defer(function() if not cont then os.execute("kill -CONT " .. s.pid .. " 2>/dev/null") end end)
    local cmd = ("%s%s%s %s %s %s %s"):format(as_user(s.uid), opts.prefix or "", h.python, h.quote(script),
        h.quote(s.socket), h.quote(out), leave and "1" or "0")
    if leave then
        -- the parent has exited (and is reaped by this shell) before the session runs again
        h.sh_ok("timeout 30 " .. cmd)
    else
        h.sh_ok("(timeout 30 " .. cmd .. " >/dev/null 2>&1 &)")
        -- connected: the connection waits in the listener's backlog while the controller stops
        assert(h.wait_for(function() return h.read_file(out .. ".connected") ~= nil end, 15),
            "the staying client did not connect")
    end
    if opts.meanwhile then opts.meanwhile(tonumber(h.read_file(out .. ".pid"))) end
    h.sh_ok("kill -CONT " .. s.pid)
    cont = true
    assert(h.wait_for(function() return h.read_file(out) ~= nil end, 30), "the client read no answer")
    return h.read_file(out)
end

-- Root: gives pid `want` to a new host process of uid (ns_last_pid), which sleeps; its pid, or
-- nil when another process took the number first each time (bounded tries).
local REUSE = [[
import ctypes, os, sys, time
want, uid = int(sys.argv[1]), int(sys.argv[2])
for _ in range(200):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(want - 1))
    p = os.fork()
    if p == 0:
        os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)
        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: as any process of that uid
        time.sleep(120)
        os._exit(0)
    if p == want:
        for _ in range(1000):  # until the child is of that uid (bounded)
            with open("/proc/%d/status" % p) as f:
                if ("\nUid:\t%d\t" % uid) in f.read():
                    break
            time.sleep(0.01)
        print(p)
        sys.exit(0)
    os.kill(p, 9)
    os.waitpid(p, 0)
sys.exit(1)
]]

local function host_process_with_pid(want, uid)
    local dir = h.tmpdir()
    h.write_file(dir .. "/reuse.py", REUSE, "644")
    local r = h.sh(("%s %s %d %d"):format(h.python, h.quote(dir .. "/reuse.py"), want, uid or 0))
    local pid = tonumber(r.stdout:match("^(%d+)"))
    if pid then h.defer(function() os.execute("kill -9 " .. pid .. " 2>/dev/null") end) end
    return pid
end

for _, mode in ipairs(MODES) do
    for _, user in ipairs(USERS) do
        describe(("session API client check, %s, as %s:"):format(mode.name, user.name), function()
            lazy_setup(function()
                assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
            end)
            after_each(h.cleanup)

            it("a host client is served: cordon exec and curl", function()
                local s = start(user.uid, mode.env)
                local r = h.cordon({ "exec", s.name, "--", "echo served; id -u" }, s.opts)
                assert.are.equal(0, r.code, h.describe(r))
                assert.truthy(r.stdout:find("^served\n"), h.describe(r))
                local a = h.api(s.socket, "GET", "/v1/jobs", nil, { uid = user.uid })
                assert.are.equal(200, a.status, h.describe_api(a))
            end)

            it("a client in another user namespace is refused; the same curl from the host is served", function()
                local s = start(user.uid, mode.env)
                local curl = ("curl -sS --max-time 20 -w '\\n%%{http_code}' --unix-socket %s http://cordon/v1/jobs")
                    :format(h.quote(s.socket))
                local host = h.sh(as_user(user.uid) .. curl)
                assert.truthy(host.stdout:find("\n200$"), "from the host: " .. host.stdout .. host.stderr)
                local inside = h.sh(as_user(user.uid) .. "unshare --user --map-root-user " .. curl)
                assert.truthy(inside.stdout:find("\n403$"), "from another user namespace: " .. inside.stdout .. inside.stderr)
                assert.truthy(inside.stdout:find("sessions are not driven from inside a sandbox", 1, true), inside.stdout)
            end)

            it("a sandboxed client's pid given to a host process before the check: refused #privileged", function()
                if h.sh("id -u").stdout ~= "0\n" or not h.read_file("/proc/sys/kernel/ns_last_pid") then
                    h.skip("needs root and ns_last_pid to give a pid to a process")
                end
                local s = start(user.uid, mode.env)
                local reused
                local left = client_while_stopped(s, true, {
                    prefix = "unshare --user --map-root-user ",
                    meanwhile = function(pid)
                        assert(pid, "the client wrote no pid")
                        reused = host_process_with_pid(pid, user.uid)
                        if reused then
                            local st = h.read_file("/proc/" .. reused .. "/status") or ""
                            assert.truthy(st:find("\nUid:%s+" .. (user.uid or 0) .. "%s"), st)
                        end
                    end,
                })
                if not reused then h.skip("the connector's pid was taken by another process every time") end
                assert.truthy(left:find("^HTTP/1%.1 403"), left)
                assert.truthy(left:find("sessions are not driven from inside a sandbox", 1, true)
                    or left:find("this session cannot tell who the client is", 1, true), left)
            end)

            it("a client that exits before the check is refused; the same client that stays is served", function()
                local s = start(user.uid, mode.env)
                local stays = client_while_stopped(s, false)
                assert.truthy(stays:find("^HTTP/1%.1 200"), stays)
                local left = client_while_stopped(s, true)
                assert.truthy(left:find("^HTTP/1%.1 403"), left)
                assert.truthy(left:find("sessions are not driven from inside a sandbox", 1, true)
                    or left:find("this session cannot tell who the client is", 1, true), left)
                -- still serving the host after the refusal
                local a = h.api(s.socket, "GET", "/v1/session", nil, { uid = user.uid })
                assert.are.equal(200, a.status, h.describe_api(a))
            end)
        end)
    end
end
