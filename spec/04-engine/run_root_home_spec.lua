-- spec/04-engine/run_root_home_spec.lua — a root caller whose HOME lies under a folder only root
-- may search (mode 0700 under /srv: outside /var/tmp, which coding's root_only.visible shows).
-- Shifted, the sandbox's uid 0 is no owner on the host, so init cannot reach the home by its
-- name: the run falls back to the sandbox without the shift, as it does for such a workspace,
-- instead of failing with `sandbox set-up: sandbox set-up: move_mount ...: Permission denied`.
-- Root only: an unprivileged caller cannot have a home it cannot search. Every folder the spec
-- makes it removes (h.defer).
local h = require("spec.helpers")

local function is_root()
    return h.chomp(h.sh_ok("id -u")) == "0"
end

describe("a root caller's home under a folder only root may search", function()
    after_each(h.cleanup)

    it("starts the command, with the home's files, and no doubled error prefix", function()
        if not is_root() then h.skip("needs root: the case is a caller of uid 0") end
        if h.sh("test -d /srv -a -w /srv").code ~= 0 then h.skip("no writable /srv here") end
        local closed = h.tmpdir("/srv")
        h.sh_ok("chmod 700 " .. h.quote(closed) .. " && mkdir " .. h.quote(closed .. "/home"))
        local marker = "cordon-spec-home-" .. h.token()
        h.write_file(closed .. "/home/.profile-marker", marker .. "\n")
        local r = h.run_sh("cat ~/.profile-marker", { home = closed .. "/home" })
        assert.is_nil(r.stderr:find("sandbox set-up: sandbox set-up:", 1, true), h.describe(r))
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal(marker .. "\n", r.stdout, h.describe(r))
    end)
end)
