#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# IP multicast through the SA on the InfiniBand test fabric (RFC 4391
# s10), softib0's interface sending, softib1's (namespace b) receiving:
# - a full join that creates a group the SM does not know, then a
#   send-only join (SendOnlyFullMember) of the sender; the SA lists both;
# - a send-only sender first, to a group with no member: its join
#   creates the group, and a member joining later receives;
# - a member that is not an IPoIB interface (tools/softib's
#   softib_member: its own UD QP, joined through ib_sa) receives what
#   the interface sends; with umcast, softib1's interface leaves that
#   group to it;
# - the SA gone (opensm stopped): a full join and a path query fail and
#   back off (counted, and said in dmesg); when opensm returns (its sweep asks the
#   ports to reregister) both succeed at once, not after the backoff
#   (the join's had reached 8 s).
# - with sendonly_nonmember=1 (RFC 4391 s10): a sender's
#   SendOnlyNonMember join creates no group and backs off; a listener's
#   join creates it, the SA reports it (trap 66, InformInfo) and the
#   sender sends at once, not after its backoff; the listener leaves,
#   the SA reports the deletion (trap 67) and the sender drops its
#   membership; a new SA (opensm restarted) gets the subscriptions again;
# - RFC 4391 s11: softib1's interface in allmulticast (a router) joins, as
#   a NonMember, the groups the SA lists and those it reports created
#   later, receives their traffic, drops a deleted one, and leaves all
#   of them when allmulticast goes off.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=1
VM_SMP=1
VM_TIMEOUT=300
SOFTIB=1
NEEDS="opensm saquery"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ib_lib.sh"

mc=$IPOIB_TOP/selftests/mcast_udp.py
member=/sys/kernel/debug/softib_member
rm -rf /tmp/osm-*
cat >/tmp/partitions.conf <<'EOF'
Default=0x7fff, ipoib, mtu=5, rate=7 : ALL=full;
P1=0x0123, ipoib, mtu=5, rate=7 : ALL=full;
EOF
check "softib: two ports, cabled" softib_load
opensm_start "$guid0"
check "opensm on softib0 sweeps both ports to ACTIVE" wait_until 60 both_active
[ "$CHECK_RC" = 0 ] || opensm_log "$guid0"

ifs_up() {	# ifs_up [MODULE PARAMETER...]: softib1's interface in b
	check "modprobe ib_ipoib $*" modprobe ib_ipoib mcast_debug_level=1 "$@"
	ifs_split
	mcg0=/sys/kernel/debug/ipoib/${if0}_mcg
	mcg1=$(echo /sys/kernel/debug/ipoib/"$if1"@ns*_mcg)	# in namespace b
}
ifs_up

# The SA's members, one line each: MGID PortGID JoinState (the low
# nibble of saquery's ScopeState)
sa_members() {	# fails if the SA does not answer
	local out
	out=$(saquery -C softib1 --smkey 1 -m 2>/dev/null) || return 1
	awk -F. '/MGID/ { mgid = $NF } /PortGid/ { gid = $NF }
		/ScopeState/ { print mgid, gid, "0x" substr($NF, length($NF)) }' <<<"$out"
}
# the SA's event subscriptions, one line each: SubscriberGID TrapNumber
sa_subscriptions() {	# fails if the SA does not answer
	local out
	out=$(saquery -C softib1 --smkey 1 IIR 2>/dev/null) || return 1
	awk -F. '/SubscriberGID/ { gid = $NF } /trap_num/ { print gid, $NF }' <<<"$out"
}
sa_has() {	# sa_has MGID GID JOINSTATE
	sa_members | grep -qx "$1 $2 $3"
}
stat_b() {	# stat_b IF NAME: an ethtool counter of IF in namespace b
	ip netns exec b ethtool -S "$1" | awk -v n="$2:" '$1 == n { print $2 }'
}
received() {	# received FILE: datagrams a receiver printed
	grep -c '^rx' "$1"
}

# --- a full join creates the group, a send-only join follows -----------
g3=ff12:401b:ffff::f01:203
ip netns exec b python3 "$mc" recv 239.1.2.3 5000 "$if1" 10 --count 20 >/tmp/rx3 &
rxpid=$!
check "full join: the member's interface joins 239.1.2.3" \
	wait_until $((10 * VM_SLOW)) grep -q "GID: $g3 .*complete: yes" "$mcg1"
check "... the SA created the group with softib1 a FullMember" \
	sa_has "$g3" "$gid1" 0x1
python3 "$mc" send 239.1.2.3 5000 "$if0" 20
check "send-only: the sender joined it send-only" \
	wait_until 5 grep -q "GID: $g3 .*complete: yes .*send_only: yes" "$mcg0"
check "... as SendOnlyFullMember on the SA" sa_has "$g3" "$gid0" 0x8
sa_members | sed 's/^/# SA member: /'
wait "$rxpid"
log "239.1.2.3: $(received /tmp/rx3) of 20 received"
check "... and the member receives its datagrams" \
	test "$(received /tmp/rx3)" -ge 18

# --- a send-only sender first: its join creates the group ----------------
g4=ff12:401b:ffff::f01:204
python3 "$mc" send 239.1.2.4 5001 "$if0" 5
check "a group with no member: the send-only join creates it" \
	wait_until 10 sa_has "$g4" "$gid0" 0x8
check "... softib0 its only member" \
	test "$(sa_members | grep -c "^$g4 ")" = 1
ip netns exec b python3 "$mc" recv 239.1.2.4 5001 "$if1" 10 --count 20 >/tmp/rx4 &
rxpid=$!
check "a member joins later" \
	wait_until 10 grep -q "GID: $g4 .*complete: yes" "$mcg1"
python3 "$mc" send 239.1.2.4 5001 "$if0" 20
wait "$rxpid"
check "... and receives (20 sent: $(received /tmp/rx4))" \
	test "$(received /tmp/rx4)" -ge 18

# --- a member that is not an IPoIB interface ---------------------------
g5=ff12:401b:ffff::f01:205
check "insmod softib_member" \
	insmod "$(dirname "$sib")/softib_member.ko"
check "softib_member joins $g5 on softib1 through the SA" \
	sh -c "echo 'join softib1 $g5' >$member"
check "... joined, its QP attached to the MLID" \
	wait_until 10 grep -q "attached: 1" "$member"
sed 's/^/# softib_member: /' "$member"
check "... with the broadcast group's Q_Key" grep -qx "qkey: 0x00000b1b" "$member"
check "... the SA lists it" sa_has "$g5" "$gid1" 0x1
python3 "$mc" send 239.1.2.5 5002 "$if0" 20
check "the member receives what ib_ipoib sends to the group" \
	wait_until 5 grep -qx "rx: 20" "$member"
if [ "$CHECK_RC" != 0 ]; then
	sed 's/^/# softib_member: /' "$member"
	grep "$g5" "$mcg0" | sed 's/^/# mcg: /'
	sed 's/^/# softib1: /' /sys/kernel/debug/softib/softib1
fi
# Q_Keys (IBA 10.2.4; RFC 4391 s5: the group's): softib0's interface
# listens; the member's datagram with the group's Q_Key reaches it, one
# with another Q_Key is dropped by the receiving HCA and counted there
python3 "$mc" recv 239.1.2.5 5002 "$if0" $((15 * VM_SLOW)) >/tmp/rxq &
rxpid=$!
# (as a full member: its send-only membership of the step above is left
# and joined again, and only a full member's QP is attached)
check "Q_Key: softib0's interface joins 239.1.2.5 too" \
	wait_until $((10 * VM_SLOW)) \
	grep -q "GID: $g5 .*complete: yes .*join: full member$" "$mcg0"
check "... the member sends it a datagram with the group's Q_Key" \
	sh -c "echo 'send 0xb1b 239.1.2.5 5002' >$member"
check "... which arrives" wait_until 5 grep -q rx /tmp/rxq
qkey_drops_are() {	# qkey_drops_are N: softib0 dropped N for their Q_Key
	test "$(softib_count softib0 drop_qkey)" = "$1"
}
qd0=$(softib_count softib0 drop_qkey)
check "... and one with Q_Key 0xb1c" \
	sh -c "echo 'send 0xb1c 239.1.2.5 5002' >$member"
check "... which softib0 drops for its Q_Key" \
	wait_until 5 qkey_drops_are $((qd0 + 1))
check "... and counts in PortInfo's Q_Key violations" \
	sh -c "smpquery -C softib0 -D portinfo 0 | grep -Eq 'QkeyViolations:\.*[1-9]'"
kill "$rxpid" 2>/dev/null
wait "$rxpid"
check "... the interface heard only the first" \
	test "$(received /tmp/rxq)" = 1
# umcast: a group already joined on the port by someone else is theirs
ip netns exec b sh -c "echo 1 >/sys/class/net/$if1/umcast"
ip netns exec b python3 "$mc" recv 239.1.2.5 5002 "$if1" 3 >/tmp/rx5 &
rxpid=$!
check "umcast: softib1's interface leaves 239.1.2.5 to the member" \
	wait_until 10 sh -c "dmesg | grep -q '$if1: $g5 joined by userspace: left to it'"
wait "$rxpid"
check "... and does not join it (after the listener's 3 s)" \
	sh -c "! grep -q 'GID: $g5 ' $mcg1"
ip netns exec b sh -c "echo 0 >/sys/class/net/$if1/umcast"
check "softib_member leaves" sh -c "echo leave >$member"
forgotten() {	# the SA answers (it lists g3) without the member in g5
	local all
	all=$(sa_members)
	grep -q "^$g3 " <<<"$all" && ! grep -q "^$g5 $gid1 " <<<"$all"
}
check "... the SA forgets it" wait_until 5 forgotten
check "rmmod softib_member" rmmod softib_member

# --- RFC 4391 s11: a router's interface (IFF_ALLMULTI) ------------------
# softib1's interface routes: it joins, as a NonMember, the groups the SA
# lists and the ones it reports created later, and receives their traffic
# (the module's defaults: allmulticast alone turns the SA's reports on)
g10=ff12:401b:ffff::f01:20a g11=ff12:401b:ffff::f01:20b
python3 "$mc" recv 239.1.2.10 5005 "$if0" 90 >/dev/null &
l10=$!
check "softib0's interface listens to 239.1.2.10: the SA has the group" \
	wait_until 10 sa_has "$g10" "$gid0" 0x1
heard() {	# heard GROUP PORT: of 20 datagrams from softib0, how many b's
	# interface received (a packet socket: joined by IP or not)
	ip netns exec b python3 "$mc" sniff "$1" "$2" "$if1" 5 --count 20 >/tmp/sniff &
	local pid=$!
	if ! wait_until 5 grep -q ready /tmp/sniff; then
		echo "no sniffer"	# fails the checks of a count
		kill "$pid"
		wait "$pid"
		return
	fi
	if ! python3 "$mc" send "$1" "$2" "$if0" 20; then
		echo "no sender"	# likewise: "none heard" needs a sender
		wait "$pid"
		return
	fi
	wait "$pid"
	received /tmp/sniff
}
d0=$(softib_count softib1 drop_dlid)
n=$(heard 239.1.2.10 5005)
d1=$(softib_count softib1 drop_dlid)
check "not a router: softib1's interface hears none of the group ($n of 20)" \
	test "$n" = 0
# (the cable brings every datagram to softib1's port, which attached no
# QP to the group: the drop, not silence, says they were not taken)
check "... softib1's port dropped the 20 for want of the group (drop_dlid)" \
	test $((d1 - d0)) -ge 20
ip -n b link set "$if1" allmulticast on
check "allmulticast on: the router lists the groups (GetTable) and joins" \
	wait_until 10 grep -q "GID: $g10 .*complete: yes .*join: non-member" "$mcg1"
check "... as a NonMember on the SA" sa_has "$g10" "$gid1" 0x2
n=$(heard 239.1.2.10 5005)
check "... and hears the group's traffic ($n of 20)" test "$n" -ge 18
python3 "$mc" recv 239.1.2.11 5006 "$if0" 60 >/dev/null &
l11=$!
check "a group created later: the SA reports it and the router joins" \
	wait_until 10 grep -q "GID: $g11 .*complete: yes .*join: non-member" "$mcg1"
n=$(heard 239.1.2.11 5006)
check "... and hears its traffic ($n of 20)" test "$n" -ge 18
# the router sends to a group with no listener: it keeps the group (a
# full member while it sends), rather than leave and delete it under
# its own traffic again and again
g12=ff12:401b:ffff::f01:20c
joins0=$(stat_b "$if1" mcast_joins)
ip netns exec b python3 "$mc" send 239.1.2.12 5007 "$if1" 40
joins1=$(stat_b "$if1" mcast_joins)
# shellcheck disable=SC2016 # expanded by eval
check "the router sends to a new group: it joins it once, as a full member" \
	eval 'grep -q "GID: $g12 .*complete: yes .*join: full member" "$mcg1" &&
		[ $((joins1 - joins0)) -le 2 ]'
log "the router's joins while sending 40 datagrams over 2 s: $((joins1 - joins0))"
check "... and the SA keeps the group" sa_has "$g12" "$gid1" 0x1
kill "$l11"
wait "$l11"
# shellcheck disable=SC2016 # expanded by eval
check "... its listener leaves: the group goes (the router holds it not)" \
	wait_until 10 eval 'm=$(sa_members) && ! grep -q "^$g11 " <<<"$m"'
# shellcheck disable=SC2016 # expanded by eval
check "... and the router forgets it" \
	wait_until 5 eval '! grep -q "GID: $g11 " "$mcg1"'
ip -n b link set "$if1" allmulticast off
# shellcheck disable=SC2016 # expanded by eval
check "allmulticast off: the router leaves its groups" \
	wait_until 10 eval '! grep -q "GID: $g10 " "$mcg1" && m=$(sa_members) &&
		! grep -qx "$g10 $gid1 0x2" <<<"$m"'
# shellcheck disable=SC2016 # expanded by eval
check "... and cancels its subscriptions with the SA" \
	wait_until 10 eval 'm=$(sa_subscriptions) && ! grep -q "^$gid1 " <<<"$m"'
kill "$l10"
wait "$l10"

# --- RFC 4391 s10: SendOnlyNonMember, and the SA's reports -------------
check "ib_ipoib unloads" modprobe -r ib_ipoib
sub0=$(dmesg | grep -c "softib0: port 1: following the SA's reports")
sub1=$(dmesg | grep -c "softib1: port 1: following the SA's reports")
ifs_up sendonly_nonmember=1
subscribed() {	# subscribed CA: how often the CA's port subscribed so far
	dmesg | grep -c "$1: port 1: following the SA's reports"
}
following() {	# following N0 N1: both ports subscribed since the counts
	[ "$(subscribed softib0)" -gt "$1" ] && [ "$(subscribed softib1)" -gt "$2" ]
}
check "both ports subscribe to MCG create and delete (InformInfo)" \
	wait_until 10 following "$sub0" "$sub1"
sa_subscriptions | sed 's/^/# SA subscription: /'
# shellcheck disable=SC2016 # expanded by eval
check "... the SA lists softib0's subscriptions to traps 66 and 67" \
	eval 'sa_subscriptions | grep -qx "$gid0 66" &&
		sa_subscriptions | grep -qx "$gid0 67"'
g8=ff12:401b:ffff::f01:208
# sends for 30 s: its group must not go idle meanwhile
python3 "$mc" send 239.1.2.8 5004 "$if0" 600 &
txpid=$!
failed_send_join() {	# failed_send_join BACKOFF
	dmesg | grep -q "$if0: join of $g8 failed: .*, backoff $1 s"
}
check "no listener: the sender's SendOnlyNonMember join fails" \
	wait_until 10 failed_send_join 1
# shellcheck disable=SC2016 # expanded by eval
check "... and creates no group" eval 'm=$(sa_members) && ! grep -q "^$g8 " <<<"$m"'
check "... its retries back off to 8 s" wait_until 30 failed_send_join 8
reports0=$(ifc=$if0 stat_of mcast_sa_reports)
# the next retry is 8 s away: only the SA's report brings it sooner
ip netns exec b python3 "$mc" recv 239.1.2.8 5004 "$if1" 30 >/tmp/rx8 &
rxpid=$!
wait_until 5 grep -q ready /tmp/rx8	# joined (by IP; its IB join follows)
t0=$(date +%s.%N)
# shellcheck disable=SC2016 # expanded by eval
check "a listener creates the group: its first datagram arrives" \
	wait_until 10 eval '[ "$(received /tmp/rx8)" -ge 1 ]'
t_first=$(echo "$(date +%s.%N) - $t0" | bc)
log "from the listener's IP join to its first datagram: $t_first s"
lim=$((2 * VM_SLOW < 4 ? 2 * VM_SLOW : 4))
check "... within $lim s, not after the 8 s backoff" \
	test "$(echo "$t_first < $lim" | bc)" = 1
check "... the sender heard of it from the SA (mcast_sa_reports)" \
	test "$(ifc=$if0 stat_of mcast_sa_reports)" -gt "$reports0"
check "... and is a SendOnlyNonMember on the SA" sa_has "$g8" "$gid0" 0x4
kill "$rxpid"
wait "$rxpid"
# shellcheck disable=SC2016 # expanded by eval
check "the listener leaves: the group is gone from the SA" \
	wait_until 10 eval 'm=$(sa_members) && ! grep -q "^$g8 " <<<"$m"'
# shellcheck disable=SC2016 # expanded by eval
check "... the sender heard (deleted) and dropped its membership" \
	wait_until 5 eval 'dmesg | grep -q "$if0: the SA reports $g8 deleted" &&
		grep -q "GID: $g8 .*complete: no" "$mcg0"'
kill "$txpid" 2>/dev/null
wait "$txpid"

# --- no SA ---------------------------------------------------------------
# children of partition 0x0123 on both ports, not yet talking: their
# first path query will find no SA
ip link add link "$if0" name "$if0.8123" type ipoib pkey 0x8123
ip -n b link add link "$if1" name c1 type ipoib pkey 0x8123
ip addr add 10.31.0.1/24 dev "$if0.8123"
ip -n b addr add 10.31.0.2/24 dev c1
ip link set "$if0.8123" up
ip -n b link set c1 up
children_up() {
	[ "$(carrier_of "$if0.8123")" = 1 ] && [ "$(carrier_of c1 b)" = 1 ]
}
check "children of 0x8123 on both ports get carrier" wait_until 20 children_up
opensm_stop "$osm_pid"
log "opensm stopped"
g7=ff12:401b:ffff::f01:207
ip netns exec b python3 "$mc" recv 239.1.2.7 5003 "$if1" 60 --count 10 >/tmp/rx7 &
rxpid=$!
failed_join() {	# failed_join BACKOFF: mcast_debug_level's line
	dmesg | grep -q "$if1: join of $g7 failed: .*, backoff $1 s"
}
check "no SA: the full join fails" wait_until 20 failed_join 1
# both children's (the ARP reply is the first packet to need a path)
path_failures() {
	echo $(($(ifc=$if0.8123 stat_of path_failures) +
		$(stat_b c1 path_failures)))
}
pf0=$(path_failures)
check_fail "no SA: the children's path query fails" \
	pings 1 -W 4 10.31.0.2
check "... counted in path_failures" \
	test "$(path_failures)" -gt "$pf0"
dmesg | grep -E "$g7|8123" | tail -5 | sed 's/^/# /'
check "... the parents still talk over their paths" \
	pings 2 -i 0.3 -W 2 10.30.0.2
check "... and backs off: 1, 2, 4, 8 s" \
	wait_until 30 eval 'failed_join 2 && failed_join 4 && failed_join 8'
rereg0=$(softib_count softib1 event_client_rereg)
sub0=$(subscribed softib0) sub1=$(subscribed softib1)
# opensm starts as a new 8-s backoff begins (so that a join that waits
# for it would come well after one that follows the reregister); that
# start from its line's kernel time
backoffs8() {
	dmesg | grep "$if1: join of $g7 failed: .*, backoff 8 s"
}
n8=$(backoffs8 | wc -l)
more_backoffs8() {	# (each 8 s plus the failed join's own wait)
	[ "$(backoffs8 | wc -l)" -gt "$n8" ]
}
wait_until 15 more_backoffs8 || true
k8=$(backoffs8 | tail -n 1 | sed 's/^\[ *\([0-9.]*\)\].*/\1/')
t0=$(date +%s.%N)
t8=$(echo "$t0 - $(cut -d' ' -f1 /proc/uptime) + ${k8:-0}" | bc)
opensm_start "$guid0"
reregistered() {
	[ "$(softib_count softib1 event_client_rereg)" -gt "$rereg0" ]
}
check "opensm back: its sweep asks softib1 to reregister" \
	wait_until 30 reregistered
t_rereg=$(echo "$(date +%s.%N) - $t0" | bc)
check "... the failed join succeeds" \
	wait_until 20 grep -q "GID: $g7 .*complete: yes" "$mcg1"
t_join=$(echo "$(date +%s.%N) - $t0" | bc)
check "... the children's path resolves: ping" \
	wait_until 20 pings 1 -W 1 10.31.0.2
t_path=$(echo "$(date +%s.%N) - $t0" | bc)
t_due=$(echo "$t8 - $t0 + 7.5" | bc)
log "from opensm's start: the reregister seen in $t_rereg s, join again in $t_join s (the backoff due in $t_due s or more), path in $t_path s"
# the join's backoff had reached 8 s: a join soon after the reregister,
# and before the backoff was due, did not wait for it. Measured from the
# reregister (seen within 0.2 s), not from opensm's start: how long
# opensm's first sweep takes is the host's speed (about 1 to 3 s), not
# the driver's.
lim=$((2 * VM_SLOW < 6 ? 2 * VM_SLOW : 6))
check "... the join within $lim s of the reregister and before the backoff was due, the path within $((lim + 1)) s" \
	test "$(echo "$t_join - $t_rereg < $lim && $t_join < $t_due && $t_path - $t_rereg < $lim + 1" | bc)" = 1
check "... the ports subscribe again with the new SA" \
	wait_until 10 following "$sub0" "$sub1"
python3 "$mc" send 239.1.2.7 5003 "$if0" 10
# shellcheck disable=SC2016 # expanded by eval
check "... and the group carries traffic" \
	wait_until 5 eval '[ "$(received /tmp/rx7)" = 10 ]'
kill "$rxpid" 2>/dev/null
wait "$rxpid"

ip link del "$if0.8123"
ip -n b link del c1
ip netns delete b
check "ib_ipoib unloads" modprobe -r ib_ipoib
opensm_stop "$osm_pid"
softib_unload
finish
