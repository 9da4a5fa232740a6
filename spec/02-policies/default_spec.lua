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

local function count(list, item)
    local n = 0
    for _, v in ipairs(list or {}) do if v == item then n = n + 1 end end
    return n
end

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
        -- a writable home: ~/.ssh hidden whole (its config and known_hosts would be writable),
        -- not only by coding's rule (hidden_except), which shows those
        { "coding", { allow_home_workspace = true }, function(r)
            assert.are.equal(1, count(r.hidden, "~/.ssh"))
        end },
        { "coding", { writable = { "/home" } }, function(r)
            assert.are.equal(1, count(r.hidden, "~/.ssh"))
        end },
        { "coding", { writable = { "~/" } }, function(r)
            assert.are.equal(1, count(r.hidden, "~/.ssh"))
        end },
        { "coding", { writable = { "~/src" } }, function(r)
            assert.are.equal(0, count(r.hidden, "~/.ssh"))
            assert.is_table(r.hidden_except["~/.ssh"])
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
        assert.are.same(profile.env.strip, r.unset)
        assert.is_true(#r.unset > 0)
        local proxy = "http://127.0.0.1:18080"
        assert.are.same({ CORDON_SANDBOX = "1", TMPDIR = "/tmp",
                          HTTP_PROXY = proxy, HTTPS_PROXY = proxy, ALL_PROXY = proxy,
                          http_proxy = proxy, https_proxy = proxy, all_proxy = proxy,
                          NO_PROXY = r.set.NO_PROXY, no_proxy = r.set.no_proxy,
                          CORDON_SOCKS_PROXY = "socks5h://127.0.0.1:18081",
                          CORDON_SSH_PROXY_COMMAND = r.set.CORDON_SSH_PROXY_COMMAND,
                          NODE_USE_ENV_PROXY = "1",
                          -- the coding profile's own env.set: npm's update check asks the
                          -- registry on the side of every command, a refused request each time
                          NPM_CONFIG_UPDATE_NOTIFIER = "false" }, r.set)
        assert.truthy(r.set.CORDON_SSH_PROXY_COMMAND:match("nc %%h %%p$"))
    end)
end)

describe("policies/00-default.lua environment hook: credentials", function()
    -- What the engine does with an unset entry (engine/base/name_glob.c): only `*` is special,
    -- the whole name must match, case-sensitive.
    local function glob(p, s)
        return s:match("^" .. p:gsub("[%^%$%(%)%%%.%[%]%+%-%?]", "%%%0"):gsub("%*", ".*") .. "$") ~= nil
    end
    local function stripped(r, name)
        for _, p in ipairs(r.unset) do if glob(p, name) then return p end end
        return nil
    end
    local function answer(caller_env, flags)
        local profile = policy.profile({ name = "coding", flags = flags or {} })
        local r = policy.environment({ profile = profile, env = caller_env })
        assert.is_nil(cenv.check_result(r))
        return r
    end

    it("strips every credential variable the coding profile's patterns name", function()
        local r = answer({})
        for _, name in ipairs {
            "PGPASSWORD", "MYSQL_PWD", "STRIPE_SECRET_KEY", "GITHUB_PAT", "OPENAI_KEY", "CI_JOB_JWT",
            "CI_JOB_JWT_V2", "OPENAI_API_KEY", "API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "AWS_SESSION_TOKEN",
            "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "MYSQL_ROOT_PASSWORD", "PASSWORD", "CLIENT_SECRET",
            "SECRET_KEY_BASE", "MY_SECRET", "NPM_CONFIG__AUTH", "npm_config__auth",
            "npm_config_//registry.npmjs.org/:_authToken", "npm_config_key", "db_password",
            "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
        } do
            assert.truthy(stripped(r, name), name .. " survives")
        end
    end)

    it("keeps the ordinary variables a shell and a build need", function()
        local r = answer({})
        for _, name in ipairs {
            "PATH", "HOME", "PWD", "OLDPWD", "TERM", "COLORTERM", "LANG", "LANGUAGE", "LC_ALL",
            "LC_CTYPE", "LS_COLORS", "SHELL", "USER", "LOGNAME", "SHLVL", "HOSTNAME", "DISPLAY",
            "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_SESSION_TYPE",
            "EDITOR", "VISUAL", "PAGER", "MAIL", "TZ", "TMUX", "SSH_TTY", "SSH_CONNECTION", "GPG_TTY",
            "KEYTIMEOUT", "KEYBOARD_LAYOUT", "TOKEN", "KEEP_TOKENS", "OPENAI_API_KEYS", "AWS_REGION",
            "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "GOOGLE_APPLICATION_CREDENTIALS", "KUBECONFIG",
            "GOPATH", "CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "VIRTUAL_ENV", "PYTHONPATH",
            "LD_LIBRARY_PATH", "MANPATH", "NODE_OPTIONS", "CI", "GITHUB_ACTIONS", "GIT_ASKPASS",
            "SSH_ASKPASS", "HISTFILE", "http_proxy", "SSH_AUTH_SOCKET",
        } do
            assert.is_nil(stripped(r, name), name .. " is stripped by " .. tostring(stripped(r, name)))
        end
    end)

    it("strips a variable whose value is a URL with a password, by its exact name", function()
        local r = answer({
            DATABASE_URL = "postgres://app:s3cret@db.internal:5432/app",
            REDIS_URL = "redis://:s3cret@cache:6379/0",          -- password without a user
            PIP_EXTRA_INDEX_URL = "https://pypi.org/simple https://u:p@pkgs.internal/simple",
            JAVA_TOOL_OPTIONS = "-Drepo=https://u:p@repo.internal/m2",
            MONGO_URI = "mongodb+srv://u:p@ss@cluster0.example.net/db", -- a raw @ in the password
            UPSTREAM = "https://u:@h/",                            -- an empty one: still stripped
            -- no password: kept
            PLAIN_URL = "https://example.com/a:b@c",               -- the @ is in the path
            USER_ONLY = "ssh://git@github.com/o/r.git",
            PORT_URL = "http://localhost:8080/x",
            QUERY = "https://h/?next=http://a:b@c",                -- the second URL has one: stripped
            NOT_A_URL = "user:pass@host",
        })
        local unset = {}
        for _, n in ipairs(r.unset) do unset[n] = true end
        for _, n in ipairs { "DATABASE_URL", "REDIS_URL", "PIP_EXTRA_INDEX_URL", "JAVA_TOOL_OPTIONS",
                             "MONGO_URI", "UPSTREAM", "QUERY" } do
            assert.is_true(unset[n], n)
        end
        for _, n in ipairs { "PLAIN_URL", "USER_ONLY", "PORT_URL", "NOT_A_URL" } do
            assert.is_nil(unset[n], n)
            assert.is_nil(stripped(r, n), n)
        end
    end)

    it("env.strip_url_passwords = false keeps them; the key is a boolean", function()
        local profile = policy.profile({ name = "coding", flags = {} })
        profile.env.strip_url_passwords = false
        local r = policy.environment({ profile = profile, env = { DATABASE_URL = "pg://u:p@h/d" } })
        for _, n in ipairs(r.unset) do assert.are_not.equal("DATABASE_URL", n) end
        assert.are.same({ "env.strip_url_passwords", "expected a boolean, got string" },
            { require("cordon.profile").validate({ env = { strip_url_passwords = "yes" } }) })
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
