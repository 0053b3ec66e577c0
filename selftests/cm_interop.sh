#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connected mode towards a peer that follows the in-tree driver's model:
# it sends only on connections it opened, and data arriving on one of
# those would corrupt its receive path. The in-tree driver does not run on
# soft-RoCE, so guest A stands in for it: ib_ipoib cm_bidir=0 behaves the
# same way (its private data says nothing of "bidirectional") and counts
# any message arriving on a connection it opened in cm_rx_misdirected.
# B runs the defaults. Checked:
# - big pings and iperf3 TCP both ways;
# - each side ends with two connections: its own (active), on which it
#   sends, and the peer's (rx-only), on which it only receives;
# - nothing ever arrives on a connection A opened (cm_rx_misdirected 0);
# - a second round after B dropped its connections (interface down/up)
#   starts from B's side and keeps the same rules.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
VM_TIMEOUT=600
[ "${ROLE:-}" = A ] && IPOIB_MODPARAMS="${IPOIB_MODPARAMS:-} cm_bidir=0"
. "$(dirname "$0")/lib.sh"

ipoib_start
idx=$IDX ifc=$IFC
peer=$([ "$ROLE" = A ] && echo 2 || echo 1)
dbg=/sys/kernel/debug/ipoib
bidir=$(cat /sys/module/ib_ipoib/parameters/cm_bidir)
if [ "$ROLE" = A ]; then
	check "A runs with cm_bidir=0" test "$bidir" = N
else
	check "B runs with cm_bidir=1 (the default)" test "$bidir" = Y
fi
echo connected >"/sys/class/net/$ifc/mode"
ip addr add "10.20.0.$idx/24" dev "$ifc"
barrier configured

conns() {	# conns ROLE: live connections of that role in debugfs
	grep -c " $1 live " "$dbg/${ifc}_cm"
}
two_conns() {
	[ "$(conns active)" = 1 ] && [ "$(conns rx-only)" = 1 ] &&
		[ "$(grep -c . "$dbg/${ifc}_cm")" = 2 ]
}
rc_qps() {
	rdma resource show qp | grep 'type RC' | grep -c ib_ipoib
}

# round FIRST: FIRST pings the other with 30000 octets, then the other
# pings back, then iperf3 both ways; each side checks what it ends with.
round() {
	local first=$1 r=$2
	if [ "$ROLE" = "$first" ]; then
		check "$r: $ROLE pings first (30000 octets)" \
			pings 3 -i 0.3 -W 5 -s 30000 "10.20.0.$peer"
		signal "$r-first"
	else
		wait_for "$first" "$r-first" 60
		check "$r: $ROLE pings back (30000 octets)" \
			pings 3 -i 0.3 -W 5 -s 30000 "10.20.0.$peer"
	fi
	barrier "$r-pinged"
	iperf3 -s -D -1 >/dev/null 2>&1
	barrier "$r-listening"
	if [ "$ROLE" = A ]; then
		check "$r: iperf3 TCP A -> B" iperf3 -c 10.20.0.2 -t 2 -f m
		signal "$r-a-done"
	else
		wait_for A "$r-a-done" 60
		check "$r: iperf3 TCP B -> A" iperf3 -c 10.20.0.1 -t 2 -f m
	fi
	barrier "$r-iperf-done"
	sed 's/^/#   /' "$dbg/${ifc}_cm"
	check "$r: one active and one rx-only connection, both live" \
		wait_until 5 two_conns
	check "$r: two RC QPs of ours in rdma resource" test "$(rc_qps)" = 2
	if [ "$ROLE" = A ]; then
		log "$r: cm_rx_misdirected $(stat_of cm_rx_misdirected)"
		check "$r: B sent nothing on a connection A opened" \
			test "$(stat_of cm_rx_misdirected)" = 0
	fi
	barrier "$r-checked"
}

round A one
# B takes its interface down and up: its connections go (the DREQs close
# A's ends too); then B speaks first.
if [ "$ROLE" = B ]; then
	ip link set "$ifc" down
	ip link set "$ifc" up
	check "carrier back" \
		wait_until 15 grep -qx 1 "/sys/class/net/$ifc/carrier"
	check "no connection left after down/up" \
		test "$(grep -c . "$dbg/${ifc}_cm")" = 0
else
	check "both connections closed by B's DREQs" \
		wait_until 10 sh -c "! grep -q live $dbg/${ifc}_cm"
fi
barrier bounced
round B two

log "state of $ifc:"
ethtool -S "$ifc" | grep cm_ | sed 's/^/#   /'
check "ib_ipoib unloads with both connections up" modprobe -r ib_ipoib
check "no RC QP left" test "$(rc_qps)" = 0
finish
