#!/bin/sh
# boot.sh — boot one Debian kernel under qemu (TCG) with a built cordon and run a script in it.
#
# Usage: boot.sh SUITE TREE [--add DIR]... [--timeout SECONDS] -- 'shell command'
#        boot.sh SUITE TREE [--add DIR]... [--timeout SECONDS] --script FILE
#   SUITE  bullseye (5.10) | bookworm (6.1) | trixie (6.12): Debian's cloud kernel of that suite.
#   TREE   a worktree's CMake build directory (installed with cmake --install, PREFIX
#          /usr/local) or a DESTDIR that already holds usr/local/bin/cordon.
#   --add DIR   DIR's contents are copied over the guest's / as well (repeatable; a path
#               without blanks).
# The command runs as root in /root/ws (a workspace), in a Debian 12 root file system (the
# kernel's modules, kmod, git, curl, python3, nodejs, ssh, gpg, nft; user "kmx", uid 1000, home
# /home/kmx), loopback only, no systemd; the guest powers off after it. Prints the command's output and exits with
# its exit code; 124 when the boot timed out (default 300 s), 125 when the guest died without
# an exit code (the console's tail is printed). Every boot starts from the same image: writes
# are thrown away (qemu snapshot).
# Owns: build-deps-kernels/ beside this checkout (or $CORDON_KERNELS_CACHE): kernels, the root
#   file system, one ext4 image per kernel, the initramfs; a temporary directory per boot.
# Uses: fetch-kernel.sh, rootfs.sh, qemu-system-x86_64 -accel tcg, busybox (static), cpio,
#   mkfs.ext4, tar, cmake --install.
# Never: uses /dev/kvm; gives the guest a network device; changes a cached image in place
#   (a boot's writes go to qemu's snapshot); changes anything in TREE but the
#   install_manifest.txt cmake --install writes there.
set -eu
PATH=$PATH:/usr/sbin:/sbin
here=$(cd "$(dirname "$0")" && pwd)
usage() {
    echo "usage: boot.sh bullseye|bookworm|trixie BUILD_DIR|DESTDIR [--add DIR]... [--timeout S] (-- 'command' | --script FILE)" >&2
    exit 2
}
[ $# -ge 3 ] || usage
suite=$1
tree=$2
shift 2
adds=
timeout_s=${CORDON_KERNEL_TIMEOUT:-300}
cmd=
while [ $# -gt 0 ]; do
    case $1 in
    --add) [ -d "${2:-}" ] || { echo "boot.sh: --add needs a directory" >&2; exit 2; }
        adds="$adds $(cd "$2" && pwd)"; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --script) cmd=$(cat "$2"); shift 2 ;;
    --) shift; cmd=$*; break ;;
    *) usage ;;
    esac
done
[ -n "$cmd" ] || usage
for tool in qemu-system-x86_64 cpio mkfs.ext4 debootstrap depmod; do
    command -v $tool >/dev/null ||
        { echo "boot.sh: $tool missing (make test-kernels installs it: qemu-system-x86 cpio e2fsprogs debootstrap kmod busybox-static)" >&2; exit 1; }
done
busybox=/bin/busybox
# The initramfs has no libraries: busybox-static's (ldd fails on a static binary).
if [ ! -x "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
    echo "boot.sh: a static busybox is needed at /bin/busybox (busybox-static)" >&2
    exit 1
fi

cache=${CORDON_KERNELS_CACHE:-$here/../../build-deps-kernels}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
lock=$cache/.lock
# One builder of the cached images at a time (several worktrees may boot at once).
exec 9>"$lock"
flock 9
kdir=$(sh "$here/fetch-kernel.sh" "$suite" "$cache")
rootfs=$(sh "$here/rootfs.sh" "$cache")
kver=$(cat "$kdir/version")

# The initramfs: busybox, the modules that reach the root disk, an /init that mounts it,
# lays the payload disk's tar over it and switch_roots into the payload's /kmx/init.
initrd=$cache/initrd-$suite-$kver.cpio.gz
if [ ! -f "$initrd" ]; then
    ird=$(mktemp -d)
    mkdir -p "$ird/bin" "$ird/mod" "$ird/dev" "$ird/proc" "$ird/sys" "$ird/newroot"
    cp "$busybox" "$ird/bin/busybox"
    mdir=$kdir/lib/modules/$kver
    order=
    want() { # load order: dependencies first
        case " $order " in *" $1 "*) return 0 ;; esac
        deps=$(awk -v m="$1" -F': *' '$1 == m { print $2 }' "$mdir/modules.dep")
        for d in $deps; do want "$d"; done
        order="$order $1"
    }
    for m in virtio_pci virtio_blk virtio_rng; do
        p=$(awk -F: -v m="/$m.ko" 'index($1, m) { print $1; exit }' "$mdir/modules.dep")
        [ -n "$p" ] && want "$p"
    done
    i=0
    for p in $order; do
        i=$((i + 1))
        n=$(printf '%02d' $i)
        case $p in
        *.xz) xz -dc "$mdir/$p" >"$ird/mod/$n.ko" ;;
        *.zst) zstd -qdc "$mdir/$p" >"$ird/mod/$n.ko" ;;
        *) cp "$mdir/$p" "$ird/mod/$n.ko" ;;
        esac
    done
    cat >"$ird/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t devtmpfs dev /dev
for m in /mod/*.ko; do /bin/busybox insmod "$m" 2>/dev/null; done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do /bin/busybox sleep 0.1; i=$((i + 1)); done
/bin/busybox mount -t ext4 -o rw /dev/vda /newroot || { echo "kmx-initramfs: no root disk"; /bin/busybox poweroff -f; }
/bin/busybox tar -x -f /dev/vdb -C /newroot || { echo "kmx-initramfs: no payload"; /bin/busybox poweroff -f; }
/bin/busybox umount /proc
/bin/busybox mount --move /dev /newroot/dev
exec /bin/busybox switch_root /newroot /kmx/init
INIT
    chmod +x "$ird/init"
    (cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.tmp"
    mv "$initrd.tmp" "$initrd"
    rm -rf "$ird"
fi

# The root disk: the root file system plus this kernel's modules, made once per kernel and
# root file system (writes of a boot go to a throw-away snapshot).
image=$cache/root-$suite-$kver.ext4
stamp="$(cat "$cache/rootfs.done") $kver"
if [ "$(cat "$image.done" 2>/dev/null)" != "$stamp" ]; then
    stage=$(mktemp -d "$cache/stage.XXXXXX")
    cp -a "$rootfs/." "$stage/"
    mkdir -p "$stage/usr/lib/modules"
    cp -a "$kdir/lib/modules/$kver" "$stage/usr/lib/modules/"
    rm -f "$image"
    mkfs.ext4 -q -F -L kmxroot -d "$stage" "$image" 3G >/dev/null
    rm -rf "$stage"
    echo "$stamp" >"$image.done"
fi
flock -u 9

# The payload disk: a tar of the installed cordon, the --add directories, /kmx/init and the
# command, read by the initramfs over the root.
work=$(mktemp -d /tmp/kmx-boot.XXXXXX)
qpid=
# At exit: qemu stopped if still running, the boot's files removed (CORDON_KERNEL_KEEP=1
# keeps them: console.log, out.log, payload.tar). Never fails, so the exit code stays.
cleanup() {
    if [ -n "$qpid" ]; then kill "$qpid" 2>/dev/null || true; fi
    if [ -z "${CORDON_KERNEL_KEEP:-}" ]; then rm -rf "$work"; else echo "boot.sh: kept $work" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/payload/kmx"
if [ -f "$tree/CMakeCache.txt" ]; then
    DESTDIR="$work/payload" cmake --install "$tree" --prefix /usr/local >"$work/install.log" 2>&1 ||
        { cat "$work/install.log" >&2; echo "boot.sh: cmake --install $tree failed" >&2; exit 1; }
elif [ -x "$tree/usr/local/bin/cordon" ]; then
    cp -a "$tree/." "$work/payload/"
else
    echo "boot.sh: $tree is neither a CMake build directory nor a DESTDIR with usr/local/bin/cordon" >&2
    exit 2
fi
for d in $adds; do cp -a "$d/." "$work/payload/"; done
printf '%s\n' "$cmd" >"$work/payload/kmx/command"
cat >"$work/payload/kmx/init" <<'INIT'
#!/bin/sh
# PID 1 of the guest: a minimal system (no systemd), the command, then power off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm /dev/mqueue
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
ln -sf pts/ptmx /dev/ptmx 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
ln -sf /proc/self/fd /dev/fd 2>/dev/null
ln -sf /proc/self/fd/0 /dev/stdin 2>/dev/null
ln -sf /proc/self/fd/1 /dev/stdout 2>/dev/null
ln -sf /proc/self/fd/2 /dev/stderr 2>/dev/null
hostname kmx-guest
ip link set lo up
ldconfig
exec </dev/null >/dev/ttyS1 2>&1
stty -F /dev/ttyS1 -onlcr 2>/dev/null
mkdir -p /root/ws && cd /root/ws
HOME=/root USER=root LOGNAME=root sh -c "$(cat /kmx/command)"
echo "KMX-EXIT $?"
sync
echo o >/proc/sysrq-trigger
sleep 10
INIT
chmod +x "$work/payload/kmx/init"
tar -C "$work/payload" -cf "$work/payload.tar" --owner=0 --group=0 .

# The command's output is printed as the guest writes it (tail follows the second serial
# port's file until qemu ends); its last line carries the exit code.
: >"$work/out.log"
timeout -k 5 "$timeout_s" qemu-system-x86_64 -accel tcg -cpu max -m 2048 -smp 2 \
    -nodefaults -no-user-config -display none -monitor none -nic none -no-reboot \
    -kernel "$kdir/vmlinuz" -initrd "$initrd" \
    -append "console=ttyS0 root=/dev/vda rw panic=-1 mitigations=off random.trust_cpu=on loglevel=4" \
    -drive "file=$image,format=raw,if=virtio,snapshot=on" \
    -drive "file=$work/payload.tar,format=raw,if=virtio,readonly=on" \
    -device virtio-rng-pci \
    -serial "file:$work/console.log" -serial "file:$work/out.log" \
    </dev/null >"$work/qemu.log" 2>&1 &
qpid=$!
# The follower runs in the background too: the shell then sits in wait, which a signal
# interrupts (its trap stops qemu at once, timeout being in a process group of its own).
tail -n +1 -s 0.5 --pid=$qpid -f "$work/out.log" | tr -d '\r' | grep --line-buffered -v '^KMX-EXIT ' &
fpid=$!
rc=0
wait $qpid || rc=$?
qpid=
wait $fpid || true
code=$(tr -d '\r' <"$work/out.log" | sed -n 's/^KMX-EXIT \([0-9]*\)$/\1/p' | tail -n 1)
if [ -n "$code" ]; then
    exit "$code"
fi
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "boot.sh: $suite ($kver) timed out after ${timeout_s}s; console's tail:" >&2
    rc=124
else
    echo "boot.sh: $suite ($kver): the guest stopped without an exit code (qemu $rc); console's tail:" >&2
    rc=125
fi
tail -n 30 "$work/console.log" >&2 || true
cat "$work/qemu.log" >&2 || true
exit $rc
