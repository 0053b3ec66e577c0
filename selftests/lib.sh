#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by every VM selftest. On the host (no ROLE in the environment) it
# hands the test to tools/vm/batch.sh, which builds the module, boots the
# guests with the test as their program and prints TAP (IPOIB_KVER,
# IPOIB_DEBUG_KERNEL, IPOIB_MODPARAMS: see there). In a guest it provides
# the guest library and a few IPoIB helpers. A test states its needs in
# lines of its own, before sourcing this file, that batch.sh reads:
#   GUESTS=N     number of guests (default 2)
#   VM_TIMEOUT=S seconds (default 300)
#   VM_ALLOC_FAILURES_EXPECTED=1  the test injects allocation failures: the
#                kernel's reports of them are no problem
#   CM_INJECT=1  the test uses tools/cm_inject: built on the host first,
#                $inject in the guests
#   UD_INJECT=1  the test uses tools/inject: built on the host first
#   SOFTIB=1     the test loads tools/softib (built for the kernel)
#   DKMS=1       tools/vm/dkms-stage.sh runs dkms for the kernel first
#   NICS=2       the guests have eth1 on eth0's segment (down at the start),
#                linked by a vde_switch (1514-octet frames at most)
#   NEEDS="P..."  programs the test runs (missing: the test is skipped)
# A test takes one option: --module KO boots the guests with KO (built for
# that kernel) instead of building this checkout's module.

IPOIB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ -z "${ROLE:-}" ]; then
	# On the host: a batch of one (tools/vm/batch.sh reads the settings
	# above from this script's text; named here for shellcheck, which
	# would take them for unused).
	: "${GUESTS:-}" "${VM_TIMEOUT:-}" "${VM_SMP:-}" "${TEST_HOOKS:-}" \
		"${VM_ALLOC_FAILURES_EXPECTED:-}" "${CM_INJECT:-}" \
		"${UD_INJECT:-}" "${SOFTIB:-}" "${DKMS:-}" "${NICS:-}" "${NEEDS:-}"
	case ${1:-} in
	--module) exec "$IPOIB_TOP/tools/vm/batch.sh" --module "${2:?--module KO}" "$0" ;;
	'') exec "$IPOIB_TOP/tools/vm/batch.sh" "$0" ;;
	*) echo "usage: $0 [--module KO]" >&2; exit 2 ;;
	esac
fi

# --- guest side ---
# VM_SLOW: how much slower than the Debian kernel this one is (the debug
# kernel's checkers): scales waits for work the test does not measure,
# and, on the debug lane only, the few bounds on what it measures (the
# release lane, VM_SLOW=1, keeps them as the issues set them).
VM_SLOW=${VM_SLOW:-1}
# shellcheck source=../tools/vm/guest-lib.sh
. "$IPOIB_TOP/tools/vm/guest-lib.sh"
# shellcheck disable=SC2034 # for the tests that set CM_INJECT
inject=$IPOIB_TOP/build/cm_inject/cm_inject

# The ib_ipoib interface on an RDMA device's port: ipoib_if rxe0 [port]
# (InfiniBand netdevs and the port read by the shell: a process costs a
# tenth of a second under TCG, and this runs often)
ipoib_if() {
	local d dev=$1 port=${2:-1} t p info
	for d in /sys/class/net/*; do
		{ read -r t <"$d/type" && read -r p <"$d/dev_port"; } \
			2>/dev/null || continue
		if [ "$t" != 32 ] || [ "$p" != $((port - 1)) ]; then
			continue
		fi
		info=$'\n'$(ethtool -i "${d##*/}" 2>/dev/null)$'\n'
		[[ $info == *$'\n'"driver: ib_ipoib"$'\n'* &&
		   $info == *$'\n'"bus-info: $dev"$'\n'* ]] || continue
		echo "${d##*/}"
		return 0
	done
	return 1
}

# eui64_of_mac MAC: the interface ID that MAC gives GID 0 (and so our
# address), as 16 hex digits: the universal/local bit flipped, ff:fe inside
eui64_of_mac() {
	local oct
	IFS=: read -ra oct <<<"$1"
	printf '%02x%s%sfffe%s%s%s\n' $((16#${oct[0]} ^ 2)) "${oct[1]}" \
		"${oct[2]}" "${oct[3]}" "${oct[4]}" "${oct[5]}"
}

# has_carrier IFC: it has carrier now (read by the shell: it is polled)
has_carrier() {
	local v
	read -r v <"/sys/class/net/$1/carrier" 2>/dev/null && [ "$v" = 1 ]
}

# listening [--ns NS] PORT: a TCP socket listens on PORT (the server of
# iperf3 -D listens only once it has forked away)
listening() {
	local ns=()
	[ "$1" = --ns ] && ns=(ip netns exec "$2") && shift 2
	[ -n "$("${ns[@]}" ss -Hltn "sport = :$1")" ]
}

# sent_since IFC MARK BYTES: IFC has sent BYTES more than when its
# tx_bytes read MARK: a transfer begun then is under way
sent_since() {
	[ $(($(cat "/sys/class/net/$1/statistics/tx_bytes") - $2)) -ge "$3" ]
}

# stat_of NAME: an ethtool statistic of the test's interface ($ifc)
# shellcheck disable=SC2154 # ifc: set by the test
stat_of() {
	ethtool -S "$ifc" | awk -v n="$1:" '$1 == n { print $2 }'
}

# wait_until SECONDS CMD...: poll CMD every 0.2 s
wait_until() {
	local end=$((EPOCHSECONDS + $1))
	shift
	until "$@"; do
		[ "$EPOCHSECONDS" -ge $end ] && return 1
		sleep 0.2	# the poll
	done
}

# mon_ms KIND T IFC: from /tmp/flap.mon (ip -ts monitor link address),
# "MS LINE": the milliseconds from T to the first event after it of KIND
# and its line in the file: "usable",
# eth0's link-local address reported without "tentative" (out of
# duplicate address detection: the underlay can carry unicast RoCE
# again), "oper", eth0 reported operationally up (state UP, after
# linkwatch), or "carrier", IFC reported with LOWER_UP; nothing if none. The
# kernel reports both in the order they happened.
mon_ms() {
	awk -v kind="$1" -v t="$2" -v ifc="$3" '
	/^\[/ {
		ts = substr($1, 2, length($1) - 2)
		frac = ts
		sub(/^[^.]*/, "", frac)
		sub(/\..*/, "", ts)
		gsub(/[-T:]/, " ", ts)
		w = mktime(ts) + frac
		if (w <= t || $2 == "Deleted")
			next
		if (kind == "usable" && $3 == "eth0" && $4 == "inet6" &&
		    $5 ~ /^fe80:/ && $0 !~ /tentative/ && $0 ~ /scope link/) {
			printf "%.0f %d\n", (w - t) * 1000, NR
			exit
		}
		if (kind == "oper" && $3 == "eth0:" && / state UP /) {
			printf "%.0f %d\n", (w - t) * 1000, NR
			exit
		}
		if (kind == "carrier" && ($3 == ifc ":" || index($3, ifc "@") == 1) &&
		    $4 ~ /LOWER_UP/) {
			printf "%.0f %d\n", (w - t) * 1000, NR
			exit
		}
	}' /tmp/flap.mon
}

# mon_start: ip -ts monitor link address into /tmp/flap.mon (MON_PID),
# returning once it reports: a marker address on lo, added and deleted
# until it shows (the monitor subscribes some time after its start)
mon_start() {
	ip -ts monitor link address >/tmp/flap.mon 2>&1 &
	MON_PID=$!
	wait_until 10 eval 'ip addr add 203.0.113.1/32 dev lo 2>/dev/null
		ip addr del 203.0.113.1/32 dev lo
		grep -q 203.0.113.1 /tmp/flap.mon' || true
}

# flap_ms IFC IP [OUTAGE] [INTERVAL]: take the underlay (eth0) down for
# OUTAGE seconds (0.3) and up again while pinging IP every INTERVAL (0.02);
# prints the milliseconds from eth0 up to its IPv6 link-local address
# leaving duplicate address detection, to IFC's carrier and to the first
# reply, then the lines of the first two in the kernel's report:
# "USABLE CARRIER REPLY ULINE CLINE" ("-" for one that did not come in
# 10 s); the time of the up is left in /tmp/flap.up
flap_ms() {
	local own='' t_up u c r ul cl
	if [ -z "$FLAP_PING" ]; then
		flap_hold "$2" "${4:-0.02}"
		own=1
	fi
	ip link set eth0 down
	sleep "${3:-0.3}"	# the outage
	t_up=$EPOCHREALTIME
	echo "$t_up" >/tmp/flap.up
	ip link set eth0 up
	# (IFC's carrier read first, by the shell: the rest runs awk)
	wait_until 10 eval "has_carrier $1 && flap_reply_after $t_up &&
		[ -n \"\$(mon_ms usable $t_up $1)\" ] &&
		[ -n \"\$(mon_ms carrier $t_up $1)\" ]" || true
	[ -z "$own" ] || flap_release
	read -r u ul <<<"$(mon_ms usable "$t_up" "$1")"
	read -r c cl <<<"$(mon_ms carrier "$t_up" "$1")"
	r=$(awk -v t="$t_up" -F'[][]' '/bytes from/ && $2 > t {
		printf "%.0f\n", ($2 - t) * 1000; exit }' /tmp/flap.ping)
	echo "${u:--} ${c:--} ${r:--} ${ul:--} ${cl:--}"
}

# flap_hold IP INTERVAL: one ping of IP (every INTERVAL s, into
# /tmp/flap.ping) and one monitor (mon_start) for the flaps that follow,
# until flap_release; each flap takes what came after its own up
FLAP_PING=
flap_hold() {
	ping -D -n -i "$2" "$1" >/tmp/flap.ping 2>&1 &
	FLAP_PING=$!
	wait_until 5 flap_reply_after 0 || true
	mon_start
}
flap_release() {
	kill "$FLAP_PING" "$MON_PID" 2>/dev/null
	wait "$FLAP_PING" "$MON_PID" 2>/dev/null || true
	FLAP_PING=
}

# flap_check IFC IP [S] [N] [OUTAGE] [INTERVAL]: the underlay flapped N
# times (1) under a ping to IP (flap_ms, with OUTAGE and INTERVAL): each
# time carrier came back no earlier than the underlay could carry unicast
# (its address out of DAD: carrier means the interface can deliver) and a
# reply came within S (default 1) seconds of that (state dumped if not);
# and the carrier of IFC went off and on once per flap (no datapath
# restart once the port is back, which a late one would show within 2 s)
flap_check() {
	local flaps u c r ul cl i n=${4:-1} s=${3:-1} early='' late='' all=''
	local dbg=/sys/kernel/debug/ipoib
	flaps=$(cat "/sys/class/net/$1/carrier_changes")
	flap_hold "$2" "${6:-0.02}"
	for i in $(seq "$n"); do
		read -r u c r ul cl <<<"$(flap_ms "$1" "$2" "${5:-0.3}" "${6:-0.02}")"
		all="$all $u/$c/$r"
		carrier_after_usable "$u" "$ul" "$c" "$cl" || early="$early $i"
		below "$(since_usable "$u" "$r")" $((1000 * s * VM_SLOW)) ||
			late="$late $i"
	done
	flap_release
	log "underlay flaps (outage ${5:-0.3} s, a ping every ${6:-0.02} s): ms after eth0 up to its address usable/carrier/first reply:$all"
	check "underlay flap${4:+s}: carrier not before the underlay can carry unicast${4:+, all $n}" \
		test -z "$early"
	check "underlay flap${4:+s}: a reply within $s s of the underlay carrying unicast${4:+, all $n}" \
		test -z "$late"
	if [ "$CHECK_RC" != 0 ]; then
		ip neigh show dev "$1" | sed 's/^/#   /'
		sed 's/^/#   /' "$dbg/${1}_path" "$dbg/${1}_cm" 2>/dev/null
		ethtool -S "$1" | grep -v ': 0$' | sed 's/^/#   /'
		tail -n 20 /tmp/flap.ping | sed 's/^/#   /'
	fi
	sleep 2	# the window of the negative check: no late restart
	check "underlay flap${4:+s}: the carrier went off and on once${4:+ each time}" \
		test "$(cat "/sys/class/net/$1/carrier_changes")" = $((flaps + 2 * n))
}

# carrier_after_usable U ULINE C CLINE: the kernel reported the carrier
# (at C ms, line CLINE of /tmp/flap.mon) after the underlay's address
# left DAD (U ms, ULINE), or at most 50 ms before that report: the kernel
# clears the tentative flag, which we poll, before it sends the address's
# report, and a vCPU the host stalls between the two lets the carrier's
# go first (DAD itself takes a second or more). Says the figures if not.
carrier_after_usable() {
	[ "$2" != - ] && [ "$4" != - ] &&
		{ [ "$4" -gt "$2" ] || [ "$3" -ge $(($1 - 50)) ]; } && return
	echo "carrier at ${3:--} ms (line ${4:--}), the address usable at ${1:--} ms (line ${2:--})"
	return 1
}

# since_usable U R: R - U, nothing if either is missing
since_usable() {
	[ "$1" != - ] && [ "$2" != - ] && echo $(($2 - $1))
}

flap_reply_after() {
	awk -v t="$1" -F'[][]' '/bytes from/ && $2 > t { f = 1; exit }
		END { exit !f }' /tmp/flap.ping
}

# reply_after FILE T: FILE (ping -D's output) has a reply after time T
reply_after() {
	awk -v t="$2" -F'[][]' '/bytes from/ && $2 > t { f = 1; exit }
		END { exit !f }' "$1"
}

# ping_gap_ms FILE T: the longest gap between two replies in FILE (ping
# -D's output) from a second before T on, in milliseconds
ping_gap_ms() {
	awk -v t="$2" -F'[][]' '/bytes from/ && $2 > t - 1 {
		if (p && $2 - p > g) g = $2 - p; p = $2 }
		END { if (g) printf "%.0f\n", g * 1000 }' "$1"
}

# ping_lost_run FILE T: the longest run of echo requests in FILE (ping -D
# -O's output) from time T on that were never answered. A stall of the
# guest itself stops the sender too, so it loses none: unlike the time
# between replies, this counts only what the network dropped.
ping_lost_run() {
	awk -v t="$2" -F'[][]' '$2 > t && match($0, /icmp_seq=[0-9]+/) {
		s = substr($0, RSTART + 9, RLENGTH - 9) + 0
		if (!lo || s < lo) lo = s
		if (s > hi) hi = s
		if (/bytes from/) ok[s] = 1 }
		END { for (i = lo; i <= hi; i++) {
			run = ok[i] ? 0 : run + 1; if (run > m) m = run }
		      print m + 0 }' "$1"
}

# ping_outage NAME PID T: stop the ping -D (PID) writing /tmp/bond.ping,
# log its longest gap between replies from a second before T on, and check
# that it stayed under 3 s
ping_outage() {
	local out
	kill "$2"
	wait "$2" 2>/dev/null
	out=$(ping_gap_ms /tmp/bond.ping "$3")
	log "$1: failover outage (longest gap between replies, one ping every 20 ms): ${out:-none} ms"
	check "$1: ... within 3 s (no neighbour left to time out)" \
		below "$out" $((3000 * VM_SLOW))
}

# below MS LIMIT: MS is a number under LIMIT
below() {
	[ -n "$1" ] && [ "$1" -lt "$2" ]
}

# verbs objects of rxe0: "pd N cq N qp N ..." without the context count
verbs() {
	rdma resource show rxe0 | sed 's/^[0-9]*: rxe0: //; s/ ctx [0-9]*//'
}

# ipoib_start: the common start of a datagram test. A 4200-byte underlay
# (rxe then uses a 4096-byte IB MTU: IPv6 needs 1280), rxe0, ib_ipoib, its
# interface up with carrier (the broadcast group joined). Sets IFC and IDX
# (1 for A, 2 for B, ...); the checks it makes count like the test's own.
ipoib_start() {
	# shellcheck disable=SC2034 # for the test, like IFC
	IDX=$(($(printf '%d' "'$ROLE") - 64))
	ip link set eth0 mtu 4200
	rxe_up
	# shellcheck disable=SC2086 # parameters are words
	check "modprobe ib_ipoib" modprobe ib_ipoib ${IPOIB_MODPARAMS:-}
	check "an interface appears on rxe0 port 1" wait_until 10 ipoib_if rxe0
	IFC=$(ipoib_if rxe0)
	ip link set "$IFC" up
	check "carrier comes up once the broadcast group is joined" \
		wait_until 15 grep -qx 1 "/sys/class/net/$IFC/carrier"
	check "MTU is the group's 4096 minus the 4-octet header" \
		test "$(cat "/sys/class/net/$IFC/mtu")" = 4092
}
