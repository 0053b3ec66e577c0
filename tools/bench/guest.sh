#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of tools/bench/run.sh (make bench): two soft-RoCE guests,
# A sends and B receives, one measurement at a time:
#   tcp_ib   iperf3 TCP over ibN (datagram mode)
#   ud       ib_send_bw -c UD on rxe0: raw UD verbs, own QPs, same port/GID
#   udp_ib   iperf3 UDP over ibN, datagrams that fill the MTU, offered at
#            0.9 x what ud delivered
#   tcp_eth  iperf3 TCP over eth0, the underlay
#   tcp_cm   iperf3 TCP over ibN in connected mode (MTU 65520, RC)
#   rc       ib_send_bw -c RC on rxe0: raw RC verbs, BENCH_RC_SIZE messages
#   recover  recovery after events and the first packet (recover.sh), in
#            datagram mode after tcp_eth, in connected mode after rc
#   mscale   multicast at scale (mscale.sh): 1024 groups joined, sent to
#            and left, RTNL meanwhile
#   nscale   neighbours at scale (nscale.sh): RTT with 4096 paths
#   ib       the InfiniBand test fabric in A (ib.sh): first packet and
#            recovery from a port event, both modes
#   cscale   connections at scale (cscale.sh): RTT with 256 connections
#            into B, and their memory
# B starts each server and signals A, A runs the client; a barrier ends each
# measurement, so no two ever overlap. Both guests sample their CPU time
# (/proc/stat) over each measurement. A writes key=value lines to
# /shared/result.env, which run.sh turns into the table; the tools' raw
# output is kept in /shared/bench/.
#   BENCH_TIME     seconds per measurement (default 10)
#   BENCH_UD_SIZE  ib_send_bw message size (default 4096: one full ibN
#                  datagram, 4-octet IPoIB header + 4092-octet IP packet)
#   BENCH_GID      GID index for ib_send_bw (default 0, the one ib_ipoib uses)
#   BENCH_RC_SIZE  ib_send_bw -c RC message size (default 65536: one
#                  connected-mode message, 65524 octets, rounded up)
#   BENCH_IPOIB_PARAMS  ib_ipoib module parameters (recv_queue_size=1024)
#   BENCH_STEPS    the measurements to run, by name (default: all eleven);
#                  udp_ib needs ud for its offered rate
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=SCRIPTDIR/../../selftests/lib.sh
. "$top/selftests/lib.sh"

T=${BENCH_TIME:-10}
UD_SIZE=${BENCH_UD_SIZE:-4096}
RC_SIZE=${BENCH_RC_SIZE:-65536}
GIDX=${BENCH_GID:-0}
dir=$SHARED/bench
res=$SHARED/result.env
idx=$(($(printf '%d' "'$ROLE") - 64))
STEPS=${BENCH_STEPS:-tcp_ib ud udp_ib tcp_eth tcp_cm rc recover mscale nscale ib cscale}
IPERF_PORT=5201
PERFTEST_PORT=18515

# key=value for run.sh (A only writes)
put() {
	echo "$1=$2" >>"$res"
}

# udp_rcvbuf_errors: the host's UDP receive-buffer drops so far
udp_rcvbuf_errors() {
	awk '$1 == "Udp:" && !c {
		for (i = 2; i <= NF; i++)
			if ($i == "RcvbufErrors")
				c = i
		next
	}
	$1 == "Udp:" { print $c; exit }' /proc/net/snmp
}

# sample: "busy softirq total" jiffies from /proc/stat, then rxe0's
# received packets and consumed receive WQEs, and UDP RcvbufErrors
sample() {
	local _cpu u n s i w irq sirq st
	local c=/sys/class/infiniband/rxe0/ports/1/hw_counters
	read -r _cpu u n s i w irq sirq st _ </proc/stat
	echo "$((u + n + s + irq + sirq + st)) $sirq" \
		"$((u + n + s + i + w + irq + sirq + st))" \
		"$(cat $c/rcvd_pkts) $(cat $c/rdma_recvs) $(udp_rcvbuf_errors)"
}

# report NAME "BEFORE": busy% and softirq% of this guest since BEFORE, the
# packets rxe0 received but found no posted receive for (UD drops them),
# and the UDP receive-buffer drops
report() {
	local b0 q0 t0 p0 r0 u0 b1 q1 t1 p1 r1 u1
	read -r b0 q0 t0 p0 r0 u0 <<<"$2"
	read -r b1 q1 t1 p1 r1 u1 <<<"$(sample)"
	awk -v b=$((b1 - b0)) -v q=$((q1 - q0)) -v t=$((t1 - t0)) \
		-v norq=$(((p1 - p0) - (r1 - r0))) -v udp=$((u1 - u0)) 'BEGIN {
		if (t <= 0) t = 1
		printf "%.0f %.0f %d %d\n", 100 * b / t, 100 * q / t, norq, udp }' \
		>"$dir/$1.stats.$ROLE"
}

listening() {
	[ -n "$(ss -Htln "sport = :$1")" ]
}

# serve NAME PORT CMD...: (B) start a server, tell A, wait for A's end
serve() {
	local name=$1 port=$2 pid s0
	shift 2
	"$@" >"$dir/$name.server.txt" 2>&1 &
	pid=$!
	if ! wait_until 20 listening "$port"; then
		echo "not ok - $name: server listening on $port"
		vm_fail "$name: server"
		kill "$pid" 2>/dev/null || true
		signal "$name-failed"
		return 0
	fi
	s0=$(sample)
	signal "$name-ready"
	wait_for A "$name-done" $((T + 120)) || true
	report "$name" "$s0"
	if ! wait "$pid"; then
		echo "not ok - $name: server exit status"
		vm_fail "$name: server exit status"
		sed 's/^/#   /' "$dir/$name.server.txt"
	fi
}

# server_up NAME: (A) 0 once B's server for NAME is up, 1 if it failed
server_up() {
	local end=$(($(date +%s) + 60))
	until [ -e "$VM_FLAGS/B.$1-ready" ]; do
		if [ -e "$VM_FLAGS/B.$1-failed" ] || [ -e "$VM_FLAGS/ABORT" ] ||
			[ "$(date +%s)" -ge $end ]; then
			echo "not ok - $1: B's server did not start"
			vm_fail "$1: no server"
			return 1
		fi
		sleep 0.2
	done
}

# client NAME CMD...: (A) once B's server is up, run the client
client() {
	local name=$1 rc=0 s0
	shift
	server_up "$name" || return 1
	log "$name: $*"
	s0=$(sample)
	timeout $((T + 90)) "$@" >"$dir/$name.client.txt" \
		2>"$dir/$name.client.err" || rc=$?
	sed 's/^/#   /' "$dir/$name.client.err"
	report "$name" "$s0"
	signal "$name-done"
	if [ $rc -ne 0 ]; then
		echo "not ok - $name: client exit status $rc"
		vm_fail "$name: client exit status $rc"
		tail -n 30 "$dir/$name.client.txt" | sed 's/^/#   /'
		return 1
	fi
	echo "ok - $name: measured"
}

# iperf3_result NAME: Mbit/s received (and UDP loss) from the client's JSON
iperf3_result() {
	local r
	if ! r=$(iperf3_parse "$1" 2>&1); then
		echo "not ok - $1: iperf3 result"
		printf '%s\n' "$r" | sed 's/^/#   /'
		vm_fail "$1: iperf3 result"
		return 0
	fi
	printf '%s\n' "$r" >>"$res"
}

iperf3_parse() {
	python3 - "$dir/$1.client.txt" "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["end"]["sum_received"]
print("%s_mbps=%.1f" % (sys.argv[2], r["bits_per_second"] / 1e6))
s = d["end"]["sum_sent"]
if "retransmits" in s:
    print("%s_retrans=%d" % (sys.argv[2], s["retransmits"]))
if "lost_percent" in r:
    print("%s_loss=%.1f" % (sys.argv[2], r["lost_percent"]))
    print("%s_sent_mbps=%.1f" % (sys.argv[2],
          d["end"]["sum_sent"]["bits_per_second"] / 1e6))
EOF
}

# perftest_mbps FILE [SIZE]: BW average (MiB/s, 2^20 bytes) of the result
# line for SIZE-byte messages (default UD_SIZE), as Mbit/s
perftest_mbps() {
	awk -v size="${2:-$UD_SIZE}" '$1 == size && NF >= 5 && $4 ~ /^[0-9.]+$/ {
		v = $4 } END {
		if (v == "") exit 1
		printf "%.1f\n", v * 1048576 * 8 / 1e6 }' "$1"
}

# step_end NAME: wait for both guests to end NAME; A records their samples
step_end() {
	local name=$1 r
	barrier "$name" $((T + 180))
	if [ "$ROLE" = A ]; then
		for r in A B; do
			[ -r "$dir/$name.stats.$r" ] || continue
			read -r busy sirq norq udp <"$dir/$name.stats.$r"
			put "${name}_cpu_$r" "$busy"
			put "${name}_sirq_$r" "$sirq"
			put "${name}_norq_$r" "$norq"
			put "${name}_udpbuf_$r" "$udp"
		done
	fi
}

# want NAME: NAME is one of the measurements asked for
want() {
	[[ " $STEPS " == *" $1 "* ]]
}

# --- bring-up, as in selftests/datagram.sh ---------------------------------
mkdir -p "$dir"
if [ "$ROLE" = A ]; then
	: >"$res"
fi
ip link set eth0 mtu 4200
rxe_up
params=${BENCH_IPOIB_PARAMS:-}
# shellcheck disable=SC2086 # a list of parameters
check "modprobe ib_ipoib $params" modprobe ib_ipoib $params
check "an interface appears on rxe0 port 1" wait_until 10 ipoib_if rxe0
ifc=$(ipoib_if rxe0)
ip link set "$ifc" up
check "carrier" wait_until 15 grep -qx 1 "/sys/class/net/$ifc/carrier"
ip addr add "10.20.0.$idx/24" dev "$ifc"
mtu=$(cat "/sys/class/net/$ifc/mtu")
gid=$(cat "/sys/class/infiniband/rxe0/ports/1/gids/$GIDX")
gtype=$(cat "/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$GIDX")
log "$ifc mtu $mtu; rxe0 GID $GIDX $gid ($gtype);" \
	"active_mtu $(ibv_devinfo -d rxe0 | awk '$1 == "active_mtu:" { print $2 }')"
rz=$(cat /sys/kernel/slab/kmalloc-4k/red_zone 2>/dev/null || echo '?')
log "slub_debug: kmalloc-4k red_zone $rz; cmdline: $(cat /proc/cmdline)"
if [ "$ROLE" = A ]; then
	put ifc "$ifc"
	put mtu "$mtu"
	put time "$T"
	put ud_size "$UD_SIZE"
	put rc_size "$RC_SIZE"
	put gid "$GIDX $gid $gtype"
	put eth_mtu "$(cat /sys/class/net/eth0/mtu)"
	put params "$(cd /sys/module/ib_ipoib/parameters &&
		grep -H . send_queue_size recv_queue_size | tr ':\n' '= ' |
		sed 's/ $//')"
fi
barrier up
if [ "$ROLE" = A ]; then
	check "ping B over $ifc" ping -c 3 -i 0.2 -W 5 10.20.0.2
	check "ping B over eth0" ping -c 3 -i 0.2 -W 5 10.10.0.2
fi
barrier warm

ib_ip=10.20.0.2
eth_ip=10.10.0.2
# TCP payload per full-size packet: MTU - IPv4 20 - TCP 20 - timestamps 12
udp_len=$((mtu - 20 - 8))

# iperf_step NAME IP CLIENT-ARGS...: B serves iperf3 on IP, A measures
iperf_step() {
	local name=$1 ip=$2
	shift 2
	want "$name" || return 0
	if [ "$ROLE" = B ]; then
		serve "$name" $IPERF_PORT timeout $((T + 120)) \
			iperf3 -s -1 -B "$ip" -p $IPERF_PORT
	elif client "$name" iperf3 -J -c "$ip" -p $IPERF_PORT -t "$T" "$@"; then
		iperf3_result "$name"
	fi
	step_end "$name"
}

# 1. TCP over ibN
iperf_step tcp_ib $ib_ip -O 1

# verbs_step NAME SIZE CMD...: B runs CMD as the server, A as the client
# towards B's eth0 (perftest's out-of-band exchange); NAME_mbps is what B
# received, NAME_tx_mbps what A sent
verbs_step() {
	local name=$1 size=$2
	shift 2
	want "$name" || return 0
	if [ "$ROLE" = B ]; then
		serve "$name" $PERFTEST_PORT timeout $((T + 120)) "$@"
	elif client "$name" "$@" $eth_ip; then
		put "${name}_tx_mbps" \
			"$(perftest_mbps "$dir/$name.client.txt" "$size" || echo "")"
		put "${name}_mbps" \
			"$(perftest_mbps "$dir/$name.server.txt" "$size" || echo "")"
	fi
	step_end "$name"
}

# val KEY: what A recorded for KEY
val() {
	awk -F= -v k="$1" '$1 == k { v = substr($0, length(k) + 2) } END {
		print v }' "$res"
}

# 2. raw UD verbs: B receives, A sends; the out-of-band exchange is TCP on
# eth0. Duration mode: UD drops what the receiver cannot take, and an
# iteration count would then never complete on the server.
verbs_step ud "$UD_SIZE" ib_send_bw -d rxe0 -i 1 -x "$GIDX" -c UD \
	-s "$UD_SIZE" -D "$T" -F -p "$PERFTEST_PORT"
udp_rate=0
if [ "$ROLE" = A ] && want ud; then
	ud_mbps=$(val ud_mbps)
	# offered: the target, 0.9 x what raw UD delivered (else unlimited)
	[ -z "$ud_mbps" ] ||
		udp_rate=$(awk -v v="$ud_mbps" 'BEGIN { printf "%.1f", v * 0.9 }')
	put udp_ib_offered "$udp_rate"
	udp_rate=${udp_rate}M
fi

# 3. UDP over ibN: one datagram per IPoIB packet, offered at 0.9 x raw UD.
# Unlimited, the sender outruns the receiver's single vCPU, whose softirq
# then starves iperf3 itself: that measures the livelock, not the path.
iperf_step udp_ib $ib_ip -u -b "$udp_rate" -l "$udp_len"

# 4. TCP over the underlay
iperf_step tcp_eth $eth_ip -O 1

# shellcheck source=SCRIPTDIR/recover.sh
. "$top/tools/bench/recover.sh"
if want recover; then
	recover_first
	recover_flap datagram
	recover_flap_grid datagram
	recover_flap_tcp datagram
	recover_flap_quiet datagram
	recover_reload datagram
fi
# shellcheck source=SCRIPTDIR/mscale.sh
. "$top/tools/bench/mscale.sh"
! want mscale || mscale
# shellcheck source=SCRIPTDIR/nscale.sh
. "$top/tools/bench/nscale.sh"
! want nscale || nscale
# shellcheck source=SCRIPTDIR/ib.sh
. "$top/tools/bench/ib.sh"
! want ib || ib_bench

# 5. TCP over ibN in connected mode: both sides switch (measured as the
# longest time without a reply), a ping sets up the connection before the
# clock starts
if want recover; then
	recover_switch connected
else
	echo connected >"/sys/class/net/$ifc/mode"
fi
check "connected mode, MTU 65520" \
	test "$(cat "/sys/class/net/$ifc/mtu")" = 65520
barrier connected
if [ "$ROLE" = A ]; then
	check "ping B over a connection" ping -c 3 -i 0.2 -W 5 -s 30000 $ib_ip
	put cm_conn "$(head -n 1 /sys/kernel/debug/ipoib/"${ifc}"_cm)"
fi
barrier cm-warm
iperf_step tcp_cm $ib_ip -O 1

# 6. raw RC verbs, one message per connected-mode message
verbs_step rc "$RC_SIZE" ib_send_bw -d rxe0 -i 1 -x "$GIDX" -c RC \
	-s "$RC_SIZE" -D "$T" -F -p "$PERFTEST_PORT"

# shellcheck source=SCRIPTDIR/cscale.sh
. "$top/tools/bench/cscale.sh"
! want cscale || cscale

if want recover; then
	recover_flap connected
	recover_flap_grid connected
	recover_flap_tcp connected
	recover_flap_quiet connected
	recover_reload connected
	recover_switch datagram
fi

ip -s link show "$ifc"
ethtool -S "$ifc" 2>/dev/null | grep -v ': 0$' || true
rdma statistic show link rxe0/1 2>/dev/null || true
barrier finished
check "ib_ipoib unloads" modprobe -r ib_ipoib
finish
