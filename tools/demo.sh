#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot two soft-RoCE guests, load ib_ipoib in each and show the
# interfaces it creates. On the host it drives tools/vm/run.sh with this
# script as the guest program; in a guest (ROLE set) it is that program.
#   KVER   kernel to boot (default 6.12.117+deb12-amd64)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

if [ -z "${ROLE:-}" ]; then
	kver=${KVER:-6.12.117+deb12-amd64}
	out=$top/build/vm/runs/demo-$kver
	make -s -C "$top" modules KVER="$kver" || exit 1
	rm -rf "$out"
	echo "Booting two guests ($kver, QEMU TCG, soft-RoCE on eth0)..."
	"$top/tools/vm/run.sh" --kver "$kver" --guests 2 --timeout 300 \
		--script "$top/tools/demo.sh" --out "$out" >"$out.log" 2>&1
	rc=$?
	for r in A B; do
		echo
		echo "=== guest $r ==="
		cat "$out/shared/$r.out" 2>/dev/null
	done
	[ $rc -eq 0 ] || { echo "demo failed; see $out.log"; tail -n 30 "$out.log"; }
	exit $rc
fi

. "$top/tools/vm/guest-lib.sh"
rxe_up >/dev/null
modprobe ib_ipoib
sleep 1
echo "\$ modinfo -n ib_ipoib"
modinfo -n ib_ipoib
echo "\$ rdma link show rxe0/1"
rdma link show rxe0/1
echo "\$ cat /sys/class/infiniband/rxe0/ports/1/gids/0"
cat /sys/class/infiniband/rxe0/ports/1/gids/0
echo "\$ rdma resource show qp | grep ib_ipoib   # our UD QP"
rdma resource show qp | grep ib_ipoib
for d in /sys/class/net/ib*; do
	ifc=${d##*/}
	echo "\$ ip -d link show $ifc"
	ip -d link show "$ifc"
	echo "\$ ethtool -i $ifc"
	ethtool -i "$ifc"
done
echo "\$ dmesg | grep ib_ipoib"
dmesg | grep -i 'ib_ipoib\|ib[0-9]:'
barrier done
modprobe -r ib_ipoib
finish
