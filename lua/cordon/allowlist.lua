-- cordon.allowlist — the network rule language: parse entries, compile them once into hash
-- tables, decide one destination. The syntax, with every detail this module decides, is
-- docs/network-rules.md; the `network` hook that calls it is in lua/HOOKS.md.
-- Owns: what a rule means, host normalisation (case, trailing dot, refused characters and
-- lengths, IP literals through cordon.ip), CIDR ranges, which destinations a wildcard never
-- reaches (special addresses, `localhost`), and the verdict for (kind, host, port).
-- Uses cordon.ip and the standard library only, so plain lua5.4 runs it in specs.
-- Must never: resolve names, match by scanning every rule (a decision costs a few hash
-- lookups whatever the number of rules), or answer "allow" for a host it refused.
local ip = require("cordon.ip")

local M = {}

local HTTP_KINDS = { http = true, connect = true }
local TCP_KINDS = { socks = true }
M.KINDS = { http = true, connect = true, socks = true, dns = true }

-- Characters a host may never contain, with the reason given; checked before anything else.
local refused_chars = {
    ["\0"] = "contains NUL", ["\r"] = "contains CR", ["\n"] = "contains LF",
    ["%"] = "contains '%' (percent-encoding or an IPv6 zone)", [" "] = "contains a space",
    ["/"] = "contains '/'", ["@"] = "contains '@'", ["\\"] = "contains '\\'",
}

-- Normalise a host: lower case, one trailing dot stripped, IP literals canonical. Returns
-- host, "name"|"v4"|"v6"; or nil, reason. Used for rule hosts (after any "*." is taken off)
-- and request hosts alike, so both sides compare in one spelling.
local function normalize_host(s)
    if type(s) ~= "string" then return nil, "not a string" end
    if s:find("[^%w.%-_]") then -- the slow path: anything but a plain name or IPv4 form
        local bad = s:find("[%z\r\n%% /@\\]")
        if bad then return nil, refused_chars[s:sub(bad, bad)] end
        if s:find("[%c\127]") then return nil, "contains a control character" end
        if s:sub(1, 1) == "[" or s:find(":.*:") then
            local c, fam = ip.canonical(s:lower())
            if not c then return nil, "not a valid IPv6 literal" end
            return c, fam
        end
        local c = s:match("[^%w.%-_]")
        if c:byte() >= 128 then return nil, "non-ASCII byte (use the punycode xn-- form)" end
        return nil, ("contains the character '%s'"):format(c)
    end
    if s == "" then return nil, "empty host" end
    s = s:lower()
    if s:byte(-1) == 46 then s = s:sub(1, -2) end -- one trailing dot names the same host
    if s == "" then return nil, "empty host" end
    local b = s:byte(1)
    if b >= 48 and b <= 57 then
        local v4 = ip.ipv4(s)
        if v4 then return v4, "v4" end
    end
    local n = #s
    if n > 253 then return nil, ("name longer than 253 bytes (%d)"):format(n) end
    if b == 46 or s:byte(-1) == 46 or s:find("..", 1, true) then return nil, "empty label" end
    if n > 63 then
        local from = 1
        while from <= n do
            local dot = s:find(".", from, true) or n + 1
            if dot - from > 63 then
                return nil, ("label longer than 63 bytes (%d)"):format(dot - from)
            end
            from = dot + 1
        end
    end
    return s, "name"
end
M.normalize_host = normalize_host

-- The host as written in a rule or a flag: IPv6 in brackets.
local function host_text(host)
    if host:find(":", 1, true) then return "[" .. host .. "]" end
    return host
end
M.host_text = host_text

local function rule_error(entry, why)
    return ("invalid network rule '%s': %s"):format(tostring(entry), why)
end

-- The CIDR part of an entry's rest (after any scheme): "A.B.C.D/LEN" or "[IPV6/LEN]", then
-- nothing or ":PORT". Returns the range, the port text (nil: none); nil when rest is no CIDR
-- range; or false and why.
local function split_cidr(rest)
    local text, tail
    if rest:sub(1, 1) == "[" then
        text, tail = rest:match("^%[([^%]]*/[^%]]*)%](.*)$")
        if not text and rest:match("^%[[^%]]*/") and not rest:find("]", 1, true) then
            return false, "unclosed '[' in an IPv6 range"
        end
    else
        text, tail = rest:match("^(%d[%d.]*/[^:]*)(.*)$")
        if not text and rest:match("^[%x:.]*:[%x:.]*/") then
            return false, "an IPv6 range must be written in brackets, e.g. '[fe80::/10]' or "
                .. "'[fe80::/10]:443'"
        end
    end
    if not text then return nil end
    if tail == "" then return text, nil end
    local port_s = tail:match("^:(.*)$")
    if not port_s then return false, "unexpected text after the range" end
    return text, port_s
end

-- Parse one entry. Returns { text, tcp = bool, host = canonical|nil (nil: any host),
-- wild = bool (host is a "*." suffix), cidr = { fam, len, net }|nil (host is a range),
-- port = n|nil (nil: any port), kinds }; or nil, message.
function M.parse(entry)
    if type(entry) ~= "string" then return nil, rule_error(entry, "expected a string") end
    if entry == "" then return nil, "invalid network rule '': empty rule" end
    local rest, tcp, default_port = entry, false, nil
    local scheme, after = entry:match("^(%a[%w+.-]*)://(.*)$")
    if scheme then
        scheme = scheme:lower()
        if scheme == "tcp" then
            tcp = true
        elseif scheme == "http" then
            default_port = 80
        elseif scheme == "https" then
            default_port = 443
        else
            return nil, rule_error(entry, ("unsupported scheme '%s://' (use tcp://HOST:PORT, or HOST[:PORT] "
                .. "for HTTP and CONNECT)"):format(scheme))
        end
        rest = after
        if default_port then rest = rest:gsub("/$", "", 1) end -- a pasted "https://host/"
    elseif entry:find("://", 1, true) then
        return nil, rule_error(entry, "malformed scheme (use tcp://HOST:PORT, or HOST[:PORT])")
    end
    local cidr_text, cidr_port = split_cidr(rest)
    if cidr_text == false then return nil, rule_error(entry, cidr_port) end
    if cidr_text and default_port then
        if not cidr_text:match("/%d+$") then
            cidr_text = nil -- "https://10.0.0.1/path": a path, refused below
        else
            return nil, rule_error(entry, "a CIDR range is written without http:// or https:// "
                .. "(e.g. '10.0.0.0/8:443')")
        end
    end
    local bad = not cidr_text and rest:find("[%z\r\n%% /@\\]")
    if bad then
        local why = refused_chars[rest:sub(bad, bad)]
        if rest:sub(bad, bad) == "/" then why = "a rule names a host, not a path" end
        return nil, rule_error(entry, why)
    end
    local host, port_s
    if cidr_text then
        port_s = cidr_port
    elseif rest:sub(1, 1) == "[" then
        local inner, tail = rest:match("^(%[[^%]]*%])(.*)$")
        if not inner then return nil, rule_error(entry, "unclosed '[' in an IPv6 literal") end
        host = inner
        if tail ~= "" then
            port_s = tail:match("^:(.*)$")
            if not port_s then return nil, rule_error(entry, "unexpected text after ']'") end
        end
    else
        local colons = select(2, rest:gsub(":", ""))
        if colons > 1 then
            return nil, rule_error(entry, "an IPv6 address must be written in brackets, e.g. '[::1]:443'")
        end
        host, port_s = rest:match("^([^:]*):(.*)$")
        if not host then host = rest end
    end
    local port
    if port_s then
        if not port_s:match("^%d+$") then
            return nil, rule_error(entry, ("port '%s' is not a number"):format(port_s))
        end
        port = tonumber(port_s)
        if #port_s > 5 or port < 1 or port > 65535 then
            return nil, rule_error(entry, ("port %s is outside 1..65535"):format(port_s))
        end
    end
    port = port or default_port
    if tcp and not port then
        return nil, rule_error(entry, "a tcp:// rule needs a port (tcp://HOST:PORT)")
    end
    local r = { text = entry, tcp = tcp, port = port, kinds = tcp and TCP_KINDS or HTTP_KINDS }
    if cidr_text then
        local c, why = ip.cidr(cidr_text)
        if not c then return nil, rule_error(entry, why) end
        r.cidr = c
        return r
    end
    if host == "" then return nil, rule_error(entry, "empty host") end
    if host == "*" then
        if not port then
            return nil, rule_error(entry, "a bare '*' would allow every host; write '*:443' or a domain")
        end
        return r
    end
    local wild = false
    if host:sub(1, 2) == "*." then
        wild, host = true, host:sub(3)
    end
    if host:find("*", 1, true) then
        return nil, rule_error(entry, "a wildcard is only allowed as a leading '*.' (e.g. '*.example.com')")
    end
    local h, fam = normalize_host(host)
    if not h then return nil, rule_error(entry, fam) end
    if wild and fam ~= "name" then
        return nil, rule_error(entry, "'*.' applies to names, not to an IP address")
    end
    r.host, r.wild = h, wild
    return r
end

-- Does rule r (already found by host) apply to this port and kind? Deny rules apply to every
-- kind: a denied destination stays denied whatever protocol reaches it.
local function applies(r, kind, port, any_kind)
    return (r.port == nil or r.port == port) and (any_kind or r.kinds[kind])
end

local function add(tbl, key, r)
    local l = tbl[key]
    if not l then l = {}; tbl[key] = l end
    l[#l + 1] = r
end

local function new_set()
    return { exact = {}, suffix = {}, port = {}, cidr = {} }
end

local function set_add(set, r, verb)
    r.reason = ("%s by rule '%s'"):format(verb, r.text) -- made once, not per decision
    if r.cidr then
        -- per family: the prefix lengths in use, longest first, and per length a table keyed
        -- by network address: a decision costs one lookup per length in use
        local fam = set.cidr[r.cidr.fam]
        if not fam then fam = { lens = {}, by_len = {} }; set.cidr[r.cidr.fam] = fam end
        local len = r.cidr.len
        if not fam.by_len[len] then
            fam.by_len[len] = {}
            fam.lens[#fam.lens + 1] = len
            table.sort(fam.lens, function(a, b) return a > b end)
        end
        add(fam.by_len[len], r.cidr.net, r)
    elseif r.host == nil then
        add(set.port, r.port, r)
    elseif r.wild then
        add(set.suffix, r.host, r)
    else
        add(set.exact, r.host, r)
    end
end

local function first_in(list, kind, port, any_kind)
    if not list then return nil end
    for i = 1, #list do
        if applies(list[i], kind, port, any_kind) then return list[i] end
    end
    return nil
end

-- First rule of set matching; near receives a rule that matched host and port but not kind.
-- gate (a special destination: the prefix length of its block, math.huge for a name): only a
-- rule naming it reaches it, an exact host or a range no wider than the block; a wider rule
-- that would have matched (a port-only rule, 0.0.0.0/0) is returned third, for the reason.
local function lookup(set, kind, host, fam, port, any_kind, gate)
    local exact = set.exact[host]
    local r = first_in(exact, kind, port, any_kind)
    if r then return r end
    local near = exact and first_in(exact, kind, port, true)
    local wide
    local ranges = set.cidr[fam]
    if ranges then
        for _, len in ipairs(ranges.lens) do
            local list = ranges.by_len[len][ip.prefix_key(host, fam, len)]
            if list then
                if gate and len < gate then
                    wide = wide or first_in(list, kind, port, any_kind)
                else
                    r = first_in(list, kind, port, any_kind)
                    if r then return r end
                    near = near or first_in(list, kind, port, true)
                end
            end
        end
    end
    if fam == "name" then
        -- parent suffixes: a.b.example.com -> b.example.com, example.com, com
        local pos = host:find(".", 1, true)
        while pos do
            local list = set.suffix[host:sub(pos + 1)]
            if list then
                r = first_in(list, kind, port, any_kind)
                if r then return r end
                near = near or first_in(list, kind, port, true)
            end
            pos = host:find(".", pos + 1, true)
        end
    end
    local list = set.port[port]
    if gate then
        return nil, near, wide or first_in(list, kind, port, any_kind)
    end
    r = first_in(list, kind, port, any_kind)
    if r then return r end
    return nil, near or first_in(list, kind, port, true)
end

-- Kind dns: the first rule of set for host on any port and of any kind that pred accepts, with
-- the same reach as lookup (gate: only a rule naming a special destination reaches it).
local function any_in(list, pred)
    if not list then return nil end
    for i = 1, #list do
        if pred(list[i]) then return list[i] end
    end
    return nil
end

local function lookup_any_port(set, host, fam, pred, gate)
    local r = any_in(set.exact[host], pred)
    if r then return r end
    local ranges = set.cidr[fam]
    if ranges then
        for _, len in ipairs(ranges.lens) do
            if not (gate and len < gate) then
                r = any_in(ranges.by_len[len][ip.prefix_key(host, fam, len)], pred)
                if r then return r end
            end
        end
    end
    if fam == "name" then
        local pos = host:find(".", 1, true)
        while pos do
            r = any_in(set.suffix[host:sub(pos + 1)], pred)
            if r then return r end
            pos = host:find(".", pos + 1, true)
        end
    end
    if gate then return nil end
    for _, list in pairs(set.port) do
        r = any_in(list, pred)
        if r then return r end
    end
    return nil
end

local function every_port(r) return r.port == nil end
local function any_rule() return true end

-- What a wildcard does not reach: (kind of destination, gate for lookup) or nil. Special
-- addresses (cordon.ip.special), and the names RFC 6761 keeps for loopback: `localhost` and
-- every name under it (the proxy decides the address a name resolves to again; this makes
-- `cordon policy net` give the same answer for the name).
local function special_destination(host, fam)
    if fam == "name" then
        if host == "localhost" or host:find(".localhost", -10, true) then return "loopback name", math.huge end
        return nil
    end
    local what, len = ip.special(host, fam)
    if what then return what .. " address", len end
    return nil
end

local Matcher = {}
Matcher.__index = Matcher

-- Compile allow and deny entry lists (lists of strings, nil = empty). opts.wildcard_special:
-- wildcard allow rules reach special destinations too (the profile's network.wildcard_special).
-- Returns the matcher, or nil and the message naming the first invalid entry.
function M.compile(allow, deny, opts)
    local m = setmetatable({ allow = new_set(), deny = new_set(), count = 0,
                             wildcard_special = opts and opts.wildcard_special == true }, Matcher)
    for _, pair in ipairs({ { allow or {}, m.allow, "allowed" }, { deny or {}, m.deny, "denied" } }) do
        for _, entry in ipairs(pair[1]) do
            local r, err = M.parse(entry)
            if not r then return nil, err end
            set_add(pair[2], r, pair[3])
            m.count = m.count + 1
        end
    end
    return m
end

-- The flag that would allow this destination.
function M.suggest(kind, host, port)
    if kind == "socks" then
        return ("--network-allow tcp://%s:%d"):format(host_text(host), port)
    end
    return ("--network-allow %s:%d"):format(host_text(host), port)
end

-- Kind dns (port 0): may the sandbox's DNS stub answer for host (a name, or an address a name's
-- answer holds)? Yes when some allow rule could match it on some port and kind; no when a deny
-- rule without a port matches it (a deny rule for one port leaves the others open).
function Matcher:decide_dns(h, fam)
    local d = lookup_any_port(self.deny, h, fam, every_port)
    if d then
        return { verdict = "deny", rule = d.text, reason = d.reason }
    end
    local _, gate
    if not self.wildcard_special then _, gate = special_destination(h, fam) end
    local a = lookup_any_port(self.allow, h, fam, any_rule, gate)
    if a then
        return { verdict = "allow", rule = a.text, reason = a.reason }
    end
    return { verdict = "deny", reason = ("no rule could allow %s on any port"):format(host_text(h)),
             suggest = ("--network-allow %s"):format(host_text(h)) }
end

-- Decide one destination. kind: "http" | "connect" | "socks"; host as the client sent it
-- (brackets around IPv6 allowed); port 1..65535 (the proxy passes 80 for a port-less http URL).
-- Returns { verdict = "allow"|"deny", rule = entry as written | nil, reason = "...",
-- suggest = "--network-allow ..." (only for an unlisted destination) }.
function Matcher:decide(kind, host, port)
    if not M.KINDS[kind] then
        return { verdict = "deny", reason = ("unknown request kind '%s'"):format(tostring(kind)) }
    end
    if kind == "dns" then
        if port ~= 0 then return { verdict = "deny", reason = "kind dns takes port 0" } end
    elseif math.type(port) ~= "integer" or port < 1 or port > 65535 then
        return { verdict = "deny", reason = ("port %s is outside 1..65535"):format(tostring(port)) }
    end
    local h, fam = normalize_host(host)
    if not h then
        return { verdict = "deny", reason = "refused host: " .. fam }
    end
    if ip.unspecified(h) then
        -- connect() to it reaches the connecting host's own services: no rule changes that
        return { verdict = "deny", reason = ("%s is the unspecified address, which reaches the host's "
            .. "own services; it is never allowed"):format(host_text(h)) }
    end
    if kind == "dns" then return self:decide_dns(h, fam) end
    local d = lookup(self.deny, kind, h, fam, port, true)
    if d then
        return { verdict = "deny", rule = d.text, reason = d.reason }
    end
    local what, gate
    if not self.wildcard_special then what, gate = special_destination(h, fam) end
    local a, near, wide = lookup(self.allow, kind, h, fam, port, false, gate)
    if a then
        return { verdict = "allow", rule = a.text, reason = a.reason }
    end
    local reason = "not in the allowlist"
    if wide then
        reason = reason .. (" (rule '%s' does not reach %s, %s %s: it needs a rule naming it)")
            :format(wide.text, host_text(h), what:find("^[aeiou]") and "an" or "a", what)
    elseif near then
        if near.tcp then
            reason = reason .. (" (rule '%s' allows only SOCKS; HTTP and CONNECT need an entry without tcp://)")
                :format(near.text)
        else
            reason = reason .. (" (rule '%s' allows only HTTP and CONNECT; SOCKS needs a tcp:// entry)")
                :format(near.text)
        end
    end
    return { verdict = "deny", reason = reason, suggest = M.suggest(kind, h, port) }
end

-- The matcher for a resolved profile's network.allow / network.deny, compiled on first use and
-- cached by the profile table's identity (weak keys: it goes when the profile goes). Raises
-- the invalid entry's message (level 0).
local cache = setmetatable({}, { __mode = "k" })
function M.for_profile(profile)
    local m = cache[profile]
    if m then return m end
    local net = type(profile) == "table" and profile.network or nil
    local err
    m, err = M.compile(net and net.allow, net and net.deny,
        { wildcard_special = net and net.wildcard_special })
    if not m then error(err, 0) end
    cache[profile] = m
    return m
end

return M
