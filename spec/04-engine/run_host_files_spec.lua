-- spec/04-engine/run_host_files_spec.lua — nothing the host trusts later is writable from
-- inside: cordon's own configuration, trust records, state and session socket folders when the
-- workspace is the home; a workspace that is the home refused without --allow-home-workspace;
-- a trusted project policy swapped while it is checked never loads its untrusted content; a
-- .cordon created in a session is read-only for the next exec (and cordon trust waits for the
-- session); a writable entry that is a planted link is refused, a --allow-write LINK says what
-- it resolves to. Each attempt is first shown to work outside the sandbox (plain sh), then
-- refused inside. Drives the built binary ($CORDON_BIN); no network; runs as root, and the
-- cases tagged #privileged as uid 65534 too (setpriv). The session API's peer check is
-- engine/tests/test_api_server.c's (the sockets are hidden from every sandbox).
local h = require("spec.helpers")

local NOBODY = 65534

local ok = h.ok

local function exists(path)
    return h.sh("test -e " .. h.quote(path) .. " || test -L " .. h.quote(path)).code == 0
end

-- A fake home holding cordon's own files as a user would have them. Returns home, marker.
local function cordon_home(uid)
    local home, marker = h.secret_home(uid)
    local c = home .. "/.config/cordon"
    h.sh_ok(("mkdir -p %s/profiles %s/trusted %s/.local/state/cordon %s/run/cordon"):format(
        h.quote(c), h.quote(c), h.quote(home), h.quote(home)))
    h.write_file(c .. "/policy.lua", "-- the user's own policy\nreturn {}\n")
    h.write_file(c .. "/getenv-allow", "CORDON_SPEC_MINE\n")
    h.write_file(c .. "/trusted/record.json", '{"project":"' .. marker .. '","files":{}}\n', "600")
    h.write_file(home .. "/.local/state/cordon/audit.jsonl", marker .. "\n", "600")
    h.write_file(home .. "/run/cordon/socket-stand-in", marker .. "\n", "600")
    h.sh_ok("chmod 700 " .. h.quote(home .. "/run") .. " " .. h.quote(home .. "/run/cordon"))
    if uid then h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(home))) end
    return home, marker
end

-- What a command would do to make every later run unsandboxed: rewrite the user's profile and
-- policy, forge a trust record and getenv-allow, and move ~/.config away to plant a new one.
local ATTACK = table.concat({
    'c="$HOME/.config/cordon"',
    'mkdir -p "$c/profiles" "$c/trusted"',
    'echo "return { workspace_readonly = false, hidden = {} }" > "$c/profiles/coding.lua"',
    'echo "-- evil" > "$c/policy.lua"',
    'echo "{}" > "$c/trusted/x.json"',
    'echo "AWS_SECRET_ACCESS_KEY" > "$c/getenv-allow"',
    'mv "$HOME/.config" "$HOME/.config-away" && mkdir -p "$c" && echo "-- evil" > "$c/policy.lua"',
    'true',
}, "; ")

local function files_of(home)
    local c = home .. "/.config/cordon"
    return {
        policy = h.read_file(c .. "/policy.lua"),
        getenv = h.read_file(c .. "/getenv-allow"),
        coding = exists(c .. "/profiles/coding.lua"),
        forged = exists(c .. "/trusted/x.json"),
        away = exists(home .. "/.config-away"),
    }
end

local function untouched(home)
    assert.are.same({
        policy = "-- the user's own policy\nreturn {}\n",
        getenv = "CORDON_SPEC_MINE\n",
        coding = false, forged = false, away = false,
    }, files_of(home))
end

local function outside(script, home, uid)
    local pre = uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid) or ""
    return h.sh(("cd %s && %senv HOME=%s bash -c %s"):format(h.quote(home), pre, h.quote(home),
        h.quote(script)))
end

local function run_in_home(script, home, uid, extra_env)
    local env = { XDG_RUNTIME_DIR = home .. "/run" }
    for k, v in pairs(extra_env or {}) do env[k] = v end
    return h.run_sh(script, { workspace = home, home = home, uid = uid, env = env,
        flags = { "--allow-home-workspace" } })
end

describe("cordon's own files", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("a workspace that is the home is refused with one line naming the flag", function()
        local home = cordon_home()
        local r = h.run_sh("true", { workspace = home, home = home })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:match("workspace " .. home:gsub("%p", "%%%0")
            .. " is your home directory: refused.*%-%-allow%-home%-workspace"), h.describe(r))
        -- an ancestor of the home too
        local parent = home:match("^(.*)/[^/]+$")
        r = h.run_sh("true", { workspace = parent, home = home })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:match("an ancestor of your home"), h.describe(r))
        -- the profile key of the same meaning
        local cfg = h.profile_dir("homeok", 'return { extends = "coding", allow_home_workspace = true }')
        ok(h.run_sh("true", { workspace = home, home = home, flags = { "--profile", "homeok" },
            env = { XDG_CONFIG_HOME = cfg } }))
    end)

    it("outside the sandbox, a command rewrites them (the attack works)", function()
        local home = cordon_home()
        ok(outside(ATTACK, home))
        local f = files_of(home)
        assert.are.equal("-- evil\n", f.policy)
        assert.is_true(f.away)
    end)

    it("inside, with the workspace = HOME, it cannot write one of them", function()
        local home = cordon_home()
        local r = run_in_home(ATTACK, home)
        ok(r)
        assert.truthy(r.stderr:match("Read%-only file system") or r.stderr:match("busy"), h.describe(r))
        untouched(home)
    end)

    it("nor when the configuration did not exist yet (it cannot be created)", function()
        local home = h.secret_home()
        ok(run_in_home(ATTACK, home))
        local c = home .. "/.config/cordon"
        assert.is_false(exists(c .. "/policy.lua"))
        assert.is_false(exists(c .. "/profiles/coding.lua"))
        assert.is_false(exists(c .. "/trusted/x.json"))
        assert.is_false(exists(home .. "/.config-away"))
    end)

    it("nor as an unprivileged user #privileged", function()
        local home = cordon_home(NOBODY)
        ok(outside("test -w " .. h.quote(home .. "/.config/cordon/policy.lua"), home, NOBODY))
        ok(run_in_home(ATTACK, home, NOBODY))
        untouched(home)
    end)

    it("the trust records, the state and the socket folder are not readable inside", function()
        local home, marker = cordon_home()
        local script = 'cat "$HOME/.config/cordon/trusted/record.json" "$HOME/.local/state/cordon/audit.jsonl" '
            .. '"$HOME/run/cordon/socket-stand-in"; ls -A "$HOME/.config/cordon/trusted" "$HOME/run/cordon" '
            .. '"/tmp/cordon-$(id -u)" 2>&1; true'
        local r = outside(script, home)
        assert.truthy(r.stdout:find(marker, 1, true), "readable outside\n" .. h.describe(r))
        r = ok(run_in_home(script, home))
        assert.is_nil((r.stdout .. r.stderr):find(marker, 1, true), h.describe(r))
        assert.is_nil(r.stdout:match("record%.json"), h.describe(r))
        assert.is_nil(r.stdout:match("socket%-stand%-in"), h.describe(r))
        -- the configuration itself stays readable: it is the person's policy, no secret
        r = ok(run_in_home('cat "$HOME/.config/cordon/policy.lua"', home))
        assert.truthy(r.stdout:match("the user's own policy"), h.describe(r))
    end)

    it("a link a command planted on the way to them (~/.config) is refused", function()
        local home = h.tmpdir()
        local elsewhere = h.tmpdir()
        h.sh_ok("ln -s " .. h.quote(elsewhere) .. " " .. h.quote(home .. "/.config"))
        local r = run_in_home("rm \"$HOME/.config\"; mkdir -p \"$HOME/.config/cordon\"", home)
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("passes the symbolic link " .. home .. "/.config inside the writable "
            .. "workspace, which a command could replace: refused", 1, true), h.describe(r))
        assert.is_false(exists(home .. "/.config/cordon"))
    end)

    it("a workspace inside cordon's configuration is refused", function()
        local home = cordon_home()
        local r = h.run_sh("true", { workspace = home .. "/.config/cordon/profiles", home = home })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:match("inside cordon's own configuration directory"), h.describe(r))
    end)
end)

describe("a trusted project policy", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    -- A project trusted with a harmless policy.lua; swapped.lua is the untrusted content whose
    -- marker shows when it is loaded (it stops every load with an error naming the marker).
    local function swap_project()
        local ws = h.workspace()
        local cfg = h.tmpdir()
        local marker = "cordon-swap-marker-" .. h.token()
        h.sh_ok("mkdir " .. h.quote(ws .. "/.cordon"))
        h.write_file(ws .. "/trusted.lua", "return {}\n")
        h.write_file(ws .. "/swapped.lua", 'error("' .. marker .. '")\n')
        h.sh_ok(("cp %s %s"):format(h.quote(ws .. "/trusted.lua"), h.quote(ws .. "/.cordon/policy.lua")))
        local env = { XDG_CONFIG_HOME = cfg }
        ok(h.cordon({ "trust" }, { cwd = ws, env = env }))
        return ws, env, marker
    end

    it("untrusted content is not loaded, and its marker shows whenever it is (the probe works)", function()
        local ws, env, marker = swap_project()
        h.sh_ok(("cp %s %s"):format(h.quote(ws .. "/swapped.lua"), h.quote(ws .. "/.cordon/policy.lua")))
        local r = h.cordon({ "run", "--", "true" }, { cwd = ws, env = env })
        assert.is_nil((r.stdout .. r.stderr):find(marker, 1, true), "untrusted: not loaded\n" .. h.describe(r))
        assert.truthy(r.stderr:match("not trusted"), h.describe(r))
        -- cordon trust loads it to describe it: there the marker shows (and it is not trusted)
        r = h.cordon({ "trust" }, { cwd = ws, env = env })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy((r.stdout .. r.stderr):find(marker, 1, true), h.describe(r))
    end)

    it("swapped in a loop while it is checked, never loads the untrusted content", function()
        local ws, env, marker = swap_project()
        -- rename(2) over .cordon/policy.lua in a loop, bounded in count and time; the copies
        -- are made beside .cordon, so the scan never sees a temporary file
        local swapper = ([[
import os, sys, time
ws = sys.argv[1]
a = open(ws + "/trusted.lua", "rb").read()
b = open(ws + "/swapped.lua", "rb").read()
end = time.monotonic() + 30
for i in range(200000):
    if time.monotonic() > end or os.path.exists(ws + "/stop"):
        break
    tmp = ws + "/t%d" % (i % 2)
    with open(tmp, "wb") as f:
        f.write(b if i % 2 else a)
    os.rename(tmp, ws + "/.cordon/policy.lua")
]])
        h.write_file(ws .. "/swapper.py", swapper)
        local pid = h.spawn(h.python .. " " .. h.quote(ws .. "/swapper.py") .. " " .. h.quote(ws))
        local seen_trusted = 0
        for _ = 1, 15 do
            for _, args in ipairs({ { "policy", "check" }, { "run", "--", "true" } }) do
                local r = h.cordon(args, { cwd = ws, env = env })
                assert.is_nil((r.stdout .. r.stderr):find(marker, 1, true), "the swapped content ran\n" .. h.describe(r))
                if not r.stderr:match("not trusted") then seen_trusted = seen_trusted + 1 end
            end
        end
        h.write_file(ws .. "/stop", "")
        h.wait_for(function() return not h.alive(pid) end, 10)
        -- informative only: how often the check saw the trusted content mid-swap
        print(("# trusted content seen in %d of 30 checks"):format(seen_trusted))
    end)
end)

describe("a .cordon created in a session", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    local function exec(s, cmd)
        return h.cordon({ "exec", s.name, "--", cmd }, { cwd = s.cwd, env = s.env })
    end

    it("is writable in the exec that made it, read-only for the next one", function()
        local cfg = h.tmpdir()
        local s = h.session_start("dotcordon-" .. h.token(), { env = { XDG_CONFIG_HOME = cfg } })
        ok(exec(s, "mkdir .cordon && echo one > .cordon/policy.lua && echo two >> .cordon/policy.lua"))
        assert.are.equal("one\ntwo\n", h.read_file(s.cwd .. "/.cordon/policy.lua"))
        local r = exec(s, "echo evil > .cordon/policy.lua; mkdir .cordon/profiles")
        assert.truthy(r.stderr:match("Read%-only file system"), h.describe(r))
        assert.are.equal("one\ntwo\n", h.read_file(s.cwd .. "/.cordon/policy.lua"))
        assert.is_false(exists(s.cwd .. "/.cordon/profiles"))
        -- cordon trust waits for the session to end, naming it
        r = h.cordon({ "trust" }, { cwd = s.cwd, env = s.env })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:match("session '" .. s.name:gsub("%p", "%%%0") .. "' of workspace"), h.describe(r))
        assert.is_false(exists(cfg .. "/cordon/trusted"), "no record written")
    end)
end)

describe("a writable path", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    -- A workspace where a command planted build -> a directory outside (a stand-in for ~/.ssh),
    -- and a profile that lists build as writable.
    local function planted(uid)
        local ws, parent = h.workspace(nil, uid)
        local target = parent .. "/target"
        h.sh_ok("mkdir " .. h.quote(target))
        h.write_file(target .. "/authorized_keys", "mine\n")
        if uid then h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(target))) end
        h.sh_ok("ln -s " .. h.quote(target) .. " " .. h.quote(ws .. "/build"))
        local cfg = h.profile_dir("withbuild", 'return { extends = "coding", writable = { "build" } }')
        h.sh_ok("chmod -R a+rX " .. h.quote(cfg))
        return ws, target, { XDG_CONFIG_HOME = cfg }
    end

    local ATTACK_LINK = "echo evil > build/authorized_keys"

    it("outside the sandbox, the planted link leads to its target (the attack works)", function()
        local ws, target = planted()
        ok(h.sh("cd " .. h.quote(ws) .. " && " .. ATTACK_LINK))
        assert.are.equal("evil\n", h.read_file(target .. "/authorized_keys"))
    end)

    for _, who in ipairs({ { name = "root" }, { name = "an unprivileged user #privileged", uid = NOBODY } }) do
        it("that is a planted link is refused with one line, its target unchanged (" .. who.name .. ")", function()
            local ws, target, env = planted(who.uid)
            local r = h.run_sh(ATTACK_LINK, { workspace = ws, env = env, uid = who.uid,
                flags = { "--profile", "withbuild" } })
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:match("writable build leads outside the workspace %(to "
                .. target:gsub("%p", "%%%0") .. "%): refused"), h.describe(r))
            assert.are.equal("mine\n", h.read_file(target .. "/authorized_keys"))
        end)
    end

    it("an absolute profile entry through a link inside the workspace is refused", function()
        local ws, target = planted()
        h.sh_ok("mkdir " .. h.quote(ws .. "/real"))
        h.sh_ok("ln -s real " .. h.quote(ws .. "/inner"))
        local cfg = h.profile_dir("abslink", ('return { extends = "coding", writable = { "%s/inner" } }'):format(ws))
        local r = h.run_sh("true", { workspace = ws, env = { XDG_CONFIG_HOME = cfg },
            flags = { "--profile", "abslink" } })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:match("passes the symbolic link " .. (ws .. "/inner"):gsub("%p", "%%%0")), h.describe(r))
        assert.are.equal("mine\n", h.read_file(target .. "/authorized_keys"))
    end)

    for _, who in ipairs({ { nil, "root" }, { 65534, "uid 65534" } }) do
        local uid, label = who[1], who[2]
        it("--allow-write LINK inside the workspace is refused in one line (" .. label .. ")", function()
            local ws, target = planted(uid)
            local r = h.run_sh("echo named > build/authorized_keys", { workspace = ws, uid = uid,
                home = h.secret_home(uid), flags = { "--allow-write", "build" } })
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find("--allow-write build passes the symbolic link " .. ws
                .. "/build, which lies in a writable area", 1, true), h.describe(r))
            assert.are.equal(1, select(2, r.stderr:gsub("cordon:", "")), h.describe(r))
            assert.are.equal("mine\n", h.read_file(target .. "/authorized_keys"))
        end)
    end

    it("--allow-write LINK outside every writable area is followed, and one line says to what", function()
        local ws, target = planted()
        local elsewhere = h.tmpdir() .. "/build"
        h.sh_ok("ln -s " .. h.quote(target) .. " " .. h.quote(elsewhere))
        local r = ok(h.run_sh("echo named > " .. h.quote(target .. "/authorized_keys"), { workspace = ws,
            flags = { "--allow-write", elsewhere } }))
        assert.truthy(r.stderr:find("--allow-write " .. elsewhere .. " resolves to " .. target, 1, true),
            h.describe(r))
        assert.are.equal("named\n", h.read_file(target .. "/authorized_keys"))
    end)
end)
