-- Specs for cordon.env: unset patterns (only `*` is special), applying an answer, the default.
local env = require("cordon.env")

describe("cordon.env.matches", function()
    local cases = {
        { "*_API_KEY", "OPENAI_API_KEY", true },
        { "*_API_KEY", "_API_KEY", true },
        { "*_API_KEY", "OPENAI_API_KEYS", false },
        { "*_TOKEN", "GITHUB_TOKEN", true },
        { "*_TOKEN", "TOKEN", false },
        { "AWS_*", "AWS_SECRET_ACCESS_KEY", true },
        { "A*B*C", "AxxBxxC", true },
        { "A*B*C", "AxxCxxB", false },
        { "SSH_AUTH_SOCK", "SSH_AUTH_SOCK", true },
        { "SSH_AUTH_SOCK", "SSH_AUTH_SOCKET", false },
        { "A.B", "AxB", false },        -- Lua magic characters are literal
        { "A%B", "A%B", true },
        { "A?", "AB", false },          -- `?` is literal too
        { "*", "ANYTHING", true },
    }
    for _, c in ipairs(cases) do
        it(("%s %s %s"):format(c[1], c[3] and "matches" or "does not match", c[2]), function()
            assert.are.equal(c[3], env.matches(c[1], c[2]))
        end)
    end
end)

describe("cordon.env.apply", function()
    it("removes unset names and patterns, then sets", function()
        local out = env.apply(
            { PATH = "/bin", OPENAI_API_KEY = "x", GH_TOKEN = "y", TMPDIR = "/var/t", LANG = "C" },
            { TMPDIR = "/tmp", CORDON_SANDBOX = "1" },
            { "*_API_KEY", "*_TOKEN" })
        assert.are.same({ PATH = "/bin", TMPDIR = "/tmp", CORDON_SANDBOX = "1", LANG = "C" }, out)
    end)
end)

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
