-- Specs for policies/00-default.lua run under plain lua5.4 in the same sandbox the engine uses
-- (cordon.sandbox), with a host table whose profile() loads the real profiles/ files.
local sandbox = require("cordon.sandbox")
local hooks = require("cordon.hooks")
local cenv = require("cordon.env")

local root = os.getenv("CORDON_SOURCE_DIR") or "."

local api
local host = {
    home = function() return "/home/u" end,
    workspace = function() return nil end,
    exists = function() return false end,
}
function host.profile(name)
    local path = root .. "/profiles/" .. name .. ".lua"
    local f = io.open(path)
    if not f then error("unknown profile '" .. name .. "'", 0) end
    local src = f:read("a")
    f:close()
    local chunk = assert(load(src, "@" .. path, "t", sandbox.env(api)))
    return chunk(), path, src
end
api = sandbox.api(_G, host, require)

local function load_policy(path)
    local chunk, err = loadfile(path, "t", sandbox.env(api))
    if not chunk then error(err, 0) end
    return chunk()
end

local policy = load_policy(root .. "/policies/00-default.lua")

describe("policies/00-default.lua profile hook", function()
    -- name, flags -> checks on the result
    local cases = {
        { "coding", {}, function(r)
            assert.are.equal("coding", r.name)
            assert.is_nil(r.extends)
            assert.is_false(r.workspace_readonly)
        end },
        { "strict", {}, function(r)
            assert.is_true(r.seccomp.block_unix_sockets)
            assert.are.equal(1024, r.rlimits.nofile)
            assert.are.equal(0, r.rlimits.core)
        end },
        { "readonly", {}, function(r) assert.is_true(r.workspace_readonly) end },
        { "ops", {}, function(r) assert.is_true(r.escalation.ask_sandbox_off) end },
        { "coding", { writable = { "/data" }, hidden = { "~/x" }, network = { loopback = true }, json = true },
          function(r)
              assert.are.same({ "/data" }, r.writable)
              assert.are.equal("~/x", r.hidden[#r.hidden])
              assert.is_true(r.network.loopback)
              assert.is_false(r.network.unrestricted)
              assert.is_true(r.json)
          end },
        { "strict", { workspace = "/w", allow_docker = true }, function(r)
            assert.are.equal("/w", r.workspace)
            assert.is_true(r.allow_docker)
        end },
    }
    for i, c in ipairs(cases) do
        it(("case %d: %s"):format(i, c[1]), function()
            local r = policy.profile({ name = c[1], flags = c[2] }, function() return nil end)
            assert.is_nil(require("cordon.profile").validate(r))
            c[3](r)
        end)
    end
    it("refuses bad flags", function()
        assert.has_error(function()
            policy.profile({ name = "coding", flags = { writable = "/x" } })
        end, "command-line flags: key 'writable': expected a list of strings, got string")
    end)
    it("passes an unknown profile's error through", function()
        assert.has_error(function() policy.profile({ name = "nope", flags = {} }) end, "unknown profile 'nope'")
    end)
end)

describe("policies/00-default.lua environment hook", function()
    it("strips secrets, sets the sandbox variables", function()
        -- the answer only: the engine applies it (spec/04-engine, "cordon run: environment")
        local profile = policy.profile({ name = "coding", flags = {} })
        local r = policy.environment({ profile = profile, env = {} })
        assert.is_nil(cenv.check_result(r))
        assert.are.same({ "*_API_KEY", "*_TOKEN", "*_SECRET", "*_PASSWORD", "AWS_SECRET_ACCESS_KEY",
                          "AWS_SESSION_TOKEN", "SSH_AUTH_SOCK", "GPG_AGENT_INFO",
                          "DBUS_SESSION_BUS_ADDRESS" }, r.unset)
        local proxy = "http://127.0.0.1:18080"
        assert.are.same({ CORDON_SANDBOX = "1", TMPDIR = "/tmp",
                          HTTP_PROXY = proxy, HTTPS_PROXY = proxy, ALL_PROXY = proxy,
                          http_proxy = proxy, https_proxy = proxy, all_proxy = proxy,
                          NO_PROXY = r.set.NO_PROXY, no_proxy = r.set.no_proxy,
                          CORDON_SOCKS_PROXY = "socks5h://127.0.0.1:18081",
                          CORDON_SSH_PROXY_COMMAND = r.set.CORDON_SSH_PROXY_COMMAND,
                          GIT_SSH_COMMAND = r.set.GIT_SSH_COMMAND, NODE_USE_ENV_PROXY = "1" }, r.set)
        assert.truthy(r.set.CORDON_SSH_PROXY_COMMAND:match("nc %%h %%p$"))
    end)
end)

describe("bad policies (spec/fixtures/policies)", function()
    local fixtures = root .. "/spec/fixtures/policies/"
    local cases = {
        { "not_a_table.lua", "must return a table" },
        { "unknown_hook.lua", "unknown hook 'netwrok'" },
        { "hook_not_function.lua", "hook 'profile' must be a function" },
        { "global_write.lua", "global_write.lua:2: assignment to undeclared global 'counter'" },
    }
    for _, c in ipairs(cases) do
        it(c[1] .. " fails to load with file and reason", function()
            local ok, err = pcall(function()
                hooks.add_layer(hooks.new_registry(), load_policy(fixtures .. c[1]), fixtures .. c[1])
            end)
            assert.is_false(ok)
            assert.matches(c[1], err, 1, true)
            assert.matches(c[2], err, 1, true)
        end)
    end
    it("raises.lua loads, and its hook error names file:line", function()
        local reg = hooks.new_registry()
        hooks.add_layer(reg, policy, "00-default.lua")
        hooks.add_layer(reg, load_policy(fixtures .. "raises.lua"), fixtures .. "raises.lua")
        local ok, err = pcall(hooks.chain(reg.profile), { name = "coding", flags = {} })
        assert.is_false(ok)
        assert.matches("raises.lua:4: refusing coding", err, 1, true)
    end)
end)
