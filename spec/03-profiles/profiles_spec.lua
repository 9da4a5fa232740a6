-- Specs for the built-in profiles: each file loads as text with plain lua5.4, validates, resolves
-- through `extends`, and holds the keys the design requires.
local profile = require("cordon.profile")

local root = os.getenv("CORDON_SOURCE_DIR") or "."
local caller_home = "/home/u"
local host = {
    home = function() return caller_home end,
    exists = function() return false end,
    is_dir = function() return false end,
    is_socket = function() return false end,
    workspace = function() return nil end,
}
local function load_profile(name)
    local path = root .. "/profiles/" .. name .. ".lua"
    local f = assert(io.open(path))
    local src = f:read("a")
    f:close()
    local env = setmetatable({}, { __index = { host = host, require = require, string = string,
                                              table = table, math = math } })
    local chunk = assert(loadfile(path, "t", env))
    return chunk(), path, src
end

local function has(list, item)
    for _, v in ipairs(list or {}) do if v == item then return true end end
    return false
end

describe("built-in profiles", function()
    for _, name in ipairs { "coding", "strict", "readonly", "ops" } do
        it(name .. " validates and resolves", function()
            local t = load_profile(name)
            assert.is_nil(profile.validate(t))
            assert.is_string(t.description)
            local r = profile.resolve(name, load_profile)
            assert.is_nil(profile.validate(r))
            assert.are.equal(name, r.name)
            -- everything extends coding: the secrets stay hidden
            for _, p in ipairs { "~/.aws", "~/.gnupg", "/etc/shadow", "/root" } do
                assert.is_true(has(r.hidden, p), name .. " hides " .. p)
            end
            assert.is_table(r.hidden_except["~/.ssh"], name .. " hides ~/.ssh by rule")
            assert.are.equal(0, r.rlimits.core)
            assert.are.equal(3, r.session.grace)
        end)
    end

    it("coding hides every credential store the design lists", function()
        local r = profile.resolve("coding", load_profile)
        for _, p in ipairs { "~/.aws", "~/.gnupg", "~/.config/gh", "~/.netrc", "~/.docker",
                             "~/.kube", "~/.npmrc", "~/.pypirc", "~/.git-credentials",
                             "~/.config/gcloud", "~/.azure", "/etc/shadow", "/etc/gshadow",
                             "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh/ssh_host_ed25519_key",
                             "/etc/ssh/ssh_host_rsa_key", "/root" } do
            assert.is_true(has(r.hidden, p), p)
        end
        for _, p in ipairs { ".git/hooks", ".git/config", ".cordon" } do
            assert.is_true(has(r.readonly_in_workspace, p), p)
        end
        for _, s in ipairs { "*PASSWORD*", "*_PWD", "*SECRET*", "*_KEY", "*_TOKEN", "*_PAT", "*_JWT*",
                             "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS" } do
            assert.is_true(has(r.env.strip, s), s)
        end
        assert.is_false(r.workspace_readonly)
        assert.is_false(r.escalation.ask_sandbox_off)
    end)

    it("coding hides ~/.ssh by rule: only known_hosts*, config, config.d and *.pub show", function()
        local r = profile.resolve("coding", load_profile)
        local pats = r.hidden_except["~/.ssh"]
        table.sort(pats)
        assert.are.same({ "*.pub", "config", "config.d", "known_hosts*" }, pats)
        -- by rule, not by name: no name of ~/.ssh is listed one by one
        for _, p in ipairs(r.hidden) do assert.is_nil(p:match("^~/%.ssh"), p) end
    end)

    it("hidden_except: folders absolute or ~/, patterns of one name; merged by folder", function()
        for _, bad in ipairs {
            { hidden_except = { "~/.ssh" } },
            { hidden_except = { ["rel/dir"] = { "x" } } },
            { hidden_except = { ["~/.ssh"] = {} } },
            { hidden_except = { ["~/.ssh"] = { "a/b" } } },
            { hidden_except = { ["~/.ssh"] = { 1 } } },
        } do
            assert.is_not_nil(profile.validate(bad))
        end
        assert.is_nil(profile.validate({ hidden_except = { ["/srv/keys"] = { "*.pub", "README" } } }))
        local m = profile.merge({ hidden_except = { ["~/.ssh"] = { "config" }, ["/a"] = { "x" } } },
            { hidden_except = { ["~/.ssh"] = { "*.pub" } } })
        assert.are.same({ "*.pub" }, m.hidden_except["~/.ssh"])
        assert.are.same({ "x" }, m.hidden_except["/a"])
    end)

    it("coding holds agents' and editors' own configuration read-only in the workspace", function()
        local r = profile.resolve("coding", load_profile)
        for _, p in ipairs { ".claude", ".mcp.json", ".codex", ".cursor", ".gemini",
                             ".vscode/tasks.json", ".vscode/settings.json", ".vscode/launch.json",
                             ".idea/workspace.xml", ".idea/runConfigurations", ".devcontainer" } do
            assert.is_true(has(r.readonly_in_workspace, p), p)
        end
        -- what a person runs deliberately stays writable: the workspace's trust bridge
        for _, p in ipairs { "Makefile", "package.json", ".envrc", ".vscode", ".idea" } do
            assert.is_false(has(r.readonly_in_workspace, p), p)
        end
    end)

    it("coding hides the credential stores an attack review found readable", function()
        local r = profile.resolve("coding", load_profile)
        for _, p in ipairs {
            "~/.config/git/credentials", "~/.pgpass", "~/.cargo/credentials", "~/.cargo/credentials.toml",
            "~/.vault-token", "~/.config/containers/auth.json", "~/.terraform.d/credentials.tfrc.json",
            "~/.gem/credentials", "~/.config/hub", "~/.local/share/keyrings", "~/.password-store",
            "~/.m2/settings.xml", "~/.m2/settings-security.xml", "~/.config/rclone",
            "~/.codex/auth.json", "~/.claude/.credentials.json", "~/.gemini/oauth_creds.json",
            "~/.config/github-copilot",
        } do
            assert.is_true(has(r.hidden, p), p)
        end
        -- the files these variables name are hidden (the engine reads them: lua_decide.c)
        for _, v in ipairs { "GOOGLE_APPLICATION_CREDENTIALS", "AWS_SHARED_CREDENTIALS_FILE", "KUBECONFIG",
                             "PGPASSFILE" } do
            assert.is_true(has(r.env.hide_paths_in, v), v)
        end
        assert.is_true(r.env.strip_url_passwords)
    end)

    it("env.strip_url_passwords and env.hide_paths_in are validated", function()
        assert.is_nil(profile.validate({ env = { strip_url_passwords = false, hide_paths_in = { "X" } } }))
        assert.are.same({ "env.strip_url_passwords", "expected a boolean, got integer" },
            { profile.validate({ env = { strip_url_passwords = 1 } }) })
        assert.are.same({ "env.hide_paths_in", "expected a list of strings, got string" },
            { profile.validate({ env = { hide_paths_in = "GOOGLE_APPLICATION_CREDENTIALS" } }) })
        -- extends appends to the list
        local merged = profile.merge({ env = { hide_paths_in = { "A" } } }, { env = { hide_paths_in = { "B" } } })
        assert.are.same({ "A", "B" }, merged.env.hide_paths_in)
    end)

    it("strict tightens coding", function()
        local r = profile.resolve("strict", load_profile)
        assert.is_true(r.seccomp.block_unix_sockets)
        assert.are.equal(1024, r.rlimits.nofile)
        assert.are.equal(1024 * 1024 * 1024, r.rlimits.fsize)
        assert.are.equal(8 * 1024 * 1024 * 1024, r.rlimits.as)
        assert.is_nil(r.rlimits.nproc) -- RLIMIT_NPROC counts the user's host processes
        for _, p in ipairs { "~/.config", "~/.local/share/keyrings", "~/.bash_history" } do
            assert.is_true(has(r.hidden, p), p)
        end
    end)

    it("coding's home is copy-on-write, strict's discarded, readonly's kept like coding's", function()
        assert.are.equal("overlay", profile.resolve("coding", load_profile).home)
        assert.are.equal("overlay", profile.resolve("ops", load_profile).home)
        assert.are.equal("overlay", profile.resolve("readonly", load_profile).home)
        assert.are.equal("tmpfs", profile.resolve("strict", load_profile).home)
        assert.is_nil(profile.validate({ home = "readonly" }))
        local kp, msg = profile.validate({ home = "writable" })
        assert.are.equal("home", kp)
        assert.truthy(msg:find("overlay", 1, true))
    end)

    it("root's home is a home like any other when it is the caller's: credentials hidden, not /root", function()
        caller_home = "/root"
        local ok_, r = pcall(profile.resolve, "coding", load_profile)
        caller_home = "/home/u"
        assert.is_true(ok_, r)
        assert.is_false(has(r.hidden, "/root"))
        for _, p in ipairs { "~/.aws", "~/.gnupg", "~/.config/gh", "~/.netrc", "~/.docker",
                             "~/.kube", "~/.npmrc", "~/.pypirc", "~/.git-credentials",
                             "~/.config/gcloud", "~/.azure" } do
            assert.is_true(has(r.hidden, p), p)
        end
        -- another caller's profile still hides all of /root
        assert.is_true(has(profile.resolve("strict", load_profile).hidden, "/root"))
    end)

    it("readonly makes the workspace read-only", function()
        assert.is_true(profile.resolve("readonly", load_profile).workspace_readonly)
    end)

    it("ops asks before running a refused command outside the sandbox", function()
        local r = profile.resolve("ops", load_profile)
        assert.is_true(r.escalation.ask_sandbox_off)
        assert.are.equal("5m", r.escalation.permission_timeout)
    end)
end)

describe("coding: network rules", function()
    local allowlist = require("cordon.allowlist")

    it("denies the cloud metadata endpoints, IPv4 and IPv6, whatever an allow rule says", function()
        local r = profile.resolve("coding", load_profile)
        r.network.allow = { "*:80", "*:443", "tcp://*:80" }
        local m = allowlist.for_profile(r)
        for _, dest in ipairs { "169.254.169.254", "169.254.43518", "[::ffff:169.254.169.254]",
                                "[fd00:ec2::254]", "fd00:ec2:0::254", "169.254.170.2", "169.254.170.23",
                                "[fd00:ec2::23]", "[fd20:ce::254]", "metadata.google.internal",
                                "METADATA.google.internal.", "100.100.100.200", "0x646464c8" } do
            for _, kind in ipairs { "http", "connect", "socks" } do
                local d = m:decide(kind, dest, 80)
                assert.are.equal("deny", d.verdict, kind .. " " .. dest)
                assert.truthy(d.rule, kind .. " " .. dest .. ": denied by a rule, never asked")
            end
        end
        assert.are.equal("allow", m:decide("connect", "example.com", 443).verdict)
    end)

    it("network.wildcard_special is off, and validated as a boolean", function()
        local r = profile.resolve("coding", load_profile)
        assert.is_false(r.network.wildcard_special)
        assert.is_nil(profile.validate({ network = { wildcard_special = true } }))
        assert.are.same({ "network.wildcard_special", "expected a boolean, got string" },
            { profile.validate({ network = { wildcard_special = "yes" } }) })
    end)
end)

describe("root_only", function()
    it("coding states the rule: hide what only root may read under /etc, /var, /root, ...", function()
        local r = profile.resolve("coding", load_profile)
        assert.is_true(r.root_only.hide)
        assert.are.equal(3, r.root_only.depth)
        for _, d in ipairs { "/etc", "/var", "/root", "/boot", "/opt", "/srv", "/usr/local/etc" } do
            assert.is_true(has(r.root_only.scan, d), d)
        end
    end)

    it("a profile extending coding appends scan roots and visible names", function()
        local merged = profile.merge(profile.resolve("coding", load_profile),
            { root_only = { scan = { "/var/tmp/x" }, visible = { "/etc/ssl/private" } } })
        assert.is_true(has(merged.root_only.scan, "/etc"))
        assert.is_true(has(merged.root_only.scan, "/var/tmp/x"))
        assert.are.same({ "/var/tmp", "/etc/ssl/private" }, merged.root_only.visible)
        assert.is_true(merged.root_only.hide)
    end)

    it("refuses bad values, naming the key", function()
        local cases = {
            { { hide = "yes" }, "root_only.hide", "expected a boolean" },
            { { scan = { "etc" } }, "root_only.scan", "expected an absolute path" },
            { { scan = "/etc" }, "root_only.scan", "expected a list of strings" },
            { { visible = { "~/x" } }, "root_only.visible", "expected an absolute path" },
            { { depth = 0 }, "root_only.depth", "expected an integer, 1 to 16" },
            { { depth = 17 }, "root_only.depth", "expected an integer, 1 to 16" },
            { { depth = 2.5 }, "root_only.depth", "expected an integer, 1 to 16" },
            { { follow = true }, "root_only.follow", "unknown key" },
        }
        for _, c in ipairs(cases) do
            local kp, msg = profile.validate({ root_only = c[1] })
            assert.are.equal(c[2], kp)
            assert.is_truthy(msg and msg:find(c[3], 1, true), tostring(msg))
        end
        assert.is_nil(profile.validate({ root_only = { hide = false, depth = 16, scan = {}, visible = { "/etc/x" } } }))
    end)
end)

describe("limits", function()
    it("coding bounds pids, /tmp and /dev/shm, and leaves memory unset", function()
        local r = profile.resolve("coding", load_profile)
        assert.are.same({ pids = 4096, tmp_size = "2G", shm_size = "512M" }, r.limits)
    end)

    it("strict lowers them and bounds memory; a profile may lift them by name", function()
        local r = profile.resolve("strict", load_profile)
        assert.are.same({ pids = 1024, memory = "8G", tmp_size = "1G", shm_size = "256M" }, r.limits)
        assert.is_nil(profile.validate({ limits = { pids = "unlimited", memory = "unlimited" } }))
    end)

    it("accepts sizes as bytes or with K, M, G, T", function()
        for _, v in ipairs { 1, 4096, "4096", "512K", "512M", "2G", "1T", "1024T" } do
            assert.is_nil(profile.validate({ limits = { tmp_size = v } }), tostring(v))
        end
    end)

    it("refuses bad values, naming the key", function()
        local cases = {
            { { pids = 0 }, "limits.pids", "expected an integer >= 1 or \"unlimited\", got integer" },
            { { pids = 1.5 }, "limits.pids", "expected an integer >= 1 or \"unlimited\", got float" },
            { { pids = "many" }, "limits.pids", "expected an integer >= 1 or \"unlimited\", got string" },
            { { tmp_size = 0 }, "limits.tmp_size", "got integer" },
            { { tmp_size = "0M" }, "limits.tmp_size", "got string" },
            { { tmp_size = "2g" }, "limits.tmp_size", "got string" },
            { { tmp_size = "2GB" }, "limits.tmp_size", "got string" },
            { { tmp_size = "-1" }, "limits.tmp_size", "got string" },
            { { tmp_size = "unlimited" }, "limits.tmp_size", "got string" }, -- tmpfs size=0 is no limit
            { { shm_size = "2048T" }, "limits.shm_size", "got string" },    -- above 1 PiB
            { { shm_size = true }, "limits.shm_size", "got boolean" },
            { { memory = "lots" }, "limits.memory", "or \"unlimited\", got string" },
            { { swap = "1G" }, "limits.swap", "unknown key" },
        }
        for _, c in ipairs(cases) do
            local kp, msg = profile.validate({ limits = c[1] })
            assert.are.equal(c[2], kp)
            assert.is_truthy(msg and msg:find(c[3], 1, true), tostring(msg))
        end
    end)

    it("a bad value is an error naming the file and the line", function()
        local src = table.concat({
            "return {",
            "    extends = \"coding\",",
            "    limits = {",
            "        pids = 64,",
            "        tmp_size = \"2 GB\",",
            "    },",
            "}",
        }, "\n")
        local function loader(name)
            if name == "x" then return assert(load(src, "=mine", "t", {}))(), "/p/mine.lua", src end
            return load_profile(name)
        end
        local ok, err = pcall(profile.resolve, "x", loader)
        assert.is_false(ok)
        assert.are.equal("/p/mine.lua:5: key 'limits.tmp_size': expected a size, 1 byte to 1 PiB: bytes, "
            .. "or \"512M\", \"2G\" (K, M, G, T), got string", err)
    end)
end)
