#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of a test guest after the initramfs switch_root (see run.sh).
# Reads ipoib_vm.role= and ipoib_vm.conf= from the kernel command line; the
# conf file (written by run.sh into its output directory, visible through the
# read-only host root) is sourced and sets VM_SCRIPT, VM_ROLES, VM_KVER,
# VM_MODULE, VM_DEPMOD, VM_MODDIR, VM_CWD and VM_ENV.
#
# Sets up the guest (mounts, /shared, eth0 10.10.0.<1+index>/24, optional
# ib_ipoib.ko in /lib/modules/KVER/updates/), runs `bash VM_SCRIPT` with
# stdout+stderr to the console and /shared/<ROLE>.out, then saves dmesg to
# /shared/<ROLE>.dmesg, the exit code to /shared/<ROLE>.rc and powers off.
# As PID 1 it must never exit: every path ends in poweroff.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

power_off() {
	sync
	/bin/busybox poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 60
}

fatal() {
	echo "guest-init: FATAL: $*"
	if mountpoint -q /shared && [ -n "${ROLE:-}" ]; then
		echo "guest-init: FATAL: $*" >>"/shared/$ROLE.out"
		dmesg >"/shared/$ROLE.dmesg" 2>&1
		echo 125 >"/shared/$ROLE.rc"
	fi
	power_off
}
trap 'fatal "guest-init exited unexpectedly"' EXIT

uptime_s() {
	local up
	read -r up _ </proc/uptime
	echo "$up"
}

ROLE=
conf=
# shellcheck disable=SC2013 # the command line is whitespace-separated words
for arg in $(cat /proc/cmdline); do
	case $arg in
	ipoib_vm.role=*) ROLE=${arg#ipoib_vm.role=} ;;
	ipoib_vm.conf=*) conf=${arg#ipoib_vm.conf=} ;;
	esac
done

# /tmp stays the overlay's (writes land in the tmpfs upper layer), so that
# scripts and run directories under the host's /tmp remain visible.
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /dev/pts /dev/shm /shared
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 shared /shared ||
	fatal "cannot mount /shared"
[ -n "$ROLE" ] || fatal "no ipoib_vm.role= on the kernel command line"
[ -r "$conf" ] || fatal "cannot read conf '$conf'"

VM_SCRIPT='' VM_ROLES='' VM_KVER='' VM_MODULE='' VM_DEPMOD='' VM_MODDIR=''
VM_CWD=/ VM_ENV=''
# shellcheck source=/dev/null
. "$conf"

index=0
found=
for r in $VM_ROLES; do
	[ "$r" = "$ROLE" ] && { found=1; break; }
	index=$((index + 1))
done
[ -n "$found" ] || fatal "role $ROLE not in '$VM_ROLES'"
[ "$(uname -r)" = "$VM_KVER" ] || fatal "booted $(uname -r), expected $VM_KVER"

hostname "vm-$ROLE"
echo "guest-init: role $ROLE up at $(uptime_s) s"

# A kernel built here (run.sh --modroot) keeps its modules outside the
# host's /lib/modules; they appear where modprobe looks for them. The bind
# mount is of the overlay, so updates/ below stays writable.
if [ -n "$VM_MODDIR" ]; then
	mkdir -p "/lib/modules/$VM_KVER"
	mount --bind "$VM_MODDIR" "/lib/modules/$VM_KVER" ||
		fatal "cannot bind-mount $VM_MODDIR"
fi
mountpoint -q /sys/kernel/debug ||
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true

# The NIC. No udev here: load the driver by hand; the kernel names it eth0.
ip link set lo up
modprobe virtio_net || fatal "modprobe virtio_net"
for _ in $(seq 50); do
	[ -e /sys/class/net/eth0 ] && break
	sleep 0.1
done
# eth0 keeps the distribution's defaults, duplicate address detection
# among them: its link-local address (soft-RoCE's GID 0) is usable 1-2 s
# after the link comes up, as on any host
ip link set eth0 up || fatal "eth0 up"
ip addr add "10.10.0.$((index + 1))/24" dev eth0 || fatal "ip addr add"
echo "guest-init: eth0 up at $(uptime_s) s"

# Our module, where `modprobe ib_ipoib` finds it ahead of the in-tree one.
# run.sh has already run depmod on the host over a staging tree that is
# /lib/modules/KVER plus updates/<module> (VM_DEPMOD): copying the resulting
# index files is equivalent to `depmod -a KVER` here, without reading every
# module of the kernel over 9p under TCG.
if [ -n "$VM_MODULE" ]; then
	t0=$(uptime_s)
	mdir=/lib/modules/$VM_KVER
	mkdir -p "$mdir/updates"
	cp "$VM_MODULE" "$mdir/updates/" || fatal "cannot copy $VM_MODULE"
	if [ -n "$VM_DEPMOD" ]; then
		find "$VM_DEPMOD" -maxdepth 1 -type f -name 'modules.*' \
			-exec cp -t "$mdir/" {} + || fatal "cannot copy depmod output"
	else
		depmod -a "$VM_KVER" || fatal "depmod"
	fi
	echo "guest-init: installed $(modinfo -n ib_ipoib 2>&1) in $(awk "BEGIN { print $(uptime_s) - $t0 }") s"
fi

# Tests start with the IPv6 link-local address in place and out of DAD.
for _ in $(seq 100); do
	ip -6 addr show dev eth0 scope link | grep -q 'inet6' &&
		! ip -6 addr show dev eth0 tentative | grep -q inet6 && break
	sleep 0.1
done

NGUESTS=$(echo "$VM_ROLES" | wc -w)
export ROLE ROLES="$VM_ROLES" NGUESTS SHARED=/shared KVER="$VM_KVER"
# Tests may `. "$VM_LIB"` instead of working out where guest-lib.sh is.
export VM_LIB="${0%/*}/guest-lib.sh"
if [ -n "$VM_ENV" ]; then
	# shellcheck source=/dev/null
	. "$VM_ENV"
fi

# kmemleak (debug kernels): what boot left unreferenced is not the test's;
# mark it seen, so that the scan of guest-lib.sh's finish reports only what
# the test leaked.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	echo clear >/sys/kernel/debug/kmemleak
	echo "guest-init: kmemleak baseline at $(uptime_s) s"
fi

echo "guest-init: running $VM_SCRIPT as $ROLE at $(uptime_s) s"
cd "$VM_CWD" || cd /
bash "$VM_SCRIPT" </dev/null 2>&1 | tee "/shared/$ROLE.out"
rc=${PIPESTATUS[0]}
echo "guest-init: $VM_SCRIPT exited $rc at $(uptime_s) s"
# the others' waits for this guest end now (guest-lib.sh wait_for)
: >"/shared/flags/$ROLE.exited"

dmesg >"/shared/$ROLE.dmesg" 2>&1
echo "$rc" >"/shared/$ROLE.rc.tmp"
mv "/shared/$ROLE.rc.tmp" "/shared/$ROLE.rc"
trap - EXIT
power_off
