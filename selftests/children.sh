#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# P_Key children and the administration surface between two soft-RoCE
# guests (rxe's P_Key table holds 0xffff only, so a child of any other
# partition must stay without carrier, and one of 0xffff must work):
# - sysfs create_child / delete_child / pkey / parent / umcast and their
#   errnos, writes refused without CAP_NET_ADMIN in the device's namespace;
# - rtnl `type ipoib` with pkey, mode and umcast, `ip -d link show`,
#   changelink, and the refusals with their extack texts;
# - traffic over a child that shares the parent's P_Key, in connected mode;
# - containers: a child in each of two namespaces per guest (one moved
#   there, one made there through rtnl; the mode switched through sysfs
#   in each), pinging the peer's across guests, coming home when its
#   namespace is deleted, down, without addresses, working again; a
#   child in a user-namespace container may be changed from inside, its
#   parent may not; the parent itself moves and comes back;
# - the RDMA device deleted with children of every kind, and re-added;
# - 24 children created and deleted while ping runs on the parent and
#   ethtool and debugfs are read: verbs objects and module references back
#   to where they were, no loss on the parent;
# - module parameters out of range: brought in range, with a log line.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
VM_TIMEOUT=900
. "$(dirname "$0")/lib.sh"

ipoib_start
idx=$IDX ifc=$IFC
peer=$((3 - idx))
sys=/sys/class/net/$ifc
# no ARP flux: several interfaces share one link here
sysctl -qw net.ipv4.conf.all.arp_ignore=1
ip addr add "10.30.0.$idx/24" dev "$ifc"

carrier() {
	cat "/sys/class/net/$1/carrier" 2>/dev/null
}

# fails_saying TEXT CMD...: CMD fails and its output has TEXT
fails_saying() {
	local text=$1 out
	shift
	out=$("$@" 2>&1) && { echo "succeeded: $*"; return 1; }
	echo "$out"
	echo "$out" | grep -qF "$text"
}

# expect_errno DESC FILE VALUE TEXT: writing VALUE to FILE fails with TEXT
# (bash, not sh: dash reports every failed write as "I/O error")
expect_errno() {
	check "$1 ($4)" fails_saying "$4" bash -c "echo $3 >$2"
}

# --- sysfs children -------------------------------------------------------
check "parent's pkey is 0xffff" test "$(cat "$sys/pkey")" = 0xffff
check "no parent attribute on the parent" test ! -e "$sys/parent"
check "create_child 0x8001" sh -c "echo 0x8001 >$sys/create_child"
child=$ifc.8001
check "$child exists with pkey 0x8001 and parent $ifc" \
	sh -c "test \"\$(cat /sys/class/net/$child/pkey)\" = 0x8001 &&
	       test \"\$(cat /sys/class/net/$child/parent)\" = $ifc"
check "no create_child on a child" test ! -e "/sys/class/net/$child/create_child"
check "ip -d link show $child: pkey 0x8001 mode datagram umcast 0" \
	sh -c "ip -d link show $child | grep -Eq 'ipoib pkey +0x8001 mode +datagram umcast +0000'"
check "$child shows as a link of $ifc" \
	sh -c "ip link show $child | grep -q '$child@$ifc'"
expect_errno "create_child 0x8001 again" "$sys/create_child" 0x8001 \
	"Name not unique on network"
expect_errno "create_child 0x0001 (same partition)" "$sys/create_child" 0x0001 \
	"Name not unique on network"
expect_errno "create_child of the parent's P_Key" "$sys/create_child" 0xffff \
	"Name not unique on network"
expect_errno "create_child 0" "$sys/create_child" 0 "Invalid argument"
expect_errno "create_child 0x8000" "$sys/create_child" 0x8000 "Invalid argument"
expect_errno "create_child 0x10000" "$sys/create_child" 0x10000 "Invalid argument"
expect_errno "create_child junk" "$sys/create_child" junk "Invalid argument"
# (the debug kernel's config may lack user namespaces)
userns=$([ -e /proc/self/ns/user ] && echo yes)
userns_check() {	# userns_check DESC CMD...: check, or skip without them
	if [ -n "$userns" ]; then
		check "$@"
	else
		skip "$1" "no user namespaces in $(uname -r)"
	fi
}
userns_check "create_child from a user namespace is refused (EPERM)" \
	fails_saying "Operation not permitted" \
	unshare -Ur bash -c "echo 0x8002 >$sys/create_child"
check "the refusal left no child" test ! -e "/sys/class/net/$ifc.8002"
ip link set "$child" up
# the open decides: it says so, and leaves carrier off
check "the log says why $child gets no carrier" wait_until 10 \
	sh -c "dmesg | grep -q '$child: P_Key 0x8001 is not in the table of rxe0 port 1'"
check "$child (P_Key not in rxe's table) stays without carrier" \
	test "$(carrier "$child")" = 0
check "delete_child 0x8001" sh -c "echo 0x8001 >$sys/delete_child"
check "$child is gone" test ! -e "/sys/class/net/$child"
expect_errno "delete_child 0x8001 again" "$sys/delete_child" 0x8001 \
	"No such device"

check "sysfs umcast: 1 is taken and read back" \
	sh -c "echo 1 >$sys/umcast && test \"\$(cat $sys/umcast)\" = 1"
check "... and the log says it does nothing on RoCE" \
	sh -c "dmesg | grep -q '$ifc: umcast on (no effect here'"
check "sysfs umcast: 0 again" \
	sh -c "echo 0 >$sys/umcast && test \"\$(cat $sys/umcast)\" = 0"
expect_errno "umcast junk" "$sys/umcast" junk "Invalid argument"
userns_check "umcast from a user namespace is refused (EPERM)" \
	fails_saying "Operation not permitted" \
	unshare -Ur bash -c "echo 1 >$sys/umcast"

# --- rtnl -----------------------------------------------------------------
rc=$ifc.x
check "ip link add $rc type ipoib pkey 0x7fff mode connected umcast 1" \
	ip link add link "$ifc" name "$rc" type ipoib pkey 0x7fff mode connected umcast 1
check "ip -d link show: pkey 0xffff (full member) mode connected umcast 1" \
	sh -c "ip -d link show $rc | grep -Eq 'ipoib pkey +0xffff mode +connected umcast +0001'"
check "sysfs agrees: mode connected, umcast 1" \
	sh -c "test \"\$(cat /sys/class/net/$rc/mode)\" = connected &&
	       test \"\$(cat /sys/class/net/$rc/umcast)\" = 1"
check "a second rtnl child may share the P_Key" \
	ip link add link "$ifc" name "$ifc.y" type ipoib
check "it took the parent's P_Key" \
	test "$(cat "/sys/class/net/$ifc.y/pkey")" = 0xffff
ip link del "$ifc.y"
check "a child of a child is refused with a reason" fails_saying \
	"the parent is a child itself" ip link add link "$rc" name bad type ipoib
check "a non-IPoIB parent is refused with a reason" fails_saying \
	"the parent is not an IPoIB interface" ip link add link eth0 name bad type ipoib
check "no parent is refused with a reason" fails_saying \
	"needs its parent" ip link add name bad type ipoib
check "P_Key 0x8000 is refused with a reason" fails_saying \
	"name no partition" ip link add link "$ifc" name bad type ipoib pkey 0x8000
check "numtxqueues 4 is refused with a reason" fails_saying \
	"one transmit and one receive queue" \
	ip link add link "$ifc" name bad numtxqueues 4 type ipoib
check "changing a link's P_Key is refused with a reason" fails_saying \
	"cannot change" ip link set "$rc" type ipoib pkey 0x1234
check "nothing called bad was left" test ! -e /sys/class/net/bad
ip link del "$ifc" 2>/dev/null
check "ip link del of the port's interface leaves it in place" \
	test -e "$sys"
ip link set "$rc" up
ip addr add "10.31.0.$idx/24" dev "$rc"
check "$rc (P_Key 0xffff, shared with the parent) gets carrier" \
	wait_until 15 has_carrier "$rc"
barrier rtnl-up
check "ping over $rc" pings 3 -i 0.2 -W 5 "10.31.0.$peer"
check "30000-octet ping over $rc (connected)" \
	pings 3 -i 0.2 -W 5 -s 30000 "10.31.0.$peer"
check "$rc's connection is in ${rc}_cm" \
	grep -q ' live ' "/sys/kernel/debug/ipoib/${rc}_cm"
barrier rtnl-pinged
check "ip link set $rc type ipoib mode datagram umcast 0" \
	ip link set "$rc" type ipoib mode datagram umcast 0
check "datagram: MTU back to 4092, umcast 0" \
	sh -c "test \"\$(cat /sys/class/net/$rc/mtu)\" = 4092 &&
	       ip -d link show $rc | grep -Eq 'mode +datagram umcast +0000'"
check "ping over $rc in datagram mode" pings 3 -i 0.2 -W 5 "10.31.0.$peer"
barrier rtnl-done
check "ip link del $rc" ip link del "$rc"

# --- containers -----------------------------------------------------------
# c1 made here and moved into ns1; c2 made in ns2 by rtnl (its parent
# named in this namespace); each configured in its namespace, the mode
# through sysfs there (NetworkManager's way) and back
ip netns add ns1
ip netns add ns2
ip link add link "$ifc" name c1 type ipoib
check "c1 moves into ns1" ip link set c1 netns ns1
check "c2 made in ns2 (ip link add link $ifc netns ns2 type ipoib)" \
	ip link add link "$ifc" name c2 netns ns2 type ipoib
ns_mode() {	# ns_mode NS IF MODE: written in NS's sysfs, read back
	ip netns exec "$1" sh -c "echo $3 >/sys/class/net/$2/mode &&
		test \$(cat /sys/class/net/$2/mode) = $3"
}
for n in 1 2; do
	check "c$n in ns$n: sysfs mode takes connected" ns_mode "ns$n" "c$n" connected
	check "c$n in ns$n: ... and datagram" ns_mode "ns$n" "c$n" datagram
	ip -n "ns$n" link set "c$n" up
	ip -n "ns$n" addr add "10.4$n.0.$idx/24" dev "c$n"
done
for n in 1 2; do
	check "c$n has carrier in ns$n" wait_until 15 \
		sh -c "ip -n ns$n link show c$n | grep -q LOWER_UP"
done
check "c1 names its parent in the initial namespace (link-netnsid)" \
	sh -c "ip -n ns1 -d link show c1 | grep -q 'link-netnsid'"
barrier ns-up
for n in 1 2; do
	check "ping from ns$n to the peer's ns$n" \
		pings --ns "ns$n" 3 -i 0.2 -W 5 "10.4$n.0.$peer"
done
barrier ns-pinged
# the same name in two namespaces: debugfs files of their own
ip -n ns2 link set c2 down
ip -n ns2 link set c2 name c1
# shellcheck disable=SC2010 # debugfs names: no odd characters
check "debugfs: c1 of ns1 and c1 of ns2 both have files (c1@nsINUM_path)" \
	test "$(ls /sys/kernel/debug/ipoib | grep -c '^c1@ns[0-9]*_path$')" = 2
ip -n ns2 link set c1 name c2
ip netns del ns1
check "c1 comes home when ns1 is deleted" wait_until 10 test -e /sys/class/net/c1
ip netns del ns2
check "c2, made in ns2, comes home too" wait_until 10 test -e /sys/class/net/c2
home_clean() {	# home_clean IF: down, no address, its own debugfs name
	ip link show "$1" | grep -q 'state DOWN' &&
		test -z "$(ip -o addr show dev "$1" | grep -w inet)" &&
		test -e "/sys/kernel/debug/ipoib/${1}_path"
}
for n in 1 2; do
	check "c$n came home down, without its address, debugfs c${n}_path" \
		home_clean "c$n"
done
check "c1 works at home: up, carrier" sh -c "ip link set c1 up &&
	for i in \$(seq 75); do grep -qx 1 /sys/class/net/c1/carrier && exit 0; sleep 0.2; done; exit 1"  # (the poll)
check "c1 and c2 delete" sh -c "ip link del c1 && ip link del c2"

# a user-namespace container owning a child
own_netns() {	# own_netns PID: PID has unshared its network namespace
	[ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/self/ns/net)" ]
}
container_checks() {
	ip link add link "$ifc" name c3 type ipoib
	unshare -Urn sleep 120 &	# a process that owns the namespaces (not a wait)
	upid=$!
	check "the container's namespaces exist" wait_until 5 own_netns "$upid"
	check "c3 moves into the container" ip link set c3 netns "$upid"
	check "the container's root may change c3 (rtnl)" \
		nsenter -t "$upid" -U -n --preserve-credentials \
		ip link set c3 type ipoib mode connected
	check "... and reads it back" \
		sh -c "nsenter -t $upid -U -n --preserve-credentials ip -d link show c3 | grep -Eq 'mode +connected'"
	check "the container's root may not change the parent (sysfs: EPERM)" \
		fails_saying "Operation not permitted" \
		nsenter -t "$upid" -U -n --preserve-credentials \
		bash -c "echo connected >$sys/mode"
	check "the parent stayed in datagram mode" test "$(cat "$sys/mode")" = datagram
	kill "$upid"
	wait "$upid" 2>/dev/null
	check "c3 comes home when the container ends" wait_until 10 test -e /sys/class/net/c3
	ip link del c3
}
if [ -n "$userns" ]; then
	container_checks
else
	skip "a user-namespace container owning a child" \
		"no user namespaces in $(uname -r)"
fi

# the parent itself moves and comes back
ip netns add pns
check "$ifc moves into a namespace" ip link set "$ifc" netns pns
check "... and is usable there" \
	sh -c "ip -n pns link set $ifc up && ip -n pns addr add 10.30.0.$idx/24 dev $ifc"
barrier parent-moved
check "ping from the parent in its namespace" \
	pings --ns pns 3 -i 0.2 -W 5 "10.30.0.$peer"
barrier parent-pinged
ip netns del pns
check "$ifc comes home when the namespace goes" wait_until 10 test -e "$sys"
ip link set "$ifc" up
ip addr add "10.30.0.$idx/24" dev "$ifc" 2>/dev/null
check "carrier again at home" wait_until 15 has_carrier "$ifc"

# --- 24 children while the parent carries traffic -------------------------
res() {	# verbs objects of rxe0
	rdma resource show | sed -n 's/^[0-9]*: rxe0: //p'
}
settle_res() {	# wait until the counts are back to $1
	# shellcheck disable=SC2034 # used by the eval
	local want=$1
	# shellcheck disable=SC2016 # expanded by eval, at each try
	wait_until 20 eval '[ "$(res)" = "$want" ]'
}
barrier churn-start
base_res=$(res)
base_ref=$(cat /sys/module/ib_ipoib/refcnt)
rx0=$(stat_of rx_packets)
ping -i 0.05 -W 5 "10.30.0.$peer" >/tmp/ping.churn 2>&1 &
ppid=$!
(
	while kill -0 "$ppid" 2>/dev/null; do
		# files of children that come and go: some vanish under cat
		cat /sys/kernel/debug/ipoib/* >/dev/null 2>&1
		ethtool -S "$ifc" >/dev/null
		ethtool -c "$ifc" >/dev/null 2>&1
		ethtool -g "$ifc" >/dev/null
		ethtool -i "$ifc" >/dev/null
	done
) &
rpid=$!
churn() {
	local i p
	for i in $(seq 1 24); do
		if [ $((i % 2)) = 0 ]; then
			ip link add link "$ifc" name "k$i" type ipoib || return 1
			ip link set "k$i" up || return 1
			# every tenth waits for its join: a full life cycle
			[ $((i % 10)) != 0 ] ||
				wait_until 15 has_carrier "k$i" || return 1
			ip link del "k$i" || return 1
		else
			p=$(printf '0x%04x' $((0x1000 + i)))
			echo "$p" >"$sys/create_child" || return 1
			ip link set "$ifc.${p#0x}" up || return 1
			echo "$p" >"$sys/delete_child" || return 1
		fi
	done
}
t0=$(date +%s)
check "24 children created and deleted (half sysfs, half rtnl)" churn
log "churn took $(($(date +%s) - t0)) s"
kill -INT "$ppid"
wait "$ppid"
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
# Every request answered, but for the last 2 s of them (a busy guest's
# round trips reach 100 ms: several are in flight when ping is stopped).
no_loss() {
	awk '/icmp_seq=/ { sub(/.*icmp_seq=/, ""); got[$1 + 0] = 1 }
	     /packets transmitted/ { sent = $1; print }
	     END {
		for (i = 1; i <= sent - 40; i++)
			if (!(i in got)) { printf "no reply to %d\n", i; lost++ }
		exit !(sent > 100 && !lost)
	     }' /tmp/ping.churn
}
check "ping on the parent during the churn: no loss" no_loss
check "rx_packets of the parent moved" test "$(stat_of rx_packets)" -gt "$((rx0 + 100))"
check "verbs objects back to the baseline ($base_res)" settle_res "$base_res"
check "module references back to $base_ref" \
	test "$(cat /sys/module/ib_ipoib/refcnt)" = "$base_ref"
check "no child left" sh -c "! ls /sys/class/net | grep -q '^k[0-9]\|\.1[0-9a-f]*$'"
barrier churn-done

# the RDMA device goes with children of every kind, one in a namespace
ip link add link "$ifc" name r1 type ipoib
echo 0x8003 >"$sys/create_child"
ip link set r1 up
ip netns add rns
ip link add link "$ifc" name r2 type ipoib
ip link set r2 netns rns
check "rdma link delete rxe0 takes the parent and its children" \
	sh -c "rdma link delete rxe0 &&
	       ! ip link show r1 2>/dev/null && ! ip link show $ifc.8003 2>/dev/null &&
	       ! ip -n rns link show r2 2>/dev/null && ! ip link show $ifc 2>/dev/null"
ip netns del rns
check "verbs objects all gone" sh -c "! rdma resource show | grep -q rxe0"
rxe_readd() {
	rdma link add rxe0 type rxe netdev eth0 &&
		rxe_wait_active rxe0 30 >/dev/null &&
		wait_until 10 ipoib_if rxe0
}
check "rxe0 added again brings the port's interface back" rxe_readd
ifc=$(ipoib_if rxe0)
ip link set "$ifc" up
check "... and it joins the broadcast group" wait_until 20 has_carrier "$ifc"

check "modprobe -r ib_ipoib with a child in a namespace" sh -c "
	ip link add link $ifc name last type ipoib &&
	ip netns add lns && ip link set last netns lns &&
	modprobe -r ib_ipoib && ! ip -n lns link show last 2>/dev/null"
ip netns del lns 2>/dev/null

# out-of-range parameters are brought in range, with a message each
check "modprobe with out-of-range parameters loads" \
	modprobe ib_ipoib send_queue_size=100000 recv_queue_size=3 \
	max_nonsrq_conn_qp=5000
check "send_queue_size 100000 became 8192, and the log says so" \
	sh -c "test \"\$(cat /sys/module/ib_ipoib/parameters/send_queue_size)\" = 8192 &&
	       dmesg | grep -q 'send_queue_size 100000 is now 8192'"
check "recv_queue_size 3 became 4, and the log says so" \
	sh -c "test \"\$(cat /sys/module/ib_ipoib/parameters/recv_queue_size)\" = 4 &&
	       dmesg | grep -q 'recv_queue_size 3 is now 4'"
check "max_nonsrq_conn_qp 5000 became 4096, and the log says so" \
	sh -c "test \"\$(cat /sys/module/ib_ipoib/parameters/max_nonsrq_conn_qp)\" = 4096 &&
	       dmesg | grep -q 'max_nonsrq_conn_qp 5000 lowered to 4096'"
check "modprobe -r ib_ipoib" modprobe -r ib_ipoib
finish
