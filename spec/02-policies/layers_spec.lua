-- spec/02-policies/layers_spec.lua — every combination of layers: built-in, + user
-- ($XDG_CONFIG_HOME/cordon/policy.lua), + trusted project (.cordon/policy.lua), + --policy FILE,
-- each seen through `cordon policy explain` (one line per layer defining the hook, then the
-- layer that decided). A layer wraps the one below through next(input).
-- Drives the built binary ($CORDON_BIN); nothing is sandboxed and no network is touched.
local h = require("spec.helpers")

local fixture = h.fixtures .. "/project"

local USER_POLICY = [[
-- the user's layer: denies one host, passes everything else down
return {
    network = function(input, next)
        if input.host == "blocked.example" then
            return { verdict = "deny", rule = "blocked.example", reason = "the user said no" }
        end
        return next(input)
    end,
}
]]

local TOP_POLICY = [[
-- a --policy layer: allows everything the layers below did not allow
return {
    network = function(input, next)
        local d = next(input)
        if d.verdict ~= "allow" then return { verdict = "allow", rule = "*", reason = "one run" } end
        return d
    end,
}
]]

-- layers: { user = bool, project = bool, top = bool } -> ws, env, extra args
local function setup(layers)
    local ws = h.workspace()
    local cfg = h.tmpdir()
    local env = { XDG_CONFIG_HOME = cfg }
    if layers.user then
        h.sh_ok("mkdir -p " .. h.quote(cfg .. "/cordon"))
        h.write_file(cfg .. "/cordon/policy.lua", USER_POLICY)
    end
    if layers.project then
        h.sh_ok(("mkdir -p %s/.cordon && cp -r %s/policy.lua %s/profiles %s/.cordon/"):format(
            h.quote(ws), h.quote(fixture), h.quote(fixture), h.quote(ws)))
        local r = h.cordon({ "trust" }, { cwd = ws, env = env })
        assert(r.code == 0, h.describe(r))
    end
    local extra = {}
    if layers.top then
        h.write_file(ws .. "/top.lua", TOP_POLICY)
        extra = { "--policy", ws .. "/top.lua" }
    end
    return ws, env, extra
end

local function explain(layers, host, port)
    local ws, env, extra = setup(layers)
    local args = { "policy", "explain" }
    for _, a in ipairs(extra) do args[#args + 1] = a end
    for _, a in ipairs({ "--kind", "connect", host, tostring(port) }) do args[#args + 1] = a end
    local r = h.cordon(args, { cwd = ws, env = env })
    local lines = {}
    for l in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = l end
    return r, lines
end

describe("policy layers", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    -- layers, host, port -> exit code, number of layer lines, verdict, pattern of the decider
    local cases = {
        { {}, "registry.internal.example", 443, 1, 1, "ask", "policies/00%-default%.lua %(layer 1%)" },
        { { user = true }, "blocked.example", 443, 1, 2, "deny", "cordon/policy%.lua %(layer 2%)" },
        { { user = true }, "registry.internal.example", 443, 1, 2, "ask", "00%-default%.lua %(layer 1%)" },
        { { project = true }, "registry.internal.example", 443, 0, 2, "allow", "%.cordon/policy%.lua %(layer 2%)" },
        { { user = true, project = true }, "registry.internal.example", 443, 0, 3, "allow",
          "%.cordon/policy%.lua %(layer 3%)" },
        { { user = true, project = true }, "blocked.example", 443, 1, 3, "deny", "cordon/policy%.lua %(layer 2%)" },
        { { user = true, project = true, top = true }, "blocked.example", 443, 0, 4, "allow", "top%.lua %(layer 4%)" },
        { { top = true }, "registry.internal.example", 443, 0, 2, "allow", "top%.lua %(layer 2%)" },
        { { project = true, top = true }, "registry.internal.example", 443, 0, 3, "allow",
          "%.cordon/policy%.lua %(layer 2%)" },
    }
    for i, c in ipairs(cases) do
        local names = {}
        for k in pairs(c[1]) do names[#names + 1] = k end
        table.sort(names)
        it(("case %d: built-in%s, %s:%d -> %s"):format(i, #names > 0 and " + " .. table.concat(names, " + ") or "",
            c[2], c[3], c[6]), function()
            local r, lines = explain(c[1], c[2], c[3])
            assert.are.equal(c[4], r.code, h.describe(r))
            assert.are.equal(c[5] + 3, #lines, h.describe(r)) -- header, layers, decision, decided by
            assert.are.equal("decision: " .. c[6], lines[#lines - 1], h.describe(r))
            assert.matches("^decided by: .*" .. c[7] .. "$", lines[#lines], h.describe(r))
        end)
    end

    it("a project profile is looked up before the user's and the built-in ones", function()
        local ws, env = setup({ project = true })
        local r = h.cordon({ "policy", "explain", "--profile", "web" }, { cwd = ws, env = env })
        assert.are.equal(0, r.code, h.describe(r))
        local r2 = h.cordon({ "policy", "check" }, { cwd = ws, env = env })
        assert.are.equal(0, r2.code, h.describe(r2))
    end)

    it("--policy FILE that does not exist stops the run with its path", function()
        local ws = h.workspace()
        local r = h.cordon({ "run", "--policy", ws .. "/nope.lua", "--", "/bin/true" }, { cwd = ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.matches("nope%.lua: No such file or directory", r.stderr)
    end)
end)
