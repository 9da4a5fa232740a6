#!/bin/sh
# A short tour of cordon, run by `make run`: real commands in the real sandbox.
# Usage: sh docs/tour.sh path/to/cordon
# Each step prints its command as a line a person can paste (`$ cordon run -- ...`, every word
# shell-quoted), runs it, and prints its exit status. `cordon` in the steps is the binary given;
# the tour says so once at the top. Bold only on a terminal: no escape codes into a pipe.
set -u
CORDON=${1:?usage: tour.sh CORDON_BINARY}
CORDON=$(cd "$(dirname "$CORDON")" && pwd)/$(basename "$CORDON")
WS=$(mktemp -d /var/tmp/cordon-tour.XXXXXX)
trap 'cordon home --reset >/dev/null 2>&1; rm -rf "$WS"' EXIT
cd "$WS" || exit 1

# The steps' `cordon`: the binary given.
cordon() { "$CORDON" "$@"; }

# One word as the shell reads it back: as is when only safe characters, else in single quotes
# (a quote inside as '\'').
quote() {
    case $1 in
    '' | *[!A-Za-z0-9_@%+=:,./-]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
    *) printf '%s' "$1" ;;
    esac
}

if [ -t 1 ]; then BOLD=$(printf '\033[1m') PLAIN=$(printf '\033[0m'); else BOLD= PLAIN=; fi

step() {
    line='$'
    for w in "$@"; do line="$line $(quote "$w")"; done
    printf '\n%s%s%s\n' "$BOLD" "$line" "$PLAIN"
    "$@"
    printf '  -> exit %s\n' "$?"
}

echo "cordon tour: workspace $WS"
echo "cordon below is $CORDON; to paste the commands: alias cordon='$CORDON'"
step cordon run -- sh -c 'echo hello from the sandbox; id -u; hostname'
step cordon run -- sh -c 'echo note > notes.txt && ls -l notes.txt'
step cordon run -- touch /etc/cordon-tour
step cordon run -- cat /etc/shadow
step cordon run -- sh -c 'ls ~/.ssh; cat ~/.ssh/id_ed25519'
step cordon run -- ps -e
step cordon run -- sh -c 'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status'
step cordon run -- sh -c 'ls /sys/class/net; cat /sys/class/net/lo/operstate'
step cordon run --network-deny example.com -- curl -sS -m 5 -o /dev/null https://example.com/
step cordon run -- sh -c 'git config --global user.name "Tour Agent"; git config --global user.name'
step cordon home
git init -q "$WS" && git -C "$WS" -c user.name=tour -c user.email=tour@example.com commit -q --allow-empty -m start
step cordon run -- sh -c 'git config user.email agent@example.com && git config user.email; git config core.hooksPath .hooks'
# Review mode: the workspace copy-on-write; writes wait for `cordon apply`, what the host would
# run or trust (.envrc) stays pending until applied by name or with --all.
step cordon run --review -- sh -c 'echo draft > plan.md; echo "echo hi" > .envrc; ls plan.md .envrc'
step cordon review
step cordon apply
step cordon discard
# A declared credential: inside, only a placeholder; the proxy puts the value back in requests
# to the credential's host alone.
export TOUR_TOKEN=tour-secret-value-0123456789
step cordon run --credential TOUR_TOKEN=api.example.com -- sh -c 'echo "inside: $TOUR_TOKEN"'
step cordon run --json -- sh -c 'echo building...; exit 3'
step cordon run --profile strict -- python3 -c 'import socket; socket.socket(socket.AF_UNIX)'
step cordon run --profile nosuch -- true
step cordon policy check
# A session: one sandbox for many commands. Detached, so that on a terminal the start returns
# instead of staying in the foreground as the session's approver; stopped below (and by the
# trap if the tour is interrupted).
trap 'cordon session stop tour-$$ >/dev/null 2>&1; cordon home --reset >/dev/null 2>&1; rm -rf "$WS"' EXIT
step cordon session start tour-$$ --detach
step cordon exec tour-$$ -- 'echo shared > /tmp/note; cd /; FOO=1'
step cordon exec tour-$$ -- 'cat /tmp/note; pwd; echo "FOO=${FOO:-unset}"'
step cordon exec tour-$$ -- 'while sleep 1; do date; done' --background
step cordon exec tour-$$ --timeout 1 -- 'sleep 30'
step cordon jobs tour-$$
step cordon session stop tour-$$
echo
echo "tour done: writes outside the workspace, hidden files, a blocked destination, the private"
echo "copy-on-write home, a git setting kept and one that would run code refused, review mode"
echo "(writes held until applied), a credential that stays outside, other profiles' refusals and"
echo "a session (shared /tmp, no leaking cd or variables, a background job, a timeout) are shown above."
