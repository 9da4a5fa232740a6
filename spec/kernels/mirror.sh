#!/bin/sh
# mirror.sh — the Debian mirror the kernel matrix fetches from, printed on one line.
#
# Usage: mirror.sh
# CORDON_KERNEL_MIRROR when set; else the first Debian archive this machine's apt uses (one-line
# or deb822 sources, never -security, only a URI with "debian" in it, so an Ubuntu or vendor
# repository is never taken); else http://deb.debian.org/debian.
# Owns nothing; reads /etc/apt/sources.list and /etc/apt/sources.list.d/ only.
# Never: contacts a host; prints a non-Debian repository.
set -eu
if [ -n "${CORDON_KERNEL_MIRROR:-}" ]; then
    echo "$CORDON_KERNEL_MIRROR"
    exit 0
fi
url=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
    2>/dev/null | awk '
    /^[ \t]*#/ { next }
    $1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }
    $1 == "URIs:" { for (i = 2; i <= NF; i++) print $i }' |
    grep -v -- '-security' | grep -E '/debian/?$' | head -n 1) || true
echo "${url:-http://deb.debian.org/debian}"
