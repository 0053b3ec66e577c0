#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by tools/bench/guest.sh after recover.sh: neighbours at scale,
# in datagram mode. A's ping RTT to B (the median of 101), first as it is,
# then with NSCALE_PATHS - 1 more neighbours, each with a GID of its own
# (permanent entries for hosts that do not exist; their link-local GIDs
# name MACs no one has) that A has sent one datagram to, so that each has
# its path and address handle:
#   nscale_paths     paths A held (debugfs ibN_path)
#   nscale_rtt       median RTT to B before and with them, ms
#   nscale_fill_s    seconds from the first datagram until all had a path
NSCALE_PATHS=${BENCH_NSCALE_PATHS:-4096}

# the hosts: 10.21.H.L, GID fe80::ff:fe00:HHLL (MAC 02:00:00:00:HH:LL)
# nscale_hosts add|del N: ip -batch lines for them, and for rxe's
# neighbours on the underlay (rxe sends by the IPv6 route to the GID: an ND
# exchange per host that cannot answer would measure the underlay's table)
# shellcheck disable=SC2154 # ifc: set by tools/bench/guest.sh
nscale_hosts() {
	awk -v op="$1" -v n="$2" -v ifc="$ifc" 'BEGIN {
		for (i = 1; i <= n; i++) {
			h = int(i / 256)
			l = i % 256
			printf "neigh %s 10.21.%d.%d lladdr 00:00:00:02:fe:80:00:00:00:00:00:00:00:00:00:ff:fe:00:%02x:%02x dev %s nud permanent\n",
				op, h, l, h, l, ifc
			printf "neigh %s fe80::ff:fe00:%x lladdr 02:00:00:00:%02x:%02x dev eth0 nud permanent\n",
				op, h * 256 + l, h, l
		}
	}'
}

nscale_paths() {
	grep -c '^GID:' "/sys/kernel/debug/ipoib/${ifc}_path"
}

nscale() {
	local n=$((NSCALE_PATHS - 1)) before after t0 t1
	if [ "$ROLE" = A ]; then
		before=$(rtt_median 101)
		sysctl -qw net.ipv4.neigh.default.gc_thresh3=$((n * 2))
		sysctl -qw net.ipv4.neigh.default.gc_thresh2=$((n * 2))
		sysctl -qw net.ipv6.neigh.default.gc_thresh3=$((n * 2))
		sysctl -qw net.ipv6.neigh.default.gc_thresh2=$((n * 2))
		ip route add 10.21.0.0/16 dev "$ifc"
		nscale_hosts add "$n" | ip -batch - ||
			log "nscale: not every neighbour was added"
		t0=$(now)
		python3 - "$n" <<'PYEOF2'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(1, int(sys.argv[1]) + 1):
    try:
        s.sendto(b"x", ("10.21.%d.%d" % (i // 256, i % 256), 9))
    except OSError:
        pass
PYEOF2
		wait_until 60 test "$(nscale_paths)" -ge "$NSCALE_PATHS" || {
			log "nscale: $(nscale_paths) paths;" \
				"$(ip neigh show dev "$ifc" | grep -c PERMANENT) neighbours;" \
				"$(ethtool -S "$ifc" | grep -E 'tx_no_path|tx_dropped|path_' | tr -s ' \n' ' ')"
		}
		t1=$(now)
		put nscale_paths "$(nscale_paths)"
		put nscale_fill_s "$(awk -v a="$t0" -v b="$t1" \
			'BEGIN { printf "%.2f", b - a }')"
		after=$(rtt_median 101)
		put nscale_rtt "$before $after"
		log "nscale: $(nscale_paths) paths; RTT $before ms, then $after ms"
		nscale_hosts del "$n" | ip -batch - || true
		ip route del 10.21.0.0/16 dev "$ifc" || true
	fi
	barrier nscale 300
}
