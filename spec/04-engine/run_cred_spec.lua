-- spec/04-engine/run_cred_spec.lua — declared credentials (`cordon run --credential
-- NAME=HOST`): the command sees only a placeholder, the proxy puts the value back in requests to
-- the credential's host and refuses the placeholder anywhere else. Origins the spec starts on
-- the host's 127.0.0.2 (the credential's) and 127.0.0.3 (allowed, no credential)
-- (spec/fixtures/engine/cred_echo.py) record every request they get: curl, Python's urllib and
-- git (http://, a Basic challenge) reach 127.0.0.2 with the value; the environment,
-- /proc/self/environ, init's /proc/1/environ and a ptrace of init show no value; 127.0.0.3 gets
-- nothing; the audit log names the credential and the host, never the value; bad flags are
-- one line and exit 125. Drives the built binary ($CORDON_BIN); as root and as uid 65534.
local h = require("spec.helpers")

local NOBODY = 65534
local SECRET = "cordon_spec_value_" .. h.token() .. h.token()
local CURL = "curl -sS --noproxy '' --max-time 20 "

--- Starts cred_echo.py on addr; returns { port, log }.
local function origin(addr)
    local dir = h.tmpdir()
    h.sh_ok("chmod 755 " .. h.quote(dir))
    local ready, log = dir .. "/ready", dir .. "/log"
    h.spawn(h.join({ h.python, h.fixtures .. "/engine/cred_echo.py", addr, ready, log }))
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
local function run(uid, a, b, script, extra)
    local audit_dir = h.tmpdir()
    h.sh_ok("chmod 777 " .. h.quote(audit_dir))
    local audit = audit_dir .. "/audit.jsonl"
    local flags = { "--credential", "TOKEN=" .. a.addr .. ":" .. a.port,
        "--network-allow", a.addr .. ":" .. a.port, "--network-allow", b.addr .. ":" .. b.port }
    for _, f in ipairs(extra or {}) do flags[#flags + 1] = f end
    local r = h.run_sh(script, {
        flags = flags, uid = uid, workspace = h.workspace(nil, uid),
        home = uid and h.secret_home(uid) or nil,
        env = { TOKEN = SECRET, CORDON_AUDIT_LOG = audit },
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
                h.python .. ' -c "import ctypes; l=ctypes.CDLL(None, use_errno=True); '
                    .. 'print(\'ptrace-init\', l.ptrace(16, 1, 0, 0), ctypes.get_errno() != 0)"',
                'echo done',
            }, "\n")
            local r, audit = run(uid, a, b, script)
            h.ok(r)
            assert.truthy(r.stdout:find("placeholder-ok", 1, true), h.describe(r))
            assert.falsy(r.stdout:find(SECRET, 1, true), h.describe(r))
            assert.truthy(r.stdout:find("0\n0\ninit-environ-refused\nptrace-init -1 True\ndone", 1, true), h.describe(r))
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
