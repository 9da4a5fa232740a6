-- spec/04-engine/session_mcp_sdk_spec.lua — `cordon mcp` driven by the official MCP TypeScript SDK's
-- client (spec/fixtures/mcp/sdk_client.mjs, on the SDK version that `make deps` installs into
-- build-deps/npm from spec/fixtures/mcp/package-lock.json): what a real MCP client sends and
-- accepts (its schema checks of every answer, the outputSchema check of structuredContent),
-- a command, a background server and its log, a refused write, an elicitation the client
-- answers "once" for an origin on 127.0.0.2 that no rule allows, and bad requests.
local h = require("spec.helpers")
local cjson = require("cjson")

local PREFIX = os.getenv("CORDON_NPM_PREFIX") or (h.source_dir or os.getenv("CORDON_SOURCE_DIR") or ".") .. "/build-deps/npm"
local CLIENT = h.fixtures .. "/mcp/sdk_client.mjs"

local function text(result)
    local parts = {}
    for _, c in ipairs(result and result.content or {}) do parts[#parts + 1] = c.text or "" end
    return table.concat(parts)
end

describe("cordon mcp: with the MCP TypeScript SDK's client", function()
    after_each(h.cleanup)

    it("connects, lists tools, runs commands, asks the user through elicitation, answers bad requests", function()
        assert(h.sh("test -f " .. h.quote(PREFIX .. "/node_modules/@modelcontextprotocol/sdk/package.json")).code == 0,
            "the MCP SDK is not installed in " .. PREFIX .. " (make deps installs it)")
        local runtime = h.runtime_dir()
        local ws = h.workspace()
        local line = h.command_line({}, { env = { XDG_RUNTIME_DIR = runtime }, timeout = 180 })
        -- h.command_line ends with the binary: node gets the environment's words and cordon's
        local envpart, bin = line:match("^(.-env .-) (%S+) $")
        assert(envpart, line)
        local cmd = ("cd %s && %s node %s %s -- %s mcp"):format(h.quote(ws), envpart, h.quote(CLIENT),
            h.quote(PREFIX), bin)
        local r = h.sh(cmd)
        local ok, out = pcall(cjson.decode, h.chomp(r.stdout):match("[^\n]*$"))
        assert(ok and type(out) == "table", "sdk_client.mjs failed\n" .. h.describe(r))
        local why = ("%s\n%s"):format(h.describe(r), tostring(out.error))
        -- the server's stderr is the client's (inherited): sanitizer reports land there
        assert.is_nil(r.stderr:find("Sanitizer", 1, true), why)
        assert.is_nil(r.stderr:find("runtime error:", 1, true), why)
        assert.is_nil(out.error ~= cjson.null and out.error or nil, why)

        assert.are.equal("cordon", out.server.version.name)
        local names = {}
        for _, t in ipairs(out.tools) do
            names[#names + 1] = t.name
            assert.is_true(t.hasOutputSchema, t.name)
        end
        assert.are.same({ "run_command", "start_background", "list_jobs", "read_log", "stop_job",
            "cancel_turn", "session_status", "publish_port", "unpublish_port", "review_changes",
            "fork_session", "snapshot_workspace", "rollback_workspace" }, names)

        assert.are.equal(3, out.echo.structuredContent.exit_code, why)
        assert.is_false(out.echo.isError)
        assert.are.equal("[stdout]\nhi\n[exit code 3]\n", text(out.echo))

        local pid = math.tointeger(out.background.structuredContent.pid)
        assert.truthy(text(out.background):find("PID: " .. pid, 1, true), why)
        assert.truthy(text(out.log):match("^serving on %d+\n"), text(out.log))
        assert.are.equal("[stdout]\n200\n[exit code 0]\n", text(out.fetch_local))
        assert.are.equal("running", out.jobs.structuredContent.jobs[1].state)
        assert.are.equal("stopped", out.stop.structuredContent.state)

        assert.truthy(text(out.refused):find("cordon: the sandbox refused a write to /etc/cordon-mcp-x", 1, true),
            text(out.refused))
        assert.are.equal("write", out.refused.structuredContent.refusals[1].kind)

        -- the question reached the client's handler, whose "once" let the command through
        local e = out.elicitation
        assert.are.equal(1, #e.asked, why)
        assert.truthy(e.asked[1].message:find("127.0.0.2:" .. math.tointeger(e.port), 1, true), e.asked[1].message)
        assert.are.same({ "once", "session", "for=10m", "for=1h", "deny" }, e.asked[1].schema.properties.answer.enum)
        assert.are.equal(0, e.result.structuredContent.exit_code, why)
        assert.truthy(text(e.result):find(e.marker .. " /x", 1, true), text(e.result))

        assert.is_false(out.unknown_tool.ok)
        assert.are.equal(-32602, out.unknown_tool.code)
        assert.is_false(out.unknown_method.ok)
        assert.are.equal(-32601, out.unknown_method.code)
        -- the SDK negotiates 2025-11-25, where bad arguments are a tool error the model reads
        assert.is_true(out.bad_args.ok)
        assert.is_true(out.bad_args.value.isError)
        assert.is_true(out.ping.ok)
        assert.truthy(out.status.structuredContent.name:match("^mcp%-%d+$"), why)

        -- the client closed the server's stdin: its session is gone
        assert.are.equal(0, r.code, why)
        assert.are.equal("", h.sh("ls " .. h.quote(runtime .. "/cordon") .. " 2>/dev/null | grep '\\.sock$'").stdout)
    end)
end)
