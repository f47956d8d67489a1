#!/bin/bash
# The root filesystem of a router image, from Debian's archive: a minimal Debian SUITE with FRR
# (frr, frr-pythontools: the daemons, vtysh, frr-reload.py) and iproute2, trimmed, as a tar
# archive that `podman import` turns into an image (emulator/netns/router_images.cc does).
#
#   debootstrap --variant=minbase SUITE ─► chroot: apt-get install frr ─► trim ─► tar (sorted,
#   numeric owners, times clamped to the suite's Release date: the same archive state gives the
#   same bytes)
#
# usage: build_router_image.sh SUITE MIRROR WORK_DIR ARCHIVE
# Prints "stage NAME" lines as it goes and, at the end, "frr VERSION", "release-date EPOCH" and
# "packages N"; writes the installed packages to ARCHIVE.packages. Logs go to WORK_DIR/*.log;
# on failure their last lines go to stderr. The chroot's mounts are always undone.
set -euo pipefail

suite=$1 mirror=$2 work=$3 archive=$4
root=$work/rootfs
source "$(dirname "$0")/build_steps.sh"

step debootstrap debootstrap --variant=minbase --include=iproute2 "$suite" "$root" "$mirror"

# The suite's Release date: file times and shadow's password dates are clamped to it.
release=$(ls "$root"/var/lib/apt/lists/*_Release 2> /dev/null | head -n 1 || true)
epoch=0
if [ -n "$release" ]; then
  epoch=$(date -d "$(sed -n 's/^Date: //p' "$release")" +%s)
fi
export SOURCE_DATE_EPOCH=$epoch

printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"  # no service starts in the chroot
chmod 0755 "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mounted+=("$root/proc")
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive SOURCE_DATE_EPOCH="$epoch" LC_ALL=C "$@"; }
step apt-update in_root apt-get update
step frr in_root apt-get install -y --no-install-recommends frr frr-pythontools
in_root dpkg-query -W -f '${Package} ${Version}\n' | sort > "$archive.packages"
frr=$(in_root dpkg-query -W -f '${Version}' frr)
umount "$root/proc"
mounted=()

echo "stage trim"
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
  "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old \
  "$root"/var/cache/ldconfig/aux-cache "$root"/var/log/* "$root"/tmp/* "$root/usr/sbin/policy-rc.d"
find "$root" -name '__pycache__' -type d -prune -exec rm -rf {} +
: > "$root/etc/machine-id"
: > "$root/etc/resolv.conf"
# FRR's own directories, writable by whatever uid its user has in the image.
mkdir -p "$root/var/run/frr" "$root/var/tmp/frr"
chmod 0777 "$root/var/tmp/frr"

echo "stage archive"
tar --sort=name --numeric-owner --mtime="@$epoch" --clamp-mtime \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
  -C "$root" -cf "$archive" .
echo "frr $frr"
echo "release-date $epoch"
echo "packages $(wc -l < "$archive.packages")"
