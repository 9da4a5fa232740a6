#!/bin/bash
# bench/home_beside.sh — the cost of `cordon run` beside a live session of the same workspace
# (it writes a pending upper of its own, home_layers.c) against the same run in a workspace with
# no other sandbox (it holds the home layer), in one run so both see the same machine state.
#
#   bench/home_beside.sh CORDON_BIN    (ROUNDS=10 RUNS=15 by default; JSON_DIR=DIR keeps each
#                                       round's hyperfine JSON; BEFORE=OTHER_BIN adds a row
#                                       "before-beside": that build's run beside the session)
#
# Two workspaces under a private HOME (the layers live there), one with a session started in it
# (`cordon session start NAME --detach`, stopped on exit by a trap). Each round is one hyperfine
# run (-N) of, in this order:
#   alone         `cordon run --workspace A -- true`            A: no other sandbox
#   beside        `cordon run --workspace B -- true`            B: the session's workspace
#   alone-write   the same as alone, writing ~/.cache/w
#   beside-write  the same as beside, writing ~/.cache/w (each merges the last one's pending
#                 upper into its own before mounting)
#   before-beside (BEFORE only) BEFORE's `run --workspace B -- true`
# and the rounds alternate which pair comes first. Prints each round's medians and the ratios
# beside/alone (goal <= 1.10: a run beside a session costs what it costs alone), and the median
# of the rounds' ratios. Reports only; it asserts nothing about time.
set -euo pipefail

die() { printf 'home_beside.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
command -v hyperfine >/dev/null || die "hyperfine is not installed (Debian: apt-get install hyperfine)"
py=/usr/bin/python3
[ -x $py ] || die "$py is not installed"
rounds=${ROUNDS:-10}
runs=${RUNS:-15}
for v in "$rounds" "$runs"; do
    case $v in '' | *[!0-9]* | 0) die "ROUNDS and RUNS must be positive numbers" ;; esac
done

# Everything under /var/tmp (the sandbox replaces /tmp), the runtime directory private.
work=$(mktemp -d /var/tmp/cordon-bench-home.XXXXXX)
export HOME=$work/home XDG_RUNTIME_DIR=$work/run
unset XDG_STATE_HOME XDG_CACHE_HOME
mkdir -p "$HOME" "$work/A" "$work/B"
mkdir -m 700 "$XDG_RUNTIME_DIR"
name=bench-home-$$
cleanup() {
    (cd "$work/B" && timeout 30 "$cordon" session stop "$name" >/dev/null 2>&1) || true
    chmod -R u+rwX "$work" 2>/dev/null || true
    rm -rf -- "$work"
}
trap cleanup EXIT

(cd "$work/B" && "$cordon" session start "$name" --detach) || die "cordon session start failed"
# the session's sandbox holds B's layer from here on
(cd "$work/B" && "$cordon" exec "$name" -- 'mkdir -p ~/.cache && true') >/dev/null ||
    die "cordon exec failed"
for ws in A B; do
    "$cordon" run --workspace "$work/$ws" -- sh -c 'mkdir -p ~/.cache' || die "cordon run failed"
done
out=$("$cordon" run --workspace "$work/B" -- true 2>&1) || die "cordon run beside the session failed"
[ -z "$out" ] || die "a run beside the session printed: $out"

q() { printf '%q' "$1"; }
c_alone="$cordon run --workspace $(q "$work/A") -- true"
c_beside="$cordon run --workspace $(q "$work/B") -- true"
c_alone_w="$cordon run --workspace $(q "$work/A") -- sh -c 'echo w > ~/.cache/w'"
c_beside_w="$cordon run --workspace $(q "$work/B") -- sh -c 'echo w > ~/.cache/w'"

before=()
if [ -n "${BEFORE:-}" ]; then
    [ -x "$BEFORE" ] || die "BEFORE=$BEFORE is not an executable file"
    before=(-n before-beside "$BEFORE run --workspace $(q "$work/B") -- true")
fi

jsons=()
for ((i = 1; i <= rounds; i++)); do
    json=${JSON_DIR:+$JSON_DIR/home_beside.$i.json}
    json=${json:-$work/round.$i.json}
    if ((i % 2)); then
        hyperfine -N -w 3 --runs "$runs" --export-json "$json" --style none \
            -n alone "$c_alone" -n beside "$c_beside" \
            -n alone-write "$c_alone_w" -n beside-write "$c_beside_w" "${before[@]}" >/dev/null
    else
        hyperfine -N -w 3 --runs "$runs" --export-json "$json" --style none \
            -n beside "$c_beside" -n alone "$c_alone" \
            -n beside-write "$c_beside_w" -n alone-write "$c_alone_w" "${before[@]}" >/dev/null
    fi
    jsons+=("$json")
done

$py - "${jsons[@]}" <<'PY'
import json, statistics, sys
ratios = {"beside": [], "beside-write": []}
print("%-6s %10s %10s %10s %10s %8s %8s" % ("round", "alone", "beside", "alone-w", "beside-w",
                                           "ratio", "ratio-w"))
for i, path in enumerate(sys.argv[1:], 1):
    rows = {r["command"]: r["median"] * 1e3 for r in json.load(open(path))["results"]}
    r1, r2 = rows["beside"] / rows["alone"], rows["beside-write"] / rows["alone-write"]
    ratios["beside"].append(r1)
    ratios["beside-write"].append(r2)
    print("%-6d %8.2fms %8.2fms %8.2fms %8.2fms %8.2f %8.2f" % (
        i, rows["alone"], rows["beside"], rows["alone-write"], rows["beside-write"], r1, r2))
    if "before-beside" in rows:
        ratios.setdefault("before-beside", []).append(rows["before-beside"] / rows["alone"])
for k, v in ratios.items():
    m = statistics.median(v)
    print("%-40s %6.2f  (goal <= 1.10: %s)" % ("median ratio " + k + " / alone", m,
                                              "met" if m <= 1.10 else "NOT MET"))
PY
