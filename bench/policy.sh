#!/bin/bash
# bench/policy.sh — the cost of one policy decision, in process, side by side in one run:
#
#   bench/policy.sh CORDON_BIN     (RUNS=5, TARGET_MS=500 by default)
#
#   network, built-in only   `cordon policy net` with the built-in policies/ alone
#   network, three layers    the same with a user policy.lua and a trusted project's
#                            .cordon/policy.lua loaded, each wrapping `next`
#   refusal, built-in only   `cordon policy detect` on a recorded `touch` outside the workspace
#   refusal, three layers    the same with the two extra layers
#   network, 10,000 rules    `cordon policy net` with 5,000 exact-host and 5,000 `*.` suffix
#                            rules (built-in layer), deciding a host matched by a suffix rule
#
# Each case uses `--repeat N` (the decision N times after one warm-up, timed inside the
# process: start-up and policy loading are not counted). N is calibrated so that one run takes
# about TARGET_MS; each case runs RUNS times and the median per-decision time is reported, then
# the ratios and the issue's goals (three layers <= 2x one; a network decision with 10,000 rules
# < 20 us) as met / NOT met. Reports only; asserts nothing. Temp HOME/XDG_CONFIG_HOME and a temp
# project (trusted with `cordon trust`) are built here and removed at the end.
set -euo pipefail

die() { printf 'policy.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
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
(cd "$project" && HOME=$work/home XDG_CONFIG_HOME=$layered_cfg "$cordon" policy explain \
    --input "$work/case.json" 2>/dev/null | grep -q '^3\. ') || die "the three layers did not load"

rules=()
for i in $(seq 1 5000); do rules+=(--allow "h$i.example.com:443" --allow "*.d$i.example.org:443"); done

# run NAME CFG DIR N ARGS...: one run, prints the per-decision microseconds.
run() {
    local cfg=$1 dir=$2 n=$3
    shift 3
    (cd "$dir" && HOME=$work/home XDG_CONFIG_HOME=$cfg "$cordon" policy "$@" --repeat "$n" \
        2>&1 >/dev/null) | sed -n 's/^decisions: [0-9]*, per decision: \([0-9.]*\) us$/\1/p'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure CFG DIR ARGS...: calibrate N, RUNS runs, prints "median N".
measure() {
    local cfg=$1 dir=$2
    shift 2
    local probe n
    probe=$(run "$cfg" "$dir" 200 "$@")
    [ -n "$probe" ] || die "no measurement from: cordon policy $*"
    n=$(awk -v us="$probe" -v ms="$target_ms" 'BEGIN { n = int(ms * 1000 / (us > 0 ? us : 0.01)); print n < 100 ? 100 : n }')
    for _ in $(seq 1 "$runs"); do run "$cfg" "$dir" "$n" "$@"; done | median | tr '\n' ' '
    echo "$n"
}

net=(net --allow example.com:443 --kind connect example.com 443)
det=(detect --input "$work/case.json")
read -r net1 net1_n < <(measure "$plain_cfg" "$plain" "${net[@]}")
read -r net3 net3_n < <(measure "$layered_cfg" "$project" "${net[@]}")
read -r det1 det1_n < <(measure "$plain_cfg" "$plain" "${det[@]}")
read -r det3 det3_n < <(measure "$layered_cfg" "$project" "${det[@]}")
read -r net10k net10k_n < <(measure "$plain_cfg" "$plain" net "${rules[@]}" --kind connect \
    www.d2500.example.org 443)

printf '%-26s %14s %10s\n' "case" "us/decision" "N"
printf '%-26s %14.2f %10s\n' "network, built-in only" "$net1" "$net1_n" \
    "network, three layers" "$net3" "$net3_n" \
    "refusal, built-in only" "$det1" "$det1_n" \
    "refusal, three layers" "$det3" "$det3_n" \
    "network, 10,000 rules" "$net10k" "$net10k_n"
echo
awk -v n1="$net1" -v n3="$net3" -v d1="$det1" -v d3="$det3" -v big="$net10k" 'BEGIN {
    rn = n3 / n1; rd = d3 / d1
    printf "three layers / one layer  network   %5.2f  (goal <= 2x: %s)\n", rn, rn <= 2 ? "met" : "NOT met"
    printf "three layers / one layer  refusal   %5.2f  (goal <= 2x: %s)\n", rd, rd <= 2 ? "met" : "NOT met"
    printf "network decision with 10,000 rules  %.2f us  (goal < 20 us: %s)\n", big, big < 20 ? "met" : "NOT met"
}'
