-- spec/02-policies/builtin_files_spec.lua — the built-in policies/ and profiles/ files stay the
-- files on disk: the binary carries their build-time bytecode and uses it only for a file whose
-- bytes are exactly the built-in text, so a file as shipped reads as its own text does (its path,
-- its lines), and an edited one is what the next run loads, edit and all.
-- Drives the built binary ($CORDON_BIN) with CORDON_DATADIR pointing at a copy of the tree's
-- data; nothing is sandboxed and no network is touched.
local h = require("spec.helpers")

-- A copy of policies/ and profiles/ as the tree has them: { dir, env }.
local function datadir()
    local dir = h.tmpdir()
    h.sh_ok(("cp -r %s/policies %s/profiles %s/"):format(h.quote(h.source_dir),
        h.quote(h.source_dir), h.quote(dir)))
    return dir, { CORDON_DATADIR = dir, XDG_CONFIG_HOME = h.tmpdir() }
end

-- The line of the first `profile = function` in a file.
local function hook_line(path)
    local n = 0
    for line in h.read_file(path):gmatch("([^\n]*)\n") do
        n = n + 1
        if line:find("profile = function", 1, true) then return n end
    end
    error("no profile hook in " .. path)
end

local function explain(env)
    return h.cordon({ "policy", "explain", "--profile", "coding" }, { env = env })
end

describe("built-in policy and profile files", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("as shipped, read as their own text: the file's path and line", function()
        local dir, env = datadir()
        local policy = dir .. "/policies/00-default.lua"
        local r = explain(env)
        assert(r.code == 0, h.describe(r))
        assert.truthy(r.stdout:find(policy .. ":" .. hook_line(policy) .. " ", 1, true), h.describe(r))
    end)

    it("an edited built-in policy is what the next run loads", function()
        local dir, env = datadir()
        local policy = dir .. "/policies/00-default.lua"
        local line = hook_line(policy)
        h.write_file(policy, "-- one line more on top\n" .. h.read_file(policy))
        local r = explain(env)
        assert(r.code == 0, h.describe(r))
        assert.truthy(r.stdout:find(policy .. ":" .. (line + 1) .. " ", 1, true), h.describe(r))
        -- and an edit that breaks it is refused, naming the file and line
        h.write_file(policy, h.read_file(policy) .. "\nreturn (\n")
        r = h.cordon({ "run", "--", "true" }, { env = env })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find(policy, 1, true), h.describe(r))
    end)

    it("an edited built-in profile takes effect at the next run", function()
        local dir, env = datadir()
        local profile = dir .. "/profiles/coding.lua"
        local text = h.read_file(profile)
        local r = h.cordon({ "run", "--", "sh", "-c", "echo ${CORDON_EDITED:-unset}" }, { env = env })
        assert(r.code == 0, h.describe(r))
        assert.are.equal("unset\n", r.stdout)
        local edited, n = text:gsub("\n        set = {", "\n        set = { CORDON_EDITED = \"yes\",", 1)
        assert.are.equal(1, n, "coding.lua has no `env = { set = { ...` to edit")
        h.write_file(profile, edited)
        r = h.cordon({ "run", "--", "sh", "-c", "echo ${CORDON_EDITED:-unset}" }, { env = env })
        assert(r.code == 0, h.describe(r))
        assert.are.equal("yes\n", r.stdout)
        -- back to the shipped bytes: the shipped profile again
        h.write_file(profile, text)
        r = h.cordon({ "run", "--", "sh", "-c", "echo ${CORDON_EDITED:-unset}" }, { env = env })
        assert(r.code == 0, h.describe(r))
        assert.are.equal("unset\n", r.stdout)
    end)
end)
