-- spec/04-engine/session_fork_spec.lua — forks for best-of-N (issue 31 item 5, docs/review.md
-- "Forks for best-of-N"): `cordon fork NAME NEW` starts NEW over NAME's workspace with NAME's
-- pending changes, in review mode with a layer of its own; the two do not see each other's
-- writes and the host's workspace does not change; `cordon review|apply|discard --fork NEW`
-- work on the fork's layer alone; a fork while NAME runs a background job; a fork of an unknown
-- session and to a running name are refused with one line (exit 125); a fork of a session not
-- in review mode starts empty; the MCP tools fork_session and review_changes through `cordon
-- mcp`; the Python and TypeScript clients' fork() and review().
-- Each case runs as root and as uid 65534, with a home, a state and a runtime folder of its own.
-- Drives the built binary ($CORDON_BIN); loopback only; waits are bounded, nothing is timed.
local h = require("spec.helpers")
local cjson = require("cjson")

--- A copy of clients/ every uid reads: the checkout may sit in a folder only its owner enters
-- (CI clones it into a root-owned 0700 folder), and the clients run as uid 65534 too.
local function readable_clients()
    local dir = h.tmpdir()
    h.sh_ok("cp -r " .. h.quote(h.source_dir .. "/clients") .. "/. " .. h.quote(dir) .. " && chmod -R a+rX "
        .. h.quote(dir))
    return dir
end

local ok, has = h.ok, h.has

local USER = 65534

--- Every entry of dir: path, type, size, mode, link target, and each file's hash.
local function full_tree(dir)
    return h.sh_ok("cd " .. h.quote(dir) .. " && find . -printf '%p %y %s %m %l\\n' | LC_ALL=C sort"
        .. " && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum")
end

--- A workspace with one file, a home, a state and a runtime folder, owned by uid (nil: root).
local function setup(uid)
    local home = h.tmpdir()
    local runtime = h.runtime_dir()
    local ws, parent = h.workspace()
    h.sh_ok("cd " .. h.quote(ws) .. " && echo base > base.txt && chmod 644 base.txt")
    if uid then
        h.sh_ok(("chmod 755 %s && chown -R %d:%d %s %s %s"):format(h.quote(parent), uid, uid,
            h.quote(home), h.quote(ws), h.quote(runtime)))
    end
    local t = { home = home, ws = ws, uid = uid, runtime = runtime,
        env = { XDG_STATE_HOME = home .. "/state", XDG_RUNTIME_DIR = runtime } }
    return t
end

local function cmd(t, words, extra)
    local opts = { home = t.home, cwd = t.ws, env = t.env, uid = t.uid }
    for k, v in pairs(extra or {}) do opts[k] = v end
    return h.cordon(words, opts)
end

--- Stops session name at the end of the test (before the folders go).
local function reap_later(t, name)
    h.defer(function() cmd(t, { "session", "stop", name }, { timeout = 30 }) end)
end

local function start(t, name, flags)
    local words = { "session", "start", name, "--detach" }
    for _, f in ipairs(flags or {}) do words[#words + 1] = f end
    reap_later(t, name)
    local r = cmd(t, words)
    ok(r)
    return r
end

local function fork(t, name, new)
    reap_later(t, new)
    return cmd(t, { "fork", name, new })
end

local function exec(t, name, script)
    return cmd(t, { "exec", name, "--", script })
end

local function review_paths(t, words)
    local all = { "review", "--json" }
    for _, w in ipairs(words or {}) do all[#all + 1] = w end
    local r = cmd(t, all)
    ok(r)
    local paths = {}
    for _, c in ipairs(cjson.decode(r.stdout).changes) do paths[#paths + 1] = c.path end
    table.sort(paths)
    return paths
end

for _, who in ipairs({ { name = "as root" }, { name = "as uid 65534", uid = USER } }) do
    describe("cordon fork " .. who.name, function()
        after_each(h.cleanup)

        it("starts a fork with the pending changes; each keeps its writes; apply --fork B", function()
            local t = setup(who.uid)
            local before = full_tree(t.ws)
            start(t, "A", { "--review" })
            ok(exec(t, "A", "echo x > x.txt && echo more >> base.txt"))
            local f = fork(t, "A", "B")
            ok(f)
            has(f, "session 'B' started")
            local r = exec(t, "B", "cat x.txt && echo y > y.txt")
            ok(r)
            has(r, "x")
            ok(exec(t, "A", "echo z > z.txt"))
            r = exec(t, "A", "test ! -e y.txt && cat x.txt z.txt")
            ok(r)
            has(r, "x\nz")
            r = exec(t, "B", "test ! -e z.txt && cat x.txt y.txt")
            ok(r)
            has(r, "x\ny")
            assert.are.equal(before, full_tree(t.ws))
            assert.are.same({ "base.txt", "x.txt", "y.txt" }, review_paths(t, { "--fork", "B" }))
            assert.are.same({ "base.txt", "x.txt", "z.txt" }, review_paths(t))
            -- the workspace's review names the forks whose layers are there
            has(ok(cmd(t, { "review" })), "forks with layers of their own: B (cordon review --fork NAME)")
            -- the fork's layer is its own: apply waits for its session's end
            local busy = cmd(t, { "apply", "--fork", "B" })
            assert.are.equal(125, busy.code, h.describe(busy))
            ok(cmd(t, { "session", "stop", "B" }))
            local a = cmd(t, { "apply", "--fork", "B" })
            ok(a)
            has(a, "applied added x.txt")
            has(a, "applied added y.txt")
            -- the records of the host's copies came with the fork: base.txt is no conflict
            has(a, "applied changed base.txt")
            assert.are.equal("base\nmore\n", h.read_file(t.ws .. "/base.txt"))
            assert.are.equal("x\n", h.read_file(t.ws .. "/x.txt"))
            assert.are.equal("y\n", h.read_file(t.ws .. "/y.txt"))
            assert.is_nil(h.read_file(t.ws .. "/z.txt"))
            -- A's layer is untouched by B's apply; A's changes are discarded on their own
            ok(cmd(t, { "session", "stop", "A" }))
            local d = cmd(t, { "discard" })
            ok(d)
            has(d, "discarded added z.txt")
            assert.is_nil(h.read_file(t.ws .. "/z.txt"))
            -- the fork's empty layer goes with discard --fork B, and then it is unknown
            d = cmd(t, { "discard", "--fork", "B" })
            ok(d)
            has(d, "removed the fork 'B'")
            local gone = cmd(t, { "review", "--fork", "B" })
            assert.are.equal(125, gone.code, h.describe(gone))
            has(gone, "no fork named 'B'")
        end)

        it("refuses a fork's change whose host copy changed since it was first seen", function()
            local t = setup(who.uid)
            start(t, "A", { "--review" })
            ok(exec(t, "A", "echo a >> base.txt"))
            ok(fork(t, "A", "B"))
            ok(exec(t, "B", "echo b >> base.txt"))
            ok(cmd(t, { "session", "stop", "B" }))
            h.write_file(t.ws .. "/base.txt", "host\n")
            if t.uid then h.sh_ok(("chown %d:%d %s"):format(t.uid, t.uid, h.quote(t.ws .. "/base.txt"))) end
            local a = cmd(t, { "apply", "--fork", "B" })
            assert.are.equal(1, a.code, h.describe(a))
            has(a, "conflict: base.txt")
            assert.are.equal("host\n", h.read_file(t.ws .. "/base.txt"))
        end)

        it("forks while A runs a background job, and a fork of a fork works", function()
            local t = setup(who.uid)
            start(t, "A", { "--review" })
            ok(exec(t, "A", "echo x > x.txt"))
            local bg = cmd(t, { "exec", "A", "--background", "--", "sleep 300" })
            ok(bg)
            local f = fork(t, "A", "B")
            ok(f)
            local r = exec(t, "B", "cat x.txt && echo y > y.txt")
            ok(r)
            has(r, "x")
            -- A's job still runs, and A still works
            local jobs = cmd(t, { "jobs", "A" })
            ok(jobs)
            has(jobs, "sleep 300")
            has(jobs, "running")
            ok(exec(t, "A", "test ! -e y.txt"))
            ok(fork(t, "B", "C"))
            r = exec(t, "C", "cat x.txt y.txt && echo c > c.txt")
            ok(r)
            has(r, "x\ny")
            assert.are.same({ "c.txt", "x.txt", "y.txt" }, review_paths(t, { "--fork", "C" }))
            assert.are.same({ "x.txt", "y.txt" }, review_paths(t, { "--fork", "B" }))
            assert.are.same({ "x.txt" }, review_paths(t))
            -- a pending fork layer keeps its name: no fork over it until it is discarded
            ok(cmd(t, { "session", "stop", "C" }))
            local again = fork(t, "A", "C")
            assert.are.equal(125, again.code, h.describe(again))
            has(again, "still holds pending changes")
            local d = cmd(t, { "discard", "--fork", "C" })
            ok(d)
            has(d, "removed the fork 'C'")
        end)

        it("refuses a fork of an unknown session and to a running name, with one line", function()
            local t = setup(who.uid)
            start(t, "A", { "--review" })
            start(t, "other")
            local r = cmd(t, { "fork", "nobody", "N" })
            assert.are.equal(125, r.code, h.describe(r))
            has(r.stderr, "no session named 'nobody'")
            assert.are.equal(1, select(2, h.chomp(r.stderr):gsub("\n", "")) + 1, h.describe(r))
            r = cmd(t, { "fork", "A", "other" })
            assert.are.equal(125, r.code, h.describe(r))
            has(r.stderr, "already running")
            assert.is_nil(h.chomp(r.stderr):find("\n"), h.describe(r))
            r = cmd(t, { "fork", "A", "A" })
            assert.are.equal(125, r.code, h.describe(r))
            r = cmd(t, { "fork", "A", "-bad" })
            assert.are.equal(125, r.code, h.describe(r))
        end)

        it("forks a session not in review mode from the host's workspace, and says so", function()
            local t = setup(who.uid)
            start(t, "D")
            ok(exec(t, "D", "echo direct > direct.txt"))
            local f = fork(t, "D", "E")
            ok(f)
            has(f, "not in review mode")
            ok(exec(t, "E", "cat direct.txt && echo e > e.txt"))
            assert.is_nil(h.read_file(t.ws .. "/e.txt"))
            assert.are.same({ "e.txt" }, review_paths(t, { "--fork", "E" }))
        end)

        it("serves fork_session and review_changes through cordon mcp", function()
            local t = setup(who.uid)
            local call = h.mcp_call
            local steps = h.mcp_opened("fork-spec", {
                call(2, "run_command", { command = "echo m > m.txt" }), { expect = 2, as = "write" },
                call(3, "review_changes"), { expect = 3, as = "review" },
                call(4, "fork_session", { name = "mfork" }), { expect = 4, as = "fork" },
                call(5, "fork_session", { name = "-bad" }), { expect = 5, as = "bad" },
                call(6, "review_changes", { diff = true }), { expect = 6, as = "diff" },
                call(7, "review_changes", { diff = "yes" }), { expect = 7, as = "bad_diff" },
                { spawn = h.command_line({ "exec", "mfork", "--", "cat m.txt" },
                    { home = t.home, env = t.env, uid = t.uid }), as = "inside" },
                { wait_spawned = "inside" },
                { close = true },
            })
            reap_later(t, "mfork")
            local line = "cd " .. h.quote(t.ws) .. " && exec " .. h.command_line({ "mcp", "--review" },
                { home = t.home, env = t.env, uid = t.uid, timeout = 150 })
            local rep, why = h.mcp_raw(steps, line)
            local k = rep.kept
            assert.is_false(k.review.result.isError, why)
            local changes = k.review.result.structuredContent.changes
            assert.are.equal(1, #changes, why)
            assert.are.equal("m.txt", changes[1].path, why)
            assert.are.equal("added", changes[1].change, why)
            assert.is_false(k.fork.result.isError, why)
            assert.are.equal("mfork", k.fork.result.structuredContent.name, why)
            assert.is_true(k.fork.result.structuredContent.pending_copied, why)
            assert.truthy(k.bad.error or k.bad.result.isError, why)
            -- with diff, the text is cordon review --diff's: the change and its lines
            assert.is_false(k.diff.result.isError, why)
            local text = k.diff.result.content[1].text
            assert.truthy(text:find("added   m.txt\n--- /dev/null\n+++ b/m.txt\n", 1, true), text)
            assert.truthy(text:find("\n+m\n", 1, true), text)
            assert.are.equal(t.ws, k.diff.result.structuredContent.workspace, why)
            assert.truthy(k.bad_diff.error or k.bad_diff.result.isError, why)
            assert.are.equal(0, k.inside.returncode, why)
            has(k.inside.output, "m")
            assert.is_nil(h.read_file(t.ws .. "/m.txt"))
        end)

        it("lets the Python client fork() and review()", function()
            local t = setup(who.uid)
            start(t, "P", { "--review" })
            reap_later(t, "P2")
            local code = table.concat({
                "import cordon",
                "s = cordon.Session.attach('P')",
                "assert s.exec('echo p > p.txt').exit_code == 0",
                "f = s.fork('P2')",
                "assert f.name == 'P2', f",
                "r = f.exec('cat p.txt && echo q > q.txt')",
                "assert r.stdout == 'p\\n', r",
                "paths = sorted(c['path'] for c in f.review()['changes'])",
                "assert paths == ['p.txt', 'q.txt'], paths",
                "assert [c['path'] for c in s.review()['changes']] == ['p.txt']",
                "assert f.review()['fork'] == 'P2' and s.review()['fork'] is None",
                "try:",
                "    s.fork('P2')",
                "    raise SystemExit('a second fork to P2 was not refused')",
                "except cordon.APIError as e:",
                "    assert e.status == 409, e",
                "print('client ok')",
            }, "\n")
            local file = h.tmpdir() .. "/client.py"
            h.write_file(file, code, "644")
            h.sh_ok("chmod 755 " .. h.quote(file:match("^(.*)/[^/]+$")))
            local env = { PYTHONPATH = readable_clients() .. "/python/src" }
            for k, v in pairs(t.env) do env[k] = v end
            local pre = t.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(t.uid, t.uid) or ""
            local parts = {}
            for k, v in pairs(env) do parts[#parts + 1] = h.quote(k .. "=" .. v) end
            local r = h.sh("cd " .. h.quote(t.ws) .. " && " .. pre .. "env HOME=" .. h.quote(t.home) .. " "
                .. table.concat(parts, " ") .. " " .. h.python .. " " .. h.quote(file))
            ok(r)
            has(r, "client ok")
        end)

        it("lets the TypeScript client fork() and review()", function()
            if h.sh("command -v node").code ~= 0 then h.skip("node is not installed") end
            local t = setup(who.uid)
            start(t, "J", { "--review" })
            reap_later(t, "J2")
            local code = table.concat({
                "import { Session } from " .. cjson.encode(readable_clients() .. "/typescript/index.js") .. ";",
                "const s = await Session.attach('J');",
                "if ((await s.exec('echo j > j.txt')).exitCode !== 0) throw new Error('exec');",
                "const f = await s.fork('J2');",
                "const r = await f.exec('cat j.txt && echo k > k.txt');",
                "if (f.name !== 'J2' || r.stdout !== 'j\\n') throw new Error(JSON.stringify(r));",
                "const paths = (await f.review()).changes.map((c) => c.path).sort().join(',');",
                "if (paths !== 'j.txt,k.txt') throw new Error(paths);",
                "let refused = 0;",
                "try { await s.fork('J2'); } catch (e) { refused = e.status; }",
                "if (refused !== 409) throw new Error('a second fork to J2: ' + refused);",
                "s.close(); f.close();",
                "console.log('client ok');",
            }, "\n")
            local file = h.tmpdir() .. "/client.mjs"
            h.write_file(file, code, "644")
            h.sh_ok("chmod 755 " .. h.quote(file:match("^(.*)/[^/]+$")))
            local pre = t.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(t.uid, t.uid) or ""
            local r = h.sh("cd " .. h.quote(t.ws) .. " && " .. pre .. "env HOME=" .. h.quote(t.home)
                .. " XDG_RUNTIME_DIR=" .. h.quote(t.runtime) .. " node " .. h.quote(file))
            ok(r)
            has(r, "client ok")
        end)
    end)
end
