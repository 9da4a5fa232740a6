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

local function ok(r)
    assert.are.equal(0, r.code, h.describe(r))
    return r
end

local function has(r, text)
    assert.truthy((r.stdout .. r.stderr):find(text, 1, true),
        "expected output containing '" .. text .. "'\n" .. h.describe(r))
end

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
            .. "--network-allow 127.0.0.1:%d -- /bin/bash -c %s"):format(h.quote(ws), h.quote(data),
            h.quote(dir .. "/cordon"), o.port, o.port,
            h.quote(proxy_command(o.port) .. "printf 'ping\\n' | eval \"$cmd\"")))
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("ping\n", r.stdout, h.describe(r))
    end)

    it("CORDON_SSH_PROXY_COMMAND relays to an allowed host TCP echo server", function()
        local o = origin("echo")
        local r = ok(run(proxy_command(o.port) .. "printf 'ping\\n' | eval \"$cmd\"",
            { "--network-allow", "tcp://127.0.0.1:" .. o.port, "--network-allow", allow(o) }))
        assert.are.equal("ping\n", r.stdout)
    end)

    it("cordon nc to a refused destination exits 1 with a message", function()
        local o = origin("echo")
        local r = run(proxy_command(o.port) .. "printf 'ping\\n' | eval \"$cmd\"",
            { "--network-allow", "127.0.0.1:1" })
        assert.are.equal(1, r.code, h.describe(r))
        has(r, "cordon nc: the sandbox proxy refused 127.0.0.1:" .. o.port)
        has(r, "403")
        assert.are.equal("", r.stdout)
        assert.are.equal(0, conns(o))
    end)

    local function ssh(port)
        return ("ssh -v -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
            .. "-o ConnectTimeout=20 -o \"ProxyCommand=$CORDON_SSH_PROXY_COMMAND\" -p %d spec@127.0.0.1 true"):format(port)
    end

    it("ssh with the ProxyCommand reaches the host's SSH banner", function()
        local o = origin("banner")
        local r = run(ssh(o.port), { "--network-allow", allow(o) })
        assert.are.equal(255, r.code, h.describe(r)) -- the fake server hangs up after its banner
        has(r, "remote software version test")
        assert.falsy(r.stderr:find("Connection refused", 1, true), h.describe(r))
        assert.are.equal(1, conns(o))
    end)

    it("ssh with the ProxyCommand to a refused port never sees a banner", function()
        local o = origin("banner")
        local r = run(ssh(o.port), { "--network-allow", "127.0.0.1:1" })
        assert.are.equal(255, r.code, h.describe(r))
        has(r, "the sandbox proxy refused 127.0.0.1:" .. o.port)
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
