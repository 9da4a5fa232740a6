#!/bin/sh
# rootfs.sh — the Debian 12 root file system every kernel of the matrix boots.
#
# Usage: rootfs.sh CACHE_DIR
# Prints CACHE_DIR/rootfs, a debootstrapped bookworm (minbase plus what the smoke suite runs:
# the shared libraries cordon-session links, git, curl, python3, nodejs, ssh, gpg, nft, ...)
# with an unprivileged user "kmx" (uid 1000, home /home/kmx). Made once per machine: a later
# run finds CACHE_DIR/rootfs.done naming the same recipe and reuses it.
# Owns: CACHE_DIR/rootfs, CACHE_DIR/rootfs.done, CACHE_DIR/debootstrap.log.
# Uses: debootstrap, chroot, mirror.sh (the mirror apt uses on this machine; no other host).
# Never: writes outside CACHE_DIR.
set -eu
PATH=$PATH:/usr/sbin:/sbin
cache=$1
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
rootfs=$cache/rootfs

pkgs=kmod,procps,util-linux,iproute2,nftables,curl,git,python3,nodejs,openssh-client
pkgs=$pkgs,gnupg,gpg-agent,libseccomp2,liblua5.4-0,libmicrohttpd12,ca-certificates,passwd
recipe="bookworm minbase $pkgs user-kmx-1000 v1"

if [ "$(cat "$cache/rootfs.done" 2>/dev/null)" != "$recipe" ]; then
    url=$(sh "$(dirname "$0")/mirror.sh")
    rm -rf "$rootfs" "$cache/rootfs.done"
    debootstrap --variant=minbase --include="$pkgs" bookworm "$rootfs" "$url" \
        >"$cache/debootstrap.log" 2>&1 ||
        { echo "rootfs.sh: debootstrap failed, see $cache/debootstrap.log" >&2; exit 1; }
    rm -rf "$rootfs/var/cache/apt/archives"/*.deb "$rootfs/var/lib/apt/lists"/*
    chroot "$rootfs" useradd -m -u 1000 -s /bin/sh kmx
    echo kmx-guest >"$rootfs/etc/hostname"
    printf '127.0.0.1 localhost kmx-guest\n::1 localhost\n' >"$rootfs/etc/hosts"
    : >"$rootfs/etc/resolv.conf"
    echo "$recipe" >"$cache/rootfs.done"
fi
echo "$rootfs"
