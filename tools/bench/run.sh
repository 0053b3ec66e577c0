#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: datagram- and connected-mode throughput, not a test. Builds the module, boots
# two soft-RoCE guests (tools/vm/run.sh, guest program tools/bench/guest.sh)
# and measures in them, one after the other: iperf3 TCP over ibN, raw UD
# verbs (ib_send_bw -c UD) at the same message size, iperf3 UDP over ibN and
# iperf3 TCP over the underlying NIC; then iperf3 TCP over ibN in connected
# mode and raw RC verbs (ib_send_bw -c RC, 64 KiB messages); and how long
# traffic takes to come back after a link flap, a peer's reload and a mode
# switch, and the first packet to a new neighbour (tools/bench/recover.sh),
# and on the InfiniBand test fabric (tools/bench/ib.sh).
# Prints the tables and the ratios and writes them to build/bench/result.txt.
#   KVER            kernel to boot (default 6.12.117+deb12-amd64)
#   BENCH_TIME      seconds per measurement (default 10)
#   BENCH_UD_SIZE   ib_send_bw message size (default 4096)
#   BENCH_GID       ib_send_bw GID index (default 0, the one ib_ipoib uses)
#   BENCH_RC_SIZE   ib_send_bw -c RC message size (default 65536)
#   BENCH_IPOIB_PARAMS  ib_ipoib module parameters (default none)
#   BENCH_NSCALE_PATHS  paths A holds in nscale (default 4096)
#   BENCH_FLAPS     flaps per row of recover's outage grid, of which the
#                   worst is printed (default 3)
#   BENCH_STEPS     measurements to run (tcp_ib ud udp_ib tcp_eth tcp_cm rc
#                   recover mscale nscale ib cscale)
#   BENCH_SLUB_DEBUG=1  keep the test bed's slub_debug=FZPU (by default the
#                   guests boot with slub_debug=- : allocator debugging
#                   costs the skb-heavy paths more than the verbs path)
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${KVER:-6.12.117+deb12-amd64}
t=${BENCH_TIME:-10}
case $t in '' | *[!0-9]* | 0) echo "BENCH_TIME: seconds" >&2; exit 2 ;; esac
case ${BENCH_FLAPS:-3} in
'' | *[!0-9]* | 0) echo "BENCH_FLAPS: a number of flaps, 1 or more" >&2; exit 2 ;;
esac
out=$top/build/bench
run=$out/run-$kver
result=$out/result.txt
t_start=$(date +%s)

mkdir -p "$out"
echo "bench: building ib_ipoib for $kver"
make -s -C "$top" modules KVER="$kver"
# the ib step's soft IB HCA, which guest A loads from build/KVER/softib
make -s -C "$top/tools/softib" KVER="$kver"
# the cscale step's peers, played by A
make -s -C "$top/tools/cm_inject"

vm_args=(--env "BENCH_TIME=$t")
[ -z "${BENCH_UD_SIZE:-}" ] || vm_args+=(--env "BENCH_UD_SIZE=$BENCH_UD_SIZE")
[ -z "${BENCH_GID:-}" ] || vm_args+=(--env "BENCH_GID=$BENCH_GID")
[ -z "${BENCH_RC_SIZE:-}" ] || vm_args+=(--env "BENCH_RC_SIZE=$BENCH_RC_SIZE")
[ -z "${BENCH_STEPS:-}" ] || vm_args+=(--env "BENCH_STEPS=$BENCH_STEPS")
[ -z "${BENCH_FLAPS:-}" ] || vm_args+=(--env "BENCH_FLAPS=$BENCH_FLAPS")
[ -z "${BENCH_NSCALE_PATHS:-}" ] ||
	vm_args+=(--env "BENCH_NSCALE_PATHS=$BENCH_NSCALE_PATHS")
[ -z "${BENCH_IPOIB_PARAMS:-}" ] ||
	vm_args+=(--env "BENCH_IPOIB_PARAMS=$BENCH_IPOIB_PARAMS")
[ "${BENCH_SLUB_DEBUG:-0}" = 1 ] || vm_args+=(--append "slub_debug=-")

# others: the most QEMU processes of other runs (other checkouts do not
# all share run.sh's lock) seen at once while our guests ran, into FILE
others() {
	local max=0 n ours p
	while :; do
		n=0
		ours=
		for p in $(pgrep -f qemu-system-x86_64 || true); do
			if grep -qaF -- "$run/" "/proc/$p/cmdline" 2>/dev/null; then
				ours=1
			else
				n=$((n + 1))
			fi
		done
		if [ -n "$ours" ] && [ "$n" -gt "$max" ]; then
			max=$n
		fi
		echo "$max" >"$1"
		sleep 2
	done
}

rm -rf "$run" "$run.log"
echo "bench: two guests of $kver, measurements of ${t}s each (${BENCH_STEPS:-all eleven}) (log: $run.log)"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
others "$out/others" &
watcher=$!
trap 'kill "$watcher" 2>/dev/null || true' EXIT
rc=0
"$top/tools/vm/run.sh" --kver "$kver" --guests 2 --timeout $((12 * t + 900)) \
	--script "$top/tools/bench/guest.sh" --out "$run" "${vm_args[@]}" \
	>"$run.log" 2>&1 || rc=$?
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
trap - EXIT
nothers=$(cat "$out/others" 2>/dev/null || echo '?')
wall=$(($(date +%s) - t_start))

env_file=$run/shared/result.env
# val KEY: the value A recorded for KEY, empty if none
val() {
	[ -r "$env_file" ] || return 0
	awk -F= -v k="$1" '$1 == k { v = substr($0, length(k) + 2) } END { print v }' \
		"$env_file"
}

# cpu NAME: "A busy% (softirq%) / B ..." over that measurement
cpu() {
	printf '%s%% (si %s%%) / %s%% (si %s%%)' "$(val "${1}_cpu_A")" \
		"$(val "${1}_sirq_A")" "$(val "${1}_cpu_B")" "$(val "${1}_sirq_B")"
}

# loss NAME: what was lost on the way during that measurement
loss() {
	local s
	s="B: $(val "${1}_norq_B") with no receive posted"
	[ "$1" != tcp_eth ] || s="B: rxe not involved"
	# one receive takes up to 16 packets: the count says nothing here
	case $1 in tcp_cm | rc) s="RC: lost packets are retransmitted" ;; esac
	[ "$1" != udp_ib ] || s="$s, $(val udp_ib_udpbuf_B) UDP rcvbuf drops"
	[ -z "$(val "${1}_retrans")" ] || s="$s; $(val "${1}_retrans") retransmits"
	echo "$s"
}

# ratio X Y [TARGET]: X/Y to two places, or "n/a"
ratio() {
	awk -v x="$1" -v y="$2" -v target="${3:-}" 'BEGIN {
		if (x == "" || y == "" || y + 0 == 0) { print "n/a"; exit }
		r = x / y
		s = sprintf("%.2f", r)
		if (target != "")
			s = s sprintf(" (target >= %.2f: %s)", target,
				r >= target ? "met" : "NOT met")
		print s }'
}

ifc=$(val ifc)
ifc=${ifc:-ibN}
size=$(val ud_size)
tcp_ib=$(val tcp_ib_mbps)
udp_ib=$(val udp_ib_mbps)
ud=$(val ud_mbps)
tcp_eth=$(val tcp_eth_mbps)
tcp_cm=$(val tcp_cm_mbps)
# RC loses nothing: what A sent stands in if B printed no figure
rc_raw=$(val rc_mbps)
rc_raw=${rc_raw:-$(val rc_tx_mbps)}
mtu=$(val mtu)
udp_len='?'
slub=off
[ "${BENCH_SLUB_DEBUG:-0}" != 1 ] || slub=FZPU
[ -z "$mtu" ] || udp_len=$((mtu - 28))
{
	echo "ib_ipoib benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "kernel $kver; QEMU TCG, 1 vCPU per guest," \
		"soft-RoCE (rdma_rxe) on virtio-net;"
	echo "eth0 MTU $(val eth_mtu), $ifc MTU ${mtu:-?} ($(val params)); ${t}s per"
	echo "measurement, A sends, B receives; Mbit/s as received by B;"
	echo "host: $(nproc) cores, load average before $load_before, after $load_after;"
	echo "QEMU processes of other runs alongside: up to $nothers;" \
		"guests' slub_debug $slub"
	echo
	echo "| measurement | Mbit/s | CPU busy A / B | lost |"
	echo "| --- | ---: | --- | --- |"
	echo "| TCP over $ifc (iperf3, datagram mode) | ${tcp_ib:-n/a} |" \
		"$(cpu tcp_ib) | $(loss tcp_ib) |"
	echo "| raw UD verbs (ib_send_bw -c UD, ${size}-byte messages;" \
		"sent $(val ud_tx_mbps)) | ${ud:-n/a} | $(cpu ud) | $(loss ud) |"
	echo "| UDP over $ifc (iperf3, ${udp_len}-byte datagrams;" \
		"offered $(val udp_ib_offered), sent $(val udp_ib_sent_mbps)) |" \
		"${udp_ib:-n/a} | $(cpu udp_ib) | $(loss udp_ib) |"
	echo "| TCP over eth0, the underlay (iperf3) | ${tcp_eth:-n/a} |" \
		"$(cpu tcp_eth) | $(loss tcp_eth) |"
	echo "| TCP over $ifc (iperf3, connected mode, MTU 65520) |" \
		"${tcp_cm:-n/a} | $(cpu tcp_cm) | $(loss tcp_cm) |"
	echo "| raw RC verbs (ib_send_bw -c RC, $(val rc_size)-byte messages) |" \
		"${rc_raw:-n/a} | $(cpu rc) | $(loss rc) |"
	echo
	echo "connection: $(val cm_conn)"
	echo "$ifc TCP / raw UD:  $(ratio "$tcp_ib" "$ud" 0.9)"
	echo "$ifc UDP / raw UD:  $(ratio "$udp_ib" "$ud") (offered 0.90)"
	echo "$ifc TCP / eth0 TCP: $(ratio "$tcp_ib" "$tcp_eth")"
	echo "$ifc connected TCP / raw RC: $(ratio "$tcp_cm" "$rc_raw" 0.9)"
	echo "$ifc connected TCP / eth0 TCP: $(ratio "$tcp_cm" "$tcp_eth")"
	echo
	echo "recovery, ms (goal: 100 from the event's end to the first packet)"
	echo "| event | datagram | connected |"
	echo "| --- | ---: | ---: |"
	echo "| link flap: A's port ACTIVE to A's carrier |" \
		"$(val flap_datagram_carrier_ms) | $(val flap_connected_carrier_ms) |"
	echo "| link flap: A's port ACTIVE to A's first reply |" \
		"$(val flap_datagram_reply_ms) | $(val flap_connected_reply_ms) |"
	echo "| link flap: A's port ACTIVE to eth0 operstate up (linkwatch) |" \
		"$(val flap_datagram_oper_ms) | $(val flap_connected_oper_ms) |"
	echo "| link flap: eth0 operstate up to A's first reply |" \
		"$(val flap_datagram_oper_reply_ms) | $(val flap_connected_oper_reply_ms) |"
	echo "| link flap: A's port ACTIVE to eth0's address out of DAD |" \
		"$(val flap_datagram_usable_ms) | $(val flap_connected_usable_ms) |"
	echo "| link flap, pinging through it: address out of DAD to A's first reply |" \
		"$(val flap_datagram_usable_reply_ms) | $(val flap_connected_usable_reply_ms) |"
	for o in 300 1000 5000; do
		for i in 10 100; do
			echo "| link flap, $o-ms outage, a ping every $i ms: the first request after the address is out of DAD, to its delivery (worst of ${BENCH_FLAPS:-3} flaps) |" \
				"$(val "flapg_datagram_${o}_${i}_ms") | $(val "flapg_connected_${o}_${i}_ms") |"
		done
	done
	echo "| link flap, 1-s outage under iperf3 TCP: the same, a ping every 10 ms |" \
		"$(val flapt_datagram_ms) | $(val flapt_connected_ms) |"
	echo "| ... iperf3 TCP over the 12 s with the flap, Mbit/s |" \
		"$(val flapt_datagram_tcp_mbps) | $(val flapt_connected_tcp_mbps) |"
	echo "| link flap, quiet: a ping begun as the address is out of DAD, its first request to its first reply |" \
		"$(val flapq_datagram_first_ms) | $(val flapq_connected_first_ms) |"
	echo "| peer reload: B's carrier to B's first echo request |" \
		"$(val reload_datagram_echo_ms) | $(val reload_connected_echo_ms) |"
	echo "| peer reload: A's longest time without a reply |" \
		"$(val reload_datagram_gap_ms) | $(val reload_connected_gap_ms) |"
	echo "| mode switch to it: A's longest time without a reply |" \
		"$(val switch_datagram_ms) | $(val switch_connected_ms) |"
	echo "first ping to a forgotten neighbour (ARP and path): $(val first_ms) ms;" \
		"steady RTT $(val steady_rtt_ms) ms;" \
		"ratio $(ratio "$(val first_ms)" "$(val steady_rtt_ms)")" \
		"(goal <= 2 on RoCE)"
	echo "InfiniBand test fabric (softib, opensm): first ping to a" \
		"forgotten neighbour (ARP, PathRecord) $(val ib_first_ms) ms;" \
		"steady RTT $(val ib_steady_rtt_ms) ms; ratio" \
		"$(ratio "$(val ib_first_ms)" "$(val ib_steady_rtt_ms)")" \
		"(goal <= 3 on InfiniBand)"
	echo "| InfiniBand: the SM takes the peer's port down and sweeps it back | datagram | connected |"
	echo "| --- | ---: | ---: |"
	echo "| the peer's port ACTIVE to A's first reply |" \
		"$(val ib_port_datagram_reply_ms) | $(val ib_port_connected_reply_ms) |"
	echo "| A's longest time without a reply (mostly the sweep) |" \
		"$(val ib_port_datagram_gap_ms) | $(val ib_port_connected_gap_ms) |"
	# shellcheck disable=SC2046 # the value's fields
	set -- $(val cscale_rtt)
	echo "connections: A's ping RTT to B over theirs (median of 101)" \
		"${1:-?} ms alone, ${2:-?} ms beside $(val cscale_peers) live" \
		"connections into B; each injected one cost B $(val cscale_kb) kB"
	echo
	# mscale_leave: left groups, close s, gone s, RTNL max s, median s
	# shellcheck disable=SC2046 # the value's fields
	set -- $(val mscale_leave)
	echo "multicast, $(val mscale_groups) IPv4 groups:" \
		"B joined them in $(val mscale_join | cut -d' ' -f2) s;" \
		"A sending to each has $(val mscale_sendonly) send-only groups" \
		"(tx_mcast_limit $(val mscale_tx_mcast_limit));"
	echo "B's underlay down and up: $(val mscale_rejoin |
		awk '{ printf "%s of them joined again %s s after up; an RTNL probe waited up to %s s meanwhile (median %s)", $1, $2, $3, $4 }')"
	echo "B leaving them: socket closed in ${2:-?} s, groups gone after" \
		"${3:-?} s (goal < 0.5), ${1:-?} left; an RTNL probe waited" \
		"up to ${4:-?} s meanwhile (median ${5:-?}; idle: $(val mscale_rtnl_idle))"
	echo "B's multicast work held RTNL at most $(val mscale_hold_ms) ms at a" \
		"time (its longest pass, by function_graph; goal <= 50)"
	echo
	# shellcheck disable=SC2046 # the value's fields
	set -- $(val nscale_rtt)
	echo "neighbours: A's ping RTT to B (median of 101) ${1:-?} ms with one" \
		"path, ${2:-?} ms with $(val nscale_paths) paths (each with its" \
		"own GID; all had one $(val nscale_fill_s) s after the first send)"
	echo
	echo "run: $(tail -n 1 "$run.log" 2>/dev/null | sed 's/ \/.*//');" \
		"${wall}s wall including the build"
} >"$result"
cat "$result"
if [ $rc -ne 0 ]; then
	echo
	echo "bench: the guests did not finish cleanly;" \
		"see $run.log and $run/shared/*.out"
	grep -aE '^ *(reason:|not ok)' "$run.log" | head -n 20 || true
fi
exit $rc
