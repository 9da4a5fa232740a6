-- spec/04-engine/session_ports_spec.lua — publishing a session's port to the host:
-- `session start --publish [HOSTADDR:]HOSTPORT:PORT`, `cordon publish NAME PORT [HOSTPORT]`,
-- `cordon unpublish NAME PORT` and their API (POST /v1/ports, DELETE /v1/ports/PORT, the
-- "ports" of GET /v1/session). The host side listens on 127.0.0.1; each connection accepted
-- there is carried into the sandbox through a socket init connected to the sandbox's
-- 127.0.0.1:PORT (proxy/port_relay.c). Checked from the host with curl and raw python
-- clients: a dev server's HTTP, a raw TCP echo, unpublish and session stop closing the
-- listener, a flood of connections (bounded, the session still working), bad input.
-- Every spec uses its own XDG_RUNTIME_DIR and stops what it starts; waits are bounded and no
-- timing is asserted. Drives the built binary ($CORDON_BIN); loopback only; needs curl, python3.
local h = require("spec.helpers")

local ok = h.ok

local function cli(s, args)
    return h.cordon(args, { cwd = s.cwd, env = s.env })
end

-- A port free on the host's 127.0.0.1 now (bound, then closed again).
local function free_port()
    return tonumber(h.sh_ok(h.python .. " -c " .. h.quote("import socket; s=socket.socket(); "
        .. "s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")))
end

-- Whether something accepts TCP connections on the host's 127.0.0.1:port.
local function listening(port)
    return h.sh(h.python .. " -c " .. h.quote(("import socket; socket.create_connection(('127.0.0.1', %d), "
        .. "timeout=5)"):format(port))).code == 0
end

local CURL = "curl -sS --noproxy '*' --max-time 10 "

-- A python http.server in session s on the sandbox's 127.0.0.1:port, serving a marker.
local function dev_server(s, port)
    local marker = "cordon-published-" .. h.token()
    ok(cli(s, { "exec", s.name, "--", "mkdir -p /tmp/www && echo " .. marker .. " > /tmp/www/probe.txt" }))
    ok(cli(s, { "exec", s.name, "--background", "--",
        h.python .. " -m http.server " .. port .. " --bind 127.0.0.1 --directory /tmp/www" }))
    return marker
end

-- GET http://127.0.0.1:host_port/probe.txt from the host, until it answers (the server inside
-- needs a moment to listen).
local function fetch(host_port)
    return h.wait_for(function()
        local r = h.sh(CURL .. "http://127.0.0.1:" .. host_port .. "/probe.txt")
        return r.code == 0 and r.stdout or nil
    end, 15)
end

describe("published ports", function()
    after_each(h.cleanup)

    it("--publish carries a dev server's HTTP to the host; session status lists it", function()
        local hp = free_port()
        local s = h.session_start("pub-" .. h.token(), { flags = { "--publish", hp .. ":8000" } })
        local marker = dev_server(s, 8000)
        assert.are.equal(marker .. "\n", fetch(hp))
        assert.are.equal(marker .. "\n", h.sh_ok(CURL .. "http://127.0.0.1:" .. hp .. "/probe.txt"))
        local st = ok(cli(s, { "session", "status", s.name }))
        assert.truthy(st.stdout:find("published:\n  8000 -> 127.0.0.1:" .. hp, 1, true), h.describe(st))
        local info = h.api(s.socket, "GET", "/v1/session")
        assert.are.equal(1, #info.json.ports, h.describe_api(info))
        assert.are.equal(8000, info.json.ports[1].port)
        assert.are.equal("127.0.0.1", info.json.ports[1].host_addr)
        assert.are.equal(hp, info.json.ports[1].host_port)
        -- the listener goes away with the session
        ok(cli(s, { "session", "stop", s.name }))
        assert.is_false(listening(hp))
    end)

    it("cordon publish carries raw TCP both ways (an echo, with half-close); unpublish closes it", function()
        local s = h.session_start("pub-" .. h.token())
        ok(cli(s, { "exec", s.name, "--background", "--", h.python .. " -c " .. h.quote([[
import socket, threading
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", 9000)); l.listen(16)
def serve(c):
    while True:
        b = c.recv(65536)
        if not b: break
        c.sendall(b)
    c.close()
while True:
    c, _ = l.accept()
    threading.Thread(target=serve, args=(c,)).start()
]]) }))
        local hp = free_port()
        local r = ok(cli(s, { "publish", s.name, "9000", tostring(hp) }))
        assert.are.equal(s.name .. "'s port 9000 is published at 127.0.0.1:" .. hp .. "\n", r.stdout)
        local client = h.python .. " -c " .. h.quote(([[
import hashlib, os, socket, sys, threading, time
data = os.urandom(1 << 20)
for attempt in range(100):
    s = socket.create_connection(("127.0.0.1", %d), timeout=20)
    got = b""
    def send():
        try:
            s.sendall(data); s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    t = threading.Thread(target=send); t.start()
    try:
        while True:
            b = s.recv(65536)
            if not b: break
            got += b
    except OSError:
        got = b""  # reset: nothing listened inside yet
    t.join()
    if got or attempt == 99: break
    time.sleep(0.1)  # the echo inside was not listening yet: the relay reset the connection
print("same" if got == data else "differ %%d" %% len(got))
]]):format(hp))
        assert.are.equal("same\n", h.sh_ok(client))
        ok(cli(s, { "unpublish", s.name, "9000" }))
        assert.is_false(listening(hp))
        local again = cli(s, { "unpublish", s.name, "9000" })
        assert.are.equal(125, again.code, h.describe(again))
        assert.truthy(again.stderr:find("port 9000 is not published", 1, true), h.describe(again))
    end)

    it("a flood of connections is bounded (256 at once) and the session keeps working", function()
        local hp = free_port()
        local s = h.session_start("pub-" .. h.token(), { flags = { "--publish", "127.0.0.1:" .. hp .. ":8000" } })
        local marker = dev_server(s, 8000)
        assert.are.equal(marker .. "\n", fetch(hp))
        -- 320 connections held open at once: beyond 256 they are accepted and closed at once
        local flood = h.python .. " -c " .. h.quote(([[
import select, socket, time
socks = []
for i in range(320):
    socks.append(socket.create_connection(("127.0.0.1", %d), timeout=10))
closed, deadline = set(), time.time() + 10
while len(closed) < 320 - 256 and time.time() < deadline:
    r, _, _ = select.select([x for x in socks if x not in closed], [], [], 0.5)
    for x in r:
        try:
            if x.recv(1) == b"": closed.add(x)
        except OSError:
            closed.add(x)
print(len(closed))
for x in socks: x.close()
]]):format(hp))
        assert.are.equal(tostring(320 - 256) .. "\n", h.sh_ok(flood))
        -- the session and the published port still serve
        assert.are.equal(marker .. "\n", fetch(hp))
        assert.are.equal("alive\n", ok(cli(s, { "exec", s.name, "--", "echo alive" })).stdout)
    end)

    it("refuses bad input with one clear line", function()
        local s = h.session_start("pub-" .. h.token())
        for _, case in ipairs({
            { { "0" }, 125, "invalid PORT '0' (a port in the sandbox, 1 to 65535)" },
            { { "70000" }, 125, "invalid PORT '70000' (a port in the sandbox, 1 to 65535)" },
            { { "8000", "70000" }, 125, "invalid HOSTPORT '70000'" },
        }) do
            local args = { "publish", s.name }
            for _, a in ipairs(case[1]) do args[#args + 1] = a end
            local r = cli(s, args)
            assert.are.equal(case[2], r.code, h.describe(r))
            assert.truthy(r.stderr:find(case[3], 1, true), h.describe(r))
        end
        -- a host port something on the host holds already
        local taken = h.server("http")
        local r = cli(s, { "publish", s.name, "8000", tostring(taken.port) })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("127.0.0.1:" .. taken.port .. " is taken on the host", 1, true), h.describe(r))
        -- the API says the same
        local a = h.api(s.socket, "POST", "/v1/ports", '{"port":0}')
        assert.are.equal(400, a.status, h.describe_api(a))
        a = h.api(s.socket, "POST", "/v1/ports", ('{"port":8000,"host_port":%d}'):format(taken.port))
        assert.are.equal(409, a.status, h.describe_api(a))
        a = h.api(s.socket, "POST", "/v1/ports", '{"port":8000,"host_addr":"not-an-ip"}')
        assert.are.equal(400, a.status, h.describe_api(a))
        a = h.api(s.socket, "DELETE", "/v1/ports/8000")
        assert.are.equal(404, a.status, h.describe_api(a))
        -- and session start does not start with a port it cannot publish
        local start = h.cordon({ "session", "start", "pub-" .. h.token(), "--detach", "--publish",
            taken.port .. ":8000" }, { cwd = s.cwd, env = s.env })
        assert.are.equal(125, start.code, h.describe(start))
        assert.truthy(start.stderr:find("--publish " .. taken.port .. ":8000: 127.0.0.1:" .. taken.port
            .. " is taken on the host", 1, true), h.describe(start))
        start = h.cordon({ "session", "start", "pub-" .. h.token(), "--detach", "--publish", "8000" },
            { cwd = s.cwd, env = s.env })
        assert.are.equal(125, start.code, h.describe(start))
        assert.truthy(start.stderr:find("expected [HOSTADDR:]HOSTPORT:PORT", 1, true), h.describe(start))
    end)

    it("cordon run --publish serves while the command runs", function()
        local hp = free_port()
        local dir = h.tmpdir()
        local marker = "cordon-run-published-" .. h.token()
        h.write_file(dir .. "/probe.txt", marker .. "\n")
        h.spawn(h.join({ h.bin, "run", "--allow-write", dir, "--publish", hp .. ":8000", "--", "timeout", "30",
            h.python, "-m", "http.server", "8000", "--bind", "127.0.0.1", "--directory", dir }))
        assert.are.equal(marker .. "\n", fetch(hp))
        local bad = h.cordon({ "run", "--publish", "8000", "--", "true" })
        assert.are.equal(125, bad.code, h.describe(bad))
        assert.truthy(bad.stderr:find("expected [HOSTADDR:]HOSTPORT:PORT", 1, true), h.describe(bad))
    end)
end)
