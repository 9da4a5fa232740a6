-- spec/04-engine/egress_ask_spec.lua — asking the owner about an unlisted destination: with a
-- terminal, `cordon run` shows one question per host:port, the connections wait, the answer is
-- kept for the rest of the run, and no answer in time denies; without a terminal, unlisted
-- destinations are denied at once. Origins run on the HOST's loopback (origin.py).
local h = require("spec.helpers")

local FIX = h.fixtures .. "/engine/egress"

local origin = h.origin

-- Occurrences of plain text (no patterns) in s.
local function count(s, text)
    local n, at = 0, 1
    while true do
        local i = s:find(text, at, true)
        if not i then return n end
        n, at = n + 1, i + #text
    end
end

-- Two requests to the same origin: one question, its answer kept for the second.
local function script(o)
    local url = "http://127.0.0.1:" .. o.port
    return ("curl -sS --noproxy '' --max-time 30 %s/one; curl -sS --noproxy '' --max-time 30 %s/two; echo end-of-command")
        :format(url, url)
end

local function answer(key, timeout, o, extra)
    local ws = h.workspace()
    local argv = { h.python, FIX .. "/answer.py", key, tostring(timeout), "--", h.bin, "run" }
    for _, a in ipairs(extra or {}) do argv[#argv + 1] = a end
    for _, a in ipairs({ "--workspace", ws, "--", "/bin/sh", "-c", script(o) }) do argv[#argv + 1] = a end
    return h.sh(h.join(argv))
end

describe("cordon run: asking about unlisted destinations", function()
    after_each(h.cleanup)

    it("'c' allows, and the second request is not asked again", function()
        local o = origin()
        local r = answer("c", 40, o)
        assert.are.equal(1, count(r.stdout, "which no rule allows"), h.describe(r))
        assert.are.equal(2, count(r.stdout, o.marker), h.describe(r))
        assert.truthy(r.stdout:find("end-of-command", 1, true), h.describe(r))
    end)

    it("'d' denies with the 403 and the flag, and the answer is kept", function()
        local o = origin()
        local r = answer("d", 40, o)
        assert.is_nil(r.stdout:find(o.marker, 1, true), h.describe(r))
        assert.truthy(r.stdout:find("denied by the owner", 1, true), h.describe(r))
        assert.truthy(r.stdout:find("denied earlier in this run", 1, true), h.describe(r))
        assert.truthy(r.stdout:find("--network-allow 127.0.0.1:" .. o.port, 1, true), h.describe(r))
    end)

    it("no answer within the permission timeout denies", function()
        local o = origin()
        -- The coding profile waits minutes; a user profile with 2 seconds stands in.
        local cfg = h.tmpdir()
        h.sh_ok("mkdir -p " .. h.quote(cfg .. "/cordon/profiles"))
        h.write_file(cfg .. "/cordon/profiles/quick.lua",
            'return { extends = "coding", escalation = { permission_timeout = 2 } }')
        local ws = h.workspace()
        local r = h.sh(h.join({ "env", "XDG_CONFIG_HOME=" .. cfg, h.python, FIX .. "/answer.py", "none", "40",
            "--", h.bin, "run", "--profile", "quick", "--workspace", ws, "--", "/bin/sh", "-c", script(o) }))
        assert.is_nil(r.stdout:find(o.marker, 1, true), h.describe(r))
        assert.truthy(r.stdout:find("no answer in time", 1, true), h.describe(r))
        assert.truthy(r.stdout:find("end-of-command", 1, true), h.describe(r))
    end)

    it("without a terminal an unlisted destination is denied at once", function()
        local o = origin()
        local r = h.run_sh(script(o))
        assert.is_nil(r.stdout:find(o.marker, 1, true), h.describe(r))
        assert.truthy((r.stdout .. r.stderr):find("nobody can be asked", 1, true), h.describe(r))
    end)
end)
