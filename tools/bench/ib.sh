#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by tools/bench/guest.sh after recover.sh: the InfiniBand test
# fabric (tools/softib: both devices in A, cabled to each other; opensm
# on softib0, as in the ib_* selftests). A's interface on softib0 pings
# the one on softib1, which is in namespace b; B only waits.
#   ib_first, ib_steady_rtt  the first ping after A forgot the neighbour
#                        (interface down and up: ARP, then a PathRecord
#                        query to the SA) against the median RTT after it
#   ib_port_MODE_reply   the SM takes softib1's port down (PortInfo
#                        PortState) and sweeps it back: from the port's
#                        ACTIVE to A's first reply, in MODE
#   ib_port_MODE_gap     A's longest time without a reply over it all
#                        (mostly the SM's sweep)

ib_port_state() {
	cat /sys/class/infiniband/softib1/ports/1/state
}

ib_port_down() {
	[[ "$(ib_port_state)" != *ACTIVE* ]]
}

# ib_port MODE: (A) softib1's port down and swept back, pinging across
# shellcheck disable=SC2154 # dir: set by tools/bench/guest.sh
ib_port() {
	local name=ib_port_$1 t0 t_down t_act
	watch_start port=/sys/class/infiniband/softib1/ports/1/state
	ping_start
	if wait_until 10 test -s "$WATCH_LOG" &&
		wait_until 10 replied_after 0; then
		t0=$(now)
		ibportstate -C softib1 -D 0 1 down >/dev/null || true
		wait_until 5 ib_port_down || true
		# a heavy sweep now, not at the next sweep interval
		kill -HUP "$osm_pid"
		wait_until 30 replied_after "$(now)" || true
	fi
	stop "$PING_PID" "$WATCH_PID"
	cp "$WATCH_LOG" "$dir/$name.watch"
	t_down=$(when port '^[0-3]:' "${t0:-0}")
	t_act=
	[ -z "$t_down" ] || t_act=$(when port 'ACTIVE' "$t_down")
	put_ms "${name}_reply" "$(ms "$t_act" "$(reply_after "$t_act")")"
	put_ms "${name}_gap" \
		"$(ms 0 "$(longest_gap "$(reply_after 0)" "$(now)")")"
}

# ib_setup: (A) the fabric swept, ib_ipoib's interfaces on it talking.
# ib_lib.sh's helpers join guest.sh's shell from here on: recover.sh's
# names must differ from theirs (rxe_port_state, not port_state).
# shellcheck disable=SC2154 # top: set by tools/bench/guest.sh
ib_setup() {
	# shellcheck source=SCRIPTDIR/../../selftests/ib_lib.sh
	. "$top/selftests/ib_lib.sh"
	rm -rf /tmp/osm-*
	echo 'Default=0x7fff, ipoib, mtu=5, rate=7 : ALL=full;' \
		>/tmp/partitions.conf
	check "ib: softib, two ports cabled" softib_load || return 1
	opensm_start "$guid0"
	check "ib: opensm sweeps both ports to ACTIVE" \
		wait_until 60 both_active || return 1
	ifs_split
	[ "$CHECK_RC" = 0 ]
}

ib_bench() {
	local ib_ip=10.30.0.2
	if [ "$ROLE" = A ] && ib_setup; then
		first_ping ib_ "$if0"
		ib_port datagram
		echo connected >"/sys/class/net/$if0/mode"
		ip netns exec b sh -c "echo connected >/sys/class/net/$if1/mode"
		check "ib: a connection" \
			ping -c 3 -i 0.2 -W 5 -s 30000 "$ib_ip"
		ib_port connected
	fi
	if [ "$ROLE" = A ]; then
		ip netns delete b 2>/dev/null || true
		[ -z "${osm_pid:-}" ] || opensm_stop "$osm_pid"
		# ib_ipoib lets go of softib's ports as they unregister
		check "ib: softib unloads" rmmod softib
	fi
	barrier ib 300
}
