-- spec/04-engine/run_tls_spec.lua — HTTPS to a credential's host (`cordon run --credential` with
-- `--upstream-ca`): the proxy terminates TLS with a certificate its own CA signed, which the
-- sandbox trusts (the system bundle's path and the usual variables), verifies the real server
-- against the host's store plus the test's CA, and puts the value in. The spec makes a CA with
-- openssl(1), an HTTPS origin (spec/fixtures/engine/echo_origin.py) on 127.0.0.2 with a certificate
-- for that address: curl, Python, Node and git inside reach it and it sees the value; a host
-- without a credential (127.0.0.3) keeps end-to-end TLS (a client trusting only the test CA
-- connects); a server whose certificate names another host is refused with one line; a bad
-- --upstream-ca is one line and exit 125. A Go program (spec/fixtures/engine/cred_client.go, built
-- on the host with golang-go) and a Java one (spec/fixtures/engine/CredClient.java, run as source
-- by the JDK) reach the origin by a name (creds.test, from the resolver's test hosts file) with
-- no flag or setting: Go by HTTPS_PROXY and SSL_CERT_FILE (or directly, through
-- network.transparent, without the variable), Java through network.transparent and the Java
-- trust store init binds over the host's. Drives the built binary ($CORDON_BIN); as root and as
-- uid 65534. Needs go and java: missing, the rows fail.
local h = require("spec.helpers")

local NOBODY = 65534
local SECRET = "cordon_tls_value_" .. h.token() .. h.token()
local CURL = "curl -sS --max-time 20 "

--- A CA and two server certificates (one for 127.0.0.2 and 127.0.0.3, one for another name),
-- in a folder every uid can read.
local function pki()
    local dir = h.tmpdir()
    h.sh_ok("chmod 755 " .. h.quote(dir))
    local q = h.quote
    h.sh_ok(table.concat({
        "cd " .. q(dir),
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key"
            .. " -out ca.pem -days 2 -subj /CN=cordon-spec-ca",
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key"
            .. " -out srv.csr -subj /CN=127.0.0.2",
        "printf 'subjectAltName=IP:127.0.0.2,IP:127.0.0.3,DNS:creds.test\\n' > ip.ext",
        "printf 'subjectAltName=DNS:elsewhere.test\\n' > other.ext",
        "openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ip.ext",
        "openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out other.pem -days 2 -extfile other.ext",
        "chmod 644 *",
    }, " && ") .. " 2>/dev/null")
    return { dir = dir, ca = dir .. "/ca.pem", cert = dir .. "/srv.pem", other = dir .. "/other.pem",
        key = dir .. "/srv.key" }
end

--- Starts echo_origin.py on addr with cert; returns { addr, port, log }. With secret and repos it
-- also serves git (from the folder repos) and an npm registry, both demanding secret.
local function origin(addr, cert, key, secret, repos)
    local dir = h.tmpdir()
    h.sh_ok("chmod 755 " .. h.quote(dir))
    local ready, log = dir .. "/ready", dir .. "/log"
    local argv = { h.python, h.fixtures .. "/engine/echo_origin.py", addr, ready, log, cert, key }
    if secret then
        argv[#argv + 1] = secret
        argv[#argv + 1] = repos
    end
    h.spawn(h.join(argv))
    local port = h.wait_for(function()
        local s = h.read_file(ready)
        return s and tonumber(s:match("^(%d+)"))
    end, 10)
    assert(port, "origin on " .. addr .. " did not start")
    return { port = port, log = log, addr = addr, url = ("https://%s:%d"):format(addr, port) }
end

local function seen(o) return h.read_file(o.log) or "" end

--- A bare repository r.git with one commit "from-origin" in a new folder; returns the folder.
local function repos()
    local dir = h.tmpdir()
    local q = h.quote
    h.sh_ok(table.concat({
        "git init -q --bare " .. q(dir .. "/r.git"),
        "git init -q " .. q(dir .. "/src"),
        "git -C " .. q(dir .. "/src") .. " -c user.name=spec -c user.email=spec@spec.test"
            .. " commit -q --allow-empty -m from-origin",
        "git -C " .. q(dir .. "/src") .. " push -q " .. q(dir .. "/r.git") .. " HEAD:refs/heads/main",
        "git -C " .. q(dir .. "/r.git") .. " symbolic-ref HEAD refs/heads/main",
    }, " && "))
    return dir
end

--- `cordon run --credential TOKEN=a --upstream-ca CA` of script as uid (nil: root), a and b
-- allowed; returns r, the audit log's text.
local function run(uid, p, a, b, script, extra)
    local audit_dir = h.tmpdir()
    h.sh_ok("chmod 777 " .. h.quote(audit_dir))
    local audit = audit_dir .. "/audit.jsonl"
    local flags = { "--credential", "TOKEN=" .. a.addr .. ":" .. a.port, "--upstream-ca", p.ca,
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
    describe("HTTPS to a credential's host (" .. who .. ")", function()
        lazy_setup(function()
            assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        end)
        after_each(h.cleanup)

        it("curl, Python, Node and git reach the server through termination; it sees the value", function()
            local p = pki()
            local a, b = origin("127.0.0.2", p.cert, p.key), origin("127.0.0.3", p.cert, p.key)
            local script = table.concat({
                'case "$TOKEN" in cordon_TOKEN_*) echo placeholder-ok;; esac',
                'echo "bundle=$SSL_CERT_FILE $CURL_CA_BUNDLE $REQUESTS_CA_BUNDLE $NODE_EXTRA_CA_CERTS $GIT_SSL_CAINFO"',
                CURL .. '-H "Authorization: Bearer $TOKEN" ' .. a.url .. '/curl >/dev/null && echo curl-ok',
                -- the system's path alone, with no variable
                'env -u CURL_CA_BUNDLE -u SSL_CERT_FILE ' .. CURL .. '--cacert /etc/ssl/certs/ca-certificates.crt -H "X-Key: $TOKEN" '
                    .. a.url .. '/system >/dev/null && echo system-ok',
                h.python .. ' -c "import os,urllib.request as u; '
                    .. 'u.urlopen(u.Request(\'' .. a.url .. '/py\', headers={\'X-Key\': os.environ[\'TOKEN\']})).read(); print(\'py-ok\')"',
                'if command -v node >/dev/null; then node -e "require(\'https\').get(\'' .. a.url .. '/node\', '
                    .. '{headers: {\'X-Key\': process.env.TOKEN}}, r => { console.log(\'node\', r.statusCode); r.resume(); })'
                    .. '.on(\'error\', e => console.log(\'node-error\', e.message))"; else echo node 200; fi',
                'git -c credential.helper= ls-remote "https://me:$TOKEN@' .. a.addr .. ':' .. a.port
                    .. '/git/r.git" >/dev/null 2>&1; true',
                'echo done',
            }, "\n")
            local r, audit = run(uid, p, a, b, script)
            h.ok(r)
            for _, want in ipairs({ "placeholder-ok", "curl-ok", "system-ok", "py-ok", "node 200", "done" }) do
                assert.truthy(r.stdout:find(want, 1, true), want .. "\n" .. h.describe(r))
            end
            assert.falsy(r.stdout:find(SECRET, 1, true), h.describe(r))
            local s = seen(a)
            assert.truthy(s:find("GET /curl\n", 1, true) and s:find("Authorization: Bearer " .. SECRET, 1, true), s)
            for _, path in ipairs({ "/system", "/py", "/node" }) do
                assert.truthy(s:find("GET " .. path .. "\n", 1, true), path .. "\n" .. s)
            end
            assert.truthy(select(2, s:gsub("X%-Key: " .. SECRET:gsub("%p", "%%%0"), "")) >= 3, s)
            local basic = h.chomp(h.sh_ok("printf %s " .. h.quote("me:" .. SECRET) .. " | base64 -w0"))
            assert.truthy(s:find("/git/r.git/info/refs", 1, true) and s:find("Basic " .. basic, 1, true), s)
            assert.falsy(s:find("cordon_TOKEN_", 1, true), s)
            assert.truthy(audit:find('"kind":"tls"', 1, true) and audit:find('"kind":"credential"', 1, true)
                and audit:find('"rule":"TOKEN"', 1, true), audit)
            assert.falsy(audit:find(SECRET, 1, true), audit)
        end)

        it("git needs no helper and npm reads ${NPM_TOKEN} from .npmrc: the server sees the values", function()
            local p = pki()
            -- one origin as both: git demands Basic with SECRET, the registry Bearer with SECRET
            local a = origin("127.0.0.2", p.cert, p.key, SECRET, repos())
            local host = a.addr .. ":" .. a.port
            local ws = h.workspace(nil, uid)
            -- npm's agent checks an IP host's certificate against the proxy's name (localhost),
            -- and the spec's origin is an IP: strict-ssl=false, the value still goes by termination
            h.write_file(ws .. "/.npmrc", table.concat({
                "registry=https://" .. host .. "/npm/",
                "//" .. host .. "/npm/:_authToken=${NPM_TOKEN}",
                "strict-ssl=false", "",
            }, "\n"), "644")
            local script = table.concat({
                'git config --get-regexp "^credential\\." || echo no-caller-helper',
                'git clone -q https://' .. host .. '/repos/r.git cl && git -C cl log --format=%s && echo clone-ok',
                'git config user.name',
                'npm view cordon-spec-pkg version 2>&1 | tail -2',
            }, "\n")
            -- two credentials of one value (a GitHub token serving as both): each its placeholder
            local r = h.run_sh(script, {
                flags = { "--credential", "TOKEN=" .. host, "--credential", "NPM_TOKEN=" .. host,
                    "--upstream-ca", p.ca, "--network-allow", host },
                uid = uid, workspace = ws, cwd = ws, home = h.secret_home(uid),
                env = { TOKEN = SECRET, NPM_TOKEN = SECRET, GIT_CONFIG_COUNT = "1",
                    GIT_CONFIG_KEY_0 = "user.name", GIT_CONFIG_VALUE_0 = "caller-entry" },
            })
            h.ok(r)
            for _, want in ipairs({ "from-origin", "clone-ok", "caller-entry", "1.0.0" }) do
                assert.truthy(r.stdout:find(want, 1, true), want .. "\n" .. h.describe(r))
            end
            assert.falsy(r.stdout:find(SECRET, 1, true), h.describe(r))
            local s = seen(a)
            local basic = h.chomp(h.sh_ok("printf %s " .. h.quote("x-access-token:" .. SECRET) .. " | base64 -w0"))
            assert.truthy(s:find("POST /repos/r.git/git-upload-pack\n", 1, true) and s:find("Basic " .. basic, 1, true), s)
            assert.truthy(s:find("GET /npm/cordon-spec-pkg", 1, true)
                and s:lower():find(("authorization: bearer " .. SECRET):lower(), 1, true), s)
            assert.falsy(s:find("cordon_TOKEN_", 1, true) or s:find("cordon_NPM_TOKEN_", 1, true), s)
        end)

        it("a SOCKS client to the credential's host is terminated and gets the value in too", function()
            local p = pki()
            local a, b = origin("127.0.0.2", p.cert, p.key), origin("127.0.0.3", p.cert, p.key)
            local socks = CURL .. "--noproxy '' --socks5-hostname 127.0.0.1:18081 "
            local script = socks .. '-H "X-Key: $TOKEN" ' .. a.url .. '/socks && echo socks-ok'
            local r = run(uid, p, a, b, script, { "--network-allow", "tcp://" .. a.addr .. ":" .. a.port })
            h.ok(r)
            assert.truthy(r.stdout:find("socks-ok", 1, true), h.describe(r))
            local s = seen(a)
            assert.truthy(s:find("GET /socks\n", 1, true) and s:find("X-Key: " .. SECRET, 1, true), s)
            assert.falsy(s:find("cordon_TOKEN_", 1, true), s)
        end)

        it("a host without a credential keeps end-to-end TLS", function()
            local p = pki()
            local a, b = origin("127.0.0.2", p.cert, p.key), origin("127.0.0.3", p.cert, p.key)
            -- a client trusting only the test CA connects: the server's own certificate came through
            local script = CURL .. '--cacert ' .. h.quote(p.ca) .. ' ' .. b.url .. '/e2e >/dev/null && echo e2e-ok; '
                .. CURL .. '--cacert ' .. h.quote(p.ca) .. ' ' .. a.url .. '/terminated >/dev/null 2>&1 '
                .. '|| echo terminated-not-test-ca'
            local r = run(uid, p, a, b, script)
            h.ok(r)
            assert.truthy(r.stdout:find("e2e-ok", 1, true), h.describe(r))
            assert.truthy(r.stdout:find("terminated-not-test-ca", 1, true), h.describe(r))
            assert.truthy(seen(b):find("GET /e2e\n", 1, true), seen(b))
        end)

        it("a server whose certificate names another host is refused with one line", function()
            local p = pki()
            local a, b = origin("127.0.0.2", p.other, p.key), origin("127.0.0.3", p.cert, p.key)
            local r, audit = run(uid, p, a, b, CURL .. '-H "X-Key: $TOKEN" ' .. a.url .. '/wrong; echo "rc=$?"')
            -- not 443: the client heard "200" before its first byte showed TLS; its handshake fails
            assert.truthy(r.stdout:find("rc=[1-9]") and not r.stdout:find("rc=0", 1, true), h.describe(r))
            local line = "cordon: refused 127.0.0.2:" .. a.port .. ": its certificate does not verify"
            assert.truthy(r.stderr:find(line, 1, true), h.describe(r))
            assert.falsy(seen(a):find("GET /wrong", 1, true), seen(a))
            assert.truthy(audit:find('"verdict":"deny"', 1, true) and audit:find("does not verify", 1, true), audit)
        end)

        it("a bad --upstream-ca is one line and exit 125", function()
            local p = pki()
            local a, b = origin("127.0.0.2", p.cert, p.key), origin("127.0.0.3", p.cert, p.key)
            local r = run(uid, p, a, b, "echo ran", { "--upstream-ca", p.key })
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find("network.upstream_ca: " .. p.key .. ": no PEM certificate", 1, true),
                h.describe(r))
            assert.falsy(r.stdout:find("ran", 1, true), h.describe(r))
        end)
    end)
end

--- The Go client, built once from spec/fixtures/engine/cred_client.go into dir (static, so that
-- nothing of the host's linker matters inside); its path.
local function build_go_client(dir)
    assert(h.sh("command -v go").code == 0, "go is missing: `make deps` installs golang-go")
    local bin = dir .. "/cred_client"
    h.sh_ok(("cd %s && env GOCACHE=%s/cache GOPATH=%s/gopath GO111MODULE=off CGO_ENABLED=0 "
        .. "go build -o %s %s && rm -rf %s/cache %s/gopath && chmod -R a+rX %s"):format(
        h.quote(dir), h.quote(dir), h.quote(dir), h.quote(bin),
        h.quote(h.fixtures .. "/engine/cred_client.go"), h.quote(dir), h.quote(dir), h.quote(dir)))
    return bin
end

describe("Go and Java clients through TLS termination", function()
    local go_dir, go_client
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        assert(h.sh("command -v java").code == 0, "java is missing: `make deps` installs default-jdk-headless")
        go_dir = h.chomp(h.sh_ok("mktemp -d /var/tmp/cordon-spec-go.XXXXXX"))
        go_client = build_go_client(go_dir)
    end)
    lazy_teardown(function()
        if go_dir then os.execute("rm -rf " .. h.quote(go_dir)) end
    end)
    after_each(h.cleanup)

    for _, uid in ipairs({ false, NOBODY }) do
        local who = uid and ("uid " .. uid) or "root"
        uid = uid or nil
        it("reach a credential's host by name unchanged; the server sees the value (" .. who .. ")", function()
            local p = pki()
            local a = origin("127.0.0.2", p.cert, p.key)
            local hosts_dir = h.tmpdir()
            h.sh_ok("chmod 755 " .. h.quote(hosts_dir))
            h.write_file(hosts_dir .. "/hosts", "127.0.0.2 creds.test\n", "644")
            local host = "creds.test:" .. a.port
            local url = "https://" .. host
            -- a copy every uid reads: the checkout may sit in a folder only its owner enters (or
            -- in root's home, which the sandbox does not show whole)
            local java = go_dir .. "/CredClient.java"
            h.sh_ok("cp " .. h.quote(h.fixtures .. "/engine/CredClient.java") .. " " .. h.quote(java)
                .. " && chmod 644 " .. h.quote(java))
            local script = table.concat({
                'case "$TOKEN" in cordon_TOKEN_*) echo placeholder-ok;; esac',
                -- net/http's defaults: HTTPS_PROXY for a name, SSL_CERT_FILE
                h.quote(go_client) .. ' ' .. url .. '/go',
                -- they are what it used: a proxy that is not there fails it
                'HTTPS_PROXY=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 ' .. h.quote(go_client)
                    .. ' ' .. url .. '/go-dead-proxy 2>&1 | grep -q go-error && echo go-read-proxy',
                -- no variable at all: directly, through network.transparent, the system's bundle
                'env -u HTTPS_PROXY -u https_proxy -u SSL_CERT_FILE ' .. h.quote(go_client) .. ' '
                    .. url .. '/go-direct | sed s/^go/go-direct/',
                -- Java: no proxy property, its own trust store (the one init bound)
                'keytool -list -cacerts -storepass changeit 2>/dev/null | grep -c "^cordon-sandbox-ca,"',
                'java ' .. h.quote(java) .. ' ' .. url .. ' 2>&1',
                'echo done',
            }, "\n")
            local audit_dir = h.tmpdir()
            h.sh_ok("chmod 777 " .. h.quote(audit_dir))
            local audit = audit_dir .. "/audit.jsonl"
            local r = h.run_sh(script, {
                flags = { "--credential", "TOKEN=" .. host, "--upstream-ca", p.ca,
                    "--network-allow", host, "--network-allow", "127.0.0.2:" .. a.port },
                uid = uid, workspace = h.workspace(nil, uid), home = h.secret_home(uid),
                env = { TOKEN = SECRET, CORDON_HOSTS_FILE = hosts_dir .. "/hosts", CORDON_AUDIT_LOG = audit },
            })
            h.ok(r)
            for _, want in ipairs({ "placeholder-ok", "go 200", "go-read-proxy", "go-direct 200",
                "\n1\n", "java-httpclient 200", "java-urlconnection 200", "done" }) do
                assert.truthy(r.stdout:find(want, 1, true), want .. "\n" .. h.describe(r))
            end
            assert.falsy(r.stdout:find(SECRET, 1, true), h.describe(r))
            local s = seen(a)
            for _, path in ipairs({ "/go", "/go-direct", "/java-httpclient", "/java-urlconnection" }) do
                local at = s:find("GET " .. path .. "\n", 1, true)
                assert.truthy(at, path .. "\n" .. s)
                local request = s:sub(at):match("^(.-)\n\n") or s:sub(at)
                assert.truthy(request:find("Authorization: Bearer " .. SECRET, 1, true), path .. "\n" .. s)
            end
            assert.falsy(s:find("cordon_TOKEN_", 1, true), s)
            assert.falsy(s:find("/go-dead-proxy", 1, true), s)
            local log = h.read_file(audit) or ""
            assert.truthy(log:find('"rule":"TOKEN"', 1, true), log)
            assert.falsy(log:find(SECRET, 1, true), log)
        end)
    end
end)

describe("pip and npm through TLS termination, with their default TLS settings", function()
    local venv_dir
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        assert(h.sh("command -v npm").code == 0, "npm is missing: `make deps` checks for it")
        venv_dir = h.chomp(h.sh_ok("mktemp -d /var/tmp/cordon-spec-pip.XXXXXX"))
        h.sh_ok(h.python .. " -m venv " .. h.quote(venv_dir .. "/v") .. " && chmod -R a+rX " .. h.quote(venv_dir))
    end)
    lazy_teardown(function()
        if venv_dir then os.execute("rm -rf " .. h.quote(venv_dir)) end
    end)
    after_each(h.cleanup)

    for _, uid in ipairs({ false, NOBODY }) do
        local who = uid and ("uid " .. uid) or "root"
        uid = uid or nil
        it("a token in pip's index URL and in npm's .npmrc reaches the server, TLS verified (" .. who .. ")", function()
            local p = pki()
            local a = origin("127.0.0.2", p.cert, p.key, SECRET, repos())
            local hosts_dir = h.tmpdir()
            h.sh_ok("chmod 755 " .. h.quote(hosts_dir))
            h.write_file(hosts_dir .. "/hosts", "127.0.0.2 creds.test\n", "644")
            local host = "creds.test:" .. a.port
            local ws = h.workspace(nil, uid)
            -- no strict-ssl=false, no cafile: npm trusts what the sandbox's variables name
            h.write_file(ws .. "/.npmrc", "registry=https://" .. host .. "/npm/\n//" .. host
                .. "/npm/:_authToken=${NPM_TOKEN}\n", "644")
            local script = table.concat({
                -- the echo origin serves no package: pip fails after asking, with the value in
                h.quote(venv_dir .. "/v/bin/pip") .. " download --no-deps --disable-pip-version-check -q -d dl"
                    .. ' --index-url "https://__token__:$TOKEN@' .. host .. '/simple/" cordon-spec-pkg'
                    .. ' >pip.out 2>&1; grep -ci "certificate verify failed" pip.out || true',
                'npm view cordon-spec-pkg version 2>&1 | tail -1',
            }, "\n")
            local r = h.run_sh(script, {
                flags = { "--credential", "TOKEN=" .. host, "--credential", "NPM_TOKEN=" .. host,
                    "--upstream-ca", p.ca, "--network-allow", host, "--network-allow", "127.0.0.2:" .. a.port },
                uid = uid, workspace = ws, cwd = ws, home = h.secret_home(uid),
                env = { TOKEN = SECRET, NPM_TOKEN = SECRET, CORDON_HOSTS_FILE = hosts_dir .. "/hosts" },
            })
            h.ok(r)
            assert.truthy(r.stdout:find("^0\n") and r.stdout:find("1.0.0", 1, true), h.describe(r))
            assert.falsy(r.stdout:find(SECRET, 1, true), h.describe(r))
            local s = seen(a)
            local basic = h.chomp(h.sh_ok("printf %s " .. h.quote("__token__:" .. SECRET) .. " | base64 -w0"))
            local at = s:find("GET /simple/cordon-spec-pkg/", 1, true)
            assert.truthy(at and s:sub(at):find("Basic " .. basic, 1, true), s)
            assert.truthy(s:find("GET /npm/cordon-spec-pkg", 1, true)
                and s:lower():find(("authorization: bearer " .. SECRET):lower(), 1, true), s)
            assert.falsy(s:find("cordon_TOKEN_", 1, true) or s:find("cordon_NPM_TOKEN_", 1, true), s)
        end)
    end
end)
