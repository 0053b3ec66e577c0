#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot two soft-RoCE guests, load ib_ipoib in each, show the
# interfaces it creates, then ping and iperf3 from A to B over them, in
# datagram mode and then in connected mode. On the host it drives
# tools/vm/run.sh with this script as the guest program; in a guest (ROLE
# set) it is that program.
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
# jumbo frames underneath: a 4096-byte IB MTU, an ib0 MTU of 4092
ip link set eth0 mtu 4200
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
idx=$(($(printf '%d' "'$ROLE") - 64))
# shellcheck disable=SC2010 # interface names: no odd characters
ifc=$(ls /sys/class/net | grep -m1 '^ib')
echo "\$ ip addr add 10.20.0.$idx/24 dev $ifc; ip link set $ifc up"
ip addr add "10.20.0.$idx/24" dev "$ifc"
ip link set "$ifc" up
for _ in $(seq 50); do
	grep -qx 1 "/sys/class/net/$ifc/carrier" && break
	sleep 0.2
done
echo "\$ dmesg | grep ib_ipoib"
dmesg | grep -i 'ib_ipoib\|ib[0-9]:'
[ "$ROLE" = B ] && iperf3 -s -1 -D >/dev/null 2>&1
barrier up
if [ "$ROLE" = A ]; then
	echo "\$ ping -c 3 10.20.0.2      # B over $ifc"
	ping -c 3 -i 0.3 10.20.0.2
	echo "\$ ip neigh show dev $ifc   # 20-octet link-layer address"
	ip neigh show dev "$ifc"
	echo "\$ iperf3 -c 10.20.0.2 -t 5  # TCP over $ifc (QEMU TCG: slow)"
	iperf3 -c 10.20.0.2 -t 5 -f m | grep -E 'sender|receiver'
fi
barrier datagram-done
echo "\$ echo connected > /sys/class/net/$ifc/mode; cat /sys/class/net/$ifc/mtu"
echo connected >"/sys/class/net/$ifc/mode"
cat "/sys/class/net/$ifc/mtu"
[ "$ROLE" = B ] && iperf3 -s -1 -D >/dev/null 2>&1
barrier connected
if [ "$ROLE" = A ]; then
	echo "\$ ping -c 3 -s 30000 10.20.0.2   # over an RC connection"
	ping -c 3 -i 0.3 -s 30000 10.20.0.2
	echo "\$ cat /sys/kernel/debug/ipoib/${ifc}_cm"
	cat "/sys/kernel/debug/ipoib/${ifc}_cm"
	echo "\$ rdma resource show qp | grep ib_ipoib   # UD and RC"
	rdma resource show qp | grep ib_ipoib
	echo "\$ iperf3 -c 10.20.0.2 -t 5  # TCP in connected mode, MTU 65520"
	iperf3 -c 10.20.0.2 -t 5 -f m | grep -E 'sender|receiver'
fi
barrier "done"
modprobe -r ib_ipoib
finish
