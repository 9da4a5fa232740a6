-- spec/04-engine/run_sandbox_spec.lua — what the sandbox of `cordon run` looks like from inside:
-- namespaces, the file system, hidden paths, privileges, network, processes, terminals.
-- Each fact is checked the way a user would check it, against the host after the run.
-- Drives the built binary ($CORDON_BIN); loopback only; runs as root (some cases drop to
-- uid 65534 with setpriv).
local h = require("spec.helpers")

local NOBODY = 65534

local ok = h.ok

local function fails_with(r, pattern)
    assert.are_not.equal(0, r.code, "expected a failure\n" .. h.describe(r))
    assert.truthy((r.stdout .. r.stderr):match(pattern),
        "expected output matching '" .. pattern .. "'\n" .. h.describe(r))
end

describe("cordon run: namespaces", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    for _, kind in ipairs({ "user", "mnt", "pid", "net", "ipc", "uts" }) do
        it("runs the command in its own " .. kind .. " namespace", function()
            local r = ok(h.cordon({ "run", "--", "readlink", "/proc/self/ns/" .. kind }))
            local inside = h.chomp(r.stdout)
            assert.truthy(inside:match("^" .. kind .. ":%[%d+%]$"), h.describe(r))
            assert.are_not.equal(h.host_ns(kind), inside)
        end)
    end

    it("--unrestricted-network keeps the host's network namespace", function()
        local r = ok(h.cordon({ "run", "--unrestricted-network", "--", "readlink", "/proc/self/ns/net" }))
        assert.are.equal(h.host_ns("net"), h.chomp(r.stdout))
    end)

    -- init makes the network namespace before the profile is known; a profile (here through a
    -- --policy layer) that wants the host's network gets an init that makes none.
    it("a profile's network.unrestricted keeps the host's network namespace", function()
        local dir = h.tmpdir()
        local policy = dir .. "/unrestricted.lua"
        h.write_file(policy, "return { profile = function(input, next)\n" ..
            "  local p = next(input)\n  p.network = p.network or {}\n" ..
            "  p.network.unrestricted = true\n  return p\nend }\n")
        local r = ok(h.cordon({ "run", "--policy", policy, "--", "readlink", "/proc/self/ns/net" }))
        assert.are.equal(h.host_ns("net"), h.chomp(r.stdout))
        -- and the other way round: a policy can keep the namespace despite the flag
        h.write_file(policy, "return { profile = function(input, next)\n" ..
            "  local p = next(input)\n  p.network = p.network or {}\n" ..
            "  p.network.unrestricted = false\n  return p\nend }\n")
        r = ok(h.cordon({ "run", "--unrestricted-network", "--policy", policy, "--",
                          "readlink", "/proc/self/ns/net" }))
        assert.are_not.equal(h.host_ns("net"), h.chomp(r.stdout))
    end)
end)

describe("cordon run: file system", function()
    after_each(h.cleanup)

    it("host /etc is read-only", function()
        local tok = h.token()
        local r = h.run_sh("touch /etc/cordon-spec-" .. tok)
        fails_with(r, "Read%-only file system")
        assert.is_nil(h.read_file("/etc/cordon-spec-" .. tok))
    end)

    it("host /usr is read-only", function()
        local tok = h.token()
        local r = h.run_sh("touch /usr/cordon-spec-" .. tok)
        fails_with(r, "Read%-only file system")
        assert.is_nil(h.read_file("/usr/cordon-spec-" .. tok))
    end)

    it("the workspace is writable and files belong to the caller (root)", function()
        local ws = h.workspace()
        ok(h.run_sh("echo hello > new.txt && mkdir d && echo x > d/f", { workspace = ws }))
        assert.are.equal("hello\n", h.read_file(ws .. "/new.txt"))
        assert.are.equal("0:0\n", h.sh_ok("stat -c %u:%g " .. h.quote(ws .. "/new.txt")))
    end)

    it("the workspace is writable and files belong to the caller (uid 65534) #privileged", function()
        local ws = h.workspace(nil, NOBODY)
        local home = h.secret_home(NOBODY)
        ok(h.run_sh("echo hello > new.txt", { workspace = ws, uid = NOBODY, home = home }))
        assert.are.equal("hello\n", h.read_file(ws .. "/new.txt"))
        assert.are.equal(NOBODY .. "\n", h.sh_ok("stat -c %u " .. h.quote(ws .. "/new.txt")))
    end)

    it("the command starts in the workspace", function()
        local ws = h.workspace()
        local other = h.tmpdir()
        local r = ok(h.cordon({ "run", "--workspace", ws, "--", "pwd" }, { cwd = other }))
        assert.are.equal(ws .. "\n", r.stdout)
    end)

    it("--allow-write DIR is writable", function()
        local extra = h.tmpdir()
        ok(h.run_sh("echo granted > " .. h.quote(extra .. "/f"), { flags = { "--allow-write", extra } }))
        assert.are.equal("granted\n", h.read_file(extra .. "/f"))
    end)

    it("other host directories are not writable, even where the host could write", function()
        local other = h.tmpdir()
        local r = h.run_sh("echo nope > " .. h.quote(other .. "/f"))
        fails_with(r, "Read%-only file system")
        assert.is_nil(h.read_file(other .. "/f"))
    end)

    it("/tmp is private: writes inside do not reach the host's /tmp", function()
        local tok = h.token()
        local r = h.run_sh("echo inside > /tmp/cordon-spec-in-" .. tok .. " && cat /tmp/cordon-spec-in-" .. tok)
        ok(r)
        assert.are.equal("inside\n", r.stdout)
        assert.is_nil(h.read_file("/tmp/cordon-spec-in-" .. tok))
    end)

    it("--hide of a host path under /tmp leaves the private /tmp writable", function()
        local dir = h.tmpdir("/tmp")
        local r = ok(h.run_sh("echo inside > /tmp/cordon-spec-w && cat /tmp/cordon-spec-w && ! test -e "
            .. h.quote(dir), { flags = { "--hide", dir } }))
        assert.are.equal("inside\n", r.stdout)
    end)

    it("/tmp is private: the host's /tmp files are not visible", function()
        local tok = h.token()
        local path = "/tmp/cordon-spec-host-" .. tok
        h.write_file(path, "host\n")
        h.defer(function() os.remove(path) end)
        local r = h.run_sh("stat " .. path)
        fails_with(r, "No such file or directory")
    end)

    it("a workspace under /tmp stays visible and writable", function()
        local ws = h.workspace("/tmp")
        h.write_file(ws .. "/from-host", "host\n")
        local tok = h.token()
        local other = "/tmp/cordon-spec-other-" .. tok
        h.write_file(other, "x")
        h.defer(function() os.remove(other) end)
        local r = ok(h.run_sh("cat from-host && echo inside > from-sandbox && ! test -e " .. other,
            { workspace = ws }))
        assert.are.equal("host\n", r.stdout)
        assert.are.equal("inside\n", h.read_file(ws .. "/from-sandbox"))
    end)

    it("/dev holds null, zero, full, random, urandom, tty, pts/ and shm/", function()
        local r = ok(h.run_sh([[
            for d in null zero full random urandom tty; do [ -c /dev/$d ] || echo "missing /dev/$d"; done
            [ -d /dev/pts ] || echo "missing /dev/pts"
            [ -d /dev/shm ] || echo "missing /dev/shm"
            [ "$(head -c 4 /dev/urandom | wc -c)" = 4 ] || echo "urandom unreadable"
            echo x > /dev/null || echo "/dev/null unwritable"
        ]]))
        assert.are.equal("", r.stdout, h.describe(r))
    end)

    it("/dev has no host devices (block devices, mem, kmsg)", function()
        local host_devs = { "/dev/mem", "/dev/kmem", "/dev/port", "/dev/kmsg", "/dev/vda", "/dev/sda" }
        for dev in h.sh_ok("find /dev -maxdepth 1 -type b"):gmatch("[^\n]+") do
            host_devs[#host_devs + 1] = dev
        end
        local script = {}
        for _, d in ipairs(host_devs) do
            script[#script + 1] = ("[ -e %s ] && echo present %s"):format(d, d)
        end
        script[#script + 1] = "true"
        local r = ok(h.run_sh(table.concat(script, "\n")))
        assert.are.equal("", r.stdout, h.describe(r))
    end)

    it("/dev/shm is writable and private", function()
        local tok = h.token()
        ok(h.run_sh("echo x > /dev/shm/cordon-spec-" .. tok))
        assert.is_nil(h.read_file("/dev/shm/cordon-spec-" .. tok))
    end)

    it("/proc shows only the sandbox's processes", function()
        local tok = h.token()
        local pid = h.spawn("sleep 300." .. tok:sub(1, 6):gsub("%a", "1"))
        local r = ok(h.run_sh("ls /proc | grep -c '^[0-9]*$'; test -e /proc/" .. pid .. " && echo visible; true"))
        local count = tonumber(r.stdout:match("^(%d+)"))
        assert.is_number(count, h.describe(r))
        assert.is_true(count < 20, "too many pids in /proc\n" .. h.describe(r))
        assert.is_nil(r.stdout:match("visible"), "a host process is visible\n" .. h.describe(r))
    end)

    it("PID 1 is cordon's init", function()
        -- comm, or the program name (argv[0]) of its command line: the rest of the command
        -- line may name a workspace path that contains "cordon" too
        local r = ok(h.run_sh("cat /proc/1/comm; tr '\\0' '\\n' < /proc/1/cmdline | head -1"))
        local comm, argv0 = r.stdout:match("^([^\n]*)\n([^\n]*)")
        assert.truthy(comm, h.describe(r))
        assert.truthy(comm:match("cordon") or argv0:match("cordon[^/]*$"), h.describe(r))
    end)
end)

describe("cordon run: hidden paths", function()
    after_each(h.cleanup)

    -- (~/.ssh itself shows known_hosts, config and public keys: its private keys are hidden)
    local home_paths = { ".ssh/id_rsa", ".aws", ".gnupg", ".config/gh", ".netrc", ".docker", ".kube" }
    for _, rel in ipairs(home_paths) do
        it("~/" .. rel .. " looks missing (ENOENT)", function()
            local home, marker = h.secret_home()
            assert.truthy(h.read_file(home .. "/" .. rel) or h.sh("test -d " .. home .. "/" .. rel).code == 0)
            local r = h.run_sh('stat "$HOME/' .. rel .. '"', { home = home })
            fails_with(r, "No such file or directory")
            assert.is_nil(r.stdout:match(marker))
        end)
    end

    for _, path in ipairs({ "/etc/shadow", "/etc/gshadow" }) do
        it(path .. " looks missing (ENOENT), even to root", function()
            local r = h.run_sh("stat " .. path .. "; cat " .. path)
            fails_with(r, "No such file or directory")
            assert.is_nil(r.stdout:match("root:"), h.describe(r))
        end)
    end

    it("the rest of HOME stays visible (~/.config, ordinary files)", function()
        local home = h.secret_home()
        h.write_file(home .. "/.config/visible.txt", "visible\n")
        local r = ok(h.run_sh('cat "$HOME/.config/visible.txt"', { home = home }))
        assert.are.equal("visible\n", r.stdout)
    end)

    it("hiding creates nothing in the workspace, HOME or /etc on the host", function()
        local ws = h.workspace()
        h.write_file(ws .. "/file", "x")
        local home = h.secret_home()
        local before = { h.tree(ws), h.tree(home), h.sh_ok("ls -a /etc"), h.sh_ok("ls -a /root") }
        -- (cordon's own state, the home layer, and its cache live outside this home: not hiding's)
        local r = h.run_sh('stat "$HOME/.ssh" /etc/shadow; ls -a "$HOME" /etc > /dev/null; true',
            { workspace = ws, home = home, env = { XDG_STATE_HOME = h.tmpdir(), XDG_CACHE_HOME = h.tmpdir() } })
        ok(r)
        local after = { h.tree(ws), h.tree(home), h.sh_ok("ls -a /etc"), h.sh_ok("ls -a /root") }
        assert.are.same(before, after)
    end)

    it("hiding paths that do not exist creates nothing", function()
        local home = h.tmpdir()
        local ws = h.workspace()
        local before = { h.tree(home), h.tree(ws) }
        local r = h.run_sh('stat "$HOME/.ssh" "$HOME/.netrc"',
            { workspace = ws, home = home, env = { XDG_STATE_HOME = h.tmpdir(), XDG_CACHE_HOME = h.tmpdir() } })
        fails_with(r, "No such file or directory")
        assert.are.same(before, { h.tree(home), h.tree(ws) })
    end)

    it("~/.ssh stays hidden when the workspace is HOME", function()
        local home, marker = h.secret_home()
        local r = h.run_sh("cat .ssh/id_rsa", { workspace = home, home = home, flags = { "--allow-home-workspace" } })
        fails_with(r, "No such file or directory")
        assert.is_nil(r.stdout:match(marker))
    end)

    it("~/.ssh is hidden for an unprivileged caller too #privileged", function()
        local home, marker = h.secret_home(NOBODY)
        local ws = h.workspace(nil, NOBODY)
        local r = h.run_sh('cat "$HOME/.ssh/id_rsa"', { workspace = ws, home = home, uid = NOBODY })
        fails_with(r, "No such file or directory")
        assert.is_nil(r.stdout:match(marker))
    end)

    it("--hide FILE makes a file look missing", function()
        local dir = h.tmpdir()
        h.write_file(dir .. "/secret.txt", "cordon-spec-hidden-file\n")
        local r = h.run_sh("cat " .. h.quote(dir .. "/secret.txt"), { flags = { "--hide", dir .. "/secret.txt" } })
        fails_with(r, "No such file or directory")
        assert.is_nil(r.stdout:match("cordon%-spec%-hidden%-file"))
    end)

    it("--hide DIR makes a directory look missing", function()
        local dir = h.tmpdir()
        h.sh_ok("mkdir " .. h.quote(dir .. "/secrets"))
        h.write_file(dir .. "/secrets/key", "cordon-spec-hidden-dir\n")
        local r = h.run_sh("ls " .. h.quote(dir .. "/secrets") .. "; cat " .. h.quote(dir .. "/secrets/key"),
            { flags = { "--hide", dir .. "/secrets" } })
        fails_with(r, "No such file or directory")
        assert.is_nil(r.stdout:match("cordon%-spec%-hidden%-dir"))
        assert.is_nil(r.stdout:match("key"))
    end)

    it("--hide of a file inside the workspace hides it and leaves the workspace as it was", function()
        local ws = h.workspace()
        h.write_file(ws .. "/.env", "CORDON_SPEC_ENV_SECRET=1\n")
        local before = h.tree(ws)
        local r = h.run_sh("cat .env", { workspace = ws, flags = { "--hide", ws .. "/.env" } })
        fails_with(r, "No such file or directory")
        assert.is_nil(r.stdout:match("CORDON_SPEC_ENV_SECRET"))
        assert.are.equal(before, h.tree(ws))
        assert.are.equal("CORDON_SPEC_ENV_SECRET=1\n", h.read_file(ws .. "/.env"))
    end)

    it("a secret under /root is not readable by root inside", function()
        local path = "/root/.cordon-spec-secret-" .. h.token()
        h.write_file(path, "cordon-spec-root-secret\n", "600")
        h.defer(function() os.remove(path) end)
        local r = h.run_sh("cat " .. path)
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.is_nil(r.stdout:match("cordon%-spec%-root%-secret"), h.describe(r))
    end)

    it("a file of another user with mode 600 is not readable by root inside (no DAC override)", function()
        local dir = h.tmpdir()
        h.sh_ok("chmod 755 " .. h.quote(dir))
        local path = dir .. "/other-user-secret"
        h.write_file(path, "cordon-spec-other-secret\n", "600")
        h.sh_ok("chown 4242:4242 " .. h.quote(path))
        local r = h.run_sh("cat " .. h.quote(path))
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.is_nil(r.stdout:match("cordon%-spec%-other%-secret"), h.describe(r))
    end)
end)

describe("cordon run: privileges", function()
    after_each(h.cleanup)

    local function status_of(r)
        local t = {}
        for k, v in r.stdout:gmatch("(%w+):%s*(%S+)") do t[k] = v end
        return t
    end

    it("has no capabilities and no_new_privs (root caller, root_writes off)", function()
        local cfg = h.profile_dir("nowrites", 'return { extends = "coding", root_writes = false }')
        local r = ok(h.run_sh("grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status",
            { env = { XDG_CONFIG_HOME = cfg }, flags = { "--profile", "nowrites" } }))
        local st = status_of(r)
        assert.are.equal("0000000000000000", st.CapEff, h.describe(r))
        assert.are.equal("0000000000000000", st.CapPrm, h.describe(r))
        assert.are.equal("0000000000000000", st.CapAmb, h.describe(r))
        assert.are.equal("0000000000000000", st.CapBnd, h.describe(r))
        assert.are.equal("1", st.NoNewPrivs, h.describe(r))
    end)

    it("keeps only root writes' three file capabilities and no_new_privs (root caller, coding)", function()
        if h.chomp(h.sh_ok("id -u")) ~= "0" then h.skip("needs root: root writes are for a caller of uid 0") end
        local r = ok(h.run_sh("grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status"))
        local st = status_of(r)
        -- CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER (docs/root-callers.md; run_root_owner_spec.lua)
        for _, set in ipairs({ "CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd" }) do
            assert.are.equal("000000000000000b", st[set], set .. "\n" .. h.describe(r))
        end
        assert.are.equal("1", st.NoNewPrivs, h.describe(r))
    end)

    it("has no capabilities and no_new_privs (uid 65534 caller) #privileged", function()
        local ws = h.workspace(nil, NOBODY)
        local r = ok(h.run_sh("grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status",
            { workspace = ws, uid = NOBODY, home = h.secret_home(NOBODY) }))
        local st = status_of(r)
        assert.are.equal("0000000000000000", st.CapEff, h.describe(r))
        assert.are.equal("0000000000000000", st.CapBnd, h.describe(r))
        assert.are.equal("1", st.NoNewPrivs, h.describe(r))
    end)

    it("seccomp refuses keyctl with EPERM", function()
        local r = ok(h.run_py("import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
            .. "print(libc.syscall(250, 0, 0, 0, 0, 0), ctypes.get_errno())"))
        assert.are.equal("-1 1\n", r.stdout)
    end)

    it("creating a user namespace fails", function()
        local r = h.run_sh("unshare -U true")
        fails_with(r, "Operation not permitted")
    end)
end)

describe("cordon run: network", function()
    after_each(h.cleanup)

    it("a host loopback service is unreachable (connection refused)", function()
        local srv = h.server("http")
        local r = h.run_py(([[
import socket
try:
    socket.create_connection(("127.0.0.1", %d), timeout=5)
    print("connected")
except ConnectionRefusedError:
    print("refused")
except OSError as e:
    print("error", e.errno)
]]):format(srv.port))
        ok(r)
        assert.are.equal("refused\n", r.stdout, h.describe(r))
    end)

    it("curl to a host loopback service fails", function()
        local srv = h.server("http")
        local r = h.run_sh(("curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:%d/probe.txt"):format(srv.port))
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.is_nil(r.stdout:match(srv.marker), h.describe(r))
    end)

    it("--unrestricted-network reaches a host loopback service", function()
        local srv = h.server("http")
        local r = ok(h.run_sh(("curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:%d/probe.txt"):format(srv.port),
            { flags = { "--unrestricted-network" } }))
        assert.are.equal(srv.marker .. "\n", r.stdout)
    end)

    it("only lo exists and it is up", function()
        local r = ok(h.run_sh("ip -o link show"))
        local names = {}
        for name in r.stdout:gmatch("%d+: ([^:@]+)[:@]") do names[#names + 1] = name end
        assert.are.same({ "lo" }, names, h.describe(r))
        assert.truthy(r.stdout:match("<[^>]*%f[%w]UP%f[^%w][^>]*>"), "lo is not UP\n" .. h.describe(r))
    end)

    it("/sys/class/net shows only lo", function()
        local r = ok(h.run_sh("ls /sys/class/net"))
        assert.are.equal("lo\n", r.stdout, h.describe(r))
    end)

    it("the sandbox's own loopback works with --allow-loopback", function()
        local r = ok(h.run_py([[
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=5)
a, _ = s.accept(); a.sendall(b"pong"); print(c.recv(4).decode())
]], { flags = { "--allow-loopback" } }))
        assert.are.equal("pong\n", r.stdout)
    end)
end)

describe("cordon run: environment", function()
    after_each(h.cleanup)

    -- The environment hook answers { set, unset } (spec/02-policies checks the answer); these
    -- cases check what the engine makes of it: the coding profile's strip patterns applied by
    -- engine/base/name_glob.c, then set written over the caller's values.
    local function env_of(flags, env)
        local args = { "run" }
        for _, f in ipairs(flags) do args[#args + 1] = f end
        args[#args + 1] = "--"
        args[#args + 1] = "/usr/bin/env"
        local r = ok(h.cordon(args, { env = env }))
        local seen = {}
        for name, value in r.stdout:gmatch("([^=\n]+)=([^\n]*)") do seen[name] = value end
        return seen, r
    end

    local cases = {
        -- name, value the caller has, stripped?
        { "OPENAI_API_KEY", true }, { "_API_KEY", true }, { "API_KEY", true },
        { "OPENAI_API_KEYS", false }, { "GH_TOKEN", true }, { "A_TOKEN_TOKEN", true },
        { "TOKEN", false }, { "KEEP_TOKENS", false }, { "DB_PASSWORD", true },
        { "MY_SECRET", true }, { "MY_SECRET_NOT", true }, { "AWS_SECRET_ACCESS_KEY", true },
        { "AWS_SESSION_TOKEN", true }, { "AWS_REGION", false }, { "SSH_AUTH_SOCK", true },
        { "SSH_AUTH_SOCKET", false }, { "GPG_AGENT_INFO", true }, { "LANG", false },
    }
    it("strips the names the profile's patterns match, and only those", function()
        local env = {}
        for i, c in ipairs(cases) do env[c[1]] = "cordon-env-" .. i end
        local seen, r = env_of({}, env)
        for i, c in ipairs(cases) do
            if c[2] then
                assert.is_nil(seen[c[1]], c[1] .. " was not stripped\n" .. h.describe(r))
            else
                assert.are.equal("cordon-env-" .. i, seen[c[1]], c[1] .. " was stripped\n" .. h.describe(r))
            end
        end
        assert.are.equal("1", seen.CORDON_SANDBOX, h.describe(r))
    end)

    it("the answer's set replaces the caller's proxy variables", function()
        local seen, r = env_of({}, { HTTPS_PROXY = "http://corp.invalid:3128", no_proxy = "*" })
        assert.are.equal("http://127.0.0.1:18080", seen.HTTPS_PROXY, h.describe(r))
        assert.are.equal("localhost,127.0.0.1,::1", seen.no_proxy, h.describe(r))
    end)

    it("--unrestricted-network leaves the caller's proxy variables as they are", function()
        local seen, r = env_of({ "--unrestricted-network" }, { HTTPS_PROXY = "http://corp.invalid:3128" })
        assert.are.equal("http://corp.invalid:3128", seen.HTTPS_PROXY, h.describe(r))
    end)
end)

describe("cordon run: processes", function()
    after_each(h.cleanup)

    it("a daemonized process does not outlive cordon run", function()
        local arg = "300." .. tostring(math.random(100000, 999999))
        h.defer(function() for _, p in ipairs(h.pgrep("^sleep " .. arg)) do os.execute("kill -9 " .. p) end end)
        local r = ok(h.run_sh("setsid nohup sleep " .. arg .. " >/dev/null 2>&1 & disown; "
            .. "for i in $(seq 50); do pgrep -f 'sleep " .. arg .. "' >/dev/null && break; sleep 0.1; done"))
        assert.are.same({}, h.pgrep("^sleep " .. arg), h.describe(r))
    end)

    it("kill -9 of cordon leaves no sandboxed process alive #slow", function()
        local arg = "1000." .. tostring(math.random(100000, 999999))
        h.defer(function() for _, p in ipairs(h.pgrep("^sleep " .. arg)) do os.execute("kill -9 " .. p) end end)
        local res = h.drive({ "run", "--", "/bin/bash", "-c", "setsid sleep " .. arg .. " & sleep " .. arg .. "; wait" },
            {}, { ready_pgrep = "^sleep " .. arg, signal = "KILL", timeout = 20 })
        assert.is_true(res.ready, "the sandboxed sleep never started: " .. res.cmd)
        assert.are.equal(-9, res.returncode)
        local gone = h.wait_for(function() return #h.pgrep("^sleep " .. arg) == 0 end, 5)
        assert.is_true(gone, "left alive: " .. table.concat(h.pgrep("^sleep " .. arg), " "))
    end)

    it("starts the command with only fds 0, 1 and 2", function()
        local r = ok(h.run_sh("ls /proc/self/fd", { prefix = "exec 7</etc/hostname 9>/dev/null; " }))
        -- 3 is ls's own directory fd
        assert.are.equal("0\n1\n2\n3\n", r.stdout, h.describe(r))
    end)

    it("changing the hostname inside does not change the host's", function()
        local host = h.chomp(h.sh_ok("hostname"))
        h.run_sh("hostname cordon-spec-" .. h.token())
        assert.are.equal(host, h.chomp(h.sh_ok("hostname")))
    end)
end)

describe("cordon run: repository and policy files in the workspace", function()
    after_each(h.cleanup)

    local function git_ws()
        local ws = h.workspace()
        h.sh_ok("git init -q " .. h.quote(ws))
        h.write_file(ws .. "/a.txt", "a\n")
        return ws
    end

    it(".git/hooks is read-only", function()
        local ws = git_ws()
        local r = h.run_sh("echo 'echo pwned' > .git/hooks/pre-commit", { workspace = ws })
        fails_with(r, "Read%-only file system")
        assert.is_nil(h.read_file(ws .. "/.git/hooks/pre-commit"))
    end)

    it(".git/config is read-only (a write fails; git config of a code-running key fails)", function()
        local ws = git_ws()
        local before = h.read_file(ws .. "/.git/config")
        fails_with(h.run_sh("printf '[core]\\n\\thooksPath = x\\n' >> .git/config", { workspace = ws }),
            "Read%-only file system")
        local r = h.run_sh("git config core.hooksPath x", { workspace = ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.are.equal(before, h.read_file(ws .. "/.git/config"))
    end)

    it("git add and git commit work", function()
        local ws = git_ws()
        ok(h.run_sh("git add a.txt && git -c user.name=a -c user.email=a@b commit -q -m from-sandbox",
            { workspace = ws }))
        local log = h.sh_ok("git -C " .. h.quote(ws) .. " log --format=%s")
        assert.are.equal("from-sandbox\n", log)
    end)

    it(".cordon/ is read-only", function()
        local ws = h.workspace()
        h.sh_ok("mkdir " .. h.quote(ws .. "/.cordon"))
        h.write_file(ws .. "/.cordon/policy.lua", "-- cordon spec: project policy\n")
        local r = h.run_sh("echo 'evil()' >> .cordon/policy.lua; touch .cordon/new.lua", { workspace = ws })
        fails_with(r, "Read%-only file system")
        assert.are.equal("-- cordon spec: project policy\n", h.read_file(ws .. "/.cordon/policy.lua"))
        assert.is_nil(h.read_file(ws .. "/.cordon/new.lua"))
    end)

    it("--profile readonly makes the workspace read-only", function()
        local ws = h.workspace()
        h.write_file(ws .. "/existing", "x\n")
        local r = h.run_sh("cat existing && touch new", { workspace = ws, flags = { "--profile", "readonly" } })
        fails_with(r, "Read%-only file system")
        assert.truthy(r.stdout:match("^x\n"), "the workspace must stay readable\n" .. h.describe(r))
        assert.is_nil(h.read_file(ws .. "/new"))
    end)
end)

describe("cordon run: terminals", function()
    after_each(h.cleanup)

    it("a terminal caller gets a new pty of the same size, not its own terminal", function()
        local res = h.drive({ "run", "--", "/bin/bash", "-c", "tty; stty size; stat -L -c 'ino=%d:%i' /proc/self/fd/0" },
            {}, { pty = { 33, 101 }, timeout = 30 })
        assert.are.equal(0, res.returncode, res.output)
        assert.truthy(res.output:match("/dev/pts/%d+"), res.output)
        assert.truthy(res.output:match("33 101"), res.output)
        local ino = res.output:match("ino=(%d+:%d+)")
        assert.truthy(ino, res.output)
        assert.are_not.equal(res.outer_dev_ino, ino, "the command got the caller's terminal")
    end)

    it("without a terminal there is none inside", function()
        local r = h.cordon({ "run", "--", "tty" })
        assert.are.equal(1, r.code, h.describe(r))
        assert.truthy(r.stdout:match("not a tty"), h.describe(r))
    end)
end)

describe("cordon run: signals", function()
    after_each(h.cleanup)

    -- SIG_IGN survives fork and exec: a caller that ignores SIGPIPE (an MCP client, nohup, a
    -- shell's trap) would hand that to every command, and `yes | head` would end in EPIPE.
    it("a command starts with no signal ignored, even when its caller ignores SIGPIPE", function()
        local outside = h.sh("trap '' PIPE; grep SigIgn /proc/self/status")
        local ignored = tonumber(outside.stdout:match("SigIgn:%s+(%x+)"), 16)
        assert.truthy(ignored and ignored & 0x1000 ~= 0, "the caller must ignore SIGPIPE\n" .. h.describe(outside))
        local r = h.sh("trap '' PIPE; cd " .. h.quote(h.workspace()) .. " && exec " .. h.quote(h.bin) .. " run -- bash -c "
            .. h.quote("grep SigIgn /proc/self/status; yes | head -c 1 >/dev/null; echo \"yes ended by $(kill -l ${PIPESTATUS[0]})\""))
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:match("SigIgn:%s+0+\n"), h.describe(r))
        assert.truthy(r.stdout:match("yes ended by PIPE"), h.describe(r))
    end)
end)
