#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Active-backup bonding over ib_ipoib on the InfiniBand test fabric: two
# fabrics (softib0-softib1 and softib2-softib3, one opensm each), a bond
# here over softib0's and softib2's interfaces and one in namespace b over
# softib1's and softib3's, fail_over_mac=active as the bonding driver
# demands of InfiniBand. In datagram and in connected mode the cable of
# the active ports is pulled: both bonds fail over, traffic goes on over
# the other fabric, and the outage is measured. Also:
#   - rdma_cm through the bond (tools/softib/softib_cma.c): the driver
#     names the bond as the interface of an incoming connection, so a
#     listener finds it, before and after a failover;
#   - a multicast group joined on the bond is joined on the new active
#     port after a failover, on that fabric's SA;
#   - the peer's ARP entry names the new active port at once; IPv6 works
#     across the failover;
#   - connected mode: connections of a port made backup (failback to the
#     primary) close with a DREQ; a peer whose neighbour entry moves to
#     another address closes its connection to the old one (cm_peer_moved);
#     a peer no entry names is kept while it sends to us, and closed once
#     idle.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=1
VM_SMP=1
VM_TIMEOUT=300
SOFTIB=1
NEEDS="opensm saquery iperf3 nsenter ss python3"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ib_lib.sh"

guid2=0x0200534200000201
gid2=fe80::200:5342:0:201
cma=/sys/kernel/debug/softib_cma
dbg=/sys/kernel/debug/ipoib
g=ff12:401b:ffff::f01:101	# 239.1.1.1's MGID (RFC 4391 s4)

all_active() {
	local d
	for d in softib0 softib1 softib2 softib3; do
		port_state "$d" | grep -q ACTIVE || return 1
	done
}
rm -rf /tmp/osm-*	# a guid2lid file from an earlier test of this boot
echo 'Default=0x7fff, ipoib, mtu=5, rate=7 : ALL=full;' >/tmp/partitions.conf
check "softib: four ports, two cables" softib_load 4
opensm_start "$guid0"
osm_a=$osm_pid
opensm_start "$guid2"
osm_b=$osm_pid
check "one opensm per fabric sweeps all four ports to ACTIVE" \
	wait_until 60 all_active
# max_bonds=0: no bond0 of the module's own (systemd's modprobe.d says
# so too, but not every system has it)
if ! modprobe bonding max_bonds=0 2>/dev/null; then
	# the debug kernel is built without it
	skip "active-backup bonds over the InfiniBand fabrics" \
		"no bonding module in $(uname -r)"
	opensm_stop "$osm_a"
	opensm_stop "$osm_b"
	softib_unload
	finish
fi
check "modprobe ib_ipoib, rdma_cm; insmod softib_cma" sh -c "
	modprobe ib_ipoib && modprobe rdma_cm &&
	insmod $IPOIB_TOP/build/$(uname -r)/softib/softib_cma.ko"
four_ifs() {
	ipoib_if softib0 && ipoib_if softib1 && ipoib_if softib2 &&
		ipoib_if softib3
} >/dev/null
check "... an interface on each port" wait_until 10 four_ifs
a0=$(ipoib_if softib0) a1=$(ipoib_if softib2)
b0=$(ipoib_if softib1) b1=$(ipoib_if softib3)
ip netns add b
ip link set "$b0" netns b
ip link set "$b1" netns b
addr_a0=$(cat "/sys/class/net/$a0/address")
addr_a1=$(cat "/sys/class/net/$a1/address")

no_live() {	# no_live FILE: a connected-mode debugfs file, no live connection
	test -e "$1" && ! grep -q ' live ' "$1"
}
inb() {	# inb CMD...: in namespace b, with this namespace's debugfs
	nsenter --net=/run/netns/b "$@"
}
carrier4() {
	[ "$(carrier_of "$a0")" = 1 ] && [ "$(carrier_of "$a1")" = 1 ] &&
		[ "$(carrier_of "$b0" b)" = 1 ] && [ "$(carrier_of "$b1" b)" = 1 ]
}
# bonds MODE: both bonds made anew over interfaces in MODE, talking, the
# first slave (softib0's, softib1's) the primary: else whichever slave's
# carrier came first would be active
bonds() {
	local i
	for i in "$a0" "$a1"; do
		ip link set "$i" down
		echo "$1" >"/sys/class/net/$i/mode"
	done
	for i in "$b0" "$b1"; do
		ip -n b link set "$i" down
		ip netns exec b sh -c "echo $1 >/sys/class/net/$i/mode"
	done
	ip link add bond0 type bond mode active-backup fail_over_mac active \
		miimon 50 primary "$a0" &&
		ip link set "$a0" master bond0 && ip link set "$a1" master bond0 &&
		ip -n b link add bond1 type bond mode active-backup \
			fail_over_mac active miimon 50 primary "$b0" &&
		ip -n b link set "$b0" master bond1 &&
		ip -n b link set "$b1" master bond1 || return 1
	if [ "$1" = connected ]; then
		ip link set bond0 mtu 65520 && ip -n b link set bond1 mtu 65520 ||
			return 1
	fi
	ip addr add 10.40.0.1/24 dev bond0 &&
		ip addr add fd00:40::1/64 dev bond0 nodad &&
		ip link set bond0 up &&
		ip -n b addr add 10.40.0.2/24 dev bond1 &&
		ip -n b addr add fd00:40::2/64 dev bond1 nodad &&
		ip -n b link set bond1 up &&
		wait_until 30 carrier4 &&
		wait_until 30 pings 1 -W 1 10.40.0.2 >/dev/null
}
active_of() {	# active_of BOND [NETNS]: its active slave
	ip ${2:+-n "$2"} -d link show "$1" |
		sed -n 's/.* active_slave \([^ ]*\) .*/\1/p'
}
both_active_on() {	# both_active_on OURS THEIRS
	[ "$(active_of bond0)" = "$1" ] && [ "$(active_of bond1 b)" = "$2" ]
}
# b_neigh ADDR: the address b's neighbour entry for ADDR holds, flags
# octet aside
b_neigh() {
	ip -n b neigh show "$1" dev bond1 |
		sed -n 's/.* lladdr ..:\([0-9a-f:]*\) .*/\1/p'
}
b_neigh_is() {	# b_neigh_is ADDR HWADDR
	[ "$(b_neigh "$1")" = "${2:3}" ]
}
replied_after() {	# replied_after T: a reply in /tmp/bond.ping after T
	reply_after /tmp/bond.ping "$1"
}
# pull MODE: the active ports' cable (softib0-softib1) pulled under a
# ping every 20 ms; both bonds go over to the other fabric, the peer
# learns our new address, traffic goes on; the outage is logged
pull() {
	local t
	check "$1: b has a neighbour entry for us over IPv6 too" \
		pings 1 -6 -W 5 fd00:40::2
	ping -D -n -i 0.02 10.40.0.2 >/tmp/bond.ping 2>&1 &
	ping_pid=$!
	wait_until 10 replied_after 0
	t=$(date +%s.%N)
	echo 0 >/sys/kernel/debug/softib/softib0_cable
	check "$1: cable pulled: both bonds fail over to softib2-softib3" \
		wait_until 5 both_active_on "$a1" "$b1"
	check "$1: ... the peer's ARP entry names our new port at once" \
		wait_until 2 b_neigh_is 10.40.0.1 "$addr_a1"
	# b's bond changed its address too, which flushed its ND entries
	check "$1: ... IPv6 across too" pings 1 -6 -W 5 fd00:40::2
	check "$1: ... b's ND entry names our new port" \
		b_neigh_is fd00:40::1 "$addr_a1"
	check "$1: ... traffic goes on" wait_until 10 replied_after "$t"
	ping_outage "$1" "$ping_pid" "$t"
}
# replug: the cable back in, the SM's sweep makes both ports ACTIVE
replug() {
	echo 1 >/sys/kernel/debug/softib/softib0_cable
	check "cable plugged back: all four ports ACTIVE again" \
		wait_until 30 all_active
}
unbond() {
	ip link del bond0
	ip -n b link del bond1
}
rdma_cm_via() {	# rdma_cm_via WHEN: rdma_cm from b to the bond's address
	check "$1: rdma_cm connects from b to 10.40.0.1 through the bonds" \
		inb sh -c "echo connect 10.40.0.1 7471 >$cma"
	check "$1: ... the listener's connection is bound to bond0" \
		grep -qx "accepted_via: bond0" $cma
	check "$1: ... and b's to bond1" grep -qx "connected_via: bond1" $cma
	[ "$CHECK_RC" = 0 ] || sed 's/^/# softib_cma: /' $cma
}
sa_member() {	# sa_member CA GID: the SA of CA's fabric has GID in group $g
	saquery -C "$1" --smkey 1 -m 2>/dev/null |
		awk -F. -v g="$g" '/MGID/ { m = $NF } /PortGid/ && m == g { print $NF }' |
		grep -qx "$2"
}

# --- datagram mode ------------------------------------------------------
check "datagram: bonds over both ports, ping across" bonds datagram
check "... softib0's and softib1's interfaces active" \
	wait_until 10 both_active_on "$a0" "$b0"
check "datagram: the bond joins 239.1.1.1 (autojoin)" \
	ip addr add 239.1.1.1/32 dev bond0 autojoin
check "... on the active port: $a0's group list" \
	wait_until 10 grep -q "GID: $g .*complete: yes" "$dbg/${a0}_mcg"
check "... and the SA of softib0's fabric has it" \
	wait_until 10 sa_member softib0 "$gid0"
echo "listen 7471" >$cma
rdma_cm_via "before failover"
pull datagram
check "datagram: 239.1.1.1 joined on the new active port ($a1)" \
	wait_until 10 grep -q "GID: $g .*complete: yes" "$dbg/${a1}_mcg"
check "... and the SA of softib2's fabric has it" \
	wait_until 10 sa_member softib2 "$gid2"
rdma_cm_via "after failover"
ip netns exec b iperf3 -s -D -1 >/dev/null 2>&1
check "datagram: iperf3 through the bond after the failover" \
	wait_until 10 iperf3 -c 10.40.0.2 -t 2 -f m
echo stop >$cma
unbond
replug

# --- connected mode -----------------------------------------------------
check "connected: bonds over both ports, ping across" bonds connected
check "connected: 20000-octet ping through an RC connection" \
	pings 2 -W 5 -s 20000 10.40.0.2
check "... live on softib0's port" grep -q ' live ' "$dbg/${a0}_cm"
ip netns exec b iperf3 -s -D -1 >/dev/null 2>&1
wait_until 5 listening --ns b 5201
mark=$(cat /sys/class/net/bond0/statistics/tx_bytes)
iperf3 -c 10.40.0.2 -t 8 -f m >/tmp/bond.iperf 2>&1 &
iperf_pid=$!
check "connected: iperf3 under way (4 MB sent)" \
	wait_until 5 sent_since bond0 "$mark" 4000000
pull connected
wait "$iperf_pid"
check "connected: iperf3 across the failover completes" test $? = 0
sed -n 's/^/# iperf3: /p' /tmp/bond.iperf | tail -4
check "... its connections now on softib2's port" \
	wait_until 5 grep -q ' live ' "$dbg/${a1}_cm"

# A peer that only sends to us: we keep no entry for it, but its
# connection is busy, so the sweep keeps ours; once it is idle, the sweep
# closes it. b's entries for us are fixed (no probe names b here again).
peer_moved() {	# peer_moved IF [CMD]: cm_peer_moved of IF
	${2:-} ethtool -S "$1" | awk '$1 == "cm_peer_moved:" { print $2 }'
}
moved_a=$(peer_moved "$a1")
for n in 10.40.0.1 fd00:40::1; do
	ip -n b neigh replace "$n" lladdr "$addr_a1" dev bond1 nud permanent
done
ip neigh del 10.40.0.2 dev bond0
ip neigh del fd00:40::2 dev bond0 2>/dev/null
python3 -c 'import socket; s = socket.socket(2, 2)
s.bind(("10.40.0.1", 9999)); s.settimeout(20)
while True: s.recv(65536)' 2>/dev/null &
sink=$!
# (bound first: a datagram to no socket would have us answer, and name b)
sink_bound() {
	[ -n "$(ss -Hlun 'sport = :9999')" ]
}
wait_until 10 sink_bound
rx0=$(cat "/sys/class/net/$a1/statistics/rx_bytes")
rm -f /tmp/udp.stop
# (until told: the sweep looks for 10 s at most after the event below)
timeout 30 ip netns exec b python3 -c 'import socket, time, os
s = socket.socket(2, 2); s.settimeout(0.5)
while not os.path.exists("/tmp/udp.stop"):
	try: s.sendto(bytes(20000), ("10.40.0.1", 9999))
	except OSError: pass
	time.sleep(0.05)  # pacing' &
udp=$!
rx_over() {	# rx_over N: more than N octets received on our active port
	[ "$(cat "/sys/class/net/$a1/statistics/rx_bytes")" -gt "$1" ]
}
check "connected: b's datagrams arrive" wait_until 10 rx_over $((rx0 + 200000))
# a neighbour event: an address we have no connection to (b's other port)
ip neigh replace 10.40.0.99 \
	lladdr "$(ip netns exec b cat "/sys/class/net/$b0/address")" \
	dev bond0 nud reachable
sleep 2.5	# the negative check's window: the sweep comes every second
check "connected: a peer that only sends to us (no entry names it) keeps its connection while busy" \
	test "$(peer_moved "$a1")" = "$moved_a"
check "... our connection to it still live" grep -q ' live ' "$dbg/${a1}_cm"
: >/tmp/udp.stop
wait "$udp"
kill "$sink" 2>/dev/null
a_moved() {
	[ "$(peer_moved "$a1")" = $((moved_a + 1)) ]
}
check "... and once idle, the sweep closes it (cm_peer_moved)" \
	wait_until 5 a_moved
ip neigh del 10.40.0.99 dev bond0
check "... and a new one when we send again" \
	pings 2 -W 5 -s 20000 10.40.0.2

# b's entry moves to another address: its connection to ours closes now
moved0=$(peer_moved "$b1" inb)
# (both entries: one still holding the old address keeps the connection)
for n in 10.40.0.1 fd00:40::1; do
	ip -n b neigh replace "$n" lladdr "$addr_a0" dev bond1 nud reachable
done
moved() {
	[ "$(peer_moved "$b1" inb)" = $((moved0 + 1)) ]
}
# (unnamed on two sweeps in a row, about a second apart)
check "connected: b's neighbour entry moves: its connection to us closes (cm_peer_moved)" \
	wait_until 5 moved
check "... our side learns it from the DREQ" \
	wait_until 2 no_live "$dbg/${a1}_cm"
for n in 10.40.0.1 fd00:40::1; do
	ip -n b neigh replace "$n" lladdr "$addr_a1" dev bond1 nud reachable
done
check "... and back: a new connection" \
	pings 2 -W 5 -s 20000 10.40.0.2

# the cable back: both bonds fail back to their primary, and the ports
# made backup close their connections at once
replug
check "connected: both bonds fail back to softib0-softib1" \
	wait_until 10 both_active_on "$a0" "$b0"
cm_b1=$(echo "$dbg/${b1}"@ns*_cm)	# in namespace b
check "... the ports made backup close their connections at once" \
	wait_until 2 eval "no_live $dbg/${a1}_cm && no_live $cm_b1"
check "... traffic over softib0's fabric again" \
	wait_until 10 pings 1 -W 2 -s 20000 10.40.0.2
check "... live on softib0's port" grep -q ' live ' "$dbg/${a0}_cm"

unbond
ip netns delete b
check "softib_cma, ib_ipoib and bonding unload" sh -c "
	rmmod softib_cma && modprobe -r ib_ipoib && modprobe -r bonding"
opensm_stop "$osm_a"
opensm_stop "$osm_b"
softib_unload
finish
