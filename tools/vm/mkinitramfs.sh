#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh KVER OUT [MODROOT]
#
# Build the tiny busybox-static initramfs (an uncompressed newc cpio archive)
# used by run.sh for kernel KVER and write it to OUT. /init is
# initramfs-init.sh from this directory. The archive carries the modules the
# init needs to reach the host root (virtio PCI, 9p over virtio, overlayfs),
# taken from /lib/modules/KVER in load order as `modprobe --show-depends`
# prints it, decompressed (busybox insmod cannot read .ko.xz / .ko.zst).
# Modules built into KVER are skipped. Nothing is loaded on the host.
# MODROOT: take the modules from MODROOT/lib/modules/KVER instead (a kernel
# built here and installed with INSTALL_MOD_PATH=MODROOT).
set -euo pipefail

usage() {
	echo "usage: $0 KVER OUT" >&2
	exit 2
}
[ $# -eq 2 ] || [ $# -eq 3 ] || usage
kver=$1
out=$2
modroot=${3:-/}
here=$(cd "$(dirname "$0")" && pwd)
busybox=/bin/busybox
# Modules /init needs, in the order they must end up loaded.
wanted="virtio_pci 9pnet_virtio 9p overlay"

[ -d "$modroot/lib/modules/$kver" ] ||
	{ echo "$0: no $modroot/lib/modules/$kver" >&2; exit 1; }
[ -x "$busybox" ] || { echo "$0: $busybox missing (busybox-static)" >&2; exit 1; }
if ldd "$busybox" >/dev/null 2>&1; then
	echo "$0: $busybox is not static (install busybox-static)" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root/bin" "$root/modules" "$root/dev" "$root/proc" "$root/sys"
cp "$busybox" "$root/bin/busybox"
install -m 0755 "$here/initramfs-init.sh" "$root/init"

# Resolve the load order. show-depends prints "insmod PATH" lines (with
# dependencies first, and repeats) and "builtin NAME" for built-in ones.
: >"$root/modules/order"
for m in $wanted; do
	modprobe -d "$modroot" -S "$kver" --show-depends "$m" || {
		echo "$0: cannot resolve $m for $kver" >&2
		exit 1
	}
done >"$tmp/deps"
while read -r kind path _; do
	[ "$kind" = insmod ] || continue
	base=$(basename "$path")
	name=${base%%.ko*}.ko
	grep -qxF "$name" "$root/modules/order" && continue
	case "$base" in
	*.ko) cp "$path" "$root/modules/$name" ;;
	*.ko.xz) xz -dc "$path" >"$root/modules/$name" ;;
	*.ko.zst) zstd -qdc "$path" >"$root/modules/$name" ;;
	*.ko.gz) gzip -dc "$path" >"$root/modules/$name" ;;
	*) echo "$0: unknown module format: $path" >&2; exit 1 ;;
	esac
	echo "$name" >>"$root/modules/order"
done <"$tmp/deps"

mkdir -p "$(dirname "$out")"
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
