-- spec/04-engine/run_home_own_spec.lua — the copy-on-write home keeps what tools write on their
-- own (the home's dot-entries, the profile's home_tool_dirs such as ~/go), not the person's own
-- files: with the workspace under the home, every other write in the home outside the workspace
-- is refused as a write outside the home is (read-only file system, the usual refusal line),
-- the host's home is unchanged after, and later runs see the host's files, never a copy an
-- older layer kept. Each row as an unprivileged user with a home of its own (uid 65534, when
-- the spec runs as root) and as the caller itself. Drives the built binary ($CORDON_BIN).
local h = require("spec.helpers")

local ok = h.ok
local has = h.has
local hasnt = h.hasnt

local REFUSED = "cordon: the sandbox refused a write to "

--- A home holding a workspace (~/proj, a repository with one commit whose remote is
-- ~/bare.git), another project and a link to it, a bare repository and a note; owned by uid
-- when given.
-- Returns the run options and the home.
local function setup(uid)
    local home = h.tmpdir()
    h.sh_ok(("cd %s && mkdir proj other-project .cache && echo mine > other-project/a"
        .. " && echo note > notes.txt && ln -s other-project link && git init -q --bare bare.git"
        .. " && cd proj && git init -q && git -c user.name=a -c user.email=a@b commit -q"
        .. " --allow-empty -m one && git remote add origin ../bare.git"):format(h.quote(home)))
    if uid then h.sh_ok(("chown -R %d:%d %s"):format(uid, uid, h.quote(home))) end
    local o = { home = home, workspace = home .. "/proj", uid = uid }
    ok(h.run_sh("true", o)) -- cordon's state and cache folders made in the home, once
    return o, home
end

--- The home's tree as the host has it, but for cordon's own state and cache (the layer, the
-- resolved profiles) and the workspace: names, types, sizes, modes and modification times.
local function listing(home)
    return h.sh_ok(("cd %s && find . \\( -path ./.local -o -path ./.cache -o -path ./proj \\)"
        .. " -prune -o -printf '%%p %%y %%s %%m %%T@\\n' | LC_ALL=C sort"):format(h.quote(home)))
end

-- Who runs the rows: the caller, and nobody with a home of its own when the spec is root.
local callers = { { name = "the caller" } }
if h.chomp(h.sh_ok("id -u")) == "0" then callers[#callers + 1] = { name = "an unprivileged user", uid = 65534 } end

for _, who in ipairs(callers) do
    describe("the home's own files, as " .. who.name .. ",", function()
        after_each(h.cleanup)

        -- Each row: the command fails, the refusal line names the path, the host is unchanged.
        local rows = {
            { "appending to another project's file", "echo x >> ~/other-project/a", "/other-project/a" },
            { "removing another project", "rm -rf ~/other-project", "/other-project" },
            { "pushing to a bare repository in the home", "git push ../bare.git HEAD:refs/heads/x", "/bare.git" },
            { "adding a worktree beside the workspace", "git worktree add -q ../wt", "/wt" },
            { "making a new folder at the home's top", "mkdir ~/newdir", "/newdir" },
            { "touching an existing note", "touch ~/notes.txt", "/notes.txt" },
            { "removing a note", "rm ~/notes.txt", "/notes.txt" },
            { "removing a link at the home's top (no bind holds a link)", "rm ~/link", "/link" },
            { "making a new file at the home's top", "touch ~/notes2.txt", "/notes2.txt" },
            { "moving a dot-entry to a name of the person's", "echo t > ~/.t && mv ~/.t ~/t", "/t" },
        }
        for _, row in ipairs(rows) do
            it("refuses " .. row[1] .. " with the usual line #privileged", function()
                local o, home = setup(who.uid)
                local before = listing(home)
                local r = h.run_sh(row[2], o)
                assert.are_not.equal(0, r.code, h.describe(r))
                has(r.stderr, REFUSED .. home .. row[3], r)
                assert.are.equal(before, listing(home))
                -- nothing was kept for a later run to see
                local after = ok(h.run_sh("cat ~/other-project/a; ls ~; git worktree list | wc -l;"
                    .. " git --git-dir=$HOME/bare.git for-each-ref | wc -l", o))
                assert.are.equal("mine\nbare.git\nlink\nnotes.txt\nother-project\nproj\n1\n0\n", after.stdout)
            end)
        end

        it("keeps what tools write in the home's dot-entries and tool folders #privileged", function()
            local o, home = setup(who.uid)
            local before = listing(home)
            ok(h.run_sh("git config --global user.name Someone && echo 1 > ~/.foo"
                .. " && mkdir -p ~/go/pkg/mod && echo m > ~/go/pkg/mod/m"
                .. " && python3 -c 'import os; open(os.path.expanduser(\"~/.python_history\"), \"a\").write(\"x\\n\")'"
                .. " && mkdir -p ~/.cache/t && echo c > ~/.cache/t/x", o))
            local r = ok(h.run_sh("git config --global user.name; cat ~/.foo ~/go/pkg/mod/m"
                .. " ~/.python_history ~/.cache/t/x", o))
            assert.are.equal("Someone\n1\nm\nx\nc\n", r.stdout)
            hasnt(r.stderr, "cordon:", r)
            -- in the layer only: the host's home is as it was
            assert.are.equal(before, listing(home))
            assert.are_not.equal(0, h.sh("test -e " .. h.quote(home .. "/.cache/t")).code)
        end)

        it("shows the host's files where an older layer kept copies of them #privileged", function()
            local o, home = setup(who.uid)
            ok(h.run_sh("true", o))
            local upper = h.chomp(h.sh_ok("ls -d " .. h.quote(home) .. "/.local/state/cordon/homes/*/upper"))
            -- what an older cordon let a command leave: an edit, a new top folder, a deletion
            h.sh_ok(("cd %s && mkdir other-project wt && echo PHANTOM > other-project/a && echo w > wt/f"
                .. " && echo kept > .kept && rm -f notes.txt && mknod notes.txt c 0 0"):format(h.quote(upper)))
            if who.uid then h.sh_ok(("chown -R %d:%d %s"):format(who.uid, who.uid, h.quote(upper))) end
            local r = ok(h.run_sh("cat ~/other-project/a ~/notes.txt ~/.kept; ls ~", o))
            assert.are.equal("mine\nnote\nkept\nbare.git\nlink\nnotes.txt\nother-project\nproj\n", r.stdout)
        end)

        it("takes writes in a folder the profile names in home_tool_dirs #privileged", function()
            local o, home = setup(who.uid)
            local cfg = h.profile_dir("tools", 'return { extends = "coding", home_tool_dirs = { "newdir" } }')
            if who.uid then h.sh_ok(("chown -R %d:%d %s"):format(who.uid, who.uid, h.quote(cfg))) end
            o.env = { XDG_CONFIG_HOME = cfg }
            o.flags = { "--profile", "tools" }
            -- without the name in the list the same mkdir is refused (the rows above): here the
            -- layer takes it, and a later run sees it, the host never
            ok(h.run_sh("mkdir ~/newdir && echo n > ~/newdir/f", o))
            assert.are.equal("n\n", ok(h.run_sh("cat ~/newdir/f", o)).stdout)
            assert.are_not.equal(0, h.sh("test -e " .. h.quote(home .. "/newdir")).code)
            -- and the coding profile's own list: ~/go
            o.env, o.flags = nil, nil
            ok(h.run_sh("mkdir -p ~/go/bin", o))
        end)

        it("refuses a home_tool_dirs entry that is a path or a dot-entry, naming the key", function()
            local o = setup(who.uid)
            for _, bad in ipairs({ "src/go", ".cache" }) do
                local cfg = h.profile_dir("badtools", ('return { extends = "coding", home_tool_dirs = { %q } }'):format(bad))
                if who.uid then h.sh_ok(("chown -R %d:%d %s"):format(who.uid, who.uid, h.quote(cfg))) end
                local r = h.run_sh("echo ran", { home = o.home, workspace = o.workspace, uid = o.uid,
                    env = { XDG_CONFIG_HOME = cfg }, flags = { "--profile", "badtools" } })
                assert.are.equal(125, r.code, h.describe(r))
                hasnt(r.stdout, "ran", r)
                has(r.stderr, "home_tool_dirs", r)
            end
        end)

        it("holds read-only what the host adds at the home's top while a session runs #privileged", function()
            local o, home = setup(who.uid)
            local runtime = h.tmpdir()
            if who.uid then h.sh_ok(("chown %d:%d %s"):format(who.uid, who.uid, h.quote(runtime))) end
            local function cordon(args, extra)
                local opts = { home = home, cwd = o.workspace, env = { XDG_RUNTIME_DIR = runtime }, uid = who.uid }
                for k, v in pairs(extra or {}) do opts[k] = v end
                return h.cordon(args, opts)
            end
            local name = "late-" .. h.token()
            ok(cordon({ "session", "start", name, "--detach" }))
            h.defer(function() cordon({ "session", "stop", name }, { timeout = 30 }) end)
            -- the person makes a project, a note and a dot-folder on the host meanwhile
            local as = who.uid and ("setpriv --reuid=%d --regid=%d --clear-groups "):format(who.uid, who.uid) or ""
            h.sh_ok(as .. "sh -c " .. h.quote(("mkdir %s/late %s/.late && echo mine > %s/late-note"):format(
                h.quote(home), h.quote(home), h.quote(home))))
            -- the hold comes from the watcher as the name appears: wait for it, bounded
            local r = cordon({ "exec", name, "--", "for i in $(seq 100); do [ -w ~/late-note ] || break; "
                .. "sleep 0.05; done; echo z > ~/.late/b && echo dot-ok; echo y > ~/late/a; echo x >> ~/late-note" })
            assert.are_not.equal(0, r.code, h.describe(r))
            has(r.stdout, "dot-ok", r)
            has(r.stderr, home .. "/late/a: Read-only file system", r)
            has(r.stderr, REFUSED .. home .. "/late-note", r)
            assert.are.equal("mine\n", h.sh_ok("cat " .. h.quote(home .. "/late-note")))
            assert.are.equal("", h.sh_ok("ls -A " .. h.quote(home .. "/late")))
            assert.are.equal("", h.sh_ok("ls -A " .. h.quote(home .. "/.late")))
        end)

        it("leaves the folders on the way to a deeper workspace read-only #privileged", function()
            local o, home = setup(who.uid)
            h.sh_ok(("mkdir -p %s/src/app %s/src/lib && echo l > %s/src/lib/l"):format(
                h.quote(home), h.quote(home), h.quote(home)))
            if who.uid then h.sh_ok(("chown -R %d:%d %s/src"):format(who.uid, who.uid, h.quote(home))) end
            o.workspace = home .. "/src/app"
            -- the workspace itself stays writable, the home's dot-entries too
            ok(h.run_sh("echo w > w && echo d > ~/.d", o))
            local before = listing(home)
            local r = h.run_sh("echo x > ~/src/lib/l", o)
            assert.are_not.equal(0, r.code, h.describe(r))
            has(r.stderr, REFUSED .. home .. "/src/lib/l", r)
            r = h.run_sh("touch ~/src/new", o)
            assert.are_not.equal(0, r.code, h.describe(r))
            has(r.stderr, REFUSED .. home .. "/src/new", r)
            assert.are.equal(before, listing(home))
        end)
    end)
end
