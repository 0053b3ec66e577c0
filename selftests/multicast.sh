#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# IP multicast over IPoIB (RFC 4391 s4, s10) between two soft-RoCE guests:
# A sends to two groups; B joined one of them and receives it, and
# receives nothing of the other (it has no such group: its QP is not
# attached); after B leaves, the group is gone from B's ibX_mcg. IPv4 and
# IPv6. Then port events: B's NIC goes down and up; carrier follows and
# traffic resumes.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
VM_TIMEOUT=400
. "$(dirname "$0")/lib.sh"

mc=$IPOIB_TOP/selftests/mcast_udp.py
ipoib_start
idx=$IDX ifc=$IFC
ip addr add "10.20.0.$idx/24" dev "$ifc"
ip addr add "fd00:20::$idx/64" dev "$ifc" nodad
mount -t debugfs none /sys/kernel/debug 2>/dev/null
mcg=/sys/kernel/debug/ipoib/${ifc}_mcg
check "debugfs lists the joined broadcast group" \
	grep -q "GID: ff12:401b:ffff::ffff:ffff .*complete: yes" "$mcg"

# group MGIDs (RFC 4391 s4): low 28 bits of 239.1.2.x, low 80 of ff05::424x
v4_mgid="ff12:401b:ffff::f01:203" v4_other="ff12:401b:ffff::f01:204"
v6_mgid="ff12:601b:ffff::4242" v6_other="ff12:601b:ffff::4243"

mcast_round() {	# mcast_round GROUP MGID OTHER OTHER_MGID NAME
	local group=$1 mgid=$2 other=$3 other_mgid=$4 name=$5
	case $ROLE in
	A)
		wait_for B "$name-ready" 60
		python3 "$mc" send "$group" 5000 "$ifc" 20 &
		python3 "$mc" send "$other" 5001 "$ifc" 20
		wait
		signal "$name-sent"
		;;
	B)
		python3 "$mc" recv "$group" 5000 "$ifc" 25 >"/tmp/rx.$name" &
		# what the interface receives, joined by IP or not: the IP
		# stack would drop the other group's datagrams whatever the
		# driver did, a packet socket sees them
		python3 "$mc" sniff "$group" 5000 "$ifc" 25 >"/tmp/sn.$name" &
		python3 "$mc" sniff "$other" 5001 "$ifc" 25 >"/tmp/rx-other.$name" &
		# (three python3 start-ups under TCG: seen over 10 s on a
		# slow host; a wait, not a bound)
		check "$name: the receiver and both packet sockets ready" \
			wait_until $((30 * VM_SLOW)) eval "grep -q ready /tmp/rx.$name &&
			grep -q ready /tmp/sn.$name && grep -q ready /tmp/rx-other.$name"
		check "$name: group joined on the fabric" \
			wait_until $((10 * VM_SLOW)) grep -q "GID: $mgid .*complete: yes" "$mcg"
		signal "$name-ready"
		wait_for A "$name-sent" 60
		# (the last may still be on its way up: a poll, not a bound)
		wait_until 5 eval "[ \$(grep -c '^rx' /tmp/rx.$name) = 20 ] &&
			[ \$(grep -c '^rx' /tmp/sn.$name) = 20 ]"
		kill %1 %2 %3 2>/dev/null; wait
		log "$name: member received $(grep -c '^rx' "/tmp/rx.$name") of 20"
		log "$name: the interface received $(grep -c '^rx' "/tmp/sn.$name") of the group's 20, $(grep -c '^rx' "/tmp/rx-other.$name") of the other's"
		check "$name: the member receives all 20 of the group's datagrams" \
			test "$(grep -c '^rx' "/tmp/rx.$name")" = 20
		check "$name: a group not joined is not in ibX_mcg" \
			sh -c "! grep -q 'GID: $other_mgid' $mcg"
		check "$name: ... and the interface receives none of its 20 (a packet socket, which saw the joined group's 20)" \
			test "$(grep -c '^rx' "/tmp/rx-other.$name")" = 0 -a \
				"$(grep -c '^rx' "/tmp/sn.$name")" = 20
		check "$name: after the leave the group is gone" \
			wait_until 10 sh -c "! grep -q 'GID: $mgid' $mcg"
		;;
	esac
	barrier "$name-done"
}

barrier configured
mcast_round 239.1.2.3 "$v4_mgid" 239.1.2.4 "$v4_other" ipv4
mcast_round ff05::4242 "$v6_mgid" ff05::4243 "$v6_other" ipv6

# Port events: B's NIC goes down and comes back under ping from A.
case $ROLE in
A)
	wait_for B nic-cycled 90
	check "ping B after its port came back" pings 3 -W 5 10.20.0.2
	;;
B)
	check "ping A before the port event" pings 2 -W 5 10.20.0.1
	ip link set eth0 down
	check "carrier goes off with the port" \
		wait_until 10 grep -qx 0 "/sys/class/net/$ifc/carrier"
	ip link set eth0 up
	t0=$(date +%s%N)
	check "carrier comes back with the port" \
		wait_until 20 grep -qx 1 "/sys/class/net/$ifc/carrier"
	ms=$((($(date +%s%N) - t0) / 1000000))
	log "carrier back ${ms} ms after eth0 up (includes rxe's own port bring-up)"
	echo "$ms" >"$SHARED/carrier_ms"
	# the driver's part: from the port's ACTIVE to carrier, kernel clock
	dmesg | awk -v ifc="$ifc" '
		/rxe0: set active/ { sub(/^\[ */, ""); t = $1 + 0 }
		index($0, ifc ": joined the broadcast group, carrier on") {
			sub(/^\[ */, ""); c = $1 + 0 }
		END { if (t && c) printf "# [B] carrier on %.0f ms after rxe0 port ACTIVE\n", (c - t) * 1000 }'

	check "ping A after the port came back" pings 3 -W 5 10.20.0.1
	signal nic-cycled
	;;
esac
# Send-only groups are bounded (max_sendonly, here 256): A sends one
# datagram to each of 256 groups it never joins, then, once they are
# joined, to one more, then to 43 more: each of those makes the least
# recently used joined one leave (older send-only groups from before
# first, then the first of the 256); the last 256 stay, and nothing is
# dropped.
sendonly() {	# sendonly N: N send-only groups in debugfs, all joined
	test "$(grep 'send_only: yes' "$mcg" | grep -c 'complete: yes')" = "$1" &&
		test "$(grep -c 'send_only: yes' "$mcg")" = "$1"
}
# has_group IPV4: its MGID in debugfs (RFC 4391 s4: the group's low 28
# bits after ff12:401b:ffff::, as %pI6c prints them; not for groups whose
# bits 16..27 are all zero)
has_group() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	grep -q "^GID: ff12:401b:ffff::$(printf '%x:%x' \
		$(((a & 15) << 8 | b)) $((c << 8 | d))) " "$mcg"
}
lacks_group() { ! has_group "$1"; }
# send_to FIRST COUNT: one datagram to each of 239.3.x.y, groups FIRST ..
send_to() {
	python3 - "$ifc" "$1" "$2" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, sys.argv[1].encode())
for i in range(int(sys.argv[2]), int(sys.argv[2]) + int(sys.argv[3])):
    s.sendto(b"x", ("239.3.%d.%d" % (i // 200, i % 200 + 1), 5000))
PY
}
if [ "$ROLE" = A ]; then
	param=/sys/module/ib_ipoib/parameters/max_sendonly
	max0=$(cat $param)
	limit0=$(stat_of tx_mcast_limit)
	drop0=$(stat_of tx_dropped)
	ev0=$(stat_of mcast_sendonly_evicted)
	# send-only groups from before: older, the first to leave
	s0=$(grep -c 'send_only: yes' "$mcg")
	echo 256 >$param
	send_to 0 256
	check "256 send-only groups, joined" wait_until $((10 * VM_SLOW)) sendonly 256
	send_to 256 1
	# (the 257th alone: at the bound exactly, one leaves for it; a
	# burst would hide one too many, the later ones evicting two)
	check "... and one more: 256, the least recently used one has left" \
		wait_until $((10 * VM_SLOW)) sendonly 256
	send_to 257 43
	check "... and 43 more: 256 once the least recently used have left" \
		wait_until $((10 * VM_SLOW)) sendonly 256
	# (an older one may leave as idle, after 60 s unused, not evicted)
	ev=$(($(stat_of mcast_sendonly_evicted) - ev0))
	# (and one more for each older group the stack used again after it
	# left, such as its IGMP or MLD reports' group: joined anew)
	back=$(grep 'send_only: yes' "$mcg" | grep -vc 'GID: ff12:401b:ffff::f03:')
	s0=$((s0 + back))
	check "... $ev, 44 to $((s0 + 44)), left for newer ones (mcast_sendonly_evicted)" \
		test "$ev" -ge 44 -a "$ev" -le $((s0 + 44))
	check "... the first group is gone" lacks_group 239.3.0.1
	check "... the last stays" has_group 239.3.1.100
	check "... nothing dropped (tx_mcast_limit, tx_dropped)" \
		test "$(stat_of tx_mcast_limit) $(stat_of tx_dropped)" = "$limit0 $drop0"
	echo 65537 >$param
	check "max_sendonly is at most 65536" test "$(cat $param)" = 65536
	echo "$max0" >$param
	check "unicast still flows" pings 2 -W 5 10.20.0.2
fi
barrier end
log "state of $ifc:"
ethtool -S "$ifc" | sed 's/^/#   /'
ip neigh show dev "$ifc" | sed 's/^/#   /'
sed 's/^/#   /' "$mcg" "/sys/kernel/debug/ipoib/${ifc}_path" | head -n 40
finish
