#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connection scale: 64 peers' worth of connections into one interface and
# what they cost in memory. A plays the 64 peers with tools/cm_inject
# (REQ k claims UD QPN 0x20000 + k, and an RTU answers each REP, so B's
# end of each connection goes live). B counts them and measures how much
# memory they took: its 64 KiB receive buffers (ethtool cm_rx_buffers)
# and MemAvailable before and after, per connection:
# - with its SRQ (the default), receive buffers are shared: their number
#   stays at recv_queue_size (256) whatever the connections, and a
#   connection costs its QP and send ring, well under a receive ring of
#   even eight such buffers (512 KiB);
# - with cm_srq=0 recv_queue_size=16, each gets a ring of its own of 16
#   buffers (1 MiB), and the figures show it.
# Then B takes them down (interface down) cleanly, every buffer freed.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
VM_TIMEOUT=600
PEERS=64
CM_INJECT=1
. "$(dirname "$0")/lib.sh"

ipoib_start
ifc=$IFC
dbg=/sys/kernel/debug/ipoib

share_addr() {
	cut -d: -f2-4 "/sys/class/net/$ifc/address" | tr -d : >"$SHARED/qpn"
	cut -d: -f5- "/sys/class/net/$ifc/address" | tr -d : |
		sed 's/\(....\)/\1:/g; s/:$//' >"$SHARED/gid"
}
mem_avail() {	# kB
	awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo
}
live() {
	grep -c ' live ' "$dbg/${ifc}_cm"
}
rc_qps() {
	rdma resource show qp | grep 'type RC' | grep -c ib_ipoib
}
srqs() {
	rdma resource show srq | grep -c ib_ipoib
}

# scale_round NAME BUFS0 BUFS1 MAX_KB: A opens PEERS connections to B;
# B checks they are live, that its receive buffers went from BUFS0 to
# BUFS1, and that each connection cost at most MAX_KB
scale_round() {
	local name=$1 bufs0=$2 bufs1=$3 max=$4 mem0 mem1 per
	if [ "$ROLE" = A ]; then
		wait_for B "$name-ready" 60
		# like a CM, send a REQ again after 2 s without answer (-r):
		# the first burst of 64 may lose some on a slow host, its
		# neighbour on eth0 not resolved yet (counted below)
		"$inject" -N -t -r 2000 -n "$PEERS" -l 0x10000 -u 0x20000 \
			-w 30000 -S "0x$(cat "$SHARED/qpn")" valid \
			"$(cat "$SHARED/gid")" >/tmp/inj.out 2>&1
		tail -n 3 /tmp/inj.out | sed 's/^/#   /'
		log "$name: $(grep -c '^resent type=REQ' /tmp/inj.out) REQs sent again, $(grep -c '^again type=REP' /tmp/inj.out) REPs seen again; $(grep -o 'sniffer_drops=.*' /tmp/inj.out)"
		check "$name: $PEERS REQs answered with REP" \
			test "$(grep -c 'reply type=REP ' /tmp/inj.out)" = "$PEERS"
		check "$name: ... and RTU" \
			test "$(grep -c '^sent type=RTU ' /tmp/inj.out)" = "$PEERS"
		signal "$name-injected"
	else
		check "$name: $bufs0 receive buffers before" \
			test "$(stat_of cm_rx_buffers)" = "$bufs0"
		sync
		echo 3 >/proc/sys/vm/drop_caches
		mem0=$(mem_avail)
		signal "$name-ready"
		wait_for A "$name-injected" 120
		check "$name: $PEERS live connections" \
			wait_until 30 sh -c "[ \$(grep -c ' live ' $dbg/${ifc}_cm) = $PEERS ]"
		check "$name: $PEERS RC QPs" test "$(rc_qps)" = "$PEERS"
		sync
		echo 3 >/proc/sys/vm/drop_caches
		mem1=$(mem_avail)
		per=$(((mem0 - mem1) / PEERS))
		log "$name: $PEERS connections took $((mem0 - mem1)) kB: $per kB each (MemAvailable $mem0 -> $mem1 kB); receive buffers $bufs0 -> $(stat_of cm_rx_buffers)"
		check "$name: $bufs1 receive buffers with them" \
			test "$(stat_of cm_rx_buffers)" = "$bufs1"
		check "$name: at most $max kB per connection" test "$per" -le "$max"
		head -n 2 "$dbg/${ifc}_cm" | sed 's/^/#   /'
	fi
	barrier "$name-done"
}

[ "$ROLE" = A ] && check "modprobe ib_umad (for cm_inject)" modprobe ib_umad
[ "$ROLE" = B ] && share_addr
barrier shared

# --- with the SRQ ------------------------------------------------------------
[ "$ROLE" = B ] && check "B has its SRQ" test "$(srqs)" = 1
scale_round srq 256 256 512
if [ "$ROLE" = B ]; then
	ip link set "$ifc" down
	check "srq: down closes them all" test "$(rc_qps)" = 0
	check "srq: ... and frees the SRQ's buffers" test "$(stat_of cm_rx_buffers)" = 0
	modprobe -r ib_ipoib
	check "B loads with cm_srq=0 recv_queue_size=16" \
		modprobe ib_ipoib cm_srq=0 recv_queue_size=16
	check "interface back" wait_until 10 ipoib_if rxe0
	ifc=$(ipoib_if rxe0)
	ip link set "$ifc" up
	check "carrier" wait_until 15 grep -qx 1 "/sys/class/net/$ifc/carrier"
	check "no SRQ now" test "$(srqs)" = 0
	share_addr
fi
barrier reloaded

# --- a receive queue per connection -----------------------------------------
# (each connection's 16 buffers of 64 kB, and as much as the SRQ round's)
scale_round own-rq 0 $((PEERS * 16)) $((16 * 68 + 512))
if [ "$ROLE" = B ]; then
	ip link set "$ifc" down
	check "own-rq: down closes them all" test "$(rc_qps)" = 0
	check "own-rq: ... and frees their buffers" test "$(stat_of cm_rx_buffers)" = 0
	check "own-rq: unload" modprobe -r ib_ipoib
fi
finish
