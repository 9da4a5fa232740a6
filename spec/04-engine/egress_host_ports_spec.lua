-- spec/04-engine/egress_host_ports_spec.lua — the host's own services by explicit grant:
-- `--allow-host-port PORT` (profile key network.host_ports) makes the host's 127.0.0.1:PORT
-- reachable inside at 127.0.0.1:PORT and localhost:PORT. init listens there inside the
-- sandbox's network namespace and the controller connects to the host's 127.0.0.1:PORT for each
-- connection (proxy/port_relay.c); nothing else on the host's loopback becomes reachable, with
-- loopback service on or off (Landlock then allows TCP connect to the granted ports too).
-- Clients go direct (curl --noproxy '*'): the sandbox's NO_PROXY names loopback anyway.
-- Drives the built binary ($CORDON_BIN); loopback only; needs curl and python3.
local h = require("spec.helpers")

local CURL = "curl -sS --noproxy '*' --max-time 20 "

local function run(script, flags, opts)
    opts = opts or {}
    local audit = h.tmpdir() .. "/audit.jsonl"
    local env = { CORDON_AUDIT_LOG = audit }
    for k, v in pairs(opts.env or {}) do env[k] = v end
    return h.run_sh(script, { flags = flags or {}, env = env }), audit
end

local function audit_lines(path, kind)
    local out = {}
    for line in (h.read_file(path) or ""):gmatch("[^\n]+") do
        if line:find('"kind":"' .. kind .. '"', 1, true) then out[#out + 1] = line end
    end
    return out
end

describe("--allow-host-port", function()
    after_each(h.cleanup)

    it("reaches the host's 127.0.0.1:PORT at 127.0.0.1:PORT, localhost:PORT and [::1]:PORT, audited", function()
        local s = h.server("http")
        -- reachable from the host first: the refusal below is the sandbox's
        assert.are.equal(s.marker .. "\n", h.sh_ok(CURL .. "http://127.0.0.1:" .. s.port .. "/probe.txt"))
        local r, audit = run(CURL .. "http://127.0.0.1:" .. s.port .. "/probe.txt && "
            .. CURL .. "http://localhost:" .. s.port .. "/probe.txt && "
            .. CURL .. "'http://[::1]:" .. s.port .. "/probe.txt'", { "--allow-host-port", tostring(s.port) })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal(s.marker .. "\n" .. s.marker .. "\n" .. s.marker .. "\n", r.stdout, h.describe(r))
        local lines = audit_lines(audit, "host_port")
        assert.is_true(#lines >= 2, h.read_file(audit) or "no audit log")
        assert.truthy(lines[1]:find('"port":' .. s.port, 1, true), lines[1])
        assert.truthy(lines[1]:find('"verdict":"allow"', 1, true), lines[1])
    end)

    it("without it the host's service is not reachable; a grant reaches that port only", function()
        local s, other = h.server("http"), h.server("http")
        assert.are.equal(other.marker .. "\n", h.sh_ok(CURL .. "http://127.0.0.1:" .. other.port .. "/probe.txt"))
        local r = run(CURL .. "http://127.0.0.1:" .. s.port .. "/probe.txt")
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.is_nil(r.stdout:find(s.marker, 1, true), h.describe(r))
        r = run(CURL .. "http://127.0.0.1:" .. other.port .. "/probe.txt", { "--allow-host-port", tostring(s.port) })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.is_nil(r.stdout:find(other.marker, 1, true), h.describe(r))
    end)

    it("a granted port nothing listens on is refused inside, said once", function()
        local port = tonumber(h.sh_ok(h.python .. " -c " .. h.quote("import socket; s=socket.socket(); "
            .. "s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")))
        local r = run(CURL .. "http://127.0.0.1:" .. port .. "/; echo first=$?; "
            .. CURL .. "http://127.0.0.1:" .. port .. "/; echo second=$?", { "--allow-host-port", tostring(port) })
        -- reset at once: curl says it could not connect (7), or lost the connection while it
        -- sent its request (55) or waited for the answer (56), as the reset's timing falls
        local reset = { ["7"] = true, ["55"] = true, ["56"] = true }
        local first, second = r.stdout:match("^first=(%d+)\nsecond=(%d+)\n$")
        assert.truthy(reset[first], h.describe(r))
        assert.truthy(reset[second], h.describe(r))
        local _, n = r.stderr:gsub("cordon: cannot connect to the host's 127.0.0.1:" .. port
            .. ": Connection refused %(is the service running%?%)\n", "")
        assert.are.equal(1, n, h.describe(r))
    end)

    it("works with loopback service off (Landlock allows connect to the granted port only)", function()
        local s, other = h.server("http"), h.server("http")
        local r = run(CURL .. "http://127.0.0.1:" .. s.port .. "/probe.txt && "
            .. CURL .. "http://localhost:" .. s.port .. "/probe.txt; "
            .. CURL .. "http://127.0.0.1:" .. other.port .. "/probe.txt; echo other=$?",
            { "--allow-loopback=false", "--allow-host-port", tostring(s.port) })
        assert.are.equal(s.marker .. "\n" .. s.marker .. "\nother=7\n", r.stdout, h.describe(r))
    end)

    it("is the profile key network.host_ports too", function()
        local s = h.server("http")
        local cfg = h.profile_dir("hostdb", ('return { extends = "coding", network = { host_ports = { %d } } }')
            :format(s.port))
        local r = run(CURL .. "http://localhost:" .. s.port .. "/probe.txt", { "--profile", "hostdb" },
            { env = { XDG_CONFIG_HOME = cfg } })
        assert.are.equal(s.marker .. "\n", r.stdout, h.describe(r))
    end)

    it("refuses the proxy's own ports and what is not a port, with one clear line", function()
        for port, want in pairs({
            ["18080"] = "port 18080 is the sandbox proxy's HTTP port inside the sandbox: it cannot also be the host's",
            ["18081"] = "port 18081 is the sandbox proxy's SOCKS5 port inside the sandbox: it cannot also be the host's",
            ["0"] = "item 1: expected a port 1-65535, got 0",
            ["70000"] = "item 1: expected a port 1-65535, got 70000",
            ["db"] = "item 1: expected a port 1-65535, got db",
        }) do
            local r = run("echo ran", { "--allow-host-port", port })
            assert.are.equal(125, r.code, h.describe(r))
            assert.are.equal("", r.stdout, h.describe(r))
            assert.truthy(r.stderr:find("key 'network.host_ports': " .. want, 1, true), h.describe(r))
        end
    end)

    it("serves a session's commands too", function()
        local s = h.server("http")
        local sess = h.session_start("hostports", { flags = { "--allow-host-port", tostring(s.port) } })
        local r = h.cordon({ "exec", sess.name, "--", CURL .. "http://localhost:" .. s.port .. "/probe.txt" },
            { cwd = sess.cwd, env = sess.env })
        assert.are.equal(s.marker .. "\n", r.stdout, h.describe(r))
        assert.are.same({ s.port }, sess.info.host_ports)
    end)
end)
