#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# First light: ib_ipoib creates an ibN interface per RoCE port with the
# RFC 4391 link-layer and broadcast addresses, follows RDMA devices coming
# and going, and unloads cleanly. Guest A loads the module before soft-RoCE
# exists (hotplug path), guest B after (client registration path).
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
. "$(dirname "$0")/lib.sh"

bcast_expected=00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff

# GID 0 of rxe0 port 1 as 16 colon-separated octets
gid0_octets() {
	tr -d ':' </sys/class/infiniband/rxe0/ports/1/gids/0 |
		sed 's/../&:/g; s/:$//'
}

# QPNs of ib_ipoib's UD QPs on rxe0 as the RDMA core reports them (a QP
# in RESET has no port yet, so no link filter)
ipoib_ud_qpns() {
	rdma resource show qp 2>/dev/null |
		awk '/link rxe0\// && /type UD/ && /ib_ipoib/ { for (i = 1; i < NF; i++)
			if ($i == "lqpn") print $(i + 1) }'
}

addr_qpn() {	# decimal QPN from octets 1-3 of a link-layer address
	echo $((16#$(echo "$1" | cut -d: -f2-4 | tr -d ':')))
}

no_ipoib_if() { ! ipoib_if rxe0 >/dev/null; }
have_ipoib_if() { ipoib_if rxe0 >/dev/null; }

check_interface() {	# check_interface IFNAME
	local ifc=$1 addr qpns
	addr=$(cat "/sys/class/net/$ifc/address")
	log "$ifc address $addr"
	check "$ifc is ARPHRD_INFINIBAND (32)" \
		test "$(cat "/sys/class/net/$ifc/type")" = 32
	check "$ifc address is 20 octets" \
		test "$(cat "/sys/class/net/$ifc/addr_len")" = 20
	# rxe has an SRQ: we accept connections, in either mode
	check "$ifc flags octet advertises RC (0x80, RFC 4755 s3.1)" \
		test "${addr%%:*}" = 80
	qpns=$(ipoib_ud_qpns)
	log "ib_ipoib UD QPs on rxe0/1: $qpns"
	check "$ifc address carries the QPN of our UD QP" \
		grep -qx "$(addr_qpn "$addr")" <<<"$qpns"
	check "$ifc address carries rxe0 GID 0" \
		test "$(echo "$addr" | cut -d: -f5-)" = "$(gid0_octets)"
	check "$ifc broadcast is the RFC 4391 s4 broadcast GID (P_Key ffff, scope 2)" \
		test "$(cat "/sys/class/net/$ifc/broadcast")" = $bcast_expected
	check "$ifc MTU is 2044 before the group is joined" test "$(cat "/sys/class/net/$ifc/mtu")" = 2044
	check "$ifc dev_port is 0" test "$(cat "/sys/class/net/$ifc/dev_port")" = 0
	check "$ifc ethtool driver is ib_ipoib" \
		sh -c "ethtool -i $ifc | grep -qx 'driver: ib_ipoib'"
	check "$ifc comes up administratively" ip link set "$ifc" up
	check "$ifc carrier comes up with the broadcast group" \
		wait_until 10 grep -qx 1 "/sys/class/net/$ifc/carrier"
	# rxe behind a 1500-byte NIC: IB MTU 1024, UD MTU 1020
	check "$ifc MTU follows the group: 1020" \
		test "$(cat "/sys/class/net/$ifc/mtu")" = 1020
	# below IPv6's 1280: the kernel keeps IPv6 off, and we say why, once
	check "$ifc: the kernel log says once why IPv6 is off" \
		test "$(dmesg | grep -c "$ifc: MTU 1020 is below IPv6's minimum of 1280.*(RoCE v2 over eth0 (MTU 1500)); a group MTU of 2048 restores IPv6")" = 1
	check "$ifc has no IPv6 address" \
		sh -c "! ip -6 addr show dev $ifc | grep -q inet6"
	check_ethtool "$ifc"
	check "$ifc goes down" ip link set "$ifc" down
}

# ethtool views beyond -i (the netdev under RoCE sets the speed)
ring_of() {	# ring_of IFNAME SECTION RX|TX: a value of ethtool -g
	ethtool -g "$1" | awk -v s="$2" -v k="$3:" \
		'index($0, s) == 1 { in_s = 1; next }
		 /:$/ { in_s = 0 }
		 in_s && $1 == k { print $2 }'
}
check_ethtool() {	# check_ethtool IFNAME
	local ifc=$1 out
	check "$ifc ethtool -g: receive ring 256 of at most 8192" \
		test "$(ring_of "$ifc" Current RX)/$(ring_of "$ifc" Pre-set RX)" = 256/8192
	check "$ifc ethtool -g: send ring 128 of at most 8192" \
		test "$(ring_of "$ifc" Current TX)/$(ring_of "$ifc" Pre-set TX)" = 128/8192
	ethtool -s eth0 speed 25000 duplex full
	check "$ifc link speed is RoCE's netdev's (25000Mb/s)" \
		sh -c "ethtool $ifc | grep -q 'Speed: 25000Mb/s'"
	check "$ifc duplex full" sh -c "ethtool $ifc | grep -q 'Duplex: Full'"
	out=$(ethtool -C "$ifc" rx-usecs 10 rx-frames 16 2>&1)
	log "ethtool -C $ifc rx-usecs 10 rx-frames 16: $out"
	check "$ifc ethtool -C says rxe has no CQ moderation" \
		sh -c "echo '$out' | grep -q 'no completion queue moderation'"
	check "$ifc ethtool -c keeps the values in effect (0)" \
		sh -c "ethtool -c $ifc | grep -q '^rx-usecs:[[:space:]]*0$'"
	# our range check, not the device's EOPNOTSUPP, must refuse it
	check "$ifc ethtool -C rejects rx-usecs above 65535 (EINVAL, our extack)" \
		sh -c "! out=\$(ethtool -C $ifc rx-usecs 70000 2>&1) &&
		       echo \"\$out\" && echo \"\$out\" | grep -q 'go up to 65535'"
}

check "modprobe finds our module in updates/" \
	sh -c "modinfo -n ib_ipoib | grep -q '/updates/'"
# the one modprobe loaded: out-of-tree, with the srcversion of updates/'s
ours_loaded() {
	grep -q O /sys/module/ib_ipoib/taint &&
		test "$(cat /sys/module/ib_ipoib/srcversion)" = \
			"$(modinfo -F srcversion ib_ipoib)"
}

if [ "$ROLE" = A ]; then
	check "modprobe ib_ipoib (no RDMA device yet)" modprobe ib_ipoib
	check "no interface without an RDMA device" no_ipoib_if
	rxe_up
else
	rxe_up
	check "modprobe ib_ipoib send_queue_size=100 (rxe0 present)" \
		modprobe ib_ipoib send_queue_size=100
	check "send_queue_size rounds up to a power of two" \
		test "$(cat /sys/module/ib_ipoib/parameters/send_queue_size)" = 128
fi
check "the ib_ipoib loaded is ours, not the in-tree one" ours_loaded
check "an interface appears on rxe0 port 1" wait_until 10 have_ipoib_if
ifc=$(ipoib_if rxe0)
check_interface "$ifc"
check "kernel log names the fabric" \
	sh -c "dmesg | grep -q '$ifc: rxe0 port 1, RoCE v2 over eth0'"

# rxe numbers QPs alike on every host: the GID tells the guests apart.
cat "/sys/class/net/$ifc/address" >"$SHARED/addr.$ROLE"
barrier addresses
for r in $ROLES; do
	[ "$r" = "$ROLE" ] && continue
	check "peer $r has a different GID in its address" \
		sh -c "test \"\$(cut -d: -f5- $SHARED/addr.$r)\" != \"\$(cut -d: -f5- $SHARED/addr.$ROLE)\""
done

# The RDMA device goes away under an up interface, then comes back.
ip link set "$ifc" up
check "rdma link del rxe0 removes the interface" rdma link delete rxe0
check "interface is gone" wait_until 10 no_ipoib_if
rxe_up
check "rdma link add rxe0 brings the interface back" wait_until 10 have_ipoib_if
ifc=$(ipoib_if rxe0)
check "new interface is configured the same" \
	test "$(cat "/sys/class/net/$ifc/broadcast")" = $bcast_expected

# Unload with the interface up, reload, unload again.
ip link set "$ifc" up
check "rmmod ib_ipoib with the interface up" modprobe -r ib_ipoib
check "interface is gone after unload" no_ipoib_if
check "no ib_ipoib QP left on rxe0" sh -c '! rdma resource show qp | grep -q ib_ipoib'
check "reload ib_ipoib" modprobe ib_ipoib
check "interface is back after reload" wait_until 10 have_ipoib_if
check "rdma link del after reload" rdma link delete rxe0
check "rmmod ib_ipoib without devices" modprobe -r ib_ipoib
check "rmmod rdma_rxe" modprobe -r rdma_rxe
finish
