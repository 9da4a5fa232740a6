#!/bin/bash
# bench/output.sh — refusal detection and the controller's memory when a command prints a lot:
#
#   bench/output.sh CORDON_BIN [BEFORE_BIN]  (RUNS_BIG=5, RUNS_SMALL=20, BIG=1073741824 by default)
#
# Runs `cordon run --json -- sh -c '...'` (pipes, not a pty: stdin is /dev/null) for a command
# printing log lines (128 bytes each, with no refusal-like text in them):
#   log, 1 KiB              yes LINE | head -c 1024; exit 1
#   log, 1 GiB              yes LINE | head -c $BIG; exit 1
#   log + refusal, 1 KiB    yes LINE | head -c 1024; touch /etc/...   (EROFS: a refused write)
#   log + refusal, 1 GiB    yes LINE | head -c $BIG; touch /etc/...
#   direct, 1 GiB           the same as the second, without cordon (the relay's baseline)
# All fail, so every detector may look. The hook gets only the kept lines holding one of the
# policy's markers (lua/HOOKS.md, refusal_markers): none in the first pair, the one `touch:`
# line in the second. Runs are interleaved (one big run, then RUNS_SMALL/RUNS_BIG
# small ones, per round) so both sizes see the same machine. bench/output_run.py runs each
# command and reads the result; what cordon relays on stdout is read and dropped there.
#
# Reports per case the median `detect_ms` of the --json result (the time in refusal
# detection, the Lua hook included), the median wall time, the controller's peak RSS (the
# largest over the runs: VmHWM polled, and GNU time's %M when /usr/bin/time is GNU time) and
# the refusals found; then the issue's goals as met / NOT met: detection for the big output
# within 2x of that for 1 KiB, and the controller's peak RSS under 32 MiB while relaying it.
# Reports only; asserts nothing (the figures depend on the machine).
#
# With BEFORE_BIN (another build, e.g. main's before a change) each round also runs the four
# cordon cases with it, right after CORDON_BIN's, and the table gets their rows ("before: ...")
# and the before/after ratios of detect_ms.
set -euo pipefail

die() { printf 'output.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || [ $# -eq 2 ] || die "usage: $0 CORDON_BIN [BEFORE_BIN]"
cordon=$1 before=${2:-}
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
if [ -n "$before" ]; then
    case $before in /*) ;; *) before=$PWD/$before ;; esac
    [ -x "$before" ] || die "$before is not an executable file"
fi
command -v python3 >/dev/null || die "python3 is needed (bench/output_run.py)"
runner=$(cd "$(dirname "$0")" && pwd)/output_run.py
runs_big=${RUNS_BIG:-5} runs_small=${RUNS_SMALL:-20} big=${BIG:-1073741824}
for v in "$runs_big" "$runs_small" "$big"; do
    case $v in '' | *[!0-9]* | 0) die "RUNS_BIG, RUNS_SMALL and BIG must be positive numbers" ;; esac
done
per_round=$(((runs_small + runs_big - 1) / runs_big))
timer=()
if /usr/bin/time --version 2>&1 | grep -q GNU; then
    timer=(--time /usr/bin/time)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-output.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
cd "$work" # the sandbox's workspace

# 127 characters and a newline, with none of the markers policies/10-refusal.lua looks for
line='2026-11-29T14:03:12.345Z INFO  api worker-3 handled GET /v1/items?page=7 status=200 bytes=5120 in 12 ms user=alice trace=9f3c2a'
[ ${#line} -eq 127 ] || die "the log line must be 127 characters, not ${#line}"
refused=/etc/cordon-bench-output.refused # read-only in the sandbox; never created
gen() { printf "yes '%s' | head -c %s; %s" "$line" "$1" "$2"; }

declare -A cmd=(
    [log-small]=$(gen 1024 'exit 1')
    [log-big]=$(gen "$big" 'exit 1')
    [ref-small]=$(gen 1024 "touch $refused")
    [ref-big]=$(gen "$big" "touch $refused")
)
declare -A want_refusals=([log-small]=0 [log-big]=0 [ref-small]=1 [ref-big]=1 [direct]=-1)
declare -A want_bytes=([log-small]=1024 [log-big]=$big [ref-small]=1024 [ref-big]=$big [direct]=$big)

# one CASE: appends "detect_ms duration_ms wall_ms vmhwm timerss exit refusals bytes" to
# $work/CASE; a CASE "b-X" is X run with BEFORE_BIN
one() {
    local r f bin=$cordon k=$1
    if [ "${k#b-}" != "$k" ]; then bin=$before k=${k#b-}; fi
    if [ "$k" = direct ]; then
        r=$(python3 "$runner" --plain sh -c "${cmd[log-big]}") || die "the direct run failed"
    else
        r=$(python3 "$runner" "${timer[@]}" "$bin" run --json -- sh -c "${cmd[$k]}") ||
            die "$1 did not run: sh -c \"${cmd[$k]}\""
    fi
    read -ra f <<<"$r"
    [ "${f[5]}" -eq 1 ] || die "$1: exit code ${f[5]}, not 1"
    [ "${f[6]}" -eq "${want_refusals[$k]}" ] || die "$1: ${f[6]} refusals reported, not ${want_refusals[$k]}"
    [ "${f[7]}" -eq "${want_bytes[$k]}" ] || die "$1: ${f[7]} bytes relayed, not ${want_bytes[$k]}"
    printf '%s\n' "$r" >>"$work/$1"
}

echo "== $(uname -r), $(nproc) cores; big = $big bytes; $runs_big big and $((per_round * runs_big)) small runs per kind"
one log-small # the first run of all is not counted (caches, the page cache of the binary)
: >"$work/log-small"
if [ -n "$before" ]; then one b-log-small; : >"$work/b-log-small"; fi
for round in $(seq 1 "$runs_big"); do
    for kind in log ref; do
        printf '  round %s/%s: %s, big\n' "$round" "$runs_big" "$kind" >&2
        one "$kind-big"
        [ -z "$before" ] || one "b-$kind-big"
        for _ in $(seq 1 "$per_round"); do
            one "$kind-small"
            [ -z "$before" ] || one "b-$kind-small"
        done
    done
    one direct
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$2" '{ print $c }' "$work/$1"; }
max() { sort -g | tail -n 1; }

kinds=(log-small log-big ref-small ref-big direct)
[ -z "$before" ] || kinds+=(b-log-small b-log-big b-ref-small b-ref-big)
declare -A det wall hwm trss nref
for k in "${kinds[@]}"; do
    det[$k]=$(col "$k" 1 | median)
    wall[$k]=$(col "$k" 3 | median)
    hwm[$k]=$(col "$k" 4 | max)
    trss[$k]=$(col "$k" 5 | max)
    nref[$k]=$(col "$k" 7 | max)
done
human() { awk -v b="$1" 'BEGIN { split("B KiB MiB GiB", u, " "); i = 1
    while (b >= 1024 && b % 1024 == 0 && i < 4) { b /= 1024; i++ }; printf "%d %s", b, u[i] }'; }
bigname=$(human "$big")

echo
[ -z "$before" ] || printf 'after: %s\nbefore: %s\n' "$cordon" "$before"
printf '%-34s %4s %10s %10s %9s %9s %8s\n' case runs detect_ms wall_ms "VmHWM" "time %M" refusals
for k in "${kinds[@]}"; do
    case ${k#b-} in log-*) name="log" ;; ref-*) name="log + refusal" ;; *) name="direct (no cordon)" ;; esac
    case $k in *-small) name+=", 1 KiB" ;; *) name+=", $bigname" ;; esac
    case $k in b-*) name="before: $name" ;; esac
    awk -v n="$name" -v r="$(wc -l <"$work/$k")" -v d="${det[$k]}" -v w="${wall[$k]}" \
        -v h="${hwm[$k]}" -v t="${trss[$k]}" -v f="${nref[$k]}" 'BEGIN {
        if (d < 0) { printf "%-34s %4d %10s %10.1f\n", n, r, "-", w; exit }
        printf "%-34s %4d %10.3f %10.1f %5.2f MiB %s %8d\n", n, r, d, w, h / 1024,
            t < 0 ? "        -" : sprintf("%5.2f MiB", t / 1024), f }'
done
echo
awk -v ls="${det[log-small]}" -v lb="${det[log-big]}" -v rs="${det[ref-small]}" \
    -v rb="${det[ref-big]}" -v h="${hwm[log-big]} ${hwm[ref-big]}" -v t="${trss[log-big]} ${trss[ref-big]}" \
    -v w="${wall[log-big]}" -v wd="${wall[direct]}" -v big="$big" -v bn="$bigname" 'BEGIN {
    r1 = lb / ls; r2 = rb / rs
    printf "detect %s / 1 KiB, log            %6.2f  (goal <= 2: %s)\n", bn, r1, r1 <= 2 ? "met" : "NOT met"
    printf "detect %s / 1 KiB, log + refusal  %6.2f  (goal <= 2: %s)\n", bn, r2, r2 <= 2 ? "met" : "NOT met"
    split(h, a, " "); split(t, b, " ")
    peak = a[1]; if (a[2] > peak) peak = a[2]; if (b[1] > peak) peak = b[1]; if (b[2] > peak) peak = b[2]
    printf "controller peak RSS relaying %s   %5.2f MiB  (goal < 32 MiB: %s)\n", bn, peak / 1024,
        peak < 32 * 1024 ? "met" : "NOT met"
    printf "%s through cordon, median wall time   %.0f MiB/s  (direct: %.0f MiB/s)\n", bn,
        big / 1048576 / (w / 1000), big / 1048576 / (wd / 1000)
}'
if [ -n "$before" ]; then
    for k in log-small log-big ref-small ref-big; do
        awk -v k="$k" -v a="${det[$k]}" -v b="${det[b-$k]}" 'BEGIN {
            printf "detect_ms after / before, %-15s %6.2f  (%.3f / %.3f ms)\n", k, (b > 0 ? a / b : 0), a, b }'
    done
fi
