-- spec/04-engine/run_refusal_lines_spec.lua — the refusal lines `cordon run` prints, through the
-- real binary: one line per refused thing (npm's many error lines, the same write twice), and
-- the wording that follows where the path is and why (outside the writable set, protected
-- inside the workspace, the readonly profile's workspace).
-- Issue 28's rows, with real programs, as an unprivileged user with a real home (uid 65534, or
-- a user the spec adds where ssh needs its home in the password database) and as root: hidden
-- ssh keys (a real sshd on 127.0.0.2), hidden gpg keys, the host's loopback, root's apt-get, a
-- repository's .git held in place; each shown once outside (or with the flag the line names),
-- so the spec can fail. And an ordinary successful run prints nothing of cordon's.
local h = require("spec.helpers")

-- Is prog on the PATH the sandboxed commands get (h.path), not only on this shell's?
local function on_path(prog)
    return h.sh("env PATH=" .. h.path .. " sh -c " .. h.quote("command -v " .. prog)).code == 0
end

-- The "cordon: " lines of what cordon printed on stderr.
local function cordon_lines(r)
    local out = {}
    for l in (r.stderr .. "\n"):gmatch("([^\n]*)\n") do
        if l:sub(1, 8) == "cordon: " then out[#out + 1] = l end
    end
    return out
end

local function has(r, text)
    assert.truthy(r.stderr:find(text, 1, true), "expected '" .. text .. "'\n" .. h.describe(r))
end

describe("cordon run: refusal lines", function()
    after_each(h.cleanup)

    it("says the same refused write once", function()
        local dir = h.tmpdir()
        local r = h.run_sh(("touch %s/a; touch %s/a; echo x > %s/a"):format(h.quote(dir), h.quote(dir), h.quote(dir)))
        local lines = cordon_lines(r)
        assert.are.equal(1, #lines, h.describe(r))
        has(r, "cordon: the sandbox refused a write to " .. dir .. "/a (read-only outside the workspace: "
            .. "--allow-write " .. dir .. ")")
    end)

    it("says npm's many error lines in one line, with the path", function()
        if not on_path("npm") then h.skip("no npm here") end
        local pkg = h.tmpdir()
        local name = "cordon-spec-pkg-" .. h.token():sub(1, 8)
        h.write_file(pkg .. "/package.json", ('{"name":"%s","version":"1.0.0"}'):format(name))
        local r = h.run_sh("npm install --no-audit --no-fund -g " .. h.quote(pkg))
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("npm error", 1, true), h.describe(r))
        -- npm also asks the registry (the proxy's refusal of it is a line of its own)
        local lines = {}
        for _, l in ipairs(cordon_lines(r)) do
            if not l:find("network policy blocked", 1, true) then lines[#lines + 1] = l end
        end
        assert.are.equal(1, #lines, h.describe(r))
        assert.truthy(lines[1]:find("the sandbox refused a write to /", 1, true), h.describe(r))
        assert.truthy(lines[1]:find("/" .. name .. " (read-only outside the workspace: --allow-write ", 1, true),
            h.describe(r))
    end)

    it("names a protected file inside the workspace and why", function()
        local ws = h.workspace()
        h.sh_ok("git init -q " .. h.quote(ws))
        -- a write of its own (git's own writes of it are judged key by key: run_git_config_spec)
        local r = h.run_sh("printf '[x]\\n' >> .git/config", { workspace = ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        local lines = cordon_lines(r)
        assert.are.equal(1, #lines, h.describe(r))
        has(r, "cordon: the sandbox refused a write to " .. ws .. "/.git/config: .git/config is protected "
            .. "inside the workspace: a command could make the host's git run a program (profile key "
            .. "readonly_in_workspace)")
        assert.is_nil(r.stderr:find("outside the workspace", 1, true), h.describe(r))
    end)

    it("says the readonly profile made the workspace read-only", function()
        local ws = h.workspace()
        local r = h.run_sh("touch made-here", { workspace = ws, flags = { "--profile", "readonly" } })
        assert.are_not.equal(0, r.code, h.describe(r))
        has(r, "cordon: the sandbox refused a write to " .. ws .. "/made-here: the readonly profile makes "
            .. "the workspace read-only")
        assert.is_nil(r.stderr:find("outside the workspace", 1, true), h.describe(r))
        assert.are.equal(1, #cordon_lines(r), h.describe(r))
    end)

    it("names the path of cargo's error chain, given on a line before the errno", function()
        if not on_path("cargo") then h.skip("no cargo here") end
        local dir = h.tmpdir()
        local r = h.run_sh("cargo new -q --vcs none " .. h.quote(dir .. "/hello"))
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("Caused by:", 1, true), h.describe(r))
        has(r, "cordon: the sandbox refused a write to " .. dir .. "/hello (read-only outside the workspace: "
            .. "--allow-write " .. dir .. ")")
        assert.are.equal(1, #cordon_lines(r), h.describe(r))
    end)

    it("names javac's output directory when javac names none", function()
        if not on_path("javac") then h.skip("no javac here") end
        local ws, dir = h.workspace(), h.tmpdir()
        h.write_file(ws .. "/Hi.java", "public class Hi {}\n")
        local r = h.run_sh("javac -d " .. h.quote(dir .. "/classes") .. " Hi.java", { workspace = ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("could not create parent directories", 1, true), h.describe(r))
        has(r, "cordon: the sandbox refused a write to " .. dir .. "/classes (read-only outside the workspace: "
            .. "--allow-write " .. dir .. ")")
    end)

    it("asks a layer's detector only about lines holding one of its markers", function()
        -- a detector that fails whenever it is asked: the failure's line says when it was
        local policy = h.tmpdir() .. "/policy.lua"
        h.write_file(policy, 'return { refusal_markers = { "MARKED" }, '
            .. 'refusal = function() error("asked") end }\n')
        local quiet = h.run_sh("echo plain; echo plain >&2", { flags = { "--policy", policy } })
        assert.are.equal(0, quiet.code, h.describe(quiet))
        assert.is_nil(quiet.stderr:find("refusal detection failed", 1, true), h.describe(quiet))
        local marked = h.run_sh("echo MARKED >&2", { flags = { "--policy", policy } })
        assert.are.equal(0, marked.code, h.describe(marked))
        assert.truthy(marked.stderr:find("refusal detection failed", 1, true), h.describe(marked))
    end)
end)

local NOBODY = 65534

local function is_root() return h.chomp(h.sh_ok("id -u")) == "0" end

--- The runs of a row: as uid 65534 (its home and workspace its own), and as root when the spec
-- runs as root. Each { uid = N|nil, home, ws, label }.
local function callers()
    local out = {}
    if is_root() then
        local home = h.secret_home(NOBODY)
        h.sh_ok("chmod 755 " .. h.quote(home))
        out[#out + 1] = { uid = NOBODY, home = home, ws = h.workspace(nil, NOBODY), label = "uid 65534" }
    end
    out[#out + 1] = { home = h.secret_home(), ws = h.workspace(), label = "the spec's own uid" }
    return out
end

local function as_user(c)
    return c.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(c.uid, c.uid) or ""
end

local function run_as(c, script, flags, env)
    return h.run_sh(script, { uid = c.uid, home = c.home, workspace = c.ws, flags = flags, env = env })
end

describe("cordon run: issue 28's refusal lines, with real programs", function()
    after_each(h.cleanup)

    it("ssh and git over ssh: the hidden keys and --allow-ssh-agent", function()
        if not is_root() then h.skip("needs root to run sshd and to add a user") end
        for _, prog in ipairs({ "/usr/sbin/sshd", "ssh", "ssh-keygen", "ssh-agent", "ssh-add", "git", "useradd" }) do
            if h.sh("command -v " .. prog).code ~= 0 then h.skip("needs " .. prog) end
        end
        -- sshd on 127.0.0.2 (a stand-in for a remote host), taking one user key
        local dir = h.tmpdir()
        h.sh_ok(("chmod 755 %s && ssh-keygen -q -t ed25519 -N '' -f %s/host_key"):format(h.quote(dir), h.quote(dir)))
        local port = tonumber(h.chomp(h.sh_ok(h.python .. " -c " .. h.quote(
            "import socket; s = socket.socket(); s.bind(('127.0.0.2', 0)); print(s.getsockname()[1])"))))
        h.write_file(dir .. "/sshd_config", table.concat({
            "Port " .. port, "ListenAddress 127.0.0.2", "HostKey " .. dir .. "/host_key",
            "AuthorizedKeysFile " .. dir .. "/authorized_keys", "UsePAM no", "StrictModes no",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password", "PidFile none", "" }, "\n"))
        h.sh_ok("mkdir -p /run/sshd && chmod 755 /run/sshd")
        h.spawn(("/usr/sbin/sshd -D -f %s -E %s"):format(h.quote(dir .. "/sshd_config"), h.quote(dir .. "/log")))
        assert(h.wait_for(function()
            return h.sh(("bash -c 'exec 3<>/dev/tcp/127.0.0.2/%d'"):format(port)).code == 0
        end, 10), "sshd did not start")
        h.sh_ok(("git init -q --bare %s/repo.git"):format(h.quote(dir)))
        -- a user whose password-database home (ssh's ~) holds ~/.ssh/id_ed25519
        local name = "cordonrl" .. h.token():sub(1, 6)
        local home = h.tmpdir()
        h.sh_ok(("chmod 755 %s && useradd -M -d %s -s /bin/bash %s"):format(h.quote(home), h.quote(home), name))
        h.defer(function() os.execute("userdel " .. name .. " 2>/dev/null") end)
        local uid = tonumber(h.chomp(h.sh_ok("id -u " .. name)))
        h.sh_ok(("mkdir -m 700 %s/.ssh && ssh-keygen -q -t ed25519 -N '' -f %s/.ssh/id_ed25519 && "
            .. "cat %s/.ssh/id_ed25519.pub > %s/authorized_keys && "
            .. "echo \"[127.0.0.2]:%d $(cut -d' ' -f1,2 %s/host_key.pub)\" > %s/.ssh/known_hosts")
            :format(h.quote(home), h.quote(home), h.quote(home), h.quote(dir), port, h.quote(dir), h.quote(home)))
        local ws = h.workspace(nil, uid)
        h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(home)))
        local c = { uid = uid, home = home, ws = ws }
        local ssh = ("ssh -o BatchMode=yes -p %d root@127.0.0.2 echo reached"):format(port)
        local git = ("git ls-remote ssh://root@127.0.0.2:%d%s/repo.git && echo listed"):format(port, dir)
        local allow = { "--network-allow", "tcp://127.0.0.2:" .. port }
        -- outside, the user's key logs in
        local out = h.sh(("cd %s && %senv HOME=%s %s"):format(h.quote(ws), as_user(c), h.quote(home), ssh))
        assert.are.equal("reached\n", out.stdout, h.describe(out))
        for _, cmd in ipairs({ ssh, git }) do
            local r = run_as(c, cmd, allow)
            assert.are_not.equal(0, r.code, h.describe(r))
            has(r, "Permission denied (publickey)")
            has(r, "cordon: the ssh server took no key: the private keys in " .. home .. "/.ssh are hidden "
                .. "inside the sandbox (" .. home .. "/.ssh/id_ed25519 exists on the host); --allow-ssh-agent "
                .. "lets your ssh-agent sign inside, the keys never enter")
            assert.are.equal(1, #cordon_lines(r), h.describe(r))
        end
        -- the flag the line names: the user's agent signs inside, the key stays out
        local agent = h.chomp(h.sh_ok(("%senv HOME=%s ssh-agent -s"):format(as_user(c), h.quote(home))))
        local sock = agent:match("SSH_AUTH_SOCK=([^;]+);")
        local apid = agent:match("SSH_AGENT_PID=(%d+);")
        h.defer(function() os.execute("kill " .. apid .. " 2>/dev/null") end)
        h.sh_ok(("%senv HOME=%s SSH_AUTH_SOCK=%s ssh-add -q %s/.ssh/id_ed25519"):format(as_user(c),
            h.quote(home), h.quote(sock), h.quote(home)))
        for _, cmd in ipairs({ ssh, git }) do
            local r = h.run_sh(cmd, { uid = uid, home = home, workspace = ws, env = { SSH_AUTH_SOCK = sock },
                flags = { "--allow-ssh-agent", table.unpack(allow) } })
            assert.are.equal(0, r.code, h.describe(r))
            assert.truthy(r.stdout:find("reached\n", 1, true) or r.stdout:find("listed\n", 1, true), h.describe(r))
            assert.are.equal(0, #cordon_lines(r), h.describe(r))
        end
    end)

    it("gpg --clearsign: the hidden keys and --allow-gpg-agent", function()
        if h.sh("command -v gpg && command -v gpgconf").code ~= 0 then h.skip("needs gpg") end
        for _, c in ipairs(callers()) do
            local env = ("%senv HOME=%s "):format(as_user(c), h.quote(c.home))
            h.sh_ok(("rm -rf %s/.gnupg && %sgpg --batch -q --passphrase '' --quick-gen-key 'Spec <spec@test>' "
                .. "ed25519 sign never"):format(h.quote(c.home), env))
            h.defer(function() os.execute(env .. "gpgconf --kill all") end)
            h.write_file(c.ws .. "/m.txt", "hello\n")
            h.sh_ok("chmod 644 " .. h.quote(c.ws .. "/m.txt"))
            local out = h.sh(("cd %s && %sgpg --batch --clearsign -o - m.txt"):format(h.quote(c.ws), env))
            assert.truthy(out.stdout:find("BEGIN PGP SIGNATURE", 1, true), c.label .. h.describe(out))
            local r = run_as(c, "gpg --batch --clearsign -o - m.txt")
            assert.are_not.equal(0, r.code, c.label .. h.describe(r))
            has(r, "No secret key")
            has(r, "cordon: gpg found no secret key: " .. c.home .. "/.gnupg is hidden inside the sandbox "
                .. "(it exists on the host); --allow-gpg-agent lets your gpg-agent sign and decrypt inside")
            assert.are.equal(1, #cordon_lines(r), c.label .. h.describe(r))
            r = run_as(c, "gpg --batch --clearsign -o - m.txt 2>/dev/null", { "--allow-gpg-agent" })
            assert.are.equal(0, r.code, c.label .. h.describe(r))
            assert.truthy(r.stdout:find("BEGIN PGP SIGNATURE", 1, true), c.label .. h.describe(r))
            -- git commit -S: git's own line, the same flag
            h.sh_ok(("cd %s && %sgit init -q ."):format(h.quote(c.ws), as_user(c)))
            local commit = "git -c user.name=Spec -c user.email=spec@test commit -q -S --allow-empty -m signed"
            r = run_as(c, commit)
            assert.are.equal(128, r.code, c.label .. h.describe(r))
            has(r, "gpg failed to sign the data")
            has(r, "--allow-gpg-agent")
            assert.are.equal(1, #cordon_lines(r), c.label .. h.describe(r))
            r = run_as(c, commit .. " && git log --format=%G?", { "--allow-gpg-agent" })
            assert.are.equal(0, r.code, c.label .. h.describe(r))
            assert.truthy(r.stdout:match("^[GU]\n$"), c.label .. h.describe(r)) -- signed
            assert.are.equal(0, #cordon_lines(r), c.label .. h.describe(r))
        end
    end)

    it("--network-allow 127.0.0.1:PORT: the sandbox's loopback is its own, --allow-host-port reaches the host's", function()
        local srv = h.server("http")
        local url = ("http://127.0.0.1:%d/probe.txt"):format(srv.port)
        local out = h.sh("curl -sS --noproxy '*' " .. url)
        assert.are.equal(srv.marker .. "\n", out.stdout, h.describe(out)) -- the host serves it
        local hint = ("--allow-host-port %d"):format(srv.port)
        for _, c in ipairs(callers()) do
            local r = run_as(c, "curl -sS " .. url, { "--network-allow", "127.0.0.1:" .. srv.port })
            assert.are.equal(7, r.code, c.label .. h.describe(r))
            has(r, ("cordon: the network rule 127.0.0.1:%d reaches the host only through the proxy, which "
                .. "clients skip for 127.0.0.1, localhost and ::1 (NO_PROXY): they reach the sandbox's own "
                .. "loopback; %s makes the host's 127.0.0.1:%d reachable inside"):format(srv.port, hint, srv.port))
            has(r, ("cordon: nothing listens on 127.0.0.1:%d inside: the sandbox's loopback is its own, not "
                .. "the host's (the host's service on port %d is reached with %s)"):format(srv.port, srv.port, hint))
            -- Python names no port in its line: the command does
            r = run_as(c, h.python .. " -c " .. h.quote(("import urllib.request; "
                .. "urllib.request.urlopen('http://localhost:%d/probe.txt')"):format(srv.port)))
            assert.are.equal(1, r.code, c.label .. h.describe(r))
            has(r, "(the host's service on port " .. srv.port .. " is reached with " .. hint .. ")")
            assert.are.equal(1, #cordon_lines(r), c.label .. h.describe(r))
            -- the flag the line names
            r = run_as(c, "curl -sS " .. url, { "--allow-host-port", tostring(srv.port) })
            assert.are.equal(0, r.code, c.label .. h.describe(r))
            assert.are.equal(srv.marker .. "\n", r.stdout, c.label .. h.describe(r))
            assert.are.equal(0, #cordon_lines(r), c.label .. h.describe(r))
            -- a port the host does not serve either: the command's own failure, no line
            h.sh_ok("kill " .. srv.pid)
            assert(h.wait_for(function() return h.sh("curl -s --noproxy '*' " .. url).code == 7 end, 10))
            r = run_as(c, "curl -sS " .. url)
            assert.are.equal(7, r.code, c.label .. h.describe(r))
            assert.are.equal(0, #cordon_lines(r), c.label .. h.describe(r))
            srv = h.server("http")
            url = ("http://127.0.0.1:%d/probe.txt"):format(srv.port)
            hint = ("--allow-host-port %d"):format(srv.port)
        end
    end)

    it("root's apt-get install: the system is read-only to every sandbox, installs belong outside", function()
        if not is_root() then h.skip("needs root: apt-get as root is the row") end
        if h.sh("command -v apt-get").code ~= 0 then h.skip("needs apt-get") end
        -- outside, root may open apt's lock for writing (asked without taking it: another
        -- apt on the machine may hold it); inside it may not
        local out = h.sh("test -w /var/lib/dpkg/lock-frontend")
        assert.are.equal(0, out.code, h.describe(out))
        local line = "cordon: apt-get cannot change the system inside the sandbox: its files (/usr, /etc, "
            .. "/var/lib/dpkg, /var/lib/apt) are read-only to every sandbox, root's too; installing and "
            .. "updating packages belongs outside it (run the command outside the sandbox)"
        local c = callers()
        local root = c[#c]
        local r = run_as(root, "test -w /var/lib/dpkg/lock-frontend")
        assert.are.equal(1, r.code, h.describe(r))
        r = run_as(root, "apt-get install -y hello")
        assert.are.equal(100, r.code, h.describe(r))
        has(r, "are you root?")
        has(r, line)
        assert.are.equal(1, #cordon_lines(r), h.describe(r))
        -- as uid 65534 apt says the same outside: its uid, not the sandbox, so no line
        out = h.sh(as_user(c[1]) .. "apt-get install -y hello")
        assert.are.equal(100, out.code, h.describe(out))
        r = run_as(c[1], "apt-get install -y hello")
        assert.are.equal(100, r.code, h.describe(r))
        assert.are.equal(0, #cordon_lines(r), h.describe(r))
    end)

    it("mv .git .git2: the repository's .git is held in place by cordon", function()
        for _, c in ipairs(callers()) do
            h.sh_ok(("cd %s && %sgit init -q . && %sgit -c user.name=s -c user.email=s@t commit -q --allow-empty -m one")
                :format(h.quote(c.ws), as_user(c), as_user(c)))
            -- outside, mv renames it (and back)
            h.sh_ok(("cd %s && %smv .git .git2 && %smv .git2 .git"):format(h.quote(c.ws), as_user(c), as_user(c)))
            local r = run_as(c, "mv .git .git2")
            assert.are.equal(1, r.code, c.label .. h.describe(r))
            has(r, "Device or resource busy")
            has(r, "cordon: the sandbox holds the repository's " .. c.ws .. "/.git in place (its hooks and "
                .. "config are protected inside): renaming or removing it is done outside the sandbox")
            assert.are.equal(1, #cordon_lines(r), c.label .. h.describe(r))
            local log = h.sh(("cd %s && %sgit log --format=%%s"):format(h.quote(c.ws), as_user(c)))
            assert.are.equal("one\n", log.stdout, c.label .. h.describe(log))
            assert.is_nil(h.read_file(c.ws .. "/.git2/HEAD"), c.label)
        end
    end)
end)

describe("cordon run: an ordinary successful run prints nothing of cordon's", function()
    after_each(h.cleanup)

    it("npm test prints no cordon line: coding turns npm's update check off", function()
        if not on_path("npm") then h.skip("no npm here") end
        for _, c in ipairs(callers()) do
            h.write_file(c.ws .. "/package.json", '{"name":"x","version":"1.0.0","scripts":{"test":"echo ok"}}\n')
            h.sh_ok("chmod 644 " .. h.quote(c.ws .. "/package.json"))
            local r = run_as(c, "npm test")
            assert.are.equal(0, r.code, c.label .. h.describe(r))
            assert.truthy(r.stdout:find("ok\n", 1, true), c.label .. h.describe(r))
            assert.are.equal(0, #cordon_lines(r), c.label .. h.describe(r))
            -- with the check on (a fresh home: it is due), npm asks the registry on the side
            -- and the refusal is named though the command succeeded; npm skips the check where
            -- CI is set (as it is in CI), so not here
            r = run_as(c, "env -u CI -u CONTINUOUS_INTEGRATION NPM_CONFIG_UPDATE_NOTIFIER=true npm test")
            assert.are.equal(0, r.code, c.label .. h.describe(r))
            has(r, "cordon: the sandbox's network policy blocked registry.npmjs.org:443")
        end
    end)

    it("a limit the machine cannot apply is said once per machine", function()
        for _, c in ipairs(callers()) do
            local state = h.tmpdir()
            if c.uid then h.sh_ok(("chown %d:%d %s"):format(c.uid, c.uid, h.quote(state))) end
            local env = { XDG_STATE_HOME = state }
            local r = run_as(c, "true", { "--profile", "strict" }, env)
            assert.are.equal(0, r.code, c.label .. h.describe(r))
            local said = r.stderr:match("cordon: no cgroup for this sandbox [^\n]* not applied %(said once on this "
                .. "machine: cordon doctor lists it%)")
            if said then
                assert.are.equal(1, #cordon_lines(r), c.label .. h.describe(r))
                r = run_as(c, "true", { "--profile", "strict" }, env)
                assert.are.equal(0, r.code, c.label .. h.describe(r))
                assert.are.equal(0, #cordon_lines(r), c.label .. h.describe(r))
                local marker = h.sh("cat " .. h.quote(state) .. "/cordon/said/*").stdout
                assert.truthy(marker:find("not applied", 1, true), c.label .. marker)
            else
                -- this machine applies every limit strict asks for: nothing said, ever
                assert.are.equal(0, #cordon_lines(r), c.label .. h.describe(r))
            end
        end
    end)
end)
