#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A new GID 0 while the old one is still held, with the test build: on
# RoCE the core deletes the old default GID and adds the new MAC's at
# once, and while anyone holds the old entry (an address handle not yet
# destroyed: here test_gid0_hold, for 2 s) the add fails (-ENOSPC) and the
# core never tries again. B's NIC takes a new MAC under that hold: GID 0
# must come back once the hold ends (the driver asks the core to place it
# again), B's interface must follow it, and A's traffic to B resume. The
# old MAC comes back in connected mode, where every connection holds the
# entry too (its QP's and its cm_id's address vectors): they must let go
# of it, though the port is down when GID 0 goes. Their ids' last MADs
# then break soft-RoCE's QP1 (it sends from GID 0 by index): the log must
# say so, and A's pings are answered over UD. Before that, a connection's
# set-up (ours, then the peer's REQ) is held with GID 0 taken while the
# MAC changes: it must let the old entry go without a word on the wire.
# shellcheck disable=SC2317 # functions run through check or wait_until
GUESTS=2
VM_SMP=2
VM_TIMEOUT=300
TEST_HOOKS=1
. "$(dirname "$0")/lib.sh"

ipoib_start
idx=$IDX ifc=$IFC
param=/sys/module/ib_ipoib/parameters
gid0=/sys/class/infiniband/rxe0/ports/1/gids/0
ip addr add "10.20.0.$idx/24" dev "$ifc"
barrier configured

gid_of_mac() {	# GID 0 of MAC $1, as sysfs prints it
	local h
	h=$(eui64_of_mac "$1")
	echo "fe80:0000:0000:0000:${h:0:4}:${h:4:4}:${h:8:4}:${h:12:4}"
}
gid0_is() {
	[ "$(cat "$gid0" 2>/dev/null)" = "$1" ]
}
gid0_absent() {	# unreadable, or the zero GID of an empty slot
	! grep -q '[1-9a-f]' "$gid0" 2>/dev/null
}
addr_follows() {	# our hardware address ends in GID $1
	local g=${1//:/}
	tr -d : <"/sys/class/net/$ifc/address" | grep -q "$g\$"
}

cm_live() {
	grep -q ' live ' "/sys/kernel/debug/ipoib/${ifc}_cm"
}
closed_gid0_gone() {	# no connection left at all, not even parked
	local f=/sys/kernel/debug/ipoib/${ifc}_cm
	gid0_absent && [ -e "$f" ] && ! grep -q '^GID:' "$f"
}

# new_mac NAME MAC HOLDER: (B) eth0 takes MAC with GID 0 held, by the test
# hook (HOLDER hook) or by a live connection (conn); (A) pings B after
new_mac() {
	local name=$1 mac=$2 holder=$3 gid
	gid=$(gid_of_mac "$mac")
	if [ "$ROLE" = B ]; then
		if [ "$holder" = hook ]; then
			echo 2000 >"$param/test_gid0_hold_ms"
			check "$name: GID 0's entry held" \
				sh -c "echo $ifc >$param/test_gid0_hold"
		else
			check "$name: GID 0 held by a live connection" \
				wait_until 10 cm_live
		fi
		if [ "$holder" = hook ]; then
			ip link set eth0 down && ip link set eth0 address "$mac" &&
				ip link set eth0 up
			check "$name: the new MAC's GID 0 finds its slot taken" \
				gid0_absent
		else
			# the connection closes and goes at once (not parked);
			# GID 0's tries wait for the port
			ip link set eth0 down && ip link set eth0 address "$mac"
			check "$name: the connection closes and goes, GID 0 gone" \
				wait_until 5 closed_gid0_gone
			sleep 2
			check "$name: GID 0 still out 2 s later, the port down" gid0_absent
			ip link set eth0 up
		fi
		check "$name: GID 0 is the new MAC's once the hold ended" \
			wait_until $((10 * VM_SLOW)) gid0_is "$gid"
		check "$name: our hardware address follows it" \
			wait_until 10 addr_follows "$gid"
		check "$name: carrier back" \
			wait_until 20 grep -qx 1 "/sys/class/net/$ifc/carrier"
		[ "$holder" = conn ] &&
			check "$name: the log says closing them breaks soft-RoCE's CM" \
				sh -c 'dmesg | grep -q "CM: GID 0 went while connection ids were open ([1-9]"'
		signal "$name-done"
	else
		wait_for B "$name-done" 120
		check "$name: A's pings to B answered again within 5 s" \
			pings --need 1 25 -i 0.2 -W 1 10.20.0.2
	fi
	barrier "$name-checked"
}

qp1_works() {	# soft-RoCE's QP1 (the CM's MADs) not in the error state
	rdma resource show qp link rxe0/1 lqpn 1 | grep -q 'state RTS'
}
rc_in_setup() {	# an RC QP of ours made, not yet connected
	rdma resource show qp link rxe0/1 | grep 'type RC' | grep -q 'state INIT'
}
stale_once() {	# stale_once N: cm_gid_stale is N + 1
	[ $(($(stat_of cm_gid_stale) - $1)) = 1 ]
}
warned() {
	dmesg | grep -c "CM: GID 0 went while connection ids were open"
}

# setup_mac NAME MAC SIDE: a connection's set-up on B (SIDE ours: B's
# REQ's work; SIDE theirs: the handler of A's REQ) holds GID 0 for 3 s
# (test_cm_gid_delay_ms) while B's eth0 takes MAC: the set-up joins the
# channel list only after the driver closed what was there, so it must
# find GID 0 gone itself and send nothing from the old entry (a MAD from
# it takes QP1 to the error state); B's CM still works after
setup_mac() {
	local name=$1 mac=$2 side=$3 gid w s0
	gid=$(gid_of_mac "$mac")
	if [ "$ROLE" = B ]; then
		w=$(warned) s0=$(stat_of cm_gid_stale)
		echo 3000 >"$param/test_cm_gid_delay_ms"
		if [ "$side" = ours ]; then
			ping -c 1 -W 8 -M "do" -s 30000 10.20.0.1 >/dev/null 2>&1 &
			check "$name: B's set-up under way (its RC QP made)" \
				wait_until 5 rc_in_setup
		else
			signal "$name-go"
			wait_for A "$name-req" 30
		fi
		ip link set eth0 down && ip link set eth0 address "$mac" &&
			ip link set eth0 up
		check "$name: GID 0 is the new MAC's" \
			wait_until $((10 * VM_SLOW)) gid0_is "$gid"
		echo 0 >"$param/test_cm_gid_delay_ms"
		wait
		# (the held set-up met the gone GID: the race was run; the
		# handler of A's REQ may still hold when GID 0 is back)
		check "$name: the set-up found GID 0 gone (cm_gid_stale + 1)" \
			wait_until 10 stale_once "$s0"
		check "$name: carrier back" \
			wait_until 20 grep -qx 1 "/sys/class/net/$ifc/carrier"
		check "$name: B's QP1 still works (nothing sent from the old GID)" \
			qp1_works
		check "$name: no warning (no id was open when GID 0 went)" \
			test "$(warned)" = "$w"
		# (the first ping's packet, left without a connection, went
		# back "too big" and lowered the route's MTU: forgotten)
		ip route flush cache
		[ "$side" = ours ] &&
			check "$name: B's 30000-octet DF pings to A go over a new connection" \
				wait_until 15 pings 1 -M "do" -s 30000 -W 2 10.20.0.1
		signal "$name-done"
	else
		if [ "$side" = theirs ]; then
			wait_for B "$name-go" 60
			ping -c 1 -W 2 -M "do" -s 30000 10.20.0.2 >/dev/null 2>&1 &
			check "$name: A's REQ sent (B's handler holds it)" \
				wait_until 5 grep -q ' active connecting ' \
					"/sys/kernel/debug/ipoib/${ifc}_cm"
			signal "$name-req"
		fi
		wait_for B "$name-done" 120
		wait
		ip route flush cache
		[ "$side" = theirs ] &&
			check "$name: A's 30000-octet DF pings to B go over a new connection" \
				wait_until 15 pings 1 -M "do" -s 30000 -W 2 10.20.0.2
	fi
	barrier "$name-checked"
}

old=$(cat /sys/class/net/eth0/address)
new_mac "new MAC" 52:54:00:12:36:02 hook
echo connected >"/sys/class/net/$ifc/mode"
setup_mac "our REQ's set-up across a MAC change" 52:54:00:12:36:03 ours
# (B's connection to A closes while GID 0 is valid: B's ids go with it)
if [ "$ROLE" = B ]; then
	ip link set "$ifc" down
	ip link set "$ifc" up
fi
check "$ROLE: the connection closed, carrier" \
	wait_until 20 eval "grep -qx 1 /sys/class/net/$ifc/carrier &&
		! grep -q '^GID:' /sys/kernel/debug/ipoib/${ifc}_cm"
barrier closed
setup_mac "a REQ's handler across a MAC change" 52:54:00:12:36:04 theirs
# (a connection from A, which B's side holds)
[ "$ROLE" = A ] && { ping -c 1 -W 5 -s 30000 10.20.0.2 >/dev/null || true; }
new_mac "old MAC back, connected" "$old" conn
finish
