#!/bin/sh
# apt-need.sh — the Makefile's one way to get Debian packages: installs those of PKG... that are
# missing, and nothing else.
# Usage: sh build-aux/apt-need.sh [--no-install-recommends] PKG...
# Owns: the check (dpkg-query), `apt-get update -qq` then a quiet, noninteractive install, as
#   root; while it installs, a temporary /usr/sbin/policy-rc.d that refuses every service start
#   (exit 101), so a package that brings a daemon (openssh-server, tinyproxy) does not start it
#   on the host: the tests start their own instances. An existing policy-rc.d is left alone.
# Uses: dpkg-query, apt-get.
# Never: installs what is present, runs apt-get when nothing is missing, or (not root) tries
#   anything: it names the missing packages on one line and exits 1.
set -eu

opts=
if [ "${1:-}" = --no-install-recommends ]; then
    opts=$1
    shift
fi

missing=
for p in "$@"; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done
missing=${missing# }
[ -n "$missing" ] || exit 0

if [ "$(id -u)" != 0 ]; then
    echo "apt-need: run as root to install: $missing" >&2
    exit 1
fi

echo "installing: $missing"
rcd=/usr/sbin/policy-rc.d
made_rcd=
if [ ! -e "$rcd" ]; then
    printf '#!/bin/sh\n# apt-need.sh: no service starts while it installs\nexit 101\n' >"$rcd"
    chmod 755 "$rcd"
    made_rcd=1
fi
cleanup() { if [ -n "$made_rcd" ]; then rm -f "$rcd"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM

apt-get update -qq
# shellcheck disable=SC2086 # the packages are words, the option may be empty
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $opts $missing >/dev/null
