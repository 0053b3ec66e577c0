#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by every VM selftest. On the host (no ROLE in the environment) it
# builds the module, boots the guests with the test script itself as the
# guest program, prints TAP from what each guest reported and exits. In a
# guest it provides the guest library and a few IPoIB helpers.
#   IPOIB_KVER   kernel to boot (default 6.12.117+deb12-amd64)
#   IPOIB_DEBUG_KERNEL  the kernel.env of tools/debug-kernel/build.sh: boot
#                that debug kernel instead (make check-debug); its VM time
#                limit is IPOIB_DEBUG_SLOWDOWN (default 3) times the test's
#   GUESTS       set by the test before sourcing: number of guests
#   VM_TIMEOUT   set by the test before sourcing: seconds (default 300)
#   IPOIB_MODPARAMS  ib_ipoib module parameters for ipoib_start (debugging,
#                e.g. "debug_level=1 mcast_debug_level=1")
#   VM_ALLOC_FAILURES_EXPECTED  set to 1 by a test that injects allocation
#                failures: the kernel's reports of them are no problem
#   CM_INJECT    set to 1 by a test that uses tools/cm_inject: built on the
#                host first, $inject in the guests
# A test takes one option: --module KO boots the guests with KO (built for
# that kernel) instead of building this checkout's module.

IPOIB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ -z "${ROLE:-}" ]; then
	set -u
	kver=${IPOIB_KVER:-6.12.117+deb12-amd64}
	timeout=${VM_TIMEOUT:-300}
	test=$(basename "$0" .sh)
	module=
	vm_args=()
	vm_env=()
	kmake_args=()
	case ${1:-} in
	--module) module=$(realpath "${2:?--module KO}") ;;
	'') ;;
	*) echo "usage: $0 [--module KO]" >&2; exit 2 ;;
	esac
	if [ -n "${IPOIB_DEBUG_KERNEL:-}" ]; then
		DEBUG_KVER='' DEBUG_KDIR='' DEBUG_IMAGE='' DEBUG_MODROOT=''
		# shellcheck source=/dev/null
		. "$IPOIB_DEBUG_KERNEL"
		kver=$DEBUG_KVER
		timeout=$((timeout * ${IPOIB_DEBUG_SLOWDOWN:-3}))
		# guests scale their own waits for what the test does not time
		vm_env=(--env "VM_SLOW=${IPOIB_DEBUG_SLOWDOWN:-3}")
		kmake_args=(KDIR="$DEBUG_KDIR")
		# pci=noacpi: without it ACPI time-outs cost this kernel a minute
		vm_args=(--kernel "$DEBUG_IMAGE" --modroot "$DEBUG_MODROOT"
			--append pci=noacpi)
	fi
	out=$IPOIB_TOP/build/vm/runs/$test-$kver
	rm -rf "$out"
	mkdir -p "$out"
	echo "TAP version 13"
	if [ -n "${CM_INJECT:-}" ] &&
		! make -s -C "$IPOIB_TOP/tools/cm_inject" >"$out/build.log" 2>&1; then
		echo "1..1"
		echo "not ok 1 - $test: build tools/cm_inject"
		sed 's/^/# /' "$out/build.log"
		exit 1
	fi
	if [ -z "$module" ] && ! make -s -C "$IPOIB_TOP" modules KVER="$kver" \
		"${kmake_args[@]}" >"$out/build.log" 2>&1; then
		echo "1..1"
		echo "not ok 1 - $test: module build for $kver"
		sed 's/^/# /' "$out/build.log"
		exit 1
	fi
	[ -z "$module" ] || vm_args+=(--module "$module")
	vm_args+=("${vm_env[@]}")
	[ -z "${IPOIB_MODPARAMS:-}" ] ||
		vm_args+=(--env "IPOIB_MODPARAMS=$IPOIB_MODPARAMS")
	[ -z "${VM_ALLOC_FAILURES_EXPECTED:-}" ] ||
		vm_args+=(--alloc-failures-expected)
	"$IPOIB_TOP/tools/vm/run.sh" --kver "$kver" --guests "${GUESTS:-2}" \
		--timeout "$timeout" --script "$(realpath "$0")" \
		--out "$out" "${vm_args[@]}" >"$out/run.log" 2>&1
	rc=$?
	n=0
	fails=0
	for f in "$out"/shared/*.out; do
		[ -f "$f" ] || continue
		role=$(basename "$f" .out)
		while IFS= read -r line; do
			case $line in
			"ok - "*) n=$((n + 1)); echo "ok $n - $role: ${line#ok - }" ;;
			"not ok - "*) n=$((n + 1)); fails=$((fails + 1))
				echo "not ok $n - $role: ${line#not ok - }" ;;
			esac
		done <"$f"
	done
	n=$((n + 1))
	if [ $rc -eq 0 ]; then
		echo "ok $n - $test: guests finished, kernel logs clean"
	else
		fails=$((fails + 1))
		echo "not ok $n - $test: guests failed or kernel logs not clean"
	fi
	echo "1..$n"
	if [ $fails -ne 0 ]; then
		sed 's/^/# /' "$out/run.log"
		for f in "$out"/shared/*.out; do
			[ -f "$f" ] && sed "s|^|# $(basename "$f" .out): |" "$f"
		done
	fi
	echo "# full logs: $out"
	exit $((fails != 0))
fi

# --- guest side ---
# VM_SLOW: how much slower than the Debian kernel this one is (the debug
# kernel's checkers): scales waits for work the test does not measure.
VM_SLOW=${VM_SLOW:-1}
# shellcheck source=../tools/vm/guest-lib.sh
. "$IPOIB_TOP/tools/vm/guest-lib.sh"
# shellcheck disable=SC2034 # for the tests that set CM_INJECT
inject=$IPOIB_TOP/build/cm_inject/cm_inject

# The ib_ipoib interface on an RDMA device's port: ipoib_if rxe0 [port]
ipoib_if() {
	local d dev=$1 port=${2:-1}
	for d in /sys/class/net/*; do
		[ "$(ethtool -i "${d##*/}" 2>/dev/null |
			sed -n 's/^driver: //p')" = ib_ipoib ] || continue
		[ "$(ethtool -i "${d##*/}" | sed -n 's/^bus-info: //p')" = "$dev" ] ||
			continue
		[ "$(cat "$d/dev_port")" = $((port - 1)) ] || continue
		echo "${d##*/}"
		return 0
	done
	return 1
}

# stat_of NAME: an ethtool statistic of the test's interface ($ifc)
stat_of() {
	ethtool -S "$ifc" | awk -v n="$1:" '$1 == n { print $2 }'
}

# wait_until SECONDS CMD...: poll CMD every 0.2 s
wait_until() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge $end ] && return 1
		sleep 0.2
	done
}

# ipoib_start: the common start of a datagram test. A 4200-byte underlay
# (rxe then uses a 4096-byte IB MTU: IPv6 needs 1280), rxe0, ib_ipoib, its
# interface up with carrier (the broadcast group joined). Sets IFC and IDX
# (1 for A, 2 for B, ...); the checks it makes count like the test's own.
ipoib_start() {
	IDX=$(($(printf '%d' "'$ROLE") - 64))
	ip link set eth0 mtu 4200
	rxe_up
	# shellcheck disable=SC2086 # parameters are words
	check "modprobe ib_ipoib" modprobe ib_ipoib ${IPOIB_MODPARAMS:-}
	check "an interface appears on rxe0 port 1" wait_until 10 ipoib_if rxe0
	IFC=$(ipoib_if rxe0)
	ip link set "$IFC" up
	check "carrier comes up once the broadcast group is joined" \
		wait_until 15 grep -qx 1 "/sys/class/net/$IFC/carrier"
	check "MTU is the group's 4096 minus the 4-octet header" \
		test "$(cat "/sys/class/net/$IFC/mtu")" = 4092
}
