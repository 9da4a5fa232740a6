-- spec/04-engine/run_escalate_spec.lua — after the sandbox refused a command: the one-line report,
-- and with --ask-sandbox-off the question on the terminal (answered through a real pty by
-- spec/fixtures/engine/egress/answer.py): "o" re-runs that one command outside the sandbox
-- with the sandbox's environment minus secrets and proxy variables; "d", no answer within
-- --permission-timeout, --plan, or no terminal never run anything outside.
local h = require("spec.helpers")

local ANSWER = h.fixtures .. "/engine/egress/answer.py"

-- A path the sandbox cannot write: a fresh directory under the host's /var/tmp.
local function outside_target()
    local dir = h.tmpdir()
    return dir .. "/made-outside", dir
end

local function on_terminal(key, flags, script, env)
    local ws = h.workspace()
    local argv = { "env" }
    for k, v in pairs(env or {}) do argv[#argv + 1] = k .. "=" .. v end
    for _, a in ipairs({ h.python, ANSWER, key, "40", "--", h.bin, "run", "--workspace", ws }) do
        argv[#argv + 1] = a
    end
    for _, f in ipairs(flags) do argv[#argv + 1] = f end
    for _, a in ipairs({ "--", "/bin/sh", "-c", script }) do argv[#argv + 1] = a end
    return h.sh(h.join(argv))
end

local function has(r, text)
    assert.truthy((r.stdout .. r.stderr):find(text, 1, true), "expected '" .. text .. "'\n" .. h.describe(r))
end

describe("cordon run: a refused command", function()
    after_each(h.cleanup)

    it("is reported in one line, and nothing is asked without --ask-sandbox-off", function()
        local target = outside_target()
        local r = on_terminal("o", {}, "touch " .. h.quote(target))
        has(r, "cordon: the sandbox refused a write to " .. target)
        has(r, "run with --ask-sandbox-off to be asked next time")
        assert.is_nil(r.stdout:find("[D] deny", 1, true), h.describe(r))
        assert.is_nil(h.read_file(target))
    end)

    it("'o' runs it once more outside the sandbox, announced, with its exit code", function()
        local target = outside_target()
        local r = on_terminal("o", { "--ask-sandbox-off" }, "touch " .. h.quote(target) .. " && exit 7")
        has(r, "The sandboxed attempt already ran and may have left partial changes.")
        has(r, "cordon: running outside the sandbox, as approved:")
        assert.are.equal(7, r.code, h.describe(r))
        assert.are.equal("", h.read_file(target))
    end)

    it("the re-run gets the sandbox's environment minus secrets and proxy variables", function()
        local target, dir = outside_target()
        local r = on_terminal("o", { "--ask-sandbox-off" },
            "touch " .. h.quote(target) .. " && env > " .. h.quote(dir .. "/env"),
            { FOO_API_KEY = "secret-value", KEEP_ME = "kept" })
        local env = h.read_file(dir .. "/env") or ""
        assert.truthy(env:find("KEEP_ME=kept", 1, true), h.describe(r))
        assert.truthy(env:find("CORDON_OUTSIDE_SANDBOX=1", 1, true), env)
        assert.is_nil(env:find("secret-value", 1, true), env)
        assert.is_nil(env:find("HTTP_PROXY=", 1, true), env)
        assert.is_nil(env:find("CORDON_SANDBOX=", 1, true), env)
    end)

    it("'d' denies: nothing runs outside", function()
        local target = outside_target()
        local r = on_terminal("d", { "--ask-sandbox-off" }, "touch " .. h.quote(target))
        has(r, "[D] deny")
        assert.is_nil(r.stdout:find("running outside the sandbox", 1, true), h.describe(r))
        assert.is_nil(h.read_file(target))
        assert.are.equal(1, r.code, h.describe(r))
    end)

    it("no answer within --permission-timeout denies", function()
        local target = outside_target()
        local r = on_terminal("none", { "--ask-sandbox-off", "--permission-timeout", "2" }, "touch " .. h.quote(target))
        has(r, "no answer in time: denied")
        assert.is_nil(h.read_file(target))
    end)

    it("--plan never asks", function()
        local target = outside_target()
        local r = on_terminal("o", { "--ask-sandbox-off", "--plan" }, "touch " .. h.quote(target))
        has(r, "cordon: the sandbox refused a write to " .. target)
        assert.is_nil(r.stdout:find("[D] deny", 1, true), h.describe(r))
        assert.is_nil(h.read_file(target))
    end)

    it("without a terminal nobody is asked and nothing runs outside", function()
        local target = outside_target()
        local r = h.run_sh("touch " .. h.quote(target), { flags = { "--ask-sandbox-off", "--json" } })
        has(r, "cordon: the sandbox refused a write to " .. target)
        local v = assert(h.last_json(r.stdout))
        assert.are.equal(false, v.ran_outside)
        assert.are.equal("write", v.refusals[1].kind)
        assert.is_nil(h.read_file(target))
    end)
end)

describe("cordon run: a blocked destination", function()
    after_each(h.cleanup)

    -- An origin on the host's loopback (spec/fixtures/engine/egress/origin.py), and a profile
    -- that never asks about destinations while the command runs (network.ask = false), so the
    -- refusal is what is offered afterwards.
    local function origin_and_profile()
        local o = h.origin()
        local cfg = h.profile_dir("noask", 'return { extends = "coding", network = { ask = false } }')
        return o.port, o.marker, { XDG_CONFIG_HOME = cfg }
    end

    local function fetch(port)
        return ("curl -sS --noproxy '' --max-time 20 http://127.0.0.1:%d/x; echo curl-exit=$?"):format(port)
    end

    it("is offered as that destination allowed in a fresh sandbox, not as a re-run outside", function()
        local port, marker, env = origin_and_profile()
        local r = on_terminal("o", { "--profile", "noask", "--ask-sandbox-off" }, fetch(port), env)
        has(r, ("--network-allow 127.0.0.1:%d)?"):format(port))
        has(r, ("running it again in a fresh sandbox with --network-allow 127.0.0.1:%d"):format(port))
        has(r, marker) -- the second attempt, in the sandbox, reached it
        assert.is_nil(r.stdout:find("outside the sandbox", 1, true), h.describe(r))
        assert.are.equal(0, r.code, h.describe(r))
    end)

    it("'d' leaves it blocked and runs nothing again", function()
        local port, marker, env = origin_and_profile()
        local r = on_terminal("d", { "--profile", "noask", "--ask-sandbox-off" }, fetch(port), env)
        has(r, "denied")
        assert.is_nil(r.stdout:find(marker, 1, true), h.describe(r))
        assert.is_nil(r.stdout:find("running it again", 1, true), h.describe(r))
    end)
end)

describe("cordon run: the re-run question", function()
    after_each(h.cleanup)

    it("says an approval for the session covers the exact command line, not what it runs", function()
        local target = outside_target()
        local r = on_terminal("d", { "--ask-sandbox-off" }, "touch " .. h.quote(target))
        has(r, "Run `/bin/sh -c 'touch " .. target .. "'` outside the sandbox?")
        has(r, "\"Session\" covers this exact command line, not what it runs")
        has(r, "[o] allow once  [s] allow for this session  [D] deny")
        assert.is_nil(h.read_file(target))
    end)
end)
