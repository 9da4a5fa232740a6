#!/bin/bash
# bench/scale.sh — how many sessions one machine holds: N sessions started at once and kept, each
# running a command every second, for N in 10, 50 and 100 (bench/scale_run.py does the work).
#
#   bench/scale.sh CORDON_BIN      NS="10 50 100" (each at most 200), DURATION=30 seconds of load
#                                  per N (5 to 600); SMALL=1 for NS="5 10" and DURATION=10
#
# Per N: the start (each `session start --detach`'s time, the wall time until all answered), the
# memory a session costs (PSS of its processes; the drop of MemAvailable per session), and the
# latency of one exec through the API (p50, p99) while all N run one a second, beside the floor
# measured in the same seconds (posix_spawn of `bash -c true` under the same load), and the CPU
# the sessions used per exec. Prints a
# table and the sizing rule it implies; reports only, asserts nothing (the figures depend on
# the machine: bench/README.md has this machine's).
set -euo pipefail

die() { printf 'scale.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${SMALL:-}" ]; then
    ns=${NS:-5 10}
    duration=${DURATION:-10}
else
    ns=${NS:-10 50 100}
    duration=${DURATION:-30}
fi
case $duration in '' | *[!0-9]*) die "DURATION must be a number of seconds, not '$duration'" ;; esac
[ "$duration" -ge 5 ] && [ "$duration" -le 600 ] || die "DURATION must be 5 to 600 seconds"
for n in $ns; do
    case $n in '' | *[!0-9]*) die "NS must be numbers, not '$n'" ;; esac
    [ "$n" -ge 1 ] && [ "$n" -le 200 ] || die "each N must be 1 to 200, not $n"
done
# Sessions hold descriptors: 100 of them need more than a shell's default 1024.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

cores=$(nproc)
mem_gib=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)
echo "scale.sh: $(uname -r), $cores cores, $mem_gib GiB, uid $(id -u), ${duration}s of load per N"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout -k 10 $(( (duration + 240) * $(echo $ns | wc -w) )) \
    /usr/bin/python3 "$here/scale_run.py" "$cordon" "$duration" $ns | tee "$out" | \
    python3 -c '
import json, sys
print("%5s %9s %9s %9s %8s %9s %6s %8s %8s %8s %8s %6s %8s %6s" % ("N", "start_all", "start_p50",
      "start_max", "PSS/MiB", "avail/MiB", "execs", "exec_p50", "exec_p99", "floor50", "floor99", "p50/fl",
      "cpu/exec", "cores"))
for line in sys.stdin:
    r = json.loads(line)
    print("%5d %8.2fs %8.3fs %8.3fs %8.2f %9.2f %6d %6.2fms %6.2fms %6.2fms %6.2fms %6.2f %6.2fms %6.3f" % (
        r["n"], r["start_wall_s"], r["start_p50_s"], r["start_max_s"], r["pss_per_session_mib"],
        r["memavailable_drop_per_session_mib"], r["execs"], r["exec_p50_ms"], r["exec_p99_ms"],
        r["floor_p50_ms"], r["floor_p99_ms"], r.get("exec_p50_over_floor", 0),
        r["session_cpu_ms_per_exec"], r["session_cpu_cores"]))
'
python3 - "$out" "$cores" "$mem_gib" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
cores, mem = int(sys.argv[2]), float(sys.argv[3])
if rows:
    big = max(rows, key=lambda r: r["n"])
    per = max(r["memavailable_drop_per_session_mib"] for r in rows)
    cpu = max(r["session_cpu_ms_per_exec"] for r in rows)
    print(f"scale.sh: the largest N ({big['n']}): exec p99 {big['exec_p99_ms']} ms against the floor's "
          f"{big['floor_p99_ms']} ms; a session costs at most {per} MiB (MemAvailable) and "
          f"{cpu} ms of CPU per exec: at one exec a second, memory alone allows about "
          f"{int(mem * 1024 * 0.8 / max(per, 0.1))} idle sessions in 80% of {mem} GiB and CPU about "
          f"{int(0.8 * 1000 / max(cpu, 0.01))} per core at 80%")
PY
