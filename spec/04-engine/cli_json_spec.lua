-- spec/04-engine/cli_json_spec.lua — `--json` on every command that prints data
-- (docs/cli-json.md): stdout carries exactly one JSON document and nothing else, whatever the
-- exit status when the command could answer; every human line (notices, warnings, errors) goes
-- to stderr; a command that could not answer leaves stdout empty and says why in one line on
-- stderr. stdout is parsed whole (cjson.decode of all of it: a second document or a stray line
-- fails). Runs as root and as uid 65534 (its own home, workspace and runtime folder).
-- Also `cordon help COMMAND` for every command of `cordon --help`.
local h = require("spec.helpers")
local cjson = require("cjson")

local NOBODY = 65534
local ok = h.ok

local function is_root()
    return h.chomp(h.sh_ok("id -u")) == "0"
end

-- The one JSON document of r.stdout; fails naming the command otherwise.
local function doc(r)
    local okj, v = pcall(cjson.decode, r.stdout)
    assert(okj and type(v) == "table", "stdout is not exactly one JSON document\n" .. h.describe(r))
    assert.are.equal("\n", r.stdout:sub(-1), "no newline at the end\n" .. h.describe(r))
    return v
end

-- An error with --json: stdout empty, one line on stderr starting "cordon: ", 125.
local function json_error(r)
    assert.are.equal(125, r.code, h.describe(r))
    assert.are.equal("", r.stdout, h.describe(r))
    assert.truthy(r.stderr:match("^cordon: [^\n]+\n$"), h.describe(r))
end

for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
    describe("--json as " .. who.name, function()
        after_each(h.cleanup)

        -- h.cordon options for who: a home, workspace and runtime folder of its own
        local function caller()
            if who.uid and not is_root() then h.skip("needs root to switch to uid 65534") end
            local runtime = h.runtime_dir()
            local o = { env = { XDG_RUNTIME_DIR = runtime } }
            if who.uid then
                local home = h.tmpdir()
                h.sh_ok(("chown %d:%d %s %s"):format(who.uid, who.uid, h.quote(home), h.quote(runtime)))
                o.uid, o.home, o.cwd = who.uid, home, h.workspace(nil, who.uid)
            else
                o.home, o.cwd = h.tmpdir(), h.workspace()
            end
            return o
        end

        local function with(o, extra)
            local t = {}
            for k, v in pairs(o) do t[k] = v end
            for k, v in pairs(extra or {}) do t[k] = v end
            return t
        end

        it("doctor, policy check, net and explain print one document", function()
            local o = caller()
            local v = doc(h.cordon({ "doctor", "--json" }, o))
            assert.is_table(v)
            v = doc(ok(h.cordon({ "policy", "check", "--json" }, o)))
            assert.are.same({}, v.problems)
            -- a denied destination still answers (exit 1): the decision is the data
            local r = h.cordon({ "policy", "net", "--json", "example.com", "443" }, o)
            assert.are.equal(1, r.code, h.describe(r))
            assert.are_not.equal("allow", doc(r).verdict)
            r = h.cordon({ "policy", "explain", "--json", "--allow", "example.com", "example.com", "443" }, o)
            v = doc(ok(r))
            assert.are.equal("network", v.explain)
            assert.are.equal("allow", v.decision)
            assert.are.equal("example.com", v.host)
            assert.are.equal(443, v.port)
            assert.is_true(#v.layers >= 1)
            assert.is_string(v.layers[1].where)
            assert.is_number(v.decided_by.layer)
            v = doc(ok(h.cordon({ "policy", "explain", "--json", "--profile", "strict" }, o)))
            assert.are.equal("profile", v.explain)
            assert.are.equal("strict", v.profile)
            assert.is_table(v.layers[1].changed)
            -- the same without --json is lines, not JSON: the option is what makes the difference
            r = ok(h.cordon({ "policy", "explain", "--profile", "strict" }, o))
            assert.is_false(pcall(cjson.decode, r.stdout))
            -- errors: stdout empty, one line
            json_error(h.cordon({ "policy", "explain", "--json", "example.com", "99999" }, o))
            json_error(h.cordon({ "policy", "check", "--json", "--bogus" }, o))
        end)

        it("a project's untrusted notice goes to stderr; trust and trust --status", function()
            local o = caller()
            h.sh_ok("mkdir " .. h.quote(o.cwd .. "/.cordon"))
            h.write_file(o.cwd .. "/.cordon/policy.lua", "return {}\n")
            if who.uid then h.sh_ok(("chown -R %d:%d %s"):format(who.uid, who.uid, h.quote(o.cwd .. "/.cordon"))) end
            local r = h.cordon({ "policy", "explain", "--json", "example.com", "443" }, o)
            local v = doc(r)
            assert.are_not.equal("allow", v.decision)
            assert.truthy(r.stderr:find("is not trusted", 1, true), h.describe(r))
            r = ok(h.cordon({ "policy", "check", "--json" }, o))
            doc(r)
            assert.truthy(r.stderr:find("is not trusted", 1, true), h.describe(r))

            v = doc(ok(h.cordon({ "trust", "--status", "--json" }, o)))
            assert.are.equal("untrusted", v.state)
            assert.are.equal("not trusted yet", v.why)
            v = doc(ok(h.cordon({ "trust", "--json" }, o)))
            assert.is_true(v.trusted)
            assert.are.equal("policy.lua", v.files[1].path)
            assert.truthy(v.files[1].sha256:match("^%x+$"))
            assert.are.equal(o.cwd .. "/.cordon", v.project)
            v = doc(ok(h.cordon({ "trust", "--status", "--json" }, o)))
            assert.are.equal("trusted", v.state)
            assert.are.equal(cjson.null, v.why)
            v = doc(ok(h.cordon({ "trust", "--list", "--json" }, o)))
            assert.are.equal(1, #v.projects)
            assert.are.equal(o.cwd, v.projects[1].project)
            assert.are.equal("trusted", v.projects[1].state)
            assert.are.equal(1, v.projects[1].files)
            h.write_file(o.cwd .. "/.cordon/policy.lua", "return {} -- changed\n")
            v = doc(ok(h.cordon({ "trust", "--status", "--json" }, o)))
            assert.are.equal("untrusted", v.state)
            assert.truthy(v.why:find("policy.lua changed", 1, true))
            v = doc(ok(h.cordon({ "trust", "--list", "--json" }, o)))
            assert.are.equal("untrusted", v.projects[1].state)
            assert.truthy(v.projects[1].why:find("policy.lua changed", 1, true))
            v = doc(ok(h.cordon({ "trust", "--revoke", "--json" }, o)))
            assert.is_true(v.revoked)
            assert.are.same({}, doc(ok(h.cordon({ "trust", "--list", "--json" }, o))).projects)
            v = doc(ok(h.cordon({ "trust", "--revoke", "--json" }, o)))
            assert.is_false(v.revoked)
            -- policy test: one case passes, one fails (exit 1), both in the one document
            h.sh_ok("mkdir " .. h.quote(o.cwd .. "/.cordon/tests"))
            -- (what the layers say of it here, ask or deny: the case that passes)
            local said = doc(h.cordon({ "policy", "net", "--json", "example.com", "443" }, o)).verdict
            h.write_file(o.cwd .. "/.cordon/tests/a.json", cjson.encode({ network = {
                { kind = "connect", host = "example.com", port = 443, expect = said },
                { kind = "connect", host = "example.com", port = 443, expect = "allow" } } }))
            if who.uid then h.sh_ok(("chown -R %d:%d %s"):format(who.uid, who.uid, h.quote(o.cwd .. "/.cordon"))) end
            local t = h.cordon({ "policy", "test", "--json" }, o)
            assert.are.equal(1, t.code, h.describe(t))
            v = doc(t)
            assert.are.equal(1, v.failed)
            assert.are.equal(1, #v.failures)
            assert.truthy(v.failures[1]:find("network[1]", 1, true), h.describe(t))
            h.sh_ok("rm -r " .. h.quote(o.cwd .. "/.cordon/tests"))
            json_error(h.cordon({ "policy", "test", "--json", o.cwd .. "/missing" }, o))
            json_error(h.cordon({ "trust", "--json", o.cwd .. "/missing" }, o))
            -- a policy that does not load is not trusted: stdout empty, the why on stderr
            h.write_file(o.cwd .. "/.cordon/policy.lua", "return (\n")
            local bad = h.cordon({ "trust", "--json" }, o)
            assert.are.equal(125, bad.code, h.describe(bad))
            assert.are.equal("", bad.stdout, h.describe(bad))
            assert.truthy(bad.stderr:find("cordon: trust: policy.lua: does not load", 1, true), h.describe(bad))
            json_error(h.cordon({ "trust", "--json", "--status", "--revoke" }, o))
            json_error(h.cordon({ "trust", "--json", "--list", "." }, o))
        end)

        it("home and home --diff", function()
            local o = caller()
            local v = doc(ok(h.cordon({ "home", "--json" }, o)))
            assert.are.equal(cjson.null, v.layer)
            local name = "cordon-json-" .. h.token()
            ok(h.run_sh("echo x > ~/." .. name .. " && mkdir -p ~/.cache/" .. name, with(o, { workspace = o.cwd })))
            v = doc(ok(h.cordon({ "home", "--json" }, o)))
            assert.is_string(v.layer)
            assert.is_true(v.entries >= 2)
            assert.is_false(v.in_use)
            v = doc(ok(h.cordon({ "home", "--diff", "--json" }, o)))
            local seen = {}
            for _, c in ipairs(v.changes) do seen[c.path] = c end
            assert.are.equal("added", seen["." .. name].change, h.describe({ stdout = cjson.encode(v) }))
            assert.is_false(seen["." .. name].dir)
            assert.is_false(seen["." .. name].pending)
            assert.is_true(seen[".cache/" .. name].dir)
            json_error(h.cordon({ "home", "--json", o.cwd .. "/missing" }, o))
            json_error(h.cordon({ "home", "--json", "--diff", "--reset" }, o))
        end)

        it("session list and status, jobs, stop and cancel", function()
            local o = caller()
            local name = "spec-json-" .. h.token()
            h.defer(function() h.cordon({ "session", "stop", name }, with(o, { timeout = 30 })) end)
            ok(h.cordon({ "session", "start", name, "--detach" }, o))
            local v = doc(ok(h.cordon({ "session", "list", "--json" }, o)))
            assert.are.equal(1, #v.sessions)
            assert.are.equal(name, v.sessions[1].name)
            v = doc(ok(h.cordon({ "session", "status", name, "--json" }, o)))
            assert.are.equal(name, v.name)
            local r = ok(h.cordon({ "exec", name, "--background", "--turn", "t1", "--", "sleep 300" }, o))
            local pid = tonumber(r.stdout:match("PID: (%d+)"))
            r = ok(h.cordon({ "exec", name, "--background", "--", "sleep 301" }, o))
            local pid2 = tonumber(r.stdout:match("PID: (%d+)"))
            v = doc(ok(h.cordon({ "jobs", name, "--json" }, o)))
            assert.are.equal(2, #v.jobs)
            v = doc(ok(h.cordon({ "cancel", name, "t1", "--json" }, o)))
            assert.are.equal("t1", v.turn)
            assert.are.same({ pid }, v.stopped)
            v = doc(ok(h.cordon({ "publish", name, "8080", "0", "--json" }, o)))
            assert.are.equal(8080, v.port)
            assert.are.equal("127.0.0.1", v.host_addr)
            assert.is_true(v.host_port > 0)
            v = doc(ok(h.cordon({ "stop", name, tostring(pid2), "--json" }, o)))
            assert.are.equal(pid2, v.pid)
            assert.are.equal("stopped", v.state)
            json_error(h.cordon({ "session", "status", "no-such-" .. h.token(), "--json" }, o))
            json_error(h.cordon({ "jobs", "no-such-" .. h.token(), "--json" }, o))
            json_error(h.cordon({ "stop", name, "99999", "--json" }, o))
            ok(h.cordon({ "session", "stop", name }, o))
            v = doc(ok(h.cordon({ "session", "list", "--json" }, o)))
            assert.are.same({}, v.sessions)
        end)
    end)
end

describe("cordon help COMMAND", function()
    it("prints each command's usage, as COMMAND --help does; an unknown one is 125", function()
        local top = ok(h.cordon({ "--help" }))
        local n = 0
        for name in top.stdout:gmatch("\n  ([a-z]+) ") do
            n = n + 1
            local r = ok(h.cordon({ "help", name }))
            assert.truthy(r.stdout:find("usage: cordon " .. name, 1, true), h.describe(r))
            assert.are.equal(ok(h.cordon({ name, "--help" })).stdout, r.stdout)
        end
        assert.is_true(n >= 10, top.stdout)
        local r = h.cordon({ "help", "nonsense" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.are.equal("", r.stdout)
        assert.truthy(r.stderr:find("unknown command 'nonsense'", 1, true), h.describe(r))
        assert.truthy(ok(h.cordon({ "help", "logs" })).stdout:find("--tail N", 1, true))
        assert.truthy(ok(h.cordon({ "help", "help" })).stdout:find("usage: cordon help", 1, true))
    end)
end)
