#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Receive buffers when memory runs out, with the test build: B's next
# refills in NAPI find no page (test_rx_nopage), as under memory pressure
# with the page pool empty. Each such packet is dropped and counted in
# rx_no_buf, and its slot goes back to the HCA with the page it had: the
# packets after it, enough to come round the whole ring again, arrive
# intact (a slot posted without its page would have the HCA write into a
# page the stack owns, and the next packet in it crash the receiver). In
# datagram mode, then connected mode; then both go down cleanly.
GUESTS=2
VM_SMP=2
VM_TIMEOUT=400
TEST_HOOKS=1
. "$(dirname "$0")/lib.sh"

ipoib_start
idx=$IDX ifc=$IFC
param=/sys/module/ib_ipoib/parameters
ip addr add "10.20.0.$idx/24" dev "$ifc"
barrier configured

# nopage_round NAME FAILS SIZE COUNT: B's next FAILS refills fail while A
# sends COUNT pings of SIZE octets (above the 256-octet copy limit: each
# takes its page up the stack); then COUNT more, all answered
nopage_round() {
	local name=$1 fails=$2 size=$3 count=$4 nobuf0 got
	if [ "$ROLE" = B ]; then
		nobuf0=$(stat_of rx_no_buf)
		echo "$fails" >"$param/test_rx_nopage"
		signal "$name-armed"
		wait_for A "$name-sent" 120
		got=$(($(stat_of rx_no_buf) - nobuf0))
		log "$name: rx_no_buf +$got, refills left to fail: $(cat "$param/test_rx_nopage")"
		check "$name: B dropped and counted $fails packets for want of a page" \
			test "$got" = "$fails"
		echo 0 >"$param/test_rx_nopage"
		signal "$name-counted"
	else
		wait_for B "$name-armed" 60
		pings "$count" -q -i 0.01 -W 2 -s "$size" 10.20.0.2 >/dev/null || true
		signal "$name-sent"
		wait_for B "$name-counted" 60
		check "$name: then every slot of B's ring again, all answered" \
			pings "$count" -q -i 0.01 -W 5 -s "$size" 10.20.0.2
	fi
	barrier "$name-done"
}

if [ "$ROLE" = A ]; then
	check "ping B" pings 2 -i 0.2 -W 5 10.20.0.2
fi
barrier pinged
# 300 > recv_queue_size (256): the ring comes round again
nopage_round datagram 64 900 300

echo connected >"/sys/class/net/$ifc/mode"
barrier connected
if [ "$ROLE" = A ]; then
	check "connected: ping B over a connection" \
		pings 2 -i 0.2 -W 5 -s 20000 10.20.0.2
fi
barrier cm-pinged
nopage_round connected 16 20000 300

ip link set "$ifc" down
check "down after it all" test "$(cat "/sys/class/net/$ifc/operstate")" = down
finish
