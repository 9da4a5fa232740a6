-- spec/04-engine/run_install_spec.lua — an installed cordon stands alone: `cmake --install` (what
-- `make install` runs) into a temporary prefix, then the tour's commands (docs/tour.sh) run
-- from PREFIX/bin/cordon in a mount namespace of their own where the checkout and the build
-- tree are hidden under empty tmpfs mounts: whatever cordon or cordon-session still read from
-- there would be missing. That works wherever the checkout is (/work, /tmp, /root) and leaves
-- the host's view untouched. Also: a moved prefix still works, a lone binary stops with one
-- line naming where it looked, $CORDON_DATADIR overrides, and no built binary holds the
-- checkout's path.
-- Drives the built binary's install ($CORDON_BIN's build tree); runs as root (unshare -m,
-- mount); loopback only (a refused destination never connects).
local h = require("spec.helpers")

-- Absolute, symlink-free paths of the checkout and the build tree (the two hidden dirs).
local function real(path)
    return h.chomp(h.sh_ok("cd " .. h.quote(path) .. " && pwd -P"))
end
local source_dir = real(h.source_dir)
local build_dir = real(h.bin:match("^(.*)/[^/]+$") or ".")

-- True when path is dir or under it.
local function under(path, dir)
    return path == dir or path:sub(1, #dir + 1) == dir .. "/"
end

-- Installs the build tree into a fresh prefix (removed by h.cleanup()); returns the prefix.
local function install()
    local prefix = real(h.tmpdir()) .. "/prefix"
    assert(not under(prefix, source_dir) and not under(prefix, build_dir),
        "the temporary prefix " .. prefix .. " would be hidden with the checkout")
    h.sh_ok(("cmake --install %s --prefix %s >/dev/null"):format(h.quote(build_dir), h.quote(prefix)))
    return prefix
end

-- Shell words put before cordon's command line: a new mount namespace (private propagation:
-- the host never sees these mounts) where the build tree, then the checkout, are empty.
local function hidden_prefix()
    local mounts = {}
    for _, dir in ipairs({ build_dir, source_dir }) do
        mounts[#mounts + 1] = ("if [ -d %s ]; then mount -t tmpfs cordon-hidden %s || exit 99; fi")
            :format(h.quote(dir), h.quote(dir))
    end
    local script = table.concat(mounts, "; ") .. "; test ! -e " .. h.quote(source_dir .. "/CMakeLists.txt")
        .. " || exit 98; exec \"$@\""
    return "unshare -m --propagation private sh -c " .. h.quote(script) .. " sh "
end

-- Runs `BIN args` (BIN defaults to PREFIX/bin/cordon) with the checkout hidden and no
-- $CORDON_DATADIR unless opts.env sets one; opts as h.cordon. Returns h.cordon's result.
local function installed(prefix, args, opts)
    opts = opts or {}
    local run = {}
    for k, v in pairs(opts) do run[k] = v end
    run.prefix = hidden_prefix()
    run.unset = { "CORDON_DATADIR" }
    if opts.env and opts.env.CORDON_DATADIR then run.unset = {} end
    local saved = h.bin
    h.bin = opts.bin or (prefix .. "/bin/cordon")
    local ok, r = pcall(h.cordon, args, run)
    h.bin = saved
    if not ok then error(r, 2) end
    return r
end

local ok = h.ok

local has = h.has

local function stderr_lines(r)
    local lines = {}
    for line in r.stderr:gmatch("[^\n]+") do lines[#lines + 1] = line end
    return lines
end

describe("an installed cordon, with the checkout hidden", function()
    local prefix
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    before_each(function() prefix = install() end)
    after_each(h.cleanup)

    it("make install's layout: bin/cordon, libexec/cordon/cordon-session, share/cordon, man, completions",
        function()
            for _, f in ipairs({ "bin/cordon", "libexec/cordon/cordon-session",
                                 "share/cordon/policies/00-default.lua", "share/cordon/profiles/coding.lua",
                                 "share/man/man1/cordon.1", "share/man/man1/cordon-run.1",
                                 "share/man/man5/cordon-profile.5", "share/man/man5/cordon-policy.5",
                                 "share/bash-completion/completions/cordon",
                                 "share/zsh/vendor-completions/_cordon" }) do
                assert.are.equal(0, h.sh("test -f " .. h.quote(prefix .. "/" .. f)).code, f .. " is not installed")
            end
            -- the controller is not a command of its own: nothing else in bin/
            assert.are.equal("cordon\n", h.sh_ok("ls " .. h.quote(prefix .. "/bin")))
        end)

    it("the manual pages render and say what --help says", function()
        if h.sh("command -v man").code ~= 0 then h.skip("man is not installed (man-db)") end
        local page = h.sh_ok(("MANWIDTH=200 man -l %s 2>&1"):format(h.quote(prefix .. "/share/man/man1/cordon-run.1")))
        assert.truthy(page:find("cordon run [OPTIONS] -- COMMAND [ARG...]", 1, true), page)
        assert.truthy(page:find("EXIT STATUS", 1, true), page)
        -- every option of `cordon run --help` is on the page
        local help = installed(prefix, { "run", "--help" }).stdout
        local n = 0
        for flag in help:gmatch("\n  (%-%-[a-z-]+)") do
            n = n + 1
            assert.truthy(page:find(flag, 1, true), flag .. " is not on the page")
        end
        assert.truthy(n > 10, help)
    end)

    it("the hiding works: the sandboxed command sees no checkout either", function()
        local r = ok(installed(prefix, { "run", "--", "sh", "-c",
            "ls -A " .. h.quote(source_dir) .. " | wc -l" }))
        assert.are.equal("0", h.chomp(r.stdout), h.describe(r))
    end)

    it("the hiding works: data reached through the checkout is gone", function()
        -- a copy of the build tree's layout outside it: its links lead into the hidden checkout
        local copy = real(h.tmpdir())
        h.sh_ok(("cp %s %s/ && cp -P -R %s %s/"):format(h.quote(prefix .. "/bin/cordon"), h.quote(copy),
            h.quote(build_dir .. "/share"), h.quote(copy)))
        ok(h.sh(h.quote(copy .. "/cordon") .. " policy check"))
        local r = installed(prefix, { "policy", "check" }, { bin = copy .. "/cordon" })
        assert.are.equal(125, r.code, h.describe(r))
        has(r, "looked in " .. copy .. "/share/cordon and ")
    end)

    it("runs a sandboxed command", function()
        local r = ok(installed(prefix, { "run", "--", "sh", "-c", "echo hello from the sandbox; id -u" }))
        assert.are.equal("hello from the sandbox\n0\n", r.stdout, h.describe(r))
    end)

    it("refuses a write outside the workspace and allows one inside", function()
        local tok = h.token()
        local r = installed(prefix, { "run", "--", "touch", "/etc/cordon-install-" .. tok })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.is_nil(h.read_file("/etc/cordon-install-" .. tok))
        local ws = h.workspace()
        ok(installed(prefix, { "run", "--", "sh", "-c", "echo note > notes.txt" }, { cwd = ws }))
        assert.are.equal("note\n", h.read_file(ws .. "/notes.txt"))
    end)

    it("refuses a network destination the policy does not allow", function()
        local r = ok(installed(prefix, { "run", "--network-allow", "127.0.0.1:1", "--", "curl", "-sS",
            "--noproxy", "", "-i", "--max-time", "20", "http://127.0.0.2:9/" }))
        assert.truthy(r.stdout:match("^HTTP/1%.1 403 Forbidden\r\n"), h.describe(r))
        has(r, "X-Cordon-Error: blocked-by-policy\r\n")
        has(r, "--network-allow 127.0.0.2:9")
    end)

    it("policy check loads the installed policies and profiles", function()
        local r = ok(installed(prefix, { "policy", "check" }))
        has(r, "policy check: 0 problems")
        r = installed(prefix, { "run", "--profile", "nosuch", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
        has(r, "coding")
    end)

    it("a session: cordon-session from libexec/cordon, shared /tmp, exec, jobs, stop", function()
        local name = "install-" .. h.token()
        local s = { cwd = h.workspace(), env = { XDG_RUNTIME_DIR = h.runtime_dir() } }
        local function cli(args) return installed(prefix, args, { cwd = s.cwd, env = s.env }) end
        local pid
        h.defer(function()
            cli({ "session", "stop", name })
            if pid and not h.wait_for(function() return not h.is_controller(pid) end, 10) then
                os.execute("kill -9 " .. pid .. " 2>/dev/null")
            end
        end)
        ok(cli({ "session", "start", name, "--detach" }))
        local info = h.api(h.session_socket(s.env.XDG_RUNTIME_DIR, name), "GET", "/v1/session")
        assert.are.equal(200, info.status, info.body)
        pid = math.tointeger(info.json.pid)
        assert.are.equal(prefix .. "/libexec/cordon/cordon-session",
            h.chomp(h.sh_ok("readlink /proc/" .. pid .. "/exe")))
        ok(cli({ "exec", name, "--", "echo shared > /tmp/note; cd /; FOO=1" }))
        local r = ok(cli({ "exec", name, "--", "cat /tmp/note; pwd; echo \"FOO=${FOO:-unset}\"" }))
        assert.are.equal("shared\n" .. s.cwd .. "\nFOO=unset\n", r.stdout, h.describe(r))
        ok(cli({ "jobs", name }))
        ok(cli({ "session", "stop", name }))
        assert.truthy(h.wait_for(function() return not h.is_controller(pid) end, 15),
            "the session controller is still running")
    end)

    it("a moved prefix still works: the data is found beside the binary", function()
        local moved = real(h.tmpdir()) .. "/elsewhere"
        h.sh_ok(("mv %s %s"):format(h.quote(prefix), h.quote(moved)))
        ok(installed(moved, { "policy", "check" }))
        -- a broken layer of the moved copy is what cordon loads: it names the moved path
        h.write_file(moved .. "/share/cordon/policies/50-broken.lua", "return {\n")
        local r = installed(moved, { "run", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
        has(r, moved .. "/share/cordon/policies/50-broken.lua")
    end)

    it("a binary without its data stops with one line naming where it looked", function()
        local lone = real(h.tmpdir())
        h.sh_ok(("cp %s %s/"):format(h.quote(prefix .. "/bin/cordon"), h.quote(lone)))
        local r = installed(prefix, { "run", "--", "true" }, { bin = lone .. "/cordon" })
        assert.are.equal(125, r.code, h.describe(r))
        local lines = stderr_lines(r)
        assert.are.equal(1, #lines, h.describe(r))
        has(r, "cordon: cannot find policies/ and profiles/: looked in " .. lone .. "/share/cordon and ")
        has(r, "CORDON_DATADIR")
    end)

    it("$CORDON_DATADIR overrides the installed data", function()
        local data = real(h.tmpdir())
        h.sh_ok(("cp -R %s/share/cordon/policies %s/share/cordon/profiles %s/"):format(
            h.quote(prefix), h.quote(prefix), h.quote(data)))
        h.write_file(data .. "/profiles/mine.lua", "return { extends = \"coding\" }\n")
        ok(installed(prefix, { "run", "--profile", "mine", "--", "true" }, { env = { CORDON_DATADIR = data } }))
        local r = installed(prefix, { "run", "--profile", "mine", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
    end)
end)

describe("the built binaries", function()
    it("hold no string of the checkout's path", function()
        if h.sanitizer_build() then
            h.skip("a sanitizer build keeps the sources' paths in its instrumentation; the release "
                .. "build is checked")
        end
        for _, b in ipairs({ "cordon", "cordon-session" }) do
            local r = h.sh(("grep -c -a -F %s %s"):format(h.quote(source_dir), h.quote(build_dir .. "/" .. b)))
            assert.are.equal("0", h.chomp(r.stdout), b .. " holds " .. source_dir .. "\n" .. r.stderr)
        end
    end)

    it("a build tree reads the checkout's policies through build/share/cordon", function()
        assert.are.equal(source_dir .. "/policies",
            h.chomp(h.sh_ok("readlink " .. h.quote(build_dir .. "/share/cordon/policies"))))
        assert.are.equal(source_dir .. "/profiles",
            h.chomp(h.sh_ok("readlink " .. h.quote(build_dir .. "/share/cordon/profiles"))))
    end)
end)
