#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Observability between two soft-RoCE guests: the tracepoints
# (events/ib_ipoib) follow one peer in connected mode: the broadcast group
# joined, the path to the peer resolved, a connection to the peer's QPN
# live, and closed when the interface goes down; event filters on the
# peer's QPN and GID are taken. Dynamic debug: with debug_level and
# mcast_debug_level at 0, the driver's debug messages stay off until
# "module ib_ipoib +p" turns their call sites on, and go with "-p".
# shellcheck disable=SC2317 # functions run through check or wait_until
GUESTS=2
. "$(dirname "$0")/lib.sh"

tr=/sys/kernel/tracing
ev=$tr/events/ib_ipoib
params=/sys/module/ib_ipoib/parameters
ddc=/sys/kernel/debug/dynamic_debug/control
[ -e $ddc ] || ddc=/proc/dynamic_debug/control

# gid_of ADDR: the GID in a 20-octet link-layer address (or a broadcast
# address) as the kernel's %pI6c prints it: the first longest run of two
# or more zero words as "::" (its dotted IPv4 forms never concern GIDs
# and MGIDs of IPoIB on soft-RoCE)
gid_of() {
	local IFS=: b w=() i run best=-1 len=1 out=
	read -ra b <<<"$1"
	for i in 0 1 2 3 4 5 6 7; do
		w+=("$(printf '%x' $((16#${b[4 + 2 * i]}${b[5 + 2 * i]})))")
	done
	i=0
	while [ $i -lt 8 ]; do
		run=0
		while [ $((i + run)) -lt 8 ] && [ "${w[i + run]}" = 0 ]; do
			run=$((run + 1))
		done
		if [ $run -gt $len ]; then
			best=$i
			len=$run
		fi
		i=$((i + (run > 0 ? run : 1)))
	done
	i=0
	while [ $i -lt 8 ]; do
		if [ $i = $best ]; then
			out+=::
			i=$((i + len))
			continue
		fi
		[ -n "$out" ] && [ "${out: -1}" != : ] && out+=:
		out+=${w[i]}
		i=$((i + 1))
	done
	echo "$out"
}

# qpn_of ADDR: the QPN in a 20-octet link-layer address, as the events
# print it
qpn_of() {
	local IFS=: b
	read -ra b <<<"$1"
	printf '0x%06x\n' $((16#${b[1]}${b[2]}${b[3]}))
}

# traced PATTERN: an event of the buffer matches (grep -E)
traced() {
	grep -Eq "$1" "$tr/trace"
}

has_events() {
	local e
	for e in cm path mcast; do
		[ -e "$ev/ipoib_${e}_state/format" ] || return 1
	done
}

failures() {
	wc -l <"$VM_FAIL_FILE"
}

# The events exist once the module is: load it (ipoib_start's modprobe
# then finds it loaded) and turn them on before the interface is up.
mounted_tracefs=
if [ ! -e $tr/trace ]; then
	mount -t tracefs tracefs $tr && mounted_tracefs=1
fi
# shellcheck disable=SC2086 # parameters are words
check "modprobe ib_ipoib, before the RDMA device" \
	modprobe ib_ipoib ${IPOIB_MODPARAMS:-}
check "tracefs has the ib_ipoib events" has_events
tracing_on=$(cat $tr/tracing_on)
echo >$tr/trace
echo 1 >$tr/tracing_on
check "the ib_ipoib events turn on" sh -c "echo 1 > $ev/enable"
ipoib_start
idx=$IDX ifc=$IFC
peer=$([ "$ROLE" = A ] && echo 2 || echo 1)
sys=/sys/class/net/$ifc
bcast=$(gid_of "$(cat "$sys/broadcast")")
cat "$sys/address" >"$SHARED/addr.$ROLE"
echo connected >"$sys/mode"
check "mode switches to connected" test "$(cat "$sys/mode")" = connected
ip addr add "10.20.0.$idx/24" dev "$ifc"
barrier configured

peer_addr=$(cat "$SHARED/addr.$([ "$ROLE" = A ] && echo B || echo A)")
peer_gid=$(gid_of "$peer_addr")
peer_qpn=$(qpn_of "$peer_addr")
log "peer: GID $peer_gid, QPN $peer_qpn; broadcast group $bcast"
# follow the peer: the filters must take these fields and values
check "a filter on the peer's QPN (ipoib_cm_state)" \
	sh -c "echo 'peer_qpn == $peer_qpn' > $ev/ipoib_cm_state/filter"
check "a filter on the peer's GID (ipoib_path_state)" \
	sh -c "echo 'dgid == \"$peer_gid\"' > $ev/ipoib_path_state/filter"
check "ping with 30000-octet payloads" \
	pings 3 -i 0.3 -W 5 -s 30000 "10.20.0.$peer"
barrier pinged

nfail=$(failures)
mc="ipoib_mcast_state: dev=$ifc mgid=$bcast full"
pa="ipoib_path_state: dev=$ifc dgid=$peer_gid"
cm="ipoib_cm_state: dev=$ifc peer=$peer_gid peer_qpn=$peer_qpn qpn=0x[0-9a-f]{6} (active|passive)"
check "trace: the broadcast group joined" traced "$mc joining -> joined "
check "trace: the path to the peer made" traced "$pa none -> resolving "
check "trace: the path to the peer ready" traced "$pa resolving -> ready "
check "trace: a connection to the peer's QPN live" \
	traced "$cm (connecting|accepting) -> live\$"

# Down: the connection closes (drains, then is released); a peer that
# went down first has closed it already (its DREQ).
ip link set "$ifc" down
check "trace: the connection left live for draining" \
	wait_until 10 traced "$cm live -> draining\$"
check "trace: ... and ended dead" \
	wait_until 10 traced "$cm draining -> dead\$"
check "trace: the broadcast group left" traced "$mc joined -> none "
if [ "$(failures)" != "$nfail" ]; then
	log "the events recorded:"
	grep -E 'ipoib_[a-z]+_state: ' $tr/trace | head -n 40 | sed 's/^/#   /'
fi
barrier down

echo 0 >$ev/enable
echo 0 >$ev/ipoib_cm_state/filter
echo 0 >$ev/ipoib_path_state/filter
echo >$tr/trace
echo "$tracing_on" >$tr/tracing_on

# Dynamic debug. The parameters as loaded (IPOIB_MODPARAMS) are put back
# at the end.
dbg0=$(cat $params/debug_level)
mdbg0=$(cat $params/mcast_debug_level)
echo 0 >$params/debug_level
echo 0 >$params/mcast_debug_level
joined="$ifc: joined ff12:401b:"
njoined() {
	dmesg | grep -c "$joined"
}
up_again() {
	ip link set "$ifc" up &&
		wait_until 15 grep -qx 1 "$sys/carrier"
}
dd_on() {	# call sites of ib_ipoib turned on (flags with p)
	awk '$2 ~ /^\[ib_ipoib\]/ && $3 ~ /^=[a-z]*p/' $ddc | wc -l
}
n0=$(njoined)
check "up again, no dynamic debug: carrier" up_again
check "... and no debug message of the join" \
	test "$(njoined)" = "$n0"
# Debian's kernels have dynamic debug; the debug kernel built here
# (tools/debug-kernel) does not
if [ -e $ddc ] || grep -qs '^CONFIG_DYNAMIC_DEBUG=y' "/boot/config-$(uname -r)"; then
	check "dynamic debug: 'module ib_ipoib +p' is taken" \
		sh -c "echo 'module ib_ipoib +p' > $ddc"
	check "dynamic debug: call sites of ib_ipoib are on" test "$(dd_on)" -gt 0
	grep '\[ib_ipoib\]' $ddc | head -n 5 | sed 's/^/#   /'
	ip link set "$ifc" down
	check "down and up with them on: carrier" up_again
	check "... and the join's debug message in the kernel log" \
		wait_until 5 sh -c "test \$(dmesg | grep -c '$joined') -gt $n0"
	dmesg | grep "$ifc: " | tail -n 8 | sed 's/^/#   /'
	check "dynamic debug: 'module ib_ipoib -p' is taken" \
		sh -c "echo 'module ib_ipoib -p' > $ddc"
	check "dynamic debug: no call site of ib_ipoib is on" test "$(dd_on)" = 0
else
	skip "dynamic debug: call sites of ib_ipoib on and off" \
		"no dynamic debug in $(uname -r)"
fi
echo "$dbg0" >$params/debug_level
echo "$mdbg0" >$params/mcast_debug_level
barrier dyndbg

check "ib_ipoib unloads" modprobe -r ib_ipoib
[ -z "$mounted_tracefs" ] || umount $tr
finish
