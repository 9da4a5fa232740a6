-- spec/04-engine/run_credentials_spec.lua — credentials the coding profile keeps out of a
-- `cordon run` command: the stores under the caller's home (its `hidden` list), the files that
-- variables such as GOOGLE_APPLICATION_CREDENTIALS name (`env.hide_paths_in`), and variables
-- holding secrets (`env.strip`, `env.strip_url_passwords`). Every store is first read outside
-- the sandbox, so a case fails when the file was never there rather than passing vacuously.
-- Drives the built binary ($CORDON_BIN); no network; runs as root.
local h = require("spec.helpers")

-- Files under HOME, one per `hidden` entry an attack review found readable (a directory entry
-- is represented by a file inside it).
local HOME_FILES = {
    ".config/git/credentials", ".pgpass", ".cargo/credentials", ".cargo/credentials.toml",
    ".vault-token", ".config/containers/auth.json", ".terraform.d/credentials.tfrc.json",
    ".gem/credentials", ".config/hub", ".local/share/keyrings/login.keyring",
    ".password-store/github.gpg", ".m2/settings.xml", ".m2/settings-security.xml",
    ".config/rclone/rclone.conf", ".codex/auth.json", ".claude/.credentials.json",
    ".gemini/oauth_creds.json", ".config/github-copilot/apps.json",
    ".config/github-copilot/hosts.json", ".gradle/gradle.properties", ".config/glab-cli/config.yml",
    ".pulumi/credentials.json", ".cache/huggingface/token", ".config/composer/auth.json",
    ".s3cfg", ".boto", ".databrickscfg", ".kaggle/kaggle.json", ".oci/config",
    ".local/share/opencode/auth.json",
}

local function put(path, content)
    h.sh_ok("mkdir -p " .. h.quote(path:match("^(.*)/[^/]+$")))
    h.write_file(path, content, "600")
end

-- `cat` each path in one sandboxed shell; returns path -> what cat printed (both streams).
local function cat_each(paths, opts)
    local lines = {}
    for i, p in ipairs(paths) do
        lines[#lines + 1] = ("printf '@%d '; cat %s 2>&1; echo"):format(i, h.quote(p))
    end
    local r = h.run_sh(table.concat(lines, "\n"), opts)
    local out = {}
    for i, rest in r.stdout:gmatch("@(%d+) ([^\n]*)") do out[paths[tonumber(i)]] = rest end
    return out, r
end

describe("cordon run: credential files", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    it("every credential store under HOME looks missing inside, and is readable outside", function()
        local home = h.tmpdir()
        local marker = "cordoncred" .. h.token() -- no pattern characters: gsub and match use it
        local paths = {}
        for _, rel in ipairs(HOME_FILES) do
            local p = home .. "/" .. rel
            put(p, marker .. "\n")
            paths[#paths + 1] = p
        end
        local outside = h.sh_ok("cat " .. h.join(paths))
        local _, n = outside:gsub(marker, "")
        assert.are.equal(#paths, n, "the spec's own files are not readable outside")

        local seen, r = cat_each(paths, { home = home })
        assert.are.equal(0, r.code, h.describe(r))
        for _, p in ipairs(paths) do
            assert.truthy(seen[p], p .. ": no output line\n" .. h.describe(r))
            assert.truthy(seen[p]:match("No such file or directory"), p .. " readable inside\n" .. h.describe(r))
        end
        assert.is_nil((r.stdout .. r.stderr):match(marker), h.describe(r))

        -- ls of each: missing too
        local ls = h.run_sh("for p in " .. h.join(paths) .. '; do ls -d "$p" 2>&1 || true; done',
            { home = home })
        for _, p in ipairs(paths) do
            assert.truthy(ls.stdout:find(p .. "': No such file or directory", 1, true)
                or ls.stdout:find(p .. ": No such file or directory", 1, true), p .. "\n" .. h.describe(ls))
        end
    end)

    it("the files GOOGLE_APPLICATION_CREDENTIALS, KUBECONFIG, ... name look missing, wherever they are", function()
        local home = h.tmpdir()
        local elsewhere = h.tmpdir()
        local marker = "cordoncred" .. h.token() -- no pattern characters: gsub and match use it
        local files = {
            GOOGLE_APPLICATION_CREDENTIALS = elsewhere .. "/gcp/sa-key.json",
            AWS_SHARED_CREDENTIALS_FILE = elsewhere .. "/aws-creds",
            PGPASSFILE = elsewhere .. "/pgpass",
        }
        local kube1, kube2 = elsewhere .. "/kube/a.yaml", elsewhere .. "/kube/b.yaml"
        local paths = { kube1, kube2 }
        for _, p in pairs(files) do paths[#paths + 1] = p end
        for _, p in ipairs(paths) do put(p, marker .. "\n") end
        local neighbour = elsewhere .. "/gcp/README"
        put(neighbour, "not a secret\n")
        local env = { KUBECONFIG = kube1 .. "::" .. kube2 } -- a list, with an empty entry
        for k, v in pairs(files) do env[k] = v end

        local _, n = h.sh_ok("cat " .. h.join(paths)):gsub(marker, "")
        assert.are.equal(#paths, n)
        local seen, r = cat_each(paths, { home = home, env = env })
        for _, p in ipairs(paths) do
            assert.truthy(seen[p] and seen[p]:match("No such file or directory"), p .. "\n" .. h.describe(r))
        end
        -- only the named file: its directory and neighbours stay, and so does the variable
        r = h.run_sh('cat "$(dirname "$GOOGLE_APPLICATION_CREDENTIALS")/README"; printf "%s\\n" "$GOOGLE_APPLICATION_CREDENTIALS"',
            { home = home, env = env })
        assert.are.equal(0, r.code, h.describe(r))
        assert.are.equal("not a secret\n" .. files.GOOGLE_APPLICATION_CREDENTIALS .. "\n", r.stdout)
        -- without the variable, the file is an ordinary one
        seen, r = cat_each({ files.GOOGLE_APPLICATION_CREDENTIALS }, { home = home })
        assert.are.equal(marker, seen[files.GOOGLE_APPLICATION_CREDENTIALS], h.describe(r))
    end)
end)

describe("cordon run: credential variables", function()
    after_each(h.cleanup)

    it("strips secrets the old patterns missed, keeps their look-alikes", function()
        local ws = h.workspace()
        local gone = {
            PGPASSWORD = "pg", MYSQL_PWD = "my", STRIPE_SECRET_KEY = "sk_test_x", GITHUB_PAT = "ghp_x",
            OPENAI_KEY = "sk-x", CI_JOB_JWT = "eyJx", CI_JOB_JWT_V2 = "eyJy", API_KEY = "k",
            CLIENT_SECRET = "cs", MYSQL_ROOT_PASSWORD = "root", NPM_CONFIG__AUTH = "dXNlcjpwYXNz",
            DATABASE_URL = "postgres://app:hunter2@db.internal:5432/app",
            REDIS_URL = "redis://:hunter2@cache:6379/0",
            PIP_EXTRA_INDEX_URL = "https://pypi.org/simple https://u:hunter2@pkgs.internal/simple",
        }
        local kept = {
            PWD = ws, OLDPWD = "/var/tmp", TERM = "xterm-256color", LANG = "C.UTF-8",
            LS_COLORS = "di=01;34", KEYBOARD_LAYOUT = "us", AWS_REGION = "eu-west-1",
            AWS_ACCESS_KEY_ID = "AKIDEXAMPLE", SSH_AUTH_SOCKET = "x", TOKEN = "t", KEYTIMEOUT = "1",
            SERVICE_URL = "https://api.example.com:8443/v1?x=1",
            GIT_REMOTE = "ssh://git@github.com/o/r.git",
        }
        local env = {}
        for k, v in pairs(gone) do env[k] = v end
        for k, v in pairs(kept) do env[k] = v end
        local r = h.cordon({ "run", "--", "/usr/bin/env" }, { cwd = ws, env = env })
        assert.are.equal(0, r.code, h.describe(r))
        local seen = {}
        for name, value in r.stdout:gmatch("([^=\n]+)=([^\n]*)") do seen[name] = value end
        for k in pairs(gone) do assert.is_nil(seen[k], k .. " was not stripped\n" .. h.describe(r)) end
        assert.is_nil(r.stdout:match("hunter2"), h.describe(r))
        for k, v in pairs(kept) do assert.are.equal(v, seen[k], k .. " was stripped\n" .. h.describe(r)) end
        assert.are.equal(h.home(), seen.HOME, h.describe(r))
    end)

    it("--unrestricted-network strips a caller's proxy URL that carries a login", function()
        local r = h.cordon({ "run", "--unrestricted-network", "--", "/usr/bin/env" },
            { env = { HTTPS_PROXY = "http://me:hunter2@proxy.internal:3128", HTTP_PROXY = "http://proxy.internal:3128" } })
        assert.are.equal(0, r.code, h.describe(r))
        assert.is_nil(r.stdout:match("HTTPS_PROXY="), h.describe(r))
        assert.truthy(r.stdout:match("HTTP_PROXY=http://proxy.internal:3128\n"), h.describe(r))
    end)
end)
