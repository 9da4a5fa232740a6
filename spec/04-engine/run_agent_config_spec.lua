-- spec/04-engine/run_agent_config_spec.lua — the files a program on the host runs or obeys
-- without a person's review (git hooks and config, cordon's policy, agents' and editors' own
-- configuration: the profile's readonly_in_workspace) stay read-only inside the writable
-- workspace; one that a command creates is named when `cordon run` ends, and is bound read-only
-- before a session's next command; what a person runs deliberately (Makefile, package.json,
-- .envrc) stays writable. Each fact is checked against the host after the run.
-- Drives the built binary ($CORDON_BIN); no network; runs as root.
local h = require("spec.helpers")

-- Each entry of the coding profile's list, with a file that a host program reads there.
local CASES = {
    { entry = ".git/hooks", file = ".git/hooks/pre-commit" },
    { entry = ".git/config", file = ".git/config" },
    { entry = ".cordon", file = ".cordon/policy.lua" },
    { entry = ".claude", file = ".claude/settings.json" },
    { entry = ".mcp.json", file = ".mcp.json" },
    { entry = ".codex", file = ".codex/config.toml" },
    { entry = ".cursor", file = ".cursor/mcp.json" },
    { entry = ".gemini", file = ".gemini/settings.json" },
    { entry = ".vscode/tasks.json", file = ".vscode/tasks.json" },
    { entry = ".vscode/settings.json", file = ".vscode/settings.json" },
    { entry = ".vscode/launch.json", file = ".vscode/launch.json" },
    { entry = ".idea/workspace.xml", file = ".idea/workspace.xml" },
    { entry = ".idea/runConfigurations", file = ".idea/runConfigurations/build.xml" },
    { entry = ".devcontainer", file = ".devcontainer/devcontainer.json" },
}

local APPEARED = "cordon: appeared in the workspace during the command"

-- The profile's list, as the file says it (a profile is plain Lua with a `host` table).
local function profile_list()
    local stub = {
        home = function() return "/home/u" end,
        exists = function() return false end,
        is_dir = function() return false end,
        is_socket = function() return false end,
        workspace = function() return nil end,
    }
    local env = setmetatable({}, { __index = { host = stub, require = require, string = string,
                                              table = table, math = math } })
    local chunk = assert(loadfile(h.source_dir .. "/profiles/coding.lua", "t", env))
    return chunk().readonly_in_workspace
end

local ok = h.ok

local function git_ws()
    local ws = h.workspace()
    h.sh_ok("git -C " .. h.quote(ws) .. " init -q")
    return ws
end

local function dirname(path)
    return path:match("^(.*)/[^/]*$")
end

describe("cordon run: agents' and editors' configuration in the workspace", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("every entry of the profile's readonly_in_workspace has a case here", function()
        local covered = {}
        for _, c in ipairs(CASES) do covered[c.entry] = true end
        for _, e in ipairs(profile_list()) do
            assert.is_true(covered[e] == true, e .. " is in the profile but not in this spec")
        end
    end)

    for _, c in ipairs(CASES) do
        it(c.entry .. ": writable outside, read-only inside, unchanged on the host", function()
            local ws = git_ws()
            local path = ws .. "/" .. c.file
            local dir = dirname(c.file)
            if dir then h.sh_ok("mkdir -p " .. h.quote(ws .. "/" .. dir)) end
            -- outside the sandbox the caller can write it
            h.write_file(path, "outside\n")
            h.sh_ok("echo host >> " .. h.quote(path))
            assert.are.equal("outside\nhost\n", h.read_file(path))
            local script = "echo evil >> " .. h.quote(c.file)
            if dir and dir ~= ".vscode" and dir ~= ".idea" then -- a folder entry: nothing new inside
                script = script .. "; touch " .. h.quote(dir .. "/new")
            end
            local r = h.run_sh(script, { workspace = ws })
            assert.truthy(r.stderr:match("Read%-only file system"), h.describe(r))
            assert.are.equal("outside\nhost\n", h.read_file(path))
            assert.is_nil(r.stderr:match(APPEARED), h.describe(r))
            -- and it cannot be renamed away and replaced either
            r = h.run_sh("mv " .. h.quote(c.entry) .. " moved 2>&1; echo evil > " .. h.quote(c.file),
                { workspace = ws })
            assert.are.equal("outside\nhost\n", h.read_file(path), h.describe(r))
        end)
    end

    it("a listed path that appeared during `cordon run` is named when it ends", function()
        local ws = git_ws()
        h.sh_ok("rm -rf " .. h.quote(ws .. "/.git/hooks")) -- no view makes one, and the guard, not this line, covers it
        local r = ok(h.run_sh("echo '{}' > .mcp.json; mkdir -p .vscode .claude; echo x > .vscode/tasks.json",
            { workspace = ws }))
        local line
        for l in r.stderr:gmatch("[^\n]+") do
            if l:find(APPEARED, 1, true) then
                assert.is_nil(line, "one line\n" .. h.describe(r))
                line = l
            end
        end
        assert.truthy(line, h.describe(r))
        assert.truthy(line:find(".mcp.json", 1, true), line)
        assert.truthy(line:find(".vscode/tasks.json", 1, true), line)
        -- an empty folder runs nothing
        assert.is_nil(line:find(".claude", 1, true), line)
        assert.is_nil(line:find(".git/hooks", 1, true), line)
        -- cordon run creates nothing and takes nothing back: the file is the command's
        assert.are.equal("{}\n", h.read_file(ws .. "/.mcp.json"))
    end)

    it("no line when nothing listed appeared, and none for files a person runs deliberately", function()
        local ws = git_ws()
        local r = ok(h.run_sh("echo all: > Makefile; echo '{}' > package.json; echo 'export A=1' > .envrc; "
            .. "mkdir -p .vscode && echo '{}' > .vscode/extensions.json", { workspace = ws }))
        assert.is_nil(r.stderr:match("cordon: appeared"), h.describe(r))
    end)

    it("Makefile, package.json and .envrc stay writable", function()
        local ws = git_ws()
        for _, f in ipairs { "Makefile", "package.json", ".envrc" } do
            h.write_file(ws .. "/" .. f, "before\n")
        end
        ok(h.run_sh("for f in Makefile package.json .envrc; do echo sandbox >> $f; done", { workspace = ws }))
        for _, f in ipairs { "Makefile", "package.json", ".envrc" } do
            assert.are.equal("before\nsandbox\n", h.read_file(ws .. "/" .. f), f)
        end
    end)
end)

describe("cordon session: agents' configuration that appears", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it(".claude/settings.json created by one exec is read-only for the next", function()
        local ws = git_ws()
        local s = h.session_start("agentcfg-" .. h.token(), { cwd = ws })
        local function exec(cmd)
            return h.cordon({ "exec", s.name, "--", cmd }, { cwd = ws, env = s.env })
        end
        ok(exec("mkdir -p .claude && echo '{\"hooks\":{}}' > .claude/settings.json && mkdir -p .vscode"))
        assert.are.equal('{"hooks":{}}\n', h.read_file(ws .. "/.claude/settings.json"))
        local r = exec("echo evil > .claude/settings.json; touch .claude/settings.local.json; "
            .. "echo '{}' > .vscode/tasks.json")
        assert.truthy(r.stderr:match("Read%-only file system"), h.describe(r))
        assert.are.equal('{"hooks":{}}\n', h.read_file(ws .. "/.claude/settings.json"))
        assert.is_nil(h.read_file(ws .. "/.claude/settings.local.json"))
        -- .vscode/ itself is not listed: tasks.json could be created, and is held from the next
        assert.are.equal("{}\n", h.read_file(ws .. "/.vscode/tasks.json"))
        r = exec("echo evil > .vscode/tasks.json")
        assert.truthy(r.stderr:match("Read%-only file system"), h.describe(r))
        assert.are.equal("{}\n", h.read_file(ws .. "/.vscode/tasks.json"))
    end)
end)
