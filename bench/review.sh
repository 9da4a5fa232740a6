#!/bin/bash
# bench/review.sh — what review mode (`cordon run --review`, docs/review.md) costs a real build
# and test run, against direct mode (`cordon run`) and the floor (the same command without a
# sandbox), side by side in one run so all three see the same machine state.
#
#   bench/review.sh CORDON_BIN     (ROUNDS=5 C_FILES=200 by default; NPM_TREE=DIR: an installed
#                                   npm tree with its package-lock.json, default build-deps/npm,
#                                   which `make deps` installs; ONLY=npm|c|true: one workload)
#
# Three workloads, each a sequence of separate commands (as an agent runs them, so a review
# sandbox's start sees what the last one left pending):
#   npm   `npm ci --offline` of NPM_TREE's packages (about 100 packages, 3,700 files: the MCP SDK
#         and its dependencies), each packed here into a local tarball that the lock file names
#         (file:, with its integrity), so nothing reaches a registry; then `npm test` (a script
#         that reads every installed file and loads the SDK); then `true` in the workspace with
#         the tree installed (direct) or pending (review): the start-up with 3,700 files pending
#   c     `make -j2` of a generated C project (C_FILES .c files and a header), then the program
#   true  `true` in an empty workspace (nothing pending)
# Every round runs each workload in the three modes, in an order that turns with the round, each
# from the same state: the direct and floor outputs removed (node_modules, *.o), the review layer
# discarded (`cordon discard`), none of it timed. Prints per step the median wall time (ms) of
# the rounds, then per workload (its steps summed per round) review/direct (the goal: <= 1.1,
# issue 31) and each mode/floor. Everything lives under /var/tmp (the sandbox replaces /tmp),
# with a private HOME and XDG_STATE_HOME (the home and review layers live there).
# Needs npm and node, python3 (packs the tarballs), make and cc. Reports only; it asserts nothing
# about time (the figures depend on the machine).
set -euo pipefail

die() { printf 'review.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-5} c_files=${C_FILES:-200} only=${ONLY:-}
for v in "$rounds" "$c_files"; do
    case $v in '' | *[!0-9]* | 0) die "ROUNDS and C_FILES must be positive numbers" ;; esac
done
case $only in '' | npm | c | true) ;; *) die "ONLY must be npm, c or true, not '$only'" ;; esac
want() { [ -z "$only" ] || [ "$only" = "$1" ]; }
npm_tree=${NPM_TREE:-$here/../build-deps/npm}
if want npm; then
    for c in npm node python3; do
        command -v $c >/dev/null || die "$c is not installed (make deps)"
    done
    [ -f "$npm_tree/package-lock.json" ] && [ -d "$npm_tree/node_modules" ] ||
        die "NPM_TREE: $npm_tree has no package-lock.json and node_modules (make deps installs it)"
    npm_tree=$(cd "$npm_tree" && pwd)
fi
if want c; then
    for c in make cc; do command -v $c >/dev/null || die "$c is not installed"; done
fi

work=$(mktemp -d /var/tmp/cordon-bench-review.XXXXXX)
# overlayfs leaves its work directory mode 0: open it up before removing.
trap 'chmod -R u+rwx -- "$work" 2>/dev/null; rm -rf -- "$work"' EXIT
export HOME=$work/home XDG_STATE_HOME=$work/state
export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
mkdir -p "$HOME" "$XDG_STATE_HOME"

# ---- the workloads' folders ----------------------------------------------------------------

# npm: the lock file of NPM_TREE, each package's resolved/integrity pointing at a tarball packed
# here from the installed copy (nested node_modules left out: they are packages of their own).
make_npm() {
    local ws=$1
    mkdir -p "$ws"
    python3 - "$npm_tree" "$ws" <<'PY'
import base64, hashlib, json, os, sys, tarfile
src, ws = sys.argv[1], sys.argv[2]
lock = json.load(open(os.path.join(src, "package-lock.json")))
os.makedirs(os.path.join(ws, "pkgs"), exist_ok=True)
for key, e in lock["packages"].items():
    if not key or e.get("link"):
        continue
    d = os.path.join(src, key)
    name = e.get("name") or key.split("node_modules/")[-1]
    rel = "pkgs/%s-%s.tgz" % (name.replace("@", "").replace("/", "-"), e["version"])
    out = os.path.join(ws, rel)
    if not os.path.exists(out):
        with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as t:
            for root, dirs, files in os.walk(d):
                dirs[:] = sorted(x for x in dirs if not (root == d and x == "node_modules"))
                for f in sorted(files):
                    p = os.path.join(root, f)
                    t.add(p, arcname="package/" + os.path.relpath(p, d))
    e["resolved"] = "file:" + rel
    e["integrity"] = "sha512-" + base64.b64encode(hashlib.sha512(open(out, "rb").read()).digest()).decode()
lock["name"] = lock["packages"][""]["name"] = "bench"
json.dump(lock, open(os.path.join(ws, "package-lock.json"), "w"), indent=2)
pj = json.load(open(os.path.join(src, "package.json")))
pj.update(name="bench", scripts={"test": "node test.js"})
json.dump(pj, open(os.path.join(ws, "package.json"), "w"), indent=2)
PY
    cat >"$ws/test.js" <<'JS'
// Reads every installed file, then loads the SDK's client: what a test run touches.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
let files = 0, bytes = 0;
const walk = (d) => {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    const p = join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.isFile()) { files++; bytes += readFileSync(p).length; }
  }
};
walk("node_modules");
const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
if (typeof Client !== "function" || files < 100) process.exit(1);
console.log(`${files} files, ${bytes} bytes`);
JS
}

# c: C_FILES units of a few functions each, a header, a main that calls them all.
make_c() {
    local ws=$1 i
    mkdir -p "$ws"
    {
        echo '#include <stddef.h>'
        for ((i = 0; i < c_files; i++)); do echo "long unit$i(const long *v, size_t n);"; done
    } >"$ws/units.h"
    for ((i = 0; i < c_files; i++)); do
        cat >"$ws/unit$i.c" <<EOF
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "units.h"
struct acc$i { long sum, min, max; char name[32]; };
static int cmp$i(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}
static void fold$i(struct acc$i *a, long v)
{
    a->sum += v * $((i + 1));
    if (v < a->min) a->min = v;
    if (v > a->max) a->max = v;
}
long unit$i(const long *v, size_t n)
{
    struct acc$i a = {0, 1L << 40, -(1L << 40), ""};
    long *c = malloc(n * sizeof *c);
    if (!c) return 0;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp$i);
    for (size_t k = 0; k < n; k++) fold$i(&a, c[k] ^ $i);
    snprintf(a.name, sizeof a.name, "unit%d", $i);
    free(c);
    return a.sum + a.min - a.max + (long)strlen(a.name);
}
EOF
    done
    {
        echo '#include <stdio.h>'
        echo '#include "units.h"'
        echo 'int main(void)'
        echo '{'
        echo '    long v[64], t = 0;'
        echo '    for (int k = 0; k < 64; k++) v[k] = (k * 7919) % 1000;'
        for ((i = 0; i < c_files; i++)); do echo "    t += unit$i(v, 64);"; done
        echo '    printf("%ld\n", t);'
        echo '    return 0;'
        echo '}'
    } >"$ws/main.c"
    printf '%s\n' 'SRCS := $(wildcard *.c)' 'OBJS := $(SRCS:.c=.o)' 'CFLAGS ?= -O2' '' \
        'prog: $(OBJS)' '	$(CC) -o $@ $(OBJS)' '' '%.o: %.c units.h' \
        '	$(CC) $(CFLAGS) -c -o $@ $<' >"$ws/Makefile"
}

# ---- one timed step --------------------------------------------------------------------------

declare -A took # "workload mode step" -> space-separated ms, one per round
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }
# step WORKLOAD MODE STEP WS COMMAND...: run COMMAND in WS the MODE's way, record its wall time.
step() {
    local wl=$1 mode=$2 name=$3 ws=$4 t0 t1 rc=0
    shift 4
    local run=("$@")
    case $mode in
        direct) run=("$cordon" run --workspace "$ws" -- "$@") ;;
        review) run=("$cordon" run --review --workspace "$ws" -- "$@") ;;
    esac
    t0=$EPOCHREALTIME
    (cd "$ws" && exec "${run[@]}") </dev/null >"$work/out" 2>&1 || rc=$? # exec: never a builtin
    t1=$EPOCHREALTIME
    [ "$rc" = 0 ] || die "$wl, $mode: $name failed (exit $rc):"$'\n'"$(tail -20 "$work/out")"
    took["$wl $mode $name"]+="$(ms "$t0" "$t1") "
}
# reset MODE WS WHAT...: the state before a round: review's layer discarded, the rest removed.
reset() {
    local mode=$1 ws=$2
    shift 2
    if [ "$mode" = review ]; then
        "$cordon" discard "$ws" >/dev/null 2>&1 || true
    else
        (cd "$ws" && eval "rm -rf -- $*") # the globs expand in ws
    fi
}

npm_round() {
    local mode=$1 ws=$work/npm-$1
    reset "$mode" "$ws" node_modules
    step npm "$mode" "npm ci" "$ws" npm ci --offline
    step npm "$mode" "npm test" "$ws" npm test
    step npm "$mode" "true, tree pending" "$ws" true
}
c_round() {
    local mode=$1 ws=$work/c-$1
    reset "$mode" "$ws" "./*.o" prog
    step c "$mode" "make -j2" "$ws" make -j2
    step c "$mode" "./prog" "$ws" ./prog
}
true_round() {
    local mode=$1 ws=$work/true-$1
    reset "$mode" "$ws"
    step true "$mode" "true" "$ws" true
}

# Each mode has its own copy of each workload's folder, so no mode sees another's output (a
# review layer belongs to its workspace). The floor's "true, tree pending" is plain true.
modes=(floor direct review)
wls=()
for m in "${modes[@]}"; do
    if want npm; then make_npm "$work/npm-$m"; fi
    if want c; then make_c "$work/c-$m"; fi
    if want true; then mkdir -p "$work/true-$m"; fi
done
want npm && wls+=(npm)
want c && wls+=(c)
want true && wls+=(true)

echo "== review mode against direct mode and the floor: ${wls[*]}, $rounds rounds, $(uname -r)," \
    "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# One warm-up round, untimed, fills the page cache and the home layers.
for m in "${modes[@]}"; do
    for wl in "${wls[@]}"; do "${wl}_round" "$m"; done
done
took=()
for ((r = 0; r < rounds; r++)); do
    for ((k = 0; k < 3; k++)); do
        m=${modes[$(((r + k) % 3))]}
        for wl in "${wls[@]}"; do "${wl}_round" "$m"; done
    done
    printf 'round %d done, load %s\n' "$((r + 1))" "$(cut -d' ' -f1 /proc/loadavg)"
done
echo "(load at the end $(cut -d' ' -f1-3 /proc/loadavg))"

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# per-round sums of a workload's steps in one mode
sums() {
    local wl=$1 mode=$2 s
    local -a acc=()
    for s in "${steps[@]}"; do
        local -a vals
        read -ra vals <<<"${took["$wl $mode $s"]}"
        for i in "${!vals[@]}"; do
            acc[i]=$(awk -v a="${acc[i]:-0}" -v b="${vals[i]}" 'BEGIN { print a + b }')
        done
    done
    printf '%s\n' "${acc[@]}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo
printf '%-8s %-20s %10s %10s %10s %14s %12s\n' workload step floor direct review review/direct direct/floor
for wl in "${wls[@]}"; do
    case $wl in
        npm) steps=("npm ci" "npm test" "true, tree pending") ;;
        c) steps=("make -j2" "./prog") ;;
        true) steps=("true") ;;
    esac
    for s in "${steps[@]}"; do
        f=$(median ${took["$wl floor $s"]}) d=$(median ${took["$wl direct $s"]})
        v=$(median ${took["$wl review $s"]})
        printf '%-8s %-20s %10.1f %10.1f %10.1f %14s %12s\n' "$wl" "$s" "$f" "$d" "$v" \
            "$(ratio "$v" "$d")" "$(ratio "$d" "$f")"
    done
done
echo
echo "whole workload (its steps summed per round; median of the rounds, ms):"
for wl in "${wls[@]}"; do
    case $wl in
        npm) steps=("npm ci" "npm test") ;;
        c) steps=("make -j2" "./prog") ;;
        true) steps=("true") ;;
    esac
    # shellcheck disable=SC2046 # sums prints one number a line: each is one word
    f=$(median $(sums "$wl" floor)) d=$(median $(sums "$wl" direct)) v=$(median $(sums "$wl" review))
    x=$(ratio "$v" "$d")
    verdict=$(awk -v x="$x" 'BEGIN { print x <= 1.1 ? "met" : "NOT met" }')
    printf '%-5s %-22s floor %9.1f  direct %9.1f  review %9.1f  review/direct %s (goal <= 1.1: %s)  direct/floor %s  review/floor %s\n' \
        "$wl" "(${steps[*]})" "$f" "$d" "$v" "$x" "$verdict" "$(ratio "$d" "$f")" "$(ratio "$v" "$f")"
done
