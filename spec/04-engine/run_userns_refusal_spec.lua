-- spec/04-engine/run_userns_refusal_spec.lua — the line cordon gives when it may not create a
-- user namespace, and what `cordon doctor` says then. Where AppArmor restricts unprivileged
-- user namespaces (Ubuntu 23.10 and later), the line names cordon's AppArmor profile and how to
-- load it first, then the sysctl; elsewhere it names no profile.
--
-- How it is made here, on a kernel without AppArmor's restriction: in a mount namespace of its
-- own (root), a tmpfs over /proc/sys/kernel holds apparmor_restrict_unprivileged_userns = 1;
-- cordon then runs in a user namespace whose ids are not mapped (`unshare -U`), where the kernel
-- refuses every further user namespace with EPERM, as AppArmor's restriction does. The same
-- run without the file shows the other line (so the case can fail). Root only (#privileged):
-- the mount namespace needs it; cordon itself runs as root and as uid 65534.
local h = require("spec.helpers")
local cjson = require("cjson")

local NOBODY = 65534
local PROFILE_ADVICE = "load cordon's profile as root (apparmor_parser -r /etc/apparmor.d/cordon"
local SYSCTL = "kernel.apparmor_restrict_unprivileged_userns=0"

-- Runs cordon ARGS (as uid, or root) in an unmapped user namespace; with `restricted`, under a
-- /proc/sys/kernel that says AppArmor restricts user namespaces.
local function refused_run(args, uid, restricted)
    local bin = h.bin
    local pre = ""
    if uid then
        local c, why = h.unprivileged_copy(uid)
        if not c then h.skip(why) end
        bin = "env CORDON_DATADIR=" .. h.quote(c.datadir) .. " " .. h.quote(c.bin)
        pre = ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid)
    end
    local ws = h.workspace(nil, uid)
    local inner = ("cd %s && %sunshare -U %s %s"):format(h.quote(ws), pre, bin, h.join(args))
    local setup = restricted
        and "mount -t tmpfs none /proc/sys/kernel && echo 1 > /proc/sys/kernel/apparmor_restrict_unprivileged_userns && "
        or ""
    return h.sh("timeout 60 unshare -m sh -c " .. h.quote(setup .. inner))
end

for _, user in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
    describe("a refused user namespace, as " .. user.name .. " #privileged", function()
        lazy_setup(function()
            assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        end)
        after_each(h.cleanup)

        before_each(function()
            if h.sh("id -u").stdout ~= "0\n" then h.skip("needs root for a mount namespace") end
            if h.read_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") then
                h.skip("this kernel has AppArmor's restriction itself")
            end
        end)

        it("names cordon's AppArmor profile and how to load it, then the sysctl, where AppArmor restricts them", function()
            local r = refused_run({ "run", "--", "true" }, user.uid, true)
            assert.are.equal(125, r.code, h.describe(r))
            local line = r.stderr:match("cordon: cannot create a user namespace[^\n]*")
            assert.truthy(line, h.describe(r))
            local p, s = line:find(PROFILE_ADVICE, 1, true), line:find(SYSCTL, 1, true)
            assert.truthy(p and s and p < s, line)
            -- without AppArmor's restriction: the same refusal names no profile
            r = refused_run({ "run", "--", "true" }, user.uid, false)
            assert.are.equal(125, r.code, h.describe(r))
            line = r.stderr:match("cordon: cannot create a user namespace[^\n]*")
            assert.truthy(line, h.describe(r))
            assert.is_nil(line:find("apparmor.d", 1, true), line)
        end)

        it("cordon doctor says the default profile cannot start, and what to do first", function()
            local r = refused_run({ "doctor", "--json" }, user.uid, true)
            assert.are.equal(1, r.code, h.describe(r))
            local ok, d = pcall(cjson.decode, r.stdout)
            assert(ok and type(d) == "table", "not JSON\n" .. h.describe(r))
            assert.is_false(d.default_profile_starts)
            local sandbox, aa
            for _, c in ipairs(d.capabilities) do if c.name == "sandbox" then sandbox = c end end
            for _, m in ipairs(d.mechanisms) do if m.name == "apparmor_userns" then aa = m end end
            assert.are.equal("off", sandbox.state, cjson.encode(sandbox))
            assert.truthy(sandbox.advice:find("apparmor_parser -r /etc/apparmor.d/cordon", 1, true), sandbox.advice)
            assert.is_true(aa.available, cjson.encode(aa))
            -- and the text, with its exit status
            r = refused_run({ "doctor" }, user.uid, true)
            assert.are.equal(1, r.code, h.describe(r))
            assert.truthy(r.stdout:find("the default profile cannot start here", 1, true), r.stdout)
        end)
    end)
end
