#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connected-mode set-up on the wire (RFC 4755), two soft-RoCE guests:
# - a real connection A -> B captured on eth0 and decoded by tshark: the
#   REQ's service ID is B's Linux form, and REQ, REP and RTU carry the
#   sender's UD QPN and receive MTU as private data (s6), then our
#   extension: "IPOC" and the capabilities "bidirectional" and "takes
#   checksum-pending packets";
# - hand-made REQs (a made-up UD QPN and QP) from tools/cm_inject with broken private data (none,
#   cut, UD QPN 0, tiny MTU), to both service IDs: each is answered with
#   REJ Consumer Reject carrying B's UD QPN, counted in cm_bad_pdata;
# - a valid hand-made REQ is accepted (REP with B's private data) and the
#   REJ the tool answers it with closes B's side cleanly;
# - REQs crossing (s3.3): both guests start a connection at the same
#   moment, many times; every time exactly one connection results.
# - the other order: one side accepts the peer's REQ, then sends, and
#   its own REQ overtakes its REP; the peer rejects it, and the packet
#   waits for the peer's connection instead of being dropped.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
VM_TIMEOUT=600
CM_INJECT=1
. "$(dirname "$0")/lib.sh"

ipoib_start
idx=$IDX ifc=$IFC
peer=$([ "$ROLE" = A ] && echo 2 || echo 1)
dbg=/sys/kernel/debug/ipoib
echo connected >"/sys/class/net/$ifc/mode"
ip addr add "10.20.0.$idx/24" dev "$ifc"
qpn=$(cut -d: -f2-4 "/sys/class/net/$ifc/address" | tr -d :)
echo "$qpn" >"$SHARED/qpn.$ROLE"
cut -d: -f5- "/sys/class/net/$ifc/address" | tr -d : |
	sed 's/\(....\)/\1:/g; s/:$//' >"$SHARED/gid.$ROLE"
barrier configured


# --- one real connection, captured --------------------------------------
if [ "$ROLE" = A ]; then
	rm -f /tmp/cm.err
	# (--immediate-mode: each packet written as it comes, not when the
	# kernel's buffer block times out, which a stop would lose)
	tcpdump --immediate-mode -U -ni eth0 -w /tmp/cm.pcap udp port 4791 \
		2>/tmp/cm.err &
	tpid=$!
	wait_until 10 grep -q 'listening on' /tmp/cm.err
	check "ping B with 20000 octets (connects)" \
		pings 2 -W 5 -s 20000 10.20.0.2
	# the RTU went before the connection was live
	wait_until 5 grep -q ' live ' "$dbg/${ifc}_cm"
	kill -INT "$tpid"
	wait "$tpid"
	bq=$(cat "$SHARED/qpn.B")
	tshark -r /tmp/cm.pcap -T fields -E separator='|' \
		-e infiniband.mad.attributeid -e infiniband.cm.req.serviceid \
		-e infiniband.cm.req.private -e infiniband.cm.rep.private \
		-e infiniband.cm.rtu.private 2>/tmp/tshark.err |
		tr -d ': ' | grep '^0x' >/tmp/cm.tsv
	log "$(grep -c . /tmp/cm.tsv) CM MADs captured ($(head -c 300 /tmp/tshark.err))"
	sed 's/^/#   /' /tmp/cm.tsv
	# private data: Reserved 00, UD QPN (3 octets), Receive MTU 65524,
	# then the extension: magic "IPOC", capabilities 3 (bidirectional,
	# takes checksum-pending packets)
	ext=49504f4300000003
	check "REQ to B's Linux service ID 0x10000000_00$bq" \
		grep -Eq "^0x0010\|0x1000000000$bq\|" /tmp/cm.tsv
	check "REQ private data: our UD QPN, receive MTU 65524, extension" \
		grep -Eq "^0x0010\|[^|]*\|00${qpn}0000fff4$ext" /tmp/cm.tsv
	check "REP private data: B's UD QPN, receive MTU 65524, extension" \
		grep -Eq "^0x0013\|\|\|00${bq}0000fff4$ext" /tmp/cm.tsv
	check "RTU private data: our UD QPN and MTU (the in-tree sends none)" \
		grep -Eq "^0x0014\|\|\|\|00${qpn}0000fff4$ext" /tmp/cm.tsv
fi
# B's count before A may inject: after the barrier A can be faster
[ "$ROLE" = B ] && bad0=$(stat_of cm_bad_pdata)
barrier captured

# --- hand-made REQs --------------------------------------------------------
if [ "$ROLE" = A ]; then
	check "modprobe ib_umad (for cm_inject)" modprobe ib_umad
	bgid=$(cat "$SHARED/gid.B")
	bq=$(cat "$SHARED/qpn.B")
	: >/tmp/inj.out
	for v in none short bad-qpn tiny-mtu; do
		"$inject" -l 0x7777 -u 0x3333 -n 1 -w 3000 -e 1 -S "0x$bq" "$v" "$bgid" \
			>>/tmp/inj.out 2>&1
	done
	"$inject" -l 0x7777 -u 0x3333 -n 1 -w 3000 -e 1 -R "0x$bq" none "$bgid" >>/tmp/inj.out 2>&1
	sed 's/^/#   /' /tmp/inj.out
	check "5 broken REQs: 5 REJs, Consumer Reject" \
		test "$(grep -c 'reply type=REJ .*reason=28 ' /tmp/inj.out)" = 5
	check "... each with B's UD QPN as private data" \
		test "$(grep -c "reply type=REJ .*pdata=00$bq" /tmp/inj.out)" = 5
	"$inject" -l 0x7777 -u 0x3333 -n 1 -w 5000 -e 1 -j -S "0x$bq" valid "$bgid" \
		>/tmp/valid.out 2>&1
	sed 's/^/#   /' /tmp/valid.out
	check "a valid REQ is accepted: REP from B's QP with its private data" \
		grep -q "reply type=REP .*pdata=00${bq}0000fff4" /tmp/valid.out
	signal injected
else
	wait_for A injected 120
	check "5 broken REQs counted in cm_bad_pdata" \
		test $(($(stat_of cm_bad_pdata) - bad0)) = 5
	check "the REJected REP leaves no connection to the tool's QPN" \
		wait_until 10 sh -c "! grep -q 'QPN: 0x003333' $dbg/${ifc}_cm"
fi
barrier injected-done

# --- a forged REQ -----------------------------------------------------------
# Once A and B have a live connection, a REQ that claims A's identity (its
# GID and UD QPN, to the RFC service ID: one connection per pair) comes
# from cm_inject on A's port, and completes with an RTU. B takes it as a
# connection of its own, but the real one stays, and B's traffic to A
# stays on it: anyone on the partition can claim any GID and QPN.
if [ "$ROLE" = A ]; then
	check "forged: A pings B with 20000 octets (a live connection)" \
		pings 2 -W 5 -s 20000 10.20.0.2
	conns0=$(stat_of cm_connections) fail0=$(stat_of cm_failures)
	"$inject" -l 0x7778 -u "0x$qpn" -n 1 -w 5000 -e 1 -t -R "0x$bq" valid \
		"$bgid" >/tmp/forge.out 2>&1
	sed 's/^/#   /' /tmp/forge.out
	check "forged: B answers the forged REQ with a REP" \
		grep -q "reply type=REP" /tmp/forge.out
	signal forged
	wait_for B forged-checked 90
	check "forged: A's connection to B was neither closed nor replaced" \
		test "$(stat_of cm_connections)/$(stat_of cm_failures)" = "$conns0/$fail0"
	check "... and is live" grep -q "QPN: 0x$bq .* live " "$dbg/${ifc}_cm"
else
	# shellcheck disable=SC2034 # used by the eval below
	aq=$(cat "$SHARED/qpn.A")
	wait_for A forged 90
	sed 's/^/#   /' "$dbg/${ifc}_cm"
	# shellcheck disable=SC2016 # expanded by eval, at each try
	check "forged: B holds the real and the forged connection, both live" \
		wait_until 10 eval '[ "$(grep -c "QPN: 0x$aq .* live " "$dbg/${ifc}_cm")" = 2 ]'
	conns0=$(stat_of cm_connections)
	check "forged: B's pings to A (20000 octets) still go over the real one" \
		pings 2 -W 5 -s 20000 10.20.0.1
	check "... with no new connection" test "$(stat_of cm_connections)" = "$conns0"
	signal forged-checked
fi
barrier forged-done

# --- REQs crossing ----------------------------------------------------------
# Static neighbour entries, so that the first packet of each round goes
# straight to path resolution and a REQ; both start on a shared flag file,
# polled without sleeping; and the RoCE traffic takes 300 ms each way
# (netem on eth0), so that both REQs are in flight at once.
cross_round() {	# cross_round N
	local n=$1 go=$VM_FLAGS/go.$1
	ip link set "$ifc" down
	ip link set "$ifc" up
	wait_until 15 grep -qx 1 "/sys/class/net/$ifc/carrier" || return 1
	ip neigh replace "10.20.0.$peer" dev "$ifc" nud permanent \
		lladdr "$(cat "$SHARED/addr.$([ "$ROLE" = A ] && echo B || echo A)")"
	barrier "cross-ready-$n" || return 1
	[ "$ROLE" = A ] && : >"$go"
	until [ -e "$go" ]; do :; done
	# the first packet waits for the connection, whichever REQ wins
	pings 1 -W 5 -s 20000 "10.20.0.$peer" >"/tmp/cross.$n" ||
		echo "round $n: first packet lost" >>/tmp/cross.lost
	barrier "cross-sent-$n" || return 1
}
cat "/sys/class/net/$ifc/address" >"$SHARED/addr.$ROLE"
modprobe sch_netem
check "netem delay on eth0" tc qdisc add dev eth0 root netem delay 300ms
barrier addr
crossed0=$(stat_of cm_crossed)
rounds=8
bad=0
: >/tmp/cross.lost
# one live connection and nothing else: the crossing's loser, rejected,
# may still be on its way out when the ping returns (seen on 6.1)
one_connection() {
	[ "$(grep -c live "$dbg/${ifc}_cm")" = 1 ] &&
		[ "$(grep -c . "$dbg/${ifc}_cm")" = 1 ]
}
for n in $(seq $rounds); do
	cross_round "$n" || { bad=$((bad + 1)); continue; }
	if ! wait_until 5 one_connection; then
		conns=$(grep -c live "$dbg/${ifc}_cm")
		total=$(grep -c . "$dbg/${ifc}_cm")
		log "round $n: $conns live, $total in all:"
		sed 's/^/#   /' "$dbg/${ifc}_cm"
		bad=$((bad + 1))
	fi
	barrier "cross-checked-$n"
done
crossed=$(($(stat_of cm_crossed) - crossed0))
log "REQs crossed in $crossed of $rounds rounds"
echo "$crossed" >"$SHARED/crossed.$ROLE"
check "every round ends with exactly one connection" test "$bad" = 0
check "... and every round's first packet is answered" \
	sh -c "! grep . /tmp/cross.lost /tmp/cross.[0-9]* && ! grep -q . /tmp/cross.lost"
tc qdisc del dev eth0 root
barrier crossed
if [ "$ROLE" = A ]; then
	c=$(($(cat "$SHARED/crossed.A") + $(cat "$SHARED/crossed.B")))
	log "crossing seen $c times by the two sides"
	check "REQs crossed in 12 or more of the two sides' 16 rounds" \
		test "$c" -ge 12
fi

# --- our REQ crossing our own REP -------------------------------------------
# The other order of a crossing: the interface with the smaller address
# (s3.3: flags zeroed, first octet first), S, accepts L's REQ and only
# then has a packet of its own for L. Its REQ overtakes its REP (S's
# eth0 holds back REP MADs alone, 1.5 s: UDP port 4791 at octet 42 of
# the IPv6 packet, the CM class 0x07 at 69 and attribute 0x0013 at 84 of
# a datagram to QP1), so L, still connecting, rejects it as
# the loser of a crossing. S's packet must then wait for L's connection,
# which carries both directions: not be dropped with S's rejected REQ.
zeroed() {	# an address file's link address with the flags zeroed
	cut -d: -f2- "$SHARED/addr.$1"
}
me=$ROLE other=$([ "$ROLE" = A ] && echo B || echo A)
if [[ "$(zeroed "$me")" > "$(zeroed "$other")" ]]; then
	side=L
else
	side=S
fi
log "rep-cross: $ROLE is $side"
ip link set "$ifc" down
ip link set "$ifc" up
check "rep-cross: carrier" wait_until 15 grep -qx 1 "/sys/class/net/$ifc/carrier"
ip neigh replace "10.20.0.$peer" dev "$ifc" nud permanent \
	lladdr "$(cat "$SHARED/addr.$other")"
# The hold is not scaled by VM_SLOW: it must stay within the driver's own
# fixed bounds, L's REQ closed 2 s after it went out (set-up limit) and
# S's REQ taken as crossing it only within 1 s of that (ipoib_cm.c).
if [ "$side" = S ]; then
	check "rep-cross: S holds back its REP MADs" sh -c "
		tc qdisc add dev eth0 root handle 1: prio &&
		tc qdisc add dev eth0 parent 1:3 handle 30: netem delay 1500ms &&
		tc filter add dev eth0 parent 1: protocol ipv6 u32 \
			match u16 4791 0xffff at 42 match u8 0x07 0xff at 69 \
			match u16 0x0013 0xffff at 84 flowid 1:3"
fi
crossed0=$(stat_of cm_crossed)
barrier rep-cross-ready
if [ "$side" = L ]; then
	check "rep-cross: L's first packet to S is answered" \
		pings 1 -W 5 -s 20000 "10.20.0.$peer"
	check "rep-cross: L rejected S's REQ as a crossing" \
		test $(($(stat_of cm_crossed) - crossed0)) = 1
else
	check "rep-cross: S accepts L's REQ" wait_until 10 grep -q accepting "$dbg/${ifc}_cm"
	check "rep-cross: S's first packet to L, sent then, is answered" \
		pings 1 -W 5 -s 20000 "10.20.0.$peer"
	tc -s filter show dev eth0 | sed 's/^/#   /'
	tc qdisc del dev eth0 root
fi
check "rep-cross: one live connection in the end" wait_until 5 one_connection
barrier rep-crossed

# --- more peers than max_conns, at once --------------------------------------
# With 8192-entry send queues B's send CQ (at most 32767 entries on rxe)
# holds three connections that may send: of six hand-made REQs from six
# claimed peers, three are accepted and three refused (No Resources).
if [ "$ROLE" = B ]; then
	check "B reloads ib_ipoib with send_queue_size=8192" \
		sh -c "modprobe -r ib_ipoib && modprobe ib_ipoib send_queue_size=8192"
	check "... its interface comes up" wait_until 10 ipoib_if rxe0
	ifc=$(ipoib_if rxe0)
	ip link set "$ifc" up
	echo connected >"/sys/class/net/$ifc/mode"
	check "... with carrier" wait_until 15 grep -qx 1 "/sys/class/net/$ifc/carrier"
	cut -d: -f2-4 "/sys/class/net/$ifc/address" | tr -d : >"$SHARED/qpn2.B"
	signal reloaded
	wait_for A flooded 120
	sed 's/^/#   /' "$dbg/${ifc}_cm"
	check "six peers at once: three live connections" \
		test "$(grep -c ' live ' "$dbg/${ifc}_cm")" = 3
	check "... three refused, counted in cm_no_room" test "$(stat_of cm_no_room)" = 3
else
	wait_for B reloaded 120
	bq=$(cat "$SHARED/qpn2.B")
	"$inject" -l 0x7000 -u 0x5000 -N -n 6 -w 8000 -e 6 -t -R "0x$bq" valid \
		"$bgid" >/tmp/flood.out 2>&1
	sed 's/^/#   /' /tmp/flood.out
	check "six REQs: three REPs" test "$(grep -c 'reply type=REP' /tmp/flood.out)" = 3
	check "... and three REJs, No Resources" \
		test "$(grep -c 'reply type=REJ .*reason=3 ' /tmp/flood.out)" = 3
	signal flooded
fi
barrier flooded
check "ib_ipoib unloads" modprobe -r ib_ipoib
check "no RC QP left" sh -c "! rdma resource show qp | grep 'type RC' | grep -q ib_ipoib"
finish
