#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh [--kver KVER] [CASE...]
#
# Check that the test bed notices failures and counts them right. Cases
# (default: all):
#   check panic hang term  run.sh alone, on smoke.sh with SMOKE_FAIL
#          (guests misbehave as soon as they are up): run.sh must fail for
#          the right reason. "term" sends SIGTERM to run.sh mid-run and
#          checks that no QEMU or vde_switch of that run survives.
#   batch  the path make check takes: batch.sh on the planted tests of
#          tools/vm/planted/ (one boot of two guests for seven of them,
#          one of one guest), whose KTAP must have each planted failure
#          once, in its test, the merged, extra and skipped leaves as
#          planted, the tests after a stopped guest as not run, and
#          whose counting by tools/check-lib.sh (make check's) must give
#          exactly the planted totals.
# Exits 0 iff every case behaved as expected. One VM run per case, but
# two for batch (about 65 s of them); about 135 s in all when no other
# run holds the machine's slots.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
kver=6.12.117+deb12-amd64
if [ "${1:-}" = --kver ]; then
	kver=${2:?}
	shift 2
fi
cases=${*:-check panic hang term batch}
base=$repo/build/vm/selftest
rm -rf "$base"
mkdir -p "$base"

bad=0
pass() { echo "selftest: ok - $*"; }
fail() {
	echo "selftest: not ok - $*"
	bad=$((bad + 1))
}

# run CASE FAILS [run.sh args...]: run smoke.sh with SMOKE_FAIL=FAILS; sets
# $log, $rc.
run() {
	local c=$1 f=$2
	shift 2
	log=$base/$c.log
	rc=0
	"$here/run.sh" --kver "$kver" --guests 2 --script "$here/smoke.sh" \
		--out "$base/$c" --env "SMOKE_FAIL=$f" "$@" >"$log" 2>&1 || rc=$?
	sed 's/^/    /' "$log"
}

# started DIR N: N guests of the run in DIR are running their script.
started() {
	[ "$(grep -l 'guest-init: running' "$1"/console-*.log 2>/dev/null |
		wc -l)" -ge "$2" ]
}

# expect CASE DESC REGEX [FILE]: FILE (default: the summary in $log)
# matches REGEX.
expect() {
	if grep -qE -- "$3" "${4:-$log}"; then
		pass "$1: $2"
	else
		fail "$1: $2 (no match for /$3/ in ${4:-$log})"
	fi
}

expect_rc1() {
	if [ "$rc" -eq 1 ]; then
		pass "$1: run.sh exits 1"
	else
		fail "$1: run.sh exits $rc, expected 1"
	fi
}

# the planted tests, in the order of the batch
planted="leaves failing exit_status own_wait kmsg_problem hang warn_stop after_a after_b one_guest"

# results REGEX [FILE]: how many KTAP results of FILE (default $log)
# match ^ *(not )?ok N REGEX$ (an extended regexp)
results() {
	grep -cE -- "^ *(not )?ok [0-9]+ $1\$" "${2:-$log}" || true
}

# expect_n CASE DESC N REGEX [FILE]: exactly N results match REGEX
expect_n() {
	local n
	n=$(results "$4" "${5:-$log}")
	if [ "$n" = "$3" ]; then
		pass "$1: $2"
	else
		fail "$1: $2 ($n results match /$4/ in ${5:-$log}, expected $3)"
	fi
}

# subtest NAME: batch.sh's subtest of test NAME in $log, its result lines
subtest() {
	awk -v n="  # Subtest: $1" '$0 == n { p = 1; next }
		p && /^(not )?ok / { exit }
		p && /^ +(not )?ok / { print }' "$log"
}

# expect_fail_once TEST REGEX: TEST's result is "not ok", and its only
# failed leaf matches REGEX
expect_fail_once() {
	local failed
	failed=$(subtest "$1" | grep -E '^ *not ok ' || true)
	if [ "$(printf '%s' "$failed" | grep -c '^')" = 1 ] &&
		grep -qE -- "^ *not ok [0-9]+ $2\$" <<<"$failed"; then
		pass "batch: $1 fails once: ${failed#*not ok }"
	else
		fail "batch: $1: failed leaves '${failed//$'\n'/ | }', expected one matching /$2/"
	fi
	if [ "$(grep -cE "^not ok [0-9]+ $1\$" "$log")" = 1 ]; then
		pass "batch: $1's result is not ok"
	else
		fail "batch: $1's result is not 'not ok'"
	fi
}

# count LOG RC [NAME=VALUE...]: tools/check-lib.sh's counting of LOG (a
# batch.sh's output that exited RC) as make check does it, into $count
count() {
	local l=$1 r=$2
	shift 2
	count=$base/count$#.log
	# shellcheck disable=SC2016 # expanded by that bash
	# (not the caller's CHECK_SKIP_FAILS: .ci/run exports it)
	env -u CHECK_SKIP_FAILS "$@" CHECK_LOGS="$base" bash -c '. "$1/tools/check-lib.sh"
		check_begin 1
		tap_report "vm planted" "$2" "$3" "$(date +%s)"
		check_summary "planted"' _ "$repo" "$l" "$r" >"$count" 2>&1 || true
}

for c in $cases; do
	echo "selftest: case $c ($kver)"
	case $c in
	check)
		run check "A:check B:warn"
		expect_rc1 check
		expect check "A fails on its exit status" '^== A: FAIL'
		expect check "reason is the exit status" 'reason: script exit status 1$'
		expect check "the failed check is listed" 'not ok - deliberate failure'
		expect check "B fails" '^== B: FAIL'
		expect check "dmesg WARNING: is found" "dmesg matches 'WARNING:'.*WARNING: test"
		expect check "console WARNING: is found" "console matches 'WARNING:'.*WARNING: test"
		;;
	panic)
		t0=$(date +%s)
		run panic A:panic
		expect_rc1 panic
		expect panic "A reported as stopped" 'reason: stopped without a result'
		expect panic "A's panic is matched" "console matches 'Kernel panic'"
		expect panic "B stops waiting (abort)" 'aborted: guest A stopped'
		if [ $(($(date +%s) - t0)) -lt 100 ]; then
			pass "panic: run ends early ($(($(date +%s) - t0)) s)"
		else
			fail "panic: run took $(($(date +%s) - t0)) s"
		fi
		;;
	hang)
		run hang A:hang --timeout 25
		expect_rc1 hang
		expect hang "A reported hung" 'reason: hung: no result after 25s'
		expect hang "A's console tail shown" 'last 40 lines of .*console-A.log'
		;;
	term)
		rc=0
		log=$base/term.log
		"$here/run.sh" --kver "$kver" --guests 3 --script "$here/smoke.sh" \
			--out "$base/term" --env "SMOKE_FAIL=A:hang" >"$log" 2>&1 &
		pid=$!
		for _ in $(seq 600); do
			started "$base/term" 3 && break
			sleep 0.1
		done
		kill -TERM "$pid"
		wait "$pid" || rc=$?
		sed 's/^/    /' "$log"
		if [ "$rc" -ne 0 ]; then
			pass "term: run.sh exits $rc"
		else
			fail "term: run.sh exits 0"
		fi
		# Processes of that run are recognisable by its output directory;
		# run.sh has waited for its QEMUs: give stragglers 5 s to go.
		for _ in $(seq 50); do
			pgrep -f -- "$base/term/" >/dev/null || break
			sleep 0.1	# the poll
		done
		left=$(pgrep -af -- "$base/term/" || true)
		vde=$(sed -n 's/^run.sh: .*vde_switch \(.*\)$/\1/p' "$log")
		if [ -n "$vde" ]; then
			left="$left$(pgrep -af -- "$vde" || true)"
		fi
		if [ -z "$left" ]; then
			pass "term: no QEMU or vde_switch left"
		else
			fail "term: left running: $left"
		fi
		;;
	batch)
		t0=$(date +%s)
		log=$base/batch.log
		rc=0
		files=()
		for t in $planted; do
			files+=("$here/planted/$t.sh")
		done
		IPOIB_KVER=$kver IPOIB_VM_TAG=selftest "$here/batch.sh" "${files[@]}" \
			>"$log" 2>&1 || rc=$?
		sed 's/^/    /' "$log"
		expect_rc1 batch
		# one boot of two guests: the same check of both, one leaf
		expect_n batch "a check both guests make: one leaf" 1 \
			'every guest: a check both make'
		expect_n batch "a check made twice: two leaves" 2 \
			'every guest: made twice'
		expect_n batch "a check of A alone: one leaf, A's" 1 \
			'(.*: )?A alone: a check of its own'
		expect_n batch "... named after A" 1 \
			'A: A alone: a check of its own'
		expect_n batch "a skip both guests make: one skipped leaf" 1 \
			'(.*: )?every guest: a skip both make( # SKIP.*)?'
		expect_n batch "... skipped, with its reason" 1 \
			'every guest: a skip both make # SKIP planted'
		expect_n batch "a skip of B alone: one skipped leaf, B's" 1 \
			'B: B alone: a skip of its own # SKIP planted'
		if subtest leaves | grep -q 'not ok'; then
			fail "batch: leaves has a failed leaf"
		fi
		expect_fail_once failing 'B: every guest: B fails it'
		expect_fail_once exit_status \
			'guests failed or kernel logs not clean: B: exit status 3'
		expect_n batch "own_wait: A's wait that timed out counts" 1 \
			'A: wait for B\.never \(timeout 3s\)'
		expect_n batch "own_wait: ... and so does B's failed check" 1 \
			'B: B alone: fails, and goes on'
		expect_fail_once kmsg_problem \
			"guests failed or kernel logs not clean: B: kernel log matches 'unregister_netdevice: waiting': .*planted0.*"
		expect batch "the boot goes on after kmsg_problem" '^  # Subtest: hang$'
		expect_fail_once hang 'A: hang: no result after 5s, killed'
		expect batch "the boot goes on after the hang" '^  # Subtest: warn_stop$'
		expect_fail_once warn_stop \
			"guests failed or kernel logs not clean: B: stopped during the test \\(panic or crash\\), its console shows 'WARNING:': .*planted_warn.*"
		expect batch "warn_stop: A's wait for B is not a failure of its own" \
			"^#   A: 'wait for B\\..*' not counted: B failed first"
		for t in after_a after_b; do
			expect_n batch "$t: one leaf, not run" 1 \
				"$t # SKIP not run: warn_stop stopped the guests"
			if grep -q "# Subtest: $t\$" "$log"; then
				fail "batch: $t has results of its own"
			fi
		done
		expect_n batch "the boot of two guests passes" 1 \
			'batch2: guests booted once for 9 test\(s\), clean outside the tests'
		# one boot of one guest: its leaves are A's
		expect_n batch "one guest: a pass" 1 'A: one guest: passes'
		expect_n batch "one guest: a skip" 1 'A: one guest: skipped # SKIP planted'
		expect_fail_once one_guest 'A: one guest: fails'
		expect_n batch "the boot of one guest passes" 1 \
			'one_guest: guests booted once for 1 test\(s\), clean outside the tests'
		# (its own count: the tests and boots)
		expect batch "batch.sh's totals" \
			'^# Totals: pass:3 fail:7 xfail:0 xpass:0 skip:2 error:0$'
		# make check's counting of that output
		count "$log" "$rc"
		sed 's/^/    /' "$count"
		expect batch "make check: its totals" \
			'^# Totals: pass:16 fail:8 xfail:0 xpass:0 skip:5 error:0$' "$count"
		expect batch "make check: 16 passed, 8 failed" '^16 passed, 8 failed$' "$count"
		expect batch "make check: 2 not run" '^# 2 skipped: not run' "$count"
		expect batch "make check: 3 skipped" '^# 3 skipped ' "$count"
		expect_n batch "make check names the test of a failed check" 1 \
			'failing: B: every guest: B fails it' "$count"
		expect_n batch "make check: the warning, once" 1 \
			"warn_stop: guests failed or kernel logs not clean: B: stopped .*WARNING:.*" "$count"
		count "$log" "$rc" CHECK_SKIP_FAILS=1
		expect batch "make check in CI: the 3 skipped fail, the 2 not run do not" \
			'^16 passed, 11 failed$' "$count"
		pass "batch: took $(($(date +%s) - t0)) s"
		;;
	*)
		fail "unknown case $c"
		;;
	esac
done

if [ "$bad" -eq 0 ]; then
	echo "selftest: all cases behaved as expected"
	exit 0
fi
echo "selftest: $bad expectation(s) not met"
exit 1
