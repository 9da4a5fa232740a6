-- spec/04-engine/run_nested_spec.lua — a command that makes a namespace (a sandbox) of its own
-- inside `cordon run`: unshare, bubblewrap, a nested `cordon run`. The kernel (seccomp) refuses
-- each as before; what is checked is what cordon says: a `nested-namespace` refusal that says
-- the sandbox refuses nested sandboxes and what to do instead, never the host-sysctl advice
-- these tools (and cordon itself, outside a sandbox) give when a host lacks user namespaces.
-- Each case first shows on the host that the same command works there, so the case can fail.
-- Drives the built binary ($CORDON_BIN); runs as root, and as uid 65534 with setpriv where the
-- tool words its refusal differently for a user.
local h = require("spec.helpers")

local NOBODY = 65534

local function on_host(cmd, uid)
    local pre = uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid) or ""
    return h.sh("cd /var/tmp && " .. pre .. cmd)
end

-- The refusal line cordon printed for the command (the one naming nested sandboxes).
local function refusal_line(r)
    for line in (r.stderr .. "\n"):gmatch("(.-)\n") do
        if line:match("^cordon: .*refuses nested sandboxes") and not line:match("already inside") then
            return line
        end
    end
    return nil
end

-- The inner cordon, as a command inside the sandbox can start it: the checkout may lie under the
-- host's /tmp, which the sandbox replaces, so the shared copy under /var/tmp (with its data).
-- (A sanitizer build's leak checker cannot run inside a sandbox: it is off for the inner one.)
local function inner_cordon()
    local c, why = h.unprivileged_copy(0)
    if not c then h.skip(why) end
    return "ASAN_OPTIONS=detect_leaks=0 CORDON_DATADIR=" .. h.quote(c.datadir) .. " " .. h.quote(c.bin)
end

local function assert_nested(r, who)
    assert.are_not.equal(0, r.code, h.describe(r))
    local line = refusal_line(r)
    assert.truthy(line, "expected the nested-sandbox refusal line\n" .. h.describe(r))
    assert.truthy(line:find("the sandbox refuses nested sandboxes: " .. who, 1, true), line)
    assert.truthy(line:find("run with --ask-sandbox-off to be asked next time", 1, true), line)
    assert.is_nil(line:find("sysctl", 1, true), line)
    local j = h.last_json(h.cordon({ "run", "--json", "--", "/bin/sh", "-c", r.inner }, r.opts).stdout)
    assert.truthy(j and j.refusals and j.refusals[1], h.describe(r))
    assert.are.equal("nested-namespace", j.refusals[1].kind)
end

local function run_inside(script, opts)
    local r = h.run_sh(script, opts)
    r.inner, r.opts = script, opts
    return r
end

describe("cordon run: nested sandboxes", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("unshare -r works on the host and is refused inside, in the nested wording", function()
        local host = on_host("unshare -r true")
        assert.are.equal(0, host.code, "unshare -r must work on the host for this spec:\n" .. host.stderr)
        assert_nested(run_inside("unshare -r true"), "unshare")
    end)

    it("bubblewrap works on the host and is refused inside, in the nested wording", function()
        if h.sh("command -v bwrap").code ~= 0 then h.skip("bwrap is not installed") end
        local host = on_host("bwrap --ro-bind / / true")
        assert.are.equal(0, host.code, "bwrap must work on the host for this spec:\n" .. host.stderr)
        assert_nested(run_inside("bwrap --ro-bind / / true"), "bubblewrap")
    end)

    it("bubblewrap as a user (its unprivileged-userns advice) gets the nested wording", function()
        if h.sh("command -v bwrap").code ~= 0 then h.skip("bwrap is not installed") end
        local host = on_host("bwrap --unshare-user --ro-bind / / true", NOBODY)
        assert.are.equal(0, host.code, "bwrap must work on the host for a user:\n" .. host.stderr)
        local ws = h.workspace(nil, NOBODY)
        local r = run_inside("bwrap --unshare-user --ro-bind / / true",
            { uid = NOBODY, workspace = ws, home = h.secret_home(NOBODY) })
        assert.truthy(r.stderr:find("bwrap: No permissions to creat", 1, true), h.describe(r))
        assert_nested(r, "bubblewrap")
    end)

    it("a nested cordon run says it is already inside a sandbox, and the outer one says why", function()
        local host = h.cordon({ "run", "--", "true" })
        assert.are.equal(0, host.code, h.describe(host))
        local r = run_inside(inner_cordon() .. " run -- true")
        assert.truthy(r.stderr:find("cordon: already inside a cordon sandbox, which refuses nested "
            .. "sandboxes: run the command itself, without the inner `cordon run`", 1, true), h.describe(r))
        assert.is_nil(r.stderr:find("sysctl", 1, true), h.describe(r))
        assert_nested(r, "the inner `cordon run`")
    end)

    it("the refusal is the kernel's, not the variable's: without CORDON_SANDBOX it is still refused", function()
        local r = run_inside("env -u CORDON_SANDBOX " .. inner_cordon() .. " run -- true; echo rc=$?")
        assert.truthy(r.stdout:find("rc=125", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("cannot create a user namespace", 1, true), h.describe(r))
    end)
end)
