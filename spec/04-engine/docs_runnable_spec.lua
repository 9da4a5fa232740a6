-- spec/04-engine/docs_runnable_spec.lua — the command blocks of README.md and docs/*.md run as
-- printed, and print what the documents show.
-- Owns: reading the documents' code blocks and their markers (the convention is written in
--   CONTRIBUTING.md, "Examples in the documents"), running every `runnable` block in a scratch
--   workspace with `cordon` on PATH (the build's binary, or the copy another uid can reach), and
--   comparing its output with the block's transcript or the `output` block after it.
-- Uses: the built binary, bash, setpriv, git; the documents themselves as the only input.
-- Never: evaluates a block that is not marked runnable; reaches the internet (a block that needs
--   it is marked not-runnable, with the reason, and counted).
local h = require("spec.helpers")

-- Info strings of fenced blocks that are not commands (a file's text, code in a language).
local NOT_SHELL = { lua = true, json = true, python = true, ts = true, typescript = true,
    toml = true, yaml = true, c = true, text = true, diff = true, ini = true }

-- Options a `runnable` marker may carry.
local OPTIONS = { setup = true, fails = true, as = true, normalise = true }
local SETUPS = { empty = true, app = true, files = true, corpus = true, servers = true }

--- The documents: README.md and every docs/*.md, in name order.
local function documents(root)
    local list = { "README.md" }
    local r = h.sh("cd " .. h.quote(root) .. " && ls docs/*.md")
    for name in r.stdout:gmatch("[^\n]+") do list[#list + 1] = name end
    return list
end

--- Parses `<!-- KIND[: REST] -->`; returns kind, rest or nil.
local function marker_of(line)
    local body = line and line:match("^%s*<!%-%-%s*(.-)%s*%-%->%s*$")
    if not body then return nil end
    local kind, rest = body:match("^([%w%-]+)%s*:%s*(.*)$")
    if not kind then kind, rest = body:match("^([%w%-]+)$"), "" end
    return kind, rest
end

--- The code blocks of one document: { file, line, fenced, info, text, marker, rest, problem }.
-- line is the block's first line (the fence or the first indented line); marker is the kind of
-- the HTML comment on the nearest non-blank line before it (nil when there is none).
local function blocks_of(root, file)
    local lines = {}
    for l in ((h.read_file(root .. "/" .. file) or "") .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
    local out, i, prev_blank = {}, 1, true
    local function marker_before(at)
        local k = at - 1
        while k >= 1 and lines[k]:match("^%s*$") do k = k - 1 end
        return marker_of(lines[k])
    end
    while i <= #lines do
        local l = lines[i]
        local indent, fence = l:match("^(%s*)(```+)")
        if fence then
            local info = l:match("^%s*`+%s*([%w_+-]*)")
            local body, s = {}, i
            i = i + 1
            while i <= #lines and not lines[i]:match("^%s*```") do
                body[#body + 1] = lines[i]:sub(#indent + 1)
                i = i + 1
            end
            local kind, rest = marker_before(s)
            out[#out + 1] = { file = file, line = s, fenced = true, info = info, text = table.concat(body, "\n"),
                marker = kind, rest = rest }
            i, prev_blank = i + 1, false
        elseif prev_blank and l:match("^    %S") then
            -- an indented block (a list item's indented paragraph counts too: mark it or indent
            -- it as the list's text)
            local body, s = {}, i
            while i <= #lines and (lines[i]:match("^    ") or
                (lines[i]:match("^%s*$") and lines[i + 1] and lines[i + 1]:match("^    "))) do
                body[#body + 1] = lines[i]:sub(5)
                i = i + 1
            end
            local kind, rest = marker_before(s)
            out[#out + 1] = { file = file, line = s, fenced = false, info = "", text = table.concat(body, "\n"),
                marker = kind, rest = rest }
            prev_blank = false
        else
            prev_blank = l:match("^%s*$") ~= nil
            i = i + 1
        end
    end
    return out
end

--- Whether a block may be a command a person pastes (so it must carry a marker).
local function is_shell(b)
    return not (b.fenced and NOT_SHELL[b.info])
end

--- Checks markers; returns the classified blocks and the list of problems ("file:line: why").
local function classify(root)
    local runs, skipped, problems, files = {}, {}, {}, {}
    for _, file in ipairs(documents(root)) do
        local last_run
        for _, b in ipairs(blocks_of(root, file)) do
            local where = ("%s:%d"):format(b.file, b.line)
            if b.marker == "file" then
                files[file] = files[file] or {}
                files[file][#files[file] + 1] = { path = b.rest, text = b.text }
            end
            if b.marker == "runnable" then
                b.opts = {}
                for k, v in b.rest:gmatch("(%w+)=(%S+)") do
                    if not OPTIONS[k] then problems[#problems + 1] = where .. ": unknown runnable option " .. k end
                    b.opts[k] = v
                end
                if b.opts.setup and not SETUPS[b.opts.setup] then
                    problems[#problems + 1] = where .. ": unknown setup " .. b.opts.setup
                end
                runs[#runs + 1], last_run = b, b
            elseif b.marker == "output" then
                if not last_run or last_run.output then
                    problems[#problems + 1] = where .. ": an output block that follows no runnable block"
                else
                    last_run.output, last_run.output_opts = b, b.rest
                end
            elseif b.marker == "not-runnable" then
                if b.rest == "" then problems[#problems + 1] = where .. ": not-runnable without a reason" end
                skipped[#skipped + 1] = b
            elseif b.marker == "file" then
                if b.rest == "" then problems[#problems + 1] = where .. ": file without a path" end
            elseif is_shell(b) then
                problems[#problems + 1] = where .. ": a code block without a marker (<!-- runnable -->, "
                    .. "<!-- output -->, <!-- not-runnable: why --> or <!-- file: PATH -->: CONTRIBUTING.md)"
            end
            if b.marker ~= "runnable" and b.marker ~= "output" then last_run = nil end
        end
    end
    return runs, skipped, problems, files
end

--- The script a block runs, and the output it shows. A transcript (lines starting with `$ `)
-- runs its `$ ` lines; every other line is the output shown. The script keeps the block's line
-- numbers (output lines become blank lines), so a failing line is named by its line in the block.
local function script_of(b)
    local transcript = ("\n" .. b.text):find("\n%$ ") ~= nil
    if not transcript then return b.text, b.output and b.output.text end
    local script, shown = {}, {}
    for l in (b.text .. "\n"):gmatch("([^\n]*)\n") do
        if l:sub(1, 2) == "$ " then script[#script + 1] = l:sub(3)
        else
            script[#script + 1] = ""
            shown[#shown + 1] = l
        end
    end
    return table.concat(script, "\n"), table.concat(shown, "\n")
end

--- The documented normalisation: trailing blanks go, the data directory reads DATADIR, the
-- workspace WORKSPACE and the home HOME; with `numbers`, every run of digits reads N.
local function normalise(s, env, numbers)
    s = "\n" .. s .. "\n"
    for _, pair in ipairs(env.names) do
        s = s:gsub(pair[1]:gsub("%p", "%%%0"), (pair[2]:gsub("%%", "%%%%")))
    end
    s = s:gsub("[ \t]+\n", "\n")
    if numbers then s = s:gsub("%d+", "N") end
    return (s:gsub("^\n+", ""):gsub("\n+$", ""))
end

--- Whether the printed text matches the shown text line by line, where `...` in a shown line
-- stands for any text (in that line).
local function matches(printed, shown)
    local p, w = {}, {}
    for l in (printed .. "\n"):gmatch("([^\n]*)\n") do p[#p + 1] = l end
    for l in (shown .. "\n"):gmatch("([^\n]*)\n") do w[#w + 1] = l end
    if #p ~= #w then return false end
    for i = 1, #w do
        local pat = "^" .. w[i]:gsub("%p", "%%%0"):gsub("%%%.%%%.%%%.", ".-") .. "$"
        if not p[i]:match(pat) then return false end
    end
    return true
end

--- Prepares the workspace a block's setup names.
local function prepare(env, b, files, root)
    local setup = b.opts.setup or "empty"
    local ws = env.ws
    if setup == "app" then
        -- a small web project: `npm test` passes, `npm run dev` serves the folder on 5173, `make`
        -- builds
        h.write_file(ws .. "/package.json", '{ "name": "demo", "version": "1.0.0", "private": true,\n'
            .. '  "scripts": { "test": "node -e \\"console.log(\'tests passed\')\\"",\n'
            .. '               "dev": "python3 -m http.server --bind 127.0.0.1 5173" } }\n')
        h.write_file(ws .. "/Makefile", "all:\n\t@echo built\n")
        h.write_file(ws .. "/index.html", "<h1>demo</h1>\n")
    elseif setup == "files" then
        for _, f in ipairs(files[b.file] or {}) do
            local dir = f.path:match("^(.*)/[^/]+$")
            if dir then h.sh_ok("mkdir -p " .. h.quote(ws .. "/" .. dir)) end
            h.write_file(ws .. "/" .. f.path, f.text .. "\n")
        end
    elseif setup == "servers" then
        -- the stand-ins the documents name: a service of the person's on the host's
        -- 127.0.0.1:8765, and a "remote" web server at 127.0.0.2:8080
        for _, srv in ipairs({ { "127.0.0.1", 8765, "hello from the host" },
            { "127.0.0.2", 8080, "hello from 127.0.0.2" } }) do
            local dir = h.tmpdir()
            h.write_file(dir .. "/index.html", srv[3] .. "\n")
            h.spawn(("sh -c %s"):format(h.quote(("cd %s && exec %s -m http.server --bind %s %d"):format(
                h.quote(dir), h.python, srv[1], srv[2]))))
            local url = ("http://%s:%d/"):format(srv[1], srv[2])
            assert(h.wait_for(function()
                return h.sh("curl -fsS --noproxy '*' " .. url).stdout == srv[3] .. "\n"
            end, 10), "the stand-in server at " .. url .. " did not answer (port taken?)")
        end
    elseif setup == "corpus" then
        h.sh_ok(("mkdir -p %s/spec/fixtures && cp -R %s/spec/fixtures/refusal %s/spec/fixtures/"):format(
            h.quote(ws), h.quote(root), h.quote(ws)))
    end
    -- a repository with one commit, as most workspaces are (git runs as root here: the folder
    -- may already be uid's)
    local git = "git -c safe.directory='*' -c user.email=dev@example.com -c user.name=dev "
    h.sh_ok(("cd %s && git init -q -b main . && %sadd -A && %scommit -q --allow-empty -m start"):format(
        h.quote(ws), git, git))
    if env.uid then h.sh_ok(("chown -R %d:%d %s"):format(env.uid, env.uid, h.quote(ws))) end
end

--- Runs one block as uid (nil: root); returns nil when it did as printed, else why not.
local function run_block(b, files, root, uid)
    local env = { uid = uid }
    local bindir, pre, extra = h.bin:match("^(.*)/[^/]+$"), "", ""
    local datadir = bindir .. "/share/cordon"
    if uid then
        local copy, why = h.unprivileged_copy(uid)
        if not copy then h.skip(why) end
        bindir, datadir = copy.dir, copy.datadir
        pre = ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid)
        extra = "CORDON_DATADIR=" .. h.quote(copy.datadir) .. " "
    end
    env.home = h.secret_home(uid)
    env.ws = h.workspace(nil, uid)
    -- longest first: the workspace may lie under the data directory's folder, never the reverse
    env.names = { { env.ws, "WORKSPACE" }, { datadir, "DATADIR" }, { env.home, "HOME" } }
    prepare(env, b, files, root)
    local script, shown = script_of(b)
    local dir = h.tmpdir()
    -- the last line, not the block's, gives the sourced file's status: the trap sees each
    -- failing command once
    h.write_file(dir .. "/block.sh", script .. "\ntrue\n", "644")
    h.write_file(dir .. "/failed", "", "666")
    h.sh_ok("chmod 755 " .. h.quote(dir))
    -- the ERR trap writes the block line of every command that exited non-zero
    local driver = ("trap 'echo $LINENO >>%s' ERR; . %s"):format(h.quote(dir .. "/failed"),
        h.quote(dir .. "/block.sh"))
    local r = h.sh(("cd %s && timeout -k 5 240 %senv -i HOME=%s PATH=%s USER=%s LANG=C.UTF-8 %sbash "
        .. "--noprofile --norc -c %s 2>&1"):format(h.quote(env.ws), pre, h.quote(env.home),
        h.quote(bindir .. ":" .. h.path), uid and "nobody" or "root", extra, h.quote(driver)))
    local where = ("%s:%d%s"):format(b.file, b.line, uid and " (as uid " .. uid .. ")" or " (as root)")
    local failed = {}
    for n in (h.read_file(dir .. "/failed") or ""):gmatch("%d+") do failed[#failed + 1] = n end
    local want = {}
    for n in (b.opts.fails or ""):gmatch("%d+") do want[#want + 1] = n end
    if table.concat(failed, ",") ~= table.concat(want, ",") then
        return ("%s: the block's lines that exited non-zero were {%s}, the marker says {%s}\n%s"):format(
            where, table.concat(failed, ","), table.concat(want, ","), r.stdout)
    end
    if shown then
        local numbers = (b.output_opts or ""):find("numbers", 1, true) ~= nil or b.opts.normalise == "numbers"
        local got, exp = normalise(r.stdout, env, numbers), normalise(shown, env, numbers)
        if not matches(got, exp) then
            return ("%s: the output differs from the document's\n--- shown\n%s\n--- printed\n%s"):format(
                where, exp, got)
        end
    end
    return nil
end

local function run_all(uid)
    local root = h.source_dir
    local runs, skipped, problems, files = classify(root)
    assert.are.same({}, problems)
    local errors, ran, compared = {}, 0, 0
    for _, b in ipairs(runs) do
        if not (uid and b.opts.as == "root") then
            local err = run_block(b, files, root, uid)
            if err then errors[#errors + 1] = err end
            ran = ran + 1
            if b.output or ("\n" .. b.text):find("\n%$ ") then compared = compared + 1 end
        end
        h.cleanup()
    end
    print(("# %s: %d blocks ran as printed (%d with their output compared), %d root only, %d not runnable")
        :format(uid and "uid " .. uid or "root", ran, compared, #runs - ran, #skipped))
    assert.are.equal(0, #errors, table.concat(errors, "\n\n"))
    return #runs
end

describe("the documents' command blocks", function()
    after_each(h.cleanup)

    it("are each marked runnable, output, not runnable (with a reason) or a file", function()
        local runs, skipped, problems = classify(h.source_dir)
        for _, b in ipairs(skipped) do print(("# not runnable %s:%d: %s"):format(b.file, b.line, b.rest)) end
        assert.are.same({}, problems)
        assert.is_true(#runs >= 10, "expected the documents' runnable blocks, found " .. #runs)
    end)

    it("run as printed as root, and print what the documents show", function()
        run_all(nil)
    end)

    it("run as printed as uid 65534", function()
        run_all(65534)
    end)

    it("fail the spec when unmarked, or when the output shown is not what runs print", function()
        -- the checks can fail: a document with an unmarked block, and one whose output is wrong
        local root = h.tmpdir()
        h.sh_ok("mkdir " .. h.quote(root .. "/docs"))
        h.write_file(root .. "/README.md", "# x\n\n    cordon run -- true\n")
        local _, _, problems = classify(root)
        assert.are.same({ "README.md:3: a code block without a marker (<!-- runnable -->, <!-- output -->, "
            .. "<!-- not-runnable: why --> or <!-- file: PATH -->: CONTRIBUTING.md)" }, problems)
        h.write_file(root .. "/README.md", "# x\n\n<!-- runnable -->\n\n    $ cordon run -- echo hello\n    hullo\n")
        local runs, _, problems2 = classify(root)
        assert.are.same({}, problems2)
        local err = run_block(runs[1], {}, root, nil)
        assert.truthy(err and err:find("the output differs", 1, true), err)
        h.write_file(root .. "/README.md", "# x\n\n<!-- runnable -->\n\n    $ cordon run -- echo hello\n    hello\n")
        runs = classify(root)
        assert.is_nil(run_block(runs[1], {}, root, nil))
    end)
end)
