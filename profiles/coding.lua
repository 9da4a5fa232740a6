-- profiles/coding.lua — the default profile: an agent edits and builds one workspace.
-- A profile is a Lua file returning a table; every key is documented in lua/HOOKS.md
-- ("Profile keys"). Another profile can start from this one with `extends = "coding"`:
-- its lists are appended to these, its tables merged, its scalars win.
-- Profiles run sandboxed: no io/os; `host.home()`, `host.exists(path)` etc. are available.

-- The caller's home is a home like any other, root's included: its credentials are hidden (the
-- list below), its toolchains (pyenv, rustup, nvm, ~/.local/bin) and ~/.gitconfig stay. Root's
-- home is hidden whole only when it is not the caller's home: root-only secrets there that a
-- uid-0 process could read.
--
-- Paths that look missing (ENOENT) inside the sandbox, whether or not they exist when it
-- starts. `~` is the caller's home. Each is where a tool keeps a credential by default (a token,
-- a password, a private key): a command that needs one fails as if the user had never logged
-- in, rather than reading it.
local hidden = {
    "~/.aws", "~/.gnupg", "~/.config/gh", "~/.netrc", "~/.docker", "~/.kube",
    "~/.npmrc", "~/.pypirc", "~/.git-credentials", "~/.config/gcloud", "~/.azure",
    "~/.config/git/credentials",    -- git's second default credential store (XDG)
    "~/.pgpass",                    -- PostgreSQL passwords (libpq, psql)
    "~/.cargo/credentials", "~/.cargo/credentials.toml", -- crates.io tokens (old and new name)
    "~/.vault-token",               -- HashiCorp Vault's token helper
    "~/.config/containers/auth.json", -- podman, buildah, skopeo registry logins
    "~/.terraform.d/credentials.tfrc.json", -- Terraform Cloud / registry tokens
    "~/.gem/credentials",           -- RubyGems push key
    "~/.config/hub",                -- hub's GitHub OAuth token
    "~/.local/share/keyrings",      -- GNOME keyring files
    "~/.password-store",            -- pass (its entries are GPG-encrypted, the list is not)
    "~/.m2/settings.xml", "~/.m2/settings-security.xml", -- Maven server passwords, master key
    "~/.gradle/gradle.properties",  -- Gradle's usual place for repository and signing passwords
    "~/.config/rclone",             -- rclone remotes with their tokens
    "~/.config/glab-cli",           -- GitLab CLI tokens
    "~/.pulumi/credentials.json",   -- Pulumi access tokens
    "~/.cache/huggingface/token", "~/.huggingface/token", -- Hugging Face (current, old place)
    "~/.config/composer/auth.json", "~/.composer/auth.json", -- PHP Composer repository logins
    "~/.s3cfg",                     -- s3cmd keys
    "~/.boto",                      -- gsutil / boto keys
    "~/.databrickscfg",             -- Databricks tokens
    "~/.kaggle/kaggle.json",        -- Kaggle API key
    "~/.oci",                       -- Oracle Cloud API signing keys
    "~/.config/doctl",              -- DigitalOcean API tokens
    -- Coding agents' own logins: a command must not act as the agent's account.
    "~/.codex/auth.json",           -- OpenAI Codex CLI
    "~/.claude/.credentials.json",  -- Claude Code (Linux keeps the OAuth token in this file)
    "~/.gemini/oauth_creds.json",   -- Gemini CLI
    "~/.config/github-copilot",     -- Copilot in editors (copilot.vim, copilot.lua: hosts.json, apps.json)
    "~/.local/share/opencode/auth.json", -- opencode's provider keys
    -- (gh copilot is a gh extension using ~/.config/gh's login, hidden above.)
    "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d",
    -- the host's private host keys; the rest of /etc/ssh stays (the sandbox's ssh_config is the
    -- host's plus the ProxyCommand through the proxy, ssh_known_hosts is the host's)
    "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/ssh_host_dsa_key", "/etc/ssh/ssh_host_key",
}
if host.home() ~= "/root" then hidden[#hidden + 1] = "/root" end

return {
    description = "Default: workspace writable, secrets hidden, network through the allowlist",

    -- The workspace is the current directory (or --workspace); it is writable.
    workspace_readonly = false,
    -- A workspace that is the caller's home (or /, /home: an ancestor of it) is refused: every
    -- dotfile the shell and tools trust would be writable. true (--allow-home-workspace) allows
    -- it; cordon's own configuration and state stay read-only or hidden even then.
    allow_home_workspace = false,

    -- Paths that look missing (ENOENT) inside the sandbox, whether or not they exist when it
    -- starts. `~` is the caller's home. A path that is a symbolic link hides its target too.
    hidden = hidden,

    -- Folders hidden by rule: each shows only the names that match its patterns, as they are
    -- at start; every other name, made at any time under any name (a key the person creates
    -- during a session), is missing. A folder that does not exist is hidden whole.
    -- ~/.ssh: what ssh needs to know a host (known_hosts, config: read through the copy-on-write
    -- home, so a new host key goes to the private layer) and the public keys; never a private
    -- key, an agent's or a control master's socket.
    hidden_except = {
        ["~/.ssh"] = { "known_hosts*", "config", "config.d", "*.pub" },
    },

    -- The caller's home: "overlay" (copy-on-write: commands write caches, ~/.gitconfig, ... to
    -- a private layer of the workspace's, kept across runs; `cordon home` shows it), "tmpfs"
    -- (the same, discarded when the sandbox ends) or "readonly".
    home = "overlay",

    -- The layer takes what tools write on their own: the home's dot-entries (~/.cache, ~/.npm,
    -- ~/.gitconfig, a new ~/.foo) and these folders of the home's top, which toolchains fill
    -- without a dot: Go's GOPATH (~/go) and its downloaded toolchains (~/sdk), cpanm's
    -- local::lib (~/perl5), R's package library (~/R). Everything else in the home outside the
    -- workspace and the writable paths is the person's own (other projects, bare repositories,
    -- notes): read-only, as the rest of the host, and a new name there is refused.
    home_tool_dirs = { "go", "sdk", "perl5", "R" },

    -- Relative to the workspace: stay read-only although the workspace is writable. Each is a
    -- file that a program on the host runs, or obeys, without a person reading it first, so
    -- a command that wrote one would run its program outside the sandbox the next time the
    -- person's git, editor or agent starts. Each that exists when the sandbox starts is bound
    -- read-only; in a session one that appears is bound before the next command; `cordon run`
    -- names one that appeared during its command. Files a person runs deliberately (Makefile,
    -- package.json scripts, .envrc behind `direnv allow`) stay writable: looking before
    -- running them is the person's part.
    readonly_in_workspace = {
        ".git/hooks",             -- git runs them (the next commit, checkout, push)
        ".git/config",            -- core.hooksPath, core.fsmonitor, aliases: programs git runs
        ".cordon",                -- the project's policy, trusted by `cordon trust`
        -- Claude Code: settings*.json hooks run on the host, and commands/, agents/ and skills
        -- instruct it. The whole folder: Claude Code itself writes settings.local.json on the
        -- host (it is not sandboxed); a sandboxed command has no business there.
        ".claude",
        ".mcp.json",              -- Claude Code starts the MCP servers it lists
        ".codex",                 -- Codex: config.toml (MCP servers, profiles)
        ".cursor",                -- Cursor: mcp.json, rules
        ".gemini",                -- Gemini CLI: settings.json (MCP servers, tool commands)
        ".vscode/tasks.json",     -- VS Code: tasks, some run when the folder opens
        ".vscode/settings.json",  -- executables: terminal profiles, python interpreter, git.path
        ".vscode/launch.json",    -- debug configurations: programs and preLaunchTasks
        ".idea/workspace.xml",    -- JetBrains run configurations (and before-launch tasks)
        ".idea/runConfigurations",
        ".devcontainer",          -- devcontainer.json: initializeCommand runs on the host,
                                  -- postCreateCommand in the container it builds
    },

    -- Extra writable paths (absolute or ~/...; each must exist). None by default.
    writable = {},

    -- Host paths bound into the sandbox's fresh /run. None by default: host daemons' sockets
    -- stay out of reach (`allow_docker = true` binds /run/docker.sock).
    run_binds = {},
    allow_docker = false,

    network = {
        -- Rules (docs/network-rules.md): "HOST", "HOST:PORT", "*.NAME[:PORT]", "*:PORT",
        -- "[::1]:443", "https://HOST" for HTTP and CONNECT; "tcp://HOST:PORT" for SOCKS.
        allow = {},             -- e.g. { "registry.npmjs.org", "*.pypi.org:443", "tcp://db:5432" }
        -- Same syntax; wins over allow; a rule without a port denies every port and kind.
        -- Cloud metadata endpoints hand out credentials: never reachable by default, whatever
        -- an allow rule says. The link-local ones are also special addresses no wildcard
        -- reaches; the others (100.100.100.200, the fd00::/8 ones) are ordinary addresses to
        -- the rules, so only this list keeps '*:80' away from them.
        deny = {
            "169.254.169.254",          -- AWS, GCP, Azure, OpenStack, Oracle, DigitalOcean... (IPv4)
            "[fd00:ec2::254]",          -- AWS instance metadata over IPv6 (Nitro instances)
            "169.254.170.2",            -- AWS ECS task metadata and container credentials
            "169.254.170.23",           -- AWS EKS Pod Identity Agent (IPv4)
            "[fd00:ec2::23]",           -- AWS EKS Pod Identity Agent (IPv6)
            "[fd20:ce::254]",           -- GCP metadata server over IPv6
            "metadata.google.internal", -- GCP metadata server by name
            "100.100.100.200",          -- Alibaba Cloud ECS metadata
        },
        -- May wildcard allow rules ('*:443', '*.NAME', ranges wider than the block) reach
        -- loopback, link-local and multicast addresses? false: only a rule naming the address.
        wildcard_special = false,
        loopback = true,        -- may commands serve and use TCP on the sandbox's own loopback?
        unrestricted = false,   -- true: no network namespace at all
        ask = true,             -- ask an interactive owner about unknown hosts
        -- true: TCP from clients that ignore the proxy variables goes through the same rules
        -- (the kernel needs nf_tables nat; without it one line says so and the variables
        -- remain). The redirect is one netlink batch from init: start-up with it is that of
        -- without, within noise. The sandbox's resolver (127.0.0.53) is on either way.
        transparent = true,
    },

    seccomp = {
        block_unix_sockets = false,
        deny = {},              -- extra syscall names, beyond the engine's fixed refusals
    },

    -- Resource limits: an integer (soft = hard), "unlimited", or { soft, hard }.
    rlimits = {
        core = 0,               -- no core dumps of processes that may hold secrets
    },

    -- Bounds the command cannot lift. pids: processes and threads of the whole sandbox at
    -- once (a fork bomb stops there): RLIMIT_NPROC, which the kernel counts per user
    -- namespace, so per sandbox (a cgroup only for a root caller whose sandbox keeps the
    -- host's uid 0, which RLIMIT_NPROC spares); memory: bytes of RAM for the whole sandbox,
    -- killed past it ("unlimited" or absent: none), which needs a cgroup (cordon uses a child
    -- of the caller's). tmp_size, shm_size: the sizes of /tmp and /dev/shm, both RAM.
    limits = {
        pids = 4096,
        tmp_size = "2G",
        shm_size = "512M",
    },

    -- The rule for a caller of uid 0: its commands have no capabilities, but the owner bit
    -- alone would let them read every file that only root may read. So when the caller is root,
    -- every file under `scan` (to `depth` levels) owned by uid 0 without read permission for
    -- others, and every such directory without r or x for others (hidden whole), looks missing,
    -- whether or not the `hidden` list names it: /etc/shadow-, ssh host keys, /etc/security/
    -- opasswd, debconf's passwords.dat, root-only files of /var and of /root when it is not the
    -- caller's home. Judged anew at every start. Names in `visible` stay readable; symlinks are
    -- not hidden (their targets are judged where they lie); the workspace, the writable paths
    -- and the home (and all in them) are the caller's own, never hidden by it: /root is a home
    -- like any other, its credentials hidden by `hidden` above. Other callers: no scan, nothing
    -- hidden by it.
    root_only = {
        hide = true,
        scan = { "/etc", "/var", "/root", "/boot", "/opt", "/srv", "/usr/local/etc" },
        depth = 3,
        -- /var/tmp, the shared scratch area that outlives a reboot, is shown as it is (not
        -- looked into): root's own folders there (mktemp -d makes them 0700) are what it hands
        -- to its commands: certificates, fixtures, files a command is to write. A secret kept
        -- there is seen as it was before this rule; /tmp is the sandbox's own anyway.
        visible = { "/var/tmp" },
    },

    escalation = {
        ask_sandbox_off = false, -- ask before re-running a refused command outside the sandbox?
        permission_timeout = "5m",
        plan = false,
    },

    env = {
        -- npm's weekly update check asks the registry on the side of every command (`npm test`
        -- too): refused by the network policy, it would name registry.npmjs.org after runs that
        -- did nothing wrong. Off here; a project that wants it sets it back in its profile.
        set = { NPM_CONFIG_UPDATE_NOTIFIER = "false" },
        -- Removed from the command's environment: names, or patterns where `*` matches any run
        -- of characters (case-sensitive, the whole name). The patterns are wide on purpose: a
        -- secret that survives is worse than a harmless variable lost. What they catch:
        --   *PASSWORD*  DB_PASSWORD, PGPASSWORD, MYSQL_PASSWORD, PASSWORD_STORE_DIR (harmless: pass's
        --               store is hidden anyway)
        --   *_PWD       MYSQL_PWD; not PWD or OLDPWD (no `_` before PWD)
        --   *SECRET*    AWS_SECRET_ACCESS_KEY, STRIPE_SECRET_KEY, CLIENT_SECRET, SECRET_KEY_BASE
        --   *_KEY       *_API_KEY, OPENAI_KEY, API_KEY, and also public key ids (GPG_KEY,
        --               GIT_SIGNING_KEY) which a build rarely needs; not KEYTIMEOUT, *_KEYS, *_KEY_ID
        --   *_TOKEN     GITHUB_TOKEN, GH_TOKEN, CI_JOB_TOKEN, VAULT_TOKEN, AWS_SESSION_TOKEN; not
        --               TOKEN alone or *_TOKENS
        --   *_PAT       GITHUB_PAT, AZURE_DEVOPS_PAT
        --   *_JWT*      CI_JOB_JWT, CI_JOB_JWT_V1, CI_JOB_JWT_V2
        --   *_AUTH      NPM_CONFIG__AUTH and other `_auth` settings
        -- npm and pip also read lower-case variables (npm_config__auth,
        -- npm_config_//registry.npmjs.org/:_authToken), hence the lower-case forms.
        -- (*_API_KEY, *_SECRET, *_PASSWORD, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, listed
        -- before, are inside these patterns.)
        -- None of these matches PATH, HOME, TERM, LANG, LC_*, LS_COLORS, SHELL, USER, DISPLAY,
        -- XDG_*, EDITOR (spec/02-policies/default_spec.lua checks a list of such names).
        -- The last three are ways to the caller's agents and bus, not values.
        strip = {
            "*PASSWORD*", "*_PWD", "*SECRET*", "*_KEY", "*_TOKEN", "*_PAT", "*_JWT*", "*_AUTH",
            "*password*", "*_pwd", "*secret*", "*_key", "*_token", "*_authToken", "*_auth",
            "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
        },
        -- Also strip every variable whose value holds a URL with a password in its userinfo
        -- (`scheme://user:pass@host`: DATABASE_URL, REDIS_URL, PIP_INDEX_URL, a proxy URL): the
        -- names vary, the shape does not. The whole variable goes, not just the password: a
        -- redacted URL would make a tool try to log in with a wrong password, and stripping
        -- needs no parsing that could get a corner wrong. With --unrestricted-network that also
        -- drops a caller's proxy variable carrying a proxy login.
        strip_url_passwords = true,
        -- Variables naming a credential file (or a list of them, `:`-separated): the files they
        -- name are hidden too, wherever they are. The variables stay (a tool that reads them
        -- finds the file missing, as for the default places above).
        hide_paths_in = {
            "GOOGLE_APPLICATION_CREDENTIALS", -- a service account key (JSON)
            "AWS_SHARED_CREDENTIALS_FILE", -- the AWS tools' credentials file elsewhere
            "KUBECONFIG",                   -- kubectl's config files (a `:` list)
            "PGPASSFILE",                   -- libpq's password file elsewhere
            "REGISTRY_AUTH_FILE",           -- podman's registry logins elsewhere
            "NETRC",                        -- Python requests', Go's netrc elsewhere
            "TF_CLI_CONFIG_FILE",           -- Terraform's CLI config (credentials blocks)
            "DOCKER_CONFIG", "CLOUDSDK_CONFIG", "AZURE_CONFIG_DIR", "GH_CONFIG_DIR", "GNUPGHOME",
            "PASSWORD_STORE_DIR",           -- directories standing in for the ones hidden above
        },
    },

    session = {
        exec_per_command = false, -- true: every exec gets a fresh sandbox
        grace = 3,                -- seconds between TERM and KILL
        max_background = 8,
        log_cap = 64 * 1024 * 1024, -- bytes of a background job's log kept (oldest dropped)
    },

    -- How much of each output stream the refusal detector sees.
    capture = { head = 64 * 1024, tail = 64 * 1024 },

    json = false,

    -- The caller's agents, each bound in by name at a fixed path (docs/grants.md); none by
    -- default: a command can ask an agent to sign or log in as you. A source that is missing
    -- or not a socket stops the run with one line.
    -- grants = {
    --     ssh_agent = true,   -- $SSH_AUTH_SOCK at /run/cordon/grants/ssh_agent.sock (--allow-ssh-agent)
    --     gpg_agent = true,   -- gpg-agent and the public keyring, GNUPGHOME=/run/cordon/gnupg
    --     sockets = { podman = { from = "$PODMAN_SOCK", env = "PODMAN_SOCK" } },
    -- },
    -- A caller of uid 0 in a checkout owned by another user (a bind-mounted repository): true
    -- lets its commands write there as root does outside, inside the workspace and writable
    -- paths only (files keep their real owners, new ones are root's, chown works); everywhere
    -- else they can do no more than without it. Where the kernel or the host cannot give it
    -- safely (idmapped mounts), one line says so and files of other owners stay read-only.
    -- Other callers: no effect. See docs/root-callers.md.
    root_writes = true,
}
