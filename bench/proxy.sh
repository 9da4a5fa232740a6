#!/bin/bash
# bench/proxy.sh — cordon's egress proxy against direct loopback and tinyproxy, in one run so all
# three see the same machine state and the same origin; and cordon's transparent path
# (network.transparent: a client without the proxy variables) and its DNS stub beside them.
#
#   bench/proxy.sh CORDON_BIN     (RUNS=7, MIB=256, REQUESTS=1000, TUNNELS=1000, CLIENTS=8,
#                                  HANDSHAKES=200, ONLY=substitution or ONLY=tunnel_scan for that
#                                  section alone)
#
# One origin on the host's 127.0.0.1: a small threaded C server compiled here from a heredoc
# (GET /bytes/N answers N bytes, anything else 2 bytes, then closes). Against it, in RUNS rounds:
#   throughput   single-stream download of MIB MiB through a CONNECT tunnel (curl -p), curl's
#                %{speed_download}: direct (no proxy), cordon (curl inside `cordon run
#                --network-allow`, a new run each round), tinyproxy (started here, allow-all)
#   request rate REQUESTS sequential requests, each on a new connection, by a python client:
#                direct, absolute-form GET through the proxy, and CONNECT + GET (a new tunnel each);
#                then REQUESTS tunnels (CONNECT + GET) opened by CLIENTS threads of a C client at
#                once. One sequential client measures its own round trip more than the proxy:
#                on a quiet machine it got ~3,300 tunnels/s through cordon, tinyproxy and a
#                do-nothing C proxy alike. With CLIENTS at once the proxy is the bottleneck:
#                that is the rate a proxy opens new tunnels at, and the issue's goal is judged on it.
#   idle tunnels (once) TUNNELS CONNECT tunnels held open at once by a python asyncio client; the
#                RSS of the cordon controller (the `cordon run` process) and of tinyproxy
#   transparent  the same download, sequential and parallel new connections, made inside cordon
#                straight to a second origin on 127.0.0.2 (the sandbox's 127.0.0.1 is its own),
#                through the transparent path; beside the CONNECT path in the same rounds. The
#                added latency of a new connection is 1/rate - 1/direct rate.
#   DNS          median round trip of 1,000 UDP queries for one name, cached: inside cordon to its
#                stub (127.0.0.53) and on the host to a minimal responder on 127.0.0.1 answering
#                one fixed reply (the floor of any local caching resolver; the host's own resolver
#                is used instead when BENCH_DNS_SERVER names one that answers BENCH_DNS_NAME)
#   tunnel scan  upload and download MB/s of a CONNECT tunnel with a --credential declared (the
#                client's side looked through for its placeholder) and without (spliced)
# then prints the medians, the ratios and the issue's goals as met / NOT met. Each round runs
# every case once, in an order that rotates, and a ratio is the median of the rounds' ratios:
# the machine's load moves a lot between seconds (on a shared 2-core machine tinyproxy's rate
# ranged 600 to 3,300 tunnels/s within a minute), and a round's cases see about the same load.
# The cordon clients run inside the sandbox (seccomp and all); run outside cordon's network
# namespace (--unrestricted-network) the same clients were as fast as on the host.
# Reports only; it asserts nothing (the figures depend on the machine). Needs curl, python3,
# gcc and tinyproxy (Debian: apt-get install tinyproxy).
set -euo pipefail

die() { printf 'proxy.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
for p in curl gcc tinyproxy; do
    command -v $p >/dev/null || die "$p is not installed (Debian: apt-get install $p)"
done
py=/usr/bin/python3
[ -x $py ] || die "$py is not installed"
runs=${RUNS:-7} mib=${MIB:-256} requests=${REQUESTS:-1000} tunnels=${TUNNELS:-1000} clients=${CLIENTS:-8}
for v in "$runs" "$mib" "$requests" "$tunnels" "$clients"; do
    case $v in '' | *[!0-9]*) die "RUNS, MIB, REQUESTS and TUNNELS must be positive numbers" ;; esac
done
bytes=$((mib * 1024 * 1024))

# Under /var/tmp: the sandbox replaces /tmp, and the workspace (cwd) must hold the clients.
work=$(mktemp -d /var/tmp/cordon-bench-proxy.XXXXXX)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf -- "$work"
}
trap cleanup EXIT
cd "$work"
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
export CORDON_AUDIT_LOG=$work/audit.jsonl

free_port() { $py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { # PORT: bounded wait until something listens
    local i
    for i in $(seq 100); do
        (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
        sleep 0.1
    done
    die "nothing listens on 127.0.0.1:$1"
}

# ---- the origin ----
cat >origin.c <<'EOF'
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
static char zeros[1 << 20];
static void *serve(void *arg)
{
    int fd = (int)(long)arg;
    char head[8192];
    size_t n = 0;
    while (n < sizeof head - 1) {
        ssize_t r = read(fd, head + n, sizeof head - 1 - n);
        if (r <= 0) goto out;
        n += (size_t)r;
        head[n] = 0;
        if (strstr(head, "\r\n\r\n")) break;
    }
    unsigned long long len = 2;
    char *p = strstr(head, "/bytes/");
    if (p) len = strtoull(p + 7, NULL, 10);
    char hdr[256];
    int h = snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\nConnection: close\r\n\r\n", len);
    if (write(fd, hdr, (size_t)h) != h) goto out;
    while (len) {
        size_t chunk = len < sizeof zeros ? (size_t)len : sizeof zeros;
        ssize_t w = write(fd, zeros, chunk);
        if (w <= 0) goto out;
        len -= (unsigned long long)w;
    }
out:
    close(fd);
    return NULL;
}
int main(int argc, char **argv)
{
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1])),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (argc > 2) inet_pton(AF_INET, argv[2], &a.sin_addr);
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 4096) < 0) { perror("origin"); return 1; }
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 64 * 1024);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) continue;
        pthread_t t;
        if (pthread_create(&t, &at, serve, (void *)(long)c) != 0) close(c);
    }
}
EOF
gcc -O2 -pthread -o origin origin.c || die "cannot compile the origin"
oport=$(free_port)
./origin "$oport" & pids+=($!)
wait_port "$oport"
# the transparent path's origin: on 127.0.0.2, which inside the sandbox is not its own loopback
./origin "$oport" 127.0.0.2 & pids+=($!)
for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.2/"$oport") 2>/dev/null && break; sleep 0.1; done

# ---- tinyproxy, allow-all, in the foreground of its own process ----
tport=$(free_port)
cat >tinyproxy.conf <<EOF
Port $tport
Listen 127.0.0.1
Timeout 600
MaxClients $((tunnels + 100))
LogFile "$work/tinyproxy.log"
LogLevel Critical
PidFile "$work/tinyproxy.pid"
Allow 127.0.0.1
EOF
tinyproxy -d -c tinyproxy.conf >/dev/null 2>&1 & tpid=$!; pids+=($tpid)
wait_port "$tport"

# ---- clients ----
cat >rate.py <<'EOF'
# rate.py MODE PROXY_PORT ORIGIN_PORT N: N sequential requests, each on a new connection.
# MODE direct | get (absolute-form through the proxy) | connect (a new tunnel, GET inside).
# HOST (optional, direct only): the origin's address (127.0.0.2 for the transparent path).
import os, socket, sys, time
mode, pport, oport, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ohost = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"
target = "%s:%d" % (ohost, oport)
# BENCH_AUTH (optional, get only): sent as "Authorization: Bearer $BENCH_AUTH" (the substitution case)
auth = "Authorization: Bearer %s\r\n" % os.environ["BENCH_AUTH"] if os.environ.get("BENCH_AUTH") else ""
def read_all(s):
    out = b""
    while True:
        b = s.recv(65536)
        if not b:
            return out
        out += b
def one():
    if mode == "direct":
        s = socket.create_connection((ohost, oport))
        s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % target).encode())
    elif mode == "get":
        s = socket.create_connection(("127.0.0.1", pport))
        s.sendall(("GET http://%s/ HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n" % (target, target, auth)).encode())
    else:
        s = socket.create_connection(("127.0.0.1", pport))
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            b = s.recv(4096)
            if not b:
                raise SystemExit("tunnel refused")
            head += b
        if b" 200 " not in head.split(b"\r\n")[0]:
            raise SystemExit("tunnel refused: %r" % head[:60])
        s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % target).encode())
    r = read_all(s)
    s.close()
    if not r.startswith(b"HTTP/1.1 200"):
        raise SystemExit("bad reply: %r" % r[:60])
one()  # warm-up
t = time.perf_counter()
for _ in range(n):
    one()
print("%.0f" % (n / (time.perf_counter() - t)))
EOF
cat >tunnels.c <<'EOF'
#define _GNU_SOURCE
/* tunnels.c PROXY_PORT ORIGIN_PORT N CLIENTS: N CONNECT tunnels (a GET inside each, read to the
 * end), opened by CLIENTS threads at once, each one tunnel after the other; prints tunnels/s.
 * PROXY_PORT 0: no CONNECT, each GET on a new connection straight to $TUNNEL_HOST:ORIGIN_PORT
 * (the transparent path). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
static int pport, oport, per_client;
static const char *ohost = "127.0.0.1";
static volatile int failed;
static int one(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)(pport ? pport : oport)),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (!pport) inet_pton(AF_INET, ohost, &a.sin_addr);
    char buf[4096];
    int ok = 0, n;
    size_t got = 0;
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0) goto out;
    if (!pport) goto get;
    n = snprintf(buf, sizeof buf, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", oport, oport);
    if (write(s, buf, (size_t)n) != n) goto out;
    while (!memmem(buf, got, "\r\n\r\n", 4)) { /* the proxy's reply head, nothing after it */
        ssize_t r = read(s, buf + got, sizeof buf - 1 - got);
        if (r <= 0) goto out;
        got += (size_t)r;
    }
    if (got < 12 || memcmp(buf + 9, "200", 3) != 0) goto out;
get:
    n = snprintf(buf, sizeof buf, "GET / HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n", pport ? "127.0.0.1" : ohost, oport);
    if (write(s, buf, (size_t)n) != n) goto out;
    got = 0;
    for (;;) {
        ssize_t r = read(s, buf + (got < 16 ? got : 16), sizeof buf - 16);
        if (r < 0) goto out;
        if (r == 0) break;
        got += (size_t)r;
    }
    ok = got > 12 && memcmp(buf, "HTTP/1.1 200", 12) == 0;
out:
    if (s >= 0) close(s);
    return ok;
}
static void *client(void *arg)
{
    (void)arg;
    for (int i = 0; i < per_client; i++)
        if (!one()) { failed = 1; break; }
    return NULL;
}
int main(int argc, char **argv)
{
    if (argc != 5) { fprintf(stderr, "usage: tunnels PROXY_PORT ORIGIN_PORT N CLIENTS\n"); return 2; }
    pport = atoi(argv[1]), oport = atoi(argv[2]);
    if (getenv("TUNNEL_HOST")) ohost = getenv("TUNNEL_HOST");
    int n = atoi(argv[3]), clients = atoi(argv[4]);
    if (clients < 1 || clients > 64 || n < clients) { fprintf(stderr, "tunnels: bad N or CLIENTS\n"); return 2; }
    per_client = n / clients;
    if (!one()) { fprintf(stderr, "tunnels: the first tunnel failed\n"); return 1; } /* warm-up */
    pthread_t t[64];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < clients; i++) pthread_create(&t[i], NULL, client, NULL);
    for (int i = 0; i < clients; i++) pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (failed) { fprintf(stderr, "tunnels: a tunnel failed\n"); return 1; }
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%.0f\n", per_client * clients / s);
    return 0;
}
EOF
gcc -O2 -pthread -o tunnels tunnels.c || die "cannot compile the tunnel client"
cat >idle.py <<'EOF'
# idle.py PROXY_PORT ORIGIN_PORT N READY DONE: opens N CONNECT tunnels at once (50 in flight),
# writes READY (the count opened) once all are up, holds them until DONE exists (at most 120 s).
import asyncio, os, sys
pport, oport, n, ready, done = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
async def tunnel(sem, held):
    async with sem:
        r, w = await asyncio.open_connection("127.0.0.1", pport)
        w.write(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (oport, oport))
        head = await asyncio.wait_for(r.readuntil(b"\r\n\r\n"), 30)
        if b" 200 " in head.split(b"\r\n")[0]:
            held.append(w)
async def main():
    sem, held = asyncio.Semaphore(50), []
    res = await asyncio.gather(*(tunnel(sem, held) for _ in range(n)), return_exceptions=True)
    errors = [r for r in res if isinstance(r, BaseException)]
    with open(ready + ".tmp", "w") as f:
        f.write("%d %s\n" % (len(held), repr(errors[0])[:80] if errors else ""))
    os.rename(ready + ".tmp", ready)
    for _ in range(1200):
        if os.path.exists(done):
            break
        await asyncio.sleep(0.1)
    for w in held:
        w.close()
asyncio.run(main())
EOF

# ---- credential substitution (issue 32 item 5): a request through it beside today's proxy ----
# The same client (rate.py get: REQUESTS sequential absolute-form GETs, each on a new connection,
# with "Authorization: Bearer $BENCH_AUTH") in two `cordon run`s per round, in alternating
# order: one with --credential BENCH_AUTH=the origin (inside, BENCH_AUTH is the placeholder, and
# the proxy reads each request and puts the value in, an audit line per use), one without (a
# token of the same length passed inside as it is: today's proxy, no rewriting). The origin is
# the plain HTTP one on 127.0.0.1. ONLY=substitution runs this section alone.
substitution_bench() {
    local value dummy r sub plain
    value=ghp_$(head -c 30 /dev/urandom | od -An -tx1 | tr -d ' \n')
    dummy=ghp_$(printf '%*s' 60 '' | tr ' ' x)
    echo "substitution ..." >&2
    : >sub.txt
    for r in $(seq "$runs"); do
        sub_case() {
            BENCH_AUTH=$value "$cordon" run --credential "BENCH_AUTH=127.0.0.1:$oport" "${allow[@]}" \
                -- $py "$work/rate.py" get 18080 "$oport" "$requests" | tail -1
        }
        plain_case() { in_cordon env BENCH_AUTH="$dummy" $py "$work/rate.py" get 18080 "$oport" "$requests" | tail -1; }
        if [ $((r % 2)) -eq 1 ]; then
            sub=$(sub_case) plain=$(plain_case)
        else
            plain=$(plain_case) sub=$(sub_case)
        fi
        [ -n "$sub" ] && [ -n "$plain" ] || die "substitution: a case gave no figure"
        echo "$sub $plain" >>sub.txt
    done
    grep -q '"kind":"credential"' "$CORDON_AUDIT_LOG" || die "substitution: the proxy put no value in"
    $py - sub.txt <<'PYEOF'
import statistics, sys
rows = [[float(x) for x in line.split()] for line in open(sys.argv[1]) if len(line.split()) == 2]
med = lambda i: statistics.median(r[i] for r in rows)
ratios = [r[0] / r[1] for r in rows]
print()
print("plain HTTP GET with a token, new connection each, %d rounds:" % len(rows))
print("%-34s %14s %14s" % ("", "substitution", "today's proxy"))
print("%-34s %12.0f/s %12.0f/s" % ("requests/s (median)", med(0), med(1)))
print("%-34s %14.1f %14.1f" % ("us per request (median)", 1e6 / med(0), 1e6 / med(1)))
print("%-34s %.2f  [%.2f-%.2f]" % ("substitution/today's (rate)", statistics.median(ratios), min(ratios), max(ratios)))
print("%-8s %s" % ("met" if statistics.median(ratios) >= 0.9 else "NOT met",
                   "a request through substitution within 10% of today's proxy"))
PYEOF
}

# ---- a tunnel with declared credentials (issue 32 item 2) beside one without ----
# With a --credential declared (here for another host, 127.0.0.2), the client's side of a CONNECT
# tunnel is read and looked through for its placeholder instead of spliced (docs/network.md);
# downloads stay spliced. In two `cordon run`s per round, in alternating order, one with the
# credential and one without: a python client sends MIB MiB through a CONNECT tunnel to a sink
# on 127.0.0.1 that reads all and answers "done" (upload MB/s), and curl downloads MIB MiB
# through one from the origin (download MB/s). ONLY=tunnel_scan runs this section alone.
tunnel_scan_bench() {
    local sport r with without
    cat >sink.py <<'PYEOF'
import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
def serve(c):
    while c.recv(1 << 20):
        pass
    c.sendall(b"done")
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PYEOF
    cat >upload.py <<'PYEOF'
# upload.py SINK_PORT MIB: MIB MiB through a CONNECT tunnel of the proxy; prints bytes/s.
import socket, sys, time
port, mib = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", 18080))
s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n" % port)
if b" 200 " not in s.recv(200):
    sys.exit("tunnel refused")
buf = b"x" * (1 << 20)
t = time.monotonic()
for _ in range(mib):
    s.sendall(buf)
s.shutdown(socket.SHUT_WR)
if s.recv(10) != b"done":
    sys.exit("the sink did not answer")
print("%.0f" % (mib * (1 << 20) / (time.monotonic() - t)))
PYEOF
    sport=$(free_port)
    $py sink.py "$sport" & pids+=($!)
    wait_port "$sport"
    echo "tunnel with credentials ..." >&2
    : >scan.txt
    scan_case() { # [CRED]: "UPLOAD DOWNLOAD" bytes/s
        BENCH_TOKEN=bench-token-0123456789abcdef "$cordon" run ${1:+--credential BENCH_TOKEN=127.0.0.2} \
            "${allow[@]}" --network-allow "127.0.0.1:$sport" -- bash -c "
            echo \$($py $work/upload.py $sport $mib) \$(curl -s --noproxy '' -o /dev/null \
                -w '%{speed_download}' --max-time 120 -p -x http://127.0.0.1:18080 $dl_url)" | tail -1
    }
    for r in $(seq "$runs"); do
        if [ $((r % 2)) -eq 1 ]; then
            with=$(scan_case cred) without=$(scan_case)
        else
            without=$(scan_case) with=$(scan_case cred)
        fi
        [ -n "$with" ] && [ -n "$without" ] || die "tunnel with credentials: a case gave no figure"
        echo "$with $without" >>scan.txt
    done
    $py - scan.txt <<'PYEOF'
import statistics, sys
rows = [[float(x) for x in line.split()] for line in open(sys.argv[1]) if len(line.split()) == 4]
med = lambda i: statistics.median(r[i] for r in rows)
print()
print("CONNECT tunnel, a credential declared (looked through) or none (spliced), %d rounds:" % len(rows))
print("%-34s %14s %14s" % ("", "credential", "none"))
print("%-34s %9.0f MB/s %9.0f MB/s" % ("upload (median)", med(0) / 1e6, med(2) / 1e6))
print("%-34s %9.0f MB/s %9.0f MB/s" % ("download (median)", med(1) / 1e6, med(3) / 1e6))
print("%-34s %.2f" % ("credential/none upload", statistics.median(r[0] / r[2] for r in rows)))
print("%-34s %.2f" % ("credential/none download", statistics.median(r[1] / r[3] for r in rows)))
PYEOF
}

curl_dl=(curl -s --noproxy '' -o /dev/null -w '%{speed_download}\n' --max-time 120)
dl_url="http://127.0.0.1:$oport/bytes/$bytes"
allow=(--network-allow "127.0.0.1:$oport")
in_cordon() { "$cordon" run "${allow[@]}" -- "$@"; }
# the transparent path: a client with no proxy variables, straight to the origin on 127.0.0.2
# (a profile of the bench's own turns network.transparent on, whatever coding's default is)
mkdir -p "$work/config/cordon/profiles"
echo 'return { extends = "coding", network = { transparent = true } }' \
    >"$work/config/cordon/profiles/bench-transparent.lua"
allow_t=(--profile bench-transparent --network-allow "127.0.0.2:$oport")
in_cordon_t() { XDG_CONFIG_HOME=$work/config "$cordon" run "${allow_t[@]}" -- env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY -u ALL_PROXY -u all_proxy "$@"; }
dl_url_t="http://127.0.0.2:$oport/bytes/$bytes"

echo "origin 127.0.0.1:$oport, tinyproxy 127.0.0.1:$tport ($(tinyproxy -v 2>&1 | head -1)); $runs x $mib MiB, $requests requests, $tunnels tunnels" >&2

# ---- throughput and request rate: RUNS rounds, each case once per round ----
# One case: prints its figure (bytes/s or requests/s).
one_case() {
    case $1 in
    tp_direct) "${curl_dl[@]}" "$dl_url" ;;
    tp_cordon) in_cordon "${curl_dl[@]}" -p -x http://127.0.0.1:18080 "$dl_url" ;;
    tp_tiny) "${curl_dl[@]}" -p -x "http://127.0.0.1:$tport" "$dl_url" ;;
    tp_transp) in_cordon_t "${curl_dl[@]}" --noproxy '*' "$dl_url_t" ;;
    rq_direct) $py rate.py direct 0 "$oport" "$requests" ;;
    rq_cordon_get) in_cordon $py "$work/rate.py" get 18080 "$oport" "$requests" ;;
    rq_cordon_con) in_cordon $py "$work/rate.py" connect 18080 "$oport" "$requests" ;;
    rq_tiny_get) $py rate.py get "$tport" "$oport" "$requests" ;;
    rq_tiny_con) $py rate.py connect "$tport" "$oport" "$requests" ;;
    rq_cordon_par) in_cordon "$work/tunnels" 18080 "$oport" "$requests" "$clients" ;;
    rq_tiny_par) ./tunnels "$tport" "$oport" "$requests" "$clients" ;;
    rq_transp) in_cordon_t $py "$work/rate.py" direct 0 "$oport" "$requests" 127.0.0.2 ;;
    rq_transp_par) in_cordon_t env TUNNEL_HOST=127.0.0.2 "$work/tunnels" 0 "$oport" "$requests" "$clients" ;;
    esac
}
# rounds CASE...: RUNS lines of figures, one column per case (in the order given); round i
# starts at case i (mod the count), so no case always runs first or after the same one.
rounds() {
    local cases=("$@") n=$# i j
    for i in $(seq "$runs"); do
        local -A fig=()
        for j in $(seq 0 $((n - 1))); do
            local c=${cases[$(((i + j) % n))]}
            fig[$c]=$(one_case "$c" | tail -1)
            [ -n "${fig[$c]}" ] || die "$c gave no figure"
        done
        local line=""
        for c in "${cases[@]}"; do line+="${fig[$c]} "; done
        echo "$line"
    done
}
if [ "${ONLY:-}" = substitution ]; then
    substitution_bench
    exit 0
fi
if [ "${ONLY:-}" = tunnel_scan ]; then
    tunnel_scan_bench
    exit 0
fi
echo "throughput ..." >&2
rounds tp_direct tp_cordon tp_tiny tp_transp >tp.txt
echo "request rate ..." >&2
rounds rq_direct rq_cordon_get rq_cordon_con rq_tiny_get rq_tiny_con rq_cordon_par rq_tiny_par rq_transp \
    rq_transp_par >rq.txt

# ---- DNS: a cached name through the stub, beside a local responder (or the host's resolver) ----
echo "DNS ..." >&2
cat >dnsq.py <<'EOF'
# dnsq.py SERVER NAME N: N sequential UDP A queries; prints the median round trip in microseconds.
import socket, struct, sys, time
server, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def q(qid):
    b = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for l in name.split("."):
        b += bytes([len(l)]) + l.encode()
    return b + b"\0" + struct.pack("!HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.sendto(q(0), (server, 53)); r = s.recv(4096)  # warm-up: the stub's cache
if r[3] & 15:
    raise SystemExit("dnsq: rcode %d for %s" % (r[3] & 15, name))
lat = []
for i in range(n):
    t = time.perf_counter()
    s.sendto(q(i & 0xffff), (server, 53))
    s.recv(4096)
    lat.append(time.perf_counter() - t)
lat.sort()
print("%.1f" % (lat[len(lat) // 2] * 1e6))
EOF
cat >dnsd.py <<'EOF'
# dnsd.py ADDR: answers every query with one A record, 127.0.0.2, at once (a local resolver's floor).
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
while True:
    m, a = s.recvfrom(4096)
    if len(m) < 12:
        continue
    s.sendto(m[:2] + b"\x81\x80" + m[4:6] + b"\x00\x01\x00\x00\x00\x00" + m[12:]
             + b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x1e\x00\x04\x7f\x00\x00\x02", a)
EOF
printf '127.0.0.2 bench.test\n' >hosts.bench
if [ -n "${BENCH_DNS_SERVER:-}" ]; then
    dns_ref=$BENCH_DNS_SERVER dns_name=${BENCH_DNS_NAME:-localhost}
else
    $py dnsd.py 127.0.0.1 & pids+=($!)
    sleep 0.5
    dns_ref=127.0.0.1 dns_name=bench.test
fi
# CORDON_HOSTS_FILE (the resolver's test hook) gives bench.test its address without the network
for i in $(seq "$runs"); do
    ref=$($py dnsq.py "$dns_ref" "$dns_name" 1000)
    stub=$(CORDON_HOSTS_FILE=$work/hosts.bench "$cordon" run --network-allow bench.test:80 \
        --network-allow 127.0.0.2:80 -- $py "$work/dnsq.py" 127.0.0.53 bench.test 1000)
    echo "$ref $stub"
done >dns.txt

# ---- idle tunnels: RSS (KiB) before and with them ----
echo "idle tunnels ..." >&2
hold() { # PID-OF-PROXY COMMAND...: runs the idle client, prints "RSS_BEFORE RSS_HELD OPENED"
    local ppid=$1; shift
    rm -f ready done
    local before
    before=$(ps -o rss= -p "$ppid" | tr -d ' ')
    "$@" & local cpid=$!
    local i
    for i in $(seq 1200); do [ -e ready ] && break; sleep 0.1; done
    local held=0
    if [ -e ready ]; then held=$(cut -d' ' -f1 ready); fi
    local rss
    rss=$(ps -o rss= -p "$ppid" | tr -d ' ')
    touch done
    wait "$cpid" 2>/dev/null || true
    echo "$before $rss $held"
}
# The controller is the `cordon run` process itself: start it in the background, measure it.
"$cordon" run "${allow[@]}" -- bash -c "while [ ! -e '$work/go' ]; do sleep 0.1; done; $py '$work/idle.py' 18080 $oport $tunnels '$work/ready' '$work/done'" &
cpid_run=$!; pids+=($cpid_run)
sleep 1
rss_c0=$(ps -o rss= -p "$cpid_run" | tr -d ' ')
rm -f ready done
touch go
for i in $(seq 1200); do [ -e ready ] && break; sleep 0.1; done
held_c=$( [ -e ready ] && cut -d' ' -f1 ready || echo 0)
rss_c=$(ps -o rss= -p "$cpid_run" | tr -d ' ')
touch done
wait "$cpid_run" 2>/dev/null || true
read -r rss_t0 rss_t held_t < <(hold "$tpid" $py idle.py "$tport" "$oport" "$tunnels" "$work/ready" "$work/done")

# ---- report ----
$py - tp.txt rq.txt dns.txt "$dns_ref" "$rss_c0" "$rss_c" "$held_c" "$rss_t0" "$rss_t" "$held_t" "$tunnels" "$clients" <<'EOF'
import statistics, sys
tp = [[float(x) for x in line.split()] for line in open(sys.argv[1])]
rq = [[float(x) for x in line.split()] for line in open(sys.argv[2])]
dns = [[float(x) for x in line.split()] for line in open(sys.argv[3])]
dns_ref = sys.argv[4]
del sys.argv[3:5]
rc0, rc, hc, rt0, rt, ht, n = [float(x) for x in sys.argv[3:10]]
clients = sys.argv[10]
med = lambda rows, i: statistics.median(row[i] for row in rows)
# a / b for columns a and b: the median of the rounds' ratios
ratio = lambda rows, a, b: statistics.median(row[a] / row[b] if row[b] else float("inf") for row in rows)
tpd, tpc, tpt = med(tp, 0), med(tp, 1), med(tp, 2)
rqd, rqcg, rqcc, rqtg, rqtc, rqcp, rqtp = (med(rq, i) for i in range(7))
mb = lambda v: "%8.0f MB/s" % (v / 1e6)
print("%-28s %14s %14s %14s" % ("", "direct", "cordon", "tinyproxy"))
print("%-28s %14s %14s %14s" % ("CONNECT download (median)", mb(tpd), mb(tpc), mb(tpt)))
span = lambda rows, i, unit: "%.0f-%.0f" % (min(r[i] for r in rows) / unit, max(r[i] for r in rows) / unit)
print("%-28s %14s %14s %14s" % ("  range over %d rounds" % len(tp), *(span(tp, i, 1e6) for i in range(3))))
print("%-28s %14s %14s %14s" % ("GET, new connection", "%.0f req/s" % rqd, "%.0f req/s" % rqcg, "%.0f req/s" % rqtg))
print("%-28s %14s %14s %14s" % ("CONNECT+GET, new tunnel", "-", "%.0f req/s" % rqcc, "%.0f req/s" % rqtc))
print("%-28s %14s %14s %14s" % ("  range over %d rounds" % len(rq), "-", span(rq, 2, 1), span(rq, 4, 1)))
print("%-28s %14s %14s %14s" % ("  the same, %s clients (C)" % clients, "-", "%.0f req/s" % rqcp, "%.0f req/s" % rqtp))
print("%-28s %14s %14s %14s" % ("  range over %d rounds" % len(rq), "-", span(rq, 5, 1), span(rq, 6, 1)))
print("%-28s %14s %14s %14s" % ("RSS idle", "-", "%.1f MiB" % (rc0 / 1024), "%.1f MiB" % (rt0 / 1024)))
print("%-28s %14s %14s %14s" % ("RSS with %d tunnels" % n, "-", "%.1f MiB" % (rc / 1024), "%.1f MiB" % (rt / 1024)))
print("%-28s %14s %14d %14d" % ("tunnels actually open", "-", hc, ht))
print()
print("(ratios: the median of the %d rounds' ratios, their range in brackets)" % len(tp))
def show(text, rows, a, b):
    rs = [row[a] / row[b] if row[b] else float("inf") for row in rows]
    print("%-34s %.2f  [%.2f-%.2f]" % (text, statistics.median(rs), min(rs), max(rs)))
show("cordon/direct throughput", tp, 1, 0)
show("cordon/tinyproxy throughput", tp, 1, 2)
show("cordon/tinyproxy new tunnels/s", rq, 2, 4)
show("  the same, %s clients at once" % clients, rq, 5, 6)
show("cordon/tinyproxy GET, new conn.", rq, 1, 3)
print()
print("transparent path (no proxy variables, origin on 127.0.0.2) beside the CONNECT path:")
print("%-34s %14s %14s" % ("", "CONNECT", "transparent"))
print("%-34s %14s %14s" % ("download (median)", mb(tpc), mb(med(tp, 3))))
rqt, rqtpar = med(rq, 7), med(rq, 8)
print("%-34s %14s %14s" % ("new connections/s, sequential", "%.0f/s" % rqcc, "%.0f/s" % rqt))
print("%-34s %14s %14s" % ("new connections/s, %s clients" % clients, "%.0f/s" % rqcp, "%.0f/s" % rqtpar))
added = lambda rate: "%.3f ms" % (1000.0 / rate - 1000.0 / rqd)
print("%-34s %14s %14s" % ("added latency, new connection", added(rqcc), added(rqt)))
show("transparent/CONNECT throughput", tp, 3, 1)
show("transparent/CONNECT new conn./s", rq, 7, 2)
show("  the same, %s clients at once" % clients, rq, 8, 5)
print()
dref, dstub = med(dns, 0), med(dns, 1)
print("DNS, cached name, median round trip: %s %.0f us, cordon's stub %.0f us: %+.3f ms"
      % ("host resolver" if dns_ref != "127.0.0.1" else "local responder", dref, dstub, (dstub - dref) / 1000))
print()
goal = lambda ok, text: print("%-8s %s" % ("met" if ok else "NOT met", text))
goal(ratio(tp, 1, 0) >= 0.8, "tunnel throughput >= 80% of direct loopback")
goal(ratio(tp, 1, 2) >= 3, "tunnel throughput >= 3x tinyproxy's")
goal(ratio(rq, 5, 6) >= 1.5, "new tunnels/s >= 1.5x tinyproxy's (%s clients at once)" % clients)
goal(hc >= n and rc <= 32 * 1024, "%d idle tunnels within 32 MiB controller RSS" % n)
goal(ratio(tp, 3, 1) >= 0.9 and ratio(rq, 7, 2) >= 0.9 and ratio(rq, 8, 5) >= 0.9,
     "transparent path within 10% of the CONNECT path (throughput, new connections/s)")
goal(dstub - dref <= 200, "DNS answers for a cached name add at most 0.2 ms")
EOF

# ---- TLS termination (issue 32): a credential's host beside a plain tunnel ----
# Two HTTPS origins (openssl s_server -WWW serving one file of MIB MiB) on 127.0.0.2 under a CA
# made here: one a --credential names (the proxy terminates its TLS, verifies it against
# --upstream-ca, re-encrypts), one it does not (a tunnel, TLS end to end). Inside one cordon run
# per round: curl downloads the file from each (MB/s), and a python client opens HANDSHAKES new
# HTTPS connections through the proxy to each in turn, one GET each (handshakes/s: both TLS
# handshakes and the minted certificate's cache, for the terminated one). Needs openssl.
handshakes=${HANDSHAKES:-200}
case $handshakes in '' | *[!0-9]*) die "HANDSHAKES must be a positive number" ;; esac
if command -v openssl >/dev/null; then
    mkdir -p tls && (
        cd tls
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
            -out ca.pem -days 2 -subj /CN=bench-ca
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key \
            -out srv.csr -subj /CN=127.0.0.2
        printf 'subjectAltName=IP:127.0.0.2\n' >ext
        openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem \
            -days 2 -extfile ext
        head -c "$bytes" /dev/zero >big
        chmod 755 . && chmod 644 ./*
    ) 2>/dev/null
    tls_port() {
        local p; p=$(free_port)
        (cd tls && exec openssl s_server -quiet -accept "127.0.0.2:$p" -cert srv.pem -key srv.key \
            -WWW -naccept 1000000) >/dev/null 2>&1 &
        pids+=($!)
        for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.2/"$p") 2>/dev/null && break; sleep 0.1; done
        echo "$p"
    }
    tport_cred=$(tls_port) tport_plain=$(tls_port)
    cat >tls_client.py <<'PYEOF'
import os, ssl, sys, time, urllib.request
port, n, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ctx = ssl.create_default_context(cadata=open(os.environ["SSL_CERT_FILE"]).read() + open(ca).read())
opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx))
t = time.monotonic()
for _ in range(n):
    opener.open("https://127.0.0.2:%s/ca.pem" % port).read()
print("%.1f" % (n / (time.monotonic() - t)))
PYEOF
    : >tls.txt
    for r in $(seq "$runs"); do
        TOKEN=bench-token "$cordon" run --credential "TOKEN=127.0.0.2:$tport_cred" \
            --upstream-ca tls/ca.pem --network-allow "127.0.0.2:$tport_cred" \
            --network-allow "127.0.0.2:$tport_plain" -- bash -c "
            cat \"\$SSL_CERT_FILE\" tls/ca.pem >/tmp/both.pem
            dl() { curl -sS --max-time 300 --cacert /tmp/both.pem \
                -o /dev/null -w '%{speed_download}' https://127.0.0.2:\$1/big; }
            echo \$(dl $tport_cred) \$(dl $tport_plain) \
                \$($py tls_client.py $tport_cred $handshakes tls/ca.pem) \
                \$($py tls_client.py $tport_plain $handshakes tls/ca.pem)" >>tls.txt
    done
    $py - tls.txt <<'PYEOF'
import statistics, sys
rows = [[float(x) for x in line.split()] for line in open(sys.argv[1]) if len(line.split()) == 4]
if not rows:
    sys.exit("TLS: no round completed")
med = lambda i: statistics.median(r[i] for r in rows)
print()
print("TLS to a credential's host (terminated) beside a plain tunnel, %d rounds:" % len(rows))
print("%-34s %14s %14s" % ("", "terminated", "tunnel"))
print("%-34s %9.0f MB/s %9.0f MB/s" % ("download (median)", med(0) / 1e6, med(1) / 1e6))
print("%-34s %12.0f/s %12.0f/s" % ("handshakes + GET, new connection", med(2), med(3)))
print("%-34s %.2f" % ("terminated/tunnel throughput", statistics.median(r[0] / r[1] for r in rows)))
print("%-34s %.2f" % ("terminated/tunnel handshakes/s", statistics.median(r[2] / r[3] for r in rows)))
PYEOF
else
    echo "TLS: openssl is not installed: no TLS termination figures"
fi

substitution_bench
tunnel_scan_bench
