#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by tools/bench/guest.sh: connections at scale, in connected
# mode. A's ping RTT to B over their connection (the median of 101),
# first with that one connection into B, then with CSCALE_PEERS - 1 more
# that A plays with tools/cm_inject (as selftests/cm_scale.sh does: each
# REQ claims other QPNs, an RTU makes B's end live), and what they cost B:
#   cscale_peers   live connections B held (debugfs ibN_cm)
#   cscale_rtt     median RTT with one connection and with them all, ms
#   cscale_kb      B's MemAvailable drop per connection beyond A's, kB
#                  (with its SRQ they share B's receive buffers)
CSCALE_PEERS=${BENCH_CSCALE_PEERS:-256}

# shellcheck disable=SC2154 # ifc: set by tools/bench/guest.sh
cscale_live() {
	grep -c ' live ' "/sys/kernel/debug/ipoib/${ifc}_cm" || true
}

cscale_mem() {	# kB, after dropping the caches
	sync
	echo 3 >/proc/sys/vm/drop_caches
	awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo
}

# shellcheck disable=SC2154 # dir: guest.sh sets it; inject: selftests/lib.sh
cscale() {
	local n=$((CSCALE_PEERS - 1)) before after mem0 mem1 live kb
	if [ "$ROLE" = B ]; then
		# the address A's REQs go to: QPN and GID from B's hardware address
		cut -d: -f2-4 "/sys/class/net/$ifc/address" | tr -d : \
			>"$dir/cscale.qpn"
		cut -d: -f5- "/sys/class/net/$ifc/address" | tr -d : |
			sed 's/\(....\)/\1:/g; s/:$//' >"$dir/cscale.gid"
		# after A's first RTT figure: dropping caches would skew it
		wait_for A cscale-go 120 || true
		mem0=$(cscale_mem)
		signal cscale-ready
		wait_for A cscale-injected 300 || true
		wait_until 60 test "$(cscale_live)" -ge "$CSCALE_PEERS" || true
		live=$(cscale_live)
		mem1=$(cscale_mem)
		echo "$live $(((mem0 - mem1) / (live > 1 ? live - 1 : 1)))" \
			>"$dir/cscale.B"
		signal cscale-counted
		wait_for A cscale-measured 120 || true
		# the injected peers never talk: close them (and A's) now
		ip link set "$ifc" down
		ip link set "$ifc" up
		wait_until 15 grep -qx 1 "/sys/class/net/$ifc/carrier" || true
	else
		modprobe ib_umad
		before=$(rtt_median 101)
		signal cscale-go
		wait_for B cscale-ready 60 || true
		"$inject" -N -t -n "$n" -l 0x10000 -u 0x20000 -w 60000 \
			-e "$n" -S "0x$(cat "$dir/cscale.qpn")" valid \
			"$(cat "$dir/cscale.gid")" >"$dir/cscale.inject" 2>&1 ||
			log "cscale: cm_inject: $(tail -n 1 "$dir/cscale.inject")"
		signal cscale-injected
		wait_for B cscale-counted 120 || true
		after=$(rtt_median 101)
		signal cscale-measured
		read -r live kb <"$dir/cscale.B" || true
		put cscale_peers "${live:-}"
		put cscale_kb "${kb:-}"
		put cscale_rtt "$before $after"
		log "cscale: $live connections into B; RTT $before ms, then" \
			"$after ms; $kb kB each"
	fi
	barrier cscale 300
}
