#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by tools/bench/guest.sh: how long traffic takes to come back
# after an event, and the first packet to a new neighbour. A pings B every
# 10 ms (ping -D: a timestamp per reply) while one guest makes the event;
# tools/bench/watch.py records, on the same guest's clock, when its
# carrier and ICMP counters changed, and the flaps read the kernel's own
# reports (ip monitor; the guests' clocks are not compared). IPv6
# duplicate address detection stays on, as distributions have it.
#   flap_MODE     A's underlay down for 0.3 s and up, A pinging through
#                 the outage: from A's port ACTIVE to A's carrier and to
#                 A's first reply, from eth0's operstate up (linkwatch;
#                 rxe cannot send before) to the reply, from the port's
#                 ACTIVE to eth0's link-local address (GID 0) out of DAD,
#                 and from then to the first reply
#   flapg_MODE_O_I  outages of O = 300, 1000 and 5000 ms under pings every
#                 I = 10 and 100 ms: from the first request sent after the
#                 address is out of DAD to its delivery
#   flapt_MODE    the same through a 1-s outage with iperf3 TCP running
#   flapq_MODE    a flap with nothing sent meanwhile: a ping begun the
#                 moment the address is out of DAD, from its first request
#                 to its first reply
#   reload_MODE   B unloads and loads ib_ipoib (a new QPN): from B's
#                 carrier to the first echo request B receives
#   switch_TO     both guests switch mode: the longest time without a
#                 reply, from A's switch on
#   first         A's first ping to a neighbour it has forgotten (interface
#                 down and up: no ARP entry, no path) against the median
#                 of the steady pings after it
# Each figure is put as NAME_ms; a step that fails puts nothing.

PING_LOG=/tmp/recover.ping
WATCH_LOG=/tmp/recover.watch

# watch NAME=SOURCE...: start recording (WATCH_PID)
# shellcheck disable=SC2154 # top: set by tools/bench/guest.sh
watch_start() {
	: >"$WATCH_LOG"
	python3 "$top/tools/bench/watch.py" "$WATCH_LOG" "$@" &
	WATCH_PID=$!
}

# shellcheck disable=SC2154 # ib_ip: set by tools/bench/guest.sh
ping_start() {
	ping -D -n -i 0.01 "$ib_ip" >"$PING_LOG" 2>&1 &
	PING_PID=$!
}

# stop PID...: end background recorders
stop() {
	kill "$@" 2>/dev/null || true
	wait "$@" 2>/dev/null || true
}

now() {
	date +%s.%N
}

# kclock: wall-clock time minus kernel log time, measured by a line of
# our own in the kernel log (the kernel's timestamps of port and carrier
# events are exact; a poller under TCG may run late)
kclock() {
	python3 - <<'PYEOF2'
import os, re, time
tag = "bench-kclock-%d" % os.getpid()
t0 = time.time()
with open("/dev/kmsg", "w") as f:
    f.write(tag + "\n")
t1 = time.time()
fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
ts = None
while ts is None:
    try:
        rec = os.read(fd, 8192).decode(errors="replace")
    except BlockingIOError:
        raise SystemExit("kclock: our line is not in the kernel log")
    if rec.split(";", 1)[-1].strip() == tag:
        ts = int(rec.split(",")[2]) / 1e6
print("%.6f" % ((t0 + t1) / 2 - ts))
PYEOF2
}

# kwhen REGEX T: the wall-clock time of the first kernel log line after T
# that matches REGEX ($KCLOCK from kclock)
kwhen() {
	dmesg | awk -v re="$1" -v t="$2" -v off="$KCLOCK" -F'[][]' '
		$0 ~ re { w = $2 + off; if (w > t) { printf "%.6f\n", w; exit } }'
}

# when NAME REGEX T: the first time after T that NAME's value matched
when() {
	awk -v n="$1" -v re="$2" -v t="$3" '$1 > t && $2 == n {
		v = $3; for (i = 4; i <= NF; i++) v = v " " $i
		if (v ~ re) { print $1; exit } }' "$WATCH_LOG"
}

# reply_after T: the time of the first ping reply after T
reply_after() {
	awk -v t="$1" -F'[][]' '/bytes from/ && $2 > t { print $2; exit }' \
		"$PING_LOG"
}

replied_after() {
	test -n "$(reply_after "$1")"
}

# longest_gap T STOP: the longest time without a reply from T to STOP,
# when ping ended; nothing if no reply came after T
longest_gap() {
	[ -n "$1" ] || return 0
	awk -v t="$1" -v stop="$2" -F'[][]' 'BEGIN { last = t }
		/bytes from/ && $2 > t { if ($2 - last > gap) gap = $2 - last
					 last = $2; n++ }
		END { if (stop - last > gap) gap = stop - last
		      if (n) printf "%.6f\n", gap }' "$PING_LOG"
}

# ms FROM TO: milliseconds between two times, empty if one is missing
ms() {
	[ -n "$1" ] && [ -n "$2" ] || return 0
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f\n", (b - a) * 1000 }'
}

# put_ms NAME VALUE: record a figure, or say it is missing
put_ms() {
	if [ -n "$2" ]; then
		put "${1}_ms" "$2"
		log "$1: $2 ms"
	else
		echo "not ok - $1: no figure"
		vm_fail "$1: no figure"
	fi
}

rxe_port_state() {
	cat /sys/class/infiniband/rxe0/ports/1/state
}

rxe_port_not_active() {
	[[ "$(rxe_port_state)" != *ACTIVE* ]]
}

# plus T MS: T + MS milliseconds, nothing if MS is "-" or missing
plus() {
	[ -n "$1" ] && [ -n "$2" ] && [ "$2" != - ] || return 0
	awk -v t="$1" -v ms="$2" 'BEGIN { printf "%.6f\n", t + ms / 1000 }'
}

# after_usable U R: R - U (flap_ms's figures), nothing if one is missing
after_usable() {
	[ "$1" != - ] && [ "$2" != - ] && echo $(($2 - $1))
}

# delivered U I: in flap_ms's ping log (a request every I s, as ping
# keeps them: approximate under TCG), the ms from
# the first request sent after eth0's address left DAD (U ms after the up)
# to the first reply to that one or a later one: the first such reply's
# RTT and I for each request before it sent after the DAD end (a
# request's send time is its reply's time less its RTT)
delivered() {
	[ "$1" != - ] || return 0
	awk -v usable="$(cat /tmp/flap.up)" -v u="$1" -v iv="$2" -F'[][]' '
	BEGIN { usable += u / 1000 }
	/bytes from/ && match($0, /time=[0-9.]+/) {
		rtt = substr($0, RSTART + 5, RLENGTH - 5) / 1000
		if ($2 - rtt < usable)
			next
		n = int(($2 - rtt - usable) / iv)
		printf "%.0f\n", (rtt + n * iv) * 1000
		exit
	}' /tmp/flap.ping
}

# recover_flap MODE: (A) the underlay down for 0.3 s and up, pinging B
# every 10 ms through it (flap_ms of selftests/lib.sh: the address's DAD
# end and our carrier from the kernel's own reports)
recover_flap() {
	local name=flap_$1 u c r t_up t_act t_oper
	if [ "$ROLE" = A ]; then
		read -r u c r _ <<<"$(flap_ms "$ifc" "$ib_ip" 0.3 0.01)"
		t_up=$(cat /tmp/flap.up)
		KCLOCK=$(kclock || true)
		# rxe says "set active" at eth0's NETDEV_UP and again once
		# linkwatch has it operationally up (NETDEV_CHANGE)
		t_act=$(kwhen 'rxe0: set active' "$t_up")
		t_oper=$(kwhen 'rxe0: set active' "$t_act")
		# (6.1's rxe says it once: the kernel's report of eth0 then)
		[ -n "$t_oper" ] ||
			t_oper=$(plus "$t_up" "$(mon_ms oper "$t_up" "$ifc" | cut -d' ' -f1)")
		put_ms "${name}_carrier" "$(ms "$t_act" "$(plus "$t_up" "$c")")"
		put_ms "${name}_reply" "$(ms "$t_act" "$(plus "$t_up" "$r")")"
		put_ms "${name}_oper" "$(ms "$t_act" "$t_oper")"
		put_ms "${name}_oper_reply" "$(ms "$t_oper" "$(plus "$t_up" "$r")")"
		put_ms "${name}_usable" "$(ms "$t_act" "$(plus "$t_up" "$u")")"
		put_ms "${name}_usable_reply" "$(after_usable "$u" "$r")"
	fi
	barrier "$name" 90
}

# recover_flap_grid MODE: (A) outages of 0.3, 1 and 5 s, each under pings
# every 10 and every 100 ms: the first request sent after eth0's address
# is out of DAD to its delivery (delivered), the worst of BENCH_FLAPS
# flaps (default 3), as flapg_MODE_OUTAGE_INTERVAL (both in ms); a flap
# without a figure leaves the row without one
recover_flap_grid() {
	local o i u d row worst each
	if [ "$ROLE" = A ]; then
		for o in 0.3 1 5; do
			for i in 0.01 0.1; do
				row=flapg_${1}_$(ms 0 "$o")_$(ms 0 "$i")
				worst='' each=''
				for _flap in $(seq "${BENCH_FLAPS:-3}"); do
					read -r u _ <<<"$(flap_ms "$ifc" "$ib_ip" "$o" "$i")"
					d=$(delivered "$u" "$i")
					each="$each ${d:--}"
					if [ -z "$d" ]; then
						worst=''
						break
					fi
					[ -n "$worst" ] && [ "$worst" -ge "$d" ] ||
						worst=$d
				done
				log "$row: flap by flap$each ms"
				put_ms "$row" "$worst"
			done
		done
	fi
	# (flap_ms: up to 5 s for the link first, the outage, 10 s after)
	barrier "flapg_$1" $((6 * 30 * ${BENCH_FLAPS:-3}))
}

# recover_flap_tcp MODE: (A) a 1-s outage while iperf3 TCP runs to B and
# A pings B every 10 ms: the first request sent after eth0's address is
# out of DAD to its delivery (flapt_MODE), and whether TCP carried on
# (flapt_MODE_tcp_mbps)
# shellcheck disable=SC2154 # dir, IPERF_PORT: set by tools/bench/guest.sh
recover_flap_tcp() {
	local name=flapt_$1 u pid mbps
	if [ "$ROLE" = B ]; then
		timeout 90 iperf3 -s -1 -B "$ib_ip" -p "$IPERF_PORT" \
			>"$dir/$name.server.txt" 2>&1 &
		pid=$!
		wait_until 20 listening "$IPERF_PORT" || true
		signal "$name-ready"
		wait_for A "$name-done" 120 || true
		wait "$pid" || true
	else
		wait_for B "$name-ready" 60 || true
		iperf3 -J -c "$ib_ip" -p "$IPERF_PORT" -t 12 \
			>"$dir/$name.client.txt" 2>&1 &
		pid=$!
		sleep 2	# TCP under way before the flap
		read -r u _ <<<"$(flap_ms "$ifc" "$ib_ip" 1 0.01)"
		wait "$pid" || true
		signal "$name-done"
		put_ms "$name" "$(delivered "$u" 0.01)"
		mbps=$(python3 -c 'import json, sys
print("%.0f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6))' \
			"$dir/$name.client.txt" 2>/dev/null || true)
		[ -z "$mbps" ] || put "${name}_tcp_mbps" "$mbps"
	fi
	barrier "$name" 120
}

# recover_flap_quiet MODE: (A) the same flap with nothing sent meanwhile:
# a ping begins the moment the kernel reports eth0's link-local address
# out of DAD (ip monitor, read as it comes, no poll); the figure is from
# its first request to its first reply (that reply's RTT plus the
# requests before it, 10 ms apart)
recover_flap_quiet() {
	local name=flapq_$1 line up
	if [ "$ROLE" = A ]; then
		ip link set eth0 down
		wait_until 5 rxe_port_not_active || true
		# (a coprocess: the guests have no /dev/fd for <(...))
		coproc MON { exec timeout 30 ip monitor address; }
		{ sleep 0.3; ip link set eth0 up; } &	# the outage, listening
		up=$!
		# shellcheck disable=SC2016 # awk's fields
		timeout 20 awk '$2 == "eth0" && $3 == "inet6" && $4 ~ /^fe80:/ &&
			/scope link/ && !/tentative/ { exit }' <&"${MON[0]}" || true
		ping_start
		wait_until 20 replied_after 0 || true
		stop "$PING_PID" "$MON_PID"
		wait "$up" || true
		line=$(grep -m1 'bytes from' "$PING_LOG" || true)
		put_ms "${name}_first" "$(sed -n \
			's/.*icmp_seq=\([0-9]*\) .* time=\([0-9.]*\) ms.*/\1 \2/p' \
			<<<"$line" | awk '{ printf "%.0f\n", $2 + ($1 - 1) * 10 }')"
	fi
	barrier "$name" 90
}

# recover_reload MODE: (B) ib_ipoib out and in again, A pinging meanwhile
# shellcheck disable=SC2154 # dir, params, idx: set by tools/bench/guest.sh
recover_reload() {
	local name=reload_$1 t0 t_gone t_car i
	if [ "$ROLE" = A ]; then
		ping_start
		wait_until 10 replied_after 0 || true
		signal "$name-go"
		wait_for B "$name-done" 120 || true
		wait_until 10 replied_after "$(now)" || true
		stop "$PING_PID"
		put_ms "${name}_gap" \
			"$(ms 0 "$(longest_gap "$(reply_after 0)" "$(now)")")"
		put_ms "${name}_echo" "$(cat "$dir/$name.B" 2>/dev/null)"
	else
		wait_for A "$name-go" 60 || true
		watch_start carrier="/sys/class/net/$ifc/carrier" echo=icmp:InEchos
		wait_until 10 test -s "$WATCH_LOG" || true
		t0=$(now)
		modprobe -r ib_ipoib || true
		# shellcheck disable=SC2086 # a list of parameters
		modprobe ib_ipoib $params || true
		wait_until 10 ipoib_if rxe0 || true
		ifc=$(ipoib_if rxe0 || echo "$ifc")
		[ "$1" = datagram ] ||
			echo connected >"/sys/class/net/$ifc/mode" || true
		ip link set "$ifc" up || true
		ip addr add "10.20.0.$idx/24" dev "$ifc" || true
		wait_until 20 grep -qx 1 "/sys/class/net/$ifc/carrier" || true
		# the new interface's: after the old one's went ("-")
		t_gone=$(when carrier '^-$' "$t0")
		t_car=
		[ -z "$t_gone" ] || t_car=$(when carrier '^1$' "$t_gone")
		i=0
		while [ -n "$t_car" ] && [ $i -lt 200 ] &&
			[ -z "$(when echo . "$t_car")" ]; do
			sleep 0.1
			i=$((i + 1))
		done
		stop "$WATCH_PID"
		# the first change after carrier: an echo request arrived
		ms "$t_car" "$(when echo . "$t_car")" >"$dir/$name.B"
		signal "$name-done"
	fi
	barrier "$name" 60
}

# recover_switch MODE: both guests switch to MODE, A pinging meanwhile
recover_switch() {
	local name=switch_$1 t0
	if [ "$ROLE" = A ]; then
		ping_start
		wait_until 10 replied_after 0 || true
		signal "$name-go"
		t0=$(now)
		echo "$1" >"/sys/class/net/$ifc/mode"
		wait_for B "$name-done" 60 || true
		wait_until 20 replied_after "$(now)" || true
		sleep 0.5
		stop "$PING_PID"
		put_ms "$name" "$(ms 0 "$(longest_gap "$t0" "$(now)")")"
	else
		wait_for A "$name-go" 60 || true
		echo "$1" >"/sys/class/net/$ifc/mode"
		signal "$name-done"
	fi
	barrier "$name" 90
}

# rtt_median N: the median of N pings to B, 50 ms apart, in ms
rtt_median() {
	ping -n -c "$1" -i 0.05 "$ib_ip" |
		sed -n 's/.* time=\([0-9.]*\) ms/\1/p' | sort -n |
		sed -n "$((($1 + 1) / 2))p"
}

# first_ping PREFIX IFC: IFC down and up (no ARP entry, no path), then
# the first ping to $ib_ip as PREFIXfirst and the median of the steady
# pings after it as PREFIXsteady_rtt
first_ping() {
	local first steady
	ip link set "$2" down
	ip link set "$2" up
	# operstate up: linkwatch has activated the queue
	wait_until 15 grep -qx up "/sys/class/net/$2/operstate" || true
	first=$(ping -n -c 1 -W 5 "$ib_ip" |
		sed -n 's/.* time=\([0-9.]*\) ms/\1/p')
	steady=$(rtt_median 21)
	put_ms "${1}first" "$first"
	put_ms "${1}steady_rtt" "$steady"
}

# recover_first: (A) the first ping after forgetting B, and steady pings
recover_first() {
	[ "$ROLE" != A ] || first_ping "" "$ifc"
	barrier first 60
}
