-- spec/04-engine/session_grants_spec.lua — grants that expire and can be revoked
-- (docs/sessions.md, "Grants"): `cordon grant NAME --network HOST:PORT [--for D]` made ahead of
-- any question, `cordon approve NAME ID for=D`, `cordon grants NAME [--json]`, `cordon revoke
-- NAME ID` (which closes the connections open under a network grant), and the session-long
-- approvals of re-runs outside the sandbox in the same list.
--
-- The destination is an HTTP origin on 127.0.0.2 (a stand-in for a remote host, which no rule
-- of the coding profile allows). Expiry is waited for by polling `cordon grants` until the grant
-- is gone, within a generous bound; nothing here measures time.
local h = require("spec.helpers")
local cjson = require("cjson")

-- An HTTP origin on 127.0.0.2: GET /x answers "MARKER /x"; GET /hold sends its head and
-- "held" and then keeps the connection open until the client closes it.
local ORIGIN = [[
import http.server, os, sys, time
ready, marker = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_GET(self):
        if self.path == "/hold":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"held\n")
            self.wfile.flush()
            while self.rfile.read(1):
                pass
            return
        body = ("%s %s\n" % (marker, self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.2", 0), H)
srv.daemon_threads = True
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(ready + ".tmp", ready)
srv.serve_forever()
]]

-- Inside the sandbox: a CONNECT tunnel through the proxy to 127.0.0.2:PORT, GET /hold on it,
-- then "open" once the origin answered and "closed" when the tunnel ends.
local HOLDER = [[
import socket, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", 18080))
s.sendall(b"CONNECT 127.0.0.2:%d HTTP/1.1\r\nHost: 127.0.0.2:%d\r\n\r\n" % (port, port))
got = b""
while b"held" not in got:
    d = s.recv(4096)
    if not d:
        print("refused", got.split(b"\r\n")[0].decode(errors="replace"), flush=True)
        sys.exit(1)
    got += d
    if got.startswith(b"HTTP/1.1 200") and b"\r\n\r\n" in got and b"GET" not in got:
        s.sendall(b"GET /hold HTTP/1.0\r\nHost: x\r\n\r\n")
        got += b"GET"
print("open", flush=True)
while s.recv(4096):
    pass
print("closed", flush=True)
]]

local ok = h.ok

local function script(name, body)
    local path = h.tmpdir() .. "/" .. name
    h.write_file(path, body)
    return path
end

local function origin()
    local ready = h.tmpdir() .. "/ready"
    local marker = "cordon-grants-" .. h.token()
    h.spawn(h.join({ h.python, script("origin.py", ORIGIN), ready, marker }))
    local port = h.wait_for(function()
        local t = h.read_file(ready)
        return t and tonumber(t:match("^(%d+)"))
    end, 10)
    assert(port, "the origin did not start")
    return { port = port, marker = marker, dest = ("127.0.0.2:%d"):format(port),
        fetch = ("curl -sS --noproxy '' --max-time 20 http://127.0.0.2:%d/x"):format(port) }
end

local function cli(s, args, opts)
    opts = opts or {}
    return h.cordon(args, { cwd = s.cwd, env = s.env, timeout = opts.timeout })
end

local function exec(s, cmd)
    return cli(s, { "exec", s.name, "--", cmd })
end

local function grants(s)
    local r = ok(cli(s, { "grants", s.name, "--json" }))
    return cjson.decode(r.stdout).grants
end

local function find(list, id)
    for _, g in ipairs(list) do
        if g.id == id then return g end
    end
end

-- One line on stderr, exit 125, nothing on stdout.
local function refused(r, pattern)
    assert.are.equal(125, r.code, h.describe(r))
    assert.are.equal("", r.stdout, h.describe(r))
    local lines = select(2, r.stderr:gsub("\n", ""))
    assert.are.equal(1, lines, h.describe(r))
    if pattern then assert.truthy(r.stderr:find(pattern, 1, true), h.describe(r)) end
end

-- Subscribes an approver (GET /v1/approvals?watch=1 with curl, until clean-up).
local function approver(s)
    local out = h.tmpdir() .. "/watch.ndjson"
    h.spawn(("sh -c %s"):format(h.quote(("exec curl -sSN --unix-socket %s %s >%s"):format(
        h.quote(s.socket), h.quote("http://cordon/v1/approvals?watch=1"), h.quote(out)))))
    assert(h.wait_for(function() return (h.read_file(out) or ""):find('"subscribed"', 1, true) end, 10),
        "the approver did not subscribe")
    return s
end

-- `cordon exec` in the background; returns a function that waits for its end: { code, out }.
local function exec_async(s, cmd)
    local out = h.tmpdir() .. "/exec.out"
    local line = h.command_line({ "exec", s.name, "--", cmd }, { env = s.env })
    h.spawn("sh -c " .. h.quote(("cd %s && %s >%s 2>&1; echo \"rc=$?\" >>%s"):format(
        h.quote(s.cwd), line, h.quote(out), h.quote(out))))
    return function()
        local text = h.wait_for(function()
            local t = h.read_file(out)
            return t and t:match("rc=%d+\n$") and t
        end, 40)
        assert(text, "the exec did not end: " .. tostring(h.read_file(out)))
        return { code = tonumber(text:match("rc=(%d+)\n$")), out = text }
    end
end

local function pending(s, kind)
    local a = h.wait_for(function()
        local r = h.api(s.socket, "GET", "/v1/approvals")
        for _, x in ipairs(r.json and r.json.approvals or {}) do
            if x.kind == kind then return x end
        end
    end, 15)
    assert(a, "no pending " .. kind .. " question")
    return a
end

describe("cordon session: grants that expire and can be revoked", function()
    after_each(h.cleanup)

    it("a timed grant lets a destination through, is listed, and refuses it again once expired", function()
        local o = origin()
        local audit = h.tmpdir() .. "/audit.jsonl"
        local s = h.session_start("grant-" .. h.token(), { env = { CORDON_AUDIT_LOG = audit } })
        -- not allowed before (and outside the sandbox the origin answers: the refusal is the sandbox's)
        assert.truthy(h.sh(o.fetch).stdout:find(o.marker, 1, true), "the origin does not answer on the host")
        local r = exec(s, o.fetch)
        assert.is_nil(r.stdout:find(o.marker, 1, true), "reached before any grant\n" .. h.describe(r))
        r = ok(cli(s, { "grant", s.name, "--network", o.dest, "--for", "3s" }))
        local id = r.stdout:match("^(g%d+)\n$")
        assert.truthy(id, h.describe(r))
        local g = find(grants(s), id)
        assert.truthy(g, "the grant is not listed")
        assert.are.equal("network", g.kind)
        assert.are.equal("timed", g.scope)
        assert.are.equal(o.dest, g.target)
        assert.are.equal("127.0.0.2", g.host)
        assert.are.equal(o.port, math.tointeger(g.port))
        assert.are.equal("cordon grant", g.by)
        assert.is_number(g.granted)
        assert.truthy(g.expires > g.granted and g.expires <= g.granted + 3.5, cjson.encode(g))
        assert.are.equal(0, math.tointeger(g.open))
        -- the table for a person
        r = ok(cli(s, { "grants", s.name }))
        assert.truthy(r.stdout:find("^ID%s+KIND%s+SCOPE%s+EXPIRES%s+OPEN%s+BY%s+TARGET"), h.describe(r))
        assert.truthy(r.stdout:find(id .. "%s+network%s+timed%s+in %d+s%s+0%s+cordon grant%s+127%.0%.0%.2:"), h.describe(r))
        -- through while it holds (unless the machine was slow enough for it to end already)
        r = exec(s, o.fetch)
        if find(grants(s), id) then
            assert.truthy(r.stdout:find(o.marker .. " /x", 1, true), h.describe(r))
        end
        -- ended by its time, without a question: gone from the list, and refused again
        assert.truthy(h.wait_for(function() return not find(grants(s), id) end, 30),
            "the grant did not expire")
        r = exec(s, o.fetch)
        assert.is_nil(r.stdout:find(o.marker, 1, true), "reached after the grant expired\n" .. h.describe(r))
        assert.truthy(r.stderr:find("--network-allow " .. o.dest, 1, true), h.describe(r))
        -- the audit log has the grant and its end, each one line
        local log = h.read_file(audit) or ""
        assert.truthy(log:find('"kind":"grant","host":"127.0.0.2","port":' .. o.port .. ',"verdict":"allow","rule":"grant ' .. id .. '"', 1, true), log)
        assert.truthy(log:find('"kind":"grant_expired","host":"127.0.0.2","port":' .. o.port .. ',"verdict":"deny","rule":"grant ' .. id .. '"', 1, true), log)
    end)

    it("revoke ends a grant at once and closes the tunnel open under it", function()
        local o = origin()
        local audit = h.tmpdir() .. "/audit.jsonl"
        local s = h.session_start("grant-" .. h.token(), { env = { CORDON_AUDIT_LOG = audit } })
        local id = ok(cli(s, { "grant", s.name, "--network", o.dest })).stdout:match("^(g%d+)\n$")
        assert.truthy(id)
        assert.are.equal("session", find(grants(s), id).scope)
        assert.are.equal(cjson.null, find(grants(s), id).expires)
        -- in the workspace: the sandbox sees it
        h.write_file(s.cwd .. "/holder.py", HOLDER)
        local r = ok(cli(s, { "exec", s.name, "--background", "--", ("python3 holder.py %d"):format(o.port) }))
        local pid = tonumber(r.stdout:match("PID: (%d+)"))
        assert.truthy(pid, h.describe(r))
        local log = function() return ok(cli(s, { "logs", s.name, tostring(pid) })).stdout end
        assert.truthy(h.wait_for(function() return log():find("open", 1, true) end, 20),
            "the tunnel did not open: " .. log())
        assert.are.equal(1, math.tointeger(find(grants(s), id).open))
        r = ok(cli(s, { "revoke", s.name, id }))
        assert.truthy(r.stdout:find("revoked (1 open connection closed)", 1, true), h.describe(r))
        assert.truthy(h.wait_for(function() return log():find("closed", 1, true) end, 20),
            "the tunnel stayed open: " .. log())
        assert.is_nil(find(grants(s), id))
        r = exec(s, o.fetch)
        assert.is_nil(r.stdout:find(o.marker, 1, true), "reached after the revoke\n" .. h.describe(r))
        local lines = h.read_file(audit) or ""
        assert.truthy(lines:find('"kind":"grant_revoked","host":"127.0.0.2","port":' .. o.port, 1, true), lines)
        local _, closed = lines:gsub('"kind":"grant_closed"', "")
        assert.are.equal(1, closed, lines)
        -- a second revoke of the same id: nothing in force
        refused(cli(s, { "revoke", s.name, id }), "no grant " .. id)
    end)

    it("approve ID for=D answers a network question with a timed grant", function()
        local o = origin()
        local s = approver(h.session_start("grant-" .. h.token(), { flags = { "--permission-timeout", "60s" } }))
        local done = exec_async(s, o.fetch)
        local q = pending(s, "network")
        local r = ok(cli(s, { "approve", s.name, tostring(math.tointeger(q.id)), "for=10m" }))
        assert.truthy(r.stdout:find("allowed for 600 s", 1, true), h.describe(r))
        r = done()
        assert.are.equal(0, r.code, r.out)
        assert.truthy(r.out:find(o.marker .. " /x", 1, true), r.out)
        local list = grants(s)
        assert.are.equal(1, #list, cjson.encode(list))
        local g = list[1]
        assert.are.equal("timed", g.scope)
        assert.are.equal(o.dest, g.target)
        assert.truthy(g.expires > g.granted + 590 and g.expires <= g.granted + 601, cjson.encode(g))
        -- the next command goes through unasked; after a revoke it is asked again
        r = ok(exec(s, o.fetch))
        assert.truthy(r.stdout:find(o.marker, 1, true), h.describe(r))
        ok(cli(s, { "revoke", s.name, g.id }))
        done = exec_async(s, o.fetch)
        pending(s, "network")
        ok(cli(s, { "approve", s.name, tostring(math.tointeger(pending(s, "network").id)), "deny" }))
        assert.is_nil(done().out:find(o.marker, 1, true))
    end)

    it("cordon approve --watch takes 'f D' as an answer for a time", function()
        local o = origin()
        local s = h.session_start("grant-" .. h.token(), { flags = { "--permission-timeout", "60s" } })
        local input, out = h.tmpdir() .. "/answers", h.tmpdir() .. "/watch.out"
        h.write_file(input, "")
        local line = h.command_line({ "approve", "--watch", s.name }, { env = s.env, timeout = false })
        h.spawn("sh -c " .. h.quote(("cd %s && tail --pid=$$ -f %s | %s >%s 2>&1"):format(h.quote(s.cwd),
            h.quote(input), line, h.quote(out))))
        assert(h.wait_for(function() return (h.read_file(out) or ""):find("answering the approvals", 1, true) end, 10),
            "the approver did not subscribe: " .. tostring(h.read_file(out)))
        local done = exec_async(s, o.fetch)
        assert(h.wait_for(function() return (h.read_file(out) or ""):find("[f 10m] for a time  [d] deny ?", 1, true) end, 15),
            "no prompt: " .. tostring(h.read_file(out)))
        local f = assert(io.open(input, "a"))
        f:write("f 90s\n")
        f:close()
        local r = done()
        assert.are.equal(0, r.code, r.out)
        assert.truthy(r.out:find(o.marker .. " /x", 1, true), r.out)
        local g = grants(s)[1]
        assert.truthy(g, "no grant")
        assert.are.equal("timed", g.scope)
        assert.truthy(g.expires > g.granted + 85 and g.expires <= g.granted + 91, cjson.encode(g))
        assert.truthy(g.by:find("cordon approve --watch", 1, true), g.by)
    end)

    it("a re-run allowed for the session is listed and can be revoked", function()
        local s = approver(h.session_start("grant-" .. h.token(),
            { flags = { "--ask-sandbox-off", "--permission-timeout", "60s" } }))
        local target = h.tmpdir() .. "/written-outside"
        local done = exec_async(s, "touch " .. target)
        ok(cli(s, { "approve", s.name, tostring(math.tointeger(pending(s, "rerun").id)), "session" }))
        assert.are.equal(0, done().code)
        os.remove(target)
        local g = grants(s)[1]
        assert.truthy(g, "the re-run grant is not listed")
        assert.truthy(g.id:match("^r%d+$"), g.id)
        assert.are.equal("rerun", g.kind)
        assert.are.equal("session", g.scope)
        assert.are.equal("touch " .. target, g.command)
        assert.are.equal("touch " .. target, g.target)
        assert.are.equal(cjson.null, g.expires)
        -- in force: runs outside unasked
        local r = ok(exec(s, "touch " .. target))
        assert.truthy(r.stderr:find("as approved for this session", 1, true), h.describe(r))
        os.remove(target)
        -- revoked: asked again
        ok(cli(s, { "revoke", s.name, g.id }))
        assert.are.same({}, grants(s))
        done = exec_async(s, "touch " .. target)
        ok(cli(s, { "approve", s.name, tostring(math.tointeger(pending(s, "rerun").id)), "deny" }))
        assert.are_not.equal(0, done().code)
        assert.is_nil(h.read_file(target))
        -- for=D: a timed re-run grant, asked about again once it ended
        done = exec_async(s, "touch " .. target)
        ok(cli(s, { "approve", s.name, tostring(math.tointeger(pending(s, "rerun").id)), "for=2s" }))
        assert.are.equal(0, done().code)
        os.remove(target)
        g = grants(s)[1]
        assert.truthy(g and g.kind == "rerun" and g.scope == "timed", cjson.encode(grants(s)))
        assert.truthy(h.wait_for(function() return #grants(s) == 0 end, 30), "the re-run grant did not expire")
        done = exec_async(s, "touch " .. target)
        ok(cli(s, { "approve", s.name, tostring(math.tointeger(pending(s, "rerun").id)), "deny" }))
        assert.are_not.equal(0, done().code)
        assert.is_nil(h.read_file(target))
    end)

    it("the Python and TypeScript clients grant, list and revoke", function()
        local o = origin()
        local s = h.session_start("grant-" .. h.token())
        local py = ([[
import json, sys
from cordon import Session
s = Session.attach(sys.argv[1])
g = s.grant_network(sys.argv[2], for_seconds=600, by="the python client")
listed = [x for x in s.grants() if x.id == g.id]
print(json.dumps({"id": g.id, "scope": g.scope, "by": listed[0].by, "target": listed[0].target,
                  "closed": s.revoke(g.id), "left": len(s.grants())}))
]])
        local r = h.sh(("XDG_RUNTIME_DIR=%s PYTHONPATH=%s %s -c %s %s %s"):format(h.quote(s.runtime),
            h.quote(h.source_dir .. "/clients/python/src"), h.python, h.quote(py), s.name, o.dest))
        assert.are.equal(0, r.code, h.describe(r))
        local v = cjson.decode(r.stdout)
        assert.truthy(v.id:match("^g%d+$"), r.stdout)
        assert.are.same({ "timed", "the python client", o.dest, 0, 0 },
            { v.scope, v.by, v.target, math.tointeger(v.closed), math.tointeger(v.left) })
        if h.sh("command -v node").code ~= 0 then return end
        local js = ([[
import { Session } from %s;
const s = await Session.attach(process.argv[2]);
const g = await s.grantNetwork(process.argv[3]);
const listed = (await s.grants()).filter((x) => x.id === g.id);
console.log(JSON.stringify({ id: g.id, scope: g.scope, expires: listed[0].expires, closed: await s.revoke(g.id),
  left: (await s.grants()).length }));
]]):format(cjson.encode("file://" .. h.source_dir .. "/clients/typescript/index.js"))
        local file = h.tmpdir() .. "/grants.mjs"
        h.write_file(file, js)
        r = h.sh(("XDG_RUNTIME_DIR=%s node %s %s %s"):format(h.quote(s.runtime), h.quote(file), s.name, o.dest))
        assert.are.equal(0, r.code, h.describe(r))
        v = cjson.decode(r.stdout)
        assert.truthy(v.id:match("^g%d+$"), r.stdout)
        assert.are.same({ "session", cjson.null, 0, 0 }, { v.scope, v.expires, math.tointeger(v.closed), math.tointeger(v.left) })
    end)

    it("the sandbox's resolver answers a granted name, and refuses it again after a revoke", function()
        local o = origin()
        local hosts = h.tmpdir() .. "/hosts"
        h.write_file(hosts, "127.0.0.2 granted.test\n")
        -- (an answer that is a loopback address needs a rule of its own, grant or not)
        local s = h.session_start("grant-" .. h.token(), { env = { CORDON_HOSTS_FILE = hosts },
            flags = { "--network-allow", o.dest } })
        local probe = "getent hosts granted.test; echo rc=$?"
        local fetch = ("curl -sS --noproxy '*' --max-time 10 http://granted.test:%d/x"):format(o.port)
        local r = ok(exec(s, probe))
        if r.stdout:find("127.0.0.2", 1, true) then
            h.skip("the sandbox resolves granted.test without a grant (no resolver of cordon's here)")
        end
        assert.truthy(r.stdout:find("rc=2", 1, true), h.describe(r))
        local id = ok(cli(s, { "grant", s.name, "--network", "granted.test:" .. o.port })).stdout:match("^(g%d+)\n$")
        r = ok(exec(s, probe))
        assert.truthy(r.stdout:find("127.0.0.2%s+granted.test"), h.describe(r))
        -- without the proxy variables: the transparent path decides by the name, with the grant
        r = exec(s, fetch)
        if r.code == 0 then
            assert.truthy(r.stdout:find(o.marker, 1, true), h.describe(r))
        end
        ok(cli(s, { "revoke", s.name, id }))
        -- the answer is kept a while by the resolver, but the name is no longer granted: a
        -- connection to it is refused
        r = exec(s, fetch)
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.is_nil(r.stdout:find(o.marker, 1, true), h.describe(r))
    end)

    it("many grants: the table is bounded, and the limit is said in one line", function()
        local s = h.session_start("grant-" .. h.token())
        -- 256 at most (answers kept included); made through one client program, quickly
        local py = [[
import sys
from cordon import Session, APIError
s = Session.attach(sys.argv[1])
for i in range(256):
    s.grant_network("host%d.test:443" % i)
try:
    s.grant_network("one-more.test:443")
    print("taken")
except APIError as e:
    print(e.status, e.message)
]]
        local r = h.sh(("XDG_RUNTIME_DIR=%s PYTHONPATH=%s %s -c %s %s"):format(h.quote(s.runtime),
            h.quote(h.source_dir .. "/clients/python/src"), h.python, h.quote(py), s.name))
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("^409 at most 256 answers and grants are kept in a session"), h.describe(r))
        assert.are.equal(256, #grants(s))
        refused(cli(s, { "grant", s.name, "--network", "one-more.test:443" }), "at most 256")
        -- a revoke makes room
        ok(cli(s, { "revoke", s.name, "g1" }))
        ok(cli(s, { "grant", s.name, "--network", "one-more.test:443" }))
    end)

    it("bad words are one line and exit 125", function()
        local s = h.session_start("grant-" .. h.token())
        refused(cli(s, { "grant", s.name, "--network", "127.0.0.2:80", "--for", "x" }), "invalid --for 'x'")
        refused(cli(s, { "grant", s.name, "--network", "127.0.0.2:80", "--for", "0" }), "invalid --for")
        refused(cli(s, { "grant", s.name, "--network", "nohostport" }), "invalid --network 'nohostport'")
        refused(cli(s, { "grant", s.name, "--network", "*.example.com:443" }), "invalid --network")
        refused(cli(s, { "grant", s.name, "--network", "example.com:70000" }), "invalid --network")
        refused(cli(s, { "grant", s.name }), "missing --network")
        refused(cli(s, { "revoke", s.name, "g999" }), "no grant g999")
        refused(cli(s, { "revoke", s.name, "nonsense" }), "no grant nonsense")
        refused(cli(s, { "approve", s.name, "1", "for=soon" }), "invalid duration")
        refused(cli(s, { "approve", s.name, "1", "for=" }), "invalid duration")
        refused(cli(s, { "grants", "no-such-session-" .. h.token() }))
        -- the API refuses the same words (a client is never trusted)
        local a = h.api(s.socket, "POST", "/v1/grants", '{"network":"nohostport"}')
        assert.are.equal(400, a.status, h.describe_api(a))
        a = h.api(s.socket, "POST", "/v1/grants", '{"network":"127.0.0.2:80","for":-1}')
        assert.are.equal(400, a.status, h.describe_api(a))
        a = h.api(s.socket, "POST", "/v1/grants", '{"network":"127.0.0.2:80","what":1}')
        assert.are.equal(400, a.status, h.describe_api(a))
        a = h.api(s.socket, "DELETE", "/v1/grants/g1")
        assert.are.equal(404, a.status, h.describe_api(a))
        -- nothing was granted by any of it
        assert.are.same({}, grants(s))
    end)
end)
