#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# systemd-networkd (Debian's, 252) configures ib_ipoib on the InfiniBand
# test fabric (distro_lib.sh): a .network for softib0's interface with an
# address and IPoIB= naming a .netdev of Kind=ipoib, whose [IPoIB]
# PartitionKey, Mode and IgnoreUserspaceMulticastGroups networkd passes
# through rtnl; networkctl shows both links configured, both ping the far
# end, and the child has the P_Key, mode and umcast it was given.
# shellcheck disable=SC2317 # functions run through check, wait_until or trap
GUESTS=1
VM_SMP=1
VM_TIMEOUT=300
SOFTIB=1
NEEDS="/lib/systemd/systemd-networkd /lib/systemd/systemd-networkd-wait-online networkctl dbus-daemon /lib/systemd/systemd-udevd opensm"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ib_lib.sh"
. "$(dirname "$0")/distro_lib.sh"

etc=/etc/systemd/network
files="$etc/50-ipoib-test.network $etc/50-ipoib-test-child.netdev
	$etc/50-ipoib-test-child.network /etc/systemd/networkd.conf.d/50-ipoib-test.conf"
cleanup() {
	# shellcheck disable=SC2086 # file names are words
	rm -f $files
	rm -rf /run/systemd/netif
	distro_cleanup
}
trap cleanup EXIT

distro_fabric
child=$if0.store

mkdir -p "$etc" /etc/systemd/networkd.conf.d
# Routes and rules networkd did not make (eth0's) are not its business
cat >/etc/systemd/networkd.conf.d/50-ipoib-test.conf <<'EOF2'
[Network]
ManageForeignRoutes=no
ManageForeignRoutingPolicyRules=no
EOF2
cat >"$etc/50-ipoib-test.network" <<EOF2
[Match]
Name=$if0

[Network]
Address=10.30.0.1/24
LinkLocalAddressing=no
IPv6AcceptRA=no
IPoIB=$child
EOF2
cat >"$etc/50-ipoib-test-child.netdev" <<EOF2
[NetDev]
Name=$child
Kind=ipoib

[IPoIB]
PartitionKey=0x8123
Mode=connected
IgnoreUserspaceMulticastGroups=true
EOF2
cat >"$etc/50-ipoib-test-child.network" <<EOF2
[Match]
Name=$child

[Network]
Address=10.31.0.1/24
LinkLocalAddressing=no
IPv6AcceptRA=no
EOF2

check "systemd-udevd running, devices announced" udev_start
check "the system D-Bus running (networkctl asks networkd over it)" dbus_start
# what systemd would make for the unit (RuntimeDirectory=): networkd
# drops root before it writes there
install -d -o systemd-network -g systemd-network /run/systemd/netif \
	/run/systemd/netif/links /run/systemd/netif/leases /run/systemd/netif/lldp
/lib/systemd/systemd-networkd >/tmp/networkd.log 2>&1 &
nd_pid=$!
check "systemd-networkd-wait-online: $if0 and $child configured" \
	/lib/systemd/systemd-networkd-wait-online --timeout=60 \
	-i "$if0" -i "$child"
if [ "$CHECK_RC" != 0 ]; then
	networkctl list | sed 's/^/#   /'
	tail -n 20 /tmp/networkd.log | sed 's/^/#   networkd: /'
fi
setup_of() {	# setup_of IF: networkctl's SETUP column
	networkctl list --no-legend "$1" | awk '{ print $5 }'
}
check "networkctl list: $if0 configured" test "$(setup_of "$if0")" = configured
check "networkctl list: $child configured" test "$(setup_of "$child")" = configured
networkctl list | sed 's/^/# /'
# a key networkd does not know is only a warning in its log
check "networkd took every key of the .netdev" \
	sh -c "! grep -E 'Unknown key|ignoring' /tmp/networkd.log"
check "$if0 has 10.30.0.1/24" test "$(addrs_of "$if0")" = 10.30.0.1/24
check "$child has 10.31.0.1/24" test "$(addrs_of "$child")" = 10.31.0.1/24
details=$(ip -d link show "$child")
printf '# %s\n' "$details"
check "$child: an rtnl child of $if0 (ip -d: pkey 0x8123 mode connected umcast 0001)" \
	grep -q 'ipoib pkey 0x8123 mode connected umcast 0001 ' <<<"$details"
check "... sysfs agrees: parent $if0, pkey 0x8123, umcast 1, connected" sh -c \
	"test \$(cat /sys/class/net/$child/parent) = $if0 &&
	 test \$(cat /sys/class/net/$child/pkey) = 0x8123 &&
	 test \$(cat /sys/class/net/$child/umcast) = 1 &&
	 test \$(cat /sys/class/net/$child/mode) = connected"
check "ping across on $if0" wait_until 20 pings 1 -W 1 10.30.0.2
check "ping across the partition on $child, 20000 bytes" \
	wait_until 20 pings 1 -W 1 -s 20000 10.31.0.2
check "... over an RC connection (debugfs: live)" \
	grep -q ' live ' "/sys/kernel/debug/ipoib/${child}_cm"
kill "$nd_pid"
check "systemd-networkd exits" wait_until 20 sh -c "! kill -0 $nd_pid 2>/dev/null"
check "eth0 kept its address" sh -c "ip -4 -o addr show dev eth0 | grep -q '10\.10\.0\.'"
check "ip link delete $child" ip link delete "$child"
distro_fabric_down
finish
