#!/bin/sh
# smoke.sh — the everyday capabilities of cordon on the kernel it runs on, one row each.
#
# Usage: smoke.sh            (as root or as an unprivileged user with a home of its own)
# Environment: CORDON (the binary, default: cordon on PATH), SMOKE_TMP (where the scratch
#   home, workspace and servers' files go; default /var/tmp: a disk file system, as a
#   person's home is), SMOKE_CLIENTS (a copy of clients/: python/src and typescript/;
#   default /kmx/clients, the guest's), SMOKE_PKI (the TLS row's CA and server certificate,
#   pki.sh's; default /kmx/pki, the guest's; made with pki.sh when missing and openssl is
#   there), SMOKE_ONLY (space-separated row names to run),
#   SMOKE_FLAGS (options added to every run, session start and mcp, to look past one
#   failure, e.g. "--home readonly"; the matrix never sets it).
# Prints one line per row: "ok NAME", "ok NAME (refused with one line: ...)" where the kernel
# lacks the mechanism and cordon said so in one line, "not ok NAME: reason", "skip NAME:
# reason" (a tool the row needs is missing, or a root caller's row run by another user);
# then exits 1 if any row is not ok.
# Owns: a scratch directory under SMOKE_TMP and, as root, one under /srv (removed at the
#   end), the servers it starts on 127.0.0.2 / 127.0.0.1 (stopped by pid) and the sessions
#   it starts (stopped by name).
# Uses: cordon, python3, curl, git, unshare, node (TypeScript client row only), timeout,
#   pki.sh beside it (openssl; only without SMOKE_PKI).
# Never: touches the caller's real home; binds anything but loopback; waits unbounded.
set -u
CORDON=${CORDON:-$(command -v cordon || echo /usr/local/bin/cordon)}
SMOKE_TMP=${SMOKE_TMP:-/var/tmp}
SMOKE_CLIENTS=${SMOKE_CLIENTS:-/kmx/clients}
SMOKE_PKI=${SMOKE_PKI:-/kmx/pki}
HERE=$(cd "$(dirname "$0")" && pwd)
ME=$(id -u)
T=$(mktemp -d "$SMOKE_TMP/cordon-smoke.XXXXXX") || { echo "not ok setup: no scratch dir in $SMOKE_TMP"; exit 1; }
chmod 755 "$T"
H=$T/home                   # the scratch home cordon sees as $HOME
W=$T/ws                     # the workspace (outside the home)
mkdir -p "$H/.ssh" "$W" "$T/srv" "$T/out"
echo "secret-key" >"$H/.ssh/id_x"
chmod 700 "$H/.ssh"
chmod 600 "$H/.ssh/id_x"
echo "cordon-smoke-marker" >"$T/srv/m.txt"
printf '127.0.0.2 allowed.test blocked.test\n' >"$T/hosts"
PIDS=
SESSIONS=
ROOTDIRS=
FAILED=0
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy no_proxy NO_PROXY
export HOME="$H" CORDON_HOSTS_FILE="$T/hosts" XDG_RUNTIME_DIR="$T/run" XDG_CONFIG_HOME="$T/config"
export XDG_DATA_HOME="$T/data" XDG_STATE_HOME="$T/state" XDG_CACHE_HOME="$T/cache"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

cleanup() {
    for s in $SESSIONS; do (cd "$W" && timeout 30 "$CORDON" session stop "$s" >/dev/null 2>&1); done
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    for d in $ROOTDIRS; do rm -rf "$d"; done
    rm -rf "$T" 2>/dev/null || { chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"; }
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# c ARGS...: cordon in the workspace, bounded, stdout to $T/out/o, stderr to $T/out/e.
# SMOKE_FLAGS (a diagnosis aid, e.g. "--home readonly"): added to every run and session start.
c() {
    case "$1 ${2:-}" in
    "run "*) shift; set -- run ${SMOKE_FLAGS:-} "$@" ;;
    "session start") a=$3; shift 3; set -- session start "$a" ${SMOKE_FLAGS:-} "$@" ;;
    esac
    (cd "$W" && timeout -k 5 90 "$CORDON" "$@") >"$T/out/o" 2>"$T/out/e"
    st=$?
    cat "$T/out/e" >>"$T/out/all" # every line of the pass: a line said once comes only once
    return $st
}
# A capability the kernel lacks, with no equal fallback: the line (said now or earlier in this
# pass, e.g. once per machine) that names what is missing and the kernel that has it.
lacks_line() { # lacks_line REGEX
    grep -m1 -E "^cordon: .*($1).*Linux [0-9]" "$T/out/all" 2>/dev/null
}
# The lines cordon printed (up to four: its warnings, then its refusal or error), for a reason.
cline() {
    grep '^cordon' "$T/out/e" 2>/dev/null | head -n 4 | awk '{ printf "%s%s", (NR > 1 ? " | " : ""), $0 }' |
        grep . || head -c 300 "$T/out/e" | head -n 2 | tr '\n' ' ' | sed 's/ *$//'
}
# why RC TEXT...: a failed row's reason: the text, the exit code and cordon's lines.
why() {
    rc=$1
    shift
    l=$(cline)
    echo "$* (exit $rc${l:+; $l})"
}

# A client's failure: what it printed, and cordon's line within its error (or its last line).
client_why() {
    l=$(grep -o -m1 'cordon: .*' "$T/out/e" 2>/dev/null || tail -n 1 "$T/out/e")
    echo "exit $1; $(head -c 200 "$T/out/o" | tr '\n' ' ')${l:+; $l}"
}

free_port() { # free_port ADDR: a port nothing listens on now
    python3 -c 'import socket,sys
s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "$1"
}
SERVERS=
serve() { # serve 1|2|3: the port of server N (1, 2: on 127.0.0.2; 3: on 127.0.0.1) in $PORT
    if [ -z "$SERVERS" ]; then
        # One Python for all three (each start costs seconds under emulation): HTTP servers of
        # $T/srv on ports of their own choosing, written to a file once all listen.
        python3 -c 'import http.server,functools,sys,os,threading
h=functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
ss=[http.server.ThreadingHTTPServer((a,0), h) for a in ("127.0.0.2","127.0.0.2","127.0.0.1")]
open(sys.argv[2]+".tmp","w").write(" ".join(str(s.server_address[1]) for s in ss))
os.rename(sys.argv[2]+".tmp", sys.argv[2])
for s in ss[1:]: threading.Thread(target=s.serve_forever, daemon=True).start()
ss[0].serve_forever()' "$T/srv" "$T/out/ports" >/dev/null 2>&1 &
        PIDS="$PIDS $!"
        i=0
        while [ ! -s "$T/out/ports" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
        SERVERS=$(cat "$T/out/ports" 2>/dev/null)
    fi
    # shellcheck disable=SC2086 # three words
    set -- "$1" $SERVERS
    case $1 in 1) PORT=${2:-} ;; 2) PORT=${3:-} ;; 3) PORT=${4:-} ;; esac
    [ -n "$PORT" ]
}

CRED_SERVERS=
cred_serve() { # cred_serve: an HTTP and an HTTPS origin on 127.0.0.2 that log each request's
    # path and Authorization to $T/cred.log; their ports in $CPORT and $SPORT (2: no certificates)
    if [ -z "$CRED_SERVERS" ]; then
        pki=$SMOKE_PKI
        if [ ! -f "$pki/ca.pem" ]; then
            command -v openssl >/dev/null || { echo "no openssl and no SMOKE_PKI ($pki)"; return 2; }
            pki=$T/pki
            sh "$HERE/pki.sh" "$pki" || { echo "pki.sh failed"; return 1; }
        fi
        CA=$pki/ca.pem
        python3 -c 'import http.server,ssl,sys,os,threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write("%s %s\n" % (self.path, self.headers.get("Authorization", "-")))
        b = b"seen\n"
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a): pass
p = http.server.ThreadingHTTPServer(("127.0.0.2", 0), H)
s = http.server.ThreadingHTTPServer(("127.0.0.2", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[3] + "/srv.pem", sys.argv[3] + "/srv.key")
s.socket = ctx.wrap_socket(s.socket, server_side=True)
open(sys.argv[1] + ".tmp", "w").write("%d %d" % (p.server_address[1], s.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Thread(target=s.serve_forever, daemon=True).start()
p.serve_forever()' "$T/out/cports" "$T/cred.log" "$pki" >/dev/null 2>&1 &
        PIDS="$PIDS $!"
        i=0
        while [ ! -s "$T/out/cports" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
        CRED_SERVERS=$(cat "$T/out/cports" 2>/dev/null)
    fi
    CPORT=${CRED_SERVERS% *}
    SPORT=${CRED_SERVERS#* }
    [ -n "$CRED_SERVERS" ] || { echo "no credential origins on 127.0.0.2"; return 1; }
}
CRED_VALUE=cordon-smoke-value-$$

# cred_check URL PATH [FLAGS...]: curl URL with "Authorization: Bearer $TOKEN" inside, TOKEN
# declared for 127.0.0.2:PORT; the origin saw the value under PATH, the command the placeholder.
cred_check() {
    url=$1 path=$2
    shift 2
    hp=${url#*://}
    hp=${hp%%/*}
    TOKEN=$CRED_VALUE c run --credential "TOKEN=$hp" --network-allow "$hp" "$@" -- sh -c \
        "echo \"token=\$TOKEN\"; curl -sS --max-time 30 -H \"Authorization: Bearer \$TOKEN\" $url"
    rc=$?
    [ $rc = 0 ] && grep -q '^seen$' "$T/out/o" || { why $rc "$url not reached"; return 1; }
    grep -q '^token=cordon_TOKEN_' "$T/out/o" || { echo "TOKEN inside is not a placeholder"; return 1; }
    ! grep -q "$CRED_VALUE" "$T/out/o" || { echo "the value reached the command"; return 1; }
    grep -q "^$path Bearer $CRED_VALUE\$" "$T/cred.log" ||
        { echo "the origin did not see the value under $path: $(grep "^$path " "$T/cred.log" | head -c 200)"; return 1; }
}

# ---- the rows: each prints nothing and returns 0 when it holds, else prints the reason
# and returns 1 (2: skipped, the reason says which tool is missing).

t_run_exit() {
    c run -- sh -c 'echo inside; exit 7'
    rc=$?
    [ $rc = 7 ] && grep -q '^inside$' "$T/out/o" || { why $rc "expected exit 7 and 'inside'"; return 1; }
}

t_home_cow() {
    c run -- sh -c 'mkdir -p "$HOME/.cache" && echo kept >"$HOME/.cache/x"'
    rc=$?
    if [ $rc != 0 ]; then
        # Before Linux 5.11 no overlayfs in a user namespace: a read-only home, said in a line.
        l=$(lacks_line 'overlay')
        if [ -n "$l" ] && grep -q 'Read-only file system' "$T/out/e" && [ ! -e "$H/.cache" ]; then
            echo "$l"
            return 3
        fi
        why $rc "the write to ~/.cache/x failed"
        return 1
    fi
    [ ! -e "$H/.cache/x" ] || { echo "the host's home got ~/.cache/x"; return 1; }
    c run -- cat "$HOME/.cache/x"
    rc=$?
    [ $rc = 0 ] && grep -q '^kept$' "$T/out/o" || { why $rc "the next run does not see ~/.cache/x"; return 1; }
}

t_hidden() {
    c run -- sh -c 'test -e "$HOME/.ssh/id_x" && echo visible-key; cat /etc/shadow >/dev/null 2>&1 && echo read-shadow; echo done'
    rc=$?
    [ $rc = 0 ] && grep -q '^done$' "$T/out/o" || { why $rc "the command did not run"; return 1; }
    # shellcheck disable=SC2088 # the words of the reason, not a path
    ! grep -q visible-key "$T/out/o" || { echo "~/.ssh/id_x is visible inside"; return 1; }
    ! grep -q read-shadow "$T/out/o" || { echo "/etc/shadow is readable inside"; return 1; }
}

t_hidden_in_ws() { # --hide of a file and a folder inside the writable workspace: covered, not shown
    echo ws-secret >"$W/.env.smoke"
    mkdir -p "$W/keys.smoke" && echo ws-key >"$W/keys.smoke/k"
    c run --hide "$W/.env.smoke" --hide "$W/keys.smoke" -- sh -c 'cat .env.smoke keys.smoke/k 2>&1
echo w >.env.smoke 2>/dev/null && echo wrote; ls -A /run | grep -c cordon-covers; echo done'
    rc=$?
    rm -rf "$W/.env.smoke" "$W/keys.smoke"
    [ $rc = 0 ] && grep -q '^done$' "$T/out/o" || { why $rc "the command did not run"; return 1; }
    ! grep -q 'ws-secret\|ws-key' "$T/out/o" || { echo "a hidden path in the workspace is readable inside"; return 1; }
    ! grep -q '^wrote$' "$T/out/o" || { echo "a hidden file in the workspace was written"; return 1; }
    grep -q '^0$' "$T/out/o" || { echo "the covers' staging folder is left in /run"; return 1; }
}

t_root_protect() {
    [ "$ME" = 0 ] || { echo "a root caller's row"; return 2; }
    # Under /srv: one of the host's folders the sandbox shows (not the workspace, the home,
    # /var/tmp whose root files coding shows, or /run and /tmp, which are the sandbox's own).
    R=$(mktemp -d /srv/cordon-smoke-root.XXXXXX) || { echo "no scratch dir in /srv"; return 1; }
    chmod 755 "$R"
    ROOTDIRS="$ROOTDIRS $R"
    echo root-secret >"$R/s"
    chmod 600 "$R/s"
    cat "$R/s" >/dev/null || { echo "root cannot read its own file outside"; return 1; }
    c run -- sh -c "ls -d '$R' && cat '$R/s' 2>&1; echo done"
    rc=$?
    [ $rc = 0 ] && grep -q '^done$' "$T/out/o" || { why $rc "the command did not run"; return 1; }
    grep -q "^$R\$" "$T/out/o" || { echo "$R is not seen inside: the row proves nothing"; return 1; }
    ! grep -q root-secret "$T/out/o" || { echo "a 0600 root file outside the workspace is readable inside"; return 1; }
}

t_seccomp() {
    command -v unshare >/dev/null || { echo "no unshare"; return 2; }
    # Without the sandbox the call works (the row could fail) ...
    unshare -U true 2>/dev/null || { echo "unshare -U fails even outside the sandbox"; return 1; }
    # ... inside it is refused.
    c run -- sh -c 'unshare -U true 2>&1 && echo unshared; echo done'
    rc=$?
    [ $rc = 0 ] && grep -q '^done$' "$T/out/o" || { why $rc "the command did not run"; return 1; }
    ! grep -q '^unshared$' "$T/out/o" || { echo "unshare -U succeeded inside"; return 1; }
    python3 -c 'import ctypes,sys
libc=ctypes.CDLL(None,use_errno=True)
# keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0)
sys.exit(0 if libc.syscall(250,0,-3,0)>=0 else 3)' 2>/dev/null
    outside=$?
    c run -- python3 -c 'import ctypes,sys,errno
libc=ctypes.CDLL(None,use_errno=True)
r=libc.syscall(250,0,-3,0); print("keyctl", r, errno.errorcode.get(ctypes.get_errno(),"?"))'
    if [ "$outside" = 0 ] && grep -q '^keyctl [0-9]' "$T/out/o"; then
        echo "keyctl works inside"
        return 1
    fi
}

t_landlock() {
    # Landlock where the kernel has it (5.13): a file the caller may write outside the
    # workspace stays unwritable; on 5.10 the same must hold by the mounts.
    mkdir -p "$T/outside"
    : >"$T/outside/f"
    c run -- sh -c "echo x >'$T/outside/f' 2>/dev/null && echo wrote; echo done"
    rc=$?
    [ $rc = 0 ] && grep -q '^done$' "$T/out/o" || { why $rc "the command did not run"; return 1; }
    ! grep -q '^wrote$' "$T/out/o" && [ ! -s "$T/outside/f" ] || { echo "wrote outside the workspace"; return 1; }
}

t_loopback_off() {
    # --allow-loopback=false needs Landlock's network rules (6.7): where they are, a listen
    # on the sandbox's loopback is refused; where not, the sandbox must not start, and say so
    # in one line naming the kernel that has them.
    c run --allow-loopback=true -- python3 -c 'import socket
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print("listened")'
    grep -q '^listened$' "$T/out/o" || { why $? "a listen on the sandbox's loopback fails even when allowed"; return 1; }
    c run --allow-loopback=false -- python3 -c 'import socket
s=socket.socket()
try:
    s.bind(("127.0.0.1",0)); s.listen(); print("listened")
except OSError as e: print("refused", e.errno)'
    rc=$?
    if [ $rc = 125 ]; then
        n=$(grep -c '^cordon' "$T/out/e")
        l=$(grep -m1 '^cordon' "$T/out/e")
        if [ "$n" = 1 ] && echo "$l" | grep -q 'Linux [0-9]'; then
            echo "$l"
            return 3
        fi
        why $rc "refused, but not with one line naming the kernel that has it"
        return 1
    fi
    grep -q '^refused' "$T/out/o" || { why $rc "a listen on the loopback worked with --allow-loopback=false"; return 1; }
}

t_session() {
    s=smoke-$$-s
    c session start "$s" --detach || { why $? "session start failed"; return 1; }
    SESSIONS="$SESSIONS $s"
    c exec "$s" -- 'echo in-session; exit 5'
    rc=$?
    [ $rc = 5 ] && grep -q '^in-session$' "$T/out/o" || { why $rc "exec: expected exit 5"; return 1; }
    c exec "$s" --background -- 'echo job-out; sleep 300' || { why $? "exec --background failed"; return 1; }
    pid=$(grep -o -m1 '[0-9][0-9]*' "$T/out/o")
    [ -n "$pid" ] || { echo "exec --background printed no pid: $(head -c 200 "$T/out/o")"; return 1; }
    c jobs "$s" || { why $? "jobs failed"; return 1; }
    grep -q "$pid" "$T/out/o" || { echo "jobs does not list $pid"; return 1; }
    i=0
    while [ $i -lt 50 ]; do
        c logs "$s" "$pid" && grep -q job-out "$T/out/o" && break
        sleep 0.2
        i=$((i + 1))
    done
    grep -q job-out "$T/out/o" || { why $? "logs does not show the job's output"; return 1; }
    c stop "$s" "$pid" || { why $? "stop failed"; return 1; }
    c session stop "$s" || { why $? "session stop failed"; return 1; }
    SESSIONS=$(echo "$SESSIONS" | sed "s/ $s//")
    c exec "$s" -- true && { echo "exec still works after session stop"; return 1; }
    return 0
}

t_approval() {
    serve 1 || { echo "no server on 127.0.0.2"; return 1; }
    p=$PORT
    s=smoke-$$-a
    c session start "$s" --detach --permission-timeout 60s || { why $? "session start failed"; return 1; }
    SESSIONS="$SESSIONS $s"
    c exec "$s" --timeout 30 -- "curl -sS --max-time 20 http://127.0.0.2:$p/m.txt"
    rc=$?
    [ $rc != 124 ] || { echo "the question waited for an answer with no approver"; return 1; }
    ! grep -q cordon-smoke-marker "$T/out/o" || { echo "the unlisted host was reached"; return 1; }
    grep -q -- "--network-allow 127.0.0.2:$p" "$T/out/e" || { why $rc "no refusal naming --network-allow 127.0.0.2:$p"; return 1; }
    c session stop "$s" || { why $? "session stop failed"; return 1; }
    SESSIONS=$(echo "$SESSIONS" | sed "s/ $s//")
}

t_mcp() {
    (cd "$W" && timeout -k 5 90 python3 -c '
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp"] + sys.argv[2].split(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(m):
    p.stdin.write(json.dumps(m) + "\n"); p.stdin.flush()
def recv(id):
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == id:
            return m
    sys.exit("mcp: stdout ended before the answer to %d" % id)
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {}, "clientInfo": {"name": "smoke", "version": "1"}}})
r = recv(1)
if "result" not in r: sys.exit("initialize: %s" % r)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run_command",
      "arguments": {"command": "echo mcp-$((6*7))"}}})
r = recv(2)
text = json.dumps(r)
p.stdin.close(); p.wait(timeout=60)
print("mcp-42" in text and "MCP-OK" or "MCP-BAD " + text[:300])
' "$CORDON" "${SMOKE_FLAGS:-}") >"$T/out/o" 2>"$T/out/e"
    rc=$?
    grep -q '^MCP-OK$' "$T/out/o" || { why $rc "$(head -c 300 "$T/out/o")"; return 1; }
}

t_client_python() {
    [ -d "$SMOKE_CLIENTS/python/src/cordon" ] || { echo "no clients/python at $SMOKE_CLIENTS"; return 2; }
    (cd "$W" && PYTHONPATH="$SMOKE_CLIENTS/python/src" CORDON_BIN="$CORDON" timeout -k 5 120 python3 -c '
from cordon import Session
import os
with Session.start("smoke-%d-py" % os.getpid(), workspace=".") as s:
    r = s.exec("echo py-$((6*7)); exit 3")
    job = s.background("echo bg-py; sleep 300")
    import time
    for _ in range(50):
        if "bg-py" in s.logs(job.pid): break
        time.sleep(0.2)
    s.stop(job.pid)
    print("PY", r.exit_code, r.stdout.strip(), "bg-py" in s.logs(job.pid))
') >"$T/out/o" 2>"$T/out/e"
    rc=$?
    grep -q '^PY 3 py-42 True$' "$T/out/o" || { client_why $rc; return 1; }
}

t_client_typescript() {
    command -v node >/dev/null || { echo "no node"; return 2; }
    [ -f "$SMOKE_CLIENTS/typescript/index.js" ] || { echo "no clients/typescript at $SMOKE_CLIENTS"; return 2; }
    cat >"$T/ts.mjs" <<EOF
import { Session } from "$SMOKE_CLIENTS/typescript/index.js";
const s = await Session.start("smoke-" + process.pid + "-ts", { workspace: "." });
try {
  const r = await s.exec("echo ts-\$((6*7)); exit 4");
  console.log("TS", r.exitCode, r.stdout.trim());
} finally {
  await s.dispose();
}
EOF
    (cd "$W" && CORDON_BIN="$CORDON" timeout -k 5 120 node "$T/ts.mjs") >"$T/out/o" 2>"$T/out/e"
    rc=$?
    grep -q '^TS 4 ts-42$' "$T/out/o" || { client_why $rc; return 1; }
}

t_proxy() {
    serve 1 || { echo "no server on 127.0.0.2"; return 1; }
    p=$PORT
    c run --network-allow "127.0.0.2:$p" -- sh -c "curl -sS --max-time 20 http://127.0.0.2:$p/m.txt; echo; echo \"proxy=\$HTTP_PROXY\""
    rc=$?
    [ $rc = 0 ] && grep -q cordon-smoke-marker "$T/out/o" || { why $rc "an allowed host through HTTP_PROXY not reached"; return 1; }
    grep -q '^proxy=http' "$T/out/o" || { echo "HTTP_PROXY is not set inside"; return 1; }
}

t_proxy_deny() {
    serve 1 || { echo "no server on 127.0.0.2"; return 1; }
    p=$PORT
    c run --network-allow "127.0.0.2:1" -- curl -sS --max-time 20 -o /dev/null -w '%{http_code}' "http://127.0.0.2:$p/m.txt"
    rc=$?
    grep -q '^403' "$T/out/o" || { why $rc "a denied host did not get 403 (got '$(head -c 50 "$T/out/o")')"; return 1; }
}

t_transparent() {
    serve 1 || { echo "no server on 127.0.0.2"; return 1; }
    p=$PORT
    c run --network-allow "127.0.0.2:$p" -- curl -sS --noproxy '*' --max-time 20 "http://127.0.0.2:$p/m.txt"
    rc=$?
    [ $rc = 0 ] && grep -q cordon-smoke-marker "$T/out/o" || { why $rc "curl --noproxy '*' to an allowed host failed"; return 1; }
    serve 2 || { echo "no second server on 127.0.0.2"; return 1; }
    q=$PORT
    c run --network-allow "127.0.0.2:$p" -- curl -sS --noproxy '*' --max-time 20 "http://127.0.0.2:$q/m.txt"
    ! grep -q cordon-smoke-marker "$T/out/o" || { echo "curl --noproxy '*' reached a host no rule allows"; return 1; }
}

t_resolver() {
    serve 1 || { echo "no server on 127.0.0.2"; return 1; }
    p=$PORT
    c run --network-allow "allowed.test:$p" --network-allow "127.0.0.2:$p" -- sh -c \
        "grep ^nameserver /etc/resolv.conf; getent hosts allowed.test; getent hosts blocked.test || echo blocked-unresolved; curl -sS --noproxy '*' --max-time 20 http://allowed.test:$p/m.txt"
    rc=$?
    grep -q '^nameserver 127\.0\.0\.53' "$T/out/o" && grep -q '^127\.0\.0\.2 *allowed\.test' "$T/out/o" ||
        { why $rc "allowed.test not resolved by the sandbox's resolver: $(head -n 2 "$T/out/o" | tr '\n' ' ')"; return 1; }
    grep -q '^blocked-unresolved$' "$T/out/o" || { echo "a name no rule allows was resolved"; return 1; }
    grep -q cordon-smoke-marker "$T/out/o" || { why $rc "http://allowed.test not reached"; return 1; }
}

t_host_port() {
    serve 3 || { echo "no server on 127.0.0.1"; return 1; }
    p=$PORT
    c run -- curl -sS --noproxy '*' --max-time 10 "http://127.0.0.1:$p/m.txt"
    ! grep -q cordon-smoke-marker "$T/out/o" || { echo "the host's 127.0.0.1:$p is reachable without a grant"; return 1; }
    c run --allow-host-port "$p" -- curl -sS --noproxy '*' --max-time 20 "http://127.0.0.1:$p/m.txt"
    rc=$?
    [ $rc = 0 ] && grep -q cordon-smoke-marker "$T/out/o" || { why $rc "--allow-host-port $p: not reached"; return 1; }
}

t_publish() {
    s=smoke-$$-p
    hp=$(free_port 127.0.0.1)
    c session start "$s" --detach --publish "127.0.0.1:$hp:8000" || { why $? "session start --publish failed"; return 1; }
    SESSIONS="$SESSIONS $s"
    c exec "$s" --background -- 'mkdir -p /tmp/pub && echo published-smoke >/tmp/pub/p.txt && cd /tmp/pub && exec python3 -m http.server 8000 --bind 127.0.0.1' ||
        { why $? "the server did not start"; return 1; }
    i=0
    got=
    while [ $i -lt 50 ]; do
        got=$(curl -sS --noproxy '*' --max-time 5 "http://127.0.0.1:$hp/p.txt" 2>/dev/null) && [ "$got" = published-smoke ] && break
        sleep 0.2
        i=$((i + 1))
    done
    [ "$got" = published-smoke ] || { echo "the published port 127.0.0.1:$hp does not answer ($got)"; return 1; }
    c session stop "$s"
    SESSIONS=$(echo "$SESSIONS" | sed "s/ $s//")
}

t_git_guard() {
    command -v git >/dev/null || { echo "no git"; return 2; }
    export GIT_AUTHOR_NAME=s GIT_AUTHOR_EMAIL=s@example.com GIT_COMMITTER_NAME=s GIT_COMMITTER_EMAIL=s@example.com
    export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
    hook="printf '#!/bin/sh\\ntouch $T/HOOK-RAN\\n' >.git/hooks/pre-commit; chmod +x .git/hooks/pre-commit"
    # Without the sandbox a planted hook runs at the person's next commit (the row can fail).
    mkdir -p "$T/bare-repo"
    (cd "$T/bare-repo" && git init -q && sh -c "$hook" && git commit -q --allow-empty -m one) >/dev/null 2>&1
    [ -e "$T/HOOK-RAN" ] || { echo "a planted hook does not run even without cordon"; return 1; }
    rm -f "$T/HOOK-RAN"
    # Inside: one in the workspace's repository, one in a repository the command makes.
    git -C "$W" init -q && git -C "$W" commit -q --allow-empty -m one || { echo "git init failed outside"; return 1; }
    c run -- sh -c "$hook; git init -q sub && cd sub && $hook; echo planted"
    rc=$?
    grep -q '^planted$' "$T/out/o" || { why $rc "the command did not run"; return 1; }
    git -C "$W" commit -q --allow-empty -m two >/dev/null 2>&1
    git -C "$W/sub" commit -q --allow-empty -m one >/dev/null 2>&1
    [ ! -e "$T/HOOK-RAN" ] || { echo "a hook planted inside ran on the host's git commit"; return 1; }
    [ ! -x "$W/.git/hooks/pre-commit" ] || { echo "the planted hook is in place"; return 1; }
    [ ! -x "$W/sub/.git/hooks/pre-commit" ] || { echo "the hook of the new repository is in place"; return 1; }
    # The new repository is held read-only inside once it is complete, so the plant is refused
    # there (the shell says so); one planted before the hold is undone with cordon's line.
    grep -q '^cordon: git: repository sub' "$T/out/e" || grep -q 'Read-only file system' "$T/out/e" ||
        { echo "nothing said the new repository's hook was refused or undone ($(grep '^cordon' "$T/out/e" | head -n 3 | tr '\n' ' '))"; return 1; }
}

# A repository the command makes, held inside (its hooks read-only in its own mountinfo, waited
# for 10 s at most), then removed with rm -rf: gone on the host. The held names are removed by
# the controller on the host, which detaches the sandbox's mounts of them (Linux 3.18;
# docs/git.md). Every kernel holds (before 5.12, without mount_setattr, by a bind remount).
t_git_remove() {
    command -v git >/dev/null || { echo "no git"; return 2; }
    export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
    c run -- sh -c 'git init -q made || exit 1; for i in $(seq 200); do
        grep -q " $PWD/made/.git/hooks ro," /proc/self/mountinfo && break; sleep 0.05; done
        grep -q " $PWD/made/.git/hooks ro," /proc/self/mountinfo && echo held
        rm -rf made && echo removed'
    rc=$?
    grep -q '^removed$' "$T/out/o" || { why $rc "rm -rf of a repository failed ($(tr '\n' ' ' <"$T/out/o"))"; return 1; }
    [ ! -e "$W/made" ] || { echo "the removed repository is still on the host"; return 1; }
    grep -q '^held$' "$T/out/o" || { echo "not held on this kernel: $(cline)"; return 1; }
}

t_refusal_line() {
    mkdir -p "$T/ro"
    c run -- sh -c "echo x >'$T/ro/a'"
    rc=$?
    [ $rc != 0 ] || { echo "a write outside the workspace succeeded"; return 1; }
    grep -q "^cordon: the sandbox refused a write to $T/ro/a" "$T/out/e" ||
        { why $rc "no refusal line naming $T/ro/a"; return 1; }
}

t_cred_http() {
    cred_serve || return $?
    cred_check "http://127.0.0.2:$CPORT/plain" /plain
}

t_cred_tls() {
    cred_serve || return $?
    cred_check "https://127.0.0.2:$SPORT/tls" /tls --upstream-ca "$CA"
}

t_review() {
    # Review mode (overlayfs in a user namespace, 5.11): the write waits in the pending layer, the
    # host's copy is unchanged, `cordon review` lists it; before 5.11 one line naming the kernel.
    R=$T/review-ws
    mkdir -p "$R"
    c run --workspace "$R" --review -- sh -c 'echo pending >r.txt && echo wrote'
    rc=$?
    if [ $rc = 125 ]; then
        # the refusal's line, once (before it, a warning said once per machine may come: the
        # home's own overlay line on the same kernels)
        n=$(grep -c '^cordon: review mode' "$T/out/e")
        l=$(grep -m1 '^cordon: review mode' "$T/out/e")
        if [ "$n" = 1 ] && echo "$l" | grep -q 'Linux [0-9]' && ! grep -q wrote "$T/out/o"; then
            echo "$l"
            return 3
        fi
        why $rc "refused, but not with one line naming the kernel that has it"
        return 1
    fi
    [ $rc = 0 ] && grep -q '^wrote$' "$T/out/o" || { why $rc "the write in review mode failed"; return 1; }
    [ ! -e "$R/r.txt" ] || { echo "the write reached the host's workspace"; return 1; }
    c review "$R" || { why $? "cordon review failed"; return 1; }
    grep -q 'r\.txt' "$T/out/o" || { echo "cordon review does not list r.txt: $(head -c 200 "$T/out/o")"; return 1; }
    c discard "$R" || { why $? "cordon discard failed"; return 1; }
}

t_rollback() {
    # A review session's rollback (docs/review.md, "Snapshots and rollback"): the later write is
    # gone, the snapshot's is there, and .cordon is still read-only after it (Linux 6.5 moves the
    # new view beneath the old; before, the new view, covers and all, is stacked on the old in
    # one step). Where review mode is refused (before 5.11): skipped, with the refusal's line.
    R=$T/rollback-ws
    s=smoke-$$-rb
    mkdir -p "$R/.cordon" && echo p >"$R/.cordon/p"
    c session start "$s" --detach --review --workspace "$R"
    rc=$?
    if [ $rc = 125 ]; then
        l=$(grep -m1 '^cordon: review mode' "$T/out/e")
        if echo "$l" | grep -q 'Linux [0-9]'; then
            echo "$l"
            return 2
        fi
    fi
    [ $rc = 0 ] || { why $rc "session start --review failed"; return 1; }
    SESSIONS="$SESSIONS $s"
    c exec "$s" -- "cd '$R' && echo first >first.txt" || { why $? "the first write failed"; return 1; }
    c snapshot "$s" A || { why $? "cordon snapshot failed"; return 1; }
    c exec "$s" -- "cd '$R' && echo later >later.txt" || { why $? "the later write failed"; return 1; }
    c rollback "$s" A || { why $? "cordon rollback failed"; return 1; }
    c exec "$s" -- "cd '$R' && cat first.txt && test ! -e later.txt && echo later-gone"
    rc=$?
    [ $rc = 0 ] && grep -q '^first$' "$T/out/o" && grep -q '^later-gone$' "$T/out/o" ||
        { why $rc "after the rollback: expected first.txt and no later.txt"; return 1; }
    c exec "$s" -- "cd '$R' && echo x >.cordon/x"
    rc=$?
    [ $rc != 0 ] && grep -q 'Read-only file system' "$T/out/e" ||
        { why $rc ".cordon is not read-only after the rollback"; return 1; }
    [ ! -e "$R/first.txt" ] && [ ! -e "$R/.cordon/x" ] || { echo "a write reached the host's workspace"; return 1; }
    c session stop "$s" || { why $? "session stop failed"; return 1; }
    SESSIONS=$(echo "$SESSIONS" | sed "s/ $s//")
    c discard "$R" || { why $? "cordon discard failed"; return 1; }
}

ROWS="run_exit home_cow hidden hidden_in_ws root_protect seccomp landlock loopback_off session approval mcp client_python
client_typescript proxy proxy_deny transparent resolver host_port publish git_guard git_remove refusal_line
cred_http cred_tls review rollback"
landlock_note() { # the Landlock ABI this kernel offers (landlock_create_ruleset's version query)
    abi=$(python3 -c 'import ctypes
libc=ctypes.CDLL(None,use_errno=True)
print(libc.syscall(444,None,0,1))' 2>/dev/null)
    case $abi in
    -1 | "") echo "no Landlock on this kernel: the mounts alone hold it" ;;
    *) echo "Landlock ABI $abi" ;;
    esac
}

for r in ${SMOKE_ONLY:-$ROWS}; do
    t_$r >"$T/out/row" 2>&1 </dev/null
    rc=$?
    out=$(tr '\n' ' ' <"$T/out/row" | cut -c1-700 | sed 's/ *$//')
    note=
    [ $r != landlock ] || note=" ($(landlock_note))"
    case $rc in
    0) echo "ok $r$note" ;;
    2) echo "skip $r: $out" ;;
    3) echo "ok $r (refused with one line: $out)" ;;
    *) echo "not ok $r: $out"; FAILED=1 ;;
    esac
done
exit $FAILED
