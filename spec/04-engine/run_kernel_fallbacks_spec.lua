-- spec/04-engine/run_kernel_fallbacks_spec.lua — the fallbacks for older kernels (docs/kernels.md,
-- "Fallbacks"), each forced on this kernel with the test switch CORDON_TEST_KERNEL_LACKS, give
-- the protections of the mechanism they replace: the host read-only and nosuid wherever a
-- command can reach (compared, path by path, with a run that uses the mechanism), hidden paths
-- missing, the workspace writable, a root caller's root-only files out of reach, and the home
-- copy-on-write where the kernel can build it, else read-only with one line said once on the
-- machine. As root and as uid 65534. Linux 5.10's whole set is forced together too.
-- Drives the built binary ($CORDON_BIN); no network.
local h = require("spec.helpers")

local has = h.has

local hasnt = h.hasnt

local function is_root()
    return h.chomp(h.sh_ok("id -u")) == "0"
end

-- What a command sees: each mount point's flags (statvfs of its path, so what a path reaches:
-- the top of a stack), the hidden names, whether it can write the home and the workspace, and
-- what a previous run left in the home. argv: a root-only file to try, or "".
local PROBE = [[
import errno, os, sys
def out(*a): print(*a, flush=True)
seen = set()
with open("/proc/self/mountinfo") as f:
    for line in f:
        p = line.split()[4].encode().decode("unicode_escape")
        if p in seen: continue
        seen.add(p)
        try: v = os.statvfs(p)
        except OSError: continue
        out("M", p, "ro" if v.f_flag & os.ST_RDONLY else "rw", "nosuid" if v.f_flag & os.ST_NOSUID else "suid")
home = os.environ["HOME"]
for n in (home + "/.ssh/id_rsa", home + "/.aws/credentials", "/etc/shadow", sys.argv[1]):
    if not n: continue
    try: open(n).read(); out("READ", n)
    except OSError as e: out("NOREAD", n, errno.errorcode[e.errno])
try: out("KEPT", open(home + "/.cordon-fb").read().strip())
except OSError as e: out("KEPT", "-", errno.errorcode[e.errno])
try:
    with open(home + "/.cordon-fb", "w") as f: f.write(sys.argv[2])
    out("HOMEWRITE ok")
except OSError as e: out("HOMEWRITE", errno.errorcode[e.errno])
try:
    with open("ws-fb", "w") as f: f.write("ws")
    out("WSWRITE ok")
except OSError as e: out("WSWRITE", errno.errorcode[e.errno])
]]

--- Mount point -> "ro nosuid" / ... from a probe's output.
local function mounts_of(stdout)
    local m = {}
    for p, ro, suid in stdout:gmatch("M (%S+) (%S+) (%S+)\n") do m[p] = ro .. " " .. suid end
    return m
end

--- A caller: root, or uid 65534 with a home, workspace and state folder of its own.
local function setup(uid)
    local home, marker = h.secret_home(uid)
    local ws = h.workspace(nil, uid)
    local state = h.tmpdir()
    local t = { home = home, marker = marker, ws = ws, uid = uid, env = { XDG_STATE_HOME = state } }
    if uid then h.sh_ok(("chmod 755 %s && chown %d:%d %s"):format(h.quote(home), uid, uid, h.quote(state))) end
    return t
end

local function probe(t, lacks, secret, token)
    local env = {}
    for k, v in pairs(t.env) do env[k] = v end
    if lacks then env.CORDON_TEST_KERNEL_LACKS = lacks end
    return h.run_sh(h.python .. " -c " .. h.quote(PROBE) .. " " .. h.quote(secret or "") .. " "
        .. h.quote(token), { home = t.home, workspace = t.ws, env = env, uid = t.uid })
end

--- The forced run never shows a path as writable or setuid-capable where the mechanism's run
-- does not (a path only one of them mounts is compared with what the other reaches there).
local function no_weaker(base, forced, r)
    for p, flags in pairs(forced) do
        local b = base[p]
        if b and b:match("^ro") then assert.are.equal("ro", flags:match("^%S+"), p .. ": " .. h.describe(r)) end
        if b and b:match("nosuid$") then assert.are.equal("nosuid", flags:match("%S+$"), p .. ": " .. h.describe(r)) end
    end
    -- and the host's tree as a whole is read-only and nosuid
    assert.are.equal("ro nosuid", forced["/"], h.describe(r))
end

local LINE = "mounts no overlayfs in a user namespace (Linux 5.11"
local IDMAP_LINE = "no idmapped mounts (Linux 5.12"

local CASES = {
    { lacks = "mount_setattr", home = "kept" },
    { lacks = "overlay_userns", home = "readonly" },
    { lacks = "idmap", home = "kept" },
    { lacks = "mount_setattr,overlay_userns,idmap,landlock", home = "readonly", label = "Linux 5.10's set" },
}

describe("kernel fallbacks, forced", function()
    after_each(h.cleanup)

    for _, c in ipairs(CASES) do
        for _, who in ipairs({ "root", "uid 65534" }) do
            it(("%s, as %s: host read-only, hidden paths missing, home %s"):format(c.label or c.lacks, who,
                c.home == "kept" and "copy-on-write and kept" or "read-only, said once"), function()
                local uid = who ~= "root" and 65534 or nil
                if not is_root() then h.skip("needs root (to be root, and to become uid 65534)") end
                local t = setup(uid)
                local secret
                if not uid then
                    secret = "/etc/cordon-spec-secret-" .. h.token()
                    h.defer(function() os.remove(secret) end)
                    h.write_file(secret, t.marker .. "\n", "600")
                    has(h.sh_ok("cat " .. h.quote(secret)), t.marker) -- root reads it outside
                end
                -- Outside, the caller reads its keys and writes its home.
                local as = uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid) or ""
                has(h.sh_ok(as .. "cat " .. h.quote(t.home .. "/.ssh/id_rsa")), t.marker)
                h.sh_ok(as .. "touch " .. h.quote(t.home .. "/.cordon-outside") .. " && rm " .. h.quote(t.home .. "/.cordon-outside"))

                local base = probe(t, nil, secret, "base")
                assert.are.equal(0, base.code, h.describe(base))
                hasnt(base.stderr, LINE, base)
                h.sh_ok("rm -f " .. h.quote(t.ws .. "/ws-fb"))
                -- a fresh layer for the forced runs
                t.env.XDG_STATE_HOME = h.tmpdir()
                if uid then h.sh_ok(("chown %d:%d %s"):format(uid, uid, h.quote(t.env.XDG_STATE_HOME))) end

                local first = probe(t, c.lacks, secret, "one")
                local second = probe(t, c.lacks, secret, "two")
                for _, r in ipairs({ first, second }) do
                    assert.are.equal(0, r.code, h.describe(r))
                    hasnt(r.stdout, t.marker, r)
                    has(r.stdout, "NOREAD " .. t.home .. "/.ssh/id_rsa ENOENT", r)
                    has(r.stdout, "NOREAD " .. t.home .. "/.aws/credentials ENOENT", r)
                    has(r.stdout, "NOREAD /etc/shadow ENOENT", r)
                    if secret then assert.truthy(r.stdout:match("NOREAD " .. secret:gsub("%-", "%%-") .. " E"), h.describe(r)) end
                    has(r.stdout, "WSWRITE ok", r)
                    no_weaker(mounts_of(base.stdout), mounts_of(r.stdout), r)
                end
                if c.home == "kept" then
                    has(first.stdout, "HOMEWRITE ok", first)
                    has(second.stdout, "KEPT one", second)
                    hasnt(first.stderr .. second.stderr, LINE, first)
                else
                    has(first.stdout, "HOMEWRITE EROFS", first)
                    has(second.stdout, "HOMEWRITE EROFS", second)
                    has(first.stderr, LINE, first)
                    has(first.stderr, 'home = "readonly" (--home readonly)', first)
                    hasnt(second.stderr, LINE, second) -- once on this machine
                    -- and never when the profile asks for the read-only home itself
                    t.env.XDG_STATE_HOME = h.tmpdir()
                    if uid then h.sh_ok(("chown %d:%d %s"):format(uid, uid, h.quote(t.env.XDG_STATE_HOME))) end
                    local ro = h.run_sh("true", { home = t.home, workspace = t.ws, uid = uid, flags = { "--home", "readonly" },
                        env = { XDG_STATE_HOME = t.env.XDG_STATE_HOME, CORDON_TEST_KERNEL_LACKS = c.lacks } })
                    assert.are.equal(0, ro.code, h.describe(ro))
                    hasnt(ro.stderr, LINE, ro)
                end
                if not uid and c.lacks:find("idmap", 1, true) then
                    -- root writes in other owners' files are off: said on the first run only
                    has(first.stderr, IDMAP_LINE, first)
                    hasnt(second.stderr, IDMAP_LINE, second)
                end
                -- The real home is as it was: nothing written through any of the runs.
                assert.are.equal(1, h.sh(as .. "test -e " .. h.quote(t.home .. "/.cordon-fb")).code)
            end)
        end
    end

    it("Linux 5.10's set: network.loopback = false refuses with one line naming Landlock's kernel", function()
        if not is_root() then h.skip("needs root") end
        local ok = h.run_sh("true", { flags = { "--allow-loopback=false" } })
        assert.are.equal(0, ok.code, h.describe(ok)) -- this kernel has the mechanism
        local r = h.run_sh("true", { flags = { "--allow-loopback=false", "--home", "readonly" },
            env = { CORDON_TEST_KERNEL_LACKS = "mount_setattr,overlay_userns,idmap,landlock" } })
        assert.are_not.equal(0, r.code, h.describe(r))
        has(r.stderr, "Landlock's network rules (ABI 4, Linux 6.7)", r)
        has(r.stderr, "--allow-loopback", r)
        local _, lines = r.stderr:gsub("\n", "")
        assert.are.equal(1, lines, h.describe(r))
    end)
end)
