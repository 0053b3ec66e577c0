#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer that stops taking data must not hold up the others: one transmit
# queue serves every connection of an interface. Three guests in
# connected mode with the test build: A measures TCP to C (iperf3) alone;
# then B stops reposting its connected-mode receive buffers
# (test_cm_rx_stall), A blasts UDP at B, whose connection meets RNR NAKs
# and fills up, and A measures TCP to C again. A->C keeps at least 80% of
# its throughput, and A's connection to B ends within seconds, counted
# in cm_rnr_failures. (Before: B's full connection stopped A's queue
# until the transmit watchdog restarted the interface.)
GUESTS=3
VM_TIMEOUT=400
TEST_HOOKS=1
. "$(dirname "$0")/lib.sh"

ipoib_start
idx=$IDX ifc=$IFC
param=/sys/module/ib_ipoib/parameters
echo connected >"/sys/class/net/$ifc/mode"
ip addr add "10.20.0.$idx/24" dev "$ifc"
barrier configured

rnr_more() {	# rnr_more N: more than N RNR failures
	[ "$(stat_of cm_rnr_failures)" -gt "$1" ]
}
tcp_to_c() {	# tcp_to_c SECONDS: A->C TCP goodput in Mbit/s
	iperf3 -c 10.20.0.3 -t "$1" -f m 2>&1 |
		awk '/receiver/ { print $7 }'
}

case $ROLE in
A)
	check "A reaches B over a connection" ping -c 2 -W 5 -s 20000 10.20.0.2
	check "A reaches C over a connection" ping -c 2 -W 5 -s 20000 10.20.0.3
	wait_for C listening 60
	base=$(tcp_to_c 6)
	log "A->C alone: $base Mbit/s"
	signal measured
	wait_for B stalled 60
	rnr0=$(stat_of cm_rnr_failures)
	python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
d = b"x" * 60000
end = time.time() + 20
while time.time() < end:
	try:
		s.sendto(d, ("10.20.0.2", 9))
	except OSError:
		pass' &
	blaster=$!
	sleep 1
	during=$(tcp_to_c 8)
	log "A->C while B takes no data: $during Mbit/s (alone: $base)"
	check "A->C keeps at least 80% of its throughput" \
		awk -v a="$base" -v b="$during" 'BEGIN { exit !(a > 0 && b >= 0.8 * a) }'
	check "A's connection to B ends on RNR retries, counted" \
		wait_until 15 rnr_more "$rnr0"
	log "stuck sends dropped (cm_tx_stalled): $(stat_of cm_tx_stalled), RNR failures: $(($(stat_of cm_rnr_failures) - rnr0))"
	kill "$blaster"
	wait "$blaster"
	signal done
	;;
B)
	wait_for A measured 120
	echo 1 >"$param/test_cm_rx_stall"
	signal stalled
	wait_for A done 120
	echo 0 >"$param/test_cm_rx_stall"
	;;
C)
	iperf3 -s -D
	signal listening
	wait_for A done 180
	;;
esac
barrier done
finish
