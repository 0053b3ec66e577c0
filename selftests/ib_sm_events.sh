#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Subnet manager events on the InfiniBand test fabric (tools/softib,
# opensm), each under a ping of 20 per second between the two ports'
# interfaces, each timed (the longest time without a reply):
# - opensm restarted: its first sweep asks every port to reregister
#   (CLIENT_REREGISTER); the new SA knows no member until ib_ipoib joins
#   the broadcast group again;
# - a LID moved (the new opensm takes softib0's from its guid2lid file):
#   LID_CHANGE there, only a reregister on the other port; paths name
#   LIDs, so both resolve them again, in connected mode while connections
#   read them (the fabric's path data is freed after a grace period);
# - handover to a second opensm of higher priority on the other port,
#   then failover back when it dies (SM_CHANGE on both ports).
# Afterwards the verbs objects are as before the events.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=1
VM_SMP=1
VM_TIMEOUT=300
SOFTIB=1
NEEDS="opensm"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ib_lib.sh"

rm -rf /tmp/osm-*	# a guid2lid file from an earlier test of this boot
cat >/tmp/partitions.conf <<'EOF'
Default=0x7fff, ipoib, mtu=5, rate=7 : ALL=full;
EOF
check "softib: two ports, cabled" softib_load
opensm_start "$guid0"
osm0=$osm_pid
check "opensm on softib0 sweeps both ports to ACTIVE" wait_until 60 both_active
[ "$CHECK_RC" = 0 ] || opensm_log "$guid0"

check "modprobe ib_ipoib" modprobe ib_ipoib
ifs_split

# members of the broadcast group as the SA knows them (opensm's SM_Key)
members() {
	saquery -C softib1 --smkey 1 -m 2>/dev/null | awk -F. '
		/MGID/ { mgid = $NF }
		/PortGid/ && mgid == "ff12:401b:ffff::ffff:ffff" { print $NF }' |
		sort | tr '\n' ' '
}
both_members() {
	[ "$(members)" = "$gid0 $gid1 " ]
}
check "the SA has both ports in the broadcast group" wait_until 10 both_members
rdma_counts() {	# the verbs objects of both devices
	rdma resource show | awk '{ $1 = ""; print }' | tr '\n' ' '
}
before=$(rdma_counts)
log "verbs objects: $before"

# The ping all the events run under: a timestamped line per reply, and
# one per request left unanswered when the next goes (-O)
ping -D -O -i 0.05 -W 1 10.30.0.2 >/tmp/ping.log 2>&1 &
ping_pid=$!
first_reply_after() {	# first_reply_after T: seconds from T to a reply
	awk -v t="$1" -F'[][]' '/bytes from/ && $2 > t {
		printf "%.2f\n", $2 - t; exit }' /tmp/ping.log
}
longest_gap() {	# longest_gap FROM: "GAP START END", the longest time
	# without a reply since FROM (to now, if none came after)
	awk -v t="$1" -v now="$(date +%s.%N)" -F'[][]' 'BEGIN { last = t }
		/bytes from/ && $2 > t { if ($2 - last > gap) {
						gap = $2 - last; s = last; e = $2 }
					 last = $2 }
		END { if (now - last > gap) { gap = now - last; s = last; e = now }
		      printf "%.2f %.6f %.6f\n", gap, s, e }' /tmp/ping.log
}
# outage WHAT FROM: log the longest time without a reply, and check that
# no more than a second's worth of requests in a row (20 at one per 50 ms;
# VM_SLOW times that on a slower kernel) went unanswered: the guest's own
# stalls, which stop the sender too, lose none
outage() {
	local gap lost
	read -r gap _ <<<"$(longest_gap "$2")"
	lost=$(ping_lost_run /tmp/ping.log "$2")
	log "$1: the longest time without a reply $gap s; the most requests in a row unanswered: $lost"
	check "$1: at most $((20 * VM_SLOW)) requests in a row ($VM_SLOW s) unanswered" \
		test "$lost" -le $((20 * VM_SLOW))
}
# neighbours flushed on both sides: ARP goes over the broadcast group,
# which must be attached at the MLID the SM gave it
rearp() {
	ip neigh flush dev "$if0"
	ip -n b neigh flush dev "$if1"
	check "$1: ARP again over the broadcast group, ping" \
		pings 2 -i 0.3 -W 3 10.30.0.2
}
bc_mlid() {	# bc_mlid SA|IF: the broadcast group's MLID, SA's or ours
	if [ "$1" = SA ]; then
		saquery -C softib1 --smkey 1 -m 2>/dev/null | awk -F. '
			/MGID/ { mgid = $NF }
			/Mlid/ && mgid == "ff12:401b:ffff::ffff:ffff" {
				print $NF; exit }'
	else
		sed -n 's/^GID: ff12:401b:ffff::ffff:ffff .* MLID: \(0x[0-9a-f]*\) .*/\1/p' \
			"/sys/kernel/debug/ipoib/${1}_mcg"
	fi
}
events() {	# events DEV NAME: how many of that port event softib sent
	softib_count "$1" "event_$2"
}

carrier_changes() {	# of both interfaces
	echo "$(cat "/sys/class/net/$if0/carrier_changes")" \
		"$(ip netns exec b cat "/sys/class/net/$if1/carrier_changes")"
}
cc=$(carrier_changes)

# 1. opensm restarted (same port): a client reregister. A partition
# listed first now makes its groups first: the broadcast group of the
# default partition comes back at another MLID.
rereg=$(events softib1 client_rereg)
mlid=$(bc_mlid "$if0")
check "opensm stopped" opensm_stop "$osm0"
check "... the ports stay ACTIVE without an SM" both_active
check "... and traffic goes on" pings 2 -i 0.2 -W 2 10.30.0.2
cat >/tmp/partitions.conf <<'EOF'
Extra=0x0789, ipoib : ALL=full;
Default=0x7fff, ipoib, mtu=5, rate=7 : ALL=full;
EOF
t0=$(date +%s.%N)
opensm_start "$guid0"
osm0=$osm_pid
more_events() {	# more_events DEV NAME N: more than N of them
	[ "$(events "$1" "$2")" -gt "$3" ]
}
check "opensm restarted: softib1 gets CLIENT_REREGISTER" \
	wait_until 30 more_events softib1 client_rereg "$rereg"
[ "$CHECK_RC" = 0 ] || opensm_log "$guid0"
check "... the new SA has both ports in the broadcast group again" \
	wait_until 20 both_members
new_mlid() {
	local ours sa
	ours=$(bc_mlid "$if0") sa=$(bc_mlid SA)
	[ -n "$ours" ] && [ -n "$sa" ] && [ $((ours)) = $((sa)) ] &&
		[ $((ours)) != $((mlid)) ]
}
check "... the broadcast group moved from MLID $mlid: ours is the SA's" \
	wait_until 10 new_mlid
log "broadcast group: MLID $mlid, now $(bc_mlid "$if0") (SA: $(bc_mlid SA))"
# (a reply after the event is known done: not one from before it)
t1=$(date +%s.%N)
check "... traffic" wait_until 10 reply_after /tmp/ping.log "$t1"
outage "opensm restart" "$t0"
check "... carrier stayed on: groups joined again behind the old ones" \
	test "$(carrier_changes)" = "$cc"
rearp "opensm restart"

# 2. The new SM moves softib0's LID (its guid2lid file says 0x20), in
# connected mode. softib0 gets LID_CHANGE; softib1 only a reregister,
# yet its path to softib0 names the old LID: both resolve again.
echo connected >"/sys/class/net/$if0/mode"
ip netns exec b sh -c "echo connected >/sys/class/net/$if1/mode"
check "connected mode: a live connection" \
	wait_until 10 grep -q ' live ' "/sys/kernel/debug/ipoib/${if0}_cm"
lidc=$(events softib0 lid_change)
lid1=$(port_lid softib1)
cc=$(carrier_changes)	# a mode switch may count
check "opensm stopped" opensm_stop "$osm0"
printf '%s 0x0020 0x0020\n' "$guid0" >"/tmp/osm-$guid0/guid2lid"
opensm_start "$guid0"
osm0=$osm_pid
moved() {
	[ "$(port_lid softib0)" = 32 ]
}
check "opensm restarted with a guid2lid file: softib0's LID is 0x20" \
	wait_until 30 moved
[ "$CHECK_RC" = 0 ] || opensm_log "$guid0"
t0=$(date +%s.%N)
check "... softib0 got LID_CHANGE" more_events softib0 lid_change "$lidc"
check "... softib1 kept its LID" test "$(port_lid softib1)" = "$lid1"
sm_is() {	# sm_is LID: both ports name it their SM
	[ "$(sm_lid softib0)" = "$1" ] && [ "$(sm_lid softib1)" = "$1" ]
}
check "... both ports name the SM at 0x20" wait_until 10 sm_is 32
path1() {	# softib1's interface's path to softib0
	grep "^GID: $gid0 " /sys/kernel/debug/ipoib/"$if1"@ns*_path
}
check "... softib1's driver resolved its path to softib0 again: DLID 0x0020" \
	wait_until 10 eval "path1 | grep -q 'complete: yes DLID: 0x0020 '"
t1=$(date +%s.%N)
check "... datagram traffic" wait_until 20 reply_after /tmp/ping.log "$t1"
lidr=$(first_reply_after "$t0")
log "LID change: first datagram reply $lidr s after the new LID"
# softib1's replies go to softib0's old LID until its driver resolves the
# path again: that must follow the event, not a timer
check "... the first datagram reply within $((2 * VM_SLOW)) s of the new LID" \
	awk -v r="$lidr" -v b=$((2 * VM_SLOW)) 'BEGIN { exit !(r != "" && r < b) }'
check "... connected mode carries 20000 bytes again" \
	wait_until 30 pings 1 -W 2 -s 20000 10.30.0.2
log "LID change: connected mode back after $(echo "$(date +%s.%N) - $t0" | bc) s"
check "... carrier stayed on" test "$(carrier_changes)" = "$cc"
echo datagram >"/sys/class/net/$if0/mode"
ip netns exec b sh -c "echo datagram >/sys/class/net/$if1/mode"

# 3. handover to an SM of higher priority on softib1, then failover back
check "datagram mode again: carrier" \
	wait_until 10 grep -qx 1 "/sys/class/net/$if0/carrier"
cc=$(carrier_changes)
smc=$(events softib0 sm_change)
t0=$(date +%s.%N)
opensm_start "$guid1" -p 15
osm1=$osm_pid
check "handover: softib1's opensm (priority 15) becomes master" \
	wait_until 60 sm_is "$lid1"
[ "$CHECK_RC" = 0 ] || { opensm_log "$guid0"; opensm_log "$guid1"; }
log "handover: $(echo "$(date +%s.%N) - $t0" | bc) s from the second SM's start"
check "... softib0 got SM_CHANGE" more_events softib0 sm_change "$smc"
check "... the new SA has both ports in the broadcast group" \
	wait_until 20 both_members
# (a reply after the event is known done: not one from before it)
t1=$(date +%s.%N)
check "... traffic" wait_until 10 reply_after /tmp/ping.log "$t1"
outage handover "$t0"
rearp handover
t0=$(date +%s.%N)
check "the master dies" opensm_stop "$osm1"
check "failover: softib0's opensm is master again" wait_until 60 sm_is 32
[ "$CHECK_RC" = 0 ] || opensm_log "$guid0"
log "failover: $(echo "$(date +%s.%N) - $t0" | bc) s from the master's death"
check "... the SA has both ports in the broadcast group" \
	wait_until 20 both_members
# (a reply after the event is known done: not one from before it)
t1=$(date +%s.%N)
check "... traffic" wait_until 10 reply_after /tmp/ping.log "$t1"
outage failover "$t0"
rearp failover
check "... carrier stayed on through handover and failover" \
	test "$(carrier_changes)" = "$cc"

kill -INT "$ping_pid"
wait "$ping_pid" 2>/dev/null
lost=$(awk '/packet loss/ { print }' /tmp/ping.log)
log "the ping through all the events: $lost"
# connections outlive a switch to datagram mode; down and up ends them
ip link set "$if0" down
ip -n b link set "$if1" down
ip link set "$if0" up
ip -n b link set "$if1" up
same_counts() {
	local now
	now=$(rdma_counts)
	[ "$now" = "$before" ] || { echo "now: $now"; return 1; }
}
check "verbs objects as before the events" wait_until 10 same_counts

ip netns delete b
check "ib_ipoib unloads" modprobe -r ib_ipoib
opensm_stop "$osm0"
softib_unload
finish
