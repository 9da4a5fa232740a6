-- spec/04-engine/run_home_spec.lua — the copy-on-write home (profile key home, --home,
-- `cordon home`): commands see the caller's home read-only underneath and write to a private
-- layer of the workspace's, kept across runs and sessions, never to the real home; hidden names
-- stay hidden whether they exist when the sandbox starts or are created later on the host.
-- Real programs (git, npm, pip, ccache) against registries the spec serves on 127.0.0.2.
-- Each case uses a home of its own (a temp dir, never the real one) unless it says "as root".
-- Drives the built binary ($CORDON_BIN); loopback only.
local h = require("spec.helpers")

local ok = h.ok

local has = h.has

local hasnt = h.hasnt

local function have(prog)
    return h.sh("command -v " .. prog).code == 0
end

--- A fresh home (owned by the spec) and a workspace; cordon's state (the layers) and its cache
-- (resolved profiles) live in the home, as XDG says, unless state_outside: then in temp dirs of
-- their own.
local function setup(state_outside)
    local home = h.tmpdir()
    local ws = h.workspace()
    local env = {}
    if state_outside then
        env.XDG_STATE_HOME = h.tmpdir()
        env.XDG_CACHE_HOME = h.tmpdir()
    end
    return { home = home, ws = ws, env = env }
end

local function run(t, script, flags)
    return h.run_sh(script, { home = t.home, workspace = t.ws, env = t.env, flags = flags })
end

local function home_cmd(t, args)
    local words = { "home" }
    for _, a in ipairs(args or {}) do words[#words + 1] = a end
    return h.cordon(words, { home = t.home, cwd = t.ws, env = t.env })
end

--- Every entry of dir: path, type, size, mode and content hash.
local function full_tree(dir)
    return h.sh_ok("cd " .. h.quote(dir) .. " && find . -printf '%p %y %s %m\\n' | LC_ALL=C sort"
        .. " && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum")
end

-- A registry for npm and a simple index for pip on 127.0.0.2, logging every request path.
local REGISTRY = [[
import base64, hashlib, http.server, io, json, os, sys, tarfile, zipfile
ready, log = sys.argv[1], sys.argv[2]
def tgz():
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w:gz") as t:
        for name, data in (("package/package.json", b'{"name":"tinypkg","version":"1.0.0","main":"index.js"}'),
                           ("package/index.js", b"module.exports = 'tinypkg works';\n")):
            i = tarfile.TarInfo(name); i.size = len(data); i.mode = 0o644; t.addfile(i, io.BytesIO(data))
    return b.getvalue()
def whl():
    b = io.BytesIO()
    files = {"tinypkg/__init__.py": b"VALUE = 'tinypkg works'\n",
             "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
             "tinypkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: spec\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join("%s,sha256=%s,%d\n" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode(), len(d)) for n, d in files.items())
    files["tinypkg-1.0.dist-info/RECORD"] = (record + "tinypkg-1.0.dist-info/RECORD,,\n").encode()
    with zipfile.ZipFile(b, "w") as z:
        for n, d in files.items(): z.writestr(n, d)
    return b.getvalue()
TGZ, WHL = tgz(), whl()
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, body, ctype, cache):
        self.send_response(200); self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if cache: self.send_header("Cache-Control", "max-age=86400")
        self.end_headers(); self.wfile.write(body)
    def do_GET(self):
        with open(log, "a") as f: f.write(self.path + "\n")
        host = "http://%s" % self.headers.get("Host")
        p = self.path.split("?")[0]
        if p == "/tinypkg":
            integ = "sha512-" + base64.b64encode(hashlib.sha512(TGZ).digest()).decode()
            doc = {"name": "tinypkg", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {
                "name": "tinypkg", "version": "1.0.0", "dist": {"tarball": host + "/tinypkg/-/tinypkg-1.0.0.tgz",
                "integrity": integ, "shasum": hashlib.sha1(TGZ).hexdigest()}}}}
            self.send(json.dumps(doc).encode(), "application/json", False)
        elif p == "/tinypkg/-/tinypkg-1.0.0.tgz":
            self.send(TGZ, "application/octet-stream", True)
        elif p in ("/simple/tinypkg/", "/simple/tinypkg"):
            href = "/files/tinypkg-1.0-py3-none-any.whl#sha256=" + hashlib.sha256(WHL).hexdigest()
            self.send(('<html><body><a href="%s">tinypkg-1.0-py3-none-any.whl</a></body></html>' % href).encode(), "text/html", False)
        elif p == "/files/tinypkg-1.0-py3-none-any.whl":
            self.send(WHL, "application/octet-stream", True)
        else:
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
srv = http.server.ThreadingHTTPServer(("127.0.0.2", 0), H)
with open(ready + ".tmp", "w") as f: f.write(str(srv.server_address[1]))
os.rename(ready + ".tmp", ready)
srv.serve_forever()
]]

local function registry()
    local dir = h.tmpdir()
    h.write_file(dir .. "/registry.py", REGISTRY)
    local ready, log = dir .. "/ready", dir .. "/requests.log"
    h.write_file(log, "")
    h.spawn(h.join({ h.python, dir .. "/registry.py", ready, log }))
    local port = h.wait_for(function() return tonumber(h.read_file(ready) or "") end, 10)
    assert(port, "registry did not start")
    return { port = port, log = log, url = ("http://127.0.0.2:%d"):format(port),
             allow = ("127.0.0.2:%d"):format(port) }
end

local function requests(reg)
    local out = {}
    for line in (h.read_file(reg.log) or ""):gmatch("[^\n]+") do out[#out + 1] = line end
    return out
end

local function count(list, pattern)
    local n = 0
    for _, l in ipairs(list) do if l:find(pattern) then n = n + 1 end end
    return n
end

describe("the copy-on-write home", function()
    after_each(function() h.cleanup() end)

    it("keeps git config --global across runs of the workspace, never in the real home", function()
        local t = setup(true)
        h.write_file(t.home .. "/.gitconfig", "[user]\n\tname = Host Person\n")
        local before = full_tree(t.home)
        ok(run(t, "git config --global user.email agent@example.invalid"))
        local r = ok(run(t, "git config --global user.email; git config --global user.name"))
        assert.are.equal("agent@example.invalid\nHost Person\n", r.stdout)
        assert.are.equal("[user]\n\tname = Host Person\n", h.read_file(t.home .. "/.gitconfig"))
        assert.are.equal(before, full_tree(t.home))
        -- another workspace has a layer of its own
        local other = h.workspace()
        r = ok(h.run_sh("git config --global user.email || echo none",
            { home = t.home, workspace = other, env = t.env }))
        assert.are.equal("none\n", r.stdout)
    end)

    it("cordon home shows, --diff lists and --reset discards what commands wrote", function()
        local t = setup(false)
        h.write_file(t.home .. "/.keep.txt", "host\n")
        h.write_file(t.home .. "/.gone.txt", "host\n")
        local r = ok(home_cmd(t))
        has(r.stdout, "no home layer", r)
        ok(run(t, "echo sandbox > ~/.keep.txt; rm ~/.gone.txt; mkdir -p ~/.cache/tool; echo 1 > ~/.cache/tool/x"))
        r = ok(home_cmd(t, { "--diff" }))
        has(r.stdout, "changed ~/.keep.txt", r)
        has(r.stdout, "removed ~/.gone.txt", r)
        has(r.stdout, "added ~/.cache/tool/x", r)
        assert.are.equal("host\n", h.read_file(t.home .. "/.keep.txt"))
        assert.are.equal("host\n", h.read_file(t.home .. "/.gone.txt"))
        r = ok(home_cmd(t))
        has(r.stdout, "layer: " .. t.home .. "/.local/state/cordon/homes/", r)
        has(r.stdout, "in use: no", r)
        -- the layer's own folder is not reachable inside
        r = run(t, "ls ~/.local/state/cordon/homes")
        assert.are_not.equal(0, r.code, h.describe(r))
        has(r.stderr, "No such file or directory", r)
        r = ok(home_cmd(t, { "--reset" }))
        has(r.stdout, "discarded", r)
        r = ok(run(t, "cat ~/.keep.txt ~/.gone.txt; test ! -e ~/.cache/tool/x && echo fresh"))
        assert.are.equal("host\nhost\nfresh\n", r.stdout)
        r = ok(home_cmd(t, { "--diff", "--help" }))
        has(r.stdout, "usage: cordon home", r)
        r = home_cmd(t, { "--bogus" })
        assert.are.equal(125, r.code, h.describe(r))
    end)

    it("cordon home --diff shows a control, bidi or zero-width character in a name visibly", function()
        local t = setup(false)
        -- names a command chose: ESC[8m would hide the rest on a terminal, U+202E reorders it
        ok(run(t, "touch ~/\"$(printf '.a\\033[8mb')\" ~/\"$(printf '.c\\342\\200\\256d\\342\\200\\213e')\""))
        local r = ok(home_cmd(t, { "--diff" }))
        has(r.stdout, "added ~/.a\\x1b[8mb", r)
        has(r.stdout, "added ~/.c<U+202E>d<U+200B>e", r)
        assert.is_nil(r.stdout:find("[\27\226]"), h.describe(r))
    end)

    it("--home tmpfs and --home readonly keep nothing", function()
        local t = setup(true)
        ok(run(t, "echo a > ~/.a && cat ~/.a", { "--home", "tmpfs" }))
        local r = ok(run(t, "test ! -e ~/.a && echo gone"))
        assert.are.equal("gone\n", r.stdout)
        r = run(t, "echo b > ~/b", { "--home", "readonly" })
        assert.are_not.equal(0, r.code, h.describe(r))
        has(r.stderr, "Read-only file system", r)
        r = run(t, "true", { "--home", "sideways" })
        assert.are.equal(125, r.code, h.describe(r))
        has(r.stderr, "--home", r)
    end)

    it("npm install: the second, in a fresh run, is served from the cache the first filled", function()
        if not have("npm") then pending("npm is not installed") return end
        local t, reg = setup(false), registry()
        local flags = { "--network-allow", reg.allow }
        local install = "mkdir -p app && cd app && echo '{}' > package.json && "
            .. "npm install --no-audit --no-fund --registry " .. reg.url .. "/ tinypkg >/dev/null && "
            .. "node -e 'console.log(require(\"tinypkg\"))'"
        local r = ok(run(t, install, flags))
        assert.are.equal("tinypkg works\n", r.stdout)
        assert.are.equal(1, count(requests(reg), "%.tgz$"), table.concat(requests(reg), "\n"))
        ok(run(t, "rm -rf app", flags))
        r = ok(run(t, install, flags))
        assert.are.equal("tinypkg works\n", r.stdout)
        -- no second tarball fetch: the tarball came from ~/.npm's cache in the layer
        assert.are.equal(1, count(requests(reg), "%.tgz$"), table.concat(requests(reg), "\n"))
        assert.are_not.equal(0, h.sh("test -e " .. h.quote(t.home .. "/.npm")).code, "the real ~/.npm is untouched")
    end)

    it("pip install into a venv: the second is served from pip's cache, without warnings", function()
        if h.sh(h.python .. " -m venv --help").code ~= 0 then pending("python3-venv is missing") return end
        local t, reg = setup(false), registry()
        local flags = { "--network-allow", reg.allow }
        local install = "rm -rf venv && " .. h.python .. " -m venv venv && "
            -- (pip caches plain-HTTP downloads only from a trusted host)
            .. "venv/bin/pip install --disable-pip-version-check --trusted-host " .. reg.allow
            .. " --index-url " .. reg.url .. "/simple/ tinypkg && venv/bin/python -c 'import tinypkg; print(tinypkg.VALUE)'"
        local r = ok(run(t, install, flags))
        has(r.stdout, "tinypkg works", r)
        hasnt(r.stderr, "cache has been disabled", r)
        assert.are.equal(1, count(requests(reg), "%.whl$"), table.concat(requests(reg), "\n"))
        r = ok(run(t, install, flags))
        has(r.stdout, "tinypkg works", r)
        hasnt(r.stderr, "cache has been disabled", r)
        hasnt(r.stderr, "WARNING", r)
        assert.are.equal(1, count(requests(reg), "%.whl$"), table.concat(requests(reg), "\n"))
    end)

    it("ccache: the second compile, in a fresh run, is a cache hit", function()
        if not have("ccache") then pending("ccache is not installed") return end
        local t = setup(false)
        h.write_file(t.ws .. "/x.c", "int f(void) { return 42; }\n")
        local compile = "ccache gcc -c x.c -o x.o && ccache --print-stats"
        local r = ok(run(t, compile))
        has(r.stdout, "direct_cache_hit\t0", r)
        r = ok(run(t, "rm x.o && " .. compile))
        has(r.stdout, "direct_cache_hit\t1", r)
    end)

    it("a hidden name stays hidden: its whiteout cannot be removed to uncover the host's file", function()
        local t = setup(true)
        local home, marker = h.secret_home()
        t.home = home
        local before = full_tree(home)
        local r = ok(run(t, "rm -rf ~/.aws 2>/dev/null; mkdir -p ~/.aws; ls -A ~/.aws; echo new > ~/.aws/credentials; "
            .. "cat ~/.aws/credentials; rm -f ~/.netrc; touch ~/.netrc; wc -c < ~/.netrc"))
        assert.are.equal("new\n0\n", r.stdout)
        hasnt(r.stdout, marker, r)
        -- the next run sees its own files, never the host's
        r = ok(run(t, "cat ~/.aws/credentials ~/.netrc; cat ~/.ssh/id_rsa 2>&1 || true"))
        hasnt(r.stdout, marker, r)
        has(r.stdout, "new\n", r)
        assert.are.equal(before, full_tree(home))
    end)

    it("a hidden name created on the host after the session started stays hidden", function()
        local t = setup(true)
        local outside = h.tmpdir() -- a hidden path outside the home, whose parent exists
        local s = h.session_start("home-later-" .. h.token(), {
            cwd = t.ws, env = { HOME = t.home, XDG_STATE_HOME = t.env.XDG_STATE_HOME },
            flags = { "--hide", outside .. "/later/secret", "--hide", outside .. "/direct" } })
        local function exec(cmd)
            return h.cordon({ "exec", s.name, "--", cmd }, { cwd = t.ws, home = t.home, env = s.env })
        end
        local r = exec("ls -A ~; ls " .. outside)
        assert.are.equal(0, r.code, h.describe(r))
        h.sh_ok("mkdir -p " .. h.quote(t.home .. "/.aws") .. " " .. h.quote(outside .. "/later"))
        h.write_file(t.home .. "/.aws/credentials", "late-secret\n")
        h.write_file(outside .. "/later/secret", "late-secret\n")
        h.write_file(outside .. "/direct", "late-secret\n")
        h.write_file(t.home .. "/visible-later", "fine\n")
        r = exec("cat ~/.aws/credentials " .. outside .. "/later/secret " .. outside .. "/direct 2>&1; ls -A ~")
        hasnt(r.stdout, "late-secret", r)
        has(r.stdout, "No such file or directory", r)
        -- a name that is not hidden shows up as it would in a read-only home
        has(r.stdout, "visible-later", r)
    end)

    it("two sessions of one workspace write to the home at once; both are kept, intact", function()
        local t = setup(true)
        local env = { HOME = t.home, XDG_STATE_HOME = t.env.XDG_STATE_HOME }
        local a = h.session_start("home-a-" .. h.token(), { cwd = t.ws, env = env })
        local b = h.session_start("home-b-" .. h.token(), { cwd = t.ws, env = env })
        local script = "for i in $(seq 1 50); do echo %s-$i > ~/.%s-$i; done; cat ~/.%s-50"
        local pa = h.sh("cd " .. h.quote(t.ws) .. " && " .. h.command_line({ "exec", a.name, "--",
            script:format("a", "a", "a") }, { home = t.home, env = a.env }) .. " > " .. h.quote(t.ws .. "/a.out")
            .. " & " .. h.command_line({ "exec", b.name, "--", script:format("b", "b", "b") }, { home = t.home, env = b.env })
            .. "; rb=$?; wait $! ; ra=$?; exit $((ra | rb))")
        assert.are.equal(0, pa.code, h.describe(pa))
        assert.are.equal("b-50\n", pa.stdout)
        assert.are.equal("a-50\n", h.read_file(t.ws .. "/a.out"))
        -- one session holds the layer, the other writes beside it: --reset is refused while either runs
        local r = home_cmd(t, { "--reset" })
        assert.are.equal(125, r.code, h.describe(r))
        has(r.stderr, "is using its home layer", r)
        -- a run meanwhile works, and its home writes are kept too, without a word
        r = ok(run(t, "echo run > ~/.from-run; cat ~/.from-run"))
        hasnt(r.stderr, "not kept", r)
        h.session_reap(a)
        h.session_reap(b)
        -- the next run merges what waited: both sessions' 50 files, intact, and the run's
        r = ok(run(t, "cat ~/.a-1 ~/.a-50 ~/.b-1 ~/.b-50 ~/.from-run"))
        assert.are.equal("a-1\na-50\nb-1\nb-50\nrun\n", r.stdout)
        local diff = ok(home_cmd(t, { "--diff" })).stdout
        local na, nb = select(2, diff:gsub("added ~/%.a%-%d+\n", "")), select(2, diff:gsub("added ~/%.b%-%d+\n", ""))
        assert.are.equal(50, na, diff)
        assert.are.equal(50, nb, diff)
        -- and it is free again
        ok(home_cmd(t, { "--reset" }))
    end)

    it("the sandboxes of --session-exec=false share the session's home, and keep its writes", function()
        local t = setup(true)
        local s = h.session_start("home-fresh-" .. h.token(), {
            cwd = t.ws, env = { HOME = t.home, XDG_STATE_HOME = t.env.XDG_STATE_HOME },
            flags = { "--session-exec=false" } })
        local function exec(cmd)
            return h.cordon({ "exec", s.name, "--", cmd }, { cwd = t.ws, home = t.home, env = s.env })
        end
        local r = exec("echo one > ~/.fresh-1")
        assert.are.equal(0, r.code, h.describe(r))
        hasnt(r.stderr, "not kept", r)
        r = exec("cat ~/.fresh-1")
        assert.are.equal("one\n", r.stdout, h.describe(r))
        h.session_reap(s)
        r = ok(run(t, "cat ~/.fresh-1"))
        assert.are.equal("one\n", r.stdout)
    end)

    it("strict's home is a fresh tmpfs each time", function()
        local t = setup(true)
        ok(run(t, "echo s > ~/.s && cat ~/.s", { "--profile", "strict" }))
        local r = ok(run(t, "test ! -e ~/.s && echo gone", { "--profile", "strict" }))
        assert.are.equal("gone\n", r.stdout)
    end)

    it("a HOME reached through a symlink keeps its hidden names hidden", function()
        local t = setup(true)
        local home, marker = h.secret_home()
        local link = h.tmpdir() .. "/home-link"
        h.sh_ok("ln -s " .. h.quote(home) .. " " .. h.quote(link))
        t.home = link
        local r = ok(run(t, "cat ~/.ssh/id_rsa " .. h.quote(home) .. "/.ssh/id_rsa 2>&1; echo w > ~/.w; cat ~/.w"))
        hasnt(r.stdout, marker, r)
        has(r.stdout, "w\n", r)
        assert.are_not.equal(0, h.sh("test -e " .. h.quote(home .. "/.w")).code)
    end)

    -- nobody's own home and workspace, and run options for nobody there; nil when not root
    local function nobodys()
        if h.chomp(h.sh_ok("id -u")) ~= "0" then return nil end
        local home = h.tmpdir()
        h.sh_ok("chown 65534:65534 " .. h.quote(home))
        local ws = h.workspace(nil, 65534)
        return home, ws, { home = home, workspace = ws, uid = 65534 }
    end

    it("works for an unprivileged caller, whose layer is the caller's own #privileged", function()
        local home, _, o = nobodys()
        if not home then pending("needs root to switch to nobody") return end
        ok(h.run_sh("git config --global user.name Nobody; mkdir -p ~/.cache/t && echo 1 > ~/.cache/t/x", o))
        local r = ok(h.run_sh("git config --global user.name; cat ~/.cache/t/x", o))
        assert.are.equal("Nobody\n1\n", r.stdout)
        assert.are.equal("65534 700\n", h.sh_ok("stat -c '%u %a' " .. h.quote(home) .. "/.local/state/cordon/homes"))
        assert.are_not.equal(0, h.sh("test -e " .. h.quote(home .. "/.gitconfig")).code)
    end)

    it("a layer of another user's is refused in one line, and its owner's runs go on #privileged", function()
        local home, ws, mine = nobodys()
        if not home then pending("needs root to switch to nobody") return end
        ok(h.run_sh("echo kept > ~/.kept", mine))
        -- root with nobody's HOME (sudo -E): its sandbox would leave root's files in the layer,
        -- which nobody's own sandboxes could then neither clear nor use
        local r = h.run_sh("echo ran > ~/x; echo ran", { home = home, workspace = ws })
        assert.are.equal(125, r.code, h.describe(r))
        hasnt(r.stdout, "ran", r)
        has(r.stderr, "belongs to uid 65534, not to this caller (uid 0)", r)
        has(r.stderr, "--home tmpfs", r)
        assert.are.equal(1, select(2, r.stderr:gsub("\n", "")), h.describe(r))
        assert.are.equal("", h.sh_ok("find " .. h.quote(home) .. " -uid 0"))
        -- every run of the owner's works, as before (a polluted layer failed every other one)
        for _ = 1, 3 do
            assert.are.equal("kept\n", ok(h.run_sh("cat ~/.kept", mine)).stdout)
        end
        -- and root can still run there without keeping the home
        assert.are.equal("ran\n", ok(h.run_sh("echo ran", { home = home, workspace = ws,
            flags = { "--home", "tmpfs" } })).stdout)
    end)

    it("a sandbox killed at its start leaves the layer whole: the next starts, no stray work dir", function()
        local t = setup(true)
        local layer = t.env.XDG_STATE_HOME .. "/cordon/homes/"
            .. h.chomp(h.sh_ok("printf %s " .. h.quote(t.ws) .. " | sha256sum | cut -d' ' -f1"))
        local entries = "ls -A " .. h.quote(layer) .. " | LC_ALL=C sort | tr '\\n' ' '"
        ok(run(t, "echo one > ~/.one"))
        -- kill -9 the whole sandbox as soon as its command runs (its home write shows in the layer)
        local line = h.command_line({ "run", "--workspace", t.ws, "--", "/bin/sh", "-c",
            "echo two > ~/.two; exec sleep 5" }, { home = t.home, env = t.env, timeout = false })
        h.sh_ok("cd " .. h.quote(t.ws) .. " && { " .. line .. " & } ; pid=$!; i=0; while [ ! -s "
            .. h.quote(layer .. "/upper/.two") .. " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); "
            .. "done; kill -9 $pid; wait $pid; true")
        -- its init lets go of the layer as it dies (a run before that would write beside it)
        assert.is_truthy(h.wait_for(function() return home_cmd(t).stdout:find("in use: no", 1, true) end, 10))
        local r = ok(run(t, "cat ~/.one ~/.two"))
        assert.are.equal("one\ntwo\n", r.stdout)
        assert.are.equal("lock upper work work.spare ", h.sh_ok(entries))
        assert.are.equal("", h.sh_ok("ls -A " .. h.quote(layer .. "/work.spare")))
        -- what a crash in the middle of emptying the spare leaves (overlayfs' volatile mark, which
        -- would refuse the mount) is cleared by the next start that takes it
        h.sh_ok("mkdir -p " .. h.quote(layer .. "/work.spare/work/incompat/volatile") .. " && touch "
            .. h.quote(layer .. "/work.spare/work/incompat/volatile/dirty"))
        for _ = 1, 2 do
            r = ok(run(t, "cat ~/.one"))
            assert.are.equal("one\n", r.stdout)
        end
        assert.are.equal("lock upper work work.spare ", h.sh_ok(entries))
        assert.are.equal("", h.sh_ok("ls -A " .. h.quote(layer .. "/work.spare")))
    end)

    it("a home that cannot take an overlay stops the sandbox, naming --home readonly", function()
        local t = setup(true)
        local r = h.run_sh("echo ran", { home = "/", workspace = t.ws, env = t.env })
        assert.are.equal(125, r.code, h.describe(r))
        hasnt(r.stdout, "ran", r)
        has(r.stderr, "--home readonly", r)
        r = ok(h.run_sh("echo ran", { home = "/", workspace = t.ws, env = t.env, flags = { "--home", "readonly" } }))
        assert.are.equal("ran\n", r.stdout)
        -- a layer overlayfs refuses (its upper directory is a file): no sandbox, no writable
        -- real home instead
        local layer = t.env.XDG_STATE_HOME .. "/cordon/homes/"
            .. h.chomp(h.sh_ok("printf %s " .. h.quote(t.ws) .. " | sha256sum | cut -d' ' -f1"))
        h.sh_ok("mkdir -p " .. h.quote(layer .. "/work") .. " && rm -rf " .. h.quote(layer .. "/upper")
            .. " && touch " .. h.quote(layer .. "/upper"))
        r = h.run_sh("echo ran > ~/x; echo ran", { home = t.home, workspace = t.ws, env = t.env })
        assert.are.equal(125, r.code, h.describe(r))
        hasnt(r.stdout, "ran", r)
        has(r.stderr, "cannot be built", r)
        has(r.stderr, "--home readonly", r)
        assert.are.equal(1, select(2, r.stderr:gsub("\n", "")), h.describe(r))
        assert.are_not.equal(0, h.sh("test -e " .. h.quote(t.home .. "/x")).code)
        -- a work folder that is a file is refused before the mount, naming it
        h.sh_ok("rm -rf " .. h.quote(layer .. "/upper") .. " " .. h.quote(layer .. "/work") .. " && mkdir "
            .. h.quote(layer .. "/upper") .. " && touch " .. h.quote(layer .. "/work"))
        r = h.run_sh("echo ran > ~/x; echo ran", { home = t.home, workspace = t.ws, env = t.env })
        assert.are.equal(125, r.code, h.describe(r))
        hasnt(r.stdout, "ran", r)
        has(r.stderr, "cannot make the home layer " .. layer .. "/work: Not a directory", r)
        has(r.stderr, "--home readonly", r)
        assert.are.equal(1, select(2, r.stderr:gsub("\n", "")), h.describe(r))
        assert.are_not.equal(0, h.sh("test -e " .. h.quote(t.home .. "/x")).code)
    end)
end)

describe("root's home", function()
    after_each(function() h.cleanup() end)

    it("as root, toolchains under /root stay on PATH and root's git identity is used #privileged", function()
        if h.chomp(h.sh_ok("id -u")) ~= "0" then pending("needs root") return end
        -- a pyenv-like shim folder under the real /root, removed again; cordon's state elsewhere
        local shims = "/root/.cordon-spec-shims-" .. h.token()
        h.defer(function() os.execute("rm -rf " .. h.quote(shims)) end)
        h.sh_ok("mkdir " .. shims)
        h.write_file(shims .. "/spec-tool", "#!/bin/sh\necho shim ran\n", "755")
        local state = h.tmpdir()
        local before = h.sh_ok("ls -A /root")
        local r = ok(h.cordon({ "run", "--", "/bin/sh", "-c", "spec-tool; git config --global user.email || echo none" },
            { home = "/root", env = { PATH = shims .. ":" .. h.path, XDG_STATE_HOME = state } }))
        local want = h.sh("HOME=/root git config --global user.email || echo none").stdout
        assert.are.equal("shim ran\n" .. want, r.stdout)
        -- root's credentials stay hidden, the rest of /root is there
        r = ok(h.cordon({ "run", "--", "/bin/sh", "-c", "ls -A /root" },
            { home = "/root", env = { XDG_STATE_HOME = state } }))
        for _, secret in ipairs({ ".ssh", ".aws", ".npmrc", ".netrc", ".git-credentials" }) do
            hasnt("\n" .. r.stdout, "\n" .. secret .. "\n", r)
        end
        has(r.stdout, shims:match("[^/]+$"), r)
        os.execute("rm -rf " .. h.quote(shims))
        assert.are.equal(before:gsub("[^\n]*cordon%-spec%-shims[^\n]*\n", ""), h.sh_ok("ls -A /root"))
    end)

    it("when the caller's home is not /root, /root stays hidden #privileged", function()
        if h.chomp(h.sh_ok("id -u")) ~= "0" then pending("needs root") return end
        local r = ok(h.run_sh("ls -A /root | wc -l; test -e /root/.bashrc || echo missing",
            { home = h.tmpdir(), env = { XDG_STATE_HOME = h.tmpdir() } }))
        assert.are.equal("0\nmissing\n", r.stdout)
    end)
end)

describe("a mount below the home", function()
    after_each(function() h.cleanup() end)

    -- Every mount a user namespace inherits is locked to what lies under it, and overlayfs takes
    -- no lower layer with locked mounts below it: the home is read-only then, said in one line,
    -- and the sandbox still starts (a project mounted under the home is the usual container).
    it("makes the home read-only for that sandbox, in one line, hidden names still hidden", function()
        local t = setup(true)
        h.sh_ok("mkdir -p " .. h.quote(t.home .. "/project") .. " " .. h.quote(t.home .. "/.aws"))
        h.write_file(t.home .. "/.aws/credentials", "secret\n")
        local script = "mount -t tmpfs spec " .. h.quote(t.home .. "/project") .. " && echo inside > "
            .. h.quote(t.home .. "/project/f") .. " && cd " .. h.quote(t.ws) .. " && HOME=" .. h.quote(t.home)
            .. " XDG_STATE_HOME=" .. h.quote(t.env.XDG_STATE_HOME) .. " " .. h.quote(h.bin)
            .. " run -- sh -c " .. h.quote("cat ~/project/f; cat ~/.aws/credentials; touch ~/new || echo refused")
        local r = h.sh("unshare -m --propagation private sh -c " .. h.quote(script))
        assert.are.equal(0, r.code, h.describe(r))
        has(r.stdout, "inside\n", r)
        has(r.stdout, "refused\n", r)
        hasnt(r.stdout, "secret", r)
        has(r.stderr, "is a mount below the home", r)
        assert.is_nil(h.read_file(t.home .. "/new"))
    end)
end)
