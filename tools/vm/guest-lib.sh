# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for guest test scripts run by tools/vm/run.sh. Source it:
#     . "$VM_LIB"          (or: . /path/to/tools/vm/guest-lib.sh)
# and end the script with `finish`.
#
# Environment (set by guest-init.sh): ROLE (A, B, ...), ROLES ("A B ..."),
# NGUESTS, SHARED (/shared, a 9p directory common to all guests and kept on
# the host; in a shared boot, batch-guest.sh gives each test a directory of
# its own below it), KVER, and VM_ABORT (the flag run.sh raises when a
# guest died).
#
# Output follows a TAP-like style: `ok - DESC` / `not ok - DESC` / `ok -
# DESC # SKIP REASON`, anything else starts with `#`. DESC is the check's
# name alone, the same whether it passed or not (why it failed goes on the
# `#` lines after it): batch.sh merges the results of the same DESC from
# every guest of a test into one. run.sh's summary shows the result lines.

: "${ROLE:?ROLE not set: run this under tools/vm/run.sh}"
: "${ROLES:?}" "${SHARED:?}"

VM_FLAGS=$SHARED/flags
VM_ABORT=${VM_ABORT:-$VM_FLAGS/ABORT}
VM_FAIL_FILE=/tmp/vm-failures.$ROLE
mkdir -p "$VM_FLAGS"
: >"$VM_FAIL_FILE"
declare -A VM_BARRIER_COUNT=()

# Under TCG a process costs the guest tens of milliseconds of its vCPU
# (exec, the dynamic loader, page faults): most of what a test's own
# commands cost, and taken from the driver a one-vCPU guest is waiting on.
# So the helpers' loops start none: sleep is a read that times out on a
# FIFO nobody writes (this function replaces the program in every script
# that sources this file), and the clock is bash's EPOCHSECONDS.
if [ -z "${VM_SLEEP_FD:-}" ] && mkfifo "/tmp/.vm-sleep.$$" 2>/dev/null; then
	exec {VM_SLEEP_FD}<>"/tmp/.vm-sleep.$$"
	rm -f "/tmp/.vm-sleep.$$"
fi
sleep() {
	local rc=0
	if [ -n "${VM_SLEEP_FD:-}" ] && [ $# = 1 ] &&
		[[ $1 =~ ^[0-9]*\.?[0-9]+$ ]]; then
		# (status over 128: timed out, as meant; set -e scripts
		# too must go on)
		read -rt "$1" -u "$VM_SLEEP_FD" _ || rc=$?
		[ "$rc" -gt 128 ] && return 0
	fi
	command sleep "$@"
}

# Seconds since boot, to line up with dmesg timestamps.
vm_uptime() {
	local up
	read -r up _ </proc/uptime
	echo "$up"
}

# log MSG...: a comment line with role and guest uptime.
log() {
	local up
	read -r up _ </proc/uptime
	echo "# [$ROLE $up] $*"
}

# Record a failure without printing a result line (used by the helpers).
vm_fail() {
	echo "$*" >>"$VM_FAIL_FILE"
}

# check DESC CMD [ARGS...]: run CMD (a program or a shell function), print
# `ok - DESC` or `not ok - DESC` (and `#   exit status N`), then CMD's
# stdout+stderr as `#   ` lines.
# A failure is recorded for finish; check itself always returns 0, so
# `set -e` scripts continue. CMD's exit status is left in CHECK_RC.
# CMD runs in a subshell: variables it sets are not seen afterwards, and
# `set -e` does not apply inside it, so a function's status is that of its
# last command (chain steps with && or return explicitly). Give
# long-running commands their own `timeout`.
check() {
	local desc=$1 out
	shift
	CHECK_RC=0
	out=$("$@" 2>&1) || CHECK_RC=$?
	if [ "$CHECK_RC" -eq 0 ]; then
		echo "ok - $desc"
	else
		echo "not ok - $desc"
		echo "#   exit status $CHECK_RC"
		vm_fail "$desc"
	fi
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/#   /'
	return 0
}

# check_fail DESC CMD...: like check, but CMD is expected to fail.
check_fail() {
	local desc=$1 out
	shift
	CHECK_RC=0
	out=$("$@" 2>&1) || CHECK_RC=$?
	if [ "$CHECK_RC" -ne 0 ]; then
		echo "ok - $desc"
	else
		echo "not ok - $desc"
		echo "#   succeeded, failure expected"
		vm_fail "$desc"
	fi
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/#   /'
	return 0
}

# skip DESC REASON: a check that cannot be made here (the kernel lacks what
# it needs): prints `ok - DESC # SKIP REASON`, counted as skipped, not as
# passed or failed.
skip() {
	echo "ok - $1 # SKIP ${2:?skip DESC REASON}"
}

# pings [--ns NS] [--need K] [--from ADDR] [--log FILE] N [PING-OPTION...]
#	DEST
# Sends N echo requests (ping -c N; one every 0.2 s and each reply
# awaited 5 s unless -i and -W say otherwise) and passes only when K of
# them (all N by default) were answered: iputils itself exits 0 on any
# one reply. --from counts only the replies from ADDR, duplicates
# included, each request once (a multicast ping, where the first reply
# may be our own; ping ends at its Nth first reply, so two more requests
# go, giving the peer's last reply two intervals, and the replies to the
# first N count); --need 0 makes traffic and asserts nothing;
# --log keeps ping's output. A deadline (the N intervals, the wait for
# the last reply and 5 s) bounds the whole; a failure prints what was
# sent, received and required, and ping's lines other than replies.
# Counts from ping's text: no process beyond ping itself (each costs a
# TCG guest tens of milliseconds).
pings() {
	local ns=() need='' from='' byfrom='' logf='' n a prev='' i=0.2 w=5
	local opts=() out sent=0 got=0 line re c
	local -A seen=()
	while :; do
		case $1 in
		--ns) ns=(ip netns exec "$2"); shift 2 ;;
		--need) need=$2; shift 2 ;;
		--from) from=${2:?pings --from ADDR}; byfrom=1; shift 2 ;;
		--log) logf=$2; shift 2 ;;
		*) break ;;
		esac
	done
	n=$1
	shift
	need=${need:-$n}
	for a in "$@"; do
		case $prev in
		-i) i=$a ;;
		-W) w=$a ;;
		esac
		prev=$a
	done
	[[ " $* " == *" -i "* ]] || opts+=(-i "$i")
	[[ " $* " == *" -W "* ]] || opts+=(-W "$w")
	# the deadline in whole seconds: N intervals (i in ms), the last
	# reply's wait and 5 s; SIGINT, so that ping still prints its counts
	a=${i#*.}000
	[[ $i == *.* ]] || a=000
	i=${i%%.*} w=${w%%.*}
	a=$((10#${i:-0} * 1000 + 10#${a:0:3}))
	c=$n
	[ -z "$byfrom" ] || c=$((n + 2))
	# (-k: a ping stuck in a send that SIGINT does not end)
	out=$(timeout -k 5 -s INT $(((c * a + 999) / 1000 + 10#${w:-0} + 5)) \
		"${ns[@]}" ping -n -c "$c" "${opts[@]}" "$@" 2>&1)
	[ -z "$logf" ] || printf '%s\n' "$out" >"$logf"
	re='([0-9]+) packets transmitted, ([0-9]+) received'
	[[ $out =~ $re ]] && sent=${BASH_REMATCH[1]} got=${BASH_REMATCH[2]}
	if [ -n "$byfrom" ]; then
		got=0
		re='icmp_seq=([0-9]+) '
		while IFS= read -r line; do
			[[ $line == *" bytes from $from"[:%\ ]* && $line =~ $re ]] ||
				continue
			[ "${BASH_REMATCH[1]}" -le "$n" ] || continue
			[ -z "${seen[${BASH_REMATCH[1]}]:-}" ] || continue
			seen[${BASH_REMATCH[1]}]=1
			got=$((got + 1))
		done <<<"$out"
	fi
	[ "$got" -ge "$need" ] && return 0
	echo "pings: $sent sent, $got received${from:+ from $from}, $need required: ping -c $c ${opts[*]} $*"
	# what went wrong: ping's other lines (errors, its summary)
	printf '%s\n' "$out" | grep -v ' bytes from .* time=' | tail -n 8
	return 1
}

# signal NAME: tell the other guests that this role reached NAME.
signal() {
	: >"$VM_FLAGS/$ROLE.$1"
}

# wait_for ROLE NAME [TIMEOUT]: wait until ROLE has signalled NAME (default
# 60 s, times VM_SLOW: a wait for the other guest never measures anything).
# On timeout, when run.sh has seen another guest die (abort flag) or when
# ROLE's script has ended without signalling NAME, prints `not ok`,
# records the failure and returns 1 (ending a `set -e` script, which then
# fails). batch.sh reads these three lines: a wait that failed because the
# peer had failed first is that failure, not one of its own.
wait_for() {
	local who=$1 name=$2 timeout=$((${3:-60} * ${VM_SLOW:-1})) end
	end=$((EPOCHSECONDS + timeout))
	while [ ! -e "$VM_FLAGS/$who.$name" ]; do
		if [ -e "$VM_ABORT" ]; then
			echo "not ok - wait for $who.$name (aborted: $(cat "$VM_ABORT"))"
			vm_fail "wait_for $who.$name aborted"
			return 1
		fi
		if [ -e "$VM_FLAGS/$who.exited" ] && [ ! -e "$VM_FLAGS/$who.$name" ]; then
			echo "not ok - wait for $who.$name ($who's script ended without it)"
			vm_fail "wait_for $who.$name: $who ended"
			return 1
		fi
		if [ "$EPOCHSECONDS" -ge "$end" ]; then
			echo "not ok - wait for $who.$name (timeout ${timeout}s)"
			vm_fail "wait_for $who.$name timeout"
			return 1
		fi
		sleep 0.2
	done
	return 0
}

# barrier NAME [TIMEOUT]: every role signals and waits for all roles. The
# same NAME may be used again (each use is numbered), as long as every role
# passes the same barriers in the same order.
barrier() {
	local name=$1 timeout=${2:-60} n r
	n=$((${VM_BARRIER_COUNT[$name]:-0} + 1))
	VM_BARRIER_COUNT[$name]=$n
	signal "barrier.$name.$n"
	for r in $ROLES; do
		wait_for "$r" "barrier.$name.$n" "$timeout" || return 1
	done
	return 0
}

# peer_ip ROLE: eth0 IPv4 address of ROLE (10.10.0.<1+index in ROLES>).
peer_ip() {
	local i=1 r
	for r in $ROLES; do
		if [ "$r" = "$1" ]; then
			echo "10.10.0.$i"
			return 0
		fi
		i=$((i + 1))
	done
	echo "peer_ip: unknown role $1" >&2
	return 1
}

# my_ip: this guest's eth0 IPv4 address.
my_ip() {
	peer_ip "$ROLE"
}

# rxe_wait_active [DEV] [TIMEOUT]: wait until `rdma link` shows DEV/1 ACTIVE.
rxe_wait_active() {
	local dev=${1:-rxe0} timeout=${2:-30} end
	end=$((EPOCHSECONDS + timeout))
	until rdma link show "$dev/1" 2>/dev/null | grep -q 'state ACTIVE'; do
		if [ "$EPOCHSECONDS" -ge "$end" ]; then
			rdma link show
			return 1
		fi
		sleep 0.2
	done
	rdma link show "$dev/1"
}

vm_rxe_add() {
	modprobe rdma_rxe &&
		modprobe ib_uverbs &&
		rdma link add rxe0 type rxe netdev eth0 &&
		rxe_wait_active rxe0 30
}

# rxe_up: load soft-RoCE, create rxe0 on eth0 (plus ib_uverbs for the
# ibv_* tools) and wait for it to be ACTIVE. Prints ok / not ok; returns 1
# on failure.
rxe_up() {
	check "rxe0 on eth0 is ACTIVE" vm_rxe_add
	return "$CHECK_RC"
}

# vm_kmemleak: on a kernel with kmemleak, scan for leaks and print them;
# fails if there is any. Objects younger than 5 s are never reported, so it
# waits that long after the test's last step, and scans twice to settle
# pointers that were in flight during the first scan.
vm_kmemleak() {
	local f=/sys/kernel/debug/kmemleak report
	sleep 6
	echo scan >"$f" && echo scan >"$f" || return 1
	report=$(cat "$f") || return 1
	[ -z "$report" ] && return 0
	echo "$report"
	return 1
}

# finish: end the script; exit status 0 iff no check failed. On a kernel
# with kmemleak it first checks that the test leaked nothing.
finish() {
	local n
	if [ -e /sys/kernel/debug/kmemleak ]; then
		check "kmemleak: no unreferenced object" vm_kmemleak
	fi
	n=$(wc -l <"$VM_FAIL_FILE")
	if [ "$n" -eq 0 ]; then
		log "$ROLE: all checks passed"
		exit 0
	fi
	log "$ROLE: $n failure(s):"
	sed 's/^/#   /' "$VM_FAIL_FILE"
	exit 1
}
