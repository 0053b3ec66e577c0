#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: build (W=1), lint, userspace unit tests, fuzzing and the VM
# selftests on every supported kernel. Prints one result line per test and
# ends with "N passed, N failed".
#   KVERS="..."  kernels to test (default: both Debian kernels)
#   TESTS="..."  VM selftests to run (default: TEST_PROGS of selftests/)
#   SKIP_HARNESS_SELFTEST=1  skip the test bed's own failure-detection test
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
KVERS=${KVERS:-"6.12.117+deb12-amd64 6.1.0-56-amd64"}
TESTS=${TESTS:-$(sed -n 's/^TEST_PROGS *:= *//p' selftests/Makefile)}
logs=$top/build/check
rm -rf "$logs"
mkdir -p "$logs"
passed=0
failed=0
start=$(date +%s)

record() {	# record NAME RC LOG
	if [ "$2" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok - $1"
	else
		failed=$((failed + 1))
		echo "not ok - $1"
		[ -n "${3:-}" ] && tail -n 40 "$3" | sed 's/^/#   /'
	fi
}

# step NAME CMD...: one test, passed iff CMD exits 0
step() {
	local name=$1 log
	shift
	log=$logs/$(echo "$name" | tr -c 'a-zA-Z0-9._-' '_').log
	"$@" >"$log" 2>&1
	record "$name" $? "$log"
}

# tap NAME CMD...: every TAP result line of CMD counts as a test; CMD
# failing without a failed TAP line is one more failure.
tap() {
	local name=$1 log rc n0=$failed line
	shift
	log=$logs/$(echo "$name" | tr -c 'a-zA-Z0-9._-' '_').log
	"$@" >"$log" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) record "$name: ${line#ok }" 0 ;;
		"not ok "*) record "$name: ${line#not ok }" 1 ;;
		esac
	done < <(grep -E '^(not )?ok ' "$log")
	if [ $rc -ne 0 ] && [ $failed -eq $n0 ]; then
		record "$name (exit $rc)" 1 "$log"
	elif [ $failed -ne $n0 ]; then
		tail -n 60 "$log" | sed 's/^/#   /'
	fi
}

build_clean() {	# W=1 build with no warning at all
	local out
	out=$(make -s -C "$top" modules KVER="$1" 2>&1 |
		grep -v 'Skipping BTF generation')
	[ -n "$out" ] && { echo "$out"; return 1; }
	test -f "build/$1/ib_ipoib.ko"
}

for k in $KVERS; do
	step "build W=1 $k" build_clean "$k"
done
step "lint: checkpatch --strict" tools/lint.sh checkpatch
for k in $KVERS; do
	step "lint: sparse $k" tools/lint.sh sparse "$k"
done
tap "unit" make -s -C selftests/unit run
step "fuzz: wire parsers" make -s -C selftests/unit fuzz-run

# The test bed itself: soft-RoCE UD between guests without our module, and
# run.sh catching failed checks, kernel warnings, panics, hangs and SIGTERM.
for k in $KVERS; do
	step "testbed: rxe smoke $k" tools/vm/run.sh --kver "$k" --guests 2 \
		--no-module --script "$top/tools/vm/smoke.sh" \
		--out "$top/build/vm/runs/smoke-$k"
done
[ -n "${SKIP_HARNESS_SELFTEST:-}" ] ||
	step "testbed: failures are detected" tools/vm/selftest.sh

for k in $KVERS; do
	for t in $TESTS; do
		tap "vm $k $t" env IPOIB_KVER="$k" "selftests/$t"
	done
done

echo "# make check took $(($(date +%s) - start)) s; logs in build/check/"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
