#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest program of a shared boot (tools/vm/batch.sh): runs several VM
# selftests one after the other in the same guests, each as if it had the
# guests to itself. BATCH_TESTS lists "PATH:SECONDS" items (the test script
# and its time limit); for each, every guest:
#   - waits until all guests are ready for it,
#   - runs it with SHARED=/shared/t/NAME (its own barriers and files) in a
#     cgroup of its own, killed with everything it started (daemons too)
#     if it overruns,
#   - leaves NAME/ROLE.out, .rc, .dmesg (the kernel log of that test only)
#     and .time there for batch.sh, and marks where the test begins and
#     ends in the kernel log (so on the console: "batch-guest: NAME
#     begins", "... ends"), so that batch.sh can tell what the console
#     shows during a test, e.g. a warning that stopped the guest, from
#     what it shows outside every test (the boot's own),
#   - puts the guest back as guest-init.sh left it: no leftover process,
#     network namespace, interface, tc qdisc, sysctl change, MAC or MTU of
#     eth0, ib_ipoib or soft-RoCE device; eth1 (run.sh --nics 2) down.
#     A test that leaves something that cannot be undone fails.
# A kernel problem still stops the guest at once (panic_on_warn): the
# tests after it then have no result, which batch.sh reports.
set -u
: "${ROLE:?}" "${ROLES:?}" "${BATCH_TESTS:?}"

cg=/sys/fs/cgroup
slow=${VM_SLOW:-1}
export VM_ABORT=/shared/flags/ABORT

uptime_s() {
	local up
	read -r up _ </proc/uptime
	echo "$up"
}

# sync_all NAME: every guest reached NAME (or one died: give up).
sync_all() {
	local r end=$((EPOCHSECONDS + 120 * slow))

	: >"/shared/flags/$ROLE.$1"
	for r in $ROLES; do
		while [ ! -e "/shared/flags/$r.$1" ]; do
			[ -e "$VM_ABORT" ] && return 1
			[ "$EPOCHSECONDS" -ge $end ] && return 1
			sleep 0.1
		done
	done
}

# kmsg TEXT: "batch-guest: TEXT" in the kernel log, at info level (not a
# warning: tests count those)
kmsg() {
	echo "<6>batch-guest: $*" >/dev/kmsg
}

# The state a test may change and must not pass on (see reset), as
# "name = value" lines; read from /proc/sys by one grep, not sysctl -a,
# which reads every sysctl there is (a quarter of the time on the host)
net_sysctls() {
	(cd /proc/sys && grep -r '' net/ipv4/ip_forward* net/core \
		net/ipv4/conf/{all,default,eth0,eth1,lo} \
		net/ipv6/conf/{all,default,eth0,eth1,lo} 2>/dev/null) |
		awk '{ n = $0; sub(/:.*/, "", n); gsub("/", ".", n)
			v = $0; sub(/^[^:]*:/, "", v); print n " = " v }' |
		grep -Ev 'stable_secret|\.(mc_forwarding|forwarding_nowrite) '
}

mountpoint -q $cg || mount -t cgroup2 cgroup2 $cg ||
	{ echo "batch: cannot mount cgroup2"; exit 1; }
net_sysctls >/run/batch.sysctl
mac=$(cat /sys/class/net/eth0/address)

# kill_test: end every process of the test's cgroup.
kill_test() {
	local i

	[ -d $cg/test ] || return 0
	echo 1 >$cg/test/cgroup.kill
	# shellcheck disable=SC2034 # i only counts the tries
	for i in $(seq 100); do
		[ -z "$(cat $cg/test/cgroup.procs)" ] && break
		sleep 0.1
	done
	rmdir $cg/test
}

# reset: back to the guest as guest-init.sh left it. Prints what it had
# to undo; fails if something could not be.
reset() {
	local dev now changed bad=0

	kill_test || { echo "processes of the test survive"; bad=1; }
	for dev in $(ip -all netns list 2>/dev/null | awk '{ print $1 }'); do
		echo "deleting network namespace $dev"
		ip netns delete "$dev"
	done
	if grep -q '^ib_ipoib ' /proc/modules &&
		! timeout 60 modprobe -r ib_ipoib; then
		echo "ib_ipoib does not unload"
		bad=1
	fi
	# tools/softib's HCA (opensm, the test's, is gone with its cgroup)
	for dev in softib_member softib_cma; do
		if grep -q "^$dev " /proc/modules && ! timeout 30 rmmod $dev; then
			echo "$dev does not unload"
			bad=1
		fi
	done
	if grep -q '^softib ' /proc/modules && ! timeout 60 rmmod softib; then
		echo "softib does not unload"
		bad=1
	fi
	for dev in $(rdma link show 2>/dev/null | awk '$1 == "link" { sub("/.*", "", $2); print $2 }' | sort -u); do
		timeout 30 rdma link delete "$dev" || { echo "rdma link delete $dev"; bad=1; }
	done
	for dev in rdma_rxe ib_umad sch_netem; do
		grep -q "^$dev " /proc/modules && modprobe -r "$dev"
	done
	tc qdisc del dev eth0 root 2>/dev/null
	# shellcheck disable=SC2045 # interface names: no odd characters
	for dev in $(ls /sys/class/net); do
		case $dev in lo | eth0 | eth1) ;;
		*) echo "deleting interface $dev"; ip link delete "$dev" ;;
		esac
	done
	if [ "$(cat /sys/class/net/eth0/address)" != "$mac" ]; then
		echo "eth0's MAC back to $mac"
		ip link set eth0 down && ip link set eth0 address "$mac"
	fi
	ip link set eth0 mtu 1500 up
	# run.sh --nics 2: eth1 as it booted, down
	[ ! -e /sys/class/net/eth1 ] || ip link set eth1 down mtu 1500
	now=$(net_sysctls)
	changed=$(grep -vxFf /run/batch.sysctl <<<"$now" | sed 's/ = .*//')
	if [ -n "$changed" ]; then
		echo "restoring $(echo "$changed" | wc -l) sysctl(s)"
		# shellcheck disable=SC2001 # a suffix on every line
		sed 's/$/ = /' <<<"$changed" >/run/batch.changed
		grep -F -f /run/batch.changed /run/batch.sysctl |
			sed 's/ = /=/' | xargs -r -d '\n' sysctl -qw
	fi
	return $bad
}

# make coverage: the module's counters so far (the kernel keeps them over
# unloads: gcov_persist), under their build paths, where the host pairs
# them with the .gcno files; after every test, so a guest that stops
# later still leaves what ran before
save_gcov() {
	[ -n "${IPOIB_GCOV:-}" ] && [ -d /sys/kernel/debug/gcov ] || return 0
	(cd /sys/kernel/debug/gcov && find . -path '*-gcov/*.gcda') |
		while read -r f; do
			mkdir -p "/shared/gcov/$ROLE/${f%/*}"
			cat "/sys/kernel/debug/gcov/$f" >"/shared/gcov/$ROLE/$f"
		done
}

status=0
for item in $BATCH_TESTS; do
	script=${item%:*}
	limit=$((${item##*:} * slow))
	name=$(basename "$script" .sh)
	dir=/shared/t/$name
	mkdir -p "$dir/flags"
	if ! sync_all "start.$name"; then
		echo "batch: guests not ready for $name; stopping"
		status=1
		break
	fi
	echo "batch: $name as $ROLE at $(uptime_s) s"
	t0=$(uptime_s)
	dmesg -c >/dev/null
	kmsg "$name begins"
	mkdir $cg/test
	(
		echo "$BASHPID" >$cg/test/cgroup.procs
		export SHARED=$dir
		exec timeout -k 10 "$limit" bash "$script" </dev/null
	) 2>&1 | tee "$dir/$ROLE.out"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 124 ] && echo "not ok - $name: no result after ${limit}s, killed" |
		tee -a "$dir/$ROLE.out"
	: >"$dir/flags/$ROLE.exited"
	out=$(reset 2>&1) || {
		echo "not ok - $name: the guest could not be put back after it"
		rc=1
	} >>"$dir/$ROLE.out"
	[ -z "$out" ] || printf '%s\n' "$out" | sed "s/^/# clean-up after $name: /" |
		tee -a "$dir/$ROLE.out"
	save_gcov
	dmesg -c >"$dir/$ROLE.dmesg"
	echo "$(uptime_s) $t0" | awk '{ printf "%.0f\n", $1 - $2 }' >"$dir/$ROLE.time"
	echo "$rc" >"$dir/$ROLE.rc"
	kmsg "$name ends"
done
# Exit 0 once every test ran: batch.sh judges each by its files.
exit $status
