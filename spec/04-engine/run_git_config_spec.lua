-- spec/04-engine/run_git_config_spec.lua — git settings made inside the sandbox (docs/git.md,
-- "Settings"): the protected .git/config is read-only in the sandbox, yet `git config`, `git
-- remote add`, `git push -u`, `git checkout -b --track`, `git submodule add`, `git init` and
-- `git clone` record what they say they record, read back outside with git. Only settings on
-- the allowlist are written, each value judged (a remote URL is a network URL or a local path
-- outside every writable area); every other key is refused with one line naming it, the command
-- fails, and nothing of it reaches the host's file. The attacks of issue 26 (a pushurl into a
-- bare repository the command made, an alias without '!', http.cookieFile with insteadOf,
-- http.proxy with sslVerify off, core.worktree onto a folder later swapped for a link) are each
-- first shown to get out with the same setting made outside (plain `git config` on the host),
-- then refused inside, with the person's next git command run on the host as they would run it.
-- Real git, a repository in a fresh workspace (bare remote and submodule source beside it),
-- checks made on the host afterwards with `git config --file` (no safe.directory question for
-- another uid's repository). Servers only on 127.0.0.2.
-- Drives the built binary ($CORDON_BIN); runs as root and as uid 65534, one case in a session.
local h = require("spec.helpers")

local NOBODY = 65534

local GIT_ENV = "export GIT_AUTHOR_NAME=spec GIT_AUTHOR_EMAIL=spec@example.com "
    .. "GIT_COMMITTER_NAME=spec GIT_COMMITTER_EMAIL=spec@example.com GIT_CONFIG_NOSYSTEM=1; "

local ok = h.ok

-- A workspace holding a repository with one commit on main (a tracked file f), a bare
-- repository and a submodule source beside it (in the workspace's parent), a folder the marker
-- programs may write (marks) and one outside the workspace the person owns (out). The bare
-- repository is the person's remote "origin", set on the host. With uid, all of it is that uid's.
local function repo(uid)
    local ws, parent = h.workspace(nil, uid)
    local g = { ws = ws, parent = parent, bare = parent .. "/remote.git", lib = parent .. "/lib",
        config = ws .. "/.git/config", uid = uid, marks = parent .. "/marks", out = parent .. "/out" }
    -- (git on the host, as root, in another uid's workspace: no safe.directory question)
    local host_env = GIT_ENV .. "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'; "
    h.sh_ok(host_env .. "git init -q -b main " .. h.quote(ws) .. " && echo tracked > " .. h.quote(ws .. "/f")
        .. " && git -C " .. h.quote(ws) .. " add f && git -C " .. h.quote(ws)
        .. " commit -q -m one && git init -q --bare -b main " .. h.quote(g.bare)
        .. " && git -C " .. h.quote(ws) .. " remote add origin " .. h.quote(g.bare)
        .. " && git init -q -b main " .. h.quote(g.lib) .. " && git -C " .. h.quote(g.lib)
        .. " commit -q --allow-empty -m lib && mkdir -m 777 " .. h.quote(g.marks)
        .. " && mkdir " .. h.quote(g.out))
    if uid then
        h.sh_ok(("chown -R %d:%d %s %s %s %s"):format(uid, uid, h.quote(ws), h.quote(g.bare), h.quote(g.lib),
            h.quote(g.out)))
        g.home = h.secret_home(uid)
    end
    return g
end

-- `cordon run` of a bash script in g's workspace, as g's uid.
local function run(g, script, flags)
    return h.run_sh(GIT_ENV .. script, { workspace = g.ws, uid = g.uid, home = g.home, flags = flags })
end

-- git run on the host in the workspace as the person would (g's uid), with no global or system
-- settings and no proxy of the spec's environment.
local function host_git(g, args)
    local who = g.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(g.uid, g.uid) or ""
    return h.sh(who .. "env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY "
        .. "-u all_proxy -u no_proxy -u NO_PROXY HOME=" .. h.quote(g.parent)
        .. " GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 "
        .. "GIT_AUTHOR_NAME=p GIT_AUTHOR_EMAIL=p@example.com GIT_COMMITTER_NAME=p "
        .. "GIT_COMMITTER_EMAIL=p@example.com timeout 30 git -C " .. h.quote(g.ws) .. " " .. args)
end

local function exists(path)
    return h.sh("test -e " .. h.quote(path)).code == 0
end

-- The value of key in the host's file (nil when absent; several values joined by newlines).
local function host_get(file, key)
    local r = h.sh("git config --file " .. h.quote(file) .. " --get-all " .. h.quote(key))
    if r.code ~= 0 then return nil end
    return h.chomp(r.stdout)
end

-- The safe settings a coding agent makes, the way its tools make them: identity, a network
-- remote, the upstream of a push to the person's own remote (a local path outside the
-- workspace, made writable), a tracking branch, a submodule from outside the workspace, line
-- endings and pull/push defaults, a repository git init makes and one git clone makes.
local function safe_script(g)
    return GIT_ENV .. ([[
set -e
git config user.name "Sandbox Person"
git config user.email sandbox@example.com
git remote add team https://example.com/team/app.git
git config remote.team.pushurl git@example.com:team/app.git
git push -q -u origin main
git checkout -q -b x --track main
git branch y && git branch -q --set-upstream-to=origin/main y
git -c protocol.file.allow=always submodule add -q %s lib
git config core.autocrlf input
git config pull.rebase true
git config push.default simple
git config push.autoSetupRemote true
git config init.defaultBranch trunk
git init -q fresh
git -C fresh config user.name Fresh
git init -q --object-format=sha256 fresh256
git -c protocol.file.allow=always clone -q %s cloned
git -C cloned config branch.main.rebase true
git -C cloned sparse-checkout set --cone docs
echo all-done
]]):format(h.quote(g.lib), h.quote(g.lib))
end

local function check_safe(g)
    local want = {
        ["user.name"] = "Sandbox Person", ["user.email"] = "sandbox@example.com",
        ["remote.team.url"] = "https://example.com/team/app.git",
        ["remote.team.pushurl"] = "git@example.com:team/app.git",
        ["remote.team.fetch"] = "+refs/heads/*:refs/remotes/team/*",
        ["remote.origin.url"] = g.bare,
        ["branch.main.remote"] = "origin", ["branch.main.merge"] = "refs/heads/main",
        ["branch.x.remote"] = ".", ["branch.x.merge"] = "refs/heads/main",
        ["branch.y.remote"] = "origin", ["branch.y.merge"] = "refs/heads/main",
        ["submodule.lib.url"] = g.lib, ["submodule.lib.active"] = "true",
        ["core.autocrlf"] = "input", ["pull.rebase"] = "true", ["push.default"] = "simple",
        ["push.autosetupremote"] = "true", ["init.defaultbranch"] = "trunk",
    }
    for key, value in pairs(want) do
        assert.are.equal(value, host_get(g.config, key), key)
    end
    assert.are.equal("Fresh", host_get(g.ws .. "/fresh/.git/config", "user.name"))
    assert.are.equal("false", host_get(g.ws .. "/fresh/.git/config", "core.bare"))
    assert.are.equal(g.lib, host_get(g.ws .. "/cloned/.git/config", "remote.origin.url"))
    assert.are.equal("true", host_get(g.ws .. "/cloned/.git/config", "branch.main.rebase"))
    assert.are.equal("sha256", host_get(g.ws .. "/fresh256/.git/config", "extensions.objectformat"))
    assert.are.equal("true", host_get(g.ws .. "/cloned/.git/config.worktree", "core.sparsecheckout"))
    assert.are.equal("../../../lib", host_get(g.ws .. "/.git/modules/lib/config", "core.worktree"))
end

-- Settings refused: { key as the line spells it, a value }. Code-running keys, then keys off
-- the allowlist (every alias, http.*, url.*, core.worktree of a repository that is not a
-- submodule's, a key git does not know yet), then listed keys with a value they do not take
-- (a transport helper, a local path into the workspace, an update command).
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
    { "alias.co", "-c core.fsmonitor=./w.sh status" }, { "alias.f", "fetch --upload-pack=./u.sh" },
    { "alias.g", "grep --open-files-in-pager=./p.sh x" },
    { "http.cookieFile", "/root/.bash_aliases" }, { "http.saveCookies", "true" },
    { "http.proxy", "http://127.0.0.2:3128" }, { "http.sslVerify", "false" },
    { "http.sslCAInfo", "./ca.pem" }, { "url.https://example.com/.insteadOf", "https://github.com/" },
    { "core.worktree", "../sub" }, { "core.fsmonitor", "false" }, { "core.excludesFile", "./x" },
    { "protocol.file.allow", "always" }, { "gc.auto", "0" }, { "safe.directory", "*" },
    { "someday.newkey", "x" },
    { "remote.z.url", "ext::sh -c touch% x" }, { "remote.z.pushurl", "fd::7" },
    { "remote.y.url", "./.cache-pack" }, { "branch.main.remote", "evil.git" },
    { "submodule.lib.update", "!sh -c x" }, { "core.bare", "maybe" },
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
        -- and how to make it outside
        assert.truthy(r.stderr:find("run outside the sandbox: git config --file " .. g.config .. " " .. key .. " ",
            1, true), key .. "\n" .. h.describe(r))
        local status = r.stdout:match(key:gsub("%p", "%%%0") .. "=(%d+)")
        assert.truthy(status and status ~= "0", key .. " reported success\n" .. h.describe(r))
        -- (core.bare and branch.main.remote are there already, with values of their own)
        assert.are_not.equal(kv[2], host_get(g.config, key), key .. " reached the host")
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

    it("core.worktree is refused but for a submodule's, inside its tree", function()
        local g = repo()
        local r = h.run_sh("git config core.worktree /root", { workspace = g.ws })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("refused git setting core.worktree (moves the work tree of a repository "
            .. "that is not a submodule's)", 1, true), h.describe(r))
        assert.is_nil(host_get(g.config, "core.worktree"))
        ok(h.run_sh(GIT_ENV .. "git -c protocol.file.allow=always submodule add -q " .. h.quote(g.lib) .. " lib",
            { workspace = g.ws }))
        local sub = g.ws .. "/.git/modules/lib/config"
        assert.are.equal("../../../lib", host_get(sub, "core.worktree"))
        -- a submodule's, moved outside its tree or through a link, is not
        r = h.run_sh("git -C lib config core.worktree ../../../../elsewhere", { workspace = g.ws })
        assert.truthy(r.stderr:find("refused git setting core.worktree (points the work tree outside", 1, true),
            h.describe(r))
        r = h.run_sh("ln -s " .. h.quote(g.out) .. " link && git -C lib config core.worktree ../../../link/x",
            { workspace = g.ws })
        assert.truthy(r.stderr:find("refused git setting core.worktree (a work tree whose way on the host passes "
            .. "a link)", 1, true), h.describe(r))
        assert.are.equal("../../../lib", host_get(sub, "core.worktree"))
    end)

    it("remote URLs are judged where the host's git would open them", function()
        local g = repo()
        local writable = g.parent .. "/writable"
        h.sh_ok("mkdir " .. h.quote(writable) .. " && ln -s " .. h.quote(g.ws) .. " " .. h.quote(g.parent .. "/link"))
        local r = run(g, ([[
git remote add outside %s; echo outside=$?
git remote add file file://%s; echo file=$?
git remote add ws "$PWD/.cache-pack"; echo ws=$?
git remote add rel ../ws/.cache-pack; echo rel=$?
git remote add filews "file://$PWD/.cache-pack"; echo filews=$?
git remote add writable %s/pack.git; echo writable=$?
git remote add link %s/link/.cache-pack; echo link=$?
git remote add ext 'ext::sh -c touch%% x'; echo ext=$?
git remote add scp git@example.com:team/app.git; echo scp=$?
git remote add layer %s/.local/state/cordon/homes/any/upper/evil.git; echo layer=$?
]]):format(h.quote(g.lib), h.quote(g.lib), h.quote(writable), h.quote(g.parent), h.quote(h.home())),
            { "--allow-write", writable })
        for name, want in pairs({ outside = "0", file = "0", scp = "0" }) do
            assert.are.equal(want, r.stdout:match(name .. "=(%d+)"), name .. "\n" .. h.describe(r))
        end
        assert.are.equal(g.lib, host_get(g.config, "remote.outside.url"))
        assert.are.equal("file://" .. g.lib, host_get(g.config, "remote.file.url"))
        for _, name in ipairs({ "ws", "rel", "filews", "writable", "link", "layer" }) do
            assert.truthy(r.stderr:find("refused git setting remote." .. name .. ".url (a local path the sandbox "
                .. "writes", 1, true), name .. "\n" .. h.describe(r))
            assert.are_not.equal("0", r.stdout:match(name .. "=(%d+)"), name .. "\n" .. h.describe(r))
            assert.is_nil(host_get(g.config, "remote." .. name .. ".url"), name)
        end
        assert.truthy(r.stderr:find("refused git setting remote.ext.url (names a transport helper", 1, true),
            h.describe(r))
        assert.is_nil(host_get(g.config, "remote.ext.url"))
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

-- Shell code run on the host in the workspace as the person would (g's uid): host_git's
-- environment, for planting what the command would plant when the protection is shown off.
local function host_sh(g, script)
    local who = g.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(g.uid, g.uid) or ""
    return h.sh(who .. "env HOME=" .. h.quote(g.parent) .. " sh -c " .. h.quote("cd " .. h.quote(g.ws) .. " && " .. script))
end

-- A program that leaves mark when run.
local function plant(path, mark)
    return ("printf '#!/bin/sh\\ntouch %s\\n' > %s && chmod +x %s"):format(mark, path, path)
end

-- The bait server on 127.0.0.2 (spec/fixtures/engine/git_http_bait.py): { port, log }.
local function bait()
    local dir = h.tmpdir()
    local ready, log = dir .. "/ready", dir .. "/log"
    h.spawn(("%s %s %s %s"):format(h.python, h.quote(h.fixtures .. "/engine/git_http_bait.py"), h.quote(ready),
        h.quote(log)))
    local port = h.wait_for(function() return h.read_file(ready) end, 10)
    assert(port and port:match("^%d+$"), "the bait server did not start")
    return { port = tonumber(port), log = log }
end

local function refused_line(r, key)
    assert.truthy(r.stderr:find("cordon: refused git setting " .. key .. " (", 1, true), key .. "\n" .. h.describe(r))
end

for _, who in ipairs({ { name = "as root" }, { name = "as uid 65534", uid = NOBODY } }) do
    describe("cordon run " .. who.name .. ": settings that got out are refused", function()
        lazy_setup(function()
            assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        end)
        after_each(h.cleanup)

        it("a pushurl into a bare repository the command made: the person's push runs none of its hooks",
            function()
            local g = repo(who.uid)
            local mark = g.marks .. "/pre-receive-ran"
            local make = "git init -q --bare .cache-pack && " .. plant(".cache-pack/hooks/pre-receive", mark)
            -- without cordon: the same setting made outside, and the person's push runs the hook
            assert.are.equal(0, host_sh(g, make).code)
            assert.are.equal(0, host_git(g, "config remote.origin.pushurl " .. h.quote(g.ws .. "/.cache-pack")).code)
            local r = host_git(g, "push -q origin main")
            assert.is_true(exists(mark), "the planted hook did not run without cordon\n" .. h.describe(r))
            h.sh_ok("rm -rf " .. h.quote(mark) .. " " .. h.quote(g.ws .. "/.cache-pack"))
            assert.are.equal(0, host_git(g, "config --unset remote.origin.pushurl").code)
            -- inside: refused by name; the host's file has no pushurl (the bare repository's
            -- hooks are held read-only the moment it appears, so the plant may fail first: the
            -- setting is asked for whatever became of it)
            r = run(g, make .. '; git config remote.origin.pushurl "$PWD/.cache-pack"; echo status=$?')
            refused_line(r, "remote.origin.pushurl")
            assert.truthy(r.stderr:find("a local path the sandbox writes", 1, true), h.describe(r))
            assert.are_not.equal("0", r.stdout:match("status=(%d+)"), h.describe(r))
            assert.is_nil(host_get(g.config, "remote.origin.pushurl"))
            -- the person's push, with the hook planted again whatever the run left of it
            assert.are.equal(0, host_sh(g, "rm -rf .cache-pack && " .. make).code)
            r = host_git(g, "push -q origin HEAD:refs/heads/after")
            assert.are.equal(0, r.code, h.describe(r))
            assert.is_false(exists(mark), "the planted pre-receive hook ran on the host")
        end)

        it("an alias without '!' that sets core.fsmonitor: the person's git st runs nothing", function()
            local g = repo(who.uid)
            local mark = g.marks .. "/fsmonitor-ran"
            local alias = "-c core.fsmonitor=" .. g.ws .. "/.watch.sh status"
            assert.are.equal(0, host_sh(g, plant(".watch.sh", mark)).code)
            -- without cordon
            assert.are.equal(0, host_git(g, "config alias.st " .. h.quote(alias)).code)
            local r = host_git(g, "st")
            assert.is_true(exists(mark), "the alias ran no fsmonitor without cordon\n" .. h.describe(r))
            h.sh_ok("rm -f " .. h.quote(mark))
            assert.are.equal(0, host_git(g, "config --unset alias.st").code)
            -- inside
            r = run(g, "git config alias.st " .. h.quote(alias) .. "; echo status=$?; "
                .. "git config alias.f 'fetch --upload-pack=./.watch.sh'; "
                .. "git config alias.x 'grep -O./.watch.sh x'")
            refused_line(r, "alias.st")
            refused_line(r, "alias.f")
            refused_line(r, "alias.x")
            assert.are_not.equal("0", r.stdout:match("status=(%d+)"), h.describe(r))
            assert.is_nil(host_get(g.config, "alias.st"))
            host_git(g, "st")
            host_git(g, "status")
            assert.is_false(exists(mark), "an fsmonitor the command chose ran on the host")
        end)

        it("http.cookieFile, saveCookies and insteadOf: the person's fetch writes no file the shell reads",
            function()
            local g = repo(who.uid)
            local b = bait()
            local aliases = g.out .. "/.bash_aliases"
            local url = "https://127.0.0.3:1/team/app.git"
            local sets = {
                { "http.cookieFile", aliases }, { "http.saveCookies", "true" },
                { "url.http://127.0.0.2:" .. b.port .. "/.insteadOf", "https://127.0.0.3:1/" },
            }
            assert.are.equal(0, host_git(g, "remote add gh " .. url).code)
            -- without cordon: the server's cookie lands in the file
            for _, kv in ipairs(sets) do assert.are.equal(0, host_git(g, "config " .. h.quote(kv[1]) .. " " .. h.quote(kv[2])).code) end
            local r = host_git(g, "fetch -q gh")
            assert.truthy((h.read_file(aliases) or ""):find("planted", 1, true),
                "no cookie file without cordon\n" .. h.describe(r))
            for _, kv in ipairs(sets) do assert.are.equal(0, host_git(g, "config --unset " .. h.quote(kv[1])).code) end
            h.sh_ok("rm -f " .. h.quote(aliases) .. " " .. h.quote(b.log))
            -- inside
            local script = {}
            for _, kv in ipairs(sets) do script[#script + 1] = "git config " .. h.quote(kv[1]) .. " " .. h.quote(kv[2]) end
            r = run(g, table.concat(script, "; "))
            refused_line(r, "http.cookieFile")
            refused_line(r, "http.saveCookies")
            refused_line(r, "url.http://127.0.0.2:" .. b.port .. "/.insteadOf")
            host_git(g, "fetch -q gh")
            assert.is_nil(h.read_file(aliases), "the host's fetch wrote the cookie file")
            assert.is_nil(h.read_file(b.log), "the host's fetch reached the command's server")
        end)

        it("http.proxy and http.sslVerify: the person's fetch goes through no proxy of the command's", function()
            local g = repo(who.uid)
            local b = bait()
            local sets = { { "http.proxy", "http://127.0.0.2:" .. b.port }, { "http.sslVerify", "false" } }
            assert.are.equal(0, host_git(g, "remote add p https://127.0.0.3:1/team/app.git").code)
            -- without cordon: the fetch asks the command's proxy for a tunnel
            for _, kv in ipairs(sets) do assert.are.equal(0, host_git(g, "config " .. h.quote(kv[1]) .. " " .. h.quote(kv[2])).code) end
            local r = host_git(g, "fetch -q p")
            assert.truthy((h.read_file(b.log) or ""):find("CONNECT 127.0.0.3:1", 1, true),
                "the proxy was not used without cordon\n" .. h.describe(r))
            for _, kv in ipairs(sets) do assert.are.equal(0, host_git(g, "config --unset " .. h.quote(kv[1])).code) end
            h.sh_ok("rm -f " .. h.quote(b.log))
            -- inside
            r = run(g, "git config http.proxy http://127.0.0.2:" .. b.port .. "; git config http.sslVerify false; "
                .. "echo x > ca.pem; git config http.sslCAInfo \"$PWD/ca.pem\"")
            refused_line(r, "http.proxy")
            refused_line(r, "http.sslVerify")
            refused_line(r, "http.sslCAInfo")
            host_git(g, "fetch -q p")
            assert.is_nil(h.read_file(b.log), "the host's fetch went through the command's proxy")
        end)

        it("removing the url of the remote a branch pushes to: the person's push runs no planted hook", function()
            local g = repo(who.uid)
            local mark = g.marks .. "/pre-receive-ran"
            local make = "git init -q --bare origin && " .. plant("origin/hooks/pre-receive", mark)
            assert.are.equal(0, host_git(g, "push -q -u origin main").code)
            -- without cordon: git reads the branch's remote "origin" as the path ./origin
            assert.are.equal(0, host_sh(g, make).code)
            assert.are.equal(0, host_git(g, "config --unset remote.origin.url").code)
            local r = host_git(g, "push -q")
            assert.is_true(exists(mark), "the planted hook did not run without cordon\n" .. h.describe(r))
            h.sh_ok("rm -rf " .. h.quote(mark) .. " " .. h.quote(g.ws .. "/origin"))
            assert.are.equal(0, host_git(g, "config remote.origin.url " .. h.quote(g.bare)).code)
            -- inside: refused, naming the branch's setting; other removals are written
            assert.are.equal(0, host_git(g, "config alias.st status").code)
            r = run(g, make .. "; git config --unset remote.origin.url; echo status=$?; git config --unset alias.st")
            refused_line(r, "branch.main.remote")
            assert.truthy(r.stderr:find("run the same git command outside the sandbox", 1, true), h.describe(r))
            assert.are_not.equal("0", r.stdout:match("status=(%d+)"), h.describe(r))
            assert.are.equal(g.bare, host_get(g.config, "remote.origin.url"))
            assert.is_nil(host_get(g.config, "alias.st"), "a removal was not written")
            assert.are.equal(0, host_sh(g, "rm -rf origin && " .. make).code)
            r = host_git(g, "push -q origin HEAD:refs/heads/after")
            assert.are.equal(0, r.code, h.describe(r))
            assert.is_false(exists(mark), "the planted pre-receive hook ran on the host")
        end)

        it("core.worktree onto a folder later swapped for a link: the person's checkout writes inside", function()
            local g = repo(who.uid)
            local escaped = g.out .. "/f"
            local swap = "rm -rf sub && ln -s " .. h.quote(g.out) .. " sub"
            -- without cordon: the checkout writes the tracked file through the link
            assert.are.equal(0, host_git(g, "config core.worktree ../sub").code)
            assert.are.equal(0, host_sh(g, swap).code)
            local r = host_git(g, "checkout -- .")
            assert.is_true(exists(escaped), "the checkout wrote nothing outside without cordon\n" .. h.describe(r))
            assert.are.equal(0, host_git(g, "config --unset core.worktree").code)
            h.sh_ok("rm -f " .. h.quote(escaped) .. " " .. h.quote(g.ws .. "/sub"))
            -- inside
            r = run(g, "mkdir sub && git config core.worktree ../sub; echo status=$?; " .. swap)
            refused_line(r, "core.worktree")
            assert.are_not.equal("0", r.stdout:match("status=(%d+)"), h.describe(r))
            assert.is_nil(host_get(g.config, "core.worktree"))
            h.sh_ok("rm -f " .. h.quote(g.ws .. "/f"))
            r = host_git(g, "checkout -- .")
            assert.are.equal(0, r.code, h.describe(r))
            assert.is_false(exists(escaped), "the host's checkout wrote outside the workspace")
            assert.is_true(exists(g.ws .. "/f"))
        end)
    end)
end

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
