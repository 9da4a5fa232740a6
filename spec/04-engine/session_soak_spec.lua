-- spec/04-engine/session_soak_spec.lua — nothing left behind, nothing unbounded: twelve
-- sessions started and ended by their own timeouts (`--idle-timeout`, `--max-lifetime`), some
-- with a background job and a `setsid` daemon, some with a supervised job restarting at once,
-- one running each exec in a sandbox of its own (`--session-exec=false`) with a daemon left,
-- all end with their reason in `session list --all`, and leave no process (every descendant of
-- their controllers, recorded while they ran, by pid and start time), no mount in the host's
-- mount table naming their folders, no socket or state file in the session directory (only the
-- log and the record of why it ended), and no cgroup; that log and record go a day after the
-- end. Then a controller's memory: with jobs restarting, its VmRSS after more than a hundred
-- restarts is within 2 MiB of what it was after the first ones; with 32 readers following a
-- log, within 16 MiB, and the 33rd is refused in one line. Root and uid 65534 (sessions of its
-- own, in a home and runtime folder it owns). Bounded in count (12 sessions, 3 waves of 8 jobs,
-- 32 readers) and time: every wait is a poll with a generous bound; no timing is asserted.
local h = require("spec.helpers")
local cjson = require("cjson")

local NOBODY = 65534
local ok = h.ok
local ENDED_WITHIN = 60 -- seconds: a generous bound for twelve 1-3 s timeouts and their grace

local function is_root()
    return h.chomp(h.sh_ok("id -u")) == "0"
end

-- A sleep whose command line no other process has: its host pids are found by pgrep.
local function marked_sleep()
    return ("sleep 8%d.%d"):format(math.random(100, 999), math.random(100000, 999999))
end

local function pids_of(sleep)
    return h.pgrep("[s]" .. sleep:sub(2))
end

-- The start time of host pid (field 22 of its stat), nil when it is gone.
local function start_time(pid)
    local st = h.read_file("/proc/" .. pid .. "/stat")
    if not st then return nil end
    local rest = st:match("^%d+ %b() (.*)$")
    local fields = {}
    for f in rest:gmatch("%S+") do fields[#fields + 1] = f end
    return fields[20] -- field 22 of the whole line: state is field 3
end

-- Every live descendant of host pid root (its children's children too), into seen as
-- seen[pid] = start time.
local function descendants(root, seen)
    local tasks = h.sh("ls /proc/" .. root .. "/task 2>/dev/null").stdout
    for tid in tasks:gmatch("%d+") do
        local kids = h.read_file(("/proc/%d/task/%s/children"):format(root, tid)) or ""
        for kid in kids:gmatch("%d+") do
            kid = tonumber(kid)
            local t = start_time(kid)
            if t and not seen[kid] then
                seen[kid] = t
                descendants(kid, seen)
            end
        end
    end
    return seen
end

-- The cgroup folders of host pid (from /proc/PID/cgroup) that cordon made ("cordon-N"), as
-- paths under /sys/fs/cgroup, into dirs.
local function cordon_cgroups(pid, dirs)
    for line in (h.read_file("/proc/" .. pid .. "/cgroup") or ""):gmatch("[^\n]+") do
        local ctrls, path = line:match("^%d+:([^:]*):(.*)$")
        if path and path:match("/cordon%-%d+$") then
            if ctrls == "" then
                dirs["/sys/fs/cgroup" .. path] = true
                dirs["/sys/fs/cgroup/unified" .. path] = true
            else
                for c in ctrls:gmatch("[^,]+") do
                    dirs["/sys/fs/cgroup/" .. c:gsub("^name=", "") .. path] = true
                end
            end
        end
    end
end

-- Lines of the host's mount table that name one of the words.
local function mounts_naming(words)
    local found = {}
    for line in (h.read_file("/proc/self/mountinfo") or ""):gmatch("[^\n]+") do
        for _, w in ipairs(words) do
            if line:find(w, 1, true) then found[#found + 1] = line end
        end
    end
    return found
end

-- The caller's setting for sessions of uid (nil: the spec's own caller): a runtime folder shared
-- by all its sessions (so one `session list --all` sees them), and a profile `soak` that extends
-- coding with a memory limit, so that the sandbox gets a cgroup where this machine allows one.
local function caller(uid)
    local runtime = h.runtime_dir()
    local cfg = h.profile_dir("soak", 'return { extends = "coding", limits = { memory = "512M" } }\n')
    local c = { runtime = runtime, opts = { env = { XDG_RUNTIME_DIR = runtime, XDG_CONFIG_HOME = cfg } } }
    if uid then
        local home = h.tmpdir()
        h.sh_ok(("chown %d:%d %s %s"):format(uid, uid, h.quote(home), h.quote(runtime)))
        h.sh_ok(("chmod -R a+rX %s && chmod 755 %s"):format(h.quote(cfg), h.quote(cfg)))
        c.opts.uid, c.opts.home = uid, home
    end
    c.uid = uid
    return c
end

-- A detached session of c with flags, in a workspace of its own. Returns s (s.pid its
-- controller). Stopped at clean-up (its controller killed if left).
local function start(c, flags)
    local s = { name = "spec-soak-" .. h.token(), opts = {} }
    for k, v in pairs(c.opts) do s.opts[k] = v end
    s.opts.cwd = h.workspace(nil, c.uid)
    h.defer(function()
        h.cordon({ "session", "stop", s.name }, s.opts)
        if s.pid and not h.wait_for(function() return not h.is_controller(s.pid) end, 10) then
            os.execute("kill -9 " .. s.pid .. " 2>/dev/null")
        end
    end)
    local args = { "session", "start", s.name, "--detach", "--profile", "soak" }
    for _, f in ipairs(flags) do args[#args + 1] = f end
    ok(h.cordon(args, s.opts))
    local st = ok(h.cordon({ "session", "status", s.name, "--json" }, s.opts))
    s.pid = math.tointeger(cjson.decode(st.stdout).pid)
    assert(s.pid and h.is_controller(s.pid), h.describe(st))
    return s
end

local function cli(s, args)
    return h.cordon(args, s.opts)
end

-- A sanitizer build keeps what is freed in its quarantine, so its controller's VmRSS grows
-- with any churn and says nothing of a leak (ASan reports those itself, at the exit).
local function rss_says_nothing()
    return h.sanitizer_build()
end

-- The files of the session directory.
local function session_dir_files(c)
    local names = {}
    local r = h.sh("ls -A " .. h.quote(c.runtime .. "/cordon"))
    for n in r.stdout:gmatch("[^\n]+") do names[#names + 1] = n end
    return names
end

for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
    describe("session soak as " .. who.name, function()
        after_each(h.cleanup)

        local function need()
            if who.uid and not is_root() then h.skip("needs root to switch to uid 65534") end
        end

        it("12 sessions ended by their timeouts leave no process, mount, socket or cgroup", function()
            need()
            local c = caller(who.uid)
            local sessions, markers = {}, {}
            local procs, cgroups = {}, {}
            for i = 1, 12 do
                local kind = i % 4
                local s
                if i == 4 then
                    -- each exec in a sandbox of its own: one that left a daemon stays until the
                    -- lifetime ends the session
                    s = start(c, { "--max-lifetime", "2s", "--session-exec=false" })
                    s.reason = "lifetime"
                    local daemon = marked_sleep()
                    ok(cli(s, { "exec", s.name, "--", "setsid " .. daemon .. " </dev/null >/dev/null 2>&1 &" }))
                    s.markers = { daemon }
                elseif kind == 0 then
                    -- idle from its start
                    s = start(c, { "--idle-timeout", "1s" })
                    s.reason = "idle"
                elseif kind == 1 then
                    -- a job and a daemon, ended by its lifetime
                    s = start(c, { "--max-lifetime", "2s" })
                    s.reason = "lifetime"
                    local job, daemon = marked_sleep(), marked_sleep()
                    ok(cli(s, { "exec", s.name, "--background", "--", job }))
                    ok(cli(s, { "exec", s.name, "--", "setsid sh -c '" .. daemon .. "' </dev/null >/dev/null 2>&1 &" }))
                    s.markers = { job, daemon }
                elseif kind == 2 then
                    -- a supervised job that ends at once, restarted until the lifetime ends it
                    s = start(c, { "--max-lifetime", "2s" })
                    s.reason = "lifetime"
                    ok(cli(s, { "exec", s.name, "--background", "--restart", "always", "--backoff", "0.1s", "--", "true" }))
                else
                    -- a daemon is no job: the session is idle with it, and it goes with the session
                    s = start(c, { "--idle-timeout", "3s" })
                    s.reason = "idle"
                    local daemon = marked_sleep()
                    ok(cli(s, { "exec", s.name, "--", "setsid " .. daemon .. " </dev/null >/dev/null 2>&1 &" }))
                    s.markers = { daemon }
                end
                for _, m in ipairs(s.markers or {}) do markers[#markers + 1] = m end
                sessions[#sessions + 1] = s
                -- what runs under it now: its init, the job, the daemon (a daemon is re-parented
                -- to init, a descendant still), and their cgroups
                descendants(s.pid, procs)
                for _, m in ipairs(s.markers or {}) do
                    for _, p in ipairs(pids_of(m)) do
                        procs[p] = procs[p] or start_time(p)
                        cordon_cgroups(p, cgroups)
                    end
                end
            end

            -- every one ends, by itself
            for _, s in ipairs(sessions) do
                assert(h.wait_for(function() return not h.is_controller(s.pid) end, ENDED_WITHIN),
                    "session " .. s.name .. " did not end within " .. ENDED_WITHIN .. " s")
            end
            local list = cjson.decode(ok(h.cordon({ "session", "list", "--all", "--json" }, sessions[1].opts)).stdout)
            assert.are.same({}, list.sessions)
            local reasons = {}
            for _, e in ipairs(list.ended) do reasons[e.name] = e.reason end
            for _, s in ipairs(sessions) do
                assert.are.equal(s.reason, reasons[s.name], "session " .. s.name .. ": " .. cjson.encode(list))
            end

            -- no process of theirs: the marked commands, and every descendant seen (by pid and
            -- start time, so a pid used again by another process does not count)
            assert(h.wait_for(function()
                for _, m in ipairs(markers) do
                    if #pids_of(m) > 0 then return false end
                end
                return true
            end, 10), "a job or daemon outlived its session")
            local left = {}
            assert(h.wait_for(function()
                left = {}
                for pid, t in pairs(procs) do
                    if start_time(pid) == t then
                        left[#left + 1] = pid .. " " .. (h.read_file("/proc/" .. pid .. "/cmdline") or ""):gsub("%z", " ")
                    end
                end
                return #left == 0
            end, 10), "processes of the sessions outlived them:\n" .. table.concat(left, "\n"))
            for _, s in ipairs(sessions) do
                assert.is_false(h.alive(s.pid), "the controller of " .. s.name .. " is left")
            end

            -- no mount naming their folders or names in the host's mount table
            local words = { c.runtime }
            for _, s in ipairs(sessions) do
                words[#words + 1] = s.opts.cwd
                words[#words + 1] = s.name
            end
            assert.are.same({}, mounts_naming(words))

            -- the session directory keeps each one's log and its record (why it ended), and
            -- nothing else: no socket, no state file
            local kept = {}
            for _, s in ipairs(sessions) do
                kept[s.name .. ".log"], kept[s.name .. ".record.json"] = true, true
            end
            for _, f in ipairs(session_dir_files(c)) do
                assert.is_true(kept[f] ~= nil, "left in the session directory: " .. f)
            end

            -- no cgroup (where the machine gave one)
            for dir in pairs(cgroups) do
                assert.is_nil(h.read_file(dir .. "/cgroup.procs"), "cgroup left: " .. dir)
            end
        end)

        it("an ended session's record and log go a day after its end", function()
            need()
            local c = caller(who.uid)
            local s = start(c, { "--idle-timeout", "1s" })
            assert(h.wait_for(function() return not h.is_controller(s.pid) end, ENDED_WITHIN), "the session did not end")
            local dir = c.runtime .. "/cordon/"
            assert.is_string(h.read_file(dir .. s.name .. ".log"))
            assert.matches("reason: idle", ok(cli(s, { "session", "status", s.name })).stdout, 1, true)
            -- its end two days ago, as the record says it
            local rec = cjson.decode(h.read_file(dir .. s.name .. ".record.json"))
            rec.ended = rec.ended - 2 * 86400
            h.write_file(dir .. s.name .. ".record.json", cjson.encode(rec))
            local list = cjson.decode(ok(cli(s, { "session", "list", "--all", "--json" })).stdout)
            assert.are.same({}, list.ended)
            assert.is_nil(h.read_file(dir .. s.name .. ".record.json"))
            assert.is_nil(h.read_file(dir .. s.name .. ".log"))
            assert.are.same({}, session_dir_files(c))
        end)

        it("jobs restarting more than a hundred times keep the controller's memory bounded", function()
            need()
            local c = caller(who.uid)
            local s = start(c, {})
            local function rss_kib()
                local st = h.read_file("/proc/" .. s.pid .. "/status") or ""
                return tonumber(st:match("\nVmRSS:%s*(%d+) kB"))
            end
            local function restarts()
                local r = cjson.decode(ok(cli(s, { "jobs", s.name, "--json" })).stdout)
                local n, live = 0, 0
                for _, j in ipairs(r.jobs) do
                    n = n + (j.restarts or 0)
                    if j.state == "running" or j.state == "restarting" or j.state == "starting" then live = live + 1 end
                end
                return n, live
            end
            -- the wait doubles from 0.1 s at each restart, so one job reaches a hundred restarts
            -- only after hours: a job restarting for ever, and waves of seven jobs of six restarts
            -- each (the eight live jobs a session may have), one after the other
            ok(cli(s, { "exec", s.name, "--background", "--restart", "always", "--backoff", "0.1s", "--", "true" }))
            local function wave()
                local before = restarts()
                for _ = 1, 7 do
                    ok(cli(s, { "exec", s.name, "--background", "--restart", "always:6", "--backoff", "0.1s", "--", "true" }))
                end
                assert(h.wait_for(function()
                    local n, live = restarts()
                    return n >= before + 42 and live == 1
                end, 120), "a wave of restarts did not end")
            end
            wave()
            local n10 = restarts()
            assert.is_true(n10 >= 10, "restarts: " .. n10)
            local base = rss_kib()
            assert(base, "no VmRSS for the controller")
            wave()
            wave()
            local n100 = restarts()
            assert.is_true(n100 >= 100, "restarts: " .. n100)
            local after = rss_kib()
            assert.is_true(rss_says_nothing() or after <= base + 2048,
                ("VmRSS grew from %d KiB after %d restarts to %d KiB after %d"):format(base, n10, after, n100))
        end)

        it("a log followed by many readers: the one past 32 is refused in one line, memory bounded", function()
            need()
            local c = caller(who.uid)
            local s = start(c, {})
            local sock = c.runtime .. "/cordon/" .. s.name .. ".sock"
            local function rss_kib()
                local st = h.read_file("/proc/" .. s.pid .. "/status") or ""
                return tonumber(st:match("\nVmRSS:%s*(%d+) kB"))
            end
            local r = ok(cli(s, { "exec", s.name, "--background", "--",
                "while [ ! -e go ]; do echo line; sleep 0.2; done" }))
            local pid = r.stdout:match("PID: (%d+)")
            assert(pid, h.describe(r))
            local base = rss_kib()
            local dir = h.tmpdir()
            if who.uid then h.sh_ok(("chown %d %s"):format(who.uid, h.quote(dir))) end
            local as = who.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(who.uid, who.uid) or ""
            -- 32 readers, each following the log as the job writes it
            for i = 1, 32 do
                h.spawn(("sh -c %s"):format(h.quote(("exec %scurl -sSN --max-time 120 --unix-socket %s %s >%s/%d"):format(
                    as, h.quote(sock), h.quote("http://cordon/v1/jobs/" .. pid .. "/log?follow=1"), h.quote(dir), i))))
            end
            assert(h.wait_for(function()
                for i = 1, 32 do
                    if not (h.read_file(("%s/%d"):format(dir, i)) or ""):find("line\n", 1, true) then return false end
                end
                return true
            end, 60), "the 32 readers did not all get the log")
            -- one more: one line and 125, the limit named; the API says 429
            r = cli(s, { "logs", s.name, pid, "--follow" })
            assert.are.equal(125, r.code, h.describe(r))
            assert.are.equal(1, select(2, r.stderr:gsub("\n", "")), h.describe(r))
            assert.matches("already streams 32 logs, its limit", r.stderr, 1, true)
            local a = h.api(sock, "GET", "/v1/jobs/" .. pid .. "/log?follow=1", nil, { uid = who.uid })
            assert.are.equal(429, a.status, h.describe_api(a))
            local after = rss_kib()
            assert.is_true(rss_says_nothing() or after <= base + 16384,
                ("VmRSS grew from %d KiB to %d KiB with 32 readers"):format(base, after))
            -- the job ends: its readers end with it, and a reader is welcome again
            h.write_file(s.opts.cwd .. "/go", "")
            assert(h.wait_for(function() return #h.pgrep("[c]url -sSN --max-time 120 --unix-socket " .. sock) == 0 end, 60),
                "the readers did not end with the job")
            r = ok(cli(s, { "logs", s.name, pid, "--follow", "--tail", "1" }))
            assert.are.equal("line\n", r.stdout)
        end)
    end)
end
