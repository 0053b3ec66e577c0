#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the InfiniBand selftests after lib.sh, in the guest: the test
# fabric of tools/softib (two devices cabled port to port, softib0 and
# softib1) and Debian's opensm as its subnet manager.

sib=$IPOIB_TOP/build/$(uname -r)/softib/softib.ko
# shellcheck disable=SC2034 # used by the tests
guid0=0x0200534200000001
# shellcheck disable=SC2034 # used by the tests
guid1=0x0200534200000101
# shellcheck disable=SC2034 # used by the tests
gid0=fe80::200:5342:0:1
# shellcheck disable=SC2034 # used by the tests
gid1=fe80::200:5342:0:101
sysib=/sys/class/infiniband
osm_pid=

port_state() {	# port_state DEV: "4: ACTIVE" etc.
	cat "$sysib/$1/ports/1/state"
}
both_active() {
	port_state softib0 | grep -q ACTIVE &&
		port_state softib1 | grep -q ACTIVE
}
both_init() {
	port_state softib0 | grep -q INIT && port_state softib1 | grep -q INIT &&
		grep -q LinkUp "$sysib/softib1/ports/1/phys_state"
}
port_lid() {	# port_lid DEV
	echo $(($(cat "$sysib/$1/ports/1/lid")))
}
sm_lid() {	# sm_lid DEV
	echo $(($(cat "$sysib/$1/ports/1/sm_lid")))
}
both_ifs() {	# ib_ipoib has an interface on each port
	ipoib_if softib0 >/dev/null && ipoib_if softib1 >/dev/null
}
# ifs_split: ib_ipoib's interfaces of both ports ($if0 here, 10.30.0.1;
# $if1 in namespace b, 10.30.0.2), up and talking
ifs_split() {
	check "... an interface on each port" wait_until 10 both_ifs
	if0=$(ipoib_if softib0) if1=$(ipoib_if softib1)
	ip netns add b 2>/dev/null
	ip link set "$if1" netns b
	ip addr add 10.30.0.1/24 dev "$if0"
	ip -n b addr add 10.30.0.2/24 dev "$if1"
	ip link set "$if0" up
	ip -n b link set "$if1" up
	check "... ping across" wait_until 20 pings 1 -W 1 10.30.0.2
}
softib_count() {	# softib_count DEV COUNTER: from its debugfs file
	awk -v n="$2" '$1 == n { print $2 }' "/sys/kernel/debug/softib/$1"
}
# softib_unload: after the test, a real HCA's fatal CQ overrun never
# happened (the soft HCA drops the completion and goes on), then unload
softib_unload() {
	local d
	for d in "$sysib"/softib*; do
		d=${d##*/}
		check "no completion queue of $d overran" \
			test "$(softib_count "$d" cq_overflow)" = 0
	done
	check "softib unloads" rmmod softib
}

# softib_load [DEVICES]: DEVICES (default 2) registered, cabled in pairs
# (softib0-softib1, softib2-softib3, ...), ports INIT
softib_load() {
	local n=${1:-2}
	modprobe ib_umad && insmod "$sib" devices="$n" &&
		wait_until 10 test -e "$sysib/softib$((n - 1))/ports/1/state"
}

# The SM's options: a standby SM is polled every second and given up
# after two misses, so that a handover takes seconds, not a minute.
osm_conf=/tmp/opensm.conf
cat >$osm_conf <<'EOF'
sminfo_polling_timeout 1000
polling_retry_number 2
EOF

# opensm_start GUID [OPTION...]: an SM on that port, with the partitions
# of /tmp/partitions.conf, its cache (guid2lid) in /tmp/osm-GUID and its
# log in /tmp/osm-GUID.log; its PID in osm_pid
opensm_start() {
	local guid=$1
	shift
	mkdir -p "/tmp/osm-$guid"
	OSM_CACHE_DIR=/tmp/osm-$guid opensm -F "$osm_conf" -g "$guid" \
		-P /tmp/partitions.conf -f "/tmp/osm-$guid.log" -s 2 "$@" \
		>/dev/null 2>&1 &
	# shellcheck disable=SC2034 # used by the tests
	osm_pid=$!
}

# opensm_stop PID: and wait until it is gone
opensm_stop() {
	kill "$1" 2>/dev/null
	wait_until 10 sh -c "! kill -0 $1 2>/dev/null"
}

# opensm_log GUID: the end of its log, as comments (after a failure)
opensm_log() {
	tail -20 "/tmp/osm-$1.log" | sed 's/^/# opensm: /'
}

carrier_of() {	# carrier_of IF [NETNS]
	if [ -n "${2:-}" ]; then
		ip netns exec "$2" cat "/sys/class/net/$1/carrier" 2>/dev/null
	else
		cat "/sys/class/net/$1/carrier" 2>/dev/null
	fi
}
