#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: build (W=1), lint, userspace unit tests, fuzzing and the VM
# selftests on every supported kernel. Prints KTAP (tools/check-lib.sh)
# and ends with "N passed, N failed"; a skipped test (a prerequisite
# missing) is reported beside it, and counted as failed with
# CHECK_SKIP_FAILS=1 (.ci/run).
#   KVERS="..."  kernels to test (default: both Debian kernels)
#   TESTS="..."  VM selftests to run on every kernel (default: TEST_PROGS
#                of selftests/ on 6.12, the 6.1 subset below on 6.1)
#   FULL=1       every VM selftest on every kernel
#   SKIP_HARNESS_SELFTEST=1  skip the test bed's own failure-detection test
# The whole script is read before it runs: editing it meanwhile is safe.
{
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
KVERS=${KVERS:-"6.12.117+deb12-amd64 6.1.0-56-amd64"}
ALL_TESTS=$(sed -n 's/^TEST_PROGS *:= *//p' selftests/Makefile)
# On 6.1, the tests that reach what differs between the kernels (module
# load and device registration, the underlay's IPv6 group joins, rtnl and
# namespaces, connected mode's CM and SRQ): the rest exercises the
# driver's own logic, the same on both (Documentation/testing.rst).
SUBSET_6_1="first_light.sh ib_fabric.sh ib_partitions.sh ib_sm_events.sh ib_multicast.sh ib_bond.sh datagram.sh multicast.sh connected.sh trace.sh children.sh nm.sh networkd.sh ifupdown.sh dkms.sh"
tests_for() {	# tests_for KVER
	if [ -n "${TESTS:-}" ]; then
		echo "$TESTS"
	elif [ -z "${FULL:-}" ] && [ "$1" = 6.1.0-56-amd64 ]; then
		echo "$SUBSET_6_1"
	else
		echo "$ALL_TESTS"
	fi
}
CHECK_LOGS=$top/build/check
rm -rf "$CHECK_LOGS"
mkdir -p "$CHECK_LOGS"
# shellcheck source=tools/check-lib.sh
. "$top/tools/check-lib.sh"

# shellcheck disable=SC2317 # run through step
build_clean() {	# build_clean KVER [TEST_HOOKS=1]: W=1, no warning at all
	local out
	out=$(make -s -j"$(nproc)" -C "$top" modules KVER="$1" ${2:+"$2"} 2>&1 |
		grep -v 'Skipping BTF generation')
	[ -n "$out" ] && { echo "$out"; return 1; }
	test -f "build/$1${2:+-hooks}/ib_ipoib.ko"
}

# vm_tests KVER: its VM selftests, the one-guest ones first (see below)
vm_tests() {
	local t
	for t in $(tests_for "$1"); do
		grep -qx 'GUESTS=1' "selftests/$t" && echo "selftests/$t"
	done
	# the first of the two-guest boot: soft-RoCE UD between the guests
	# without our module loaded
	echo tools/vm/smoke.sh
	for t in $(tests_for "$1"); do
		grep -qx 'GUESTS=1' "selftests/$t" || echo "selftests/$t"
	done
}

# The VM selftests share guest boots (tools/vm/batch.sh), and both
# kernels' runs go side by side: run.sh gives each vCPU a core, so the
# one-guest boots of the two kernels (the InfiniBand fabric, the
# distribution's tools), which come first in each run, meet and share the
# machine, and the two-guest boots take turns. Their results follow in
# kernel order.
declare -A pid=()
# shellcheck disable=SC2317 # run through all_steps
vm_all() {
	local k log
	t0=$(date +%s)
	if [ -z "$counting" ]; then
		# the guests' tools, once, before the runs that share them
		make -s -C tools/cm_inject >/dev/null 2>&1
		make -s -C tools/inject >/dev/null 2>&1
		for k in $KVERS; do
			log=$(check_log_name "vm $k")
			# a process group of its own, which stop_vms ends
			# shellcheck disable=SC2046 # test names are words
			IPOIB_KVER=$k setsid tools/vm/batch.sh $(vm_tests "$k") \
				>"$log" 2>&1 &
			pid[$k]=$!
		done
		trap stop_vms INT TERM
	fi
	for k in $KVERS; do
		log=$(check_log_name "vm $k")
		if [ -n "$counting" ]; then
			tap_report "vm $k" /dev/null 0 "$t0"
		else
			wait "${pid[$k]}"
			tap_report "vm $k" "$log" $? "$t0"
		fi
	done
}

# stop_vms: on Ctrl-C or SIGTERM, end the VM runs (background jobs do not
# see Ctrl-C) and everything they started; run.sh cleans up on SIGTERM
# shellcheck disable=SC2317 # run from the trap
stop_vms() {
	local p
	for p in "${pid[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null
	done
	wait
	echo "# make check: interrupted"
	exit 130
}

all_steps() {
	for k in $KVERS; do
		step "build W=1 $k" build_clean "$k"
		step "build W=1 $k, test build (TEST_HOOKS=1)" build_clean "$k" TEST_HOOKS=1
	done
	step "lint: checkpatch --strict" tools/lint.sh checkpatch
	step "lint: shellcheck" tools/lint.sh shellcheck
	for k in $KVERS; do
		step "lint: sparse $k" tools/lint.sh sparse "$k"
	done
	tap "unit" make -s -C selftests/unit run
	step "fuzz: wire parsers" make -s -C selftests/unit fuzz-run

	# The test bed itself: run.sh catching failed checks, kernel
	# warnings, panics, hangs and SIGTERM.
	[ -n "${SKIP_HARNESS_SELFTEST:-}" ] ||
		step "testbed: failures are detected" tools/vm/selftest.sh
	vm_all
}

# KTAP's plan comes first: count the top-level tests, then run them
check_begin "$(check_count all_steps)"
all_steps

check_summary "make check"
exit
}
