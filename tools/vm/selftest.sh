#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh [--kver KVER] [CASE...]
#
# Check that run.sh notices failures: runs smoke.sh with SMOKE_FAIL (guests
# misbehave as soon as they are up) and expects run.sh to fail for the
# right reason. Cases: check (A fails a check, B warns) panic hang term
# (default: all). "term" sends SIGTERM to run.sh mid-run and checks that no
# QEMU or vde_switch of that run survives. Exits 0 iff every case behaved
# as expected. One VM run per case, about 100 s in all.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
kver=6.12.117+deb12-amd64
if [ "${1:-}" = --kver ]; then
	kver=${2:?}
	shift 2
fi
cases=${*:-check panic hang term}
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

# expect CASE DESC REGEX: the summary in $log matches REGEX.
expect() {
	if grep -qE -- "$3" "$log"; then
		pass "$1: $2"
	else
		fail "$1: $2 (no match for /$3/ in $log)"
	fi
}

expect_rc1() {
	if [ "$rc" -eq 1 ]; then
		pass "$1: run.sh exits 1"
	else
		fail "$1: run.sh exits $rc, expected 1"
	fi
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
		sleep 1
		if [ "$rc" -ne 0 ]; then
			pass "term: run.sh exits $rc"
		else
			fail "term: run.sh exits 0"
		fi
		# Processes of that run are recognisable by its output directory.
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
