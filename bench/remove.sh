#!/bin/bash
# bench/remove.sh — what the removal listener (docs/git.md, "Removing a held repository") costs:
# every unlink, unlinkat and rmdir in the sandbox is handed to the controller, which lets most go
# at once (a name no hold has, in a writable directory) and removes a held one on the host.
#
#   bench/remove.sh CORDON_BIN        (BEFORE=OTHER_CORDON_BIN: a build without the listener,
#                                      timed beside it; FILES=20000 RUNS=10 ROUNDS=5 N=5000
#                                      by default)
#
# First, ns per unlink (a file made and removed N times, only the unlink timed; the best of
# ROUNDS runs taken in turn): on the host, inside `cordon run`, inside $BEFORE's.
# Then, side by side in one hyperfine run (-N, a warm-up, RUNS runs; the tree made again before
# each run with --prepare, outside the timing):
#   rm -rf of a tree of FILES files in FILES/100 folders: on the host, inside `cordon run`, and
#   inside $BEFORE's `cordon run`
#   tar extraction of the same tree (which unlinks nothing new): the same three
#   cordon run -- true of both builds: the start-up, to tell it from the work
# then prints the medians and the ratios cordon/BEFORE and (cordon - start-up)/host.
# Needs gcc, hyperfine, tar, jq and bc. Reports only; asserts nothing about time.
set -euo pipefail

die() { printf 'remove.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
before=${BEFORE:-}
if [ -n "$before" ]; then
    case $before in /*) ;; *) before=$PWD/$before ;; esac
    [ -x "$before" ] || die "BEFORE: $before is not an executable file"
fi
for p in gcc hyperfine tar jq bc; do command -v "$p" >/dev/null || die "$p is not installed"; done
files=${FILES:-20000} runs=${RUNS:-10} rounds=${ROUNDS:-5} n=${N:-5000}
case $files$runs$rounds$n in *[!0-9]*) die "FILES and RUNS are numbers" ;; esac

work=$(mktemp -d "${TMPDIR:-/var/tmp}/cordon-bench-remove.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
cd "$work"
export XDG_STATE_HOME=$work/state

cat >unlink.c <<'EOF2'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    double spent = 0;
    for (int i = 0; i < n; i++) {
        close(open("ul_a", O_CREAT | O_WRONLY, 0644));
        double t = now();
        if (unlink("ul_a") < 0)
            return 1;
        spent += now() - t;
    }
    printf("%.0f\n", spent / n);
    return 0;
}
EOF2
gcc -O2 -o unlink unlink.c
best() { # best of $rounds: "$@" prints one number
    local b= v
    for _ in $(seq "$rounds"); do
        v=$("$@")
        if [ -z "$b" ] || [ "$v" -lt "$b" ]; then b=$v; fi
    done
    echo "$b"
}
printf 'ns per unlink: host %d   cordon run %d' "$(best ./unlink "$n")" "$(best "$cordon" run -- ./unlink "$n")"
[ -z "$before" ] || printf '   before %d' "$(best "$before" run -- ./unlink "$n")"
echo

mkdir tree
for d in $(seq 1 $((files / 100))); do
    mkdir "tree/d$d"
    for f in $(seq 1 100); do : >"tree/d$d/f$f"; done
done
tar cf tree.tar tree
rm -rf tree

args=(-N -w 1 -r "$runs" --export-json "$work/out.json")
add() { args+=(-n "$1" --prepare "$2" "$3"); }
add "rm -rf, host" "tar xf tree.tar" "rm -rf tree"
add "rm -rf, cordon" "tar xf tree.tar" "$cordon run -- rm -rf tree"
add "tar x, host" "rm -rf tree" "tar xf tree.tar"
add "tar x, cordon" "rm -rf tree" "$cordon run -- tar xf tree.tar"
add "start-up, cordon" "rm -rf tree" "$cordon run -- true"
if [ -n "$before" ]; then
    add "rm -rf, before" "tar xf tree.tar" "$before run -- rm -rf tree"
    add "tar x, before" "rm -rf tree" "$before run -- tar xf tree.tar"
    add "start-up, before" "rm -rf tree" "$before run -- true"
fi
hyperfine "${args[@]}" >/dev/null
rm -rf tree
med() { jq -r --arg n "$1" '.results[] | select(.command == $n) | .median' out.json; }
printf '%-18s %9s\n' name "median ms"
for n in "rm -rf, host" "rm -rf, cordon" "rm -rf, before" "tar x, host" "tar x, cordon" \
    "tar x, before" "start-up, cordon" "start-up, before"; do
    m=$(med "$n")
    [ -n "$m" ] && printf '%-18s %9.1f\n' "$n" "$(echo "$m * 1000" | bc -l)"
done
ratio() { echo "scale=2; $1 / $2" | bc -l; }
for w in "rm -rf" "tar x"; do
    c=$(med "$w, cordon") s=$(med "start-up, cordon") hst=$(med "$w, host")
    printf '%s: (cordon - start-up) / host = %s' "$w" "$(ratio "($c - $s)" "$hst")"
    if [ -n "$before" ]; then
        b=$(med "$w, before") sb=$(med "start-up, before")
        printf '   cordon / before = %s   (work only: %s)' "$(ratio "$c" "$b")" \
            "$(ratio "($c - $s)" "($b - $sb)")"
    fi
    echo
done
