-- spec/04-engine/home_beside_spec.lua — several sandboxes of one workspace at once (runs beside
-- a session, runs in parallel), each keeping its home writes without waiting for the others: the
-- one holding the workspace's home layer writes it, the others write pending uppers of their own
-- that the next holder merges (engine/sandbox/home_layers.c); the same file written by two: the
-- later end wins, in one line; a killed sandbox's writes are merged later; `cordon home --diff`
-- shows pending writes, `--reset` drops them and is refused while any sandbox runs.
-- Every case as root and (when the spec runs as root) as uid 65534 with a home of its own.
-- Drives the built binary ($CORDON_BIN); no network.
local h = require("spec.helpers")

local ok, has, hasnt = h.ok, h.has, h.hasnt

local callers = { { name = "root" } }
if h.chomp(h.sh_ok("id -u")) == "0" then
    callers[#callers + 1] = { name = "an unprivileged user", uid = 65534 }
end

--- A home, a workspace and a runtime folder of the caller's own; the layer folder's path.
local function setup(c)
    local home, ws, runtime = h.tmpdir(), h.workspace(nil, c.uid), h.tmpdir()
    h.sh_ok("chmod 700 " .. h.quote(runtime))
    if c.uid then
        h.sh_ok(("chown %d:%d %s %s"):format(c.uid, c.uid, h.quote(home), h.quote(runtime)))
    end
    local hex = h.chomp(h.sh_ok("printf %s " .. h.quote(ws) .. " | sha256sum | cut -d' ' -f1"))
    return { home = home, ws = ws, uid = c.uid, env = { XDG_RUNTIME_DIR = runtime },
             layer = home .. "/.local/state/cordon/homes/" .. hex }
end

local function cordon(t, args, extra)
    local o = { home = t.home, cwd = t.ws, env = t.env, uid = t.uid }
    for k, v in pairs(extra or {}) do o[k] = v end
    return h.cordon(args, o)
end

local function run(t, script)
    return cordon(t, { "run", "--", "/bin/sh", "-c", script })
end

--- The command line of a run of script, for a shell that starts it in the background.
local function run_line(t, script)
    return h.command_line({ "run", "--", "/bin/sh", "-c", script },
        { home = t.home, env = t.env, uid = t.uid, timeout = false })
end

local function session(t)
    local name = "beside-" .. h.token()
    ok(cordon(t, { "session", "start", name, "--detach" }))
    h.defer(function() cordon(t, { "session", "stop", name }, { timeout = 30 }) end)
    return name
end

local function exec(t, name, script)
    return cordon(t, { "exec", name, "--", script })
end

--- Waits (bounded) until no sandbox of the workspace holds its layer or a pending upper.
local function idle(t)
    assert.is_truthy(h.wait_for(function()
        return cordon(t, { "home" }).stdout:find("in use: no", 1, true)
    end, 10), "a sandbox of the workspace still runs")
end

-- A bounded wait inside a command for a file of the workspace (at most 20 s).
local function wait_file(name)
    return ("i=0; while [ ! -e %s ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; test -e %s")
        :format(name, name)
end

for _, c in ipairs(callers) do
    describe("sandboxes of one workspace at once, as " .. c.name, function()
        after_each(function() h.cleanup() end)

        it("a run beside a session keeps its home writes, says nothing, and both are kept", function()
            local t = setup(c)
            local s = session(t)
            ok(exec(t, s, "mkdir -p ~/.cache && echo session > ~/.cache/from-session"))
            local r = ok(run(t, "mkdir -p ~/.cache && echo run > ~/.cache/from-run && "
                .. "cat ~/.cache/from-session ~/.cache/from-run"))
            assert.are.equal("session\nrun\n", r.stdout)
            assert.are.equal("", r.stderr, h.describe(r))
            -- a second run beside it sees the first's writes (merged into its own upper)
            r = ok(run(t, "cat ~/.cache/from-run"))
            assert.are.equal("run\n", r.stdout)
            local d = ok(cordon(t, { "home", "--diff" })).stdout
            has(d, "added ~/.cache/from-session\n", nil)
            has(d, "added ~/.cache/from-run (pending)\n", nil)
            ok(cordon(t, { "session", "stop", s }))
            idle(t)
            -- the next holder merges the pending writes: both are in the layer
            r = ok(run(t, "cat ~/.cache/from-session ~/.cache/from-run"))
            assert.are.equal("session\nrun\n", r.stdout)
            assert.are.equal("", r.stderr, h.describe(r))
            d = ok(cordon(t, { "home", "--diff" })).stdout
            has(d, "added ~/.cache/from-run\n", nil)
            hasnt(d, "(pending)", nil)
            assert.are.equal("", h.sh_ok("ls -A " .. h.quote(t.layer .. "/pending")))
            -- the real home got nothing
            assert.are.equal("", h.sh_ok("ls -A " .. h.quote(t.home .. "/.cache") .. " | grep -vx cordon || true"))
        end)

        it("two runs at once write different files and one same file: the later end wins, in one line", function()
            local t = setup(c)
            -- A holds the layer; B starts while A runs; A writes the shared file after B started,
            -- then ends; B writes it after A's end, and ends later: B's is kept
            local a = run_line(t, "mkdir -p ~/.cache && echo A > ~/.cache/a && touch a-up && "
                .. wait_file("b-up") .. " && echo A > ~/.cache/same")
            local b = run_line(t, "mkdir -p ~/.cache && touch b-up && echo B > ~/.cache/b && "
                .. wait_file("go") .. " && echo B > ~/.cache/same")
            local r = h.sh("cd " .. h.quote(t.ws) .. " && { " .. a .. " 2>a.err & } ; pa=$!; "
                .. wait_file("a-up") .. " && { { " .. b .. " 2>b.err & } ; pb=$!; wait $pa; ra=$?; "
                .. "touch go; wait $pb; rb=$?; exit $((ra | rb)); }")
            assert.are.equal(0, r.code, h.describe(r))
            assert.are.equal("", h.read_file(t.ws .. "/a.err") .. h.read_file(t.ws .. "/b.err"))
            r = ok(run(t, "cat ~/.cache/a ~/.cache/b ~/.cache/same"))
            assert.are.equal("A\nB\nB\n", r.stdout)
            has(r.stderr, "two sandboxes of this workspace wrote ~/.cache/same: the one that ended later is kept", r)
            assert.are.equal(1, select(2, r.stderr:gsub("\n", "")), h.describe(r))
            local d = ok(cordon(t, { "home", "--diff" })).stdout
            for _, f in ipairs({ "a", "b", "same" }) do has(d, "added ~/.cache/" .. f .. "\n", nil) end
            -- said once: the next run is quiet
            r = ok(run(t, "cat ~/.cache/same"))
            assert.are.equal("B\n", r.stdout)
            assert.are.equal("", r.stderr, h.describe(r))
        end)

        it("the layer's holder that ends later keeps its write of the same file", function()
            local t = setup(c)
            local a = run_line(t, "mkdir -p ~/.cache && touch a-up && " .. wait_file("go")
                .. " && echo A > ~/.cache/same")
            local r = h.sh("cd " .. h.quote(t.ws) .. " && { " .. a .. " 2>a.err & } ; pa=$!; "
                .. wait_file("a-up") .. " && " .. run_line(t, "echo B > ~/.cache/same; echo B > ~/.cache/b")
                .. " && touch go; wait $pa")
            assert.are.equal(0, r.code, h.describe(r))
            r = ok(run(t, "cat ~/.cache/same ~/.cache/b"))
            assert.are.equal("A\nB\n", r.stdout)
            has(r.stderr, "wrote ~/.cache/same: the one that ended later is kept", r)
        end)

        it("a killed sandbox's home writes are merged by the next one", function()
            local t = setup(c)
            local s = session(t)
            local k = run_line(t, "mkdir -p ~/.cache && echo killed > ~/.cache/k && touch k-up && exec sleep 60")
            local r = h.sh("cd " .. h.quote(t.ws) .. " && { " .. k .. " & } ; pk=$!; " .. wait_file("k-up")
                .. "; kill -9 $pk; wait $pk; true")
            assert.are.equal(0, r.code, h.describe(r))
            -- its writes wait in a pending upper; a run beside the session sees them
            has(ok(cordon(t, { "home", "--diff" })).stdout, "added ~/.cache/k (pending)\n", nil)
            assert.are.equal("killed\n", ok(run(t, "cat ~/.cache/k")).stdout)
            ok(cordon(t, { "session", "stop", s }))
            idle(t)
            r = ok(run(t, "cat ~/.cache/k"))
            assert.are.equal("killed\n", r.stdout)
            assert.are.equal("", h.sh_ok("ls -A " .. h.quote(t.layer .. "/pending")))
        end)

        it("removals, a replaced folder, links, modes and fifos written beside a session are merged as written", function()
            local t = setup(c)
            ok(run(t, "mkdir -p ~/.cache/d ~/.cache/keep && echo x > ~/.cache/d/x && echo g > ~/.cache/gone"))
            local s = session(t)
            ok(run(t, "rm ~/.cache/gone && rm -rf ~/.cache/d && mkdir ~/.cache/d && echo z > ~/.cache/d/z"
                .. " && ln -s /etc/hostname ~/.cache/link && echo p > ~/.cache/p && chmod 640 ~/.cache/p"
                .. " && mkfifo ~/.cache/fifo && echo k > ~/.cache/keep/k"))
            ok(cordon(t, { "session", "stop", s }))
            idle(t)
            local r = ok(run(t, "ls -A ~/.cache/d; test ! -e ~/.cache/gone && echo gone; readlink ~/.cache/link;"
                .. " stat -c %a ~/.cache/p; test -p ~/.cache/fifo && echo fifo; cat ~/.cache/keep/k"))
            assert.are.equal("z\ngone\n/etc/hostname\n640\nfifo\nk\n", r.stdout)
            assert.are.equal("", h.sh_ok("ls -A " .. h.quote(t.layer .. "/pending")))
        end)

        it("a merge never follows a link of the layer out of it", function()
            local t = setup(c)
            local outside = h.tmpdir()
            if t.uid then h.sh_ok(("chown %d:%d %s"):format(t.uid, t.uid, h.quote(outside))) end
            -- the layer holds a link to a folder outside; a pending upper (as an ended sandbox
            -- leaves it) holds a folder of that name with a file in it
            ok(run(t, "mkdir -p ~/.cache && ln -s " .. h.quote(outside) .. " ~/.cache/evil"))
            local p = t.layer .. "/pending/p0000000000000001-00000001"
            h.sh_ok("mkdir -p " .. h.quote(p .. "/upper/.cache/evil") .. " " .. h.quote(p .. "/work")
                .. " && echo planted > " .. h.quote(p .. "/upper/.cache/evil/f") .. " && touch " .. h.quote(p .. "/lock")
                .. (t.uid and (" && chown -R %d:%d %s"):format(t.uid, t.uid, h.quote(t.layer .. "/pending")) or ""))
            -- followed, the file would land outside (the host's folder is writable to the caller)
            assert.are.equal(0, h.sh(("setpriv --reuid=%d --regid=%d --clear-groups test -w %s"):format(
                t.uid or 0, t.uid or 0, h.quote(outside))).code)
            local r = ok(run(t, "cat ~/.cache/evil/f; test -L ~/.cache/evil || echo folder"))
            assert.are.equal("planted\nfolder\n", r.stdout)
            assert.are.equal("", h.sh_ok("ls -A " .. h.quote(outside)))
        end)

        it("a pending upper that cannot be merged stays, shown beneath, in one line", function()
            local t = setup(c)
            -- the layer and an ended sandbox's upper both hold a chain of 130 folders, deeper
            -- than a merge goes (a folder only one side has moves whole)
            local chain = "~/.cache/deep" .. string.rep("/a", 130)
            ok(run(t, "mkdir -p " .. chain .. " && echo one > ~/.cache/one"))
            local p = t.layer .. "/pending/p0000000000000001-00000002"
            local deep = p .. "/upper/.cache/deep" .. string.rep("/a", 130)
            h.sh_ok("mkdir -p " .. h.quote(deep) .. " " .. h.quote(p .. "/work") .. " && echo deep > "
                .. h.quote(deep .. "/f") .. " && echo two > " .. h.quote(p .. "/upper/.cache/two")
                .. " && touch " .. h.quote(p .. "/lock")
                .. (t.uid and (" && chown -R %d:%d %s"):format(t.uid, t.uid, h.quote(t.layer .. "/pending")) or ""))
            local r = ok(run(t, "cat ~/.cache/one ~/.cache/two ~/.cache/deep" .. string.rep("/a", 130) .. "/f"))
            assert.are.equal("one\ntwo\ndeep\n", r.stdout)
            has(r.stderr, "could not be merged", r)
            has(r.stderr, "they stay pending, shown beneath", r)
            assert.are.equal(1, select(2, r.stderr:gsub("\n", "")), h.describe(r))
            assert.are.equal(0, h.sh("test -d " .. h.quote(p)).code)
        end)

        it("--reset is refused while any sandbox runs, and drops pending writes", function()
            local t = setup(c)
            local s = session(t)
            ok(run(t, "mkdir -p ~/.cache && echo run > ~/.cache/from-run"))
            local r = cordon(t, { "home", "--reset" })
            assert.are.equal(125, r.code, h.describe(r))
            has(r.stderr, "is using its home layer", r)
            ok(cordon(t, { "session", "stop", s }))
            idle(t)
            -- a pending upper nobody writes: --reset drops it with the layer
            assert.are.equal(0, h.sh("test -d " .. h.quote(t.layer .. "/pending")).code)
            ok(cordon(t, { "home", "--reset" }))
            r = ok(run(t, "test ! -e ~/.cache/from-run && echo gone"))
            assert.are.equal("gone\n", r.stdout)
        end)

        it("--reset is refused while a run that started beside a session still runs", function()
            local t = setup(c)
            local s = session(t)
            local a = run_line(t, "touch a-up; " .. wait_file("go"))
            local r = h.sh("cd " .. h.quote(t.ws) .. " && { " .. a .. " & } ; pa=$!; " .. wait_file("a-up")
                .. " && " .. h.command_line({ "session", "stop", s }, { home = t.home, env = t.env, uid = t.uid })
                .. " && " .. h.command_line({ "home", "--reset" }, { home = t.home, env = t.env, uid = t.uid })
                .. "; rc=$?; touch go; wait $pa; exit $rc")
            -- the session is gone, the run beside it still runs: refused
            assert.are.equal(125, r.code, h.describe(r))
            has(r.stderr, "is using its home layer", r)
        end)
    end)
end
