#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the selftests of the distribution's network tools (nm.sh,
# networkd.sh, ifupdown.sh) after lib.sh and ib_lib.sh, in the guest. The
# tool under test configures softib0's interface ($if0) and its children;
# the far end, softib1's interface ($if1, 10.30.0.2) and its child of
# partition 0x0123 ($if1.8123, 10.31.0.2), sits in namespace b, set up
# with iproute2 in connected mode, where no tool sees it. Everything a
# test writes below /etc, /run and /var is in the guest's overlay.

# shellcheck disable=SC2154 # guid0, osm_pid: ib_lib.sh's
# shellcheck disable=SC2317 # functions run through check, wait_until or trap

# distro_fabric: softib, opensm with the default partition and 0x0123,
# ib_ipoib, and the far end talking
distro_fabric() {
	rm -rf /tmp/osm-*	# a guid2lid file from an earlier test of this boot
	cat >/tmp/partitions.conf <<'EOT'
Default=0x7fff, ipoib, mtu=5, rate=7 : ALL=full;
Storage=0x0123, ipoib, mtu=5, rate=7 : ALL=full;
EOT
	check "softib: two ports, cabled" softib_load
	opensm_start "$guid0"
	check "opensm sweeps both ports to ACTIVE" wait_until 60 both_active
	[ "$CHECK_RC" = 0 ] || opensm_log "$guid0"
	check "modprobe ib_ipoib" modprobe ib_ipoib
	check "... an interface on each port" wait_until 10 both_ifs
	# shellcheck disable=SC2034 # if0 is the tests'
	if0=$(ipoib_if softib0) if1=$(ipoib_if softib1)
	check "the far end: $if1 and its 0x8123 child in namespace b" far_end
}

far_end() {
	ip netns add b &&
		ip link set "$if1" netns b &&
		ip -n b link add link "$if1" name "$if1.8123" type ipoib \
			pkey 0x8123 mode connected &&
		ip -n b link set "$if1" type ipoib mode connected &&
		ip -n b addr add 10.30.0.2/24 dev "$if1" &&
		ip -n b addr add 10.31.0.2/24 dev "$if1.8123" &&
		ip -n b link set "$if1" up &&
		ip -n b link set "$if1.8123" up
}

# distro_fabric_down: the SM stopped, softib unloaded (after its checks)
distro_fabric_down() {
	ip netns delete b
	opensm_stop "$osm_pid"
	softib_unload
}

# udev_start: systemd-udevd, as on a booted system, with the devices
# present so far announced; links keep their kernel names (eth0 is
# the test bed's). Network tools wait for udev before they touch a link.
udev_start() {
	mkdir -p /etc/systemd/network /etc/udev/rules.d &&
		printf '[Match]\nOriginalName=*\n\n[Link]\nNamePolicy=kernel\n' \
			>/etc/systemd/network/00-test-kernel-names.link &&
		# no ifup for a hotplugged eth0, whatever the host's
		# /etc/network/interfaces says
		ln -sf /dev/null /etc/udev/rules.d/80-ifupdown.rules &&
		/lib/systemd/systemd-udevd --daemon &&
		udevadm trigger --action=add --subsystem-match=net &&
		udevadm settle --timeout=30
}

# dbus_start: the system bus
dbus_start() {
	rm -f /run/dbus/pid
	mkdir -p /run/dbus && dbus-daemon --system --fork
}

# distro_cleanup: the files of udev_start and dbus_start (their daemons
# die with the test)
distro_cleanup() {
	rm -f /etc/systemd/network/00-test-kernel-names.link /run/dbus/pid \
		/etc/udev/rules.d/80-ifupdown.rules
}

# addrs_of IF: the interface's IPv4 addresses, or nothing
addrs_of() {
	ip -4 -o addr show dev "$1" 2>/dev/null | awk '{ print $4 }'
}

# mode_of IF, mtu_of IF
mode_of() {
	cat "/sys/class/net/$1/mode"
}
mtu_of() {
	cat "/sys/class/net/$1/mtu"
}
