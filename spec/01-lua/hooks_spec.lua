-- Specs for cordon.hooks (layer registration and chaining) and cordon.sandbox (policy _ENV).
local hooks = require("cordon.hooks")
local sandbox = require("cordon.sandbox")

describe("cordon.hooks", function()
    it("chains layers: the top one runs first, next() calls the one below", function()
        local reg = hooks.new_registry()
        hooks.add_layer(reg, { profile = function(input) return { trail = { input.name, "base" } } end }, "base.lua")
        hooks.add_layer(reg, { profile = function(input, next)
            local r = next(input)
            r.trail[#r.trail + 1] = "top"
            return r
        end }, "top.lua")
        local f = hooks.chain(reg.profile)
        assert.are.same({ "x", "base", "top" }, f({ name = "x" }).trail)
    end)
    it("next() below the lowest layer returns nil", function()
        local reg = hooks.new_registry()
        hooks.add_layer(reg, { environment = function(input, next) return { below = next(input) } end }, "a.lua")
        assert.are.same({}, hooks.chain(reg.environment)({}))
    end)
    it("has no chain for a hook nobody defines", function()
        assert.is_nil(hooks.chain(hooks.new_registry().network))
    end)
    describe("a project's profile hook keeps the credentials the layers below resolved", function()
        local function resolve(top)
            local reg = hooks.new_registry()
            hooks.add_layer(reg, { profile = function()
                return { name = "coding", credentials = { T = { hosts = { "a.test" } } } }
            end }, "user.lua")
            hooks.add_layer(reg, { profile = top }, "/ws/.cordon/policy.lua", true)
            return pcall(hooks.chain(reg.profile), { name = "coding" })
        end
        it("passes them through, with any other change", function()
            local ok, p = resolve(function(input, next)
                local p = next(input)
                p.network = { allow = { "b.test" } }
                return p
            end)
            assert.is_true(ok, p)
            assert.are.same({ T = { hosts = { "a.test" } } }, p.credentials)
        end)
        for name, top in pairs({
            ["an added one"] = function(input, next)
                local p = next(input); p.credentials.U = { hosts = { "c.test" } }; return p
            end,
            ["a widened host, changed in place"] = function(input, next)
                local p = next(input); p.credentials.T.hosts[2] = "c.test"; return p
            end,
            ["a profile of its own, not calling next"] = function()
                return { name = "x", credentials = { T = { hosts = { "a.test" } } } }
            end,
        }) do
            it("refuses " .. name .. ", naming the file", function()
                local ok, err = resolve(top)
                assert.is_false(ok)
                assert.matches("^/ws/.cordon/policy.lua: hook 'profile': a project's policy may not add or change credentials", err)
            end)
        end
        it("leaves a layer that is not the project's alone", function()
            local reg = hooks.new_registry()
            hooks.add_layer(reg, { profile = function() return { credentials = { U = {} } } end }, "mine.lua")
            assert.are.same({ U = {} }, hooks.chain(reg.profile)({}).credentials)
        end)
    end)
    local bad = {
        { 42, "must return a table" },
        { { netwrok = function() end }, "unknown hook 'netwrok'" },
        { { profile = "coding" }, "hook 'profile' must be a function" },
    }
    for i, c in ipairs(bad) do
        it("refuses bad layer " .. i .. " naming the file", function()
            local ok, err = pcall(hooks.add_layer, hooks.new_registry(), c[1], "/x/policy.lua")
            assert.is_false(ok)
            assert.matches("^/x/policy.lua: .*" .. c[2]:gsub("%p", "%%%0"), err)
        end)
    end
end)

describe("cordon.sandbox", function()
    local host = { home = function() return "/home/u" end }
    local api = sandbox.api(_G, host, require)
    local function run(src)
        local env = sandbox.env(api)
        return assert(load(src, "@/t/policy.lua", "t", env))()
    end
    it("exposes only the safe API", function()
        assert.is_true(run("return io == nil and os == nil and debug == nil and package == nil"))
        assert.is_true(run("return dofile == nil and loadfile == nil and load == nil and rawset == nil"))
        assert.is_true(run("return collectgarbage == nil"))
        assert.are.equal("/home/u", run("return host.home()"))
        assert.are.equal("AB", run("return string.upper('ab')"))
        assert.are.equal(3, run("local n = 0 for _ in pairs(table) do n = n + 1 end return n > 2 and 3"))
    end)
    it("raises on writes to undeclared globals, with file:line", function()
        local ok, err = pcall(run, "\nx = 1")
        assert.is_false(ok)
        assert.are.equal("/t/policy.lua:2: assignment to undeclared global 'x' (use local)", err)
    end)
    it("keeps the shared tables read-only", function()
        assert.has_error(function() run("string.upper = nil") end)
        assert.has_error(function() run("host.home = nil") end)
        assert.has_error(function() run("setmetatable(_ENV, nil)") end)
        assert.are.equal("AB", string.upper("ab"))
    end)
    it("lets require reach only cordon.* modules, read-only", function()
        assert.is_table(run("return require('cordon.env')"))
        assert.has_error(function() run("return require('io')") end)
        assert.has_error(function() run("require('cordon.env').matches = nil") end)
    end)
    it("gives each file its own _ENV", function()
        -- what one file's environment holds is not seen by another's, while both read the API
        local e1, e2 = sandbox.env(api), sandbox.env(api)
        rawset(e1, "only_in_e1", "mine") -- the host can declare a name; a policy cannot
        local function read(env) return assert(load("return only_in_e1, host.home()", "=t", "t", env))() end
        assert.are.same({ "mine", "/home/u" }, { read(e1) })
        assert.are.same({ nil, "/home/u" }, { read(e2) })
        assert.is_nil(api.only_in_e1)
    end)
end)
