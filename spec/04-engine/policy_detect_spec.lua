-- spec/04-engine/policy_detect_spec.lua — `cordon policy detect` as a user sees it: the recorded
-- corpus replayed through the binary (the controller's own path: lh_open, profile resolution,
-- the refusal and escalate hooks, the host override), the exact --json shape, the human lines,
-- and exit 125 with one 'cordon: policy detect:' line naming the field or offset for bad input.
local h = require("spec.helpers")
local cjson = require("cjson")

local function detect(args)
    local full = { "policy", "detect" }
    for _, a in ipairs(args) do full[#full + 1] = a end
    return h.cordon(full, { cwd = "/" })
end

local function case_file(t)
    local dir = h.tmpdir()
    local path = dir .. "/case.json"
    h.write_file(path, type(t) == "string" and t or cjson.encode(t))
    return path
end

local touch = { command = "touch /etc/motd", exit_code = 1, stdout = "",
                stderr = "touch: cannot touch '/etc/motd': Read-only file system\n", cwd = "/" }

describe("cordon policy detect", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    describe("replays the recorded corpus", function()
        local dir = h.fixtures .. "/refusal"
        -- cordon runs from "/": make the fixture path absolute
        if dir:sub(1, 1) ~= "/" then dir = os.getenv("PWD") .. "/" .. dir end
        local p = io.popen("ls " .. dir .. "/*.json 2>/dev/null")
        for file in p:lines() do
            it(file:match("([^/]+)%.json$"), function()
                local case = cjson.decode(h.read_file(file))
                local r = detect({ "--input", file, "--json" })
                assert.are.equal(0, r.code, h.describe(r))
                assert.are.equal("", r.stderr, h.describe(r))
                local out = cjson.decode(r.stdout)
                local got = {}
                for i, x in ipairs(out.refusals) do got[i] = x.kind end
                table.sort(got)
                local want = {}
                for i, k in ipairs(case.expect.kinds) do want[i] = k end
                table.sort(want)
                assert.are.same(want, got, h.describe(r))
                assert.is_false(out.ask) -- the coding profile never asks
            end)
        end
        p:close()
    end)

    it("prints exactly the documented JSON", function()
        local r = detect({ "--input", case_file(touch), "--json" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal('{"ask": false, "refusals": [{"kind": "write", "path": "/etc/motd", '
            .. '"line": "touch: cannot touch \'/etc/motd\': Read-only file system", '
            .. '"reason": "the sandbox refused a write to /etc/motd (read-only outside the workspace: --allow-write /etc/motd)"}]}\n',
            r.stdout)
    end)

    it("asks under the ops profile (ask_sandbox_off), not when not interactive or in plan mode", function()
        local r = detect({ "--input", case_file(touch), "--json", "--profile", "ops" })
        assert.is_true(cjson.decode(r.stdout).ask, h.describe(r))
        local c = {}
        for k, v in pairs(touch) do c[k] = v end
        c.interactive = false
        r = detect({ "--input", case_file(c), "--json", "--profile", "ops" })
        assert.is_false(cjson.decode(r.stdout).ask, h.describe(r))
        c.interactive, c.plan = true, true
        r = detect({ "--input", case_file(c), "--json", "--profile", "ops" })
        assert.is_false(cjson.decode(r.stdout).ask, h.describe(r))
    end)

    it("offers a network grant for a blocked destination", function()
        local c = { command = "curl https://pypi.org/", exit_code = 56, stdout = "",
                    stderr = "curl: (56) CONNECT tunnel failed, response 403\n", cwd = "/",
                    network_denied = { "pypi.org:443" }, interactive = false }
        local r = detect({ "--input", case_file(c), "--profile", "ops" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("network pypi.org:443: the sandbox's network policy blocked pypi.org:443 "
            .. "(--network-allow pypi.org:443 would allow it) [ask: network]\n", r.stdout)
    end)

    it("prints 'no refusal' for a command that failed on its own", function()
        local r = detect({ "--input", case_file({ command = "false", exit_code = 1, stdout = "",
            stderr = "" }) })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("no refusal\n", r.stdout)
    end)

    it("answers host checks from the case's host when given", function()
        local c = { command = "cat /srv/cordon-spec-none/key", exit_code = 1, stdout = "",
                    stderr = "cat: /srv/cordon-spec-none/key: No such file or directory\n", cwd = "/",
                    hidden = { "/srv/cordon-spec-none" } }
        local r = detect({ "--input", case_file(c), "--json" })
        assert.are.same({}, cjson.decode(r.stdout).refusals)
        c.host = { exists = { "/srv/cordon-spec-none/key" } }
        r = detect({ "--input", case_file(c), "--json" })
        local out = cjson.decode(r.stdout)
        assert.are.equal("hidden", out.refusals[1].kind, h.describe(r))
        assert.are.equal("/srv/cordon-spec-none/key", out.refusals[1].path)
    end)

    -- bad input: exit 125, one line naming the field or offset, nothing on stdout
    local bad = {
        { "malformed JSON", '{"command": "x", "exit_code": 1,, }', "malformed JSON at offset 32: object key (a string) expected" },
        { "trailing garbage", '{"command": "x", "exit_code": 1, "stdout": "", "stderr": ""} x', "offset 61" },
        { "bad escape", '{"command": "\\x"}', "offset 13: invalid escape" },
        { "lone surrogate", '{"command": "\\udc00"}', "lone low surrogate" },
        { "not an object", '[1, 2]', "must be a JSON object" },
        { "missing command", { exit_code = 1, stdout = "", stderr = "" }, "missing field 'command'" },
        { "missing exit_code", { command = "x", stdout = "", stderr = "" }, "missing field 'exit_code'" },
        { "missing stderr", { command = "x", exit_code = 1, stdout = "" }, "missing field 'stderr'" },
        { "exit_code a string", { command = "x", exit_code = "1", stdout = "", stderr = "" },
          "field 'exit_code': expected an integer" },
        { "exit_code fractional", { command = "x", exit_code = 1.5, stdout = "", stderr = "" },
          "field 'exit_code': expected an integer" },
        { "command a number", { command = 3, exit_code = 1, stdout = "", stderr = "" },
          "field 'command': expected a string, got a number" },
        { "writable not strings", { command = "x", exit_code = 1, stdout = "", stderr = "", writable = { 1 } },
          "field 'writable[0]': expected a string" },
        { "relative cwd", { command = "x", exit_code = 1, stdout = "", stderr = "", cwd = "a/b" },
          "field 'cwd': expected an absolute path" },
        { "host not an object", { command = "x", exit_code = 1, stdout = "", stderr = "", host = { 1 } },
          "field 'host': expected an object" },
        { "host unknown key", { command = "x", exit_code = 1, stdout = "", stderr = "", host = { files = {} } },
          "unknown field 'host.files'" },
        { "unknown field", { command = "x", exit_code = 1, stdout = "", stderr = "", colour = "red" },
          "unknown field 'colour'" },
        { "duplicate key", '{"command": "x", "command": "y"}', "offset 17: duplicate object key" },
    }
    for _, c in ipairs(bad) do
        it("bad input: " .. c[1], function()
            local r = detect({ "--input", case_file(c[2]), "--json" })
            assert.are.equal(125, r.code, h.describe(r))
            assert.are.equal("", r.stdout, h.describe(r))
            assert.is_truthy(r.stderr:match("^cordon: policy detect: [^\n]*\n$"), h.describe(r))
            assert.is_truthy(r.stderr:find(c[3], 1, true), h.describe(r))
        end)
    end

    it("bad usage: no --input, a missing file, an unknown option", function()
        local r = detect({})
        assert.are.equal(125, r.code)
        assert.is_truthy(r.stderr:find("--input FILE is required", 1, true), h.describe(r))
        r = detect({ "--input", "/nonexistent/case.json" })
        assert.are.equal(125, r.code)
        assert.is_truthy(r.stderr:find("No such file or directory", 1, true), h.describe(r))
        r = detect({ "--input", case_file(touch), "--verbose" })
        assert.are.equal(125, r.code)
        assert.is_truthy(r.stderr:find("unexpected argument '--verbose'", 1, true), h.describe(r))
    end)
end)
