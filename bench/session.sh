#!/bin/bash
# bench/session.sh — the cost of one command in a running session, against a plain `bash -c true`
# and a fresh bubblewrap sandbox, in one run so all see the same machine state.
#
#   bench/session.sh CORDON_BIN        (RUNS=300 by default, at least 200; JSON_OUT=FILE keeps
#                                       hyperfine's JSON)
#
# Starts its own session (`cordon session start NAME --detach`, in a private XDG_RUNTIME_DIR and
# a fresh workspace; stopped on exit by a trap), then times:
#   cli-exec     `cordon exec NAME -- true`: the whole CLI round trip (a new client process,
#                connect, POST /v1/exec, the NDJSON stream, exit)          hyperfine -N
#   bash         `bash -c true`                                             hyperfine -N
#   bwrap        bubblewrap with startup.sh's namespaces and filesystem view, `bash -c true`
#                                                                           hyperfine -N
#   api-exec     POST /v1/exec {"command":"true"} on ONE keep-alive connection, read to the
#                exit event (bench/session_client.py), alternating in blocks of 25 with
#   api-baseline os.posix_spawn + waitpid of `bash -c true` in that same Python process
#   cli-alt      `cordon exec NAME -- true` spawned by bench/session_client.py --cli,
#                alternating in blocks of 25 with
#   bash-alt     `bash -c true` spawned by that same process (hyperfine runs all of one
#                command's runs before the next's: on a busy machine cli-exec and bash can
#                see different loads; this pair cannot)
#   py-client    cordon.Session.exec("true") of the Python client (clients/python, one
#                keep-alive connection), alternating one by one with
#   py-raw       bench/session_client.py's raw exec, in that same process
# and prints the medians, the ratios against the goals (cli-exec/bash <= 3, the same for
# cli-alt/bash-alt, api-exec/baseline <= 1.5, py-client/py-raw <= 1.1; and issue 18's:
# cli-alt/bash-alt <= 2, api-exec/baseline <= 1.3; issue 29's: cli-alt/bash-alt <= 1.8,
# api-exec/baseline <= 1.15; the alternating CLI row is the one to trust), how much faster than a
# fresh bwrap sandbox an exec is, and the idle session's memory (the controller and every process
# under it, Pss and Rss from smaps_rollup; goals Pss <= 6 MiB, Rss < 8 MiB), right after start
# and again after the runs.
# Reports only; it asserts nothing about time (the figures depend on the machine).
set -euo pipefail

die() { printf 'session.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
here=$(cd "$(dirname "$0")" && pwd)
client=$here/session_client.py
[ -r "$client" ] || die "$client is missing"
py=/usr/bin/python3
[ -x $py ] || die "$py is not installed"
for p in hyperfine bwrap curl; do
    command -v $p >/dev/null || die "$p is not installed (Debian: apt-get install $p)"
done
runs=${RUNS:-300}
case $runs in '' | *[!0-9]*) die "RUNS must be a positive number, not '$runs'" ;; esac
[ "$runs" -ge 200 ] || die "RUNS must be at least 200 (medians of fewer runs are too noisy here)"

# The workspace under /var/tmp (the sandbox replaces /tmp); the runtime directory private.
work=$(mktemp -d /var/tmp/cordon-bench-session.XXXXXX)
export XDG_RUNTIME_DIR=$work/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
mkdir "$work/ws"
name=bench-$$
sock=$XDG_RUNTIME_DIR/cordon/$name.sock
ctl_pid=
cleanup() {
    (cd "$work/ws" && timeout 30 "$cordon" session stop "$name" >/dev/null 2>&1) || true
    # backstop: the controller, by the pid it reported, if it is still there
    if [ -n "$ctl_pid" ] && [ "$(cat /proc/"$ctl_pid"/comm 2>/dev/null)" = cordon-session ]; then
        sleep 1
        if [ "$(cat /proc/"$ctl_pid"/comm 2>/dev/null)" = cordon-session ]; then kill -9 "$ctl_pid" 2>/dev/null || true; fi
    fi
    rm -rf -- "$work"
}
trap cleanup EXIT
cd "$work/ws"

"$cordon" session start "$name" --detach || die "cordon session start failed"
info=$(curl -sS --max-time 10 --unix-socket "$sock" http://cordon/v1/session) || die "GET /v1/session failed"
ctl_pid=$($py -c 'import json,sys; print(json.loads(sys.argv[1])["pid"])' "$info")

# Memory (KiB) of the idle session: the controller and every process under it (the sandbox's
# init, helper processes, relays), from /proc/PID/smaps_rollup: Rss counts each process's pages
# whole, Pss shares each page among the processes that map it (init is a fork of the
# controller, so most of its pages are the controller's). Prints "RSS PSS PIDS".
session_tree_pids() {
    local p=$1 kid
    printf '%s ' "$p"
    for kid in $(cat /proc/"$p"/task/*/children 2>/dev/null || true); do
        session_tree_pids "$kid"
    done
}
session_mem_kib() {
    local rss=0 pss=0 p r s pids
    pids=$(session_tree_pids "$ctl_pid")
    for p in $pids; do
        read -r r s < <(awk '/^Rss:/ { r = $2 } /^Pss:/ { s = $2 } END { print r + 0, s + 0 }' \
            /proc/"$p"/smaps_rollup 2>/dev/null || echo 0 0)
        rss=$((rss + ${r:-0}))
        pss=$((pss + ${s:-0}))
    done
    printf '%s %s %s\n' "$rss" "$pss" "$pids"
}
sleep 0.5
read -r rss_start pss_start rss_pids_start < <(session_mem_kib)

# hyperfine -N splits its command strings like a shell does: quote each word.
q() { local w out=; for w; do out+=" '${w//\'/\'\\\'\'}'"; done; printf '%s' "${out# }"; }

bwrap_args=(bwrap --unshare-user --unshare-pid --unshare-net --unshare-ipc --unshare-uts
    --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp
    --bind "$PWD" "$PWD" --chdir "$PWD")

names=(cli-exec bash bwrap)
cmds=(
    "$(q "$cordon" exec "$name" -- true)"
    "$(q bash -c true)"
    "$(q "${bwrap_args[@]}" bash -c true)"
)
for i in "${!names[@]}"; do
    if ! out=$(eval "${cmds[$i]}" 2>&1 </dev/null); then
        die "${names[$i]} does not run: ${cmds[$i]}"$'\n'"$out"
    fi
done

json=${JSON_OUT:-$work/session.json}
hyper=(hyperfine -N --warmup 10 --runs "$runs" --export-json "$json" --style basic)
for i in "${!names[@]}"; do
    hyper+=(-n "${names[$i]}" "${cmds[$i]}")
done
echo "== hyperfine: ${#names[@]} commands, $runs runs each, session $name, workspace $work/ws"
"${hyper[@]}"

echo
echo "== API client: $runs execs on one keep-alive connection, alternating in blocks with posix_spawn(bash -c true)"
api_json=$($py "$client" "$sock" "$runs") || die "the API client failed"
echo "$api_json"

echo
echo "== CLI: $runs \`cordon exec $name -- true\`, alternating in blocks with bash -c true, spawned by one process"
cli_json=$($py "$client" --cli "$cordon" "$name" "$runs") || die "the CLI alternation failed"
echo "$cli_json"

echo
echo "== Python client: $runs Session.exec('true') on its keep-alive connection, alternating one by one with the raw API client"
# Both in one process, alternating one by one (ABBA...): both are execs, so the work the
# session still does after an exit event falls on the next exec of either kind alike, and
# the two see the same machine state run by run (blocks of 25 moved the ratio between 0.8
# and 1.14 on a busy machine). Also reports this process's own CPU per exec.
pyclient_json=$(PYTHONPATH=$here/../clients/python/src:$here $py - "$sock" "$name" "$runs" <<'PY'
import json, statistics, sys, time
import session_client
from cordon import Session
sock, name, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
raw = session_client.Conn(sock)
s = Session(name, sock)
def client_true():
    if s.exec("true").exit_code != 0:
        raise RuntimeError("Session.exec('true') did not exit 0")
kinds = (("client", client_true, [], []), ("raw", raw.exec_true, [], []))
for _ in range(10):
    client_true(); raw.exec_true()
for i in range(runs):
    for _, fn, times, cpu in (kinds if i % 2 == 0 else kinds[::-1]):
        c0 = time.process_time(); t0 = time.perf_counter(); fn()
        times.append(time.perf_counter() - t0); cpu.append(time.process_time() - c0)
out = {k: session_client.summary(t) for k, _, t, _ in kinds}
for k, _, _, cpu in kinds:  # this process's own CPU per exec: what the client itself costs
    out[k]["cpu_us"] = sum(cpu) / len(cpu) * 1e6
print(json.dumps(out))
PY
) || die "the Python client failed"
echo "$pyclient_json"

sleep 0.5
read -r rss_end pss_end rss_pids_end < <(session_mem_kib)

echo
echo "== session exec (ms), $(uname -r), $(nproc) cores, runs=$runs"
$py - "$json" "$api_json" "$rss_start" "$rss_end" "$rss_pids_start" "$pyclient_json" "$cli_json" \
    "$pss_start" "$pss_end" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
api = json.loads(sys.argv[2])
rss_start, rss_end, pids = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
pyc = json.loads(sys.argv[6])
cli = json.loads(sys.argv[7])
pss_start, pss_end = int(sys.argv[8]), int(sys.argv[9])
rows = {}
for r in doc["results"]:
    rows[r["command"]] = {k: r[k] * 1e3 for k in ("median", "mean", "min", "max")}
rows["api-exec"] = api["api_exec"]
rows["api-baseline"] = api["spawn_bash"]
rows["py-client"] = pyc["client"]
rows["py-raw"] = pyc["raw"]
rows["cli-alt"] = cli["cli_exec"]
rows["bash-alt"] = cli["bash"]
print("%-14s %9s %9s %9s %9s" % ("command", "median", "mean", "min", "max"))
for n in ("cli-exec", "cli-alt", "api-exec", "py-client", "py-raw", "bash", "bash-alt", "api-baseline",
          "bwrap"):
    r = rows[n]
    print("%-14s %9.3f %9.3f %9.3f %9.3f" % (n, r["median"], r["mean"], r["min"], r["max"]))
def ratio(a, b, label, goal, le):
    x = rows[a]["median"] / rows[b]["median"]
    met = x <= goal if le else x >= goal
    print("%-40s %6.2f  (goal %s %s: %s)" % (label, x, "<=" if le else ">=", goal, "met" if met else "NOT met"))
print()
# Two sets of goals: the earlier issue's (3 and 1.5) and issue 18's (2 and 1.3). The
# alternating CLI row is the one to trust: cli-exec and bash are timed one after the other by
# hyperfine and can see different loads.
ratio("cli-exec", "bash", "cli exec / bash -c true", 3, True)
ratio("cli-alt", "bash-alt", "cli exec / bash -c true (alternating)", 3, True)
ratio("api-exec", "api-baseline", "api exec / bash -c true (same process)", 1.5, True)
print("issue 18:")
ratio("cli-alt", "bash-alt", "cli exec / bash -c true (alternating)", 2, True)
ratio("api-exec", "api-baseline", "api exec / bash -c true (same process)", 1.3, True)
print("issue 29 (item 8):")
ratio("cli-alt", "bash-alt", "cli exec / bash -c true (alternating)", 1.8, True)
ratio("api-exec", "api-baseline", "api exec / bash -c true (same process)", 1.15, True)
print()
ratio("py-client", "py-raw", "python client / raw API client", 1.10, True)
print("%-40s %6.0f us  (raw API client: %.0f us)" % ("python client's own CPU per exec", pyc["client"]["cpu_us"],
      pyc["raw"]["cpu_us"]))
print("%-40s %6.2f" % ("python client / bash -c true", rows["py-client"]["median"] / rows["bash"]["median"]))
# The issue's "5x faster than a fresh bwrap" assumed bwrap at about 8x `bash -c true`: it follows
# from the two goals above where bwrap is that slow, so it is printed, not judged.
for n in ("cli-exec", "api-exec"):
    print("%-40s %6.2f" % ("bwrap / " + n.replace("-", " "), rows["bwrap"]["median"] / rows[n]["median"]))
print("%-40s %6.2f" % ("bwrap / bash -c true", rows["bwrap"]["median"] / rows["bash"]["median"]))
print()
for label, rss, pss in (("after start", rss_start, pss_start), ("after the runs", rss_end, pss_end)):
    print("%-40s Pss %6.2f MiB (goal <= 6 MiB: %s), Rss %6.2f MiB (goal < 8 MiB: %s)"
          % ("idle session, " + label, pss / 1024, "met" if pss / 1024 <= 6 else "NOT met",
             rss / 1024, "met" if rss / 1024 < 8 else "NOT met"))
print("(pids: %s)" % pids.strip())
PY
if [ -n "${JSON_OUT:-}" ]; then
    echo "hyperfine JSON: $json"
fi
