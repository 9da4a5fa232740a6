-- spec/04-engine/run_container_spec.lua — cordon inside a Podman container: a minimal Debian
-- (bookworm, minbase) image that spec/fixtures/container/build-image.sh makes with debootstrap
-- once per machine (cached in build-deps/container-rootfs, or $CORDON_CONTAINER_CACHE), with the
-- built cordon, cordon-session and the data (policies/, profiles/ under share/cordon) bound in
-- read-only from a temp dir. Containers are started once each and driven with `podman exec`:
--   * Podman's defaults (masked /proc and /sys paths, its seccomp profile, /etc/hosts,
--     /etc/resolv.conf and /etc/hostname bind mounts): the sandbox shares the container's /proc
--     and /sys, says so in one line, and Landlock keeps other processes' /proc/PID from it;
--   * the same with --security-opt unmask=ALL: the sandbox has a /proc of its own, so ps -e
--     lists only its processes.
-- In both: a sandboxed echo, a refused write, /etc/shadow hidden, the container's /etc/hosts
-- and /etc/hostname bind mounts read as they are (its /etc/resolv.conf is covered by the
-- sandbox's own, naming the sandbox's resolver), a network refusal (a server on the container's loopback is out of reach),
-- and a session (start, exec, stop). A third container has Podman's seccomp profile changed to
-- refuse user namespaces as Docker's default does (spec/fixtures/container/docker-like-seccomp.py):
-- cordon does not start there and names the flag. Before them, the rebuild of a hidden path's
-- parent that has a mount below it (or sits on too deep a stack of overlays), on the host.
-- Skipped with the reason when not root, when podman, runc or debootstrap is missing, or when
-- this machine cannot run a container or a user namespace in one.
local h = require("spec.helpers")

local IMAGE = "cordon-test-image"
-- runc and cgroupfs: Debian's podman works with them on machines without systemd or crun.
local PODMAN = "podman --runtime runc --cgroup-manager cgroupfs"
local CACHE = os.getenv("CORDON_CONTAINER_CACHE") or (h.source_dir .. "/build-deps/container-rootfs")
local BUILD = h.source_dir .. "/spec/fixtures/container/build-image.sh"
local NOTE = "this container masks parts of /proc"

local prepared -- { flags = "...", data = DIR } once ready, or { skip = "reason" }
local started = {} -- container names, removed in teardown

-- The podman flags this machine needs. Rootful podman raises RLIMIT_NOFILE and RLIMIT_NPROC
-- for the container, which a root without CAP_SYS_RESOURCE (some VMs) may not: then the
-- caller's own hard limit is passed for both.
local function podman_flags()
    local r = h.sh(PODMAN .. " run --rm " .. IMAGE .. " true")
    if r.code == 0 then return "" end
    if r.stderr:find("rlimit", 1, true) then
        local n = h.chomp(h.sh_ok("ulimit -Hn"))
        local flags = ("--ulimit nofile=%s:%s --ulimit nproc=%s:%s"):format(n, n, n, n)
        r = h.sh(PODMAN .. " run --rm " .. flags .. " " .. IMAGE .. " true")
        if r.code == 0 then return flags end
    end
    return nil, "podman cannot run a container here: " .. (r.stderr:match("[^\n]+") or r.code)
end

-- Builds the image and the data dir once; returns prepared (with .skip when not possible).
local function prepare()
    if prepared then return prepared end
    if h.chomp(h.sh_ok("id -u")) ~= "0" then
        prepared = { skip = "not root: the image is built with debootstrap, run with rootful podman" }
        return prepared
    end
    if h.sanitizer_build() then
        prepared = { skip = "this cordon is a sanitizer build, linked with a runtime the container's "
            .. "image does not have (the release build runs there)" }
        return prepared
    end
    for _, prog in ipairs({ "podman", "runc" }) do
        if h.sh("command -v " .. prog).code ~= 0 then
            prepared = { skip = prog .. " is not installed (make deps installs it)" }
            return prepared
        end
    end
    if not h.read_file(CACHE .. "/rootfs.done") and h.sh("command -v debootstrap").code ~= 0 then
        prepared = { skip = "debootstrap is not installed (make deps installs it)" }
        return prepared
    end
    local b = h.sh("sh " .. h.quote(BUILD) .. " " .. h.quote(CACHE) .. " " .. IMAGE)
    assert(b.code == 0, "building the container image failed\n" .. h.describe(b))
    local flags, why = podman_flags()
    if not flags then
        prepared = { skip = why }
        return prepared
    end
    -- cordon finds its data beside its binary (share/cordon); the build tree's links are
    -- followed, since the checkout is not in the container.
    local data = h.chomp(h.sh_ok("mktemp -d /var/tmp/cordon-container.XXXXXX"))
    local bindir = h.bin:match("^(.*)/[^/]+$")
    h.sh_ok(("cp %s %s/cordon-session %s/ && mkdir -p %s/share/cordon && cp -rL %s %s %s/share/cordon/")
        :format(h.quote(h.bin), h.quote(bindir), h.quote(data), h.quote(data),
            h.quote(h.source_dir .. "/policies"), h.quote(h.source_dir .. "/profiles"), h.quote(data)))
    prepared = { flags = flags, data = data }
    return prepared
end

-- A running container (started on first use, removed in teardown): variant "default" or
-- "unmask". Returns its name, or nil and why it cannot be had.
local containers = {}
local function container(variant)
    local p = prepare()
    if p.skip then return nil, p.skip end
    local known = containers[variant]
    if known then return known.name, known.skip end
    local name = "cordon-spec-" .. variant .. "-" .. h.token():sub(1, 8)
    local extra = ""
    if variant == "unmask" then
        extra = "--security-opt unmask=ALL "
    elseif variant == "docker-seccomp" then
        local profile = p.data .. "/docker-like-seccomp.json"
        h.sh_ok(("%s %s /usr/share/containers/seccomp.json %s"):format(h.python,
            h.quote(h.fixtures .. "/container/docker-like-seccomp.py"), h.quote(profile)))
        extra = "--security-opt seccomp=" .. h.quote(profile) .. " "
    end
    h.sh_ok(("%s run -d --name %s %s %s-v %s:/opt/cordon:ro %s sleep infinity")
        :format(PODMAN, name, p.flags, extra, h.quote(p.data), IMAGE))
    started[#started + 1] = name
    -- a workspace, a secret in an outside process's environment, and a server on the
    -- container's loopback that the sandbox must not reach
    h.sh_ok(PODMAN .. " exec " .. name .. " sh -c " .. h.quote(
        "mkdir -p /work /run/cordon-spec && chmod 700 /run/cordon-spec && "
        .. "(SPEC_SECRET=cordon-spec-secret setsid sleep infinity </dev/null >/dev/null 2>&1 &) && "
        .. "(setsid perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(Listen => 5, "
        .. "LocalAddr => \"127.0.0.1:18123\", ReuseAddr => 1) or die; "
        .. "while ($c = $s->accept) { print $c \"served\\n\"; close $c }' </dev/null >/dev/null 2>&1 &)"))
    -- user namespaces inside it (refused on purpose in the Docker-like one)
    local u = variant == "docker-seccomp" and { code = 0 }
        or h.sh(PODMAN .. " exec " .. name .. " unshare --user --map-root-user true")
    if u.code ~= 0 then
        containers[variant] = { skip = "no user namespace inside a container here: "
            .. (u.stderr:match("[^\n]+") or u.code) }
    else
        containers[variant] = { name = name }
    end
    return containers[variant].name, containers[variant].skip
end

-- Runs script with sh in the container (in /work, with a session runtime dir).
local function inside(name, script)
    local r = h.sh(("timeout -k 5 120 %s exec -w /work -e XDG_RUNTIME_DIR=/run/cordon-spec %s sh -c %s")
        :format(PODMAN, name, h.quote(script)))
    r.cmd = script
    return r
end

-- `cordon run` in the container: r.stdout is the command's, r.stderr cordon's and its own.
local function run(name, command)
    return inside(name, "/opt/cordon/cordon run -- sh -c " .. h.quote(command))
end

local function lines_with(s, needle)
    local n = 0
    for line in s:gmatch("[^\n]+") do
        if line:find(needle, 1, true) then n = n + 1 end
    end
    return n
end

local function check_common(variant)
    local function get()
        local name, why = container(variant)
        if not name then pending(why) end
        return name
    end

    it("runs a command in the sandbox", function()
        local name = get()
        if not name then return end
        local r = run(name, "echo hello from the sandbox")
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("hello from the sandbox\n", r.stdout)
    end)

    it("refuses a write outside the workspace and allows one inside it", function()
        local name = get()
        if not name then return end
        local r = run(name, "echo x > /usr/cordon-spec-probe; echo inside > /work/probe; cat /work/probe")
        assert.truthy(r.stderr:find("Read-only file system", 1, true), h.describe(r))
        assert.are.equal("inside\n", r.stdout, h.describe(r))
        assert.are_not.equal(0, inside(name, "test -e /usr/cordon-spec-probe").code,
            "the refused write reached the container")
    end)

    it("hides /etc/shadow, which the container has", function()
        local name = get()
        if not name then return end
        assert.are.equal(0, inside(name, "test -s /etc/shadow").code, "the image has no /etc/shadow")
        local r = run(name, "cat /etc/shadow; ls /etc | grep -x shadow; true")
        assert.truthy(r.stderr:find("/etc/shadow: No such file or directory", 1, true), h.describe(r))
        assert.are.equal("", r.stdout, h.describe(r))
    end)

    it("shows the container's /etc/hosts and /etc/hostname bind mounts, and its own resolv.conf", function()
        local name = get()
        if not name then return end
        local files = "/etc/hosts /etc/hostname"
        assert.truthy(inside(name, "grep -c ' /etc/hosts ' /proc/self/mountinfo").stdout:match("^[1-9]"),
            "/etc/hosts is not a bind mount in this container")
        local outside = inside(name, "cat " .. files)
        local r = run(name, "cat " .. files)
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(outside.stdout:find("localhost", 1, true), h.describe(outside))
        assert.are.equal(outside.stdout, r.stdout)
        -- the container's nameserver is not reachable from the sandbox's network namespace: the
        -- bind-mounted resolv.conf is covered by one naming the sandbox's resolver
        r = run(name, "cat /etc/resolv.conf")
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("nameserver 127.0.0.53\n", 1, true), h.describe(r))
    end)

    it("keeps the sandbox off the container's loopback", function()
        local name = get()
        if not name then return end
        local probe = "exec 3<>/dev/tcp/127.0.0.1/18123 && cat <&3"
        local served = h.wait_for(function()
            return inside(name, "bash -c " .. h.quote(probe)).stdout == "served\n"
        end, 10)
        assert.truthy(served, "the container's loopback server did not answer outside the sandbox")
        local r = run(name, "bash -c " .. h.quote(probe) .. "; cat /proc/net/dev")
        assert.falsy(r.stdout:find("served", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("Connection refused", 1, true) or r.stderr:find("Permission denied", 1, true),
            h.describe(r))
        -- its own network namespace: loopback only
        assert.falsy(r.stdout:find("eth0", 1, true), h.describe(r))
        assert.truthy(r.stdout:find("lo:", 1, true), h.describe(r))
    end)

    it("keeps other processes' environment and root out of reach", function()
        local name = get()
        if not name then return end
        local pid = h.chomp(inside(name, "pgrep -x -n sleep").stdout)
        assert.truthy(pid:match("^%d+$"), "no outside process")
        assert.are.equal(0, inside(name, "grep -q cordon-spec-secret /proc/" .. pid .. "/environ").code)
        local r = run(name, ("cat /proc/%s/environ; ls /proc/%s/root/etc/shadow; true"):format(pid, pid))
        assert.falsy(r.stdout:find("cordon-spec-secret", 1, true), h.describe(r))
        assert.falsy(r.stdout:find("/etc/shadow", 1, true), h.describe(r))
    end)

    it("runs a session: start, exec, stop", function()
        local name = get()
        if not name then return end
        local s = "spec-" .. h.token():sub(1, 8)
        local r = inside(name, ("C=/opt/cordon/cordon; $C session start %s --detach && "
            .. "$C exec %s -- 'echo in the session; cat /etc/hostname; cat /etc/shadow'; "
            .. "echo exec=$?; $C session stop %s; echo stop=$?"):format(s, s, s))
        assert.truthy(r.stdout:find("in the session\n", 1, true), h.describe(r))
        assert.truthy(r.stdout:find("stop=0", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("/etc/shadow: No such file or directory", 1, true), h.describe(r))
        local hostname = inside(name, "cat /etc/hostname").stdout
        assert.truthy(hostname ~= "" and r.stdout:find(hostname, 1, true), h.describe(r))
    end)
end

-- What the container's /etc needs happens on a host too: a mount below a hidden path's parent.
describe("cordon run: a hidden path whose parent has a mount below it", function()
    after_each(h.cleanup)

    it("stays hidden, and the mount, the other entries and their links read as on the host", function()
        if h.chomp(h.sh_ok("id -u")) ~= "0" then return pending("not root: cannot mount a tmpfs") end
        local dir = h.tmpdir()
        h.sh_ok(("cd %s && mkdir sub keep && echo secret > secret && echo plain > plain && "
            .. "ln -s plain link && echo kept > keep/f && mount -t tmpfs cordon-spec sub && "
            .. "echo in-mount > sub/f"):format(h.quote(dir)))
        h.defer(function() os.execute("umount " .. h.quote(dir .. "/sub")) end)
        local r = h.cordon({ "run", "--hide", dir .. "/secret", "--", "sh", "-c",
            ("cd %s && ls && cat sub/f link keep/f && cat secret; touch new"):format(h.quote(dir)) })
        assert.are.equal("keep\nlink\nplain\nsub\nin-mount\nplain\nkept\n", r.stdout, h.describe(r))
        assert.truthy(r.stderr:find("secret: No such file or directory", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("Read-only file system", 1, true), h.describe(r))
    end)
end)

-- A container whose root is an overlay on an overlay (Docker in Docker): one more is too deep
-- a stack for the kernel (EINVAL), and the parent is rebuilt as above.
describe("cordon run: a hidden path on an overlay of an overlay", function()
    after_each(h.cleanup)

    it("stays hidden, its siblings readable", function()
        if h.chomp(h.sh_ok("id -u")) ~= "0" then return pending("not root: cannot mount overlays") end
        local dir = h.tmpdir()
        h.sh_ok(("cd %s && mkdir -p l1/d l2 l3 a b && echo secret > l1/d/secret && echo plain > l1/d/plain && "
            .. "mount -t overlay cordon-spec -o lowerdir=l1:l2 a && "
            .. "mount -t overlay cordon-spec -o lowerdir=a:l3 b"):format(h.quote(dir)))
        h.defer(function() os.execute(("umount %s/b %s/a"):format(h.quote(dir), h.quote(dir))) end)
        local d = dir .. "/b/d"
        local r = h.cordon({ "run", "--hide", d .. "/secret", "--", "sh", "-c",
            ("ls %s && cat %s/plain %s/secret"):format(h.quote(d), h.quote(d), h.quote(d)) })
        assert.are.equal("plain\nplain\n", r.stdout, h.describe(r))
        assert.truthy(r.stderr:find("secret: No such file or directory", 1, true), h.describe(r))
    end)
end)

describe("cordon run in a Podman container", function()
    after_each(h.cleanup)
    teardown(function()
        for _, name in ipairs(started) do h.sh(PODMAN .. " rm -f -t 0 " .. name) end
        if prepared and prepared.data then os.execute("rm -rf " .. h.quote(prepared.data)) end
    end)

    describe("with Podman's defaults (masked /proc and /sys)", function()
        check_common("default")

        it("says in one line that the sandbox shares the container's /proc, and what it costs", function()
            local name, why = container("default")
            if not name then return pending(why) end
            local r = run(name, "readlink /proc/self; echo $$")
            assert.are.equal(0, r.code, h.describe(r))
            assert.are.equal(1, lines_with(r.stderr, NOTE), h.describe(r))
            assert.truthy(r.stderr:find("Landlock", 1, true), h.describe(r))
            assert.truthy(r.stderr:find("unmask=ALL", 1, true), h.describe(r))
            -- the documented difference: /proc's pids are the container's, not the sandbox's
            local self, own = r.stdout:match("^(%d+)\n(%d+)\n$")
            assert.truthy(self and own and self ~= own, h.describe(r))
        end)

        it("refuses to start when a hidden path lies in the shared /proc", function()
            local name, why = container("default")
            if not name then return pending(why) end
            local r = inside(name, "/opt/cordon/cordon run --hide /proc/cpuinfo -- true")
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find("/proc/cpuinfo is hidden, but", 1, true), h.describe(r))
        end)
    end)

    describe("with a seccomp profile that refuses user namespaces, as Docker's default does", function()
        it("does not start, and names the flag that lets it", function()
            if not h.read_file("/usr/share/containers/seccomp.json") then
                return pending("no /usr/share/containers/seccomp.json to derive the profile from")
            end
            local name, why = container("docker-seccomp")
            if not name then return pending(why) end
            local r = run(name, "echo ran")
            assert.are.equal(125, r.code, h.describe(r))
            assert.are.equal("", r.stdout, h.describe(r))
            assert.truthy(r.stderr:find("seccomp=unconfined", 1, true), h.describe(r))
        end)
    end)

    describe("with --security-opt unmask=ALL", function()
        check_common("unmask")

        it("gives the sandbox its own /proc: ps -e lists only the sandbox's processes", function()
            local name, why = container("unmask")
            if not name then return pending(why) end
            local r = run(name, "ps -e -o pid=,comm=")
            assert.are.equal(0, r.code, h.describe(r))
            assert.are.equal(0, lines_with(r.stderr, NOTE), h.describe(r))
            -- cordon's init as PID 1, the command's sh and ps; none of the container's
            -- (its sleep and perl)
            local comms = {}
            for pid, comm in r.stdout:gmatch("%s*(%d+) (%S+)\n") do comms[#comms + 1] = pid .. " " .. comm end
            assert.are.equal("1 cordon", comms[1], h.describe(r))
            for i = 2, #comms do
                assert.truthy(comms[i]:match(" sh$") or comms[i]:match(" ps$"), h.describe(r))
            end
        end)
    end)
end)
