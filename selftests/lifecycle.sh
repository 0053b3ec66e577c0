#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interfaces that come and go in datagram mode, two soft-RoCE guests:
# - a rename moves the debugfs files along;
# - the peer reloads ib_ipoib, so its UD QPN and with it its link-layer
#   address change (RFC 4391 s9.4): our IPv4 and IPv6 traffic to it
#   resumes within a second, because it announces its new address when
#   it is added after carrier, as NetworkManager adds it;
# - (our underlay's ten flaps with DAD on are in connected.sh, which
#   runs on both kernels);
# - the underlay's address becomes a duplicate (DAD fails): carrier stays
#   off and the driver says why, until it is resolved; with no address
#   for GID 0 carrier comes after a 3-s grace, with a warning;
# - addresses come and go on the peer's NIC (soft-RoCE GIDs other than
#   GID 0): its interface keeps carrier;
# - the peer's NIC takes a new MAC, so soft-RoCE's GID 0 changes: its
#   interface follows (new hardware address, announced) and traffic to it
#   resumes;
# - the module is unloaded, or the RDMA device deleted, under iperf3 on the
#   sending and on the receiving side: every time cleanly (the harness
#   fails the test on any kernel warning), and the interface comes back.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
VM_TIMEOUT=700
. "$(dirname "$0")/lib.sh"

ipoib_start
dbg=/sys/kernel/debug/ipoib

# ifc_config: addresses first, then up, as ifupdown does; waits for carrier
ifc_config() {
	IFC=$(ipoib_if rxe0) || return 1
	ip addr add "10.20.0.$IDX/24" dev "$IFC" &&
		ip addr add "fd00:20::$IDX/64" dev "$IFC" nodad &&
		ip link set "$IFC" up &&
		wait_until 15 grep -qx 1 "/sys/class/net/$IFC/carrier"
}

if [ "$ROLE" = A ]; then
	ip link set "$IFC" down
	ip link set "$IFC" name ibren0
	check "debugfs files follow a rename" \
		test -e $dbg/ibren0_mcg -a -e $dbg/ibren0_path -a ! -e "$dbg/${IFC}_mcg"
	ip link set ibren0 name "$IFC"
	check "... and a rename back" \
		test -e "$dbg/${IFC}_mcg" -a ! -e $dbg/ibren0_mcg
	ip link set "$IFC" up
	check "carrier after the renames" \
		wait_until 15 grep -qx 1 "/sys/class/net/$IFC/carrier"
fi
# configured after the renames: a link going down loses its IPv6 addresses
ip link set "$IFC" down
check "configure $IFC" ifc_config
cat "/sys/class/net/$IFC/address" >"$SHARED/addr0.$ROLE"
barrier configured

# --- the peer reloads: its QPN changes -------------------------------------
neigh_is() {	# neigh_is ADDR LLADDR
	ip neigh show "$1" dev "$IFC" | grep -q "lladdr $2"
}
ms() {
	echo $(($(date +%s%N) / 1000000))
}
# in_echos: ICMP echo requests received so far
in_echos() {
	awk '$1 == "Icmp:" && !c { for (i = 2; i <= NF; i++)
		if ($i == "InEchos") c = i; next }
		$1 == "Icmp:" { print $c; exit }' /proc/net/snmp
}
# echo_after T0 MS N: milliseconds from T0 until in_echos exceeds N;
# nothing if that takes MS ms or more
echo_after() {
	local end=$(($1 + $2))
	until [ "$(in_echos)" -gt "$3" ]; do
		[ "$(ms)" -lt $end ] || return 0
		sleep 0.01	# a wait loop's poll
	done
	echo $(($(ms) - $1))
}
carrier_on() {
	grep -qx 1 "/sys/class/net/$IFC/carrier"
}
if [ "$ROLE" = A ]; then
	check "ping IPv4 B" pings 2 -i 0.3 -W 5 10.20.0.2
	check "ping IPv6 B" pings 2 -6 -i 0.3 -W 5 fd00:20::2
	check "the ARP entry of B holds its first address" \
		neigh_is 10.20.0.2 "$(cat "$SHARED/addr0.B")"
	ip neigh show dev "$IFC"
	# B times our pings from its carrier on
	ping -i 0.02 -q 10.20.0.2 >/dev/null 2>&1 &
	ppid=$!
	signal pinged
	wait_for B reloaded 120
	kill $ppid
	wait $ppid 2>/dev/null || true
	new=$(cat "$SHARED/addr.B")
	t0=$(ms)
	check "IPv4 to B goes on" pings 1 -W 1 -q 10.20.0.2
	check "the ARP entry of B holds its new address" neigh_is 10.20.0.2 "$new"
	check "IPv6 to B resumes within 8 s" \
		wait_until 8 pings 1 -6 -W 1 -q fd00:20::2
	log "IPv6 answered $(($(ms) - t0)) ms after B was done"
	check "the ND entry of B holds its new address" neigh_is fd00:20::2 "$new"
	ip neigh show dev "$IFC"
else
	wait_for A pinged 120
	old=$(cat "/sys/class/net/$IFC/address")
	check "modprobe -r ib_ipoib" modprobe -r ib_ipoib
	check "modprobe ib_ipoib" modprobe ib_ipoib
	check "the interface is back" wait_until 10 ipoib_if rxe0
	# this time as NetworkManager does: addresses once carrier is on
	IFC=$(ipoib_if rxe0)
	ip link set "$IFC" up
	# carrier seen within 10 ms, the clock starts there
	i=0
	until carrier_on || [ $i -ge 1500 ]; do
		sleep 0.01	# a wait loop's poll
		i=$((i + 1))
	done
	check "carrier again" carrier_on
	tc=$(ms)
	e0=$(in_echos)
	ip addr add 10.20.0.2/24 dev "$IFC"
	ip addr add fd00:20::2/64 dev "$IFC" nodad
	# (from the address added: the two ip commands take 0.1 to 0.3 s
	# under TCG, which is not the driver's)
	t0=$(ms)
	t=$(echo_after "$t0" 5000 "$e0")
	log "A's pings reached us ${t:-not within 5000} ms after our address was added, $((t0 - tc)) ms after carrier"
	check "A's pings reach us within 1 s of our address, added after carrier, we sending nothing to A" \
		below "$t" $((1000 * VM_SLOW))
	new=$(cat "/sys/class/net/$IFC/address")
	log "address before $old, after $new"
	check "the UD QPN changed" test "${old:3:8}" != "${new:3:8}"
	echo "$new" >"$SHARED/addr.B"
	signal reloaded
fi
barrier reload-done

# --- our underlay's address: a duplicate, then none ---------------------------
# B takes A's eth0 link-local address (GID 0) as well: A's next DAD of it
# fails and the kernel marks it dadfailed, so no RoCE unicast can reach
# A: carrier stays off and the driver says why, until the duplicate is
# gone and eth0 went down and up (only then is the address tried again).
# Then A deletes the address: GID 0 stays, yet no unicast can arrive; as
# on a port without IPv6 where nothing would come, carrier comes after a
# 3-s grace, with a warning.
ll_of() {	# eth0's link-local address, with its prefix length
	ip -6 addr show dev eth0 scope link | awk '/inet6/ { print $2; exit }'
}
dadfailed() {
	ip -6 addr show dev eth0 dadfailed | grep -q inet6
}
klog_count() {	# klog_count REGEX: kernel log lines that match
	dmesg | grep -c "$1" || true
}
if [ "$ROLE" = A ]; then
	ll=$(ll_of)
	echo "$ll" >"$SHARED/ll.A"
	dup=" $IFC: carrier stays off: ${ll%/*} on eth0, a duplicate (DAD failed)"
	dups=$(klog_count "$dup")
	signal ll
	wait_for B dup-added 60
	ip link set eth0 down
	ip link set eth0 up
	check "duplicate underlay address: eth0's DAD of it fails" \
		wait_until 10 dadfailed
	sleep 2	# the window of the negative check: the driver looks each second
	check "... carrier stays off" sh -c "! grep -qx 1 /sys/class/net/$IFC/carrier"
	check "... and the kernel log says why, once" \
		test "$(klog_count "$dup")" = $((dups + 1))
	signal dup-checked
	wait_for B dup-gone 60
	ip link set eth0 down
	ip link set eth0 up
	check "... gone, and eth0 down and up: carrier" wait_until 15 has_carrier "$IFC"
	check "... and B answers" pings 3 -W 2 10.20.0.2
	none=" $IFC: carrier on without GID 0 (${ll%/*}) to be an address of eth0"
	nones=$(klog_count "$none")
	lines=$(dmesg | wc -l)
	ip addr del "$ll" dev eth0
	ip link set "$IFC" down
	ip link set "$IFC" up
	check "no underlay address for GID 0: carrier after a grace" \
		wait_until 15 has_carrier "$IFC"
	check "... of 3 s" sh -c "dmesg | tail -n +$((lines + 1)) |
		sed -n 's/.* $IFC: carrier on (MTU [0-9]*), \([0-9]*\) ms after.*/\1/p' |
		awk '{ n++; ms = \$1 } END { exit !(n == 1 && ms >= 3000) }'"
	check "... with a warning" test "$(klog_count "$none")" = $((nones + 1))
	mon_start
	t=$EPOCHREALTIME
	ip addr add "$ll" dev eth0
	ip link set "$IFC" down
	ip link set "$IFC" up
	# shellcheck disable=SC2016 # expanded by eval, at each try
	check "the address back: carrier" \
		wait_until 15 eval '[ -n "$(mon_ms carrier "$t" "$IFC")" ]'
	kill "$MON_PID"
	wait "$MON_PID" || true
	read -r u ul <<<"$(mon_ms usable "$t" "$IFC")"
	read -r c cl <<<"$(mon_ms carrier "$t" "$IFC")"
	log "the address back: usable after ${u:--} ms, carrier after ${c:--} ms"
	check "... not before the address was out of DAD" \
		carrier_after_usable "${u:--}" "${ul:--}" "${c:--}" "${cl:--}"
	check "... and B answers" pings 3 -W 2 10.20.0.2
else
	wait_for A ll 60
	check "B takes A's eth0 address as well" \
		ip addr add "$(cat "$SHARED/ll.A")" dev eth0 nodad
	signal dup-added
	wait_for A dup-checked 60
	check "... and lets it go" ip addr del "$(cat "$SHARED/ll.A")" dev eth0
	signal dup-gone
fi
barrier dup-done $((60 * VM_SLOW))

# --- addresses on B's underlay: new RoCE GIDs, GID 0 unchanged -------------
# Every IP address of the NIC adds a GID and a GID change event; only a
# new GID 0 concerns IPoIB: carrier stays and traffic flows. (Before: every
# GID event dropped all memberships and carrier.)
has_gid() {	# has_gid SUFFIX: a GID of rxe0 port 1 ends in SUFFIX
	cat /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null | grep -q "$1\$"
}
lacks_gid() { ! has_gid "$1"; }
if [ "$ROLE" = B ]; then
	wait_for A underlay-ready 60
	flaps=$(cat "/sys/class/net/$IFC/carrier_changes")
	ip addr add 192.0.2.2/24 dev eth0
	ip addr add 2001:db8::2/64 dev eth0 nodad
	check "underlay addresses: their GIDs appear" \
		wait_until 10 has_gid ffff:c000:0202
	check "... both (the IPv6 one too)" \
		wait_until 10 has_gid 2001:0db8:0000:0000:0000:0000:0000:0002
	[ "$CHECK_RC" = 0 ] ||
		log "GIDs: $(cat /sys/class/infiniband/rxe0/ports/1/gids/* | sort -u | tr '\n' ' ')"
	check "... traffic to A goes on" pings 2 -W 2 -q 10.20.0.1
	ip addr del 192.0.2.2/24 dev eth0
	ip addr del 2001:db8::2/64 dev eth0
	check "... their GIDs go" wait_until 10 lacks_gid ffff:c000:0202
	check "... traffic to A still goes on" pings 2 -W 2 -q 10.20.0.1
	check "... and carrier never dropped" \
		test "$(cat "/sys/class/net/$IFC/carrier_changes")" = "$flaps"
	signal underlay-done
else
	signal underlay-ready
	wait_for B underlay-done 60
fi
barrier underlay-addr-done

# --- B's GID changes: a new MAC under soft-RoCE ----------------------------
# rxe's GID 0 is the link-local GID of the NIC's MAC; B's interface must
# put the new one in its hardware address and announce it (the port no
# longer accepts the old GID), as it does for a new QPN.
gid_of_mac() {	# the last 8 octets of our address for MAC $1
	local h
	h=$(eui64_of_mac "$1")
	echo "${h:0:2}:${h:2:2}:${h:4:2}:${h:6:2}:${h:8:2}:${h:10:2}:${h:12:2}:${h:14:2}"
}
addr_ends() {	# addr_ends SUFFIX
	grep -q "$1\$" "/sys/class/net/$IFC/address"
}
if [ "$ROLE" = B ]; then
	wait_for A gid-ready 60
	mac=52:54:00:12:35:02
	ip link set eth0 down && ip link set eth0 address $mac &&
		ip link set eth0 up
	check "GID change: the hardware address follows GID 0" \
		wait_until 10 addr_ends "$(gid_of_mac $mac)"
	check "GID change: carrier back" \
		wait_until 10 grep -qx 1 "/sys/class/net/$IFC/carrier"
	cat "/sys/class/net/$IFC/address" >"$SHARED/addr.gid.B"
	log "B's address with the new GID: $(cat "$SHARED/addr.gid.B")"
	signal gid-changed
else
	signal gid-ready
	wait_for B gid-changed 60
	t0=$(ms)
	check "GID change: IPv4 to B resumes within 5 s" \
		wait_until 5 pings 1 -W 1 -q 10.20.0.2
	log "IPv4 resumed $(($(ms) - t0)) ms after B's new GID"
	check "GID change: the ARP entry of B holds its new address" \
		neigh_is 10.20.0.2 "$(cat "$SHARED/addr.gid.B")"
fi
barrier gid-done

# --- unload / device delete under iperf3 -----------------------------------
# restore: module and rxe0 back, the interface configured, carrier on
restore() {
	lsmod | grep -q '^ib_ipoib ' || modprobe ib_ipoib || return 1
	rdma link show rxe0/1 >/dev/null 2>&1 || vm_rxe_add || return 1
	wait_until 10 ipoib_if rxe0 || return 1
	IFC=$(ipoib_if rxe0)
	if ! ip -4 addr show dev "$IFC" | grep -q inet; then
		ip link set "$IFC" down
		ifc_config || return 1
	fi
	grep -qx 1 "/sys/class/net/$IFC/carrier"
}

gone() {
	! ipoib_if rxe0 >/dev/null
}

tx_bytes_over() {	# tx_bytes_over N
	[ "$(cat "/sys/class/net/$IFC/statistics/tx_bytes")" -gt "$1" ]
}

# under_load NAME ACTOR WHAT CMD...: A sends TCP to B with iperf3; once
# a megabyte has gone, ACTOR runs CMD; the interface is gone afterwards and comes back.
under_load() {
	local name=$1 actor=$2 what=$3 tx0
	shift 3
	# (the last scenario's end restored it, checked, unless it failed)
	IFC=$(ipoib_if rxe0) || { check "restore the interface" restore &&
		IFC=$(ipoib_if rxe0); }
	[ "$ROLE" = B ] && iperf3 -s -D -1 >/dev/null 2>&1
	barrier "$name-ready" 120
	if [ "$ROLE" = A ]; then
		tx0=$(cat "/sys/class/net/$IFC/statistics/tx_bytes")
		timeout 40 iperf3 -c 10.20.0.2 -t 30 >/tmp/iperf.log 2>&1 &
		check "iperf3 is moving data" \
			wait_until $((10 * VM_SLOW)) tx_bytes_over $((tx0 + 1000000))
	fi
	barrier "$name-running" 120
	if [ "$ROLE" = "$actor" ]; then
		check "$what while iperf3 runs" "$@"
		check "the interface is gone" wait_until 10 gone
	fi
	barrier "$name-done" 120
	pkill iperf3
	wait
	check "the interface comes back" restore
	IFC=$(ipoib_if rxe0)
	[ "$ROLE" = A ] && check "ping B after $what" \
		wait_until 10 pings 1 -W 1 -q 10.20.0.2
	barrier "$name-checked" 120
}

under_load tx-unload A "sender: modprobe -r ib_ipoib" modprobe -r ib_ipoib
under_load tx-rxedel A "sender: rdma link delete rxe0" rdma link delete rxe0
under_load rx-unload B "receiver: modprobe -r ib_ipoib" modprobe -r ib_ipoib
under_load rx-rxedel B "receiver: rdma link delete rxe0" rdma link delete rxe0

check "ib_ipoib unloads" modprobe -r ib_ipoib
finish
