-- Specs for the built-in profiles: each file loads as text with plain lua5.4, validates, resolves
-- through `extends`, and holds the keys the design requires.
local profile = require("cordon.profile")

local root = os.getenv("CORDON_SOURCE_DIR") or "."
local caller_home = "/home/u"
local host = {
    home = function() return caller_home end,
    exists = function() return false end,
    is_dir = function() return false end,
    is_socket = function() return false end,
    workspace = function() return nil end,
}
local function load_profile(name)
    local path = root .. "/profiles/" .. name .. ".lua"
    local f = assert(io.open(path))
    local src = f:read("a")
    f:close()
    local env = setmetatable({}, { __index = { host = host, require = require, string = string,
                                              table = table, math = math } })
    local chunk = assert(loadfile(path, "t", env))
    return chunk(), path, src
end

local function has(list, item)
    for _, v in ipairs(list or {}) do if v == item then return true end end
    return false
end

describe("built-in profiles", function()
    for _, name in ipairs { "coding", "strict", "readonly", "ops" } do
        it(name .. " validates and resolves", function()
            local t = load_profile(name)
            assert.is_nil(profile.validate(t))
            assert.is_string(t.description)
            local r = profile.resolve(name, load_profile)
            assert.is_nil(profile.validate(r))
            assert.are.equal(name, r.name)
            -- everything extends coding: the secrets stay hidden
            for _, p in ipairs { "~/.ssh", "~/.aws", "~/.gnupg", "/etc/shadow", "/root" } do
                assert.is_true(has(r.hidden, p), name .. " hides " .. p)
            end
            assert.are.equal(0, r.rlimits.core)
            assert.are.equal(3, r.session.grace)
        end)
    end

    it("coding hides every credential store the design lists", function()
        local r = profile.resolve("coding", load_profile)
        for _, p in ipairs { "~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gh", "~/.netrc", "~/.docker",
                             "~/.kube", "~/.npmrc", "~/.pypirc", "~/.git-credentials",
                             "~/.config/gcloud", "~/.azure", "/etc/shadow", "/etc/gshadow",
                             "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh", "/root" } do
            assert.is_true(has(r.hidden, p), p)
        end
        assert.are.same({ ".git/hooks", ".git/config", ".cordon" }, r.readonly_in_workspace)
        for _, s in ipairs { "*_API_KEY", "*_TOKEN", "*_SECRET", "*_PASSWORD", "AWS_SECRET_ACCESS_KEY",
                             "AWS_SESSION_TOKEN", "SSH_AUTH_SOCK", "GPG_AGENT_INFO",
                             "DBUS_SESSION_BUS_ADDRESS" } do
            assert.is_true(has(r.env.strip, s), s)
        end
        assert.is_false(r.workspace_readonly)
        assert.is_false(r.escalation.ask_sandbox_off)
    end)

    it("strict tightens coding", function()
        local r = profile.resolve("strict", load_profile)
        assert.is_true(r.seccomp.block_unix_sockets)
        assert.are.equal(1024, r.rlimits.nofile)
        assert.are.equal(1024 * 1024 * 1024, r.rlimits.fsize)
        assert.are.equal(8 * 1024 * 1024 * 1024, r.rlimits.as)
        assert.is_nil(r.rlimits.nproc) -- RLIMIT_NPROC counts the user's host processes
        for _, p in ipairs { "~/.config", "~/.local/share/keyrings", "~/.bash_history" } do
            assert.is_true(has(r.hidden, p), p)
        end
    end)

    it("coding's home is copy-on-write, strict's discarded, readonly's kept like coding's", function()
        assert.are.equal("overlay", profile.resolve("coding", load_profile).home)
        assert.are.equal("overlay", profile.resolve("ops", load_profile).home)
        assert.are.equal("overlay", profile.resolve("readonly", load_profile).home)
        assert.are.equal("tmpfs", profile.resolve("strict", load_profile).home)
        assert.is_nil(profile.validate({ home = "readonly" }))
        local kp, msg = profile.validate({ home = "writable" })
        assert.are.equal("home", kp)
        assert.truthy(msg:find("overlay", 1, true))
    end)

    it("root's home is a home like any other when it is the caller's: credentials hidden, not /root", function()
        caller_home = "/root"
        local ok_, r = pcall(profile.resolve, "coding", load_profile)
        caller_home = "/home/u"
        assert.is_true(ok_, r)
        assert.is_false(has(r.hidden, "/root"))
        for _, p in ipairs { "~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gh", "~/.netrc", "~/.docker",
                             "~/.kube", "~/.npmrc", "~/.pypirc", "~/.git-credentials",
                             "~/.config/gcloud", "~/.azure" } do
            assert.is_true(has(r.hidden, p), p)
        end
        -- another caller's profile still hides all of /root
        assert.is_true(has(profile.resolve("strict", load_profile).hidden, "/root"))
    end)

    it("readonly makes the workspace read-only", function()
        assert.is_true(profile.resolve("readonly", load_profile).workspace_readonly)
    end)

    it("ops asks before running a refused command outside the sandbox", function()
        local r = profile.resolve("ops", load_profile)
        assert.is_true(r.escalation.ask_sandbox_off)
        assert.are.equal("5m", r.escalation.permission_timeout)
    end)
end)
