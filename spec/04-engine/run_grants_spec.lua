-- spec/04-engine/run_grants_spec.lua — agent sockets granted by name (profile key `grants`,
-- docs/grants.md): the caller's ssh-agent with --allow-ssh-agent, gpg-agent with
-- --allow-gpg-agent (a signed commit and tag, verified outside with git verify-commit and
-- verify-tag; the private keys never readable inside), a profile's grants.sockets entry (exactly
-- that socket, at its fixed path), and the refusals: a missing source stops the sandbox with one
-- line, a signing failure without the grant gets one line naming the flag.
-- Every agent is a real one the spec starts, with a throwaway key, and kills by its pid. The
-- agents' sockets live under the host's /tmp (where ssh-agent puts its own), which the sandbox
-- replaces: without a grant nothing there is reachable. Drives the built binary ($CORDON_BIN);
-- as root, and as nobody (65534) where it applies.
local h = require("spec.helpers")

local NOBODY = 65534

local function as(uid, cmd)
    if not uid then return cmd end
    return ("setpriv --reuid=%d --regid=%d --clear-groups sh -c %s"):format(uid, uid, h.quote(cmd))
end

-- A directory under the host's /tmp for an agent's socket, owned by uid when given.
local function socket_dir(uid)
    local dir = h.tmpdir("/tmp")
    h.sh_ok("chmod 700 " .. h.quote(dir))
    if uid then h.sh_ok(("chown %d:%d %s"):format(uid, uid, h.quote(dir))) end
    return dir
end

-- A real ssh-agent holding one throwaway key. Returns its socket and the key's comment.
local function ssh_agent(uid)
    local dir = socket_dir(uid)
    local sock, key = dir .. "/agent.sock", dir .. "/id_ed25519"
    local comment = "cordon-grant-" .. h.token()
    h.sh_ok(as(uid, ("ssh-keygen -q -t ed25519 -N '' -C %s -f %s"):format(comment, h.quote(key))))
    -- setpriv execs the agent, so the pid h.spawn kills at clean-up is the agent's own
    h.spawn((uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid) or "")
        .. "ssh-agent -D -a " .. h.quote(sock))
    assert(h.wait_for(function() return h.sh("test -S " .. h.quote(sock)).code == 0 end, 10),
        "ssh-agent did not start")
    h.sh_ok(as(uid, ("SSH_AUTH_SOCK=%s ssh-add -q %s"):format(h.quote(sock), h.quote(key))))
    return sock, comment
end

-- A real gpg-agent for a fresh GNUPGHOME holding one signing key without a passphrase.
-- Returns the home and the key's fingerprint.
local function gpg_agent(uid)
    local gnupg = socket_dir(uid)
    local g = "GNUPGHOME=" .. h.quote(gnupg) .. " "
    h.sh_ok(as(uid, g .. "gpg-agent --daemon >/dev/null 2>&1"))
    local pid = h.sh_ok(as(uid, g .. "gpg-connect-agent 'getinfo pid' /bye")):match("D (%d+)")
    assert(pid, "gpg-agent did not start")
    h.defer(function() os.execute("kill -9 " .. pid .. " 2>/dev/null") end)
    h.sh_ok(as(uid, g .. "gpg --batch --passphrase '' --quick-gen-key "
        .. "'Cordon Grant <grant@cordon.invalid>' ed25519 sign never 2>/dev/null"))
    local fpr = h.sh_ok(as(uid, g .. "gpg --with-colons -K")):match("\nfpr:+(%x+):")
    assert(fpr, "no key made")
    return gnupg, fpr
end

-- A workspace holding a git repository whose commits and tags are signed with fpr.
local function signing_repo(uid, fpr)
    local ws = h.workspace(nil, uid)
    h.sh_ok(as(uid, ("cd %s && git init -q . && git config user.name Grant && git config "
        .. "user.email grant@cordon.invalid && git config user.signingkey %s && echo a > f && "
        .. "git add f"):format(h.quote(ws), fpr)))
    return ws
end

describe("cordon run: agent sockets granted by name", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    for _, uid in ipairs({ false, NOBODY }) do
        local who = uid and "as nobody" or "as root"

        it("--allow-ssh-agent lists the agent's key inside; without it no agent is there, " .. who, function()
            local uidv = uid or nil
            local sock, comment = ssh_agent(uidv)
            local ws = h.workspace(nil, uidv)
            local o = { workspace = ws, uid = uidv, env = { SSH_AUTH_SOCK = sock },
                        home = uidv and h.secret_home(uidv) or nil }
            o.flags = { "--allow-ssh-agent" }
            local r = h.run_sh('echo "sock=$SSH_AUTH_SOCK"; ssh-add -l', o)
            assert.are.equal(0, r.code, h.describe(r))
            assert.matches("sock=/run/cordon/grants/ssh_agent.sock", r.stdout, 1, true)
            assert.matches(comment, r.stdout, 1, true)
            o.flags = nil
            r = h.run_sh('echo "sock=[${SSH_AUTH_SOCK-unset}]"; ssh-add -l; echo "rc=$?"; '
                .. "ls " .. h.quote(sock) .. " 2>&1", o)
            assert.matches("sock=[unset]", r.stdout, 1, true)
            assert.matches("rc=2", r.stdout, 1, true)
            assert.not_matches(comment, r.stdout, 1, true)
            assert.matches("No such file", r.stdout, 1, true) -- the host's /tmp is not there
            assert.matches("--allow-ssh-agent", r.stderr, 1, true)
        end)

        it("--allow-gpg-agent signs a commit and a tag that git verifies outside; the private "
            .. "keys are never readable inside, " .. who, function()
            local uidv = uid or nil
            local gnupg, fpr = gpg_agent(uidv)
            local ws = signing_repo(uidv, fpr)
            local o = { workspace = ws, uid = uidv, env = { GNUPGHOME = gnupg },
                        home = uidv and h.secret_home(uidv) or nil, flags = { "--allow-gpg-agent" } }
            local r = h.run_sh('echo "home=$GNUPGHOME"; echo "list=$(ls -A "$GNUPGHOME" | tr "\\n" " ")"; '
                .. "ls " .. h.quote(gnupg .. "/private-keys-v1.d") .. ' 2>&1; '
                .. 'cat "$GNUPGHOME"/private-keys-v1.d/* 2>&1; '
                .. "git commit -q -S -m signed && git tag -s v1 -m v1 && echo SIGNED", o)
            assert.are.equal(0, r.code, h.describe(r))
            assert.matches("home=/run/cordon/gnupg", r.stdout, 1, true)
            assert.matches("SIGNED", r.stdout, 1, true)
            local list = r.stdout:match("list=([^\n]*)")
            assert.matches("S.gpg-agent", list, 1, true)
            assert.not_matches("private", list, 1, true)
            local _, missing = r.stdout:gsub("No such file or directory", "")
            assert.are.equal(2, missing, h.describe(r))
            local g = "GNUPGHOME=" .. h.quote(gnupg) .. " "
            h.sh_ok(as(uidv, g .. "git -C " .. h.quote(ws) .. " verify-commit HEAD"))
            h.sh_ok(as(uidv, g .. "git -C " .. h.quote(ws) .. " verify-tag v1"))

            -- without the grant: the commit fails, and one cordon line names the flag
            h.sh_ok(as(uidv, "cd " .. h.quote(ws) .. " && echo b >> f && git add f"))
            o.flags = nil
            r = h.run_sh("git commit -q -S -m unsigned", o)
            assert.are_not.equal(0, r.code, h.describe(r))
            assert.matches("gpg failed to sign the data", r.stderr, 1, true)
            local _, lines = r.stderr:gsub("cordon: [^\n]*%-%-allow%-gpg%-agent", "")
            assert.are.equal(1, lines, h.describe(r))
        end)
        it("--allow-gpg-agent binds the agent's restricted socket: decrypt and clearsign work inside, "
            .. "exporting or deleting a secret key is refused, " .. who, function()
            local uidv = uid or nil
            local gnupg, fpr = gpg_agent(uidv)
            local g = "GNUPGHOME=" .. h.quote(gnupg) .. " "
            -- outside, through the main socket, the key without a passphrase exports whole:
            -- what a command inside would get with the main socket bound in
            local out = h.sh_ok(as(uidv, g .. "gpg --batch --armor --pinentry-mode loopback "
                .. "--passphrase '' --export-secret-keys " .. fpr .. " 2>/dev/null"))
            assert.matches("BEGIN PGP PRIVATE KEY BLOCK", out, 1, true)
            local ws = h.workspace(nil, uidv)
            -- an encryption subkey, and a message to it made outside
            h.sh_ok(as(uidv, g .. "gpg --batch --passphrase '' --quick-add-key " .. fpr
                .. " cv25519 encr never 2>/dev/null"))
            h.sh_ok(as(uidv, "echo cordon-decrypted | " .. g .. "gpg --batch --trust-model always -e -r "
                .. fpr .. " -o " .. h.quote(ws .. "/msg.gpg") .. " 2>/dev/null"))
            local o = { workspace = ws, uid = uidv, env = { GNUPGHOME = gnupg },
                        home = uidv and h.secret_home(uidv) or nil, flags = { "--allow-gpg-agent" } }
            local r = h.run_sh("gpg --batch -q -d msg.gpg; "
                .. "echo cordon-clearsign | gpg --batch --clearsign > signed.asc && echo SIGNED; "
                .. "gpg --batch --armor --export-secret-keys " .. fpr .. "; echo export=$?; "
                .. "gpg --batch --armor --pinentry-mode loopback --passphrase '' "
                .. "--export-secret-keys " .. fpr .. "; echo loopback=$?; "
                .. "gpg --batch --yes --delete-secret-keys " .. fpr .. "; echo delete=$?", o)
            assert.are.equal(0, r.code, h.describe(r))
            assert.matches("^cordon%-decrypted\n", r.stdout)
            assert.matches("SIGNED", r.stdout, 1, true)
            assert.not_matches("PRIVATE KEY", r.stdout, 1, true)
            assert.matches("Forbidden", r.stderr, 1, true)
            assert.matches("delete=2", r.stdout, 1, true)
            -- the signature verifies outside, and the key is still there
            h.sh_ok(as(uidv, g .. "gpg --batch --verify " .. h.quote(ws .. "/signed.asc")))
            h.sh_ok(as(uidv, g .. "gpg --batch -K " .. fpr))
        end)

        it("a granted socket is the one captured at start: a link to another socket put at its "
            .. "path later is not connected to, " .. who, function()
            local uidv = uid or nil
            local dir = socket_dir(uidv)
            local server = "import socket,sys,os\n"
                .. "s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)\n"
                .. "while True:\n  c,_=s.accept(); c.sendall(sys.argv[2].encode()); c.close()\n"
            h.write_file(dir .. "/server.py", server)
            local a, b = dir .. "/a.sock", dir .. "/b.sock"
            -- setpriv execs the server, so the pid is the server's own
            local pre = uidv and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uidv, uidv) or ""
            local pid_a = h.spawn(pre .. h.join({ h.python, dir .. "/server.py", a, "HELLO-a" }))
            h.spawn(pre .. h.join({ h.python, dir .. "/server.py", b, "HELLO-b" }))
            assert(h.wait_for(function()
                return h.sh(("test -S %s && test -S %s"):format(h.quote(a), h.quote(b))).code == 0
            end, 10), "the socket servers did not start")
            local cfg = h.profile_dir("granted", ('return { extends = "coding", grants = { sockets = {\n'
                .. '    one = { from = %q },\n} } }\n'):format(a))
            if uidv then h.sh_ok(("chmod -R a+rX %s"):format(h.quote(cfg))) end
            local ws = h.workspace(nil, uidv)
            local client = "import socket,sys\n"
                .. "try:\n  s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('got', s.recv(64).decode() or 'nothing')\n"
                .. "except OSError as e: print('refused', e.errno)\n"
            h.write_file(ws .. "/client.py", client)
            local q = h.quote
            -- connects once, waits for the host to swap the path, connects again
            local script = ("%s client.py /run/cordon/grants/one.sock; touch ready; "
                .. "for i in $(seq 600); do [ -e go ] && break; sleep 0.1; done; "
                .. "%s client.py /run/cordon/grants/one.sock"):format(h.python, h.python)
            local line = h.command_line({ "run", "--workspace", ws, "--profile", "granted", "--",
                "/bin/bash", "-c", script }, { uid = uidv, home = uidv and h.secret_home(uidv) or nil,
                env = { XDG_CONFIG_HOME = cfg } })
            -- the swap: server a is gone, its path a link to b's socket
            local r = h.sh(("cd %s && { %s & } ; for i in $(seq 600); do [ -e %s/ready ] && break; "
                .. "sleep 0.1; done; kill -9 %d; rm -f %s; ln -s %s %s; touch %s/go; wait")
                :format(q(ws), line, q(ws), pid_a, q(a), q(b), q(a), q(ws)))
            assert.are.equal(0, r.code, h.describe(r))
            assert.matches("^got HELLO%-a\n", r.stdout)
            -- refused, or (relayed) accepted by the relay and closed at once with nothing sent
            local second = r.stdout:match("\n([^\n]*)\n$")
            assert.is_truthy(second == "got nothing" or (second or ""):match("^refused %d+$"), h.describe(r))
            assert.not_matches("HELLO-b", r.stdout, 1, true)
            if not uidv then -- a root caller's grant is relayed: the relay says why, in one line
                local _, lines = r.stderr:gsub("cordon: grant [^\n]*captured at start", "")
                assert.are.equal(1, lines, h.describe(r))
            end
            -- outside, the path now leads to b: what a relay by path would have reached
            assert.matches("HELLO-b", h.sh_ok(as(uidv, h.join({ h.python, ws .. "/client.py", a }))), 1, true)
        end)
    end

    it("--allow-gpg-agent finds the agent of the default home (~/.gnupg, GNUPGHOME unset), "
        .. "which stays hidden", function()
        local home = h.tmpdir()
        local gnupg = home .. "/.gnupg"
        h.sh_ok("mkdir -m 700 " .. h.quote(gnupg))
        local g = "HOME=" .. h.quote(home) .. " "
        h.sh_ok(g .. "gpg-agent --daemon >/dev/null 2>&1")
        local pid = h.sh_ok(g .. "gpg-connect-agent 'getinfo pid' /bye"):match("D (%d+)")
        assert(pid, "gpg-agent did not start")
        h.defer(function() os.execute("kill -9 " .. pid .. " 2>/dev/null") end)
        h.sh_ok(g .. "gpg --batch --passphrase '' --quick-gen-key 'Cordon Home <home@cordon.invalid>' "
            .. "ed25519 sign never 2>/dev/null")
        local fpr = h.sh_ok(g .. "gpg --with-colons -K"):match("\nfpr:+(%x+):")
        local ws = signing_repo(nil, fpr)
        local r = h.run_sh("ls ~/.gnupg 2>&1; git commit -q -S -m signed && echo SIGNED",
            { workspace = ws, home = home, unset = { "GNUPGHOME" }, flags = { "--allow-gpg-agent" } })
        assert.are.equal(0, r.code, h.describe(r))
        assert.matches("No such file or directory", r.stdout, 1, true)
        assert.matches("SIGNED", r.stdout, 1, true)
        h.sh_ok(g .. "git -C " .. h.quote(ws) .. " verify-commit HEAD")
    end)

    it("a profile's grants.sockets entry exposes exactly that socket, at its fixed path", function()
        local dir = socket_dir()
        local server = "import socket,sys,os\n"
            .. "s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)\n"
            .. "while True:\n  c,_=s.accept(); c.sendall(sys.argv[2].encode()); c.close()\n"
        h.write_file(dir .. "/server.py", server)
        for _, name in ipairs({ "a", "b" }) do
            h.spawn(h.join({ h.python, dir .. "/server.py", dir .. "/" .. name .. ".sock", "HELLO-" .. name }))
        end
        assert(h.wait_for(function()
            return h.sh(("test -S %s/a.sock && test -S %s/b.sock"):format(dir, dir)).code == 0
        end, 10), "the socket servers did not start")
        local cfg = h.profile_dir("granted", ('return { extends = "coding", grants = { sockets = {\n'
            .. '    one = { from = %q, env = "ONE_SOCK" },\n} } }\n'):format(dir .. "/a.sock"))
        local client = "import socket,sys\n"
            .. "for p in sys.argv[1:]:\n"
            .. "  try:\n    s=socket.socket(socket.AF_UNIX); s.connect(p); print(p, s.recv(64).decode())\n"
            .. "  except OSError as e: print(p, 'refused', e.errno)\n"
        local ws = h.workspace()
        h.write_file(ws .. "/client.py", client)
        local r = h.run_sh(('echo "one=$ONE_SOCK"; ls -A /run/cordon/grants; %s client.py "$ONE_SOCK" %s %s')
            :format(h.python, h.quote(dir .. "/a.sock"), h.quote(dir .. "/b.sock")),
            { workspace = ws, flags = { "--profile", "granted" }, env = { XDG_CONFIG_HOME = cfg } })
        assert.are.equal(0, r.code, h.describe(r))
        assert.matches("one=/run/cordon/grants/one.sock\none.sock\n", r.stdout, 1, true)
        assert.matches("/run/cordon/grants/one.sock HELLO-a", r.stdout, 1, true)
        assert.matches(dir .. "/a.sock refused", r.stdout, 1, true)
        assert.matches(dir .. "/b.sock refused", r.stdout, 1, true)
        assert.not_matches("HELLO-b", r.stdout, 1, true)
    end)

    it("a grant that cannot be given stops the sandbox with one line", function()
        local ws = h.workspace()
        local r = h.run_sh("echo RAN", { workspace = ws, flags = { "--allow-ssh-agent" },
                                          unset = { "SSH_AUTH_SOCK" } })
        assert.are.equal(125, r.code, h.describe(r))
        assert.not_matches("RAN", r.stdout, 1, true)
        assert.matches("SSH_AUTH_SOCK is not set", r.stderr, 1, true)
        -- a file that is no socket
        r = h.run_sh("echo RAN", { workspace = ws, flags = { "--allow-ssh-agent" },
                                    env = { SSH_AUTH_SOCK = "/etc/hostname" } })
        assert.are.equal(125, r.code, h.describe(r))
        assert.matches("/etc/hostname is not a socket", r.stderr, 1, true)
        -- no gpg-agent running for that home
        local gnupg = socket_dir()
        h.sh_ok("touch " .. h.quote(gnupg .. "/pubring.kbx"))
        r = h.run_sh("echo RAN", { workspace = ws, flags = { "--allow-gpg-agent" },
                                    env = { GNUPGHOME = gnupg } })
        assert.are.equal(125, r.code, h.describe(r))
        assert.matches("no gpg-agent is listening", r.stderr, 1, true)
        -- a profile's entry whose socket is missing, and a bad entry (file:line)
        local cfg = h.profile_dir("granted", 'return { extends = "coding", grants = { sockets = {\n'
            .. '    gone = { from = "/tmp/cordon-no-such.sock" },\n} } }\n')
        r = h.run_sh("echo RAN", { workspace = ws, flags = { "--profile", "granted" },
                                    env = { XDG_CONFIG_HOME = cfg } })
        assert.are.equal(125, r.code, h.describe(r))
        assert.matches("grants.sockets.gone: /tmp/cordon-no-such.sock: No such file", r.stderr, 1, true)
        cfg = h.profile_dir("granted", 'return { extends = "coding", grants = { sockets = {\n'
            .. '    good = { from = "/x.sock" },\n    bad = { from = "relative.sock" },\n} } }\n')
        r = h.run_sh("echo RAN", { workspace = ws, flags = { "--profile", "granted" },
                                    env = { XDG_CONFIG_HOME = cfg } })
        assert.are.equal(125, r.code, h.describe(r))
        assert.matches("granted.lua:3: key 'grants.sockets.bad': from: expected", r.stderr, 1, true)
    end)

    it("a profile that refuses Unix sockets refuses a grant too, at the start", function()
        local sock = ssh_agent()
        local r = h.run_sh("echo RAN", { workspace = h.workspace(), env = { SSH_AUTH_SOCK = sock },
                                          flags = { "--profile", "strict", "--allow-ssh-agent" } })
        assert.are.equal(125, r.code, h.describe(r))
        assert.matches("seccomp.block_unix_sockets", r.stderr, 1, true)
    end)
end)
