#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault-injection pass of `make check-debug`: failslab and fail_page_alloc,
# restricted by the stacktrace filter to call chains that pass through
# ib_ipoib's text, while the driver's operations run again and again in
# both guests. Every injected failure must end in a clean error path: an
# errno or a kernel message, an interface that still works or comes back
# once the cause is gone, no leak (kmemleak at finish) and no checker report
# (run.sh). Needs a kernel with FAULT_INJECTION_STACKTRACE_FILTER: run it as
#   IPOIB_DEBUG_KERNEL=<kernel.env> tools/debug-kernel/fault_injection.sh
# (tools/check-debug.sh does).
#
# The operations are the fi_op_* functions listed in FI_OPS; each round runs
# all of them in order under injection. To cover a new driver operation
# (children, mode switches, traffic), write fi_op_NAME, which starts and
# must end with the interface present and down, and add NAME to FI_OPS.
#   FI_ROUNDS       rounds (default 4)
#   FI_PROBABILITY  percent of the eligible allocations that fail (default 2)
GUESTS=2
VM_TIMEOUT=400
# A failed allocation may be reported by the kernel (warn_alloc); that is
# not a problem here, any other report is.
VM_ALLOC_FAILURES_EXPECTED=1
. "$(dirname "$0")/../../selftests/lib.sh"

FI_OPS="updown mode relink reload"
FI_ROUNDS=${FI_ROUNDS:-4}
FI_PROBABILITY=${FI_PROBABILITY:-2}
FI_TIMES=1000000
FI_ATTRS="failslab fail_page_alloc"
dbg=/sys/kernel/debug

fi_set() {	# fi_set FILE VALUE: set FILE of every fault attribute
	local a
	for a in $FI_ATTRS; do
		echo "$2" >"$dbg/$a/$1" || return 1
	done
}

fi_setup() {
	local a
	for a in $FI_ATTRS; do
		[ -e "$dbg/$a/require-start" ] ||
			{ echo "no $dbg/$a/require-start"; return 1; }
	done
	fi_set probability 0 &&
		fi_set interval 1 &&
		fi_set times $FI_TIMES &&
		fi_set space 0 &&
		fi_set verbose 1 &&
		fi_set task-filter N &&
		fi_set stacktrace-depth 32 &&
		fi_set ignore-gfp-wait N &&
		echo N >"$dbg/fail_page_alloc/ignore-gfp-highmem" &&
		echo 0 >"$dbg/fail_page_alloc/min-order"
}

fi_on() { fi_set probability "$FI_PROBABILITY"; }
fi_off() { fi_set probability 0; }

fi_injected() {	# failures injected so far, all attributes
	local a n=0
	for a in $FI_ATTRS; do
		n=$((n + FI_TIMES - $(cat "$dbg/$a/times")))
	done
	echo $n
}

# fi_text_range: "START END" of ib_ipoib's run-time text (every .text*
# section but .init.text): addresses from sysfs, sizes from the .ko.
fi_text_range() {
	local ko s name addr size lo='' hi=''
	ko=$(modinfo -n ib_ipoib) || return 1
	for s in /sys/module/ib_ipoib/sections/.text*; do
		name=${s##*/}
		[ "$name" = .init.text ] && continue
		addr=$(($(cat "$s")))
		size=$(readelf -SW "$ko" | sed -E 's/^ *\[ *[0-9]+\] +//' |
			awk -v n="$name" '$1 == n { print $5 }')
		[ -n "$size" ] || { echo "no size for $name"; return 1; }
		size=$((16#$size))
		[ "$size" -gt 0 ] || continue
		if [ -z "$lo" ] || [ "$addr" -lt "$lo" ]; then lo=$addr; fi
		if [ -z "$hi" ] || [ $((addr + size)) -gt "$hi" ]; then
			hi=$((addr + size))
		fi
	done
	[ -n "$lo" ] || { echo "no text section of ib_ipoib"; return 1; }
	echo "$lo $hi"
}

# fi_filter: restrict injection to call chains through ib_ipoib's text
fi_filter() {
	local range
	range=$(fi_text_range) || { echo "$range"; return 1; }
	FI_RANGE=$range
	fi_set require-start "$(printf '%u' "${range% *}")" &&
		fi_set require-end "$(printf '%u' "${range#* }")" &&
		printf 'require %#x..%#x\n' "${range% *}" "${range#* }"
}

# fi_if_works: the interface exists, comes up and goes down, and its
# address carries the QPN of one of our UD QPs.
fi_if_works() {
	local ifc addr qpn
	ifc=$(ipoib_if rxe0) || { echo "no interface on rxe0"; return 1; }
	addr=$(cat "/sys/class/net/$ifc/address")
	qpn=$((16#$(echo "$addr" | cut -d: -f2-4 | tr -d ':')))
	ip link set "$ifc" up && ip link set "$ifc" down || return 1
	rdma resource show qp | grep ib_ipoib | grep -qw "lqpn $qpn" ||
		{ echo "$ifc: QPN $qpn of $addr is not an ib_ipoib QP"; return 1; }
}

have_if() { ipoib_if rxe0 >/dev/null; }

# fi_recover: without injection, bring the module, rxe0 and the interface
# back if an injected failure left them missing.
fi_recover() {
	if ! grep -q '^ib_ipoib ' /proc/modules; then
		modprobe ib_ipoib || return 1
	fi
	if ! wait_until 2 have_if; then
		if rdma link show rxe0/1 >/dev/null 2>&1; then
			rdma link delete rxe0 || return 1
		fi
		vm_rxe_add >/dev/null || return 1
	fi
	wait_until 10 have_if && fi_if_works
}

# --- operations: each starts and ends with the interface down --------------
fi_op_updown() {
	local ifc
	ifc=$(ipoib_if rxe0) || return 1
	ip link set "$ifc" up || return 1
	ip link set "$ifc" down
}

# connected mode: the SRQ and its 16-page buffers, both CM listens
fi_op_mode() {
	local ifc
	ifc=$(ipoib_if rxe0) || return 1
	echo connected >"/sys/class/net/$ifc/mode" || return 1
	ip link set "$ifc" up || return 1
	echo datagram >"/sys/class/net/$ifc/mode" || return 1
	ip link set "$ifc" down
}

fi_op_relink() {
	rdma link delete rxe0 || return 1
	rdma link add rxe0 type rxe netdev eth0
}

fi_op_reload() {
	modprobe -r ib_ipoib || return 1
	modprobe ib_ipoib
}

# fi_round_op OP: run OP under injection, then judge and recover.
fi_round_op() {
	local op=$1 n0 n1 rc out msgs mark range0 what
	range0=$FI_RANGE
	mark="ipoib-fi: $ROLE $op $FI_OPS_DONE"
	echo "$mark" >/dev/kmsg
	n0=$(fi_injected)
	fi_on
	rc=0
	out=$("fi_op_$op" 2>&1) || rc=$?
	fi_off
	n1=$(fi_injected)
	FI_OPS_DONE=$((FI_OPS_DONE + 1))
	if [ "$op" = reload ] && grep -q '^ib_ipoib ' /proc/modules; then
		FI_RELOADS=$((FI_RELOADS + 1))
		fi_filter >/dev/null || return 1
		# A reload is covered when the module's text came back at the
		# address the filter was set for.
		[ "$FI_RANGE" != "$range0" ] ||
			FI_RELOADS_COVERED=$((FI_RELOADS_COVERED + 1))
	fi
	if [ "$n1" -eq "$n0" ]; then
		# Nothing injected: the operation must simply work.
		[ "$rc" -eq 0 ] || { echo "$op failed without injection: $out"; return 1; }
		fi_if_works || return 1
		return 0
	fi
	FI_OPS_INJECTED=$((FI_OPS_INJECTED + 1))
	msgs=$(dmesg | sed -n "/$mark\$/,\$p" | sed 1d |
		grep -vE 'FAULT_INJECTION|name (failslab|fail_page_alloc)' |
		grep -E 'ib_ipoib|ib[0-9]+:|rxe|infiniband|rdma') || true
	what="$op: $((n1 - n0)) failure(s) injected"
	if [ "$rc" -ne 0 ]; then
		FI_ERRNO=$((FI_ERRNO + 1))
		what="$what, errno: $(echo "$out" | tail -n1)"
	elif [ -n "$msgs" ]; then
		FI_MESSAGE=$((FI_MESSAGE + 1))
		what="$what, message: $(echo "$msgs" | tail -n1)"
	else
		FI_SILENT=$((FI_SILENT + 1))
		what="$what, no errno or message"
	fi
	if fi_if_works >/dev/null 2>&1; then
		FI_WORKS=$((FI_WORKS + 1))
		log "$what; interface works"
		return 0
	fi
	if [ "$rc" -eq 0 ] && [ -z "$msgs" ]; then
		echo "$what; interface lost silently"
		dmesg | sed -n "/$mark\$/,\$p"
		return 1
	fi
	fi_recover || { echo "$what; no recovery"; return 1; }
	fi_filter >/dev/null || return 1
	FI_RECOVERED=$((FI_RECOVERED + 1))
	log "$what; interface back without injection"
}

FI_OPS_DONE=0 FI_OPS_INJECTED=0 FI_ERRNO=0 FI_MESSAGE=0 FI_SILENT=0
FI_WORKS=0 FI_RECOVERED=0 FI_RELOADS=0 FI_RELOADS_COVERED=0 FI_RANGE=

check "fault injection is configured (failslab, fail_page_alloc)" fi_setup
rxe_up
check "modprobe ib_ipoib" modprobe ib_ipoib
check "the interface works before injection" wait_until 10 fi_if_works
check "stacktrace filter on ib_ipoib's text" fi_filter
fi_filter >/dev/null || true

for round in $(seq "$FI_ROUNDS"); do
	for op in $FI_OPS; do
		# not through check, whose subshell would lose the counts
		rc=0
		fi_round_op "$op" >/tmp/fi-op.out 2>&1 || rc=$?
		res=$(cat /tmp/fi-op.out)
		if [ "$rc" -eq 0 ]; then
			echo "ok - round $round: $op ends clean"
		else
			echo "not ok - round $round: $op"
			vm_fail "round $round: $op"
		fi
		[ -z "$res" ] || printf '%s\n' "$res" | sed 's/^/#   /'
		if [ "$rc" -ne 0 ]; then
			fi_off
			fi_recover >/dev/null 2>&1 || true
			fi_filter >/dev/null || true
		fi
	done
done
fi_off
log "fault injection: $FI_OPS_DONE operations, $FI_OPS_INJECTED with failures injected" \
	"($((FI_TIMES - $(cat $dbg/failslab/times))) slab, $((FI_TIMES - $(cat $dbg/fail_page_alloc/times))) page)," \
	"reported by errno $FI_ERRNO, by message $FI_MESSAGE, not at all $FI_SILENT;" \
	"interface still working $FI_WORKS, back after recovery $FI_RECOVERED;" \
	"reloads under the filter: $FI_RELOADS_COVERED of $FI_RELOADS"
echo "$FI_OPS_DONE $FI_OPS_INJECTED $(fi_injected)" >"$SHARED/fi.$ROLE"
check "failures were injected ($(fi_injected) in $FI_OPS_INJECTED operations)" \
	test "$(fi_injected)" -gt 0
check "unload ib_ipoib" modprobe -r ib_ipoib
check "rdma link delete rxe0" rdma link delete rxe0
check "rmmod rdma_rxe" modprobe -r rdma_rxe
finish
