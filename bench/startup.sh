#!/bin/bash
# bench/startup.sh — start-up cost of one sandboxed command, cordon against bubblewrap, in one
# hyperfine run so both see the same machine state.
#
#   bench/startup.sh CORDON_BIN            (RUNS=30 by default; JSON_OUT=FILE to keep the JSON)
#
# Times, side by side (hyperfine -N --warmup 5 --runs $RUNS):
#   /bin/true, bash -c true                       the floor: fork+exec without a sandbox
#   cordon run -- true, cordon run -- bash -c true (the default profile: the copy-on-write home)
#   cordon run --home readonly -- true             the home as it was before the overlay
#   as root only: cordon run -- true with profile key root_only on and off (profiles in a
#   temporary XDG_CONFIG_HOME, both through env(1)): what hiding root's own files costs
#   bwrap with the same namespaces and a comparable view of the filesystem (read-only /,
#   minimal /dev, own /proc, tmpfs /tmp, writable workspace = cwd), true and bash -c true
# then prints the medians and the ratios cordon/bwrap (goal: <= 0.5), cordon/plain and overlay
# home/read-only home (goal: <= 1.05) and, as root, root_only on/off (goal: <= 1.05); then times
# the two homes (and, as root, root_only on and off) once more in turn, round by round
# (ROUNDS=100), for a ratio the machine's drifting load moves less.
# Runs inside a fresh temporary directory, which is the workspace of every sandboxed command.
# Reports only; it asserts nothing about time (the figures depend on the machine).
set -euo pipefail

die() { printf 'startup.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
command -v hyperfine >/dev/null || die "hyperfine is not installed (Debian: apt-get install hyperfine)"
command -v bwrap >/dev/null || die "bwrap is not installed (Debian: apt-get install bubblewrap)"
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

work=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-startup.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
json=${JSON_OUT:-$work/startup.json}
cd "$work"
# The home layers of the bench's workspace live in the bench's folder, not in the caller's home.
export XDG_STATE_HOME=$work/state

# hyperfine -N splits its command strings like a shell does: quote each word.
q() { local w out=; for w; do out+=" '${w//\'/\'\\\'\'}'"; done; printf '%s' "${out# }"; }

bwrap_args=(bwrap --unshare-user --unshare-pid --unshare-net --unshare-ipc --unshare-uts
    --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp
    --bind "$PWD" "$PWD" --chdir "$PWD")

names=(plain-true plain-bash cordon-true cordon-bash bwrap-true bwrap-bash cordon-rohome)
cmds=(
    "$(q /bin/true)"
    "$(q bash -c true)"
    "$(q "$cordon" run -- true)"
    "$(q "$cordon" run -- bash -c true)"
    "$(q "${bwrap_args[@]}" true)"
    "$(q "${bwrap_args[@]}" bash -c true)"
    "$(q "$cordon" run --home readonly -- true)"
)
# As root, root_only's scan of /etc, /var, /root runs on every start: time it on and off.
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
local order = { "plain-true", "plain-bash", "cordon-true", "cordon-bash", "bwrap-true", "bwrap-bash",
  "cordon-rohome", "cordon-roon", "cordon-rooff" }
print(string.format("%-12s %9s %9s %9s %9s", "command", "median", "mean", "min", "max"))
for _, n in ipairs(order) do
  local r = by[n]
  if r then
    print(string.format("%-12s %9.3f %9.3f %9.3f %9.3f", n, r.median * 1e3, r.mean * 1e3,
      r.min * 1e3, r.max * 1e3))
  end
end
local function ratio(a, b, label, goal)
  local x = by[a].median / by[b].median
  local verdict = ""
  if goal then verdict = x <= goal and "  (goal <= " .. goal .. ": met)" or "  (goal <= " .. goal .. ": NOT met)" end
  print(string.format("%-32s %6.2f%s", label, x, verdict))
end
print()
ratio("cordon-true", "bwrap-true", "cordon/bwrap  true", 0.5)
ratio("cordon-bash", "bwrap-bash", "cordon/bwrap  bash -c true", 0.5)
ratio("cordon-true", "plain-true", "cordon/plain  true")
ratio("cordon-bash", "plain-bash", "cordon/plain  bash -c true")
ratio("cordon-true", "cordon-rohome", "overlay home/read-only home", 1.05)
if by["cordon-roon"] then ratio("cordon-roon", "cordon-rooff", "root_only on/off (root)", 1.05) end
LUA
else
    python3 - "$json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
by = {r["command"]: r for r in doc["results"]}
order = ["plain-true", "plain-bash", "cordon-true", "cordon-bash", "bwrap-true", "bwrap-bash",
         "cordon-rohome", "cordon-roon", "cordon-rooff"]
print("%-12s %9s %9s %9s %9s" % ("command", "median", "mean", "min", "max"))
for n in [n for n in order if n in by]:
    r = by[n]
    print("%-12s %9.3f %9.3f %9.3f %9.3f" % (n, r["median"] * 1e3, r["mean"] * 1e3, r["min"] * 1e3, r["max"] * 1e3))
def ratio(a, b, label, goal=None):
    x = by[a]["median"] / by[b]["median"]
    v = "" if goal is None else "  (goal <= %s: %s)" % (goal, "met" if x <= goal else "NOT met")
    print("%-32s %6.2f%s" % (label, x, v))
print()
ratio("cordon-true", "bwrap-true", "cordon/bwrap  true", 0.5)
ratio("cordon-bash", "bwrap-bash", "cordon/bwrap  bash -c true", 0.5)
ratio("cordon-true", "plain-true", "cordon/plain  true")
ratio("cordon-bash", "plain-bash", "cordon/plain  bash -c true")
ratio("cordon-true", "cordon-rohome", "overlay home/read-only home", 1.05)
if "cordon-roon" in by:
    ratio("cordon-roon", "cordon-rooff", "root_only on/off (root)", 1.05)
PY
fi

# hyperfine times one command after the other, so a change in the machine's load between the
# first and the last moves their ratio: time the two homes once more in turn, round by round.
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
if [ -n "${JSON_OUT:-}" ]; then
    echo "hyperfine JSON: $json"
fi
