-- Specs for cordon.profile: schema validation, merging, extends resolution and error messages.
local profile = require("cordon.profile")

-- A loader over an in-memory set of profile files: name -> source.
local function loader(files)
    return function(name)
        local src = files[name]
        if not src then error("unknown profile '" .. name .. "'", 0) end
        local path = "/p/" .. name .. ".lua"
        return assert(load(src, "@" .. path, "t", {}))(), path, src
    end
end

describe("cordon.profile.schema", function()
    -- The schema is made from cordon.profile_keys, the rows of the C table of profile keys.
    local function at(schema, name)
        local v = schema
        for part in name:gmatch("[^.]+") do v = type(v) == "table" and v[part] or nil end
        return v
    end

    it("has each row of cordon.profile_keys as its kind, and nothing else", function()
        local rows, n = require("cordon.profile_keys"), 0
        for _, row in ipairs(rows) do
            assert.are.equal(row[2], at(profile.schema, row[1]), row[1])
        end
        local function count(t)
            for _, v in pairs(t) do
                if type(v) == "table" then count(v) else n = n + 1 end
            end
        end
        count(profile.schema)
        assert.are.equal(#rows, n)
    end)

    it("has each top-level key documented in lua/HOOKS.md's table of profile keys", function()
        -- lua/HOOKS.md, beside the lua/cordon/ this cordon.profile came from
        local module = assert(package.searchpath("cordon.profile", package.path))
        local f = assert(io.open((module:gsub("cordon/profile%.lua$", "HOOKS.md"))))
        local doc = f:read("a")
        f:close()
        for name in pairs(profile.schema) do
            assert.is_truthy(doc:find("\n| `" .. name .. "` |", 1, true), name)
        end
    end)

    it("refuses a key that no row names, with its dotted name", function()
        assert.are.same({ "network.nope", "unknown key" },
            { profile.validate({ network = { nope = true } }) })
    end)
end)

describe("cordon.profile.validate", function()
    local cases = {
        { {}, nil },
        { { workspace = "/w", writable = { "~/x" }, json = true }, nil },
        { { network = { allow = { "a.com" }, loopback = true } }, nil },
        { { rlimits = { core = 0, nofile = { 1024, 4096 }, as = "unlimited" } }, nil },
        { { escalation = { permission_timeout = "5m" } }, nil },
        { { escalation = { permission_timeout = 30 } }, nil },
        { { env = { set = { A = "1" }, strip = { "*_TOKEN" } } }, nil },
        { { colour = "red" }, "colour", "unknown key" },
        { { network = { allow = "a.com" } }, "network.allow", "expected a list of strings, got string" },
        { { network = { loopback = "yes" } }, "network.loopback", "expected a boolean" },
        { { network = { speed = 1 } }, "network.speed", "unknown key" },
        { { network = true }, "network", "expected a table" },
        { { writable = { "/a", 3 } }, "writable", "item 2" },
        { { writable = { x = "/a" } }, "writable", "expected a list" },
        { { run_binds = { "relative" } }, "run_binds", "absolute path" },
        { { rlimits = { nofile = -1 } }, "rlimits.nofile", "expected an integer" },
        { { rlimits = { nofile = { 10, 5 } } }, "rlimits.nofile", "soft limit above hard" },
        { { rlimits = { nofile = 1.5 } }, "rlimits.nofile", "got float" },
        { { rlimits = { nice = 1 } }, "rlimits.nice", "unknown key" },
        { { escalation = { permission_timeout = "soon" } }, "escalation.permission_timeout", "duration" },
        { { extends = "Bad Name" }, "extends", "profile name" },
        { { session = { grace = -1 } }, "session.grace", ">= 0" },
        { { session = { max_background = 2.5 } }, "session.max_background", "integer" },
        { { env = { set = { A = 1 } } }, "env.set", "expected a string value" },
        { { env = { set = { ["1A"] = "x" } } }, "env.set", "bad name" },
        { { [1] = "x" }, "1", "unknown key" },
    }
    for i, c in ipairs(cases) do
        it("case " .. i .. (c[2] and (": " .. c[2]) or ": valid"), function()
            local kp, msg = profile.validate(c[1])
            assert.are.equal(c[2], kp)
            if c[3] then assert.matches(c[3], msg, 1, true) end
        end)
    end
    it("rejects a non-table", function()
        local kp, msg = profile.validate(3)
        assert.is_not_nil(kp)
        assert.matches("expected a table", msg)
    end)
end)

describe("cordon.profile.merge", function()
    it("appends lists without repeats, merges tables, overrides scalars", function()
        local base = { hidden = { "~/.ssh", "/etc/shadow" }, network = { loopback = false, allow = { "a" } },
                       json = false, env = { set = { A = "1" } }, rlimits = { core = 0 } }
        local over = { hidden = { "~/.config", "~/.ssh" }, network = { loopback = true },
                       json = true, env = { set = { B = "2" } }, rlimits = { nofile = { 1, 2 } } }
        local m = profile.merge(base, over)
        assert.are.same({ "~/.ssh", "/etc/shadow", "~/.config" }, m.hidden)
        assert.are.same({ loopback = true, allow = { "a" } }, m.network)
        assert.is_true(m.json)
        assert.are.same({ A = "1", B = "2" }, m.env.set)
        assert.are.same({ core = 0, nofile = { 1, 2 } }, m.rlimits)
        assert.are.same({ "~/.ssh", "/etc/shadow" }, base.hidden) -- inputs untouched
    end)
    it("copies tables it takes over", function()
        local over = { hidden = { "/x" } }
        local m = profile.merge({}, over)
        m.hidden[2] = "/y"
        assert.are.same({ "/x" }, over.hidden)
    end)
end)

describe("cordon.profile.resolve", function()
    it("follows extends, child over parent", function()
        local r = profile.resolve("child", loader {
            base = 'return { hidden = { "/a" }, json = false, description = "base" }',
            child = 'return { extends = "base", hidden = { "/b" }, json = true }',
        })
        assert.are.same({ "/a", "/b" }, r.hidden)
        assert.is_true(r.json)
        assert.are.equal("base", r.description)
        assert.is_nil(r.extends)
        assert.are.equal("child", r.name)
    end)
    it("reports a cycle with file:line and the chain", function()
        local ok, err = pcall(profile.resolve, "a", loader {
            a = 'return {\n  extends = "b" }',
            b = 'return {\n\n  extends = "a" }',
        })
        assert.is_false(ok)
        assert.are.equal("/p/b.lua:3: extends cycle: a -> b -> a", err)
    end)
    it("reports a self-extending profile", function()
        local ok, err = pcall(profile.resolve, "a", loader { a = 'return { extends = "a" }' })
        assert.is_false(ok)
        assert.matches("extends cycle: a %-> a", err)
    end)
    it("names the file, the line and the key of a bad value", function()
        local ok, err = pcall(profile.resolve, "x", loader {
            x = 'return {\n  description = "x",\n  network = {\n    ask = 1,\n  },\n}',
        })
        assert.is_false(ok)
        assert.are.equal("/p/x.lua:4: key 'network.ask': expected a boolean, got integer", err)
    end)
    it("validates the parent too, naming the parent's file", function()
        local ok, err = pcall(profile.resolve, "c", loader {
            p = 'return { bogus = true }',
            c = 'return { extends = "p" }',
        })
        assert.is_false(ok)
        assert.matches("^/p/p.lua:1: key 'bogus': unknown key", err)
    end)
    it("passes the loader's error through", function()
        local ok, err = pcall(profile.resolve, "c", loader { c = 'return { extends = "gone" }' })
        assert.is_false(ok)
        assert.are.equal("unknown profile 'gone'", err)
    end)
end)

describe("cordon.profile.valid_name", function()
    for _, n in ipairs { "coding", "a", "0x", "my-profile_2" } do
        it("accepts " .. n, function() assert.is_true(profile.valid_name(n)) end)
    end
    for _, n in ipairs { "", "Coding", "-x", "_x", "a/b", "../x", "a.b", "a b" } do
        it("refuses '" .. n .. "'", function() assert.is_false(profile.valid_name(n)) end)
    end
end)

describe("cordon.profile credentials", function()
    local cases = {
        { { credentials = { GITHUB_TOKEN = { hosts = { "api.github.com", "github.com:443" } },
                            NPM_TOKEN = { hosts = { "*.npmjs.org" }, from = "file:/run/npm" },
                            K = { hosts = { "h" }, from = "cmd:pass show k" },
                            L = { hosts = { "h" }, from = "$OTHER" } } }, nil },
        { { credentials = { "GITHUB_TOKEN" } }, "credentials", "expected a table of NAME" },
        { { credentials = { ["1X"] = { hosts = { "h" } } } }, "credentials", "bad name 1X" },
        { { credentials = { A = "h" } }, "credentials.A", "expected a table" },
        { { credentials = { A = { hosts = {} } } }, "credentials.A", "hosts: expected" },
        { { credentials = { A = { hosts = { "a b" } } } }, "credentials.A", "hosts: expected" },
        { { credentials = { A = { hosts = { "h" }, from = "/etc/x" } } }, "credentials.A", "from: expected" },
        { { credentials = { A = { hosts = { "h" }, to = "x" } } }, "credentials.A", "unknown key 'to'" },
    }
    for i, c in ipairs(cases) do
        it("case " .. i .. (c[2] and (": " .. c[2]) or ": valid"), function()
            local kp, msg = profile.validate(c[1])
            assert.are.equal(c[2], kp)
            if c[3] then assert.matches(c[3], msg, 1, true) end
        end)
    end
    it("merges credentials by name, a child's entry over its parent's", function()
        local m = profile.merge({ credentials = { A = { hosts = { "a" } } } },
                                { credentials = { A = { hosts = { "a2" } }, B = { hosts = { "b" } } } })
        assert.are.same({ A = { hosts = { "a2" } }, B = { hosts = { "b" } } }, m.credentials)
    end)
end)

describe("cordon.profile grants", function()
    local cases = {
        { { grants = { ssh_agent = true, gpg_agent = false } }, nil },
        { { grants = { sockets = { podman = { from = "$PODMAN_SOCK", env = "DOCKER_HOST_SOCK" },
                                   x = { from = "~/.x/agent.sock" }, y = { from = "/run/y.sock" } } } }, nil },
        { { grants = { ssh_agent = "yes" } }, "grants.ssh_agent", "expected a boolean" },
        { { grants = { fido = true } }, "grants.fido", "unknown key" },
        { { grants = { sockets = { "/run/a.sock" } } }, "grants.sockets", "expected a table of NAME" },
        { { grants = { sockets = { Bad = { from = "/a" } } } }, "grants.sockets", "bad name Bad" },
        { { grants = { sockets = { ssh_agent = { from = "/a" } } } }, "grants.sockets.ssh_agent", "built-in" },
        { { grants = { sockets = { a = "/a" } } }, "grants.sockets.a", "expected a table" },
        { { grants = { sockets = { a = { from = "rel.sock" } } } }, "grants.sockets.a", "from: expected" },
        { { grants = { sockets = { a = { from = "$1X" } } } }, "grants.sockets.a", "from: expected" },
        { { grants = { sockets = { a = { from = "/a", to = "/b" } } } }, "grants.sockets.a", "unknown key 'to'" },
        { { grants = { sockets = { a = { from = "/a", env = "A-B" } } } }, "grants.sockets.a", "env: expected" },
    }
    for i, c in ipairs(cases) do
        it("case " .. i .. (c[2] and (": " .. c[2]) or ": valid"), function()
            local kp, msg = profile.validate(c[1])
            assert.are.equal(c[2], kp)
            if c[3] then assert.matches(c[3], msg, 1, true) end
        end)
    end
    it("merges sockets by name, a child's entry over its parent's", function()
        local m = profile.merge({ grants = { ssh_agent = true, sockets = { a = { from = "/a" } } } },
                                { grants = { sockets = { a = { from = "/a2" }, b = { from = "/b" } } } })
        assert.are.same({ ssh_agent = true, sockets = { a = { from = "/a2" }, b = { from = "/b" } } }, m.grants)
    end)
    it("names the line of the bad entry", function()
        local ok, err = pcall(profile.resolve, "c", loader {
            c = 'return { grants = { sockets = {\n  ok = { from = "/x" },\n  zz = { from = "x" },\n} } }',
        })
        assert.is_false(ok)
        assert.matches("^/p/c.lua:3: key 'grants.sockets.zz': from: expected", err)
    end)
end)
