-- spec/04-engine/policy_trust_spec.lua — a project's .cordon is used only once `cordon trust` pinned
-- its files; a change, an addition or a removal makes it untrusted again (one stderr line,
-- the lower layers still apply); sandboxed commands cannot write .cordon; a broken project
-- layer denies its decision (or stops the run at `profile`) with file:line; `cordon policy
-- test` runs the project's own cases. Drives the built binary; no network is touched.
local h = require("spec.helpers")

local fixture = h.fixtures .. "/project"

-- A workspace holding a copy of the fixture project's .cordon (without broken/), and a
-- private config directory. Returns ws, env.
local function project()
    local ws = h.workspace()
    h.sh_ok(("mkdir -p %s/.cordon && cp -r %s/policy.lua %s/profiles %s/tests %s/.cordon/"):format(
        h.quote(ws), h.quote(fixture), h.quote(fixture), h.quote(fixture), h.quote(ws)))
    local cfg = h.tmpdir()
    return ws, { XDG_CONFIG_HOME = cfg }
end

local function cordon(ws, env, args)
    return h.cordon(args, { cwd = ws, env = env })
end

local function not_trusted_line(ws, why)
    return ("cordon: project policy in %s/.cordon is not trusted (%s); review it and run: cordon trust %s")
        :format(ws, why, ws)
end

local explain_registry = { "policy", "explain", "--kind", "connect", "registry.internal.example", "443" }

describe("cordon trust", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("skips an untrusted project with one line, and applies it once trusted", function()
        local ws, env = project()
        local r = cordon(ws, env, explain_registry)
        assert.are.equal(1, r.code, h.describe(r))
        assert.are.equal(not_trusted_line(ws, "not trusted yet") .. "\n", r.stderr, h.describe(r))
        assert.is_nil(r.stdout:find(".cordon/policy.lua", 1, true), h.describe(r))

        r = cordon(ws, env, { "trust" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.matches("policy.lua  sha256:%x+  policy layer, hooks: network, refusal\n", r.stdout)
        assert.matches("profiles/web.lua  sha256:%x+  profile 'web'", r.stdout)
        assert.matches("tests/policy.json  sha256:%x+  policy test cases\n", r.stdout)
        assert.matches("trusted: 3 files of " .. ws:gsub("%p", "%%%0") .. "/.cordon\n$", r.stdout)
        local rec = h.chomp(h.sh_ok("ls " .. h.quote(env.XDG_CONFIG_HOME .. "/cordon/trusted")))
        assert.matches("^%x+%.json$", rec)
        local mode = h.chomp(h.sh_ok("stat -c %a " .. h.quote(env.XDG_CONFIG_HOME .. "/cordon/trusted/" .. rec)))
        assert.are.equal("600", mode)

        r = cordon(ws, env, explain_registry)
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("", r.stderr, h.describe(r))
        assert.matches("2%. " .. ws:gsub("%p", "%%%0") .. "/%.cordon/policy%.lua:%d+  allow  rule: registry%.internal%.example:443", r.stdout)
        assert.matches("decided by: " .. ws:gsub("%p", "%%%0") .. "/%.cordon/policy%.lua %(layer 2%)", r.stdout)

        -- the project's profile is found first, and only for a trusted project
        r = cordon(ws, env, { "run", "--profile", "web", "--", "/bin/true" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("", r.stderr, h.describe(r))
    end)

    it("its rules change what cordon run reports and reaches, only once trusted", function()
        local ws, env = project()
        -- the in-house tool's message is a refusal only by the project's refusal hook
        local tool = "echo 'buildtool: cannot write cache /opt/cache' >&2; exit 1"
        -- the registry is allowed only by the project's network hook (it does not resolve here:
        -- allowed shows as the proxy's 502, refused as its 403)
        local fetch = "curl -sS --noproxy '' --max-time 20 -o /dev/null -w '%{http_code}' "
            .. "-x http://127.0.0.1:18080 http://registry.internal.example:443/; true"
        local function run(script)
            return cordon(ws, env, { "run", "--", "/bin/sh", "-c", script })
        end
        local r = run(tool)
        assert.is_nil(r.stderr:find("buildtool cache outside the writable set", 1, true), h.describe(r))
        r = run(fetch)
        assert.are.equal("403", r.stdout, h.describe(r))

        assert.are.equal(0, cordon(ws, env, { "trust" }).code)
        r = run(tool)
        assert.truthy(r.stderr:find("cordon: buildtool cache outside the writable set", 1, true), h.describe(r))
        r = run(fetch)
        assert.are.equal("502", r.stdout, h.describe(r))
    end)

    it("names each changed, added and removed file, and trusts again after cordon trust", function()
        local ws, env = project()
        assert.are.equal(0, cordon(ws, env, { "trust", ws }).code)
        h.sh_ok(("echo '-- edited' >> %s/.cordon/policy.lua"):format(h.quote(ws)))
        h.sh_ok(("echo '{}' > %s/.cordon/tests/more.json"):format(h.quote(ws)))
        h.sh_ok(("rm %s/.cordon/profiles/web.lua"):format(h.quote(ws)))
        local r = cordon(ws, env, { "run", "--", "/bin/true" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal(not_trusted_line(ws, "policy.lua changed, profiles/web.lua removed, tests/more.json added") .. "\n",
            r.stderr, h.describe(r))
        -- the lower layers still apply: the project's profile is not there
        r = cordon(ws, env, { "run", "--profile", "web", "--", "/bin/true" })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.matches("unknown profile 'web'", r.stderr)

        assert.are.equal(0, cordon(ws, env, { "trust" }).code)
        r = cordon(ws, env, { "run", "--", "/bin/true" })
        assert.are.equal("", r.stderr, h.describe(r))
    end)

    it("refuses symlinks and special files inside .cordon", function()
        local ws, env = project()
        h.sh_ok(("ln -s /etc/passwd %s/.cordon/profiles/link.lua"):format(h.quote(ws)))
        local r = cordon(ws, env, { "trust" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.matches("profiles/link.lua: a symbolic link %(refused", r.stderr)
        assert.are.equal("0", h.chomp(h.sh_ok(("ls %s/cordon/trusted 2>/dev/null | wc -l"):format(
            h.quote(env.XDG_CONFIG_HOME))))) -- nothing recorded
        r = cordon(ws, env, { "run", "--", "/bin/true" })
        assert.matches("is not trusted %(.*profiles/link.lua: a symbolic link", r.stderr)
    end)

    it("--revoke makes the project untrusted again", function()
        local ws, env = project()
        assert.are.equal(0, cordon(ws, env, { "trust" }).code)
        local r = cordon(ws, env, { "trust", "--revoke" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.matches("revoked: .*/%.cordon is no longer trusted", r.stdout)
        r = cordon(ws, env, { "run", "--", "/bin/true" })
        assert.are.equal(not_trusted_line(ws, "not trusted yet") .. "\n", r.stderr, h.describe(r))
    end)

    it("a sandboxed command cannot change the rules that judge it", function()
        local ws, env = project()
        assert.are.equal(0, cordon(ws, env, { "trust" }).code)
        local r = h.cordon({ "run", "--", "/bin/bash", "-c",
            "echo 'return {}' > .cordon/policy.lua; echo x > .cordon/new.lua; touch ok" },
            { cwd = ws, env = env })
        assert.matches("Read%-only file system", r.stderr)
        assert.matches("policy layer, hooks: network, refusal",
            cordon(ws, env, { "trust" }).stdout) -- unchanged
        assert.are.equal("", h.sh_ok("cat " .. h.quote(ws .. "/ok")))
    end)

    it("--policy FILE adds a layer on top without a trust check", function()
        local ws, env = project()
        local r = cordon(ws, env, { "policy", "explain", "--policy", fixture .. "/policy.lua",
            "--kind", "connect", "registry.internal.example", "443" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.matches(not_trusted_line(ws, "not trusted yet"):gsub("%p", "%%%0"), r.stderr)
        assert.matches("decided by: " .. fixture:gsub("%p", "%%%0") .. "/policy%.lua %(layer 2%)", r.stdout)
        -- a layer that answers as the one below did leaves the decision to the lower layer
        r = cordon(ws, env, { "policy", "explain", "--policy", fixture .. "/policy.lua",
            "--kind", "http", "169.254.169.254", "80" })
        assert.are.equal(1, r.code, h.describe(r))
        assert.matches("decided by: [^\n]*/policies/00%-default%.lua %(layer 1%)", r.stdout)
    end)

    describe("a broken project layer", function()
        local function broken(name)
            local ws, env = project()
            h.sh_ok(("cp %s/broken/%s.lua %s/.cordon/policy.lua"):format(h.quote(fixture), name, h.quote(ws)))
            assert.are.equal(0, cordon(ws, env, { "trust" }).code)
            return ws, env
        end
        for _, what in ipairs({ "loop", "alloc", "raise", "shape" }) do
            it("network hook, " .. what .. ": denies that decision with file:line; the sandbox keeps working", function()
                local ws, env = broken("network_" .. what)
                local r = cordon(ws, env, explain_registry)
                assert.are.equal(1, r.code, h.describe(r))
                assert.matches("2%. [^\n]*/%.cordon/policy%.lua:%d+  deny  policy error", r.stdout)
                assert.matches("decision: deny\n", r.stdout)
                r = cordon(ws, env, { "run", "--", "/bin/echo", "still working" })
                assert.are.equal(0, r.code, h.describe(r))
                assert.are.equal("still working\n", r.stdout)
            end)
            it("profile hook, " .. what .. ": stops the run with file:line", function()
                local ws, env = broken("profile_" .. what)
                local r = cordon(ws, env, { "run", "--", "/bin/echo", "never" })
                assert.are_not.equal(0, r.code, h.describe(r))
                assert.are.equal("", r.stdout, h.describe(r))
                assert.matches("/%.cordon/policy%.lua:%d+", r.stderr)
                -- the next decision in the same tree still works once the layer is gone
                h.sh_ok("rm " .. h.quote(ws .. "/.cordon/policy.lua"))
                assert.are.equal(0, cordon(ws, env, { "trust" }).code)
                r = cordon(ws, env, { "run", "--", "/bin/echo", "back" })
                assert.are.equal("back\n", r.stdout, h.describe(r))
            end)
        end
    end)
end)

describe("cordon policy test", function()
    after_each(h.cleanup)

    it("runs the project's cases as if trusted", function()
        local ws, env = project()
        local r = cordon(ws, env, { "policy", "test" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("6 passed, 0 failed\n", r.stdout)
    end)

    it("prints one line per failure and exits 1", function()
        local ws, env = project()
        h.write_file(ws .. "/.cordon/tests/wrong.json", [[
{"network": [{"kind": "connect", "host": "registry.internal.example", "port": 443, "expect": "deny"}],
 "profiles": [{"name": "web", "expect": {"seccomp.block_unix_sockets": false}}]}]])
        local r = cordon(ws, env, { "policy", "test", ws })
        assert.are.equal(1, r.code, h.describe(r))
        assert.matches("tests/wrong.json: network%[0%]: connect registry.internal.example:443: expected deny, got allow", r.stdout)
        assert.matches("tests/wrong.json: profiles%[0%] web: seccomp.block_unix_sockets: expected false, got true", r.stdout)
        assert.matches("\n6 passed, 2 failed\n$", r.stdout)
    end)

    it("exits 125 naming the file and offset of bad JSON", function()
        local ws, env = project()
        h.write_file(ws .. "/.cordon/tests/bad.json", '{"network": [1,]}')
        local r = cordon(ws, env, { "policy", "test" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.matches("cordon: policy test: [^\n]*/tests/bad.json: offset %d+", r.stderr)
    end)
end)
