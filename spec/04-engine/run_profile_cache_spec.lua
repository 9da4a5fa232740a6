-- spec/04-engine/run_profile_cache_spec.lua — `cordon run` keeps each resolved profile in
-- $XDG_CACHE_HOME/cordon/profiles (else ~/.cache/cordon/profiles) and serves it again only while
-- every input is unchanged. Each case first shows the entry is used (written by the first run,
-- the same file, not rewritten, after an identical second run), then changes one input and
-- shows the next run sees it: an edited, added or removed user profile or policy.lua, the
-- getenv-allow file, a trusted project edited or revoked, a host.exists answer, a new ~/.ssh
-- entry, the environment, the flags, the workspace. A broken, foreign, linked or 0644 entry is
-- ignored; an unwritable cache changes nothing; the cache is hidden from every sandbox. As root
-- and as uid 65534 (from the helpers' shared copy of cordon); a session (as root) does not use
-- the cache. print() logs nothing at cordon's log level: a hit's output is checked to be the
-- miss's, and the line to be in the entry. Drives the built binary.
local h = require("spec.helpers")

local UID = 65534

-- A home (under /var/tmp: the sandbox has its own /tmp) with a config directory, and a
-- workspace, both the caller's. c.uid nil: root.
local function setup(uid)
    local home = h.tmpdir()
    h.sh_ok(("chmod 755 %s && mkdir -p %s/.config/cordon/profiles"):format(h.quote(home), h.quote(home)))
    for _, m in ipairs({ "pa", "pb", "pc" }) do h.write_file(home .. "/" .. m, "marker-" .. m .. "\n") end
    local ws = h.workspace(nil, uid)
    local c = { home = home, ws = ws, uid = uid, env = {}, flags = {} }
    if uid then h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(home))) end
    return c
end

-- Write home-relative file rel (its folders made), the caller's.
local function put(c, rel, content)
    local path = c.home .. "/" .. rel
    h.sh_ok("mkdir -p " .. h.quote(path:match("^(.*)/[^/]+$")))
    h.write_file(path, content)
    if c.uid then h.sh_ok(("chown -R %d:%d %s"):format(c.uid, c.uid, h.quote(c.home))) end
end

local function cache_dir(c)
    return (c.env.XDG_CACHE_HOME or (c.home .. "/.cache")) .. "/cordon/profiles"
end

-- name -> "inode mtime" of each entry.
local function entries(c)
    local out = {}
    local r = h.sh("find " .. h.quote(cache_dir(c)) .. " -maxdepth 1 -type f -printf '%f %i %T@\\n' 2>/dev/null")
    for name, rest in r.stdout:gmatch("(%x+) ([^\n]+)\n") do out[name] = rest end
    return out
end

local function count(t)
    local n = 0
    for _ in pairs(t) do n = n + 1 end
    return n
end

local function run(c, script, opts)
    opts = opts or {}
    local flags = {}
    for _, f in ipairs(c.flags) do flags[#flags + 1] = f end
    for _, f in ipairs(opts.flags or {}) do flags[#flags + 1] = f end
    return h.run_sh(script, {
        home = c.home, cwd = opts.cwd or c.ws, uid = c.uid, env = c.env, flags = flags,
        unset = { "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR" },
    })
end

-- Which of ~/pa ~/pb ~/pc the command can read.
local SEE = 'for m in pa pb pc; do cat ~/$m 2>/dev/null || echo "no-$m"; done'

-- Run SEE twice: the first run writes one entry (or one more), the second serves it (same
-- file, untouched) and shows the same. Returns the output and the entries.
local function cached(c, script)
    script = script or SEE
    local before = entries(c)
    local r1 = h.ok(run(c, script))
    local mid = entries(c)
    assert.is_true(count(mid) >= 1, "no entry after a run\n" .. h.describe(r1))
    local r2 = h.ok(run(c, script))
    local after = entries(c)
    assert.are.same(mid, after, "the identical second run rewrote the cache\n" .. h.describe(r2))
    assert.are.equal(r1.stdout, r2.stdout)
    assert.are.equal(r1.stderr, r2.stderr)
    return r2.stdout, after, before
end

-- The next run: its output, and whether it wrote (rewrote or added) an entry.
local function next_run(c, script)
    local before = entries(c)
    local r = h.ok(run(c, script or SEE))
    local after = entries(c)
    local wrote = false
    for name, v in pairs(after) do
        if before[name] ~= v then wrote = true end
    end
    return r.stdout, wrote, r
end

local HIDE_PA = [[
return { profile = function(input, nxt)
    local p = nxt(input)
    p.hidden[#p.hidden + 1] = "~/pa"
    return p
end }
]]

for _, who in ipairs({ { name = "root" }, { name = "uid " .. UID, uid = UID } }) do
    describe("the profile cache, as " .. who.name, function()
        lazy_setup(function()
            assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        end)
        after_each(h.cleanup)

        it("serves an identical run from one private entry, with the same sandbox", function()
            local c = setup(who.uid)
            local script = SEE .. '; env | grep -v "^_=" | sort; awk "{print \\$5, \\$6}" /proc/self/mountinfo | sort'
            local out, ents = cached(c, script)
            assert.matches("marker%-pa\nmarker%-pb\nmarker%-pc\n", out)
            assert.are.equal(1, count(ents))
            local name = next(ents)
            local st = h.chomp(h.sh_ok(("stat -c '%%a %%u %%F' %s/%s"):format(h.quote(cache_dir(c)), name)))
            assert.are.equal(("600 %d regular file"):format(who.uid or 0), st)
            assert.matches("^%x+$", name)
            assert.are.equal(64, #name)
        end)

        it("sees a user profile edited to the same size with its mtime set back", function()
            local c = setup(who.uid)
            put(c, ".config/cordon/profiles/mine.lua", 'return { extends = "coding", hidden = { "~/pa" } }\n')
            c.flags = { "--profile", "mine" }
            local out = cached(c)
            assert.matches("no%-pa\nmarker%-pb\n", out)
            local p = c.home .. "/.config/cordon/profiles/mine.lua"
            h.sh_ok(("touch -r %s %s.ref && sed -i 's/~\\/pa/~\\/pb/' %s && touch -r %s.ref %s"):format(
                h.quote(p), h.quote(c.home), h.quote(p), h.quote(c.home), h.quote(p)))
            local wrote
            out, wrote = next_run(c)
            assert.matches("marker%-pa\nno%-pb\n", out)
            assert.is_true(wrote)
        end)

        it("sees a user profile added over the built-in coding, and removed again", function()
            local c = setup(who.uid)
            local out = cached(c)
            assert.matches("marker%-pa\nmarker%-pb\nmarker%-pc\n", out)
            put(c, ".config/cordon/profiles/coding.lua", 'return { description = "mine", hidden = { "~/pc" } }\n')
            out = next_run(c)
            assert.matches("marker%-pa\nmarker%-pb\nno%-pc\n", out)
            out = next_run(c)
            assert.matches("no%-pc\n", out)
            os.remove(c.home .. "/.config/cordon/profiles/coding.lua")
            out = next_run(c)
            assert.matches("marker%-pa\nmarker%-pb\nmarker%-pc\n", out)
        end)

        it("sees a user policy.lua added, edited and removed", function()
            local c = setup(who.uid)
            assert.matches("marker%-pa\n", (cached(c)))
            put(c, ".config/cordon/policy.lua", HIDE_PA)
            assert.matches("^no%-pa\nmarker%-pb\n", (next_run(c)))
            assert.matches("^no%-pa\n", (next_run(c)))
            put(c, ".config/cordon/policy.lua", (HIDE_PA:gsub("~/pa", "~/pb")))
            assert.matches("^marker%-pa\nno%-pb\n", (next_run(c)))
            os.remove(c.home .. "/.config/cordon/policy.lua")
            assert.matches("^marker%-pa\nmarker%-pb\nmarker%-pc\n", (next_run(c)))
        end)

        it("sees the getenv-allow file change", function()
            local c = setup(who.uid)
            c.env.CPC_HIDE = "pb"
            put(c, ".config/cordon/policy.lua", [[
return { profile = function(input, nxt)
    local p = nxt(input)
    local ok, v = pcall(host.getenv, "CPC_HIDE")
    if ok and v then p.hidden[#p.hidden + 1] = "~/" .. v end
    return p
end }
]])
            assert.matches("marker%-pa\nmarker%-pb\n", (cached(c)))
            put(c, ".config/cordon/getenv-allow", "CPC_HIDE\n")
            assert.matches("marker%-pa\nno%-pb\n", (next_run(c)))
            put(c, ".config/cordon/getenv-allow", "OTHER\n")
            assert.matches("marker%-pa\nmarker%-pb\n", (next_run(c)))
        end)

        it("sees a host.exists answer change", function()
            local c = setup(who.uid)
            put(c, ".config/cordon/policy.lua", [[
return { profile = function(input, nxt)
    local p = nxt(input)
    if host.exists("~/flag") then p.hidden[#p.hidden + 1] = "~/pa" end
    return p
end }
]])
            assert.matches("^marker%-pa\n", (cached(c)))
            put(c, "flag", "")
            assert.matches("^no%-pa\n", (next_run(c)))
            os.remove(c.home .. "/flag")
            assert.matches("^marker%-pa\n", (next_run(c)))
        end)

        it("hides a new ~/.ssh entry at the next run, from the cache (coding's hidden_except)", function()
            local c = setup(who.uid)
            put(c, ".ssh/known_hosts", "example.org ssh-ed25519 AAAA\n")
            local script = "cat ~/.ssh/work_key 2>/dev/null || echo no-key; cat ~/.ssh/known_hosts"
            assert.matches("^no%-key\nexample%.org", (cached(c, script)))
            put(c, ".ssh/work_key", "secret-key\n")
            -- hidden by rule when the view is built: the resolved profile need not change
            local out, wrote = next_run(c, script)
            assert.matches("^no%-key\nexample%.org", out)
            assert.is_false(wrote)
        end)

        it("sees the environment, the flags and the workspace", function()
            local c = setup(who.uid)
            c.env.CPC_VALUE = "one"
            local script = 'echo "v=$CPC_VALUE"; touch here 2>/dev/null && echo wrote || echo read-only; ' .. SEE
            assert.matches("^v=one\nwrote\n", (cached(c, script)))
            c.env.CPC_VALUE = "two"
            assert.matches("^v=two\nwrote\n", (next_run(c, script)))
            c.flags = { "--profile", "readonly" }
            assert.matches("^v=two\nread%-only\n", (next_run(c, script)))
            c.flags = { "--hide", "~/pb" }
            assert.matches("\nmarker%-pa\nno%-pb\n", (next_run(c, script)))
            local other = h.workspace(nil, who.uid)
            c.flags = { "--allow-write", other }
            local r = h.ok(run(c, "touch " .. h.quote(other .. "/x") .. " && echo ok"))
            assert.matches("^ok\n", r.stdout)
            c.flags = {}
            local before = entries(c)
            r = h.ok(run(c, "pwd; touch y && echo ok", { cwd = other }))
            assert.are.equal(other .. "\nok\n", r.stdout)
            assert.is_true(count(entries(c)) > count(before))
        end)

        it("sees a trusted project edited after trust, and trust revoked", function()
            local c = setup(who.uid)
            h.sh_ok("mkdir -p " .. h.quote(c.ws .. "/.cordon"))
            h.write_file(c.ws .. "/.cordon/policy.lua", HIDE_PA)
            if c.uid then h.sh_ok(("chown -R %d:%d %s"):format(c.uid, c.uid, h.quote(c.ws))) end
            h.ok(h.cordon({ "trust" }, { cwd = c.ws, home = c.home, uid = c.uid,
                unset = { "XDG_CONFIG_HOME" } }))
            local out = cached(c)
            assert.matches("^no%-pa\n", out)
            h.write_file(c.ws .. "/.cordon/policy.lua", (HIDE_PA:gsub("~/pa", "~/pb")))
            local _, _, r = next_run(c)
            assert.matches("^marker%-pa\nmarker%-pb\n", r.stdout)
            assert.matches("project policy in [^\n]* is not trusted %(policy%.lua changed%)", r.stderr)
            h.ok(h.cordon({ "trust" }, { cwd = c.ws, home = c.home, uid = c.uid,
                unset = { "XDG_CONFIG_HOME" } }))
            assert.matches("^marker%-pa\nno%-pb\n", (next_run(c)))
            assert.matches("^marker%-pa\nno%-pb\n", (next_run(c)))
            h.ok(h.cordon({ "trust", "--revoke" }, { cwd = c.ws, home = c.home, uid = c.uid,
                unset = { "XDG_CONFIG_HOME" } }))
            _, _, r = next_run(c)
            assert.matches("^marker%-pa\nmarker%-pb\n", r.stdout)
            assert.matches("is not trusted", r.stderr)
        end)

        it("ignores a corrupted, truncated, foreign, linked or 0644 entry", function()
            local c = setup(who.uid)
            put(c, ".config/cordon/policy.lua", HIDE_PA)
            local _, ents = cached(c)
            local path = cache_dir(c) .. "/" .. next(ents)
            local foreign = who.uid and 0 or UID
            local spoil = {
                corrupted = ("printf 'XXXXXXXX' | dd of=%s bs=1 seek=100 conv=notrunc 2>/dev/null"):format(h.quote(path)),
                truncated = ("truncate -s 200 %s"):format(h.quote(path)),
                foreign = ("chown %d %s"):format(foreign, h.quote(path)),
                linked = ("cp -p %s %s.copy && ln -sf %s.copy %s"):format(
                    h.quote(path), h.quote(path), h.quote(path), h.quote(path)),
                ["0644"] = ("chmod 644 %s"):format(h.quote(path)),
            }
            for _, what in ipairs({ "corrupted", "truncated", "foreign", "linked", "0644" }) do
                h.sh_ok(spoil[what])
                local out, wrote = next_run(c)
                assert.truthy(out:match("^no%-pa\nmarker%-pb\n"), what .. ":\n" .. out)
                assert.is_true(wrote, what .. ": the entry was not written again")
                local st = h.chomp(h.sh_ok(("stat -c '%%a %%u %%F' %s"):format(h.quote(path))))
                assert.are.equal(("600 %d regular file"):format(who.uid or 0), st, what)
                os.remove(path .. ".copy")
            end
        end)

        it("runs correctly when the cache cannot be written", function()
            local c = setup(who.uid)
            put(c, ".config/cordon/policy.lua", HIDE_PA)
            put(c, ".cache/cordon/profiles", "not a directory\n")
            for _ = 1, 2 do
                assert.matches("^no%-pa\nmarker%-pb\n", (next_run(c)))
            end
            assert.are.equal("not a directory\n", h.read_file(c.home .. "/.cache/cordon/profiles"))
        end)

        it("keeps the cache out of every sandbox, also when the workspace is the home", function()
            local c = setup(who.uid)
            -- (what a command makes there itself stays in its own copy-on-write home)
            local probe = 'ls -A "$1" 2>/dev/null | grep -c -E "^[0-9a-f]{64}$"; '
                .. 'echo x > "$1/x" 2>/dev/null; mkdir -p "$1" 2>/dev/null && echo x > "$1/x"; echo done'
            local function look(dir, opts)
                opts = opts or {}
                local flags = opts.flags or {}
                local args = { "run" }
                for _, f in ipairs(flags) do args[#args + 1] = f end
                for _, w in ipairs({ "--", "/bin/bash", "-c", probe, "probe", dir }) do args[#args + 1] = w end
                local r = h.ok(h.cordon(args, { home = c.home, cwd = opts.cwd or c.ws, uid = c.uid,
                    env = c.env, unset = { "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME" } }))
                assert.truthy(r.stdout:match("^0\n"), h.describe(r))
                return r
            end
            local dir = cache_dir(c)
            look(dir)
            look(dir)
            assert.are.equal(1, count(entries(c)))
            local home_ws = { cwd = c.home, flags = { "--workspace", c.home, "--allow-home-workspace" } }
            look(dir, home_ws)
            look(dir, home_ws)
            for name in pairs(entries(c)) do assert.matches("^%x+$", name) end
            assert.is_nil(io.open(dir .. "/x"), "a sandboxed command wrote into the cache")
            -- $XDG_CACHE_HOME is used when set, and hidden as well
            local xdg = h.tmpdir()
            if c.uid then h.sh_ok(("chown %d %s"):format(c.uid, h.quote(xdg))) end
            c.env.XDG_CACHE_HOME = xdg
            dir = cache_dir(c)
            look(dir)
            look(dir)
            assert.are.equal(1, count(entries(c)))
            assert.is_nil(io.open(dir .. "/x"), "a sandboxed command wrote into the cache")
        end)

        it("replays a policy's print() lines and never caches math.random", function()
            local c = setup(who.uid)
            put(c, ".config/cordon/policy.lua", 'print("cpc-printed-line")\n' .. HIDE_PA)
            local _, ents = cached(c)
            local data = h.read_file(cache_dir(c) .. "/" .. next(ents))
            assert.truthy(data:find("cpc-printed-line", 1, true), "the print() line is not in the entry")
            put(c, ".config/cordon/policy.lua", 'local n = math.random(1, 6)\n' .. HIDE_PA)
            local out, wrote = next_run(c)
            assert.matches("^no%-pa\n", out)
            assert.is_false(wrote)
            out, wrote = next_run(c)
            assert.is_false(wrote)
            -- the old entry stays; what is served is never it (its policy.lua differs)
            assert.matches("^no%-pa\n", out)
        end)
    end)
end

describe("the profile cache and sessions", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("a session resolves its profile without the cache: no entry is written", function()
        local c = setup(nil)
        put(c, ".config/cordon/policy.lua", HIDE_PA)
        local s = h.session_start("pcache-" .. h.token(), { cwd = c.ws, env = { HOME = c.home } })
        local r = h.cordon({ "exec", s.name, "--", SEE }, { cwd = c.ws, home = c.home, env = s.env })
        assert.are.equal(0, r.code, h.describe(r))
        assert.matches("^no%-pa\nmarker%-pb\n", r.stdout)
        assert.are.equal(0, count(entries(c)))
    end)
end)
