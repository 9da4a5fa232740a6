-- profiles/strict.lua — coding, tighter: no Unix sockets, lower resource limits, more hidden.
-- `extends` starts from coding: the lists below are appended to coding's, the tables merged.
return {
    extends = "coding",
    description = "coding plus: no AF_UNIX sockets, resource limits, ~/.config hidden, home writes discarded",

    -- Home writes land on a fresh tmpfs over the (read-only) real home: nothing is kept.
    home = "tmpfs",

    seccomp = {
        block_unix_sockets = true,
        -- ptrace, keyctl, bpf, ... are refused by the engine already; add a few more.
        deny = { "personality", "acct", "swapon", "swapoff" },
    },

    rlimits = {
        nofile = 1024,
        fsize = 1024 * 1024 * 1024,        -- 1 GiB per file
        as = 8 * 1024 * 1024 * 1024,       -- 8 GiB address space
        -- Not nproc: limits.pids bounds the sandbox's processes (and sets RLIMIT_NPROC itself
        -- where that is how).
    },

    limits = {
        pids = 1024,
        memory = "8G",                     -- the whole sandbox's RAM (needs a cgroup)
        tmp_size = "1G",
        shm_size = "256M",
    },

    hidden = { "~/.config", "~/.local/share/keyrings", "~/.bash_history" },
}
