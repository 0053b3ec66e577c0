#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connected-mode churn under traffic, on guests with two vCPUs, with the
# SRQ and then without one (cm_srq=0, a receive ring per connection):
# both guests ping each other with 8000 octets (more than UD carries, so
# every packet needs a connection) while A's end of the connection goes
# away and comes back in a loop (down/up, which drains its connections
# with B's traffic still arriving; a neighbour flush; a mode switch to
# datagram and back) and B flushes its neighbours. Each connection that
# goes must drain by completion and be destroyed: afterwards both guests
# hold exactly the verbs objects (pd, cq, qp, mr, srq) they held before
# the first connection, and a connection comes up again at once.
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
dbg=/sys/kernel/debug/ipoib

live() {
	grep -q ' live ' "$dbg/${ifc}_cm"
}
drained() {	# no connection left, and the verbs objects of before
	! grep -q . "$dbg/${ifc}_cm" && [ "$(verbs)" = "$1" ]
}

churn() {	# churn NAME ROUNDS
	local name=$1 rounds=$2 before pinger i n done=0 t
	echo connected >"$sys/mode"
	ip addr replace "10.20.0.$idx/24" dev "$ifc"
	check "$name: carrier" wait_until 15 has_carrier "$ifc"
	before=$(verbs)
	log "$name: verbs objects before: $before"
	barrier "$name-ready"
	ping -D -n -i 0.02 -s 8000 "10.20.0.$peer" >/tmp/ping.log 2>&1 &
	pinger=$!
	check "$name: a connection" wait_until 20 live
	barrier "$name-live"
	if [ "$ROLE" = A ]; then
		for i in $(seq "$rounds"); do
			ip link set "$ifc" down
			ip link set "$ifc" up
			wait_until 20 has_carrier "$ifc" || break
			wait_until 10 live || break
			ip neigh flush dev "$ifc"
			echo datagram >"$sys/mode"
			echo connected >"$sys/mode"
			wait_until 10 live || break
			done=$((done + 1))
		done
		check "$name: $rounds rounds of down/up, flush and mode switch, each live again" \
			test "$done" = "$rounds"
		check "... live again after the last" live
		signal "$name-done"
	else
		n=0
		until [ -e "$VM_FLAGS/A.$name-done" ]; do
			ip neigh flush dev "$ifc"
			n=$((n + 1))
			sleep 0.3	# pacing: a flush every 0.3 s
			[ "$n" -lt 400 ] || break
		done
		log "$name: $n neighbour flushes on B meanwhile"
	fi
	barrier "$name-churned"
	t=$EPOCHREALTIME
	check "$name: the pings are answered again after the churn" \
		wait_until 10 reply_after /tmp/ping.log "$t"
	kill -INT "$pinger"
	wait "$pinger"
	log "$name: $(tail -2 /tmp/ping.log | head -1)"
	barrier "$name-stopped"
	ip link set "$ifc" down
	ip link set "$ifc" up
	check "$name: carrier after a last down/up" wait_until 20 has_carrier "$ifc"
	sed 's/^/#   /' "$dbg/${ifc}_cm"
	check "$name: it closed every connection and destroyed its QP: none in debugfs, verbs objects as before" \
		wait_until 10 drained "$before"
	log "$name: verbs objects after: $(verbs)"
	barrier "$name-drained"
	check "$name: a connection again" \
		pings 2 -W 5 -s 8000 "10.20.0.$peer"
	barrier "$name-checked"
}

churn srq 4

check "ib_ipoib reloads with cm_srq=0" \
	sh -c "modprobe -r ib_ipoib && modprobe ib_ipoib cm_srq=0"
check "... its interface comes up" wait_until 10 ipoib_if rxe0
ifc=$(ipoib_if rxe0)
sys=/sys/class/net/$ifc
ip link set "$ifc" up
churn nosrq 4

check "ib_ipoib unloads" modprobe -r ib_ipoib
check "no RC QP left" sh -c "! rdma resource show qp | grep 'type RC' | grep -q ib_ipoib"
finish
