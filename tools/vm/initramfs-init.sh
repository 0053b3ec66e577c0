#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# /init of the tiny VM initramfs built by mkinitramfs.sh (busybox-static).
# Loads the modules listed in /modules/order, mounts the host root read-only
# over 9p (tag "hostroot"), puts a tmpfs overlay on top and switch_roots into
# it, running "/bin/bash <ipoib_vm.init>" (from the kernel command line) as the
# new PID 1. Any failure here drops to a message and powers the guest off, so
# the host side sees a guest without a result instead of a hung one.

/bin/busybox --install -s /bin
export PATH=/bin

die() {
	echo "initramfs: FATAL: $*" >/dev/console
	poweroff -f
	sleep 5	# until the power goes
	exit 1
}

mkdir -p /proc /sys /dev /lower /rw /newroot
mount -t proc proc /proc || die "mount proc"
mount -t sysfs sysfs /sys || die "mount sysfs"
mount -t devtmpfs devtmpfs /dev || die "mount devtmpfs"

guest_init=
# shellcheck disable=SC2013 # the command line is whitespace-separated words
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	ipoib_vm.init=*) guest_init=${arg#ipoib_vm.init=} ;;
	esac
done
[ -n "$guest_init" ] || die "no ipoib_vm.init= on the kernel command line"

while read -r ko; do
	[ -n "$ko" ] || continue
	insmod "/modules/$ko" || die "insmod $ko"
done </modules/order

mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 hostroot /lower ||
	die "mount host root over 9p"
mount -t tmpfs -o mode=0755 rw /rw || die "mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work \
	overlay /newroot || die "mount overlay"
[ -e "/newroot$guest_init" ] || die "$guest_init not found in the host root"

mount --move /proc /newroot/proc || die "move /proc"
mount --move /sys /newroot/sys || die "move /sys"
mount --move /dev /newroot/dev || die "move /dev"
# shellcheck disable=SC2093 # die only if exec fails
exec switch_root /newroot /bin/bash "$guest_init"
die "switch_root failed"
