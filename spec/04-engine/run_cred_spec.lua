-- spec/04-engine/run_cred_spec.lua — declared credentials (`cordon run --credential
-- NAME=HOST`): the command sees only a placeholder, the proxy puts the value back in requests to
-- the credential's host and refuses the placeholder anywhere else. Origins the spec starts on
-- the host's 127.0.0.2 (the credential's) and 127.0.0.3 (allowed, no credential)
-- (spec/fixtures/engine/echo_origin.py) record every request they get: curl, Python's urllib and
-- git (http://, a Basic challenge) reach 127.0.0.2 with the value; the environment,
-- /proc/self/environ, init's /proc/1/environ and a ptrace of init show no value; 127.0.0.3 gets
-- nothing; the audit log names the credential and the host, never the value; bad flags are
-- one line and exit 125. Also: keep-alive to both hosts on one connection, a placeholder split
-- across writes, a gzip body, a 3 MB body, a malformed head, the profile key (file: and cmd:),
-- `policy explain`, a trusted project's profile declaring credentials (refused), and a
-- session's execs (root). Drives the built binary ($CORDON_BIN); as
-- root and as uid 65534; loopback only; needs curl, git, python3.
local h = require("spec.helpers")

local NOBODY = 65534
local SECRET = "cordon_spec_value_" .. h.token() .. h.token()
local CURL = "curl -sS --noproxy '' --max-time 20 "

--- Starts echo_origin.py on addr; returns { port, log }.
local function origin(addr)
    local dir = h.tmpdir()
    h.sh_ok("chmod 755 " .. h.quote(dir))
    local ready, log = dir .. "/ready", dir .. "/log"
    h.spawn(h.join({ h.python, h.fixtures .. "/engine/echo_origin.py", addr, ready, log }))
    local port = h.wait_for(function()
        local s = h.read_file(ready)
        return s and tonumber(s:match("^(%d+)"))
    end, 10)
    assert(port, "origin on " .. addr .. " did not start")
    return { port = port, log = log, addr = addr }
end

local function seen(o) return h.read_file(o.log) or "" end

--- `cordon run --credential TOKEN=127.0.0.2:PORT` of script as uid (nil: root), both origins
-- allowed; returns r, the audit log's text.
local function run(uid, a, b, script, extra, more_env)
    local audit_dir = h.tmpdir()
    h.sh_ok("chmod 777 " .. h.quote(audit_dir))
    local audit = audit_dir .. "/audit.jsonl"
    local flags = { "--credential", "TOKEN=" .. a.addr .. ":" .. a.port,
        "--network-allow", a.addr .. ":" .. a.port, "--network-allow", b.addr .. ":" .. b.port }
    for _, f in ipairs(extra or {}) do flags[#flags + 1] = f end
    local env = { TOKEN = SECRET, CORDON_AUDIT_LOG = audit }
    for k, v in pairs(more_env or {}) do env[k] = v end
    local r = h.run_sh(script, {
        flags = flags, uid = uid, workspace = h.workspace(nil, uid),
        home = uid and h.secret_home(uid) or nil,
        env = env,
    })
    return r, h.read_file(audit) or ""
end

for _, uid in ipairs({ false, NOBODY }) do
    local who = uid and ("uid " .. uid) or "root"
    uid = uid or nil
    describe("cordon run --credential (" .. who .. ")", function()
        lazy_setup(function()
            assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        end)
        after_each(h.cleanup)

        it("the origin sees the value from curl, urllib and git; the command only the placeholder", function()
            local a, b = origin("127.0.0.2"), origin("127.0.0.3")
            local base = ("http://%s:%d"):format(a.addr, a.port)
            local script = table.concat({
                'case "$TOKEN" in cordon_TOKEN_*) echo placeholder-ok;; esac',
                'printf %s "$TOKEN" > /tmp/ph',
                CURL .. '-H "Authorization: Bearer $TOKEN" ' .. base .. '/curl >/dev/null',
                CURL .. '-u "me:$TOKEN" ' .. base .. '/basic >/dev/null',
                h.python .. ' -c "import os,urllib.request as u; '
                    .. 'r=u.Request(\'' .. base .. '/py\', data=(\'{\\"k\\": \\"\'+os.environ[\'TOKEN\']+\'\\"}\').encode(), '
                    .. 'headers={\'X-Key\': os.environ[\'TOKEN\']}); '
                    .. 'u.build_opener(u.ProxyHandler({\'http\': \'http://127.0.0.1:18080\'})).open(r).read()"',
                'NO_PROXY= no_proxy= git -c credential.helper= ls-remote "http://me:$TOKEN@'
                    .. a.addr .. ':' .. a.port .. '/git/r.git" >/dev/null 2>&1; true',
                -- what the command can read of itself and of init (the value written in two
                -- halves, so that the command line in the audit log does not hold it)
                'S1=' .. SECRET:sub(1, 10) .. '; S2=' .. SECRET:sub(11),
                'grep -c "$S1$S2" /proc/self/environ || true',
                'env | grep -c "$S1$S2" || true',
                'cat /proc/1/environ >/dev/null 2>&1 && echo init-environ-read || echo init-environ-refused',
                -- no process the command can see holds the value in its environment or arguments
                -- (the pattern in a file: a grep given the value in its arguments would hold it)
                'printf "%s%s\\n" "$S1" "$S2" > /tmp/pat',
                'for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; done | grep -c -f /tmp/pat || true',
                h.python .. ' -c "import ctypes; l=ctypes.CDLL(None, use_errno=True); '
                    .. 'print(\'ptrace-init\', l.ptrace(16, 1, 0, 0), ctypes.get_errno() != 0)"',
                'echo done',
            }, "\n")
            local r, audit = run(uid, a, b, script)
            h.ok(r)
            assert.truthy(r.stdout:find("placeholder-ok", 1, true), h.describe(r))
            assert.falsy(r.stdout:find(SECRET, 1, true), h.describe(r))
            assert.truthy(r.stdout:find("0\n0\ninit-environ-refused\n0\nptrace-init -1 True\ndone", 1, true), h.describe(r))
            local s = seen(a)
            assert.truthy(s:find("GET /curl\n", 1, true) and s:find("Authorization: Bearer " .. SECRET, 1, true), s)
            -- base64("me:" .. SECRET) compared decoded by the origin's record: look for the header
            local basic = h.chomp(h.sh_ok("printf %s " .. h.quote("me:" .. SECRET) .. " | base64 -w0"))
            assert.truthy(s:find("GET /basic\n", 1, true) and s:find("Basic " .. basic, 1, true), s)
            assert.truthy(s:find("X-Key: " .. SECRET, 1, true) and s:find('{"k": "' .. SECRET .. '"}', 1, true), s)
            assert.truthy(s:find("/git/r.git/info/refs", 1, true) and select(2, s:gsub("Basic " .. basic, "")) >= 2, s)
            assert.falsy(s:find("cordon_TOKEN_", 1, true), s)
            assert.truthy(audit:find('"kind":"credential"', 1, true) and audit:find('"rule":"TOKEN"', 1, true)
                and audit:find('"host":"127.0.0.2"', 1, true), audit)
            assert.falsy(audit:find(SECRET, 1, true), audit)
        end)

        it("the placeholder sent to another allowed host is refused and that host sees nothing", function()
            local a, b = origin("127.0.0.2"), origin("127.0.0.3")
            local script = CURL .. '-i -H "X-Key: $TOKEN" http://' .. b.addr .. ':' .. b.port .. '/leak; echo; '
                .. CURL .. '-o /dev/null -w "%{http_code}\\n" http://' .. b.addr .. ':' .. b.port .. '/plain'
            local r, audit = run(uid, a, b, script)
            h.ok(r)
            assert.truthy(r.stdout:find("403 Forbidden", 1, true), h.describe(r))
            assert.truthy(r.stdout:find("the placeholder of credential TOKEN went to 127.0.0.3:" .. b.port, 1, true),
                h.describe(r))
            assert.truthy(r.stdout:find("\n200\n", 1, true), h.describe(r))
            local s = seen(b)
            assert.falsy(s:find("/leak", 1, true), s)
            assert.falsy(s:find("cordon_TOKEN_", 1, true) or s:find(SECRET, 1, true), s)
            assert.truthy(audit:find('"verdict":"deny"', 1, true) and audit:find("credential TOKEN", 1, true), audit)
            assert.falsy(audit:find(SECRET, 1, true), audit)
        end)

        it("the placeholder through a CONNECT or SOCKS tunnel or a redirected connection to another host is refused", function()
            local a, b = origin("127.0.0.2"), origin("127.0.0.3")
            local url = "http://" .. b.addr .. ":" .. b.port
            local key = ' -H "X-Key: $TOKEN" '
            local paths = {
                connect = CURL .. '-f -p -x "$http_proxy" ',
                socks = CURL .. '-f -x "$CORDON_SOCKS_PROXY" ',
                transparent = "curl -sS -f --noproxy '*' --max-time 20 ",
            }
            local lines = {}
            for _, via in ipairs({ "connect", "socks", "transparent" }) do
                lines[#lines + 1] = paths[via] .. '-o /dev/null -w "' .. via .. '-leak=%{http_code} "' .. key
                    .. url .. "/leak-" .. via .. '; echo "rc=$?"'
                lines[#lines + 1] = paths[via] .. '-o /dev/null -w "' .. via .. '-plain=%{http_code} " '
                    .. url .. "/plain-" .. via .. '; echo "rc=$?"'
            end
            local r, audit = run(uid, a, b, table.concat(lines, "\n"),
                { "--network-allow", "tcp://" .. b.addr .. ":" .. b.port })
            -- a placeholder begun as an HTTP request before the server spoke: 403 and the line;
            -- curl -f fails
            for _, via in ipairs({ "connect", "socks", "transparent" }) do
                assert.truthy(r.stdout:find(via .. "-leak=403 rc=22\n", 1, true), h.describe(r))
                assert.truthy(r.stdout:find(via .. "-plain=200 rc=0\n", 1, true), h.describe(r))
            end
            local line = "the placeholder of credential TOKEN went to 127.0.0.3:" .. b.port
            local _, n = r.stderr:gsub(line:gsub("%p", "%%%0"), "")
            assert.equal(3, n, h.describe(r))
            local s = seen(b)
            assert.falsy(s:find("/leak", 1, true), s)
            assert.falsy(s:find("cordon_TOKEN_", 1, true) or s:find(SECRET, 1, true), s)
            for _, via in ipairs({ "connect", "socks", "transparent" }) do
                assert.truthy(s:find("GET /plain-" .. via .. "\n", 1, true), s)
            end
            local _, denials = audit:gsub('"kind":"credential","host":"127.0.0.3","port":' .. b.port
                .. ',"verdict":"deny"', "")
            assert.equal(3, denials, audit)
            assert.truthy(audit:find(line, 1, true), audit)
            assert.falsy(audit:find(SECRET, 1, true), audit)
        end)

        it("plain HTTP in a CONNECT to a credential's host: its own placeholder passes, another's is refused", function()
            local a, b = origin("127.0.0.2"), origin("127.0.0.3")
            local url = "http://" .. a.addr .. ":" .. a.port
            local via = CURL .. '-f -p -x "$http_proxy" -o /dev/null -w "%{http_code} " '
            local script = via .. '-H "X-Other: $OTHER" ' .. url .. '/other-leak; echo "rc=$?"\n'
                .. via .. '-H "X-Own: $TOKEN" ' .. url .. '/own; echo "rc=$?"'
            local r, audit = run(uid, a, b, script, { "--credential", "OTHER=" .. b.addr .. ":" .. b.port },
                { OTHER = "other_value_" .. h.token() })
            assert.truthy(r.stdout:find("403 rc=22\n200 rc=0\n", 1, true), h.describe(r))
            assert.truthy(r.stderr:find("the placeholder of credential OTHER went to 127.0.0.2:" .. a.port, 1, true),
                h.describe(r))
            local s = seen(a)
            assert.falsy(s:find("/other-leak", 1, true) or s:find("cordon_OTHER_", 1, true), s)
            -- a tunnel, not a request the rewriter read: its own placeholder passes as it is
            assert.truthy(s:find("GET /own\n", 1, true) and s:find("X-Own: cordon_TOKEN_", 1, true), s)
            assert.truthy(audit:find("credential OTHER went to", 1, true), audit)
        end)

        it("a placeholder split across writes in a tunnel of another protocol closes it; nothing reaches the host", function()
            local a, b = origin("127.0.0.2"), origin("127.0.0.3")
            -- not HTTP: the tunnel is closed (no 403), what came before the placeholder went
            local code = table.concat({
                "import os, socket, time",
                "t = os.environ['TOKEN'].encode()",
                "s = socket.create_connection(('127.0.0.1', 18080))",
                "s.sendall(b'CONNECT " .. b.addr .. ":" .. b.port .. " HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')",
                "print(s.recv(100).split(b' ')[1].decode())",
                "s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)",
                "s.sendall(b'\\x00binary ' + t[:5]); time.sleep(0.2); s.sendall(t[5:] + b' more')",
                "try:",
                "    print('read', s.recv(100))",
                "except ConnectionResetError:",
                "    print('reset')",
            }, "\n")
            local r, audit = run(uid, a, b, h.python .. " -c " .. h.quote(code))
            h.ok(r)
            assert.truthy(r.stdout:find("200\n", 1, true), h.describe(r))
            assert.truthy(r.stdout:find("reset\n", 1, true) or r.stdout:find("read b''\n", 1, true), h.describe(r))
            assert.truthy(r.stderr:find("the placeholder of credential TOKEN went to 127.0.0.3:" .. b.port, 1, true),
                h.describe(r))
            assert.equal("", seen(b))
            assert.truthy(audit:find('"verdict":"deny"', 1, true), audit)
        end)

        it("keep-alive to two hosts on one connection, a placeholder split across writes, a gzip body", function()
            local a, b = origin("127.0.0.2"), origin("127.0.0.3")
            -- one client connection to the proxy: a request to each host, then one to a with the
            -- placeholder written in pieces, then a gzip body (passed as it is)
            local code = table.concat({
                "import os, socket",
                "t = os.environ['TOKEN']",
                "s = socket.create_connection(('127.0.0.1', 18080))",
                "s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)",
                "f = s.makefile('rb')",
                "def resp():",
                "    line = f.readline(); n = 0",
                "    while True:",
                "        h = f.readline()",
                "        if h in (b'\\r\\n', b''): break",
                "        if h.lower().startswith(b'content-length:'): n = int(h.split(b':')[1])",
                "    body = f.read(n)",
                "    print(line.split()[1].decode(), body.count(b'/one'), body.count(b'/two'))",
                "A = 'http://" .. a.addr .. ":" .. a.port .. "'",
                "B = 'http://" .. b.addr .. ":" .. b.port .. "'",
                "s.sendall(('GET %s/one HTTP/1.1\\r\\nHost: x\\r\\nX-K: %s\\r\\n\\r\\n' % (A, t)).encode()); resp()",
                "s.sendall(('GET %s/two HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' % B).encode()); resp()",
                "req = ('POST %s/three HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: %d\\r\\n\\r\\nk=%s' % (A, len(t) + 2, t)).encode()",
                "for i in range(0, len(req), 7): s.sendall(req[i:i + 7])",
                "resp()",
                "import gzip",
                "g = gzip.compress(('k=' + t).encode())",
                "s.sendall(('POST %s/four HTTP/1.1\\r\\nHost: x\\r\\nContent-Encoding: gzip\\r\\nContent-Length: %d\\r\\n\\r\\n' % (A, len(g))).encode() + g); resp()",
            }, "\n")
            local r = run(uid, a, b, h.python .. " -c " .. h.quote(code))
            h.ok(r)
            assert.truthy(r.stdout:find("200 1 0\n200 0 1\n200 0 0\n200 0 0\n", 1, true), h.describe(r))
            local sa, sb = seen(a), seen(b)
            assert.truthy(sa:find("X-K: " .. SECRET, 1, true), sa)
            assert.truthy(sa:find("k=" .. SECRET, 1, true), sa)
            assert.truthy(sb:find("GET /two", 1, true), sb)
            assert.falsy(sb:find("cordon_TOKEN_", 1, true) or sb:find(SECRET, 1, true), sb)
            -- the gzip body reached a as it was sent: the placeholder inside is not the value
            assert.truthy(sa:find("POST /four", 1, true), sa)
        end)

        it("a 3 MB body is streamed with its value; a malformed request is refused and the proxy goes on", function()
            local a, b = origin("127.0.0.2"), origin("127.0.0.3")
            local base = ("http://%s:%d"):format(a.addr, a.port)
            local script = table.concat({
                -- 3 MB of text, the placeholder at the start and the end
                'f=$(mktemp); { printf %s "$TOKEN"; head -c 3000000 /dev/zero | tr "\\0" x; printf %s "$TOKEN"; } > "$f"',
                CURL .. '-o /dev/null -w "%{http_code}\\n" --data-binary @"$f" ' .. base .. '/big',
                'printf "GARBAGE\\r\\n\\r\\n" | ' .. h.python .. ' -c "import socket,sys; s=socket.create_connection((\'127.0.0.1\', 18080)); '
                    .. 's.sendall(sys.stdin.buffer.read()); print(s.recv(100).split(b\' \')[1].decode())"',
                CURL .. '-o /dev/null -w "%{http_code}\\n" ' .. base .. '/after',
            }, "\n")
            local r = run(uid, a, b, script)
            h.ok(r)
            assert.truthy(r.stdout:find("^200\n403\n200\n"), h.describe(r))
            local sa = seen(a)
            local first = sa:find(SECRET .. "xxxxxxxx", 1, true)
            local last = sa:find("xxxxxxxx" .. SECRET .. "\n", 1, true)
            assert.truthy(first and last, "the big body's ends are not the value")
            assert.are.equal(3000000 + 2 * #SECRET, last + 8 + #SECRET - first)
            assert.truthy(sa:find("GET /after", 1, true), sa)
        end)

        it("the profile key: from a file and from a command, and a flag replaces the profile's entry", function()
            local a, b = origin("127.0.0.2"), origin("127.0.0.3")
            local home = uid and h.secret_home(uid) or h.secret_home()
            local dir = h.tmpdir()
            h.sh_ok("chmod 755 " .. h.quote(dir))
            local file_value = "file_value_" .. h.token() .. h.token()
            h.sh_ok(("printf '%%s\\n' %s > %s/tok && chmod 644 %s/tok"):format(file_value, h.quote(dir), h.quote(dir)))
            local profile = ([[return { extends = "coding", credentials = {
                FT = { hosts = { "%s:%d" }, from = "file:%s/tok" },
                CT = { hosts = { "%s" }, from = "cmd:echo cmd_value_0123456789abcdef" },
                TOKEN = { hosts = { "%s" }, from = "cmd:echo not_this_one_0123456789" } } }]]):format(
                a.addr, a.port, dir, a.addr, b.addr)
            h.sh_ok("mkdir -p " .. h.quote(home .. "/.config/cordon/profiles"))
            h.write_file(home .. "/.config/cordon/profiles/credspec.lua", profile)
            if uid then h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(home .. "/.config"))) end
            local audit_dir = h.tmpdir()
            h.sh_ok("chmod 777 " .. h.quote(audit_dir))
            local r = h.run_sh(CURL .. '-H "X-F: $FT" -H "X-C: $CT" -H "X-T: $TOKEN" http://' .. a.addr .. ':' .. a.port .. '/prof >/dev/null; '
                .. 'case "$FT$CT" in *file_value*|*cmd_value*) echo leaked;; esac', {
                flags = { "--json", "--profile", "credspec", "--credential", "TOKEN=" .. a.addr .. ":" .. a.port,
                    "--network-allow", a.addr .. ":" .. a.port },
                uid = uid, workspace = h.workspace(nil, uid), home = home,
                env = { TOKEN = SECRET, CORDON_AUDIT_LOG = audit_dir .. "/audit.jsonl" },
            })
            h.ok(r)
            assert.falsy(r.stdout:find("leaked", 1, true), h.describe(r))
            local sa = seen(a)
            assert.truthy(sa:find("X-F: " .. file_value, 1, true), sa)
            assert.truthy(sa:find("X-C: cmd_value_0123456789abcdef", 1, true), sa)
            assert.truthy(sa:find("X-T: " .. SECRET, 1, true), sa)
            -- the run's --json names each credential and its hosts, the flag's TOKEN replacing the
            -- profile's, and holds no value
            local result = require("cjson").decode(r.stdout:match("([^\n]+)\n?$"))
            local got = {}
            for _, c in ipairs(result.credentials) do got[c.name] = c.hosts end
            assert.are.same({ FT = { a.addr .. ":" .. a.port }, CT = { a.addr }, TOKEN = { a.addr .. ":" .. a.port } }, got)
            for _, v in ipairs({ SECRET, file_value, "cmd_value_", "not_this_one" }) do
                assert.falsy(r.stdout:find(v, 1, true), v)
            end
        end)

        it("cordon policy explain says which credentials there are and where each may go", function()
            local o = { uid = uid, env = { TOKEN = SECRET }, workspace = h.workspace(nil, uid),
                home = uid and h.secret_home(uid) or nil }
            local r = h.ok(h.cordon({ "policy", "explain", "--profile", "coding",
                "--credential", "TOKEN=127.0.0.2:8080,*.example.com" }, o))
            assert.truthy(r.stdout:find("credential TOKEN  from $TOKEN  to 127.0.0.2:8080,*.example.com\n", 1, true),
                h.describe(r))
            r = h.cordon({ "policy", "explain", "--kind", "http", "--allow", "api.example.com",
                "--credential", "TOKEN=127.0.0.2:8080,*.example.com", "api.example.com", "80" }, o)
            assert.truthy(r.stdout:find("credential TOKEN  its value is put in for its placeholder here", 1, true),
                h.describe(r))
            r = h.cordon({ "policy", "explain", "--json", "--kind", "http", "--allow", "other.test",
                "--credential", "TOKEN=127.0.0.2:8080", "other.test", "80" }, o)
            local v = require("cjson").decode(r.stdout)
            assert.are.same({ { name = "TOKEN", from = "$TOKEN", hosts = { "127.0.0.2:8080" }, here = "refused" } },
                v.credentials)
            assert.falsy(r.stdout:find(SECRET, 1, true))
        end)

        it("a trusted project's profile may not declare credentials: one line naming it, 125", function()
            local ws = h.workspace(nil, uid)
            local home = uid and h.secret_home(uid) or h.secret_home()
            h.sh_ok("mkdir -p " .. h.quote(ws .. "/.cordon/profiles"))
            h.write_file(ws .. "/.cordon/profiles/proj.lua", 'return { extends = "coding",\n'
                .. '  credentials = { TOKEN = { hosts = { "127.0.0.9" }, from = "file:/etc/hostname" } } }\n')
            if uid then h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(ws .. "/.cordon"))) end
            local o = { uid = uid, workspace = ws, home = home, cwd = ws, env = { TOKEN = SECRET } }
            h.ok(h.cordon({ "trust", ws }, o))
            local r = h.run_sh("echo ran", { flags = { "--profile", "proj" }, uid = uid, workspace = ws,
                home = home, env = { TOKEN = SECRET } })
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find("/.cordon/profiles/proj.lua:2: key 'credentials': a project's profile "
                .. "may not declare credentials", 1, true), h.describe(r))
            assert.falsy(r.stdout:find("ran", 1, true), h.describe(r))
        end)

        it("a trusted project's policy may not add credentials through its profile hook", function()
            local ws = h.workspace(nil, uid)
            local home = uid and h.secret_home(uid) or h.secret_home()
            local function policy(body)
                h.sh_ok("mkdir -p " .. h.quote(ws .. "/.cordon"))
                h.write_file(ws .. "/.cordon/policy.lua", body)
                if uid then h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(ws .. "/.cordon"))) end
                h.ok(h.cordon({ "trust", ws }, { uid = uid, workspace = ws, home = home, cwd = ws }))
            end
            local function run_here(flags)
                return h.run_sh("echo ran", { flags = flags, uid = uid, workspace = ws, home = home,
                    env = { TOKEN = SECRET } })
            end
            -- added in place to the lower layers' profile
            policy("return { profile = function(input, next)\n  local p = next(input)\n"
                .. "  p.credentials = p.credentials or {}\n"
                .. "  p.credentials.TOKEN = { hosts = { '127.0.0.9' } }\n  return p\nend }\n")
            local r = run_here({})
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find("/.cordon/policy.lua: hook 'profile': a project's policy may not add "
                .. "or change credentials", 1, true), h.describe(r))
            assert.falsy(r.stdout:find("ran", 1, true), h.describe(r))
            -- the user's profile's credential widened by the project to another host: refused too
            h.sh_ok("mkdir -p " .. h.quote(home .. "/.config/cordon/profiles"))
            h.write_file(home .. "/.config/cordon/profiles/mine.lua", 'return { extends = "coding",\n'
                .. '  credentials = { TOKEN = { hosts = { "127.0.0.2" } } } }\n')
            if uid then h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(home .. "/.config"))) end
            policy("return { profile = function(input, next)\n  local p = next(input)\n"
                .. "  for _, c in pairs(p.credentials or {}) do c.hosts = { '127.0.0.9' } end\n"
                .. "  return p\nend }\n")
            r = run_here({ "--profile", "mine" })
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find("may not add or change credentials", 1, true), h.describe(r))
            -- a project's hook that leaves them alone runs, with the user's credential
            policy("return { profile = function(input, next)\n  local p = next(input)\n"
                .. "  p.env = p.env or {}\n  return p\nend }\n")
            r = h.ok(run_here({ "--credential", "TOKEN=127.0.0.2" }))
            assert.truthy(r.stdout:find("ran", 1, true), h.describe(r))
        end)

        it("a bad --credential or a missing variable is one line and exit 125", function()
            local a, b = origin("127.0.0.2"), origin("127.0.0.3")
            local r = run(uid, a, b, "echo ran", { "--credential", "NOEQUALS" })
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find("--credential 'NOEQUALS': write NAME=HOST", 1, true), h.describe(r))
            assert.falsy(r.stdout:find("ran", 1, true), h.describe(r))
            r = run(uid, a, b, "echo ran", { "--credential", "CORDON_SPEC_UNSET_VAR=127.0.0.2" })
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find("the variable CORDON_SPEC_UNSET_VAR is not set", 1, true), h.describe(r))
        end)
    end)
end

describe("cordon session start --credential", function()
    after_each(h.cleanup)

    it("each exec of the session sees the placeholder; the origin the value; other hosts nothing", function()
        local a, b = origin("127.0.0.2"), origin("127.0.0.3")
        local s = h.session_start("cred-" .. h.token(), {
            env = { TOKEN = SECRET },
            flags = { "--credential", "TOKEN=" .. a.addr .. ":" .. a.port,
                "--network-allow", a.addr .. ":" .. a.port, "--network-allow", b.addr .. ":" .. b.port },
        })
        local function exec(script)
            return h.cordon({ "exec", s.name, "--", script }, { cwd = s.cwd, env = s.env })
        end
        local r = exec(CURL .. '-o /dev/null -H "X-K: $TOKEN" http://' .. a.addr .. ':' .. a.port .. '/sess; '
            .. 'printf "%s\\n" "$TOKEN" | grep -c "^cordon_TOKEN_"')
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("1", 1, true), h.describe(r))
        assert.truthy(seen(a):find("X-K: " .. SECRET, 1, true), seen(a))
        r = exec(CURL .. '-i -H "X-K: $TOKEN" http://' .. b.addr .. ':' .. b.port .. '/leak')
        assert.truthy(r.stdout:find("403", 1, true), h.describe(r))
        assert.falsy(seen(b):find("/leak", 1, true), seen(b))
        h.ok(h.cordon({ "session", "stop", s.name }, { cwd = s.cwd, env = s.env }))
    end)
end)
