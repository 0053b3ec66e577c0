#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Checksum-pending packets over connections (ipoib_wire.h). Connected mode
# gathers fragments and offers the stack checksum offload:
# 1. between two of us, TCP and UDP checksums are left to the receiver
#    (the RC transport vouches for every octet): counted on both sides, no
#    checksum error anywhere, no checksum done by the driver;
# 2. B forwards such packets to a namespace behind a veth without checksum
#    offload: the checksum is completed on the way out, the namespace's
#    TCP sees none wrong (a packet taken as verified would fail there);
# 2b. a peer that turns rx-checksumming off under a live connection
#    completes the checksums it still receives pending itself;
# 3. a peer that does not take them (rx-checksumming off when it accepted
#    the connection) gets complete checksums, computed by us;
# 4. bad input: a hand-made peer (tools/cm_inject --data, a real RC QP)
#    sends the same UDP datagram plain, with valid immediate data and with
#    immediate data pointing outside the packet or into the IP header:
#    those are counted and dropped, with a log line each, no warning.
# Before all that, datagram mode on rxe offers no offload at all.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
VM_TIMEOUT=700
CM_INJECT=1
. "$(dirname "$0")/lib.sh"

ipoib_start
idx=$IDX ifc=$IFC
peer=$([ "$ROLE" = A ] && echo 2 || echo 1)
sys=/sys/class/net/$ifc
dbg=/sys/kernel/debug/ipoib

# offloads SG CSUM: gather SG, IPv4/IPv6 transmit checksums both CSUM
offloads() {
	local k f
	k=$(ethtool -k "$ifc") || return 1
	for f in "scatter-gather: $1" "tx-checksum-ipv4: $2" \
		"tx-checksum-ipv6: $2"; do
		echo "$k" | grep -Eq "^[[:space:]]*$f" && continue
		echo "$k" | grep -E 'scatter|checksum'
		return 1
	done
}

# csum_errors [NETNS]: TCP, UDP and UDPv6 segments dropped for their
# checksum, in this namespace or NETNS
csum_errors() {
	local run=()
	[ -z "${1:-}" ] || run=(ip netns exec "$1")
	"${run[@]}" cat /proc/net/snmp /proc/net/snmp6 | awk '
		($1 == "Tcp:" || $1 == "Udp:") && !($1 in col) {
			for (i = 2; i <= NF; i++)
				if ($i == "InCsumErrors")
					col[$1] = i
			next
		}
		($1 in col) { n += $(col[$1]) }
		$1 == "Udp6InCsumErrors" { n += $2 }
		END { print n + 0 }'
}

# reconnected: (A) a ping to B over a live connection that sends B
# complete checksums (B's down/up closed the old one; until A hears of
# that, a send over it fails and ends it)
reconnected() {
	pings 1 -W 2 -s 30000 10.20.0.2 >/dev/null &&
		grep -q ' live .* TX-CSUM: complete$' "$dbg/${ifc}_cm"
}

# checksums_correct PCAP: tcpdump found every TCP checksum in PCAP right,
# and there were some to check
checksums_correct() {
	local v
	v=$(tcpdump -r "$1" -nn -vv 2>/dev/null | grep -o 'cksum 0x[0-9a-f]* ([a-z]*' |
		awk '{ print $3 }' | sort | uniq -c)
	echo "$v"
	echo "$v" | grep -q '(correct' && ! echo "$v" | grep -q '(incorrect'
}

# grew NAME BEFORE: the statistic NAME is above BEFORE now
grew() {
	[ "$(stat_of "$1")" -gt "$2" ]
}

check "datagram mode on rxe: gather, no checksum offload" offloads on off
echo connected >"$sys/mode"
check "connected mode: gather, IPv4 and IPv6 checksum offload" offloads on on
ip addr add "10.20.0.$idx/24" dev "$ifc"
ip addr add "fd00:20::$idx/64" dev "$ifc" nodad
barrier configured

# --- 1: both take checksum-pending packets ---------------------------
check "ping with 30000-octet payloads" \
	pings 3 -i 0.3 -W 5 -s 30000 "10.20.0.$peer"
check "the connection leaves checksums to the peer (debugfs)" \
	wait_until 5 grep -q ' live .* TX-CSUM: pending$' "$dbg/${ifc}_cm"
sed 's/^/#   /' "$dbg/${ifc}_cm"
e0=$(csum_errors)
tx0=$(stat_of cm_tx_csum_pending)
rx0=$(stat_of cm_rx_csum_pending)
sw0=$(stat_of tx_csum_sw)
barrier pinged

iperf3 -s -D -1 >/dev/null 2>&1
barrier listening-1
if [ "$ROLE" = A ]; then
	check "1: iperf3 TCP A -> B" iperf3 -c 10.20.0.2 -t 2 -f m
	check "1: iperf3 UDP over IPv6 A -> B, 30000-octet datagrams" \
		iperf3 -6 -u -c fd00:20::2 -p 5202 -l 30000 -b 20M -t 2 -f m
	signal a-done
else
	iperf3 -s -D -1 -p 5202 >/dev/null 2>&1
	wait_for A a-done 120
	check "1: iperf3 TCP B -> A" iperf3 -c 10.20.0.1 -t 2 -f m
fi
barrier iperf-1
check "1: our sends left checksums to the peer" grew cm_tx_csum_pending "$tx0"
check "1: the peer's arrived as checksum-pending" \
	grew cm_rx_csum_pending "$rx0"
check "1: the driver computed no checksum" \
	test "$(stat_of tx_csum_sw)" = "$sw0"
check "1: no TCP/UDP checksum error" test "$(csum_errors)" = "$e0"
check "1: no checksum immediate data refused" \
	test "$(stat_of cm_rx_bad_csum_imm)" = 0
barrier checked-1

# --- 2: B forwards them to a namespace, checksums completed there ----
if [ "$ROLE" = B ]; then
	ip netns add fwd
	ip link add vb type veth peer name vn
	ip link set vn netns fwd
	ip addr add 10.30.0.1/24 dev vb
	ip link set vb up
	# out of vb the stack must complete what A left open
	ethtool -K vb tx off >/dev/null
	ip netns exec fwd ip addr add 10.30.0.2/24 dev vn
	ip netns exec fwd ip link set vn up
	ip netns exec fwd ip link set lo up
	ip netns exec fwd ip route add default via 10.30.0.1
	sysctl -qw net.ipv4.ip_forward=1
	ip netns exec fwd iperf3 -s -D -1 >/dev/null 2>&1
	# the namespace's stack would trust a packet still marked verified:
	# the octets that cross vb tell
	ip netns exec fwd timeout 60 tcpdump -i vn -s 0 -c 100 -U \
		-w /tmp/fwd.pcap 'tcp and dst host 10.30.0.2 and greater 1000' \
		>/dev/null 2>&1 &
	capture=$!
	wait_until 20 test -s /tmp/fwd.pcap
	ne0=$(csum_errors fwd)
	rx0=$(stat_of cm_rx_csum_pending)
else
	ip route add 10.30.0.0/24 via 10.20.0.2
fi
barrier listening-2
if [ "$ROLE" = A ]; then
	check "2: iperf3 TCP A -> a namespace behind B" \
		iperf3 -c 10.30.0.2 -t 2 -f m
fi
barrier iperf-2
if [ "$ROLE" = B ]; then
	check "2: forwarded packets arrived checksum-pending" \
		grew cm_rx_csum_pending "$rx0"
	check "2: the namespace saw no TCP checksum error" \
		test "$(csum_errors fwd)" = "$ne0"
	wait "$capture" || true
	check "2: forwarded segments left B with correct TCP checksums" \
		checksums_correct /tmp/fwd.pcap
	ip netns del fwd
fi
barrier checked-2

# --- 2b: B turns rx-checksumming off under a live connection ----------
# A keeps leaving checksums to B, as agreed; B completes them itself now,
# so what its stack (and tcpdump on it) sees has correct checksums.
if [ "$ROLE" = B ]; then
	ethtool -K "$ifc" rx off
	pend0=$(stat_of cm_rx_csum_pending)
	timeout 60 tcpdump -i "$ifc" -nn -vv -c 5 udp port 9 \
		>/tmp/rxoff.txt 2>/tmp/rxoff.err &
	capture=$!
	check "2b: tcpdump on $ifc" wait_until 10 grep -q listening /tmp/rxoff.err
	signal rx-off
	wait "$capture" || true
	sed 's/^/#   /' /tmp/rxoff.txt
	check "2b: A's datagrams still came checksum-pending" \
		test $(($(stat_of cm_rx_csum_pending) - pend0)) -ge 5
	check "2b: B completed their checksums (tcpdump: udp sum ok)" \
		test "$(grep -c 'udp sum ok' /tmp/rxoff.txt)" = 5
else
	wait_for B rx-off 60
	for _ in 1 2 3 4 5; do
		echo checksum-pending >/dev/udp/10.20.0.2/9
		sleep 0.1	# pacing
	done
fi
barrier checked-2b

# --- 3: B no longer takes them ----------------------------------------
# B's down/up closes the connection; the next one is made with B's
# rx-checksumming off, so A must send complete checksums to B.
if [ "$ROLE" = B ]; then
	ethtool -K "$ifc" rx off
	ip link set "$ifc" down
	ip link set "$ifc" up
	check "3: carrier back" \
		wait_until 15 grep -qx 1 "$sys/carrier"
fi
barrier b-restarted
e0=$(csum_errors)
tx0=$(stat_of cm_tx_csum_pending)
rx0=$(stat_of cm_rx_csum_pending)
sw0=$(stat_of tx_csum_sw)
iperf3 -s -D -1 >/dev/null 2>&1
barrier listening-3
if [ "$ROLE" = A ]; then
	check "3: a new connection to B carries complete checksums" \
		wait_until 30 reconnected
	sed 's/^/#   /' "$dbg/${ifc}_cm"
	check "3: iperf3 TCP A -> B" iperf3 -c 10.20.0.2 -t 2 -f m
	check "3: A completed the checksums itself" grew tx_csum_sw "$sw0"
	signal a-done-3
else
	wait_for A a-done-3 120
	check "3: iperf3 TCP B -> A" iperf3 -c 10.20.0.1 -t 2 -f m
	check "3: B received no checksum-pending packet" \
		test "$(stat_of cm_rx_csum_pending)" = "$rx0"
	check "3: B still leaves checksums to A, which takes them" \
		grew cm_tx_csum_pending "$tx0"
fi
check "3: no TCP/UDP checksum error" test "$(csum_errors)" = "$e0"
barrier iperf-3

# --- 4: bad input: immediate data from a hand-made peer ----------------
# the UDP datagram is 92 octets; its checksum field starts at 20 + 6
good=00140006
bad=00100006,0014ffff,005a0006,ffffffff
if [ "$ROLE" = B ]; then
	cut -d: -f2-4 "$sys/address" | tr -d : >"$SHARED/qpn.B"
	cut -d: -f5- "$sys/address" | tr -d : |
		sed 's/\(....\)/\1:/g; s/:$//' >"$SHARED/gid.B"
	echo 1 >/sys/module/ib_ipoib/parameters/cm_data_debug_level
	bad0=$(stat_of cm_rx_bad_csum_imm)
	pend0=$(stat_of cm_rx_csum_pending)
	signal addr-shared
	wait_for A injected 120
	check "4: four bad immediate data counted" \
		test $(($(stat_of cm_rx_bad_csum_imm) - bad0)) = 4
	check "4: the good one taken as checksum-pending" \
		test $(($(stat_of cm_rx_csum_pending) - pend0)) = 1
	check "4: a log line for each bad one" test "$(dmesg |
		grep -c 'checksum immediate data 0x[0-9a-f]* is out of bounds')" = 4
	dmesg | grep 'immediate data' | sed 's/^/#   /'
else
	check "modprobe ib_umad (for cm_inject)" modprobe ib_umad
	wait_for B addr-shared 60
	"$inject" -l 0 -u 0x4444 -n 1 -w 10000 -e 1 -t -M "plain,$good,$bad" \
		-S "0x$(cat "$SHARED/qpn.B")" valid "$(cat "$SHARED/gid.B")" \
		>/tmp/data.out 2>&1
	sed 's/^/#   /' /tmp/data.out
	check "4: six messages sent and acknowledged over a real RC QP" \
		test "$(grep -c 'type=DATA .*status=ok' /tmp/data.out)" = 6
	signal injected
fi
barrier injected-done

check "ib_ipoib unloads" modprobe -r ib_ipoib
finish
