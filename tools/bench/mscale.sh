#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by tools/bench/guest.sh: multicast at scale, in datagram mode
# (tools/bench/mscale.py does the work):
#   mscale_join_s      B joins MSCALE_GROUPS IPv4 groups (a socket each):
#                      seconds until its debugfs shows them all joined
#   mscale_rejoin      B's underlay goes down and up: seconds from up until
#                      all are joined again, and the RTNL probe meanwhile
#   mscale_sendonly    A sends one datagram to each: send-only groups A has
#   mscale_leave_s     B closes the sockets: seconds until the groups are gone
#   mscale_rtnl_max_s  the longest an RTNL probe (every 10 ms) waited while
#                      B left them, beside its median and the idle figures
#   mscale_hold_ms     the longest pass of B's multicast work (its time
#                      under RTNL: ipoib_mcast_run, timed by function_graph)
#                      over all of the above
MSCALE_GROUPS=${BENCH_MSCALE_GROUPS:-1024}
MSCALE_TRACE=/sys/kernel/debug/tracing

mscale_trace_on() {
	# only it patched: tracing every call would slow the guest down
	echo ipoib_mcast_run >"$MSCALE_TRACE/set_ftrace_filter" &&
		echo ipoib_mcast_run >"$MSCALE_TRACE/set_graph_function" &&
		echo 1 >"$MSCALE_TRACE/max_graph_depth" &&
		echo function_graph >"$MSCALE_TRACE/current_tracer"
}

# the longest ipoib_mcast_run traced, in ms; the tracer off again
mscale_trace_max_ms() {
	awk '/ipoib_mcast_run/ {
		for (i = 1; i < NF; i++)
			if ($(i + 1) == "us" && $i + 0 > m)
				m = $i + 0
	} END { if (m) printf "%.1f\n", m / 1000 }' "$MSCALE_TRACE/trace"
	echo nop >"$MSCALE_TRACE/current_tracer"
	: >"$MSCALE_TRACE/set_ftrace_filter"
	: >"$MSCALE_TRACE/set_graph_function"
}

# shellcheck disable=SC2154 # ifc, dir, top: set by tools/bench/guest.sh
mscale() {
	local mcg=/sys/kernel/debug/ipoib/${ifc}_mcg fifo=/tmp/mscale.fifo
	local out=$dir/mscale.B r
	sysctl -qw net.ipv4.igmp_max_memberships=$((MSCALE_GROUPS + 64))
	if [ "$ROLE" = B ]; then
		echo "idle $(python3 "$top/tools/bench/mscale.py" probe 2)" >"$out"
		mscale_trace_on || log "mscale: no function_graph tracer"
		rm -f "$fifo"
		mkfifo "$fifo"
		python3 "$top/tools/bench/mscale.py" join "$ifc" \
			"$MSCALE_GROUPS" "$mcg" <"$fifo" >>"$out" 2>&1 &
		exec 9>"$fifo"
		wait_until 180 grep -q '^rejoined' "$out" || true
		signal mscale-joined
		wait_for A mscale-sent 120 || true
		exec 9>&-
		wait_until 120 grep -q '^left' "$out" || true
		echo "hold $(mscale_trace_max_ms)" >>"$out"
		signal mscale-left
	else
		wait_for B mscale-joined 180 || true
		python3 "$top/tools/bench/mscale.py" send "$ifc" "$MSCALE_GROUPS"
		sleep 2
		put mscale_sendonly "$(grep -c 'send_only: yes' \
			"/sys/kernel/debug/ipoib/${ifc}_mcg")"
		put mscale_tx_mcast_limit "$(ethtool -S "$ifc" |
			awk '$1 == "tx_mcast_limit:" { print $2 }')"
		signal mscale-sent
		wait_for B mscale-left 180 || true
		r=$(cat "$out")
		log "mscale: $(echo "$r" | tr '\n' ';')"
		put mscale_groups "$MSCALE_GROUPS"
		put mscale_rtnl_idle "$(echo "$r" | awk '$1 == "idle" { print $2 " " $3 }')"
		put mscale_join "$(echo "$r" | awk '$1 == "joined" { print $2 " " $3 }')"
		put mscale_rejoin "$(echo "$r" | awk '$1 == "rejoined" {
			print $2 " " $3 " " $4 " " $5 }')"
		put mscale_leave "$(echo "$r" | awk '$1 == "left" {
			print $2 " " $3 " " $4 " " $5 " " $6 }')"
		put mscale_hold_ms "$(echo "$r" | awk '$1 == "hold" { print $2 }')"
	fi
	barrier mscale 120
}
