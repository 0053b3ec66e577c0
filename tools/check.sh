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
#   BALANCE="..."  one-guest tests of the first kernel run on the second
#                line (see plan_stages; default: nm.sh networkd.sh)
#   SKIP_HARNESS_SELFTEST=1  skip the test bed's own test (tools/vm/selftest.sh)
# The whole script is read before it runs: editing it meanwhile is safe.
{
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
exec 3>&1	# the KTAP output, for what a step's redirection must not take
KVERS=${KVERS:-"6.12.117+deb12-amd64 6.1.0-56-amd64"}
# (the VM stages run on two lines, one kernel each: see plan_stages)
read -r k1 k2 k3 <<<"$KVERS"
if [ -n "${k3:-}" ] || [ "$k1" = "${k2:-}" ]; then
	echo "make check: one or two different kernels (KVERS=$KVERS)" >&2
	exit 2
fi
ALL_TESTS=$(sed -n 's/^TEST_PROGS *:= *//p' selftests/Makefile)
# On 6.1, the tests that reach the parts of the kernel that differ
# between the two (module load and device registration on soft-RoCE,
# ib_core's MAD, SA and CM and bonding on InfiniBand, rtnl links and
# namespaces, the underlay's IPv6 group joins, connected mode's CM and
# SRQ, DKMS): the rest exercises the driver's own logic, the same on
# both, or what these reach already (Documentation/testing.rst).
SUBSET_6_1="first_light.sh ib_fabric.sh ib_partitions.sh ib_sm_events.sh ib_bond.sh multicast.sh connected.sh dkms.sh"
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

# one_guest KVER / two_guest KVER: its VM selftests of one guest, and the
# rest (the first of its two-guest boot: soft-RoCE UD between the guests
# without our module loaded)
one_guest() {
	local t
	for t in $(tests_for "$1"); do
		grep -qx 'GUESTS=1' "selftests/$t" && echo "selftests/$t"
	done
}
two_guest() {
	local t
	echo tools/vm/smoke.sh
	for t in $(tests_for "$1"); do
		grep -qx 'GUESTS=1' "selftests/$t" || echo "selftests/$t"
	done
}

# The VM selftests share guest boots (tools/vm/batch.sh), run as stages
# on two lines that go side by side: run.sh gives each vCPU a core (the
# slots), so the one-guest boots that open both lines share the machine,
# a core each, and the two-guest boots then take turns. The second line
# also runs, after its own one-guest boot, the one-guest tests of the
# first kernel named in BALANCE (the distribution's daemons, by default),
# which evens out the two lines' one-guest boots. Each stage reports as a
# test of its own, in this order.
BALANCE=${BALANCE-"nm.sh networkd.sh"}
stages=()
# shellcheck disable=SC2317 # run through all_steps
plan_stages() {	# the stages: "LINE|KVER|NAME|TAG|TEST..." (TAG: batch.sh's
		# IPOIB_VM_TAG, for a stage that may run beside another of
		# its kernel)
	local first second t one moved=
	read -r first second <<<"$KVERS"
	one=$(one_guest "$first")
	if [ -n "$second" ]; then
		for t in $BALANCE; do
			grep -qx "selftests/$t" <<<"$one" || continue
			one=$(grep -vx "selftests/$t" <<<"$one")
			moved="$moved selftests/$t"
		done
	fi
	stages=("1|$first|one guest||$(words "$one")"
		"1|$first|two guests||$(words "$(two_guest "$first")")")
	[ -n "$second" ] || return 0
	stages+=("2|$second|one guest||$(words "$(one_guest "$second")")")
	[ -z "$moved" ] ||
		stages+=("2|$first|one guest, balanced|balanced|${moved# }")
	stages+=("2|$second|two guests||$(words "$(two_guest "$second")")")
}
words() {	# words LINES: on one line
	echo "${1//$'\n'/ }"
}

# run_line N: its stages in turn, each batch.sh's output to its log, its
# exit status to LOG.rc and its seconds to LOG.secs
# shellcheck disable=SC2317 # run in the background by vm_all
run_line() {
	local st line k name tag tests log s0
	for st in "${stages[@]}"; do
		IFS='|' read -r line k name tag tests <<<"$st"
		if [ "$line" != "$1" ] || [ -z "$tests" ]; then
			continue
		fi
		log=$(check_log_name "vm $k, $name")
		s0=$(date +%s)
		# shellcheck disable=SC2086 # test names are words
		IPOIB_KVER=$k IPOIB_VM_TAG=$tag tools/vm/batch.sh $tests \
			>"$log" 2>&1
		echo $? >"$log.rc"
		echo $(($(date +%s) - s0)) >"$log.secs"
	done
}

declare -A pid=()
# shellcheck disable=SC2317 # run through all_steps
vm_all() {
	local st line k name tag tests log
	t0=$(date +%s)
	plan_stages
	if [ -z "$counting" ]; then
		# the guests' tools, once, before the runs that share them
		make -s -C tools/cm_inject >/dev/null 2>&1
		make -s -C tools/inject >/dev/null 2>&1
		# the modules, once, before the lines that share them (a
		# failed build fails the stages, which build again)
		for k in $KVERS; do
			make -s modules KVER="$k" >/dev/null 2>&1
			make -s modules KVER="$k" TEST_HOOKS=1 >/dev/null 2>&1
			make -s -C tools/softib KVER="$k" >/dev/null 2>&1
		done
		for line in 1 2; do
			# a process group of its own, which stop_vms ends
			setsid bash -c "$(declare -f run_line check_log_name);
				$(declare -p stages CHECK_LOGS); run_line $line" &
			pid[$line]=$!
		done
		trap stop_vms INT TERM
		wait "${pid[@]}"
	fi
	for st in "${stages[@]}"; do
		IFS='|' read -r line k name tag tests <<<"$st"
		[ -n "$tests" ] || continue
		log=$(check_log_name "vm $k, $name")
		if [ -n "$counting" ]; then
			tap_report "vm $k, $name" /dev/null 0 "$t0"
		else
			# took: the stage's own seconds
			tap_report "vm $k, $name" "$log" \
				"$(cat "$log.rc" 2>/dev/null || echo 2)" \
				$(($(date +%s) - $(cat "$log.secs" 2>/dev/null || echo 0)))
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
	echo "# make check: interrupted" >&3
	exit 130
}

# The test bed's own test runs in the background beside the steps that
# build nothing and take one core (shellcheck, the unit tests and
# fuzzing; its guests wait on timeouts much of the time): after the
# builds it boots and checkpatch (all cores), before sparse, which
# builds in their directories again.
testbed_start() {
	[ -z "$counting" ] && [ -z "${SKIP_HARNESS_SELFTEST:-}" ] || return 0
	tb_t0=$(date +%s)
	setsid tools/vm/selftest.sh >"$CHECK_LOGS/testbed.out" 2>&1 &
	pid[testbed]=$!
	trap stop_vms INT TERM
}
# shellcheck disable=SC2317 # run through step
testbed_wait() {
	local rc
	wait "${pid[testbed]}"
	rc=$?
	unset 'pid[testbed]'
	cat "$CHECK_LOGS/testbed.out"
	# (step times only the wait: the whole run, on make check's output)
	echo "# testbed: ran $(($(date +%s) - tb_t0)) s, beside the lint" >&3
	return "$rc"
}

all_steps() {
	for k in $KVERS; do
		step "build W=1 $k" build_clean "$k"
		step "build W=1 $k, test build (TEST_HOOKS=1)" build_clean "$k" TEST_HOOKS=1
	done
	step "lint: checkpatch --strict" tools/lint.sh checkpatch
	testbed_start
	step "lint: shellcheck" tools/lint.sh shellcheck
	tap "unit" make -s -C selftests/unit run
	step "fuzz: wire parsers" make -s -C selftests/unit fuzz-run

	# The test bed itself: run.sh catching failed checks, kernel
	# warnings, panics, hangs and SIGTERM; batch.sh and this counting
	# taking each planted failure once, skips and merged leaves as
	# planted (Documentation/testing.rst)
	[ -n "${SKIP_HARNESS_SELFTEST:-}" ] ||
		step "testbed: failures are detected and counted once" testbed_wait
	for k in $KVERS; do
		step "lint: sparse $k" tools/lint.sh sparse "$k"
	done
	vm_all
}

# KTAP's plan comes first: count the top-level tests, then run them
check_begin "$(check_count all_steps)"
all_steps

check_summary "make check"
exit
}
