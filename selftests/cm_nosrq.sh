#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connected mode without a shared receive queue, and a peer that cannot
# take connections at all. soft-RoCE has an SRQ, so A loads with cm_srq=0,
# as on an HCA without one: each of its connections receives into a queue
# of its own, at most max_nonsrq_conn_qp of them. B keeps the defaults.
# Rounds, each after both sides reloaded ib_ipoib:
# 1. own receive queues: big pings and iperf3 TCP both ways over A's
#    connection, A without an SRQ, B with one; A unloads with it live.
# 2. the cap: A allows one such connection (max_nonsrq_conn_qp=1) and B
#    follows the in-tree model (cm_bidir=0: one connection per direction),
#    so A accepts the first and refuses the second with a log line; B
#    still reaches A, over UD.
# 2b. mixed modes: A in datagram mode still accepts B's connection (s7:
#    every mode takes unicast in any mode it supports); B's big packets
#    go over it, A answers over UD at its UD MTU.
# 3. zero flags (RFC 4755 s3.1): with max_nonsrq_conn_qp=0 too, A cannot
#    accept connections: its address says so, "connected" is refused with
#    EINVAL and a log line; B, in connected mode, never connects to it,
#    and a packet too big for UD gets "fragmentation needed" (path MTU
#    discovery, s7.2) instead of vanishing. TCP and big pings still work.
#    B routes, too: its route to A learns A's MTU from the first packet
#    too big, so a source that ignores the ICMP and sends without DF is
#    fragmented by B from the next packet on (ip_forward_use_pmtu=1).
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
VM_TIMEOUT=700
[ "${ROLE:-}" = A ] && IPOIB_MODPARAMS="${IPOIB_MODPARAMS:-} cm_srq=0"
. "$(dirname "$0")/lib.sh"

ipoib_start
idx=$IDX ifc=$IFC
dbg=/sys/kernel/debug/ipoib

# our SRQs in rdma resource (kernel resources name their module)
srqs() {
	rdma resource show srq | grep -c ib_ipoib
}
configure() {	# configure MODE
	echo "$1" >"/sys/class/net/$ifc/mode" &&
		ip addr add "10.20.0.$idx/24" dev "$ifc"
}
# load PARAMS...: ib_ipoib with these parameters, its interface up with
# carrier; reload: the same after unloading it
load() {
	local i
	# shellcheck disable=SC2068 # parameters are words
	modprobe ib_ipoib $@ || return 1
	wait_until 10 ipoib_if rxe0 || return 1
	i=$(ipoib_if rxe0)
	ip link set "$i" up
	wait_until 15 grep -qx 1 "/sys/class/net/$i/carrier"
}
reload() {
	modprobe -r ib_ipoib && load "$@"
}

# B routes for a host in namespace src (veth MTU 9000) that sends 6000
# octets without DF and ignores "fragmentation needed" (ip_no_pmtu_disc=2,
# as hosts behind filters do) to A's second address, which B has never
# sent to. Too big for A's UD MTU: the first is dropped, and the route
# learns the MTU, by which B fragments the others. Forwarding uses a
# learned MTU only with ip_forward_use_pmtu=1; without it (the default)
# nothing would get through, whatever the driver did.
forward_df_clear() {
	local big0

	ip netns add src
	ip link add vsrc type veth peer name vsrc netns src
	ip link set vsrc mtu 9000 up
	ip addr add 10.99.0.1/24 dev vsrc
	ip -n src link set vsrc mtu 9000 up
	ip -n src addr add 10.99.0.2/24 dev vsrc
	ip -n src route add default via 10.99.0.1
	ip netns exec src sysctl -qw net.ipv4.ip_no_pmtu_disc=2
	sysctl -qw net.ipv4.ip_forward=1 net.ipv4.ip_forward_use_pmtu=1
	# B's neighbour entry and path first, with a packet that fits: the
	# first big one must meet a resolved path, or the next would too
	pings 1 -W 5 10.20.0.11 >/dev/null
	big0=$(stat_of tx_too_big)
	pings --need 0 --log /tmp/fwd.log --ns src 4 -i 0.3 -W 5 -M dont \
		-s 6000 10.20.0.11
	sed 's/^/#   /' /tmp/fwd.log
	ip route get 10.20.0.11 | sed 's/^/#   /'
	check "3: forwarded without DF, 6000 octets reach A after the first" \
		grep -q '4 packets transmitted, 3 received' /tmp/fwd.log
	check "3: ... which B's driver dropped as too big" \
		test "$(stat_of tx_too_big)" = $((big0 + 1))
	check "3: ... and B's route to A learnt the UD MTU from it" \
		sh -c "ip route get 10.20.0.11 | grep -q 'mtu 4092'"
	sysctl -qw net.ipv4.ip_forward=0 net.ipv4.ip_forward_use_pmtu=0
	ip netns delete src
}

# --- 1: a receive queue per connection ---------------------------------
configure connected
barrier one-configured
if [ "$ROLE" = A ]; then
	check "1: A pings B (30000 octets)" \
		pings 3 -i 0.3 -W 5 -s 30000 10.20.0.2
	signal one-a-pinged
else
	wait_for A one-a-pinged 60
	check "1: B pings A back (30000 octets)" \
		pings 3 -i 0.3 -W 5 -s 30000 10.20.0.1
fi
barrier one-pinged
iperf3 -s -D -1 >/dev/null 2>&1
barrier one-listening
if [ "$ROLE" = A ]; then
	check "1: iperf3 TCP A -> B" iperf3 -c 10.20.0.2 -t 2 -f m
	signal one-a-done
else
	wait_for A one-a-done 60
	check "1: iperf3 TCP B -> A" iperf3 -c 10.20.0.1 -t 2 -f m
fi
barrier one-iperf-done
sed 's/^/#   /' "$dbg/${ifc}_cm"
if [ "$ROLE" = A ]; then
	check "1: A's connection is live on a receive queue of its own" \
		grep -q ' live MTU: 65520 RQ: own ' "$dbg/${ifc}_cm"
	check "1: A has no SRQ" test "$(srqs)" = 0
	check "1: A's receive buffers: one ring of 256" \
		test "$(stat_of cm_rx_buffers)" = 256
	check "1: A says how many such connections it takes" \
		sh -c "dmesg | grep -Eq 'rxe0: port 1: connected mode without a shared receive queue: at most [0-9]+ connections, 256 receive buffers each'"
else
	check "1: B's connection is live on its SRQ" \
		grep -q ' live MTU: 65520 RQ: srq ' "$dbg/${ifc}_cm"
	check "1: B has its SRQ" test "$(srqs)" = 1
	check "1: B's receive buffers: the SRQ's 256" \
		test "$(stat_of cm_rx_buffers)" = 256
fi
check "1: received without a buffer shortage" test "$(stat_of rx_no_buf)" = 0
barrier one-checked
pkill iperf3
if [ "$ROLE" = A ]; then
	check "1: A unloads with the connection live (its queue drains)" \
		modprobe -r ib_ipoib
	signal one-unloaded
else
	wait_for A one-unloaded 60
	check "1: B sees the connection close" \
		wait_until 15 sh -c "! grep -q live $dbg/${ifc}_cm"
	modprobe -r ib_ipoib
fi
barrier one-done

# --- 2: max_nonsrq_conn_qp=1 towards an in-tree model peer -------------
if [ "$ROLE" = A ]; then
	check "2: A loads with cm_srq=0 max_nonsrq_conn_qp=1" \
		reload cm_srq=0 max_nonsrq_conn_qp=1
else
	check "2: B loads with cm_bidir=0" reload cm_bidir=0
fi
ifc=$(ipoib_if rxe0)
configure connected
barrier two-configured
if [ "$ROLE" = A ]; then
	# B's first reply waits for a connection of B's own, which A
	# refuses: "too big" at UD's MTU on B, which then fragments the rest
	check "2: A pings B (30000 octets) over A's connection: 2 of 3 answered, B's first reply too big for UD" \
		pings --need 2 3 -i 0.3 -W 5 -s 30000 10.20.0.2
	signal two-a-pinged
	wait_for B two-b-pinged 90
	check "2: A refused B's connection and said why" \
		sh -c "dmesg | grep -q 'all 1 receive queues in use (max_nonsrq_conn_qp)'"
	check "2: A keeps exactly its own connection" \
		test "$(grep -c . "$dbg/${ifc}_cm")" = 1
	check "2: ... which is live" grep -q ' active live ' "$dbg/${ifc}_cm"
else
	wait_for A two-a-pinged 60
	# B's own connection to A is refused: since its first reply to A got
	# "too big" at UD's MTU, B's route to A fragments to it
	check "2: B pings A (30000 octets) although A refuses B's connection" \
		pings 4 -i 0.5 -W 5 -s 30000 10.20.0.1
	check "2: B pings A (1000 octets)" pings 2 -W 5 -s 1000 10.20.0.1
	check "2: B's attempts failed" \
		sh -c "ethtool -S $ifc | grep -Eq 'cm_failures: [1-9]'"
	check "2: B has no connection of its own live to A" \
		sh -c "! grep -q ' active live ' $dbg/${ifc}_cm"
	signal two-b-pinged
fi
sed 's/^/#   /' "$dbg/${ifc}_cm"
barrier two-checked
check "2: ib_ipoib unloads" modprobe -r ib_ipoib
barrier two-done

# --- 2b: A in datagram mode still takes B's connection (RFC 4755 s7) ----
if [ "$ROLE" = A ]; then
	check "2b: A loads with cm_srq=0, stays in datagram mode" \
		load cm_srq=0
else
	check "2b: B loads with the defaults" load
fi
ifc=$(ipoib_if rxe0)
configure "$([ "$ROLE" = A ] && echo datagram || echo connected)"
barrier mixed-configured
if [ "$ROLE" = B ]; then
	check "2b: B (connected) pings A (datagram) with 30000 octets" \
		pings 3 -i 0.3 -W 5 -s 30000 10.20.0.1
	check "2b: ... over a connection A accepted" \
		grep -q ' active live MTU: 65520' "$dbg/${ifc}_cm"
	check "2b: a 5000-octet ping that must not fragment goes through" \
		pings 1 -W 5 -M "do" -s 5000 10.20.0.1
	signal mixed-pinged
else
	wait_for B mixed-pinged 90
	check "2b: A took the connection in datagram mode" \
		grep -q ' passive live ' "$dbg/${ifc}_cm"
	check "2b: A's MTU stays the UD MTU" \
		test "$(cat "/sys/class/net/$ifc/mtu")" = 4092
	check "2b: A pings B (3000 octets, over UD)" \
		pings 2 -W 5 -s 3000 10.20.0.2
fi
barrier mixed-checked
check "2b: ib_ipoib unloads" modprobe -r ib_ipoib
barrier mixed-done

# --- 3: A cannot accept connections: zero flags ------------------------
if [ "$ROLE" = A ]; then
	check "3: A loads with cm_srq=0 max_nonsrq_conn_qp=0" \
		load cm_srq=0 max_nonsrq_conn_qp=0
	ifc=$(ipoib_if rxe0)
	check "3: A's address carries zero flags" \
		test "$(cut -d: -f1 "/sys/class/net/$ifc/address")" = 00
	check_fail "3: 'connected' is refused" \
		sh -c "echo connected >/sys/class/net/$ifc/mode"
	check "3: ... with EINVAL" bash -c \
		"echo connected 2>&1 >/sys/class/net/$ifc/mode | grep -q 'Invalid argument'"
	check "3: ... and a log line saying why" \
		sh -c "dmesg | grep -q 'connected mode unavailable on rxe0'"
	configure datagram
else
	check "3: B loads with the defaults" load
	ifc=$(ipoib_if rxe0)
	configure connected
fi
barrier three-configured
iperf3 -s -D -1 >/dev/null 2>&1
barrier three-listening
if [ "$ROLE" = B ]; then
	conns0=$(stat_of cm_connections)
	check "3: B pings A (1000 octets)" pings 2 -W 5 -s 1000 10.20.0.1
	check_fail "3: a 5000-octet ping that must not fragment fails" \
		pings 1 -W 5 -M "do" -s 5000 10.20.0.1
	ip route get 10.20.0.1 | sed 's/^/#   /'
	check "3: ... and B learnt A's path MTU, the UD MTU" \
		sh -c "ip route get 10.20.0.1 | grep -q 'mtu 4092'"
	check "3: B pings A with 30000 octets (fragmented to that MTU)" \
		pings 3 -i 0.3 -W 5 -s 30000 10.20.0.1
	sw0=$(stat_of tx_csum_sw)
	check "3: iperf3 TCP B -> A" iperf3 -c 10.20.0.1 -t 2 -f m
	# connected mode offers checksum offload; UD on rxe cannot carry it
	check "3: B completed its checksums for UD itself" \
		test "$(stat_of tx_csum_sw)" -gt "$sw0"
	check "3: B never connected to A" \
		test "$(stat_of cm_connections)" = "$conns0"
	check "3: no connection in B's debugfs" \
		test "$(grep -c . "$dbg/${ifc}_cm")" = 0
	log "B: tx_too_big $(stat_of tx_too_big)"
	check "3: B answered 'too big' locally" \
		sh -c "ethtool -S $ifc | grep -Eq 'tx_too_big: [1-9]'"
	wait_for A routed 60
	forward_df_clear
	signal forwarded
else
	check "3: A takes a second address, routes 10.99.0.0/24 via B" \
		sh -c "ip addr add 10.20.0.11/24 dev $ifc &&
		       ip route add 10.99.0.0/24 via 10.20.0.2 dev $ifc"
	signal routed
	wait_for B forwarded 120
fi
barrier three-done
pkill iperf3
check "ib_ipoib unloads" modprobe -r ib_ipoib
finish
