#!/bin/sh
# matrix.sh — the smoke suite on Debian's kernels under qemu and on this machine's kernel.
#
# Usage: matrix.sh BUILD_DIR [host|bullseye|bookworm|trixie]...   (default: all four)
# For each kernel: the suite (smoke.sh) as root and as an unprivileged user (the guest's
# "kmx", uid 1000, with a home; on this machine uid 65534 via setpriv), then one table, rows
# by {root, user}, and the lines of the rows that are not ok. Exits 1 if any row of any
# kernel is not ok (or a kernel did not boot), 0 otherwise. Every guest boot is bounded by
# boot.sh's timeout (CORDON_KERNEL_TIMEOUT, here 600 s unless set).
# Owns: a staging directory under /var/tmp (removed at the end).
# Uses: boot.sh, smoke.sh, pki.sh (openssl), cmake --install, setpriv. Must run as root. SMOKE_ONLY and
# SMOKE_FLAGS (see smoke.sh) are passed to every run of the suite, the guests' too.
# Never: counts an unfinished pass as green; changes anything in BUILD_DIR but the
#   install_manifest.txt cmake --install writes there.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: matrix.sh BUILD_DIR [host|bullseye|bookworm|trixie]..." >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
[ $# -gt 0 ] || set -- host bullseye bookworm trixie
[ "$(id -u)" = 0 ] || { echo "matrix.sh: run as root (qemu's images, the host's root and user rows)" >&2; exit 1; }
export CORDON_KERNEL_TIMEOUT=${CORDON_KERNEL_TIMEOUT:-600}

stage=$(mktemp -d /var/tmp/cordon-kmx.XXXXXX)
trap 'rm -rf "$stage"' EXIT INT TERM
# What the guest gets besides the install: the suite and the clients, under /kmx.
mkdir -p "$stage/add/kmx/clients/python" "$stage/add/kmx/clients/typescript"
cp "$here/smoke.sh" "$here/pki.sh" "$stage/add/kmx/"
# the TLS row's certificates, made here: the guests have no openssl
sh "$here/pki.sh" "$stage/add/kmx/pki"
cp -R "$src/clients/python/src" "$stage/add/kmx/clients/python/"
cp "$src/clients/typescript/index.js" "$src/clients/typescript/package.json" "$stage/add/kmx/clients/typescript/"
chmod -R a+rX "$stage"

# The guest's command: the suite as root and as kmx in its home, side by side (two vCPUs;
# each pass has its own scratch directory, ports and session names). Each line comes out as
# it is printed, marked "root| " or "user| ", so a guest cut short still shows how far it got.
# SMOKE_ONLY and SMOKE_FLAGS (smoke.sh) pass through.
guest="export SMOKE_ONLY='${SMOKE_ONLY:-}' SMOKE_FLAGS='${SMOKE_FLAGS:-}'"'
{ sh /kmx/smoke.sh 2>&1; echo "end"; } | sed -u "s/^/root| /" &
setpriv --reuid=1000 --regid=1000 --init-groups env HOME=/home/kmx USER=kmx LOGNAME=kmx \
    sh -c "cd /home/kmx && sh /kmx/smoke.sh 2>&1; echo end" | sed -u "s/^/user| /" &
wait'

table() { # table TITLE FILE: rows x {root, user} from lines "root| ROW" and "user| ROW"
    awk -v title="$1" '
        /^(root|user)\| (ok|not ok|skip) / {
            who = substr($0, 1, 4); line = substr($0, 7); split(line, w, " ")
            st = w[1]; name = w[2]
            if (st == "not") { st = "NOT OK"; name = w[3] }
            sub(/:$/, "", name)
            if (st == "ok" && line ~ /\(refused with one line/) {
                st = "ok (refused)"
                said = line; sub(/^ok [^ ]* \(refused with one line: /, "", said); sub(/\)$/, "", said)
                if (!(said in told)) { told[said] = 1; refused[++nr] = name ": " said }
            }
            if (st == "ok" && match(line, /Landlock ABI [0-9]+/)) st = "ok (ABI " substr(line, RSTART + 13, RLENGTH - 13) ")"
            if (st == "ok" && line ~ /no Landlock on this kernel/) st = "ok (none)"
            if (!(name in seen)) { seen[name] = 1; order[++n] = name }
            cell[name, who] = st
            if (st == "NOT OK") bad[++nb] = who ": " line
        }
        /^(root|user)\| end$/ { ended[substr($0, 1, 4)] = 1 }
        END {
            printf "\n== %s\n%-20s %-14s %-14s\n", title, "row", "root", "user"
            for (i = 1; i <= n; i++)
                printf "%-20s %-14s %-14s\n", order[i], \
                    (order[i], "root") in cell ? cell[order[i], "root"] : "-", \
                    (order[i], "user") in cell ? cell[order[i], "user"] : "-"
            if (n == 0) print "(no rows: the suite did not run)"
            for (i = 1; i <= nr; i++) print "  refused: " refused[i]
            for (i = 1; i <= nb; i++) print "  " bad[i]
            if (!("root" in ended) || !("user" in ended)) print "  (a pass did not finish)"
            exit (n == 0 || nb > 0 || !("root" in ended) || !("user" in ended)) ? 1 : 0
        }' "$2"
}

failed=0
for k in "$@"; do
    out=$stage/$k.out
    case $k in
    host)
        # This machine's kernel: an install the unprivileged user can reach.
        DESTDIR="$stage/host" cmake --install "$build" --prefix /usr/local >"$stage/install.log" 2>&1 ||
            { cat "$stage/install.log" >&2; exit 1; }
        chmod -R a+rX "$stage/host"
        {
            CORDON=$stage/host/usr/local/bin/cordon SMOKE_CLIENTS=$stage/add/kmx/clients \
                SMOKE_PKI=$stage/add/kmx/pki sh "$here/smoke.sh" 2>&1
            echo end
        } | sed "s/^/root| /" >"$out"
        {
            # the staged copy: the checkout may lie in a folder only root may enter
            setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_RUNTIME_DIR \
                CORDON="$stage/host/usr/local/bin/cordon" SMOKE_CLIENTS="$stage/add/kmx/clients" \
                SMOKE_PKI="$stage/add/kmx/pki" sh "$stage/add/kmx/smoke.sh" 2>&1
            echo end
        } | sed "s/^/user| /" >>"$out"
        title="host ($(uname -r))"
        ;;
    bullseye | bookworm | trixie)
        rc=0
        sh "$here/boot.sh" "$k" "$build" --add "$stage/add" -- "$guest" >"$out" 2>&1 || rc=$?
        kver=$(cat "${CORDON_KERNELS_CACHE:-$src/build-deps-kernels}/kernel-$k/version" 2>/dev/null || echo "?")
        title="$k ($kver)"
        if [ $rc -ge 124 ]; then
            tail -n 40 "$out" >&2
            echo "matrix.sh: $k did not finish (boot.sh exit $rc)" >&2
            failed=1
        fi
        ;;
    *) echo "matrix.sh: unknown kernel '$k'" >&2; exit 2 ;;
    esac
    table "$title" "$out" || failed=1
    [ -z "${CORDON_MATRIX_OUT:-}" ] || cp "$out" "$CORDON_MATRIX_OUT.$k"
done
exit $failed
