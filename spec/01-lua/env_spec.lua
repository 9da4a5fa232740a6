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

describe("cordon.env grants", function()
    it("points SSH_AUTH_SOCK, GNUPGHOME and each socket's env at their fixed places", function()
        local r = env.default { grants = { ssh_agent = true, gpg_agent = true,
                                           sockets = { podman = { from = "/p", env = "PODMAN_SOCK" },
                                                       quiet = { from = "/q" } } } }
        assert.are.equal("/run/cordon/grants/ssh_agent.sock", r.set.SSH_AUTH_SOCK)
        assert.are.equal("/run/cordon/gnupg", r.set.GNUPGHOME)
        assert.are.equal("/run/cordon/grants/podman.sock", r.set.PODMAN_SOCK)
        assert.is_nil(env.check_result(r))
    end)
    it("sets none of them without grants", function()
        local r = env.default { grants = { ssh_agent = false } }
        assert.is_nil(r.set.SSH_AUTH_SOCK)
        assert.is_nil(r.set.GNUPGHOME)
    end)
end)
