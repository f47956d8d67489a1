#!/bin/bash
# The guest image of VM hosts (`runtime: vm`), from Debian's archive: a minimal Debian SUITE with
# the kernel's RDMA user space (rdma-core, ibverbs-utils, rdmacm-utils, perftest; socat relays
# perftest's IPv4-only setup connection over the lab's IPv6, see guest/mrclab-perftest), and Debian's
# own kernel, uncompressed for qemu's PVH boot, with only the modules a VM host needs.
#
#   debootstrap --variant=minbase SUITE ─► apt-get download linux-image-amd64's kernel ─► vmlinux
#   (guest_kernel.py) + the modules' closure (virtio, 9p, virtio_net, rdma_rxe, crypto) ─►
#   depmod ─► trim ─► OUT/{rootfs/, vmlinux, initrd.modules, kernel.version}
#
# usage: build_guest_image.sh SUITE MIRROR WORK_DIR OUT_DIR
# Prints "stage NAME" lines as it goes and, at the end, "kernel VERSION", "release-date EPOCH"
# and "packages N"; writes the installed packages to OUT_DIR/packages. Logs go to WORK_DIR/*.log;
# on failure their last lines go to stderr. The chroot's mounts are always undone.
set -euo pipefail

suite=$1 mirror=$2 work=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$out/rootfs
source "$(dirname "$0")/build_steps.sh"

mkdir -p "$out"
step debootstrap debootstrap --variant=minbase \
  --include=iproute2,kmod,procps,iputils-ping,rdma-core,ibverbs-utils,ibverbs-providers,rdmacm-utils,perftest,socat \
  "$suite" "$root" "$mirror"

release=$(ls "$root"/var/lib/apt/lists/*_Release 2> /dev/null | head -n 1 || true)
epoch=0
if [ -n "$release" ]; then
  epoch=$(date -d "$(sed -n 's/^Date: //p' "$release")" +%s)
fi

cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mounted+=("$root/proc")
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive SOURCE_DATE_EPOCH="$epoch" LC_ALL=C "$@"; }
step apt-update in_root apt-get update
# linux-image-amd64 depends on the suite's current kernel package: download it, do not install it
# (no initramfs-tools, no boot loader; the VM boots vmlinux with mrclab's own initramfs).
kernel_pkg=$(in_root apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n 1)
[ -n "$kernel_pkg" ] || { echo "no kernel package behind linux-image-amd64 in $suite" >&2; exit 1; }
mkdir -p "$root/tmp/kernel"
step kernel-download chroot "$root" sh -c "cd /tmp/kernel && apt-get download $kernel_pkg"
step kernel-unpack sh -c "dpkg-deb -x $root/tmp/kernel/*.deb $work/kernel"
version=$(ls "$work/kernel/lib/modules" | head -n 1)
echo "stage vmlinux"
/usr/bin/python3 "$here/guest_kernel.py" vmlinux "$work/kernel/boot/vmlinuz-$version" "$out/vmlinux"

# The modules: what the initramfs loads to reach the root filesystem (virtio, 9p, the agent's
# port), what the host needs after (virtio_net, rdma_rxe and its user-space interfaces), and
# the crypto modules rxe asks the kernel for by name (its ICRC is a crc32).
echo "stage modules"
moddir=$work/kernel/lib/modules/$version
depmod_in() { chroot "$root" depmod -b "$1" "$version"; }
mkdir -p "$root/tmp/all"
cp -a "$work/kernel/lib" "$root/tmp/all/"
step depmod-all depmod_in /tmp/all
needed=$(/usr/bin/python3 "$here/guest_kernel.py" modules "$root/tmp/all/lib/modules/$version" \
  virtio_pci virtio_console 9pnet_virtio 9p virtio_net rdma_rxe ib_uverbs rdma_ucm ib_umad)
extra=$(cd "$moddir" && find kernel/crypto kernel/arch/x86/crypto kernel/lib -name '*.ko*' | sort)
mkdir -p "$root/lib/modules/$version"
cp "$moddir"/modules.builtin* "$moddir"/modules.order "$root/lib/modules/$version/"
for m in $needed $extra; do
  mkdir -p "$root/lib/modules/$version/$(dirname "$m")"
  cp "$moddir/$m" "$root/lib/modules/$version/$m"
done
rm -rf "$root/tmp/all" "$root/tmp/kernel"
step depmod depmod_in /
/usr/bin/python3 "$here/guest_kernel.py" modules "$root/lib/modules/$version" \
  virtio_pci virtio_console 9pnet_virtio 9p virtio_net | sed "s|^|/lib/modules/$version/|" > "$out/initrd.modules"
echo "$version" > "$out/kernel.version"

in_root dpkg-query -W -f '${Package} ${Version}\n' | sort > "$out/packages"
umount "$root/proc"
mounted=()

echo "stage trim"
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
  "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old \
  "$root"/var/cache/ldconfig/aux-cache "$root"/var/log/* "$root"/tmp/*
: > "$root/etc/machine-id"
: > "$root/etc/resolv.conf"
find "$root" "$out/vmlinux" -newermt "@$epoch" -exec touch -h -d "@$epoch" {} + 2> /dev/null || true

echo "kernel $version"
echo "release-date $epoch"
echo "packages $(wc -l < "$out/packages")"
