-- spec/04-engine/run_own_dirs_spec.lua — cordon's own folders (configuration, state with the
-- audit log, cache, session sockets) are found in one place, and a relative XDG_* variable is
-- ignored as the XDG Base Directory specification says: a relative XDG_STATE_HOME named a
-- folder below the current one, the workspace, where the audit log then lay writable by every
-- command. Run as root and as uid 65534.
local h = require("spec.helpers")

local NOBODY = 65534
-- One network decision (a destination no rule allows): the proxy opens the audit log.
local FETCH = "curl -sS --max-time 10 http://blocked.invalid/ >/dev/null 2>&1; true"

local function case(uid)
    local home = h.secret_home(uid)
    local ws = h.workspace(nil, uid)
    -- the relative names resolve against the current folder: the workspace
    local r = h.cordon({ "run", "--", "/bin/bash", "-c", FETCH }, {
        cwd = ws, home = home, uid = uid,
        env = { XDG_STATE_HOME = "state", XDG_CONFIG_HOME = "conf", XDG_CACHE_HOME = "cache",
                XDG_RUNTIME_DIR = "run" },
        unset = { "CORDON_AUDIT_LOG" },
    })
    assert.are.equal("", h.chomp(h.sh_ok("ls -A " .. h.quote(ws))), h.describe(r))
    local log = h.read_file(home .. "/.local/state/cordon/audit.jsonl") or ""
    assert.truthy(log:find('"host":"blocked.invalid"', 1, true), h.describe(r) .. "\n" .. log)
end

describe("cordon run: a relative XDG variable", function()
    after_each(h.cleanup)

    it("is ignored: the audit log goes to ~/.local/state, nothing to the workspace (root)", function()
        case(nil)
    end)

    it("is ignored: the audit log goes to ~/.local/state, nothing to the workspace (uid 65534)",
        function()
            case(NOBODY)
        end)
end)
