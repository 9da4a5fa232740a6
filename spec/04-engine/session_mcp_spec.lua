-- spec/04-engine/session_mcp_spec.lua — `cordon mcp`, the sandbox as an MCP server on stdio, driven
-- with raw JSON-RPC lines (spec/fixtures/mcp/raw_client.py writes them and collects every
-- line of stdout): framing, initialize and the revision negotiated, tools/list, run_command,
-- a refused write, a background server and its log, the bounds on output and on a request,
-- the JSON-RPC errors (the server keeps serving after each), the session of its own that
-- ends when stdin closes, and a dev server published on the host (publish_port, curl from the
-- host, unpublish_port). mcp_sdk_spec.lua drives it with the official SDK's client.
-- Each case uses its own XDG_RUNTIME_DIR; waits are bounded, nothing is timed.
local h = require("spec.helpers")
local cjson = require("cjson")

local RAW = h.fixtures .. "/mcp/raw_client.py"

-- Runs `cordon mcp ARGS...` in ws under raw_client.py with the steps; returns its report.
local function drive(steps, opts)
    opts = opts or {}
    local runtime = opts.runtime or h.runtime_dir()
    local ws = opts.cwd or h.workspace()
    local args = { "mcp" }
    for _, a in ipairs(opts.args or {}) do args[#args + 1] = a end
    local line = "cd " .. h.quote(ws) .. " && exec " ..
        h.command_line(args, { env = { XDG_RUNTIME_DIR = runtime }, timeout = 150 })
    local script = h.tmpdir() .. "/script.json"
    h.write_file(script, cjson.encode(steps))
    local r = h.sh(h.join({ h.python, RAW, script, "--" }) .. " " .. h.quote(line))
    local ok, rep = pcall(cjson.decode, r.stdout)
    assert(ok and type(rep) == "table", "raw_client.py failed\n" .. h.describe(r))
    if rep.error == cjson.null then rep.error = nil end
    -- under ASan/UBSan (make test-asan) the server's reports go to its stderr
    local stderr = rep.stderr or ""
    assert(not stderr:find("Sanitizer", 1, true) and not stderr:find("runtime error:", 1, true),
        "the server's sanitizers reported\n" .. stderr)
    -- what an assertion message shows: the report's start is enough to see what went wrong
    rep.runtime, rep.describe = runtime, ("%s\n--- server stderr\n%s\n--- report (start)\n%s"):format(
        tostring(rep.error), rep.stderr or "", r.stdout:sub(1, 3000))
    return rep
end

local function req(id, method, params)
    return { send_json = { jsonrpc = "2.0", id = id, method = method, params = params } }
end

local function call(id, tool, arguments)
    return req(id, "tools/call", { name = tool, arguments = arguments or {} })
end

local function init(id, version, caps)
    return req(id, "initialize", { protocolVersion = version, capabilities = caps or { roots = {} },
        clientInfo = { name = "mcp-spec", version = "1" } })
end

local function expect(id, as) return { expect = id, as = as } end

-- The text of a tools/call result.
local function text(msg)
    local parts = {}
    for _, c in ipairs(msg.result and msg.result.content or {}) do parts[#parts + 1] = c.text or "" end
    return table.concat(parts)
end

local function sockets(runtime)
    return h.sh("ls " .. h.quote(runtime .. "/cordon") .. " 2>/dev/null | grep '\\.sock$'").stdout
end

describe("cordon mcp: raw JSON-RPC on stdio", function()
    after_each(h.cleanup)

    it("initializes, lists tools, runs commands, says refusals, answers errors, ends with stdin", function()
        local steps = {
            init(1, "2025-06-18"), expect(1, "init"),
            { send_json = { jsonrpc = "2.0", method = "notifications/initialized" } },
            req(2, "ping"), expect(2, "ping"),
            req(3, "tools/list"), expect(3, "tools"),
            call(4, "run_command", { command = "echo hi; echo oops >&2; exit 3" }), expect(4, "echo"),
            -- the session's commands do not inherit the server's signal handling
            call(14, "run_command", { command = "yes | head -1 >/dev/null; echo ${PIPESTATUS[0]}; grep -E '^Sig(Blk|Ign)' /proc/self/status" }),
            expect(14, "signals"),
            call(5, "run_command", { command = "touch /etc/x" }), expect(5, "refused"),
            { send = "this is not json" }, { expect_null = "not_json" },
            { send = '[{"jsonrpc":"2.0","id":50,"method":"ping"}]' }, { expect_null = "batch" },
            { send = "42" }, { expect_null = "not_object" },
            { send = '{"id":6,"method":"ping"}' }, expect(6, "no_jsonrpc"),
            { send = '{"jsonrpc":"2.0","id":7}' }, expect(7, "no_method"),
            req(8, "no/such/method"), expect(8, "unknown_method"),
            call(9, "no_such_tool", { command = "true" }), expect(9, "unknown_tool"),
            call(10, "run_command", { command = 7 }), expect(10, "bad_args"),
            call(11, "run_command", { command = "true", colour = "red" }), expect(11, "unknown_arg"),
            { send_big = 5 * 1024 * 1024, id = 12 }, { expect_null = "huge" },
            req(13, "ping"), expect(13, "after"),
            { close = true },
        }
        local r = drive(steps)
        local k = r.kept
        assert.is_nil(r.error, r.describe)
        -- stdout carries protocol messages only, one a line; nothing answered the notification
        -- or the huge request but its error
        assert.are.same({}, r.bad_lines, r.describe)
        local n = 0
        for _ in pairs(k) do n = n + 1 end
        assert.are.equal(n, #r.messages, r.describe)
        for _, m in ipairs(r.messages) do assert.are.equal("2.0", m.jsonrpc) end

        assert.are.equal("2025-06-18", k.init.result.protocolVersion)
        assert.are.equal("cordon", k.init.result.serverInfo.name)
        assert.is_table(k.init.result.capabilities.tools)
        assert.are.same({}, k.ping.result)

        local names = {}
        for _, t in ipairs(k.tools.result.tools) do
            names[#names + 1] = t.name
            assert.are.equal("object", t.inputSchema.type, t.name)
            assert.are.equal("object", t.outputSchema.type, t.name)
            assert.truthy(#t.description > 40, t.name)
        end
        assert.are.same({ "run_command", "start_background", "list_jobs", "read_log", "stop_job",
            "cancel_turn", "session_status", "publish_port", "unpublish_port", "review_changes",
            "fork_session", "snapshot_workspace", "rollback_workspace" }, names)
        local publish = k.tools.result.tools[8]
        assert.truthy(publish.description:find("127.0.0.1", 1, true), publish.description)
        assert.truthy(publish.description:find("dev server", 1, true), publish.description)
        assert.are.same({ "port" }, publish.inputSchema.required)
        assert.are.same({ "port" }, k.tools.result.tools[9].inputSchema.required)
        assert.truthy(k.tools.result.tools[1].description:find("outside the workspace", 1, true))

        -- a non-zero exit is a normal result
        local e = k.echo.result
        assert.is_false(e.isError)
        assert.are.equal(3, e.structuredContent.exit_code)
        assert.is_false(e.structuredContent.timed_out)
        assert.are.equal("[stdout]\nhi\n[stderr]\noops\n[exit code 3]\n", text(k.echo))

        -- SIGPIPE (13) ends `yes` and is not ignored; nothing is blocked
        local ign = text(k.signals):match("SigIgn:%s+(%x+)")
        assert.truthy(text(k.signals):find("^%[stdout%]\n141\nSigBlk:%s+0+\n"), text(k.signals))
        assert.are.equal(0, tonumber(ign, 16) & 0x1000, text(k.signals))

        local f = k.refused.result
        assert.are.equal(1, f.structuredContent.exit_code)
        assert.truthy(text(k.refused):find("cordon: the sandbox refused a write to /etc/x", 1, true), text(k.refused))
        assert.are.equal("write", f.structuredContent.refusals[1].kind)
        assert.are.equal("/etc/x", f.structuredContent.refusals[1].path)

        assert.are.equal(-32700, k.not_json.error.code)
        assert.are.equal(-32600, k.batch.error.code)
        assert.are.equal(-32600, k.not_object.error.code)
        assert.are.equal(-32600, k.no_jsonrpc.error.code)
        assert.are.equal(-32600, k.no_method.error.code)
        assert.are.equal(-32601, k.unknown_method.error.code)
        assert.are.equal(-32602, k.unknown_tool.error.code)
        -- 2025-06-18 lists invalid arguments among the protocol errors
        assert.are.equal(-32602, k.bad_args.error.code)
        assert.truthy(k.bad_args.error.message:find("command must be", 1, true))
        assert.are.equal(-32602, k.unknown_arg.error.code)
        assert.truthy(k.unknown_arg.error.message:find("colour", 1, true))
        assert.are.equal(-32600, k.huge.error.code)
        assert.truthy(k.huge.error.message:find("too large", 1, true))
        assert.are.same({}, k.after.result)

        -- stdin closed: the server exited and its session is gone
        assert.are.equal(0, r.returncode, r.describe)
        assert.truthy(r.stderr:find("serving session 'mcp-", 1, true), r.describe)
        assert.are.equal("", sockets(r.runtime), r.describe)
    end)

    it("negotiates the revision; from 2025-11-25 on, bad arguments are a tool error", function()
        local s = h.session_start("spec-mcp-" .. h.token())
        local r = drive({
            init(1, "2025-11-25"), expect(1, "init"),
            call(2, "run_command", { command = "" }), expect(2, "bad_args"),
            call(3, "read_log", { pid = 1.5 }), expect(3, "bad_pid"),
            call(4, "session_status"), expect(4, "status"),
            { close = true },
        }, { runtime = s.runtime, cwd = s.cwd, args = { "--session", s.name } })
        assert.is_nil(r.error, r.describe)
        assert.are.equal("2025-11-25", r.kept.init.result.protocolVersion)
        assert.is_true(r.kept.bad_args.result.isError, r.describe)
        assert.truthy(text(r.kept.bad_args):find("command must be a non-empty string", 1, true))
        assert.is_true(r.kept.bad_pid.result.isError, r.describe)
        assert.are.equal(s.name, r.kept.status.result.structuredContent.name)
        assert.are.equal(0, r.returncode, r.describe)
        -- a session given with --session is not ours to stop
        assert.are.equal(200, h.api(s.socket, "GET", "/v1/session").status)

        r = drive({ init(1, "2024-11-05"), expect(1, "init"), { close = true } },
            { runtime = s.runtime, cwd = s.cwd, args = { "--session", s.name } })
        assert.are.equal("2025-11-25", r.kept.init.result.protocolVersion, r.describe)
    end)

    it("starts a background server, reads its log and stops it", function()
        local server = "python3 -u -c 'import http.server as s; h = s.HTTPServer((\"127.0.0.1\", 0), "
            .. "s.SimpleHTTPRequestHandler); print(\"serving on\", h.server_address[1]); "
            .. "print(\"second line\"); h.serve_forever()'"
        local r = drive({
            init(1, "2025-11-25"), expect(1, "init"),
            call(2, "start_background", { command = server, turn = "t1" }), expect(2, "bg"),
            { save = "pid", from = "bg", path = { "result", "structuredContent", "pid" } },
            { poll = { name = "read_log", arguments = { pid = "${pid}" } }, as = "log", ["until"] = "second line" },
            call(3, "read_log", { pid = "${pid}", tail_lines = 1 }), expect(3, "tail"),
            call(4, "read_log", { pid = "${pid}", offset = 3 }), expect(4, "offset"),
            call(5, "list_jobs"), expect(5, "jobs"),
            call(6, "cancel_turn", { turn = "t1" }), expect(6, "cancel"),
            call(7, "stop_job", { pid = "${pid}" }), expect(7, "stop"),
            call(8, "read_log", { pid = 99999 }), expect(8, "no_job"),
            { close = true },
        })
        local k = r.kept
        assert.is_nil(r.error, r.describe)
        local pid = math.tointeger(k.bg.result.structuredContent.pid)
        assert.are.equal(("Background command started.\nPID: %d\nLog: /tmp/cordon/processes/%d.log\nStop: kill -TERM -- -%d\n")
            :format(pid, pid, pid), text(k.bg))
        local log = text(k.log)
        assert.truthy(log:match("^serving on %d+\nsecond line\n$"), log)
        assert.are.equal(#log, k.log.result.structuredContent.size)
        assert.are.equal(#log, k.log.result.structuredContent.next_offset)
        assert.are.equal("second line\n", text(k.tail))
        assert.are.equal(log:sub(4), text(k.offset))
        assert.truthy(text(k.jobs):find(pid .. " running background", 1, true), text(k.jobs))
        assert.are.equal("running", k.jobs.result.structuredContent.jobs[1].state)
        assert.are.same({ pid }, k.cancel.result.structuredContent.stopped)
        assert.are.equal("stopped", k.stop.result.structuredContent.state)
        assert.is_true(k.no_job.result.isError, r.describe)
        assert.are.equal(0, r.returncode, r.describe)
    end)

    it("bounds what one result carries (the head and tail of a stream, the cut said) and how long a command runs", function()
        local r = drive({
            init(1, "2025-11-25"), expect(1, "init"),
            call(2, "run_command", { command = "echo START; head -c 300000 /dev/zero | tr '\\0' a; echo; echo END" }),
            expect(2, "big"),
            call(3, "run_command", { command = "echo before; sleep 60", timeout = 0.5 }), expect(3, "slow"),
            { close = true },
        })
        assert.is_nil(r.error, r.describe)
        local t = text(r.kept.big)
        local sc = r.kept.big.result.structuredContent
        assert.is_true(sc.stdout_truncated)
        assert.is_false(sc.stderr_truncated)
        assert.truthy(#t < 64 * 1024 + 200, #t)
        assert.truthy(t:find("^%[stdout%]\nSTART\n"), t:sub(1, 100))
        assert.truthy(t:find("END\n%[exit code 0%]\n$"), t:sub(-100))
        local omitted = tonumber(t:match("%[cordon: (%d+) bytes of stdout omitted here%]"))
        assert.are.equal(300000 + 6 + 1 + 4 - 64 * 1024, omitted)
        -- a timeout stops the command: a normal result that says so
        local slow = r.kept.slow.result
        assert.is_false(slow.isError)
        assert.is_true(slow.structuredContent.timed_out)
        assert.truthy(text(r.kept.slow):find("^%[stdout%]\nbefore\n%[exit code %d+%] timed out"), text(r.kept.slow))
    end)

    it("asks the client through elicitation while the call runs, and a decline denies", function()
        local o = h.origin()
        local fetch = ("curl -sS --noproxy '' --max-time 30 http://127.0.0.1:%d/x; echo rc=$?"):format(o.port)
        local r = drive({
            init(1, "2025-11-25", { elicitation = {} }), expect(1, "init"),
            call(2, "run_command", { command = fetch }),
            -- the call is running (it waits for the answer); the server reads on meanwhile
            { answer = "elicitation/create", result = { action = "decline" }, as = "asked" },
            expect(2, "denied"),
            { close = true },
        })
        assert.is_nil(r.error, r.describe)
        local p = r.kept.asked.params
        assert.truthy(p.message:find("127.0.0.1:" .. o.port, 1, true), p.message)
        assert.are.same({ "once", "session", "for=10m", "for=1h", "deny" }, p.requestedSchema.properties.answer.enum)
        local t = text(r.kept.denied)
        assert.is_nil(t:find(o.marker, 1, true), t)
        assert.truthy(t:find("cordon asked the user: ", 1, true), t)
        assert.truthy(t:find("rc=%d+"), t)
    end)

    it("asks about another client's command too: the session's questions reach it", function()
        local s = h.session_start("spec-mcp-" .. h.token(), { flags = { "--ask-sandbox-off" } })
        local target = h.tmpdir() .. "/written-outside"
        local exec = h.command_line({ "exec", s.name, "--", "touch " .. target }, { env = s.env })
        local r = drive({
            init(1, "2025-11-25", { elicitation = {} }), expect(1, "init"),
            { spawn = "cd " .. h.quote(s.cwd) .. " && " .. exec, as = "exec" },
            { answer = "elicitation/create", result = { action = "accept", content = { answer = "once" } }, as = "asked" },
            { wait_spawned = "exec" },
            { close = true },
        }, { runtime = s.runtime, cwd = s.cwd, args = { "--session", s.name } })
        assert.is_nil(r.error, r.describe)
        assert.truthy(r.kept.asked.params.message:find("touch " .. target, 1, true), r.kept.asked.params.message)
        assert.are.equal(0, r.kept.exec.returncode, r.kept.exec.output)
        assert.truthy(h.read_file(target), "the approved re-run did not write " .. target)
    end)

    it("shows a control, bidi or zero-width character of the command visibly in the elicitation", function()
        local s = h.session_start("spec-mcp-" .. h.token(), { flags = { "--ask-sandbox-off" } })
        local target = h.tmpdir() .. "/written-outside"
        -- ESC[8m would hide the rest on a terminal, U+202E reorders it, U+200B is invisible
        local cmd = "touch " .. target .. " # \27[8m hidden \226\128\174 rtl \226\128\139 zw"
        local exec = h.command_line({ "exec", s.name, "--", cmd }, { env = s.env })
        local r = drive({
            init(1, "2025-11-25", { elicitation = {} }), expect(1, "init"),
            { spawn = "cd " .. h.quote(s.cwd) .. " && " .. exec, as = "exec" },
            { answer = "elicitation/create", result = { action = "decline" }, as = "asked" },
            { wait_spawned = "exec" },
            { close = true },
        }, { runtime = s.runtime, cwd = s.cwd, args = { "--session", s.name } })
        assert.is_nil(r.error, r.describe)
        local m = r.kept.asked.params.message
        assert.truthy(m:find("touch " .. target, 1, true), m)
        -- (the escalate policy's reason already shows ESC as "?"; the renderer takes the rest)
        assert.truthy(m:find("[8m hidden <U+202E> rtl <U+200B> zw", 1, true), m)
        assert.is_nil(m:find("[\27\226]"), m)
        assert.is_nil(h.read_file(target), "a declined re-run wrote " .. target)
    end)

    it("asks the person before publishing a port beyond loopback, and refuses without one", function()
        -- 0.0.0.0 (every address of the host) and 2001:db8::1: other machines could reach them;
        -- never bound here (declined, or refused before the session is asked)
        local r = drive({
            init(1, "2025-11-25", { elicitation = {} }), expect(1, "init"),
            call(2, "publish_port", { port = 8000, host_port = 0, host_addr = "0.0.0.0" }),
            { answer = "elicitation/create", result = { action = "decline" }, as = "asked" },
            expect(2, "declined"),
            call(3, "publish_port", { port = 8001, host_port = 0, host_addr = "127.0.0.2" }),
            expect(3, "loopback"),
            call(4, "session_status"), expect(4, "status"),
            { close = true },
        })
        assert.is_nil(r.error, r.describe)
        local m = r.kept.asked.params.message
        assert.truthy(m:find("sandbox port 8000 published on the host at 0.0.0.0", 1, true), m)
        assert.is_true(r.kept.declined.result.isError, r.describe)
        assert.truthy(text(r.kept.declined):find("^cordon: publishing sandbox port 8000 on 0.0.0.0 %(not "
            .. "loopback.*the person did not allow it, refused$"), text(r.kept.declined))
        -- a loopback address is published unasked (no other elicitation came: the script had one)
        assert.is_false(r.kept.loopback.result.isError, r.describe)
        assert.are.equal("127.0.0.2", r.kept.loopback.result.structuredContent.host_addr)
        local st = text(r.kept.status)
        assert.is_nil(st:find("8000 ->", 1, true), st)
        -- a client that cannot ask: refused at once, in one line that says how to do it outside
        local n = drive({
            init(1, "2025-06-18"), expect(1, "init"),
            call(2, "publish_port", { port = 8000, host_addr = "2001:db8::1" }), expect(2, "refused"),
            { close = true },
        })
        assert.is_nil(n.error, n.describe)
        local t = text(n.kept.refused)
        assert.is_true(n.kept.refused.result.isError, n.describe)
        assert.truthy(t:find("^cordon: publishing sandbox port 8000 on 2001:db8::1 %(not loopback"), t)
        assert.truthy(t:find("this MCP client cannot ask one: refused (publish on 127.0.0.1, or run `cordon publish ", 1, true), t)
        assert.is_nil(t:find("\n.", 1), t)
    end)

    it("denies a question at once when the client cannot be asked", function()
        local o = h.origin()
        local r = drive({
            init(1, "2025-06-18"), expect(1, "init"),
            call(2, "run_command", { command = ("curl -sS --noproxy '' --max-time 30 http://127.0.0.1:%d/x"):format(o.port) }),
            expect(2, "denied"),
            { close = true },
        })
        assert.is_nil(r.error, r.describe)
        local t = text(r.kept.denied)
        assert.is_nil(t:find(o.marker, 1, true), t)
        -- denied at once, the rule that would allow it named: by us (a session that asks whoever
        -- attached an exec), or by a session that asks only approvers and has none
        assert.truthy(t:find("--network-allow 127.0.0.1:" .. o.port, 1, true), t)
        for _, m in ipairs(r.messages) do assert.is_nil(m.method, r.describe) end
    end)

    it("stops a cancelled call's command, and does not answer the call", function()
        local r = drive({
            init(1, "2025-11-25"), expect(1, "init"),
            call(2, "run_command", { command = "echo started; sleep 600" }),
            { poll = { name = "list_jobs", arguments = {} }, as = "running", ["until"] = "sleep 600" },
            { send_json = { jsonrpc = "2.0", method = "notifications/cancelled",
                params = { requestId = 2, reason = "the user pressed Esc" } } },
            { poll = { name = "list_jobs", arguments = {} }, as = "after", ["until"] = "no jobs" },
            req(3, "ping"), expect(3, "ping"),
            { close = true },
        })
        assert.is_nil(r.error, r.describe)
        assert.truthy(text(r.kept.after):find("no jobs", 1, true), text(r.kept.after))
        for _, m in ipairs(r.messages) do assert.are_not.equal(2, m.id, r.describe) end
        assert.are.equal(0, r.returncode, r.describe)
    end)

    it("stops with its session on TERM, a command still running", function()
        local r = drive({
            init(1, "2025-11-25"), expect(1, "init"),
            call(2, "run_command", { command = "sleep 600" }),
            call(3, "session_status"), expect(3, "status"),
            { signal = "TERM" }, { wait_exit = true },
        })
        assert.is_nil(r.error, r.describe)
        assert.are.equal(0, r.returncode, r.describe)
        assert.truthy(r.stderr:find("stopping", 1, true), r.describe)
        assert.are.equal("", sockets(r.runtime), r.describe)
        local pid = math.tointeger(r.kept.status.result.structuredContent.pid)
        assert.is_false(h.is_controller(pid), "the session's controller is still there")
    end)

    it("publishes a dev server's port on the host, lists it, unpublishes it, and says refusals", function()
        local ws = h.workspace()
        local marker = "mcp-published-" .. h.token() .. ".txt"
        h.write_file(ws .. "/" .. marker, "x\n")
        local hp = tonumber(h.sh_ok(h.python .. " -c " .. h.quote("import socket; s=socket.socket(); "
            .. "s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")))
        local taken = h.server("http")
        -- from the host; the first attempts may come before the listener inside is up
        local curl = ("for i in $(seq 1 50); do curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:%d/ "
            .. "&& exit 0; sleep 0.2; done; exit 1"):format(hp)
        local r = drive({
            init(1, "2025-11-25"), expect(1, "init"),
            call(2, "start_background", { command = "python3 -u -m http.server 8000 --bind 127.0.0.1" }),
            expect(2, "bg"),
            { save = "pid", from = "bg", path = { "result", "structuredContent", "pid" } },
            { poll = { name = "read_log", arguments = { pid = "${pid}" } }, as = "log", ["until"] = "Serving HTTP" },
            call(3, "publish_port", { port = 8000, host_port = hp }), expect(3, "published"),
            { spawn = curl, as = "fetched" }, { wait_spawned = "fetched" },
            call(4, "session_status"), expect(4, "status"),
            call(5, "publish_port", { port = 8000, host_port = hp }), expect(5, "again"),
            call(6, "publish_port", { port = 8001, host_port = taken.port }), expect(6, "taken"),
            call(7, "publish_port", { port = 0 }), expect(7, "bad_port"),
            call(8, "publish_port", { port = 8002, host_port = 70000 }), expect(8, "bad_host_port"),
            call(9, "publish_port", { port = 8002, host_addr = "not-an-ip" }), expect(9, "bad_addr"),
            call(10, "unpublish_port", { port = 8000 }), expect(10, "unpublished"),
            { spawn = ("curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:%d/"):format(hp), as = "gone" },
            { wait_spawned = "gone" },
            call(11, "unpublish_port", { port = 8000 }), expect(11, "not_published"),
            call(12, "unpublish_port", {}), expect(12, "no_port"),
            { close = true },
        }, { cwd = ws })
        local k = r.kept
        assert.is_nil(r.error, r.describe)
        local addr = "127.0.0.1:" .. hp
        assert.is_false(k.published.result.isError, r.describe)
        assert.are.equal(("sandbox port 8000 is published on the host at %s (open it at http://%s/ for a web server)\n")
            :format(addr, addr), text(k.published))
        local sc = k.published.result.structuredContent
        assert.are.equal(8000, sc.port)
        assert.are.equal(hp, sc.host_port)
        assert.are.equal("127.0.0.1", sc.host_addr)
        -- the host got the workspace's listing from the server in the sandbox
        assert.are.equal(0, k.fetched.returncode, k.fetched.output)
        assert.truthy(k.fetched.output:find(marker, 1, true), k.fetched.output)
        local st = text(k.status)
        assert.truthy(st:find("published ports:\n  8000 -> " .. addr, 1, true), st)
        assert.truthy(st:find("host ports reachable inside: none\n", 1, true), st)
        assert.are.equal(8000, k.status.result.structuredContent.ports[1].port)
        -- the API's refusals are tool errors with its line
        assert.is_true(k.again.result.isError, r.describe)
        assert.truthy(text(k.again):find("^cordon: .*8000"), text(k.again))
        assert.is_true(k.taken.result.isError, r.describe)
        assert.truthy(text(k.taken):find("127.0.0.1:" .. taken.port .. " is taken on the host", 1, true), text(k.taken))
        assert.is_true(k.bad_addr.result.isError, r.describe)
        assert.truthy(text(k.bad_addr):find("^cordon: "), text(k.bad_addr))
        -- bad arguments are refused before the session is asked
        assert.is_true(k.bad_port.result.isError, r.describe)
        assert.truthy(text(k.bad_port):find("port must be an integer from 1 to 65535", 1, true), text(k.bad_port))
        assert.is_true(k.bad_host_port.result.isError, r.describe)
        assert.truthy(text(k.bad_host_port):find("host_port must be an integer from 0 to 65535", 1, true),
            text(k.bad_host_port))
        assert.is_true(k.no_port.result.isError, r.describe)
        assert.truthy(text(k.no_port):find("missing argument 'port'", 1, true), text(k.no_port))
        -- unpublished: the host port is closed
        assert.is_false(k.unpublished.result.isError, r.describe)
        assert.are.equal("sandbox port 8000 is no longer published on the host\n", text(k.unpublished))
        assert.is_true(k.unpublished.result.structuredContent.unpublished)
        assert.are_not.equal(0, k.gone.returncode, k.gone.output)
        assert.is_true(k.not_published.result.isError, r.describe)
        assert.truthy(text(k.not_published):find("8000 is not published", 1, true), text(k.not_published))
        assert.are.equal(0, r.returncode, r.describe)
    end)

    it("has a usage, and refuses options that do not fit", function()
        local r = h.cordon({ "mcp", "--help" })
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("usage: cordon mcp", 1, true))
        r = h.cordon({ "mcp", "--detach" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("cordon: mcp: --detach", 1, true), h.describe(r))
        r = h.cordon({ "mcp", "--session" })
        assert.are.equal(125, r.code, h.describe(r))
        r = h.cordon({ "mcp", "--session", "x", "--profile", "coding" })
        assert.are.equal(125, r.code, h.describe(r))
        r = h.cordon({ "mcp", "--no-such-option" }, { env = { XDG_RUNTIME_DIR = h.runtime_dir() } })
        assert.are.equal(125, r.code, h.describe(r))
        assert.are.equal("", r.stdout, h.describe(r))
        r = h.cordon({ "mcp", "--session", "no-such-session" }, { env = { XDG_RUNTIME_DIR = h.runtime_dir() } })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("no session named 'no-such-session'", 1, true), h.describe(r))
        assert.are.equal("", r.stdout, h.describe(r))
        r = h.cordon({ "--help" })
        assert.truthy(r.stdout:find("\n  mcp ", 1, true), r.stdout)
    end)
end)
