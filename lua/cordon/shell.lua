-- cordon.shell — what a shell command line runs, as far as a reader of the line can tell.
-- Owns: quote-aware splitting of a command line into simple commands ("segments") on `;`, `|`,
-- `||`, `&&`, `&`, `|&`, newlines, parentheses and braces, and the contents of `$(...)` and
-- backticks (nested, inside double quotes too); quote removal (single, double, backslash,
-- $'...'); here-document bodies skipped; redirections per segment; the program behind the
-- wrappers sudo, env, timeout, nice, nohup, exec, command, time, stdbuf and `bash -c '...'`
-- (whose string is split recursively).
-- Uses only the standard string/table library, so plain lua5.4 runs it (specs) and so does the
-- policy sandbox. Must never evaluate anything: variables, globs and substitutions stay as
-- written (a `$(...)` word keeps its text; its inner commands become segments of their own).
--
-- A segment:
--   { words = { "sudo", "-u", "x", "touch", "/etc/motd" },  -- quote-removed words, assignments and
--                                                            -- redirections left out
--     assignments = { "A=1" },        -- leading NAME=VALUE words
--     redirs = { { op = ">", fd = 1, target = "/etc/motd" }, ... },
--     wrappers = { "sudo" },          -- basenames of the wrappers unwrapped, outermost first
--                                     -- (a `bash -c` string's segments inherit the outer ones
--                                     -- plus "bash")
--     program = "touch",              -- the word the wrappers run (as written), or nil
--     name = "touch",                 -- its basename
--     args = { "/etc/motd" },         -- the words after it
--     substitution = true|nil,        -- came from inside $(...) or backticks
--   }
local M = {}

local MAX_DEPTH = 16 -- nesting of $(...), backticks and bash -c strings we follow

local function basename(w)
    return (w:match("([^/]*)$"))
end
M.basename = basename

-- ---- the tokenizer ------------------------------------------------------------------------

-- Index just past the `)` matching the `(` at s[i] (i points at the "("), honouring quotes,
-- nested parentheses and backticks. Returns #s + 1 when unbalanced.
local function skip_parens(s, i)
    local depth, n = 0, #s
    while i <= n do
        local c = s:sub(i, i)
        if c == "\\" then
            i = i + 2
        elseif c == "'" then
            local j = s:find("'", i + 1, true)
            i = (j or n) + 1
        elseif c == '"' then
            i = i + 1
            while i <= n do
                local d = s:sub(i, i)
                if d == "\\" then i = i + 2
                elseif d == '"' then break
                elseif d == "$" and s:sub(i + 1, i + 1) == "(" then i = skip_parens(s, i + 1)
                else i = i + 1 end
            end
            i = i + 1
        elseif c == "`" then
            local j = i + 1
            while j <= n and s:sub(j, j) ~= "`" do
                if s:sub(j, j) == "\\" then j = j + 1 end
                j = j + 1
            end
            i = j + 1
        elseif c == "(" then
            depth = depth + 1
            i = i + 1
        elseif c == ")" then
            depth = depth - 1
            i = i + 1
            if depth == 0 then return i end
        else
            i = i + 1
        end
    end
    return n + 1
end

-- Index just past the closing backtick for the backtick at s[i]; the inner text with the
-- backslash escapes of backquote substitution removed.
local function skip_backtick(s, i)
    local out, j, n = {}, i + 1, #s
    while j <= n do
        local c = s:sub(j, j)
        if c == "\\" and j < n then
            local d = s:sub(j + 1, j + 1)
            if d == "`" or d == "\\" or d == "$" then out[#out + 1] = d else out[#out + 1] = c .. d end
            j = j + 2
        elseif c == "`" then
            return j + 1, table.concat(out)
        else
            out[#out + 1] = c
            j = j + 1
        end
    end
    return n + 1, table.concat(out)
end

local ansi_escapes = { n = "\n", t = "\t", r = "\r", a = "\a", b = "\b", e = "\27", E = "\27",
                       f = "\f", v = "\v", ["\\"] = "\\", ["'"] = "'", ['"'] = '"', ["?"] = "?" }

-- Operators, longest first. A redirection operator may be preceded by a file descriptor
-- number (`2>`) written right before it.
local redir_ops = { "&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<>", "<&", ">", "<" }
local control_ops = { "||", "&&", "|&", ";;", "|", "&", ";", "\n", "(", ")" }

-- The bytes where a run of ordinary word bytes ends: every byte some branch of tokenize reads
-- specially (quotes, escapes, $, backticks, operators' first bytes, comments, braces, blanks).
local SPECIAL = "[%s\\'\"$`<>|&;()#{}]"

local function match_op(s, i, list)
    for _, op in ipairs(list) do
        if s:sub(i, i + #op - 1) == op then return op end
    end
end

-- Split s into tokens: { t = "word", v = unquoted, raw = text } / { t = "op", v = op } /
-- { t = "redir", v = op, fd = n|nil }. Substitutions found on the way go to subs (their inner
-- text). Here-document bodies are skipped.
local function tokenize(s, subs)
    local toks, i, n = {}, 1, #s
    local heredocs = {} -- pending delimiters: { delim, strip_tabs }
    local word, raw, in_word = {}, {}, false
    local function flush()
        if in_word then
            toks[#toks + 1] = { t = "word", v = table.concat(word), raw = table.concat(raw) }
        end
        word, raw, in_word = {}, {}, false
    end
    local function add(v, r)
        word[#word + 1] = v
        raw[#raw + 1] = r or v
        in_word = true
    end
    while i <= n do
        local c = s:sub(i, i)
        local plain_end = s:find(SPECIAL, i)
        if plain_end ~= i then
            -- a run of bytes no rule below treats specially (most of a command line): one piece
            -- of the word, taken at once instead of byte by byte through the operator lists
            plain_end = plain_end or (n + 1)
            add(s:sub(i, plain_end - 1))
            i = plain_end
        elseif c == "\\" then
            local d = s:sub(i + 1, i + 1)
            if d == "\n" then
                i = i + 2 -- line continuation
            else
                add(d, c .. d)
                i = i + 2
            end
        elseif c == "'" then
            local j = s:find("'", i + 1, true) or (n + 1)
            add(s:sub(i + 1, j - 1), s:sub(i, j))
            i = j + 1
        elseif c == "$" and s:sub(i + 1, i + 1) == "'" then
            local j, out = i + 2, {}
            while j <= n and s:sub(j, j) ~= "'" do
                local d = s:sub(j, j)
                if d == "\\" and j < n then
                    local e = s:sub(j + 1, j + 1)
                    out[#out + 1] = ansi_escapes[e] or ("\\" .. e)
                    j = j + 2
                else
                    out[#out + 1] = d
                    j = j + 1
                end
            end
            add(table.concat(out), s:sub(i, j))
            i = j + 1
        elseif c == '"' then
            local j, out = i + 1, {}
            while j <= n do
                local d = s:sub(j, j)
                if d == "\\" then
                    local e = s:sub(j + 1, j + 1)
                    if e == "$" or e == "`" or e == '"' or e == "\\" then out[#out + 1] = e
                    elseif e ~= "\n" then out[#out + 1] = d .. e end -- backslash-newline: both dropped
                    j = j + 2
                elseif d == '"' then
                    break
                elseif d == "$" and s:sub(j + 1, j + 2) == "((" then
                    local k = skip_parens(s, j + 1)
                    out[#out + 1] = s:sub(j, k - 1)
                    j = k
                elseif d == "$" and s:sub(j + 1, j + 1) == "(" then
                    local k = skip_parens(s, j + 1)
                    subs[#subs + 1] = s:sub(j + 2, k - 2)
                    out[#out + 1] = s:sub(j, k - 1)
                    j = k
                elseif d == "`" then
                    local k, inner = skip_backtick(s, j)
                    subs[#subs + 1] = inner
                    out[#out + 1] = s:sub(j, k - 1)
                    j = k
                else
                    out[#out + 1] = d
                    j = j + 1
                end
            end
            add(table.concat(out), s:sub(i, j))
            i = j + 1
        elseif c == "$" and s:sub(i + 1, i + 2) == "((" then
            local k = skip_parens(s, i + 1)
            add(s:sub(i, k - 1))
            i = k
        elseif c == "$" and s:sub(i + 1, i + 1) == "(" then
            local k = skip_parens(s, i + 1)
            subs[#subs + 1] = s:sub(i + 2, k - 2)
            add(s:sub(i, k - 1))
            i = k
        elseif c == "$" and s:sub(i + 1, i + 1) == "{" then
            local k = s:find("}", i + 2, true) or n
            add(s:sub(i, k))
            i = k + 1
        elseif c == "`" then
            local k, inner = skip_backtick(s, i)
            subs[#subs + 1] = inner
            add(s:sub(i, k - 1))
            i = k
        elseif (c == "<" or c == ">") and s:sub(i + 1, i + 1) == "(" then
            -- process substitution <(cmd) / >(cmd): a word whose commands run too
            local k = skip_parens(s, i + 1)
            subs[#subs + 1] = s:sub(i + 2, k - 2)
            add(s:sub(i, k - 1))
            i = k
        elseif c == "#" and not in_word then
            local j = s:find("\n", i, true) or (n + 1)
            i = j
        elseif c == " " or c == "\t" then
            flush()
            i = i + 1
        else
            local rop = match_op(s, i, redir_ops)
            if rop then
                -- "2>" : the digits just collected are the fd, not a word
                local fd
                local w = table.concat(raw)
                if in_word and w:match("^%d+$") then
                    fd = tonumber(w)
                    word, raw, in_word = {}, {}, false
                else
                    flush()
                end
                toks[#toks + 1] = { t = "redir", v = rop, fd = fd }
                i = i + #rop
                if rop == "<<" or rop == "<<-" then
                    -- the delimiter word follows; remember it to skip the body after the newline
                    local j = i
                    while s:sub(j, j) == " " or s:sub(j, j) == "\t" do j = j + 1 end
                    local k = j
                    while k <= n and not s:sub(k, k):match("[%s;&|<>()]") do k = k + 1 end
                    local delim = s:sub(j, k - 1):gsub("[\"'\\]", "")
                    heredocs[#heredocs + 1] = { delim, rop == "<<-" }
                end
            else
                local op = match_op(s, i, control_ops)
                if op then
                    flush()
                    toks[#toks + 1] = { t = "op", v = op }
                    i = i + #op
                    if op == "\n" and #heredocs > 0 then
                        for _, hd in ipairs(heredocs) do
                            while i <= n do
                                local j = s:find("\n", i, true) or (n + 1)
                                local line = s:sub(i, j - 1)
                                i = j + 1
                                if hd[2] then line = line:gsub("^\t+", "") end
                                if line == hd[1] then break end
                            end
                        end
                        heredocs = {}
                    end
                elseif c == "{" and not in_word and (s:sub(i + 1, i + 1):match("^%s") or i == n) then
                    toks[#toks + 1] = { t = "op", v = "{" }
                    i = i + 1
                elseif c == "}" and not in_word then
                    toks[#toks + 1] = { t = "op", v = "}" }
                    i = i + 1
                else
                    add(c)
                    i = i + 1
                end
            end
        end
    end
    flush()
    return toks
end

-- ---- unwrapping ---------------------------------------------------------------------------

-- Options whose value is the next word (or the rest of the same word), per wrapper.
local value_opts = {
    sudo = { short = "ugCDhprtTU", long = { user = true, group = true, chdir = true, chroot = true,
             host = true, prompt = true, role = true, type = true, ["other-user"] = true,
             ["close-from"] = true, ["command-timeout"] = true } },
    env = { short = "uCS", long = { unset = true, chdir = true, ["split-string"] = true,
            ["default-signal"] = false, ["ignore-signal"] = false, ["block-signal"] = false } },
    timeout = { short = "sk", long = { signal = true, ["kill-after"] = true } },
    nice = { short = "n", long = { adjustment = true } },
    exec = { short = "a", long = {} },
    stdbuf = { short = "ioe", long = { input = true, output = true, error = true } },
    command = { short = "", long = {} },
    time = { short = "fo", long = { format = true, output = true } },
    nohup = { short = "", long = {} },
    doas = { short = "uC", long = {} },
}

-- Skip the options of wrapper `w` starting at words[i]. Returns the index of the first word
-- after the options, and the options seen ({ letter_or_long = value|true }).
local function skip_options(w, words, i)
    local spec = value_opts[w]
    local seen = {}
    while i <= #words do
        local a = words[i]
        if a == "--" then return i + 1, seen end
        if w == "nice" and a:match("^%-%d+$") then -- old form: nice -10 cmd
            seen.n = a:sub(2)
            i = i + 1
        elseif a:sub(1, 2) == "--" then
            local name, val = a:match("^%-%-([^=]+)=(.*)$")
            name = name or a:sub(3)
            if val == nil and spec.long[name] then
                val = words[i + 1]
                i = i + 1
            end
            seen[name] = val or true
            i = i + 1
        elseif a:sub(1, 1) == "-" and #a > 1 then
            local j = 2
            while j <= #a do
                local ch = a:sub(j, j)
                if spec.short:find(ch, 1, true) then
                    local rest = a:sub(j + 1)
                    if rest == "" then
                        rest = words[i + 1]
                        i = i + 1
                    end
                    seen[ch] = rest or true
                    break
                end
                seen[ch] = true
                j = j + 1
            end
            i = i + 1
        else
            return i, seen
        end
    end
    return i, seen
end

local shells = { bash = true, sh = true, dash = true, zsh = true, ksh = true, ash = true,
                 busybox = false }

-- For `bash [opts] -c STRING ...`: the index of STRING, or nil when this is no -c call.
local function shell_c_index(words, i)
    local has_c = false
    while i <= #words do
        local a = words[i]
        if a == "--" or a == "-" then break end
        if a:sub(1, 1) == "-" or a:sub(1, 1) == "+" then
            if a:sub(1, 2) ~= "--" and a:sub(2):find("c", 1, true) then has_c = true end
            if a == "-o" or a == "+o" or a == "-O" or a == "+O" then i = i + 1 end
            i = i + 1
        else
            break
        end
    end
    if has_c and words[i] then return i end
    return nil
end

-- Split `env -S STRING` the way env does (whitespace, quotes) — approximated by our own word
-- splitting of a one-line command.
local function split_words(s)
    local out = {}
    for _, t in ipairs(tokenize(s, {})) do
        if t.t == "word" then out[#out + 1] = t.v end
    end
    return out
end

local is_assignment = function(w) return w:match("^[%a_][%w_]*=") ~= nil end

local split_into -- forward

-- Fill seg.program/name/args/wrappers from seg.words; a `bash -c` string is split into more
-- segments, appended to out.
local function unwrap(seg, out, depth)
    local words, i = seg.words, 1
    local wrappers = seg.wrappers
    while i <= #words do
        local w = words[i]
        local b = basename(w)
        if value_opts[b] then
            wrappers[#wrappers + 1] = b
            local j, seen = skip_options(b, words, i + 1)
            if b == "env" or b == "sudo" or b == "doas" then
                while words[j] and is_assignment(words[j]) do j = j + 1 end
            end
            if b == "env" and seen.S and seen.S ~= true then
                -- env -S 'cmd args': the string is the command (then any further words)
                local rest = split_words(seen.S)
                for k = j, #words do rest[#rest + 1] = words[k] end
                seg.words = rest
                words, i = rest, 1
                while words[i] and is_assignment(words[i]) do i = i + 1 end
                goto continue
            end
            if b == "timeout" then j = j + 1 end -- the duration
            if b == "command" and (seen.v or seen.V) then
                seg.program, seg.name = w, b
                seg.args = { table.unpack(words, i + 1) }
                wrappers[#wrappers] = nil
                return
            end
            i = j
        elseif shells[b] then
            local ci = shell_c_index(words, i + 1)
            seg.program, seg.name = w, b
            seg.args = { table.unpack(words, i + 1) }
            if ci and depth < MAX_DEPTH then
                local inherited = {}
                for _, x in ipairs(wrappers) do inherited[#inherited + 1] = x end
                inherited[#inherited + 1] = b
                split_into(words[ci], out, depth + 1, inherited, seg.substitution)
            end
            return
        else
            seg.program, seg.name = w, b
            seg.args = { table.unpack(words, i + 1) }
            return
        end
        ::continue::
    end
end

-- Split line and append its segments (and those of its substitutions) to out.
split_into = function(line, out, depth, wrappers, from_sub)
    local subs = {}
    local toks = tokenize(line, subs)
    local seg
    local function finish()
        if seg and (#seg.words > 0 or #seg.redirs > 0 or #seg.assignments > 0) then
            local pos = #out + 1
            out[pos] = seg
            unwrap(seg, out, depth)
            -- a bash -c string's segments were appended after this one: fine, order is
            -- the reading order
        end
        seg = nil
    end
    local function start()
        if not seg then
            local wr = {}
            for _, x in ipairs(wrappers or {}) do wr[#wr + 1] = x end
            seg = { words = {}, assignments = {}, redirs = {}, wrappers = wr, args = {},
                    substitution = from_sub or nil }
        end
    end
    local k = 1
    while k <= #toks do
        local t = toks[k]
        if t.t == "op" then
            finish()
        elseif t.t == "redir" then
            start()
            local target = toks[k + 1]
            local r = { op = t.v, fd = t.fd }
            if target and target.t == "word" then
                r.target = target.v
                k = k + 1
            end
            if r.fd == nil then
                if t.v:sub(1, 1) == "<" and t.v ~= "<>" then r.fd = 0
                elseif t.v:sub(1, 1) == "&" then r.fd = "&"
                else r.fd = 1 end
            end
            seg.redirs[#seg.redirs + 1] = r
        else
            start()
            if #seg.words == 0 and is_assignment(t.v) then
                seg.assignments[#seg.assignments + 1] = t.v
            else
                seg.words[#seg.words + 1] = t.v
            end
        end
        k = k + 1
    end
    finish()
    if depth < MAX_DEPTH then
        for _, s in ipairs(subs) do split_into(s, out, depth + 1, nil, true) end
    end
    return out
end

--- Split a command line into segments (see the header). Never raises on odd input: an
-- unbalanced quote runs to the end of the line, as far as a reader can tell.
function M.split(line)
    if type(line) ~= "string" then error("shell.split: expected a string", 2) end
    return split_into(line, {}, 0, nil, nil)
end

--- The words of a line without its structure (quote removal only; for quick tests).
M.words = split_words

--- Redirection operators that write to their target.
M.write_ops = { [">"] = true, [">>"] = true, [">|"] = true, ["&>"] = true, ["&>>"] = true,
                ["<>"] = true }

--- Every file a segment redirects output to (`>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `N>`); `>&N`
-- (a file descriptor) is not a file.
function M.write_redirects(seg)
    local out = {}
    for _, r in ipairs(seg.redirs) do
        if r.target and M.write_ops[r.op] then out[#out + 1] = r.target
        elseif r.target and r.op == ">&" and not r.target:match("^%d+%-?$") and r.target ~= "-" then
            out[#out + 1] = r.target
        end
    end
    return out
end

--- Set of every program basename the line runs, wrappers included: { touch = true, sudo = true }.
function M.programs(segments)
    local set = {}
    for _, seg in ipairs(segments) do
        if seg.name then set[seg.name] = true end
        for _, w in ipairs(seg.wrappers) do set[w] = true end
    end
    return set
end

--- Does the line run program `name` (directly, behind a wrapper, or as a wrapper)?
function M.runs(segments, name)
    return M.programs(segments)[name] == true
end

return M
