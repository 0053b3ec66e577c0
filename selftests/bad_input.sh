#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad input in datagram mode (RFC 4391). Guest A sends hand-made datagrams
# to the UD QP of B's interface with tools/inject/ipoib_inject: cut and
# empty headers, an unknown Type, a non-zero Reserved field, ARP with a
# 6-octet hardware length, a wrong Q_Key, messages above the IB MTU and
# above B's receive buffers. B checks that each is counted and dropped, or
# handled as the RFC says, and that it still works afterwards; neither
# guest may log anything at warning level or above meanwhile (one
# exception, see raw-oversized).
#
# Every case ends with one valid ICMP echo request (the fence): once B has
# answered it, B has processed everything A sent before it, so the counter
# deltas B reads then are final and are compared exactly. After
# raw-oversized, which may take B's QP down for a moment, the fence is a
# ping, repeated until B answers.
# shellcheck disable=SC2317 # functions run through check, wait_until or eval
GUESTS=2
UD_INJECT=1
. "$(dirname "$0")/lib.sh"

inject=$IPOIB_TOP/build/inject/ipoib_inject
ipoib_start
idx=$IDX ifc=$IFC
ip addr add "10.20.0.$idx/24" dev "$ifc"
cat "/sys/class/net/$ifc/address" >"$SHARED/addr.$ROLE"
barrier configured

# Kernel messages at warning level or above, but for what TCG's stolen
# time makes the timekeeping code say.
warnings() {
	dmesg --level=warn,err,crit,alert,emerg |
		grep -vE 'hrtimer: interrupt took|clocksource: Long readout interval'
}
warn_mark() {
	warnings | wc -l
}
warnings_since() {	# warnings_since MARK
	warnings | tail -n +$(($1 + 1))
}
no_warnings_since() {
	local w
	w=$(warnings_since "$1")
	[ -z "$w" ] && return 0
	echo "$w"
	return 1
}
warn0=$(warn_mark)

# counters: "name value" lines: ethtool -S, two netdev error counters,
# two of rxe's port counters as rxe.NAME, /proc/net/snmp as Proto.Field.
# Few processes: it is polled, and every fork is slow under TCG.
counters() {
	local hw=/sys/class/infiniband/rxe0/ports/1/hw_counters
	ethtool -S "$ifc" | awk 'NR > 1 { sub(":", "", $1); print $1, $2 }'
	awk 'FILENAME ~ /snmp$/ {
			if (!($1 in hdr)) { hdr[$1] = $0; next }
			n = split(hdr[$1], f); p = substr($1, 1, length($1) - 1)
			for (i = 2; i <= NF && i <= n; i++) print p "." f[i], $i
			next
		}
		{ n = FILENAME; sub(".*/", "", n)
		  print (FILENAME ~ /hw_counters/ ? "rxe." : "") n, $1 }' \
		"/sys/class/net/$ifc/statistics/rx_errors" \
		"/sys/class/net/$ifc/statistics/rx_length_errors" \
		"$hw/rcvd_pkts" "$hw/sent_pkts" /proc/net/snmp
}

snapshot() {
	counters >"/tmp/snap.$ROLE"
}

# deltas: "name delta" for every counter since the snapshot, and drops:
# rx_dropped less rx_own_mcast (our own multicast looping back, which the
# stack's background traffic causes at any time); a copy left in
# /tmp/deltas.ROLE
deltas() {
	counters | awk -v out="/tmp/deltas.$ROLE" '
		NR == FNR { base[$1] = $2; next }
		{ d[$1] = $2 - base[$1]; print $1, d[$1]; print $1, d[$1] >out }
		END { x = d["rx_dropped"] - d["rx_own_mcast"]
		      print "drops", x; print "drops", x >out }' \
		"/tmp/snap.$ROLE" -
}

delta() {	# delta NAME
	deltas | awk -v n="$1" '$1 == n { print $2; f = 1 } END { exit !f }'
}

# expect_deltas NAME=N | NAME>=N | NAME<N ...: quiet; status 0 iff all hold
expect_deltas() {
	deltas | awk -v want="$*" '{ d[$1] = $2 }
		END { n = split(want, w, " ")
			for (i = 1; i <= n; i++) {
				if (split(w[i], kv, ">=") == 2) {
					if (!(kv[1] in d) || d[kv[1]] < kv[2]) exit 1
				} else if (split(w[i], kv, "<") == 2) {
					if (!(kv[1] in d) || d[kv[1]] >= kv[2]) exit 1
				} else if (split(w[i], kv, "=") == 2) {
					if (!(kv[1] in d) || d[kv[1]] != kv[2]) exit 1
				} else {
					exit 2
				}
			}
		}'
}

# wait_deltas SECONDS EXPECT...: until expect_deltas holds; on timeout
# print the counters that moved
wait_deltas() {
	local secs=$1
	shift
	wait_until "$secs" expect_deltas "$@" && return 0
	echo "expected: $*"
	echo "got: $(deltas | awk '$2 != 0 { printf "%s=%s ", $1, $2 }')"
	return 1
}

# --- guest A: the injector ----------------------------------------------
if [ "$ROLE" = A ]; then
	baddr=$(cat "$SHARED/addr.B")
	qpn=0x$(echo "$baddr" | cut -d: -f2-4 | tr -d :)
	gid=$(echo "$baddr" | cut -d: -f5-)
	log "B's UD QP $qpn, GID $gid"

	# inj NAME ARGS...: run ipoib_inject, keep its output for later checks
	inj() {
		local name=$1 rc
		shift
		"$inject" "$@" "$gid" "$qpn" >"/tmp/inj.$name" 2>&1
		rc=$?
		cat "/tmp/inj.$name"
		return "$rc"
	}
	# ping_until_answered: the fence when B's QP may be down for a while:
	# once a ping is answered, B has processed all that A sent before
	ping_until_answered() {
		local i
		for i in $(seq 30); do
			pings 1 -W 2 10.20.0.2 && return 0
		done
		return 1
	}
	# case_run NAME [--refence] ARGS...: one case, in step with B
	case_run() {
		local name=$1
		shift
		wait_for B "ready.$name" 120 || return 1
		# A's own counters: only these two cases look at them (a
		# snapshot costs half a second under TCG)
		case $name in reserved | oversized) snapshot ;; esac
		if [ "$1" = --refence ]; then
			shift
			check "$name: ipoib_inject $*" inj "$name" "$@"
			check "$name: fence: ping until B answers" \
				ping_until_answered
		else
			check "$name: ipoib_inject $*" inj "$name" "$@"
			check "$name: fence echo" inj "$name.fence" -n 1 echo
		fi
		signal "sent.$name"
	}

	case_run short -n 6 short
	case_run empty -n 3 empty
	case_run badtype -n 4 badtype
	case_run reserved -n 3 reserved
	check "reserved: B's echo replies reach our $ifc" \
		wait_deltas 10 Icmp.InEchoReps=4
	case_run echo-4096 -n 2 -l 4096 echo
	case_run oversized -n 20 -l 4100 oversized
	check "oversized: rxe completes the sends without error (C10-93.1.1)" \
		grep -q "^sent .* ok=20 errors=0 " /tmp/inj.oversized
	check "oversized: and puts (almost) none of them on the wire" \
		expect_deltas rxe.sent_pkts\<20
	case_run qkey -n 3 -r 0x1234 echo
	case_run arp -n 3 -s 10.20.0.200 -w 10000 -e 3 arp
	sed -n 's/^local .*lladdr=//p' /tmp/inj.arp >"$SHARED/inject.lladdr"
	check "arp: B answers each request, to our QP" \
		sh -c "grep -c 'type=0x0806 arp_op=2' /tmp/inj.arp | grep -qx 3"
	case_run arp-hlen -n 3 -s 10.20.0.201 -w 2000 arp-hlen
	check "arp-hlen: B answers none" \
		grep -q "^received count=0" /tmp/inj.arp-hlen
	case_run raw-echo -n 3 --raw echo
	case_run raw-echo-4096 -n 2 --raw -l 4096 echo
	case_run raw-oversized --refence -n 300 --raw -l 4100 oversized
	case_run raw-echo-after -n 3 --raw echo
	wait_for B checked 120
	check "no kernel warnings while injecting" no_warnings_since "$warn0"
fi

# --- guest B: the receiver ----------------------------------------------
# case_check NAME EXPECT...: A's datagrams moved the counters by exactly
# this, the fence included
case_check() {
	local name=$1
	shift
	snapshot
	signal "ready.$name"
	wait_for A "sent.$name" 120 || return 1
	check "$name: $*" wait_deltas 20 "$@"
	# (what the last look of wait_deltas found, as it left it)
	log "$name: $(awk '$2 != 0 { printf "%s=%s ", $1, $2 }' "/tmp/deltas.$ROLE")"
}

# What rxe does with a UD message longer than the receive buffer differs:
# it drops it silently (6.12, IBA class D), or completes the receive with
# an error and moves the QP to Error (6.1), which the driver notices,
# counts in rx_errors and repairs by restarting its datapath; that restart
# is the one warning allowed here. Either way B must answer the next
# fence, and the case must not pass without A's packets reaching rxe.
oversized_outcome() {
	local errors rcvd w
	errors=$(delta rx_errors)
	rcvd=$(delta rxe.rcvd_pkts)
	w=$(warnings_since "$warn1")
	if [ "$errors" -eq 0 ]; then
		echo "rxe took $rcvd packets and dropped the 300 oversized ones silently"
		[ "$rcvd" -ge 301 ] || return 1
		[ -z "$w" ] || { echo "$w"; return 1; }
		return 0
	fi
	echo "rxe failed the QP $errors time(s); the driver restarted it:"
	echo "$w"
	echo "$w" | grep -q "$ifc: restarting the datapath" || return 1
	! echo "$w" | grep -vqE "$ifc: (receive error [0-9]+ \(vendor 0x[0-9a-f]+\)|restarting the datapath)$"
}

if [ "$ROLE" = B ]; then
	# the debug lines say what each dropped packet was
	echo 1 >/sys/module/ib_ipoib/parameters/data_debug_level
	# 1-3 octets, then 0: shorter than the encapsulation header
	case_check short rx_short=6 rx_bad_type=0 drops=6 rx_errors=0 \
		Icmp.InEchos=1
	case_check empty rx_short=3 drops=3 rx_errors=0 Icmp.InEchos=1
	# RFC 4391 s6 Table 1 lists the Types; others are dropped
	case_check badtype rx_bad_type=4 rx_short=0 drops=4 rx_errors=0 \
		Icmp.InEchos=1
	check "data_debug_level: the log names the short and bad-Type drops" \
		sh -c "dmesg | grep -q '$ifc: dropped 4[0-3] octets from QPN 0x' &&
		       dmesg | grep -q '$ifc: dropped Type 0x[0-9a-f]* from QPN 0x'"
	echo 0 >/sys/module/ib_ipoib/parameters/data_debug_level
	# RFC 4391 s6: Reserved is ignored on receive
	case_check reserved drops=0 rx_errors=0 Icmp.InEchos=4 \
		Icmp.OutEchoReps=4 rx_packets\>=4
	# the largest datagram a 4096-octet IB MTU carries is delivered
	case_check echo-4096 drops=0 rx_errors=0 Icmp.InEchos=3 \
		Icmp.OutEchoReps=3
	# above the sender's MTU: the sending rxe emits nothing
	case_check oversized drops=0 rx_errors=0 Icmp.InEchos=1
	# a wrong Q_Key: rxe drops it before the driver sees it
	case_check qkey drops=0 rx_errors=0 Icmp.InEchos=1
	# ARP is the stack's business: the driver passes both up, the kernel's
	# ARP answers the good request and drops the one with ar_hln 6
	case_check arp drops=0 rx_errors=0 Icmp.InEchos=1 rx_packets\>=4
	check "arp: neighbour 10.20.0.200 learnt with the injector's address" \
		sh -c "ip neigh show 10.20.0.200 dev $ifc | grep -q \"lladdr \$(cat $SHARED/inject.lladdr)\""
	case_check arp-hlen drops=0 rx_errors=0 Icmp.InEchos=1 rx_packets\>=4
	check_fail "arp-hlen: no neighbour 10.20.0.201" \
		sh -c "ip neigh show 10.20.0.201 dev $ifc | grep ."
	# the same echo as RoCE v2 packets built by hand: the ICRC is right
	case_check raw-echo drops=0 rx_errors=0 Icmp.InEchos=4 \
		Icmp.OutEchoReps=4
	case_check raw-echo-4096 drops=0 rx_errors=0 Icmp.InEchos=3
	check "no kernel warnings so far" no_warnings_since "$warn0"
	warn1=$(warn_mark)
	# 4100 octets: more than the 40 + 4096 of a receive buffer
	case_check raw-oversized drops=0 Icmp.InEchos\>=1
	check "raw-oversized: dropped by rxe, or the QP restarted" \
		oversized_outcome
	warn2=$(warn_mark)
	# and the datapath is whole again
	case_check raw-echo-after drops=0 rx_errors=0 Icmp.InEchos=4 \
		Icmp.OutEchoReps=4
	signal checked
	ip -s link show "$ifc"
	ethtool -S "$ifc"
	check "no kernel warnings after raw-oversized" no_warnings_since "$warn2"
fi

barrier injected 180
for r in $ROLES; do
	[ "$r" = "$ROLE" ] && continue
	ridx=$(($(printf '%d' "'$r") - 64))
	check "ping IPv4 $r after the bad input" \
		pings 3 -i 0.2 -W 5 "10.20.0.$ridx"
done
barrier pinged
check "ib_ipoib unloads" modprobe -r ib_ipoib
finish
