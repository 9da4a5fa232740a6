-- spec/04-engine/session_spec.lua — long-lived sessions: `cordon session start`, the CLI
-- clients (`exec`, `jobs`, `logs`, `stop`, `cancel`, `session list|status|stop`) and the raw
-- control API (docs/session-api.md) through curl on the Unix socket. Each fact is checked the
-- way a user would: what the CLI prints and returns, what the API answers, and which
-- processes are left on the host afterwards (pgrep for unique `sleep` arguments).
--
-- Every spec uses its own XDG_RUNTIME_DIR (mode 0700), unique session names, and stops what
-- it starts (h.session_start registers `cordon session stop` plus a SIGKILL backstop of the
-- controller). Waits are bounded; timings are never asserted beyond hang-catching bounds.
-- Drives the built binary ($CORDON_BIN); runs as root (one case drops to uid 65534).
local h = require("spec.helpers")
local cjson = require("cjson")

local NOBODY = 65534

-- A `sleep` argument no other process on the host has: "BASE.DIGITS".
local function sleep_arg(base)
    return ("%d.%d"):format(base or 300, tonumber(h.token():sub(1, 8), 16))
end

-- Host pids of `sleep ARG` (anchored, so the pgrep's own shell does not count).
local function sleeping(arg)
    return h.pgrep("^sleep " .. arg .. "$")
end

local function gone(arg, seconds)
    return h.wait_for(function() return #sleeping(arg) == 0 end, seconds or 15)
end

local function appears(arg, seconds)
    return h.wait_for(function() return #sleeping(arg) > 0 end, seconds or 15)
end

-- Kills leftovers of `sleep ARG` on the host at clean-up (the session should have done it).
local function reap_sleep(arg)
    h.defer(function()
        for _, p in ipairs(sleeping(arg)) do os.execute("kill -9 " .. p .. " 2>/dev/null") end
    end)
end

local ok = h.ok

-- Starts a session with a unique name; returns the session table of h.session_start.
local function start(opts)
    opts = opts or {}
    local name = opts.name or ("spec-" .. h.token())
    return h.session_start(name, opts)
end

-- Runs the CLI (`cordon ARGS...`) against session s's runtime directory.
local function cli(s, args, opts)
    opts = opts or {}
    local env = {}
    for k, v in pairs(s.env) do env[k] = v end
    for k, v in pairs(opts.env or {}) do env[k] = v end
    return h.cordon(args, { cwd = s.cwd, env = env, timeout = opts.timeout })
end

-- `cordon exec NAME [flags...] -- CMD`.
local function exec(s, cmd, flags, opts)
    local args = { "exec", s.name }
    for _, f in ipairs(flags or {}) do args[#args + 1] = f end
    args[#args + 1] = "--"
    args[#args + 1] = cmd
    return cli(s, args, opts)
end

-- The exact message of a background exec for pid.
local function bg_message(pid)
    return ("Background command started.\nPID: %d\nLog: /tmp/cordon/processes/%d.log\nStop: kill -TERM -- -%d\n")
        :format(pid, pid, pid)
end

-- `cordon exec --background`: asserts success and the message; returns the pid.
local function background(s, cmd, flags)
    local f = { "--background" }
    for _, x in ipairs(flags or {}) do f[#f + 1] = x end
    local r = ok(exec(s, cmd, f))
    local pid = tonumber(r.stdout:match("^Background command started%.\nPID: (%d+)\n"))
    assert(pid, "no PID in the background message\n" .. h.describe(r))
    assert.are.equal(bg_message(pid), r.stdout)
    return pid, r
end

-- `cordon jobs NAME --json` decoded: the list of jobs.
local function jobs(s)
    local r = ok(cli(s, { "jobs", s.name, "--json" }))
    local okd, v = pcall(cjson.decode, r.stdout)
    assert(okd and type(v) == "table" and type(v.jobs) == "table", "jobs --json: not JSON\n" .. h.describe(r))
    return v.jobs
end

local function job(s, pid)
    for _, j in ipairs(jobs(s)) do
        if j.pid == pid then return j end
    end
    return nil
end

-- Waits until job pid is no longer running; returns it (or the last seen state).
local function ended_job(s, pid, seconds)
    local j = h.wait_for(function()
        local x = job(s, pid)
        return x and x.state ~= "running" and x
    end, seconds or 15)
    return j or job(s, pid)
end

local function api(s, method, path, body, opts)
    return h.api(s.socket, method, path, body, opts)
end

local function exists(path)
    return h.sh("test -e " .. h.quote(path)).code == 0
end

local function esc(s) return (s:gsub("%p", "%%%0")) end

describe("cordon session: commands share one sandbox", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("shares /tmp between execs (and it is not the host's /tmp)", function()
        local s = start()
        local tok = h.token()
        local file = "/tmp/cordon-spec-shared-" .. tok
        ok(exec(s, "echo " .. tok .. " > " .. file))
        local r = ok(exec(s, "cat " .. file))
        assert.are.equal(tok .. "\n", r.stdout)
        assert.is_false(exists(file), "the session's /tmp leaked to the host")
    end)

    it("a loopback service started in the background by one exec answers the next", function()
        local s = start()
        local tok = h.token()
        h.write_file(s.cwd .. "/probe.txt", "served-" .. tok .. "\n")
        local port = 20000 + tonumber(tok:sub(1, 4), 16) % 10000
        local pid = background(s, ("%s -m http.server --bind 127.0.0.1 %d"):format(h.python, port))
        local r = ok(exec(s, ("for i in $(seq 100); do curl -sf --max-time 5 http://127.0.0.1:%d/probe.txt && exit 0; "
            .. "sleep 0.1; done; exit 1"):format(port)))
        assert.are.equal("served-" .. tok .. "\n", r.stdout)
        local j = job(s, pid)
        assert.are.equal("running", j and j.state, "the server job is not running")
    end)

    it("does not leak cd, shell variables, exported variables, aliases or functions", function()
        local s = start()
        local tok = h.token()
        local var, fn = "CORDON_SPEC_VAR_" .. tok, "cordon_spec_fn_" .. tok
        -- (bash expands an alias only on lines read after its definition: two lines)
        local r = ok(exec(s, ("cd / && %s=1 && export %s_X=2 && shopt -s expand_aliases && alias ll%s='echo aliased' && "
            .. "%s() { echo func; }\npwd && echo \"[$%s][$%s_X]\" && ll%s && %s"):format(var, var, tok, fn, var, var, tok, fn)))
        assert.are.equal("/\n[1][2]\naliased\nfunc\n", r.stdout, "the first exec did not set things up")
        r = exec(s, ("pwd; echo \"[$%s][$%s_X]\"; alias; type %s >/dev/null 2>&1 || echo no-function")
            :format(var, var, fn))
        assert.are.equal(s.cwd .. "\n[][]\nno-function\n", r.stdout, h.describe(r))
    end)

    it("starts each exec confined alike: a child of init, in a session of its own", function()
        local s = start()
        local probe = "grep -E '^(Cap|NoNewPrivs|Seccomp|PPid)' /proc/$$/status; cat /proc/$$/limits; pwd; "
            .. "ls /proc/self/fd; id; umask; trap -p; [ \"$(ps -o pgid= -p $$)\" -eq $$ ] && "
            .. "[ \"$(ps -o sid= -p $$)\" -eq $$ ] && echo own-session; "
            .. "cat /proc/$$/environ >/dev/null && echo dumpable"
        local first = ok(exec(s, probe))
        assert.matches("own%-session\ndumpable\n$", first.stdout)
        assert.matches("PPid:%s+1\n", first.stdout)
        assert.matches("NoNewPrivs:%s+1\n", first.stdout)
        assert.matches("Seccomp:%s+2\n", first.stdout)
        for _ = 1, 4 do assert.are.equal(first.stdout, ok(exec(s, probe)).stdout) end
    end)

    -- Each exec's process is made by a thread of init that carries the confinement
    -- (engine/sandbox/spawner.h), not confined on its own way to exec as cordon run's command
    -- is: what the command ends up with must be the same, whoever started the session.
    it("confines each exec as cordon run confines its command, with no signal ignored though the starter ignores SIGPIPE", function()
        local ws, runtime, name = h.workspace(), h.runtime_dir(), "spec-" .. h.token()
        local s = { name = name, runtime = runtime, socket = h.session_socket(runtime, name), cwd = ws,
                    env = { XDG_RUNTIME_DIR = runtime } }
        h.defer(function() h.session_reap(s) end)
        local outside = h.sh("trap '' PIPE; grep SigIgn /proc/self/status")
        local ignored = tonumber(outside.stdout:match("SigIgn:%s+(%x+)"), 16)
        assert.truthy(ignored and ignored & 0x1000 ~= 0, "the starter must ignore SIGPIPE\n" .. h.describe(outside))
        ok(h.sh("trap '' PIPE; cd " .. h.quote(ws) .. " && XDG_RUNTIME_DIR=" .. h.quote(runtime) .. " "
            .. h.quote(h.bin) .. " session start " .. name .. " --detach"))
        local probe = "grep -E '^(Uid|Gid|Groups|Cap|NoNewPrivs|Seccomp|SigIgn|SigBlk)' /proc/$$/status; "
            .. "cat /proc/$$/limits; pwd; ls /proc/self/fd; yes | head -c 4 >/dev/null; echo \"pipe ${PIPESTATUS[0]}\""
        local run = ok(h.cordon({ "run", "--", "bash", "-c", probe }, { cwd = ws }))
        assert.matches("Seccomp_filters:%s+2\n", run.stdout)
        assert.matches("pipe 141\n", run.stdout) -- yes ended by SIGPIPE, not EPIPE
        -- limits.pids is a cgroup's where the controller could make one and RLIMIT_NPROC's where
        -- it could not (controller_setup.c): which one a run and a session got may differ with
        -- the machine's cgroups at that moment (both enforce it), so that one line is left out
        local function same_limits(out)
            return (out:gsub("Max processes[^\n]*\n", "Max processes\n"))
        end
        for _ = 1, 3 do assert.are.equal(same_limits(run.stdout), same_limits(ok(exec(s, probe)).stdout)) end
        local unshared = exec(s, "unshare -U true && echo unshared")
        assert.are_not.equal(0, unshared.code, h.describe(unshared))
        assert.matches("Operation not permitted", unshared.stderr .. unshared.stdout)
    end)

    it("2,000 short-lived children leave no zombie behind", function()
        local s = start()
        ok(exec(s, "for i in $(seq 2000); do (true &); done; sleep 1", nil, { timeout = 240 }))
        local r = ok(exec(s, "ps -eo pid=,stat=,comm="))
        local lines, zombies = 0, {}
        for line in r.stdout:gmatch("[^\n]+") do
            lines = lines + 1
            local st = line:match("^%s*%d+%s+(%S+)")
            if st and st:match("^Z") then zombies[#zombies + 1] = line end
        end
        assert.is_true(lines >= 2, "ps listed nothing\n" .. h.describe(r))
        assert.are.same({}, zombies, h.describe(r))
    end)
end)

describe("cordon session: background jobs", function()
    after_each(h.cleanup)

    it("prints the exact four-line message; logs shows the output; kill -TERM from a later exec stops it", function()
        local s = start()
        local tok = h.token()
        local arg = sleep_arg(300)
        reap_sleep(arg)
        local pid = background(s, ("echo out-%s; echo err-%s >&2; sleep %s"):format(tok, tok, arg))
        assert.is_true(appears(arg), "the job's sleep never ran on the host")
        local logs = h.wait_for(function()
            local r = cli(s, { "logs", s.name, tostring(pid) })
            return r.code == 0 and r.stdout:find("err-" .. tok, 1, true) and r
        end, 15)
        assert.truthy(logs, "cordon logs never showed the output")
        assert.are.equal(("out-%s\nerr-%s\n"):format(tok, tok), logs.stdout)
        -- the same log, seen from inside at the path the message named
        assert.are.equal(logs.stdout, ok(exec(s, ("cat /tmp/cordon/processes/%d.log"):format(pid))).stdout)

        ok(exec(s, ("kill -TERM -- -%d"):format(pid)))
        assert.is_true(gone(arg), "kill -TERM -- -PID did not end the job's group")
        local j = ended_job(s, pid)
        assert.are.equal("exited", j and j.state, cjson.encode(j or {}))
        assert.are.equal(15, j.signal, cjson.encode(j))
        assert.are.equal(143, j.exit_code, cjson.encode(j))
    end)

    it("cordon stop ends a job that traps TERM (KILL after the grace period): stopped, signal 9", function()
        local s = start()
        local arg = sleep_arg(1)
        reap_sleep(arg)
        local pid = background(s, ("trap 'echo got-term' TERM; echo ready; while :; do sleep %s; done"):format(arg))
        local ready = h.wait_for(function()
            return cli(s, { "logs", s.name, tostring(pid) }).stdout:find("ready\n", 1, true)
        end, 15)
        assert.truthy(ready, "the job never became ready")
        local r = ok(cli(s, { "stop", s.name, tostring(pid) }))
        assert.is_true(gone(arg, 5), "the job's group survived cordon stop")
        local j = job(s, pid)
        assert.are.equal("stopped", j and j.state, h.describe(r) .. "\n" .. cjson.encode(j or {}))
        assert.are.equal(9, j.signal, cjson.encode(j))
        assert.are.equal(137, j.exit_code, cjson.encode(j))
        -- TERM came first (the trap ran), KILL ended it
        assert.matches("got%-term", ok(cli(s, { "logs", s.name, tostring(pid) })).stdout)
    end)

    it("refuses a 9th running background job, naming the running ones; accepts one after a stop", function()
        local s = start()
        local pids, args = {}, {}
        for i = 1, 8 do
            args[i] = sleep_arg(300 + i)
            reap_sleep(args[i])
            pids[i] = background(s, "sleep " .. args[i])
        end
        local ninth = sleep_arg(399)
        reap_sleep(ninth)
        local r = exec(s, "sleep " .. ninth, { "--background" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.are.equal("", r.stdout, h.describe(r))
        for _, pid in ipairs(pids) do
            assert.truthy(r.stderr:find("%f[%d]" .. pid .. "%f[%D]"), "the refusal does not name " .. pid .. "\n" .. h.describe(r))
        end
        -- the API says the same with a 409 and a JSON error
        local a = api(s, "POST", "/v1/exec", cjson.encode({ command = "sleep " .. ninth, background = true }))
        assert.are.equal(409, a.status, h.describe_api(a))
        assert.truthy(a.json and type(a.json.error) == "string" and a.json.error:find("%f[%d]" .. pids[8] .. "%f[%D]"),
            h.describe_api(a))
        assert.are.same({}, sleeping(ninth), "the refused job runs anyway")
        ok(cli(s, { "stop", s.name, tostring(pids[1]) }))
        assert.is_true(gone(args[1]), "stop did not end job " .. pids[1])
        local pid = background(s, "sleep " .. ninth)
        assert.is_true(appears(ninth))
        assert.are.equal("running", job(s, pid).state)
    end)

    it("cordon cancel TURN stops that turn's groups (foreground leftovers too), not other turns'", function()
        local s = start()
        local a1, a2, a3 = sleep_arg(401), sleep_arg(402), sleep_arg(403)
        for _, a in ipairs({ a1, a2, a3 }) do reap_sleep(a) end
        local p1 = background(s, "sleep " .. a1, { "--turn", "t1" })
        local p2 = background(s, "sleep " .. a2, { "--turn", "t2" })
        -- a foreground exec of turn t2 that leaves a process behind in its group
        ok(exec(s, "sleep " .. a3 .. " &", { "--turn", "t2" }))
        for _, a in ipairs({ a1, a2, a3 }) do assert.is_true(appears(a), "sleep " .. a .. " never ran") end

        local r = ok(cli(s, { "cancel", s.name, "t2" }))
        assert.is_true(gone(a2), "cancel t2 left its background job\n" .. h.describe(r))
        assert.is_true(gone(a3), "cancel t2 left the foreground exec's leftover\n" .. h.describe(r))
        assert.are.equal(1, #sleeping(a1), "cancel t2 killed turn t1's job\n" .. h.describe(r))
        local j1, j2 = job(s, p1), job(s, p2)
        assert.are.equal("running", j1 and j1.state)
        assert.are.equal("t1", j1.turn)
        assert.are.equal("stopped", j2 and j2.state, cjson.encode(j2 or {}))
        assert.are.equal("t2", j2.turn)
    end)

    it("another client process sees the jobs (CLI, JSON, curl); a client that goes away does not stop its command", function()
        local s = start()
        local a1, a2 = sleep_arg(501), sleep_arg(502)
        reap_sleep(a1)
        reap_sleep(a2)
        local pid = background(s, "sleep " .. a1)
        -- another process: the table
        local r = ok(cli(s, { "jobs", s.name }))
        assert.truthy(r.stdout:find("%f[%d]" .. pid .. "%f[%D].-running.-sleep " .. esc(a1)), h.describe(r))
        -- another: JSON
        local j = job(s, pid)
        assert.are.equal("sleep " .. a1, j and j.command)
        assert.are.equal(true, j.background)
        assert.are.equal("running", j.state)
        -- and the raw API
        local a = api(s, "GET", "/v1/jobs")
        assert.are.equal(200, a.status, h.describe_api(a))
        local found
        for _, x in ipairs(a.json.jobs) do if x.pid == pid then found = x end end
        assert.are.equal("running", found and found.state, h.describe_api(a))
        -- session list and status, from yet other processes
        r = ok(cli(s, { "session", "list" }))
        assert.truthy(r.stdout:find("\n" .. esc(s.name) .. "%s+" .. s.pid .. "%s"), h.describe(r))
        r = ok(cli(s, { "session", "status", s.name }))
        assert.matches("name: " .. esc(s.name) .. "\n", r.stdout)
        assert.matches("\npid: " .. s.pid .. "\n", r.stdout)
        assert.matches("\nworkspace: " .. esc(s.cwd) .. "\n", r.stdout)
        assert.matches("\njobs_running: 1\n", r.stdout)

        -- a foreground exec whose client is killed keeps running and is listed by others
        local line = h.command_line({ "exec", s.name, "--", "sleep " .. a2 }, { env = s.env, timeout = false })
        local client = h.spawn("sh -c " .. h.quote("cd " .. h.quote(s.cwd) .. " && exec " .. line))
        assert.is_true(appears(a2), "the foreground exec never started")
        os.execute("kill -9 " .. client)
        assert.is_true(h.wait_for(function() return not h.alive(client) end, 5))
        os.execute("sleep 0.5")
        assert.are.equal(1, #sleeping(a2), "killing the client killed the command")
        local fg
        for _, x in ipairs(jobs(s)) do if x.command == "sleep " .. a2 then fg = x end end
        assert.truthy(fg, "the running foreground command is not in jobs")
        assert.are.equal(false, fg.background)
        assert.are.equal("running", fg.state)
    end)

    it("persists the job state: NAME.jobs.json beside the socket lists a running job", function()
        local s = start()
        local arg = sleep_arg(601)
        reap_sleep(arg)
        local pid = background(s, "sleep " .. arg, { "--turn", "persist" })
        local path = s.runtime .. "/cordon/" .. s.name .. ".jobs.json"
        local j = h.wait_for(function()
            local text = h.read_file(path)
            if not text then return nil end
            local okd, v = pcall(cjson.decode, text)
            assert(okd, path .. " is not valid JSON: " .. tostring(v) .. "\n" .. text)
            for _, x in ipairs(v.jobs or {}) do if x.pid == pid then return x end end
        end, 10)
        assert.truthy(j, path .. " does not list job " .. pid .. ":\n" .. tostring(h.read_file(path)))
        assert.are.equal("sleep " .. arg, j.command)
        assert.are.equal("running", j.state)
        assert.are.equal("persist", j.turn)
        assert.are.equal("600", h.chomp(h.sh_ok("stat -c %a " .. h.quote(path))))
        -- rewritten at every change: the stop shows there too
        ok(cli(s, { "stop", s.name, tostring(pid) }))
        local st = h.wait_for(function()
            local okd, v = pcall(cjson.decode, h.read_file(path) or "")
            for _, x in ipairs(okd and v.jobs or {}) do
                if x.pid == pid and x.state ~= "running" then return x.state end
            end
        end, 10)
        assert.are.equal("stopped", st, tostring(h.read_file(path)))
    end)

    it("caps a background job's log at session.log_cap, keeping the end, with a dropped marker", function()
        local config = h.tmpdir()
        local cap = 65536
        h.sh_ok("mkdir -p " .. h.quote(config .. "/cordon/profiles"))
        h.write_file(config .. "/cordon/profiles/speclogcap.lua",
            ('return { extends = "coding", session = { log_cap = %d } }\n'):format(cap))
        local s = start({ flags = { "--profile", "speclogcap" }, env = { XDG_CONFIG_HOME = config } })
        assert.are.equal("speclogcap", s.info.profile)
        local tok = h.token()
        -- 24,000 lines of 43 bytes (~1 MB), then a last line
        local pad = ("%s-%s-%s"):format(tok, tok, tok:sub(1, 4))
        local pid = background(s, ('for i in $(seq 24000); do printf "line %%06d %%s\\n" $i %s; done; echo last-%s')
            :format(pad, tok))
        local total = 24000 * #("line 000001 " .. pad .. "\n") + #("last-" .. tok .. "\n")
        local j = ended_job(s, pid, 60)
        assert.are.equal("exited", j and j.state, cjson.encode(j or {}))
        assert.are.equal(0, j.exit_code)
        local r = ok(cli(s, { "logs", s.name, tostring(pid) }))
        local log = r.stdout
        assert.is_true(#log <= cap + 200, ("log of %d bytes, cap %d"):format(#log, cap))
        assert.is_true(#log > 1000, "log almost empty:\n" .. log)
        local marker, dropped = log:match("^(%[cordon: (%d+) earlier bytes of this log were dropped%]\n)")
        assert.truthy(marker, "the log does not start with the dropped marker:\n" .. log:sub(1, 300))
        local tail = ("line 023999 %s\nline 024000 %s\nlast-%s\n"):format(pad, pad, tok)
        assert.are.equal(tail, log:sub(-#tail), "the log does not end with the last lines")
        -- the marker says how many bytes of the output are missing: all but what is kept
        assert.are.equal(total - (#log - #marker), tonumber(dropped), "the marker's count is off")
        -- the file inside the sandbox is capped too
        local size = tonumber(ok(exec(s, ("wc -c < /tmp/cordon/processes/%d.log"):format(pid))).stdout)
        assert.is_true(size and size <= cap + 200, "log file of " .. tostring(size) .. " bytes")
    end)

    it("serves a 40 MB log whole, streamed: the controller's peak memory grows by far less", function()
        local s = start()
        local function hwm_kib()
            return tonumber((h.read_file("/proc/" .. s.pid .. "/status") or ""):match("VmHWM:%s*(%d+) kB"))
        end
        -- 40,000,000 bytes: 400,000 numbered lines of 100 bytes
        local pid = background(s, [[awk 'BEGIN { z = sprintf("%093d", 0); ]]
            .. [[for (i = 0; i < 400000; i++) printf "%06d%s\n", i, z }']])
        local j = ended_job(s, pid, 120)
        assert.are.equal("exited", j and j.state, cjson.encode(j or {}))
        local before = hwm_kib()
        local r = h.sh(("curl -sS --max-time 60 --unix-socket %s http://cordon/v1/jobs/%d/log | "
            .. "{ wc -c; } && curl -sS --max-time 60 --unix-socket %s http://cordon/v1/jobs/%d/log | tail -n 1")
            :format(h.quote(s.socket), pid, h.quote(s.socket), pid))
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal(("40000000\n399999%s\n"):format(("0"):rep(93)), r.stdout)
        local grown = hwm_kib() - before
        -- before streaming, one request held the log twice (80 MB); now a chunk and the queue
        assert.is_true(grown < 16 * 1024, ("peak RSS grew by %d KiB"):format(grown))
    end)
end)

describe("cordon session: foreground exec", function()
    after_each(h.cleanup)

    it("stdout and stderr arrive on their own streams; the exit code is the command's", function()
        local s = start()
        local r = exec(s, "echo to-out; echo to-err >&2; exit 7")
        assert.are.equal(7, r.code, h.describe(r))
        assert.are.equal("to-out\n", r.stdout)
        assert.are.equal("to-err\n", r.stderr)
        assert.are.equal(0, exec(s, "true").code)
    end)

    it("a command killed by signal N gives 128+N", function()
        local s = start()
        local r = exec(s, "kill -KILL $$")
        assert.are.equal(137, r.code, h.describe(r))
        r = exec(s, "kill -TERM $$")
        assert.are.equal(143, r.code, h.describe(r))
    end)

    it("non-UTF-8 bytes survive on both streams", function()
        local s = start()
        local line = "cd " .. h.quote(s.cwd) .. " && "
            .. h.command_line({ "exec", s.name, "--", "printf '\\377\\376'; printf 'a\\377b' >&2" }, { env = s.env })
        local r = h.sh("{ " .. line .. "; } 2>/dev/null | od -An -tx1")
        assert.are.equal("ff fe", (h.chomp(r.stdout):gsub("^%s+", "")), h.describe(r))
        r = h.sh("{ " .. line .. "; } 2>&1 >/dev/null | od -An -tx1")
        assert.are.equal("61 ff 62", (h.chomp(r.stdout):gsub("^%s+", "")), h.describe(r))
    end)

    it("--timeout: exit 124, a message, and the command's group is gone", function()
        local s = start()
        local arg = sleep_arg(701)
        reap_sleep(arg)
        local r = exec(s, ("sleep %s & sleep %s; echo not-reached"):format(arg, arg), { "--timeout", "1" })
        assert.are.equal(124, r.code, h.describe(r))
        assert.matches("cordon: [^\n]*timed out", r.stderr)
        assert.is_nil(r.stdout:find("not-reached"), h.describe(r))
        assert.is_true(gone(arg), "the timed-out command's sleep is still running")
    end)

    it("--timeout may follow the shell string", function()
        local s = start()
        local r = cli(s, { "exec", s.name, "--", "sleep 30", "--timeout", "1" })
        assert.are.equal(124, r.code, h.describe(r))
    end)

    it("a background exec with --timeout is refused with a clear message (CLI and API)", function()
        local s = start()
        local arg = sleep_arg(702)
        reap_sleep(arg)
        local r = exec(s, "sleep " .. arg, { "--background", "--timeout", "5" })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.matches("timeout", r.stderr)
        assert.matches("background", r.stderr)
        local a = api(s, "POST", "/v1/exec", cjson.encode({ command = "sleep " .. arg, background = true, timeout = 5 }))
        assert.are.equal(400, a.status, h.describe_api(a))
        assert.are.equal("string", type(a.json and a.json.error), h.describe_api(a))
        assert.matches("timeout", a.json.error)
        os.execute("sleep 0.3")
        assert.are.same({}, sleeping(arg), "the refused command runs anyway")
    end)
end)

describe("cordon session: ending a session ends everything in it", function()
    after_each(h.cleanup)

    it("session stop kills setsid'd and double-forked daemons and removes the socket", function()
        local s = start()
        local a1, a2 = sleep_arg(3000), sleep_arg(3001)
        reap_sleep(a1)
        reap_sleep(a2)
        ok(exec(s, ('setsid sh -c "sleep %s & " ; (sleep %s &) &'):format(a1, a2)))
        assert.is_true(appears(a1), "the setsid'd daemon never ran")
        assert.is_true(appears(a2), "the double-forked daemon never ran")
        assert.is_true(exists(s.socket))
        local r = ok(cli(s, { "session", "stop", s.name }))
        assert.is_true(gone(a1), "the setsid'd daemon survived session stop\n" .. h.describe(r))
        assert.is_true(gone(a2), "the double-forked daemon survived session stop\n" .. h.describe(r))
        assert.is_true(h.wait_for(function() return not exists(s.socket) end, 10), "the socket is still there")
        assert.is_true(h.wait_for(function() return not h.is_controller(s.pid) end, 10), "the controller is still there")
    end)

    it("session stop: a foreground exec running then gets TERM first and reports its real exit", function()
        local s = start()
        local arg = sleep_arg(3050)
        reap_sleep(arg)
        local out = h.tmpdir() .. "/exec.out"
        -- the command cleans up on TERM and exits 5: that is its exit code, not a SIGKILL
        local line = h.command_line({ "exec", s.name, "--",
            ("trap 'echo cleaned-up; exit 5' TERM; sleep %s & wait"):format(arg) }, { env = s.env })
        local client = h.spawn("sh -c " .. h.quote(("cd %s && %s >%s 2>&1; echo \"rc=$?\" >>%s"):format(
            h.quote(s.cwd), line, h.quote(out), h.quote(out))))
        assert.is_true(appears(arg), "the exec never started")
        local r = ok(cli(s, { "session", "stop", s.name }))
        local text = h.wait_for(function()
            local t = h.read_file(out)
            return t and t:find("rc=%d+") and t
        end, 15)
        assert.truthy(text, "the exec client did not end after session stop\n" .. h.describe(r))
        assert.matches("cleaned%-up\n", text)
        assert.matches("rc=5\n$", text)
        assert.is_true(h.wait_for(function() return not h.alive(client) end, 5))
    end)

    it("kill -9 of the controller leaves nothing alive; the name can be started again", function()
        local s = start()
        local a1, a2, a3 = sleep_arg(3100), sleep_arg(3101), sleep_arg(3102)
        for _, a in ipairs({ a1, a2, a3 }) do reap_sleep(a) end
        background(s, "sleep " .. a1)
        ok(exec(s, ('setsid sh -c "sleep %s & " ; (sleep %s &) &'):format(a2, a3)))
        for _, a in ipairs({ a1, a2, a3 }) do assert.is_true(appears(a), "sleep " .. a .. " never ran") end
        assert.is_true(h.is_controller(s.pid), "GET /v1/session pid " .. tostring(s.pid) .. " is not the controller")
        os.execute("kill -9 " .. s.pid)
        for _, a in ipairs({ a1, a2, a3 }) do
            assert.is_true(gone(a), "sleep " .. a .. " survived kill -9 of the controller")
        end
        local again = start({ name = s.name, runtime = s.runtime, cwd = s.cwd })
        assert.are_not.equal(s.pid, again.pid)
        assert.are.equal("again\n", ok(exec(again, "echo again")).stdout)
    end)

    it("the owner's exit ends a session started without --detach", function()
        local runtime = h.runtime_dir()
        local ws = h.workspace()
        local name = "owner-" .. h.token()
        local arg = sleep_arg(4242)
        reap_sleep(arg)
        local sock = h.session_socket(runtime, name)
        local env = { XDG_RUNTIME_DIR = runtime }
        local s = { name = name, runtime = runtime, socket = sock, cwd = ws, env = env }
        h.defer(function() h.session_reap(s) end)
        local script = ("%s session start %s; %s exec %s -- %s --background; curl -s --unix-socket %s http://cordon/v1/session")
            :format(h.quote(h.bin), name, h.quote(h.bin), name, h.quote("sleep " .. arg), h.quote(sock))
        -- sh is the owner: it runs `session start` (no --detach) and exits after the exec
        local r = h.sh(("cd %s && timeout -k 5 %d env HOME=%s PATH=%s XDG_RUNTIME_DIR=%s sh -c %s"):format(
            h.quote(ws), h.run_timeout, h.quote(h.home()), h.quote(h.path), h.quote(runtime), h.quote(script)))
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("Background command started.", 1, true), h.describe(r))
        local info = cjson.decode(r.stdout:match("\n(%b{})%s*$") or "null")
        assert.truthy(info and info.pid, "no session info\n" .. h.describe(r))
        s.pid = math.tointeger(info.pid)
        assert.are.equal(false, info.detached)
        assert.is_true(h.wait_for(function() return not exists(sock) end, 15), "the socket outlived the owner")
        assert.is_true(gone(arg), "the job outlived the owner")
        assert.is_true(h.wait_for(function() return not h.is_controller(s.pid) end, 10), "the controller outlived the owner")
    end)
end)

describe("cordon session --session-exec=false: each exec in a sandbox of its own", function()
    after_each(h.cleanup)

    it("gives each exec its own /tmp and processes; the workspace and loopback are the session's", function()
        local s = start({ flags = { "--session-exec=false" } })
        assert.are.equal(false, s.info.session_exec)
        local r = ok(exec(s, "echo one >/tmp/mark; echo ws >ws-file; cat /tmp/mark; echo $$"))
        assert.are.equal("one\n2\n", r.stdout, h.describe(r))
        -- ps alone, before sort and tr start: in a pipeline it could see their shells before
        -- their exec (as "bash", seen under ASan)
        r = ok(exec(s, "cat /tmp/mark 2>&1 || echo no-mark; cat ws-file; ps -e -o comm= >/tmp/ps; sort /tmp/ps | tr '\\n' ' '"))
        -- a fresh /tmp; the workspace file is there; only this sandbox's processes are seen
        assert.matches("^.*No such file.*\nno%-mark\nws\n", r.stdout)
        assert.matches("\nbash cordon%-session ps $", r.stdout)
    end)

    it("keeps a sandbox whose command left a process behind, lists it, and ends it on stop", function()
        local s = start({ flags = { "--session-exec=false" } })
        local short, long = sleep_arg(2), sleep_arg(3200)
        reap_sleep(short)
        reap_sleep(long)
        local r = ok(exec(s, ("nohup sleep %s >/dev/null 2>&1 & nohup sleep %s >/dev/null 2>&1 & echo left")
            :format(short, long)))
        assert.are.equal("left\n", r.stdout)
        assert.is_true(appears(long), "the leftover never ran")
        local listed
        for _, j in ipairs(jobs(s)) do
            if j.command:find(long, 1, true) then listed = j end
        end
        assert.truthy(listed, "jobs does not list the sandbox with a leftover process")
        -- its leader exited, but the sandbox holds processes: running
        assert.are.equal("running", listed.state)
        assert.are.equal(false, listed.leader_running)
        assert.are.equal(true, listed.sandbox_running)
        -- the short one ends by itself; the sandbox stays for the long one
        assert.is_true(gone(short), "the short leftover did not end")
        assert.truthy(job(s, listed.pid), "the sandbox left the list while a process still runs in it")
        ok(cli(s, { "stop", s.name, tostring(math.tointeger(listed.pid)) }))
        assert.is_true(gone(long), "stop left the leftover running")
        assert.is_true(h.wait_for(function() return job(s, listed.pid) == nil end, 10),
            "the ended sandbox is still listed")
    end)

    it("session stop ends the processes every exec's sandbox left", function()
        local s = start({ flags = { "--session-exec=false" } })
        local a1, a2 = sleep_arg(3300), sleep_arg(3301)
        reap_sleep(a1)
        reap_sleep(a2)
        ok(exec(s, ("setsid sleep %s >/dev/null 2>&1 &"):format(a1)))
        background(s, "sleep " .. a2)
        assert.is_true(appears(a1) and appears(a2), "the processes never ran")
        ok(cli(s, { "session", "stop", s.name }))
        assert.is_true(gone(a1) and gone(a2), "a process outlived session stop")
    end)
end)

describe("cordon session: approvals through the API", function()
    after_each(h.cleanup)

    -- Subscribes an approver to s (GET /v1/approvals?watch=1 with curl, until clean-up): the
    -- exec's own client is never asked, and with no approver a question is denied at once.
    local function approver(s)
        local out = h.tmpdir() .. "/watch.ndjson"
        h.spawn(("sh -c %s"):format(h.quote(("exec curl -sSN --unix-socket %s %s >%s"):format(
            h.quote(s.socket), h.quote("http://cordon/v1/approvals?watch=1"), h.quote(out)))))
        assert(h.wait_for(function() return (h.read_file(out) or ""):find('"subscribed"', 1, true) end, 10),
            "the approver did not subscribe")
        return s
    end

    -- Starts `cordon exec NAME -- cmd` in the background on the host (its output to a file);
    -- returns a function that waits for its end and gives { code, out }.
    local function exec_async(s, cmd)
        local out = h.tmpdir() .. "/exec.out"
        local line = h.command_line({ "exec", s.name, "--", cmd }, { env = s.env })
        h.spawn("sh -c " .. h.quote(("cd %s && %s >%s 2>&1; echo \"rc=$?\" >>%s"):format(
            h.quote(s.cwd), line, h.quote(out), h.quote(out))))
        return function()
            local text = h.wait_for(function()
                local t = h.read_file(out)
                return t and t:match("rc=%d+\n$") and t
            end, 30)
            assert(text, "the exec did not end: " .. tostring(h.read_file(out)))
            return { code = tonumber(text:match("rc=(%d+)\n$")), out = text }
        end
    end

    -- Waits for one pending question of kind; returns it.
    local function pending(s, kind)
        local a = h.wait_for(function()
            local r = api(s, "GET", "/v1/approvals")
            for _, x in ipairs(r.json and r.json.approvals or {}) do
                if x.kind == kind then return x end
            end
        end, 15)
        assert(a, "no pending " .. kind .. " question")
        return a
    end

    local function approve(s, id, answer)
        return ok(cli(s, { "approve", s.name, tostring(math.tointeger(id)), answer }))
    end

    -- A file outside the workspace that the sandbox cannot write and the host can.
    local function outside_target()
        return h.tmpdir() .. "/written-outside"
    end

    it("a refused command runs again outside once a client answers 'once'", function()
        local s = approver(start({ flags = { "--ask-sandbox-off" } }))
        local target = outside_target()
        local done = exec_async(s, "touch " .. target)
        local q = pending(s, "rerun")
        assert.are.equal("touch " .. target, q.command)
        assert.truthy(q.question:find("partial changes", 1, true), q.question)
        assert.truthy(q.question:find("'session' runs this exact command string outside", 1, true), q.question)
        approve(s, q.id, "once")
        local r = done()
        assert.are.equal(0, r.code, r.out)
        assert.truthy(r.out:find("cordon: approval " .. math.tointeger(q.id), 1, true), r.out)
        assert.truthy(r.out:find("ran outside the sandbox, as approved once", 1, true), r.out)
        assert.is_true(exists(target), "the approved re-run did not write " .. target)
    end)

    it("'session' covers that exact command string only; 'deny' runs nothing", function()
        local s = approver(start({ flags = { "--ask-sandbox-off" } }))
        local target, other = outside_target(), outside_target()
        local done = exec_async(s, "touch " .. target)
        approve(s, pending(s, "rerun").id, "session")
        assert.are.equal(0, done().code)
        os.remove(target)
        -- the same command again: run outside without a question
        local r = ok(exec(s, "touch " .. target))
        assert.truthy(r.stderr:find("as approved for this session", 1, true), h.describe(r))
        assert.is_true(exists(target))
        -- another command is asked about; deny leaves the sandboxed result
        done = exec_async(s, "touch " .. other)
        approve(s, pending(s, "rerun").id, "deny")
        r = done()
        assert.are.equal(1, r.code, r.out)
        assert.is_false(exists(other), "a denied command ran outside")
    end)

    it("no answer within the permission timeout denies; plan mode and background never ask", function()
        local s = approver(start({ flags = { "--ask-sandbox-off", "--permission-timeout", "2s" } }))
        local target = outside_target()
        local r = exec(s, "touch " .. target)
        assert.are.equal(1, r.code, h.describe(r))
        assert.truthy(r.stderr:find("no answer in time", 1, true), h.describe(r))
        assert.is_false(exists(target))
        local pid = background(s, "touch " .. target)
        assert.truthy(ended_job(s, pid), "the background job did not end")
        assert.are.same({}, api(s, "GET", "/v1/approvals").json.approvals)
        local p = approver(start({ flags = { "--ask-sandbox-off", "--plan" } }))
        r = exec(p, "touch " .. target)
        assert.are.equal(1, r.code, h.describe(r))
        assert.is_nil(r.stderr:find("approval", 1, true), h.describe(r))
        assert.is_false(exists(target))
    end)

    it("asks about an unlisted destination while an approver is subscribed; 'once' ends with the command", function()
        local o = h.origin()
        local port, marker = o.port, o.marker
        local s = approver(start({ flags = { "--permission-timeout", "20s" } }))
        local fetch = ("curl -sS --noproxy '' --max-time 30 http://127.0.0.1:%d/x"):format(port)
        local done = exec_async(s, fetch)
        local q = pending(s, "network")
        assert.are.equal("127.0.0.1", q.host)
        assert.are.equal(port, math.tointeger(q.port))
        approve(s, q.id, "once")
        local r = done()
        assert.are.equal(0, r.code, r.out)
        assert.truthy(r.out:find(marker, 1, true), r.out)
        -- "once" ended with that command: the next one is asked again; "session" then holds
        done = exec_async(s, fetch)
        approve(s, pending(s, "network").id, "session")
        assert.truthy(done().out:find(marker, 1, true))
        r = ok(exec(s, fetch))
        assert.truthy(r.stdout:find(marker, 1, true), h.describe(r))
        assert.is_nil(r.stderr:find("approval", 1, true), h.describe(r))
    end)

    it("offers a destination the policy blocked (it does not ask) as allowed for the next command", function()
        local o = h.origin()
        local port, marker = o.port, o.marker
        local cfg = h.profile_dir("noask", 'return { extends = "coding", network = { ask = false } }')
        local s = approver(start({ flags = { "--profile", "noask", "--ask-sandbox-off" }, env = { XDG_CONFIG_HOME = cfg } }))
        local fetch = ("curl -sS --noproxy '' --max-time 20 http://127.0.0.1:%d/x"):format(port)
        local done = exec_async(s, fetch)
        local q = pending(s, "network")
        assert.are.equal(port, math.tointeger(q.port))
        approve(s, q.id, "once")
        local r = done()
        assert.truthy(r.out:find("allowed for the next command", 1, true), r.out)
        assert.is_nil(r.out:find(marker, 1, true), "the first attempt got through\n" .. r.out)
        r = ok(exec(s, fetch))
        assert.truthy(r.stdout:find(marker, 1, true), "the next command was not allowed\n" .. h.describe(r))
        done = exec_async(s, fetch)
        approve(s, pending(s, "network").id, "deny") -- asked again: "once" ended with that command
        r = done()
        assert.is_nil(r.out:find(marker, 1, true), "'once' outlived the next command\n" .. r.out)
        assert.truthy(r.out:find("stays blocked", 1, true), r.out)
    end)

    it("denies an unlisted destination at once when no approver is subscribed", function()
        local s = start()
        local pid = background(s, "curl -sS --noproxy '' --max-time 20 http://127.0.0.1:9/ ; echo rc=$?")
        local j = ended_job(s, pid, 30)
        assert.are.equal("exited", j.state)
        local log = ok(cli(s, { "logs", s.name, tostring(math.tointeger(pid)) })).stdout
        assert.truthy(log:find("nobody can be asked", 1, true), log)
        assert.are.same({}, api(s, "GET", "/v1/approvals").json.approvals)
    end)
end)

describe("cordon session: bad input", function()
    after_each(h.cleanup)

    it("an unknown session name: exit 1, the message names it", function()
        local runtime = h.runtime_dir()
        local s = { name = "nosuch-" .. h.token(), cwd = h.workspace(), env = { XDG_RUNTIME_DIR = runtime } }
        for _, args in ipairs({ { "exec", s.name, "--", "true" }, { "jobs", s.name }, { "session", "status", s.name },
            { "session", "stop", s.name }, { "logs", s.name, "2" }, { "stop", s.name, "2" }, { "cancel", s.name, "t" } }) do
            local r = cli(s, args)
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find(s.name, 1, true), h.describe(r))
        end
    end)

    it("a name that is taken: the second start fails with a clear message, the first keeps working", function()
        local s = start()
        local r = cli(s, { "session", "start", s.name, "--detach" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find(s.name, 1, true), h.describe(r))
        assert.matches("already", r.stderr)
        assert.are.equal("still\n", ok(exec(s, "echo still")).stdout)
    end)

    it("an invalid name: exit 125", function()
        local s = { name = "x", cwd = h.workspace(), env = { XDG_RUNTIME_DIR = h.runtime_dir() } }
        for _, bad in ipairs({ "bad/name", ".hidden", "-dash", "", string.rep("a", 65), "sp ace" }) do
            local r = cli(s, { "session", "start", bad, "--detach" })
            assert.are.equal(125, r.code, h.describe(r))
            r = cli(s, { "exec", bad, "--", "true" })
            assert.are.equal(125, r.code, h.describe(r))
        end
        assert.are.equal("", h.sh_ok("ls -A " .. h.quote(s.env.XDG_RUNTIME_DIR .. "/cordon") .. " 2>/dev/null || true"))
    end)

    it("malformed API requests get 400/404/405 with a JSON error; the session keeps working", function()
        local s = start()
        local cases = {
            { "POST", "/v1/exec", "{bad json", 400 },
            { "POST", "/v1/exec", '{"command": 3}', 400 },
            { "POST", "/v1/exec", '{"command": ""}', 400 },
            { "POST", "/v1/exec", '{"command": "true", "bogus": 1}', 400 },
            { "POST", "/v1/exec", '{"command": "true", "timeout": -1}', 400 },
            { "POST", "/v1/exec", '[1]', 400 },
            { "GET", "/v1/nope", nil, 404 },
            { "GET", "/v1/jobs/999999/log", nil, 404 },
            { "POST", "/v1/jobs/999999/stop", nil, 404 },
            { "GET", "/v1/exec", nil, 405 },
            { "DELETE", "/v1/jobs", nil, 405 },
            { "POST", "/v1/session", nil, 405 },
            { "POST", "/v1/approvals/7", '{"answer": "once"}', 404 },
            { "POST", "/v1/approvals/x", '{"answer": "once"}', 404 },
            { "POST", "/v1/approvals/7", '{"answer": "maybe"}', 400 },
            { "POST", "/v1/approvals/7", '{"answer": "once", "extra": 1}', 400 },
            { "POST", "/v1/approvals/7", 'once', 400 },
            { "DELETE", "/v1/approvals", nil, 405 },
        }
        for _, c in ipairs(cases) do
            local a = api(s, c[1], c[2], c[3])
            assert.are.equal(c[4], a.status, h.describe_api(a))
            assert.are.equal("string", type(a.json and a.json.error), h.describe_api(a))
            assert.is_true(#a.json.error > 0)
        end
        local a = api(s, "POST", "/v1/exec", '{"command": "true", "bogus": 1}')
        assert.matches("bogus", a.json.error)
        assert.are.equal("still\n", ok(exec(s, "echo still")).stdout)
        a = api(s, "POST", "/v1/exec", '{"command": "echo via-api"}')
        assert.are.equal(200, a.status, h.describe_api(a))
        assert.matches('"data":"via%-api\\n"', a.body)
        assert.matches('"event":"exit"[^\n]*"exit_code":0', a.body)
    end)

    it("a command inside the sandbox cannot reach the control socket (it could approve itself)", function()
        local s = start({ flags = { "--ask-sandbox-off" } })
        local probe = ("curl -sS -o /dev/null -w '%%{http_code}' --unix-socket %s http://cordon/v1/approvals; echo \" rc=$?\"")
            :format(h.quote(s.socket))
        local r = exec(s, probe)
        assert.is_nil(r.stdout:find("^200"), "a sandboxed command reached the session's API\n" .. h.describe(r))
        r = h.run_sh(probe, { env = s.env })
        assert.is_nil(r.stdout:find("^200"), "a cordon run command reached the session's API\n" .. h.describe(r))
        -- made reachable on purpose (--allow-write of the socket's directory): refused, as is
        -- every place a session socket lives (the API's own refusal of a client in another
        -- user namespace is engine/tests/test_api_server.c's)
        r = h.cordon({ "session", "start", "w" .. s.name, "--detach", "--allow-write", s.runtime .. "/cordon" },
            { cwd = s.cwd, env = s.env })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("inside cordon's own session sockets directory", 1, true), h.describe(r))
    end)

    it("a client of another uid gets 403 and a JSON error #privileged", function()
        local s = start()
        -- open the way to the socket for everyone: only the peer-uid check is left
        h.sh_ok(("chmod 711 %s %s && chmod 666 %s"):format(h.quote(s.runtime), h.quote(s.runtime .. "/cordon"),
            h.quote(s.socket)))
        h.defer(function()
            os.execute(("chmod 700 %s %s; chmod 600 %s"):format(h.quote(s.runtime), h.quote(s.runtime .. "/cordon"),
                h.quote(s.socket)))
        end)
        local arg = sleep_arg(801)
        reap_sleep(arg)
        for _, c in ipairs({ { "GET", "/v1/jobs" }, { "GET", "/v1/session" },
            { "POST", "/v1/exec", cjson.encode({ command = "sleep " .. arg, background = true }) } }) do
            local a = api(s, c[1], c[2], c[3], { uid = NOBODY })
            assert.are.equal(403, a.status, h.describe_api(a))
            assert.are.equal("string", type(a.json and a.json.error), h.describe_api(a))
        end
        os.execute("sleep 0.3")
        assert.are.same({}, sleeping(arg), "another uid's exec ran")
        assert.are.same({}, jobs(s))
    end)
end)
