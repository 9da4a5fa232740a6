-- policies/10-refusal.lua — the built-in refusal detector and escalation decision.
--
-- After a foreground command ends, the controller asks the `refusal` hook whether the output
-- shows that the *sandbox* refused something (as opposed to the command failing on its own),
-- and for each refusal asks the `escalate` hook whether a person should be asked to let it run
-- outside the sandbox (or, for a blocked destination, to grant the network access).
--
-- The judgement here is deliberately conservative: a false "the sandbox refused this" trains
-- people to click Allow, so a line counts only when
--   * it is a program's own diagnostic, not content the command printed (a grep through a log
--     that contains "Read-only file system" is data, not a refusal), and
--   * for writes and hidden paths, the command failed, and
--   * for hidden paths, the path really exists on the host (a file missing there too is the
--     command's own problem), and
--   * for Docker and D-Bus, the socket the client wanted exists on the host.
-- Contracts: lua/HOOKS.md ("refusal", "escalate"). Helpers: lua/cordon/refusal.lua and
-- lua/cordon/shell.lua. A layer above may wrap these (`function(input, next)`), e.g. to drop a
-- kind of refusal or to never ask for a given command.
-- The helpers are compiled at the first command whose output could show a refusal, not at every
-- start: most commands print nothing of the kind, and every start pays for what it loads.
local shell, refusal

-- Plain fragments at least one of which every detector below needs to see in the line that
-- shows a refusal (errno texts of every language, sudo's, Docker's and D-Bus's lines, the
-- proxy's 403, the nested sandboxes' words). A line with none of them shows no refusal: the
-- controller hands this hook only the lines that hold one (`refusal_markers` below,
-- lua/HOOKS.md), and output with none of them skips the full detection here.
local MARKERS = { "ead-only", "EROFS", "rror 30", "rrno 30", "ermission denied", "EACCES", "rror 13",
                  "rrno 13", "not permitted", "EPERM", "o such file", "ENOENT", "rror 2)", "rrno 2]",
                  "NoSuchFile", "FileNotFound", "sudo", "ocker", "bus", "Bus", "onnect", "403",
                  "blocked-by-policy", "does not allow", "unix:path=", "resolve", "resolution",
                  "EAI_AGAIN", "ECONNRESET", "namespace", "usable sandbox", "cordon sandbox",
                  "SUID sandbox", "resource busy", "EBUSY", "temporary object directory",
                  "insufficient permission", "unable to create temporary", "Could not attach",
                  "gpg failed", "verification failed",
                  -- tools that say they could not create a path without an errno (Maven, javac)
                  "local repository", "parent directories",
                  -- the context lines of cargo's error chain that name the path
                  "failed to create", "failed to open",
                  -- Go's client through the proxy's 403 (the line to show for the destination)
                  ": Forbidden",
                  -- cordon's own line for a code-running git setting it refused
                  "refused git setting",
                  -- gpg without its private keys; apt's lock; a refused connection (curl's 7)
                  "secret key", "are you root", "lock file", "superuser", "Couldn't connect",
                  "Errno 111" }

local function might_show_refusal(input)
    for _, text in ipairs({ input.stderr or "", input.stdout or "" }) do
        for _, m in ipairs(MARKERS) do
            if text:find(m, 1, true) then return true end
        end
    end
    return false
end

local function detect(input)
    local segments = shell.split(input.command or "")
    local programs = shell.programs(segments)
    -- stdout of grep/cat/tail/journalctl/... is file content: refusal-like text there is data
    local stdout_is_data = refusal.prints_content(segments)
    local failed = input.exit_code ~= 0 or input.signal ~= nil
    -- relative paths in diagnostics are relative to where the program ran: follow plain
    -- `cd DIR` segments of the line (not `cd`, `cd -` or a cd inside a substitution)
    local cwd = input.cwd or "/"
    for _, seg in ipairs(segments) do
        if seg.name == "cd" and not seg.substitution and #seg.wrappers == 0 then
            local dir = seg.args[#seg.args]
            if dir and dir ~= "-" and not dir:find("[$`~*?]") then
                cwd = refusal.absolute(dir, cwd)
            end
        end
    end
    local writable, hidden = input.writable or {}, input.hidden or {}
    -- where the workspace is (a recorded case without it: the first writable root, unless
    -- the profile made the workspace read-only) and what in it is protected
    local ws_readonly = input.workspace_readonly == true
    local workspace = input.workspace or (not ws_readonly and writable[1]) or nil
    if workspace == "/" then workspace = nil end  -- never a workspace: a case that did not say
    local protected = input.readonly_in_workspace
    if (not protected or #protected == 0) and workspace and not ws_readonly then
        protected = {}
        for rel in pairs(refusal.protected_why) do protected[#protected + 1] = workspace .. "/" .. rel end
    end
    local profile = input.profile or (ws_readonly and "readonly") or nil
    local targets = refusal.all_write_targets(segments, cwd)
    local program_dir = refusal.program_dir(programs)
    local javac_dir = refusal.javac_output_dir(segments)
    javac_dir = javac_dir and refusal.absolute(javac_dir, cwd)
    local push_target = refusal.git_push_local_target(segments)
    push_target = push_target and refusal.absolute((push_target:gsub("^~", host.home and host.home() or "~")), cwd)
    local grants = input.grants or {}
    local installer = refusal.system_installer(programs)
    local git_moves = refusal.git_dir_moves(segments, cwd)
    local worktree_said = false -- a held linked worktree's line said (refusal.git_worktree_op)
    -- the host's loopback ports a service listens on (the controller's look at the host)
    local listening = {}
    for _, p in ipairs(input.host_listening or {}) do listening[tonumber(p) or p] = true end
    local session_bus = false
    for _, seg in ipairs(segments) do
        for _, a in ipairs(seg.args) do
            if a == "--user" or a == "--session" then session_bus = true end
        end
    end

    -- One refusal per refused thing: per kind and path (the first line showing it is kept),
    -- and per kind when no line names a path (sudo, nested-namespace, ptrace are one per
    -- command anyway). A pathless one is dropped at the end when one of its kind has a path.
    local found, seen = {}, {}
    local function add(kind, path, line, reason)
        local key = kind .. "\0" .. (path or "")
        if seen[key] then return end
        seen[key] = true
        found[#found + 1] = { kind = kind, path = path, line = line, reason = reason }
    end

    -- The sentence for a write the sandbox refused at abs, by where abs is and why.
    local function host_dir(abs)
        -- --allow-write needs an existing path: abs, else its directory (never an ancestor
        -- further up: a file's grandparent would open far more than the command asked for)
        if host.exists(abs) then return abs end
        local d = refusal.parent(abs)
        return d and d ~= "/" and host.exists(d) and d or abs
    end
    local function write_refusal(abs, line, evidence)
        -- the outermost hidden path holding abs that exists on the host (~/.ssh may not, ~ does)
        local hid
        for _, h in ipairs(hidden) do
            if refusal.within(abs, h) and host.exists(h) and (not hid or #h < #hid) then hid = h end
        end
        if hid then
            if hid == abs or host.exists(abs) then
                add("hidden", abs, line, ("%s is hidden by the profile (it exists on the host; "
                    .. "writes to it are refused)"):format(abs))
            else
                add("hidden", abs, line, ("%s was not created: %s is hidden by the profile (it "
                    .. "exists on the host)"):format(abs, hid))
            end
            return
        end
        if workspace and refusal.within(abs, workspace) then
            local rel, why, by_key = refusal.protected(abs, workspace, protected)
            if rel and not ws_readonly then
                add("protected", abs, line, ("the sandbox refused a write to %s: %s is protected "
                    .. "inside the workspace: %s%s"):format(abs, rel, why,
                    by_key and " (profile key readonly_in_workspace)" or ""))
                return
            end
            if ws_readonly then
                add("write", abs, line, ("the sandbox refused a write to %s: the %s profile makes "
                    .. "the workspace read-only (another --profile, e.g. coding, lets it write)")
                    :format(abs, profile or "readonly"))
            elseif evidence ~= "ebusy" then
                add("write", abs, line, ("the sandbox refused a write to %s (read-only in the "
                    .. "sandbox, although inside the workspace)"):format(abs))
            end
            return
        end
        if evidence == "ebusy" then return end  -- busy for its own reasons
        add("write", abs, line, ("the sandbox refused a write to %s (read-only outside the "
            .. "workspace: --allow-write %s)"):format(abs, host_dir(abs)))
    end

    local function look(line, is_data, stream, chain)
        -- cordon's own line for a git setting that would run code on the host (the controller
        -- refused the config write while the command ran), whatever the exit code
        if not is_data then
            local key, why, rel = line:match("^cordon: refused git setting (%S+) %((.-)%): .*; (%S+) is unchanged$")
            if key then
                local abs = workspace and refusal.absolute(rel, workspace) or rel
                add("protected", abs, line, ("the sandbox refused the git setting %s in %s (%s): "
                    .. "make it outside the sandbox if you mean it"):format(key, abs, why))
                return
            end
        end
        -- sudo's own refusal, whatever the exit code, when the command runs sudo at all
        if programs.sudo then
            local cause = refusal.sudo_refusal(line)
            if cause then
                add("sudo", nil, line, ("the sandbox refused sudo (%s)"):format(cause))
                return
            end
        end
        -- a tool that wanted a namespace (a sandbox) of its own, whatever the exit code: the
        -- sandbox refuses nesting; the tool's own advice (a host sysctl) would mislead
        if not is_data then
            local why = refusal.nested_namespace(line)
            if why then
                add("nested-namespace", nil, line, why)
                return
            end
        end
        -- an unreachable Docker daemon whose socket exists on the host, whatever the exit code
        if not is_data or programs.docker then
            local sock = refusal.docker_unreachable(line)
            if sock then
                if host.is_socket(sock) then
                    add("docker", sock, line, ("the sandbox hides the Docker daemon's socket %s "
                        .. "(it exists on the host; --allow-docker binds it in)"):format(sock))
                end
                return
            end
        end
        -- an unreachable D-Bus bus whose socket exists on the host, whatever the exit code
        if not is_data then
            local sock, unknown_session = refusal.dbus_unreachable(line, session_bus)
            if sock then
                if host.is_socket(sock) and line:find("booted with systemd", 1, true) then
                    -- systemctl refuses before it connects: there is no systemd inside, and the
                    -- host's is out of reach
                    add("dbus", sock, line, ("the sandbox runs no systemd and hides the host's "
                        .. "system bus %s (systemctl cannot reach the host's systemd from inside; "
                        .. "run it outside the sandbox)"):format(sock))
                elseif host.is_socket(sock) then
                    add("dbus", sock, line, ("the sandbox hides the D-Bus socket %s (it exists "
                        .. "on the host)"):format(sock))
                end
                return
            elseif unknown_session then
                return
            end
        end
        -- a debugger or tracer refused ptrace, whatever the exit code (gdb -batch exits 0)
        if not is_data and refusal.ptrace_refused(line, programs) then
            -- no flag or profile key allows it: only a run outside the sandbox (the controller
            -- adds how to be asked for one)
            add("ptrace", nil, line, "the sandbox refuses ptrace: debuggers and tracers (strace, gdb) "
                .. "cannot trace here, in any profile; run the command outside the sandbox")
            return
        end
        -- Unix sockets refused by the profile (strict): tmux, Python's multiprocessing Manager
        if not is_data and input.block_unix_sockets then
            local yes, sock = refusal.unix_socket_refused(line)
            if yes then
                add("unix-socket", sock, line, ("the %s profile refuses Unix sockets%s (profile key "
                    .. "seccomp.block_unix_sockets; --profile coding allows them)")
                    :format(input.profile or "strict", sock and (": " .. sock .. " cannot be reached") or ""))
                return
            end
        end
        -- no agent to sign or log in with, and the profile grants none (grants.gpg_agent,
        -- grants.ssh_agent): the flag that binds the caller's in
        if not is_data then
            local grant = refusal.grant_missing(line)
            if grant and not (input.grants or {})[grant] then
                add("grant", nil, line, grant == "gpg_agent"
                    and "gpg could not sign: the sandbox reaches no gpg-agent (--allow-gpg-agent "
                        .. "lets yours sign: its socket and public keyring, never the private keys)"
                    or "no ssh-agent is reachable in the sandbox (--allow-ssh-agent makes yours, "
                        .. "$SSH_AUTH_SOCK, reachable inside)")
                return
            end
        end
        -- ssh could not verify a host key: the sandbox's doing only when a known-hosts file
        -- that exists on the host is hidden (no key known at all is the user's own matter)
        if failed and not is_data and refusal.host_key_failed(line) then
            for _, f in ipairs(refusal.hidden_known_hosts(input.command, hidden, cwd)) do
                if host.exists(f) then
                    add("hidden", f, line, ("ssh could not verify the server's host key: %s, which "
                        .. "holds known host keys, is hidden in the sandbox (it exists on the host; "
                        .. "the profile key hidden or --hide names it; ssh -o UserKnownHostsFile=FILE "
                        .. "reads another)"):format(f))
                    return
                end
            end
            return
        end
        -- ssh offered no key the server took, and ssh's private keys are hidden in the sandbox
        -- (one exists on the host): the agent grant lets them sign without entering
        if failed and not is_data and not grants.ssh_agent and refusal.publickey_denied(line) then
            for _, k in ipairs(refusal.hidden_ssh_keys(input.command, hidden, cwd)) do
                if host.exists(k) then
                    add("grant", k, line, ("the ssh server took no key: the private keys in %s are "
                        .. "hidden inside the sandbox (%s exists on the host); --allow-ssh-agent lets "
                        .. "your ssh-agent sign inside, the keys never enter")
                        :format(refusal.parent(k), k))
                    return
                end
            end
            return
        end
        -- gpg found no private key, and the GnuPG home that holds them is hidden (it exists on
        -- the host): the agent grant lets gpg sign
        if failed and not is_data and not grants.gpg_agent and refusal.no_secret_key(line) then
            for _, g in ipairs(refusal.hidden_gnupg(hidden)) do
                if host.exists(g) then
                    add("grant", g, line, ("gpg found no secret key: %s is hidden inside the sandbox "
                        .. "(it exists on the host); --allow-gpg-agent lets your gpg-agent sign and "
                        .. "decrypt inside, the private keys never enter"):format(g))
                    return
                end
            end
            return
        end
        -- a connection refused on the sandbox's own loopback, where the host has a service on
        -- that port: the sandbox's 127.0.0.1 is its own, the host's port needs a grant
        if failed and not is_data then
            local port = refusal.connection_refused(line)
            if port then
                local ports = port == true and refusal.loopback_ports_in(input.command) or { port }
                for _, p in ipairs(ports) do
                    if listening[p] then
                        add("host-port", "127.0.0.1:" .. p, line, ("nothing listens on 127.0.0.1:%d "
                            .. "inside: the sandbox's loopback is its own, not the host's (the host's "
                            .. "service on port %d is reached with --allow-host-port %d)"):format(p, p, p))
                        return
                    end
                end
                return
            end
        end
        -- root's apt-get/dpkg refused its lock: the system is read-only to every sandbox
        if failed and not is_data and installer and input.root and refusal.installer_refused(line) then
            add("system", nil, line, refusal.installer_reason(installer))
            return
        end
        -- writes and hidden paths: only when the command failed, only its own diagnostics
        if not failed or is_data or not refusal.is_diagnostic(line, programs, stream) then return end
        -- a git push to a repository given by its path, outside the writable set: the line
        -- (from git's receive side) names no path, the command does
        if push_target and refusal.push_unwritable(line) then
            if not refusal.under_any(push_target, writable) then
                write_refusal(push_target, line)
            end
            return
        end
        -- a tool's own "could not create X" without an errno (Maven's local repository, javac's
        -- output directory): the sandbox's only when X is outside the writable set
        local unwritable = refusal.unwritable_path(line)
        if unwritable == true then unwritable = javac_dir end
        if unwritable then
            local abs = refusal.absolute(unwritable, cwd)
            if not refusal.under_any(abs, writable) then write_refusal(abs, line) end
            return
        end
        local class, at = refusal.errno_class(line)
        if not class then return end
        local p = refusal.path_in_line(line, at, programs)
        -- cargo's chain: the cause line names no path, the context lines before it do
        if not p and chain and line:match("^%s") then p = chain end
        -- crontab's paths are relative to its spool, not to where the command ran
        local abs = p and refusal.absolute(p, (program_dir and p:sub(1, 1) ~= "/") and program_dir or cwd)
        if class == "erofs" and abs and p:sub(1, 1) ~= "/" and not ws_readonly and refusal.under_any(abs, writable)
           and not (workspace and refusal.protected(abs, workspace, protected)) then
            -- a relative path that lands in the writable set cannot be read-only there: it was
            -- relative to a directory the program moved to (pip builds in the source tree), which
            -- the line does not say
            abs = nil
        end
        if class == "erofs" then
            -- EROFS is the read-only bind itself: outside the workspace, a protected path
            -- inside it (.git/hooks, .cordon/), the readonly profile's workspace, or a hidden
            -- path a tool tried to create
            if abs then
                write_refusal(abs, line)
            else
                add("write", nil, line, "the sandbox refused a write (read-only file system)")
            end
        elseif class == "ebusy" then
            -- a repository's .git that the command moves or removes: the sandbox holds it in
            -- place (its protected paths are mounts), so mv and rm meet EBUSY
            local gd = refusal.git_dir_of(abs)
            if not (gd and (abs == gd or git_moves[gd])) and next(git_moves)
               and line:find(".git", 1, true) then
                -- mv names both ends: the .git it moves may not be the path found first
                gd = next(git_moves)
                abs = gd
            end
            if gd and (abs == gd or git_moves[gd]) and workspace and refusal.within(gd, workspace)
               and not ws_readonly then
                if git_moves[gd] == "rm" then
                    -- rm took what it could before it met the held paths: say so, never "kept"
                    add("git-dir", gd, line, ("rm could not remove the repository's %s whole: the "
                        .. "sandbox holds it in place (its hooks and config are protected inside); what "
                        .. "rm removed inside it before that is gone on the host too; removing a "
                        .. "repository is done outside the sandbox"):format(gd))
                else
                    add("git-dir", gd, line, ("the sandbox holds the repository's %s in place (its "
                        .. "hooks and config are protected inside): renaming or removing it is done "
                        .. "outside the sandbox"):format(gd))
                end
                return
            end
            -- a linked worktree that was there at the start (its folder, or its admin folder
            -- G/worktrees/NAME): its .git file and the admin folder's pointers are held in place
            local op, wt = refusal.git_worktree_op(line)
            wt = wt and refusal.absolute(wt, cwd)
            if op and wt and workspace and not ws_readonly and refusal.within(wt, workspace)
               and (host.exists(wt .. "/gitdir") or host.exists(wt .. "/.git")) then
                -- one line for the worktree and its admin folder (git names both)
                if worktree_said then return end
                worktree_said = true
                add("git-dir", wt, line, ("the sandbox holds the linked worktree %s in place (its "
                    .. ".git file and its admin folder's commondir and gitdir are protected inside): "
                    .. "a worktree that was there when the sandbox started is %s outside the "
                    .. "sandbox (git worktree %s)%s"):format(wt, op == "move" and "moved" or "removed",
                    op, op == "remove" and "; what git removed inside it before that is gone on the "
                    .. "host too" or ""))
                return
            end
            -- git renames its lock file onto .git/config, a read-only bind mount: EBUSY. Only
            -- a protected path counts: a busy device elsewhere is the command's own problem.
            if abs and workspace and refusal.protected(abs, workspace, protected) then
                write_refusal(abs, line, "ebusy")
            elseif abs and not refusal.under_any(abs, writable) and host.exists(abs)
                   and refusal.has_write_wording(line) then
                -- outside the writable set a path the sandbox bound read-only (the person's own
                -- entries of the copy-on-write home: a note, another project): rm and mv of it
                -- meet EBUSY where other paths meet EROFS
                write_refusal(abs, line)
            end
        elseif class == "eacces" then
            -- inside a writable root, EACCES is the file's own permissions: not the sandbox
            if abs and not refusal.under_any(abs, writable)
               and (targets[abs] or refusal.has_write_wording(line)) then
                add("write", abs, line, ("the sandbox refused a write to %s (outside the "
                    .. "writable set: --allow-write %s)"):format(abs, host_dir(abs)))
            end
        elseif class == "enoent" then
            if abs and host.exists(abs) and (#hidden == 0 or refusal.under_any(abs, hidden)) then
                add("hidden", abs, line, ("%s is hidden by the profile (it exists on the host)")
                    :format(abs))
            elseif abs and not host.exists(abs) and (targets[abs] or refusal.has_write_wording(line)) then
                -- a create that failed with ENOENT although its directory exists on the host:
                -- the directory is hidden here, or read-only (Node's recursive mkdir says
                -- ENOENT for a directory it could not make in a read-only place)
                local dir = refusal.parent(abs)
                if dir and host.exists(dir) and not refusal.under_any(abs, writable) then
                    write_refusal(abs, line)
                elseif dir and refusal.under_any(dir, hidden) then
                    local hid = refusal.under_any(dir, hidden)
                    if host.exists(hid) and hid ~= abs then
                        add("hidden", abs, line, ("%s was not created: %s is hidden by the profile "
                            .. "(it exists on the host)"):format(abs, hid))
                    end
                end
            end
        end
    end

    local chain
    for _, line in ipairs(refusal.lines(input.stderr)) do
        chain = refusal.chain_path(line, chain)
        look(line, false, "stderr", chain)
    end
    -- On a terminal (input.merged) stdout carries stderr too: there a program's own diagnostic
    -- line counts even when the command also prints file content.
    chain = nil  -- (on a terminal cargo's chain comes on stdout)
    for _, line in ipairs(refusal.lines(input.stdout)) do
        local is_data = stdout_is_data and not (input.merged and refusal.is_diagnostic(line, programs, "stdout"))
        chain = refusal.chain_path(line, chain)
        look(line, is_data, "stdout", chain)
    end

    -- every destination the egress proxy refused while the command ran, whatever the client
    -- printed (wget, apt, Java, Node, git over https have no line of a known form): the proxy's
    -- record is the evidence; a line showing the refusal is kept when there is one
    local denied = input.network_denied or {}
    if #denied > 0 then
        local lines = {}
        for _, l in ipairs(refusal.lines(input.stderr)) do lines[#lines + 1] = l end
        for _, l in ipairs(refusal.lines(input.stdout)) do lines[#lines + 1] = l end
        local first
        for _, l in ipairs(lines) do
            if refusal.network_blocked(l) then first = l; break end
        end
        for _, dest in ipairs(denied) do
            local hostname = dest:match("^%[?(.-)%]?:%d+$") or dest
            local shown = first or ""
            for _, l in ipairs(lines) do
                if l:find(hostname, 1, true) and (refusal.network_blocked(l) or not first) then
                    shown = l; break
                end
            end
            local deny_rule = (input.network_denied_rules or {})[dest]
            local allow_flag = (input.network_denied_allow or {})[dest]
            if deny_rule then
                -- a deny rule refused it: no --network-allow changes that, the rule must go
                add("network", dest, shown, ("the sandbox's network policy blocked %s: the deny "
                    .. "rule '%s' names it (--network-deny or the profile's network.deny; "
                    .. "only removing that rule allows it)"):format(dest, deny_rule))
            elseif allow_flag and not allow_flag:find(dest, 1, true) then
                -- the proxy's own flag names another destination: the name's answer is a
                -- special address (loopback, private), which a rule for the name does not reach
                add("network", dest, shown, ("the sandbox's network policy blocked %s: its address "
                    .. "is a loopback, link-local or private one, which needs a rule of its own "
                    .. "(%s would allow it)"):format(dest, allow_flag))
            else
                -- a SOCKS client (cordon nc, ssh through it, curl -x socks5h://) is
                -- allowed only by a tcp:// rule: the proxy says how it was asked; a recorded
                -- case without that field is told by the client's line
                local via = (input.network_denied_via or {})[dest]
                local socks = via == "socks" or shown:find("tcp://" .. dest, 1, true)
                    or shown:lower():find("socks", 1, true)
                local rule = socks and "tcp://" .. dest or dest
                add("network", dest, shown, ("the sandbox's network policy blocked %s "
                    .. "(--network-allow %s would allow it)"):format(dest, rule))
            end
        end
    end
    -- a system installer's refused writes (its lock, /var/lib/dpkg, /usr) are one thing: an
    -- install that belongs outside; and a .git held in place says what its protected paths'
    -- refusals would (rm -r .git meets those first)
    local sys, held = nil, {}
    for _, r in ipairs(found) do
        if r.kind == "git-dir" then held[#held + 1] = r.path end
        if installer and (r.kind == "system" or (r.kind == "write" and r.path
                                                  and refusal.under_any(r.path, refusal.system_dirs))) then
            sys = sys or r
        end
    end
    if sys or #held > 0 then
        local kept = {}
        for _, r in ipairs(found) do
            local drop = (r.kind == "protected" or r.kind == "write") and r.path
                         and refusal.under_any(r.path, held)
            if sys and (r.kind == "system" or (r.kind == "write" and r.path
                                               and refusal.under_any(r.path, refusal.system_dirs))) then
                drop = r ~= sys
                if r == sys then
                    r = { kind = "system", line = r.line, reason = refusal.installer_reason(installer) }
                end
            end
            if not drop then kept[#kept + 1] = r end
        end
        found = kept
    end
    -- a refusal without a path says less than one of its kind with a path: drop it
    local with_path = {}
    for _, r in ipairs(found) do if r.path then with_path[r.kind] = true end end
    local out = {}
    for _, r in ipairs(found) do
        if r.path or not with_path[r.kind] then out[#out + 1] = r end
    end
    return out
end

return {
    -- the lines this detector needs to see (cordon.hooks, "refusal_markers")
    refusal_markers = MARKERS,

    -- input:  { command = "touch /etc/x", exit_code = 1, signal = nil|N, stdout = "...",
    --           stderr = "...", truncated = false, cwd = "/abs", writable = { abs... },
    --           hidden = { abs... }, network_denied = { "host:port", ... }, candidates = bool,
    --           workspace = "/abs"|nil, workspace_readonly = bool, profile = "name"|nil,
    --           readonly_in_workspace = { abs... }, block_unix_sockets = bool,
    --           grants = { ssh_agent = bool, gpg_agent = bool }, root = bool,
    --           host_listening = { port... } }
    --         (candidates: stdout/stderr hold only the kept lines with a marker)
    -- result: { { kind = "write"|"hidden"|"protected"|"sudo"|"docker"|"dbus"|"network"|"ptrace"|
    --             "unix-socket"|"nested-namespace"|"grant"|"host-port"|"system"|"git-dir",
    --             path = "..."|nil, line = "<the output line>", reason = "<one sentence>" }, ... }  ({} = none)
    refusal = function(input, _next)
        local denied = input.network_denied
        if not might_show_refusal(input) and not (denied and #denied > 0) then return {} end
        shell = shell or require("cordon.shell")
        refusal = refusal or require("cordon.refusal")
        return detect(input)
    end,

    -- input:  { refusal = <one refusal>, command = "...", ask_sandbox_off = bool, plan = bool,
    --           background = bool, interactive = bool }
    -- result: { action = "ask"|"deny", offer = "rerun"|"network"|nil, reason = "..." }
    escalate = function(input, _next)
        local r = input.refusal
        if input.plan then
            return { action = "deny", reason = "plan mode never runs anything outside the sandbox" }
        end
        if input.background then
            return { action = "deny", reason = "background commands are never escalated" }
        end
        if not input.ask_sandbox_off then
            return { action = "deny", reason = "run with --ask-sandbox-off to be asked next time" }
        end
        if r.kind == "network" then
            -- a blocked destination is offered as a grant for that host:port, not as an escape
            return { action = "ask", offer = "network",
                     reason = ("allow %s for this session?"):format(r.path or "the destination") }
        end
        if input.interactive then
            return { action = "ask", offer = "rerun",
                     reason = ("%s. Run `%s` outside the sandbox?"):format(r.reason, input.command) }
        end
        return { action = "deny", reason = "nobody can be asked (not interactive)" }
    end,
}
