-- spec/04-engine/policy_net_spec.lua — `cordon policy net` as a user sees it: verdict, deciding
-- rule and suggestion; exit 0 allow, 1 deny, 2 bad usage with one 'cordon:' line; --json.
-- Drives the built binary ($CORDON_BIN); no network is touched (the decision is the policy's).
local h = require("spec.helpers")

local function net(args)
    local full = { "policy", "net" }
    for _, a in ipairs(args) do full[#full + 1] = a end
    return h.cordon(full)
end

local function lines(s)
    local out = {}
    for l in s:gmatch("[^\n]+") do out[#out + 1] = l end
    return out
end

describe("cordon policy net", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    -- args -> exit code, stdout lines (exact)
    local cases = {
        { { "--allow", "*.example.com:443", "api.example.com", "443" }, 0,
          { "allow", "rule: *.example.com:443", "reason: allowed by rule '*.example.com:443'" } },
        { { "--allow", "*.example.com:443", "--kind", "connect", "API.Example.com.", "443" }, 0,
          { "allow", "rule: *.example.com:443", "reason: allowed by rule '*.example.com:443'" } },
        { { "--allow", "*.example.com:443", "example.com", "443" }, 1,
          { "ask", "reason: not in the allowlist", "suggest: --network-allow example.com:443" } },
        { { "--allow", "example.com", "--kind", "http", "example.com", "80" }, 0,
          { "allow", "rule: example.com", "reason: allowed by rule 'example.com'" } },
        { { "--allow", "example.com", "--kind", "socks", "example.com", "22" }, 1,
          { "ask",
            "reason: not in the allowlist (rule 'example.com' allows only HTTP and CONNECT; SOCKS needs a tcp:// entry)",
            "suggest: --network-allow tcp://example.com:22" } },
        { { "--allow", "tcp://git.example.com:22", "--kind=socks", "git.example.com", "22" }, 0,
          { "allow", "rule: tcp://git.example.com:22", "reason: allowed by rule 'tcp://git.example.com:22'" } },
        { { "--allow", "*:443", "--deny", "evil.test", "evil.test", "443" }, 1,
          { "deny", "rule: evil.test", "reason: denied by rule 'evil.test'" } },
        -- the coding profile denies cloud metadata, however it is spelled
        { { "--allow", "*:80", "--kind", "http", "169.254.43518", "80" }, 1,
          { "deny", "rule: 169.254.169.254", "reason: denied by rule '169.254.169.254'" } },
        { { "--allow", "127.0.0.1:8080", "--kind", "http", "0x7f.1", "8080" }, 0,
          { "allow", "rule: 127.0.0.1:8080", "reason: allowed by rule '127.0.0.1:8080'" } },
        { { "--allow", "[::1]:443", "[0:0::1]", "443" }, 0,
          { "allow", "rule: [::1]:443", "reason: allowed by rule '[::1]:443'" } },
        { { "--allow", "*:443", "example.com%2e.evil", "443" }, 1,
          { "deny", "reason: refused host: contains '%' (percent-encoding or an IPv6 zone)" } },
        { { "--allow", "*:443", "a..b", "443" }, 1, { "deny", "reason: refused host: empty label" } },
        -- unlisted: the coding profile asks an owner (network.ask); policy net has none: exit 1
        { { "--", "example.com", "443" }, 1,
          { "ask", "reason: not in the allowlist", "suggest: --network-allow example.com:443" } },
    }
    for i, c in ipairs(cases) do
        it(("case %d: %s -> %d"):format(i, table.concat(c[1], " "), c[2]), function()
            local r = net(c[1])
            assert.are.equal(c[2], r.code, h.describe(r))
            assert.are.same(c[3], lines(r.stdout), h.describe(r))
            assert.are.equal("", r.stderr, h.describe(r))
        end)
    end

    -- args -> stderr pattern; every one exits 125 with one 'cordon: policy net:' line
    local bad = {
        { { "--allow", "*", "a.test", "443" },
          "invalid network rule '*': a bare '*' would allow every host; write '*:443' or a domain" },
        { { "--deny", "a.*.test", "a.test", "443" }, "invalid network rule 'a.*.test'" },
        { { "--allow", "a.test:0", "a.test", "443" }, "port 0 is outside 1..65535" },
        { { "--allow", "ftp://a.test", "a.test", "443" }, "unsupported scheme 'ftp://'" },
        { { "--allow", "tcp://a.test", "a.test", "443" }, "a tcp:// rule needs a port" },
        { { "a.test", "0" }, "invalid port '0'" },
        { { "a.test", "65536" }, "invalid port '65536'" },
        { { "a.test", "https" }, "invalid port 'https'" },
        { { "a.test", "-1" }, "invalid port '-1'" },
        { { "--kind", "udp", "a.test", "443" }, "invalid --kind 'udp'" },
        { { "a.test" }, "expected HOST PORT" },
        { {}, "expected HOST PORT" },
        { { "a.test", "443", "extra" }, "too many arguments" },
        { { "--allow" }, "--allow needs a value" },
        { { "--frobnicate", "a.test", "443" }, "unknown option '--frobnicate'" },
    }
    for i, c in ipairs(bad) do
        it(("bad usage %d: %s -> 125"):format(i, table.concat(c[1], " ")), function()
            local r = net(c[1])
            assert.are.equal(125, r.code, h.describe(r))
            local l = lines(r.stderr)
            assert.are.equal(1, #l, h.describe(r))
            assert.truthy(l[1]:find("^cordon: policy net: "), h.describe(r))
            assert.truthy(l[1]:find(c[2], 1, true), h.describe(r))
            assert.are.equal("", r.stdout, h.describe(r))
        end)
    end

    it("--json prints one object", function()
        local r = net({ "--json", "--allow", "*.example.com:443", "--kind", "http", "api.example.com", "80" })
        assert.are.equal(1, r.code, h.describe(r))
        local v = assert(h.last_json(r.stdout))
        assert.are.equal("ask", v.verdict)
        assert.are.equal("http", v.kind)
        assert.are.equal("api.example.com", v.host)
        assert.are.equal(80, v.port)
        assert.are.equal("not in the allowlist", v.reason)
        assert.are.equal("--network-allow api.example.com:80", v.suggest)
        r = net({ "--json", "--allow", "*.example.com:443", "api.example.com", "443" })
        assert.are.equal(0, r.code, h.describe(r))
        v = assert(h.last_json(r.stdout))
        assert.are.equal("allow", v.verdict)
        assert.are.equal("*.example.com:443", v.rule)
    end)

    it("uses the user's policy layer, like the proxy", function()
        local home = h.tmpdir()
        h.sh_ok("mkdir -p " .. h.quote(home .. "/.config/cordon"))
        h.write_file(home .. "/.config/cordon/policy.lua", [[
return { network = function(input, next)
    if input.host == "ask.test" then return { verdict = "ask", reason = "a person decides" } end
    if input.host == "broken.test" then return { verdict = "yes" } end
    return next(input)
end }
]])
        local r = h.cordon({ "policy", "net", "ask.test", "443" }, { home = home })
        assert.are.equal(1, r.code, h.describe(r))
        assert.are.same({ "ask", "reason: a person decides" }, lines(r.stdout))
        r = h.cordon({ "policy", "net", "--allow", "*:443", "broken.test", "443" }, { home = home })
        assert.are.equal(1, r.code, h.describe(r))
        assert.are.equal("deny", lines(r.stdout)[1], h.describe(r))
        assert.truthy(r.stdout:find("policy error: .*policy.lua:1: network result: verdict must be"), h.describe(r))
        r = h.cordon({ "policy", "net", "--allow", "*:443", "fine.test", "443" }, { home = home })
        assert.are.equal(0, r.code, h.describe(r))
    end)

    it("cordon run refuses an invalid rule with exit 125 and one line naming it", function()
        local r = h.cordon({ "run", "--network-allow", "*", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.are.equal("cordon: invalid network rule '*': a bare '*' would allow every host; "
            .. "write '*:443' or a domain\n", r.stderr)
        r = h.cordon({ "run", "--network-deny", "tcp://x", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("invalid network rule 'tcp://x'", 1, true), h.describe(r))
    end)
end)

-- The address-rule holes an attack review found, as `cordon policy net` answers them: the same
-- code the proxy asks, so each was "allow" before and is refused now.
describe("cordon policy net: special addresses, the unspecified address and ranges", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    local UNSPEC = "reason: 0.0.0.0 is the unspecified address, which reaches the host's own services; "
        .. "it is never allowed"
    local function loopback(rule, host, shown)
        return { "ask", ("reason: not in the allowlist (rule '%s' does not reach %s, a loopback %s: it needs "
            .. "a rule naming it)"):format(rule, shown or host, host == "localhost" and "name" or "address"),
            "suggest: --network-allow " .. (shown or host) .. ":8080" }
    end
    -- args -> exit code, stdout lines (exact)
    local cases = {
        { { "--allow", "*:8080", "--kind", "http", "localhost", "8080" }, 1, loopback("*:8080", "localhost") },
        { { "--allow", "*:8080", "--kind", "http", "127.0.0.1", "8080" }, 1, loopback("*:8080", "127.0.0.1") },
        { { "--allow", "*:8080", "--kind", "http", "2130706433", "8080" }, 1,
          loopback("*:8080", "2130706433", "127.0.0.1") },
        { { "--allow", "*:8080", "--kind", "http", "[::ffff:127.0.0.1]", "8080" }, 1,
          loopback("*:8080", "[::ffff:127.0.0.1]", "127.0.0.1") },
        { { "--allow", "*:8080", "--kind", "connect", "[::1]", "8080" }, 1, loopback("*:8080", "[::1]") },
        { { "--allow", "*:8080", "--kind", "http", "0.0.0.0", "8080" }, 1, { "deny", UNSPEC } },
        { { "--allow", "*:8080", "--kind", "http", "0", "8080" }, 1, { "deny", UNSPEC } },
        { { "--allow", "*:8080", "--kind", "http", "[::ffff:0.0.0.0]", "8080" }, 1, { "deny", UNSPEC } },
        { { "--allow", "0.0.0.0:8080", "--kind", "socks", "0.0.0.0", "8080" }, 1, { "deny", UNSPEC } },
        { { "--allow", "*:8080", "--kind", "connect", "[::]", "8080" }, 1,
          { "deny", "reason: [::] is the unspecified address, which reaches the host's own services; "
              .. "it is never allowed" } },
        { { "--allow", "*:8080", "--deny", "127.0.0.1", "--kind", "http", "127.0.0.2", "8080" }, 1,
          loopback("*:8080", "127.0.0.2") },
        { { "--allow", "127.0.0.1:8080", "--kind", "http", "[::ffff:127.0.0.1]", "8080" }, 0,
          { "allow", "rule: 127.0.0.1:8080", "reason: allowed by rule '127.0.0.1:8080'" } },
        { { "--allow", "*:8080", "--deny", "127.0.0.0/8", "--kind", "http", "0x7f.1", "8080" }, 1,
          { "deny", "rule: 127.0.0.0/8", "reason: denied by rule '127.0.0.0/8'" } },
        { { "--allow", "127.0.0.1:8080", "--deny", "127.0.0.0/8", "--kind", "http", "127.0.0.1", "8080" }, 1,
          { "deny", "rule: 127.0.0.0/8", "reason: denied by rule '127.0.0.0/8'" } },
        { { "--allow", "tcp://10.0.0.0/8:5432", "--kind", "socks", "10.20.30.40", "5432" }, 0,
          { "allow", "rule: tcp://10.0.0.0/8:5432", "reason: allowed by rule 'tcp://10.0.0.0/8:5432'" } },
        { { "--allow", "[fe80::/10]:443", "[fe80::1]", "443" }, 0,
          { "allow", "rule: [fe80::/10]:443", "reason: allowed by rule '[fe80::/10]:443'" } },
        -- the coding profile's metadata list: IPv6 and the other clouds' endpoints too
        { { "--allow", "*:80", "--kind", "http", "[fd00:ec2::254]", "80" }, 1,
          { "deny", "rule: [fd00:ec2::254]", "reason: denied by rule '[fd00:ec2::254]'" } },
        { { "--allow", "*:80", "--kind", "http", "100.100.100.200", "80" }, 1,
          { "deny", "rule: 100.100.100.200", "reason: denied by rule '100.100.100.200'" } },
        { { "--allow", "169.254.170.2:80", "--kind", "http", "169.254.170.2", "80" }, 1,
          { "deny", "rule: 169.254.170.2", "reason: denied by rule '169.254.170.2'" } },
    }
    for i, c in ipairs(cases) do
        it(("case %d: %s -> %d"):format(i, table.concat(c[1], " "), c[2]), function()
            local r = net(c[1])
            assert.are.equal(c[2], r.code, h.describe(r))
            assert.are.same(c[3], lines(r.stdout), h.describe(r))
            assert.are.equal("", r.stderr, h.describe(r))
        end)
    end

    local bad = {
        { { "--deny", "10.0.0.1/8", "a.test", "443" },
          "invalid network rule '10.0.0.1/8': 10.0.0.1 has bits set beyond the /8 prefix (the range is 10.0.0.0/8)" },
        { { "--deny", "fe80::/10", "a.test", "443" },
          "invalid network rule 'fe80::/10': an IPv6 range must be written in brackets" },
        { { "--allow", "10/8", "a.test", "443" }, "'10' is not a dotted-quad IPv4 address" },
        { { "--allow", "https://10.0.0.0/8", "a.test", "443" }, "a CIDR range is written without http://" },
    }
    for i, c in ipairs(bad) do
        it(("bad range %d: %s -> 125"):format(i, table.concat(c[1], " ")), function()
            local r = net(c[1])
            assert.are.equal(125, r.code, h.describe(r))
            assert.truthy(r.stderr:find("^cordon: policy net: invalid network rule '"), h.describe(r))
            assert.truthy(r.stderr:find(c[2], 1, true), h.describe(r))
        end)
    end

    it("a profile with network.wildcard_special lets '*:PORT' reach loopback, never 0.0.0.0", function()
        local cfg = h.profile_dir("wide", 'return { extends = "coding", network = { wildcard_special = true } }')
        local function pnet(host)
            return h.cordon({ "policy", "net", "--profile", "wide", "--allow", "*:8080", "--kind", "http", host,
                "8080" }, { env = { XDG_CONFIG_HOME = cfg } })
        end
        local r = pnet("127.0.0.1")
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.same({ "allow", "rule: *:8080", "reason: allowed by rule '*:8080'" }, lines(r.stdout))
        r = pnet("0")
        assert.are.equal(1, r.code, h.describe(r))
        assert.are.same({ "deny", UNSPEC }, lines(r.stdout))
        r = pnet("169.254.169.254")
        assert.are.same({ "deny", "rule: 169.254.169.254", "reason: denied by rule '169.254.169.254'" },
            lines(r.stdout), h.describe(r))
        local bad_cfg = h.profile_dir("badwide", 'return { extends = "coding", network = { wildcard_special = 1 } }')
        r = h.cordon({ "policy", "net", "--profile", "badwide", "a.test", "443" },
            { env = { XDG_CONFIG_HOME = bad_cfg } })
        assert.are_not.equal(0, r.code, h.describe(r))
        assert.truthy(r.stderr:find("key 'network.wildcard_special': expected a boolean, got integer", 1, true),
            h.describe(r))
    end)
end)
