#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Transmit against the datapath's own teardown, on guests with two vCPUs
# (a race needs two CPUs to interleave) and the test build of the module
# (make TEST_HOOKS=1, never installed). Its test_restart restarts a
# datapath, on another CPU, while a transmit holds (test_xmit_hold_ms)
# between its look at the QP state and its post, and the restart holds
# (test_restart_gap_ms) between teardown and bring-up: a restart that
# does not first stop transmit and wait for it (netif_tx_disable,
# synchronize_net) has that send post into the rings it freed (an Oops:
# the ring pointer is NULL by then). While A pings B, in a loop:
# 1. A's datapath restarts (the reset work's path, which a transmit
#    timeout, a QP error or a P_Key change takes; here test_restart);
# 2. A flushes its neighbours, switches to connected mode and back, and
#    goes down and up;
# 3. A sends a burst of 20 datagrams to B while its path to B resolves
#    (test_path_delay_ms holds the resolution 1 s; B's address is a
#    permanent neighbour, so no ARP holds them): the path keeps the
#    newest 8, as the kernel's neighbour queue does, since after an
#    outage that queue hands over its backlog in one burst and what is
#    sent next matters more;
# then traffic flows both ways and A holds as many verbs objects as
# before.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
VM_SMP=2
VM_TIMEOUT=600
TEST_HOOKS=1
. "$(dirname "$0")/lib.sh"

ipoib_start
idx=$IDX ifc=$IFC
peer=$([ "$ROLE" = A ] && echo 2 || echo 1)
sys=/sys/class/net/$ifc
param=/sys/module/ib_ipoib/parameters
ip addr add "10.20.0.$idx/24" dev "$ifc"
cat "$sys/address" >"$SHARED/$ROLE.lladdr"
barrier configured
check "ping $peer" pings 2 -i 0.2 -W 5 "10.20.0.$peer"
barrier pinged

restarted() {	# restarted N: N restarts done and carrier back
	[ "$(stat_of restarts)" -ge "$1" ] && has_carrier "$ifc"
}

rounds=15
if [ "$ROLE" = A ]; then
	before=$(verbs)
	log "verbs objects before: $before"
	# the send held at the restart resumes 300 ms later, well within the
	# restart's 1 s gap unless the restart waited for it
	echo 300 >"$param/test_xmit_hold_ms"
	echo 1000 >"$param/test_restart_gap_ms"
	ping -D -n -i 0.01 -s 1000 10.20.0.2 >/tmp/ping.log 2>&1 &
	pinger=$!
	n0=$(stat_of restarts)
	o0=$(cat "$param/test_xmit_overlaps")
	for i in $(seq $rounds); do
		echo "$ifc" >"$param/test_restart"
		wait_until 20 restarted $((n0 + i)) || break
	done
	check "1: $rounds restarts under traffic, carrier back after each" \
		restarted $((n0 + rounds))
	# the race is on only where the teardown met the held send
	o=$(($(cat "$param/test_xmit_overlaps") - o0))
	log "restarts whose teardown began under a held transmit: $o of $rounds"
	check "... at least 10 of them began under a held transmit" \
		test "$o" -ge 10
	echo 0 >"$param/test_restart_gap_ms"
	echo 0 >"$param/test_xmit_hold_ms"
	for i in $(seq 5); do
		ip neigh flush dev "$ifc"
		echo connected >"$sys/mode"
		echo datagram >"$sys/mode"
		ip link set "$ifc" down
		ip link set "$ifc" up
		wait_until 20 has_carrier "$ifc" || break
	done
	check "2: neighbour flushes, mode switches and down/up under traffic" \
		has_carrier "$ifc"
	t=$EPOCHREALTIME
	check "... and the pings are answered again after them" \
		wait_until 10 reply_after /tmp/ping.log "$t"
	kill "$pinger"
	wait
	tail -n 3 /tmp/ping.log | sed 's/^/#   /'

	# 3: a fresh path (down flushes them), held while the burst comes
	ip link set "$ifc" down
	ip link set "$ifc" up
	check "3: carrier" wait_until 20 has_carrier "$ifc"
	ip neigh replace 10.20.0.2 lladdr "$(cat "$SHARED/B.lladdr")" \
		nud permanent dev "$ifc"
	echo $((1000 * VM_SLOW)) >"$param/test_path_delay_ms"
	signal burst-next
	wait_for B rx-ready 60
	d0=$(stat_of tx_no_path)
	for i in $(seq 20); do
		echo "$i" >/dev/udp/10.20.0.2/9999
	done
	check "3: the 12 over the path's 8 dropped, counted (tx_no_path)" \
		test $(($(stat_of tx_no_path) - d0)) = 12
	signal burst-sent
	wait_for B burst-checked 60
	echo 0 >"$param/test_path_delay_ms"
	ip neigh del 10.20.0.2 dev "$ifc"
	ip link set "$ifc" down
	ip link set "$ifc" up
	check "carrier after a last down/up" wait_until 20 has_carrier "$ifc"
	check "ping B" wait_until 10 pings 1 -W 1 -q 10.20.0.2
	after=$(verbs)
	log "verbs objects after: $after"
	check "as many verbs objects as before" test "$after" = "$before"
	signal "done"
else
	wait_for A burst-next $((VM_TIMEOUT - 120))
	# each datagram a line; done 3 s after the last (at most 20 s)
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.20.0.2", 9999))
open("/tmp/rx-ready", "w").close()
s.settimeout(20)
end = time.time() + 20
try:
	while time.time() < end:
		print(s.recv(64).decode().strip(), flush=True)
		s.settimeout(3)
except socket.timeout:
	pass' >/tmp/burst.txt &
	rx=$!
	wait_until 20 test -e /tmp/rx-ready
	signal rx-ready
	wait_for A burst-sent 60
	wait "$rx"
	log "3: B received: $(tr '\n' ' ' </tmp/burst.txt)"
	check "3: B gets the burst's newest 8 (13 to 20), in order" \
		test "$(tr '\n' ' ' </tmp/burst.txt)" = "$(seq -s ' ' 13 20) "
	signal burst-checked
	wait_for A "done" $((VM_TIMEOUT - 60))
	check "ping A" pings 2 -i 0.2 -W 5 10.20.0.1
fi
barrier end
check "ib_ipoib unloads" modprobe -r ib_ipoib
finish
