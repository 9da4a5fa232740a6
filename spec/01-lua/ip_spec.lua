-- Specs for lua/cordon/ip.lua: IP literal canonicalization (glibc inet_aton for IPv4,
-- inet_pton + RFC 5952 for IPv6, IPv4-mapped IPv6 as IPv4).
local ip = require("cordon.ip")

describe("cordon.ip.ipv4 follows glibc inet_aton", function()
    local cases = {
        -- input, canonical (nil: not an inet_aton form)
        { "127.0.0.1", "127.0.0.1" },
        { "127.1", "127.0.0.1" },
        { "127.0.1", "127.0.0.1" },
        { "2130706433", "127.0.0.1" },
        { "0x7f.0.0.1", "127.0.0.1" },
        { "0X7F.0.0.1", "127.0.0.1" },
        { "0177.0.0.1", "127.0.0.1" },
        { "0x7f000001", "127.0.0.1" },
        { "017700000001", "127.0.0.1" },
        { "169.254.43518", "169.254.169.254" },
        { "0xa9fea9fe", "169.254.169.254" },
        { "0", "0.0.0.0" },
        { "255.255.255.255", "255.255.255.255" },
        { "4294967295", "255.255.255.255" },
        { "1.2.3.04", "1.2.3.4" },
        { "1.0x10.3.4", "1.16.3.4" },
        { "1.2.65535", "1.2.255.255" },
        { "1.16777215", "1.255.255.255" },
        { "4294967296", nil },        -- above 2^32 - 1
        { "1.2.65536", nil },         -- last part too big for two bytes
        { "1.16777216", nil },
        { "256.1.1.1", nil },         -- a non-last part above 255
        { "1.2.3.256", nil },
        { "1.2.3.4.5", nil },         -- five parts
        { "1.2.3.08", nil },          -- 8 is not octal
        { "0x", nil },
        { "0x.1.2.3", nil },
        { "1..2", nil },
        { ".1.2.3", nil },
        { "1.2.3.", nil },
        { "", nil },
        { "a.b.c.d", nil },
        { "1e2", nil },
        { "+1.2.3.4", nil },
        { "99999999999999999999999", nil },
        { "0x00000000000000000000001", "0.0.0.1" },
    }
    for _, c in ipairs(cases) do
        it(("%q -> %s"):format(c[1], tostring(c[2])), function()
            assert.are.equal(c[2], ip.ipv4(c[1]))
        end)
    end
end)

describe("cordon.ip.ipv6: inet_pton, RFC 5952 output", function()
    local cases = {
        { "::1", "::1" },
        { "0:0:0:0:0:0:0:1", "::1" },
        { "::", "::" },
        { "2001:DB8::1", "2001:db8::1" },
        { "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1" },
        { "2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1" },  -- first of equal runs
        { "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1" }, -- one zero group stays
        { "2001:0:0:1:0:0:0:1", "2001:0:0:1::1" },         -- the longest run
        { "fe80::1:2", "fe80::1:2" },
        { "::ffff:127.0.0.1", "127.0.0.1" },
        { "::ffff:7f00:1", "127.0.0.1" },
        { "0:0:0:0:0:ffff:a9fe:a9fe", "169.254.169.254" },
        { "::127.0.0.1", "::7f00:1" },
        { "64:ff9b::1.2.3.4", "64:ff9b::102:304" },
        { "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8" },
        { "1::2::3", nil },
        { "1:2:3:4:5:6:7:8:9", nil },
        { "1:2:3:4:5:6:7", nil },
        { "12345::", nil },
        { "::ffff:127.1", nil },       -- the embedded IPv4 part is strict
        { "::ffff:127.0.0.01", nil },
        { "fe80::1%eth0", nil },
        { ":1", nil },
        { "g::1", nil },
    }
    for _, c in ipairs(cases) do
        it(("%q -> %s"):format(c[1], tostring(c[2])), function()
            assert.are.equal(c[2], ip.ipv6(c[1]))
        end)
    end
end)

describe("cordon.ip.canonical", function()
    it("takes bracketed and bare IPv6, and IPv4 forms", function()
        assert.are.same({ "::1", "v6" }, { ip.canonical("[::1]") })
        assert.are.same({ "::1", "v6" }, { ip.canonical("::1") })
        assert.are.same({ "127.0.0.1", "v4" }, { ip.canonical("[::ffff:127.0.0.1]") })
        assert.are.same({ "127.0.0.1", "v4" }, { ip.canonical("127.1") })
        assert.is_nil(ip.canonical("[127.0.0.1]"))
        assert.is_nil(ip.canonical("example.com"))
        assert.is_nil(ip.canonical("[::1"))
    end)
end)

describe("cordon.ip: IPv4-mapped forms are their IPv4 address", function()
    local cases = {
        { "[::ffff:127.0.0.1]", "127.0.0.1" },
        { "[::FFFF:7F00:1]", "127.0.0.1" },
        { "[0:0:0:0:0:ffff:7f00:1]", "127.0.0.1" },
        { "[::ffff:0.0.0.0]", "0.0.0.0" },
        { "[::ffff:0:0]", "0.0.0.0" },
        { "::ffff:a9fe:a9fe", "169.254.169.254" },
        { "[::127.0.0.1]", "::7f00:1" },          -- IPv4-compatible, not mapped: stays IPv6
        { "[::ffff:1:0:0]", "::ffff:1:0:0" },     -- not the ::ffff:0:0/96 prefix
    }
    for _, c in ipairs(cases) do
        it(("%q -> %s"):format(c[1], c[2]), function()
            assert.are.equal(c[2], (ip.canonical(c[1])))
        end)
    end
end)

describe("cordon.ip.cidr", function()
    local cases = {
        -- input, fam, len, network; or input, nil, message pattern
        { "10.0.0.0/8", "v4", 8, "10.0.0.0" },
        { "127.0.0.0/8", "v4", 8, "127.0.0.0" },
        { "169.254.0.0/16", "v4", 16, "169.254.0.0" },
        { "0.0.0.0/0", "v4", 0, "0.0.0.0" },
        { "1.2.3.4/32", "v4", 32, "1.2.3.4" },
        { "fe80::/10", "v6", 10, "fe80::" },
        { "FE80:0::/10", "v6", 10, "fe80::" },
        { "2001:db8::/32", "v6", 32, "2001:db8::" },
        { "::/0", "v6", 0, "::" },
        { "::1/128", "v6", 128, "::1" },
        { "::ffff:127.0.0.0/104", "v4", 8, "127.0.0.0" },
        { "::ffff:0:0/96", "v4", 0, "0.0.0.0" },
        { "::ffff:169.254.169.254/128", "v4", 32, "169.254.169.254" },
        { "10.0.0.1/8", nil, "10%.0%.0%.1 has bits set beyond the /8 prefix %(the range is 10%.0%.0%.0/8%)" },
        { "fe80::1/10", nil, "fe80::1 has bits set beyond the /10 prefix %(the range is %[fe80::/10%]%)" },
        { "::ffff:127.0.0.1/104", nil, "127%.0%.0%.1 has bits set beyond the /8 prefix" },
        { "10.0.0.0/33", nil, "prefix length /33 is outside 0%.%.32" },
        { "::/129", nil, "prefix length /129 is outside 0%.%.128" },
        { "10.0.0.0/", nil, "prefix length '' is not a number" },
        { "10.0.0.0/+8", nil, "prefix length '%+8' is not a number" },
        { "10/8", nil, "'10' is not a dotted%-quad IPv4 address" },
        { "127.1/8", nil, "'127%.1' is not a dotted%-quad" },
        { "10.0.0.00/8", nil, "not a dotted%-quad" },
        { "1::2::3/64", nil, "'1::2::3' is not an IPv6 address" },
        { "10.0.0.0", nil, "not a CIDR range" },
    }
    for _, c in ipairs(cases) do
        it(("%q"):format(c[1]), function()
            local r, err = ip.cidr(c[1])
            if c[2] then
                assert.are.same({ fam = c[2], len = c[3], net = c[4] }, r)
            else
                assert.is_nil(r)
                assert.truthy(err:find(c[3]), ("message %q lacks %q"):format(err, c[3]))
            end
        end)
    end
    it("prefix_key masks an address to the network a range of that length is stored under", function()
        assert.are.equal("10.0.0.0", ip.prefix_key("10.1.2.3", "v4", 8))
        assert.are.equal("10.1.2.0", ip.prefix_key("10.1.2.3", "v4", 24))
        assert.are.equal("0.0.0.0", ip.prefix_key("10.1.2.3", "v4", 0))
        assert.are.equal("10.1.2.3", ip.prefix_key("10.1.2.3", "v4", 32))
        assert.are.equal("fe80::", ip.prefix_key("febf::1", "v6", 10))
        assert.are.equal("2001:db8::", ip.prefix_key("2001:db8:ffff::1", "v6", 32))
        assert.are.equal("2001:db8:fe00::", ip.prefix_key("2001:db8:ffff::1", "v6", 39))
        assert.are.equal("::", ip.prefix_key("2001:db8::1", "v6", 0))
    end)
end)

describe("cordon.ip.special: the blocks no wildcard reaches", function()
    local cases = {
        { "0.0.0.0", "v4", "unspecified", 8 }, { "0.255.1.1", "v4", "unspecified", 8 },
        { "127.0.0.1", "v4", "loopback", 8 }, { "127.255.255.255", "v4", "loopback", 8 },
        { "169.254.169.254", "v4", "link-local", 16 }, { "224.0.0.1", "v4", "multicast", 3 },
        { "239.255.255.250", "v4", "multicast", 3 }, { "255.255.255.255", "v4", "multicast", 3 },
        { "::", "v6", "unspecified", 128 }, { "::1", "v6", "loopback", 128 },
        { "fe80::1", "v6", "link-local", 10 }, { "febf::1", "v6", "link-local", 10 },
        { "ff02::1", "v6", "multicast", 8 },
        { "1.0.0.0", "v4" }, { "126.255.255.255", "v4" }, { "128.0.0.0", "v4" }, { "169.253.0.1", "v4" },
        { "169.255.0.1", "v4" }, { "223.255.255.255", "v4" }, { "10.0.0.1", "v4" }, { "100.100.100.200", "v4" },
        { "::2", "v6" }, { "fec0::1", "v6" }, { "fd00:ec2::254", "v6" }, { "2001:db8::1", "v6" }, { "::7f00:1", "v6" },
    }
    for _, c in ipairs(cases) do
        it(("%s -> %s"):format(c[1], tostring(c[3])), function()
            assert.are.same({ c[3], c[4] }, { ip.special(c[1], c[2]) })
        end)
    end
    it("unspecified is the address itself, nothing else in its block", function()
        assert.is_true(ip.unspecified("0.0.0.0"))
        assert.is_true(ip.unspecified("::"))
        assert.is_false(ip.unspecified("0.0.0.1"))
        assert.is_false(ip.unspecified("::1"))
    end)
end)
