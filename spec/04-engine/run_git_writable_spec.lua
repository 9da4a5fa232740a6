-- spec/04-engine/run_git_writable_spec.lua — a git repository in a writable path outside the
-- workspace (--allow-write) is protected like the workspace's own: its hooks and config are
-- read-only where they exist, safe settings are recorded and code-running ones refused by name
-- (the config write mediated), and a repository a command makes there is neutralised before
-- the result, one line naming the path. Each attack is first shown to make the host's git run
-- a marker program without cordon.
-- Drives the built binary ($CORDON_BIN); runs as root or not; no network.
local h = require("spec.helpers")

local GIT_ENV = "export GIT_AUTHOR_NAME=spec GIT_AUTHOR_EMAIL=spec@example.com "
    .. "GIT_COMMITTER_NAME=spec GIT_COMMITTER_EMAIL=spec@example.com GIT_CONFIG_NOSYSTEM=1 "
    .. "GIT_CONFIG_GLOBAL=/dev/null; "

local function git(dir, args)
    return h.sh(GIT_ENV .. "git -C " .. h.quote(dir) .. " " .. args)
end

local function exists(path)
    return h.sh("test -e " .. h.quote(path)).code == 0
end

--- A workspace and, beside it, a writable tree holding a repository with one commit.
local function trees()
    local root = h.tmpdir()
    local ws, other = root .. "/ws", root .. "/other"
    h.sh_ok("mkdir -p " .. h.quote(ws) .. " " .. h.quote(other))
    h.sh_ok(GIT_ENV .. "cd " .. h.quote(other) .. " && git init -q -b main && "
        .. "git commit -q --allow-empty -m one")
    return root, ws, other
end

local function run(ws, other, script)
    return h.run_sh(GIT_ENV .. "cd " .. h.quote(other) .. " && " .. script,
        { workspace = ws, cwd = ws, flags = { "--allow-write", other } })
end

local PLANT = "printf '#!/bin/sh\\ntouch %s\\n' > %s && chmod +x %s"

describe("cordon run: a repository in a writable path outside the workspace", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        assert(h.sh("git --version").code == 0, "git is not installed")
    end)
    after_each(h.cleanup)

    it("keeps a safe setting and refuses a code-running one by name", function()
        local _, ws, other = trees()
        local r = run(ws, other, "git config user.name kept && git config core.hooksPath hooks-of-mine")
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("cordon: refused git setting core.hooksPath", 1, true), h.describe(r))
        assert.truthy(r.stderr:find(other .. "/.git/config", 1, true), h.describe(r))
        assert.are.equal("kept\n", git(other, "config user.name").stdout)
        assert.are.equal(1, git(other, "config core.hooksPath").code)
    end)

    it("holds its hooks and config read-only; the host's commit runs no planted hook", function()
        local root, ws, other = trees()
        local mark = root .. "/MARK"
        local hook = ".git/hooks/pre-commit"
        -- without cordon the planted hook runs at the host's next commit
        h.sh_ok("cd " .. h.quote(other) .. " && " .. PLANT:format(mark, hook, hook))
        assert.are.equal(0, git(other, "commit -q --allow-empty -m two").code)
        assert.is_true(exists(mark))
        h.sh_ok("rm -f " .. h.quote(mark) .. " " .. h.quote(other .. "/" .. hook))
        local r = run(ws, other, PLANT:format(mark, hook, hook) .. "; "
            .. "printf '[core]\\n\\tfsmonitor = %s\\n' >> .git/config; true")
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("Read-only file system", 1, true), h.describe(r))
        assert.are.equal(0, git(other, "status --short").code)
        assert.are.equal(0, git(other, "commit -q --allow-empty -m three").code)
        assert.is_false(exists(mark), h.describe(r))
        assert.are.equal(1, git(other, "config core.fsmonitor").code)
    end)

    it("holds a repository made there during the run read-only inside", function()
        local root, ws, other = trees()
        local mark = root .. "/MARK"
        local hook = "sub/.git/hooks/pre-commit"
        local make = GIT_ENV .. "git init -q -b main sub && "
            -- inside, once the watcher holds it (bounded): the plant is refused, not undone after
            .. "{ [ -z \"$CORDON_SANDBOX\" ] || for i in $(seq 200); do grep -q \" $PWD/sub/.git/hooks ro,\" "
            .. "/proc/self/mountinfo && break; sleep 0.05; done; }; " .. PLANT:format(mark, hook, hook)
        -- without cordon: the new repository's hook runs at the host's next commit there
        h.sh_ok("cd " .. h.quote(other) .. " && " .. make)
        assert.are.equal(0, git(other .. "/sub", "commit -q --allow-empty -m x").code)
        assert.is_true(exists(mark))
        h.sh_ok("rm -rf " .. h.quote(mark) .. " " .. h.quote(other .. "/sub"))
        local r = run(ws, other, make)
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("sub/.git/hooks/pre-commit: Read-only file system", 1, true),
            h.describe(r))
        assert.are.equal(0, git(other .. "/sub", "commit -q --allow-empty -m x").code)
        assert.is_false(exists(mark), h.describe(r))
    end)
end)
