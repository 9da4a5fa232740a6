-- spec/04-engine/policy_host_api_spec.lua — what the read-only `host` API lets policies read of the
-- environment: HOME, USER, PATH, LANG, TERM, and only the names the user lists in
-- ~/.config/cordon/getenv-allow. A policy reading another name fails, and its decision denies.
local h = require("spec.helpers")

local POLICY = [[
return {
    network = function(input, next)
        return { verdict = "allow", rule = "region:" .. tostring(host.getenv("CORDON_SPEC_REGION")),
                 reason = "read from the environment" }
    end,
}
]]

local function net(cfg)
    return h.cordon({ "policy", "net", "--json", "a.example", "443" },
        { env = { XDG_CONFIG_HOME = cfg, CORDON_SPEC_REGION = "eu-west" } })
end

describe("host.getenv", function()
    after_each(h.cleanup)

    it("refuses a name the user did not allow: the decision denies, naming the policy's line", function()
        local cfg = h.tmpdir()
        h.sh_ok("mkdir -p " .. h.quote(cfg .. "/cordon"))
        h.write_file(cfg .. "/cordon/policy.lua", POLICY)
        local r = net(cfg)
        assert.are.equal(1, r.code, h.describe(r))
        local v = assert(h.last_json(r.stdout), h.describe(r))
        assert.are.equal("deny", v.verdict)
        assert.truthy(v.reason:find("policy.lua:3:", 1, true), h.describe(r))
        assert.truthy(v.reason:find("getenv-allow", 1, true), h.describe(r))
    end)

    it("reads a name listed in ~/.config/cordon/getenv-allow", function()
        local cfg = h.tmpdir()
        h.sh_ok("mkdir -p " .. h.quote(cfg .. "/cordon"))
        h.write_file(cfg .. "/cordon/policy.lua", POLICY)
        h.write_file(cfg .. "/cordon/getenv-allow", "OTHER_NAME\nCORDON_SPEC_REGION\n")
        local r = net(cfg)
        assert.are.equal(0, r.code, h.describe(r))
        local v = assert(h.last_json(r.stdout), h.describe(r))
        assert.are.equal("allow", v.verdict)
        assert.are.equal("region:eu-west", v.rule)
    end)
end)
