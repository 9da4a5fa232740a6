-- spec/helpers.lua — shared code for the busted specs of every layer.
--
-- Loaded by busted (--helper) before each layer and again by the specs through
--   local h = require("spec.helpers")
-- so loading it must have no side effects: it only defines functions. Everything that
-- touches the system (temp dirs, servers, processes) happens when a spec calls it, and is
-- undone by h.cleanup() (call it from an after_each / teardown).
--
-- Uses plain lua5.4 (io, os, debug for h.skip and the per-run copy) and host programs: sh,
-- mktemp, cp, rm, timeout, setpriv, python3.

local h = {}

h.source_dir = os.getenv("CORDON_SOURCE_DIR") or "."
h.bin = os.getenv("CORDON_BIN") or (h.source_dir .. "/build/cordon")
-- the specs start cordon from other directories: make a relative path absolute
if h.bin:sub(1, 1) ~= "/" then
    local pwd = os.getenv("PWD")
    if pwd then h.bin = pwd .. "/" .. h.bin end
end
h.fixtures = h.source_dir .. "/spec/fixtures"

-- Programs the engine specs call by absolute path: a pyenv shim on the caller's PATH must
-- not decide which interpreter runs inside the sandbox.
h.python = "/usr/bin/python3"
h.path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

-- Upper bound for one cordon invocation; a hung engine fails the spec instead of the run.
h.run_timeout = 60

local cleanups = {}

--- Registers fn to run at the next h.cleanup(), most recent first.
function h.defer(fn)
    cleanups[#cleanups + 1] = fn
end

--- Runs every deferred clean-up (errors are collected, not raised half-way).
function h.cleanup()
    local errors = {}
    while #cleanups > 0 do
        local fn = table.remove(cleanups)
        local ok, err = pcall(fn)
        if not ok then errors[#errors + 1] = tostring(err) end
    end
    if #errors > 0 then error("cleanup failed: " .. table.concat(errors, "; "), 2) end
end

--- Single-quotes s for /bin/sh.
function h.quote(s)
    s = tostring(s)
    if s:match("^[%w%-%./_=:,+@%%]+$") then return s end
    return "'" .. s:gsub("'", "'\\''") .. "'"
end

--- Quotes and joins a list of words.
function h.join(words)
    local out = {}
    for i, w in ipairs(words) do out[i] = h.quote(w) end
    return table.concat(out, " ")
end

function h.read_file(path)
    local f = io.open(path, "rb")
    if not f then return nil end
    local s = f:read("a")
    f:close()
    return s
end

function h.write_file(path, content, mode)
    local f = assert(io.open(path, "wb"))
    f:write(content or "")
    f:close()
    if mode then h.sh_ok("chmod " .. mode .. " " .. h.quote(path)) end
end

-- Normalises os.execute's three results into one exit code (128+N for a signal).
local function exit_code(ok, how, n)
    if how == "signal" then return 128 + n end
    if ok == nil and how == nil then return -1 end
    return n
end

local function tmpfile()
    local name = os.tmpname()
    return name
end

--- Runs a /bin/sh command line on the host. Returns { stdout, stderr, code }.
-- opts.stdin: a string fed on stdin (default: /dev/null, as in CI).
function h.sh(cmd, opts)
    opts = opts or {}
    local out, err = tmpfile(), tmpfile()
    local input
    if opts.stdin then
        input = tmpfile()
        h.write_file(input, opts.stdin)
    end
    local full = "exec <" .. (input or "/dev/null") .. " >" .. out .. " 2>" .. err
        .. "\n" .. cmd
    local code = exit_code(os.execute(full))
    local res = { stdout = h.read_file(out) or "", stderr = h.read_file(err) or "", code = code }
    os.remove(out)
    os.remove(err)
    if input then os.remove(input) end
    return res
end

--- Like h.sh but raises unless the command exits 0; returns stdout.
function h.sh_ok(cmd, opts)
    local r = h.sh(cmd, opts)
    if r.code ~= 0 then
        error(("host command failed (%d): %s\n%s"):format(r.code, cmd, r.stderr), 2)
    end
    return r.stdout
end

--- Trims trailing white space.
function h.chomp(s)
    return (s:gsub("%s+$", ""))
end

--- A fresh directory, removed by h.cleanup(). base defaults to /var/tmp so that, by
-- default, workspaces do not live under the host's /tmp (which the sandbox replaces).
function h.tmpdir(base)
    local dir = h.chomp(h.sh_ok("mktemp -d " .. h.quote((base or "/var/tmp") .. "/cordon-spec.XXXXXX")))
    h.defer(function()
        -- a sandbox may have left read-only bits; make sure rm can walk everything
        os.execute("chmod -R u+rwX " .. h.quote(dir) .. " 2>/dev/null; rm -rf " .. h.quote(dir))
    end)
    return dir
end

--- A random token to make names unique across runs.
function h.token()
    local f = io.open("/dev/urandom", "rb")
    local bytes = f:read(6)
    f:close()
    return (bytes:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

--- Populates a home directory with every default-hidden secret. Returns home and a table
-- name -> secret content (the content is a unique marker a spec can grep for).
function h.secret_home(owner_uid)
    local home = h.tmpdir()
    local marker = "cordon-spec-secret-" .. h.token()
    local files = {
        ".ssh/id_rsa", ".aws/credentials", ".gnupg/private-keys-v1.d/key", ".config/gh/hosts.yml",
        ".netrc", ".docker/config.json", ".kube/config",
    }
    for _, rel in ipairs(files) do
        local dir = rel:match("^(.*)/[^/]+$")
        if dir then h.sh_ok("mkdir -p " .. h.quote(home .. "/" .. dir)) end
        h.write_file(home .. "/" .. rel, marker .. "\n", "600")
    end
    if owner_uid then h.sh_ok(("chown -R %d:%d %s"):format(owner_uid, owner_uid, h.quote(home))) end
    return home, marker
end

--- A workspace: a directory "ws" inside a fresh temp dir (so `..` is a dir the spec owns
-- and can inspect). With uid, the workspace belongs to that uid and the parent is
-- traversable. Returns ws, parent.
function h.workspace(base, uid)
    local parent = h.tmpdir(base)
    local ws = parent .. "/ws"
    h.sh_ok("mkdir " .. h.quote(ws))
    if uid then
        h.sh_ok(("chmod 755 %s && chown %d:%d %s"):format(h.quote(parent), uid, uid, h.quote(ws)))
    end
    return ws, parent
end

--- The default HOME cordon is started with: a temp home holding every default-hidden
-- secret, made once per spec (reset by h.cleanup()).
local default_home
function h.home()
    if not default_home then
        default_home = h.secret_home()
        h.defer(function() default_home = nil end)
    end
    return default_home
end

--- Marks the running test as skipped with `reason` (busted's pending): busted's TAP output
-- prints `ok N - # SKIP FILE:LINE: reason`, FILE:LINE being the spec line that called this.
-- The spec's own `pending` is found in the environment busted gives spec files (the helpers
-- run in _G, which has none). Raises outside a test.
function h.skip(reason)
    local where
    for level = 2, 40 do
        local info = debug.getinfo(level, "Slf")
        if not info then break end
        if not where and info.short_src:match("_spec%.lua$") then
            where = info.short_src .. ":" .. info.currentline .. ": "
        end
        for i = 1, 255 do
            local name, env = debug.getupvalue(info.func, i)
            if not name then break end
            if name == "_ENV" and type(env) == "table" and env ~= _G
                and type(env.pending) == "function" then
                env.pending((where or "") .. reason)
            end
        end
    end
    error("h.skip outside a busted test: " .. reason, 2)
end

-- The unprivileged cases run cordon as another uid, which must be able to reach the binaries
-- and the built-in policies/ and profiles/. A checkout may sit where other users cannot enter
-- (a clone under /root, a mktemp -d folder, mode 0700): so those cases run a copy of
-- build/cordon, build/cordon-session, policies/ and profiles/ in a folder everyone may enter
-- (mode 0755 under /var/tmp), with CORDON_DATADIR pointing at it. The copy is made once per
-- busted run: it is kept in the Lua registry, which busted's per-file insulation does not
-- reset, and removed when the interpreter closes its state at exit (a finalizer).
local SHARED_KEY = "cordon.spec.unprivileged_copy"

--- The copy for uid (made on first use). Returns { bin, datadir } or nil, reason.
function h.unprivileged_copy(uid)
    local reg = debug.getregistry()
    local c = reg[SHARED_KEY]
    if not c then
        local r = h.sh("mktemp -d /var/tmp/cordon-spec-shared.XXXXXX")
        if r.code ~= 0 then return nil, "no folder for a shared copy of cordon: " .. h.chomp(r.stderr) end
        local dir = h.chomp(r.stdout)
        c = setmetatable({ dir = dir, bin = dir .. "/cordon", datadir = dir }, {
            __gc = function(t) os.execute("rm -rf " .. h.quote(t.dir)) end,
        })
        reg[SHARED_KEY] = c
        local bindir = h.bin:match("^(.*)/[^/]+$") or "."
        local copy = h.sh(("cp %s %s %s/ && cp -R %s %s %s/ && chmod -R a+rX,go-w %s && chmod 755 %s"):format(
            h.quote(h.bin), h.quote(bindir .. "/cordon-session"), h.quote(dir),
            h.quote(h.source_dir .. "/policies"), h.quote(h.source_dir .. "/profiles"), h.quote(dir),
            h.quote(dir), h.quote(dir)))
        if copy.code ~= 0 then c.failed = "copying cordon for another uid failed: " .. h.chomp(copy.stderr) end
    end
    if c.failed then return nil, c.failed end
    c.reachable = c.reachable or {}
    if c.reachable[uid] == nil then
        c.reachable[uid] = h.sh(("setpriv --reuid=%d --regid=%d --clear-groups test -x %s"):format(
            uid, uid, h.quote(c.bin))).code == 0
    end
    if not c.reachable[uid] then
        return nil, ("uid %d cannot execute %s (a folder on the way is closed to it)"):format(uid, c.bin)
    end
    return c
end

--- Whether the cordon under test is a sanitizer build (ASan/UBSan or TSan: linked dynamically
-- with the sanitizer's runtime), which some specs cannot use as they use the release build.
function h.sanitizer_build()
    local r = h.sh("ldd " .. h.quote(h.bin) .. " 2>/dev/null")
    return r.stdout:find("lib[at]san", 1) ~= nil
end

--- Builds the shell command line that starts cordon.
-- args: list of words after the binary (e.g. {"run", "--json", "--", "true"}).
-- opts.cwd: directory to start in (default opts.workspace, else a fresh workspace)
-- opts.env: table NAME -> value added to the environment (HOME and PATH are set by default)
-- opts.unset: list of variable names removed
-- opts.home: HOME (default: a secret-filled temp home)
-- opts.uid: run as this uid/gid via setpriv (no supplementary groups), from the copy that
--   h.unprivileged_copy makes (the test is skipped, saying why, where none can be made)
-- opts.prefix: shell code run before cordon in the same shell (e.g. "exec 7</etc/hostname;")
-- opts.timeout: seconds (default h.run_timeout); false for none
function h.command_line(args, opts)
    opts = opts or {}
    local env = {
        HOME = opts.home or h.home(),
        PATH = h.path,
    }
    local bin = h.bin
    if opts.uid then
        local copy, why = h.unprivileged_copy(opts.uid)
        if not copy then h.skip(why) end
        bin = copy.bin
        env.CORDON_DATADIR = copy.datadir
    end
    for k, v in pairs(opts.env or {}) do env[k] = v end
    local parts = { "env" }
    for _, name in ipairs(opts.unset or {}) do parts[#parts + 1] = "-u " .. h.quote(name) end
    local names = {}
    for k in pairs(env) do names[#names + 1] = k end
    table.sort(names)
    for _, k in ipairs(names) do parts[#parts + 1] = h.quote(k .. "=" .. env[k]) end
    local pre = ""
    if opts.uid then
        pre = ("setpriv --reuid=%d --regid=%d --clear-groups "):format(opts.uid, opts.gid or opts.uid)
    end
    local timeout = ""
    if opts.timeout ~= false then
        timeout = ("timeout -k 5 %d "):format(opts.timeout or h.run_timeout)
    end
    return ("%s%s%s%s %s %s"):format(opts.prefix or "", timeout, pre, table.concat(parts, " "),
        h.quote(bin), h.join(args))
end

--- Runs cordon with args. Returns { stdout, stderr, code, cmd }.
function h.cordon(args, opts)
    opts = opts or {}
    local cwd = opts.cwd or opts.workspace
    if not cwd then cwd = h.workspace() end
    local cmd = "cd " .. h.quote(cwd) .. " && " .. h.command_line(args, opts)
    local r = h.sh(cmd, opts)
    r.cmd = cmd
    return r
end

--- `cordon run [flags] -- bash -c script`. opts as h.cordon, plus opts.flags (list) and
-- opts.workspace (passed as --workspace and used as cwd).
function h.run_sh(script, opts)
    opts = opts or {}
    local args = { "run" }
    if opts.workspace then
        args[#args + 1] = "--workspace"
        args[#args + 1] = opts.workspace
    end
    for _, f in ipairs(opts.flags or {}) do args[#args + 1] = f end
    args[#args + 1] = "--"
    args[#args + 1] = "/bin/bash"
    args[#args + 1] = "-c"
    args[#args + 1] = script
    return h.cordon(args, opts)
end

--- `cordon run [flags] -- python3 -c code`.
function h.run_py(code, opts)
    return h.run_sh(h.python .. " -c " .. h.quote(code), opts)
end

--- A readable summary of a result for assertion messages.
function h.describe(r)
    return ("command: %s\nexit: %s\n--- stdout\n%s\n--- stderr\n%s"):format(
        r.cmd or "?", tostring(r.code), r.stdout, r.stderr)
end

--- Asserts that a result exited 0; returns it.
function h.ok(r)
    require("luassert").are.equal(0, r.code, h.describe(r))
    return r
end

-- where: a string, or a result (its stdout and stderr); r: the result to describe on failure.
local function haystack(where, r)
    if type(where) == "table" then return where.stdout .. where.stderr, where end
    return where, r
end

--- Asserts that text is in where (a string, or a result's stdout and stderr).
function h.has(where, text, r)
    local s, res = haystack(where, r)
    require("luassert").truthy(s:find(text, 1, true),
        "expected '" .. text .. "' in:\n" .. (res and h.describe(res) or s))
end

--- Asserts that text is not in where (a string, or a result's stdout and stderr).
function h.hasnt(where, text, r)
    local s, res = haystack(where, r)
    require("luassert").falsy(s:find(text, 1, true),
        "did not expect '" .. text .. "' in:\n" .. (res and h.describe(res) or s))
end

--- Decodes the JSON object on the last non-empty line of s.
function h.last_json(s)
    local cjson = require("cjson")
    local last
    for line in s:gmatch("[^\n]+") do last = line end
    if not last then return nil, "no output" end
    local ok, v = pcall(cjson.decode, last)
    if not ok then return nil, v end
    return v, last
end

--- The namespace link (e.g. "net:[4026531840]") of the calling process.
function h.host_ns(kind)
    return h.chomp(h.sh_ok("readlink /proc/self/ns/" .. kind))
end

--- Starts a host process in the background (own session, output discarded); returns pid.
-- It is killed (SIGKILL, by pid) by h.cleanup().
function h.spawn(cmd)
    local pid = tonumber(h.chomp(h.sh_ok("setsid " .. cmd .. " </dev/null >/dev/null 2>&1 & echo $!")))
    assert(pid, "spawn: no pid")
    h.defer(function() os.execute("kill -9 " .. pid .. " 2>/dev/null") end)
    return pid
end

function h.alive(pid)
    -- a zombie counts as dead: its state is Z
    local st = h.read_file("/proc/" .. pid .. "/stat")
    if not st then return false end
    return not st:match("^%d+ %b() Z")
end

--- Polls fn() every 0.1 s until it returns a truthy value or `seconds` pass; returns it.
function h.wait_for(fn, seconds)
    local tries = math.floor((seconds or 5) * 10)
    for _ = 1, tries do
        local v = fn()
        if v then return v end
        os.execute("sleep 0.1")
    end
    return fn()
end

--- Host pids whose command line matches the pattern (pgrep -f), as a list.
function h.pgrep(pattern)
    local r = h.sh("pgrep -f " .. h.quote(pattern))
    local pids = {}
    for p in r.stdout:gmatch("%d+") do pids[#pids + 1] = tonumber(p) end
    return pids
end

--- Starts a Python server on the host from spec/fixtures/engine/servers.py; waits until it
-- has written its address to a file; returns { pid, port?, path?, dir }.
-- kind: "http" (127.0.0.1, random free port, serves dir with marker file "probe.txt"),
--       "unix PATH" or "abstract NAME".
function h.server(kind, arg)
    local dir = h.tmpdir()
    local ready = dir .. "/ready"
    local marker = "cordon-spec-served-" .. h.token()
    h.write_file(dir .. "/probe.txt", marker .. "\n")
    local pid = h.spawn(("%s %s %s %s %s"):format(h.python,
        h.quote(h.fixtures .. "/engine/servers.py"), kind, h.quote(arg or dir), h.quote(ready)))
    local addr = h.wait_for(function() return h.read_file(ready) end, 10)
    assert(addr and addr ~= "", "server " .. kind .. " did not start")
    return { pid = pid, port = tonumber(addr:match("^(%d+)")), addr = h.chomp(addr), dir = dir,
        marker = marker, ready = ready }
end

--- Runs cordon under spec/fixtures/engine/drive.py (for signals, kill -9 and ptys).
-- args/opts as h.cordon (opts.cwd or opts.workspace is the start directory); d holds the
-- driver options: ready_file, ready_pgrep, signal ("TERM"), pty = {rows, cols}, timeout.
-- Returns the driver's JSON result table (returncode, pid, ready, timed_out, output, ...).
function h.drive(args, opts, d)
    opts = opts or {}
    d = d or {}
    local cwd = opts.cwd or opts.workspace or h.workspace()
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    o.timeout = false
    local line = h.command_line(args, o)
    local dargs = {}
    if d.ready_file then dargs[#dargs + 1] = "--ready-file " .. h.quote(d.ready_file) end
    if d.ready_pgrep then dargs[#dargs + 1] = "--ready-pgrep " .. h.quote(d.ready_pgrep) end
    if d.signal then dargs[#dargs + 1] = "--signal " .. d.signal end
    if d.pty then dargs[#dargs + 1] = ("--pty %d %d"):format(d.pty[1], d.pty[2]) end
    dargs[#dargs + 1] = "--timeout " .. (d.timeout or h.run_timeout)
    local cmd = ("cd %s && %s %s %s -- %s"):format(h.quote(cwd), h.python,
        h.quote(h.fixtures .. "/engine/drive.py"), table.concat(dargs, " "), h.quote(line))
    local r = h.sh(cmd)
    local res, err = h.last_json(r.stdout)
    if not res then
        error(("drive.py failed: %s\n%s\n%s"):format(tostring(err), cmd, h.describe(r)), 2)
    end
    res.cmd = cmd
    return res
end

--- Snapshot of a directory tree (paths, types, sizes), for "nothing was created" checks.
function h.tree(dir)
    return h.sh("cd " .. h.quote(dir) .. " && find . -printf '%p %y %s\\n' | LC_ALL=C sort").stdout
end

--- True when the cordon binary exists and is executable.
function h.have_binary()
    return h.sh("test -x " .. h.quote(h.bin)).code == 0
end

--- Starts an HTTP origin on the host's loopback (spec/fixtures/engine/egress/origin.py): GET
-- answers "MARKER PATH". Returns { pid, port, marker }; killed by h.cleanup().
function h.origin()
    local dir = h.tmpdir()
    local ready = dir .. "/ready"
    local marker = "cordon-origin-" .. h.token()
    local pid = h.spawn(h.join({ h.python, h.fixtures .. "/engine/egress/origin.py", "http", ready, marker }))
    local port = h.wait_for(function()
        local t = h.read_file(ready)
        return t and tonumber(t:match("^(%d+)"))
    end, 10)
    assert(port, "origin did not start")
    return { pid = pid, port = port, marker = marker }
end

--- A user config directory (for XDG_CONFIG_HOME) holding one profile NAME with body `lua`.
function h.profile_dir(name, lua)
    local cfg = h.tmpdir()
    h.sh_ok("mkdir -p " .. h.quote(cfg .. "/cordon/profiles"))
    h.write_file(cfg .. "/cordon/profiles/" .. name .. ".lua", lua)
    return cfg
end

-- sessions -------------------------------------------------------------------------------
-- Helpers for specs that drive `cordon session start` and its control API. Each session a
-- spec starts lives in a private XDG_RUNTIME_DIR, so nothing touches the user's sessions.

--- A fresh private runtime directory (mode 0700) to pass as XDG_RUNTIME_DIR.
function h.runtime_dir()
    local dir = h.tmpdir()
    h.sh_ok("chmod 700 " .. h.quote(dir))
    return dir
end

--- The control socket of session `name` under the runtime directory.
function h.session_socket(runtime, name)
    return runtime .. "/cordon/" .. name .. ".sock"
end

--- One raw JSON-RPC request for spec/fixtures/mcp/raw_client.py's steps.
function h.mcp_req(id, method, params)
    return { send_json = { jsonrpc = "2.0", id = id, method = method, params = params } }
end

--- One tools/call request of tool with arguments (none: {}).
function h.mcp_call(id, tool, arguments)
    return h.mcp_req(id, "tools/call", { name = tool, arguments = arguments or {} })
end

--- steps after MCP's opening (initialize as client, its answer kept as "init", then
-- notifications/initialized), as one list for h.mcp_raw.
function h.mcp_opened(client, steps)
    local all = {
        h.mcp_req(1, "initialize", { protocolVersion = "2025-06-18", capabilities = {},
            clientInfo = { name = client, version = "1" } }), { expect = 1, as = "init" },
        { send_json = { jsonrpc = "2.0", method = "notifications/initialized" } },
    }
    for _, step in ipairs(steps) do all[#all + 1] = step end
    return all
end

--- Runs spec/fixtures/mcp/raw_client.py with steps against line (a shell command running
-- `cordon mcp ...`); returns its decoded report and the start of its output, for assertion
-- messages.
function h.mcp_raw(steps, line)
    local cjson = require("cjson")
    local script = h.tmpdir() .. "/script.json"
    h.write_file(script, cjson.encode(steps), "644")
    local r = h.sh(h.join({ h.python, h.fixtures .. "/mcp/raw_client.py", script, "--" }) .. " " .. h.quote(line))
    local ok, rep = pcall(cjson.decode, r.stdout)
    assert(ok and type(rep) == "table", "raw_client.py failed\n" .. h.describe(r))
    return rep, r.stdout:sub(1, 3000)
end

--- One HTTP request to a session's control socket with curl.
-- opts.uid: run curl as this uid/gid (setpriv, no supplementary groups).
-- Returns { status = number (0 when curl failed), body = string, json = table|nil, cmd }.
function h.api(sock, method, path, body, opts)
    opts = opts or {}
    local pre = ""
    if opts.uid then
        pre = ("setpriv --reuid=%d --regid=%d --clear-groups "):format(opts.uid, opts.gid or opts.uid)
    end
    local cmd = ("%scurl -sS --max-time %d -w '\\n%%{http_code}' --unix-socket %s -X %s"):format(
        pre, opts.timeout or h.run_timeout, h.quote(sock), method)
    if body then cmd = cmd .. " -H 'Content-Type: application/json' --data-binary @-" end
    cmd = cmd .. " " .. h.quote("http://cordon" .. path)
    local r = h.sh(cmd, { stdin = body })
    local text, status = r.stdout:match("^(.*)\n(%d+)$")
    local res = { status = tonumber(status) or 0, body = text or r.stdout, cmd = cmd, stderr = r.stderr }
    local ok, v = pcall(require("cjson").decode, res.body)
    if ok and type(v) == "table" then res.json = v end
    return res
end

--- A readable summary of an h.api result.
function h.describe_api(r)
    return ("request: %s\nstatus: %s\n--- body\n%s\n--- curl stderr\n%s"):format(
        r.cmd or "?", tostring(r.status), r.body, r.stderr or "")
end

--- Starts `cordon session start NAME --detach [flags]` in opts.cwd (default: a fresh
-- workspace) with XDG_RUNTIME_DIR = opts.runtime (default: a fresh h.runtime_dir()) plus
-- opts.env. Raises unless it started. Registers the clean-up: `cordon session stop NAME`,
-- then, as a backstop, SIGKILL of the controller pid read from GET /v1/session.
-- Returns { name, runtime, socket, pid, cwd, env, info = the /v1/session JSON }.
function h.session_start(name, opts)
    opts = opts or {}
    local runtime = opts.runtime or h.runtime_dir()
    local cwd = opts.cwd or h.workspace()
    local env = { XDG_RUNTIME_DIR = runtime }
    for k, v in pairs(opts.env or {}) do env[k] = v end
    local args = { "session", "start", name, "--detach" }
    for _, f in ipairs(opts.flags or {}) do args[#args + 1] = f end
    local r = h.cordon(args, { cwd = cwd, env = env })
    local s = { name = name, runtime = runtime, socket = h.session_socket(runtime, name), cwd = cwd, env = env }
    h.defer(function() h.session_reap(s) end)
    if r.code ~= 0 then error("session start failed\n" .. h.describe(r), 2) end
    local info = h.api(s.socket, "GET", "/v1/session")
    if info.status ~= 200 or not info.json then
        error("GET /v1/session failed after start\n" .. h.describe_api(info), 2)
    end
    s.info, s.pid = info.json, math.tointeger(info.json.pid)
    return s
end

--- True while host pid `pid` is a live cordon session controller.
function h.is_controller(pid)
    pid = math.tointeger(pid)
    local comm = pid and h.read_file("/proc/" .. pid .. "/comm")
    return comm ~= nil and comm:match("^cordon%-session") ~= nil and h.alive(pid)
end

--- Ends session s (as h.session_start returned it): `cordon session stop`, then SIGKILL of
-- its controller if it is still there after a few seconds.
function h.session_reap(s)
    h.cordon({ "session", "stop", s.name }, { cwd = s.cwd, env = s.env, timeout = 30 })
    if s.pid and not h.wait_for(function() return not h.is_controller(s.pid) end, 10) then
        os.execute("kill -9 " .. s.pid .. " 2>/dev/null")
    end
end

return h
