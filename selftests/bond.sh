#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Active-backup bonding over ib_ipoib on soft-RoCE, as users try it: each
# guest has two RoCE ports (rxe0 on eth0, rxe1 on eth1, all four NICs on
# one segment) and a bond over its two interfaces, fail_over_mac=active.
# A's active port's link goes down (eth0 down: rxe0's port DOWN) while
# B's stays up: A's bond fails over, B learns A's new address from the
# gratuitous ARP at once, and traffic goes on; the outage is measured.
# In datagram and in connected mode; iperf3 through the bond (across the
# failover in connected mode); the bond's multicast group joined on the
# new active port; in connected mode, B's connection to A's old address
# (whose port can no longer say DREQ) closes.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
NICS=2
VM_TIMEOUT=400
NEEDS="iperf3"
. "$(dirname "$0")/lib.sh"

idx=$(($(printf '%d' "'$ROLE") - 64))
peer=$((3 - idx))
dbg=/sys/kernel/debug/ipoib
g=ff12:401b:ffff::f01:101	# 239.1.1.1's MGID (RFC 4391 s4)

# max_bonds=0: no bond0 of the module's own
if ! modprobe bonding max_bonds=0 2>/dev/null; then
	skip "active-backup bonds over soft-RoCE" "no bonding module in $(uname -r)"
	finish
fi
# eth1 on eth0's segment: no ARP answers for eth0's address from it; no
# DAD on eth1, only to save its 1-2 s at the first up (the flaps of eth0
# below keep the default, and lifecycle.sh asserts recovery with it)
sysctl -qw net.ipv4.conf.eth1.arp_ignore=1 net.ipv6.conf.eth1.accept_dad=0
# 1500-octet underlays (the vde_switch that puts four NICs on one segment
# carries no larger frames): RoCE MTU 1024, UD MTU 1020, IPv4 only
ip link set eth1 up
rxe_up
rxe1_add() {
	rdma link add rxe1 type rxe netdev eth1 && rxe_wait_active rxe1 30
} >/dev/null
check "rxe1 on eth1 is ACTIVE" rxe1_add
check "modprobe ib_ipoib" modprobe ib_ipoib
both_ifs() { ipoib_if rxe0 && ipoib_if rxe1; } >/dev/null
check "an interface on each port" wait_until 10 both_ifs
i0=$(ipoib_if rxe0) i1=$(ipoib_if rxe1)

active_of() {	# the bond's active slave
	ip -d link show bond0 | sed -n 's/.* active_slave \([^ ]*\) .*/\1/p'
}
active_is() {	# active_is IF: the bond's active slave is IF
	[ "$(active_of)" = "$1" ]
}
# bond MODE: a bond over both interfaces in MODE, talking, rxe0's the
# primary (whichever slave's carrier came first would be active otherwise)
bond() {
	local i
	for i in "$i0" "$i1"; do
		ip link set "$i" down && echo "$1" >"/sys/class/net/$i/mode" ||
			return 1
	done
	# the bond sets its MTU on each slave it takes: 1500 is too much here
	ip link add bond0 type bond mode active-backup fail_over_mac active \
		miimon 50 primary "$i0" &&
		ip link set bond0 mtu "$(cat "/sys/class/net/$i0/mtu")" &&
		ip link set "$i0" master bond0 &&
		ip link set "$i1" master bond0 || return 1
	ip addr add "10.50.0.$idx/24" dev bond0 && ip link set bond0 up &&
		wait_until 20 grep -qx 1 /sys/class/net/bond0/carrier &&
		wait_until 10 active_is "$i0" &&
		wait_until 30 pings 1 -W 1 "10.50.0.$peer" >/dev/null
}
replied_after() {	# replied_after T: a reply in /tmp/bond.ping after T
	reply_after /tmp/bond.ping "$1"
}
# the address B's neighbour entry for A holds, flags octet aside
neigh_of_a() {
	ip neigh show 10.50.0.1 dev bond0 |
		sed -n 's/.* lladdr ..:\([0-9a-f:]*\) .*/\1/p'
}
no_live() {	# no_live FILE: a connected-mode debugfs file, no live connection
	test -e "$1" && ! grep -q ' live ' "$1"
}
gid_of() {	# gid_of ADDR: the GID of a 20-octet address, as debugfs shows it
	python3 -c 'import ipaddress, sys
print(ipaddress.IPv6Address(bytes.fromhex(sys.argv[1].replace(":", "")[8:])))' "$1"
}

# phase MODE: A's eth0 goes down under traffic from A; back up after
phase() {
	local mode=$1 t a_old a_new
	check "$mode: bonds over both ports, ping across" bond "$mode"
	barrier "$mode-bonded" 120
	if [ "$ROLE" = A ]; then
		check "$mode: the bond joins 239.1.1.1 (autojoin)" \
			ip addr add 239.1.1.1/32 dev bond0 autojoin
		check "$mode: ... joined on the active port ($i0)" \
			wait_until 10 grep -q "GID: $g .*complete: yes" "$dbg/${i0}_mcg"
		cp "/sys/class/net/$i0/address" "$SHARED/a_old.$mode"
		cp "/sys/class/net/$i1/address" "$SHARED/a_new.$mode"
	else
		iperf3 -s -D -1 >/dev/null 2>&1
	fi
	barrier "$mode-ready"
	a_old=$(cat "$SHARED/a_old.$mode") a_new=$(cat "$SHARED/a_new.$mode")
	if [ "$ROLE" = A ]; then
		[ "$mode" = datagram ] ||
			check "connected: 20000-octet ping over RC" \
				pings 2 -W 5 -s 20000 10.50.0.2
		ping -D -n -i 0.02 10.50.0.2 >/tmp/bond.ping 2>&1 &
		ping_pid=$!
		wait_until 10 replied_after 0
		if [ "$mode" = connected ]; then
			mark=$(cat /sys/class/net/bond0/statistics/tx_bytes)
			iperf3 -c 10.50.0.2 -t 6 -f m >/tmp/bond.iperf 2>&1 &
			iperf_pid=$!
			check "connected: iperf3 under way (2 MB sent)" \
				wait_until 5 sent_since bond0 "$mark" 2000000
		fi
		t=$(date +%s.%N)
		ip link set eth0 down
		check "$mode: eth0 down: the bond fails over to $i1" \
			wait_until 5 active_is "$i1"
		check "$mode: ... traffic goes on" wait_until 10 replied_after "$t"
		sleep 1	# pacing: a second of replies after the outage
		ping_outage "$mode" "$ping_pid" "$t"
		check "$mode: 239.1.1.1 joined on the new active port ($i1)" \
			wait_until 10 grep -q "GID: $g .*complete: yes" "$dbg/${i1}_mcg"
		if [ "$mode" = connected ]; then
			wait "$iperf_pid"
			check "connected: iperf3 across the failover completes" test $? = 0
			grep -E 'sender|receiver' /tmp/bond.iperf | sed 's/^/# iperf3: /'
			check "connected: ... over a connection of $i1" \
				grep -q ' live ' "$dbg/${i1}_cm"
		else
			check "datagram: iperf3 through the bond after the failover" \
				iperf3 -c 10.50.0.2 -t 2 -f m
		fi
		signal "$mode-done"
		wait_for B "$mode-checked" 60
		ip link set eth0 up
		check "$mode: eth0 up: the bond fails back to its primary" \
			wait_until 30 active_is "$i0"
		[ "$mode" = datagram ] ||
			check "connected: ... the port made backup closes its connections at once" \
				wait_until 3 no_live "$dbg/${i1}_cm"
		check "$mode: ... and traffic goes on" \
			wait_until 10 pings 1 -W 1 10.50.0.2
	else
		check "$mode: B's neighbour entry takes A's new address at once" \
			wait_until 30 eval "[ \"\$(neigh_of_a)\" = '${a_new:3}' ]"
		# the traffic it carried ends it (retry exceeded) or, idle,
		# the neighbour entry's move does (cm_peer_moved)
		[ "$mode" = datagram ] ||
			check "connected: ... and B's connection to A's old port closes" \
				wait_until 5 eval "test -e $dbg/${i0}_cm && ! grep -q '^GID: $(gid_of "$a_old") .* live ' $dbg/${i0}_cm"
		wait_for A "$mode-done" 120
		check "$mode: ... B still on its first port" active_is "$i0"
		signal "$mode-checked"
	fi
	barrier "$mode-end" 120
	ip link del bond0
}

phase datagram
phase connected
check "ib_ipoib and bonding unload" sh -c \
	"modprobe -r ib_ipoib && modprobe -r bonding"
rdma link delete rxe1
finish
