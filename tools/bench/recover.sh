#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by tools/bench/guest.sh: how long traffic takes to come back
# after an event, and the first packet to a new neighbour. A pings B every
# 10 ms (ping -D: a timestamp per reply) while one guest makes the event;
# tools/bench/watch.py records, on the same guest's clock, when its port,
# carrier and ICMP counters changed (the guests' clocks are not compared).
#   flap_MODE     A's underlay goes down and up (IPv6 duplicate address
#                 detection on, as distributions have it), A pinging
#                 through the outage: from A's port ACTIVE to A's carrier
#                 and to A's first reply, from eth0's operstate up
#                 (linkwatch; rxe cannot send before) to both, from the
#                 port's ACTIVE to eth0's link-local address (GID 0) out
#                 of DAD, and from then to the first reply
#   flapq_MODE    the same flap with nothing sent meanwhile: from GID 0's
#                 address out of DAD to the first reply of a ping begun
#                 then
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

# eth0_usable: its link-local address (soft-RoCE's GID 0) is there and
# out of duplicate address detection: RoCE unicast can flow
eth0_usable() {
	ip -6 addr show dev eth0 scope link | grep -q inet6 &&
		! ip -6 addr show dev eth0 scope link tentative | grep -q inet6
}

# dad_watch_start FILE: in the background, once eth0_usable, write the
# time to FILE (DAD_PID); start it while the link is down
dad_watch_start() {
	: >"$1"
	(
		i=0
		while ! eth0_usable && [ $i -lt 4000 ]; do
			sleep 0.005	# the poll
			i=$((i + 1))
		done
		eth0_usable && now >"$1"
	) &
	DAD_PID=$!
}

rxe_port_state() {
	cat /sys/class/infiniband/rxe0/ports/1/state
}

rxe_port_not_active() {
	[[ "$(rxe_port_state)" != *ACTIVE* ]]
}

# recover_flap MODE: (A) the underlay down for 0.3 s, then up
recover_flap() {
	local name=flap_$1 t_up t_act t_oper t_car t_rep t_use
	if [ "$ROLE" = A ]; then
		watch_start port=/sys/class/infiniband/rxe0/ports/1/state \
			oper=/sys/class/net/eth0/operstate \
			carrier="/sys/class/net/$ifc/carrier"
		ping_start
		DAD_PID=
		if wait_until 10 replied_after 0; then
			ip link set eth0 down
			wait_until 5 rxe_port_not_active || true
			dad_watch_start /tmp/recover.dad
			sleep 0.3
			t_up=$(now)
			ip link set eth0 up
			wait_until 20 replied_after "$t_up" || true
		fi
		[ -z "$DAD_PID" ] || wait "$DAD_PID" || true
		t_use=$(cat /tmp/recover.dad 2>/dev/null)
		stop "$PING_PID" "$WATCH_PID"
		KCLOCK=$(kclock || true)
		# rxe says "set active" at eth0's NETDEV_UP and again once
		# linkwatch has it operationally up (NETDEV_CHANGE)
		t_act=$(kwhen 'rxe0: set active' "$t_up")
		t_oper=$(kwhen 'rxe0: set active' "$t_act")
		[ -n "$t_oper" ] || t_oper=$(when oper '^up$' "$t_up")
		t_car=$(kwhen "$ifc: .*carrier on" "$t_up")
		t_rep=$(reply_after "$t_up")
		put_ms "${name}_carrier" "$(ms "$t_act" "$t_car")"
		put_ms "${name}_reply" "$(ms "$t_act" "$t_rep")"
		put_ms "${name}_oper" "$(ms "$t_act" "$t_oper")"
		put_ms "${name}_oper_reply" "$(ms "$t_oper" "$t_rep")"
		put_ms "${name}_usable" "$(ms "$t_act" "$t_use")"
		put_ms "${name}_usable_reply" "$(ms "$t_use" "$t_rep")"
	fi
	barrier "$name" 90
}

# recover_flap_quiet MODE: (A) the same flap with no traffic during it:
# a ping begins once GID 0's address is out of DAD
recover_flap_quiet() {
	local name=flapq_$1 t_use
	if [ "$ROLE" = A ]; then
		ip link set eth0 down
		wait_until 5 rxe_port_not_active || true
		dad_watch_start /tmp/recover.dad
		sleep 0.3
		ip link set eth0 up
		wait "$DAD_PID" || true
		t_use=$(cat /tmp/recover.dad 2>/dev/null)
		ping_start
		wait_until 20 replied_after 0 || true
		stop "$PING_PID"
		put_ms "${name}_first" "$(ms "$t_use" "$(reply_after 0)")"
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
