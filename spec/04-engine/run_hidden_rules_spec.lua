-- spec/04-engine/run_hidden_rules_spec.lua — secrets hidden by rule, not by name
-- (engine/sandbox/hide.h; profile keys hidden and hidden_except): ~/.ssh shows only
-- known_hosts*, config, config.d/ and *.pub, and a key the person makes on the host while a
-- session runs, under any name, is missing to the next exec; a hidden path that is a symbolic
-- link (a home managed by stow) hides its target too, also one made after the start; --hide
-- of a path in a workspace under the host's /tmp holds and creates nothing. Each shows the
-- secret read once with its protection off (a profile that shows every name, no --hide).
-- Drives the built binary ($CORDON_BIN) with a real home, as root and as nobody (65534).
local h = require("spec.helpers")

local NOBODY = 65534

local function chown(uid, path)
    if uid then h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(path))) end
end

-- A home holding a real-looking ~/.ssh, a stow-managed ~/.aws (a link into ~/dotfiles) and a
-- ~/.kube link whose target does not exist yet. Returns home and the secret marker.
local function ssh_home(uid)
    local home = h.tmpdir()
    local secret = "cordon-spec-secret-" .. h.token()
    h.sh_ok("chmod 755 " .. h.quote(home) .. " && mkdir -m 700 " .. h.quote(home .. "/.ssh")
        .. " && mkdir -p " .. h.quote(home .. "/.ssh/config.d") .. " " .. h.quote(home .. "/dotfiles/aws"))
    h.write_file(home .. "/.ssh/known_hosts", "127.0.0.2 ssh-ed25519 AAAAknown\n")
    h.write_file(home .. "/.ssh/known_hosts.old", "old\n")
    h.write_file(home .. "/.ssh/config", "Host spec\n    HostName 127.0.0.2\n")
    h.write_file(home .. "/.ssh/config.d/work.conf", "Host work\n")
    h.write_file(home .. "/.ssh/id_ed25519.pub", "ssh-ed25519 AAAApub spec\n")
    h.write_file(home .. "/.ssh/id_ed25519", secret .. "\n", "600")
    h.write_file(home .. "/dotfiles/aws/credentials", secret .. "\n", "600")
    h.sh_ok(("ln -s dotfiles/aws %s && ln -s dotfiles/kube %s"):format(
        h.quote(home .. "/.aws"), h.quote(home .. "/.kube")))
    chown(uid, home)
    return home, secret
end

-- A profile "open-ssh": coding with every name of ~/.ssh shown (the rule off).
local function open_ssh_profile()
    local cfg = h.profile_dir("open-ssh", 'return { extends = "coding", hidden_except = {\n'
        .. '    ["~/.ssh"] = { "*" },\n} }\n')
    h.sh_ok("chmod -R a+rX " .. h.quote(cfg))
    return cfg
end

describe("secrets hidden by rule", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    for _, uid in ipairs({ false, NOBODY }) do
        local who = uid and "as nobody" or "as root"
        local uidv = uid or nil

        it("~/.ssh shows only known_hosts*, config, config.d and *.pub; a key made on the host "
            .. "while a session runs is missing to the next exec, " .. who, function()
            local home, secret = ssh_home(uidv)
            local ws = h.workspace(nil, uidv)
            local runtime = h.runtime_dir()
            chown(uidv, runtime)
            local env = { XDG_RUNTIME_DIR = runtime }
            local o = { cwd = ws, uid = uidv, home = home, env = env }
            local name = "hidden-rules-" .. h.token()
            local r = h.cordon({ "session", "start", name, "--detach" }, o)
            h.defer(function() h.cordon({ "session", "stop", name }, o) end)
            assert.are.equal(0, r.code, h.describe(r))
            local function exec(cmd) return h.cordon({ "exec", name, "--", cmd }, o) end

            r = exec("ls -A ~/.ssh; cat ~/.ssh/known_hosts ~/.ssh/config.d/work.conf ~/.ssh/id_ed25519.pub; "
                .. "cat ~/.ssh/id_ed25519 2>&1")
            assert.are.equal("config\nconfig.d\nid_ed25519.pub\nknown_hosts\nknown_hosts.old\n"
                .. "127.0.0.2 ssh-ed25519 AAAAknown\nHost work\nssh-ed25519 AAAApub spec\n"
                .. "cat: " .. home .. "/.ssh/id_ed25519: No such file or directory\n", r.stdout, h.describe(r))

            -- the person makes a key, and a link's target, on the host while the session runs
            h.write_file(home .. "/.ssh/deploy_github", secret .. "\n", "600")
            h.sh_ok("mkdir -p " .. h.quote(home .. "/dotfiles/kube"))
            h.write_file(home .. "/dotfiles/kube/config", secret .. "\n", "600")
            chown(uidv, home)
            r = exec("cat ~/.ssh/deploy_github ~/.kube/config ~/dotfiles/kube/config 2>&1; ls -A ~/.ssh")
            h.hasnt(r.stdout, secret, r)
            local _, missing = r.stdout:gsub("No such file or directory", "")
            assert.are.equal(3, missing, h.describe(r))
            h.hasnt(r.stdout, "deploy_github\n", r)
            -- a run that fails on it gets one cordon line naming it
            r = h.run_sh("cat ~/.ssh/deploy_github", { workspace = ws, uid = uidv, home = home })
            assert.are.equal(1, r.code, h.describe(r))
            local _, lines = r.stderr:gsub("cordon: [^\n]*/%.ssh/deploy_github is hidden by the profile", "")
            assert.are.equal(1, lines, h.describe(r))

            -- with every name of ~/.ssh shown (the rule off), the same key is read
            local cfg = open_ssh_profile()
            r = h.run_sh("cat ~/.ssh/deploy_github", { workspace = ws, uid = uidv, home = home,
                flags = { "--profile", "open-ssh" }, env = { XDG_CONFIG_HOME = cfg } })
            assert.are.equal(0, r.code, h.describe(r))
            h.has(r.stdout, secret, r)
        end)

        it("a hidden path that is a link (stow) hides its target too, and ~/.ssh's rule holds, "
            .. "in every home mode, "
            .. who, function()
            local home, secret = ssh_home(uidv)
            local ws = h.workspace(nil, uidv)
            -- outside, the secret is read through the link and at its target
            local out = h.sh_ok((uidv and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uidv, uidv) or "")
                .. "cat " .. h.quote(home .. "/.aws/credentials") .. " " .. h.quote(home .. "/dotfiles/aws/credentials"))
            assert.are.equal(secret .. "\n" .. secret .. "\n", out)
            for _, mode in ipairs({ "overlay", "readonly", "tmpfs" }) do
                local r = h.run_sh("ls -A ~/.ssh | tr '\\n' ' '; echo; "
                    .. "cat ~/.aws/credentials ~/dotfiles/aws/credentials 2>&1; ls -A ~/dotfiles",
                    { workspace = ws, uid = uidv, home = home, flags = { "--home", mode } })
                -- the rule for ~/.ssh holds in this home mode as well
                assert.matches("^config config.d id_ed25519.pub known_hosts known_hosts.old \n", r.stdout)
                h.hasnt(r.stdout, secret, r)
                local _, missing = r.stdout:gsub("No such file or directory", "")
                assert.are.equal(2, missing, mode .. "\n" .. h.describe(r))
                -- the folder shows (ls succeeds), the hidden target in it does not
                assert.are.equal(0, r.code, h.describe(r))
                h.hasnt(r.stdout, "aws\n", r)
            end
        end)

        it("a ~/.ssh managed by stow is ruled where it leads; a link a command puts in its place "
            .. "in the private home shows nothing of the host's, " .. who, function()
            local home, secret = ssh_home(uidv)
            h.sh_ok(("mv %s %s && ln -s dotfiles/ssh %s"):format(h.quote(home .. "/.ssh"),
                h.quote(home .. "/dotfiles/ssh"), h.quote(home .. "/.ssh")))
            chown(uidv, home)
            local ws = h.workspace(nil, uidv)
            local o = { workspace = ws, uid = uidv, home = home }
            local r = h.run_sh("ls -A ~/.ssh/; cat ~/.ssh/id_ed25519 ~/dotfiles/ssh/id_ed25519 2>&1", o)
            assert.are.equal("config\nconfig.d\nid_ed25519.pub\nknown_hosts\nknown_hosts.old\n",
                r.stdout:match("^(.-)cat:"), h.describe(r))
            h.hasnt(r.stdout, secret, r)
            -- a command replaces ~/.ssh in its private home with a link to /: the next run starts,
            -- its ~/.ssh is the command's own link, and the host's key is still not read
            r = h.run_sh("rm -f ~/.ssh && ln -s / ~/.ssh && ls -d ~/.ssh/etc", o)
            assert.are.equal(0, r.code, h.describe(r))
            r = h.run_sh("ls -d ~/.ssh/etc && cat ~/dotfiles/ssh/id_ed25519 2>&1; echo end", o)
            assert.are.equal(0, r.code, h.describe(r))
            h.has(r.stdout, "/.ssh/etc\n", r)
            h.hasnt(r.stdout, secret, r)
            h.has(r.stdout, "No such file or directory", r)
        end)

        it("--hide of a path in a workspace under the host's /tmp holds and creates nothing, "
            .. who, function()
            local ws = h.workspace("/tmp", uidv)
            h.sh_ok("mkdir " .. h.quote(ws .. "/keys"))
            h.write_file(ws .. "/.env", "CORDON_SPEC_ENV_SECRET=1\n")
            h.write_file(ws .. "/keys/deploy", "CORDON_SPEC_KEY_SECRET=1\n")
            chown(uidv, ws)
            local o = { workspace = ws, uid = uidv, home = uidv and h.secret_home(uidv) or nil }
            -- without --hide the command reads both
            local r = h.run_sh("cat .env keys/deploy", o)
            assert.are.equal(0, r.code, h.describe(r))
            h.has(r.stdout, "CORDON_SPEC_ENV_SECRET", r)
            local before = h.tree(ws)
            o.flags = { "--hide", ws .. "/.env", "--hide", ws .. "/keys" }
            r = h.run_sh("cat .env keys/deploy 2>&1; echo overwritten > .env; echo rc=$?; "
                .. "ls keys 2>&1; touch keys/new; echo rc=$?", o)
            h.hasnt(r.stdout, "SECRET", r)
            h.hasnt(r.stdout, "rc=0", r)
            local _, missing = (r.stdout .. r.stderr):gsub("No such file or directory", "")
            assert.are.equal(4, missing, h.describe(r)) -- cat twice, the write, the touch
            assert.are.equal(before, h.tree(ws))
            assert.are.equal("CORDON_SPEC_ENV_SECRET=1\n", h.read_file(ws .. "/.env"))
        end)
    end
end)
