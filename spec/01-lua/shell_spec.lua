-- Specs for lua/cordon/shell.lua: splitting a command line into segments, quote removal,
-- substitutions, here-documents, redirections and the unwrapping of sudo/env/timeout/nice/
-- nohup/exec/command/time/stdbuf and `bash -c`. Table-driven: line -> expected segments.
local shell = require("cordon.shell")

-- A compact view of a segment: "name arg1 arg2 [wr=sudo,env] [>/x 2>/y] (sub)"
local function view(seg)
    local parts = { seg.name or "-" }
    for _, a in ipairs(seg.args) do parts[#parts + 1] = a end
    if #seg.wrappers > 0 then parts[#parts + 1] = "[wr=" .. table.concat(seg.wrappers, ",") .. "]" end
    local r = {}
    for _, x in ipairs(seg.redirs) do r[#r + 1] = tostring(x.fd) .. x.op .. tostring(x.target) end
    if #r > 0 then parts[#parts + 1] = "[" .. table.concat(r, " ") .. "]" end
    if seg.substitution then parts[#parts + 1] = "(sub)" end
    return table.concat(parts, " ")
end

local function views(line)
    local out = {}
    for i, s in ipairs(shell.split(line)) do out[i] = view(s) end
    return out
end

describe("cordon.shell.split", function()
    local cases = {
        -- separators
        { "a; b | c || d && e & f", { "a", "b", "c", "d", "e", "f" } },
        { "a\nb\n\nc", { "a", "b", "c" } },
        { "a |& b", { "a", "b" } },
        { "(a; b) && { c; }", { "a", "b", "c" } },
        -- quotes
        { [[echo "a;b" 'c|d' e\;f]], { "echo a;b c|d e;f" } },
        { [[echo "x \"y\" \$z \\ \q"]], { [[echo x "y" $z \ \q]] } },
        { [[echo 'it'\''s']], { "echo it's" } },
        { [[echo $'a\tb\'c']], { "echo a\tb'c" } },
        { "echo a\\\nb", { "echo ab" } },
        { [[echo "unterminated; rm x]], { "echo unterminated; rm x" } },
        { "echo a # rm -rf /\nls", { "echo a", "ls" } },
        { "echo a#b", { "echo a#b" } },
        -- substitutions: the word keeps its text, the inner commands become segments
        { "echo $(cat /etc/a)", { "echo $(cat /etc/a)", "cat /etc/a (sub)" } },
        { "echo `rm /x`", { "echo `rm /x`", "rm /x (sub)" } },
        { [[echo "$(mkdir "/a b"; touch /c)"]], { "echo $(mkdir \"/a b\"; touch /c)", "mkdir /a b (sub)", "touch /c (sub)" } },
        { "echo $(a $(b $(c)))", { "echo $(a $(b $(c)))", "a $(b $(c)) (sub)", "b $(c) (sub)", "c (sub)" } },
        { "echo $(echo ')'; rm /q)", { "echo $(echo ')'; rm /q)", "echo ) (sub)", "rm /q (sub)" } },
        { "echo $((1 + 2)) ${HOME}/x", { "echo $((1 + 2)) ${HOME}/x" } },
        { "diff <(sort a) >(tee /etc/x)", { "diff <(sort a) >(tee /etc/x)", "sort a (sub)", "tee /etc/x (sub)" } },
        -- here-documents: the body is not commands
        { "cat <<EOF > /etc/z\nrm -rf /\nEOF\necho done", { "cat [0<<EOF 1>/etc/z]", "echo done" } },
        { "cat <<-'END'\n\trm x\n\tEND\nls", { "cat [0<<-END]", "ls" } },
        -- redirections
        { "echo hi > /etc/x 2>>/var/log/e &>/a &>>/b >|/c 3<>/d <in", {
            "echo hi [1>/etc/x 2>>/var/log/e &&>/a &&>>/b 1>|/c 3<>/d 0<in]" } },
        { "cmd 2>&1 >&2 >/dev/null", { "cmd [2>&1 1>&2 1>/dev/null]" } },
        { ">/etc/x", { "- [1>/etc/x]" } },
        { "A=1 B='x y' make", { "make" } },
        -- wrappers
        { "sudo -u root -g wheel -E touch /etc/x", { "touch /etc/x [wr=sudo]" } },
        { "sudo -uroot -- rm -f /x", { "rm -f /x [wr=sudo]" } },
        { "sudo --user=root --chdir /tmp ls", { "ls [wr=sudo]" } },
        { "sudo A=1 env -i -u HOME -C /tmp B=2 id", { "id [wr=sudo,env]" } },
        { "env -S 'sudo touch /q' extra", { "touch /q extra [wr=env,sudo]" } },
        { "timeout -s KILL -k 5 10s nice -n 5 nohup make", { "make [wr=timeout,nice,nohup]" } },
        { "timeout --signal=TERM 3 sudo id", { "id [wr=timeout,sudo]" } },
        { "nice -10 ls", { "ls [wr=nice]" } },
        { "exec -a name python3 x.py", { "python3 x.py [wr=exec]" } },
        { "command -p ls; command -v sudo", { "ls [wr=command]", "command -v sudo" } },
        { "time -p stdbuf -o0 -eL grep x f", { "grep x f [wr=time,stdbuf]" } },
        { "/usr/bin/sudo /bin/touch /etc/x", { "touch /etc/x [wr=sudo]" } },
        -- bash -c: the string is split too, its segments carry the outer wrappers plus the shell
        { "bash -c 'touch /etc/a; echo hi > /etc/b'", {
            "bash -c touch /etc/a; echo hi > /etc/b", "touch /etc/a [wr=bash]", "echo hi [wr=bash] [1>/etc/b]" } },
        { "sudo bash -lc \"apt-get install -y jq\"", {
            "bash -lc apt-get install -y jq [wr=sudo]", "apt-get install -y jq [wr=sudo,bash]" } },
        { "sh -e -o pipefail -c 'sudo id' arg0", { "sh -e -o pipefail -c sudo id arg0", "id [wr=sh,sudo]" } },
        { "bash script.sh -c x", { "bash script.sh -c x" } },
        { "timeout 5 bash -c \"bash -c 'rm /x'\"", {
            "bash -c bash -c 'rm /x' [wr=timeout]", "bash -c rm /x [wr=timeout,bash]", "rm /x [wr=timeout,bash,bash]" } },
        -- degenerate input
        { "", {} },
        { ";;; |", {} },
    }
    for _, c in ipairs(cases) do
        it(("%q"):format(c[1]), function()
            assert.are.same(c[2], views(c[1]))
        end)
    end

    it("rejects a non-string", function()
        assert.has_error(function() shell.split(nil) end)
    end)

    it("stops following nesting at a depth bound", function()
        local line = "x"
        for _ = 1, 40 do line = "echo $(" .. line .. ")" end
        local segs = shell.split(line)
        assert.is_true(#segs <= 20)
    end)

    it("handles a long line in linear-ish time", function()
        local line = string.rep("echo 'a;b' \"c\" $(d) | ", 5000) .. "true"
        local t = os.clock()
        local segs = shell.split(line)
        assert.is_true(#segs >= 10000)
        assert.is_true(os.clock() - t < 5)
    end)
end)

describe("cordon.shell helpers", function()
    it("write_redirects lists files written, not fds or inputs", function()
        local seg = shell.split("cmd >/a 2>>/b <c 2>&1 >&/d <>/e &>/f")[1]
        assert.are.same({ "/a", "/b", "/d", "/e", "/f" }, shell.write_redirects(seg))
    end)

    it("programs and runs see wrappers and nested shells", function()
        local segs = shell.split("env A=1 timeout 5 bash -c 'sudo -n true' && docker ps")
        local p = shell.programs(segs)
        assert.is_true(p.sudo and p.env and p.timeout and p.bash and p.docker and p["true"])
        assert.is_true(shell.runs(segs, "sudo"))
        assert.is_false(shell.runs(segs, "curl"))
    end)

    it("words removes quotes", function()
        assert.are.same({ "a b", "c", "d'e" }, shell.words([['a b' "c" d\'e]]))
    end)
end)
