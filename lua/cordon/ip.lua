-- cordon.ip — IP literal canonicalization for the network allowlist.
-- Owns: which strings are IPv4 / IPv6 literals and their one canonical spelling, so that a
-- rule and a request that name the same address compare equal as strings.
--   IPv4: exactly what glibc inet_aton() accepts (what getaddrinfo() falls back to before DNS,
--         so what the proxy would really connect to): 1 to 4 parts separated by '.', each part
--         decimal, octal (leading 0) or hex (leading 0x/0X), every part but the last <= 255,
--         the last within what the remaining bytes hold (a.b.c: c < 2^16; a.b: b < 2^24;
--         a: a < 2^32). `127.1`, `2130706433`, `0x7f.0.0.1`, `0177.0.0.1`, `127.0.1` are all
--         127.0.0.1. glibc also accepts trailing white space and anything after it; hosts with
--         white space are refused before they get here, so that never applies. A string that
--         looks numeric but is not such a form (`1.2.3.4.5`, `256.1.1.1`, `1.2.3.08`) is not an
--         address: the allowlist treats it as a name (which no resolver will resolve).
--   IPv6: what inet_pton(AF_INET6) accepts (hex groups, one `::`, an optional trailing dotted
--         IPv4 part; no zone id), written as RFC 5952 says: lower case, no leading zeros, the
--         longest run (first on a tie) of two or more zero groups as `::`. An IPv4-mapped
--         address (::ffff:a.b.c.d, ::ffff:7f00:1) is the IPv4 address it maps: `127.0.0.1`.
--   CIDR ranges (`10.0.0.0/8`, `fe80::/10`): a strict address and a prefix length, the range
--         keyed by its canonical network address so that matching is one lookup per prefix
--         length; an IPv6 range inside ::ffff:0:0/96 is the IPv4 range it maps.
--   Special addresses: the blocks a wildcard rule never reaches (unspecified, loopback,
--         link-local, multicast and the reserved space above it), as the proxy's
--         is_special_address() draws them.
-- Uses only the standard library. Must never resolve names or touch the system.
local M = {}

local function quad(word)
    return ("%d.%d.%d.%d"):format((word >> 24) & 0xff, (word >> 16) & 0xff, (word >> 8) & 0xff,
        word & 0xff)
end

-- One inet_aton part: decimal, 0-octal or 0x-hex. Returns its value, or nil when invalid or
-- above 0xffffffff (strtoul overflow and the > 0xffffffff check both fail the whole form).
local function aton_part(s)
    local base, digits
    if s:match("^0[xX]") then
        base, digits = 16, s:sub(3)
        if digits == "" or not digits:match("^%x+$") then return nil end
    elseif s:match("^0") then
        base, digits = 8, s
        if not digits:match("^[0-7]+$") then return nil end
    else
        base, digits = 10, s
        if not digits:match("^%d+$") then return nil end
    end
    local v = 0
    for i = 1, #digits do
        v = v * base + tonumber(digits:sub(i, i), 16)
        if v > 0xffffffff then return nil end
    end
    return v
end

local aton_max = { 0xffffffff, 0xffffff, 0xffff, 0xff }

-- Canonical dotted quad for an inet_aton form, else nil.
function M.ipv4(s)
    if type(s) ~= "string" or s == "" or not s:match("^[%dxXa-fA-F.]+$") then return nil end
    local parts = {}
    for p in (s .. "."):gmatch("([^.]*)%.") do parts[#parts + 1] = p end
    if #parts > 4 then return nil end
    local bytes, value = {}, 0
    for i, p in ipairs(parts) do
        if not p:match("^%d") then return nil end -- each part starts with a digit (isdigit)
        local v = aton_part(p)
        if not v then return nil end
        if i < #parts then
            if v > 0xff then return nil end
            bytes[i] = v
        else
            if v > aton_max[#parts] then return nil end
            value = v
        end
    end
    local word = 0
    for i = 1, #parts - 1 do word = word | (bytes[i] << (8 * (4 - i))) end
    word = word | value
    return quad(word)
end

-- Strict dotted quad as inet_pton(AF_INET) takes it (inside an IPv6 literal): four decimal
-- parts 0..255 without leading zeros. Returns the four bytes, or nil.
local function pton4(s)
    local a, b, c, d = s:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
    if not a then return nil end
    local out = {}
    for i, p in ipairs({ a, b, c, d }) do
        if #p > 3 or (#p > 1 and p:sub(1, 1) == "0") then return nil end
        local v = tonumber(p)
        if v > 255 then return nil end
        out[i] = v
    end
    return out
end

-- The eight 16-bit groups of an IPv6 literal (no brackets), or nil.
local function pton6(s)
    if type(s) ~= "string" or s == "" or #s > 45 or not s:match("^[%x:.]+$") then return nil end
    local head, tail = s, nil
    local dc = s:find("::", 1, true)
    if dc then
        if s:find("::", dc + 1, true) then return nil end
        head, tail = s:sub(1, dc - 1), s:sub(dc + 2)
    end
    local function groups(part, allow_v4)
        local out = {}
        if part == "" then return out end
        local fields = {}
        for f in (part .. ":"):gmatch("([^:]*):") do fields[#fields + 1] = f end
        for i, f in ipairs(fields) do
            if i == #fields and allow_v4 and f:find(".", 1, true) then
                local b = pton4(f)
                if not b then return nil end
                out[#out + 1] = (b[1] << 8) | b[2]
                out[#out + 1] = (b[3] << 8) | b[4]
            elseif f:match("^%x%x?%x?%x?$") then
                out[#out + 1] = tonumber(f, 16)
            else
                return nil
            end
        end
        return out
    end
    local g
    if dc then
        local h = groups(head, false)
        local t = groups(tail, true)
        if not h or not t or #h + #t > 7 then return nil end
        g = {}
        for _, v in ipairs(h) do g[#g + 1] = v end
        for _ = 1, 8 - #h - #t do g[#g + 1] = 0 end
        for _, v in ipairs(t) do g[#g + 1] = v end
    else
        g = groups(head, true)
        if not g or #g ~= 8 then return nil end
    end
    return g
end

local function is_mapped(g)
    return g[1] == 0 and g[2] == 0 and g[3] == 0 and g[4] == 0 and g[5] == 0 and g[6] == 0xffff
end

-- RFC 5952 text of eight groups.
local function format6(g)
    -- longest run of >= 2 zero groups, the first on a tie
    local best, best_len, i = nil, 1, 1
    while i <= 8 do
        if g[i] == 0 then
            local j = i
            while j + 1 <= 8 and g[j + 1] == 0 do j = j + 1 end
            if j - i + 1 > best_len then best, best_len = i, j - i + 1 end
            i = j + 1
        else
            i = i + 1
        end
    end
    local function hex(from, to)
        local t = {}
        for k = from, to do t[#t + 1] = ("%x"):format(g[k]) end
        return table.concat(t, ":")
    end
    if not best then return hex(1, 8) end
    return hex(1, best - 1) .. "::" .. hex(best + best_len, 8)
end

-- Canonical form of an IPv6 literal (no brackets): RFC 5952 text, or the dotted IPv4 address
-- for an IPv4-mapped one. nil when s is not an IPv6 literal.
function M.ipv6(s)
    local g = pton6(s)
    if not g then return nil end
    if is_mapped(g) then return quad((g[7] << 16) | g[8]) end
    return format6(g)
end

-- Canonical form of any IP literal: IPv4 forms, bare or bracketed IPv6. Returns the canonical
-- text and "v4" or "v6", or nil when s is not an IP literal.
function M.canonical(s)
    if type(s) ~= "string" then return nil end
    local inner = s:match("^%[(.*)%]$")
    if inner then
        local c = M.ipv6(inner)
        if not c then return nil end
        return c, c:find(":", 1, true) and "v6" or "v4"
    end
    local v4 = M.ipv4(s)
    if v4 then return v4, "v4" end
    if s:find(":", 1, true) then
        local c = M.ipv6(s)
        if c then return c, c:find(":", 1, true) and "v6" or "v4" end
    end
    return nil
end

-- ---- CIDR ranges and special blocks ----------------------------------------------------------

-- The 32-bit value of a canonical dotted quad.
local function v4_word(s)
    local a, b, c, d = s:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
    return (tonumber(a) << 24) | (tonumber(b) << 16) | (tonumber(c) << 8) | tonumber(d)
end

local function mask4(word, len)
    if len == 0 then return 0 end
    return word & ((0xffffffff << (32 - len)) & 0xffffffff)
end

local function mask6(g, len)
    local out = {}
    for i = 1, 8 do
        local keep = len - (i - 1) * 16
        if keep >= 16 then
            out[i] = g[i]
        elseif keep <= 0 then
            out[i] = 0
        else
            out[i] = g[i] & ((0xffff << (16 - keep)) & 0xffff)
        end
    end
    return out
end

-- The network address (canonical text) of the /len range holding canonical address addr of
-- family fam ("v4" | "v6"): the key a range of that length is stored under.
function M.prefix_key(addr, fam, len)
    if fam == "v4" then return quad(mask4(v4_word(addr), len)) end
    return format6(mask6(pton6(addr), len))
end

-- Parse a CIDR range "ADDR/LEN", ADDR without brackets: a strict dotted quad (not the inet_aton
-- shorthands, where '10/8' would be 0.0.0.10) or an IPv6 literal. Bits set beyond the prefix
-- are an error (a typo more often than not). An IPv6 range inside ::ffff:0:0/96 is the IPv4
-- range it maps. Returns { fam = "v4"|"v6", len = n, net = canonical network address }, or
-- nil and why.
function M.cidr(s)
    if type(s) ~= "string" then return nil, "not a string" end
    local addr, len_s = s:match("^([^/]*)/(.*)$")
    if not addr then return nil, "not a CIDR range (ADDR/LEN)" end
    if not len_s:match("^%d+$") then
        return nil, ("prefix length '%s' is not a number"):format(len_s)
    end
    local fam, max, g, word
    if addr:find(":", 1, true) then
        g = pton6(addr)
        if not g then return nil, ("'%s' is not an IPv6 address"):format(addr) end
        fam, max = "v6", 128
    else
        local b = pton4(addr)
        if not b then
            return nil, ("'%s' is not a dotted-quad IPv4 address (a range names its network in "
                .. "full, e.g. '10.0.0.0/8')"):format(addr)
        end
        fam, max, word = "v4", 32, (b[1] << 24) | (b[2] << 16) | (b[3] << 8) | b[4]
    end
    local len = tonumber(len_s)
    if #len_s > 3 or len > max then
        return nil, ("prefix length /%s is outside 0..%d"):format(len_s, max)
    end
    if fam == "v6" and is_mapped(g) and len >= 96 then
        fam, len, word = "v4", len - 96, (g[7] << 16) | g[8]
    end
    if fam == "v4" then
        local m = mask4(word, len)
        if m ~= word then
            return nil, ("%s has bits set beyond the /%d prefix (the range is %s/%d)")
                :format(quad(word), len, quad(m), len)
        end
        return { fam = "v4", len = len, net = quad(m) }
    end
    local m = mask6(g, len)
    for i = 1, 8 do
        if m[i] ~= g[i] then
            return nil, ("%s has bits set beyond the /%d prefix (the range is [%s/%d])")
                :format(format6(g), len, format6(m), len)
        end
    end
    return { fam = "v6", len = len, net = format6(m) }
end

-- The special block holding addr (canonical, as M.canonical writes it) of family fam: its kind
-- and prefix length, or nil. These are the proxy's is_special_address() blocks: 0.0.0.0/8 and
-- ::, 127.0.0.0/8 and ::1, 169.254.0.0/16 and fe80::/10, 224.0.0.0/3 (multicast and the
-- reserved space above it) and ff00::/8.
function M.special(addr, fam)
    -- from the canonical text: a decision asks this for every address it sees
    if fam == "v4" then
        local a, b = addr:match("^(%d+)%.(%d+)%.")
        a, b = tonumber(a), tonumber(b)
        if a == 0 then return "unspecified", 8 end
        if a == 127 then return "loopback", 8 end
        if a == 169 and b == 254 then return "link-local", 16 end
        if a >= 224 then return "multicast", 3 end
        return nil
    end
    if addr == "::" then return "unspecified", 128 end
    if addr == "::1" then return "loopback", 128 end
    -- fe80::/10 and ff00::/8 need a first group of four digits (RFC 5952 drops leading zeros)
    local g1 = addr:match("^(%x%x%x%x):")
    if not g1 then return nil end
    local v = tonumber(g1, 16)
    if v & 0xffc0 == 0xfe80 then return "link-local", 10 end
    if v & 0xff00 == 0xff00 then return "multicast", 8 end
    return nil
end

-- Is canonical address addr the unspecified address itself (0.0.0.0, ::)? A connection to it
-- reaches the connecting host's own services.
function M.unspecified(addr)
    return addr == "0.0.0.0" or addr == "::"
end

return M
