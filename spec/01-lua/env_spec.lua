-- Specs for cordon.env: the default answer and the check of an answer's shape. What an unset
-- pattern matches is the engine's (engine/tests/test_name_glob.c; applied: spec/04-engine).
local env = require("cordon.env")

describe("cordon.env.default", function()
    it("sets the sandbox variables and the profile's env.set, unsets env.strip", function()
        local r = env.default { env = { set = { EDITOR = "true" }, strip = { "*_SECRET" } } }
        assert.are.same({ EDITOR = "true", CORDON_SANDBOX = "1", TMPDIR = "/tmp" }, r.set)
        assert.are.same({ "*_SECRET" }, r.unset)
        assert.is_nil(env.check_result(r))
    end)
    it("works for a profile without env", function()
        assert.are.same({ CORDON_SANDBOX = "1", TMPDIR = "/tmp" }, env.default({}).set)
    end)
end)

describe("cordon.env.check_result", function()
    local bad = {
        { 1, "expected a table" },
        { { set = { A = 1 } }, "set.A: expected a string" },
        { { set = { ["A=B"] = "x" } }, "bad variable name" },
        { { unset = "A" }, "unset: expected a list" },
        { { unset = { x = "A" } }, "not a map" },
        { { unset = { "" } }, "unset%[1%]" },
        { { other = {} }, "unknown key 'other'" },
    }
    for i, c in ipairs(bad) do
        it("refuses case " .. i, function()
            assert.matches(c[2], env.check_result(c[1]))
        end)
    end
end)
