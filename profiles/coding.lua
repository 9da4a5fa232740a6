-- profiles/coding.lua — the default profile: an agent edits and builds one workspace.
-- A profile is a Lua file returning a table; every key is documented in lua/HOOKS.md
-- ("Profile keys"). Another profile can start from this one with `extends = "coding"`:
-- its lists are appended to these, its tables merged, its scalars win.
-- Profiles run sandboxed: no io/os; `host.home()`, `host.exists(path)` etc. are available.
return {
    description = "Default: workspace writable, secrets hidden, network through the allowlist",

    -- The workspace is the current directory (or --workspace); it is writable.
    workspace_readonly = false,

    -- Paths that look missing (ENOENT) inside the sandbox. `~` is the caller's home.
    hidden = {
        "~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gh", "~/.netrc", "~/.docker", "~/.kube",
        "~/.npmrc", "~/.pypirc", "~/.git-credentials", "~/.config/gcloud", "~/.azure",
        "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d",
        "/etc/ssh",             -- host keys
        "/root",                -- root-only secrets: when the caller is root, a uid-0 process
                                -- could read them (the engine keeps the workspace visible)
    },

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
    -- once (a fork bomb stops there); memory: bytes of RAM for the whole sandbox, killed
    -- past it ("unlimited" or absent: none); both need a cgroup (cordon uses a child of the
    -- caller's; without one, pids falls back to RLIMIT_NPROC, which counts all of the user's
    -- processes on the host). tmp_size, shm_size: the sizes of /tmp and /dev/shm, both RAM.
    limits = {
        pids = 4096,
        tmp_size = "2G",
        shm_size = "512M",
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
