-- spec/04-engine/pod_podman_spec.lua — cordon's pod (deploy/kubernetes/) as a user would try it:
--   * the pod files checked offline against the Kubernetes API's OpenAPI schema (the npm package
--     kubernetes-models that `make deps` installs into build-deps/k8s-schema), and a broken one
--     refused; seccomp-cordon.json equal to what seccomp-cordon.py makes of this machine's
--     runtime default; the AppArmor profile parsed by apparmor_parser;
--   * the pod played with Podman (`deploy/kubernetes/podman.sh up`, which is `podman kube play`
--     with what this machine needs), from the image of `make image` (not rebuilt here): the log
--     starts with `cordon doctor --json`; from the agent's container (`podman exec cordon-agent
--     cordon exec agent -- ...`) a hidden path made after the start stays missing, a write
--     outside the workspace is refused, the network is reached only through the proxy (an
--     allowed stand-in server answers, another port of it is refused with the refusal line,
--     a direct connection is not served) and each decision is a JSON line of the pod's log;
--     `podman.sh down` leaves no container and no pod;
--   * the MCP variant (cordon-pod-mcp.yaml): `cordon mcp --session agent` answers run_command
--     with the sandbox's output.
-- The pod's session runs with one more rule than cordon-pod.yaml's: --network-allow for the
-- stand-in server's port on the private range the pod's address is in.
-- Root only (rootful Podman); skipped with the reason where podman, runc or the image is missing.
local h = require("spec.helpers")

local DEPLOY = h.source_dir .. "/deploy/kubernetes"
local SCHEMA = os.getenv("CORDON_K8S_SCHEMA") or (h.source_dir .. "/build-deps/k8s-schema")
local POD = "cordon"
local ALLOWED, REFUSED = 18200, 18201

local function version()
    local cm = h.read_file(h.source_dir .. "/CMakeLists.txt")
    return cm:match("project%(cordon VERSION ([%d.]+)")
end

describe("deploy/kubernetes: the pod files", function()
    after_each(h.cleanup)

    it("are valid for the Kubernetes API's schema, and a broken one is not", function()
        if h.sh("command -v node").code ~= 0 then return pending("node is not installed (make deps)") end
        if not h.read_file(SCHEMA .. "/node_modules/kubernetes-models/package.json") then
            return pending("kubernetes-models is not installed in " .. SCHEMA .. " (make deps installs it)")
        end
        -- the checker runs beside a link to the installed modules, where its imports resolve
        local dir = h.tmpdir()
        local checker = dir .. "/validate.mjs"
        h.sh_ok(("cp %s %s && ln -s %s %s/node_modules"):format(h.quote(DEPLOY .. "/schema/validate.mjs"),
            h.quote(checker), h.quote(SCHEMA .. "/node_modules"), h.quote(dir)))
        local files = {}
        for _, f in ipairs({ "cordon-pod.yaml", "cordon-pod-mcp.yaml", "sandbox-template.yaml" }) do
            files[#files + 1] = h.quote(DEPLOY .. "/" .. f)
        end
        local r = h.sh("node " .. h.quote(checker) .. " " .. table.concat(files, " ") .. " 2>&1")
        assert.are.equal(0, r.code, h.describe(r))
        local _, oks = ("\n" .. r.stdout):gsub("\nok ", "")
        assert.are.equal(3, oks, h.describe(r))
        -- a value the API refuses, and a promise broken (a capability added)
        local pod = h.read_file(DEPLOY .. "/cordon-pod.yaml")
        h.write_file(dir .. "/bad-enum.yaml", (pod:gsub("procMount: Unmasked", "procMount: Open")))
        h.write_file(dir .. "/bad-cap.yaml", (pod:gsub("drop: %[\"ALL\"%]", "add: [\"SYS_ADMIN\"]")))
        r = h.sh(("node %s %s/bad-enum.yaml %s/bad-cap.yaml 2>&1"):format(h.quote(checker), h.quote(dir), h.quote(dir)))
        assert.are.equal(1, r.code, h.describe(r))
        assert.truthy(r.stdout:find("bad-enum.yaml: data/spec/containers/0/securityContext/procMount", 1, true),
            h.describe(r))
        assert.truthy(r.stdout:find("bad-cap.yaml: cordon adds capabilities", 1, true), h.describe(r))
    end)

    it("has seccomp-cordon.json: this machine's runtime default plus sethostname", function()
        local default = "/usr/share/containers/seccomp.json"
        if not h.read_file(default) then return pending("no " .. default .. " (podman's packages install it)") end
        local r = h.sh(("%s %s %s -"):format(h.python, h.quote(DEPLOY .. "/seccomp-cordon.py"), default))
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal(h.read_file(DEPLOY .. "/seccomp-cordon.json"), r.stdout,
            "seccomp-cordon.json is not what seccomp-cordon.py makes of " .. default)
        -- the default refuses sethostname without CAP_SYS_ADMIN; the profile allows it
        local py = [[
import json, sys
d = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
plain = lambda prof: {n for s in prof["syscalls"] if s["action"] == "SCMP_ACT_ALLOW" and not s.get("args")
    and not (s.get("includes") or {}).get("caps")
    for n in s["names"]}
print(" ".join(sorted(plain(p) - plain(d))))]]
        r = h.sh(("%s -c %s %s %s"):format(h.python, h.quote(py), default, h.quote(DEPLOY .. "/seccomp-cordon.json")))
        assert.are.equal("sethostname\n", r.stdout, h.describe(r))
    end)

    it("has an AppArmor profile apparmor_parser reads", function()
        local parser = h.chomp(h.sh("command -v apparmor_parser || ls /usr/sbin/apparmor_parser /sbin/apparmor_parser 2>/dev/null | head -n 1").stdout)
        if parser == "" then return pending("apparmor_parser is not installed (make deps installs apparmor)") end
        local text = h.read_file(DEPLOY .. "/apparmor-cordon-pod")
        assert.truthy(text:find("\nprofile cordon%-pod flags=%(unconfined%) {\n  userns,\n"), "no userns rule")
        -- Debian 12's parser is AppArmor 3: it checks the rest with 3.0's abi and no userns rule
        local major = tonumber(h.sh(parser .. " --version").stdout:match("version (%d+)%.") or "0")
        if major < 4 then text = text:gsub("abi <abi/4%.0>", "abi <abi/3.0>"):gsub("\n  userns,\n", "\n") end
        local dir = h.tmpdir()
        h.write_file(dir .. "/profile", text)
        local r = h.sh(parser .. " --skip-kernel-load --skip-cache " .. h.quote(dir .. "/profile"))
        assert.are.equal(0, r.code, h.describe(r))
    end)
end)

describe("the pod under Podman (podman.sh up, podman exec cordon-agent cordon exec agent)", function()
    local ready -- { yaml = copy, ip = pod address } or { skip = why }
    local down_done = false

    local function sh_pod(container, script)
        local r = h.sh(("timeout -k 5 60 podman exec %s-%s sh -c %s"):format(POD, container, h.quote(script)))
        r.cmd = script
        return r
    end

    -- cordon exec in the session, from the agent's container
    local function exec(script)
        local r = h.sh(("timeout -k 5 60 podman exec %s-agent cordon exec agent -- %s"):format(POD, h.quote(script)))
        r.cmd = script
        return r
    end

    local function get()
        if ready then return ready end
        if h.chomp(h.sh_ok("id -u")) ~= "0" then
            ready = { skip = "not root: the pod is played with rootful Podman" }
        elseif h.sh("command -v podman && command -v runc").code ~= 0 then
            ready = { skip = "podman or runc is not installed (make deps installs them)" }
        elseif h.sh("podman image exists localhost/cordon:" .. version()).code ~= 0 then
            ready = { skip = "no image localhost/cordon:" .. version() .. " (make image builds it)" }
        elseif h.sh("podman pod exists " .. POD).code == 0 then
            ready = { skip = "a pod named " .. POD .. " exists already on this machine (podman.sh down ends it)" }
        end
        if ready then return ready end
        local dir = h.chomp(h.sh_ok("mktemp -d /var/tmp/cordon-pod-spec.XXXXXX"))
        local yaml = dir .. "/cordon-pod.yaml"
        local text = h.read_file(DEPLOY .. "/cordon-pod.yaml")
        local cmd = 'command: ["/usr/share/cordon/deploy/session-main.sh", "agent"]'
        assert.truthy(text:find(cmd, 1, true), "cordon-pod.yaml's command changed")
        text = text:gsub('"agent"%]', ('"agent", "--network-allow", "10.0.0.0/8:%d"]'):format(ALLOWED), 1)
        h.write_file(yaml, text)
        ready = { yaml = yaml, dir = dir, state = dir .. "/state" }
        local r = h.sh(("CORDON_POD_STATE=%s timeout -k 5 120 sh %s up %s"):format(h.quote(ready.state),
            h.quote(DEPLOY .. "/podman.sh"), h.quote(yaml)))
        assert.are.equal(0, r.code, "podman.sh up failed\n" .. h.describe(r))
        ready.up = r
        ready.ip = h.chomp(sh_pod("agent", "hostname -I").stdout):match("^(%S+)")
        assert.truthy(ready.ip and ready.ip:match("^10%."), "the pod's address is not in 10.0.0.0/8")
        return ready
    end

    local function down()
        if down_done or not ready or not ready.yaml then return nil end
        down_done = true
        return h.sh(("CORDON_POD_STATE=%s timeout -k 5 120 sh %s down %s"):format(h.quote(ready.state),
            h.quote(DEPLOY .. "/podman.sh"), h.quote(ready.yaml)))
    end

    teardown(function()
        down()
        if ready and ready.dir then os.execute("rm -rf " .. h.quote(ready.dir)) end
    end)

    it("comes up, and its log starts with cordon doctor's JSON", function()
        local p = get()
        if p.skip then return pending(p.skip) end
        local log = h.sh("podman logs " .. POD .. "-cordon")
        local first = log.stdout:match("^([^\n]*)\n")
        assert.truthy(first and first:find('^{"kernel":'), h.describe(log))
        assert.truthy(first:find('"default_profile_starts":true', 1, true), first)
        assert.truthy(log.stderr:find("session agent is up", 1, true), h.describe(log))
        -- Podman ignores procMount: Unmasked; cordon says in one line what it does instead
        -- (the kubelet unmasks /proc, and the line is not there)
        assert.truthy(log.stderr:find("this container masks parts of /proc", 1, true), h.describe(log))
    end)

    it("runs commands sandboxed: a hidden path made after the start stays missing, writes stay in the workspace", function()
        local p = get()
        if p.skip then return pending(p.skip) end
        -- made in the cordon container's home after the session started: readable there
        local made = sh_pod("cordon", "mkdir -p ~/.ssh ~/.aws && echo pod-secret > ~/.ssh/id_ed25519 && "
            .. "echo pod-secret > ~/.aws/credentials && cat ~/.ssh/id_ed25519 ~/.aws/credentials")
        assert.are.equal("pod-secret\npod-secret\n", made.stdout, h.describe(made))
        local r = exec("cat ~/.ssh/id_ed25519 ~/.aws/credentials; echo in > ws-probe; cat ws-probe; "
            .. "echo x > /usr/pod-probe; hostname")
        assert.falsy(r.stdout:find("pod-secret", 1, true), h.describe(r))
        assert.truthy(r.stderr:find(".ssh/id_ed25519: No such file or directory", 1, true), h.describe(r))
        assert.truthy(r.stderr:find(".aws/credentials: No such file or directory", 1, true), h.describe(r))
        assert.truthy(r.stderr:find("Read-only file system", 1, true), h.describe(r))
        -- the sandbox's own name: sethostname is allowed by seccomp-cordon.json
        assert.are.equal("in\ncordon\n", r.stdout, h.describe(r))
        assert.are.equal("in\n", sh_pod("agent", "cat /workspace/ws-probe").stdout)
        assert.are_not.equal(0, sh_pod("cordon", "test -e /usr/pod-probe").code)
    end)

    it("reaches the network only through the proxy: allowed, refused with its line, direct not served", function()
        local p = get()
        if p.skip then return pending(p.skip) end
        -- the stand-in server, in the agent's container, on the pod's address, both ports
        local serve = [[perl -MIO::Socket::INET -e 'for $p (@ARGV) { fork or do {
            $s = IO::Socket::INET->new(Listen => 5, LocalAddr => "0.0.0.0:$p", ReuseAddr => 1) or die;
            while ($c = $s->accept) { while (<$c>) { last if /^\r?$/ }
              print $c "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\nserved-in-pod"; close $c }
            exit } }' ]] .. ALLOWED .. " " .. REFUSED .. " </dev/null >/dev/null 2>&1 &"
        assert.are.equal(0, sh_pod("agent", serve).code)
        local function get_via(port, direct)
            local target = direct and ("/dev/tcp/%s/%d"):format(p.ip, port) or "/dev/tcp/127.0.0.1/18080"
            return ("exec 3<>%s && printf 'GET http://%s:%d/ HTTP/1.1\\r\\nHost: %s:%d\\r\\nConnection: close\\r\\n\\r\\n' >&3 && cat <&3")
                :format(target, p.ip, port, p.ip, port)
        end
        -- outside the sandbox both ports answer
        local served = h.wait_for(function()
            return sh_pod("agent", "bash -c " .. h.quote(get_via(REFUSED, true))).stdout:find("served-in-pod", 1, true)
        end, 10)
        assert.truthy(served, "the stand-in server does not answer in the pod")
        local r = exec(get_via(ALLOWED))
        assert.truthy(r.stdout:find("served-in-pod", 1, true), h.describe(r))
        -- refused, with its line; up to three tries for the line: once in a loaded clean-clone run
        -- the exec's result came without it (the 403 was there), a race of the session's that
        -- the issue notes name, not the pod's
        local line = ("network policy blocked %s:%d"):format(p.ip, REFUSED)
        for _ = 1, 3 do
            r = exec(get_via(REFUSED))
            assert.falsy(r.stdout:find("served-in-pod", 1, true), h.describe(r))
            assert.truthy(r.stdout:find("403 Forbidden", 1, true), h.describe(r))
            if r.stderr:find(line, 1, true) then break end
        end
        assert.truthy(r.stderr:find(line, 1, true), h.describe(r))
        r = exec(get_via(REFUSED, true))
        assert.falsy(r.stdout:find("served-in-pod", 1, true), h.describe(r))
        -- each decision is one JSON line of the pod's log (what the cluster's logging collects)
        local logged = h.wait_for(function()
            local out = h.sh("podman logs " .. POD .. "-cordon").stdout
            return out:find(('"host":"%s","port":%d,"verdict":"allow"'):format(p.ip, ALLOWED), 1, true)
                and out:find(('"host":"%s","port":%d,"verdict":"deny"'):format(p.ip, REFUSED), 1, true)
        end, 10)
        assert.truthy(logged, h.describe(h.sh("podman logs " .. POD .. "-cordon")))
    end)

    it("ends with podman.sh down (podman kube down): no container, no pod left", function()
        local p = get()
        if p.skip then return pending(p.skip) end
        assert.are.equal(0, h.sh("podman pod exists " .. POD).code)
        local r = down()
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("", h.sh("podman ps -a --filter pod=" .. POD .. " --format '{{.Names}}'").stdout)
        assert.are.equal("", h.sh("podman ps -a --filter name=^" .. POD .. "- --format '{{.Names}}'").stdout)
        assert.are_not.equal(0, h.sh("podman pod exists " .. POD).code)
    end)
end)

describe("the MCP variant under Podman (cordon-pod-mcp.yaml)", function()
    local top, state
    teardown(function()
        if state then
            h.sh(("CORDON_POD_STATE=%s timeout -k 5 120 sh %s down %s"):format(h.quote(state),
                h.quote(DEPLOY .. "/podman.sh"), h.quote(DEPLOY .. "/cordon-pod-mcp.yaml")))
            os.execute("rm -rf " .. h.quote(top))
        end
    end)

    it("answers run_command through the pod's session, sandboxed", function()
        if h.chomp(h.sh_ok("id -u")) ~= "0" then return pending("not root: the pod is played with rootful Podman") end
        if h.sh("command -v podman && command -v runc").code ~= 0 then
            return pending("podman or runc is not installed (make deps installs them)")
        end
        if h.sh("podman image exists localhost/cordon:" .. version()).code ~= 0 then
            return pending("no image localhost/cordon:" .. version() .. " (make image builds it)")
        end
        if h.sh("podman pod exists cordon-mcp").code == 0 then
            return pending("a pod named cordon-mcp exists already on this machine")
        end
        top = h.chomp(h.sh_ok("mktemp -d /var/tmp/cordon-pod-mcp-spec.XXXXXX"))
        state = top .. "/state"
        local r = h.sh(("CORDON_POD_STATE=%s timeout -k 5 120 sh %s up %s"):format(h.quote(state),
            h.quote(DEPLOY .. "/podman.sh"), h.quote(DEPLOY .. "/cordon-pod-mcp.yaml")))
        assert.are.equal(0, r.code, h.describe(r))
        -- Podman ignores `stdin: true`, so the agent container's own `cordon mcp` met the end of
        -- its stdin at once; the same command, with a stdin, from the pod's cordon container
        local msgs = table.concat({
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                .. '"capabilities":{},"clientInfo":{"name":"spec","version":"0"}}}',
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command",'
                .. '"arguments":{"command":"hostname; mkdir -p ~/.aws; cat ~/.aws/credentials"}}}',
        }, "\n") .. "\n"
        local dir = h.tmpdir()
        h.write_file(dir .. "/in", msgs)
        -- stdin stays open until the answer to id 2 came (bounded: 30 s)
        r = h.sh(("(cat %s; i=0; while [ $i -lt 30 ] && ! grep -q '\"id\":2' %s/out 2>/dev/null; do "
            .. "sleep 1; i=$((i+1)); done) | timeout -k 5 60 podman exec -i cordon-mcp-cordon cordon mcp "
            .. "--session agent > %s/out; cat %s/out"):format(h.quote(dir .. "/in"), h.quote(dir), h.quote(dir),
            h.quote(dir)))
        local answer = r.stdout:match('[^\n]*"id":2[^\n]*')
        assert.truthy(answer, h.describe(r))
        assert.truthy(answer:find("[stdout]\\ncordon\\n", 1, true), answer)
        assert.truthy(answer:find(".aws/credentials: No such file or directory", 1, true), answer)
    end)
end)
