-- spec/04-engine/run_root_only_spec.lua — profile key root_only: what only root may read stays
-- out of a root caller's commands, unless root_only.visible names it; a non-root caller is not
-- affected. Two ways (docs/root-callers.md): shifted (root_writes on, the usual case) every file
-- of root's on the host is unmapped in the sandbox and the kernel refuses it (Permission denied,
-- shown as nobody); the fallback (root_writes = false here, or where the shift cannot be had)
-- scans the scan roots and hides each root-only file (No such file or directory). Each case runs
-- the way it names. Root only (skipped otherwise). Every file the spec makes it removes
-- (h.defer, run by after_each even when a case fails): a world-readable folder under /srv,
-- /etc/cordon-spec-secret-TOKEN, /root/.cordon-spec-secret-TOKEN, /root/.cordon-spec-closed-TOKEN/,
-- /root/.ssh/id_cordon_spec_TOKEN (and /root/.ssh when the spec made it),
-- /etc/cordon-spec-writable-TOKEN/ and /etc/cordon-spec-visible-TOKEN. Drives the built binary
-- ($CORDON_BIN); no network.
local h = require("spec.helpers")

local function is_root()
    return h.chomp(h.sh_ok("id -u")) == "0"
end

local ok = h.ok

local has = h.has

local hasnt = h.hasnt

--- A world-readable folder the spec owns under /srv (outside /var/tmp, which coding's
-- root_only.visible shows), scanned by a test profile "rospec" (extends coding; with scan,
-- root_writes = false: the fallback): secret (0600), public (0644), named (0600, listed in
-- root_only.visible), closed/ (0700, with a world-readable file inside), link -> secret.
-- Returns the folder, the marker and the config dir.
local function fixture(uid_readable, scan)
    local base = h.tmpdir("/srv")
    h.sh_ok("chmod 755 " .. h.quote(base))
    local marker = "cordon-spec-root-only-" .. h.token()
    h.write_file(base .. "/secret", marker .. "\n", "600")
    h.write_file(base .. "/public", "public\n", "644")
    h.write_file(base .. "/named", marker .. "-named\n", "600")
    h.sh_ok("mkdir -m 700 " .. h.quote(base .. "/closed"))
    h.write_file(base .. "/closed/inner", "inner\n", "644")
    h.sh_ok("ln -s secret " .. h.quote(base .. "/link"))
    local cfg = h.profile_dir("rospec", ([[
return {
    extends = "coding",
    root_only = { scan = { %q }, visible = { %q } },
    root_writes = %s,
}
]]):format(base, base .. "/named", scan and "false" or "true"))
    if uid_readable then h.sh_ok("chmod -R a+rX " .. h.quote(cfg)) end
    return base, marker, cfg
end

describe("root_only", function()
    after_each(h.cleanup)

    it("shifted: refuses a root caller's root-only files and directories, not the rest, shows root's files as nobody", function()
        if not is_root() then h.skip("needs root: the rule applies to a caller of uid 0") end
        local base, marker, cfg = fixture()
        has(h.sh_ok("cat " .. h.quote(base .. "/secret") .. " " .. h.quote(base .. "/closed/inner")), marker)
        local o = { env = { XDG_CONFIG_HOME = cfg }, flags = { "--profile", "rospec" } }
        local q = h.quote
        local r = h.run_sh(("cd %s; cat secret; cat link; cat public; cat named; ls closed; cat closed/inner; stat -c '%%U %%n' public; id -u; head -1 /proc/self/uid_map"):format(q(base)), o)
        hasnt(r.stdout, marker .. "\n", r)
        has(r.stderr, "cat: secret: Permission denied", r)
        has(r.stderr, "cat: link: Permission denied", r)
        has(r.stdout, "public\n", r)
        has(r.stdout, marker .. "-named\n", r)                    -- named in root_only.visible
        has(r.stderr, "closed", r)
        hasnt(r.stdout, "inner\n", r)
        has(r.stdout, "nobody public\n0\n", r)                    -- root's file shown as nobody; uid 0 inside
        has(r.stdout, "2147483648", r)
    end)

    it("scan (the fallback): hides a root caller's root-only files and directories, not the rest", function()
        if not is_root() then h.skip("needs root: the rule applies to a caller of uid 0") end
        local base, marker, cfg = fixture(false, true)
        -- Outside, root reads all of it.
        has(h.sh_ok("cat " .. h.quote(base .. "/secret") .. " " .. h.quote(base .. "/closed/inner")), marker)
        local o = { env = { XDG_CONFIG_HOME = cfg }, flags = { "--profile", "rospec" } }
        local q = h.quote
        local r = h.run_sh(("cd %s; cat secret; cat link; cat public; cat named; ls closed; cat closed/inner; ls -A; head -1 /proc/self/uid_map"):format(q(base)), o)
        hasnt(r.stdout, marker .. "\n", r)
        has(r.stderr, "cat: secret: No such file or directory", r)
        has(r.stderr, "cat: link: No such file or directory", r)  -- the link stays, its target is hidden
        has(r.stdout, "public\n", r)
        has(r.stdout, marker .. "-named\n", r)                    -- named in root_only.visible
        has(r.stderr, "closed", r)
        has(r.stderr, "No such file or directory", r)
        hasnt(r.stdout, "inner\n", r)                             -- the directory hidden whole
        local listing = r.stdout
        hasnt(listing, "\nsecret\n", r)
        has(listing, "link\n", r)
        assert.truthy(r.stdout:match("\n%s*0%s+0%s+1\n"), h.describe(r)) -- not shifted
    end)

    it("leaves a root caller's workspace whole, its root-only files included", function()
        if not is_root() then h.skip("needs root: the rule applies to a caller of uid 0") end
        -- Shifted: the parent (searchable) is the host's; a root-only file there is refused.
        local ws, parent = h.workspace("/srv")
        h.sh_ok("chmod 755 " .. h.quote(parent))
        h.write_file(ws .. "/own", "own-secret\n", "600")
        h.write_file(parent .. "/beside", "beside\n", "600")
        local r = h.run_sh("cat own; cat ../beside; head -1 /proc/self/uid_map", { workspace = ws })
        has(r.stdout, "own-secret\n", r)
        has(r.stderr, "beside: Permission denied", r)
        has(r.stdout, "2147483648", r)
        -- A parent only root may search: init could not reach the workspace shifted, so the
        -- scan stands in (and looks into the parent).
        ws, parent = h.workspace("/srv")                          -- parent: 0700
        h.write_file(ws .. "/own", "own-secret\n", "600")
        h.write_file(parent .. "/beside", "beside\n", "600")
        local cfg = h.profile_dir("rospec", ('return { extends = "coding", root_only = { scan = { %q } } }'):format(parent))
        r = h.run_sh("cat own; cat ../beside; head -1 /proc/self/uid_map", { workspace = ws, env = { XDG_CONFIG_HOME = cfg },
                                                        flags = { "--profile", "rospec" } })
        has(r.stdout, "own-secret\n", r)
        has(r.stderr, "beside: No such file or directory", r)    -- the parent is looked into
        assert.truthy(r.stdout:match("\n%s*0%s+0%s+1\n"), h.describe(r))
    end)

    it("refuses /etc/shadow- and /etc/gshadow-, an unlisted root-only file in /etc, keeps /etc/passwd", function()
        if not is_root() then h.skip("needs root: the rule applies to a caller of uid 0") end
        local secret = "/etc/cordon-spec-secret-" .. h.token()
        local marker = "cordon-spec-etc-" .. h.token()
        h.defer(function() os.remove(secret) end)
        h.write_file(secret, marker .. "\n", "600")
        has(h.sh_ok("cat " .. h.quote(secret)), marker)
        local files = { secret }
        for _, f in ipairs({ "/etc/shadow-", "/etc/gshadow-" }) do
            if h.sh("test -e " .. f).code == 0 then
                ok(h.sh("cat " .. f .. " >/dev/null"))
                files[#files + 1] = f
            end
        end
        local scan = h.profile_dir("roscan", 'return { extends = "coding", root_writes = false }')
        for _, way in ipairs({ { {}, "Permission denied" },
                               { { env = { XDG_CONFIG_HOME = scan }, flags = { "--profile", "roscan" } }, "No such file or directory" } }) do
            for _, f in ipairs(files) do
                local r = h.run_sh("cat " .. h.quote(f), way[1])
                assert.are_not.equal(0, r.code, h.describe(r))
                has(r.stderr, f .. ": " .. way[2], r)
                hasnt(r.stdout, marker, r)
            end
            local r = ok(h.run_sh("head -c 5 /etc/passwd", way[1]))
            assert.are.equal("root:", r.stdout)
        end
    end)

    -- Shifted, the visible name is bound in from the controller's detached tree; the scan (fallback)
    -- starts ahead with the coding profile's roots and the flags' workspace, and a profile whose
    -- writable path or visible name lies where that walk went must not get its result.
    it("keeps a profile's writable path and visible name under /etc that the default refuses", function()
        if not is_root() then h.skip("needs root: the rule applies to a caller of uid 0") end
        local tok = h.token()
        local dir = "/etc/cordon-spec-writable-" .. tok
        local vis = "/etc/cordon-spec-visible-" .. tok
        h.defer(function() h.sh("rm -rf " .. h.quote(dir) .. " " .. h.quote(vis)) end)
        h.sh_ok("mkdir -m 700 " .. h.quote(dir))
        h.write_file(dir .. "/inner", "writable-" .. tok .. "\n", "600")
        h.write_file(vis, "visible-" .. tok .. "\n", "600")
        local q = h.quote
        local cmd = ("cat %s/inner; cat %s"):format(q(dir), q(vis))
        for _, way in ipairs({ { "true", "Permission denied" }, { "false", "No such file or directory" } }) do
            local base = h.profile_dir("robase", ('return { extends = "coding", root_writes = %s }'):format(way[1]))
            local r = h.run_sh(cmd, { env = { XDG_CONFIG_HOME = base }, flags = { "--profile", "robase" } })
            hasnt(r.stdout, tok, r)
            has(r.stderr, dir .. "/inner: " .. way[2], r)
            has(r.stderr, vis .. ": " .. way[2], r)
            local cfg = h.profile_dir("rowrite", ([[
return {
    extends = "coding",
    writable = { %q },
    root_only = { visible = { "/var/tmp", %q } },
    root_writes = %s,
}
]]):format(dir, vis, way[1]))
            r = ok(h.run_sh(cmd, { env = { XDG_CONFIG_HOME = cfg }, flags = { "--profile", "rowrite" } }))
            has(r.stdout, "writable-" .. tok .. "\n", r)
            has(r.stdout, "visible-" .. tok .. "\n", r)
        end
    end)

    -- /root is a home like any other: its files are the caller's own (bound in idmapped when
    -- shifted, root's own inside when not), nothing of it is walked, and its credentials are
    -- hidden by the list that hides any home's (coding's ~/.ssh: only known_hosts*, config,
    -- config.d and *.pub show). Root-only files outside it stay refused (the cases above).
    it("root's own home: its root-only files are the caller's own, its credentials hidden, shifted and by the scan", function()
        if not is_root() then h.skip("needs root: the rule applies to a caller of uid 0") end
        local token = h.token()
        local name = ".cordon-spec-secret-" .. token
        local marker = "cordon-spec-home-" .. token
        local key = "/root/.ssh/id_cordon_spec_" .. token
        if h.sh("test -d /root/.ssh").code ~= 0 then
            h.sh_ok("mkdir -m 700 /root/.ssh")
            h.defer(function() h.sh("rm -rf /root/.ssh") end)
        end
        h.defer(function() os.remove("/root/" .. name); os.remove(key); os.remove(key .. ".pub") end)
        h.write_file("/root/" .. name, marker .. "\n", "600")
        h.write_file(key, marker .. "-key\n", "600")
        h.write_file(key .. ".pub", "public-key\n", "644")
        has(h.sh_ok("cat /root/" .. name .. " " .. key), marker .. "-key") -- outside, root reads both
        -- --home tmpfs: nothing of the sandbox's is kept in root's real state folder.
        local o = { home = "/root", flags = { "--home", "tmpfs" } }
        local probe = h.run_sh("true", o)
        if probe.code ~= 0 and probe.stderr:find("open_tree /root", 1, true) then
            h.skip("no home view of /root on this machine now (a mount below it): " .. h.chomp(probe.stderr))
        end
        local cmd = ("cat ~/%s; cat %s; cat %s.pub; cat ~/.ssh/x; head -1 /proc/self/uid_map"):format(name, key, key)
        local r = h.run_sh(cmd, o)
        has(r.stdout, marker .. "\n", r)                          -- the caller's own file
        has(r.stdout, "public-key\n", r)
        hasnt(r.stdout, marker .. "-key", r)
        has(r.stderr, "id_cordon_spec_" .. token .. ": No such file or directory", r)
        has(r.stderr, ".ssh/x: No such file or directory", r)     -- as in any home
        has(r.stdout, "2147483648", r)                            -- shifted
        -- the same with a read-only home (once its ~/.ssh could not even be looked up)
        r = h.run_sh(cmd, { home = "/root", flags = { "--home", "readonly" } })
        has(r.stdout, marker .. "\n", r)
        has(r.stdout, "public-key\n", r)
        hasnt(r.stdout, marker .. "-key", r)
        has(r.stderr, "id_cordon_spec_" .. token .. ": No such file or directory", r)
        has(r.stdout, "2147483648", r)
        local scan = h.profile_dir("roscan", 'return { extends = "coding", root_writes = false }')
        o = { home = "/root", env = { XDG_CONFIG_HOME = scan }, flags = { "--home", "tmpfs", "--profile", "roscan" } }
        r = h.run_sh(cmd, o)
        has(r.stdout, marker .. "\n", r)
        hasnt(r.stdout, marker .. "-key", r)
        has(r.stderr, "id_cordon_spec_" .. token .. ": No such file or directory", r)
        assert.truthy(r.stdout:match("\n%s*0%s+0%s+1\n"), h.describe(r)) -- not shifted
    end)

    -- Whatever the home's mode, a root-only folder of root's home is the caller's (as a user's
    -- 0700 folder is the user's); a name hidden inside it stays missing; a hidden home shows
    -- nothing of it.
    it("root's own home, in every home mode: a root-only folder read as the caller's own, a hidden name in it missing", function()
        if not is_root() then h.skip("needs root: the rule applies to a caller of uid 0") end
        local token = h.token()
        local dir = "/root/.cordon-spec-closed-" .. token
        local marker = "cordon-spec-home-" .. token
        h.defer(function() h.sh("rm -rf " .. h.quote(dir)) end)
        h.sh_ok("mkdir -m 700 " .. h.quote(dir))
        h.write_file(dir .. "/inner-secret", marker .. "\n", "600")
        h.write_file(dir .. "/inner-public", "inner-public\n", "644")
        h.write_file(dir .. "/hidden", marker .. "-hidden\n", "644")
        local cmd = ("cd %s; cat inner-public; cat inner-secret; cat hidden; head -1 /proc/self/uid_map"):format(h.quote(dir))
        local ways = {
            { "--home", "tmpfs", "--hide", dir .. "/hidden" },
            { "--home", "overlay", "--hide", dir .. "/hidden" }, -- its layer in a state folder of the spec's
            { "--home", "readonly", "--hide", dir .. "/hidden" },
            { "--home", "tmpfs", "--hide", "/root" }, -- the whole home hidden
        }
        local probe = h.run_sh("true", { home = "/root", flags = ways[1] })
        if probe.code ~= 0 and probe.stderr:find("open_tree /root", 1, true) then
            h.skip("no home view of /root on this machine now (a mount below it): " .. h.chomp(probe.stderr))
        end
        local state = h.tmpdir()
        for _, flags in ipairs(ways) do
            local r = h.run_sh(cmd, { home = "/root", env = { XDG_STATE_HOME = state }, flags = flags })
            hasnt(r.stdout, marker .. "-hidden", r)                -- never the hidden name
            if flags[4] == "/root" then
                hasnt(r.stdout, "inner-public", r)                  -- nothing of a hidden home
                hasnt(r.stdout, marker, r)
                has(r.stderr, "No such file or directory", r)
            else
                has(r.stdout, "inner-public\n", r)
                has(r.stdout, marker .. "\n", r)                    -- the caller's own
                has(r.stderr, "hidden: No such file or directory", r)
                has(r.stdout, "2147483648", r)                      -- shifted, in every mode
            end
        end
    end)

    it("does not touch a caller that is not root", function()
        if not is_root() then h.skip("needs root to switch to nobody") end
        local base, marker, cfg = fixture(true)
        local home = h.tmpdir()
        h.sh_ok("chown 65534:65534 " .. h.quote(home))
        local ws = h.workspace(nil, 65534)
        local o = { home = home, workspace = ws, uid = 65534, env = { XDG_CONFIG_HOME = cfg },
                    flags = { "--profile", "rospec" } }
        local r = h.run_sh(("cd %s; test -e secret && echo secret-there; test -d closed && echo closed-there; cat secret"):format(h.quote(base)), o)
        has(r.stdout, "secret-there\n", r)                        -- nothing extra hidden
        has(r.stdout, "closed-there\n", r)
        has(r.stderr, "Permission denied", r)                     -- the file's own mode refuses it
        hasnt(r.stdout, marker, r)
    end)

    it("scan (the fallback): judges every file anew when the folders' listings come from the last run's walk", function()
        if not is_root() then h.skip("needs root: the rule applies to a caller of uid 0") end
        local base, marker, cfg = fixture(false, true)
        local state = h.tmpdir()
        local q = h.quote
        local o = { env = { XDG_CONFIG_HOME = cfg, XDG_STATE_HOME = state }, flags = { "--profile", "rospec" } }
        -- A folder changed within 100 ms of a walk is listed again next time: let the new one settle.
        h.sh_ok("sleep 0.3")
        local walk = state .. "/cordon/root-walk"
        local r = h.run_sh(("cat %s/public; ls %s"):format(q(base), q(walk)), o)
        has(r.stdout, "public\n", r)
        has(r.stderr, "No such file or directory", r)             -- the state dir is not seen inside
        has(h.sh_ok("stat -c '%a %u' " .. q(walk)), "600 0")     -- kept, root's own, 0600
        -- Made root-only since: the folder's listing is kept (its ctime did not move), the file
        -- is judged anew and hidden; one added since is listed and judged.
        h.sh_ok("chmod 600 " .. q(base .. "/public"))
        r = h.run_sh(("cd %s; cat public; cat secret"):format(q(base)), o)
        has(r.stderr, "cat: public: No such file or directory", r)
        hasnt(r.stdout, marker, r)
        h.write_file(base .. "/added", marker .. "-added\n", "600")
        r = h.run_sh(("cd %s; cat added"):format(q(base)), o)
        has(r.stderr, "cat: added: No such file or directory", r)
        hasnt(r.stdout, marker, r)
        -- A file the sandbox would write there is refused: the state dir is not writable inside.
        r = h.run_sh(("echo x > %s"):format(q(walk)), o)
        assert.are_not.equal(0, r.code, r.stderr)
    end)
end)
