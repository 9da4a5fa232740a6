-- spec/04-engine/run_worktree_spec.lua — a workspace that is a linked git worktree
-- (`git worktree add`): git works inside (status, commit, branch, stash, fetch, rebase) because
-- its admin folder and the repository's object, ref and log stores are writable, while the main
-- repository's hooks, config and info/, the worktree's .git file, the admin folder's commondir
-- and gitdir, and the main working tree stay as they were; packed-refs is rewritten on the host.
-- And the other way round: with the main repository as the workspace, another worktree's
-- pointers, HEAD and index are read-only. (Both layouts as a user: run_worktree_layouts_spec.lua.)
-- Each case builds its repositories in a fresh folder; checks are made on the host afterwards.
-- Drives the built binary ($CORDON_BIN); runs as root.
local h = require("spec.helpers")

local GIT_ENV = "export GIT_AUTHOR_NAME=spec GIT_AUTHOR_EMAIL=spec@example.com "
    .. "GIT_COMMITTER_NAME=spec GIT_COMMITTER_EMAIL=spec@example.com GIT_CONFIG_NOSYSTEM=1; "

local function git(dir, args)
    return h.sh_ok(GIT_ENV .. "git -C " .. h.quote(dir) .. " " .. args)
end

-- A main repository with one commit and a hook, a bare "remote" one commit ahead, and a linked
-- worktree of the main repository on branch task-1.
local function repos()
    local root = h.tmpdir()
    local main, wt, remote = root .. "/main", root .. "/task-1", root .. "/remote.git"
    h.sh_ok(GIT_ENV .. "git init -q -b main " .. h.quote(main))
    h.write_file(main .. "/f.txt", "one\n")
    h.write_file(main .. "/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n", "755")
    git(main, "add f.txt && git -C " .. h.quote(main) .. " commit -qm one")
    h.sh_ok(GIT_ENV .. "git clone -q --bare " .. h.quote(main) .. " " .. h.quote(remote))
    local up = root .. "/up"
    h.sh_ok(GIT_ENV .. "git clone -q " .. h.quote(remote) .. " " .. h.quote(up))
    h.write_file(up .. "/g.txt", "upstream\n")
    git(up, "add g.txt && git -C " .. h.quote(up) .. " commit -qm upstream && git -C "
        .. h.quote(up) .. " push -q origin main")
    git(main, "worktree add -q -b task-1 " .. h.quote(wt))
    return { root = root, main = main, wt = wt, remote = remote, admin = main .. "/.git/worktrees/task-1" }
end

local function digest(paths)
    return h.sh_ok("cd / && sha256sum " .. h.join(paths) .. " 2>&1; find " .. h.join(paths)
        .. " -printf '%p %m %s\\n' 2>/dev/null | sort")
end

local ok = h.ok

describe("cordon run: the workspace is a linked git worktree", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        assert(h.sh("git --version").code == 0, "git is not installed")
    end)
    after_each(h.cleanup)

    it("git status, commit, branch, stash, fetch and rebase work; the main repository shows the commits", function()
        local g = repos()
        local protected = { g.main .. "/.git/hooks", g.main .. "/.git/config", g.main .. "/.git/info",
                            g.wt .. "/.git", g.admin .. "/commondir", g.admin .. "/gitdir" }
        local before = digest(protected)
        local main_tree = h.sh_ok("cd " .. h.quote(g.main) .. " && git status --porcelain && cat f.txt")
        local r = ok(h.run_sh(GIT_ENV .. [[
set -e
git status --short
echo two >> f.txt && git commit -qam two && echo commit-ok
git branch x && echo branch-ok
echo dirty >> f.txt && git stash -q && test "$(git stash list | wc -l)" = 1 && echo stash-ok
git stash pop -q && test -z "$(git stash list)" && grep -q dirty f.txt && echo pop-ok
git commit -qam three
git fetch -q ]] .. h.quote(g.remote) .. [[ main:refs/remotes/up/main && echo fetch-ok
git rebase -q up/main && test -f g.txt && echo rebase-ok
]], { workspace = g.wt }))
        for _, step in ipairs({ "commit", "branch", "stash", "pop", "fetch", "rebase" }) do
            assert.truthy(r.stdout:find(step .. "-ok", 1, true), step .. "\n" .. h.describe(r))
        end
        -- on the host, the main repository sees what the worktree did
        local log = git(g.main, "log --format=%s task-1")
        assert.are.equal("three\ntwo\nupstream\none\n", log)
        assert.truthy(git(g.main, "branch --list x"):find("x", 1, true))
        assert.truthy(git(g.main, "rev-parse --verify -q refs/remotes/up/main"):match("^%x+"))
        assert.are.equal("", git(g.main, "stash list"))
        assert.are.equal(before, digest(protected))
        assert.are.equal(main_tree, h.sh_ok("cd " .. h.quote(g.main) .. " && git status --porcelain && cat f.txt"))
        assert.are.equal("", git(g.wt, "status --porcelain"))
    end)

    it("the main repository's hooks, config, info/, the .git file and the admin folder's pointers are read-only", function()
        local g = repos()
        local targets = {
            g.main .. "/.git/hooks/pre-commit", g.main .. "/.git/hooks/post-checkout",
            g.main .. "/.git/config", g.main .. "/.git/info/exclude", g.wt .. "/.git",
            g.admin .. "/commondir", g.admin .. "/gitdir", g.admin .. "/config.worktree",
            g.main .. "/.git/HEAD", g.main .. "/.git/index", g.main .. "/f.txt",
        }
        -- the first run makes the empty config.worktree it holds read-only
        ok(h.run_sh("true", { workspace = g.wt }))
        assert.are.equal("", h.read_file(g.admin .. "/config.worktree"))
        local before = digest(targets)
        for _, t in ipairs(targets) do
            local r = h.run_sh("echo 'gitdir: .evil' > " .. h.quote(t), { workspace = g.wt })
            assert.are_not.equal(0, r.code, t .. "\n" .. h.describe(r))
            assert.truthy(r.stderr:find("Read-only file system", 1, true), h.describe(r))
        end
        -- nor can they be moved away and replaced
        local r = h.run_sh("mv .git .git.old; mv " .. h.quote(g.main .. "/.git/hooks") .. " /var/tmp/h; "
            .. "rm -f " .. h.quote(g.admin .. "/commondir") .. "; exit 0", { workspace = g.wt })
        ok(r)
        assert.are.equal(before, digest(targets))
        assert.are.equal("gitdir: " .. g.admin .. "\n", h.read_file(g.wt .. "/.git"))
    end)

    it("a commondir planted at the top of the common dir is renamed away and held, with a line", function()
        local g = repos()
        local r = ok(h.run_sh("echo evil > " .. h.quote(g.main .. "/.git/commondir") .. " && echo made; "
            -- until the watcher's check has put the held stand-in there (at most 10 s)
            .. "for i in $(seq 100); do echo again 2>/dev/null > " .. h.quote(g.main .. "/.git/commondir")
            .. " || { echo refused; break; }; sleep 0.1; done", { workspace = g.wt }))
        assert.truthy(r.stdout:find("made", 1, true), h.describe(r))
        assert.truthy(r.stdout:find("refused", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("git: repository .: commondir: a new pointer file: renamed to "
            .. "commondir.cordon-refused", 1, true), h.describe(r))
        assert.is_nil(h.read_file(g.main .. "/.git/commondir"))
        assert.truthy(git(g.main, "status --porcelain") == "")
    end)

    it("git pack-refs, branch -D of a packed branch and gc rewrite packed-refs on the host", function()
        local g = repos()
        git(g.main, "branch old && git -C " .. h.quote(g.main) .. " pack-refs --all")
        local r = ok(h.run_sh(GIT_ENV .. "git pack-refs --all && git branch -D old && git gc -q && echo done",
            { workspace = g.wt }))
        assert.truthy(r.stdout:find("done", 1, true), h.describe(r))
        assert.truthy(git(g.main, "rev-parse --verify -q refs/heads/task-1"):match("^%x+"))
        assert.truthy(git(g.main, "rev-parse --verify -q refs/heads/main"):match("^%x+"))
        assert.are.equal(1, h.sh("git -C " .. h.quote(g.main) .. " rev-parse --verify -q refs/heads/old").code)
        assert.is_nil(h.read_file(g.main .. "/.git/packed-refs"):find("refs/heads/old", 1, true))
    end)

    it("a .git file that leads to another repository's folder gets no grant, and says so", function()
        local g = repos()
        local ws = h.workspace()
        h.write_file(ws .. "/.git", "gitdir: " .. g.admin .. "\n")
        local r = h.run_sh("touch " .. h.quote(g.admin .. "/index.lock"), { workspace = ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("cordon: the workspace's git repository is not writable in this "
            .. "sandbox (git commit will fail): " .. g.admin
            .. " belongs to the worktree at " .. g.wt .. "/.git, not to this one", 1, true), h.describe(r))
        h.write_file(ws .. "/.git", "gitdir: " .. g.main .. "/.git\n")
        r = h.run_sh("touch " .. h.quote(g.main .. "/.git/objects/x"), { workspace = ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("not a worktree's admin folder you own", 1, true), h.describe(r))
        assert.is_nil(h.read_file(g.main .. "/.git/objects/x"))
    end)

    it("an admin folder the caller does not own gets no grant", function()
        local g = repos()
        h.sh_ok("chown -R 65534:65534 " .. h.quote(g.main .. "/.git"))
        local r = h.run_sh("touch " .. h.quote(g.admin .. "/index.lock"), { workspace = g.wt })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("not a worktree's admin folder you own", 1, true), h.describe(r))
    end)
end)

describe("cordon run: the workspace is the main worktree of a repository with other worktrees", function()
    after_each(h.cleanup)

    it("commits there; the other worktree's pointers, HEAD and index stay as they were", function()
        local g = repos()
        local held = { g.admin .. "/HEAD", g.admin .. "/index", g.admin .. "/commondir", g.admin .. "/gitdir" }
        local before = digest(held)
        local r = h.run_sh(GIT_ENV .. "git commit -q --allow-empty -m main-two && echo commit-ok; "
            .. "echo x > .git/worktrees/task-1/HEAD; echo ../x > .git/worktrees/task-1/commondir; "
            .. "rm -rf .git/worktrees/task-1; mv .git/worktrees .git/w; exit 0", { workspace = g.main })
        ok(r)
        assert.truthy(r.stdout:find("commit-ok", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("Read-only file system", 1, true), h.describe(r))
        assert.are.equal(before, digest(held))
        assert.are.equal("main-two\n", git(g.main, "log -1 --format=%s"))
        assert.are.equal("", git(g.wt, "status --porcelain"))
    end)
end)
