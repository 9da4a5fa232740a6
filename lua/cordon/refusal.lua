-- cordon.refusal — building blocks of the refusal detectors (policies/10-refusal.lua).
-- Owns: reading output lines, telling a program's own diagnostic from content it printed,
-- pulling the path out of the error formats of coreutils, bash, git, Python, Node, Go, Rust,
-- cargo's error chains, Java and javac, path arithmetic (absolute, normalised, "at or under"),
-- which words of a command are write targets, recognising the lines of sudo, the Docker client, D-Bus clients and the
-- egress proxy's 403, and the tools' lines that name a path they could not create without an
-- errno (Maven, javac); ssh's publickey refusal and gpg's missing secret key with the hidden
-- keys they point to, a refused connection's loopback port, the system installers' refusals,
-- and a command that moves or removes a repository's .git.
-- Uses cordon.shell and nothing else, so plain lua5.4 runs it; host checks are the caller's
-- (the policy passes `host` functions in). Must never decide on its own whether something is a
-- refusal: it answers small questions, the policy combines them.
local shell = require("cordon.shell")

local M = {}

M.MAX_LINES = 4000      -- lines examined per stream (the capture is bounded anyway)
M.MAX_LINE = 4096       -- a longer line is cut before matching

-- ---- lines -------------------------------------------------------------------------------

--- Lines of text (without "\r\n"/"\n"), at most M.MAX_LINES, each at most M.MAX_LINE bytes,
-- without the terminal's colour escapes (corepack prints its errors in red).
function M.lines(text)
    local out = {}
    if type(text) ~= "string" or text == "" then return out end
    for l in (text:sub(-1) == "\n" and text or text .. "\n"):gmatch("([^\n]*)\n") do
        if #out >= M.MAX_LINES then break end
        l = l:gsub("\r$", ""):gsub("\27%[[%d;]*%a", "")
        if #l > M.MAX_LINE then l = l:sub(1, M.MAX_LINE) end
        out[#out + 1] = l
    end
    return out
end

-- ---- paths -------------------------------------------------------------------------------

--- path made absolute against cwd, with ".", ".." and repeated slashes resolved lexically.
function M.absolute(path, cwd)
    if type(path) ~= "string" or path == "" then return nil end
    if path:sub(1, 1) ~= "/" then path = (cwd or "/") .. "/" .. path end
    local parts = {}
    for p in path:gmatch("[^/]+") do
        if p == ".." then parts[#parts] = nil
        elseif p ~= "." then parts[#parts + 1] = p end
    end
    return "/" .. table.concat(parts, "/")
end

--- Is path equal to root or under it?
function M.within(path, root)
    if root == "/" then return true end
    root = root:gsub("/+$", "")
    return path == root or path:sub(1, #root + 1) == root .. "/"
end

--- The first root of roots that path is at or under, or nil.
function M.under_any(path, roots)
    for _, r in ipairs(roots or {}) do
        if type(r) == "string" and M.within(path, r) then return r end
    end
    return nil
end

-- ---- which programs print content --------------------------------------------------------

-- Programs whose stdout is the content of files or logs: a refusal-like line there is data.
M.content_programs = {
    grep = true, egrep = true, fgrep = true, rg = true, ag = true, ack = true, zgrep = true,
    cat = true, tac = true, zcat = true, bat = true, batcat = true, tail = true, head = true,
    less = true, more = true, journalctl = true, awk = true, gawk = true, mawk = true,
    strings = true, diff = true, git_log = true, echo = true, printf = true, jq = true,
    sort = true, uniq = true, cut = true, tr = true, nl = true, column = true, xxd = true,
    od = true, hexdump = true, dmesg = true, find = true, ls = true, wc = true,
}

--- Does the command print file or log content on stdout (so stdout lines are data)?
-- `sed -i` edits files and prints nothing; any other sed prints content.
function M.prints_content(segments)
    for _, seg in ipairs(segments) do
        local n = seg.name
        if n and M.content_programs[n] then return true end
        if n == "sed" then
            local inplace = false
            for _, a in ipairs(seg.args) do
                if a:match("^%-i") or a == "--in-place" or a:match("^%-%-in%-place=") or
                   (a:match("^%-[^-]") and a:find("i", 2, true)) then inplace = true end
            end
            if not inplace then return true end
        end
        if n == "git" and (seg.args[1] == "log" or seg.args[1] == "show" or seg.args[1] == "grep"
                           or seg.args[1] == "diff") then
            return true
        end
    end
    return false
end

-- ---- diagnostics -------------------------------------------------------------------------

-- Language-specific error formats: a line in one of these is a diagnostic whatever program
-- printed it.
local language_formats = {
    "%[Errno %d+%]",                                   -- Python OSError and subclasses
    "^%s*%w*Error: E%u+: ",                            -- Node: Error: ENOENT: no such file ...
    "^%s*E%u+: [%l%- ]+, %l+ '",                       -- Node without the Error: prefix
    "Error: E%u+: [%l%- ]+, %l+ '",                    -- Node's own, behind a tool's words
                                                       -- (corepack: "Internal Error: EROFS: ...")
    "%f[%w]open /.-: ", "%f[%w]stat /.-: ", "%f[%w]lstat /.-: ", "%f[%w]mkdir /.-: ",
    "%f[%w]remove /.-: ", "%f[%w]rename /.-: ", "%f[%w]chmod /.-: ", "%f[%w]unlinkat /.-: ",
    "%f[%w]mkdirat /.-: ", "%f[%w]openat /.-: ", "%f[%w]readlink /.-: ",           -- Go *PathError
    "%(os error %d+%)",                                -- Rust std::io::Error
    "java%.nio%.file%.%a+Exception",                   -- Java NIO
    "java%.io%.FileNotFoundException",                 -- Java IO
    "^%s*%a*Error: %[Errno",                           -- Python, again for clarity
    "^[^%s:]+:%d+: error: ",                           -- javac: Hi.java:1: error: ...
    "^[^%s:]+:%d+:%d+: error: ",                       -- gcc, clang: x.c:1:2: error: ...
}

-- Prefixes many tools (git, cargo, make, npm, pip, apt) start their own diagnostics with.
-- ssh and ssh-keygen print some of theirs without any prefix.
local generic_prefixes = { "error:", "fatal:", "Error:", "ERROR:", "%[ERROR%]", "E:", "W:", "warning:", "npm ERR!",
                           "npm error", "make:", "make%[%d+%]:", "Could not create directory '",
                           "Saving key \"", "Failed to add the host to the list of known hosts",
                           "hostfile_replace_entries: ", "update_known_hosts: " }

--- Is line a diagnostic of a program of the command (not content it printed)? True when the
-- line starts with `PROG:` (or `/path/PROG:`) for a program in the segments, with one of the
-- usual tool prefixes, or matches a language's error format. On stderr (stream "stderr"),
-- where programs run by a build tool or a script print their own diagnostics, any
-- `name: ` at the very start of the line counts too.
function M.is_diagnostic(line, programs, stream)
    if stream == "stderr" and line:match("^[%w/][%w._+/-]*: ") then return true end
    local first = line:match("^%s*([^%s:]+):")
    if first then
        local b = shell.basename(first)
        if programs[b] or b == "bash" or b == "sh" or b == "dash" or b == "zsh" then
            return true
        end
        -- python3.11: / node: / java: — versioned interpreter names
        local stem = b:match("^(%a+)[%d%.]*$")
        if stem and programs[stem] then return true end
    end
    for _, p in ipairs(generic_prefixes) do
        if line:match("^%s*" .. p) then return true end
    end
    for _, f in ipairs(language_formats) do
        if line:find(f) then return true end
    end
    return false
end

-- ---- errno messages ----------------------------------------------------------------------

-- Each class: the patterns that show it (plain-text, case as the tools print it).
M.erofs_patterns = { "Read%-only file system", "read%-only file system", "EROFS", "%(os error 30%)",
                     "%[Errno 30%]" }
M.eacces_patterns = { "Permission denied", "permission denied", "EACCES", "%(os error 13%)",
                      "%[Errno 13%]", "Operation not permitted", "EPERM" }
M.ebusy_patterns = { "Device or resource busy", "EBUSY" }
M.enoent_patterns = { "No such file or directory", "no such file or directory", "ENOENT",
                      "%(os error 2%)", "%[Errno 2%]", "NoSuchFileException" }

local function find_any(line, patterns)
    for _, p in ipairs(patterns) do
        local s = line:find(p)
        if s then return s end
    end
    return nil
end

--- Which errno class the line shows: "erofs", "eacces", "ebusy" (a rename onto a read-only
-- bind mount: git's lock file onto .git/config), "enoent" or nil; and where it starts.
function M.errno_class(line)
    local s = find_any(line, M.erofs_patterns)
    if s then return "erofs", s end
    s = find_any(line, M.eacces_patterns)
    if s then return "eacces", s end
    s = find_any(line, M.ebusy_patterns)
    if s then return "ebusy", s end
    s = find_any(line, M.enoent_patterns)
    if s then return "enoent", s end
    return nil
end

local function looks_like_path(p)
    return p and p ~= "" and #p < 4096 and not p:find("[\n%z]") and
           (p:sub(1, 1) == "/" or p:sub(1, 2) == "./" or p:sub(1, 3) == "../" or
            p:sub(1, 2) == "~/" or not p:find("%s"))
end

--- The path a diagnostic line names (as written, not yet resolved), or nil. `at` is where
-- the errno message starts (from errno_class): the path is looked for before it.
-- System calls some tools name between the path and the message: `crontabs: mkdir: Read-only
-- file system` is about crontabs, not about a file called mkdir.
local syscall_words = { mkdir = true, open = true, openat = true, stat = true, lstat = true, chdir = true,
                        opendir = true, rename = true, unlink = true, creat = true, fopen = true,
                        access = true, chmod = true, chown = true, rmdir = true, symlink = true }

function M.path_in_line(line, at, programs)
    local head = at and line:sub(1, at - 1) or line
    local p
    -- Rust's tempfile crate (cargo's --target-dir): Read-only file system (os error 30) at path "/x/targetAbC123"
    p = line:match('%(os error %d+%) at path "(.-)"')
    if p then return p end
    -- Python: PermissionError: [Errno 13] Permission denied: '/etc/x'  (path after the message)
    p = line:match("%[Errno %d+%][^:]*: '(.-)'") or line:match('%[Errno %d+%][^:]*: "(.-)"')
    if p then return p end
    -- Node: EROFS: read-only file system, symlink 'a' -> '/usr/b'  (the second is written)
    p = line:match("E%u+: [%l%- ]+, %l+ '.-' %-> '(.-)'")
    if p then return p end
    -- Node: EACCES: permission denied, open '/etc/x'
    p = line:match("E%u+: [%l%- ]+, %l+ '(.-)'")
    if p then return p end
    -- Java: java.nio.file.NoSuchFileException: /x  /  java.io.FileNotFoundException: /x (No such ...)
    -- (jar: java.nio.file.FileSystemException: /x/hi.jar: Read-only file system: the colon is not the path's)
    p = line:match("java%.nio%.file%.%a+Exception: (%S+)") or
        line:match("java%.io%.FileNotFoundException: (.-) %(")
    if p then return (p:gsub(":$", "")) end
    -- apt: chmod 0700 of directory /var/lib/apt/lists/partial failed - SetupAPTPartialDirectory (30: ...
    p = head:match("(/%S+) failed %- [%w:]+ %(%d+: $")
    if p then return p end
    -- Go: open /etc/x: read-only file system  (a word, one space, the path, ": ")
    p = head:match("%f[%w]%l+ (/[^:%s]*): %s*$")
    if p then return p end
    -- quoted right before the message: gpg: Fatal: can't create directory '/x/.gnupg': ...
    -- ("can't" must not open a quote), ssh's Could not create directory '/x' (Read-only ...
    p = head:match("'([^']+)'%s*:?%s*%(?$") or head:match('"([^"]+)"%s*:?%s*%(?$') or
        head:match("\226\128\152(.-)\226\128\153%s*:?%s*%(?$")
    if p and looks_like_path(p) then return p end
    -- quoted before the message: 'x', ‘x’, "x", `x`, `x' ; the last one is the object
    local last
    for q in head:gmatch("'([^']+)'") do last = q end
    for q in head:gmatch("\226\128\152(.-)\226\128\153") do last = q end
    for q in head:gmatch('"([^"]+)"') do last = q end
    for q in head:gmatch("`([^`']+)[`']") do last = q end
    if last and looks_like_path(last) then return last end
    -- PROG: [line N: ][builtin: ]PATH: message  — the part right before the message
    local parts = {}
    for part in (head:gsub(":%s*$", "")):gmatch("[^:]+") do parts[#parts + 1] = part end
    local cand = parts[#parts]
    if cand and #parts >= 2 and syscall_words[(cand:gsub("^%s+", ""))] then
        -- NAME: mkdir: message: NAME is the object, unless it is the program's own name
        local before = parts[#parts - 1]:gsub("^%s+", ""):gsub("%s+$", "")
        if #parts == 2 and programs and programs[shell.basename(before)] then return nil end
        if looks_like_path(before) then return before end
    end
    if cand and #parts >= 2 then
        cand = cand:gsub("^%s+", ""):gsub("%s+$", "")
        if looks_like_path(cand) and cand ~= "" then return cand end
        -- "could not lock config file /x/.git/config", "could not write config file
        -- .git/config": the last word, when it holds a slash
        local w = cand:match("(%S*/%S*)$")
        if w then return w end
    end
    -- Rust-style tools: "... /path: No such file or directory (os error 2)" handled above;
    -- any absolute word before the message
    local w
    for x in head:gmatch("(/[^%s:'\"]+)") do w = x end
    return w
end

-- ---- error chains ------------------------------------------------------------------------

--- cargo (and Rust's anyhow) print a chain: the context lines name the path, the last cause
-- line only the errno: `error: failed to create directory `/x``, `Caused by:`, `  Read-only
-- file system (os error 30)`. Given a stderr line and the path the chain named so far, the path
-- the chain names after this line (nil: the line is not part of a chain). Only a quoted absolute
-- path counts: the context lines also quote crate names and versions.
function M.chain_path(line, prev)
    if line:match("^%s*$") or line:match("^%s*Caused by:%s*$") then return prev end
    if not (line:match("^error: ") or line:match("^%s+%S")) then return nil end
    local last
    for q in line:gmatch("`(/[^`]+)`") do last = q end
    if not last then
        for q in line:gmatch("'(/[^']+)'") do last = q end
    end
    if last and looks_like_path(last) then return last end
    return line:match("^error: failed to %a+: (/%S+)$") or prev
end

-- Programs that change to a fixed directory before they name paths relative to it: crontab
-- works in its spool (Debian's cron: /var/spool/cron, the crontabs under it).
M.program_dirs = { crontab = "/var/spool/cron" }

--- The directory relative paths in the command's diagnostics are relative to, when a program
-- of the command changes to one of its own (program_dirs), else nil.
function M.program_dir(programs)
    for name, dir in pairs(M.program_dirs) do
        if programs[name] then return dir end
    end
    return nil
end

-- ---- tools that name a path they could not create, without an errno ------------------------

-- { pattern, capture }: Maven names its local repository; javac says only "could not create
-- parent directories" (the directory is its -d, -s or -h option, the policy looks it up).
M.unwritable_patterns = {
    { "Could not create local repository at (/%S+)", true },
    { "error while writing [%w_.$]+: could not create parent directories", false },
}

--- If line is one of those: the path it names, or true (it names none); else nil.
function M.unwritable_path(line)
    for _, p in ipairs(M.unwritable_patterns) do
        local s, _, cap = line:find(p[1])
        if s then
            if p[2] then return (cap:gsub("[.,]$", "")) end
            return true
        end
    end
    return nil
end

--- javac's output directory (-d, -s, -h; the first given), as written, else nil.
function M.javac_output_dir(segments)
    for _, seg in ipairs(segments) do
        if seg.name == "javac" then
            for i, a in ipairs(seg.args) do
                if (a == "-d" or a == "-s" or a == "-h") and seg.args[i + 1] then return seg.args[i + 1] end
            end
        end
    end
    return nil
end

-- Words with write intent in a tool's own message.
M.write_wording = {
    "cannot touch", "cannot create", "cannot remove", "cannot make directory", "cannot move",
    "cannot overwrite", "cannot unlink", "cannot link", "failed to create", "failed to remove",
    "cannot open .- for writing", "Unable to create", "unable to create", "could not lock",
    "unable to write", "could not write", "cannot write", "failed to write", "cannot set",
    "changing permissions of", "changing ownership of", "cannot change", "couldn't open temporary",
    "couldn't edit", "cannot rename", "failed to rename", "setting times of",
    "EACCES: permission denied, mkdir", "EACCES: permission denied, unlink",
    "EACCES: permission denied, rename", "EACCES: permission denied, rmdir",
    "EACCES: permission denied, symlink", "EACCES: permission denied, copyfile",
    "EACCES: permission denied, mkdtemp", "EACCES: permission denied, utime",
    "ENOENT: no such file or directory, mkdir", "ENOENT: no such file or directory, symlink",
    "cannot create directory", "Could not create directory", "can't create", "Saving key",
    "could not write config file", "could not create work tree", "could not create leading",
}

function M.has_write_wording(line)
    for _, p in ipairs(M.write_wording) do
        if line:find(p) then return true end
    end
    return false
end

-- ---- write targets -----------------------------------------------------------------------

-- Per program: which short options take a value, and which arguments are written:
-- "all" (every operand), "last" (the last operand, when there are two or more, else all).
local writers = {
    touch = { vals = "drt", which = "all" }, mkdir = { vals = "m", which = "all" },
    rm = { vals = "", which = "all" }, rmdir = { vals = "", which = "all" },
    cp = { vals = "tS", which = "last" }, mv = { vals = "tS", which = "last" },
    ln = { vals = "tS", which = "last" }, install = { vals = "mogtS", which = "last" },
    tee = { vals = "", which = "all" }, truncate = { vals = "sr", which = "all" },
    chmod = { vals = "", which = "all_but_first" }, chown = { vals = "", which = "all_but_first" },
    chgrp = { vals = "", which = "all_but_first" }, mkfifo = { vals = "m", which = "all" },
    mknod = { vals = "m", which = "first" }, unlink = { vals = "", which = "all" },
    shred = { vals = "nsx", which = "all" }, sed = { vals = "ef", which = "sed" },
    dd = { vals = "", which = "dd" },
}

--- Paths (as written) the segment writes: output redirection targets and the operands of
-- known writing programs (touch, mkdir, cp, mv, rm, ln, tee, install, sed -i, truncate, ...).
function M.write_targets(seg)
    local out = shell.write_redirects(seg)
    local w = seg.name and writers[seg.name]
    if not w then return out end
    local ops, target_dir = {}, nil
    local i, args, only_ops, inplace = 1, seg.args, false, false
    local sed_script_given = false
    while i <= #args do
        local a = args[i]
        if not only_ops and a == "--" then
            only_ops = true
        elseif not only_ops and a:sub(1, 2) == "--" then
            local name, val = a:match("^%-%-([^=]+)=?(.*)$")
            if name == "target-directory" then target_dir = val ~= "" and val or args[i + 1] end
            if name == "in-place" then inplace = true end
            if name == "expression" or name == "file" then sed_script_given = true end
        elseif not only_ops and a:sub(1, 1) == "-" and #a > 1 and not a:match("^%-%d") then
            local j = 2
            while j <= #a do
                local ch = a:sub(j, j)
                if seg.name == "sed" and ch == "i" then inplace = true; break end
                if w.vals:find(ch, 1, true) then
                    local v = a:sub(j + 1)
                    if v == "" then v = args[i + 1]; i = i + 1 end
                    if ch == "t" then target_dir = v end
                    if seg.name == "sed" then sed_script_given = true end
                    break
                end
                j = j + 1
            end
        else
            ops[#ops + 1] = a
        end
        i = i + 1
    end
    local pick = {}
    if w.which == "all" then pick = ops
    elseif w.which == "last" then
        if target_dir then pick = { target_dir }
        elseif #ops >= 2 then pick = { ops[#ops] } else pick = ops end
    elseif w.which == "all_but_first" then pick = { table.unpack(ops, 2) }
    elseif w.which == "first" then pick = { ops[1] }
    elseif w.which == "sed" then
        if inplace then pick = { table.unpack(ops, sed_script_given and 1 or 2) } end
    elseif w.which == "dd" then
        for _, a in ipairs(ops) do
            local f = a:match("^of=(.+)$")
            if f then pick[#pick + 1] = f end
        end
    end
    for _, p in ipairs(pick) do out[#out + 1] = p end
    return out
end

--- Every write target of the command, made absolute against cwd: a set { [abs] = true }.
function M.all_write_targets(segments, cwd)
    local set = {}
    for _, seg in ipairs(segments) do
        for _, p in ipairs(M.write_targets(seg)) do
            local a = M.absolute(p, cwd)
            if a then set[a] = true end
        end
    end
    return set
end

-- ---- sudo, docker, dbus, network ---------------------------------------------------------

-- sudo's own lines that a sandbox causes (no_new_privs, no setuid, unmapped root, hidden
-- sudoers). "a terminal is required" or "incorrect password" are not the sandbox's doing.
M.sudo_patterns = {
    { "no new privileges", 'the "no new privileges" flag' },
    { "effective uid is not 0", "its effective uid is not 0 (nosuid or no setuid root)" },
    { "must be owned by uid 0 and have the setuid bit set", "it is not setuid root here" },
    { "is owned by uid %d+, should be 0", "its files are not owned by root here" },
    { "unable to %a+ /etc/sudoers", "/etc/sudoers is hidden" },
    { "no valid sudoers sources found", "/etc/sudoers is hidden" },
    { "PERM_%u+: setres[ug]id", "it cannot switch user ids here" },
    { "unable to change to root gid", "it cannot switch group ids here" },
    { "setresuid%(.-%): Invalid argument", "it cannot switch user ids here" },
    { "unable to set runas group vector", "it cannot switch group ids here" },
}

--- If line is one of sudo's sandbox-caused refusals: a short cause, else nil.
function M.sudo_refusal(line)
    if not line:match("^%s*sudo: ") then return nil end
    for _, p in ipairs(M.sudo_patterns) do
        if line:find(p[1]) then return p[2] end
    end
    return nil
end

-- ---- nested sandboxes ----------------------------------------------------------------------

-- A tool's own line when it could not make a namespace (a sandbox of its own) inside this one:
-- seccomp refuses unshare/setns and clone with CLONE_NEWUSER, so every such tool fails here. The
-- tools' own advice (a host sysctl, a newer kernel) is wrong inside a sandbox: the host allows
-- user namespaces, this sandbox refuses nesting them. { pattern, who, what to do instead }.
M.nested_patterns = {
    { "^%s*cordon: already inside a cordon sandbox", "the inner `cordon run`",
      "run the command itself, without it" },
    { "No usable sandbox!", "Chromium's own sandbox",
      "pass --no-sandbox to Chromium, or run it outside the sandbox" },
    { "Failed to move to new namespace", "Chromium's own sandbox",
      "pass --no-sandbox to Chromium, or run it outside the sandbox" },
    { "The SUID sandbox helper binary was found, but is not configured correctly", "Chromium's own sandbox",
      "pass --no-sandbox to Chromium, or run it outside the sandbox" },
    { "^%s*unshare: unshare failed: Operation not permitted", "unshare", "run it outside the sandbox" },
    { "^%s*bwrap: No permissions to creat[%a]* new namespace", "bubblewrap", "run it outside the sandbox" },
    { "^%s*bwrap: Creating new namespace failed: Operation not permitted", "bubblewrap",
      "run it outside the sandbox" },
    { "^%s*bwrap: setting up uid map: Permission denied", "bubblewrap", "run it outside the sandbox" },
    { "cannot clone: Operation not permitted", "a container runtime", "run it outside the sandbox" },
}

--- If line shows a tool refused a namespace of its own inside the sandbox: one sentence saying
-- so and what to do, else nil.
function M.nested_namespace(line)
    for _, p in ipairs(M.nested_patterns) do
        if line:find(p[1]) then
            return ("the sandbox refuses nested sandboxes: %s cannot make its namespace inside it "
                .. "(%s)"):format(p[2], p[3])
        end
    end
    return nil
end

M.docker_default_socket = "/var/run/docker.sock"

--- If line is the Docker client failing to reach its daemon: the socket path (or the default).
function M.docker_unreachable(line)
    local p = line:match("Cannot connect to the Docker daemon at unix://(/[^%s]-)%.? Is the docker daemon running")
    if p then return p end
    p = line:match("permission denied while trying to connect to the Docker daemon socket at unix://(/[^%s:]+)")
    if p then return p end
    p = line:match("dial unix (/[^%s:]*docker[^%s:]*%.sock): connect:")
    if p then return p end
    if line:find("Cannot connect to the Docker daemon") or
       line:find("error during connect: .-docker") then
        return M.docker_default_socket
    end
    return nil
end

M.system_bus = "/run/dbus/system_bus_socket"

--- If line is a D-Bus client failing to reach a bus: the socket path it names, or the system
-- bus (`session` true: the client asked for the user/session bus, path unknown unless named).
function M.dbus_unreachable(line, session)
    local p = line:match("Failed to connect to socket (/%S-): ") or
              line:match("unix:path=(/[^,%s;'\"]+)")
    if p then return p end
    if line:find("Failed to connect to bus") or line:find("Failed to connect to user bus") or
       line:find("^%s*Could not connect: ") or line:find("Failed to open connection to") or
       line:find("Error connecting: Could not connect") or
       line:find("Cannot autolaunch D%-Bus") or
       -- systemctl: PID 1 in the sandbox is its init; the host's systemd is reached over its bus
       line:find("System has not been booted with systemd") then
        if session then return nil, true end
        return M.system_bus
    end
    return nil
end

-- The egress proxy's refusal as clients print it.
M.network_patterns = { "blocked%-by%-policy", "403 Forbidden", "CONNECT tunnel failed, response 403",
                       "Received HTTP code 403 from proxy", "Tunnel connection failed: 403",
                       "network policy does not allow", "HTTP Error 403", "status code 403",
                       "returned error: 403",
                       -- Go's net/http through the proxy: Get "https://...": Forbidden
                       '": Forbidden$',
                       -- network.transparent: a refused connection is reset; a name no rule
                       -- could allow gets REFUSED from the sandbox's resolver
                       "Connection reset by peer", "ECONNRESET", "Could not resolve host",
                       "Couldn't connect to server",
                       "Temporary failure in name resolution", "EAI_AGAIN" }

function M.network_blocked(line)
    for _, p in ipairs(M.network_patterns) do
        if line:find(p) then return true end
    end
    return false
end

-- ---- ptrace, Unix sockets, git push -------------------------------------------------------

-- A debugger or tracer refused ptrace (the engine's seccomp filter refuses it in every profile).
M.ptrace_patterns = { "ptrace%(PTRACE_%u+.-%): Operation not permitted", "PTRACE_%u+: Operation not permitted",
                      "ptrace: Operation not permitted", "Could not attach to process",
                      "ptrace%(PTRACE_%u+.-%): Permission denied" }
M.tracers = { strace = true, ltrace = true, gdb = true, lldb = true, ["gdb-multiarch"] = true,
              gdbserver = true, ["py-spy"] = true, rr = true, perf = true }

--- Does line show a tracer (strace, gdb, ...) refused ptrace? Only for a command running one.
function M.ptrace_refused(line, programs)
    local any = false
    for t in pairs(M.tracers) do if programs[t] then any = true end end
    if not any then return false end
    for _, p in ipairs(M.ptrace_patterns) do
        if line:find(p) then return true end
    end
    return false
end

--- When Unix sockets are refused (the profile's seccomp.block_unix_sockets): whether line shows
-- a client or server that failed on one, and the socket path when the line names it.
function M.unix_socket_refused(line)
    local p = line:match("error connecting to (/%S+) %(Operation not permitted%)") or
              line:match("connect%(?%)? to (/%S+) failed: Operation not permitted") or
              line:match("[Ss]ocket (/%S-):? .-Operation not permitted")
    if p then return true, p end
    if line:find("^%s*%a*Error: %[Errno 1%] Operation not permitted%s*$") or
       line:find("socket%(?%)?: Operation not permitted") or
       line:find("[Ee]rror creating socket: Operation not permitted") or
       line:find("AF_UNIX.-Operation not permitted") then
        return true, nil
    end
    return false
end

--- A `git push` to a repository given as a local path (not a remote's name or URL): that
-- path, as written, else nil.
function M.git_push_local_target(segments)
    for _, seg in ipairs(segments) do
        if seg.name == "git" then
            local i, args = 1, seg.args
            -- git -C DIR push ...: skip git's own options
            while args[i] and args[i]:sub(1, 1) == "-" do
                if args[i] == "-C" or args[i] == "-c" then i = i + 1 end
                i = i + 1
            end
            if args[i] == "push" then
                for j = i + 1, #args do
                    local a = args[j]
                    if a:sub(1, 1) ~= "-" then
                        local path = a:match("^file://(/.*)$") or a
                        if path:match("^[/.~]") then return path end
                        return nil
                    end
                end
            end
        end
    end
    return nil
end

-- What git's receive side prints when it could not write the repository it was pushed to.
M.push_unwritable_patterns = { "unable to create temporary object directory",
                               "insufficient permission for adding an object",
                               "unable to create temporary file" }

function M.push_unwritable(line)
    for _, p in ipairs(M.push_unwritable_patterns) do
        if line:find(p, 1, true) then return true end
    end
    return false
end

-- ---- protected paths inside the workspace --------------------------------------------------

-- Why each of the coding profile's readonly_in_workspace paths is held read-only.
M.protected_why = {
    [".git/config"] = "a command could make the host's git run a program",
    [".git/hooks"] = "a hook planted there would run at the host's next git command",
    [".cordon"] = "it holds the project's own sandbox policy",
}

-- The names of a git dir the repository watcher holds read-only inside the sandbox
-- (engine/controller/repo_hold.c), besides the workspace's own .git/config and .git/hooks.
M.held_git_names = { config = true, hooks = true, commondir = true, gitdir = true,
                     ["config.worktree"] = true }

--- If rel (workspace-relative) is a name the watcher holds in a repository's `.git` (or is
-- such a `.git` file): that repository's folder ("." for the workspace's own), else nil.
function M.held_repository(rel)
    local repo, name = rel:match("^(.*)%.git/([^/]+)$")
    if repo and M.held_git_names[name] then
        repo = repo:gsub("/$", "")
        return repo == "" and "." or repo
    end
    repo = rel:match("^(.+)/%.git$")
    return repo
end

--- If abs is one of the protected paths (absolute, `protected`) or under one: the workspace-
-- relative name of that protected path, why it is protected, and whether the profile key
-- readonly_in_workspace is what holds it (false: a repository's hold, which no key changes).
function M.protected(abs, workspace, protected)
    for _, p in ipairs(protected or {}) do
        if M.within(abs, p) then
            local rel = workspace and M.within(p, workspace) and p:sub(#workspace + 2) or p
            if M.protected_why[rel] then return rel, M.protected_why[rel], true end
            local repo = M.held_repository(rel)
            if repo then
                return rel, ("it belongs to the repository %s, which the sandbox holds read-only "
                    .. "so that nothing planted there runs at the host's next git command; a "
                    .. "repository that was there before the command is removed outside the "
                    .. "sandbox"):format(repo), false
            end
            return rel, "the profile's readonly_in_workspace holds it read-only", true
        end
    end
    return nil
end

--- The directory of path, or nil for "/".
function M.parent(path)
    if path == "/" then return nil end
    local d = path:match("^(.*)/[^/]*$")
    return d == "" and "/" or d
end

-- ---- agents a grant would reach ------------------------------------------------------------

-- What git (signing) and ssh-add print when no agent answers, and the grant (profile key
-- grants.NAME, engine/sandbox/grants.h) that would make the caller's reachable.
M.grant_missing_patterns = {
    { "gpg failed to sign the data", "gpg_agent" },
    { "^error: gpg failed", "gpg_agent" },
    { "Could not open a connection to your authentication agent", "ssh_agent" },
    { "^Error connecting to agent: ", "ssh_agent" },
}

--- The grant whose missing agent line shows (gpg_agent, ssh_agent), or nil.
function M.grant_missing(line)
    for _, p in ipairs(M.grant_missing_patterns) do
        if line:find(p[1], 1, p[1]:sub(1, 1) ~= "^") then return p[2] end
    end
    return nil
end

-- ---- hidden private keys (ssh, gpg) ---------------------------------------------------------

--- Does line show an ssh server refusing every key offered (`Permission denied (publickey)`,
-- or a method list holding publickey, as ssh and git over ssh print it)?
function M.publickey_denied(line)
    local methods = line:match("Permission denied %(([%w,%-]+)%)")
    return methods ~= nil and (("," .. methods .. ","):find(",publickey,", 1, true) ~= nil)
end

-- The names ssh looks for its own keys under (ssh_config(5), IdentityFile's defaults).
M.ssh_default_keys = { "id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_dsa" }

--- Does name look like an ssh private key's file (ssh's default names, `*.pem`, `*key*`; not a
-- public key, a socket folder or authorized_keys)?
local function key_like(name)
    return not name:find("%.pub$") and name ~= "authorized_keys" and name ~= "authorized_keys2"
        and (name:find("^id_") ~= nil or name == "identity" or name:find("%.pem$") ~= nil
             or name:find("key") ~= nil)
end

--- The private key files ssh may have wanted for command that lie in the hidden paths: those
-- the command names (`-i FILE`, `-oIdentityFile=FILE`; relative ones against cwd), the hidden
-- entries of a `.ssh` folder that look like keys (the profile hides ~/.ssh's private keys one
-- by one), and ssh's defaults in a `.ssh` hidden whole. A list of absolute paths, the named
-- ones first; whether each exists is the caller's question.
function M.hidden_ssh_keys(command, hidden, cwd)
    local out, seen = {}, {}
    local function add(p)
        p = M.absolute(p, cwd)
        if p and not seen[p] and M.under_any(p, hidden) then seen[p] = true; out[#out + 1] = p end
    end
    command = command or ""
    for value in command:gmatch("%-i%s*[\"']?([^%s\"'$~]+)") do add(value) end
    for value in command:gmatch("IdentityFile[=%s]+[\"']?([^%s\"'$~]+)") do add(value) end
    for _, h in ipairs(hidden or {}) do
        if type(h) == "string" then
            local name = h:match("/%.ssh/([^/]+)$")
            if name and key_like(name) then
                add(h)
            elseif h:find("/%.ssh$") then
                for _, k in ipairs(M.ssh_default_keys) do add(h .. "/" .. k) end
            end
        end
    end
    return out
end

--- Does line show gpg finding no private key to sign or decrypt with (`No secret key`)?
function M.no_secret_key(line)
    return line:find("No secret key", 1, true) ~= nil or line:find("no secret key", 1, true) ~= nil
end

--- The hidden GnuPG homes (a hidden `.gnupg`), in the order the list gives them.
function M.hidden_gnupg(hidden)
    local out = {}
    for _, h in ipairs(hidden or {}) do
        if type(h) == "string" and h:find("/%.gnupg$") then out[#out + 1] = h end
    end
    return out
end

-- ---- the sandbox's own loopback -------------------------------------------------------------

-- A connection refused, as clients print it (curl's "Couldn't connect" is its 7 for a refusal).
M.refused_patterns = { "Connection refused", "connection refused", "ECONNREFUSED", "Errno 111%]",
                       "os error 111%)", "Couldn't connect to server",
                       -- MySQL's and MariaDB's client: the errno in parentheses
                       "Can't connect to .* %(111%)" }

local loopback_port_patterns = {
    "127%.[%d.]+:(%d+)", "localhost:(%d+)", "%[::1%]:(%d+)",
    "127%.[%d.]+ port (%d+)", "localhost port (%d+)", "::1 port (%d+)",
    "port=(%d+)", "%(127%.[%d.]+%), port (%d+)", "port (%d+) failed", "'127%.[%d.]+' %((%d+)%)",
}

--- When line shows a connection to a loopback address refused: the port it names (a number),
-- else true (a refusal without a port: Python's `[Errno 111] Connection refused`); nil when
-- line shows no refused connection.
function M.connection_refused(line)
    if not find_any(line, M.refused_patterns) then return nil end
    if line:find("127%.") or line:find("localhost") or line:find("::1") then
        for _, p in ipairs(loopback_port_patterns) do
            local port = line:match(p)
            if port then return tonumber(port) end
        end
    end
    -- a port on a line about another host is not the loopback's
    if line:find("%d+%.%d+%.%d+%.%d+") or line:find("host='") then return nil end
    return true
end

--- The loopback ports command names (`127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`), in order.
function M.loopback_ports_in(command)
    local out, seen = {}, {}
    for _, p in ipairs({ "127%.[%d.]+:(%d+)", "localhost:(%d+)", "%[::1%]:(%d+)" }) do
        for port in (command or ""):gmatch(p) do
            local n = tonumber(port)
            if n and not seen[n] then seen[n] = true; out[#out + 1] = n end
        end
    end
    return out
end

-- ---- the system's package managers ----------------------------------------------------------

-- Where the system's installers (apt-get, apt, aptitude, dpkg) keep what they write: a refused
-- write there is an install that belongs outside.
M.system_dirs = { "/var/lib/dpkg", "/var/lib/apt", "/var/cache/apt", "/var/cache/debconf", "/var/log/apt",
                  "/usr", "/etc", "/var/lib/ucf", "/var/log/dpkg.log" }

--- The system installer the command runs (apt-get, apt, aptitude, dpkg), or nil: what they
-- install goes into the system, whose files are read-only to every sandbox, root's included.
function M.system_installer(programs)
    for _, name in ipairs({ "apt-get", "apt", "aptitude", "dpkg" }) do
        if programs[name] then return name end
    end
    return nil
end

--- The one sentence for an install the sandbox cannot do.
function M.installer_reason(installer)
    return ("%s cannot change the system inside the sandbox: its files (/usr, /etc, /var/lib/dpkg, "
        .. "/var/lib/apt) are read-only to every sandbox, root's too; installing and updating "
        .. "packages belongs outside it (run the command outside the sandbox)"):format(installer)
end

--- Does line show an installer refused its lock or its system folders (apt's `are you root?`,
-- `Could not open lock file`, dpkg's `requested operation requires superuser privilege`)?
function M.installer_refused(line)
    return line:find("are you root?", 1, true) ~= nil
        or line:find("Could not open lock file", 1, true) ~= nil
        or line:find("requires superuser privilege", 1, true) ~= nil
        or line:find("Unable to lock directory", 1, true) ~= nil
end

-- ---- a repository's .git held in place ------------------------------------------------------

--- The `.git` folder abs is or lies in, when it is one (`/ws/.git` for `/ws/.git/config`), or nil.
function M.git_dir_of(abs)
    if type(abs) ~= "string" then return nil end
    local d = abs:match("^(.-/%.git)$") or abs:match("^(.-/%.git)/")
    return d
end

--- git's own "failed to delete 'X'" or "failed to move 'X' to 'Y'" (`git worktree remove`,
-- `move`, `prune`): "remove" or "move" and X, or nil.
function M.git_worktree_op(line)
    local x = line:match("failed to delete '([^']+)'")
    if x then return "remove", x end
    x = line:match("failed to move '([^']+)' to '")
    if x then return "move", x end
    return nil
end

--- The `.git` folders command moves or removes (`mv .git X`, `rm -r .git`, `rmdir .git`),
-- absolute against cwd: a table `.git` -> "mv" or "rm" (rmdir counts as rm).
function M.git_dir_moves(segments, cwd)
    local out = {}
    for _, seg in ipairs(segments or {}) do
        if seg.name == "mv" or seg.name == "rm" or seg.name == "rmdir" then
            local args = {}
            for _, a in ipairs(seg.args) do
                if a:sub(1, 1) ~= "-" then args[#args + 1] = a end
            end
            local last = seg.name == "mv" and #args - 1 or #args  -- mv's last word is where to
            for i = 1, last do
                local abs = M.absolute((args[i]:gsub("/+$", "")), cwd)
                if abs and abs:find("/%.git$") then out[abs] = seg.name == "mv" and "mv" or "rm" end
            end
        end
    end
    return out
end

-- ---- ssh host keys -------------------------------------------------------------------------

--- Does line show ssh refusing the server because it could not verify its host key (no known
-- key under strict checking, BatchMode, or a key that differs)?
function M.host_key_failed(line)
    return line:find("Host key verification failed", 1, true) ~= nil
end

--- The known-hosts files ssh may have read for command that lie in the hidden paths: those the
-- command names (UserKnownHostsFile or GlobalKnownHostsFile as -o NAME=PATH, -o NAME PATH,
-- -oNAME=PATH; relative ones against cwd), the system's, and ssh's defaults in every home the
-- hidden list shows (a hidden `.../.ssh`, a hidden home, a hidden known_hosts itself). A list
-- of absolute paths, the named ones first; whether each exists is the caller's question.
function M.hidden_known_hosts(command, hidden, cwd)
    local out, seen = {}, {}
    local function add(p)
        p = M.absolute(p, cwd)
        if p and not seen[p] and M.under_any(p, hidden) then seen[p] = true; out[#out + 1] = p end
    end
    for _, key in ipairs({ "UserKnownHostsFile", "GlobalKnownHostsFile" }) do
        for value in (command or ""):gmatch(key .. "[=%s]+[\"']?([^%s\"'$~]+)") do
            add(value)
        end
    end
    add("/etc/ssh/ssh_known_hosts")
    add("/etc/ssh/ssh_known_hosts2")
    for _, h in ipairs(hidden or {}) do
        if type(h) == "string" then
            if h:find("/known_hosts2?$") then
                add(h)
            elseif h:find("/%.ssh$") then
                add(h .. "/known_hosts"); add(h .. "/known_hosts2")
            else
                add(h .. "/.ssh/known_hosts"); add(h .. "/.ssh/known_hosts2")
            end
        end
    end
    return out
end

return M
