#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS: Debian's dkms adds, builds and installs this checkout (dkms.conf)
# for the guest's kernel and removes it again, on the host, into trees
# under the boot's directory (tools/vm/dkms-stage.sh, run by batch.sh
# while the guests boot; its steps are this test's first checks). The guest then takes each state into its own (overlay)
# /lib/modules: installed, `modprobe ib_ipoib` loads ours from
# updates/dkms, with dkms.conf's version, and it works (an interface on
# soft-RoCE, carrier); removed, modprobe loads the kernel's own again.
# shellcheck disable=SC2317 # restore runs from the trap
GUESTS=1
VM_SMP=1
DKMS=1
NEEDS="dkms depmod"
. "$(dirname "$0")/lib.sh"

# tools/vm/dkms-stage.sh's, from batch.sh
stage=/shared/host/dkms
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$IPOIB_TOP/dkms.conf")
mdir=/lib/modules/$KVER
log "dkms.conf: ib_ipoib $ver"

# the host's steps (batch.sh runs them while the guests boot)
check "the host's dkms steps are done" wait_until 300 test -e "$stage/done"
while read -r line; do
	echo "$line"
	case $line in "not ok - "*) vm_fail "${line#not ok - }" ;; esac
done <"$stage/steps"

# The test bed installed its build of the module as updates/ib_ipoib.ko:
# put it aside, and back after the test.
save=/tmp/dkms-save
rm -rf "$save"
mkdir -p "$save"
cp "$mdir"/modules.* "$save/"
mv "$mdir/updates/ib_ipoib.ko" "$save/"
restore() {
	rm -rf "$mdir/updates/dkms"
	cp "$save"/modules.* "$mdir/"
	mv "$save/ib_ipoib.ko" "$mdir/updates/"
	rm -rf "$save"
}
trap restore EXIT

use_state() {	# use_state installed|removed: as dkms left the tree
	rm -rf "$mdir/updates/dkms"
	if [ -d "$stage/$1/updates/dkms" ]; then
		cp -r "$stage/$1/updates/dkms" "$mdir/updates/"
	fi
	cp "$stage/$1"/modules.* "$mdir/"
}

# --- installed -------------------------------------------------------------
use_state installed
path=$(modinfo -n ib_ipoib 2>&1)
log "modinfo -n ib_ipoib: $path"
check "installed: modinfo finds ib_ipoib in updates/dkms" \
	eval "[[ \$path == $mdir/updates/dkms/ib_ipoib.ko* ]]"
check "... version $ver, dkms.conf's" \
	test "$(modinfo -F version ib_ipoib)" = "$ver"
rxe_up
check "modprobe ib_ipoib" modprobe ib_ipoib
check "... the module loaded is version $ver" \
	test "$(cat /sys/module/ib_ipoib/version 2>&1)" = "$ver"
src=$(modinfo -F srcversion "$path")
check "... and its srcversion is that of DKMS's file ($src)" \
	test -n "$src" -a "$(cat /sys/module/ib_ipoib/srcversion)" = "$src"
check "... an out-of-tree module (taint O)" \
	grep -q O /sys/module/ib_ipoib/taint
check "... it makes an interface on rxe0" wait_until 10 ipoib_if rxe0
ifc=$(ipoib_if rxe0)
ip link set "$ifc" up
check "... which gets carrier (the broadcast group joined)" \
	wait_until 15 grep -qx 1 "/sys/class/net/$ifc/carrier"
check "modprobe -r ib_ipoib" modprobe -r ib_ipoib

# --- removed ---------------------------------------------------------------
use_state removed
path=$(modinfo -n ib_ipoib 2>&1)
log "modinfo -n ib_ipoib: $path"
if compgen -G "$mdir/kernel/drivers/infiniband/ulp/ipoib/ib_ipoib.ko*" >/dev/null; then
	check "removed: modinfo finds the kernel's own ib_ipoib" \
		eval "[[ \$path == $mdir/kernel/drivers/infiniband/ulp/ipoib/ib_ipoib.ko* ]]"
	check "modprobe ib_ipoib" modprobe ib_ipoib
	check "... the module loaded is the kernel's: no version, no taint" \
		sh -c "test ! -e /sys/module/ib_ipoib/version &&
		       test -z \"\$(cat /sys/module/ib_ipoib/taint)\""
	check "modprobe -r ib_ipoib" modprobe -r ib_ipoib
else
	# the debug kernel built here has no IPoIB of its own
	check "removed: no ib_ipoib for modinfo (the kernel has none)" \
		test "$(modinfo -F version ib_ipoib 2>/dev/null)" = ""
	check_fail "... nor for modprobe" modprobe ib_ipoib
fi
finish
