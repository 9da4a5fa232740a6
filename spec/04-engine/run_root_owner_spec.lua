-- spec/04-engine/run_root_owner_spec.lua — profile key root_writes: a caller of uid 0 in a
-- checkout owned by another user (uid 1001 here, made with chown -R in a temp dir) writes there
-- as root does outside: files keep their real owners, new ones are root's, chown works. The
-- power stays inside the writable set: each escape below is first shown to be meaningful
-- (outside cordon root can do it, or the same command succeeds inside the workspace), then
-- refused inside: another user's 0600 file elsewhere, /etc/passwd (EROFS), a hard link to a file
-- outside, mount and umount, mknod, a hidden path, a root-only file (root_only), /proc/sys.
-- With the key off, where the kernel refuses the idmap, and for a caller that is not root,
-- nothing changes. Root only (skipped otherwise). Every file the spec makes is under /var/tmp
-- (h.tmpdir) or /etc/cordon-spec-root-owner-TOKEN, removed by h.defer. Drives $CORDON_BIN;
-- no network.
local h = require("spec.helpers")

local OWNER = 1001

local function is_root()
    return h.chomp(h.sh_ok("id -u")) == "0"
end

local function need_root()
    if not is_root() then h.skip("needs root: root writes are for a caller of uid 0") end
end

local ok = h.ok

local has = h.has

local hasnt = h.hasnt

local q = h.quote

--- A workspace of uid OWNER: old (0600), log (0644), sub/inner, gone (to be removed).
local function foreign_workspace()
    local ws = h.workspace()
    h.write_file(ws .. "/old", "old\n", "600")
    h.write_file(ws .. "/log", "one\n", "644")
    h.sh_ok("mkdir " .. q(ws .. "/sub") .. " && echo inner > " .. q(ws .. "/sub/inner")
        .. " && echo gone > " .. q(ws .. "/gone"))
    h.sh_ok(("chown -R %d:%d %s"):format(OWNER, OWNER, q(ws)))
    return ws
end

--- `ls -ln` of one name: "UID GID".
local function owners(line, name)
    for l in line:gmatch("[^\n]+") do
        local uid, gid = l:match("^%S+%s+%d+%s+(%d+)%s+(%d+)%s.*%s" .. name:gsub("%p", "%%%0") .. "$")
        if uid then return uid .. " " .. gid end
    end
    return nil
end

--- A folder beside the workspace (world-traversable) with a 0600 file of uid OWNER.
local function foreign_secret()
    local dir = h.tmpdir()
    h.sh_ok("chmod 755 " .. q(dir))
    local marker = "cordon-spec-root-owner-" .. h.token()
    h.write_file(dir .. "/secret", marker .. "\n", "600")
    h.sh_ok(("chown %d:%d %s"):format(OWNER, OWNER, q(dir .. "/secret")))
    return dir .. "/secret", marker
end

local function profile(body)
    return h.profile_dir("rootspec", ('return { extends = "coding", %s }'):format(body))
end

describe("root writes", function()
    after_each(h.cleanup)

    it("writes, appends, removes, makes, chmods and chowns in a checkout of uid 1001; ls -ln shows the real owners", function()
        need_root()
        local ws = foreign_workspace()
        local r = ok(h.run_sh(table.concat({
            "set -e",
            "echo two >> log",
            "echo changed > old",
            "echo new > new",
            "mkdir made",
            "rm gone",
            "rm -r sub",
            "chmod 640 old",
            "echo handed > handed && chown 1001:1001 handed",
            "echo taken > taken && chown 1001:1001 taken && chown 0:0 taken",
            "ls -ln",
        }, "\n"), { workspace = ws }))
        local ls = r.stdout
        assert.are.equal(OWNER .. " " .. OWNER, owners(ls, "old"), ls)
        assert.are.equal(OWNER .. " " .. OWNER, owners(ls, "log"), ls)
        assert.are.equal("0 0", owners(ls, "new"), ls)
        assert.are.equal("0 0", owners(ls, "made"), ls)
        assert.are.equal(OWNER .. " " .. OWNER, owners(ls, "handed"), ls)
        assert.are.equal("0 0", owners(ls, "taken"), ls)
        hasnt(ls, "65534", r)
        hasnt(r.stderr, "root writes", r)
        -- The host sees the same owners, and the writes.
        local host = h.sh_ok("cd " .. q(ws) .. " && ls -ln")
        assert.are.equal(OWNER .. " " .. OWNER, owners(host, "old"), host)
        assert.are.equal("0 0", owners(host, "new"), host)
        assert.are.equal(OWNER .. " " .. OWNER, owners(host, "handed"), host)
        assert.are.equal("one\ntwo\n", h.read_file(ws .. "/log"))
        assert.are.equal("changed\n", h.read_file(ws .. "/old"))
        assert.falsy(h.read_file(ws .. "/gone"))
        assert.are.equal("-rw-r-----", h.chomp(h.sh_ok("stat -c %A " .. q(ws .. "/old"))))
    end)

    it("makes no .git/hooks where the repository has none", function()
        need_root()
        local ws = foreign_workspace()
        h.sh_ok(("mkdir %s && chown %d:%d %s"):format(q(ws .. "/.git"), OWNER, OWNER, q(ws .. "/.git")))
        local r = h.run_sh("touch .git/hooks/pre-commit", { workspace = ws })
        has(r.stderr, "No such file or directory", r)
        assert.are.equal(1, h.sh("test -e " .. q(ws .. "/.git/hooks")).code, h.describe(r))
    end)

    it("keeps only three file capabilities, as ambient, with the maps of the design", function()
        need_root()
        local ws = foreign_workspace()
        local r = ok(h.run_sh("grep -E '^Cap(Eff|Prm|Inh|Bnd|Amb)' /proc/self/status; cat /proc/self/uid_map /proc/self/gid_map; grep NoNewPrivs /proc/self/status",
            { workspace = ws }))
        for _, set in ipairs({ "Eff", "Prm", "Inh", "Bnd", "Amb" }) do
            -- CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER: bits 0, 1, 3
            has(r.stdout, ("Cap%s:\t000000000000000b"):format(set), r)
        end
        has(r.stdout, "NoNewPrivs:\t1", r)
        -- Shifted: inside 0 to 65535, root included, are the kernel's 2^31 on (docs/root-callers.md).
        local _, maps = r.stdout:gsub("%s0%s+2147483648%s+65536\n", "")
        assert.are.equal(2, maps, h.describe(r))
    end)

    it("cannot set a set-user-ID or set-group-ID bit, and a write clears one", function()
        need_root()
        -- Outside, root sets both bits, and its write keeps them (CAP_FSETID).
        local probe = h.tmpdir()
        h.sh_ok(("cd %s && cp /bin/true t && chmod 6755 t && echo >> t && stat -c %%a t > mode"):format(q(probe)))
        assert.are.equal("6755\n", h.read_file(probe .. "/mode"))
        local ws = foreign_workspace()
        h.sh_ok(("cp /bin/true %s && chown %d:%d %s && chmod 4755 %s"):format(q(ws .. "/theirs"), OWNER, OWNER,
            q(ws .. "/theirs"), q(ws .. "/theirs")))
        local r = h.run_sh(table.concat({
            "cp /bin/true t",
            "chmod 4755 t", "chmod 2755 t", "chmod u+s t", "chmod g+s made 2>/dev/null",
            "install -m 4755 /bin/true i",
            h.python .. " -c 'import os; os.open(\"c\", os.O_CREAT | os.O_WRONLY, 0o4755)'",
            "echo >> theirs",
            "chmod 755 t && echo plain-chmod",
            "stat -c '%n %a' t i c theirs",
        }, "; "), { workspace = ws })
        has(r.stdout, "plain-chmod", r)
        has(r.stderr, "Operation not permitted", r)
        for file, mode in r.stdout:gmatch("(%S+) (%d+)\n") do
            assert.is_true(#mode <= 3, "a set-id bit on " .. file .. ": " .. h.describe(r))
        end
        assert.are.equal("755", h.chomp(h.sh_ok("stat -c %a " .. q(ws .. "/t"))))
        assert.are.equal("755", h.chomp(h.sh_ok("stat -c %a " .. q(ws .. "/theirs"))))  -- the write cleared it
        assert.falsy(h.sh("test -u " .. q(ws .. "/i") .. " || test -g " .. q(ws .. "/i")).code == 0)
        assert.falsy(h.read_file(ws .. "/c") and h.sh("test -u " .. q(ws .. "/c")).code == 0)
    end)

    it("cannot read another user's 0600 file outside the writable set", function()
        need_root()
        local secret, marker = foreign_secret()
        has(h.sh_ok("cat " .. q(secret)), marker)                    -- outside, root reads it
        local ws = foreign_workspace()
        local r = h.run_sh("cat " .. q(secret) .. "; ls -ln " .. q(secret), { workspace = ws })
        hasnt(r.stdout, marker, r)
        has(r.stderr, "Permission denied", r)
        has(r.stdout, " 65534 65534 ", r)                             -- nobody, as before
        -- The same file inside the workspace is readable: the refusal is the place's.
        h.sh_ok(("cp -p %s %s"):format(q(secret), q(ws .. "/copy")))
        has(ok(h.run_sh("cat copy", { workspace = ws })).stdout, marker)
    end)

    it("cannot write through the read-only root: /etc/passwd stays EROFS", function()
        need_root()
        ok(h.sh("test -w /etc/passwd"))                               -- outside, root may
        local ws = foreign_workspace()
        local before = h.read_file("/etc/passwd")
        local r = h.run_sh("echo cordon-spec >> /etc/passwd; touch /etc/cordon-spec-x; chmod 666 /etc/passwd; chown 1001 /etc/passwd",
            { workspace = ws })
        has(r.stderr, "/etc/passwd: Read-only file system", r)
        has(r.stderr, "cordon-spec-x': Read-only file system", r)
        assert.are.equal(before, h.read_file("/etc/passwd"))
        assert.falsy(h.read_file("/etc/cordon-spec-x"))
    end)

    it("cannot reach a host file by a hard link from the workspace", function()
        need_root()
        local secret, marker = foreign_secret()
        -- Outside, root links the file (same file system) and reads it through the link.
        local dir = secret:match("^(.*)/[^/]+$")
        h.sh_ok(("ln %s %s && cat %s && rm %s"):format(q(secret), q(dir .. "/l"), q(dir .. "/l"), q(dir .. "/l")))
        local ws = foreign_workspace()
        local r = h.run_sh(("ln %s hl; ln /etc/passwd pl; cat hl; ln old inside && echo inside-linked"):format(q(secret)),
            { workspace = ws })
        has(r.stderr, "Invalid cross-device link", r)
        hasnt(r.stdout, marker, r)
        has(r.stdout, "inside-linked", r)                             -- a link within works
        assert.falsy(h.read_file(ws .. "/hl"))
        assert.falsy(h.read_file(ws .. "/pl"))
    end)

    it("cannot mount, unmount or make device nodes", function()
        need_root()
        -- Outside (in a namespace of its own), root does all three.
        local probe = h.tmpdir()
        ok(h.sh(("unshare -m --propagation private sh -c 'mount -t tmpfs x %s && umount %s && mknod %s c 1 3'"):format(
            q(probe), q(probe), q(probe .. "/null"))))
        local ws = foreign_workspace()
        local r = h.run_sh(table.concat({
            "mkdir m",
            "mount -t tmpfs x m && echo mounted",
            "mount --bind /etc m && echo bound",
            "umount " .. q(ws) .. " && echo unmounted",
            "umount -l /etc && echo unmounted-etc",
            "mknod null c 1 3 && echo made-node",
            "mknod disk b 8 0 && echo made-block",
            "echo done",
        }, "; "), { workspace = ws })
        has(r.stdout, "done", r)
        for _, word in ipairs({ "mounted", "bound", "unmounted", "made-node", "made-block" }) do
            hasnt(r.stdout, word .. "\n", r)
        end
        assert.falsy(h.read_file(ws .. "/null"))
    end)

    it("keeps hidden paths hidden, in the workspace and outside", function()
        need_root()
        local ws = foreign_workspace()
        local secret, marker = foreign_secret()
        h.write_file(ws .. "/.env", marker .. "-ws\n", "600")
        h.sh_ok("mkdir " .. q(ws .. "/keys"))
        h.write_file(ws .. "/keys/k", marker .. "-dir\n", "600")
        h.sh_ok(("chown -R %d:%d %s %s"):format(OWNER, OWNER, q(ws .. "/.env"), q(ws .. "/keys")))
        local cfg = profile(("hidden = { %q, %q, %q }"):format(secret, ws .. "/.env", ws .. "/keys"))
        local o = { workspace = ws, env = { XDG_CONFIG_HOME = cfg }, flags = { "--profile", "rootspec" } }
        local r = h.run_sh(table.concat({
            "cat .env", "cat " .. q(secret),
            "rm -f .env", "mv .env moved", "chmod 666 .env", "chown 0 .env",
            "echo x > .env", "cat .env moved", "ls -la",
            "cat keys/k", "touch keys/new", "rmdir keys", "mv keys k2", "ls -A keys",
        }, "; "), o)
        hasnt(r.stdout, marker, r)
        has(r.stderr, q(secret):gsub("'", "") .. ": No such file or directory", r)
        assert.are.equal(marker .. "-ws\n", h.read_file(ws .. "/.env"))   -- untouched on the host
        assert.are.equal(OWNER, math.tointeger(tonumber(h.chomp(h.sh_ok("stat -c %u " .. q(ws .. "/.env"))))))
        assert.falsy(h.read_file(ws .. "/moved"))
        assert.are.equal(marker .. "-dir\n", h.read_file(ws .. "/keys/k"))
        assert.falsy(h.read_file(ws .. "/keys/new"))
        assert.falsy(h.read_file(ws .. "/k2/k"))
    end)

    it("refuses root-only files (/etc/shadow-, a mode 0000 file in /etc, one at depth 5 of /var, one made after the start)", function()
        need_root()
        local tok = h.token()
        local name = "/etc/cordon-spec-root-owner-" .. tok
        local deep_top = "/var/lib/cordon-spec-root-owner-" .. tok
        local deep = deep_top .. "/a/b/c/d/secret"                   -- depth 5 below /var
        local late = "/etc/cordon-spec-root-owner-late-" .. tok
        local marker = "cordon-spec-root-only-" .. h.token()
        h.defer(function() os.remove(name); os.remove(late); h.sh("rm -rf " .. q(deep_top)) end)
        h.write_file(name, marker .. "\n", "000")
        h.sh_ok("mkdir -p " .. q(deep_top .. "/a/b/c/d") .. " && chmod -R 755 " .. q(deep_top))
        h.write_file(deep, marker .. "\n", "000")
        local ws = foreign_workspace()
        local files = { name, deep }
        for _, f in ipairs({ "/etc/shadow-", "/etc/gshadow-", "/etc/shadow" }) do
            if h.sh("test -e " .. f).code == 0 and h.sh("stat -c %a " .. f).stdout:match("^[0-7]?[0-7][0-7]0\n") then
                files[#files + 1] = f
            end
        end
        for _, f in ipairs(files) do
            ok(h.sh("cat " .. q(f) .. " >/dev/null"))               -- root outside reads it
            local r = h.run_sh("cat " .. q(f), { workspace = ws })
            assert.are_not.equal(0, r.code, h.describe(r))
            assert.truthy(r.stderr:find(f .. ": Permission denied", 1, true)
                or r.stderr:find(f .. ": No such file or directory", 1, true), h.describe(r))
            hasnt(r.stdout, marker, r)
        end
        -- Made after the sandbox started (no scan could have seen it): the command waits for
        -- the file, which the spec writes once the command runs, then reads it.
        local script = (": > .started; until [ -e go ]; do sleep 0.05; done; cat %s; stat -c '%%U %%G' %s; id -u")
            :format(q(late), q(late))
        local cmd = "cd " .. q(ws) .. " && " .. h.command_line({ "run", "--", "/bin/bash", "-c", script })
        local writer = ("until [ -e %s ]; do sleep 0.05; done; printf %s > %s; chmod 600 %s; : > %s")
            :format(q(ws .. "/.started"), q(marker), q(late), q(late), q(ws .. "/go"))
        local r = h.sh(("(%s) & %s"):format(writer, cmd))
        hasnt(r.stdout, marker, r)
        has(r.stderr, late .. ": Permission denied", r)
        has(r.stdout, "nobody nogroup\n0\n", r)                  -- shown as nobody; still uid 0 inside
        has(h.sh_ok("cat " .. q(late)), marker)                     -- root outside reads it
    end)

    -- Shifted, init changes its credentials (to the namespace's root), which clears the
    -- parent-death signal: it must be set again, or a killed cordon would leave the sandbox on.
    it("ends with its controller: kill -9 of cordon leaves nothing of the sandbox running", function()
        need_root()
        local ws = foreign_workspace()
        local tag = "cordon-spec-orphan-" .. h.token()
        local line = h.command_line({ "run", "--workspace", ws, "--", "/bin/bash", "-c",
            (": > started; exec -a %s sleep 30"):format(tag) }, { timeout = false })
        h.sh_ok("cd " .. q(ws) .. " && { " .. line .. " & } ; pid=$!; i=0; while [ ! -e started ] && [ $i -lt 400 ]; "
            .. "do sleep 0.05; i=$((i+1)); done; kill -9 $pid; wait $pid; true")
        local pattern = "[" .. tag:sub(1, 1) .. "]" .. tag:sub(2)   -- not this pgrep's own shell
        assert.truthy(h.wait_for(function() return h.sh("pgrep -f " .. q(pattern)).code ~= 0 end, 10),
            "a process of the killed sandbox is still running: " .. h.sh("pgrep -af " .. q(pattern)).stdout)
    end)

    -- Shifted, root's home is reached through the controller's idmapped detached tree, its layer
    -- (here in a state folder inside /root, 0700) through a staged one: toolchains work as before
    -- (in a 0700 folder too; a tool of mode 0700 is root-only, and root_only hides it: see
    -- run_root_only_spec's case of root's own home).
    it("keeps toolchains working in root's home: the home layer, ~/.local/bin, caches, git commit in uid 1001's checkout", function()
        need_root()
        local tok = h.token()
        local state = "/root/.cordon-spec-state-" .. tok
        local bin = "/root/.cordon-spec-bin-" .. tok
        local kept = ".cordon-spec-kept-" .. tok
        h.defer(function() h.sh("rm -rf " .. q(state) .. " " .. q(bin)) end)
        h.sh_ok(("mkdir -m 700 %s %s && printf '#!/bin/sh\necho tool-ran\n' > %s/tool && chmod 755 %s/tool")
            :format(q(state), q(bin), q(bin), q(bin)))
        local ws = foreign_workspace()
        -- safe.directory: git refuses root a checkout of another owner, outside as inside
        h.sh_ok(("cd %s && git init -q && git -c safe.directory='*' add -A && git -c safe.directory='*' -c user.name=o -c user.email=o@x commit -qm one && chown -R %d:%d .git")
            :format(q(ws), OWNER, OWNER))
        local o = { workspace = ws, home = "/root", env = { XDG_STATE_HOME = state } }
        local probe = h.run_sh("true", o)
        if probe.code ~= 0 and probe.stderr:find("open_tree /root", 1, true) then
            h.skip("no home view of /root on this machine now (a mount below it): " .. h.chomp(probe.stderr))
        end
        local r = ok(h.run_sh(("echo kept > ~/%s; %s/tool; mkdir -p ~/.npm/_cacache ~/.cache/pip/http && echo c > ~/.npm/_cacache/x && echo p > ~/.cache/pip/http/y; "
            .. "echo two >> log && git -c safe.directory='*' -c user.name=r -c user.email=r@x commit -qam two && echo committed; head -1 /proc/self/uid_map")
            :format(kept, bin), o))
        has(r.stdout, "tool-ran\n", r)
        has(r.stdout, "committed\n", r)
        has(r.stdout, "2147483648", r)                               -- shifted
        r = ok(h.run_sh(("cat ~/%s ~/.npm/_cacache/x ~/.cache/pip/http/y"):format(kept), o))
        assert.are.equal("kept\nc\np\n", r.stdout, h.describe(r))   -- kept in the layer
        assert.are_not.equal(0, h.sh("test -e " .. q("/root/" .. kept)).code) -- never in the real home
        has(h.sh_ok("cd " .. q(ws) .. " && git -c safe.directory='*' log --format=%s -1"), "two")
    end)

    -- Shifted, init is no owner of /root when /root is not the home: it cannot list it, and
    -- nor can any command. A mount below it (a checkout in /root mounted over, as a test or a
    -- container does) must not stop the start, and what is in it stays out of reach.
    it("starts with a mount below a /root that is not the home, and nothing in it is reachable", function()
        need_root()
        local dir = "/root/.cordon-spec-mnt-" .. h.token()
        h.defer(function() h.sh("rmdir " .. q(dir)) end)
        h.sh_ok("mkdir -m 755 " .. q(dir))
        local script = ("mount -t tmpfs cordon-spec %s && echo secret-in-mount > %s/f && exec \"$@\""):format(q(dir), q(dir))
        local prefix = "unshare -m --propagation private sh -c " .. q(script) .. " sh "
        local outside = h.sh(prefix .. "cat " .. q(dir .. "/f"))
        has(outside.stdout, "secret-in-mount", outside)           -- root reads it outside
        local r = h.run_sh("cat " .. q(dir .. "/f") .. "; ls /root; head -1 /proc/self/uid_map; echo ran",
            { prefix = prefix })
        has(r.stdout, "ran\n", r)
        has(r.stdout, "2147483648", r)                            -- shifted
        hasnt(r.stdout, "secret-in-mount", r)
        has(r.stderr, "Permission denied", r)
    end)

    -- A run_binds socket of root:docker 0660 (allow_docker's /run/docker.sock) is connected to
    -- through its owner bits: shifted, through the controller's idmapped detached tree.
    it("connects to a root-owned 0660 socket of run_binds", function()
        need_root()
        local path = "/run/cordon-spec-root-owner-" .. h.token() .. ".sock"
        local server = ("import os, socket\ns = socket.socket(socket.AF_UNIX)\ns.bind(%q)\nos.chmod(%q, 0o660)\n"
            .. "s.listen(4)\nwhile True:\n    c, _ = s.accept()\n    c.sendall(b'served\\n')\n    c.close()\n"):format(path, path)
        local pid = h.spawn(h.python .. " -c " .. q(server))
        h.defer(function() h.sh("kill " .. pid); os.remove(path) end)
        assert.truthy(h.wait_for(function() return h.sh("test -S " .. q(path)).code == 0 end, 10))
        local cfg = profile(("run_binds = { %q }"):format(path))
        local r = ok(h.run_py(("import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(%q)\nprint(s.recv(64).decode(), end='')"):format(path),
            { env = { XDG_CONFIG_HOME = cfg }, flags = { "--profile", "rootspec" } }))
        assert.are.equal("served\n", r.stdout, h.describe(r))
    end)

    it("cannot write /proc/sys or /sys", function()
        need_root()
        ok(h.sh("test -w /proc/sys/kernel/core_pattern"))            -- outside, root may
        local ws = foreign_workspace()
        local before = h.read_file("/proc/sys/kernel/core_pattern")
        local r = h.run_sh(table.concat({
            "echo cordon-spec > /proc/sys/kernel/core_pattern",
            "echo 1 > /proc/sys/vm/drop_caches",
            "echo 1 > /proc/sys/net/ipv4/ip_forward",
            "echo 1 > /proc/sysrq-trigger",
            "echo x > /sys/kernel/uevent_helper",
            "echo done",
        }, "; "), { workspace = ws })
        has(r.stdout, "done", r)
        local _, n = r.stderr:gsub("Read%-only file system", "")
        assert.is_true(n >= 4, h.describe(r))
        assert.are.equal(before, h.read_file("/proc/sys/kernel/core_pattern"))
    end)

    it("with root_writes = false is as before: other owners' files show as nobody and stay read-only", function()
        need_root()
        local ws = foreign_workspace()
        local cfg = profile("root_writes = false")
        local r = h.run_sh("echo two >> log; ls -ln log; grep CapEff /proc/self/status; cat /proc/self/uid_map",
            { workspace = ws, env = { XDG_CONFIG_HOME = cfg }, flags = { "--profile", "rootspec" } })
        has(r.stderr, "log: Permission denied", r)
        has(r.stdout, " 65534 65534 ", r)
        has(r.stdout, "CapEff:\t0000000000000000", r)
        hasnt(r.stderr, "root writes", r)                              -- the profile's choice: no line
        assert.are.equal("one\n", h.read_file(ws .. "/log"))
    end)

    it("where the file system takes no idmapped mount: one line, no capability, as before", function()
        need_root()
        -- A ramfs takes no idmapped mount; mounted in a mount namespace of the spec's own.
        local dir = h.tmpdir()
        local script = table.concat({
            ("mount -t ramfs none %s"):format(q(dir)),
            ("mkdir %s/ws && echo one > %s/ws/log && chown -R %d:%d %s/ws"):format(q(dir), q(dir), OWNER, OWNER, q(dir)),
            ("cd %s/ws"):format(q(dir)),
            h.command_line({ "run", "--", "sh", "-c", "echo two >> log; ls -ln log; grep CapEff /proc/self/status; "
                .. "cat /etc/shadow- >/dev/null; head -1 /proc/self/uid_map" }),
        }, " && ")
        local r = h.sh("unshare -m --propagation private sh -c " .. q(script))
        -- No shift here (it needs the idmap): root_only's scan hides root-only files instead.
        assert.truthy(r.stdout:match("\n%s*0%s+0%s+1\n"), h.describe(r))
        if h.sh("test -e /etc/shadow-").code == 0 then
            has(r.stderr, "/etc/shadow-: No such file or directory", r)
        end
        has(r.stderr, "cordon: root writes in files of other owners are unavailable (", r)
        has(r.stderr, "takes no idmapped mount", r)
        local _, lines = r.stderr:gsub("root writes in files", "")
        assert.are.equal(1, lines, h.describe(r))
        has(r.stderr, "log: Permission denied", r)
        has(r.stdout, "CapEff:\t0000000000000000", r)
    end)

    it("changes nothing for a caller that is not root", function()
        need_root()
        local home = h.tmpdir()
        h.sh_ok("chown 1002:1002 " .. q(home))
        local ws = h.workspace(nil, 1002)
        h.write_file(ws .. "/theirs", "theirs\n", "644")
        h.sh_ok(("chown %d:%d %s"):format(OWNER, OWNER, q(ws .. "/theirs")))
        local r = h.run_sh("echo x >> theirs; echo mine > mine; ls -ln; grep CapEff /proc/self/status; cat /proc/self/uid_map",
            { workspace = ws, home = home, uid = 1002 })
        has(r.stderr, "theirs: Permission denied", r)
        assert.are.equal("65534 65534", owners(r.stdout, "theirs"), r.stdout)
        assert.are.equal("1002 1002", owners(r.stdout, "mine"), r.stdout)
        has(r.stdout, "CapEff:\t0000000000000000", r)
        assert.truthy(r.stdout:match("\n%s*1002%s+1002%s+1\n"), h.describe(r))
        hasnt(r.stderr, "root writes", r)
    end)

    it("holds in a session's commands too", function()
        need_root()
        local ws = foreign_workspace()
        local secret, marker = foreign_secret()
        local s = h.session_start("rootspec-" .. h.token(), { cwd = ws })
        -- A root-only file made after the session started: the kernel refuses it all the same.
        local late = "/etc/cordon-spec-root-owner-session-" .. h.token()
        h.defer(function() os.remove(late) end)
        h.write_file(late, marker .. "\n", "600")
        has(h.sh_ok("cat " .. q(late)), marker)
        local r = h.cordon({ "exec", s.name, "--", "echo two >> log; echo new > new; cat " .. q(secret)
            .. "; cat " .. q(late) .. "; cat /etc/shadow-; ls -ln; head -1 /proc/self/uid_map" },
            { cwd = ws, env = s.env })
        assert.are.equal(OWNER .. " " .. OWNER, owners(r.stdout, "log"), h.describe(r))
        assert.are.equal("0 0", owners(r.stdout, "new"), h.describe(r))
        hasnt(r.stdout, marker, r)
        has(r.stderr, late .. ": Permission denied", r)
        has(r.stdout, "2147483648", r)
        assert.are.equal("one\ntwo\n", h.read_file(ws .. "/log"))
    end)
end)
