#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make coverage: the line coverage of ib_ipoib under its VM selftests.
# Builds (or finds cached) the debug kernel of tools/debug-kernel/, which
# has CONFIG_GCOV_KERNEL; builds ib_ipoib with GCOV_PROFILE (make GCOV=1,
# objects in build/KVER-gcov/ and build/KVER-hooks-gcov/); runs the VM
# selftests on that kernel, each guest leaving its counters at the end of
# its boot; then tools/coverage.py merges them (a line counts as covered
# if any guest of any boot ran it) into a per-file table, printed and
# written to build/coverage/coverage.txt. Ends with "N passed, N failed"
# for the tests run (their coverage counts whether they passed or not).
#   TESTS="..."  VM selftests to run (default: TEST_PROGS of selftests/)
#   FI=1|0       also run check-debug's fault-injection pass, whose failed
#                allocations reach the error paths (default: 1 without
#                TESTS, 0 with)
#   IPOIB_DEBUG_CACHE  where the kernel is cached (see check-debug.sh)
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
FI=${FI:-$([ -z "${TESTS:-}" ] && echo 1 || echo 0)}
TESTS=${TESTS:-$(sed -n 's/^TEST_PROGS *:= *//p' selftests/Makefile)}
out=$top/build/coverage
CHECK_LOGS=$out/logs
rm -rf "$out"
mkdir -p "$CHECK_LOGS"
# shellcheck source=tools/check-lib.sh
. "$top/tools/check-lib.sh"

# the kernel, the VM selftests, fault injection (FI=1), the table
check_begin $((3 + (FI == 1)))
klog=$(check_log_name "debug kernel")
kenv=$(tools/debug-kernel/build.sh 2>"$klog")
record "debug kernel: build or cache" $? "$klog"
if [ -z "$kenv" ] || [ ! -r "$kenv" ]; then
	check_summary "make coverage"
	exit 1
fi

# shellcheck disable=SC2046,SC2086 # test names are words
tap "vm coverage" env IPOIB_DEBUG_KERNEL="$kenv" IPOIB_GCOV=1 \
	tools/vm/batch.sh $(printf 'selftests/%s ' $TESTS)
logs=("$(check_log_name "vm coverage")")
if [ "$FI" = 1 ]; then
	tap "vm coverage fault injection" env IPOIB_DEBUG_KERNEL="$kenv" \
		IPOIB_GCOV=1 tools/debug-kernel/fault_injection.sh
	logs+=("$(check_log_name "vm coverage fault injection")")
fi
# the runs of these batches: "# LABEL: ... logs in build/vm/runs/DIR"
mapfile -t dumps < <(sed -n 's|^# .*, logs in \(.*\)$|\1/shared/gcov|p' \
	"${logs[@]}")
DEBUG_KVER=''
# shellcheck source=/dev/null
. "$kenv"
step "coverage table" python3 tools/coverage.py --top "$top" \
	--build "$top/build/$DEBUG_KVER-gcov" --out "$out/coverage.txt" \
	"${dumps[@]}"
[ -r "$out/coverage.txt" ] && cat "$out/coverage.txt"
check_summary "make coverage"
