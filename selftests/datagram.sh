#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Datagram mode (RFC 4391) between two soft-RoCE guests: the broadcast
# group brings the carrier up, IPv4 with ARP and IPv6 with ND work both
# ways, and the neighbour entries carry the peer's 20-octet address.
GUESTS=2
. "$(dirname "$0")/lib.sh"

idx=$(($(printf '%d' "'$ROLE") - 64))
# A 4200-byte underlay lets rxe use a 4096-byte IB MTU: IPv6 needs 1280.
ip link set eth0 mtu 4200
rxe_up
check "modprobe ib_ipoib" modprobe ib_ipoib
check "an interface appears on rxe0 port 1" wait_until 10 ipoib_if rxe0
ifc=$(ipoib_if rxe0)
ip link set "$ifc" up
check "carrier comes up once the broadcast group is joined" \
	wait_until 10 grep -qx 1 "/sys/class/net/$ifc/carrier"
check "MTU is the group's 4096 minus the 4-octet header" \
	test "$(cat "/sys/class/net/$ifc/mtu")" = 4092
ip addr add "10.20.0.$idx/24" dev "$ifc"
ip addr add "fd00:20::$idx/64" dev "$ifc" nodad
check "IPv6 link-local address from the port GUID" \
	sh -c "ip -6 addr show dev $ifc scope link | grep -q 'fe80::5254:ff:fe12:34'"
cat "/sys/class/net/$ifc/address" >"$SHARED/addr.$ROLE"
ip -6 addr show dev "$ifc" scope link |
	awk '/inet6/ { sub("/.*", "", $2); print $2 }' >"$SHARED/ll.$ROLE"
barrier configured

for r in $ROLES; do
	[ "$r" = "$ROLE" ] && continue
	ridx=$(($(printf '%d' "'$r") - 64))
	check "ping IPv4 $r" ping -c 3 -i 0.2 -W 5 "10.20.0.$ridx"
	check "ARP entry of $r holds its 20-octet address" \
		sh -c "ip neigh show 10.20.0.$ridx dev $ifc | grep -q \"lladdr \$(cat $SHARED/addr.$r)\""
	check "ping IPv6 global $r" ping -6 -c 3 -i 0.2 -W 5 "fd00:20::$ridx"
	peer_ll=$(cat "$SHARED/ll.$r")
	check "ping IPv6 link-local $r ($peer_ll)" \
		ping -6 -c 3 -i 0.2 -W 5 "${peer_ll:-fe80::1}%$ifc"
	check "ND entry of $r holds its 20-octet address" \
		sh -c "ip -6 neigh show fd00:20::$ridx dev $ifc | grep -q \"lladdr \$(cat $SHARED/addr.$r)\""
done
check "ping -6 ff02::1 is answered by the peer" \
	sh -c "ping -6 -c 3 -i 0.3 -W 3 ff02::1%$ifc | grep -q 'DUP!\|bytes from fe80::5254:ff:fe12:34'"
barrier pinged
ip -s link show "$ifc"
ethtool -S "$ifc"
check "ib_ipoib unloads with traffic state" modprobe -r ib_ipoib
finish
