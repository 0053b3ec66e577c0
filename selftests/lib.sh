#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by every VM selftest. On the host (no ROLE in the environment) it
# builds the module, boots the guests with the test script itself as the
# guest program, prints TAP from what each guest reported and exits. In a
# guest it provides the guest library and a few IPoIB helpers.
#   IPOIB_KVER   kernel to boot (default 6.12.117+deb12-amd64)
#   GUESTS       set by the test before sourcing: number of guests
#   VM_TIMEOUT   set by the test before sourcing: seconds (default 300)

IPOIB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ -z "${ROLE:-}" ]; then
	set -u
	kver=${IPOIB_KVER:-6.12.117+deb12-amd64}
	test=$(basename "$0" .sh)
	out=$IPOIB_TOP/build/vm/runs/$test-$kver
	rm -rf "$out"
	mkdir -p "$out"
	echo "TAP version 13"
	if ! make -s -C "$IPOIB_TOP" modules KVER="$kver" >"$out/build.log" 2>&1; then
		echo "1..1"
		echo "not ok 1 - $test: module build for $kver"
		sed 's/^/# /' "$out/build.log"
		exit 1
	fi
	"$IPOIB_TOP/tools/vm/run.sh" --kver "$kver" --guests "${GUESTS:-2}" \
		--timeout "${VM_TIMEOUT:-300}" --script "$(realpath "$0")" \
		--out "$out" >"$out/run.log" 2>&1
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
# shellcheck source=../tools/vm/guest-lib.sh
. "$IPOIB_TOP/tools/vm/guest-lib.sh"

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

# wait_until SECONDS CMD...: poll CMD every 0.2 s
wait_until() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge $end ] && return 1
		sleep 0.2
	done
}
