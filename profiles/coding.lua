-- profiles/coding.lua — the default profile: an agent edits and builds one workspace.
-- A profile is a Lua file returning a table; every key is documented in lua/HOOKS.md
-- ("Profile keys"). Another profile can start from this one with `extends = "coding"`:
-- its lists are appended to these, its tables merged, its scalars win.
-- Profiles run sandboxed: no io/os; `host.home()`, `host.exists(path)` etc. are available.

-- The caller's home is a home like any other, root's included: its credentials are hidden (the
-- list below), its toolchains (pyenv, rustup, nvm, ~/.local/bin) and ~/.gitconfig stay. Root's
-- home is hidden whole only when it is not the caller's home: root-only secrets there that a
-- uid-0 process could read.
local hidden = {
    "~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gh", "~/.netrc", "~/.docker", "~/.kube",
    "~/.npmrc", "~/.pypirc", "~/.git-credentials", "~/.config/gcloud", "~/.azure",
    "~/.oci", "~/.config/doctl", "~/.config/hub", "~/.vault-token", "~/.terraform.d/credentials.tfrc.json",
    "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.claude/.credentials.json",
    "~/.codex/auth.json",
    "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d",
    "/etc/ssh",             -- host keys
}
if host.home() ~= "/root" then hidden[#hidden + 1] = "/root" end

return {
    description = "Default: workspace writable, secrets hidden, network through the allowlist",

    -- The workspace is the current directory (or --workspace); it is writable.
    workspace_readonly = false,

    -- Paths that look missing (ENOENT) inside the sandbox, whether or not they exist when it
    -- starts. `~` is the caller's home.
    hidden = hidden,

    -- The caller's home: "overlay" (copy-on-write: commands write caches, ~/.gitconfig, ... to
    -- a private layer of the workspace's, kept across runs; `cordon home` shows it), "tmpfs"
    -- (the same, discarded when the sandbox ends) or "readonly".
    home = "overlay",

    -- Relative to the workspace: stay read-only although the workspace is writable, so a
    -- command cannot plant a git hook or rewrite the project's own policy.
    readonly_in_workspace = { ".git/hooks", ".git/config", ".cordon" },

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
        -- Cloud metadata endpoints hand out credentials: never reachable by default.
        deny = { "169.254.169.254", "metadata.google.internal" },
        loopback = true,        -- may commands serve and use TCP on the sandbox's own loopback?
        unrestricted = false,   -- true: no network namespace at all
        ask = true,             -- ask an interactive owner about unknown hosts
    },

    seccomp = {
        block_unix_sockets = false,
        deny = {},              -- extra syscall names, beyond the engine's fixed refusals
    },

    -- Resource limits: an integer (soft = hard), "unlimited", or { soft, hard }.
    rlimits = {
        core = 0,               -- no core dumps of processes that may hold secrets
    },

    escalation = {
        ask_sandbox_off = false, -- ask before re-running a refused command outside the sandbox?
        permission_timeout = "5m",
        plan = false,
    },

    env = {
        set = {},
        -- Removed from the command's environment: names, or patterns where `*` matches anything.
        strip = {
            "*_API_KEY", "*_TOKEN", "*_SECRET", "*_PASSWORD",
            "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
            "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
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
}
