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
cd "$top" || exit 2
KVERS=${KVERS:-"6.12.117+deb12-amd64 6.1.0-56-amd64"}
TESTS=${TESTS:-$(sed -n 's/^TEST_PROGS *:= *//p' selftests/Makefile)}
CHECK_LOGS=$top/build/check
rm -rf "$CHECK_LOGS"
mkdir -p "$CHECK_LOGS"
# shellcheck source=tools/check-lib.sh
. "$top/tools/check-lib.sh"

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

check_summary "make check"
