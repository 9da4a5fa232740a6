#!/bin/sh
# session-main.sh NAME [OPTIONS...] — the main process of a pod's `cordon` container: the pod
# lives as long as session NAME does, and its stdout is what the cluster's logging collects.
#   1. `cordon doctor --json`: what this node's kernel offers, one JSON object on one line; when
#      the default profile cannot start here (exit 1) the container exits 1 after it.
#   2. `cordon session start NAME OPTIONS` in the workspace (the working directory); this shell
#      is its owner, so the session ends when the container does.
#   3. the session's audit log (one JSON line per network decision) copied to stdout, until the
#      session's controller exits (`tail --pid`): `cordon session stop NAME`, the session's own
#      end (--idle-timeout, --max-lifetime) or TERM from the kubelet; then the container exits 0.
# Installed in the image by `make image` as /usr/share/cordon/deploy/session-main.sh.
# Uses: cordon, tail (GNU coreutils), sed. XDG_RUNTIME_DIR names the folder shared with the
# agent's container (the socket is $XDG_RUNTIME_DIR/cordon/NAME.sock).
set -u
name=${1:?usage: session-main.sh NAME [OPTIONS...]}
shift
log=${CORDON_AUDIT_LOG:-${XDG_STATE_HOME:-$HOME/.local/state}/cordon/audit.jsonl}
stopped=

cordon doctor --json
case $? in
0) ;;
1) echo "session-main.sh: this node cannot start cordon's default profile (doctor's report above)" >&2; exit 1 ;;
*) echo "session-main.sh: cordon doctor failed" >&2; exit 1 ;;
esac

# The socket's folder ($XDG_RUNTIME_DIR/cordon) is cordon's, mode 0700; the volume above it is
# the kubelet's (root's, with fsGroup), which this uid may not chmod: best effort.
if [ -n "${XDG_RUNTIME_DIR:-}" ]; then
    mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR" 2>/dev/null || true
fi
cordon session start "$name" "$@" || exit 1
pid=$(cordon session status "$name" --json | sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
[ -n "$pid" ] || { echo "session-main.sh: session $name gives no controller pid" >&2; exit 1; }
echo "session-main.sh: session $name is up (controller pid $pid)" >&2

trap 'stopped=1; cordon session stop "$name" >/dev/null 2>&1' TERM INT HUP
tail --pid="$pid" -n +1 -F "$log" 2>/dev/null &
tailpid=$!
# wait returns early when a trapped signal arrives: wait again for tail, which ends with the
# session's controller.
while ! wait "$tailpid"; do
    kill -0 "$tailpid" 2>/dev/null || break
done
echo "session-main.sh: session $name ended${stopped:+ (stopped by a signal)}" >&2
exit 0
