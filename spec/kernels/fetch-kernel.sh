#!/bin/sh
# fetch-kernel.sh — one Debian suite's cloud kernel, unpacked, for the kernel matrix.
#
# Usage: fetch-kernel.sh SUITE CACHE_DIR      (SUITE: bullseye | bookworm | trixie)
# Prints the directory holding vmlinuz and lib/modules/VERSION/ of the suite's current
# linux-image-cloud-amd64 (the versioned package the metapackage depends on).
# Owns: CACHE_DIR/apt (a private apt state: its own sources.list naming only SUITE on the
#   machine's Debian mirror, signed by the Debian archive keyring, kept out of the system's
#   apt state) and CACHE_DIR/kernel-SUITE/.
# Uses: mirror.sh, apt-get (update, download), dpkg-deb, depmod.
# Never: touches /etc/apt, /var/lib/apt or /var/cache/apt; installs a package on the machine.
set -eu
PATH=$PATH:/usr/sbin:/sbin
suite=$1
cache=$2
case $suite in bullseye | bookworm | trixie) ;; *)
    echo "fetch-kernel.sh: unknown suite '$suite' (bullseye, bookworm or trixie)" >&2
    exit 2
    ;;
esac
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
out=$cache/kernel-$suite

# A kernel unpacked within the last day is reused; the mirror is asked again after that, so
# the matrix follows Debian's point releases.
if [ -f "$out/version" ] && [ -z "$(find "$out/version" -mmin +1440)" ]; then
    echo "$out"
    exit 0
fi

url=$(sh "$(dirname "$0")/mirror.sh")

apt=$cache/apt/$suite
mkdir -p "$apt/etc/preferences.d" "$apt/etc/apt.conf.d" "$apt/state/lists/partial" \
    "$apt/cache/archives/partial" "$apt/debs"
echo "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $url $suite main" \
    >"$apt/etc/sources.list"
: >"$apt/state/status"
set -- -o Dir::Etc::sourcelist="$apt/etc/sources.list" -o Dir::Etc::sourceparts=- \
    -o Dir::Etc::preferencesparts="$apt/etc/preferences.d" -o Dir::Etc::parts="$apt/etc/apt.conf.d" \
    -o Dir::State="$apt/state" -o Dir::State::status="$apt/state/status" \
    -o Dir::Cache="$apt/cache" -o APT::Architecture=amd64 -o APT::Architectures=amd64 \
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root -qq
apt-get "$@" update >"$apt/update.log" 2>&1 ||
    { echo "fetch-kernel.sh: apt-get update for $suite failed, see $apt/update.log" >&2; exit 1; }
pkg=$(apt-cache "$@" depends linux-image-cloud-amd64 2>/dev/null |
    awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
[ -n "$pkg" ] || { echo "fetch-kernel.sh: no linux-image-cloud-amd64 in $suite at $url" >&2; exit 1; }
(cd "$apt/debs" && rm -f ./*.deb && apt-get "$@" download "$pkg") >"$apt/download.log" 2>&1 ||
    { echo "fetch-kernel.sh: apt-get download $pkg failed, see $apt/download.log" >&2; exit 1; }

rm -rf "$out.new"
mkdir -p "$out.new"
dpkg-deb -x "$apt"/debs/"$pkg"_*.deb "$out.new/deb"
version=$(ls "$out.new/deb/lib/modules" 2>/dev/null || ls "$out.new/deb/usr/lib/modules")
mv "$out.new/deb/boot/vmlinuz-$version" "$out.new/vmlinuz"
mkdir -p "$out.new/lib/modules"
if [ -d "$out.new/deb/usr/lib/modules/$version" ]; then
    mv "$out.new/deb/usr/lib/modules/$version" "$out.new/lib/modules/"
else
    mv "$out.new/deb/lib/modules/$version" "$out.new/lib/modules/"
fi
mv "$out.new/deb/boot/config-$version" "$out.new/config" 2>/dev/null || true
rm -rf "$out.new/deb"
depmod -b "$out.new" "$version"
echo "$pkg" >"$out.new/package"
echo "$version" >"$out.new/version"
rm -rf "$out"
mv "$out.new" "$out"
echo "$out"
