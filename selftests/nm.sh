#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NetworkManager (Debian's, 1.42) configures ib_ipoib as it does the
# in-tree driver, on the InfiniBand test fabric (distro_lib.sh): an
# infiniband connection in datagram mode with an MTU and an address, the
# same changed to connected mode, and a P_Key child (infiniband.parent,
# infiniband.p-key) that NetworkManager creates through the parent's
# create_child; each activates and carries a ping to the far end, and
# deactivating them leaves nothing behind (no child, no address).
# shellcheck disable=SC2317 # functions run through check, wait_until or trap
GUESTS=1
VM_SMP=1
VM_TIMEOUT=300
SOFTIB=1
NEEDS="NetworkManager nmcli dbus-daemon /lib/systemd/systemd-udevd opensm"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ib_lib.sh"
. "$(dirname "$0")/distro_lib.sh"

conf=/etc/NetworkManager/conf.d/99-ipoib-test.conf
keyfiles=/etc/NetworkManager/system-connections
cleanup() {
	rm -f "$conf" "$keyfiles"/ib-test*.nmconnection
	rm -rf /var/lib/NetworkManager/* /run/NetworkManager
	distro_cleanup
}
trap cleanup EXIT

distro_fabric

# Only InfiniBand devices are NetworkManager's here: eth0 is the test
# bed's.
mkdir -p "${conf%/*}"
cat >"$conf" <<'EOF2'
[main]
no-auto-default=*
dns=none
rc-manager=unmanaged

[keyfile]
unmanaged-devices=except:type:infiniband
EOF2
check "systemd-udevd running, devices announced" udev_start
check "the system D-Bus running" dbus_start
NetworkManager --debug --log-level=INFO >/tmp/nm.log 2>&1 &
nm_pid=$!
nm_dev_state() {	# nm_dev_state IF: NetworkManager's state of IF
	nmcli -g GENERAL.STATE device show "$1" 2>/dev/null
}
check "NetworkManager: $if0 is an available infiniband device" \
	wait_until 30 eval "nm_dev_state $if0 | grep -q disconnected"

nm_log() {	# after a failure: what NetworkManager said
	grep -Ei 'infiniband|ib0|error|warn' /tmp/nm.log | tail -n 25 |
		sed 's/^/#   nm: /'
}

# what_is IF MODE MTU ADDR: the interface as configured
what_is() {
	echo "$1: mode $(mode_of "$1"), MTU $(mtu_of "$1"), $(addrs_of "$1")"
	[ "$(mode_of "$1")" = "$2" ] && [ "$(mtu_of "$1")" = "$3" ] &&
		[ "$(addrs_of "$1")" = "$4" ]
}

# --- datagram mode, an MTU, an address ---------------------------------
check "nmcli connection add type infiniband: datagram, MTU 2044, 10.30.0.1/24" \
	nmcli connection add type infiniband con-name ib-test ifname "$if0" \
	infiniband.transport-mode datagram infiniband.mtu 2044 \
	ipv4.method manual ipv4.addresses 10.30.0.1/24 ipv6.method disabled
check "... activates" nmcli -w 30 connection up ib-test
[ "$CHECK_RC" = 0 ] || nm_log
check "... $if0: datagram mode, MTU 2044, 10.30.0.1/24" \
	what_is "$if0" datagram 2044 10.30.0.1/24
check "... ping across" wait_until 20 pings 1 -W 1 10.30.0.2

# --- connected mode ------------------------------------------------------
check "nmcli connection modify: connected mode, MTU 65520" \
	nmcli connection modify ib-test infiniband.transport-mode connected \
	infiniband.mtu 65520
check "... reactivates" nmcli -w 30 connection up ib-test
[ "$CHECK_RC" = 0 ] || nm_log
check "... $if0: connected mode, MTU 65520, 10.30.0.1/24" \
	what_is "$if0" connected 65520 10.30.0.1/24
check "... ping with 20000 bytes" \
	wait_until 20 pings 1 -W 1 -s 20000 10.30.0.2
check "... over an RC connection (debugfs: live)" \
	grep -q ' live ' "/sys/kernel/debug/ipoib/${if0}_cm"

# --- a P_Key child ---------------------------------------------------------
child=$if0.8123
check "nmcli connection add: a child of $if0, P_Key 0x8123, 10.31.0.1/24" \
	nmcli connection add type infiniband con-name ib-test-child \
	infiniband.parent "$if0" infiniband.p-key 0x8123 \
	infiniband.transport-mode datagram \
	ipv4.method manual ipv4.addresses 10.31.0.1/24 ipv6.method disabled
check "... activates" nmcli -w 30 connection up ib-test-child
[ "$CHECK_RC" = 0 ] || nm_log
check "... $child: P_Key 0x8123, parent $if0" sh -c \
	"test \$(cat /sys/class/net/$child/pkey) = 0x8123 &&
	 test \$(cat /sys/class/net/$child/parent) = $if0"
check "... $child: datagram mode, MTU 4092 (the partition's group), 10.31.0.1/24" \
	what_is "$child" datagram 4092 10.31.0.1/24
check "... ping across the partition" wait_until 20 pings 1 -W 1 10.31.0.2

# --- deactivated, nothing left -----------------------------------------------
# NetworkManager finishes a deactivation after nmcli returns
no_addr() {
	test -z "$(ip -4 -o addr show dev "$1")"
}
check "nmcli connection down: the child is deleted" sh -c \
	"nmcli -w 30 connection down ib-test-child" &&
	check "... $child is gone" wait_until 10 test ! -e "/sys/class/net/$child"
check "nmcli connection down: $if0 keeps no address" sh -c \
	"nmcli -w 30 connection down ib-test" &&
	check "... $if0 has no address" wait_until 10 no_addr "$if0"
check "nmcli connection delete: both, keyfiles gone" sh -c \
	"nmcli connection delete ib-test ib-test-child &&
	 ! ls $keyfiles/ib-test* 2>/dev/null"
kill "$nm_pid"
check "NetworkManager exits" wait_until 20 sh -c "! kill -0 $nm_pid 2>/dev/null"
check "nothing left: $if0 without children, addresses or routes" sh -c \
	"! ls -d /sys/class/net/$if0.* 2>/dev/null &&
	 test -z \"\$(ip -o addr show dev $if0)\" &&
	 test -z \"\$(ip route show dev $if0)\""
readdressed() { ip addr add 10.30.0.1/24 dev "$if0" && pings 3 -W 5 10.30.0.2; }
check "... the far end still answers over the default partition" readdressed
distro_fabric_down
finish
