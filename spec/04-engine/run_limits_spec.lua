-- spec/04-engine/run_limits_spec.lua — the bounds of the profile key `limits` that a sandbox
-- cannot lift: limits.pids (a fork loop stops there), limits.tmp_size and limits.shm_size
-- (the sizes of /tmp and /dev/shm), limits.memory (an out-of-memory kill, reported as such),
-- each sandbox and session in a cgroup of its own that is removed afterwards. Each limit is
-- first shown not to hold without it, so that a test can fail.
-- Drives the built binary ($CORDON_BIN); runs as root (CI does), one case as uid 65534 with
-- setpriv. Every loop is bounded in count (200 forks at most) and time (the children sleep
-- 20 s at most, each cordon run is under h.run_timeout); only processes started here are killed.
local h = require("spec.helpers")

local NOBODY = 65534
local is_root = h.chomp(h.sh_ok("id -u")) == "0"

-- Forks up to 200 children that sleep, counts those that started, kills and reaps them.
local FORKS = [[
import os, time
kids = []
for i in range(200):
    try:
        pid = os.fork()
    except OSError:
        continue
    if pid == 0:
        time.sleep(20)
        os._exit(0)
    kids.append(pid)
print("started", len(kids))
for k in kids:
    os.kill(k, 9)
for k in kids:
    os.waitpid(k, 0)
]]

local ok = h.ok

-- XDG_CONFIG_HOME with one profile `lim` extending coding with these limits (a Lua table body),
-- and more keys when given (a Lua table body's fields).
local function limits_profile(limits, owner_uid, more)
    local cfg = h.profile_dir("lim", ("return { extends = \"coding\", limits = { %s }, %s }\n"):format(
        limits, more or ""))
    if owner_uid then
        h.sh_ok(("chmod -R a+rX %s && chmod 755 %s"):format(h.quote(cfg), h.quote(cfg)))
    end
    return { XDG_CONFIG_HOME = cfg }
end

-- Skips the test when cordon said it had no cgroup (the reason is cordon's own line).
local function need_cgroup(r)
    local why = r.stderr:match("cordon: ([^\n]*no cgroup for this sandbox[^\n]*)")
    if why then h.skip("no cgroup can be used here: " .. why) end
end

local function started(r)
    local n = tonumber(r.stdout:match("started (%d+)"))
    assert(n, "the fork loop did not report\n" .. h.describe(r))
    return n
end

describe("cordon run: limits.pids", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("a fork loop stops at the limit, for root too", function()
        -- Without the low limit all 200 start: the bound below is the limit's doing.
        local wide = ok(h.run_py(FORKS, { flags = { "--profile", "lim" }, env = limits_profile("pids = 1000") }))
        assert.are.equal(200, started(wide), h.describe(wide))
        assert.is_nil(wide.stderr:find("fork refused", 1, true), h.describe(wide))
        local r = ok(h.run_py(FORKS, { flags = { "--profile", "lim" }, env = limits_profile("pids = 50") }))
        need_cgroup(r)
        local n = started(r)
        assert.is_true(n > 0 and n <= 50, "started " .. n .. " with pids = 50\n" .. h.describe(r))
    end)

    -- A root caller's shifted sandbox (uid 0 inside is not the host's: root_writes.h) is bounded
    -- by RLIMIT_NPROC, which the kernel counts per user namespace, so per sandbox; no cgroup.
    it("as root, shifted: RLIMIT_NPROC bounds the sandbox alone, no cgroup, and it cannot be raised", function()
        if not is_root then h.skip("needs root") end
        local script = [[
grep -c 'cordon-[0-9]' /proc/self/cgroup || true
grep -q '^ *0 *2147483648 ' /proc/self/uid_map && echo shifted
grep -E '^Max processes' /proc/self/limits
python3 -c 'import resource
s, hard = resource.getrlimit(resource.RLIMIT_NPROC)
try:
    resource.setrlimit(resource.RLIMIT_NPROC, (hard + 1, hard + 1))
    print("raised")
except (ValueError, OSError) as e:
    print("refused", e)'
]] .. h.python .. " -c " .. h.quote(FORKS)
        script = script:gsub("python3 %-c", h.python .. " -c", 1)
        local env = limits_profile("pids = 50")
        local r = ok(h.run_sh(script, { flags = { "--profile", "lim" }, env = env }))
        if not r.stdout:match("\nshifted\n") then h.skip("root's sandbox is not shifted here") end
        assert.truthy(r.stdout:match("^0\n"), "the sandbox has a cgroup of its own\n" .. h.describe(r))
        assert.truthy(r.stdout:match("Max processes%s+50%s+50"), h.describe(r))
        assert.truthy(r.stdout:match("refused"), h.describe(r))
        local n = started(r)
        assert.is_true(n > 0 and n <= 50, "started " .. n .. " with pids = 50\n" .. h.describe(r))
        -- Per sandbox, not per host user: a second sandbox beside a full one starts its own.
        local hold_ws = h.workspace()
        local holder = h.spawn("sh -c " .. h.quote("cd " .. h.quote(hold_ws) .. " && exec " .. h.command_line(
            { "run", "--profile", "lim", "--", h.python, "-c",
              "import os,time\nfor i in range(40):\n    if os.fork() == 0:\n        time.sleep(20); os._exit(0)\nopen('full','w').close()\ntime.sleep(20)" },
            { env = env })))
        h.defer(function()
            os.execute("kill -TERM " .. holder .. " 2>/dev/null")
            h.wait_for(function() return not h.alive(holder) end, 20)
        end)
        assert(h.wait_for(function() return h.read_file(hold_ws .. "/full") end, 20),
            "the first sandbox did not fill up")
        local second = ok(h.run_py(FORKS, { flags = { "--profile", "lim" }, env = env }))
        local m = started(second)
        assert.is_true(m >= 40 and m <= 50, "started " .. m .. " beside a sandbox holding 41\n" .. h.describe(second))
    end)

    -- A root caller whose sandbox keeps the host's uid 0 (root_only off: no shift) is exempt from
    -- RLIMIT_NPROC: the bound is a cgroup's.
    it("as root, unshifted: a cgroup bounds the loop", function()
        if not is_root then h.skip("needs root") end
        local r = ok(h.run_py(FORKS, { flags = { "--profile", "lim" },
            env = limits_profile("pids = 50", nil, "root_only = { hide = false }") }))
        need_cgroup(r)
        local n = started(r)
        assert.is_true(n > 0 and n <= 50, "started " .. n .. " with pids = 50\n" .. h.describe(r))
        -- the refusals are said, once, with the key that set the bound
        assert.truthy(r.stderr:find("\ncordon: fork refused: the sandbox reached limits.pids = 50 (refused ", 1, true)
            or r.stderr:find("^cordon: fork refused: the sandbox reached limits.pids = 50 %(refused "), h.describe(r))
        assert.are.equal(1, select(2, r.stderr:gsub("fork refused", "")), h.describe(r))
        local cg = ok(h.run_sh("grep -c 'cordon-[0-9]' /proc/self/cgroup",
            { flags = { "--profile", "lim" }, env = limits_profile("pids = 50", nil, "root_only = { hide = false }") }))
        assert.is_true(tonumber(h.chomp(cg.stdout)) > 0, h.describe(cg))
    end)

    it("the command cannot raise its own pids.max", function()
        -- Whatever path the sandbox's cgroup has, its files are out of reach from inside.
        local script = [[
for line in $(cut -d: -f3 /proc/self/cgroup | sort -u); do
  for base in /sys/fs/cgroup /sys/fs/cgroup/pids /sys/fs/cgroup/unified; do
    f="$base$line/pids.max"
    if [ -e "$f" ] && echo max > "$f" 2>/dev/null; then echo "raised $f"; fi
  done
done
]] .. h.python .. " -c " .. h.quote(FORKS)
        local r = ok(h.run_sh(script, { flags = { "--profile", "lim" }, env = limits_profile("pids = 50") }))
        need_cgroup(r)
        assert.is_nil(r.stdout:match("raised"), h.describe(r))
        assert.is_true(started(r) <= 50, h.describe(r))
    end)

    it("as another user without a cgroup of its own, RLIMIT_NPROC bounds the loop", function()
        if not is_root then h.skip("needs root to run cordon as uid 65534") end
        local home = h.secret_home(NOBODY)
        local ws = h.workspace(nil, NOBODY)
        local wide = ok(h.run_py(FORKS, { workspace = ws, uid = NOBODY, home = home,
            flags = { "--profile", "lim" }, env = limits_profile("pids = 1000", NOBODY) }))
        assert.are.equal(200, started(wide), h.describe(wide))
        local r = ok(h.run_py(FORKS, { workspace = ws, uid = NOBODY, home = home,
            flags = { "--profile", "lim" }, env = limits_profile("pids = 50", NOBODY) }))
        local n = started(r)
        assert.is_true(n > 0 and n <= 50, "started " .. n .. " with pids = 50\n" .. h.describe(r))
        -- pids alone asks for nothing a fallback cannot give: no warning
        assert.is_nil(r.stderr:match("no cgroup"), h.describe(r))
    end)
end)

describe("cordon run: limits.tmp_size and limits.shm_size", function()
    after_each(h.cleanup)

    local function sizes(r)
        local t = {}
        for size, mnt in r.stdout:gmatch("(%d+)%s+(/[%w/]+)") do t[mnt] = tonumber(size) end
        return t
    end

    it("coding sizes /tmp at 2G and /dev/shm at 512M", function()
        local r = ok(h.run_sh("df -B1 --output=size,target /tmp /dev/shm"))
        local s = sizes(r)
        assert.are.equal(2 * 1024 ^ 3, s["/tmp"], h.describe(r))
        assert.are.equal(512 * 1024 ^ 2, s["/dev/shm"], h.describe(r))
    end)

    it("the profile's sizes show in df, and a write beyond fails with ENOSPC", function()
        local env = limits_profile('tmp_size = "8M", shm_size = 4194304')
        local script = [[
df -B1 --output=size,target /tmp /dev/shm
for d in /tmp /dev/shm; do
  ]] .. h.python .. [[ - "$d" <<'EOF'
import errno, sys
try:
    with open(sys.argv[1] + "/fill", "wb") as f:
        for i in range(16):
            f.write(b"x" * (1 << 20))
            f.flush()
    print(sys.argv[1], "wrote 16M")
except OSError as e:
    print(sys.argv[1], "ENOSPC" if e.errno == errno.ENOSPC else "other " + str(e.errno))
EOF
done
]]
        local r = ok(h.run_sh(script, { flags = { "--profile", "lim" }, env = env }))
        local s = sizes(r)
        assert.are.equal(8 * 1024 ^ 2, s["/tmp"], h.describe(r))
        assert.are.equal(4 * 1024 ^ 2, s["/dev/shm"], h.describe(r))
        assert.truthy(r.stdout:match("/tmp ENOSPC"), h.describe(r))
        assert.truthy(r.stdout:match("/dev/shm ENOSPC"), h.describe(r))
        -- the same writes fit in coding's sizes: ENOSPC above is the limit's doing
        local wide = ok(h.run_sh(script))
        assert.truthy(wide.stdout:match("/tmp wrote 16M"), h.describe(wide))
        assert.truthy(wide.stdout:match("/dev/shm wrote 16M"), h.describe(wide))
    end)

    it("a bad size is a profile error naming the file and the line", function()
        local env = limits_profile('\n    pids = 64,\n    tmp_size = "2 GB",\n')
        local r = h.run_sh("true", { flags = { "--profile", "lim" }, env = env })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:match("lim%.lua:3: key 'limits%.tmp_size': expected a size"), h.describe(r))
    end)
end)

describe("cordon run: limits.memory", function()
    after_each(h.cleanup)

    local ALLOC = "b = bytearray(256 << 20); print('allocated', len(b) >> 20)"

    it("an allocation over the limit is killed and reported as out of memory", function()
        local wide = ok(h.run_py(ALLOC, { flags = { "--profile", "lim" },
            env = limits_profile('memory = "unlimited"') }))
        assert.truthy(wide.stdout:match("allocated 256"), h.describe(wide))
        local r = h.run_py(ALLOC, { flags = { "--profile", "lim" }, env = limits_profile('memory = "64M"') })
        need_cgroup(r)
        assert.are.equal(137, r.code, h.describe(r))
        assert.is_nil(r.stdout:match("allocated"), h.describe(r))
        assert.truthy(r.stderr:find("cordon: the command was killed: out of memory (limits.memory = 64M)\n", 1, true), h.describe(r))
        assert.are.equal(1, select(2, r.stderr:gsub("out of memory", "")), h.describe(r))
    end)
end)

describe("cordon run and sessions: the cgroup", function()
    after_each(h.cleanup)

    -- Host directories a sandbox's /proc/self/cgroup lines name (v2 at /sys/fs/cgroup or in
    -- the hybrid layout's unified/, v1 per controller).
    local function host_dirs(lines)
        local dirs = {}
        for ctrl, path in lines:gmatch("%d+:([^:\n]*):(/[^\n]*cordon%-%d+)") do
            if ctrl == "" then
                dirs[#dirs + 1] = "/sys/fs/cgroup" .. path
                dirs[#dirs + 1] = "/sys/fs/cgroup/unified" .. path
            else
                for c in ctrl:gmatch("[^,]+") do dirs[#dirs + 1] = "/sys/fs/cgroup/" .. c .. path end
            end
        end
        return dirs
    end

    local function existing(dirs)
        local out = {}
        for _, d in ipairs(dirs) do
            if h.sh("test -d " .. h.quote(d)).code == 0 then out[#out + 1] = d end
        end
        return out
    end

    it("a run has one of its own while it runs, removed when it ends (here: on SIGTERM)", function()
        local ws = h.workspace()
        local env = limits_profile('pids = 100, memory = "256M"')
        local pid = h.spawn("sh -c " .. h.quote("cd " .. h.quote(ws) .. " && exec " .. h.command_line(
            { "run", "--profile", "lim", "--", "sh", "-c", "cat /proc/self/cgroup > cg.tmp && mv cg.tmp cg; sleep 30" },
            { env = env })))
        -- on any failure below too: TERM ends cordon (its sandbox and cgroup with it) before
        -- h.spawn's own clean-up kills what is left
        h.defer(function()
            os.execute("kill -TERM " .. pid .. " 2>/dev/null")
            h.wait_for(function() return not h.alive(pid) end, 20)
        end)
        local lines = h.wait_for(function() return h.read_file(ws .. "/cg") end, 20)
        assert(lines, "the sandbox did not start")
        local dirs = host_dirs(lines)
        if #dirs == 0 then
            h.skip("no cgroup can be used here (the sandbox's cgroups: " .. lines:gsub("\n", " ") .. ")")
        end
        local live = existing(dirs)
        assert.is_true(#live > 0, "none of " .. table.concat(dirs, " ") .. " exists")
        local pids_max
        for _, d in ipairs(live) do pids_max = pids_max or h.read_file(d .. "/pids.max") end
        assert.are.equal("100", h.chomp(pids_max or ""))
        os.execute("kill -TERM " .. pid)
        assert.truthy(h.wait_for(function() return not h.alive(pid) end, 20), "cordon did not end")
        assert.are.same({}, existing(live))
    end)

    it("a session's execs share the session's cgroup, bounded, removed at session stop", function()
        -- memory wants a cgroup for every caller (pids alone is RLIMIT_NPROC where that binds)
        local env = limits_profile('pids = 50, memory = "512M"')
        local s = h.session_start("lim" .. h.token():sub(1, 6), { flags = { "--profile", "lim" }, env = env })
        local function exec(cmd)
            return h.cordon({ "exec", s.name, "--", cmd }, { cwd = s.cwd, env = s.env })
        end
        local cg = ok(exec("cat /proc/self/cgroup"))
        local dirs = existing(host_dirs(cg.stdout))
        if #dirs == 0 then h.skip("no cgroup can be used here: " .. cg.stdout:gsub("\n", " ")) end
        local r = ok(exec(h.python .. " -c " .. h.quote(FORKS)))
        local n = started(r)
        assert.is_true(n > 0 and n <= 50, "started " .. n .. " with pids = 50\n" .. h.describe(r))
        -- the cgroup counted the refusals (where it carries pids): one line on the exec's stderr
        local events = h.read_file(dirs[1] .. "/pids.events") or ""
        if events:match("max [1-9]") then
            assert.truthy(r.stderr:find("cordon: fork refused while the command ran: the session's sandbox "
                .. "reached limits.pids = 50 (refused ", 1, true), h.describe(r))
            assert.are.equal(1, select(2, r.stderr:gsub("fork refused", "")), h.describe(r))
        end
        -- told once: the next command hits nothing and hears nothing
        local quiet = ok(exec("true"))
        assert.is_nil(quiet.stderr:find("refused", 1, true), h.describe(quiet))
        -- an allocation over the limit: the kernel kills it, and the exec says so in one line
        local big = exec(h.python .. " -c " .. h.quote("b = bytearray(768 << 20); print('allocated')"))
        assert.is_nil(big.stdout:find("allocated", 1, true), h.describe(big))
        assert.truthy(big.stderr:find("cordon: out of memory while the command ran: the kernel killed 1 process "
            .. "of the session's sandbox (limits.memory = 512M)", 1, true), h.describe(big))
        ok(h.cordon({ "session", "stop", s.name }, { cwd = s.cwd, env = s.env, timeout = 30 }))
        assert.truthy(h.wait_for(function() return #existing(dirs) == 0 end, 10),
            "still there: " .. table.concat(existing(dirs), " "))
    end)
end)
