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
-- Uses only the standard library. Must never resolve names or touch the system.
local M = {}

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
    return ("%d.%d.%d.%d"):format((word >> 24) & 0xff, (word >> 16) & 0xff, (word >> 8) & 0xff,
        word & 0xff)
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

-- Canonical form of an IPv6 literal (no brackets): RFC 5952 text, or the dotted IPv4 address
-- for an IPv4-mapped one. nil when s is not an IPv6 literal.
function M.ipv6(s)
    local g = pton6(s)
    if not g then return nil end
    if g[1] == 0 and g[2] == 0 and g[3] == 0 and g[4] == 0 and g[5] == 0 and g[6] == 0xffff then
        return ("%d.%d.%d.%d"):format(g[7] >> 8, g[7] & 0xff, g[8] >> 8, g[8] & 0xff)
    end
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

return M
