-- Specs for lua/cordon/allowlist.lua: the network rule language of docs/network-rules.md,
-- as tables of rule sets x requests -> verdict and deciding rule.
local allowlist = require("cordon.allowlist")

-- allow, deny, { kind, host, port, verdict, rule (nil: no rule), reason pattern (optional) }...
local function decide(allow, deny, kind, host, port)
    local m = assert(allowlist.compile(allow, deny))
    return m:decide(kind, host, port)
end

local groups = {
    { "names: case-insensitive, trailing dot, exact excludes subdomains",
      { "example.com" }, {}, {
        { "connect", "example.com", 443, "allow", "example.com" },
        { "connect", "EXAMPLE.com", 443, "allow", "example.com" },
        { "http", "Example.COM.", 80, "allow", "example.com" },
        { "connect", "example.com.", 8443, "allow", "example.com" },   -- no port = any port
        { "connect", "api.example.com", 443, "deny", nil, "not in the allowlist" },
        { "connect", "example.com.evil.com", 443, "deny", nil, "not in the allowlist" },
        { "connect", "evilexample.com", 443, "deny" },
        { "connect", "example.co", 443, "deny" },
        { "socks", "example.com", 443, "deny", nil, "allows only HTTP and CONNECT" },
      } },
    { "rules are case-insensitive and take a trailing dot",
      { "EXAMPLE.Org.:443" }, {}, {
        { "connect", "example.org", 443, "allow", "EXAMPLE.Org.:443" },
        { "connect", "example.org", 444, "deny" },
      } },
    { "*.NAME: subdomains at any depth, not NAME",
      { "*.example.com" }, {}, {
        { "connect", "api.example.com", 443, "allow", "*.example.com" },
        { "connect", "a.b.c.example.com", 1, "allow", "*.example.com" },
        { "connect", "A.Example.Com.", 80, "allow", "*.example.com" },
        { "connect", "example.com", 443, "deny" },
        { "connect", "xexample.com", 443, "deny" },
        { "connect", "example.com.evil.com", 443, "deny" },
        { "connect", "api.example.com.evil", 443, "deny" },
      } },
    { "*.NAME:PORT and exact HOST:PORT",
      { "*.example.com:443", "example.com:8080" }, {}, {
        { "connect", "api.example.com", 443, "allow", "*.example.com:443" },
        { "connect", "api.example.com", 80, "deny" },
        { "connect", "example.com", 8080, "allow", "example.com:8080" },
        { "connect", "example.com", 443, "deny" },
      } },
    { "*:PORT allows any host on that port",
      { "*:443" }, {}, {
        { "connect", "anything.test", 443, "allow", "*:443" },
        { "http", "10.0.0.1", 443, "allow", "*:443" },
        { "connect", "anything.test", 80, "deny" },
        { "socks", "anything.test", 443, "deny" },
      } },
    { "HTTP entries: http and connect, not socks; tcp entries: socks only",
      { "web.test:8080", "tcp://db.test:5432", "tcp://*:22" }, {}, {
        { "http", "web.test", 8080, "allow", "web.test:8080" },
        { "connect", "web.test", 8080, "allow", "web.test:8080" },
        { "socks", "web.test", 8080, "deny", nil, "SOCKS needs a tcp:// entry" },
        { "socks", "db.test", 5432, "allow", "tcp://db.test:5432" },
        { "connect", "db.test", 5432, "deny", nil, "allows only SOCKS" },
        { "http", "db.test", 5432, "deny" },
        { "socks", "git.example.com", 22, "allow", "tcp://*:22" },
        { "connect", "git.example.com", 22, "deny" },
        { "socks", "db.test", 5433, "deny" },
      } },
    { "URL entries: http:// is port 80, https:// port 443 unless given",
      { "http://plain.test", "https://secure.test/", "https://alt.test:8443", "HTTPS://Up.Test" }, {}, {
        { "http", "plain.test", 80, "allow", "http://plain.test" },
        { "http", "plain.test", 443, "deny" },
        { "connect", "secure.test", 443, "allow", "https://secure.test/" },
        { "connect", "secure.test", 80, "deny" },
        { "connect", "alt.test", 8443, "allow", "https://alt.test:8443" },
        { "connect", "alt.test", 443, "deny" },
        { "connect", "up.test", 443, "allow", "HTTPS://Up.Test" },
        { "socks", "secure.test", 443, "deny" },
      } },
    { "deny wins over allow; a port-less deny covers every port and kind",
      { "*.example.com", "*:443", "tcp://*:22" },
      { "secret.example.com", "169.254.169.254", "*.internal.example.com:443" }, {
        { "connect", "secret.example.com", 443, "deny", "secret.example.com", "denied by rule" },
        { "http", "secret.example.com", 80, "deny", "secret.example.com" },
        { "socks", "secret.example.com", 22, "deny", "secret.example.com" },
        { "connect", "other.example.com", 443, "allow", "*.example.com" },
        { "http", "169.254.169.254", 443, "deny", "169.254.169.254" },
        { "http", "169.254.43518", 443, "deny", "169.254.169.254" },
        { "http", "0xa9fea9fe", 443, "deny", "169.254.169.254" },
        { "connect", "[::ffff:169.254.169.254]", 443, "deny", "169.254.169.254" },
        { "connect", "[::ffff:a9fe:a9fe]", 443, "deny", "169.254.169.254" },
        { "connect", "a.internal.example.com", 443, "deny", "*.internal.example.com:443" },
        { "connect", "a.internal.example.com", 8443, "allow", "*.example.com" },
        { "socks", "x.test", 22, "allow", "tcp://*:22" },
      } },
    { "a deny with a port and a kind denies that port for every kind",
      { "*:22", "tcp://*:22" }, { "tcp://bastion.test:22" }, {
        { "connect", "bastion.test", 22, "deny", "tcp://bastion.test:22" },
        { "socks", "bastion.test", 22, "deny", "tcp://bastion.test:22" },
        { "socks", "other.test", 22, "allow", "tcp://*:22" },
      } },
    { "IPv4 literals are canonicalized on both sides",
      { "127.0.0.1:8080", "0x0a.1:80" }, {}, {
        { "http", "127.0.0.1", 8080, "allow", "127.0.0.1:8080" },
        { "http", "127.1", 8080, "allow", "127.0.0.1:8080" },
        { "http", "2130706433", 8080, "allow", "127.0.0.1:8080" },
        { "http", "0x7f.0.0.1", 8080, "allow", "127.0.0.1:8080" },
        { "http", "0177.0.0.1", 8080, "allow", "127.0.0.1:8080" },
        { "http", "127.0.1", 8080, "allow", "127.0.0.1:8080" },
        { "http", "127.0.0.1.", 8080, "allow", "127.0.0.1:8080" },
        { "http", "[::ffff:127.0.0.1]", 8080, "allow", "127.0.0.1:8080" },
        { "http", "::ffff:7f00:1", 8080, "allow", "127.0.0.1:8080" },
        { "http", "127.0.0.2", 8080, "deny" },
        { "http", "10.0.0.1", 80, "allow", "0x0a.1:80" },
        { "http", "1.2.3.4.5", 80, "deny", nil, "not in the allowlist" }, -- a name, not an address
      } },
    { "IPv6 literals: bracketed in rules, canonical RFC 5952",
      { "[::1]:443", "[2001:DB8:0:0:0:0:0:1]", "[::ffff:10.0.0.9]:80" }, {}, {
        { "connect", "[::1]", 443, "allow", "[::1]:443" },
        { "connect", "::1", 443, "allow", "[::1]:443" },
        { "connect", "[0:0:0:0:0:0:0:1]", 443, "allow", "[::1]:443" },
        { "connect", "[::1]", 80, "deny" },
        { "connect", "[2001:db8::1]", 9, "allow", "[2001:DB8:0:0:0:0:0:1]" },
        { "connect", "2001:0db8::0001", 9, "allow", "[2001:DB8:0:0:0:0:0:1]" },
        { "http", "10.0.0.9", 80, "allow", "[::ffff:10.0.0.9]:80" },
        { "connect", "[::2]", 443, "deny" },
      } },
    { "refused hosts are denied before matching, even with *:PORT",
      { "*:443", "*.example.com", "example.com" }, {}, {
        { "connect", "example.com\0.evil.com", 443, "deny", nil, "NUL" },
        { "connect", "example.com\r\nX: y", 443, "deny", nil, "CR" },
        { "connect", "example.com\n", 443, "deny", nil, "LF" },
        { "connect", "example%2ecom", 443, "deny", nil, "'%%'" },
        { "connect", "a%2e.example.com", 443, "deny", nil, "'%%'" },
        { "connect", "example .com", 443, "deny", nil, "space" },
        { "connect", "example.com/x", 443, "deny", nil, "'/'" },
        { "connect", "example.com:443@evil", 443, "deny", nil, "'@'" },
        { "connect", "evil.com\\@example.com", 443, "deny", nil, "'\\'" },
        { "connect", "evil.com?example.com", 443, "deny", nil, "'%?'" },
        { "connect", "evil.com#.example.com", 443, "deny", nil, "'#'" },
        { "connect", "a..example.com", 443, "deny", nil, "empty label" },
        { "connect", ".example.com", 443, "deny", nil, "empty label" },
        { "connect", "example.com..", 443, "deny", nil, "empty label" },
        { "connect", "", 443, "deny", nil, "empty host" },
        { "connect", ".", 443, "deny", nil, "empty host" },
        { "connect", ("a"):rep(64) .. ".example.com", 443, "deny", nil, "label longer than 63" },
        { "connect", ("a"):rep(63) .. ".example.com", 443, "allow", "*.example.com" },
        { "connect", (("a"):rep(60) .. "."):rep(4) .. "example.com", 443, "deny", nil, "longer than 253" },
        { "connect", "exämple.com", 443, "deny", nil, "non%-ASCII" },
        { "connect", "example.com\t", 443, "deny", nil, "control character" },
        { "connect", "*.example.com", 443, "deny", nil, "'%*'" },
        { "connect", "example.com:443", 443, "deny", nil, "':'" },
        { "connect", "[::1", 443, "deny" },
        { "connect", "[fe80::1%eth0]", 443, "deny", nil, "'%%'" },
      } },
    { "bad request ports and kinds deny",
      { "*:443" }, {}, {
        { "connect", "a.test", 0, "deny", nil, "outside 1..65535" },
        { "connect", "a.test", 65536, "deny", nil, "outside 1..65535" },
        { "udp", "a.test", 443, "deny", nil, "unknown request kind" },
      } },
}

for _, g in ipairs(groups) do
    describe("allowlist: " .. g[1], function()
        for _, c in ipairs(g[4]) do
            local kind, host, port, verdict, rule, reason = table.unpack(c)
            it(("%s %q:%s -> %s"):format(kind, host, tostring(port), verdict), function()
                local r = decide(g[2], g[3], kind, host, port)
                assert.are.equal(verdict, r.verdict, r.reason)
                assert.are.equal(rule, r.rule)
                if reason then
                    assert.truthy(r.reason:find(reason), ("reason %q lacks %q"):format(r.reason, reason))
                end
            end)
        end
    end)
end

describe("allowlist: an unlisted destination suggests the exact flag", function()
    local m = assert(allowlist.compile({}, {}))
    local cases = {
        { "connect", "API.Example.com.", 443, "--network-allow api.example.com:443" },
        { "http", "example.com", 80, "--network-allow example.com:80" },
        { "socks", "git.example.com", 22, "--network-allow tcp://git.example.com:22" },
        { "connect", "[0::1]", 8443, "--network-allow [::1]:8443" },
        { "socks", "127.1", 5432, "--network-allow tcp://127.0.0.1:5432" },
    }
    for _, c in ipairs(cases) do
        it(c[4], function()
            local r = m:decide(c[1], c[2], c[3])
            assert.are.equal("deny", r.verdict)
            assert.are.equal("not in the allowlist", r.reason)
            assert.are.equal(c[4], r.suggest)
            -- the suggestion, used as a rule, allows exactly that destination
            local rule = c[4]:match("^%-%-network%-allow (.*)$")
            assert.are.equal("allow", decide({ rule }, {}, c[1], c[2], c[3]).verdict)
        end)
    end
    it("a denied destination gets no suggestion", function()
        local r = decide({}, { "x.test" }, "connect", "x.test", 443)
        assert.is_nil(r.suggest)
    end)
end)

describe("allowlist: invalid entries are errors naming the entry", function()
    local cases = {
        { "*", "invalid network rule '*': a bare '*' would allow every host; write '*:443' or a domain" },
        { "", "invalid network rule '': empty rule" },
        { "*.*.example.com", "invalid network rule '*.*.example.com': a wildcard is only allowed as a leading '*.'" },
        { "api.*.example.com", "invalid network rule 'api.*.example.com': a wildcard" },
        { "*example.com", "invalid network rule '*example.com': a wildcard" },
        { "example.*", "invalid network rule 'example.*': a wildcard" },
        { "*.", "invalid network rule '*.': empty host" },
        { "example.com:0", "invalid network rule 'example.com:0': port 0 is outside 1..65535" },
        { "example.com:65536", "port 65536 is outside 1..65535" },
        { "example.com:99999999999", "outside 1..65535" },
        { "example.com:", "invalid network rule 'example.com:': port '' is not a number" },
        { "example.com:https", "port 'https' is not a number" },
        { "example.com:-1", "port '-1' is not a number" },
        { ":443", "invalid network rule ':443': empty host" },
        { "ftp://example.com", "invalid network rule 'ftp://example.com': unsupported scheme 'ftp://'" },
        { "ssh://example.com:22", "unsupported scheme 'ssh://'" },
        { "tcp://example.com", "invalid network rule 'tcp://example.com': a tcp:// rule needs a port" },
        { "tcp://*", "a tcp:// rule needs a port" },
        { "tcp://*:0", "outside 1..65535" },
        { "https://example.com/path", "a rule names a host, not a path" },
        { "https://user@example.com", "'@'" },
        { "::1", "must be written in brackets" },
        { "::1:443", "must be written in brackets" },
        { "[::1", "unclosed '['" },
        { "[::1]x", "unexpected text after ']'" },
        { "[::g]:443", "not a valid IPv6 literal" },
        { "[fe80::1%eth0]:443", "'%%'" },
        { "*.127.0.0.1", "applies to names, not to an IP address" },
        { "a..b", "empty label" },
        { "exa mple.com", "space" },
        { "exa%2ecom", "'%%'" },
        { "ex\0ample.com", "NUL" },
        { "bad_char!.com", "'!'" },
        { ("a"):rep(64) .. ".com", "label longer than 63" },
    }
    for _, c in ipairs(cases) do
        it(("%q"):format(c[1]), function()
            local r, err = allowlist.parse(c[1])
            assert.is_nil(r)
            assert.truthy(err:find(c[2], 1, c[2]:find("%%") == nil),
                ("message %q lacks %q"):format(err, c[2]))
            local m, err2 = allowlist.compile({ "ok.test" }, { c[1] })
            assert.is_nil(m)
            assert.are.equal(err, err2)
        end)
    end
    it("a non-string entry", function()
        local m, err = allowlist.compile({ 42 })
        assert.is_nil(m)
        assert.truthy(err:find("expected a string", 1, true))
    end)
    it("for_profile raises the message", function()
        assert.has_error(function() allowlist.for_profile({ network = { allow = { "*" } } }) end,
            "invalid network rule '*': a bare '*' would allow every host; write '*:443' or a domain")
    end)
    it("for_profile compiles once per profile table", function()
        local p = { network = { allow = { "a.test" } } }
        assert.are.equal(allowlist.for_profile(p), allowlist.for_profile(p))
        assert.are.equal("allow", allowlist.for_profile(p):decide("connect", "a.test", 1).verdict)
        assert.are.equal("deny", allowlist.for_profile({}):decide("connect", "a.test", 1).verdict)
    end)
end)

describe("allowlist: 10,000 rules", function()
    it("compiles and decides by lookup", function()
        local allow, deny = {}, {}
        for i = 1, 10000 do
            local k = i % 4
            if k == 0 then allow[#allow + 1] = ("host%d.example.com"):format(i)
            elseif k == 1 then allow[#allow + 1] = ("*.zone%d.test:443"):format(i)
            elseif k == 2 then allow[#allow + 1] = ("tcp://db%d.internal:%d"):format(i, 1000 + i)
            else deny[#deny + 1] = ("bad%d.example.com"):format(i) end
        end
        local m = assert(allowlist.compile(allow, deny))
        assert.are.equal(10000, m.count)
        assert.are.equal("allow", m:decide("connect", "host9996.example.com", 1).verdict)
        assert.are.equal("host9996.example.com", m:decide("connect", "host9996.example.com", 1).rule)
        assert.are.equal("*.zone9997.test:443", m:decide("connect", "a.b.zone9997.test", 443).rule)
        assert.are.equal("deny", m:decide("connect", "a.b.zone9997.test", 80).verdict)
        assert.are.equal("deny", m:decide("connect", "zone9997.test", 443).verdict)
        assert.are.equal("tcp://db9998.internal:10998", m:decide("socks", "db9998.internal", 10998).rule)
        assert.are.equal("deny", m:decide("socks", "db9998.internal", 10997).verdict)
        assert.are.equal("bad9999.example.com", m:decide("connect", "bad9999.example.com", 1).rule)
        assert.are.equal("deny", m:decide("connect", "host9999.example.com", 1).verdict)
        -- every allow rule is reachable through the lookup tables
        for i = 4, 10000, 4 do
            assert(m:decide("http", ("host%d.example.com"):format(i), 80).verdict == "allow")
        end
    end)
end)

-- The holes an attack review found: each row was allowed before and is refused now (or, with
-- an exact or range rule naming the address, still allowed). { allow, deny, opts, cases }.
describe("allowlist: wildcards do not reach special addresses", function()
    local groups2 = {
        { "*:PORT reaches no loopback, unspecified, link-local or multicast literal",
          { "*:8080", "tcp://*:8080" }, {}, nil, {
            { "http", "127.0.0.1", 8080, "deny", nil, "rule '%*:8080' does not reach 127.0.0.1, a loopback address" },
            { "connect", "127.0.0.2", 8080, "deny", nil, "loopback address" },
            { "http", "127.1", 8080, "deny", nil, "does not reach 127.0.0.1" },
            { "http", "2130706433", 8080, "deny", nil, "does not reach 127.0.0.1" },
            { "http", "0x7f.1", 8080, "deny", nil, "does not reach 127.0.0.1" },
            { "http", "[::ffff:127.0.0.1]", 8080, "deny", nil, "does not reach 127.0.0.1" },
            { "http", "::ffff:7f00:1", 8080, "deny", nil, "does not reach 127.0.0.1" },
            { "connect", "[::1]", 8080, "deny", nil, "does not reach %[::1%], a loopback address" },
            { "http", "localhost", 8080, "deny", nil, "does not reach localhost, a loopback name" },
            { "http", "LocalHost.", 8080, "deny", nil, "loopback name" },
            { "http", "api.localhost", 8080, "deny", nil, "loopback name" },
            { "http", "169.254.1.1", 8080, "deny", nil, "link%-local address" },
            { "connect", "[fe80::1]", 8080, "deny", nil, "link%-local address" },
            { "http", "224.0.0.1", 8080, "deny", nil, "multicast address" },
            { "http", "255.255.255.255", 8080, "deny", nil, "multicast address" },
            { "connect", "[ff02::1]", 8080, "deny", nil, "multicast address" },
            { "http", "0.1.2.3", 8080, "deny", nil, "does not reach 0.1.2.3, an unspecified address" },
            { "socks", "127.0.0.1", 8080, "deny", nil, "rule 'tcp://%*:8080' does not reach" },
            -- ordinary addresses and names are still any host
            { "http", "10.0.0.1", 8080, "allow", "*:8080" },
            { "http", "100.64.0.1", 8080, "allow", "*:8080" },
            { "connect", "[2001:db8::1]", 8080, "allow", "*:8080" },
            { "connect", "[::127.0.0.1]", 8080, "allow", "*:8080" }, -- IPv4-compatible: not mapped
            { "http", "notlocalhost", 8080, "allow", "*:8080" },
            { "http", "localhost.example.com", 8080, "allow", "*:8080" },
            { "socks", "example.com", 8080, "allow", "tcp://*:8080" },
          } },
        { "an unlisted special destination still suggests the exact flag",
          { "*:8080" }, {}, nil, {
            { "http", "127.1", 8080, "deny", nil, "not in the allowlist" },
          } },
        { "the unspecified address is never allowed, however it is written or allowed",
          { "*:8080", "0.0.0.0:8080", "[::]:8080", "0.0.0.0/0", "[::/0]" }, {}, { wildcard_special = true }, {
            { "http", "0.0.0.0", 8080, "deny", nil,
              "^0%.0%.0%.0 is the unspecified address, which reaches the host's own services" },
            { "http", "0", 8080, "deny", nil, "^0%.0%.0%.0 is the unspecified address" },
            { "http", "0x0", 8080, "deny", nil, "unspecified address" },
            { "http", "0.0", 8080, "deny", nil, "unspecified address" },
            { "http", "[::ffff:0.0.0.0]", 8080, "deny", nil, "^0%.0%.0%.0 is the unspecified" },
            { "http", "[::ffff:0:0]", 8080, "deny", nil, "^0%.0%.0%.0 is the unspecified" },
            { "connect", "[::]", 8080, "deny", nil, "^%[::%] is the unspecified address" },
            { "connect", "[0:0:0:0:0:0:0:0]", 8080, "deny", nil, "unspecified address" },
            { "socks", "0.0.0.0", 8080, "deny", nil, "unspecified address" },
          } },
        { "a --network-deny 127.0.0.1 does not leave other spellings of the host open",
          { "*:8080" }, { "127.0.0.1" }, nil, {
            { "http", "127.0.0.1", 8080, "deny", "127.0.0.1" },
            { "http", "[::ffff:127.0.0.1]", 8080, "deny", "127.0.0.1" },
            { "http", "0.0.0.0", 8080, "deny", nil, "unspecified address" },
            { "http", "0", 8080, "deny", nil, "unspecified address" },
            { "http", "[::ffff:0.0.0.0]", 8080, "deny", nil, "unspecified address" },
            { "http", "127.0.0.2", 8080, "deny", nil, "loopback address" },
          } },
        { "an exact rule reaches the special address it names",
          { "127.0.0.1:8080", "[::1]:8080", "localhost:8080", "169.254.10.10", "tcp://127.0.0.1:22" }, {}, nil, {
            { "http", "127.0.0.1", 8080, "allow", "127.0.0.1:8080" },
            { "http", "2130706433", 8080, "allow", "127.0.0.1:8080" },
            { "http", "[::ffff:127.0.0.1]", 8080, "allow", "127.0.0.1:8080" },
            { "connect", "[::1]", 8080, "allow", "[::1]:8080" },
            { "http", "localhost", 8080, "allow", "localhost:8080" },
            { "http", "169.254.10.10", 1, "allow", "169.254.10.10" },
            { "socks", "127.0.0.1", 22, "allow", "tcp://127.0.0.1:22" },
            { "http", "127.0.0.2", 8080, "deny" },
          } },
        { "a range reaches a special address only when it lies inside the special block",
          { "127.0.0.0/8:8080", "169.254.169.0/24", "[fe80::/10]", "0.0.0.0/0:9", "[::/0]:9", "192.0.0.0/2:9" },
          {}, nil, {
            { "http", "127.0.0.1", 8080, "allow", "127.0.0.0/8:8080" },
            { "http", "127.255.0.9", 8080, "allow", "127.0.0.0/8:8080" },
            { "http", "127.0.0.1", 8081, "deny" },
            { "http", "169.254.169.7", 1, "allow", "169.254.169.0/24" },
            { "connect", "[fe80::1:2]", 443, "allow", "[fe80::/10]" },
            { "http", "127.0.0.1", 9, "deny", nil, "rule '0%.0%.0%.0/0:9' does not reach 127.0.0.1" },
            { "http", "224.0.0.1", 9, "deny", nil, "rule '192%.0%.0%.0/2:9' does not reach 224.0.0.1" },
            { "connect", "[::1]", 9, "deny", nil, "rule '%[::/0%]:9' does not reach" },
            { "http", "8.8.8.8", 9, "allow", "0.0.0.0/0:9" },
            { "connect", "[2001:db8::1]", 9, "allow", "[::/0]:9" },
          } },
        { "network.wildcard_special: wildcards reach special addresses (but never the unspecified one)",
          { "*:8080" }, { "169.254.169.254" }, { wildcard_special = true }, {
            { "http", "127.0.0.1", 8080, "allow", "*:8080" },
            { "http", "localhost", 8080, "allow", "*:8080" },
            { "connect", "[::1]", 8080, "allow", "*:8080" },
            { "http", "169.254.169.254", 8080, "deny", "169.254.169.254" },
            { "http", "0.0.0.0", 8080, "deny", nil, "unspecified address" },
          } },
        { "CIDR deny rules cover every spelling and every kind",
          { "*:8080", "tcp://*:8080", "127.0.0.1:8080", "[::1]:8080" },
          { "127.0.0.0/8", "[::1/128]", "10.0.0.0/8:8080", "[fd00::/8]" }, nil, {
            { "http", "127.0.0.1", 8080, "deny", "127.0.0.0/8" },
            { "http", "2130706433", 8080, "deny", "127.0.0.0/8" },
            { "http", "0177.0.0.2", 8080, "deny", "127.0.0.0/8" },
            { "http", "[::ffff:127.0.0.1]", 8080, "deny", "127.0.0.0/8" },
            { "socks", "127.9.9.9", 8080, "deny", "127.0.0.0/8" },
            { "connect", "[::1]", 8080, "deny", "[::1/128]" },
            { "http", "10.1.2.3", 8080, "deny", "10.0.0.0/8:8080" },
            { "socks", "10.1.2.3", 8080, "deny", "10.0.0.0/8:8080" },
            { "http", "10.1.2.3", 8081, "deny", nil, "not in the allowlist" },
            { "connect", "[fd00:ec2::254]", 8080, "deny", "[fd00::/8]" },
            { "http", "11.0.0.1", 8080, "allow", "*:8080" },
          } },
        { "CIDR allow rules: longest prefix first, kinds and ports as HOST:PORT",
          { "10.0.0.0/8", "10.1.0.0/16:443", "tcp://10.0.0.0/8:5432", "[2001:db8::/32]:443",
            "[::ffff:192.168.0.0/112]" }, {}, nil, {
            { "connect", "10.1.2.3", 443, "allow", "10.1.0.0/16:443" },
            { "connect", "10.1.2.3", 80, "allow", "10.0.0.0/8" },
            { "connect", "10.0.0.0", 1, "allow", "10.0.0.0/8" },
            { "connect", "10.255.255.255", 1, "allow", "10.0.0.0/8" },
            { "connect", "11.0.0.0", 1, "deny" },
            { "connect", "9.255.255.255", 1, "deny" },
            { "socks", "10.9.9.9", 5432, "allow", "tcp://10.0.0.0/8:5432" },
            { "socks", "10.9.9.9", 80, "deny", nil, "SOCKS needs a tcp:// entry" },
            { "connect", "[2001:db8:ffff::1]", 443, "allow", "[2001:db8::/32]:443" },
            { "connect", "[2001:db9::1]", 443, "deny" },
            { "http", "192.168.7.7", 80, "allow", "[::ffff:192.168.0.0/112]" },
            { "http", "[::ffff:192.168.7.7]", 80, "allow", "[::ffff:192.168.0.0/112]" },
            { "http", "example.com", 80, "deny" },
          } },
    }
    for _, g in ipairs(groups2) do
        describe(g[1], function()
            for _, c in ipairs(g[5]) do
                local kind, host, port, verdict, rule, reason = table.unpack(c)
                it(("%s %q:%s -> %s"):format(kind, host, tostring(port), verdict), function()
                    local m = assert(allowlist.compile(g[2], g[3], g[4]))
                    local r = m:decide(kind, host, port)
                    assert.are.equal(verdict, r.verdict, r.reason)
                    assert.are.equal(rule, r.rule)
                    if reason then
                        assert.truthy(r.reason:find(reason), ("reason %q lacks %q"):format(r.reason, reason))
                    end
                    if r.reason:find("is the unspecified address", 1, true) then
                        assert.is_nil(r.suggest) -- never asked, never suggested
                    end
                end)
            end
        end)
    end

    it("an unlisted special address suggests the exact flag, and that flag allows it", function()
        local r = decide({ "*:8080" }, {}, "http", "[::ffff:127.0.0.1]", 8080)
        assert.are.equal("--network-allow 127.0.0.1:8080", r.suggest)
        r = decide({ "*:8080", "127.0.0.1:8080" }, {}, "http", "[::ffff:127.0.0.1]", 8080)
        assert.are.equal("allow", r.verdict)
    end)

    it("for_profile reads network.wildcard_special", function()
        local off = allowlist.for_profile({ network = { allow = { "*:1" } } })
        local on = allowlist.for_profile({ network = { allow = { "*:1" }, wildcard_special = true } })
        assert.are.equal("deny", off:decide("http", "127.0.0.1", 1).verdict)
        assert.are.equal("allow", on:decide("http", "127.0.0.1", 1).verdict)
    end)
end)

describe("allowlist: invalid CIDR entries are errors naming the entry", function()
    local cases = {
        { "10.0.0.1/8",
          "invalid network rule '10.0.0.1/8': 10.0.0.1 has bits set beyond the /8 prefix (the range is 10.0.0.0/8)" },
        { "[fe80::1/10]", "invalid network rule '[fe80::1/10]': fe80::1 has bits set beyond the /10 prefix "
            .. "(the range is [fe80::/10])" },
        { "10.0.0.0/33", "invalid network rule '10.0.0.0/33': prefix length /33 is outside 0..32" },
        { "[::/129]", "prefix length /129 is outside 0..128" },
        { "10.0.0.0/0008", "prefix length /0008 is outside 0..32" },
        { "10.0.0.0/", "invalid network rule '10.0.0.0/': prefix length '' is not a number" },
        { "10.0.0.0/x", "prefix length 'x' is not a number" },
        { "10.0.0.0/-1", "prefix length '-1' is not a number" },
        { "10/8", "invalid network rule '10/8': '10' is not a dotted-quad IPv4 address (a range names its network "
            .. "in full, e.g. '10.0.0.0/8')" },
        { "10.0/16", "'10.0' is not a dotted-quad IPv4 address" },
        { "010.0.0.0/8", "'010.0.0.0' is not a dotted-quad IPv4 address" },
        { "256.0.0.0/8", "is not a dotted-quad IPv4 address" },
        { "fe80::/10",
          "invalid network rule 'fe80::/10': an IPv6 range must be written in brackets, e.g. '[fe80::/10]'" },
        { "::1/128:443", "an IPv6 range must be written in brackets" },
        { "[fe80::/10", "invalid network rule '[fe80::/10': unclosed '[' in an IPv6 range" },
        { "[fe80::/10]x", "unexpected text after the range" },
        { "10.0.0.0/8x", "prefix length '8x' is not a number" },
        { "[fg80::/10]", "'fg80::' is not an IPv6 address" },
        { "[fe80::%eth0/10]", "is not an IPv6 address" },
        { "10.0.0.0/8:0", "port 0 is outside 1..65535" },
        { "10.0.0.0/8:http", "port 'http' is not a number" },
        { "tcp://10.0.0.0/8", "invalid network rule 'tcp://10.0.0.0/8': a tcp:// rule needs a port" },
        { "https://10.0.0.0/8",
          "invalid network rule 'https://10.0.0.0/8': a CIDR range is written without http:// or https://" },
        { "http://[fe80::/10]:80", "a CIDR range is written without http:// or https://" },
        { "https://10.0.0.1/path", "a rule names a host, not a path" },
        { "*.10.0.0.0/8", "a rule names a host, not a path" },
        { "example.com/8", "a rule names a host, not a path" },
    }
    for _, c in ipairs(cases) do
        it(("%q"):format(c[1]), function()
            local r, err = allowlist.parse(c[1])
            assert.is_nil(r)
            assert.truthy(err:find(c[2], 1, true), ("message %q lacks %q"):format(err, c[2]))
            local m, err2 = allowlist.compile({ "ok.test" }, { c[1] })
            assert.is_nil(m)
            assert.are.equal(err, err2)
        end)
    end
    it("valid ranges parse to their family, length and network", function()
        for _, c in ipairs({
            { "10.0.0.0/8", "v4", 8, "10.0.0.0", nil, false },
            { "0.0.0.0/0:443", "v4", 0, "0.0.0.0", 443, false },
            { "tcp://192.168.1.0/24:22", "v4", 24, "192.168.1.0", 22, true },
            { "1.2.3.4/32", "v4", 32, "1.2.3.4", nil, false },
            { "[FE80::/10]:8080", "v6", 10, "fe80::", 8080, false },
            { "[::/0]", "v6", 0, "::", nil, false },
            { "[::ffff:127.0.0.0/104]", "v4", 8, "127.0.0.0", nil, false },
            { "[::ffff:0:0/96]", "v4", 0, "0.0.0.0", nil, false },
        }) do
            local r = assert(allowlist.parse(c[1]))
            assert.are.same({ c[2], c[3], c[4], c[5], c[6] },
                { r.cidr.fam, r.cidr.len, r.cidr.net, r.port, r.tcp }, c[1])
        end
    end)
end)

describe("cordon.allowlist kind dns (the sandbox's resolver: may a rule allow this name?)", function()
    local function dns(allow, deny, host, opts)
        local m = assert(allowlist.compile(allow, deny, opts))
        return m:decide("dns", host, 0)
    end
    it("answers a name some allow rule could match on some port and kind", function()
        local allow = { "*.example.com:443", "pypi.org", "tcp://db.internal:5432" }
        assert.are.equal("allow", dns(allow, {}, "API.example.com.").verdict)
        assert.are.equal("*.example.com:443", dns(allow, {}, "api.example.com").rule)
        assert.are.equal("allow", dns(allow, {}, "pypi.org").verdict)
        assert.are.equal("allow", dns(allow, {}, "db.internal").verdict)
        local d = dns(allow, {}, "example.com") -- '*.' is subdomains only
        assert.are.equal("deny", d.verdict)
        assert.are.equal("no rule could allow example.com on any port", d.reason)
        assert.are.equal("--network-allow example.com", d.suggest)
    end)
    it("a port-only rule answers every name but the loopback names", function()
        assert.are.equal("allow", dns({ "*:443" }, {}, "anything.org").verdict)
        assert.are.equal("deny", dns({ "*:443" }, {}, "localhost").verdict)
        assert.are.equal("allow", dns({ "*:443" }, {}, "localhost", { wildcard_special = true }).verdict)
    end)
    it("a deny rule for every port refuses; one for a port leaves the name answerable", function()
        assert.are.equal("deny", dns({ "*.example.com" }, { "evil.example.com" }, "evil.example.com").verdict)
        assert.are.equal("allow", dns({ "*.example.com" }, { "evil.example.com:80" }, "evil.example.com").verdict)
    end)
    it("an address in an answer needs a rule naming it or a range holding it", function()
        assert.are.equal("allow", dns({ "127.0.0.2:8080" }, {}, "127.0.0.2").verdict)
        assert.are.equal("deny", dns({ "127.0.0.2:8080" }, {}, "127.0.0.3").verdict)
        assert.are.equal("allow", dns({ "10.0.0.0/8:5432" }, {}, "10.1.2.3").verdict)
        assert.are.equal("deny", dns({ "0.0.0.0/0" }, {}, "127.0.0.1").verdict)
        assert.are.equal("deny", dns({ "*:80" }, {}, "0.0.0.0").verdict)
    end)
    it("takes port 0 only", function()
        local m = assert(allowlist.compile({ "pypi.org" }, {}))
        assert.are.equal("deny", m:decide("dns", "pypi.org", 53).verdict)
    end)
end)
