-- spec/04-engine/run_refusal_lines_spec.lua — the refusal lines `cordon run` prints, through the
-- real binary: one line per refused thing (npm's many error lines, the same write twice), and
-- the wording that follows where the path is and why (outside the writable set, protected
-- inside the workspace, the readonly profile's workspace).
local h = require("spec.helpers")

-- Is prog on the PATH the sandboxed commands get (h.path), not only on this shell's?
local function on_path(prog)
    return h.sh("env PATH=" .. h.path .. " sh -c " .. h.quote("command -v " .. prog)).code == 0
end

-- The "cordon: " lines of what cordon printed on stderr.
local function cordon_lines(r)
    local out = {}
    for l in (r.stderr .. "\n"):gmatch("([^\n]*)\n") do
        if l:sub(1, 8) == "cordon: " then out[#out + 1] = l end
    end
    return out
end

local function has(r, text)
    assert.truthy(r.stderr:find(text, 1, true), "expected '" .. text .. "'\n" .. h.describe(r))
end

describe("cordon run: refusal lines", function()
    after_each(h.cleanup)

    it("says the same refused write once", function()
        local dir = h.tmpdir()
        local r = h.run_sh(("touch %s/a; touch %s/a; echo x > %s/a"):format(h.quote(dir), h.quote(dir), h.quote(dir)))
        local lines = cordon_lines(r)
        assert.are.equal(1, #lines, h.describe(r))
        has(r, "cordon: the sandbox refused a write to " .. dir .. "/a (read-only outside the workspace: "
            .. "--allow-write " .. dir .. ")")
    end)

    it("says npm's many error lines in one line, with the path", function()
        if not on_path("npm") then h.skip("no npm here") end
        local pkg = h.tmpdir()
        local name = "cordon-spec-pkg-" .. h.token():sub(1, 8)
        h.write_file(pkg .. "/package.json", ('{"name":"%s","version":"1.0.0"}'):format(name))
        local r = h.run_sh("npm install --no-audit --no-fund -g " .. h.quote(pkg))
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("npm error", 1, true), h.describe(r))
        -- npm also asks the registry (the proxy's refusal of it is a line of its own)
        local lines = {}
        for _, l in ipairs(cordon_lines(r)) do
            if not l:find("network policy blocked", 1, true) then lines[#lines + 1] = l end
        end
        assert.are.equal(1, #lines, h.describe(r))
        assert.truthy(lines[1]:find("the sandbox refused a write to /", 1, true), h.describe(r))
        assert.truthy(lines[1]:find("/" .. name .. " (read-only outside the workspace: --allow-write ", 1, true),
            h.describe(r))
    end)

    it("names a protected file inside the workspace and why", function()
        local ws = h.workspace()
        h.sh_ok("git init -q " .. h.quote(ws))
        -- a write of its own (git's own writes of it are judged key by key: run_git_config_spec)
        local r = h.run_sh("printf '[x]\\n' >> .git/config", { workspace = ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        local lines = cordon_lines(r)
        assert.are.equal(1, #lines, h.describe(r))
        has(r, "cordon: the sandbox refused a write to " .. ws .. "/.git/config: .git/config is protected "
            .. "inside the workspace: a command could make the host's git run a program (profile key "
            .. "readonly_in_workspace)")
        assert.is_nil(r.stderr:find("outside the workspace", 1, true), h.describe(r))
    end)

    it("says the readonly profile made the workspace read-only", function()
        local ws = h.workspace()
        local r = h.run_sh("touch made-here", { workspace = ws, flags = { "--profile", "readonly" } })
        assert.are_not.equal(0, r.code, h.describe(r))
        has(r, "cordon: the sandbox refused a write to " .. ws .. "/made-here: the readonly profile makes "
            .. "the workspace read-only")
        assert.is_nil(r.stderr:find("outside the workspace", 1, true), h.describe(r))
        assert.are.equal(1, #cordon_lines(r), h.describe(r))
    end)

    it("names the path of cargo's error chain, given on a line before the errno", function()
        if not on_path("cargo") then h.skip("no cargo here") end
        local dir = h.tmpdir()
        local r = h.run_sh("cargo new -q --vcs none " .. h.quote(dir .. "/hello"))
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("Caused by:", 1, true), h.describe(r))
        has(r, "cordon: the sandbox refused a write to " .. dir .. "/hello (read-only outside the workspace: "
            .. "--allow-write " .. dir .. ")")
        assert.are.equal(1, #cordon_lines(r), h.describe(r))
    end)

    it("names javac's output directory when javac names none", function()
        if not on_path("javac") then h.skip("no javac here") end
        local ws, dir = h.workspace(), h.tmpdir()
        h.write_file(ws .. "/Hi.java", "public class Hi {}\n")
        local r = h.run_sh("javac -d " .. h.quote(dir .. "/classes") .. " Hi.java", { workspace = ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("could not create parent directories", 1, true), h.describe(r))
        has(r, "cordon: the sandbox refused a write to " .. dir .. "/classes (read-only outside the workspace: "
            .. "--allow-write " .. dir .. ")")
    end)

    it("asks a layer's detector only about lines holding one of its markers", function()
        -- a detector that fails whenever it is asked: the failure's line says when it was
        local policy = h.tmpdir() .. "/policy.lua"
        h.write_file(policy, 'return { refusal_markers = { "MARKED" }, '
            .. 'refusal = function() error("asked") end }\n')
        local quiet = h.run_sh("echo plain; echo plain >&2", { flags = { "--policy", policy } })
        assert.are.equal(0, quiet.code, h.describe(quiet))
        assert.is_nil(quiet.stderr:find("refusal detection failed", 1, true), h.describe(quiet))
        local marked = h.run_sh("echo MARKED >&2", { flags = { "--policy", policy } })
        assert.are.equal(0, marked.code, h.describe(marked))
        assert.truthy(marked.stderr:find("refusal detection failed", 1, true), h.describe(marked))
    end)
end)
