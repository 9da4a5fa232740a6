-- spec/04-engine/run_ssh_spec.lua — ssh and git over ssh from inside `cordon run`, against a
-- real sshd the spec starts on the host's 127.0.0.2 (a stand-in for a remote host) and a free
-- port, with a throwaway host key, a throwaway user key in the workspace and an
-- AuthorizedKeysFile of its own (UsePAM no, StrictModes no; the login account is root).
-- Inside, every ssh goes through `cordon nc` (the sandbox's /etc/ssh/ssh_config sets the
-- ProxyCommand), which the proxy judges by the tcp:// rules. ssh finds ~ in the password
-- database, not in $HOME: the cases that rely on ~/.ssh run as a user the spec creates, whose
-- home is the spec's temp home; the root cases name the known-hosts file with -o.
-- Each case is first shown to work (or fail) outside the sandbox where that makes sense.
-- Needs root (sshd, useradd), /usr/sbin/sshd, ssh, ssh-keygen, git.
local h = require("spec.helpers")

local ok = h.ok

local has = h.has

local hasnt = h.hasnt

local function needs()
    if h.chomp(h.sh_ok("id -u")) ~= "0" then h.skip("needs root to run sshd and to add a user") end
    for _, prog in ipairs({ "/usr/sbin/sshd", "ssh", "ssh-keygen", "git", "useradd" }) do
        if h.sh("command -v " .. prog).code ~= 0 then h.skip("needs " .. prog) end
    end
end

--- A free TCP port on 127.0.0.2 (bound and let go: nothing else on this machine binds there).
local function free_port()
    return tonumber(h.chomp(h.sh_ok(h.python .. " -c " .. h.quote(
        "import socket; s = socket.socket(); s.bind(('127.0.0.2', 0)); print(s.getsockname()[1])"))))
end

--- Starts sshd on 127.0.0.2; returns { dir, port, known (a known_hosts line), repo (a bare
-- repository with one commit), authorized (the AuthorizedKeysFile) }.
local function sshd()
    local dir = h.tmpdir()
    h.sh_ok(("chmod 755 %s && ssh-keygen -q -t ed25519 -N '' -C spec-host -f %s/host_key")
        :format(h.quote(dir), h.quote(dir)))
    local port = free_port()
    local authorized = dir .. "/authorized_keys"
    h.write_file(authorized, "")
    h.write_file(dir .. "/sshd_config", table.concat({
        "Port " .. port, "ListenAddress 127.0.0.2", "HostKey " .. dir .. "/host_key",
        "AuthorizedKeysFile " .. authorized, "UsePAM no", "StrictModes no",
        "PasswordAuthentication no", "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password", "PidFile none", "LogLevel VERBOSE", "" }, "\n"))
    -- sshd's privilege separation directory (Debian makes it at boot, not at install)
    h.sh_ok("mkdir -p /run/sshd && chmod 755 /run/sshd")
    h.spawn(("/usr/sbin/sshd -D -f %s -E %s"):format(h.quote(dir .. "/sshd_config"), h.quote(dir .. "/log")))
    local up = h.wait_for(function()
        return h.sh(("bash -c 'exec 3<>/dev/tcp/127.0.0.2/%d'"):format(port)).code == 0
    end, 10)
    assert(up, "sshd did not start: " .. (h.read_file(dir .. "/log") or ""))
    local pub = h.chomp(h.read_file(dir .. "/host_key.pub")):match("^(%S+ %S+)")
    local repo = dir .. "/repo.git"
    h.sh_ok(("git init -q --bare %s && git init -q %s/seed && cd %s/seed && "
        .. "git -c user.name=spec -c user.email=spec@test commit -q --allow-empty -m outside && "
        .. "git push -q %s HEAD:refs/heads/main && git --git-dir=%s symbolic-ref HEAD refs/heads/main")
        :format(h.quote(repo), h.quote(dir), h.quote(dir), h.quote(repo), h.quote(repo)))
    return { dir = dir, port = port, known = ("[127.0.0.2]:%d %s\n"):format(port, pub), repo = repo,
             authorized = authorized }
end

--- A client: a home with ~/.ssh/known_hosts (known: its content) and a workspace with a user
-- key the server takes. uid: owned by that user. Returns { home, ws, key }.
local function client(s, known, uid)
    local home = h.tmpdir()
    h.sh_ok("chmod 755 " .. h.quote(home) .. " && mkdir -m 700 " .. h.quote(home .. "/.ssh"))
    h.write_file(home .. "/.ssh/known_hosts", known)
    local ws = h.workspace(nil, uid)
    local key = ws .. "/key"
    h.sh_ok(("ssh-keygen -q -t ed25519 -N '' -C spec-user -f %s && cat %s.pub >> %s")
        :format(h.quote(key), h.quote(key), h.quote(s.authorized)))
    if uid then
        h.sh_ok(("chown -R %d:%d %s %s"):format(uid, uid, h.quote(home), h.quote(ws)))
    end
    return { home = home, ws = ws, key = key }
end

--- ssh's options for the root cases: the key, the known-hosts file in the spec's home, strict.
local function ssh_opts(c)
    return ("-i %s -o UserKnownHostsFile=%s/.ssh/known_hosts -o StrictHostKeyChecking=yes "
        .. "-o BatchMode=yes -o ConnectTimeout=20"):format(h.quote(c.key), h.quote(c.home))
end

local function run(c, script, flags, opts)
    opts = opts or {}
    opts.home, opts.workspace, opts.flags = c.home, c.ws, flags
    return h.run_sh(script, opts)
end

local function allow(s)
    return { "--network-allow", "tcp://127.0.0.2:" .. s.port }
end

describe("ssh from the sandbox, as root", function()
    after_each(h.cleanup)

    it("plain ssh reaches the server once tcp://127.0.0.2:PORT is allowed", function()
        needs()
        local s = sshd()
        local c = client(s, s.known)
        local cmd = ("ssh %s -p %d root@127.0.0.2 echo reached"):format(ssh_opts(c), s.port)
        local out = h.sh("cd " .. h.quote(c.ws) .. " && " .. cmd)
        assert.are.equal("reached\n", out.stdout, h.describe(out)) -- outside: the server works
        local r = ok(run(c, cmd, allow(s)))
        assert.are.equal("reached\n", r.stdout)
        -- through cordon nc: the sandbox's ssh_config names it, ssh was not told
        r = ok(run(c, ("ssh -G -p %d 127.0.0.2 | grep -i '^proxycommand'; ssh -G 127.0.0.1 | "
            .. "grep -ci '^proxycommand' || true"):format(s.port)))
        assert.are.equal("proxycommand /run/cordon/cordon nc %h %p\n0\n", r.stdout)
    end)

    it("without the rule ssh fails, and cordon names --network-allow tcp://127.0.0.2:PORT", function()
        needs()
        local s = sshd()
        local c = client(s, s.known)
        local rule = "--network-allow tcp://127.0.0.2:" .. s.port
        local r = run(c, ("ssh %s -p %d root@127.0.0.2 echo reached"):format(ssh_opts(c), s.port),
            { "--network-allow", "127.0.0.2:" .. s.port }) -- an HTTP rule does not let ssh through
        assert.are.equal(255, r.code, h.describe(r))
        hasnt(r, "reached")
        has(r, "cordon nc: the sandbox's network policy does not allow tcp://127.0.0.2:" .. s.port)
        has(r, ("cordon: the sandbox's network policy blocked 127.0.0.2:%d (%s would allow it)")
            :format(s.port, rule))
        hasnt(r, "Accepted publickey")
        assert.falsy((h.read_file(s.dir .. "/log") or ""):find("Accepted publickey", 1, true))
    end)

    it("asked on a terminal (network.ask): the question names tcp://127.0.0.2:PORT, 'c' lets ssh on", function()
        needs()
        local s = sshd()
        local c = client(s, s.known)
        local cmd = ("ssh %s -p %d root@127.0.0.2 echo reached"):format(ssh_opts(c), s.port)
        local argv = { h.python, h.fixtures .. "/engine/egress/answer.py", "c", "40", "--", h.bin, "run",
            "--workspace", c.ws, "--", "/bin/bash", "-c", cmd }
        local r = h.sh(("cd %s && env HOME=%s %s"):format(h.quote(c.ws), h.quote(c.home), h.join(argv)))
        assert.are.equal(0, r.code, h.describe(r))
        has(r, ("wants to reach tcp://127.0.0.2:%d (socks), which no rule allows"):format(s.port))
        has(r, "reached")
    end)

    it("git clone, fetch and push over ssh:// with the caller's GIT_SSH_COMMAND", function()
        needs()
        local s = sshd()
        local c = client(s, s.known)
        local url = ("ssh://root@127.0.0.2:%d%s"):format(s.port, s.repo)
        local r = ok(run(c, ("git clone -q %s clone && cd clone && git log --format=%%s && "
            .. "git -c user.name=spec -c user.email=spec@test commit -q --allow-empty -m inside && "
            .. "git push -q origin HEAD && git fetch -q && git rev-parse HEAD origin/main | uniq | wc -l")
            :format(h.quote(url)), allow(s), { env = { GIT_SSH_COMMAND = "ssh " .. ssh_opts(c) } }))
        assert.are.equal("outside\n1\n", r.stdout)
        assert.are.equal("inside\n", h.sh_ok("git --git-dir=" .. h.quote(s.repo) .. " log -1 --format=%s main"))
    end)

    it("git clone and push over ssh with the key only in the caller's ssh-agent (--allow-ssh-agent)", function()
        needs()
        local s = sshd()
        local c = client(s, s.known)
        -- the key leaves the workspace: only the agent holds it
        local sock = s.dir .. "/agent.sock"
        h.spawn("ssh-agent -D -a " .. h.quote(sock))
        assert(h.wait_for(function() return h.sh("test -S " .. h.quote(sock)).code == 0 end, 10),
            "ssh-agent did not start")
        h.sh_ok(("SSH_AUTH_SOCK=%s ssh-add -q %s && rm -f %s %s.pub")
            :format(h.quote(sock), h.quote(c.key), h.quote(c.key), h.quote(c.key)))
        local url = ("ssh://root@127.0.0.2:%d%s"):format(s.port, s.repo)
        local ssh = ("ssh -o UserKnownHostsFile=%s/.ssh/known_hosts -o StrictHostKeyChecking=yes "
            .. "-o BatchMode=yes -o ConnectTimeout=20"):format(h.quote(c.home))
        -- each attempt clones into a folder of its own: a clone that failed leaves its
        -- repository behind, held inside the sandbox, for the person to remove outside
        local function script(dir)
            return ("git clone -q %s %s && cd %s && "
                .. "git -c user.name=spec -c user.email=spec@test commit -q --allow-empty -m by-agent && "
                .. "git push -q origin HEAD"):format(h.quote(url), dir, dir)
        end
        local env = { GIT_SSH_COMMAND = ssh, SSH_AUTH_SOCK = sock }
        -- outside, the agent alone logs in
        local out = h.sh(("cd %s && SSH_AUTH_SOCK=%s GIT_SSH_COMMAND=%s git ls-remote %s")
            :format(h.quote(c.ws), h.quote(sock), h.quote(ssh), h.quote(url)))
        assert.are.equal(0, out.code, h.describe(out))
        -- without the grant the agent is not there: no key, ssh's own publickey refusal
        local r = run(c, script("denied"), allow(s), { env = env })
        assert.are_not.equal(0, r.code, h.describe(r))
        has(r, "Permission denied (publickey)")
        ok(run(c, script("granted"), { "--allow-ssh-agent", table.unpack(allow(s)) }, { env = env }))
        assert.are.equal("by-agent\n", h.sh_ok("git --git-dir=" .. h.quote(s.repo) .. " log -1 --format=%s main"))
    end)

    it("a host key nobody knows fails as it does outside, with no cordon line", function()
        needs()
        local s = sshd()
        local c = client(s, "")
        local cmd = ("ssh %s -p %d root@127.0.0.2 echo reached"):format(ssh_opts(c), s.port)
        local out = h.sh("cd " .. h.quote(c.ws) .. " && " .. cmd)
        assert.are.equal(255, out.code, h.describe(out))
        has(out, "Host key verification failed")
        local r = run(c, cmd, allow(s))
        assert.are.equal(255, r.code, h.describe(r))
        has(r, "Host key verification failed")
        hasnt(r, "cordon:")
    end)

    it("a known_hosts the sandbox hides gets one cordon line naming it", function()
        needs()
        local s = sshd()
        local c = client(s, s.known)
        local kh = c.home .. "/.ssh/known_hosts"
        local r = run(c, ("ssh %s -p %d root@127.0.0.2 echo reached"):format(ssh_opts(c), s.port),
            { "--hide", kh, table.unpack(allow(s)) })
        assert.are.equal(255, r.code, h.describe(r))
        has(r, "Host key verification failed")
        has(r, "cordon: ssh could not verify the server's host key: " .. kh)
        has(r, "--hide")
    end)
end)

describe("ssh from the sandbox, as a user whose home holds ~/.ssh", function()
    after_each(h.cleanup)

    --- A user whose password-database home is the client's home (ssh's ~), removed at clean-up.
    local function user_client(s)
        local name = "cordonssh" .. h.token()
        local c = client(s, s.known)
        h.sh_ok(("useradd -M -d %s -s /bin/bash %s"):format(h.quote(c.home), name))
        h.defer(function() os.execute("userdel " .. name .. " 2>/dev/null") end)
        local uid = tonumber(h.chomp(h.sh_ok("id -u " .. name)))
        h.sh_ok(("chown -R %d:%d %s %s && chmod 755 %s"):format(uid, uid, h.quote(c.home), h.quote(c.ws),
            h.quote(c.ws:match("^(.*)/ws$"))))
        h.write_file(c.home .. "/.ssh/config", table.concat({
            "Host gitserver", "    HostName 127.0.0.2", "    Port " .. s.port, "    User root",
            "    IdentityFile " .. c.key, "    BatchMode yes", "    StrictHostKeyChecking yes",
            "Host own-proxy", "    ProxyCommand /bin/false", "" }, "\n"))
        c.secret = "cordon-spec-secret-" .. h.token()
        for _, f in ipairs({ "id_ed25519", "work.pem" }) do
            h.write_file(c.home .. "/.ssh/" .. f, c.secret .. "\n", "600")
        end
        h.write_file(c.home .. "/.ssh/id_ed25519.pub", "ssh-ed25519 AAAA spec\n")
        h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(c.home .. "/.ssh")))
        c.uid = uid
        return c
    end

    it("reads known_hosts and config through the sandbox; the private keys stay hidden", function()
        needs()
        local s = sshd()
        local c = user_client(s)
        local as = ("setpriv --reuid=%d --regid=%d --clear-groups env HOME=%s "):format(c.uid, c.uid, h.quote(c.home))
        local out = h.sh(as .. "ssh gitserver echo reached")
        assert.are.equal("reached\n", out.stdout, h.describe(out)) -- outside: the alias works
        local r = ok(run(c, "ssh gitserver echo reached; ls ~/.ssh; cat ~/.ssh/id_ed25519 ~/.ssh/work.pem "
            .. "2>/dev/null; ssh -G own-proxy | grep -i '^proxycommand'", allow(s), { uid = c.uid }))
        assert.are.equal("reached\nconfig\nid_ed25519.pub\nknown_hosts\nproxycommand /bin/false\n", r.stdout)
        hasnt(r, c.secret)
    end)

    it("git clone/fetch/push in the host:repo form through a ~/.ssh/config alias", function()
        needs()
        local s = sshd()
        local c = user_client(s)
        local r = ok(run(c, ("git clone -q gitserver:%s clone && cd clone && "
            .. "git -c user.name=spec -c user.email=spec@test commit -q --allow-empty -m inside && "
            .. "git push -q origin HEAD && git fetch -q && git log --format=%%s origin/main")
            :format(h.quote(s.repo)), allow(s), { uid = c.uid }))
        assert.are.equal("inside\noutside\n", r.stdout)
        r = run(c, "git ls-remote gitserver:" .. h.quote(s.repo), nil, { uid = c.uid })
        assert.are.equal(128, r.code, h.describe(r))
        has(r, ("(--network-allow tcp://127.0.0.2:%d would allow it)"):format(s.port))
    end)

    it("a new host key goes to the private home; a key made on the host later stays hidden", function()
        needs()
        local s = sshd()
        local c = user_client(s)
        local kh = h.read_file(c.home .. "/.ssh/known_hosts")
        ok(run(c, "ssh -o HostKeyAlias=spec-alias -o StrictHostKeyChecking=accept-new gitserver true",
            allow(s), { uid = c.uid }))
        assert.are.equal(kh, h.read_file(c.home .. "/.ssh/known_hosts")) -- the host's is unchanged
        local r = ok(run(c, "ssh -o HostKeyAlias=spec-alias gitserver echo again", allow(s), { uid = c.uid }))
        assert.are.equal("again\n", r.stdout)
        -- id_rsa appears on the host while the sandbox runs: it stays missing inside
        local args = { "run", "--workspace", c.ws, "--", "/bin/bash", "-c",
            "touch ready; while [ ! -e go ]; do sleep 0.1; done; cat ~/.ssh/id_rsa; ls ~/.ssh" }
        local q = h.quote
        r = h.sh(("cd %s && { %s & } ; while [ ! -e %s/ready ]; do sleep 0.1; done; "
            .. "echo %s > %s/.ssh/id_rsa; touch %s/go; wait"):format(q(c.ws),
            h.command_line(args, { home = c.home, uid = c.uid }), q(c.ws), q(c.secret), q(c.home), q(c.ws)))
        hasnt(r, c.secret)
        has(r, "No such file or directory")
        assert.are.equal("config\nid_ed25519.pub\nknown_hosts\n", r.stdout, h.describe(r))
    end)
end)
