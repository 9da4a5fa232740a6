#!/bin/bash
# bench/startup_phases.sh — where the wall time of one `cordon run -- true` goes, phase by phase,
# from a handful of marker system calls traced by `perf trace` (so little is traced that the
# run's own time moves by a few percent, not the factor a full strace costs).
#
#   bench/startup_phases.sh CORDON_BIN [RUN_FLAG...]     (RUNS=21 by default)
#
# Phases, medians over RUNS runs, in ms (each column's own median):
#   to_config     the clone of init to the controller's memfd of the configuration: the profile
#                 resolved (or its cache hit replayed) and the paths checked, init meanwhile
#                 making its id maps and network namespace
#   view          that memfd to init's vfork of the command: the configuration handed over, the
#                 view built (mounts, the home's overlay, hidden paths), the seccomp filter in
#   exec          the vfork to the command's successful execve (its confinement, the PATH search)
#   run           the execve to the command's exit
#   end           the command's exit to the controller's: init's report, the refusal check, exit
#   total         the clone of init to the controller's exit
# Runs in a fresh temporary directory, the workspace. Needs perf (linux-perf) and, for `perf
# trace`, root or a perf_event_paranoid that lets the caller trace. Reports only.
set -euo pipefail

die() { printf 'startup_phases.sh: %s\n' "$*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: $0 CORDON_BIN [RUN_FLAG...]"
cordon=$1
shift
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
command -v perf >/dev/null || die "perf is not installed (Debian: apt-get install linux-perf)"
command -v python3 >/dev/null || die "python3 is not installed"
runs=${RUNS:-21}
case $runs in '' | *[!0-9]*) die "RUNS must be a positive number, not '$runs'" ;; esac
[ "$runs" -gt 0 ] || die "RUNS must be a positive number"

work=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-phases.XXXXXX")
trap 'chmod -R u+rwx -- "$work" 2>/dev/null; rm -rf -- "$work"' EXIT
mkdir "$work/ws"
cd "$work/ws"
export XDG_STATE_HOME=$work/state

"$cordon" run "$@" -- true || die "cordon run -- true failed"
for _ in $(seq 1 "$runs"); do
    perf trace -e clone,memfd_create,vfork,execve,exit_group -f -o "$work/trace.txt" \
        "$cordon" run "$@" -- true || die "perf trace failed (root, or perf_event_paranoid?)"
    # A line whose time is "?" continues a call begun on another line: skipped. The exec that
    # succeeds may be split so; the failed ones of the PATH search end "= -1 ...".
    awk '$1 == "?" { next }
        /clone\(clone_flags: NEWNS/ && !c { c = $1 }
        /memfd_create/ && !m { m = $1 }
        /vfork\(\)/ && !v { v = $1 }
        /execve/ && !/= -1 / { e = $1 } # the last exec begun: the one that succeeds
        /true\/[0-9]+ exit_group/ { x = $1 }
        /exit_group/ { last = $1 }
        END {
            if (!c || !m || !v || !e || !x) exit 1
            printf "%.3f %.3f %.3f %.3f %.3f %.3f\n", m - c, v - m, e - v, x - e, last - x, last - c
        }' "$work/trace.txt" || die "the trace lacks a marker: $(cat "$work/trace.txt")"
done | python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
if not rows:
    sys.exit("startup_phases.sh: no run was traced")
print("%-10s %8s %8s %8s %8s %8s %8s" % ("ms", "to_config", "view", "exec", "run", "end", "total"))
print("%-10s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f" % (("median",) + tuple(statistics.median(c) for c in zip(*rows))))
print("(%d runs, each column its own median)" % len(rows))'
