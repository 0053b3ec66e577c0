#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Partitions on the InfiniBand test fabric (tools/softib, opensm). A
# partition whose broadcast group has its own Q_Key, MTU and rate
# (opensm's partitions.conf): the children of both ports take all three
# from the group (RFC 4391 s5, s9.1.2) and talk in datagram and connected
# mode, next to their parents on the default partition. A partition the
# port is not in: no carrier, and the reason in dmesg. Then the SM takes
# the P_Key out of one port's table (the child loses carrier) and puts
# it back (carrier and traffic return; the time from the SM's sweep to
# the first reply is measured).
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=1
VM_SMP=1
VM_TIMEOUT=240
SOFTIB=1
NEEDS="opensm"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ib_lib.sh"

partitions() {	# partitions MEMBERS: MEMBERS of partition 0x0123
cat >/tmp/partitions.conf <<EOF
Default=0x7fff, ipoib, mtu=5, rate=7 : ALL=full;
Storage=0x0123, ipoib, mtu=4, rate=3, Q_Key=0x12345678 : $1;
Private=0x0456, ipoib : $guid0=full;
EOF
}
rm -rf /tmp/osm-*	# a guid2lid file from an earlier test of this boot
partitions ALL=full

check "softib: two ports, cabled" softib_load
opensm_start "$guid0"
check "opensm sweeps both ports to ACTIVE" wait_until 60 both_active
[ "$CHECK_RC" = 0 ] || opensm_log "$guid0"
has_pkey() {	# has_pkey DEV PKEY: in the port's P_Key table
	grep -qx "$2" "$sysib/$1"/ports/1/pkeys/*
}
check "softib1's P_Key table has 0x8123 (full), not 0x8456" \
	eval "has_pkey softib1 0x8123 && ! has_pkey softib1 0x8456"

check "modprobe ib_ipoib" modprobe ib_ipoib
check "... an interface on each port" wait_until 10 both_ifs
if0=$(ipoib_if softib0) if1=$(ipoib_if softib1)
c0=$if0.8123 c1=$if1.8123
check "children of partition 0x0123 on both ports (rtnl, sysfs)" sh -c "
	ip link add link $if0 name $c0 type ipoib pkey 0x8123 &&
	echo 0x8123 >/sys/class/net/$if1/create_child && test -e /sys/class/net/$c1"
check "children of partition 0x0456, where only softib0 is a member" sh -c "
	ip link add link $if0 name $if0.8456 type ipoib pkey 0x8456 &&
	ip link add link $if1 name $if1.8456 type ipoib pkey 0x8456"
ip netns add b
for i in "$if1" "$c1" "$if1.8456"; do
	ip link set "$i" netns b
	ip -n b link set "$i" up
done
for i in "$if0" "$c0" "$if0.8456"; do
	ip link set "$i" up
done
ip addr add 10.30.0.1/24 dev "$if0"
ip -n b addr add 10.30.0.2/24 dev "$if1"
ip addr add 10.31.0.1/24 dev "$c0"
ip -n b addr add 10.31.0.2/24 dev "$c1"

carriers() {
	[ "$(carrier_of "$if0")" = 1 ] && [ "$(carrier_of "$if1" b)" = 1 ] &&
		[ "$(carrier_of "$c0")" = 1 ] && [ "$(carrier_of "$c1" b)" = 1 ] &&
		[ "$(carrier_of "$if0.8456")" = 1 ]
}
check "carrier on the parents, both 0x0123 children and softib0's 0x0456 child" \
	wait_until 20 carriers
check "... the parents' MTU is their group's: 4096 - 4" \
	test "$(cat "/sys/class/net/$if0/mtu")" = 4092
check "... the 0x0123 children's MTU is theirs: 2048 - 4" \
	sh -c "test $(cat "/sys/class/net/$c0/mtu") = 2044 &&
	       test $(ip netns exec b cat "/sys/class/net/$c1/mtu") = 2044"
bcast=$(grep '^GID: ff12:401b:8123::ffff:ffff ' "/sys/kernel/debug/ipoib/${c0}_mcg")
log "the child's broadcast group: $bcast"
check "... the child's broadcast group: Q_Key 0x12345678, MTU 2048, rate 3 (10 Gb/s)" \
	grep -q 'complete: yes .*Q_Key: 0x12345678 MLID: 0x[0-9a-f]* MTU: 2048 rate: 3 join: full member$' <<<"$bcast"
check "... the parent's: Q_Key 0x00000b1b, MTU 4096, rate 7 (40 Gb/s)" \
	grep -q '^GID: ff12:401b:ffff::ffff:ffff .*complete: yes .*Q_Key: 0x00000b1b MLID: 0x[0-9a-f]* MTU: 4096 rate: 7 join: full member$' \
	"/sys/kernel/debug/ipoib/${if0}_mcg"
check "... dmesg: the child's UD QP took the group's Q_Key" \
	sh -c "dmesg | grep -q '$c0: Q_Key 0x12345678 (the broadcast group.s)'"
check "softib1's 0x0456 child: no carrier" \
	test "$(carrier_of "$if1.8456" b)" = 0
check "... and dmesg says why" sh -c \
	"dmesg | grep -q 'P_Key 0x8456 is not in the table of softib1 port 1: no carrier'"

qkey_drops() {	# softib1's packets dropped for a wrong Q_Key
	softib_count softib1 drop_qkey
}
# in_8123 DEV: packets DEV received in its 0x8123 table entry (softib
# counts by the entry a packet matched: both ends could agree on a wrong
# P_Key, the fabric cannot)
in_8123() {
	local n
	n=$(softib_count "$1" rx_pkey_8123)
	echo "${n:-0}"
}
# carried_8123 N0 N1: each port received at least 3 more there
carried_8123() {
	local a b
	a=$(in_8123 softib0) b=$(in_8123 softib1)
	log "received in P_Key 0x8123: softib0 $1 -> $a, softib1 $2 -> $b"
	[ "$a" -ge $(($1 + 3)) ] && [ "$b" -ge $(($2 + 3)) ]
}
drops=$(qkey_drops)
p0=$(in_8123 softib0) p1=$(in_8123 softib1)
check "datagram: ping over partition 0x0123 (Q_Key 0x12345678)" \
	pings 3 -i 0.3 -W 5 10.31.0.2
check "... the fabric carried the datagrams with P_Key 0x8123, both ways" \
	carried_8123 "$p0" "$p1"
check "datagram: ... and over the default partition" \
	pings 3 -i 0.3 -W 5 10.30.0.2
check "... no packet dropped for its Q_Key" test "$(qkey_drops)" -eq "$drops"
echo connected >"/sys/class/net/$c0/mode"
ip netns exec b sh -c "echo connected >/sys/class/net/$c1/mode"
p0=$(in_8123 softib0) p1=$(in_8123 softib1)
check "connected: ping with 20000 bytes over partition 0x0123" \
	pings 3 -i 0.3 -W 5 -s 20000 10.31.0.2
check "... over an RC connection in the partition (debugfs: live)" \
	grep -q ' live ' "/sys/kernel/debug/ipoib/${c0}_cm"
check "... the fabric carried the connection's data with P_Key 0x8123, both ways" \
	carried_8123 "$p0" "$p1"

# Containers: two children of softib0's one port, each made inside its
# own namespace, talk to each other: two UD QPs (then two RC QPs) of the
# same port, which an enhanced-mode driver once dropped.
check "two children of $if0 in partition 0x0123, made in namespaces n1 and n2" sh -c "
	ip netns add n1 && ip netns add n2 &&
	ip link add link $if0 name p1 netns n1 type ipoib pkey 0x8123 &&
	ip link add link $if0 name p2 netns n2 type ipoib pkey 0x8123 &&
	ip -n n1 addr add 10.32.0.1/24 dev p1 && ip -n n1 link set p1 up &&
	ip -n n2 addr add 10.32.0.2/24 dev p2 && ip -n n2 link set p2 up"
check "... datagram: they reach each other through their port" \
	wait_until 20 pings --ns n1 1 -W 1 10.32.0.2
ns_connected() {
	ip netns exec n1 sh -c 'echo connected >/sys/class/net/p1/mode' &&
		ip netns exec n2 sh -c 'echo connected >/sys/class/net/p2/mode' &&
		pings --ns n2 2 -W 5 -s 20000 10.32.0.1 &&
		grep -q ' live ' /sys/kernel/debug/ipoib/p1@ns*_cm
}
check "connected: ... and over an RC connection, 20000 octets" ns_connected
ip netns delete n1
ip netns delete n2
home() {
	ip link show p1 && ip link show p2
} >/dev/null 2>&1
check "... the namespaces deleted, both children come home" \
	wait_until $((10 * VM_SLOW)) home
ip link delete p1
ip link delete p2

# The SM takes softib1 out of partition 0x0123, then puts it back.
# ping -D: one timestamped line per reply
ping -D -i 0.05 -W 1 10.31.0.2 >/tmp/ping.log 2>&1 &
ping_pid=$!
partitions "$guid0=full"
kill -HUP "$osm_pid"
check "P_Key 0x8123 leaves softib1's table (opensm, SIGHUP)" \
	wait_until 20 eval "! has_pkey softib1 0x8123"
check "... softib1's child loses carrier" \
	wait_until 10 eval "[ \"\$(carrier_of $c1 b)\" = 0 ]"
check "... dmesg says why" sh -c \
	"dmesg | grep -q '$c1: P_Key 0x8123 is not in the table of softib1 port 1'"
check "... the parents still talk" pings 2 -i 0.3 -W 5 10.30.0.2
partitions ALL=full
t0=$(date +%s.%N)
kill -HUP "$osm_pid"
check "P_Key 0x8123 back in softib1's table" \
	wait_until 20 has_pkey softib1 0x8123
check "... carrier returns" \
	wait_until 20 eval "[ \"\$(carrier_of $c1 b)\" = 1 ]"
first_reply_after() {	# first_reply_after T: seconds from T to a reply
	awk -v t="$1" -F'[][]' '/bytes from/ && $2 > t {
		printf "%.2f\n", $2 - t; exit }' /tmp/ping.log
}
check "... and traffic in the partition" \
	wait_until 20 eval "[ -n \"\$(first_reply_after $t0)\" ]"
log "P_Key added back: from the SM's sweep (SIGHUP) to the first reply $(first_reply_after "$t0") s"
kill "$ping_pid"

ip netns delete b
check "ib_ipoib unloads" modprobe -r ib_ipoib
opensm_stop "$osm_pid"
softib_unload
finish
