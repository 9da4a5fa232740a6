-- spec/04-engine/run_git_guard_spec.lua — nothing a sandboxed command writes in a git
-- repository makes the host's git run a program: for a fresh `git init`, a nested repository, a
-- submodule, a linked worktree (the workspace being the worktree, and the workspace being the
-- main repository with a worktree elsewhere), a symbolic-linked hooks folder, husky's `.husky`
-- (and husky 9's `.husky/_`) and a program a config entry runs by path, a command tries one way
-- (hooks, core.hooksPath's folder, core.fsmonitor through a planted commondir, a submodule's
-- config, a replaced `.git` file, a textconv script). Each attempt is first shown
-- to work without cordon: the host's `git status` and `git commit` then create a marker file.
-- Under cordon they do not, and `git rev-parse --git-common-dir --git-path hooks` on the host
-- says what it said before. Then the window that remains (a new name in .git, which no mount
-- can stop) is shown closing while the command still runs, and a session's background job is
-- undone before its next command. A repository made deep in a tree that is otherwise unchanged
-- (the check after a command lists again only the folders whose ctime changed) is found by a run
-- and by a session's next command, and by the next run, whose first walk starts from the
-- folders' stamps the last run kept (where no command can write them).
-- Drives the built binary ($CORDON_BIN); runs as root; no network.
local h = require("spec.helpers")

local GIT_ENV = "export GIT_AUTHOR_NAME=spec GIT_AUTHOR_EMAIL=spec@example.com "
    .. "GIT_COMMITTER_NAME=spec GIT_COMMITTER_EMAIL=spec@example.com GIT_CONFIG_NOSYSTEM=1 "
    .. "GIT_CONFIG_GLOBAL=/dev/null; "

local function git(dir, args)
    return h.sh_ok(GIT_ENV .. "git -C " .. h.quote(dir) .. " " .. args)
end

-- Shell: inside the sandbox, wait (bounded: 10 s) until the watcher holds PATH (a shell word,
-- absolute) read-only, so that what follows is refused rather than undone after; outside, nothing.
local function held(path)
    return "{ [ -z \"$CORDON_SANDBOX\" ] || for i in $(seq 200); do grep -q \" " .. path
        .. " ro,\" /proc/self/mountinfo && break; sleep 0.05; done; }; "
end

local function repo(dir)
    h.sh_ok("mkdir -p " .. h.quote(dir))
    git(dir, "init -q -b main && " .. "git -C " .. h.quote(dir) .. " commit -q --allow-empty -m one")
end

-- Each case: setup(root) -> ws, dir (where the host runs git afterwards), vars; attack: a bash
-- script (MARK, WS, ROOT replaced) run in ws; host: what the person's git does next, in dir.
local CASES = {
    {
        name = "a fresh git init: hooks and core.fsmonitor in a repository made during the run",
        setup = function(root)
            local ws = root .. "/ws"
            h.sh_ok("mkdir -p " .. h.quote(ws))
            return ws, ws
        end,
        attack = [[
git init -q -b main .
HELDHOOKS
printf '#!/bin/sh\ntouch MARK\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
printf '#!/bin/sh\ntouch MARK\n' > evil.sh; chmod +x evil.sh
# written straight into the file: `git config` would be refused by name (run_git_config_spec)
printf '[core]\n\tfsmonitor = WS/evil.sh\n' >> .git/config
]],
        host = "git status; git commit -q --allow-empty -m two",
        -- held read-only inside the moment `git init` completed it: refused at once
        refused = { ".git/hooks/pre-commit", ".git/config" },
    },
    {
        name = "a nested repository: core.fsmonitor and a hook through a planted commondir",
        setup = function(root)
            local ws = root .. "/ws"
            repo(ws)
            repo(ws .. "/vendor/lib")
            return ws, ws .. "/vendor/lib"
        end,
        attack = [[
git init -q --bare evilc
printf '#!/bin/sh\ntouch MARK\n' > evilc/hooks/pre-commit; chmod +x evilc/hooks/pre-commit
printf '#!/bin/sh\ntouch MARK\n' > evil.sh; chmod +x evil.sh
git --git-dir=evilc config core.bare false; git --git-dir=evilc config core.fsmonitor WS/evil.sh
echo ../../../evilc > vendor/lib/.git/commondir
]],
        host = "git status; git commit -q --allow-empty -m two",
        expect = { "vendor/lib/.git/commondir" },
    },
    {
        name = "a submodule: its config under .git/modules",
        setup = function(root)
            local lib, ws = root .. "/lib", root .. "/ws"
            repo(lib)
            repo(ws)
            git(ws, "-c protocol.file.allow=always submodule add -q " .. h.quote(lib) .. " sub")
            git(ws, "commit -qm sub")
            return ws, ws
        end,
        attack = [[
printf '#!/bin/sh\ntouch MARK\n' > evil.sh; chmod +x evil.sh
printf '[core]\n\tfsmonitor = WS/evil.sh\n' >> .git/modules/sub/config
printf '#!/bin/sh\ntouch MARK\n' > .git/modules/sub/hooks/pre-commit
chmod +x .git/modules/sub/hooks/pre-commit
]],
        host = "git status; git -C sub status; git -C sub commit -q --allow-empty -m two",
    },
    {
        name = "the workspace is a linked worktree: its .git file replaced with gitdir: .evil",
        setup = function(root)
            local main, wt = root .. "/main", root .. "/wt"
            repo(main)
            git(main, "worktree add -q -b task " .. h.quote(wt))
            return wt, wt
        end,
        attack = [[
git init -q --bare .evil; git --git-dir=.evil config core.bare false
printf '#!/bin/sh\ntouch MARK\n' > .evil/hooks/pre-commit; chmod +x .evil/hooks/pre-commit
rm -f .git; echo 'gitdir: .evil' > .git
]],
        host = "git status; git commit -q --allow-empty -m two",
    },
    {
        name = "the workspace is the main repository: another worktree's commondir",
        setup = function(root)
            local ws, wt = root .. "/ws", root .. "/wt"
            repo(ws)
            git(ws, "worktree add -q -b task " .. h.quote(wt))
            return ws, wt
        end,
        attack = [[
git init -q --bare evilc; git --git-dir=evilc config core.bare false
printf '#!/bin/sh\ntouch MARK\n' > evilc/hooks/pre-commit; chmod +x evilc/hooks/pre-commit
echo WS/evilc > .git/worktrees/wt/commondir
]],
        host = "git status; git commit -q --allow-empty -m two",
    },
    {
        name = "a hooks folder that is a symbolic link into the work tree (.githooks)",
        setup = function(root)
            local ws = root .. "/ws"
            repo(ws)
            h.sh_ok("mkdir " .. h.quote(ws .. "/.githooks"))
            h.write_file(ws .. "/.githooks/pre-commit", "#!/bin/sh\nexit 0\n", "755")
            h.sh_ok("rm -rf " .. h.quote(ws .. "/.git/hooks") .. " && ln -s ../.githooks "
                .. h.quote(ws .. "/.git/hooks"))
            return ws, ws
        end,
        attack = [[
printf '#!/bin/sh\ntouch MARK\n' > .githooks/pre-commit
rm -f .git/hooks && mkdir .git/hooks && printf '#!/bin/sh\ntouch MARK\n' > .git/hooks/pre-commit
chmod +x .git/hooks/pre-commit
]],
        host = "git status; git commit -q --allow-empty -m two",
        expect = { ".git/hooks" },
    },
    {
        name = "husky: core.hooksPath = .husky, whose hooks live in the workspace",
        setup = function(root)
            local ws = root .. "/ws"
            repo(ws)
            h.sh_ok("mkdir " .. h.quote(ws .. "/.husky"))
            h.write_file(ws .. "/.husky/pre-commit", "#!/bin/sh\nexit 0\n", "755")
            git(ws, "config core.hooksPath .husky")
            return ws, ws
        end,
        attack = [[
printf '#!/bin/sh\ntouch MARK\n' > .husky/pre-commit
printf '#!/bin/sh\ntouch MARK\n' > .husky/commit-msg; chmod +x .husky/commit-msg
]],
        host = "git status; git commit -q --allow-empty -m two",
    },
    {
        name = "husky 9: core.hooksPath = .husky/_, whose hooks run the ones in .husky",
        setup = function(root)
            local ws = root .. "/ws"
            repo(ws)
            h.sh_ok("mkdir -p " .. h.quote(ws .. "/.husky/_"))
            h.write_file(ws .. "/.husky/_/pre-commit",
                "#!/bin/sh\nexec sh \"$(dirname \"$0\")/../$(basename \"$0\")\"\n", "755")
            h.write_file(ws .. "/.husky/pre-commit", "exit 0\n", "644")
            git(ws, "config core.hooksPath .husky/_")
            return ws, ws
        end,
        attack = [[printf 'touch MARK\n' > .husky/pre-commit]],
        host = "git status; git commit -q --allow-empty -m two",
    },
    {
        name = "a program a config entry runs by path: diff.conv.textconv = ./scripts/conv.sh",
        setup = function(root)
            local ws = root .. "/ws"
            repo(ws)
            h.sh_ok("mkdir -p " .. h.quote(ws .. "/scripts"))
            h.write_file(ws .. "/scripts/conv.sh", "#!/bin/sh\ncat \"$1\"\n", "755")
            h.write_file(ws .. "/.gitattributes", "*.txt diff=conv\n")
            h.write_file(ws .. "/a.txt", "one\n")
            git(ws, "config diff.conv.textconv ./scripts/conv.sh")
            git(ws, "add -A && git -C " .. h.quote(ws) .. " commit -qm files")
            h.write_file(ws .. "/a.txt", "two\n")
            return ws, ws
        end,
        attack = [[printf '#!/bin/sh\ntouch MARK\ncat "$1"\n' > scripts/conv.sh]],
        host = "git diff",
    },
}

local function fill(script, vars)
    return (script:gsub("[A-Z]+", function(w) return vars[w] end))
end

local function rev_parse(dir)
    return h.sh(GIT_ENV .. "cd " .. h.quote(dir) .. " && git rev-parse --git-common-dir --git-path hooks"
        .. " 2>&1").stdout
end

local function exists(path)
    return h.sh("test -e " .. h.quote(path)).code == 0
end

local function host_git(dir, script)
    return h.sh(GIT_ENV .. "cd " .. h.quote(dir) .. " && { " .. script .. "; } >/dev/null 2>&1")
end

describe("cordon run: nothing in a repository makes the host run a program", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        assert(h.sh("git --version").code == 0, "git is not installed")
    end)
    after_each(h.cleanup)

    for _, c in ipairs(CASES) do
        it(c.name, function()
            -- without cordon: the attempt works
            local root = h.tmpdir()
            local ws, dir = c.setup(root)
            local mark = root .. "/MARK"
            local vars = { MARK = mark, WS = ws, ROOT = root }
            vars.HELDHOOKS = held("$PWD/.git/hooks")
            h.sh(GIT_ENV .. "cd " .. h.quote(ws) .. " && bash -c " .. h.quote(fill(c.attack, vars))
                .. " >/dev/null 2>&1")
            host_git(dir, c.host)
            assert.is_true(exists(mark), "the attempt does not work even without cordon: " .. c.name)

            -- under cordon: it does not
            root = h.tmpdir()
            ws, dir = c.setup(root)
            mark = root .. "/MARK"
            vars = { MARK = mark, WS = ws, ROOT = root, HELDHOOKS = held("$PWD/.git/hooks") }
            local before = rev_parse(dir)
            if before:match("^fatal") then before = ".git\n.git/hooks\n" end -- git init inside
            local r = h.run_sh(GIT_ENV .. fill(c.attack, vars), { workspace = ws, cwd = ws })
            assert.is_false(exists(mark), "ran during the command\n" .. h.describe(r))
            assert.are.equal(before, rev_parse(dir), h.describe(r))
            host_git(dir, c.host)
            assert.is_false(exists(mark), "the host's git ran the command's program\n" .. h.describe(r))
            for _, rel in ipairs(c.refused or {}) do
                assert.is_truthy(r.stderr:find(rel .. ": Read-only file system", 1, true),
                    "not refused inside: " .. rel .. "\n" .. h.describe(r))
            end
            for _, rel in ipairs(c.expect or {}) do
                assert.is_truthy(r.stderr:find("cordon: git: repository [^\n]*" .. rel:gsub("%p", "%%%0")),
                    "no line names " .. rel .. "\n" .. h.describe(r))
            end
        end)
    end

    it("a new repository's harmless config and samples stay as git made them, and git works", function()
        local ws = h.workspace()
        local r = h.run_sh(GIT_ENV .. "git init -q -b main . && echo a > f && git add f && "
            .. "git commit -qm one && git status --porcelain", { workspace = ws, cwd = ws })
        assert.are.equal(0, r.code, h.describe(r))
        assert.is_nil(r.stderr:find("cordon: git:", 1, true), h.describe(r))
        assert.are.equal("one\n", git(ws, "log --format=%s"))
    end)

    -- A new name in .git cannot be held before it exists: the plant is renamed away while the
    -- command still runs, and an empty stand-in held read-only in its place refuses the next.
    it("a new name in .git is undone while the command runs, and a stand-in refuses it again", function()
        local root = h.tmpdir()
        local ws = root .. "/ws"
        repo(ws)
        -- the command plants .git/commondir and waits (at most 20 s) until it is emptied
        local r = h.run_sh("echo " .. h.quote(root .. "/evil") .. " > .git/commondir; "
            .. "for i in $(seq 200); do test -s .git/commondir || break; sleep 0.1; done; "
            .. "test -s .git/commondir && { echo still-there; exit 1; }; "
            .. "echo " .. h.quote(root .. "/evil") .. " > .git/commondir || echo refused; "
            .. "rm -f .git/commondir || echo kept", { workspace = ws, cwd = ws })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("refused\nkept\n", r.stdout, h.describe(r))
        assert.is_truthy(r.stderr:find("cordon: git: repository .: .git/commondir: a new pointer file: "
            .. "renamed to commondir.cordon-refused", 1, true), h.describe(r))
        assert.is_truthy(r.stderr:find("cordon: git: repository .: .git/commondir: an empty commondir is held "
            .. "in its place until the command ends", 1, true), h.describe(r))
        assert.is_true(exists(ws .. "/.git/commondir.cordon-refused"))
        assert.is_false(exists(ws .. "/.git/commondir")) -- the stand-in, gone with the command
        assert.are.equal(".git\n.git/hooks\n", h.sh_ok(GIT_ENV .. "cd " .. h.quote(ws)
            .. " && git rev-parse --git-common-dir --git-path hooks"))
    end)

    it("a new repository's config is held at once: a code-running line appended is refused", function()
        local ws = h.workspace()
        local r = h.run_sh(GIT_ENV .. "git init -q -b main . && " .. held("$PWD/.git/config")
            .. "git config user.name kept && "
            .. "printf '[core]\\n\\tfsmonitor = /bin/evil\\n[alias]\\n\\tx = !evil\\n' >> .git/config",
            { workspace = ws, cwd = ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.is_truthy(r.stderr:find(".git/config: Read-only file system", 1, true), h.describe(r))
        assert.are.equal("kept\n", git(ws, "config user.name"))
        assert.are.equal(1, h.sh(GIT_ENV .. "git -C " .. h.quote(ws) .. " config core.fsmonitor").code)
        assert.are.equal(1, h.sh(GIT_ENV .. "git -C " .. h.quote(ws) .. " config alias.x").code)
    end)

    -- The watcher sees the repository made (no folder stamps involved): one made deep in a tree
    -- older than the walk's margin, its folder's mtime put back, is held at once.
    it("a repository made deep in an unchanged tree, its folder's mtime put back, is found", function()
        local root = h.tmpdir()
        local ws = root .. "/ws"
        repo(ws)
        h.sh_ok("mkdir -p " .. h.quote(ws .. "/a/b/c/d/e") .. " " .. h.quote(ws .. "/a/x/y")
            .. " && sleep 0.3")
        local r = h.run_sh(GIT_ENV .. "t=$(stat -c %y a/b/c/d) && git init -q -b main a/b/c/d && "
            .. held("$PWD/a/b/c/d/.git/hooks")
            .. "{ printf '#!/bin/sh\\ntouch " .. root .. "/MARK\\n' > a/b/c/d/.git/hooks/pre-commit "
            .. "|| echo refused; } && touch -d \"$t\" a/b/c/d",
            { workspace = ws, cwd = ws })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("refused\n", r.stdout, h.describe(r))
        host_git(ws .. "/a/b/c/d", "git commit -q --allow-empty -m x")
        assert.is_false(exists(root .. "/MARK"))
    end)

    -- A run's first walk starts from the folders' stamps the last run's check kept in cordon's
    -- state directory: what it skips is only the listing of a folder unchanged since. What a
    -- command makes meanwhile is held read-only inside as it appears.
    it("the next run's walk from the last run's: what each run's command made is held", function()
        local root = h.tmpdir()
        local ws, home = root .. "/ws", h.secret_home()
        repo(ws)
        h.sh_ok("mkdir -p " .. h.quote(ws .. "/a/b/c/d/e") .. " " .. h.quote(ws .. "/a/x/y")
            .. " && sleep 0.3")
        local plant = function(dir)
            return GIT_ENV .. "t=$(stat -c %y " .. dir .. ") && git init -q -b main " .. dir .. " && "
                .. held("$PWD/" .. dir .. "/.git/hooks")
                .. "{ printf '#!/bin/sh\\ntouch " .. root .. "/MARK\\n' > " .. dir .. "/.git/hooks/pre-commit "
                .. "|| echo refused; } && touch -d \"$t\" " .. dir
        end
        local r = h.run_sh(plant("a/b/c/d"), { workspace = ws, cwd = ws, home = home })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("refused\n", r.stdout, h.describe(r))
        local kept = h.sh_ok("ls " .. h.quote(home .. "/.local/state/cordon/git-walks"))
        assert.is_truthy(kept:match("^%x+\n$"), kept)
        -- the person's own repository, made between the runs deep in the unchanged tree: part of
        -- the next run's first snapshot (its folder's ctime changed), so its hooks folder is held
        -- read-only during the command, and nothing of it is undone
        git(ws .. "/a/x/y", "init -q -b main")
        h.sh_ok("sleep 0.3")
        r = h.run_sh(plant("a/b/c/d/e") .. " && { printf '#!/bin/sh\\ntouch " .. root .. "/MARK\\n' > "
            .. "a/x/y/.git/hooks/pre-commit || echo refused; }",
            { workspace = ws, cwd = ws, home = home })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("refused\nrefused\n", r.stdout, h.describe(r))
        assert.is_nil(r.stderr:find("cordon: git: repository a/x/y", 1, true), h.describe(r))
        assert.is_false(exists(ws .. "/a/x/y/.git/hooks/pre-commit"))
        for _, dir in ipairs({ "a/b/c/d", "a/b/c/d/e", "a/x/y" }) do
            host_git(ws .. "/" .. dir, "git commit -q --allow-empty -m x")
        end
        assert.is_false(exists(root .. "/MARK"))
    end)

    it("the kept walk lies where no command can write it, even in the workspace", function()
        local ws = h.workspace()
        local state = ws .. "/state"
        local r = h.run_sh("true", { workspace = ws, cwd = ws, env = { XDG_STATE_HOME = state } })
        assert.are.equal(0, r.code, h.describe(r))
        local dir = state .. "/cordon/git-walks"
        local name = h.sh_ok("ls " .. h.quote(dir)):gsub("\n$", "")
        assert.is_truthy(name:match("^%x+$"), name)
        r = h.run_sh("ls " .. h.quote(dir) .. " || echo hidden; echo forged > " .. h.quote(dir .. "/" .. name)
            .. " || echo refused", { workspace = ws, cwd = ws, env = { XDG_STATE_HOME = state } })
        assert.is_truthy(r.stdout:find("hidden\n", 1, true), h.describe(r))
        assert.is_truthy(r.stdout:find("refused\n", 1, true), h.describe(r))
        -- a kept file of base/record.h: its magic first, the walk's untouched
        assert.are.equal("cordgwk", h.sh_ok("head -c 7 " .. h.quote(dir .. "/" .. name)))
    end)
end)

describe("cordon session: a background job's plant is refused, a repository held as it appears", function()
    after_each(h.cleanup)

    it("a hook planted in a nested repository made in the background", function()
        local root = h.tmpdir()
        local ws = root .. "/ws"
        repo(ws)
        local s = h.session_start("gg-" .. h.token(), { cwd = ws })
        local bg = h.cordon({ "exec", s.name, "--background", "--", GIT_ENV .. "git init -q -b main sub && "
            .. held("$PWD/sub/.git/hooks")
            .. "{ printf '#!/bin/sh\\ntouch " .. root .. "/MARK\\n' > sub/.git/hooks/pre-commit "
            .. "|| touch refused; } && touch planted && sleep 30" },
            { cwd = ws, env = s.env })
        assert.are.equal(0, bg.code, h.describe(bg))
        assert.is_true(h.wait_for(function() return exists(ws .. "/planted") end, 20))
        local r = h.cordon({ "exec", s.name, "--", "true" }, { cwd = ws, env = s.env })
        assert.are.equal(0, r.code, h.describe(r))
        assert.is_true(exists(ws .. "/refused"))
        assert.is_false(exists(ws .. "/sub/.git/hooks/pre-commit"))
        host_git(ws .. "/sub", "git commit -q --allow-empty -m x")
        assert.is_false(exists(root .. "/MARK"))
    end)

    it("a foreground command's plant: the line comes with its result", function()
        local root = h.tmpdir()
        local ws = root .. "/ws"
        repo(ws)
        local s = h.session_start("gg-" .. h.token(), { cwd = ws })
        local r = h.cordon({ "exec", s.name, "--", "echo /nowhere > .git/commondir" },
            { cwd = ws, env = s.env })
        assert.are.equal(0, r.code, h.describe(r))
        assert.is_truthy(r.stderr:find("cordon: git: repository .: .git/commondir: a new pointer file", 1, true),
            h.describe(r))
        -- gone, or (undone while the command ran) an empty stand-in held for the session's life
        assert.is_true(not exists(ws .. "/.git/commondir") or h.read_file(ws .. "/.git/commondir") == "")
    end)

    it("a repository made deep in an unchanged tree by a later command is found", function()
        local root = h.tmpdir()
        local ws = root .. "/ws"
        repo(ws)
        h.sh_ok("mkdir -p " .. h.quote(ws .. "/a/b/c/d") .. " && sleep 0.3")
        local s = h.session_start("gg-" .. h.token(), { cwd = ws })
        local r = h.cordon({ "exec", s.name, "--", "true" }, { cwd = ws, env = s.env })
        assert.are.equal(0, r.code, h.describe(r))
        r = h.cordon({ "exec", s.name, "--", GIT_ENV .. "git init -q -b main a/b/c/d && "
            .. "{ printf '#!/bin/sh\\ntouch " .. root .. "/MARK\\n' > a/b/c/d/.git/hooks/pre-commit "
            .. "&& chmod +x a/b/c/d/.git/hooks/pre-commit || echo refused; }" }, { cwd = ws, env = s.env })
        assert.are.equal(0, r.code, h.describe(r))
        -- held before the plant (refused), or the plant undone at the command's end, said with it
        assert.is_true(r.stdout == "refused\n" or r.stderr:find("a/b/c/d/.git/hooks/pre-commit: a new hook", 1, true)
            ~= nil, h.describe(r))
        host_git(ws .. "/a/b/c/d", "git commit -q --allow-empty -m x")
        assert.is_false(exists(root .. "/MARK"))
    end)
end)
