-- spec/04-engine/run_repo_remove_spec.lua — a repository the watcher holds (its hooks, config and
-- pointers read-only inside the sandbox) can still be removed inside, as on the host, and what
-- is removed is never re-planted unseen:
--   - `git clone` of a local repository (outside the workspace) into the workspace, held, then
--     `rm -rf` of the clone: it succeeds and the folder is gone on the host;
--   - a `git clone` that fails half-way leaves no folder behind;
--   - `rm -rf node_modules` with a git repository in it works;
--   - one that was there before the command is refused, with a line naming it;
--   - an attacker removes the workspace repository's .git/hooks (or one file of it) and plants a
--     pre-commit hook, or removes .git/config and writes one with core.fsmonitor: the host's
--     `git commit` / `git status` run by the spec runs nothing of the command's (shown first to
--     run it without cordon).
-- As root and as uid 65534. Each command waits (bounded) until what it removes is held, read from
-- its own /proc/self/mountinfo, so that the removal asserted is a held one.
-- Drives the built binary ($CORDON_BIN); no network.
local h = require("spec.helpers")

local NOBODY = 65534

local GIT_ENV = "export GIT_AUTHOR_NAME=spec GIT_AUTHOR_EMAIL=spec@example.com "
    .. "GIT_COMMITTER_NAME=spec GIT_COMMITTER_EMAIL=spec@example.com GIT_CONFIG_NOSYSTEM=1 "
    .. "GIT_CONFIG_GLOBAL=/dev/null; "

local function exists(path)
    return h.sh("test -e " .. h.quote(path)).code == 0
end

-- Shell run as uid (nil: root) on the host, the person's way.
local function as(uid, script)
    local pre = uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid) or ""
    return pre .. "env HOME=/nonexistent bash -c " .. h.quote(GIT_ENV .. script)
end

-- Shell: inside the sandbox, wait (at most 10 s) until PATH (absolute) is held read-only; fails
-- (exit 3) when it never is, so that a removal asserted is one of a held path.
local function held(path)
    return "{ [ -z \"$CORDON_SANDBOX\" ] || { for i in $(seq 200); do grep -q \" " .. path
        .. " ro,\" /proc/self/mountinfo && break; sleep 0.05; done; grep -q \" " .. path
        .. " ro,\" /proc/self/mountinfo || { echo 'never held: " .. path .. "' >&2; exit 3; }; }; }; "
end

-- A root (owned by uid) holding ws (a committed repository), src (a committed repository outside
-- the workspace, to clone) and evil.sh, which makes MARK.
local function tree(uid)
    local root = h.tmpdir()
    local ws, src = root .. "/ws", root .. "/src"
    h.sh_ok("mkdir -p " .. h.quote(ws) .. " " .. h.quote(src) .. " && printf '#!/bin/sh\\ntouch " .. root
        .. "/MARK\\n' > " .. h.quote(root .. "/evil.sh") .. " && chmod 755 " .. h.quote(root .. "/evil.sh"))
    for _, d in ipairs({ ws, src }) do
        h.sh_ok(as(nil, "cd " .. h.quote(d) .. " && git init -q -b main && echo a > a && git add a "
            .. "&& git commit -q -m one"))
    end
    if uid then h.sh_ok(("chmod 755 %s && chown -R %d:%d %s"):format(h.quote(root), uid, uid, h.quote(root))) end
    return root, ws, src
end

local function run(ws, uid, script)
    local opts = { workspace = ws, cwd = ws, uid = uid }
    if uid then opts.home = h.secret_home(uid) end
    return h.run_sh(GIT_ENV .. script, opts)
end

for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
    describe("a held repository removed inside (" .. who.name .. ")", function()
        lazy_setup(function()
            assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        end)
        after_each(h.cleanup)

        it("a clone of a local repository, held, then rm -rf of it: gone on the host", function()
            local _, ws, src = tree(who.uid)
            local r = run(ws, who.uid, "git clone -q " .. h.quote(src) .. " clone && "
                .. held("$PWD/clone/.git/hooks") .. held("$PWD/clone/.git/config")
                .. "rm -rf clone && echo removed")
            assert.are.equal(0, r.code, h.describe(r))
            assert.truthy(r.stdout:find("removed", 1, true), h.describe(r))
            assert.is_false(exists(ws .. "/clone"), "the clone is still on the host\n" .. h.describe(r))
        end)

        -- A repository that was there before the command keeps its held names (removing its
        -- config would let a command plant another one the host's git reads at once): the
        -- removal is refused, and the line names the repository and says to remove it outside.
        it("a clone that was there before the command: refused, the line names the repository", function()
            local _, ws, src = tree(who.uid)
            h.sh_ok(as(who.uid, "cd " .. h.quote(ws) .. " && git clone -q " .. h.quote(src) .. " old"))
            local r = run(ws, who.uid, held("$PWD/old/.git/config") .. "rm -rf old")
            assert.are_not.equal(0, r.code, h.describe(r))
            assert.truthy(r.stderr:find("old/.git/config is protected inside the workspace: it belongs to "
                .. "the repository old, which the sandbox holds read-only", 1, true), h.describe(r))
            assert.truthy(r.stderr:find("removed outside the sandbox", 1, true), h.describe(r))
            assert.is_nil(r.stderr:find("profile key readonly_in_workspace", 1, true), h.describe(r))
            assert.is_true(exists(ws .. "/old/.git/config"), h.describe(r))
        end)

        it("a git clone that fails half-way leaves no folder", function()
            local _, ws, src = tree(who.uid)
            -- an object the history needs is missing: the fetch fails after the repository is made
            local obj = h.chomp(h.sh_ok(as(who.uid, "cd " .. h.quote(src) .. " && git rev-parse HEAD:a")))
            h.sh_ok("rm -f " .. h.quote(src .. "/.git/objects/" .. obj:sub(1, 2) .. "/" .. obj:sub(3)))
            local r = run(ws, who.uid, "git clone -q --no-local file://" .. src .. " broken; echo \"clone $?\"")
            assert.are.equal(0, r.code, h.describe(r))
            assert.is_nil(r.stdout:find("clone 0", 1, true), "the clone did not fail\n" .. h.describe(r))
            assert.is_false(exists(ws .. "/broken"), "the failed clone left its folder\n" .. h.describe(r))
        end)

        it("rm -rf node_modules holding a git repository", function()
            local _, ws = tree(who.uid)
            local r = run(ws, who.uid, "mkdir -p node_modules/dep && git -C node_modules/dep init -q && "
                .. held("$PWD/node_modules/dep/.git/hooks") .. "rm -rf node_modules && echo removed")
            assert.are.equal(0, r.code, h.describe(r))
            assert.truthy(r.stdout:find("removed", 1, true), h.describe(r))
            assert.is_false(exists(ws .. "/node_modules"), h.describe(r))
        end)

        local function plant_hook(root, dir)
            return "printf '#!/bin/sh\\n" .. root .. "/evil.sh\\n' > " .. dir .. "/.git/hooks/pre-commit; "
                .. "chmod +x " .. dir .. "/.git/hooks/pre-commit; true"
        end
        local function plant_config(root, dir)
            return "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = " .. root
                .. "/evil.sh\\n' > " .. dir .. "/.git/config; true"
        end
        -- what: the removal; removed: whether it is done (a held name of the person's repository
        -- stays, EBUSY; what is inside a held hooks folder goes; a clone the command made is its
        -- own); dir: where the host's git then runs
        local ATTACKS = {
            {
                name = "removes one hook file of the workspace's repository and plants pre-commit",
                attack = function(root)
                    return held("$PWD/.git/hooks") .. "rm .git/hooks/pre-commit.sample && echo 'rm ok'; "
                        .. plant_hook(root, ".")
                end,
                removed = true, dir = ".", host = "git commit -q --allow-empty -m two",
            },
            {
                name = "removes .git/hooks of the workspace's repository and plants pre-commit",
                attack = function(root)
                    return held("$PWD/.git/hooks") .. "rm -rf .git/hooks && echo 'rm ok'; mkdir -p .git/hooks; "
                        .. plant_hook(root, ".")
                end,
                removed = false, dir = ".", host = "git commit -q --allow-empty -m two",
            },
            {
                name = "removes .git/config of the workspace's repository and writes one with core.fsmonitor",
                attack = function(root)
                    return held("$PWD/.git/config") .. "rm .git/config && echo 'rm ok'; " .. plant_config(root, ".")
                end,
                removed = false, dir = ".", host = "git status",
            },
            {
                name = "removes .git/hooks of a clone it made and plants pre-commit",
                attack = function(root, src)
                    return "git clone -q " .. h.quote(src) .. " clone && " .. held("$PWD/clone/.git/hooks")
                        .. "rm -rf clone/.git/hooks && echo 'rm ok'; mkdir -p clone/.git/hooks; "
                        .. plant_hook(root, "clone")
                end,
                removed = true, dir = "clone", host = "git commit -q --allow-empty -m two",
            },
            {
                name = "removes .git/config of a clone it made and writes one with core.fsmonitor",
                attack = function(root, src)
                    return "git clone -q " .. h.quote(src) .. " clone && " .. held("$PWD/clone/.git/config")
                        .. "rm clone/.git/config && echo 'rm ok'; " .. plant_config(root, "clone")
                end,
                removed = true, dir = "clone", host = "git status",
            },
        }
        for _, c in ipairs(ATTACKS) do
            it("an attacker " .. c.name .. ": the host's git runs nothing of it", function()
                -- without cordon: the host's git runs the command's program
                local root, ws, src = tree(who.uid)
                h.sh(as(who.uid, "cd " .. h.quote(ws) .. " && { " .. c.attack(root, src) .. "; } >/dev/null 2>&1"))
                h.sh(as(who.uid, "cd " .. h.quote(ws .. "/" .. c.dir) .. " && { " .. c.host .. "; } >/dev/null 2>&1"))
                assert.is_true(exists(root .. "/MARK"), "the attempt does not work even without cordon")

                root, ws, src = tree(who.uid)
                local r = run(ws, who.uid, c.attack(root, src))
                assert.are.equal(0, r.code, h.describe(r))
                if c.removed then
                    assert.truthy(r.stdout:find("rm ok", 1, true), h.describe(r))
                else
                    assert.is_nil(r.stdout:find("rm ok", 1, true), h.describe(r))
                    assert.truthy(r.stderr:find("Device or resource busy", 1, true), h.describe(r))
                end
                h.sh(as(who.uid, "cd " .. h.quote(ws .. "/" .. c.dir) .. " && { " .. c.host .. "; } >/dev/null 2>&1"))
                assert.is_false(exists(root .. "/MARK"), "the host's git ran the command's program\n"
                    .. h.describe(r))
            end)
        end
    end)
end
