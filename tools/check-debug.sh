#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-debug: build (once per machine, cached outside the checkout)
# the debug kernel of tools/debug-kernel/ -- KASAN, kmemleak, lockdep,
# UBSAN, debug objects, list and net debugging, fault injection -- build
# ib_ipoib against it, run every VM selftest on it (kmemleak scan at the
# end of each) and the fault-injection pass. Ends with "N passed, N failed".
#   TESTS="..."  VM selftests to run (default: TEST_PROGS of selftests/)
#   FI_ROUNDS, FI_PROBABILITY  see tools/debug-kernel/fault_injection.sh
#   IPOIB_DEBUG_CACHE  where the kernel is cached (default /var/cache/ib_ipoib)
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
TESTS=${TESTS:-$(sed -n 's/^TEST_PROGS *:= *//p' selftests/Makefile)}
CHECK_LOGS=$top/build/check-debug
rm -rf "$CHECK_LOGS"
mkdir -p "$CHECK_LOGS"
# shellcheck source=tools/check-lib.sh
. "$top/tools/check-lib.sh"

# the kernel, the module, the VM selftests, fault injection
check_begin 4
klog=$(check_log_name "debug kernel")
t0=$(date +%s)
kenv=$(tools/debug-kernel/build.sh 2>"$klog")
record "debug kernel: build or cache" $? "$klog"
if [ -z "$kenv" ] || [ ! -r "$kenv" ]; then
	check_summary "make check-debug"
	exit 1
fi
DEBUG_KVER='' DEBUG_KDIR='' DEBUG_BUILD_S=''
# shellcheck source=/dev/null
. "$kenv"
if grep -q '^debug-kernel: built' "$klog"; then
	echo "# debug kernel $DEBUG_KVER built in $DEBUG_BUILD_S s"
else
	echo "# debug kernel $DEBUG_KVER from the cache ($(($(date +%s) - t0)) s;" \
		"it took $DEBUG_BUILD_S s to build)"
fi
echo "# $(dirname "$kenv")"

step "build ib_ipoib for $DEBUG_KVER" \
	make -s -C "$top" modules KVER="$DEBUG_KVER" KDIR="$DEBUG_KDIR"

# shellcheck disable=SC2046,SC2086 # test names are words
tap "vm debug" env IPOIB_DEBUG_KERNEL="$kenv" tools/vm/batch.sh \
	$(printf 'selftests/%s ' $TESTS)
tap "vm debug fault injection" env IPOIB_DEBUG_KERNEL="$kenv" \
	tools/debug-kernel/fault_injection.sh
grep -h 'fault injection: ' \
	"$top/build/vm/runs/fault_injection-$DEBUG_KVER"/shared/t/fault_injection/*.out 2>/dev/null |
	sed 's/^# */# /'

check_summary "make check-debug"
