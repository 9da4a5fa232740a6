#!/bin/sh
# build-image.sh DEB [CACHE_DIR] — `make image`: the image localhost/cordon:VERSION (and :latest)
# that cordon's pod runs, made here without any registry: the Debian 12 (bookworm, minbase) root
# file system the container specs make with debootstrap (spec/fixtures/container/build-image.sh,
# cached in CACHE_DIR, default build-deps/container-rootfs), the Debian package DEB installed in
# it with dpkg (its dependencies are in that root already, so no network), and
# session-main.sh as /usr/share/cordon/deploy/session-main.sh, the pod's main process.
# The image is labelled with the package's and the script's sha256: a second run with the same
# ones keeps the image it finds (the pod's spec relies on that to stay quick).
# Uses: podman (rootful, with runc), debootstrap (first run only), sha256sum.
# Never touches an image or container but its own.
set -eu
deb=$1
cache=${2:-build-deps/container-rootfs}
here=$(cd "$(dirname "$0")" && pwd)
base=cordon-test-image
podman="podman --runtime runc --cgroup-manager cgroupfs"

[ "$(id -u)" = 0 ] || { echo "build-image.sh: run as root (rootful podman and debootstrap)" >&2; exit 1; }
[ -f "$deb" ] || { echo "build-image.sh: no package at $deb (make deb builds it)" >&2; exit 1; }
version=$(dpkg-deb -f "$deb" Version)
image=localhost/cordon:$version
key=$(cat "$deb" "$here/session-main.sh" "$0" | sha256sum | cut -d' ' -f1)

if [ "$($podman image inspect --format '{{index .Labels "org.cordon.build"}}' "$image" 2>/dev/null)" = "$key" ]; then
    echo "build-image.sh: $image is up to date"
    exit 0
fi

sh "$here/../../spec/fixtures/container/build-image.sh" "$cache" "$base"

# Rootful podman raises RLIMIT_NOFILE and RLIMIT_NPROC for the container, which a root without
# CAP_SYS_RESOURCE (some VMs) may not: then the caller's own hard limit is passed for both.
flags=
if ! $podman run --rm $base true 2>/dev/null; then
    n=$(ulimit -Hn)
    flags="--ulimit nofile=$n:$n --ulimit nproc=$n:$n"
fi

name=cordon-image-build-$$
trap '$podman rm -f $name >/dev/null 2>&1 || true' EXIT INT TERM
dir=$(cd "$(dirname "$deb")" && pwd)
$podman run --name $name $flags -v "$dir":/deb:ro -v "$here":/deploy:ro $base sh -c "
    set -e
    dpkg -i /deb/$(basename "$deb") >/dev/null
    mkdir -p /usr/share/cordon/deploy
    cp /deploy/session-main.sh /usr/share/cordon/deploy/session-main.sh
    chmod 755 /usr/share/cordon/deploy/session-main.sh
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb"
$podman commit -q \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'WORKDIR /workspace' \
    --change 'CMD ["/usr/share/cordon/deploy/session-main.sh", "agent"]' \
    --change "LABEL org.cordon.build=$key" \
    --change "LABEL org.opencontainers.image.title=cordon org.opencontainers.image.version=$version" \
    $name "$image" >/dev/null
$podman tag "$image" localhost/cordon:latest
echo "build-image.sh: built $image (and localhost/cordon:latest) from $(basename "$deb")"
