#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ifupdown (Debian's) configures ib_ipoib on the InfiniBand test fabric
# (distro_lib.sh) from /etc/network/interfaces: an ib0 stanza whose
# pre-up lines set connected mode and the MTU, as the in-tree driver's
# users write it; ifup brings it up with its address and it pings the
# far end with large datagrams; ifdown takes it down without its address;
# a second ifup works again.
# shellcheck disable=SC2317 # functions run through check, wait_until or trap
GUESTS=1
VM_SMP=1
VM_TIMEOUT=300
SOFTIB=1
NEEDS="ifup ifdown opensm"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ib_lib.sh"
. "$(dirname "$0")/distro_lib.sh"

ifaces=/etc/network/interfaces.d/ipoib-test
cleanup() {
	rm -f "$ifaces"
	rm -rf /run/network
}
trap cleanup EXIT

distro_fabric

# /etc/network/interfaces sources interfaces.d/*
mkdir -p /run/network "${ifaces%/*}"
cat >"$ifaces" <<EOF2
iface $if0 inet static
	address 10.30.0.1/24
	pre-up echo connected >/sys/class/net/$if0/mode
	pre-up ip link set $if0 mtu 65520
EOF2

up_as_configured() {
	echo "$if0: $(mode_of "$if0"), MTU $(mtu_of "$if0"), $(addrs_of "$if0")"
	[ "$(mode_of "$if0")" = connected ] && [ "$(mtu_of "$if0")" = 65520 ] &&
		[ "$(addrs_of "$if0")" = 10.30.0.1/24 ] &&
		ip link show "$if0" | grep -q '[<,]UP[,>]'
}
for round in 1 2; do
	check "ifup $if0 (round $round)" ifup "$if0"
	check "... connected mode, MTU 65520, 10.30.0.1/24, up" up_as_configured
	check "... ping with 20000 bytes" \
		wait_until 20 pings 1 -W 1 -s 20000 10.30.0.2
	check "... over an RC connection (debugfs: live)" \
		grep -q ' live ' "/sys/kernel/debug/ipoib/${if0}_cm"
	check "ifdown $if0" ifdown "$if0"
	check "... no address, down" sh -c \
		"test -z \"\$(ip -4 -o addr show dev $if0)\" &&
		 ! ip link show $if0 | grep -q '[<,]UP[,>]'"
	# the next round starts from datagram mode and the default MTU
	echo datagram >"/sys/class/net/$if0/mode"
done
distro_fabric_down
finish
