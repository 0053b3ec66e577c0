#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The InfiniBand test fabric: tools/softib's two soft HCAs, cabled port to
# port in one guest, swept by Debian's opensm. The SM brings both ports
# from INIT to ACTIVE with LIDs (the sweep is timed), the SA answers a
# PathRecord between them, and ib_ipoib joins the broadcast group that
# opensm created from its partitions.conf, through the SA, on both ports.
# The two interfaces, in two network namespaces, then ping, ping6 and
# iperf3 in datagram mode over the SA's path (which debugfs shows as the
# SA gave it) and in connected mode over an RC connection set up by ib_cm.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=1
VM_SMP=1
VM_TIMEOUT=240
SOFTIB=1
NEEDS="opensm saquery ibstat"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ib_lib.sh"

check "modprobe ib_umad, insmod softib: two devices" softib_load
check "... cabled: both ports INIT, link up, before any SM" both_init
check "... link layer InfiniBand" \
	grep -qx InfiniBand "$sysib/softib0/ports/1/link_layer"

# The SM on softib0's port; the default partition makes the IPoIB
# broadcast group (ipoib flag), at 4096-byte MTU (mtu=5) and 40 Gb/s (rate=7).
rm -rf /tmp/osm-*	# a guid2lid file from an earlier test of this boot
cat >/tmp/partitions.conf <<'EOF'
Default=0x7fff, ipoib, mtu=5, rate=7 : ALL=full;
EOF
t0=$(date +%s.%N)
opensm_start "$guid0"
check "opensm sweeps both ports to ACTIVE" wait_until 60 both_active
[ "$CHECK_RC" = 0 ] || opensm_log "$guid0"
sweep=$(echo "$(date +%s.%N) - $t0" | bc)
log "sweep: opensm start to both ports ACTIVE in $sweep s"

lid0=$(cat "$sysib/softib0/ports/1/lid")
lid1=$(cat "$sysib/softib1/ports/1/lid")
check "the ports have distinct non-zero LIDs ($lid0, $lid1)" \
	test "$lid0" != 0x0 -a "$lid1" != 0x0 -a "$lid0" != "$lid1"
check "softib1 knows softib0 as its SM" \
	test "$(cat "$sysib/softib1/ports/1/sm_lid")" = "$lid0"
check "ibstat: softib1 Active, LinkUp" \
	sh -c "ibstat softib1 | grep -q 'State: Active' &&
	       ibstat softib1 | grep -q 'Physical state: LinkUp'"
check "softib0 is the SM's port (IsSM in its capability mask)" \
	test $(($(cat "$sysib/softib0/ports/1/cap_mask") & 2)) = 2

# The SA on the SM's port answers a query from the other port
pr=$(saquery -C softib1 --src-to-dst "$((lid1)):$((lid0))" 2>&1)
echo "$pr" | sed 's/^/# PathRecord: /' | head -20
check "saquery: a PathRecord from softib1 to softib0" \
	grep -Eq "^[[:space:]]*dlid\.+$((lid0))\$" <<<"$pr"

# ib_ipoib on both ports joins the broadcast group through the SA
check "modprobe ib_ipoib" modprobe ib_ipoib
check "... an interface on each port" wait_until 10 both_ifs
if0=$(ipoib_if softib0) if1=$(ipoib_if softib1)
ip link set "$if0" up
ip link set "$if1" up
check "... both get carrier: the broadcast group joined" \
	wait_until 20 sh -c "grep -qx 1 /sys/class/net/$if0/carrier &&
			     grep -qx 1 /sys/class/net/$if1/carrier"
check "... MTU from the group: 4096 - 4" \
	test "$(cat "/sys/class/net/$if0/mtu")" = 4092
# the port's lane speed times its width, as ibstat's Rate (Gb/s)
rate=$(ibstat softib0 1 | awk '/Rate:/ { print $2 }')
ethtool "$if0" | grep -E 'Speed|Duplex|Link detected' | sed 's/^/#  /'
check "ethtool: link speed = ibstat's rate ($rate Gb/s), full duplex" \
	sh -c "ethtool $if0 | grep -q 'Speed: ${rate}000Mb/s' &&
	       ethtool $if0 | grep -q 'Duplex: Full'"
# members' PortGIDs are shown to a trusted requester: opensm's SM_Key
# (default 1). One line per member: MGID PortGID
mc=$(saquery -C softib1 --smkey 1 -m 2>&1 | awk -F. '
	/MGID/ { mgid = $NF } /PortGid/ { print mgid, $NF }')
# shellcheck disable=SC2001 # a prefix on every line
sed 's/^/# MCMemberRecord: /' <<<"$mc"
both_members() {
	grep -q "^ff12:401b:ffff::ffff:ffff $gid0\$" <<<"$mc" &&
		grep -q "^ff12:401b:ffff::ffff:ffff $gid1\$" <<<"$mc"
}
check "saquery: the broadcast group ff12:401b:ffff::ffff:ffff has both ports" \
	both_members

# The two ports' interfaces in two namespaces: datagram ping over the
# SA's paths
ip netns add b
ip link set "$if1" netns b
ip addr add 10.30.0.1/24 dev "$if0"
ip -n b addr add 10.30.0.2/24 dev "$if1"
ip -n b link set "$if1" up
check "datagram: ping from softib0's interface to softib1's" \
	pings 3 -i 0.3 -W 5 10.30.0.2
check "datagram: ping6 over the link-local addresses" \
	pings 3 -6 -i 0.3 -W 5 \
	"$(ip -n b -6 addr show dev "$if1" scope link | awk '/inet6/ { sub("/.*", "", $2); print $2 }')%$if0"
sed 's/^/# softib0: /' /sys/kernel/debug/softib/softib0

# The path the driver resolved through the SA is the SA's PathRecord
pr=$(saquery -C softib0 --src-to-dst "$((lid0)):$((lid1))" 2>&1)
field() {	# field NAME: a PathRecord field's value
	awk -v n="$1" -F. '$1 ~ "^[[:space:]]*" n "$" { print $NF }' <<<"$pr"
}
want="DLID: $(printf '0x%04x' "$(field dlid)") SL: $(($(field sl)))"
want="$want rate: $(($(field rate) & 63)) MTU: $((128 << ($(field mtu) & 63)))"
path=$(grep "fe80::200:5342:0:101 " "/sys/kernel/debug/ipoib/${if0}_path")
log "driver's path: $path; SA's PathRecord: $want"
check "debugfs path to softib1 = the SA's PathRecord (DLID, SL, rate, MTU)" \
	grep -q "complete: yes $want\$" <<<"$path"

# iperf3 each way the tests go: datagram, then connected mode
ip netns exec b iperf3 -s -D -B 10.30.0.2
# throughput LABEL MIN [DEST]: 3 s of TCP to softib1's side (or DEST) at
# MIN Mbit/s or more (its figure in /tmp/mbps.LABEL)
throughput() {
	local bps
	bps=$(iperf3 -c "${3:-10.30.0.2}" -t 3 -J 2>/dev/null | python3 -c '
import json, sys
print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]))')
	echo $((${bps:-0} / 1000000)) >"/tmp/mbps.$1"
	log "$1: iperf3 TCP $(cat "/tmp/mbps.$1") Mbit/s"
	[ "$(cat "/tmp/mbps.$1")" -ge "$2" ]
}
# The floor is a share of what the same TCP gets over a veth pair of the
# same MTU between the same namespaces, measured here: under TCG both are
# the guest's CPU, and how fast the host is changes both (50 to 86 Mbit/s
# seen in datagram mode on one day, 16 on a slower one; 24 against a
# veth's 148, and 79 connected, on another).
mtu=$(cat "/sys/class/net/$if0/mtu")
ip link add vref0 mtu "$mtu" type veth peer name vref1 mtu "$mtu" netns b
ip addr add 10.39.0.1/24 dev vref0
ip -n b addr add 10.39.0.2/24 dev vref1
ip link set vref0 up
ip -n b link set vref1 up
ip netns exec b iperf3 -s -D -1 -B 10.39.0.2	# (one test, then gone)
wait_until 5 pings 1 -W 1 10.39.0.2 || true
throughput veth 0 10.39.0.2 || true
ref=$(cat /tmp/mbps.veth)
ip link del vref0
# (at most the 20 Mbit/s it was before, should the veth ever gain more)
floor=$((ref / 12 < 20 ? ref / 12 : 20))
# shellcheck disable=SC2016 # expanded by eval
check "datagram: iperf3 TCP at 1/12 of a veth's ($ref Mbit/s), 20 at most, or more: $floor" \
	eval 'test "$ref" -gt 0 && throughput datagram "$floor"'
echo connected >"/sys/class/net/$if0/mode"
ip netns exec b sh -c "echo connected >/sys/class/net/$if1/mode"
check "connected: both interfaces in connected mode, MTU 65520" \
	test "$(cat "/sys/class/net/$if0/mode") $(cat "/sys/class/net/$if0/mtu")" = \
		"connected 65520" -a "$(ip netns exec b cat "/sys/class/net/$if1/mode" \
		"/sys/class/net/$if1/mtu" | tr '\n' ' ')" = "connected 65520 "
check "connected: ping with 20000 bytes" pings 3 -i 0.3 -W 5 -s 20000 10.30.0.2
check "... over an RC connection (debugfs: live)" \
	grep -q ' live ' "/sys/kernel/debug/ipoib/${if0}_cm"
min=$(($(cat /tmp/mbps.datagram) * 3 / 2))
[ "$min" -ge $((30 / VM_SLOW)) ] || min=$((30 / VM_SLOW))
check "connected: iperf3 TCP at 1.5 times datagram mode's or more, $min Mbit/s (65520-octet MTU)" \
	throughput connected "$min"
sed 's/^/# softib1: /' /sys/kernel/debug/softib/softib1

# A lost RTU (IBA 12.6.7): softib0 loses the next one it sends. Data on
# the new connection makes softib1's QP raise COMM_EST, and ib_ipoib has
# ib_cm take that for the RTU: the passive side is live at once, not
# after the CM's REP timeout and retry (4.3 s: a response timeout of
# 4.096 us * 2^20), which ib_cm counts: the proof, whatever the machine's
# load (1.3 s to live seen with two guests and builds on two cores).
cm1() {	# softib1's interface's connections, seen from the namespace
	cat /sys/kernel/debug/ipoib/"$if1"@ns*_cm
}
# down and up: both interfaces close every connection
ip link set "$if0" down
ip -n b link set "$if1" down
ip link set "$if0" up
ip -n b link set "$if1" up
no_connections() {
	ls /sys/kernel/debug/ipoib/"$if1"@ns*_cm >/dev/null &&
		[ -z "$(cm1)" ] && [ -z "$(cat "/sys/kernel/debug/ipoib/${if0}_cm")" ] &&
		grep -qx 1 "/sys/class/net/$if0/carrier" &&
		[ "$(carrier_of "$if1" b)" = 1 ]
}
check "... down and up: no connection left, carrier back" \
	wait_until 20 no_connections
echo 1 >/sys/kernel/debug/softib/softib0_lose_cm_rtu
pings 1 -W 5 -s 20000 10.30.0.2 >/dev/null &
rtu_ping=$!
passive() {	# passive STATE: softib1 has a passive connection in it
	cm1 | grep -q "^GID: $gid0 .* passive $1"
}
rep_retries() {	# REPs ib_cm sent again on softib1's port
	cat /sys/class/infiniband/softib1/ports/1/cm_tx_retries/rep
}
reps0=$(rep_retries)
check "lost RTU: softib1 accepts a connection from softib0" \
	wait_until 10 passive ''
t0=$(date +%s%N)
check "... which goes live without the RTU" wait_until 10 passive live
ms=$((($(date +%s%N) - t0) / 1000000))
log "lost RTU: the passive side live $ms ms after it was first seen"
no_rep_retry() {
	[ -n "$reps0" ] && [ "$(rep_retries)" = "$reps0" ]
}
check "... at COMM_EST, not by the REP's retry (ib_cm's cm_tx_retries/rep)" \
	no_rep_retry
wait "$rtu_ping"
echo 0 >/sys/kernel/debug/softib/softib0_lose_cm_rtu
check "... softib0 lost one RTU" test "$(softib_count softib0 lost_cm_rtu)" = 1
check "... and the connection carries traffic" \
	pings 2 -i 0.3 -W 5 -s 20000 10.30.0.2

# Bad SMPs from userspace (umad): answered with an error status and
# counted, the ports stay ACTIVE and traffic goes on
bad_mads() {	# bad_mads DEV
	softib_count "$1" bad_mad
}
bad0=$(bad_mads softib0) bad1=$(bad_mads softib1)
smpdump -C softib1 -D 0 0x16 100 >/dev/null 2>&1	# P_Key block 100
smpdump -C softib1 -D 0 0x14 7 >/dev/null 2>&1	# GUIDInfo block 7
smpdump -C softib1 -D 0,1 0x18 0x50000 >/dev/null 2>&1	# VLArb part 5
# ACTIVE -> ARMED is no transition a port takes (IBA 7.2)
ibportstate -C softib1 -D 0 1 arm >/dev/null 2>&1
check "bad SMPs: softib1's SMA counted 3 (P_Key block, GUID block, ARMED)" \
	test "$(($(bad_mads softib1) - bad1))" = 3
check "bad SMPs: softib0's SMA counted the remote one (VLArb part)" \
	test "$(($(bad_mads softib0) - bad0))" = 1
check "... both ports still ACTIVE" both_active
check "... and traffic goes on" pings 2 -i 0.3 -W 5 -s 20000 10.30.0.2

ip link set "$if0" down
ip netns exec b pkill iperf3
ip netns delete b
check "ib_ipoib unloads" modprobe -r ib_ipoib
opensm_stop "$osm_pid"
softib_unload
finish
