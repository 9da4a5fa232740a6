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
