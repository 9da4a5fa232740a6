#!/bin/bash
# bench/policy.sh — the cost of one policy decision, in process, side by side in one run:
#
#   bench/policy.sh CORDON_BIN [BEFORE_BIN]     (RUNS=5, TARGET_MS=500 by default)
#
#   network, built-in only   `cordon policy net` with the built-in policies/ alone
#   network, three layers    the same with a user policy.lua and a trusted project's
#                            .cordon/policy.lua loaded, each wrapping `next`
#   refusal, built-in only   `cordon policy detect` on a recorded `touch` outside the workspace
#   refusal, three layers    the same with the two extra layers
#   network, 10,000 rules    `cordon policy net` with 5,000 exact-host and 5,000 `*.` suffix
#                            rules (built-in layer), deciding a host matched by a suffix rule
#   refusal, cargo chain     `cordon policy detect` on recorded case 77 (cargo's three-line
#                            error chain; spec/fixtures/refusal), built-in layer
#   refusal, a trap          the same on recorded case 33 (a grep of a log full of refusal-like
#                            lines: no refusal), built-in layer
#
# With BEFORE_BIN (another build, e.g. main's before a change) every case is also run with it,
# alternating run by run with CORDON_BIN at the same N, and both medians are printed with their
# ratio (after/before).
#
# Each case uses `--repeat N` (the decision N times after one warm-up, timed inside the
# process: start-up and policy loading are not counted). N is calibrated so that one run takes
# about TARGET_MS; each case runs RUNS times and the median per-decision time is reported, then
# the ratios and the issue's goals (three layers <= 2x one; a network decision with 10,000 rules
# < 20 us) as met / NOT met. Reports only; asserts nothing. Temp HOME/XDG_CONFIG_HOME and a temp
# project (trusted with `cordon trust`) are built here and removed at the end.
set -euo pipefail

die() { printf 'policy.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || [ $# -eq 2 ] || die "usage: $0 CORDON_BIN [BEFORE_BIN]"
cordon=$1 before=${2:-}
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
if [ -n "$before" ]; then
    case $before in /*) ;; *) before=$PWD/$before ;; esac
    [ -x "$before" ] || die "$before is not an executable file"
fi
corpus=$(cd "$(dirname "$0")/.." && pwd)/spec/fixtures/refusal
for c in 77-cargo-install-root-outside 33-trap-grep-log; do
    [ -f "$corpus/$c.json" ] || die "no recorded case $corpus/$c.json"
done
runs=${RUNS:-5} target_ms=${TARGET_MS:-500}
for v in "$runs" "$target_ms"; do
    case $v in '' | *[!0-9]*) die "RUNS and TARGET_MS must be positive numbers" ;; esac
done

work=$(mktemp -d /var/tmp/cordon-bench-policy.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
plain_cfg=$work/plain-config layered_cfg=$work/layered-config
plain=$work/plain project=$work/project
mkdir -p "$plain_cfg" "$layered_cfg/cordon" "$plain" "$project/.cordon" "$work/home"

# One layer that only wraps the one below: the cost of a layer, not of what it decides.
wrapper='return {
    network = function(input, next) return next(input) end,
    refusal = function(input, next) return next(input) end,
}'
printf '%s\n' "$wrapper" >"$layered_cfg/cordon/policy.lua"
printf '%s\n' "$wrapper" >"$project/.cordon/policy.lua"
HOME=$work/home XDG_CONFIG_HOME=$layered_cfg "$cordon" trust "$project" >/dev/null

cat >"$work/case.json" <<'JSON'
{"command": "touch /var/tmp/cordon-corpus/outside/file.txt", "exit_code": 1, "stdout": "",
 "stderr": "touch: cannot touch '/var/tmp/cordon-corpus/outside/file.txt': Read-only file system\n",
 "cwd": "/var/tmp/cordon-corpus/ws", "writable": ["/var/tmp/cordon-corpus/ws", "/tmp"],
 "hidden": ["/root/.ssh", "/root/.aws", "/etc/shadow", "/root"], "network_denied": [],
 "host": {"exists": [], "sockets": []}}
JSON

# The three-layer cases must really see three layers (a project that failed trust would not).
for b in "$cordon" ${before:+"$before"}; do
    (cd "$project" && HOME=$work/home XDG_CONFIG_HOME=$layered_cfg "$b" policy explain \
        --input "$work/case.json" 2>/dev/null | grep -q '^3\. ') || die "the three layers did not load ($b)"
done

rules=()
for i in $(seq 1 5000); do rules+=(--allow "h$i.example.com:443" --allow "*.d$i.example.org:443"); done

# run BIN CFG DIR N ARGS...: one run, prints the per-decision microseconds.
run() {
    local bin=$1 cfg=$2 dir=$3 n=$4
    shift 4
    (cd "$dir" && HOME=$work/home XDG_CONFIG_HOME=$cfg "$bin" policy "$@" --repeat "$n" \
        2>&1 >/dev/null) | sed -n 's/^decisions: [0-9]*, per decision: \([0-9.]*\) us$/\1/p'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure CFG DIR ARGS...: calibrate N, RUNS runs, prints "median N before-median" (before-
# median "-" without BEFORE_BIN). With BEFORE_BIN the two alternate, which one goes first
# changing from run to run, so both see the same moments of the machine.
measure() {
    local cfg=$1 dir=$2
    shift 2
    local probe n i
    probe=$(run "$cordon" "$cfg" "$dir" 200 "$@")
    [ -n "$probe" ] || die "no measurement from: cordon policy $*"
    n=$(awk -v us="$probe" -v ms="$target_ms" 'BEGIN { n = int(ms * 1000 / (us > 0 ? us : 0.01)); print n < 100 ? 100 : n }')
    : >"$work/after" && : >"$work/before"
    for i in $(seq 1 "$runs"); do
        if [ -n "$before" ] && [ $((i % 2)) -eq 0 ]; then run "$before" "$cfg" "$dir" "$n" "$@" >>"$work/before"; fi
        run "$cordon" "$cfg" "$dir" "$n" "$@" >>"$work/after"
        if [ -n "$before" ] && [ $((i % 2)) -eq 1 ]; then run "$before" "$cfg" "$dir" "$n" "$@" >>"$work/before"; fi
    done
    [ -z "$before" ] || [ -s "$work/before" ] || die "no measurement from BEFORE_BIN: cordon policy $*"
    echo "$(median <"$work/after") $n $([ -n "$before" ] && median <"$work/before" || echo -)"
}

net=(net --allow example.com:443 --kind connect example.com 443)
det=(detect --input "$work/case.json")
read -r net1 net1_n net1_b < <(measure "$plain_cfg" "$plain" "${net[@]}")
read -r net3 net3_n net3_b < <(measure "$layered_cfg" "$project" "${net[@]}")
read -r det1 det1_n det1_b < <(measure "$plain_cfg" "$plain" "${det[@]}")
read -r det3 det3_n det3_b < <(measure "$layered_cfg" "$project" "${det[@]}")
read -r net10k net10k_n net10k_b < <(measure "$plain_cfg" "$plain" net "${rules[@]}" --kind connect \
    www.d2500.example.org 443)
read -r chain chain_n chain_b < <(measure "$plain_cfg" "$plain" detect --input "$corpus/77-cargo-install-root-outside.json")
read -r trap trap_n trap_b < <(measure "$plain_cfg" "$plain" detect --input "$corpus/33-trap-grep-log.json")

if [ -n "$before" ]; then
    echo "after: $cordon"
    echo "before: $before"
    printf '%-26s %14s %10s %14s %8s\n' "case" "us/decision" "N" "before" "ratio"
else
    printf '%-26s %14s %10s\n' "case" "us/decision" "N"
fi
row() {
    if [ -n "$before" ]; then
        awk -v n="$1" -v a="$2" -v c="$3" -v b="$4" 'BEGIN { printf "%-26s %14.2f %10s %14.2f %8.2f\n", n, a, c, b, a / b }'
    else
        printf '%-26s %14.2f %10s\n' "$1" "$2" "$3"
    fi
}
row "network, built-in only" "$net1" "$net1_n" "$net1_b"
row "network, three layers" "$net3" "$net3_n" "$net3_b"
row "refusal, built-in only" "$det1" "$det1_n" "$det1_b"
row "refusal, three layers" "$det3" "$det3_n" "$det3_b"
row "network, 10,000 rules" "$net10k" "$net10k_n" "$net10k_b"
row "refusal, cargo chain" "$chain" "$chain_n" "$chain_b"
row "refusal, a trap" "$trap" "$trap_n" "$trap_b"
echo
awk -v n1="$net1" -v n3="$net3" -v d1="$det1" -v d3="$det3" -v big="$net10k" 'BEGIN {
    rn = n3 / n1; rd = d3 / d1
    printf "three layers / one layer  network   %5.2f  (goal <= 2x: %s)\n", rn, rn <= 2 ? "met" : "NOT met"
    printf "three layers / one layer  refusal   %5.2f  (goal <= 2x: %s)\n", rd, rd <= 2 ? "met" : "NOT met"
    printf "network decision with 10,000 rules  %.2f us  (goal < 20 us: %s)\n", big, big < 20 ? "met" : "NOT met"
}'
