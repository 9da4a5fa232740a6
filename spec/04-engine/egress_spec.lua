-- spec/04-engine/egress_spec.lua — the egress proxy of `cordon run` seen by real clients:
-- curl (HTTP, HTTPS through CONNECT, SOCKS5), python's urllib, git over HTTP, `cordon nc` and
-- ssh's ProxyCommand, against origins the spec starts on the HOST's loopback
-- (spec/fixtures/engine/egress/origin.py). Inside the sandbox those origins are reachable
-- only through the proxy (127.0.0.1:18080 HTTP, 127.0.0.1:18081 SOCKS5), which the controller
-- serves from the host's namespace when a rule allows it.
--
-- Every run sets CORDON_AUDIT_LOG to a temp file; origins record each accepted connection in
-- READY.conn, so "refused" is also checked on the host: nothing reached the origin.
-- Clients inside are told not to bypass the proxy for 127.0.0.1 (the sandbox's NO_PROXY names
-- loopback): curl --noproxy '', NO_PROXY= for python and git.
-- Drives the built binary ($CORDON_BIN); loopback only; needs curl, git, ssh, openssl, python3.
local h = require("spec.helpers")

local FIX = h.fixtures .. "/engine/egress"
local CURL = "curl -sS --noproxy '' --max-time 20 "

local ok = h.ok

local has = h.has

--- Starts origin.py KIND on the host's 127.0.0.1; returns { pid, port, ready, marker }.
local function origin(kind, ...)
    local dir = h.tmpdir()
    local ready = dir .. "/ready"
    local marker = "cordon-egress-" .. h.token()
    local args = { h.python, FIX .. "/origin.py", kind, ready }
    if kind == "http" then args[#args + 1] = marker end
    for _, a in ipairs({ ... }) do args[#args + 1] = a end
    local pid = h.spawn(h.join(args))
    local port = h.wait_for(function()
        local s = h.read_file(ready)
        return s and tonumber(s:match("^(%d+)"))
    end, 10)
    assert(port, "origin " .. kind .. " did not start")
    return { pid = pid, port = port, ready = ready, marker = marker, dir = dir }
end

--- Number of connections the origin accepted.
local function conns(o)
    local s = h.read_file(o.ready .. ".conn") or ""
    local n = 0
    for _ in s:gmatch("connected") do n = n + 1 end
    return n
end

--- A self-signed certificate for CN=localhost and IP 127.0.0.1, made now in a temp dir.
local function self_signed()
    local dir = h.tmpdir()
    h.sh_ok(("cd %s && openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout key.pem -out cert.pem "
        .. "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1"):format(h.quote(dir)))
    return dir .. "/cert.pem", dir .. "/key.pem"
end

--- `cordon run [flags] -- bash -c script` with a fresh audit log; returns r, audit path.
local function run(script, flags, opts)
    opts = opts or {}
    local audit = h.tmpdir() .. "/audit.jsonl"
    local env = { CORDON_AUDIT_LOG = audit }
    for k, v in pairs(opts.env or {}) do env[k] = v end
    local r = h.run_sh(script, { flags = flags or {}, env = env, unset = opts.unset })
    return r, audit
end

--- The audit log's decisions, decoded.
local function decisions(path)
    local cjson = require("cjson")
    local out = {}
    for line in (h.read_file(path) or ""):gmatch("[^\n]+") do out[#out + 1] = cjson.decode(line) end
    return out
end

local function allow(o) return "127.0.0.1:" .. o.port end
local function url(o, path) return ("http://127.0.0.1:%d%s"):format(o.port, path or "/") end

describe("egress: curl through the HTTP proxy", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("an allowed GET reaches the host's origin through the proxy", function()
        local o = origin("http")
        local r = ok(run(CURL .. h.quote(url(o, "/get")), { "--network-allow", allow(o) }))
        assert.are.equal(o.marker .. " /get\n", r.stdout)
        assert.are.equal(1, conns(o))
    end)

    it("an unlisted host gets 403 with X-Cordon-Error and the flag that would allow it", function()
        local o = origin("http")
        local r = ok(run(CURL .. "-i " .. h.quote(url(o, "/x")), { "--network-allow", "127.0.0.1:1" }))
        assert.truthy(r.stdout:match("^HTTP/1%.1 403 Forbidden\r\n"), h.describe(r))
        has(r, "X-Cordon-Error: blocked-by-policy\r\n")
        has(r, "127.0.0.1:" .. o.port)
        has(r, "--network-allow 127.0.0.1:" .. o.port)
        assert.are.equal(0, conns(o))
    end)

    it("a deny rule wins over an allow rule", function()
        local o = origin("http")
        local r = ok(run(CURL .. "-o /dev/null -w '%{http_code}' " .. h.quote(url(o)),
            { "--network-allow", allow(o), "--network-deny", "127.0.0.1" }))
        assert.are.equal("403", r.stdout)
        assert.are.equal(0, conns(o))
        -- the line names the deny rule, and suggests no --network-allow (none would help)
        has(r, ("cordon: the sandbox's network policy blocked 127.0.0.1:%d: the deny rule "
            .. "'127.0.0.1' names it"):format(o.port))
        assert.falsy(r.stderr:find("--network-allow", 1, true), h.describe(r))
    end)

    it("a name whose answer is a loopback address is refused with the flag for that address", function()
        local o = origin("http")
        local hosts = h.tmpdir() .. "/hosts"
        h.write_file(hosts, "127.0.0.1 web.test\n", "644")
        local env = { env = { CORDON_HOSTS_FILE = hosts } }
        local target = h.quote(("http://web.test:%d/named"):format(o.port))
        -- a rule for the name is there: the line must not suggest it again
        local r = run(CURL .. "-f " .. target, { "--network-allow", "web.test:" .. o.port }, env)
        assert.are_not.equal(0, r.code, h.describe(r))
        has(r, ("cordon: the sandbox's network policy blocked web.test:%d: its address is a loopback, "
            .. "link-local or private one, which needs a rule of its own (--network-allow 127.0.0.1:%d "
            .. "would allow it)"):format(o.port, o.port))
        assert.are.equal(0, conns(o))
        -- and that flag is the one that allows it
        r = ok(run(CURL .. target, { "--network-allow", "web.test:" .. o.port, "--network-allow", allow(o) }, env))
        assert.are.equal(o.marker .. " /named\n", r.stdout)
    end)

    it("HTTPS through CONNECT to a local TLS origin works when allowed", function()
        local cert, key = self_signed()
        local o = origin("http", cert, key)
        local r = ok(run(CURL .. "--cacert " .. h.quote(cert) .. " "
            .. h.quote(("https://127.0.0.1:%d/tls"):format(o.port)), { "--network-allow", allow(o) }))
        assert.are.equal(o.marker .. " /tls\n", r.stdout)
    end)

    it("HTTPS to an unlisted host: curl reports the proxy's 403 to CONNECT", function()
        local cert, key = self_signed()
        local o = origin("http", cert, key)
        local r = run(CURL .. "--cacert " .. h.quote(cert) .. " "
            .. h.quote(("https://127.0.0.1:%d/tls"):format(o.port)), { "--network-allow", "127.0.0.1:1" })
        assert.are.equal(56, r.code, h.describe(r))
        has(r, "CONNECT tunnel failed, response 403")
        assert.are.equal(0, conns(o))
    end)

    it("a POST body reaches the origin intact, with Content-Length and chunked", function()
        local o = origin("http")
        local dir = h.tmpdir()
        local body = dir .. "/body.bin"
        h.sh_ok("head -c 300001 /dev/urandom > " .. h.quote(body))
        local sum = h.sh_ok("sha256sum " .. h.quote(body)):match("^(%x+)")
        local r = ok(run(CURL .. "--data-binary @" .. h.quote(body) .. " " .. h.quote(url(o, "/post"))
            .. "; " .. CURL .. "-H 'Transfer-Encoding: chunked' --data-binary @" .. h.quote(body) .. " "
            .. h.quote(url(o, "/post")), { "--network-allow", allow(o) }))
        assert.are.equal(("sha256=%s len=300001 te=none\nsha256=%s len=300001 te=chunked\n"):format(sum, sum),
            r.stdout)
    end)
end)

describe("egress: other clients", function()
    after_each(h.cleanup)

    local URLLIB = [[
import sys, urllib.request, urllib.error
try:
    sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())
except urllib.error.HTTPError as e:
    print("HTTPError", e.code, e.headers.get("X-Cordon-Error"))
    sys.exit(3)
]]

    it("python urllib uses the environment's proxy: allowed", function()
        local o = origin("http")
        local r = ok(run("NO_PROXY= no_proxy= " .. h.python .. " -c " .. h.quote(URLLIB) .. " "
            .. h.quote(url(o, "/py")), { "--network-allow", allow(o) }))
        assert.are.equal(o.marker .. " /py\n", r.stdout)
    end)

    it("python urllib uses the environment's proxy: refused with HTTPError 403", function()
        local o = origin("http")
        local r = run("NO_PROXY= no_proxy= " .. h.python .. " -c " .. h.quote(URLLIB) .. " "
            .. h.quote(url(o, "/py")), { "--network-allow", "127.0.0.1:1" })
        assert.are.equal(3, r.code, h.describe(r))
        assert.are.equal("HTTPError 403 blocked-by-policy\n", r.stdout)
        assert.are.equal(0, conns(o))
    end)

    -- A bare repository served by a dumb HTTP server (python http.server).
    local function served_repo()
        local dir = h.tmpdir()
        local git = "env HOME=" .. h.quote(dir) .. " GIT_CONFIG_NOSYSTEM=1 git -c user.name=spec "
            .. "-c user.email=spec@example.com -c init.defaultBranch=main "
        local marker = "cordon-egress-git-" .. h.token()
        h.sh_ok(("cd %s && mkdir srv work && %s init -q --bare srv/repo.git && cd work && %s init -q "
            .. "&& echo %s > README && %s add README && %s commit -qm first && %s push -q ../srv/repo.git main "
            .. "&& %s -C ../srv/repo.git update-server-info"):format(h.quote(dir), git, git, marker, git, git,
            git, git))
        return h.server("http", dir .. "/srv"), marker
    end

    it("git clone over HTTP works when the origin is allowed", function()
        local srv, marker = served_repo()
        local r = ok(run(("NO_PROXY= no_proxy= git clone -q http://127.0.0.1:%d/repo.git clone && cat clone/README")
            :format(srv.port), { "--network-allow", "127.0.0.1:" .. srv.port }))
        assert.are.equal(marker .. "\n", r.stdout)
    end)

    it("git clone over HTTP fails with the proxy's 403 when it is not", function()
        local srv = served_repo()
        local r = run(("NO_PROXY= no_proxy= git clone -q http://127.0.0.1:%d/repo.git clone"):format(srv.port),
            { "--network-allow", "127.0.0.1:1" })
        assert.are_not.equal(0, r.code, h.describe(r))
        has(r, "403")
    end)
end)

describe("egress: SOCKS5", function()
    after_each(h.cleanup)

    local SOCKS = CURL .. "--socks5-hostname 127.0.0.1:18081 "

    it("a tcp:// rule allows a SOCKS5 connection", function()
        local o = origin("http")
        local r = ok(run(SOCKS .. h.quote(url(o, "/socks")), { "--network-allow", "tcp://127.0.0.1:" .. o.port }))
        assert.are.equal(o.marker .. " /socks\n", r.stdout)
    end)

    it("an HTTP rule does not allow SOCKS5 (reply 0x02: curl exit 97)", function()
        local o = origin("http")
        local r = run(SOCKS .. h.quote(url(o, "/socks")), { "--network-allow", allow(o) })
        assert.are.equal(97, r.code, h.describe(r))
        has(r, "(2)")
        assert.are.equal(0, conns(o))
    end)

    it("a quiet SOCKS client's refused destination is told with the tcp:// rule", function()
        -- curl -s prints nothing: the refusal line knows it was SOCKS from the proxy alone
        local o = origin("http")
        local r = run("curl -s --noproxy '' --max-time 20 --socks5-hostname 127.0.0.1:18081 " .. h.quote(url(o, "/q")),
            { "--network-allow", allow(o) })
        assert.are.equal(97, r.code, h.describe(r))
        has(r, "--network-allow tcp://127.0.0.1:" .. o.port .. " would allow it")
    end)

    it("a domain name is resolved on the host side", function()
        -- Nothing listens on the sandbox's own localhost:PORT: success means the controller
        -- resolved "localhost" in the host's namespace. The loopback address a name resolves
        -- to may need a rule of its own, so both are given.
        local o = origin("http")
        local r, audit = run(SOCKS .. h.quote(("http://localhost:%d/name"):format(o.port)),
            { "--network-allow", "tcp://localhost:" .. o.port, "--network-allow", "tcp://127.0.0.1:" .. o.port })
        ok(r)
        assert.are.equal(o.marker .. " /name\n", r.stdout)
        local d = decisions(audit)[1]
        assert.are.same({ "socks", "localhost", o.port, "allow" }, { d.kind, d.host, d.port, d.verdict })
    end)
end)

describe("egress: cordon nc and ssh", function()
    after_each(h.cleanup)

    -- $CORDON_SSH_PROXY_COMMAND with %h and %p filled in, run by the shell as ssh would.
    local function proxy_command(port)
        return ("cmd=${CORDON_SSH_PROXY_COMMAND//%%h/127.0.0.1}; cmd=${cmd//%%p/%d}; "):format(port)
    end

    it("cordon nc works inside even when cordon itself lives under the host's /tmp", function()
        -- the sandbox's /tmp is private: the binary is bound in at a fixed path instead
        local o = origin("echo")
        local dir = h.sh_ok("mktemp -d /tmp/cordon-spec-bin.XXXXXX"):gsub("%s+$", "")
        h.defer(function() os.execute("rm -rf " .. h.quote(dir)) end)
        h.sh_ok("cp " .. h.quote(h.bin) .. " " .. h.quote(dir .. "/cordon"))
        local ws = h.workspace()
        -- the copy alone has no share/cordon beside it: its policies are the checkout's
        local data = h.chomp(h.sh_ok("cd " .. h.quote(h.source_dir) .. " && pwd"))
        local r = h.sh(("cd %s && CORDON_DATADIR=%s %s run --network-allow tcp://127.0.0.1:%d "
            .. "-- /bin/bash -c %s"):format(h.quote(ws), h.quote(data), h.quote(dir .. "/cordon"), o.port,
            h.quote(proxy_command(o.port) .. "printf 'ping\\n' | eval \"$cmd\"")))
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("ping\n", r.stdout, h.describe(r))
    end)

    it("CORDON_SSH_PROXY_COMMAND relays to an allowed host TCP echo server", function()
        local o = origin("echo")
        local r, audit = run(proxy_command(o.port) .. "printf 'ping\\n' | eval \"$cmd\"",
            { "--network-allow", "tcp://127.0.0.1:" .. o.port })
        ok(r)
        assert.are.equal("ping\n", r.stdout)
        -- cordon nc is a SOCKS client: judged by the tcp:// rule
        local d = decisions(audit)[1]
        assert.are.same({ "socks", "127.0.0.1", o.port, "allow" }, { d.kind, d.host, d.port, d.verdict })
    end)

    it("cordon nc to a refused destination exits 125 naming the tcp:// rule", function()
        local o = origin("echo")
        -- an HTTP rule for the same host:port does not let a SOCKS client through
        local r = run(proxy_command(o.port) .. "printf 'ping\\n' | eval \"$cmd\"",
            { "--network-allow", allow(o) })
        assert.are.equal(125, r.code, h.describe(r))
        has(r, "cordon nc: the sandbox's network policy does not allow tcp://127.0.0.1:" .. o.port)
        has(r, "--network-allow tcp://127.0.0.1:" .. o.port .. " would allow it")
        assert.are.equal("", r.stdout)
        assert.are.equal(0, conns(o))
    end)

    local function ssh(port)
        return ("ssh -v -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
            .. "-o ConnectTimeout=20 -o \"ProxyCommand=$CORDON_SSH_PROXY_COMMAND\" -p %d spec@127.0.0.1 true"):format(port)
    end

    it("ssh with the ProxyCommand reaches the host's SSH banner", function()
        local o = origin("banner")
        local r = run(ssh(o.port), { "--network-allow", "tcp://127.0.0.1:" .. o.port })
        assert.are.equal(255, r.code, h.describe(r)) -- the fake server hangs up after its banner
        has(r, "remote software version test")
        assert.falsy(r.stderr:find("Connection refused", 1, true), h.describe(r))
        assert.are.equal(1, conns(o))
    end)

    it("ssh with the ProxyCommand to a refused port never sees a banner", function()
        local o = origin("banner")
        local r = run(ssh(o.port), { "--network-allow", "tcp://127.0.0.1:1" })
        assert.are.equal(255, r.code, h.describe(r))
        has(r, "does not allow tcp://127.0.0.1:" .. o.port)
        assert.falsy(r.stderr:find("remote software version", 1, true), h.describe(r))
        assert.are.equal(0, conns(o))
    end)
end)

describe("egress: nothing but the proxy", function()
    after_each(h.cleanup)

    it("a direct connection that ignores the proxy fails, even with an allowing rule", function()
        local o = origin("http")
        local py = ("import socket\ntry:\n    socket.create_connection(('127.0.0.1', %d), timeout=5)\n"
            .. "    print('connected')\nexcept OSError as e:\n    print(type(e).__name__)\n"):format(o.port)
        local r = run("curl -sS --noproxy '*' --max-time 10 " .. h.quote(url(o)) .. "; echo curl=$?; "
            .. h.python .. " -c " .. h.quote(py),
            { "--network-allow", allow(o), "--network-allow", "tcp://127.0.0.1:" .. o.port })
        has(r, "curl=7\n")
        has(r, "ConnectionRefusedError\n")
        assert.are.equal(0, conns(o))
    end)

    it("an empty allowlist reaches nothing: HTTP, CONNECT and SOCKS are refused", function()
        local o = origin("http")
        local r, audit = run(CURL .. "-o /dev/null -w 'http=%{http_code}\\n' " .. h.quote(url(o)) .. "; "
            .. CURL .. "-p -o /dev/null " .. h.quote(url(o)) .. "; echo connect=$?; "
            .. CURL .. "--socks5-hostname 127.0.0.1:18081 " .. h.quote(url(o)) .. "; echo socks=$?")
        assert.truthy(r.stdout:find("http=403\nconnect=56\nsocks=97\n", 1, true), h.describe(r))
        assert.are.equal(0, conns(o))
        local kinds = {}
        for _, d in ipairs(decisions(audit)) do
            kinds[#kinds + 1] = d.kind .. ":" .. d.verdict
        end
        assert.are.same({ "http:deny", "connect:deny", "socks:deny" }, kinds)
    end)

    it("cloud metadata (169.254.169.254) is refused by default, even with '*:80' allowed", function()
        local r, audit = run(CURL .. "-i http://169.254.169.254/latest/meta-data/", { "--network-allow", "*:80" })
        ok(r)
        assert.truthy(r.stdout:match("^HTTP/1%.1 403 Forbidden\r\n"), h.describe(r))
        has(r, "X-Cordon-Error: blocked-by-policy")
        local d = decisions(audit)[1]
        assert.are.same({ "169.254.169.254", 80, "deny", "169.254.169.254" }, { d.host, d.port, d.verdict, d.rule })
    end)
end)

describe("egress: the sandbox's own loopback (--allow-loopback)", function()
    after_each(h.cleanup)
    -- the script's text, not its path: the sandbox's /tmp is its own, and a checkout may be there
    local PROBE = h.python .. " -c " .. h.quote(h.read_file(FIX .. "/loopback_probe.py"))

    --- The probe's lines as { name = "ok" | errno name }.
    local function probe(flags, opts)
        local r = ok(run(PROBE, flags, opts))
        local out = {}
        for name, what in r.stdout:gmatch("(%S+) (%S+)\n") do out[name] = what end
        return out, r
    end

    it("on (the coding profile): commands serve and reach TCP and UDP on it", function()
        local out, r = probe({})
        for _, name in ipairs({ "tcp-bind", "listen-only", "udp", "unix" }) do
            assert.are.equal("ok", out[name], name .. "\n" .. h.describe(r))
        end
    end)

    it("off: every TCP bind and connect but the proxy's is refused, UDP/MPTCP sockets and Fast Open too", function()
        local out, r = probe({ "--allow-loopback=false" })
        assert.are.same({
            ["tcp-bind"] = "EACCES", ["tcp6-bind"] = "EACCES", ["listen-only"] = "EACCES",
            fastopen = "EPERM", udp = "EPERM", mptcp = "EPERM", unix = "ok",
        }, out, h.describe(r))
    end)

    it("off: HTTP, CONNECT and SOCKS through the proxy still work", function()
        local o = origin("http")
        local r = ok(run(CURL .. h.quote(url(o, "/h")) .. " && " .. CURL .. "-p " .. h.quote(url(o, "/c"))
            .. " && " .. CURL .. "--socks5-hostname 127.0.0.1:18081 " .. h.quote(url(o, "/s")),
            { "--allow-loopback=false", "--network-allow", allow(o), "--network-allow", "tcp://" .. allow(o) }))
        assert.are.equal(o.marker .. " /h\n" .. o.marker .. " /c\n" .. o.marker .. " /s\n", r.stdout)
    end)

    it("off through a profile key (network.loopback = false) as through the flag", function()
        local cfg = h.profile_dir("noloop", 'return { extends = "coding", network = { loopback = false } }')
        local out, r = probe({ "--profile", "noloop" }, { env = { XDG_CONFIG_HOME = cfg } })
        assert.are.equal("EACCES", out["tcp-bind"], h.describe(r))
    end)
end)

describe("egress: bad requests to the proxy", function()
    after_each(h.cleanup)

    it("are answered with an error and the proxy keeps serving", function()
        local o = origin("http")
        local r = ok(run(h.python .. " -c " .. h.quote(h.read_file(FIX .. "/badreq.py")) .. " " .. o.port .. " " .. o.marker,
            { "--network-allow", allow(o) }))
        local got = {}
        for name, what in r.stdout:gmatch("(%S+) (%S+)\n") do
            got[name .. (what:match("^good=") and ".good" or "")] = what
        end
        assert.are.same({
            ["origin-form"] = "400", ["origin-form.good"] = "good=yes",
            ["big-head"] = "431", ["big-head.good"] = "good=yes",
            ["cl-te"] = "400", ["cl-te.good"] = "good=yes",
            ["udp-associate"] = "reply=0x07", ["udp-associate.good"] = "good=yes",
            ["garbage"] = got.garbage == "closed" and "closed" or "reply=0x01", ["garbage.good"] = "good=yes",
        }, got, h.describe(r))
        -- the bad requests never reached the origin; the five good ones did
        assert.are.equal(5, conns(o))
    end)
end)

describe("egress: a tunnel's first moments", function()
    after_each(h.cleanup)

    it("bytes sent with the CONNECT head go through; a dead destination is a 502 or SOCKS 0x05", function()
        local o = origin("echo")
        -- a port nothing listens on: bound, then closed again
        local dead = tonumber(h.sh_ok(h.python .. " -c " .. h.quote("import socket; s=socket.socket(); "
            .. "s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")))
        local script = h.python .. " -c " .. h.quote(h.read_file(FIX .. "/tunnel_edges.py"))
        local r = ok(run(script .. " " .. o.port .. " " .. dead,
            { "--network-allow", allow(o), "--network-allow", "127.0.0.1:" .. dead,
              "--network-allow", "tcp://127.0.0.1:" .. dead }))
        assert.are.equal("early 200 echoed eof\ndead-connect 502\ndead-socks reply=0x05\n"
            .. "early 200 echoed eof\n", r.stdout, h.describe(r))
        assert.are.equal(2, conns(o))
    end)
end)

describe("egress: audit log", function()
    after_each(h.cleanup)

    it("has one JSON line per decision: kind, host, port, verdict, rule, command", function()
        local o = origin("http")
        local script = CURL .. h.quote(url(o, "/a")) .. "; " .. CURL .. "-p " .. h.quote(url(o, "/b"))
            .. "; " .. CURL .. "--socks5-hostname 127.0.0.1:18081 " .. h.quote(url(o, "/c")) .. "; true"
        -- SOCKS needs a tcp:// rule: the third decision is a deny by no rule
        local r, audit = run(script, { "--network-allow", allow(o) })
        ok(r)
        local got = {}
        for _, d in ipairs(decisions(audit)) do
            -- the command as one shell line, each word quoted where it must be
            assert.are.equal("/bin/bash -c " .. h.quote(script), d.command)
            got[#got + 1] = { d.kind, d.host, d.port, d.verdict, d.rule }
        end
        local rule = allow(o)
        assert.are.same({
            { "http", "127.0.0.1", o.port, "allow", rule },
            { "connect", "127.0.0.1", o.port, "allow", rule },
            { "socks", "127.0.0.1", o.port, "deny", "" },
        }, got)
    end)
end)

describe("egress: --unrestricted-network", function()
    after_each(h.cleanup)

    it("sets no proxy variables and reaches the host's loopback directly", function()
        local o = origin("http")
        local proxies = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
            "all_proxy", "no_proxy", "CORDON_SOCKS_PROXY", "CORDON_SSH_PROXY_COMMAND", "GIT_SSH_COMMAND" }
        local r = ok(run("env | grep -i -E '_proxy|proxy_command|GIT_SSH' ; "
            .. "curl -sS --noproxy '*' --max-time 10 " .. h.quote(url(o, "/direct")),
            { "--unrestricted-network" }, { unset = proxies }))
        assert.are.equal(o.marker .. " /direct\n", r.stdout)
    end)
end)

describe("egress: audit log of a command line that is not UTF-8", function()
    after_each(h.cleanup)

    it("writes a valid UTF-8 line for a denied destination, each bad byte as U+FFFD", function()
        -- No rule allows the port: the proxy denies without connecting anywhere.
        local script = CURL .. "-o /dev/null http://127.0.0.1:9/x; : 'bad-\xff-byte'; true"
        local r, audit = run(script)
        ok(r)
        local text = h.read_file(audit) or ""
        assert.are_not.equal("", text, "no audit line\n" .. h.describe(r))
        for line in text:gmatch("[^\n]+") do
            assert.is_truthy(utf8.len(line), "an audit line is not valid UTF-8: " .. line)
        end
        local d = decisions(audit)[1]
        assert.are.equal("deny", d.verdict)
        assert.are.equal("127.0.0.1", d.host)
        assert.are.equal(9, d.port)
        assert.are.equal("/bin/bash -c " .. h.quote((script:gsub("\xff", "\u{FFFD}"))), d.command)
    end)
end)

-- The address-rule holes an attack review found, end to end through the real proxy. The
-- "host service" is an origin on 127.0.0.1 of the HOST's namespace: the sandbox's own
-- 127.0.0.1 is its own loopback, but the proxy connects from the host side, so a request for
-- localhost:PORT through the proxy would reach it. A stand-in remote host listens on
-- 127.0.0.2 at the same port. A raw client (no client-side normalisation of '0' and friends)
-- asks for each spelling by HTTP, CONNECT and SOCKS5 and prints "KIND HOST RESULT WHO", WHO
-- being H (the host service answered), S (the stand-in answered) or -.
describe("egress: special addresses through the proxy", function()
    after_each(h.cleanup)

    local FORMS = { "localhost", "127.0.0.1", "0.0.0.0", "0", "[::ffff:127.0.0.1]", "[::ffff:0.0.0.0]" }

    local RAW = [[
import socket, sys
port, h_marker, s_marker = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def who(data):
    return "H" if h_marker.encode() in data else "S" if s_marker.encode() in data else "-"
def read_all(s):
    data = b""
    while True:
        try:
            b = s.recv(65536)
        except OSError:
            break
        if not b:
            break
        data += b
    return data
def http(host):
    s = socket.create_connection(("127.0.0.1", 18080), timeout=20)
    s.sendall(("GET http://%s:%d/raw HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n"
               % (host, port, host, port)).encode())
    data = read_all(s)
    return (data.split(b" ", 2)[1].decode() if data else "closed"), who(data)
def connect(host):
    s = socket.create_connection(("127.0.0.1", 18080), timeout=20)
    s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port, host, port)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            break
        head += b
    status = head.split(b" ", 2)[1].decode() if head else "closed"
    if status != "200":
        return status, "-"
    s.sendall(b"GET /tunnel HTTP/1.0\r\n\r\n")
    return status, who(read_all(s))
def socks(host):
    s = socket.create_connection(("127.0.0.1", 18081), timeout=20)
    s.sendall(b"\x05\x01\x00")
    s.recv(2)
    if host.startswith("["):
        addr = b"\x04" + socket.inet_pton(socket.AF_INET6, host[1:-1])
    else:
        addr = b"\x03" + bytes([len(host)]) + host.encode()
    s.sendall(b"\x05\x01\x00" + addr + port.to_bytes(2, "big"))
    reply = s.recv(10)
    code = "0x%02x" % reply[1] if len(reply) > 1 else "closed"
    if code != "0x00":
        return code, "-"
    s.sendall(b"GET /socks HTTP/1.0\r\n\r\n")
    return code, who(read_all(s))
for host in sys.argv[4:]:
    for kind, fn in (("http", http), ("connect", connect), ("socks", socks)):
        try:
            result, w = fn(host)
        except OSError as e:
            result, w = type(e).__name__, "-"
        print(kind, host, result, w, flush=True)
]]

    local STANDIN = [[
import http.server, os, sys
port, ready, marker = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        data = ("%s %s\n" % (marker, self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
srv = http.server.ThreadingHTTPServer(("127.0.0.2", port), H)
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % port)
os.rename(ready + ".tmp", ready)
srv.serve_forever()
]]

    --- The host service on 127.0.0.1 and the stand-in on 127.0.0.2, same port.
    local function services()
        local hs = origin("http")
        local dir = h.tmpdir()
        local s = { ready = dir .. "/ready", marker = "cordon-standin-" .. h.token() }
        h.spawn(h.join({ h.python, "-c", STANDIN, tostring(hs.port), s.ready, s.marker }))
        assert(h.wait_for(function() return h.read_file(s.ready) end, 10), "the stand-in did not start")
        return hs, s
    end

    --- Runs the raw client in the sandbox; returns { ["KIND HOST"] = "RESULT WHO" }, r, audit.
    local function probe(hs, s, hosts, flags, opts)
        local args = { h.python, "-c", RAW, tostring(hs.port), hs.marker, s.marker }
        for _, x in ipairs(hosts) do args[#args + 1] = x end
        local r, audit = run(h.join(args), flags, opts)
        assert.are.equal(0, r.code, h.describe(r))
        local out = {}
        for kind, host, result, who in r.stdout:gmatch("(%S+) (%S+) (%S+) (%S+)\n") do
            out[kind .. " " .. host] = result .. " " .. who
        end
        return out, r, audit
    end

    --- Every kind for every host refused: 403 (HTTP, CONNECT) or 0x02 (SOCKS).
    local function refused(hosts)
        local want = {}
        for _, host in ipairs(hosts) do
            want["http " .. host], want["connect " .. host], want["socks " .. host] = "403 -", "403 -", "0x02 -"
        end
        return want
    end

    local function wildcards(port)
        return { "--network-allow", "*:" .. port, "--network-allow", "tcp://*:" .. port }
    end

    it("outside the sandbox the host service answers on 127.0.0.1, 0.0.0.0 and [::ffff:0.0.0.0]", function()
        -- so the refusals below are the proxy's, not a service that is not there
        local hs, s = services()
        local direct = "curl -sS --noproxy '*' --max-time 10 "
        local out = h.sh_ok(("%shttp://127.0.0.1:%d/a; %shttp://0.0.0.0:%d/b; %s'http://[::ffff:0.0.0.0]:%d/c'; "
            .. "%shttp://127.0.0.2:%d/d"):format(direct, hs.port, direct, hs.port, direct, hs.port, direct, hs.port))
        assert.are.equal(("%s /a\n%s /b\n%s /c\n%s /d\n"):format(hs.marker, hs.marker, hs.marker, s.marker), out)
    end)

    it("with '*:PORT' the host service is refused however it is spelled", function()
        local hs, s = services()
        local out, r, audit = probe(hs, s, FORMS, wildcards(hs.port))
        assert.are.same(refused(FORMS), out, h.describe(r))
        assert.are.equal(0, conns(hs))
        -- audited as before: one decision per request, the unspecified one naming the address
        local reasons = {}
        for _, d in ipairs(decisions(audit)) do
            assert.are.equal("deny", d.verdict, d.host .. " " .. d.reason)
            reasons[d.host] = d.reason
        end
        assert.truthy(reasons["0.0.0.0"]:find("0.0.0.0 is the unspecified address", 1, true), reasons["0.0.0.0"])
        assert.truthy(reasons["127.0.0.1"]:find(":" .. hs.port .. "' does not reach 127.0.0.1", 1, true),
            reasons["127.0.0.1"])
        assert.truthy(reasons["localhost"]:find("does not reach localhost", 1, true), reasons["localhost"])
    end)

    it("the 403 body names the unspecified address", function()
        local hs = origin("http")
        local r = ok(run(CURL .. "-i http://0.0.0.0:" .. hs.port .. "/", wildcards(hs.port)))
        assert.truthy(r.stdout:match("^HTTP/1%.1 403 Forbidden\r\n"), h.describe(r))
        has(r, "0.0.0.0 is the unspecified address")
        assert.are.equal(0, conns(hs))
    end)

    it("with --network-allow 127.0.0.1:PORT the host service is reached, 0.0.0.0 still is not", function()
        local hs, s = services()
        local p = hs.port
        local out, r = probe(hs, s, { "127.0.0.1", "2130706433", "[::ffff:127.0.0.1]", "0.0.0.0", "0",
            "[::ffff:0.0.0.0]", "127.0.0.2" },
            { "--network-allow", "127.0.0.1:" .. p, "--network-allow", "tcp://127.0.0.1:" .. p,
              "--network-allow", "0.0.0.0:" .. p, "--network-allow", "tcp://0.0.0.0:" .. p })
        local want = refused({ "0.0.0.0", "0", "[::ffff:0.0.0.0]", "127.0.0.2" })
        for _, host in ipairs({ "127.0.0.1", "2130706433", "[::ffff:127.0.0.1]" }) do
            want["http " .. host], want["connect " .. host], want["socks " .. host] = "200 H", "200 H", "0x00 H"
        end
        assert.are.same(want, out, h.describe(r))
    end)

    it("with --network-deny 127.0.0.0/8 no spelling reaches it, whatever is allowed", function()
        local hs, s = services()
        local p = hs.port
        local flags = wildcards(p)
        for _, f in ipairs({ "--network-allow", "127.0.0.1:" .. p, "--network-allow", "tcp://127.0.0.1:" .. p,
                             "--network-allow", "localhost:" .. p, "--network-allow", "tcp://localhost:" .. p,
                             "--network-allow", "127.0.0.2:" .. p, "--network-deny", "127.0.0.0/8" }) do
            flags[#flags + 1] = f
        end
        local hosts = { "localhost", "127.0.0.1", "0.0.0.0", "0", "[::ffff:127.0.0.1]", "[::ffff:0.0.0.0]",
            "127.0.0.2", "0x7f.1" }
        local out, r, audit = probe(hs, s, hosts, flags)
        assert.are.same(refused(hosts), out, h.describe(r))
        assert.are.equal(0, conns(hs))
        -- localhost passed as a name, then its address was decided again and denied by the range
        local seen = false
        for _, d in ipairs(decisions(audit)) do
            if d.host == "127.0.0.1" and d.rule == "127.0.0.0/8" then seen = true end
        end
        assert.is_true(seen)
    end)

    it("network.wildcard_special lets '*:PORT' reach loopback; 0.0.0.0 is refused even when a layer allows it",
        function()
        local hs, s = services()
        local cfg = h.profile_dir("wide", 'return { extends = "coding", network = { wildcard_special = true } }')
        -- a user layer that allows the unspecified address outright: the proxy still refuses it
        h.write_file(cfg .. "/cordon/policy.lua", [[
return { network = function(input, next)
    if input.host == "0" or input.host == "0.0.0.0" or input.host == "::ffff:0.0.0.0" then
        return { verdict = "allow", rule = "spec", reason = "a layer that allows everything" }
    end
    return next(input)
end }
]])
        local flags = wildcards(hs.port)
        flags[#flags + 1] = "--profile"
        flags[#flags + 1] = "wide"
        local out, r, audit = probe(hs, s, { "127.0.0.1", "127.0.0.2", "0.0.0.0", "0", "[::ffff:0.0.0.0]" }, flags,
            { env = { XDG_CONFIG_HOME = cfg } })
        local want = refused({ "0.0.0.0", "0", "[::ffff:0.0.0.0]" })
        want["http 127.0.0.1"], want["connect 127.0.0.1"], want["socks 127.0.0.1"] = "200 H", "200 H", "0x00 H"
        want["http 127.0.0.2"], want["connect 127.0.0.2"], want["socks 127.0.0.2"] = "200 S", "200 S", "0x00 S"
        assert.are.same(want, out, h.describe(r))
        -- the layer's allow and the proxy's refusal are both in the audit log
        local refusals = 0
        for _, d in ipairs(decisions(audit)) do
            if d.verdict == "deny" then
                assert.truthy(d.reason:find("the unspecified address, which reaches the host's own services; "
                    .. "the proxy never connects to it", 1, true), d.reason)
                refusals = refusals + 1
            end
        end
        assert.are.equal(9, refusals)
    end)
end)

-- After an error reply the proxy shuts its write side and drains what the client still sends
-- (bounded) before it closes: a close with unread bytes would send a reset, which can destroy
-- the reply before the client has read it.
describe("egress: an error reply arrives whole", function()
    after_each(h.cleanup)

    -- Sends a 200 KB header line from a thread while reading the reply to its end of file.
    local LINGER = [[
import socket, threading
s = socket.create_connection(("127.0.0.1", 18080), timeout=20)
def feed():
    try:
        s.sendall(b"GET http://127.0.0.2:9/ HTTP/1.1\r\nHost: 127.0.0.2:9\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n")
    except OSError:
        pass
t = threading.Thread(target=feed)
t.start()
got, err = b"", ""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
except OSError as e:
    err = " " + e.__class__.__name__
t.join()
head, _, body = got.partition(b"\r\n\r\n")
cl = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
print(head.split(b"\r\n", 1)[0].decode() + (" whole" if cl and len(body) == cl[0] else " cut") + err)
]]

    it("a 200 KB header line gets its 431 intact, read by a client that keeps sending", function()
        for _ = 1, 3 do
            local r = ok(run(h.python .. " -c " .. h.quote(LINGER)))
            assert.are.equal("HTTP/1.1 431 Request Header Fields Too Large whole\n", r.stdout, h.describe(r))
        end
    end)
end)

-- The proxy's record of what it refused is the evidence: one cordon line per refused
-- destination, whatever the client printed (wget's "Proxy tunneling failed: Forbidden" and
-- apt's "403  Forbidden [IP: 127.0.0.1 18080]" have no form the refusal patterns know).
describe("egress: a line for every refused destination", function()
    after_each(h.cleanup)

    local function blocked_lines(r)
        local got = {}
        for dest, flag in r.stderr:gmatch("cordon: the sandbox's network policy blocked (%S+) %((%-%-network%-allow %S+) would allow it%)\n") do
            got[#got + 1] = dest .. " " .. flag
        end
        table.sort(got)
        return got
    end

    it("wget over https and http, twice to one destination: one line per destination", function()
        if os.execute("command -v wget >/dev/null") ~= true then h.skip("wget is not installed") return end
        local r = run("wget -q -O- https://127.0.0.2:8443/a; wget -q -O- https://127.0.0.2:8443/b; "
            .. "wget -q -O- http://127.0.0.3:8080/")
        assert.are.same({ "127.0.0.2:8443 --network-allow 127.0.0.2:8443",
                          "127.0.0.3:8080 --network-allow 127.0.0.3:8080" }, blocked_lines(r), h.describe(r))
    end)

    it("apt-get update of a repository no rule allows (apt takes the proxy from http_proxy)", function()
        if os.execute("command -v apt-get >/dev/null") ~= true then h.skip("apt-get is not installed") return end
        local r = run([[d=$(mktemp -d); mkdir -p $d/lists/partial $d/cache/archives/partial
echo "deb http://127.0.0.2:8089/debian stable main" > $d/s.list
apt-get update -o Dir::Etc::SourceList=$d/s.list -o Dir::Etc::SourceParts=/dev/null \
  -o Dir::State::Lists=$d/lists -o Dir::Cache=$d/cache -o APT::Sandbox::User=root \
  -o Debug::NoLocking=1 -o Acquire::Retries=0]])
        assert.are_not.equal(0, r.code)
        assert.are.same({ "127.0.0.2:8089 --network-allow 127.0.0.2:8089" }, blocked_lines(r), h.describe(r))
    end)
end)
