-- Specs for lua/cordon/refusal.lua's small answers that the corpus (spec/02-policies/
-- refusal_spec.lua) reaches only through the whole detector: the path a line names, the path an
-- error chain names, the tools' lines without an errno, javac's output directory, the
-- directory crontab works in.
local refusal = require("cordon.refusal")
local shell = require("cordon.shell")

describe("cordon.refusal.path_in_line", function()
    -- { line, the path it names (nil: none) }, each with the errno message's start from errno_class
    local cases = {
        { "touch: cannot touch '/etc/motd': Read-only file system", "/etc/motd" },
        { "error: Read-only file system (os error 30) at path \"/srv/out/targetAbC123\"", "/srv/out/targetAbC123" },
        { "java.nio.file.FileSystemException: /srv/hi.jar: Read-only file system", "/srv/hi.jar" },
        { "java.nio.file.NoSuchFileException: /etc/shadow", "/etc/shadow" },
        { "crontabs: mkdir: Read-only file system", "crontabs" },
        { "Hi.java:1: error: error while writing Hi: /srv/Hi.class: Read-only file system", "/srv/Hi.class" },
        { "  Read-only file system (os error 30)", nil },
    }
    for _, c in ipairs(cases) do
        it(c[1], function()
            local _, at = refusal.errno_class(c[1])
            assert.are.equal(c[2], refusal.path_in_line(c[1], at, {}))
        end)
    end

    it("PROG: mkdir: message names no path when PROG is the command's program", function()
        local line = "mytool: mkdir: Read-only file system"
        local _, at = refusal.errno_class(line)
        assert.is_nil(refusal.path_in_line(line, at, { mytool = true }))
    end)
end)

describe("cordon.refusal.chain_path", function()
    local function run(lines)
        local chain
        for _, l in ipairs(lines) do chain = refusal.chain_path(l, chain) end
        return chain
    end

    it("follows cargo's chain to the innermost quoted path", function()
        assert.are.equal("/srv/inst", run({ "error: failed to open: /srv/inst/.crates.toml", "", "Caused by:",
            "  failed to create directory `/srv/inst`", "", "Caused by:", "  Read-only file system (os error 30)" }))
    end)

    it("takes a failed-to-open path when nothing is quoted", function()
        assert.are.equal("/srv/inst/.crates.toml", run({ "error: failed to open: /srv/inst/.crates.toml" }))
    end)

    it("ignores quoted names that are not absolute paths (crates, versions)", function()
        assert.is_nil(run({ "error: failed to get `none` as a dependency of package `dep v0.1.0`" }))
    end)

    it("ends at a line that is not part of a chain", function()
        assert.is_nil(run({ "error: failed to create directory `/srv/x`", "retrying" }))
    end)
end)

describe("cordon.refusal: tools' lines without an errno", function()
    it("Maven names its local repository", function()
        assert.are.equal("/srv/m2",
            refusal.unwritable_path("[ERROR] Could not create local repository at /srv/m2 -> [Help 1]"))
    end)

    it("javac names none: the policy takes its -d", function()
        assert.is_true(refusal.unwritable_path("Hi.java:1: error: error while writing Hi: could not create parent directories"))
        assert.are.equal("/srv/c", refusal.javac_output_dir(shell.split("javac -Xlint -d /srv/c Hi.java")))
        assert.are.equal("gen", refusal.javac_output_dir(shell.split("cd x && javac -s gen A.java")))
        assert.is_nil(refusal.javac_output_dir(shell.split("java -d /srv/c Hi")))
    end)

    it("other lines are none of them", function()
        assert.is_nil(refusal.unwritable_path("[ERROR] Failed to execute goal on project hi"))
    end)

    it("javac's and gcc's error format is a diagnostic", function()
        assert.is_true(refusal.is_diagnostic("Hi.java:1: error: error while writing Hi: /x: Read-only file system", {},
            "stdout"))
        assert.is_true(refusal.is_diagnostic("a.c:3:7: error: cannot open /x", {}, "stdout"))
        assert.is_false(refusal.is_diagnostic('    String s = "cp: cannot create /etc/x: Read-only file system"', {},
            "stdout"))
    end)
end)

describe("cordon.refusal.program_dir", function()
    it("crontab works in its spool", function()
        assert.are.equal("/var/spool/cron", refusal.program_dir({ crontab = true }))
        assert.is_nil(refusal.program_dir({ touch = true }))
    end)
end)

describe("cordon.refusal.protected: a repository's hold", function()
    local ws = "/w"
    local list = { "/w/.git/hooks", "/w/.git/config", "/w/sub/.git/config", "/w/sub/.git/hooks",
                   "/w/a/b/.git/commondir", "/w/wt/.git", "/w/ci/config" }
    it("the workspace's own .git/config keeps its reason and its profile key", function()
        local rel, why, by_key = refusal.protected("/w/.git/config", ws, list)
        assert.are.equal(".git/config", rel)
        assert.truthy(why:find("host's git run a program", 1, true))
        assert.is_true(by_key)
    end)
    it("a nested repository's held names name the repository, not the profile key", function()
        local rel, why, by_key = refusal.protected("/w/sub/.git/hooks/pre-commit", ws, list)
        assert.are.equal("sub/.git/hooks", rel)
        assert.truthy(why:find("the repository sub, which the sandbox holds", 1, true))
        assert.truthy(why:find("removed outside the sandbox", 1, true))
        assert.is_false(by_key)
        assert.are.equal("a/b", refusal.held_repository("a/b/.git/commondir"))
        assert.are.equal("wt", refusal.held_repository("wt/.git"))
        assert.are.equal(".", refusal.held_repository(".git/gitdir"))
    end)
    it("a path the profile lists that is no repository's keeps the profile key", function()
        local rel, why, by_key = refusal.protected("/w/ci/config", ws, list)
        assert.are.equal("ci/config", rel)
        assert.truthy(why:find("readonly_in_workspace", 1, true))
        assert.is_true(by_key)
        assert.is_nil(refusal.held_repository("ci/config"))
        assert.is_nil(refusal.held_repository("sub/.git/objects"))
    end)
end)
