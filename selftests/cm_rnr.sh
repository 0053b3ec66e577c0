#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer that stops taking data must not hold up the others: one transmit
# queue serves every connection of an interface. Two guests in connected
# mode with the test build; B has two interfaces on the same partition,
# ib0 (10.20.0.2) and an rtnl child sharing its P_Key (10.21.0.2), which
# are two peers for A. B's child stops reposting its connected-mode
# receive buffers (test_cm_rx_stall); A sends TCP to B's ib0 (iperf3),
# and seven seconds in starts blasting UDP at the child, whose connection
# meets RNR NAKs and fills up. A->B keeps at least half of its throughput
# (the mean of one-second samples before and after; the driver's target is
# 80%, which guests taking turns on one QEMU thread per guest do not
# reliably show: the figure is logged), and A's connection to
# the child fails within seconds, counted in cm_failures (cm_rnr_failures
# on HCAs that report RNR retries exceeded; rxe reports transport retries
# exceeded). (Before: the full connection stopped A's only queue until
# the transmit watchdog restarted the interface.)
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
VM_SMP=2
VM_TIMEOUT=400
TEST_HOOKS=1
. "$(dirname "$0")/lib.sh"

ipoib_start
idx=$IDX ifc=$IFC
param=/sys/module/ib_ipoib/parameters
echo connected >"/sys/class/net/$ifc/mode"
ip addr add "10.20.0.$idx/24" dev "$ifc"
if [ "$ROLE" = A ]; then
	ip addr add 10.21.0.1/24 dev "$ifc"
else
	# each interface answers ARP for its own address only
	sysctl -qw net.ipv4.conf.all.arp_ignore=1
	check "B: a child sharing the P_Key" \
		ip link add link "$ifc" name "$ifc.s" type ipoib mode connected
	ip addr add 10.21.0.2/24 dev "$ifc.s"
	ip link set "$ifc.s" up
	check "... with carrier" \
		wait_until 15 grep -qx 1 "/sys/class/net/$ifc.s/carrier"
	iperf3 -s -D -B 10.20.0.2
fi
barrier configured

failed_more() {	# failed_more N: more than N connection failures
	[ "$(stat_of cm_failures)" -gt "$1" ]
}
# per_second FILE FROM TO [all]: the mean (or the list) of iperf3's
# one-second goodputs (Mbit/s) whose interval starts in [FROM, TO). Both
# windows come from one TCP stream, back to back: the guests' speed
# drifts between runs, and single seconds swing by half.
per_second() {
	python3 -c 'import json, statistics, sys
iv = json.load(open(sys.argv[1]))["intervals"]
lo, hi = float(sys.argv[2]), float(sys.argv[3])
v = [i["sum"]["bits_per_second"] / 1e6 for i in iv
     if lo <= i["sum"]["start"] < hi]
if len(sys.argv) > 4:
    print(" ".join("%.0f" % x for x in v))
else:
    print("%.1f" % statistics.mean(v) if v else 0)' "$@"
}

if [ "$ROLE" = A ]; then
	check "A reaches B's ib0 over a connection" \
		pings 2 -W 5 -s 20000 10.20.0.2
	check "A reaches B's child over a connection" \
		pings 2 -W 5 -s 20000 10.21.0.2
	check "... two peers, two connections" \
		test "$(grep -c ' live ' "/sys/kernel/debug/ipoib/${ifc}_cm")" = 2
	signal connected
	wait_for B stalled 60
	fail0=$(stat_of cm_failures) rnr0=$(stat_of cm_rnr_failures)
	# 19 s of TCP to B's ib0; from second 7 on, UDP to the stalled child
	iperf3 -c 10.20.0.2 -t 19 -i 1 -J >/tmp/tcp.json 2>&1 &
	tcp=$!
	sleep 7	# pacing: 7 s of TCP alone, the baseline, before the blast
	python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
d = b"x" * 60000
end = time.time() + 13
while time.time() < end:
	try:
		s.sendto(d, ("10.21.0.2", 9))
	except OSError:
		pass
	time.sleep(0.01)  # pacing' &
	blaster=$!
	wait "$tcp"
	base=$(per_second /tmp/tcp.json 1 7)
	during=$(per_second /tmp/tcp.json 9 19)
	log "A->B mean per second: alone $base Mbit/s, while B's child takes no data $during Mbit/s; each second: $(per_second /tmp/tcp.json 0 99 all)"
	log "A->B during the stall: $(awk -v a="$base" -v b="$during" 'BEGIN { printf "%.0f", 100 * b / a }')% of its throughput alone"
	check "A->B keeps at least half of its throughput (not stopped by the stuck peer)" \
		awk -v a="$base" -v b="$during" 'BEGIN { exit !(a > 0 && b >= 0.5 * a) }'
	# rxe gives up with "retry exceeded", real HCAs with "RNR retry exceeded"
	check "A's connection to the child fails within seconds, counted" \
		wait_until 15 failed_more "$fail0"
	log "stuck sends dropped (cm_tx_stalled): $(stat_of cm_tx_stalled), failures: $(($(stat_of cm_failures) - fail0)), of them RNR: $(($(stat_of cm_rnr_failures) - rnr0))"
	kill "$blaster" 2>/dev/null
	wait "$blaster"
	signal "done"
else
	wait_for A connected 120
	echo "$ifc.s" >"$param/test_cm_rx_stall"
	signal stalled
	wait_for A "done" 120
	echo >"$param/test_cm_rx_stall"
	ip link del "$ifc.s"
fi
barrier "done"
finish
