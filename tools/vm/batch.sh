#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# batch.sh [--module KO] TEST...
#
# Run VM selftests (selftests/*.sh, or any script that sources
# selftests/lib.sh or tools/vm/guest-lib.sh), booting the guests once for
# all the tests that can share them: those that want the same number of
# guests (GUESTS=, default 2) of as many vCPUs (VM_SMP=, default 1) and
# NICs (NICS=, default 1), the
# same module (TEST_HOOKS=1: the test build of make TEST_HOOKS=1) and the
# same judgement of allocation failures (VM_ALLOC_FAILURES_EXPECTED=), in
# the order given. The guests
# run tools/vm/batch-guest.sh, which puts them back as they booted
# between tests. Prints KTAP (kselftest's): the plan, then per test a
# subtest of its guests' checks ("ROLE: ...") ending with one for its
# guests' exit status and kernel log, and the test's result; per boot,
# one result; the totals. A test whose prerequisites are missing here
# (NEEDS=) is not run: its result says "# SKIP"; if no test ran, the exit
# status is 4, kselftest's skip.
# A test reads its settings from lines of its own that start with them
# (GUESTS=, VM_SMP=, VM_TIMEOUT= seconds (default 300), CM_INJECT=1,
# UD_INJECT=1, TEST_HOOKS=1, VM_ALLOC_FAILURES_EXPECTED=1, SOFTIB=1: the
# test loads tools/softib's soft IB HCA, built here for the kernel;
# DKMS=1: tools/vm/dkms-stage.sh runs dkms for the kernel into the boot's
# /shared/host/dkms while the guests boot, which the test reads; NICS=2:
# the guests get eth1 on eth0's segment (run.sh --nics: a vde_switch, which
# carries no frame over 1514 octets, so such tests boot apart from the
# others); NEEDS="PROGRAM...": programs it
# runs, found in PATH or at the absolute path given (guests run the
# host's)).
#   IPOIB_KVER   kernel to boot (default 6.12.117+deb12-amd64)
#   IPOIB_DEBUG_KERNEL  the kernel.env of tools/debug-kernel/build.sh: boot
#                that debug kernel instead (make check-debug); its time
#                limits are IPOIB_DEBUG_SLOWDOWN (default 3) times the tests'
#   IPOIB_MODPARAMS  ib_ipoib module parameters for ipoib_start
#   IPOIB_VM_TAG  a suffix for this run's directories and build log, so
#                that two batch.sh of one kernel can run at once once its
#                modules are built (make check builds them first)
#   IPOIB_GCOV=1 the module profiled (make GCOV=1; a debug kernel with
#                CONFIG_GCOV_KERNEL): each guest leaves its counters in
#                shared/gcov/ROLE of the run (make coverage)
# Exits 0 iff every test passed or skipped, and one ran.
# The whole script is read before it runs: editing it meanwhile is safe.
{
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kver=${IPOIB_KVER:-6.12.117+deb12-amd64}
# --module KO: every test boots KO (a test build for TEST_HOOKS=1 tests)
module=
module_given=
if [ "${1:-}" = --module ]; then
	module=$(realpath "${2:?--module KO}")
	module_given=1
	shift 2
fi
[ $# -gt 0 ] || { echo "usage: $0 [--module KO] TEST..." >&2; exit 2; }

slow=1
vm_args=()
kmake_args=()
if [ -n "${IPOIB_DEBUG_KERNEL:-}" ]; then
	DEBUG_KVER='' DEBUG_KDIR='' DEBUG_IMAGE='' DEBUG_MODROOT=''
	# shellcheck source=/dev/null
	. "$IPOIB_DEBUG_KERNEL"
	kver=$DEBUG_KVER
	slow=${IPOIB_DEBUG_SLOWDOWN:-3}
	# guests scale their own waits for what the test does not time
	vm_args=(--env "VM_SLOW=$slow")
	kmake_args=(KDIR="$DEBUG_KDIR")
	# pci=noacpi: without it ACPI time-outs cost this kernel a minute
	vm_args+=(--kernel "$DEBUG_IMAGE" --modroot "$DEBUG_MODROOT"
		--append pci=noacpi)
fi
gcov=
if [ -n "${IPOIB_GCOV:-}" ]; then
	gcov=-gcov
	kmake_args+=(GCOV=1)
	vm_args+=(--env IPOIB_GCOV=1)
fi
[ -z "${IPOIB_MODPARAMS:-}" ] ||
	vm_args+=(--env "IPOIB_MODPARAMS=$IPOIB_MODPARAMS")

# setting TEST NAME DEFAULT: a test's own NAME=value line
setting() {
	local v
	v=$(sed -n "s/^$2=\([0-9A-Za-z]*\).*/\1/p" "$1" | head -n1)
	echo "${v:-$3}"
}

runs=$top/build/vm/runs
mkdir -p "$runs"
n=0
fails=0
skips=0
tap() {	# tap OK|FAIL|SKIP DESC [REASON]: a top-level result
	n=$((n + 1))
	case $1 in
	OK) echo "ok $n $2" ;;
	SKIP) skips=$((skips + 1)); echo "ok $n $2 # SKIP $3" ;;
	*) fails=$((fails + 1)); echo "not ok $n $2" ;;
	esac
}
# totals: the last line, and the status (0 passed, 1 failed, 4 none ran)
totals() {
	echo "# Totals: pass:$((n - fails - skips)) fail:$fails xfail:0 xpass:0 skip:$skips error:0"
	[ $fails -ne 0 ] && exit 1
	[ $skips -eq $n ] && exit 4
	exit 0
}
# missing_of TEST: the programs of its NEEDS= line that are not here
missing_of() {
	local p
	for p in $(sed -n 's/^NEEDS="\(.*\)"$/\1/p' "$1" | head -n1); do
		case $p in
		/*) [ -x "$p" ] || echo "$p" ;;
		*) command -v "$p" >/dev/null || echo "$p" ;;
		esac
	done
}
# Tools first: a failed build fails every test it would have run.
need_inject=
need_ud_inject=
need_hooks=
need_softib=
declare -A group_of=() limit_of=() skip_of=()
groups=()
tests=()
for t in "$@"; do
	t=$(realpath "$t")
	tests+=("$t")
	m=$(missing_of "$t" | tr '\n' ' ')
	if [ -n "$m" ]; then
		skip_of[$t]="missing ${m% } (tools/deps.sh installs it)"
		continue
	fi
	[ "$(setting "$t" CM_INJECT '')" = 1 ] && need_inject=1
	[ "$(setting "$t" UD_INJECT '')" = 1 ] && need_ud_inject=1
	[ "$(setting "$t" TEST_HOOKS 0)" = 1 ] && need_hooks=1
	[ "$(setting "$t" SOFTIB 0)" = 1 ] && need_softib=1
	# guests-smp-hooks-allocfail-nics
	g="$(setting "$t" GUESTS 2)-$(setting "$t" VM_SMP 1)"
	g="$g-$(setting "$t" TEST_HOOKS 0)-$(setting "$t" VM_ALLOC_FAILURES_EXPECTED 0)"
	g="$g-$(setting "$t" NICS 1)"
	[ -n "${group_of[$g]:-}" ] || groups+=("$g")
	group_of[$g]="${group_of[$g]:-} $t"
	limit_of[$t]=$(setting "$t" VM_TIMEOUT 300)
done
echo "KTAP version 1"
echo "1..$((${#tests[@]} + ${#groups[@]}))"
for t in "${tests[@]}"; do
	[ -z "${skip_of[$t]:-}" ] ||
		tap SKIP "$(basename "$t" .sh)" "${skip_of[$t]}"
done
[ ${#groups[@]} -gt 0 ] || totals
# fail_rest WHAT LOG: WHAT failed, and with it every test and boot left
fail_rest() {
	local t
	sed 's/^/# /' "$2"
	for t in "${tests[@]}"; do
		[ -n "${skip_of[$t]:-}" ] || tap FAIL "$(basename "$t" .sh): $1 failed"
	done
	for t in "${groups[@]}"; do
		tap FAIL "boot $t: $1 failed"
	done
	totals
}
tag=${IPOIB_VM_TAG:+-$IPOIB_VM_TAG}
build_log=$runs/build-$kver$gcov$tag.log
# the guests see the host's binaries read-only: build them first
for tool in ${need_inject:+cm_inject} ${need_ud_inject:+inject}; do
	if ! make -s -C "$top/tools/$tool" >"$build_log" 2>&1; then
		fail_rest "build of tools/$tool" "$build_log"
	fi
done
if [ -z "$module_given" ]; then
	if ! make -s -C "$top" modules KVER="$kver" "${kmake_args[@]}" \
		>"$build_log" 2>&1; then
		fail_rest "module build for $kver" "$build_log"
	fi
	module=$top/build/$kver$gcov/ib_ipoib.ko
fi
hooks_module=$module
if [ -n "$need_hooks" ] && [ -z "$module_given" ]; then
	if ! make -s -C "$top" modules KVER="$kver" TEST_HOOKS=1 \
		"${kmake_args[@]}" >"$build_log" 2>&1; then
		fail_rest "module build for $kver with TEST_HOOKS=1" "$build_log"
	fi
	hooks_module=$top/build/$kver-hooks$gcov/ib_ipoib.ko
fi

# the guests insmod it from the host's tree: build/KVER/softib/softib.ko
if [ -n "$need_softib" ] &&
	! make -s -C "$top/tools/softib" KVER="$kver" "${kmake_args[@]}" \
		>"$build_log" 2>&1; then
	fail_rest "tools/softib build for $kver" "$build_log"
fi

# dkms_stage DIR: dkms add/build/install/remove for the boot whose shared
# directory is DIR (/shared/host in the guests), into DIR/dkms, in the
# background while the guests boot and run the tests before: the test
# waits for dkms/done, and the steps are its checks (a failed one fails
# the test, not the boot). Not elsewhere under build/: the guests would
# not see files made there after they looked (the overlay over the host's
# root caches what it found).
dkms_pid=
dkms_stage() {
	(
		# niced: the guests are CPU-bound
		if [ -n "${IPOIB_DEBUG_KERNEL:-}" ]; then
			nice -n 19 "$here/dkms-stage.sh" "$kver" \
				"$DEBUG_MODROOT/lib/modules/$kver" "$1/dkms" "$DEBUG_KDIR"
		else
			nice -n 19 "$here/dkms-stage.sh" "$kver" \
				"/lib/modules/$kver" "$1/dkms"
		fi
		: >"$1/dkms/done"
	) >"$1/dkms-stage.log" 2>&1 &
	dkms_pid=$!
}

# report OUT TEST: KTAP of one test of a finished boot: the subtest of
# its checks, then its result
alloc_ok=
# shellcheck source=tools/vm/kernel-log.sh
. "$here/kernel-log.sh"
report() {
	local out=$1 name r f line problems=() secs=0 s m sub=() bad=0 i
	name=$(basename "$2" .sh)
	for r in $roles; do
		f=$out/shared/t/$name/$r
		if [ ! -e "$f.out" ]; then
			problems+=("$r: not run (an earlier test stopped the guests)")
			continue
		fi
		while IFS= read -r line; do
			case $line in
			"ok - "*) sub+=("ok $r: ${line#ok - }") ;;
			"not ok - "*) sub+=("not ok $r: ${line#not ok - }"); bad=1 ;;
			esac
		done <"$f.out"
		if [ ! -e "$f.rc" ]; then
			problems+=("$r: stopped during the test (see console-$r.log)")
		elif [ "$(cat "$f.rc")" != 0 ]; then
			problems+=("$r: exit status $(cat "$f.rc")")
		fi
		if m=$(scan "$f.dmesg" dmesg); then
			problems+=("$r: kernel log matches '${m%%	*}': ${m#*	}")
		fi
		s=$(cat "$f.time" 2>/dev/null) && [ "$s" -gt "$secs" ] && secs=$s
	done
	if [ ${#problems[@]} -eq 0 ]; then
		sub+=("ok guests finished, kernel logs clean ($secs s)")
	else
		sub+=("not ok guests failed or kernel logs not clean")
		bad=1
	fi
	echo "  # Subtest: $name"
	echo "  KTAP version 1"
	echo "  1..${#sub[@]}"
	for i in "${!sub[@]}"; do
		line=${sub[$i]}
		case $line in
		"not ok "*) echo "  not ok $((i + 1)) ${line#not ok }" ;;
		*) echo "  ok $((i + 1)) ${line#ok }" ;;
		esac
	done
	if [ $bad = 0 ]; then
		tap OK "$name"
		return
	fi
	tap FAIL "$name"
	for m in "${problems[@]}"; do
		echo "#   $m"
	done
	for r in $roles; do
		f=$out/shared/t/$name/$r
		[ -e "$f.out" ] && sed "s|^|# $name: $r: |" "$f.out"
		[ -e "$f.dmesg" ] && scan "$f.dmesg" dmesg >/dev/null &&
			excerpt "$f.dmesg" | sed "s|^|# $name: $r: dmesg: |"
	done
}

for g in "${groups[@]}"; do
	IFS=- read -r guests smp hooks allocfail nics <<<"$g"
	# shellcheck disable=SC2206 # the group's tests, space-separated
	gtests=(${group_of[$g]})
	items=
	total=60
	for t in "${gtests[@]}"; do
		items="$items $t:${limit_of[$t]}"
		total=$((total + limit_of[$t] + 30))
	done
	if [ ${#gtests[@]} -eq 1 ]; then
		label=$(basename "${gtests[0]}" .sh)
	else
		label=batch$guests
		[ "$smp" = 1 ] || label=$label-smp$smp
		[ "$hooks" = 0 ] || label=$label-hooks
		[ "$allocfail" = 0 ] || label=$label-allocfail
		[ "$nics" = 1 ] || label=$label-nics$nics
	fi
	out=$runs/$label$tag-$kver$gcov
	rm -rf "$out"
	mkdir -p "$out/shared/host"
	for t in "${gtests[@]}"; do
		[ "$(setting "$t" DKMS 0)" = 1 ] && { dkms_stage "$out/shared/host"; break; }
	done
	args=("${vm_args[@]}" --smp "$smp" --nics "$nics" --module "$module")
	[ "$hooks" = 1 ] && args+=(--module "$hooks_module")
	alloc_ok=
	[ "$allocfail" = 1 ] && args+=(--alloc-failures-expected) && alloc_ok=1
	roles=$(echo ABCDEFGHIJKLMNOPQRSTUVWXYZ | cut -c1-"$guests" | sed 's/./& /g')
	echo "# $label: ${#gtests[@]} test(s) on $guests guests of $kver, logs in ${out#"$top"/}"
	"$here/run.sh" --kver "$kver" --guests "$guests" \
		--timeout $((total * slow)) --script "$here/batch-guest.sh" \
		--out "$out" --env "BATCH_TESTS=${items# }" \
		"${args[@]}" >"$out/run.log" 2>&1
	rc=$?
	for t in "${gtests[@]}"; do
		report "$out" "$t"
	done
	[ -z "$dkms_pid" ] || { wait "$dkms_pid"; dkms_pid=; }
	if [ $rc -eq 0 ]; then
		tap OK "$label: guests booted once for ${#gtests[@]} test(s), finished, console clean"
	else
		tap FAIL "$label: guests failed or console not clean"
		sed 's/^/# /' "$out/run.log"
	fi
done
totals
# shellcheck disable=SC2317 # the read-whole idiom's exit (see the top)
exit
}
