-- spec/04-engine/session_fresh_hold_spec.lua — in a session started with --session-exec=false,
-- where each exec runs in a fresh sandbox of its own, a repository that appears while the exec
-- runs is held inside that sandbox as in `cordon run` (the watcher's holds are made in the
-- session init's mount namespace, of which each fresh sandbox's is a slave):
--   an exec makes a repository, waits (bounded) until its hooks folder is held in its own
--   /proc/self/mountinfo, then plants a pre-commit hook 50 times while the spec's host shell
--   runs `git commit` there again and again: every plant is refused inside, and the host's git
--   runs nothing of the command's (without cordon it does, shown first).
-- As root and as uid 65534. Drives the built binary ($CORDON_BIN); no network.
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

-- The command: a repository made, its hooks waited for (10 s at most; exit 3 when never held),
-- then 50 plants; prints "refused N" and touches .attack-done.
local function attack(root)
    return GIT_ENV .. "git init -q -b main sub && git -C sub commit -q --allow-empty -m one && "
        .. "{ [ -z \"$CORDON_SANDBOX\" ] || { for i in $(seq 200); do grep -q \" $PWD/sub/.git/hooks ro,\" "
        .. "/proc/self/mountinfo && break; sleep 0.05; done; grep -q \" $PWD/sub/.git/hooks ro,\" "
        .. "/proc/self/mountinfo || { echo never held >&2; touch .attack-done; exit 3; }; }; }; "
        .. "touch .first-taken; n=0; for i in $(seq 50); do { printf '#!/bin/sh\\ntouch " .. root
        .. "/MARK\\n' > sub/.git/hooks/pre-commit && chmod +x sub/.git/hooks/pre-commit; } 2>/dev/null "
        .. "|| n=$((n+1)); sleep 0.02; done; rm -f sub/.git/hooks/pre-commit 2>/dev/null; "
        .. "touch .attack-done; echo \"refused $n\""
end

-- The host's git commit in ws/sub, over and over (bounded) while the command plants.
local function host_loop(uid, root, ws)
    return "( cd " .. h.quote(ws) .. " && for i in $(seq 200); do test -e .first-taken && break; "
        .. "test -e .attack-done && break; sleep 0.05; done; for i in $(seq 300); do "
        .. as(uid, "cd sub && git commit -q --allow-empty -m host") .. " >/dev/null 2>&1; "
        .. "test -e .attack-done && break; sleep 0.02; done; touch " .. h.quote(root .. "/loop-done") .. " ) & "
end

for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
    describe("a --session-exec=false session (" .. who.name .. ")", function()
        lazy_setup(function()
            assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        end)
        after_each(h.cleanup)

        it("holds a repository an exec makes, inside that exec's own sandbox", function()
            local root = h.tmpdir()
            local ws, rt = root .. "/ws", root .. "/run"
            h.sh_ok("mkdir -m 700 " .. h.quote(ws) .. " " .. h.quote(rt))
            if who.uid then
                h.sh_ok(("chmod 755 %s && chown -R %d:%d %s"):format(h.quote(root), who.uid, who.uid, h.quote(root)))
            end
            -- without cordon: a plant works, and the host's git commit runs it
            h.sh(host_loop(who.uid, root, ws) .. as(who.uid, "cd " .. h.quote(ws) .. " && " .. attack(root))
                .. " >/dev/null 2>&1; wait")
            assert.is_true(exists(root .. "/MARK"), "the attempt does not work even without cordon")
            h.sh_ok("rm -rf " .. h.quote(ws .. "/sub") .. " " .. h.quote(ws .. "/.first-taken") .. " "
                .. h.quote(ws .. "/.attack-done") .. " " .. h.quote(root .. "/MARK") .. " "
                .. h.quote(root .. "/loop-done"))

            local name = "fresh-" .. h.token()
            local opts = { cwd = ws, env = { XDG_RUNTIME_DIR = rt }, uid = who.uid }
            if who.uid then opts.home = h.secret_home(who.uid) end
            h.defer(function()
                h.cordon({ "session", "stop", name }, { cwd = ws, env = opts.env, uid = who.uid, home = opts.home,
                    timeout = 30 })
            end)
            local r = h.cordon({ "session", "start", name, "--detach", "--session-exec=false" }, opts)
            assert.are.equal(0, r.code, h.describe(r))
            local e = {}
            for k, v in pairs(opts) do e[k] = v end
            e.prefix = host_loop(who.uid, root, ws)
            r = h.cordon({ "exec", name, "--", attack(root) }, e)
            assert.is_true(h.wait_for(function() return exists(root .. "/loop-done") end, 30))
            assert.are.equal(0, r.code, h.describe(r))
            assert.truthy(r.stdout:find("refused 50", 1, true), "a plant got through\n" .. h.describe(r))
            h.sh(as(who.uid, "cd " .. h.quote(ws .. "/sub") .. " && git commit -q --allow-empty -m after >/dev/null 2>&1"))
            assert.is_false(exists(root .. "/MARK"), "the host's git ran the command's program\n" .. h.describe(r))
        end)
    end)
end
