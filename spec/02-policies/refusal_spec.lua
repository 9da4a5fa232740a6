-- Specs for policies/10-refusal.lua (the `refusal` and `escalate` hooks), run under plain
-- lua5.4 in the same sandbox the engine uses (cordon.sandbox), with a `host` whose exists() and
-- is_socket() answer from a table, as `cordon policy detect` does for a recorded case.
-- 1. The corpus: every spec/fixtures/refusal/*.json (recorded by make-corpus.sh from real
--    programs in the real sandbox) must give exactly its expected kinds.
-- 2. Table-driven unit cases: formats the corpus machine cannot produce (Go, Rust, other
--    locales), wrappers, and the traps.
-- 3. The escalate decision table.
local sandbox = require("cordon.sandbox")
local cjson = require("cjson")

local root = os.getenv("CORDON_SOURCE_DIR") or "."

-- host.exists / host.is_socket from lists (a listed path's parents exist too)
local fake = { exists = {}, sockets = {} }
local function listed_or_parent(list, p)
    for _, e in ipairs(list) do
        if e == p or e:sub(1, #p + 1) == p .. "/" then return true end
    end
    return false
end
local host = {
    exists = function(p) return listed_or_parent(fake.exists, p) or listed_or_parent(fake.sockets, p) end,
    is_socket = function(p)
        for _, e in ipairs(fake.sockets) do if e == p then return true end end
        return false
    end,
    home = function() return "/home/dev" end,
}
local api = sandbox.api(_G, host, require)
local chunk = assert(loadfile(root .. "/policies/10-refusal.lua", "t", sandbox.env(api)))
local policy = chunk()

local function detect(input, host_state)
    fake.exists = host_state and host_state.exists or {}
    fake.sockets = host_state and host_state.sockets or {}
    return policy.refusal(input, function() return nil end)
end

local function kinds(list)
    local out = {}
    for _, r in ipairs(list) do out[#out + 1] = r.kind end
    table.sort(out)
    return out
end

local function sorted(t)
    local c = {}
    for i, v in ipairs(t) do c[i] = v end
    table.sort(c)
    return c
end

describe("refusal corpus (spec/fixtures/refusal)", function()
    local dir = root .. "/spec/fixtures/refusal"
    local p = io.popen("ls " .. dir .. "/*.json 2>/dev/null")
    local files = {}
    for f in p:lines() do files[#files + 1] = f end
    p:close()

    it("has recorded cases", function()
        assert.is_true(#files >= 30, "expected the recorded corpus, found " .. #files .. " files")
    end)

    for _, file in ipairs(files) do
        it(file:match("([^/]+)%.json$"), function()
            local f = assert(io.open(file))
            local case = cjson.decode(f:read("a"))
            f:close()
            local input = {
                command = case.command, exit_code = case.exit_code, stdout = case.stdout,
                stderr = case.stderr, cwd = case.cwd, writable = case.writable,
                hidden = case.hidden, network_denied = case.network_denied, truncated = false,
                -- the cases from 51 on also say where the workspace is and what is protected
                workspace = case.workspace, workspace_readonly = case.workspace_readonly,
                profile = case.profile, readonly_in_workspace = case.readonly_in_workspace,
                block_unix_sockets = case.block_unix_sockets, root = case.root,
                host_listening = case.host_listening,
            }
            local got = detect(input, case.host)
            local msg = ("command: %s\nexit: %d\nstderr: %s\nstdout: %s\ngot: %s"):format(
                case.command, case.exit_code, case.stderr, case.stdout, cjson.encode(got))
            assert.are.same(sorted(case.expect.kinds), kinds(got), msg)
            if case.expect.paths then
                local paths = {}
                for _, r in ipairs(got) do if r.path then paths[#paths + 1] = r.path end end
                assert.are.same(case.expect.paths, sorted(paths), msg)
            end
            for _, r in ipairs(got) do
                assert.is_string(r.line, msg)
                assert.is_string(r.reason, msg)
                -- the line as printed, without the terminal's colour escapes
                local o = case.stdout:gsub("\27%[[%d;]*%a", "")
                local e = case.stderr:gsub("\27%[[%d;]*%a", "")
                assert.is_truthy(o:find(r.line, 1, true) or e:find(r.line, 1, true)
                    or r.kind == "network", "the line must be an output line: " .. r.line)
            end
        end)
    end
end)

describe("refusal hook, unit cases", function()
    local W = { "/home/dev/app", "/tmp" }
    local H = { "/home/dev/.ssh", "/etc/shadow", "/run/docker.sock", "/run/dbus/system_bus_socket" }
    -- { name, input (cwd/writable/hidden defaulted), host, expected { {kind, path}, ... } }
    local cases = {
        { "coreutils touch, EROFS", { command = "touch /etc/motd", exit_code = 1,
          stderr = "touch: cannot touch '/etc/motd': Read-only file system\n" }, nil,
          { { "write", "/etc/motd" } } },
        { "UTF-8 quotes", { command = "mkdir /opt/x", exit_code = 1,
          stderr = "mkdir: cannot create directory \226\128\152/opt/x\226\128\153: Read-only file system\n" }, nil,
          { { "write", "/opt/x" } } },
        { "EROFS but the command succeeded", { command = "touch /etc/motd || true", exit_code = 0,
          stderr = "touch: cannot touch '/etc/motd': Read-only file system\n" }, nil, {} },
        { "EACCES outside the writable set, a touch target", { command = "touch /srv/data/x", exit_code = 1,
          stderr = "touch: cannot touch '/srv/data/x': Permission denied\n" }, nil,
          { { "write", "/srv/data/x" } } },
        { "EACCES on a redirection target", { command = "echo x > /srv/out", exit_code = 1,
          stderr = "bash: line 1: /srv/out: Permission denied\n" }, nil, { { "write", "/srv/out" } } },
        { "EACCES inside the workspace is the command's own", { command = "touch sub/x", exit_code = 1,
          stderr = "touch: cannot touch 'sub/x': Permission denied\n" }, nil, {} },
        { "EACCES on a read is not a write", { command = "cat /srv/secret", exit_code = 1,
          stderr = "cat: /srv/secret: Permission denied\n" }, nil, {} },
        { "relative path resolved against the cd target", { command = "cd .. && touch ../x", exit_code = 1,
          stderr = "touch: cannot touch '../x': Read-only file system\n" }, nil, { { "write", "/home/x" } } },
        { "Go EROFS", { command = "./tool", exit_code = 1,
          stderr = "Error: open /etc/tool.conf: read-only file system\n" }, nil, { { "write", "/etc/tool.conf" } } },
        { "Rust EROFS", { command = "cargo run", exit_code = 101,
          stderr = "Error: failed to write `/etc/x.toml`: Read-only file system (os error 30)\n" }, nil,
          { { "write", "/etc/x.toml" } } },
        { "Python ENOENT of a hidden path", { command = "python3 deploy.py", exit_code = 1,
          stderr = "Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file or directory: '/home/dev/.ssh/id_rsa'\n" },
          { exists = { "/home/dev/.ssh/id_rsa" } }, { { "hidden", "/home/dev/.ssh/id_rsa" } } },
        { "Node ENOENT", { command = "node a.js", exit_code = 1,
          stderr = "Error: ENOENT: no such file or directory, open '/etc/shadow'\n" },
          { exists = { "/etc/shadow" } }, { { "hidden", "/etc/shadow" } } },
        { "Go ENOENT", { command = "./tool", exit_code = 1,
          stderr = "open /home/dev/.ssh/config: no such file or directory\n" },
          { exists = { "/home/dev/.ssh/config" } }, { { "hidden", "/home/dev/.ssh/config" } } },
        { "Rust ENOENT with the path in the line", { command = "./r", exit_code = 1,
          stderr = "Error: could not read \"/home/dev/.ssh/id_ed25519\": No such file or directory (os error 2)\n" },
          { exists = { "/home/dev/.ssh/id_ed25519" } }, { { "hidden", "/home/dev/.ssh/id_ed25519" } } },
        { "Java NoSuchFileException", { command = "java Main", exit_code = 1,
          stderr = "Exception in thread \"main\" java.nio.file.NoSuchFileException: /etc/shadow\n" },
          { exists = { "/etc/shadow" } }, { { "hidden", "/etc/shadow" } } },
        { "Java FileNotFoundException", { command = "java Main", exit_code = 1,
          stderr = "java.io.FileNotFoundException: /etc/shadow (No such file or directory)\n" },
          { exists = { "/etc/shadow" } }, { { "hidden", "/etc/shadow" } } },
        { "ENOENT of a path missing on the host too", { command = "cat /etc/nope", exit_code = 1,
          stderr = "cat: /etc/nope: No such file or directory\n" }, nil, {} },
        { "ENOENT of a host path that is not hidden", { command = "cat /etc/hosts.x", exit_code = 1,
          stderr = "cat: /etc/hosts.x: No such file or directory\n" }, { exists = { "/etc/hosts.x" } }, {} },
        { "ENOENT, command succeeded", { command = "cat /etc/shadow; true", exit_code = 0,
          stderr = "cat: /etc/shadow: No such file or directory\n" }, { exists = { "/etc/shadow" } }, {} },
        { "grep output is data, even on failure", { command = "grep -r denied /var/log/app; exit 1", exit_code = 1,
          stdout = "/var/log/app/x.log: touch: cannot touch '/etc/motd': Read-only file system\n" }, nil, {} },
        { "journalctl output is data", { command = "journalctl -u app | tail", exit_code = 1,
          stdout = "May 01 app[1]: open /etc/app.conf: read-only file system\n" }, nil, {} },
        { "sed without -i prints content", { command = "sed -n 1,5p log.txt; false", exit_code = 1,
          stdout = "cp: cannot create regular file '/etc/x': Read-only file system\n" }, nil, {} },
        { "make install: stdout of a program the line does not name is not a diagnostic", { command = "make install", exit_code = 2,
          stdout = "install: cannot create regular file '/usr/local/bin/app': Read-only file system\n" }, nil, {} },
        { "make install: a child's diagnostic on stderr counts", { command = "make install", exit_code = 2,
          stderr = "install: cannot create regular file '/usr/local/bin/app': Read-only file system\n" }, nil,
          { { "write", "/usr/local/bin/app" } } },
        { "a non-diagnostic line does not count", { command = "./build.sh", exit_code = 1,
          stderr = "  the build cache (Read-only file system?) could not be used\n" }, nil, {} },
        { "sudo no_new_privs behind timeout", { command = "timeout 10 sudo -n apt-get update", exit_code = 1,
          stderr = 'sudo: The "no new privileges" flag is set, which prevents sudo from running as root.\n' }, nil,
          { { "sudo" } } },
        { "sudo effective uid, exit 0 after ||", { command = "sudo id || echo fine", exit_code = 0,
          stderr = "sudo: effective uid is not 0, is /usr/bin/sudo on a file system with the 'nosuid' option set or an NFS file system without root privileges?\n" },
          nil, { { "sudo" } } },
        { "sudo line without sudo in the command", { command = "cat notes.txt", exit_code = 0,
          stdout = 'sudo: The "no new privileges" flag is set, which prevents sudo from running as root.\n' },
          nil, {} },
        { "sudo asking for a terminal is not the sandbox", { command = "sudo ls", exit_code = 1,
          stderr = "sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\n" },
          nil, {} },
        { "docker with the socket on the host", { command = "docker rmi x; echo done", exit_code = 0,
          stdout = "done\n",
          stderr = "Cannot connect to the Docker daemon at unix:///run/docker.sock. Is the docker daemon running?\n" },
          { sockets = { "/run/docker.sock" } }, { { "docker", "/run/docker.sock" } } },
        { "docker permission denied form", { command = "docker ps", exit_code = 1,
          stderr = "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get \"http://%2Fvar%2Frun%2Fdocker.sock/v1.24/containers/json\": dial unix /var/run/docker.sock: connect: permission denied\n" },
          { sockets = { "/var/run/docker.sock" } }, { { "docker", "/var/run/docker.sock" } } },
        { "docker without a host socket", { command = "docker ps", exit_code = 1,
          stderr = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n" },
          nil, {} },
        { "busctl with the system bus on the host", { command = "busctl list", exit_code = 1,
          stderr = "Failed to connect to bus: No such file or directory\n" },
          { sockets = { "/run/dbus/system_bus_socket" } }, { { "dbus", "/run/dbus/system_bus_socket" } } },
        { "gdbus with the system bus on the host", { command = "gdbus introspect --system --dest org.freedesktop.DBus --object-path /", exit_code = 1,
          stderr = "Error connecting: Could not connect: No such file or directory\n" },
          { sockets = { "/run/dbus/system_bus_socket" } }, { { "dbus", "/run/dbus/system_bus_socket" } } },
        { "systemctl --user: session bus unknown", { command = "systemctl --user status", exit_code = 1,
          stderr = "Failed to connect to bus: No such file or directory\n" },
          { sockets = { "/run/dbus/system_bus_socket" } }, {} },
        { "network 403 through CONNECT", { command = "curl https://pypi.org/simple/", exit_code = 56,
          stderr = "curl: (56) CONNECT tunnel failed, response 403\n", network_denied = { "pypi.org:443" } },
          nil, { { "network", "pypi.org:443" } } },
        { "network refused by a deny rule names the rule, not a flag that cannot help",
          { command = "curl https://pypi.org/simple/", exit_code = 56,
            stderr = "curl: (56) CONNECT tunnel failed, response 403\n", network_denied = { "pypi.org:443" },
            network_denied_rules = { ["pypi.org:443"] = "*.org" } },
          nil, { { "network", "pypi.org:443", "the deny rule '*.org' names it" } } },
        { "Go's client behind the proxy", { command = "go mod download", exit_code = 1,
          stderr = "go: golang.org/x/text@v0.3.0: Get \"https://proxy.golang.org/golang.org/x/text/@v/v0.3.0.info\": Forbidden\n",
          network_denied = { "proxy.golang.org:443" } }, nil, { { "network", "proxy.golang.org:443" } } },
        { "a 403 without a denied destination is the server's", { command = "curl -f https://x.test/", exit_code = 22,
          stderr = "curl: (22) The requested URL returned error: 403\n" }, nil, {} },
        { "several refusals in one command", { command = "touch /etc/a; cat /etc/shadow", exit_code = 1,
          stderr = "touch: cannot touch '/etc/a': Read-only file system\ncat: /etc/shadow: No such file or directory\n" },
          { exists = { "/etc/shadow" } }, { { "hidden", "/etc/shadow" }, { "write", "/etc/a" } } },
        { "the same refusal twice is reported once", { command = "touch /etc/a /etc/a", exit_code = 1,
          stderr = "touch: cannot touch '/etc/a': Read-only file system\ntouch: cannot touch '/etc/a': Read-only file system\n" },
          nil, { { "write", "/etc/a" } } },
        { "killed by a signal counts as failed", { command = "cp big /etc/", exit_code = 0, signal = 15,
          stderr = "cp: cannot create regular file '/etc/big': Read-only file system\n" }, nil,
          { { "write", "/etc/big" } } },
        { "empty input", { command = "", exit_code = 0 }, nil, {} },
        { "unshare -r", { command = "unshare -r true", exit_code = 1,
          stderr = "unshare: unshare failed: Operation not permitted\n" }, nil, { { "nested-namespace" } } },
        { "bwrap as root", { command = "bwrap --ro-bind / / true", exit_code = 1,
          stderr = "bwrap: Creating new namespace failed: Operation not permitted\n" }, nil,
          { { "nested-namespace" } } },
        { "bwrap's unprivileged-userns advice", { command = "flatpak run org.x.App", exit_code = 1,
          stderr = "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>.\n" },
          nil, { { "nested-namespace" } } },
        { "a nested cordon run", { command = "cordon run -- make", exit_code = 125,
          stderr = "cordon: already inside a cordon sandbox, which refuses nested sandboxes: run the command itself, without the inner `cordon run`\n" },
          nil, { { "nested-namespace" } } },
        { "Chromium under a test runner, whatever the exit code", { command = "npx playwright test || true", exit_code = 0,
          stderr = "[1201/101010.123456:FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! If you are running on Ubuntu 23.10+ or another Linux distro that has disabled unprivileged user namespaces with AppArmor, see https://chromium.googlesource.com/chromium/src/+/main/docs/security/apparmor-userns-restrictions.md. Otherwise see https://chromium.googlesource.com/chromium/src/+/main/docs/linux/suid_sandbox_development.md for more information on getting that working.\n" },
          nil, { { "nested-namespace" } } },
        { "nested lines of one command are one refusal", { command = "unshare -r true; bwrap --ro-bind / / true", exit_code = 1,
          stderr = "unshare: unshare failed: Operation not permitted\nbwrap: Creating new namespace failed: Operation not permitted\n" },
          nil, { { "nested-namespace" } } },
        { "a log with an unshare line is data", { command = "cat ci.log; exit 1", exit_code = 1,
          stdout = "unshare: unshare failed: Operation not permitted\n" }, nil, {} },
        { "EPERM of another program is not a nested sandbox", { command = "kill 1", exit_code = 1,
          stderr = "bash: kill: (1) - Operation not permitted\n" }, nil, {} },
        -- ---- one line per refused thing
        { "npm's many error lines are one refusal, with its path", { command = "npm install -g ./pkg", exit_code = 226,
          stderr = "npm error code EROFS\nnpm error syscall symlink\nnpm error path ../../../w/pkg\n"
            .. "npm error dest /usr/lib/node_modules/pkg\nnpm error errno -30\n"
            .. "npm error rofs EROFS: read-only file system, symlink '../../../w/pkg' -> '/usr/lib/node_modules/pkg'\n"
            .. "npm error rofs EROFS: read-only file system, symlink '../../../w/pkg' -> '/usr/lib/node_modules/pkg'\n"
            .. "npm error rofs Often virtualized file systems, or other file systems that don't support symlinks, give this error.\n" },
          nil, { { "write", "/usr/lib/node_modules/pkg" } } },
        { "a pathless EROFS alone stays", { command = "npm ci", exit_code = 1,
          stderr = "npm error code EROFS\n" }, nil, { { "write", "nil" } } },
        -- ---- paths the first detector garbled
        { "apt's (30: is not part of the path (apt run by a script)", { command = "./refresh.sh", exit_code = 100,
          stderr = "W: chmod 0700 of directory /var/lib/apt/lists/partial failed - SetupAPTPartialDirectory (30: Read-only file system)\n"
            .. "W: chown to _apt:root of directory /var/lib/apt/lists/partial failed - SetupAPTPartialDirectory (30: Read-only file system)\n" },
          nil, { { "write", "/var/lib/apt/lists/partial" } } },
        { "gpg's can't does not open a quote", { command = "gpg --list-keys", exit_code = 2,
          stderr = "gpg: Fatal: can't create directory '/home/u/.gnupg': Read-only file system\n" },
          nil, { { "write", "/home/u/.gnupg" } } },
        { "ssh's lines without a prefix", { command = "ssh host true", exit_code = 255,
          stdout = "", stderr = "Could not create directory '/home/u/.ssh' (Read-only file system).\n"
            .. "Failed to add the host to the list of known hosts (/home/u/.ssh/known_hosts).\n" },
          nil, { { "write", "/home/u/.ssh" } } },
        { "Node's symlink names the destination", { command = "node link.js", exit_code = 1,
          stderr = "Error: EROFS: read-only file system, symlink 'a' -> '/usr/b'\n" }, nil, { { "write", "/usr/b" } } },
        { "corepack's red Internal Error on stdout", { command = "corepack enable", exit_code = 1,
          stdout = "\27[31m\27[1mInternal Error\27[22m\27[39m: EROFS: read-only file system, symlink '../x/pnpm.js' -> '/usr/local/bin/pnpm'\n" },
          nil, { { "write", "/usr/local/bin/pnpm" } } },
        { "Node's ENOENT mkdir in a read-only directory", { command = "npm install --prefix /usr/local/lib/foo x", exit_code = 254,
          stderr = "npm error enoent ENOENT: no such file or directory, mkdir '/usr/local/lib/foo'\n" },
          { exists = { "/usr/local/lib" } }, { { "write", "/usr/local/lib/foo" } } },
        { "Node's ENOENT mkdir whose directory is missing on the host too", { command = "node m.js", exit_code = 1,
          stderr = "Error: ENOENT: no such file or directory, mkdir '/nonexistent/a'\n" }, nil, {} },
        -- ---- protected paths, the readonly profile, hidden paths
        { "git's EBUSY on .git/config", { command = "git config user.name x", exit_code = 4,
          stderr = "error: could not write config file .git/config: Device or resource busy\n"
            .. "error: could not write config file .git/config: Device or resource busy\n" },
          nil, { { "protected", "/home/dev/app/.git/config" } } },
        { "cordon's line for a refused git setting, whatever the exit code", { command = "npx husky || true",
          exit_code = 0, stderr = "cordon: refused git setting core.hooksPath (runs hooks from that folder): "
            .. "settings that run programs on the host are made outside the sandbox; .git/config is unchanged\n"
            .. "error: could not write config file .git/config: Operation not permitted\n" },
          nil, { { "protected", "/home/dev/app/.git/config" } } },
        { "that line quoted in a log is data", { command = "cat build.log", exit_code = 0,
          stdout = "cordon: refused git setting core.hooksPath (runs hooks from that folder): "
            .. "settings that run programs on the host are made outside the sandbox; .git/config is unchanged\n" },
          nil, {} },
        { "EBUSY elsewhere is the command's own", { command = "umount /mnt", exit_code = 32,
          stderr = "umount: /mnt: target is busy.\nrm: cannot remove '/mnt/x': Device or resource busy\n" }, nil, {} },
        { "EBUSY after a command that succeeded", { command = "git config a.b c || true", exit_code = 0,
          stderr = "error: could not write config file .git/config: Device or resource busy\n" }, nil, {} },
        { "the readonly profile's workspace", { command = "touch x", exit_code = 1, workspace = "/home/dev/app",
          workspace_readonly = true, profile = "readonly", writable = { "/tmp" },
          stderr = "touch: cannot touch 'x': Read-only file system\n" }, nil, { { "write", "/home/dev/app/x" } } },
        { "a hidden file a tool tries to write", { command = "touch /etc/shadow", exit_code = 1,
          stderr = "touch: cannot touch '/etc/shadow': Read-only file system\n" },
          { exists = { "/etc/shadow" } }, { { "hidden", "/etc/shadow" } } },
        { "a hidden path missing on the host is read-only, not hidden", { command = "touch /etc/shadow", exit_code = 1,
          stderr = "touch: cannot touch '/etc/shadow': Read-only file system\n" }, nil, { { "write", "/etc/shadow" } } },
        { "not created because its parent is hidden", { command = "mkdir /home/dev/.ssh/keys", exit_code = 1,
          stderr = "mkdir: cannot create directory \226\128\152/home/dev/.ssh/keys\226\128\153: No such file or directory\n" },
          { exists = { "/home/dev/.ssh/config" } }, { { "hidden", "/home/dev/.ssh/keys" } } },
        { "a read of a missing file under a hidden directory", { command = "cat /home/dev/.ssh/none", exit_code = 1,
          stderr = "cat: /home/dev/.ssh/none: No such file or directory\n" },
          { exists = { "/home/dev/.ssh/config" } }, {} },
        -- ---- ptrace, Unix sockets, git push
        { "strace's ptrace lines are one refusal", { command = "strace -f make", exit_code = 1,
          stderr = "strace: test_ptrace_get_syscall_info: PTRACE_TRACEME: Operation not permitted\n"
            .. "strace: ptrace(PTRACE_TRACEME, ...): Operation not permitted\n" }, nil, { { "ptrace" } } },
        { "gdb -batch exits 0 and still shows it", { command = "gdb -batch -ex run ./a.out", exit_code = 0,
          stderr = "warning: ptrace: Operation not permitted\n" }, nil, { { "ptrace" } } },
        { "ptrace words without a tracer", { command = "./t", exit_code = 1,
          stderr = "t: ptrace(PTRACE_TRACEME, ...): Operation not permitted\n" }, nil, {} },
        { "tmux under block_unix_sockets", { command = "tmux new -d", exit_code = 1, block_unix_sockets = true,
          profile = "strict", stderr = "error connecting to /tmp/tmux-0/default (Operation not permitted)\n" },
          nil, { { "unix-socket", "/tmp/tmux-0/default" } } },
        { "Python's Manager under block_unix_sockets", { command = "python3 m.py", exit_code = 1, block_unix_sockets = true,
          stderr = "Traceback (most recent call last):\nPermissionError: [Errno 1] Operation not permitted\n" },
          nil, { { "unix-socket" } } },
        { "the same lines when Unix sockets are allowed", { command = "tmux new -d", exit_code = 1,
          stderr = "error connecting to /tmp/tmux-0/default (Operation not permitted)\n" }, nil, {} },
        { "a git push to a repository outside the writable set", { command = "git push /srv/repo HEAD", exit_code = 1,
          stderr = "error: remote unpack failed: unable to create temporary object directory\n" },
          nil, { { "write", "/srv/repo" } } },
        { "a git push to a remote's name is the remote's own failure", { command = "git push origin HEAD", exit_code = 1,
          stderr = "error: remote unpack failed: unable to create temporary object directory\n" }, nil, {} },
        { "a git push into the workspace", { command = "git push ../app/other HEAD", exit_code = 1,
          stderr = "error: remote unpack failed: unable to create temporary object directory\n" }, nil, {} },
        -- ---- agents a grant would reach
        { "a signed commit with no gpg-agent granted", { command = "git commit -S -m x", exit_code = 128,
          stderr = "error: gpg failed to sign the data\nfatal: failed to write commit object\n" },
          nil, { { "grant" } } },
        { "ssh-add with no ssh-agent granted", { command = "ssh-add -l", exit_code = 2,
          stderr = "Could not open a connection to your authentication agent.\n" }, nil, { { "grant" } } },
        { "a signing failure with the gpg-agent granted is gpg's own", { command = "git tag -s v1", exit_code = 128,
          grants = { gpg_agent = true }, stderr = "error: gpg failed to sign the data\n" }, nil, {} },
        { "the words in a file's content are data", { command = "cat notes.txt", exit_code = 0,
          stdout = "error: gpg failed to sign the data\n" }, nil, {} },
        -- ---- toolchains (cases 75 on): what a recording cannot show on this machine
        { "systemctl on a host that runs systemd", { command = "systemctl start cron", exit_code = 1,
          stderr = "System has not been booted with systemd as init system (PID 1). Can't operate.\n"
            .. "Failed to connect to bus: Host is down\n" },
          { exists = { "/run/systemd/system" }, sockets = { "/run/dbus/system_bus_socket" } },
          { { "dbus", "/run/dbus/system_bus_socket" } } },
        { "systemctl --user on a host that runs systemd", { command = "systemctl --user status", exit_code = 1,
          stderr = "Failed to connect to bus: No medium found\n" },
          { sockets = { "/run/dbus/system_bus_socket" } }, {} },
        { "cargo's tempfile names the path after the message", { command = "cargo build --target-dir /srv/out/target",
          exit_code = 101, stderr = "error: Read-only file system (os error 30) at path \"/srv/out/targetAbC123\"\n" },
          { exists = { "/srv/out" } }, { { "write", "/srv/out/targetAbC123" } } },
        { "cargo's chain as the engine passes it (only the lines with a marker)", { command = "cargo new /srv/x",
          exit_code = 101, candidates = true,
          stderr = "error: failed to create package `x` at `/srv/x`\n  failed to create directory `/srv/x`\n"
            .. "  Read-only file system (os error 30)\n" }, nil, { { "write", "/srv/x" } } },
        { "cargo's chain on a terminal (stdout holds stderr)", { command = "cargo new /srv/x", exit_code = 101,
          merged = true, stdout = "error: failed to create directory `/srv/x`\n\nCaused by:\n"
            .. "  Read-only file system (os error 30)\n" }, nil, { { "write", "/srv/x" } } },
        { "cargo's chain inside the workspace is the command's own", { command = "cargo new sub/x", exit_code = 101,
          stderr = "error: failed to create directory `/home/dev/app/sub/x`\n\nCaused by:\n"
            .. "  Permission denied (os error 13)\n" }, nil, {} },
        { "a chain ends at a line that is not part of it", { command = "./build.sh", exit_code = 1,
          stderr = "error: failed to create directory `/srv/x`\nbuild.sh: retrying\n"
            .. "  Read-only file system (os error 30)\n" }, nil, { { "write", "nil" } } },
        { "javac's parent directories inside the workspace are its own", { command = "javac -d out Hi.java",
          exit_code = 1, stderr = "Hi.java:1: error: error while writing Hi: could not create parent directories\n" },
          nil, {} },
        { "javac's parent directories, -d after the sources", { command = "javac Hi.java -d /srv/classes",
          exit_code = 1, stderr = "Hi.java:1: error: error while writing Hi: could not create parent directories\n" },
          nil, { { "write", "/srv/classes" } } },
        { "Maven's local repository in the workspace is its own", { command = "mvn -Dmaven.repo.local=m2 compile",
          exit_code = 1, stderr = "[ERROR] Could not create local repository at /home/dev/app/m2 -> [Help 1]\n" },
          nil, {} },
        { "Maven's line in a log is data", { command = "cat build.log; exit 1", exit_code = 1,
          stdout = "[ERROR] Could not create local repository at /srv/m2 -> [Help 1]\n" }, nil, {} },
        { "PROG: mkdir: ... names no path", { command = "mytool init", exit_code = 1,
          stderr = "mytool: mkdir: Read-only file system\n" }, nil, { { "write", "nil" } } },
        { "crontab's spool when it is not hidden", { command = "crontab -l", exit_code = 1,
          stderr = "crontabs: mkdir: Read-only file system\n" }, nil, { { "write", "/var/spool/cron/crontabs" } } },
        { "a relative path in the workspace that cannot be read-only there", { command = "pip install /srv/pkg",
          exit_code = 1, stderr = "      error: could not create 'build': Read-only file system\n" }, nil,
          { { "write", "nil" } } },
        -- ---- issue 28: hidden keys, the host's loopback, apt, a held .git
        { "publickey with a method list, key given with -i", { command = "ssh -i ~/k -i /home/dev/.ssh/work.pem h true",
          exit_code = 255, stderr = "dev@h: Permission denied (publickey,password).\n",
          hidden = { "/home/dev/.ssh/work.pem" } }, { exists = { "/home/dev/.ssh/work.pem" } },
          { { "grant", "/home/dev/.ssh/work.pem" } } },
        { "publickey with the agent granted is the server's matter", { command = "ssh h true", exit_code = 255,
          stderr = "dev@h: Permission denied (publickey).\n", hidden = { "/home/dev/.ssh/id_rsa" },
          grants = { ssh_agent = true } }, { exists = { "/home/dev/.ssh/id_rsa" } }, {} },
        { "publickey, the command succeeded anyway", { command = "ssh h true || true", exit_code = 0,
          stderr = "dev@h: Permission denied (publickey).\n", hidden = { "/home/dev/.ssh/id_rsa" } },
          { exists = { "/home/dev/.ssh/id_rsa" } }, {} },
        { "publickey in a log is data", { command = "grep denied auth.log; false", exit_code = 1,
          stdout = "sshd: dev@h: Permission denied (publickey).\n", hidden = { "/home/dev/.ssh/id_rsa" } },
          { exists = { "/home/dev/.ssh/id_rsa" } }, {} },
        { "authorized_keys is no private key", { command = "ssh h true", exit_code = 255,
          stderr = "dev@h: Permission denied (publickey).\n", hidden = { "/home/dev/.ssh/authorized_keys" } },
          { exists = { "/home/dev/.ssh/authorized_keys" } }, {} },
        { "No secret key with the gpg agent granted", { command = "gpg --clearsign m", exit_code = 2,
          stderr = "gpg: signing failed: No secret key\n", hidden = { "/home/dev/.gnupg" },
          grants = { gpg_agent = true } }, { exists = { "/home/dev/.gnupg" } }, {} },
        { "node's ECONNREFUSED to a port the host serves", { command = "node t.js", exit_code = 1,
          stderr = "  [cause]: Error: connect ECONNREFUSED 127.0.0.1:5432\n", host_listening = { 5432 } }, nil,
          { { "host-port", "127.0.0.1:5432" } } },
        { "psql's refused localhost", { command = "psql -h localhost app", exit_code = 2,
          stderr = "psql: error: connection to server at \"localhost\" (127.0.0.1), port 5432 failed: Connection refused\n",
          host_listening = { 5432 } }, nil, { { "host-port", "127.0.0.1:5432" } } },
        { "mysql's client, the errno in parentheses", { command = "mysql -h 127.0.0.1 app", exit_code = 1,
          stderr = "ERROR 2003 (HY000): Can't connect to MySQL server on '127.0.0.1:3306' (111)\n",
          host_listening = { 3306 } }, nil, { { "host-port", "127.0.0.1:3306" } } },
        { "redis-cli", { command = "redis-cli ping", exit_code = 1,
          stdout = "Could not connect to Redis at 127.0.0.1:6379: Connection refused\n",
          host_listening = { 6379 } }, nil, { { "host-port", "127.0.0.1:6379" } } },
        { "Go's dial", { command = "./client", exit_code = 1,
          stderr = "Get \"http://localhost:8080/\": dial tcp 127.0.0.1:8080: connect: connection refused\n",
          host_listening = { 8080 } }, nil, { { "host-port", "127.0.0.1:8080" } } },
        { "a refused connection to another host is not the loopback's", { command = "curl http://10.1.2.3:5432/",
          exit_code = 7, stderr = "curl: (7) Failed to connect to 10.1.2.3 port 5432 after 1 ms: Couldn't connect to server\n",
          host_listening = { 5432 } }, nil, {} },
        { "a refused loopback connection, the command succeeded", { command = "curl localhost:5432 || true",
          exit_code = 0, stderr = "curl: (7) Failed to connect to localhost port 5432 after 0 ms: Couldn't connect to server\n",
          host_listening = { 5432 } }, nil, {} },
        { "apt-get update as root: one system line, not --allow-write", { command = "apt-get update", exit_code = 100,
          root = true, stderr = "W: chmod 0700 of directory /var/lib/apt/lists/partial failed - SetupAPTPartialDirectory (30: Read-only file system)\n"
            .. "E: Could not open lock file /var/lib/apt/lists/lock - open (13: Permission denied)\n" }, nil,
          { { "system", "nil" } } },
        { "dpkg -i as root", { command = "dpkg -i x.deb", exit_code = 2, root = true,
          stderr = "dpkg: error: requested operation requires superuser privilege\n" }, nil, { { "system", "nil" } } },
        { "a write outside the system beside apt stays a write", { command = "apt-get download hello -o Dir::Cache=/srv/c && touch /srv/x",
          exit_code = 1, root = true, stderr = "touch: cannot touch '/srv/x': Read-only file system\n" }, nil,
          { { "write", "/srv/x" } } },
        { "EBUSY of a .git the command does not move stays protected", { command = "git config a.b c", exit_code = 4,
          stderr = "error: could not write config file .git/config: Device or resource busy\n" }, nil,
          { { "protected", "/home/dev/app/.git/config" } } },
        { "mv of a nested repository's .git", { command = "mv sub/.git /home/dev/app/sub/old-git", exit_code = 1,
          stderr = "mv: cannot move 'sub/.git' to '/home/dev/app/sub/old-git': Device or resource busy\n" }, nil,
          { { "git-dir", "/home/dev/app/sub/.git" } } },
        { "a denied request of a succeeded command with nothing printed is still named", { command = "npm test",
          exit_code = 0, stdout = "ok\n", network_denied = { "registry.npmjs.org:443" } }, nil,
          { { "network", "registry.npmjs.org:443" } } },
        { "a denied request of a failed command with nothing printed", { command = "npm test", exit_code = 1,
          stdout = "not ok\n", network_denied = { "registry.npmjs.org:443" } }, nil,
          { { "network", "registry.npmjs.org:443" } } },
    }
    for _, c in ipairs(cases) do
        it(c[1], function()
            local input = c[2]
            input.cwd = input.cwd or "/home/dev/app"
            input.writable = input.writable or W
            input.hidden = input.hidden or H
            input.stdout = input.stdout or ""
            input.stderr = input.stderr or ""
            local got = detect(input, c[3])
            local pairs_got = {}
            for _, r in ipairs(got) do
                pairs_got[#pairs_got + 1] = r.kind .. " " .. tostring(r.path)
                assert.is_string(r.reason)
                assert.is_string(r.line)
            end
            local want = {}
            for _, w in ipairs(c[4]) do want[#want + 1] = w[1] .. " " .. tostring(w[2]) end
            table.sort(pairs_got)
            table.sort(want)
            assert.are.same(want, pairs_got, cjson.encode(got))
            -- a third field is text the reason must hold
            for _, w in ipairs(c[4]) do
                if w[3] then
                    local found = false
                    for _, r in ipairs(got) do
                        if r.kind == w[1] and r.reason:find(w[3], 1, true) then found = true end
                    end
                    assert.is_true(found, "no reason holds '" .. w[3] .. "': " .. cjson.encode(got))
                end
            end
        end)
    end

    it("a write reason names the path for people", function()
        local got = detect({ command = "touch /etc/motd", exit_code = 1, cwd = "/w", stdout = "",
            stderr = "touch: cannot touch '/etc/motd': Read-only file system\n" })
        assert.are.equal("the sandbox refused a write to /etc/motd (read-only outside the workspace: "
            .. "--allow-write /etc/motd)",
            got[1].reason)
        assert.are.equal("touch: cannot touch '/etc/motd': Read-only file system", got[1].line)
    end)

    it("a network refusal shows Go's Forbidden line", function()
        local line = 'go: golang.org/x/text@v0.3.0: Get "https://proxy.golang.org/x/@v/v0.3.0.info": Forbidden'
        local got = detect({ command = "go mod download", exit_code = 1, cwd = "/w", stdout = "",
            stderr = "go: downloading golang.org/x/text v0.3.0\n" .. line .. "\n",
            network_denied = { "proxy.golang.org:443" } })
        assert.are.equal(1, #got, cjson.encode(got))
        assert.are.equal(line, got[1].line)
    end)

    it("the reason follows where the path is and why", function()
        local function reason(input, host_state)
            input.cwd = input.cwd or "/home/dev/app"
            input.writable = input.writable or W
            input.hidden = input.hidden or H
            input.stdout = input.stdout or ""
            local got = detect(input, host_state)
            assert.are.equal(1, #got, cjson.encode(got))
            return got[1].reason
        end
        assert.are.equal("the sandbox refused a write to /srv/data/f (read-only outside the workspace: "
            .. "--allow-write /srv/data)", reason({ command = "touch /srv/data/f", exit_code = 1,
            stderr = "touch: cannot touch '/srv/data/f': Read-only file system\n" }, { exists = { "/srv/data/g" } }))
        assert.are.equal("the sandbox refused a write to /home/dev/app/.git/config: .git/config is protected "
            .. "inside the workspace: a command could make the host's git run a program (profile key "
            .. "readonly_in_workspace)", reason({ command = "git config a.b c", exit_code = 4,
            workspace = "/home/dev/app", readonly_in_workspace = { "/home/dev/app/.git/config" },
            stderr = "error: could not write config file .git/config: Device or resource busy\n" }))
        assert.are.equal("the sandbox refused a write to /home/dev/app/x: the readonly profile makes the "
            .. "workspace read-only (another --profile, e.g. coding, lets it write)", reason({ command = "touch x",
            exit_code = 1, workspace = "/home/dev/app", workspace_readonly = true, profile = "readonly",
            writable = { "/tmp" }, stderr = "touch: cannot touch 'x': Read-only file system\n" }))
        assert.are.equal("/etc/shadow is hidden by the profile (it exists on the host; writes to it are "
            .. "refused)", reason({ command = "touch /etc/shadow", exit_code = 1,
            stderr = "touch: cannot touch '/etc/shadow': Read-only file system\n" }, { exists = { "/etc/shadow" } }))
        assert.are.equal("/home/dev/.ssh/k was not created: /home/dev/.ssh is hidden by the profile (it "
            .. "exists on the host)", reason({ command = "touch /home/dev/.ssh/k", exit_code = 1,
            stderr = "touch: cannot touch '/home/dev/.ssh/k': No such file or directory\n" },
            { exists = { "/home/dev/.ssh/config" } }))
    end)

    it("a nested-sandbox reason says the sandbox refuses nesting and what to do, not a sysctl", function()
        local got = detect({ command = "chromium --headless", exit_code = 1, cwd = "/w", stdout = "",
            stderr = "[0101/000000.000000:FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox!\n" })
        assert.are.equal("the sandbox refuses nested sandboxes: Chromium's own sandbox cannot make its "
            .. "namespace inside it (pass --no-sandbox to Chromium, or run it outside the sandbox)", got[1].reason)
        got = detect({ command = "unshare -r id", exit_code = 1, cwd = "/w", stdout = "",
            stderr = "unshare: unshare failed: Operation not permitted\n" })
        assert.are.equal("the sandbox refuses nested sandboxes: unshare cannot make its namespace inside "
            .. "it (run it outside the sandbox)", got[1].reason)
        assert.is_nil(got[1].reason:find("sysctl"))
    end)

    it("a very long output costs bounded work", function()
        local big = string.rep("x", 100) .. "\n"
        local input = { command = "yes", exit_code = 1, cwd = "/w", stdout = big:rep(50000),
                        stderr = big:rep(50000) }
        local t = os.clock()
        local got = detect(input)
        assert.are.same({}, got)
        assert.is_true(os.clock() - t < 5)
    end)
end)

describe("escalate hook", function()
    local write = { kind = "write", path = "/etc/motd", line = "touch: ...", reason = "the sandbox refused a write to /etc/motd" }
    local net = { kind = "network", path = "pypi.org:443", line = "curl: (56) ...", reason = "blocked" }
    -- refusal, flags -> action, offer, reason pattern
    local cases = {
        { write, { ask_sandbox_off = true, interactive = true }, "ask", "rerun", "Run `touch /etc/motd` outside" },
        { write, { ask_sandbox_off = true, interactive = false }, "deny", nil, "not interactive" },
        { write, { ask_sandbox_off = false, interactive = true }, "deny", nil, "%-%-ask%-sandbox%-off" },
        { write, { ask_sandbox_off = true, interactive = true, plan = true }, "deny", nil, "plan mode" },
        { write, { ask_sandbox_off = true, interactive = true, background = true }, "deny", nil, "background" },
        { net, { ask_sandbox_off = true, interactive = true }, "ask", "network", "pypi.org:443" },
        { net, { ask_sandbox_off = true, interactive = false }, "ask", "network", "pypi.org:443" },
        { net, { ask_sandbox_off = false, interactive = true }, "deny", nil, "%-%-ask%-sandbox%-off" },
        { net, { ask_sandbox_off = true, plan = true }, "deny", nil, "plan" },
    }
    for i, c in ipairs(cases) do
        it(("case %d: %s %s -> %s"):format(i, c[1].kind, cjson.encode(c[2]), c[3]), function()
            local input = { refusal = c[1], command = "touch /etc/motd", plan = false, background = false }
            for k, v in pairs(c[2]) do input[k] = v end
            local r = policy.escalate(input, function() return nil end)
            assert.are.equal(c[3], r.action)
            assert.are.equal(c[4], r.offer)
            assert.is_truthy(r.reason:find(c[5]), r.reason)
        end)
    end
end)

describe("refusal hook: ssh", function()
    local failed = "No ED25519 host key is known for [gh.test]:22 and you have requested strict checking.\r\n"
        .. "Host key verification failed.\r\n"
    local function case(command, hidden, stderr)
        return { command = command, exit_code = 255, stdout = "", stderr = stderr or failed,
                 cwd = "/home/dev/ws", writable = { "/home/dev/ws" }, hidden = hidden }
    end

    it("a host key failure with a hidden known_hosts that exists names it", function()
        local r = detect(case("ssh gh.test true", { "/home/dev/.ssh/known_hosts", "/etc/shadow" }),
            { exists = { "/home/dev/.ssh/known_hosts" } })
        assert.are.same({ "hidden" }, kinds(r))
        assert.are.equal("/home/dev/.ssh/known_hosts", r[1].path)
        assert.truthy(r[1].reason:find("host key", 1, true), r[1].reason)
        assert.truthy(r[1].reason:find("--hide", 1, true), r[1].reason)
    end)

    it("a hidden ~/.ssh or home counts; a named UserKnownHostsFile first", function()
        local r = detect(case("ssh -o UserKnownHostsFile=/srv/kh gh.test true", { "/home/dev/.ssh", "/srv/kh" }),
            { exists = { "/home/dev/.ssh/known_hosts", "/srv/kh" } })
        assert.are.equal("/srv/kh", r[1].path)
        r = detect(case("git fetch", { "/root" }), { exists = { "/root/.ssh/known_hosts" } })
        assert.are.equal("/root/.ssh/known_hosts", r[1].path)
    end)

    it("no line when no key is known at all (not the sandbox's doing)", function()
        assert.are.same({}, detect(case("ssh gh.test true", { "/home/dev/.ssh/id_rsa", "/etc/shadow" }),
            { exists = { "/home/dev/.ssh/id_rsa" } }))
        assert.are.same({}, detect(case("ssh gh.test true", { "/home/dev/.ssh/known_hosts" }), { exists = {} }))
    end)

    it("a destination refused to a SOCKS client names the tcp:// rule (curl's SOCKS5 line)", function()
        local input = case("curl -x socks5h://127.0.0.1:18081 http://127.0.0.2:18090/", {},
            "curl: (97) Can't complete SOCKS5 connection to 127.0.0.2. (2)\n")
        input.network_denied = { "127.0.0.2:18090" }
        local r = detect(input)
        assert.are.same({ "network" }, kinds(r))
        assert.truthy(r[1].reason:find("--network-allow tcp://127.0.0.2:18090 would allow it", 1, true), r[1].reason)
        input = case("curl http://127.0.0.2:18090/", {}, "curl: (56) CONNECT tunnel failed, response 403\n")
        input.network_denied = { "127.0.0.2:18090" }
        r = detect(input)
        assert.truthy(r[1].reason:find("(--network-allow 127.0.0.2:18090 would allow it)", 1, true), r[1].reason)
    end)

    it("a destination the proxy says a SOCKS client asked for names the tcp:// rule, whatever the line", function()
        -- a client that prints nothing about SOCKS (a library, a quiet tool)
        local input = case("python3 fetch.py", {}, "error: connection refused\n")
        input.network_denied = { "127.0.0.2:18090", "127.0.0.3:80" }
        input.network_denied_via = { ["127.0.0.2:18090"] = "socks" }
        local r = detect(input)
        assert.are.same({ "network", "network" }, kinds(r))
        local reasons = r[1].reason .. "\n" .. r[2].reason
        assert.truthy(reasons:find("--network-allow tcp://127.0.0.2:18090 would allow it", 1, true), reasons)
        assert.truthy(reasons:find("(--network-allow 127.0.0.3:80 would allow it)", 1, true), reasons)
    end)

    it("a name whose answer is a special address names the proxy's flag for that address", function()
        local input = case("curl http://web.test:8080/", {}, "curl: (56) CONNECT tunnel failed, response 403\n")
        input.network_denied = { "web.test:8080", "other.test:443" }
        input.network_denied_allow = { ["web.test:8080"] = "--network-allow 10.1.2.3:8080",
            ["other.test:443"] = "--network-allow other.test:443" }
        local r = detect(input)
        assert.are.same({ "network", "network" }, kinds(r))
        local reasons = r[1].reason .. "\n" .. r[2].reason
        assert.truthy(reasons:find("blocked web.test:8080: its address is a loopback, link-local or private "
            .. "one, which needs a rule of its own (--network-allow 10.1.2.3:8080 would allow it)", 1, true), reasons)
        -- the proxy's flag for the destination itself: the usual line
        assert.truthy(reasons:find("blocked other.test:443 (--network-allow other.test:443 would allow it)", 1, true),
            reasons)
    end)

    it("a refused tcp:// destination names the tcp:// rule when cordon nc's line shows it", function()
        local input = case("ssh -p 2222 gh.test true", {}, "cordon nc: the sandbox's network policy does not "
            .. "allow tcp://gh.test:2222 (--network-allow tcp://gh.test:2222 would allow it, unless a deny "
            .. "rule names it)\r\nkex_exchange_identification: Connection closed by remote host\r\n")
        input.network_denied = { "gh.test:2222" }
        local r = detect(input)
        assert.are.same({ "network" }, kinds(r))
        assert.truthy(r[1].reason:find("--network-allow tcp://gh.test:2222 would allow it", 1, true), r[1].reason)
    end)
end)
