-- spec/04-engine/session_snapshot_spec.lua — snapshots and rollback of a review session's
-- workspace (docs/review.md, "Snapshots and rollback"): `cordon snapshot NAME [LABEL]`,
-- `--list [--json]`, `--drop LABEL`, `cordon rollback NAME LABEL`, and the API routes behind them.
-- A review session writes files, snapshot A, writes more and removes a file, snapshot B; rollback
-- A shows A's state inside (names, modes, contents: the removed file back, the later file gone),
-- rollback B shows B's; the host's workspace tree is unchanged throughout; a background job whose
-- folder is the workspace is named in the one line; an unknown label, a bad label and a session
-- without --review are refused. Each case runs as root and as uid 65534, with a home, a state
-- folder and a runtime folder of its own. Loopback only; nothing is timed.
local h = require("spec.helpers")
local cjson = require("cjson")

local ok, has = h.ok, h.has

local USER = 65534

--- Every entry of dir: path, type, size, mode, link target, and each file's hash.
local function full_tree(dir)
    return h.sh_ok("cd " .. h.quote(dir) .. " && find . -printf '%p %y %s %m %l\\n' | LC_ALL=C sort"
        .. " && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum")
end

--- A workspace with a few files, owned by uid (nil: root), and a session of it (--review unless
-- flags say otherwise), with more_env added to its environment and the shell code setup run in the
-- workspace before it starts.
local function start(uid, flags, more_env, setup)
    local home = h.tmpdir()
    local ws, parent = h.workspace()
    h.sh_ok("cd " .. h.quote(ws) .. " && echo base > keep.txt && echo old > gone.txt"
        .. " && mkdir sub && echo in > sub/in.txt && chmod 644 keep.txt gone.txt"
        .. (setup and (" && " .. setup) or ""))
    local runtime = h.runtime_dir()
    if uid then
        h.sh_ok(("chmod 755 %s && chown -R %d:%d %s %s %s"):format(h.quote(parent), uid, uid,
            h.quote(home), h.quote(ws), h.quote(runtime)))
    end
    local env = { XDG_STATE_HOME = home .. "/state", XDG_RUNTIME_DIR = runtime }
    for k, v in pairs(more_env or {}) do env[k] = v end
    local t = { home = home, ws = ws, uid = uid, env = env, name = "sn" .. h.token():sub(1, 8) }
    t.o = { home = home, cwd = ws, env = env, uid = uid }
    local args = { "session", "start", t.name, "--detach" }
    for _, f in ipairs(flags or { "--review" }) do args[#args + 1] = f end
    ok(h.cordon(args, t.o))
    local info = h.api(h.session_socket(runtime, t.name), "GET", "/v1/session", nil, { uid = uid })
    local pid = math.tointeger(info.json and info.json.pid)
    h.defer(function()
        h.cordon({ "session", "stop", t.name }, t.o)
        if pid then os.execute("kill -9 " .. pid .. " 2>/dev/null") end
    end)
    t.socket = h.session_socket(runtime, t.name)
    return t
end

local function cli(t, words)
    return h.cordon(words, t.o)
end

local function exec(t, script)
    return cli(t, { "exec", t.name, "--", script })
end

local function api(t, method, path, body)
    return h.api(t.socket, method, path, body, { uid = t.uid })
end

--- What the commands see of the workspace: names, types, modes, contents.
local function inside(t)
    local r = exec(t, "find . -path ./.git -prune -o -printf '%p %y %m\\n' | LC_ALL=C sort"
        .. " && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r cat")
    ok(r)
    return r.stdout
end

for _, who in ipairs({ { name = "as root" }, { name = "as uid 65534", uid = USER } }) do
    describe("cordon snapshot and rollback " .. who.name, function()
        after_each(h.cleanup)

        it("returns the workspace inside to a snapshot, and the host's tree never changes", function()
            local t = start(who.uid)
            local host = full_tree(t.ws)
            ok(exec(t, "echo one > one.txt && chmod 600 one.txt && echo changed >> keep.txt"))
            local r = cli(t, { "snapshot", t.name, "A" })
            ok(r)
            assert.are.equal("A\n", r.stdout)
            has(r, "pending changes")
            local at_a = inside(t)
            ok(exec(t, "echo two > two.txt && rm gone.txt && chmod 755 one.txt && echo again >> one.txt"))
            r = cli(t, { "snapshot", t.name, "B", "--json" })
            ok(r)
            local b = cjson.decode(r.stdout)
            assert.are.equal("B", b.label)
            assert.is_true(b.entries >= 4, r.stdout)
            local at_b = inside(t)
            assert.are_not.equal(at_a, at_b)
            assert.are.equal(host, full_tree(t.ws))

            r = cli(t, { "rollback", t.name, "A" })
            ok(r)
            has(r, "rolled back to snapshot A")
            assert.are.equal(at_a, inside(t))
            r = exec(t, "cat gone.txt && test ! -e two.txt && stat -c %a one.txt && cat one.txt")
            ok(r)
            has(r, "old\n600\none\n")
            assert.are.equal(host, full_tree(t.ws))
            -- what cordon review reads is the snapshot's too
            local rv = h.cordon({ "review", "--json" }, t.o)
            ok(rv)
            local paths = {}
            for _, c in ipairs(cjson.decode(rv.stdout).changes) do paths[c.path] = c.change end
            assert.are.equal("added", paths["one.txt"])
            assert.is_nil(paths["two.txt"])
            assert.is_nil(paths["gone.txt"])

            -- the snapshot stays: B and then A again
            ok(cli(t, { "rollback", t.name, "B" }))
            assert.are.equal(at_b, inside(t))
            ok(cli(t, { "rollback", t.name, "A" }))
            assert.are.equal(at_a, inside(t))
            -- writes after a rollback are pending as before
            ok(exec(t, "echo after > after.txt"))
            has(ok(exec(t, "cat after.txt")), "after")
            assert.are.equal(host, full_tree(t.ws))
        end)

        it("keeps the read-only covers after a rollback, and stages nothing a command sees", function()
            for _, flags in ipairs({ { "--review" }, { "--review", "--session-exec=false" } }) do
                local t = start(who.uid, flags)
                h.sh_ok("mkdir " .. h.quote(t.ws .. "/.cordon") .. " && echo p > " .. h.quote(t.ws .. "/.cordon/p")
                    .. (who.uid and (" && chown -R %d:%d %s"):format(who.uid, who.uid, h.quote(t.ws .. "/.cordon")) or ""))
                -- a session started before .cordon existed binds it read-only before the next command
                local r = exec(t, "echo x > .cordon/x")
                assert.are_not.equal(0, r.code, h.describe(r))
                ok(exec(t, "echo one > one.txt"))
                ok(cli(t, { "snapshot", t.name, "A" }))
                ok(exec(t, "echo two > two.txt"))
                ok(cli(t, { "rollback", t.name, "A" }))
                r = exec(t, "echo x > .cordon/x")
                assert.are_not.equal(0, r.code, h.describe(r))
                has(r, "Read-only file system")
                r = exec(t, "test ! -e two.txt && cat one.txt && cat /proc/self/mountinfo")
                ok(r)
                has(r, "one\n")
                -- the rollback's staging (the workspace's tree and the layer) shows nowhere inside
                assert.is_nil(r.stdout:find(" /ws ", 1, true), h.describe(r))
                assert.is_nil(r.stdout:find(" /rl ", 1, true), h.describe(r))
                assert.is_nil(r.stdout:find("cordon-review-", 1, true), h.describe(r))
                ok(cli(t, { "session", "stop", t.name }))
            end
        end)

        it("never shows the workspace without its read-only covers while it rolls back", function()
            -- the move beneath (Linux 6.5) and the stacked view older kernels get, on this kernel
            for _, lacks in ipairs({ "", "move_mount_beneath" }) do
                local t = start(who.uid, nil, { CORDON_TEST_KERNEL_LACKS = lacks }, "mkdir .cordon && echo p > .cordon/p")
                ok(exec(t, "echo one > one.txt"))
                ok(cli(t, { "snapshot", t.name, "A" }))
                -- a job writing .cordon by its absolute path (the top view) all through the rollbacks
                local r = cli(t, { "exec", t.name, "--background", "--", "ws=$PWD; while :; do "
                    .. "if echo x 2>/dev/null > \"$ws/.cordon/pwn\"; then echo WROTE >> /tmp/wrote; fi; done" })
                ok(r)
                for i = 1, 6 do
                    ok(exec(t, "echo " .. i .. " > n" .. i .. ".txt"))
                    ok(cli(t, { "rollback", t.name, "A" }))
                end
                r = exec(t, "test ! -e .cordon/pwn && test ! -e /tmp/wrote && test ! -e n6.txt && cat one.txt")
                ok(r)
                has(r, "one\n")
                ok(cli(t, { "session", "stop", t.name }))
                local rv = ok(h.cordon({ "review", "--json" }, t.o))
                for _, c in ipairs(cjson.decode(rv.stdout).changes) do
                    assert.is_nil(c.path:find("^%.cordon"), rv.stdout)
                end
            end
        end)

        it("stacks at most 16 rollbacks on a kernel before 6.5, and frees the old views at the next start", function()
            local lacks = { CORDON_TEST_KERNEL_LACKS = "move_mount_beneath" }
            local t = start(who.uid, nil, lacks)
            ok(exec(t, "echo one > one.txt"))
            ok(cli(t, { "snapshot", t.name, "A" }))
            for i = 1, 16 do
                ok(exec(t, "echo " .. i .. " > n.txt"))
                ok(cli(t, { "rollback", t.name, "A" }))
            end
            local r = cli(t, { "rollback", t.name, "A" })
            assert.are.equal(125, r.code, h.describe(r))
            has(r, "rolled back 16 times on a kernel before Linux 6.5")
            -- the view is still the 16th rollback's, and works
            r = exec(t, "test ! -e n.txt && cat one.txt && echo w > w.txt")
            ok(r)
            local reviews = h.quote(t.home .. "/state/cordon/reviews")
            -- each old view's folders stay on disk while it is mounted beneath
            r = h.sh("ls -d " .. reviews .. "/*/old/rollback-* | wc -l")
            assert.are.equal("16", r.stdout:match("%d+"), h.describe(r))
            ok(cli(t, { "session", "stop", t.name }))
            local t2 = { name = t.name .. "b", o = t.o }
            ok(h.cordon({ "session", "start", t2.name, "--detach", "--review" }, t.o))
            h.defer(function() h.cordon({ "session", "stop", t2.name }, t.o) end)
            r = h.sh("ls -d " .. reviews .. "/*/old 2>/dev/null | wc -l")
            assert.are.equal("0", r.stdout:match("%d+"), h.describe(r))
            has(ok(exec(t2, "cat w.txt one.txt")), "w\none\n")
        end)

        it("keeps hidden paths inside the workspace hidden after a rollback", function()
            local t0 = start(who.uid)
            ok(cli(t0, { "session", "stop", t0.name }))
            local ws = t0.ws
            h.sh_ok("cd " .. h.quote(ws) .. " && echo TOPSECRET > secret.txt && mkdir keys && echo K > keys/k"
                .. (who.uid and (" && chown -R %d:%d secret.txt keys"):format(who.uid, who.uid) or ""))
            -- the same reads outside the sandbox work: the check can fail
            assert.are.equal("K\n", h.read_file(ws .. "/keys/k"))
            for _, extra in ipairs({ {}, { "--session-exec=false" } }) do
                local flags = { "--review", "--hide", ws .. "/secret.txt", "--hide", ws .. "/keys" }
                for _, f in ipairs(extra) do flags[#flags + 1] = f end
                local t = { name = t0.name .. #extra, o = t0.o, ws = ws }
                local args = { "session", "start", t.name, "--detach" }
                for _, f in ipairs(flags) do args[#args + 1] = f end
                ok(h.cordon(args, t.o))
                h.defer(function() h.cordon({ "session", "stop", t.name }, t.o) end)
                ok(exec(t, "echo a > a.txt"))
                ok(cli(t, { "snapshot", t.name, "A" .. #extra }))
                ok(exec(t, "echo b > b.txt"))
                ok(cli(t, { "rollback", t.name, "A" .. #extra }))
                local r = exec(t, "cat a.txt; test ! -e b.txt && echo no-b; cat secret.txt; cat keys/k; ls keys; touch keys/n")
                has(r, "a\nno-b\n")
                assert.is_nil(r.stdout:find("TOPSECRET", 1, true), h.describe(r))
                assert.is_nil(r.stdout:find("K\n", 1, true), h.describe(r))
                has(r, "keys/n")
                ok(cli(t, { "session", "stop", t.name }))
                ok(h.cordon({ "discard" }, t.o))
            end
        end)

        it("names a background job whose folder is the old workspace, in one line", function()
            local t = start(who.uid)
            ok(exec(t, "echo one > one.txt"))
            ok(cli(t, { "snapshot", t.name, "A" }))
            local r = cli(t, { "exec", t.name, "--background", "--", "exec sleep 600" })
            ok(r)
            local pid = r.stdout:match("PID: (%d+)")
            assert.truthy(pid, h.describe(r))
            r = cli(t, { "rollback", t.name, "A" })
            ok(r)
            local line = r.stderr:match("[^\n]*still hold[^\n]*")
            assert.truthy(line, h.describe(r))
            assert.truthy(line:find("pid " .. pid .. " (sleep)", 1, true), h.describe(r))
            assert.truthy(line:find("restart them to see the rollback", 1, true), h.describe(r))
            local a = api(t, "POST", "/v1/rollback", '{"label":"A"}')
            assert.are.equal(200, a.status, h.describe_api(a))
            assert.are.equal("A", a.json.label)
            assert.are.equal("table", type(a.json.holders))
        end)

        it("lists, numbers and drops snapshots", function()
            local t = start(who.uid)
            local r = cli(t, { "snapshot", t.name, "--list" })
            ok(r)
            has(r, "no snapshots")
            ok(exec(t, "echo one > one.txt"))
            r = cli(t, { "snapshot", t.name })
            ok(r)
            assert.are.equal("s1\n", r.stdout)
            ok(exec(t, "echo two > two.txt"))
            assert.are.equal("s2\n", ok(cli(t, { "snapshot", t.name })).stdout)
            r = cli(t, { "snapshot", t.name, "--list" })
            ok(r)
            assert.truthy(r.stdout:find("^LABEL%s+TAKEN%s+CHANGES"), h.describe(r))
            assert.truthy(r.stdout:find("\ns1%s+%d+%-%d+%-%d+ [%d:]+%s+1\n"), h.describe(r))
            assert.truthy(r.stdout:find("\ns2%s+%d+%-%d+%-%d+ [%d:]+%s+2\n"), h.describe(r))
            r = cli(t, { "snapshot", t.name, "--list", "--json" })
            ok(r)
            local l = cjson.decode(r.stdout).snapshots
            assert.are.equal(2, #l)
            assert.are.equal("s1", l[1].label)
            assert.are.equal(1, l[1].changes)
            -- a label taken already is refused
            r = cli(t, { "snapshot", t.name, "s1" })
            assert.are.equal(125, r.code, h.describe(r))
            has(r, "has a snapshot s1 already")
            ok(cli(t, { "snapshot", t.name, "--drop", "s1" }))
            l = cjson.decode(ok(cli(t, { "snapshot", t.name, "--list", "--json" })).stdout).snapshots
            assert.are.equal(1, #l)
            -- discard drops the pending changes, not the snapshots
            ok(cli(t, { "session", "stop", t.name }))
            ok(h.cordon({ "discard" }, t.o))
            assert.is_true(h.sh("ls " .. h.quote(t.home .. "/state/cordon/reviews") .. "/*/snapshots/s2/upper/two.txt").code == 0)
        end)

        it("refuses an unknown label, a bad label and a session without --review", function()
            local t = start(who.uid)
            local r = cli(t, { "rollback", t.name, "nope" })
            assert.are.equal(125, r.code, h.describe(r))
            has(r, "has no snapshot nope")
            local a = api(t, "POST", "/v1/rollback", '{"label":"nope"}')
            assert.are.equal(404, a.status, h.describe_api(a))
            for _, bad in ipairs({ ".hidden", "a/b", "x y", ("l"):rep(65), "" }) do
                r = cli(t, { "snapshot", t.name, bad })
                assert.are.equal(125, r.code, h.describe(r))
                a = api(t, "POST", "/v1/snapshots", cjson.encode({ label = bad }))
                assert.are.equal(400, a.status, h.describe_api(a))
            end
            r = cli(t, { "snapshot", t.name, ".hidden" })
            has(r, "invalid label")
            a = api(t, "POST", "/v1/snapshots", "{not json")
            assert.are.equal(400, a.status, h.describe_api(a))
            a = api(t, "POST", "/v1/snapshots", '{"label":"ok","other":1}')
            assert.are.equal(400, a.status, h.describe_api(a))
            a = api(t, "POST", "/v1/rollback", "{}")
            assert.are.equal(400, a.status, h.describe_api(a))

            local d = start(who.uid, {})
            r = cli(d, { "snapshot", d.name })
            assert.are.equal(125, r.code, h.describe(r))
            has(r, "is not in review mode: snapshots need --review")
            a = api(d, "GET", "/v1/snapshots")
            assert.are.equal(409, a.status, h.describe_api(a))
            r = cli(d, { "rollback", d.name, "A" })
            assert.are.equal(125, r.code, h.describe(r))
        end)
    end)
end

describe("snapshot_workspace and rollback_workspace through cordon mcp", function()
    after_each(h.cleanup)

    for _, who in ipairs({ { name = "as root" }, { name = "as uid 65534", uid = USER } }) do
        it("an agent snapshots, breaks things and rolls back " .. who.name, function()
            local t = start(who.uid)
            local call = h.mcp_call
            local steps = h.mcp_opened("snapshot-spec", {
                call(2, "run_command", { command = "echo a > a.txt" }), { expect = 2, as = "write" },
                call(3, "snapshot_workspace", { label = "good" }), { expect = 3, as = "snap" },
                call(4, "run_command", { command = "rm a.txt keep.txt && echo b > b.txt" }), { expect = 4, as = "break" },
                call(5, "rollback_workspace", { label = "good" }), { expect = 5, as = "back" },
                call(6, "run_command", { command = "ls" }), { expect = 6, as = "ls" },
                call(7, "rollback_workspace", { label = "nope" }), { expect = 7, as = "unknown" },
                call(8, "snapshot_workspace", { label = "../up" }), { expect = 8, as = "bad" },
                call(9, "rollback_workspace", {}), { expect = 9, as = "missing" },
                call(10, "snapshot_workspace"), { expect = 10, as = "auto" },
                { close = true },
            })
            local line = "cd " .. h.quote(t.ws) .. " && exec " .. h.command_line({ "mcp", "--session", t.name },
                { home = t.home, env = t.env, uid = t.uid, timeout = 150 })
            local rep, why = h.mcp_raw(steps, line)
            local k = rep.kept
            assert.is_false(k.snap.result.isError, why)
            assert.are.equal("good", k.snap.result.structuredContent.label, why)
            assert.is_false(k.back.result.isError, why)
            assert.are.equal("good", k.back.result.structuredContent.label, why)
            local listed = k.ls.result.content[1].text
            assert.truthy(listed:find("a.txt", 1, true) and listed:find("keep.txt", 1, true), why)
            assert.falsy(listed:find("b.txt", 1, true), why)
            for _, bad in ipairs({ k.unknown, k.bad, k.missing }) do
                assert.truthy(bad.error or bad.result.isError, why)
            end
            assert.truthy(k.unknown.result.content[1].text:find("nope", 1, true), why)
            assert.are.equal("s1", k.auto.result.structuredContent.label, why)
            -- the host's workspace never saw any of it
            assert.is_nil(h.read_file(t.ws .. "/a.txt"))
            assert.are.equal("base\n", h.read_file(t.ws .. "/keep.txt"))
        end)
    end
end)

describe("cordon snapshot and rollback from the clients", function()
    after_each(h.cleanup)

    it("takes, lists and rolls back with the Python and TypeScript clients", function()
        local t = start(nil)
        ok(exec(t, "echo one > one.txt"))
        local py = [[
import json, sys
from cordon import Session, APIError
s = Session.attach(sys.argv[1])
a = s.snapshot("A")
n = s.snapshot()
listed = [x.label for x in s.snapshots()]
rb = s.rollback("A")
try:
    s.rollback("nope")
    missing = None
except APIError as e:
    missing = e.status
print(json.dumps({"a": a.label, "entries": a.entries, "n": n.label, "listed": listed,
                  "rb": rb.label, "holders": rb.holders, "missing": missing}))
]]
        local r = h.sh(("XDG_RUNTIME_DIR=%s PYTHONPATH=%s %s -c %s %s"):format(h.quote(t.env.XDG_RUNTIME_DIR),
            h.quote(h.source_dir .. "/clients/python/src"), h.python, h.quote(py), t.name))
        assert.are.equal(0, r.code, h.describe(r))
        local v = cjson.decode(r.stdout)
        assert.are.same({ "A", 1, "s1", { "A", "s1" }, "A", 404 },
            { v.a, v.entries, v.n, v.listed, v.rb, v.missing })
        local js = ([[
import { Session } from %s;
const s = await Session.attach(process.argv[2]);
const b = await s.snapshot("B");
const all = (await s.snapshots()).map((x) => x.label);
const rb = await s.rollback("B");
console.log(JSON.stringify({ b: b.label, all, rb: rb.label, holders: rb.holders.length, message: rb.message }));
]]):format(cjson.encode("file://" .. h.source_dir .. "/clients/typescript/index.js"))
        local file = h.tmpdir() .. "/snap.mjs"
        h.write_file(file, js)
        r = h.sh(("XDG_RUNTIME_DIR=%s node %s %s"):format(h.quote(t.env.XDG_RUNTIME_DIR), h.quote(file), t.name))
        assert.are.equal(0, r.code, h.describe(r))
        v = cjson.decode(r.stdout)
        assert.are.same({ "B", { "A", "s1", "B" }, "B", 0 }, { v.b, v.all, v.rb, v.holders })
        assert.are.equal(cjson.null, v.message)
        has(ok(exec(t, "cat one.txt")), "one")
    end)
end)
