#!/bin/bash
# bench/startup.sh — start-up cost of one sandboxed command, cordon against the kernel's floor
# and bubblewrap, in one hyperfine run so all see the same machine state.
#
#   bench/startup.sh CORDON_BIN     (RUNS=30 by default; JSON_OUT=FILE to keep the JSON;
#                                    BEFORE=OTHER_CORDON_BIN times an earlier build beside it;
#                                    BENCH_UID=N, when root: everything runs as uid N)
#
# Times, side by side (hyperfine -N --warmup 5 --runs $RUNS):
#   /bin/true, bash -c true                       fork+exec without a sandbox
#   startup_floor /bin/true                       the floor: only what the kernel makes
#                                                 unavoidable for the same namespaces
#                                                 (bench/startup_floor.c, built here with cc)
#   cordon run -- true, cordon run -- bash -c true (the default profile: the copy-on-write home)
#   cordon run --home readonly -- true             the home as it was before the overlay
#   as root only: cordon run -- true with profile key root_only on and off (profiles in a
#   temporary XDG_CONFIG_HOME, both through env(1)): what hiding root's own files costs. On,
#   the sandbox's ids are shifted (root's files unmapped inside), root's home is walked, and
#   limits.pids is RLIMIT_NPROC; off, uid 0 inside is the host's, which RLIMIT_NPROC spares, so
#   limits.pids takes a cgroup (moving init into it waits for an RCU grace period)
#   the same two with $BEFORE, when it is set
#   bwrap with the same namespaces and a comparable view of the filesystem (read-only /,
#   minimal /dev, own /proc, tmpfs /tmp, writable workspace = cwd), true and bash -c true
# then prints the medians with user and system CPU time (less noisy than wall time on a loaded
# machine), the ratios cordon/floor (goal: <= 1.4), cordon/bwrap, floor/bwrap, cordon/plain
# and overlay home/read-only home (goal: <= 1.05) and, as root, root_only on/off (goal: <= 1.05);
# then times the two homes (and, as root, root_only on and off), and the floor and
# cordon (and BEFORE), once more in turn, round by round (ROUNDS=100), for ratios the
# machine's drifting load moves less.
# Runs inside a fresh temporary directory, which is the workspace of every sandboxed command.
# A root caller's runs do more (the scan of root-only files, root writes, the cgroup): BENCH_UID
# measures what an unprivileged caller pays, with the home in the temporary directory.
# Reports only; it asserts nothing about time (the figures depend on the machine).
set -euo pipefail

die() { printf 'startup.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
before=${BEFORE:-}
if [ -n "$before" ]; then
    case $before in /*) ;; *) before=$PWD/$before ;; esac
    [ -x "$before" ] || die "BEFORE: $before is not an executable file"
fi
if [ -n "${BENCH_UID:-}" ]; then
    case $BENCH_UID in *[!0-9]*) die "BENCH_UID must be a number, not '$BENCH_UID'" ;; esac
    [ "$(id -u)" = 0 ] || die "BENCH_UID needs root (it runs the bench as that uid)"
    command -v setpriv >/dev/null || die "BENCH_UID needs setpriv (util-linux)"
    top=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-uid.XXXXXX")
    trap 'rm -rf -- "$top"' EXIT
    mkdir "$top/home"
    chown "$BENCH_UID:$BENCH_UID" "$top" "$top/home"
    chmod 755 "$top"
    rc=0
    setpriv --reuid="$BENCH_UID" --regid="$BENCH_UID" --clear-groups \
        env BENCH_UID= TMPDIR="$top" HOME="$top/home" XDG_CONFIG_HOME= \
        bash "$0" "$cordon" || rc=$?
    exit "$rc"
fi
command -v hyperfine >/dev/null || die "hyperfine is not installed (Debian: apt-get install hyperfine)"
command -v bwrap >/dev/null || die "bwrap is not installed (Debian: apt-get install bubblewrap)"
command -v cc >/dev/null || die "no C compiler (cc) to build bench/startup_floor.c"
if command -v lua5.4 >/dev/null && lua5.4 -e 'require "cjson"' 2>/dev/null; then
    parser=lua
elif command -v python3 >/dev/null; then
    parser=python
else
    die "need lua5.4 with lua-cjson, or python3, to read hyperfine's JSON"
fi
runs=${RUNS:-30}
case $runs in '' | *[!0-9]*) die "RUNS must be a positive number, not '$runs'" ;; esac
[ "$runs" -gt 0 ] || die "RUNS must be a positive number"
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-startup.XXXXXX")
# overlayfs leaves its work directory mode 0: an unprivileged owner opens it up before removing.
trap 'chmod -R u+rwx -- "$work" 2>/dev/null; rm -rf -- "$work"' EXIT
json=${JSON_OUT:-$work/startup.json}
floor=$work/startup_floor
# Static like cordon, so that both pay the same exec; a libc without a static one: dynamic.
cc -O2 -static -o "$floor" "$here/startup_floor.c" 2>/dev/null ||
    cc -O2 -o "$floor" "$here/startup_floor.c" || die "cannot build bench/startup_floor.c"
mkdir "$work/ws"
cd "$work/ws"
# The home layers of the bench's workspace live in the bench's folder, not in the caller's home.
export XDG_STATE_HOME=$work/state

# hyperfine -N splits its command strings like a shell does: quote each word.
q() { local w out=; for w; do out+=" '${w//\'/\'\\\'\'}'"; done; printf '%s' "${out# }"; }

bwrap_args=(bwrap --unshare-user --unshare-pid --unshare-net --unshare-ipc --unshare-uts
    --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp
    --bind "$PWD" "$PWD" --chdir "$PWD")

names=(plain-true plain-bash floor-true cordon-true cordon-bash bwrap-true bwrap-bash cordon-rohome)
cmds=(
    "$(q /bin/true)"
    "$(q bash -c true)"
    "$(q "$floor" /bin/true)"
    "$(q "$cordon" run -- true)"
    "$(q "$cordon" run -- bash -c true)"
    "$(q "${bwrap_args[@]}" true)"
    "$(q "${bwrap_args[@]}" bash -c true)"
    "$(q "$cordon" run --home readonly -- true)"
)
if [ -n "$before" ]; then
    names+=(before-true before-bash)
    cmds+=("$(q "$before" run -- true)" "$(q "$before" run -- bash -c true)")
fi
# As root, root_only's shift and walk of root's home run on every start: time them on and off.
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$work/config/cordon/profiles"
    for on in true false; do
        printf 'return { extends = "coding", root_only = { hide = %s } }\n' "$on" \
            >"$work/config/cordon/profiles/bench-root-only-$on.lua"
    done
    ro_cmd() { printf '%s' "$(q env "XDG_CONFIG_HOME=$work/config" "$cordon" run --profile "bench-root-only-$1" -- true)"; }
    names+=(cordon-roon cordon-rooff)
    cmds+=("$(ro_cmd true)" "$(ro_cmd false)")
fi

# Each command must work before it is timed, so a broken sandbox is reported as such and
# not as a hyperfine failure in the middle of the run.
for i in "${!names[@]}"; do
    if ! out=$(eval "${cmds[$i]}" 2>&1 </dev/null); then
        die "${names[$i]} does not run: ${cmds[$i]}"$'\n'"$out"
    fi
done

hyper=(hyperfine -N --warmup 5 --runs "$runs" --export-json "$json" --style basic)
for i in "${!names[@]}"; do
    hyper+=(-n "${names[$i]}" "${cmds[$i]}")
done
echo "== hyperfine: ${#names[@]} commands, $runs runs each, workspace $work"
"${hyper[@]}"

echo
echo "== startup (ms), $(uname -r), $(nproc) cores, runs=$runs"
if [ "$parser" = lua ]; then
    lua5.4 - "$json" <<'LUA'
local cjson = require "cjson"
local f = assert(io.open(arg[1]))
local doc = cjson.decode(f:read("a"))
f:close()
local by = {}
for _, r in ipairs(doc.results) do by[r.command] = r end
local order = { "plain-true", "plain-bash", "floor-true", "cordon-true", "cordon-bash", "bwrap-true",
  "bwrap-bash", "cordon-rohome", "before-true", "before-bash", "cordon-roon", "cordon-rooff" }
print(string.format("%-13s %9s %9s %9s %9s %9s %9s", "command", "median", "mean", "min", "max", "user",
  "system"))
for _, n in ipairs(order) do
  local r = by[n]
  if r then
    print(string.format("%-13s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f", n, r.median * 1e3, r.mean * 1e3,
      r.min * 1e3, r.max * 1e3, r.user * 1e3, r.system * 1e3))
  end
end
local function ratio(a, b, label, goal)
  if not (by[a] and by[b]) then return end
  local x = by[a].median / by[b].median
  local cpu = (by[a].user + by[a].system) / (by[b].user + by[b].system)
  local verdict = ""
  if goal then verdict = x <= goal and "  (goal <= " .. goal .. ": met)" or "  (goal <= " .. goal .. ": NOT met)" end
  print(string.format("%-32s %6.2f  cpu %5.2f%s", label, x, cpu, verdict))
end
print()
ratio("cordon-true", "floor-true", "cordon/floor  true", 1.4)
ratio("before-true", "floor-true", "before/floor  true")
ratio("cordon-true", "bwrap-true", "cordon/bwrap  true")
ratio("cordon-bash", "bwrap-bash", "cordon/bwrap  bash -c true")
ratio("floor-true", "bwrap-true", "floor/bwrap   true")
ratio("cordon-true", "plain-true", "cordon/plain  true")
ratio("cordon-bash", "plain-bash", "cordon/plain  bash -c true")
ratio("cordon-true", "before-true", "cordon/before true")
ratio("cordon-true", "cordon-rohome", "overlay home/read-only home", 1.05)
ratio("cordon-roon", "cordon-rooff", "root_only on/off (goal: in turn)")
LUA
else
    python3 - "$json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
by = {r["command"]: r for r in doc["results"]}
order = ["plain-true", "plain-bash", "floor-true", "cordon-true", "cordon-bash", "bwrap-true",
         "bwrap-bash", "cordon-rohome", "before-true", "before-bash", "cordon-roon", "cordon-rooff"]
print("%-13s %9s %9s %9s %9s %9s %9s" % ("command", "median", "mean", "min", "max", "user", "system"))
for n in order:
    if n not in by:
        continue
    r = by[n]
    print("%-13s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f" % (n, r["median"] * 1e3, r["mean"] * 1e3,
          r["min"] * 1e3, r["max"] * 1e3, r["user"] * 1e3, r["system"] * 1e3))
def ratio(a, b, label, goal=None):
    if a not in by or b not in by:
        return
    x = by[a]["median"] / by[b]["median"]
    cpu = (by[a]["user"] + by[a]["system"]) / (by[b]["user"] + by[b]["system"])
    v = "" if goal is None else "  (goal <= %s: %s)" % (goal, "met" if x <= goal else "NOT met")
    print("%-32s %6.2f  cpu %5.2f%s" % (label, x, cpu, v))
print()
ratio("cordon-true", "floor-true", "cordon/floor  true", 1.4)
ratio("before-true", "floor-true", "before/floor  true")
ratio("cordon-true", "bwrap-true", "cordon/bwrap  true")
ratio("cordon-bash", "bwrap-bash", "cordon/bwrap  bash -c true")
ratio("floor-true", "bwrap-true", "floor/bwrap   true")
ratio("cordon-true", "plain-true", "cordon/plain  true")
ratio("cordon-bash", "plain-bash", "cordon/plain  bash -c true")
ratio("cordon-true", "before-true", "cordon/before true")
ratio("cordon-true", "cordon-rohome", "overlay home/read-only home", 1.05)
ratio("cordon-roon", "cordon-rooff", "root_only on/off (goal: in turn)")
PY
fi

# hyperfine times one command after the other, so a change in the machine's load between the
# first and the last moves their ratio: time the two homes once more in turn, round by round.
# (For root_only off it also flatters: back to back, each move of init into its cgroup finds the
# kernel's grace period of the one before just passed, and skips the wait a lone run has.)
rounds=${ROUNDS:-100}
echo
echo "== overlay home against read-only home, in turn, $rounds rounds (ms)"
ov=() ro=()
for ((i = 0; i < rounds; i++)); do
    t0=$EPOCHREALTIME; "$cordon" run -- true </dev/null; t1=$EPOCHREALTIME
    "$cordon" run --home readonly -- true </dev/null; t2=$EPOCHREALTIME
    ov+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
    ro+=("$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mo=$(median "${ov[@]}") mr=$(median "${ro[@]}")
awk -v o="$mo" -v r="$mr" 'BEGIN { x = o / r; printf "overlay %.3f  readonly %.3f  ratio %.3f  (goal <= 1.05: %s)\n", o, r, x, x <= 1.05 ? "met" : "NOT met" }'

if [ "$(id -u)" = 0 ]; then
    echo
    echo "== root_only on against off (root), in turn, $rounds rounds (ms)"
    on=() off=()
    for ((i = 0; i < rounds; i++)); do
        t0=$EPOCHREALTIME; eval "$(ro_cmd true)" </dev/null; t1=$EPOCHREALTIME
        eval "$(ro_cmd false)" </dev/null; t2=$EPOCHREALTIME
        on+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
        off+=("$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
    done
    mo=$(median "${on[@]}") mf=$(median "${off[@]}")
    awk -v o="$mo" -v f="$mf" 'BEGIN { x = o / f; printf "root_only on %.3f  off %.3f  ratio %.3f  (goal <= 1.05: %s)\n", o, f, x, x <= 1.05 ? "met" : "NOT met" }'
fi

# The goal's ratio the same way: the floor and cordon (and $BEFORE) in turn, round by round.
echo
echo "== cordon against the floor${before:+ and BEFORE}, in turn, $rounds rounds (ms)"
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) * 1000 }'; }
fl=() co=() be=()
for ((i = 0; i < rounds; i++)); do
    t0=$EPOCHREALTIME; "$floor" /bin/true </dev/null; t1=$EPOCHREALTIME
    "$cordon" run -- true </dev/null; t2=$EPOCHREALTIME
    fl+=("$(ms "$t0" "$t1")") co+=("$(ms "$t1" "$t2")")
    if [ -n "$before" ]; then
        t2=$EPOCHREALTIME; "$before" run -- true </dev/null; t3=$EPOCHREALTIME
        be+=("$(ms "$t2" "$t3")")
    fi
done
mf=$(median "${fl[@]}") mc=$(median "${co[@]}")
awk -v f="$mf" -v c="$mc" 'BEGIN { x = c / f; printf "floor %.3f  cordon %.3f  cordon/floor %.3f  (goal <= 1.4: %s)\n", f, c, x, x <= 1.4 ? "met" : "NOT met" }'
if [ -n "$before" ]; then
    mb=$(median "${be[@]}")
    awk -v f="$mf" -v c="$mc" -v b="$mb" 'BEGIN { printf "before %.3f  before/floor %.3f  cordon/before %.3f\n", b, b / f, c / b }'
fi
if [ -n "${JSON_OUT:-}" ]; then
    echo "hyperfine JSON: $json"
fi
