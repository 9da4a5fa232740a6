-- spec/04-engine/run_worktree_layouts_spec.lua — linked worktrees work inside the sandbox as
-- they do outside (docs/git.md, "Linked worktrees"), in both layouts: the workspace is the main
-- worktree of a repository with linked worktrees (one outside it, ../wt-a, one inside it,
-- in-b), or the workspace is the linked worktree wt-a (its `.git` a file, the common dir
-- outside). In each: `git worktree add` (three times), a commit in a linked worktree inside the
-- workspace, `git pack-refs --all`, `git branch -D` of a packed branch, `git gc`, and `git
-- worktree add` + `move` + `remove` + `prune` of worktrees made in the run work, and `prune`
-- removes the admin folder of one that was there but that the person removed on the host; `git worktree
-- add ../outside` is refused with git's one line and leaves no admin folder; moving or removing
-- a worktree that was there at the start is refused with cordon's line, the host's worktree
-- intact. After each row the host is checked as the person would: `git worktree list
-- --porcelain` (nothing prunable), `git worktree prune -n` (nothing to prune), the refs.
-- Then the escapes: a command plants, through a worktree's admin folder or the common dir,
-- a commondir, a gitdir leading out, a config.worktree with core.fsmonitor, a hook; the
-- person's `git status` and `git commit` on the host then run nothing. Each plant is first
-- made on the host (no cordon) to show that the same file would run.
-- Drives the built binary ($CORDON_BIN); as root and as uid 65534 (a home of its own).
local h = require("spec.helpers")

local NOBODY = 65534

local GIT_ENV = "export GIT_AUTHOR_NAME=spec GIT_AUTHOR_EMAIL=spec@example.com "
    .. "GIT_COMMITTER_NAME=spec GIT_COMMITTER_EMAIL=spec@example.com GIT_CONFIG_NOSYSTEM=1 "
    .. "GIT_CONFIG_GLOBAL=/dev/null; "

local ok = h.ok

-- root/main: a repository with one commit on main, a packed branch `packed`, a linked worktree
-- root/wt-a (branch a) and one inside the main worktree, root/main/in-b (branch b); all of it
-- uid's, with a home for uid. marks/: where planted programs leave their mark (anyone writes).
local function repos(uid)
    local root = h.tmpdir()
    local r = { root = root, main = root .. "/main", wt = root .. "/wt-a", marks = root .. "/marks",
                uid = uid }
    r.common = r.main .. "/.git"
    h.sh_ok("chmod 755 " .. h.quote(root) .. " && " .. GIT_ENV .. "git init -q -b main " .. h.quote(r.main)
        .. " && cd " .. h.quote(r.main) .. " && echo one > f && git add f && git commit -qm one"
        .. " && git branch packed && git pack-refs --all"
        .. " && git worktree add -q -b a " .. h.quote(r.wt) .. " && git worktree add -q -b b in-b"
        .. " && echo in-b >> .git/info/exclude && mkdir -m 777 " .. h.quote(r.marks))
    if uid then
        h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(root)))
        r.home = h.tmpdir()
        h.sh_ok(("chown %d:%d %s"):format(uid, uid, h.quote(r.home)))
    end
    return r
end

local function run(r, ws, script)
    return h.run_sh(GIT_ENV .. script, { workspace = ws, uid = r.uid, home = r.home })
end

-- git on the host as the person (the repository's owner), with no global or system settings.
local function host_git(r, dir, args)
    local who = r.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(r.uid, r.uid) or ""
    return h.sh(who .. "sh -c " .. h.quote(GIT_ENV .. "export HOME=" .. h.quote(r.root) .. "; timeout 30 git -C "
        .. h.quote(dir) .. " " .. args))
end

local function host_git_ok(r, dir, args)
    local res = host_git(r, dir, args)
    assert(res.code == 0, "host git " .. args .. " failed:\n" .. res.stdout .. res.stderr)
    return res.stdout
end

local function exists(path)
    return h.sh("test -e " .. h.quote(path)).code == 0
end

-- The host's state after a row: every worktree listed is whole (none prunable), `git worktree
-- prune` has nothing to do, and each worktree folder named is there with a clean status.
local function host_whole(r, worktrees)
    local list = host_git_ok(r, r.main, "worktree list --porcelain")
    assert.is_nil(list:find("prunable", 1, true), list)
    assert.are.equal("", host_git_ok(r, r.main, "worktree prune -n -v"))
    for _, w in ipairs(worktrees) do
        assert.truthy(list:find("worktree " .. w .. "\n", 1, true), w .. " not listed:\n" .. list)
        host_git_ok(r, w, "status --porcelain")
    end
    return list
end

local function said(res, step)
    assert.truthy(res.stdout:find(step .. "-ok", 1, true), step .. "\n" .. h.describe(res))
end

-- The rows both layouts share, run in workspace ws (whose linked worktrees are made in it).
local function everyday(r, ws)
    -- a worktree that was there at the start and that the person removed on the host: git calls
    -- its admin folder prunable, and the run's `git worktree prune` removes it
    local gone = r.root .. "/wt-gone"
    host_git_ok(r, r.main, "worktree add -q -b g " .. h.quote(gone))
    h.sh_ok("rm -rf " .. h.quote(gone))
    assert.truthy(host_git_ok(r, r.main, "worktree list --porcelain"):find("prunable", 1, true))
    local res = ok(run(r, ws, [[
set -e
git worktree add -q -b c in-c && git worktree add -q -b d in-d && git worktree add -q -b e in-e
echo add-ok
git pack-refs --all && echo pack-ok
git branch -D packed && echo branch-ok
git gc -q && echo gc-ok
git worktree move in-d in-d2 && echo move-ok
git worktree remove in-e && echo remove-ok
rm -rf in-d2 && git worktree prune && echo prune-ok
]]))
    for _, step in ipairs({ "add", "pack", "branch", "gc", "move", "remove", "prune" }) do said(res, step) end
    assert.is_nil(res.stderr:find("failed to delete", 1, true), h.describe(res))
    assert.is_false(exists(r.common .. "/worktrees/wt-gone"))
    -- one that a command makes look gone (a folder above it moved away) is not: prune keeps
    -- its admin folder, whose pointers stay held, and the move back finds the worktree whole
    local nest = ws .. "/nest/in-n"
    host_git_ok(r, r.main, "worktree add -q -b n " .. h.quote(nest))
    h.sh_ok("echo nest >> " .. h.quote(r.common .. "/info/exclude"))
    run(r, ws, "mv nest nest2 && git worktree prune; mv nest2 nest")
    assert.is_true(exists(r.common .. "/worktrees/in-n/commondir"), "in-n's admin folder pruned")
    host_whole(r, { r.main, r.wt, nest })
    -- a commit in the worktree made in the run, and in a later run (it was there at its start)
    res = ok(run(r, ws, "cd in-c && echo two >> f && git commit -qam c-two && echo commit-ok"))
    said(res, "commit")
    assert.are.equal("c-two", h.chomp(host_git_ok(r, r.main, "log -1 --format=%s c")))
    assert.are.equal(1, host_git(r, r.main, "rev-parse --verify -q refs/heads/packed").code)
    local list = host_whole(r, { r.main, r.wt, ws .. "/in-c" })
    assert.is_nil(list:find("/in-d", 1, true), list)
    assert.is_nil(list:find("/in-e", 1, true), list)
    -- a worktree outside the workspace and the writable set: refused, nothing left behind
    res = run(r, ws, "git worktree add -q --detach ../outside")
    assert.are_not.equal(0, res.code, h.describe(res))
    assert.truthy(res.stderr:find("Read-only file system", 1, true), h.describe(res))
    assert.is_false(exists(r.common .. "/worktrees/outside"))
    assert.is_false(exists(r.root .. "/outside"))
    -- one that was there at the start: moving and removing it are refused, with cordon's line
    res = run(r, ws, "git worktree move in-c in-c2")
    assert.are_not.equal(0, res.code, h.describe(res))
    assert.truthy(res.stderr:find("cordon: the sandbox holds the linked worktree " .. ws .. "/in-c in place", 1,
        true), h.describe(res))
    host_whole(r, { r.main, r.wt, ws .. "/in-c" })
end

for _, who in ipairs({ { name = "as root" }, { name = "as uid 65534", uid = NOBODY } }) do
    describe("cordon run " .. who.name .. ": linked worktrees", function()
        lazy_setup(function()
            assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        end)
        after_each(h.cleanup)

        it("the workspace is the main worktree: add, commit, pack-refs, branch -D, gc, move, remove, prune", function()
            local r = repos(who.uid)
            -- a commit in the linked worktree inside the workspace, and gc, which writes in the
            -- outside worktree's admin folder (its HEAD's log)
            local res = ok(run(r, r.main, "cd in-b && echo x >> f && git commit -qam b-two && echo commit-ok"))
            said(res, "commit")
            assert.are.equal("b-two", h.chomp(host_git_ok(r, r.main, "log -1 --format=%s b")))
            everyday(r, r.main)
            -- the outside worktree's HEAD and index stay the person's, whatever a command does
            local admin = r.common .. "/worktrees/wt-a"
            res = run(r, r.main, "echo ref: refs/heads/main > .git/worktrees/wt-a/HEAD; rm -rf .git/worktrees/wt-a; exit 0")
            ok(res)
            assert.are.equal("ref: refs/heads/a\n", h.read_file(admin .. "/HEAD"))
            host_whole(r, { r.main, r.wt })
        end)

        it("the workspace is a linked worktree: add, commit, pack-refs, branch -D, gc, move, remove, prune", function()
            local r = repos(who.uid)
            everyday(r, r.wt)
            -- the main worktree's state at the common dir's top stays the person's
            local res = run(r, r.wt, "echo ref: refs/heads/a > " .. h.quote(r.common .. "/HEAD"))
            assert.are_not.equal(0, res.code, h.describe(res))
            assert.are.equal("ref: refs/heads/main\n", h.read_file(r.common .. "/HEAD"))
        end)
    end)

    describe("cordon run " .. who.name .. ": nothing planted through a worktree runs on the host", function()
        after_each(h.cleanup)

        -- Each plant: the workspace it is made from, the shell that makes it (PLANT is a program
        -- that leaves the mark), the host's git command that would run it, and where.
        local function plants(r)
            local admin_b = ".git/worktrees/in-b"
            return {
                { what = "a hook in the common dir", ws = r.wt,
                  sh = "PLANT " .. r.common .. "/hooks/pre-commit",
                  host = { r.main, "commit -q --allow-empty -m host" } },
                { what = "a config.worktree with core.fsmonitor in an admin folder", ws = r.main,
                  sh = "git config extensions.worktreeConfig true && PLANT " .. r.root .. "/fsmon && printf '[core]\\n\\tfsmonitor = "
                      .. r.root .. "/fsmon\\n' > " .. admin_b .. "/config.worktree",
                  host = { r.main .. "/in-b", "status --porcelain" } },
                { what = "a commondir in an admin folder, to a repository the command made", ws = r.main,
                  sh = "git init -q --bare .evil && PLANT .evil/hooks/pre-commit && echo " .. r.main
                      .. "/.evil > " .. admin_b .. "/commondir",
                  host = { r.main .. "/in-b", "commit -q --allow-empty -m host" } },
                { what = "a commondir at the common dir's top, from a linked-worktree workspace", ws = r.wt,
                  sh = "git init -q --bare .evil && PLANT .evil/hooks/pre-commit && echo " .. r.wt
                      .. "/.evil > " .. r.common .. "/commondir",
                  host = { r.main, "commit -q --allow-empty -m host" } },
                { what = "a gitdir leading out and a .git file to it", ws = r.main,
                  sh = "git init -q --bare .evil && PLANT .evil/hooks/pre-commit && mkdir -p .evil/worktrees/x && "
                      .. "echo ../.. > .evil/worktrees/x/commondir && echo ref: refs/heads/main > .evil/worktrees/x/HEAD && echo " .. r.main .. "/in-b/.git > .evil/worktrees/x/gitdir && "
                      .. "echo gitdir: " .. r.main .. "/.evil/worktrees/x > in-b/.git",
                  host = { r.main .. "/in-b", "commit -q --allow-empty -m host" } },
            }
        end

        it("a hook, a config.worktree, a commondir or a .git file planted inside runs nothing on the host", function()
            for _, p in ipairs(plants(repos(who.uid))) do
                -- without cordon: the same plant made on the host runs (a fresh set of repositories)
                local r = repos(who.uid)
                local q
                for _, x in ipairs(plants(r)) do if x.what == p.what then q = x end end
                local mark = r.marks .. "/ran"
                local sh = q.sh:gsub("PLANT (%S+)", function(path)
                    return ("printf '#!/bin/sh\\ntouch %s\\n' > %s && chmod +x %s"):format(mark, path, path)
                end)
                local who_sh = r.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(r.uid, r.uid) or ""
                h.sh(who_sh .. "env HOME=" .. h.quote(r.root) .. " sh -c " .. h.quote(GIT_ENV .. "cd " .. h.quote(q.ws)
                    .. " && " .. sh))
                host_git(r, q.host[1], q.host[2])
                assert.is_true(exists(mark), q.what .. ": did not run without cordon")
                -- inside: planted through the sandbox; the person's git command then runs nothing
                r = repos(who.uid)
                for _, x in ipairs(plants(r)) do if x.what == p.what then q = x end end
                mark = r.marks .. "/ran"
                sh = q.sh:gsub("PLANT (%S+)", function(path)
                    return ("printf '#!/bin/sh\\ntouch %s\\n' > %s && chmod +x %s"):format(mark, path, path)
                end)
                local res = run(r, q.ws, sh .. "; exit 0")
                ok(res)
                host_git(r, q.host[1], q.host[2])
                assert.is_false(exists(mark), q.what .. ": ran on the host\n" .. h.describe(res))
            end
        end)
    end)
end

describe("a session whose workspace is a linked worktree", function()
    after_each(h.cleanup)

    it("cordon exec: worktree add, pack-refs, branch -D and a commit work; a planted commondir is undone", function()
        local r = repos()
        local s = h.session_start("spec-wt-" .. h.token(), { cwd = r.wt })
        local function exec(script)
            return h.cordon({ "exec", s.name, "--", GIT_ENV .. script }, { cwd = r.wt, env = s.env })
        end
        local res = ok(exec("git worktree add -q -b s in-s && git pack-refs --all && git branch -D packed "
            .. "&& cd in-s && git commit -q --allow-empty -m s-one && echo session-ok"))
        said(res, "session")
        assert.are.equal("s-one", h.chomp(host_git_ok(r, r.main, "log -1 --format=%s s")))
        res = exec("echo evil > " .. h.quote(r.common .. "/commondir") .. "; exit 0")
        ok(res)
        h.session_reap(s)
        assert.is_false(exists(r.common .. "/commondir"))
        host_whole(r, { r.main, r.wt, r.wt .. "/in-s" })
    end)
end)
