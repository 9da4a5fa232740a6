#!/bin/sh
# A short tour of cordon, run by `make run`: real commands in the real sandbox.
# Usage: sh docs/tour.sh path/to/cordon
set -u
CORDON=${1:?usage: tour.sh CORDON_BINARY}
CORDON=$(cd "$(dirname "$CORDON")" && pwd)/$(basename "$CORDON")
WS=$(mktemp -d /var/tmp/cordon-tour.XXXXXX)
trap '"$CORDON" home --reset >/dev/null 2>&1; rm -rf "$WS"' EXIT
cd "$WS" || exit 1

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; printf '  -> exit %s\n' "$?"; }

echo "cordon tour: workspace $WS"
step "$CORDON" run -- sh -c 'echo hello from the sandbox; id -u; hostname'
step "$CORDON" run -- sh -c 'echo note > notes.txt && ls -l notes.txt'
step "$CORDON" run -- touch /etc/cordon-tour
step "$CORDON" run -- cat /etc/shadow
step "$CORDON" run -- sh -c 'ls ~/.ssh; cat ~/.ssh/id_ed25519'
step "$CORDON" run -- ps -e
step "$CORDON" run -- sh -c 'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status'
step "$CORDON" run -- sh -c 'ls /sys/class/net; cat /sys/class/net/lo/operstate'
step "$CORDON" run --network-deny example.com -- curl -sS -m 5 -o /dev/null https://example.com/
step "$CORDON" run -- sh -c 'git config --global user.name "Tour Agent"; git config --global user.name'
step "$CORDON" home
git init -q "$WS" && git -C "$WS" -c user.name=tour -c user.email=tour@example.com commit -q --allow-empty -m start
step "$CORDON" run -- sh -c 'git config user.email agent@example.com && git config user.email; git config core.hooksPath .hooks'
step "$CORDON" run --json -- sh -c 'echo building...; exit 3'
step "$CORDON" run --profile strict -- python3 -c 'import socket; socket.socket(socket.AF_UNIX)'
step "$CORDON" run --profile nosuch -- true
step "$CORDON" policy check
# A session: one sandbox for many commands. Detached, so that on a terminal the start returns
# instead of staying in the foreground as the session's approver; stopped below (and by the
# trap if the tour is interrupted).
trap '"$CORDON" session stop tour-$$ >/dev/null 2>&1; "$CORDON" home --reset >/dev/null 2>&1; rm -rf "$WS"' EXIT
step "$CORDON" session start tour-$$ --detach
step "$CORDON" exec tour-$$ -- 'echo shared > /tmp/note; cd /; FOO=1'
step "$CORDON" exec tour-$$ -- 'cat /tmp/note; pwd; echo "FOO=${FOO:-unset}"'
step "$CORDON" exec tour-$$ -- 'while sleep 1; do date; done' --background
step "$CORDON" exec tour-$$ --timeout 1 -- 'sleep 30'
step "$CORDON" jobs tour-$$
step "$CORDON" session stop tour-$$
echo
echo "tour done: writes outside the workspace, hidden files, a blocked destination, the private"
echo "copy-on-write home, a git setting kept and one that would run code refused, other profiles'"
echo "refusals and a"
echo "session (shared /tmp, no leaking cd or variables, a background job, a timeout) are shown above."
