-- spec/04-engine/doctor_spec.lua — `cordon doctor [--json]`: what this machine's kernel offers.
-- The JSON is parsed strictly (one object on one line, every field of its documented type and
-- every state one of the four); the exit status follows default_profile_starts; the text names
-- every capability the JSON does. Each fallback's test switch (CORDON_TEST_KERNEL_LACKS) moves
-- its capability from full (as probed here, unforced) to fallback or off, with what to do:
-- so each case shows the probe's answer both ways. As root and as uid 65534.
local h = require("spec.helpers")
local cjson = require("cjson")

local NOBODY = 65534
local STATES = { full = true, fallback = true, off = true, not_needed = true }

-- `cordon doctor --json` (as uid, forcing `lacks`): the decoded object, checked field by field.
local function doctor_json(uid, lacks)
    local env = {}
    if lacks then env.CORDON_TEST_KERNEL_LACKS = lacks end
    local ws = h.workspace(nil, uid)
    local r = h.cordon({ "doctor", "--json" }, { uid = uid, env = env, cwd = ws,
        home = uid and h.secret_home(uid) or nil })
    assert(r.code == 0 or r.code == 1, "doctor exit status\n" .. h.describe(r))
    assert.truthy(r.stdout:match("^{[^\n]*}\n$"), "not one JSON object on one line\n" .. h.describe(r))
    local ok, d = pcall(cjson.decode, r.stdout)
    assert(ok and type(d) == "table", "not JSON\n" .. h.describe(r))
    assert.are.equal("string", type(d.kernel))
    assert.are.equal(uid or 0, d.uid)
    assert.are.equal("boolean", type(d.default_profile_starts))
    assert.are.equal(d.default_profile_starts and 0 or 1, r.code, h.describe(r))
    assert.are.equal("number", type(d.landlock_abi))
    assert.are.equal(lacks or cjson.null, d.forced_missing)
    d.mech, d.cap = {}, {}
    for _, m in ipairs(d.mechanisms) do
        assert.are.equal("string", type(m.name))
        assert.are.equal("string", type(m.title))
        assert.are.equal("boolean", type(m.available))
        assert.are.equal("string", type(m.detail))
        d.mech[m.name] = m
    end
    for _, c in ipairs(d.capabilities) do
        assert.are.equal("string", type(c.name))
        assert.are.equal("string", type(c.title))
        assert.truthy(STATES[c.state], "state " .. tostring(c.state))
        assert.are.equal("string", type(c.detail))
        assert.truthy(c.advice == cjson.null or type(c.advice) == "string")
        -- what is off says what to do
        if c.state == "off" then assert.are.equal("string", type(c.advice), c.name) end
        d.cap[c.name] = c
    end
    for _, name in ipairs({ "user_namespaces", "apparmor_userns", "landlock", "mount_setattr",
        "idmapped_mounts", "overlay_userns", "so_peerpidfd", "nf_tables", "cgroups", "seccomp" }) do
        assert.truthy(d.mech[name], "no mechanism " .. name)
    end
    for _, name in ipairs({ "sandbox", "home", "root_shift", "mount_attributes", "session_clients",
        "loopback_off", "transparent", "limits" }) do
        assert.truthy(d.cap[name], "no capability " .. name)
    end
    d.result = r
    return d
end

-- { lack, capability, state when forced, pattern of its detail or advice }
local FORCED = {
    { "peer_pidfd", "session_clients", "fallback", "SO_PEERCRED" },
    { "overlay_fd_layers", "home", "fallback", "by path" },
    { "overlay_userns", "home", "off", "5%.11" },
    { "landlock_net", "loopback_off", "off", "6%.7" },
    { "landlock", "loopback_off", "off", "no Landlock" },
    { "mount_setattr", "mount_attributes", "fallback", "remount" },
    { "idmap", "root_shift", "fallback", "root%-only scan", root_only = true },
}

for _, user in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
    describe("cordon doctor as " .. user.name .. ":", function()
        lazy_setup(function()
            assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        end)
        after_each(h.cleanup)

        it("--json is one strict JSON object, its exit status follows default_profile_starts", function()
            local d = doctor_json(user.uid)
            -- this machine runs the specs: the default profile starts here
            assert.is_true(d.default_profile_starts, h.describe(d.result))
            assert.are.equal("full", d.cap.sandbox.state)
            assert.are.equal(user.uid and "not_needed" or d.cap.root_shift.state, d.cap.root_shift.state)
        end)

        it("the text names every capability of the JSON, and the same verdict", function()
            local d = doctor_json(user.uid)
            local r = h.cordon({ "doctor" }, { uid = user.uid, cwd = h.workspace(nil, user.uid),
                home = user.uid and h.secret_home(user.uid) or nil })
            assert.are.equal(d.result.code, r.code, h.describe(r))
            for _, c in ipairs(d.capabilities) do
                local state = c.state == "not_needed" and "not needed" or c.state
                assert.truthy(r.stdout:find("\n  " .. state .. "%s+" .. c.title:gsub("%p", "%%%0")),
                    c.title .. "\n" .. r.stdout)
            end
            assert.truthy(r.stdout:find("the default profile can start here", 1, true), r.stdout)
        end)

        for _, f in ipairs(FORCED) do
            it(("a forced lack of %s shows %s as %s"):format(f[1], f[2], f[3]), function()
                if f.root_only and user.uid then h.skip("only a root caller's ids are shifted") end
                local plain = doctor_json(user.uid)
                local cap = plain.cap[f[2]]
                if cap.state == f[3] or cap.state == "off" then
                    h.skip(("this kernel has %s %s already: %s"):format(f[2], cap.state, cap.detail))
                end
                local d = doctor_json(user.uid, f[1])
                local c = d.cap[f[2]]
                assert.are.equal(f[3], c.state, cjson.encode(c))
                local text = c.detail .. " " .. (c.advice ~= cjson.null and c.advice or "")
                assert.truthy(text:find(f[4]), text)
                -- a fallback or a lack never stops the default profile
                assert.is_true(d.default_profile_starts, h.describe(d.result))
            end)
        end
    end)
end

describe("cordon doctor inside a sandbox", function()
    after_each(h.cleanup)

    it("says the default profile cannot start there (no user namespace), exit 1, not a failure", function()
        local c, why = h.unprivileged_copy(0)
        if not c then h.skip(why) end
        local inner = "ASAN_OPTIONS=detect_leaks=0 CORDON_DATADIR=" .. h.quote(c.datadir) .. " "
            .. h.quote(c.bin) .. " doctor --json; echo rc=$?"
        local r = h.run_sh(inner)
        local json, rc = r.stdout:match("^({[^\n]*})\nrc=(%d+)\n$")
        assert.truthy(json, h.describe(r))
        assert.are.equal("1", rc, h.describe(r))
        local d = cjson.decode(json)
        assert.is_false(d.default_profile_starts)
        for _, cap in ipairs(d.capabilities) do
            if cap.name == "sandbox" or cap.name == "home" or cap.name == "transparent" then
                assert.are.equal("off", cap.state, cjson.encode(cap))
                assert.are.equal("string", type(cap.advice), cjson.encode(cap))
            end
        end
        -- the same doctor outside: it can start
        local host = doctor_json(nil)
        assert.is_true(host.default_profile_starts)
    end)
end)

describe("cordon doctor usage", function()
    it("--help prints the usage and exit statuses; an unknown option is a usage error", function()
        local r = h.cordon({ "doctor", "--help" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("^usage: cordon doctor %[%-%-json%]"), r.stdout)
        assert.truthy(r.stdout:find("125", 1, true), r.stdout)
        r = h.cordon({ "doctor", "--bogus" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("cordon: doctor: unknown option '--bogus'", 1, true), h.describe(r))
        r = h.cordon({ "--help" })
        assert.truthy(r.stdout:find("\n  doctor ", 1, true), r.stdout)
    end)
end)
