#!/bin/bash
# bench/review_snapshot.sh — what `cordon snapshot` costs (issue 31's goal: a snapshot of a
# 10,000-file workspace with 100 changed files in under 50 ms). A review session of a workspace
# of N files (10,000) changes C of them (100); each round takes one snapshot and drops it.
#
#   bench/review_snapshot.sh CORDON_BIN      (ROUNDS=9 N=10000 C=100 by default)
#
# Prints the median of ROUNDS runs of: the session's own time for the copy and its count
# (POST /v1/snapshots' "ms", review_layer_copy then the count of pending changes), the whole
# `cordon snapshot` command as the person waits for it, and beside them the floors: `cp -a` of
# the same upper folder, and `cordon session list` (a CLI round trip that does nothing). Needs
# curl. Reports only; asserts nothing about time.
set -euo pipefail

die() { printf 'review_snapshot.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
command -v curl >/dev/null || die "curl is not installed"
rounds=${ROUNDS:-9} n=${N:-10000} c=${C:-100}

work=$(mktemp -d /var/tmp/cordon-bench-snapshot.XXXXXX)
name=snapbench$$
cleanup() {
    "$cordon" session stop "$name" >/dev/null 2>&1 || true
    rm -rf -- "$work"
}
trap cleanup EXIT
export XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run
mkdir -p "$work/ws" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
cd "$work/ws"
# N files in 100 folders, as a source tree has them
for d in $(seq 1 100); do
    mkdir "d$d"
    for f in $(seq 1 $((n / 100))); do printf 'file %d/%d\n' "$d" "$f" >"d$d/f$f.txt"; done
done
"$cordon" session start "$name" --review --detach >/dev/null
"$cordon" exec "$name" -- "for i in \$(seq 1 $c); do echo changed >> d\$(( (i % 100) + 1 ))/f\$i.txt; done" >/dev/null
sock=$XDG_RUNTIME_DIR/cordon/$name.sock
upper=$(ls -d "$XDG_STATE_HOME"/cordon/reviews/*/upper)

now_ms() { date +%s%N | awk '{ printf "%.3f", $1 / 1e6 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

copy_ms=() cli_ms=() cp_ms=() floor_ms=() entries=0
for r in $(seq 1 "$rounds"); do
    body=$(curl -sS --unix-socket "$sock" -X POST -H 'Content-Type: application/json' \
        --data "{\"label\":\"b$r\"}" http://cordon/v1/snapshots)
    copy_ms+=("$(printf '%s' "$body" | sed -n 's/.*"ms":\([0-9.]*\).*/\1/p')")
    entries=$(printf '%s' "$body" | sed -n 's/.*"entries":\([0-9]*\).*/\1/p')
    "$cordon" snapshot "$name" --drop "b$r" >/dev/null
    t0=$(now_ms)
    "$cordon" snapshot "$name" "c$r" >/dev/null 2>&1
    t1=$(now_ms)
    cli_ms+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
    "$cordon" snapshot "$name" --drop "c$r" >/dev/null
    t0=$(now_ms)
    cp -a "$upper" "$work/cp$r"
    t1=$(now_ms)
    cp_ms+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
    rm -rf -- "$work/cp$r"
    t0=$(now_ms)
    "$cordon" session list >/dev/null
    t1=$(now_ms)
    floor_ms+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
done

printf 'workspace: %d files, %d changed; the snapshot holds %s entries; median of %d runs\n' \
    "$n" "$c" "$entries" "$rounds"
printf '  the session'"'"'s copy and count (POST /v1/snapshots "ms")  %8s ms\n' \
    "$(printf '%s\n' "${copy_ms[@]}" | median)"
printf '  cordon snapshot NAME LABEL (the whole command)        %8s ms\n' \
    "$(printf '%s\n' "${cli_ms[@]}" | median)"
printf '  floor: cp -a of the same upper                        %8s ms\n' \
    "$(printf '%s\n' "${cp_ms[@]}" | median)"
printf '  floor: cordon session list (a CLI round trip)         %8s ms\n' \
    "$(printf '%s\n' "${floor_ms[@]}" | median)"
