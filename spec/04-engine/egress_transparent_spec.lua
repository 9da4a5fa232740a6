-- spec/04-engine/egress_transparent_spec.lua — the sandbox's resolver (127.0.0.53) and
-- network.transparent seen by real clients that do not use the proxy variables (coding has it
-- on; the spec runs a profile of its own, coding with network.transparent = true, so it does not
-- depend on that default):
-- Node's fetch and https.get, Python's socket and getaddrinfo, curl --noproxy '*', getent,
-- against origins the spec starts on the host's 127.0.0.2 (HTTP, and openssl s_server with a
-- throwaway certificate for the TLS server name). Names come from a hosts file of the spec's
-- own (CORDON_HOSTS_FILE, the resolver's test hook): never the network. The redirect rule is
-- listed from the host (nsenter into the sandbox's namespace), and a kernel without nf_tables
-- is played by a seccomp filter of the spec's own. 127.0.0.2 is a
-- loopback address to the rules, so every allowed case also names it (a name's special
-- address needs a rule of its own). Refused cases show the refusal line and reach nothing.
-- Hostile DNS input (malformed, truncated, oversized, a flood) leaves the resolver answering.
-- Drives the built binary ($CORDON_BIN); loopback only; needs node, curl, openssl, python3.
local h = require("spec.helpers")

local UNSET = { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy",
                "NODE_USE_ENV_PROXY", "no_proxy", "NO_PROXY" }

local has = h.has

--- A free TCP port on 127.0.0.2.
local function free_port()
    return tonumber(h.chomp(h.sh_ok(h.python .. [[ -c 'import socket
s=socket.socket(); s.bind(("127.0.0.2",0)); print(s.getsockname()[1])']])))
end

local function wait_listening(port)
    assert(h.wait_for(function()
        return h.sh(h.python .. ([[ -c 'import socket; socket.create_connection(("127.0.0.2",%d),1)']])
            :format(port)).code == 0
    end, 10), "origin on 127.0.0.2:" .. port .. " did not start")
end

local function http_origin()
    local dir = h.tmpdir()
    local marker = "cordon-transparent-" .. h.token()
    h.write_file(dir .. "/probe.txt", marker .. "\n")
    local port = free_port()
    h.spawn(("%s -m http.server %d --bind 127.0.0.2 --directory %s"):format(h.python, port, h.quote(dir)))
    wait_listening(port)
    return { port = port, marker = marker }
end

local function tls_origin()
    local dir = h.tmpdir()
    h.sh_ok(("cd %s && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -keyout key.pem -out cert.pem "
        .. "-subj /CN=tls.test 2>/dev/null"):format(h.quote(dir)))
    local port = free_port()
    h.spawn(("openssl s_server -accept 127.0.0.2:%d -cert %s/cert.pem -key %s/key.pem -www -quiet")
        :format(port, h.quote(dir), h.quote(dir)))
    wait_listening(port)
    return { port = port }
end

describe("egress without the proxy variables (network.transparent, the sandbox's resolver)", function()
    local hosts, audit, web, other, tls, config
    local function env()
        return { CORDON_HOSTS_FILE = hosts, CORDON_AUDIT_LOG = audit, XDG_CONFIG_HOME = config }
    end
    local function run(script, flags)
        local with = { "--profile", "transparent" }
        for _, f in ipairs(flags or {}) do with[#with + 1] = f end
        return h.run_sh(script, { flags = with, env = env(), unset = UNSET })
    end

    setup(function()
        if not h.have_binary() then return end
        local dir = h.tmpdir()
        hosts = dir .. "/hosts"
        audit = dir .. "/audit.jsonl"
        config = h.profile_dir("transparent",
            'return { extends = "coding", network = { transparent = true } }\n')
        h.write_file(config .. "/cordon/profiles/needs-transparent.lua",
            'return { extends = "coding", network = { transparent = "required" } }\n')
        h.write_file(hosts, "127.0.0.2 allowed.test blocked.test tls.test\n10.1.2.3 private.test\n")
        web = http_origin()
        other = http_origin()
        tls = tls_origin()
    end)
    teardown(h.cleanup)
    before_each(function()
        if not h.have_binary() then h.skip("no cordon binary") end
    end)

    local function allow_web()
        return { "--network-allow", "allowed.test:" .. web.port, "--network-allow", "127.0.0.2:" .. web.port }
    end

    it("resolves an allowed name and refuses one no rule could allow (getent, getaddrinfo)", function()
        local r = run([[
            head -2 /etc/resolv.conf
            getent hosts allowed.test; echo "getent-allowed=$?"
            getent hosts blocked.test; echo "getent-blocked=$?"
            python3 -c 'import socket; print("py-allowed", socket.getaddrinfo("allowed.test", 80)[0][4][0])'
            python3 -c 'import socket
try: socket.getaddrinfo("blocked.test", 80); print("py-blocked resolved")
except socket.gaierror as e: print("py-blocked", e)'
            getent hosts private.test; echo "getent-private=$?"
            getent hosts blocked.test]], allow_web())
        has(r, "nameserver 127.0.0.53")
        has(r, "127.0.0.2       allowed.test")
        has(r, "getent-allowed=0")
        has(r, "getent-blocked=2")
        has(r, "py-allowed 127.0.0.2")
        has(r, "py-blocked [Errno -3]")
        -- allowed.test's rule does not name private.test: no answer
        has(r, "getent-private=2")
        local log = h.read_file(audit) or ""
        assert.truthy(log:find('"kind":"dns","host":"allowed.test","port":0,"verdict":"allow"', 1, true), log)
        assert.truthy(log:find('"kind":"dns","host":"blocked.test","port":0,"verdict":"deny"', 1, true), log)
    end)

    it("reports a refused name with the flag that would allow it", function()
        local r = run("curl -sS --noproxy '*' --max-time 10 http://blocked.test:" .. web.port .. "/probe.txt",
            allow_web())
        assert.are_not.equal(0, r.code, h.describe(r))
        has(r, "Could not resolve host: blocked.test")
        has(r, "cordon: the sandbox's network policy blocked blocked.test (--network-allow blocked.test would allow it)")
    end)

    it("an answer's private address needs a rule of its own", function()
        local r = run("getent hosts private.test; echo rc=$?", { "--network-allow", "private.test" })
        has(r, "rc=2")
        local log = h.read_file(audit) or ""
        assert.truthy(log:find("private.test resolves to 10.1.2.3, a loopback, link-local or private address", 1, true), log)
        r = run("getent hosts private.test; echo rc=$?",
            { "--network-allow", "private.test", "--network-allow", "10.1.2.3:443" })
        has(r, "10.1.2.3        private.test")
    end)

    it("Node's fetch and https.get reach an allowed origin and are refused a blocked one", function()
        local flags = allow_web()
        for _, f in ipairs({ "--network-allow", "tls.test:" .. tls.port, "--network-allow", "127.0.0.2:" .. tls.port }) do
            flags[#flags + 1] = f
        end
        local js = ([[
const https = require("https");
const show = (what) => (e) => console.log(what, "error", (e.cause && e.cause.code) || e.code);
(async () => {
  await fetch("http://allowed.test:%d/probe.txt").then(async r => console.log("fetch-allowed", r.status, (await r.text()).trim())).catch(show("fetch-allowed"));
  await fetch("http://allowed.test:%d/probe.txt").then(r => console.log("fetch-blocked", r.status)).catch(show("fetch-blocked"));
  await new Promise(done => https.get("https://tls.test:%d/", { rejectUnauthorized: false }, r => { console.log("https-allowed", r.statusCode); r.resume(); r.on("end", done); }).on("error", e => { show("https-allowed")(e); done(); }));
  await new Promise(done => https.get("https://blocked.test:%d/", { rejectUnauthorized: false }, r => { console.log("https-blocked", r.statusCode); done(); }).on("error", e => { show("https-blocked")(e); done(); }));
})();]]):format(web.port, other.port, tls.port, tls.port)
        local r = run("node -e " .. h.quote(js), flags)
        has(r, "fetch-allowed 200 " .. web.marker)
        has(r, "fetch-blocked error ECONNRESET")
        has(r, "https-allowed 200")
        has(r, "https-blocked error EAI_AGAIN")
        has(r, "cordon: the sandbox's network policy blocked allowed.test:" .. other.port
            .. " (--network-allow allowed.test:" .. other.port .. " would allow it)")
        has(r, "cordon: the sandbox's network policy blocked blocked.test (--network-allow blocked.test would allow it)")
    end)

    it("Python's socket.create_connection and curl --noproxy '*' go through the rules", function()
        local r = run(([[
python3 - <<'EOF'
import socket
for port in (%d, %d):
    try:
        s = socket.create_connection(("allowed.test", port), timeout=10)
        s.sendall(b"GET /probe.txt HTTP/1.0\r\nHost: allowed.test\r\n\r\n")
        data = b""
        while True:
            b = s.recv(4096)
            if not b: break
            data += b
        print("py", port, "reply" if b"%s" in data else "empty-or-reset", flush=True)
    except OSError as e:
        print("py", port, "error", e.errno, flush=True)
EOF
curl -sS --noproxy '*' --max-time 10 http://allowed.test:%d/probe.txt
curl -sS --noproxy '*' --max-time 10 http://allowed.test:%d/probe.txt; echo "curl-blocked=$?"]])
            :format(web.port, other.port, web.marker, web.port, other.port), allow_web())
        has(r, ("py %d reply"):format(web.port))
        has(r, ("py %d error 104"):format(other.port))
        has(r, web.marker)
        -- the reset comes right after the handshake: curl sees it as 7 or 56, as it happens
        assert.truthy(r.stdout:find("curl-blocked=56", 1, true) or r.stdout:find("curl-blocked=7", 1, true), h.describe(r))
        has(r, "(--network-allow allowed.test:" .. other.port .. " would allow it)")
    end)

    it("a connection to an address no name was answered for is decided by its TLS server name", function()
        local flags = { "--network-allow", "tls.test:" .. tls.port, "--network-allow", "127.0.0.2:" .. tls.port }
        local r = run(([[
echo | openssl s_client -connect 127.0.0.2:%d -servername tls.test 2>&1 | grep -m1 -o 'CN *= *tls.test' ; echo "tls-allowed=$?"
echo | openssl s_client -connect 127.0.0.2:%d -servername evil.test 2>&1 | grep -c 'CN *= *tls.test'; echo done]])
            :format(tls.port, tls.port), flags)
        has(r, "tls-allowed=0")
        has(r, "0\ndone")
        local log = h.read_file(audit) or ""
        assert.truthy(log:find('"kind":"connect","host":"evil.test","port":' .. tls.port .. ',"verdict":"deny"', 1, true), log)
    end)

    it("coding has it on: curl --noproxy '*' reaches an allowed origin with no profile named", function()
        local r = h.run_sh(("curl -sS --noproxy '*' --max-time 10 http://127.0.0.2:%d/probe.txt"):format(web.port),
            { flags = { "--network-allow", "127.0.0.2:" .. web.port }, env = env(), unset = UNSET })
        assert.are.equal(0, r.code, h.describe(r))
        has(r, web.marker)
    end)

    it("a server that speaks first reaches a silent client at an allowed address, audited once", function()
        -- an SSH-like origin: its banner first, then it echoes one line
        local port = free_port()
        h.spawn(h.python .. " -c " .. h.quote(([[
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.2", %d)); s.listen(8)
while True:
    c, _ = s.accept()
    try:
        c.sendall(b"HELLO-1.0 banner\r\n")
        c.sendall(c.recv(100))
    except OSError:
        pass  # the readiness probe hangs up at once
    c.close()
]]):format(port)))
        wait_listening(port)
        local r = run(h.python .. " -c " .. h.quote(([[
import socket
s = socket.create_connection(("127.0.0.2", %d))
print(s.recv(100).decode().strip())
s.sendall(b"ping\n")
print(s.recv(100).decode().strip())
]]):format(port)), { "--network-allow", "127.0.0.2:" .. port })
        assert.are.equal(0, r.code, h.describe(r))
        has(r, "HELLO-1.0 banner\nping")
        local log = h.read_file(audit) or ""
        local _, n = log:gsub('"kind":"connect","host":"127.0.0.2","port":' .. port .. ',"verdict":"allow"', "")
        assert.are.equal(1, n, log)
    end)

    it("the rule is in the sandbox's own nftables, sent without nft(8)", function()
        if h.sh("id -u").stdout ~= "0\n" or h.sh("test -x /usr/sbin/nft").code ~= 0 then
            h.skip("needs root (to enter the sandbox's network namespace) and /usr/sbin/nft")
        end
        -- a command has no CAP_NET_ADMIN to list its rules: the host's root enters its namespace
        local mark = ("31.%d"):format(math.random(100000, 999999))
        h.spawn("sh -c " .. h.quote(("cd %s && exec %s"):format(h.quote(h.workspace()), h.command_line(
            { "run", "--profile", "transparent", "--", "sleep", mark }, { env = env() }))))
        local pid
        assert(h.wait_for(function()
            pid = h.chomp(h.sh("pgrep -xf " .. h.quote("sleep " .. mark)).stdout):match("^%d+")
            return pid ~= nil
        end, 10), "the sandbox's command did not start")
        local r = h.sh("nsenter -t " .. pid .. " -n /usr/sbin/nft list ruleset")
        h.sh("kill " .. pid)
        assert.are.equal(0, r.code, h.describe(r))
        has(r, "table inet cordon {")
        has(r, "type nat hook output priority -100; policy accept;")
        has(r, "ip daddr 127.0.0.1 return")
        has(r, "ip daddr 127.0.0.53 return")
        has(r, "ip6 daddr ::1 return")
        has(r, "meta l4proto tcp redirect to :18082")
    end)

    it("a kernel without nf_tables: the sandbox says so in one line and goes on, unless required", function()
        if h.sh("id -u").stdout ~= "0\n" or h.sh("command -v cc").code ~= 0 then
            h.skip("needs root (a seccomp filter without no_new_privs) and cc")
        end
        -- what a kernel without nf_tables looks like to init: socket(AF_NETLINK, ...,
        -- NETLINK_NETFILTER) fails with EPROTONOSUPPORT, by a seccomp filter of the spec's own
        -- around cordon (stacked under the sandbox's: every process below inherits it)
        local dir = h.tmpdir()
        h.write_file(dir .. "/no_nf.c", [[
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    (void)argc;
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 5),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 16 /* AF_NETLINK */, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 12 /* NETLINK_NETFILTER */, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPROTONOSUPPORT),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
        return 126;
    execv(argv[1], argv + 1);
    return 127;
}
]])
        h.sh_ok(("cc -o %s/no_nf %s/no_nf.c"):format(h.quote(dir), h.quote(dir)))
        local function without_nf(args, opts)
            local line = h.command_line(args, opts)
            local cmd = ("cd %s && %s/no_nf /bin/sh -c %s"):format(h.quote(h.workspace()),
                h.quote(dir), h.quote(line))
            local r = h.sh(cmd)
            r.cmd = cmd
            return r
        end
        -- coding itself (no profile named) and a profile with transparent = true alike
        for _, with in ipairs({ {}, { "--profile", "transparent" } }) do
            local args = { "run" }
            for _, f in ipairs(with) do args[#args + 1] = f end
            for _, a in ipairs({ "--", "/bin/sh", "-c", "echo ran" }) do args[#args + 1] = a end
            local r = without_nf(args, { env = env() })
            assert.are.equal(0, r.code, h.describe(r))
            has(r, "ran")
            has(r, "cordon: no transparent network (the kernel has no nf_tables): only clients that "
                .. "use the proxy variables reach the network")
            local _, lines = (r.stdout .. r.stderr):gsub("no transparent network", "")
            assert.are.equal(1, lines, h.describe(r))
        end
        local r = without_nf({ "run", "--profile", "needs-transparent", "--", "/bin/sh", "-c", "echo ran" },
            { env = env() })
        assert.are.equal(125, r.code, h.describe(r))
        has(r, "cordon: network.transparent is required, but the kernel has no nf_tables\n")
        assert.falsy(r.stdout:find("ran", 1, true), h.describe(r))
    end)

    it("hostile DNS input gets FORMERR or nothing, and the resolver keeps answering", function()
        local r = run([[
python3 - <<'EOF'
import socket, struct, time
def q(name, t=1, qid=0x1234, flags=0x0100):
    b = struct.pack("!HHHHHH", qid, flags, 1, 0, 0, 0)
    for l in name.split("."):
        b += bytes([len(l)]) + l.encode()
    return b + b"\0" + struct.pack("!HH", t, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
addr = ("127.0.0.53", 53)
def ask(msg):
    s.sendto(msg, addr)
    try:
        return s.recv(4096)
    except socket.timeout:
        return None
good = q("allowed.test")
r = ask(good[:15]); print("truncated", r[3] & 15 if r else None)
r = ask(bytes.fromhex("000101000001000000000000c00c00010001")); print("loop", r[3] & 15 if r else None)
r = ask(good + b"\0" * 3000); print("oversized", r[3] & 15 if r else None)
r = ask(b"\x00\x01\x28\x00" + good[4:]); print("opcode", r[3] & 15 if r else None)
r = ask(good[:-1] + b"\x03"); print("class", r[3] & 15 if r else None)
r = ask(b"\x01\x02\x03"); print("short", r)
r = ask(q("allowed.test", flags=0x8100)); print("response", r)
start = time.time()
for i in range(6000):
    s.sendto(q("flood%d.test" % i, qid=i), addr)
s.settimeout(0.2)
try:
    while True: s.recv(4096)
except socket.timeout:
    pass
time.sleep(2.5)
s.settimeout(3)
r = ask(q("allowed.test", qid=7)); print("after-flood", r[3] & 15 if r else None, r[7] if r else None)
t = socket.create_connection(addr, timeout=3)
m = q("allowed.test", 28)
t.sendall(struct.pack("!H", len(m)) + m + b"\xff\xff" + b"x" * 100)
r = t.recv(4096); print("tcp", r[5] & 15, "then", t.recv(10))
EOF]], allow_web())
        has(r, "truncated 1")
        has(r, "loop 1")
        has(r, "oversized 1")
        has(r, "opcode 4")
        has(r, "class 4")
        has(r, "short None")
        has(r, "response None")
        has(r, "after-flood 0 1")
        has(r, "tcp 0 then b''")
    end)
end)
