-- spec/04-engine/run_trusted_changes_spec.lua — direct mode (no --review) tells which host-trusted
-- paths a command changed: `cordon run --json`'s "host_trusted_changes" lists exactly them, with
-- why (controller/trusted_changes.c, host_trusted.c's classifier), [] when none; without --json
-- one stderr line per path.
-- A session exec's exit event (`cordon exec --json`) and MCP run_command say the same.
-- The run cases run as root and as uid 65534; the session and MCP ones as root (the session
-- helpers start sessions as root). Drives the built binary ($CORDON_BIN); loopback only.
local h = require("spec.helpers")
local cjson = require("cjson")

local USER = 65534

--- A workspace with a Makefile, an ordinary file and a folder, owned by uid (nil: root).
local function setup(uid)
    local home = h.tmpdir()
    local ws, parent = h.workspace()
    h.sh_ok("cd " .. h.quote(ws) .. " && printf 'all:\\n\\ttrue\\n' > Makefile"
        .. " && echo base > notes.txt && mkdir src && echo x > src/a.c && chmod 644 Makefile notes.txt")
    if uid then
        h.sh_ok(("chmod 755 %s && chown -R %d:%d %s %s"):format(h.quote(parent), uid, uid,
            h.quote(home), h.quote(ws)))
    end
    return { home = home, ws = ws, uid = uid }
end

local function run(t, script, flags)
    return h.run_sh(script, { home = t.home, workspace = t.ws, uid = t.uid, flags = flags })
end

--- The result object: stdout's last line.
local function result(r)
    local last = r.stdout:match("([^\n]*)\n?$")
    return cjson.decode(last)
end

local function by_path(list)
    local by = {}
    for _, c in ipairs(list) do by[c.path] = c end
    return by
end

for _, who in ipairs({ { name = "as root" }, { name = "as uid 65534", uid = USER } }) do
    describe("direct mode's host-trusted changes " .. who.name, function()
        after_each(h.cleanup)

        it("lists .envrc, a workflow, new executables at the top and in scripts/, Makefile", function()
            local t = setup(who.uid)
            local r = run(t, table.concat({
                "echo 'export X=1' > .envrc",
                "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml",
                "mkdir scripts && printf '#!/bin/sh\\n' > scripts/tool.sh && chmod +x scripts/tool.sh",
                "printf '#!/bin/sh\\n' > run.sh && chmod +x run.sh",
                -- a documented limit (docs/cli-json.md): a new executable deeper than the top and
                -- the tools' folders is `cordon review`'s to find, not this cheap look's
                "printf '#!/bin/sh\\n' > src/deep.sh && chmod +x src/deep.sh",
                "printf 'x:\\n' >> Makefile",
                "echo more >> notes.txt && echo y > src/b.c",
            }, " && "), { "--json" })
            assert.are.equal(0, r.code, h.describe(r))
            local list = result(r).host_trusted_changes
            assert.are.equal(5, #list, h.describe(r))
            local by = by_path(list)
            assert.are.equal("added", by[".envrc"].change)
            assert.truthy(by[".envrc"].why:find("direnv", 1, true))
            assert.are.equal("added", by[".github/workflows/ci.yml"].change)
            assert.truthy(by[".github/workflows/ci.yml"].why:find("CI", 1, true))
            assert.are.equal("added", by["scripts/tool.sh"].change)
            assert.truthy(by["scripts/tool.sh"].why:find("executable", 1, true))
            assert.are.equal("added", by["run.sh"].change)
            assert.is_nil(by["src/deep.sh"])
            assert.are.equal("changed", by["Makefile"].change)
            assert.truthy(by["Makefile"].why:find("build", 1, true))
            assert.is_nil(by["notes.txt"])
            assert.is_nil(by["src/b.c"])
            -- sorted by path
            assert.are.same({ ".envrc", ".github/workflows/ci.yml", "Makefile", "run.sh", "scripts/tool.sh" },
                { list[1].path, list[2].path, list[3].path, list[4].path, list[5].path })
        end)

        it("lists none when the command changes nothing, a removal, a rename into a trusted name", function()
            local t = setup(who.uid)
            local r = run(t, "cat Makefile >/dev/null && echo x >> notes.txt", { "--json" })
            assert.are.equal(0, r.code, h.describe(r))
            assert.are.same({}, result(r).host_trusted_changes)
            assert.truthy(r.stdout:find('"host_trusted_changes":[]', 1, true), h.describe(r))
            r = run(t, "rm Makefile", { "--json" })
            local list = result(r).host_trusted_changes
            assert.are.equal(1, #list, h.describe(r))
            assert.are.equal("Makefile", list[1].path)
            assert.are.equal("removed", list[1].change)
            -- a file there before, renamed to a host-trusted name: added
            r = run(t, "mv notes.txt .envrc", { "--json" })
            list = result(r).host_trusted_changes
            assert.are.equal(1, #list, h.describe(r))
            assert.are.same({ path = ".envrc", change = "added" }, { path = list[1].path, change = list[1].change })
        end)

        it("tells a person on stderr, one line per path, and nothing when none", function()
            local t = setup(who.uid)
            local r = run(t, "echo 'export X=1' > .envrc")
            assert.are.equal(0, r.code, h.describe(r))
            assert.truthy(r.stderr:find("cordon: added what the host runs or trusts: .envrc (direnv",
                1, true), h.describe(r))
            r = run(t, "echo x >> notes.txt")
            assert.is_nil(r.stderr:find("host runs or trusts", 1, true), h.describe(r))
        end)

        it("lists nothing in review mode, where the host's workspace does not change", function()
            local t = setup(who.uid)
            local r = run(t, "echo 'export X=1' > .envrc", { "--review", "--json" })
            assert.are.equal(0, r.code, h.describe(r))
            assert.are.same({}, result(r).host_trusted_changes)
        end)
    end)
end

describe("a session's host-trusted changes", function()
    after_each(h.cleanup)

    it("are in cordon exec --json's exit event, [] when none", function()
        local t = setup(nil)
        local s = h.session_start("trusted-exec", { cwd = t.ws })
        local r = h.cordon({ "exec", s.name, "--json", "--", "/bin/bash", "-c",
            "echo 'export X=1' > .envrc && echo y >> notes.txt" }, { cwd = t.ws, env = s.env })
        assert.are.equal(0, r.code, h.describe(r))
        local list = result(r).host_trusted_changes
        assert.are.equal(1, #list, h.describe(r))
        assert.are.equal(".envrc", list[1].path)
        assert.are.equal("added", list[1].change)
        r = h.cordon({ "exec", s.name, "--json", "--", "true" }, { cwd = t.ws, env = s.env })
        assert.are.same({}, result(r).host_trusted_changes)
    end)

    it("are lines of MCP run_command's text and in its structured content", function()
        local t = setup(nil)
        local runtime = h.runtime_dir()
        local line = "cd " .. h.quote(t.ws) .. " && exec " ..
            h.command_line({ "mcp" }, { env = { XDG_RUNTIME_DIR = runtime }, timeout = 150 })
        local req = h.mcp_req
        local steps = h.mcp_opened("spec", {
            req(2, "tools/call", { name = "run_command",
                arguments = { command = "printf 'x:\\n' >> Makefile; echo z >> notes.txt" } }),
            { expect = 2, as = "changed" },
            req(3, "tools/call", { name = "run_command", arguments = { command = "true" } }),
            { expect = 3, as = "none" },
            { close = true },
        })
        local rep, why = h.mcp_raw(steps, line)
        local function text(msg)
            local parts = {}
            for _, c in ipairs(msg.result.content) do parts[#parts + 1] = c.text or "" end
            return table.concat(parts)
        end
        local changed, none = rep.kept.changed, rep.kept.none
        assert.truthy(changed and none, why)
        assert.truthy(text(changed):find("cordon: changed what the host runs or trusts: Makefile (a build",
            1, true), text(changed))
        assert.is_nil(text(changed):find("notes.txt", 1, true))
        local list = changed.result.structuredContent.host_trusted_changes
        assert.are.equal(1, #list)
        assert.are.equal("Makefile", list[1].path)
        assert.is_nil(text(none):find("host runs or trusts", 1, true))
        assert.are.same({}, none.result.structuredContent.host_trusted_changes)
    end)
end)
