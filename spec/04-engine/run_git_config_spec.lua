-- spec/04-engine/run_git_config_spec.lua — git settings made inside the sandbox (docs/git.md,
-- "Settings"): the protected .git/config is read-only in the sandbox, yet `git config`, `git
-- remote add`, `git push -u`, `git checkout -b --track` and `git submodule add` record what
-- they say they record, read back outside with git; settings that would make git run a
-- program on the host are refused with one line naming the key and why, the command fails,
-- and nothing of them reaches the host's file. Real git, a repository in a fresh workspace
-- (bare remote and submodule source beside it), checks made on the host afterwards with
-- `git config --file` (no safe.directory question for another uid's repository).
-- Drives the built binary ($CORDON_BIN); runs as root, one case as uid 65534, one in a session.
local h = require("spec.helpers")

local NOBODY = 65534

local GIT_ENV = "export GIT_AUTHOR_NAME=spec GIT_AUTHOR_EMAIL=spec@example.com "
    .. "GIT_COMMITTER_NAME=spec GIT_COMMITTER_EMAIL=spec@example.com GIT_CONFIG_NOSYSTEM=1; "

local ok = h.ok

-- A workspace holding a repository with one commit on main, a bare repository and a
-- submodule source beside it (in the workspace's parent). With uid, all of it is that uid's.
local function repo(uid)
    local ws, parent = h.workspace(nil, uid)
    local g = { ws = ws, bare = parent .. "/remote.git", lib = parent .. "/lib", config = ws .. "/.git/config" }
    -- (git on the host, as root, in another uid's workspace: no safe.directory question)
    local host_env = GIT_ENV .. "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'; "
    h.sh_ok(host_env .. "git init -q -b main " .. h.quote(ws) .. " && git -C " .. h.quote(ws)
        .. " commit -q --allow-empty -m one && git init -q --bare -b main " .. h.quote(g.bare)
        .. " && git init -q -b main " .. h.quote(g.lib) .. " && git -C " .. h.quote(g.lib)
        .. " commit -q --allow-empty -m lib")
    if uid then
        h.sh_ok(("chown -R %d:%d %s %s %s"):format(uid, uid, h.quote(ws), h.quote(g.bare), h.quote(g.lib)))
    end
    return g
end

-- The value of key in the host's file (nil when absent; several values joined by newlines).
local function host_get(file, key)
    local r = h.sh("git config --file " .. h.quote(file) .. " --get-all " .. h.quote(key))
    if r.code ~= 0 then return nil end
    return h.chomp(r.stdout)
end

-- The safe settings a coding agent makes, the way its tools make them.
local function safe_script(g)
    return GIT_ENV .. ([[
set -e
git config user.name "Sandbox Person"
git config user.email sandbox@example.com
git remote add origin %s
git config remote.origin.pushurl %s
git push -q -u origin main
git checkout -q -b x --track main
git -c protocol.file.allow=always submodule add -q %s lib
git config core.autocrlf input
git config pull.rebase true
git config push.default simple
git config init.defaultBranch trunk
echo all-done
]]):format(h.quote(g.bare), h.quote(g.bare), h.quote(g.lib))
end

local function check_safe(g)
    local want = {
        ["user.name"] = "Sandbox Person", ["user.email"] = "sandbox@example.com",
        ["remote.origin.url"] = g.bare, ["remote.origin.pushurl"] = g.bare,
        ["remote.origin.fetch"] = "+refs/heads/*:refs/remotes/origin/*",
        ["branch.main.remote"] = "origin", ["branch.main.merge"] = "refs/heads/main",
        ["branch.x.remote"] = ".", ["branch.x.merge"] = "refs/heads/main",
        ["submodule.lib.url"] = g.lib, ["submodule.lib.active"] = "true",
        ["core.autocrlf"] = "input", ["pull.rebase"] = "true", ["push.default"] = "simple",
        ["init.defaultbranch"] = "trunk",
    }
    for key, value in pairs(want) do
        assert.are.equal(value, host_get(g.config, key), key)
    end
end

-- Code-running settings: { key as git documents it, a value }.
local DANGEROUS = {
    { "core.hooksPath", ".husky" }, { "core.fsmonitor", "./watch.sh" },
    { "core.sshCommand", "ssh -i key" }, { "core.gitProxy", "./proxy.sh" },
    { "core.pager", "./pager.sh" }, { "core.editor", "./editor.sh" },
    { "core.askPass", "./ask.sh" }, { "sequence.editor", "./editor.sh" },
    { "diff.pdf.textconv", "./conv.sh" }, { "diff.external", "./diff.sh" },
    { "filter.lfs.clean", "./f.sh" }, { "filter.lfs.smudge", "./f.sh" },
    { "filter.lfs.process", "./f.sh" }, { "merge.ours.driver", "./m.sh %O %A %B" },
    { "credential.helper", "./cred.sh" }, { "credential.https://example.com.helper", "store" },
    { "gpg.program", "./gpg.sh" }, { "gpg.ssh.program", "./sign.sh" },
    { "alias.st", "!./run.sh" }, { "include.path", "../evil.cfg" },
    { "includeIf.gitdir:/.path", "../evil.cfg" }, { "uploadpack.packObjectsHook", "./p.sh" },
    { "remote.origin.uploadpack", "./up.sh" }, { "difftool.x.cmd", "./d.sh" },
    { "mergetool.x.cmd", "./m.sh" }, { "man.x.cmd", "./man.sh" }, { "web.browser", "x" },
    { "browser.x.cmd", "./b.sh" }, { "pager.log", "./pager.sh" },
    { "interactive.diffFilter", "./f.sh" }, { "sendemail.smtpServer", "/tmp/x.sh" },
    { "protocol.ext.allow", "always" }, { "init.templateDir", "./tpl" },
    { "hook.lint.command", "./lint.sh" },
}

-- One `git config KEY VALUE` per dangerous key, each one's status printed.
local function dangerous_script()
    local lines = { GIT_ENV }
    for _, kv in ipairs(DANGEROUS) do
        lines[#lines + 1] = ("git config %s %s; echo %s=$?"):format(h.quote(kv[1]), h.quote(kv[2]), h.quote(kv[1]))
    end
    return table.concat(lines, "\n")
end

local function check_refused(r, g)
    for _, kv in ipairs(DANGEROUS) do
        local key = kv[1]
        local line = "cordon: refused git setting " .. key .. " ("
        assert.truthy(r.stderr:find(line, 1, true), key .. "\n" .. h.describe(r))
        local status = r.stdout:match(key:gsub("%p", "%%%0") .. "=(%d+)")
        assert.truthy(status and status ~= "0", key .. " reported success\n" .. h.describe(r))
        assert.is_nil(host_get(g.config, key), key .. " reached the host")
    end
end

describe("cordon run: git settings inside the sandbox", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        assert(h.sh("git --version").code == 0, "git is not installed")
    end)
    after_each(h.cleanup)

    it("safe settings are recorded: config, remote add, push -u, checkout --track, submodule add", function()
        local g = repo()
        local r = ok(h.run_sh(safe_script(g), { workspace = g.ws, flags = { "--allow-write", g.bare } }))
        assert.truthy(r.stdout:find("all-done", 1, true), h.describe(r))
        check_safe(g)
        -- the push really went, and the submodule is there
        assert.truthy(h.sh_ok("git -C " .. h.quote(g.bare) .. " rev-parse main"):match("^%x+"))
        assert.are.equal("", h.sh_ok("test -d " .. h.quote(g.ws .. "/.git/modules/lib") .. " && echo -n"))
        -- still the same inode: the sandbox's read-only view of it was written in place
        assert.truthy(host_get(g.config, "core.bare"))
    end)

    it("code-running settings are refused by name, fail, and never reach the host", function()
        local g = repo()
        local before = h.read_file(g.config)
        local r = h.run_sh(dangerous_script(), { workspace = g.ws })
        check_refused(r, g)
        assert.are.equal(before, h.read_file(g.config))
    end)

    it("husky's install: core.hooksPath .husky is refused with its line", function()
        local g = repo()
        local r = h.run_sh("git config core.hooksPath .husky", { workspace = g.ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("cordon: refused git setting core.hooksPath (runs hooks from that folder)",
            1, true), h.describe(r))
        assert.is_nil(host_get(g.config, "core.hookspath"))
        -- and the run's result lists it, with the config it concerns
        r = h.cordon({ "run", "--json", "--", "git", "config", "core.hooksPath", ".husky" }, { cwd = g.ws })
        local res = h.last_json(r.stdout)
        assert.truthy(res and res.refusals and res.refusals[1], h.describe(r))
        assert.are.equal("protected", res.refusals[1].kind)
        assert.are.equal(g.config, res.refusals[1].path)
        assert.truthy(res.refusals[1].reason:find("core.hooksPath", 1, true), h.describe(r))
    end)

    it("the host's own code-running settings stay as they are, and cannot be changed inside", function()
        local g = repo()
        h.sh_ok("git config --file " .. h.quote(g.config) .. " core.hooksPath .githooks")
        ok(h.run_sh("git config user.name Kept", { workspace = g.ws }))
        assert.are.equal("Kept", host_get(g.config, "user.name"))
        assert.are.equal(".githooks", host_get(g.config, "core.hookspath"))
        local r = h.run_sh("git config core.hooksPath elsewhere", { workspace = g.ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("refused git setting core.hooksPath", 1, true), h.describe(r))
        assert.are.equal(".githooks", host_get(g.config, "core.hookspath"))
    end)

    it("a submodule's config in the workspace is judged the same way", function()
        local g = repo()
        ok(h.run_sh(GIT_ENV .. "git -c protocol.file.allow=always submodule add -q " .. h.quote(g.lib) .. " lib",
            { workspace = g.ws }))
        local sub = g.ws .. "/.git/modules/lib/config"
        ok(h.run_sh("git -C lib config user.name Sub", { workspace = g.ws }))
        assert.are.equal("Sub", host_get(sub, "user.name"))
        local r = h.run_sh("git -C lib config core.hooksPath x", { workspace = g.ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("refused git setting core.hooksPath", 1, true), h.describe(r))
        assert.is_nil(host_get(sub, "core.hookspath"))
    end)

    it("a config git creates (config.worktree) is judged before it exists", function()
        local g = repo()
        local wt = g.ws .. "/.git/config.worktree"
        ok(h.run_sh("git config extensions.worktreeConfig true", { workspace = g.ws }))
        local r = h.run_sh("git config --worktree core.hooksPath x", { workspace = g.ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("refused git setting core.hooksPath", 1, true), h.describe(r))
        assert.is_nil(h.read_file(wt), "config.worktree was created")
        ok(h.run_sh("git config --worktree user.name Here", { workspace = g.ws }))
        assert.are.equal("Here", host_get(wt, "user.name"))
    end)

    it("core.worktree outside the workspace is refused; a submodule's, inside it, is not", function()
        local g = repo()
        local r = h.run_sh("git config core.worktree /root", { workspace = g.ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("refused git setting core.worktree (points the work tree outside", 1, true),
            h.describe(r))
        assert.is_nil(host_get(g.config, "core.worktree"))
        ok(h.run_sh(GIT_ENV .. "git -c protocol.file.allow=always submodule add -q " .. h.quote(g.lib) .. " lib",
            { workspace = g.ws }))
        assert.are.equal("../../../lib", host_get(g.ws .. "/.git/modules/lib/config", "core.worktree"))
    end)

    it("other renames are the kernel's: mv works, a file moved onto .git/config does not", function()
        local g = repo()
        local r = h.run_sh("echo a > a && mv a b && cat b && printf '[core]\\n\\thooksPath = x\\n' > c && mv c .git/config",
            { workspace = g.ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("a", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("busy", 1, true), h.describe(r))
        assert.is_nil(host_get(g.config, "core.hookspath"))
    end)

    it("as an unprivileged user: safe settings are recorded, code-running ones refused", function()
        local g = repo(NOBODY)
        local home = h.secret_home(NOBODY)
        local o = { workspace = g.ws, uid = NOBODY, home = home, flags = { "--allow-write", g.bare } }
        local r = ok(h.run_sh(safe_script(g), o))
        assert.truthy(r.stdout:find("all-done", 1, true), h.describe(r))
        check_safe(g)
        r = h.run_sh(dangerous_script(), { workspace = g.ws, uid = NOBODY, home = home })
        check_refused(r, g)
    end)
end)

describe("cordon session: git settings inside the sandbox", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("cordon exec records safe settings and refuses code-running ones by name", function()
        local g = repo()
        local s = h.session_start("spec-git-" .. h.token(), { cwd = g.ws, flags = { "--allow-write", g.bare } })
        local function exec(script)
            return h.cordon({ "exec", s.name, "--", script }, { cwd = g.ws, env = s.env })
        end
        local r = ok(exec(safe_script(g)))
        assert.truthy(r.stdout:find("all-done", 1, true), h.describe(r))
        check_safe(g)
        r = exec(dangerous_script())
        check_refused(r, g)
        r = exec("git config core.hooksPath .husky")
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("cordon: refused git setting core.hooksPath (runs hooks from that folder)",
            1, true), h.describe(r))
    end)
end)
