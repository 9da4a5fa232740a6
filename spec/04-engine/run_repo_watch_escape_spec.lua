-- spec/04-engine/run_repo_watch_escape_spec.lua — every repository a command makes is held the
-- moment it appears, wherever it lies, bare or not, so that nothing it plants makes the
-- person's next git command on the host run a program:
--   - a repository ten levels deep in node_modules, its core.fsmonitor set and staged as a
--     gitlink: the host's `git status` of the superproject runs the submodule's fsmonitor;
--   - a command re-planting .git/commondir (naming a common dir whose config sets
--     core.fsmonitor) in a loop while the host runs `git status` again and again;
--   - a bare repository made in the workspace, given a pre-receive hook: the host's `git push`
--     to it runs the hook;
--   - a bare repository and one in node_modules that were there before the command, given hooks
--     at once, before the watcher reports them: not taken for the person's;
--   - a repository made by hand, its config written before there is a repository to hold, with
--     an alias without '!' that sets core.fsmonitor: the host's `git st` there runs it (the
--     guard comments the alias out after the command, by the allowlist of settings).
-- Each is first shown to get out without cordon (the host's git creates ROOT/MARK), then under
-- cordon, as root and as uid 65534, the host's git runs nothing, and the plant is refused inside
-- (Read-only file system). The command waits (bounded) until the watcher holds what it will
-- attack, read from its own /proc/self/mountinfo: what is asserted is the refusal, not a race.
-- Drives the built binary ($CORDON_BIN); no network.
local h = require("spec.helpers")

local NOBODY = 65534

local GIT_ENV = "export GIT_AUTHOR_NAME=spec GIT_AUTHOR_EMAIL=spec@example.com "
    .. "GIT_COMMITTER_NAME=spec GIT_COMMITTER_EMAIL=spec@example.com GIT_CONFIG_NOSYSTEM=1 "
    .. "GIT_CONFIG_GLOBAL=/dev/null; "

local DEEP = "node_modules/a/node_modules/b/node_modules/c/node_modules/d/node_modules/x"

local function exists(path)
    return h.sh("test -e " .. h.quote(path)).code == 0
end

-- Shell run as uid (nil: root) on the host, the person's way.
local function as(uid, script)
    local pre = uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid) or ""
    return pre .. "env HOME=/nonexistent bash -c " .. h.quote(GIT_ENV .. script)
end

-- Shell: inside the sandbox, wait (at most 10 s) until PATH (absolute) is held read-only.
local function held(path)
    return "{ [ -z \"$CORDON_SANDBOX\" ] || for i in $(seq 200); do grep -q \" " .. path
        .. " ro,\" /proc/self/mountinfo && break; sleep 0.05; done; }; "
end

-- A root (owned by uid) holding ws, a committed repository, and evil.sh, which makes MARK.
local function tree(uid)
    local root = h.tmpdir()
    local ws = root .. "/ws"
    h.sh_ok("mkdir -p " .. h.quote(ws) .. " && printf '#!/bin/sh\\ntouch " .. root .. "/MARK\\n' > "
        .. h.quote(root .. "/evil.sh") .. " && chmod 755 " .. h.quote(root .. "/evil.sh"))
    h.sh_ok(as(nil, "cd " .. h.quote(ws) .. " && git init -q -b main && git commit -q --allow-empty -m one"))
    if uid then h.sh_ok(("chmod 755 %s && chown -R %d:%d %s"):format(h.quote(root), uid, uid, h.quote(root))) end
    return root, ws
end

local function run(ws, uid, script, extra)
    local opts = { workspace = ws, cwd = ws, uid = uid }
    if uid then opts.home = h.secret_home(uid) end
    for k, v in pairs(extra or {}) do opts[k] = v end
    return h.run_sh(GIT_ENV .. script, opts)
end

local CASES = {
    {
        name = "a repository ten levels deep in node_modules, core.fsmonitor set, staged as a gitlink",
        attack = function(root)
            return "d=" .. DEEP .. "; mkdir -p $d && git -C $d init -q -b main && "
                .. held("$PWD/$d/.git/config")
                .. "git -C $d commit -q --allow-empty -m x; "
                .. "printf '[core]\\n\\tfsmonitor = " .. root .. "/evil.sh\\n' >> $d/.git/config; "
                .. "git add $d 2>/dev/null; true"
        end,
        refused = DEEP .. "/.git/config: Read-only file system",
        host = "git status",
    },
    {
        name = "a bare repository made in the workspace, given a pre-receive hook",
        attack = function(root)
            return "git init -q --bare .cache-pack && " .. held("$PWD/.cache-pack/hooks")
                .. "printf '#!/bin/sh\\n" .. root .. "/evil.sh\\n' > .cache-pack/hooks/pre-receive; "
                .. "chmod +x .cache-pack/hooks/pre-receive; true"
        end,
        refused = ".cache-pack/hooks/pre-receive: Read-only file system",
        host = "git push -q ./.cache-pack main",
    },
    {
        -- made by hand, config first: no repository yet to hold while it is written, so the
        -- guard judges it after the command as git_publish judges a setting, by the allowlist
        name = "a repository made by hand whose config has an alias without '!' setting core.fsmonitor",
        attack = function(root)
            return "d=" .. DEEP .. "/.git; mkdir -p $d && printf '[core]\n\trepositoryformatversion = 0\n"
                .. "\tbare = false\n[alias]\n\tst = -c core.fsmonitor=" .. root .. "/evil.sh status\n' > "
                .. "$d/config && echo 'ref: refs/heads/main' > $d/HEAD && mkdir -p $d/refs/heads $d/objects"
        end,
        refused = "alias.st=-c core.fsmonitor=",
        host = "cd " .. DEEP .. " && git st",
    },
}

for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
    describe("escape (" .. who.name .. "): a repository held the moment it appears", function()
        lazy_setup(function()
            assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        end)
        after_each(h.cleanup)

        for _, c in ipairs(CASES) do
            it(c.name, function()
                -- without cordon: the host's git runs the command's program
                local root, ws = tree(who.uid)
                h.sh(as(who.uid, "cd " .. h.quote(ws) .. " && { " .. c.attack(root) .. "; } >/dev/null 2>&1"))
                h.sh(as(who.uid, "cd " .. h.quote(ws) .. " && { " .. c.host .. "; } >/dev/null 2>&1"))
                assert.is_true(exists(root .. "/MARK"), "the attempt does not work even without cordon")

                root, ws = tree(who.uid)
                local r = run(ws, who.uid, c.attack(root))
                assert.are.equal(0, r.code, h.describe(r))
                assert.truthy(r.stderr:find(c.refused, 1, true), h.describe(r))
                h.sh(as(who.uid, "cd " .. h.quote(ws) .. " && { " .. c.host .. "; } >/dev/null 2>&1"))
                assert.is_false(exists(root .. "/MARK"), "the host's git ran the command's program\n"
                    .. h.describe(r))
                assert.is_nil(r.stderr:find("looked for repositories", 1, true), h.describe(r))
            end)
        end

        -- Repositories that were there before the command, which the watcher reports a moment
        -- after it starts (a bare one, one in node_modules): a hook the command plants at once,
        -- before the hold, is not taken for the person's (held first, or undone after: a file
        -- changed since the sandbox started is never the reference, git_guard_add_repo). 22,500
        -- folders beside them keep the watcher's first walk busy for a while; three runs each,
        -- as either order must leave the host's git running nothing.
        it("a hook planted at once in a bare repository and a node_modules one that were there", function()
            local pre = function(ws)
                h.sh_ok(as(who.uid, "cd " .. h.quote(ws) .. " && mkdir -p big/{1..150}/{1..150} && "
                    .. "git init -q --bare b.git && mkdir -p "
                    .. DEEP .. " && git -C " .. DEEP .. " init -q -b main && git -C " .. DEEP
                    .. " commit -q --allow-empty -m one"))
            end
            local attack = function(root)
                local hook = "printf '#!/bin/sh\\n" .. root .. "/evil.sh\\n'"
                return hook .. " > b.git/hooks/pre-receive; chmod +x b.git/hooks/pre-receive; "
                    .. hook .. " > " .. DEEP .. "/.git/hooks/pre-commit; chmod +x " .. DEEP
                    .. "/.git/hooks/pre-commit; true"
            end
            local host = "git push -q ./b.git main; git -C " .. DEEP .. " commit -q --allow-empty -m two"
            local root, ws = tree(who.uid)
            pre(ws)
            h.sh(as(who.uid, "cd " .. h.quote(ws) .. " && { " .. attack(root) .. "; } >/dev/null 2>&1"))
            h.sh(as(who.uid, "cd " .. h.quote(ws) .. " && { " .. host .. "; } >/dev/null 2>&1"))
            assert.is_true(exists(root .. "/MARK"), "the attempt does not work even without cordon")
            for _ = 1, 3 do
                root, ws = tree(who.uid)
                pre(ws)
                local r = run(ws, who.uid, attack(root) .. " 2>/dev/null")
                assert.are.equal(0, r.code, h.describe(r))
                h.sh(as(who.uid, "cd " .. h.quote(ws) .. " && { " .. host .. "; } >/dev/null 2>&1"))
                assert.is_false(exists(root .. "/MARK"), "the host's git ran the command's program\n"
                    .. h.describe(r))
            end
        end)

        -- The first plant of a new name cannot be refused (it was not there to be held): it is
        -- renamed away while the command runs and an empty stand-in held in its place. What is
        -- shown is that every plant after it is refused inside, and that the host's git, run
        -- again and again meanwhile and after, runs nothing. The common dir named lies outside
        -- the workspace (a folder of the person's, say), where the command cannot defuse it.
        it("a command re-planting .git/commondir in a loop while the host runs git status", function()
            local attack = function(root)
                return "echo " .. root .. "/evilc > .git/commondir; [ -z \"$CORDON_SANDBOX\" ] || "
                    .. "for i in $(seq 200); do test -s .git/commondir || break; sleep 0.05; done; "
                    .. "touch .first-taken; n=0; for i in $(seq 100); do echo " .. root .. "/evilc > "
                    .. ".git/commondir 2>/dev/null || n=$((n+1)); sleep 0.02; done; touch .attack-done; "
                    .. "echo \"refused $n\""
            end
            -- the host's git status, over and over (bounded) while the command plants
            local host_loop = function(root, ws)
                return "( cd " .. h.quote(ws) .. " && for i in $(seq 200); do test -e .first-taken && break; "
                    .. "sleep 0.05; done; for i in $(seq 400); do " .. as(who.uid, "git status")
                    .. " >/dev/null 2>&1; test -e .attack-done && break; sleep 0.02; done; touch "
                    .. h.quote(root .. "/loop-done") .. " ) & "
            end
            local common = function(root)
                h.sh_ok("mkdir -p " .. h.quote(root .. "/evilc/objects") .. " " .. h.quote(root .. "/evilc/refs")
                    .. " && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = " .. root
                    .. "/evil.sh\\n' > " .. h.quote(root .. "/evilc/config"))
            end
            -- without cordon
            local root, ws = tree(who.uid)
            common(root)
            h.sh(host_loop(root, ws) .. as(who.uid, "cd " .. h.quote(ws) .. " && " .. attack(root))
                .. " >/dev/null 2>&1; wait")
            assert.is_true(exists(root .. "/MARK"), "the attempt does not work even without cordon")

            root, ws = tree(who.uid)
            common(root)
            local r = run(ws, who.uid, attack(root), { prefix = host_loop(root, ws) })
            assert.is_true(h.wait_for(function() return exists(root .. "/loop-done") end, 30))
            assert.are.equal(0, r.code, h.describe(r))
            assert.truthy(r.stdout:find("refused 100", 1, true), "a plant got through\n" .. h.describe(r))
            -- The first plant's line (the stand-in's own words, or a pointer restored when a check
            -- woken by the watcher saw it first) is not asserted: under the sanitizer build it was
            -- not said at all once, though the stand-in held (issue notes). What is asserted is
            -- what keeps the host safe: every later plant refused, the host's git ran nothing.
            h.sh(as(who.uid, "cd " .. h.quote(ws) .. " && git status >/dev/null 2>&1"))
            assert.is_false(exists(root .. "/MARK"), "the host's git ran the command's program\n"
                .. h.describe(r))
            assert.is_false(exists(ws .. "/.git/commondir"))
        end)
    end)
end
