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
# subtest of its guests' checks (one leaf for a check every guest makes,
# "ROLE: ..." for one that only some make; skips as "# SKIP") ending with
# one for what no check owns (a guest that stopped, an exit status, the
# kernel log), and the test's result; a test that did not run because an
# earlier one stopped the guests, a skipped result; per boot, one result,
# failed only for what no test owns (see "How a shared boot is judged"
# below); the totals. A test whose prerequisites are missing here
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
# Tools first: a failed build fails the first boot; no test runs (fail_rest).
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
# fail_rest WHAT LOG: WHAT failed: the first boot's result says so, and
# every test and boot left is not run
fail_rest() {
	local t what="$1 failed"
	sed 's/^/# /' "$2"
	for t in "${tests[@]}"; do
		[ -n "${skip_of[$t]:-}" ] || tap SKIP "$(basename "$t" .sh)" "not run: $what"
	done
	for t in "${groups[@]}"; do
		if [ -n "$what" ]; then
			tap FAIL "boot $t: $what"
			what=
		else
			tap SKIP "boot $t" "not run: $1 failed"
		fi
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

# How a shared boot is judged (Documentation/testing.rst, "Shared
# boots"): each failure counts once, where it belongs.
#   - A check is one leaf. The same check (the same description, its n-th
#     time) made by every guest of a test is one leaf: ok if every guest
#     passed, else "not ok N A,B: DESC" naming the guests that failed (a
#     skip in some, with none failed: "ok N B: DESC # SKIP REASON"). A
#     check that only some guests make is a leaf of each ("A: DESC"); in a
#     test of one guest every leaf is "A: DESC".
#   - A wait for a peer (guest-lib.sh's wait_for) that failed because that
#     peer's script ended after failing, or a guest stopped, is no leaf:
#     the peer's failure is the one. A wait that timed out is a leaf.
#   - The test's last leaf, "guests finished, kernel logs clean", fails
#     for what no check owns: a guest that stopped during the test (a
#     panic, panic_on_warn's warning, a crash, or a hang until the boot's
#     time limit), an exit status without a failed check, a kernel problem
#     in the test's part of the kernel log (its dmesg, and its part of the
#     console, between batch-guest.sh's marks).
#   - The tests after one that stopped a guest did not run: one leaf
#     each, "ok N TEST # SKIP not run: ... stopped the guests".
#   - The boot's leaf fails only for what no test owns: run.sh failing
#     before the first test, a guest that stopped or gave up outside
#     every test, a kernel problem on the console outside every test or
#     in the kernel log after the last.
alloc_ok=
# shellcheck source=tools/vm/kernel-log.sh
. "$here/kernel-log.sh"

# problem FILE KIND: kernel-log.sh's scan, after one grep for any of its
# patterns (most files have none: a scan is a few processes a pattern)
any_bad=$(printf '%s|' "${bad_patterns[@]}")
any_bad=${any_bad%|}
problem() {
	[ -r "$1" ] && grep -qaE -- "$any_bad" "$1" && scan "$@"
}

# cut_console OUT ROLE: ROLE's console, cut at batch-guest.sh's marks:
# each test's part into shared/t/TEST/ROLE.console (a guest that stopped
# during the test: from its start to the end), the rest into
# console-ROLE.outside.log
cut_console() {
	[ -e "$1/console-$2.log" ] || return 0
	awk -v t="$1/shared/t" -v r="$2" -v rest="$1/console-$2.outside.log" '
	BEGIN { f = rest; printf "" >rest }
	match($0, /\[ *[0-9]+\.[0-9]+\] batch-guest: [^ ]+ begins/) {
		s = substr($0, RSTART, RLENGTH)
		sub(/.*batch-guest: /, "", s)
		sub(/ begins$/, "", s)
		if (f != rest) close(f)
		f = t "/" s "/" r ".console"
	}
	{ print >f }
	/\[ *[0-9]+\.[0-9]+\] batch-guest: [^ ]+ ends/ {
		if (f != rest) close(f)
		f = rest
	}' "$1/console-$2.log"
}

# stop_reason OUT ROLE WHERE: how guest ROLE of the boot in OUT ended
# without a result, from run.sh's verdict
stop_reason() {
	if sed -n "/^== $2: /,/^== /p" "$1/run.log" | grep -q 'reason: hung'; then
		echo "hung $3 until the boot's time limit"
	else
		echo "stopped $3 (panic or crash)"
	fi
}

# what a failed wait_for prints (guest-lib.sh): the peer and why
wait_re="^wait for ([A-Z]+)\.[^ ]+ \((aborted: .*|[A-Z]+'s script ended without it|timeout [0-9]+s)\)$"
skip_re='^(.*) # [Ss][Kk][Ii][Pp]( (.*))?$'

# join SEP WORD...: the words with SEP between them
join() {
	local sep=$1 w out=$2
	shift 2
	for w in "$@"; do
		out=$out$sep$w
	done
	printf '%s\n' "$out"
}

# report OUT TEST: KTAP of one test of a finished boot: the subtest of
# its checks, then its result. Returns 1, printing nothing, if no guest
# started it. Sets stopper to TEST if a guest stopped during it.
stopper=
report() {
	local out=$1 name r rr f line i j k d st why m secs=0 s bad=0
	local problems=() notes=() sub=() ran=() all=() fl=() sk=() ws=()
	local -A stopped=() nostart=() own=() nres=() rst=() rdesc=() rwhy=()
	local -A demoted=() idx=() nth=() seen=() anyfail=()
	name=$(basename "$2" .sh)
	for r in $roles; do
		f=$out/shared/t/$name/$r
		if [ ! -e "$f.out" ]; then
			nostart[$r]=1
			continue
		fi
		ran+=("$r")
		[ -e "$f.rc" ] || stopped[$r]=1
		i=0
		while IFS= read -r line; do
			case $line in
			"ok - "*) d=${line#ok - } st=ok why= ;;
			"not ok - "*) d=${line#not ok - } st=fail why= ;;
			*) continue ;;
			esac
			if [ $st = ok ] && [[ $d =~ $skip_re ]]; then
				d=${BASH_REMATCH[1]} st=skip why=${BASH_REMATCH[3]:-skipped}
			fi
			rst[$r:$i]=$st rdesc[$r:$i]=$d rwhy[$r:$i]=$why
			i=$((i + 1))
		done <"$f.out"
		nres[$r]=$i
	done
	[ ${#ran[@]} -gt 0 ] || return 1

	# own[R]: R failed by itself (stopped, did not start, a failed check
	# other than a wait, an exit status without a failed check)
	for r in $roles; do
		f=$out/shared/t/$name/$r
		if [ -n "${stopped[$r]:-}${nostart[$r]:-}" ]; then
			own[$r]=1
			continue
		fi
		for ((i = 0; i < nres[$r]; i++)); do
			[ "${rst[$r:$i]}" = fail ] || continue
			anyfail[$r]=1
			[[ ${rdesc[$r:$i]} =~ $wait_re ]] || own[$r]=1
		done
		[ -n "${anyfail[$r]:-}" ] || [ "$(cat "$f.rc")" = 0 ] || own[$r]=1
	done
	# a wait that failed because the peer failed first is not counted:
	# the peer's script ended, having failed, or a guest stopped (a
	# timeout is the waiter's own failure: checks do not end a script)
	for r in "${ran[@]}"; do
		for ((i = 0; i < nres[$r]; i++)); do
			[ "${rst[$r:$i]}" = fail ] || continue
			[[ ${rdesc[$r:$i]} =~ $wait_re ]] || continue
			if { [[ ${BASH_REMATCH[2]} == *"script ended without it" ]] &&
				[ -n "${own[${BASH_REMATCH[1]}]:-}" ]; } ||
				{ [[ ${BASH_REMATCH[2]} == aborted:* ]] &&
					[ ${#stopped[@]} -gt 0 ]; }; then
				demoted[$r:$i]=1
				notes+=("$r: '${rdesc[$r:$i]}' not counted: ${BASH_REMATCH[1]} failed first")
			fi
		done
	done
	# idx[R|K|DESC]: where R made check DESC for the K-th time
	for r in "${ran[@]}"; do
		for ((i = 0; i < nres[$r]; i++)); do
			[ -z "${demoted[$r:$i]:-}" ] || continue
			d=${rdesc[$r:$i]}
			k="$r|$d"
			nth[$k]=$((${nth[$k]:-0} + 1))
			k="$r|${nth[$k]}|$d"
			idx[$k]=$i
		done
	done
	read -ra all <<<"$roles"
	for r in "${ran[@]}"; do
		for ((i = 0; i < nres[$r]; i++)); do
			[ -z "${demoted[$r:$i]:-}" ] || continue
			d=${rdesc[$r:$i]}
			k="$r|$d"
			seen[$k]=$((${seen[$k]:-0} + 1))
			k=${seen[$k]}
			# made by every guest of a test of two or more?
			m=
			[ ${#all[@]} -lt 2 ] || m=1
			for rr in "${all[@]}"; do
				[ -n "${idx[$rr|$k|$d]+x}" ] || m=
			done
			if [ -z "$m" ]; then
				case ${rst[$r:$i]} in
				ok) sub+=("ok $r: $d") ;;
				skip) sub+=("ok $r: $d # SKIP ${rwhy[$r:$i]}") ;;
				*) sub+=("not ok $r: $d"); bad=1 ;;
				esac
				continue
			fi
			# one leaf, where the first guest made it
			[ "$r" = "${all[0]}" ] || continue
			fl=() sk=() ws=() why=
			for rr in "${all[@]}"; do
				j=${idx[$rr|$k|$d]}
				case ${rst[$rr:$j]} in
				fail) fl+=("$rr") ;;
				skip)
					sk+=("$rr")
					ws+=("$rr: ${rwhy[$rr:$j]}")
					# one reason for all, or each guest's
					[ ${#sk[@]} -eq 1 ] && why=${rwhy[$rr:$j]}
					[ "$why" = "${rwhy[$rr:$j]}" ] || why=-
					;;
				esac
			done
			if [ ${#fl[@]} -gt 0 ]; then
				sub+=("not ok $(join , "${fl[@]}"): $d")
				bad=1
			elif [ ${#sk[@]} -gt 0 ]; then
				[ "$why" != - ] || why=$(join '; ' "${ws[@]}")
				if [ ${#sk[@]} -eq ${#all[@]} ]; then
					sub+=("ok $d # SKIP $why")
				else
					sub+=("ok $(join , "${sk[@]}"): $d # SKIP $why")
				fi
			else
				sub+=("ok $d")
			fi
		done
	done

	for r in $roles; do
		f=$out/shared/t/$name/$r
		if [ -n "${nostart[$r]:-}" ]; then
			problems+=("$r: did not start the test")
			continue
		fi
		if [ -n "${stopped[$r]:-}" ]; then
			stopper=${stopper:-$name}
			if m=$(problem "$f.console" console); then
				problems+=("$r: $(stop_reason "$out" "$r" "during the test"), its console shows '${m%%	*}': ${m#*	}")
			else
				problems+=("$r: $(stop_reason "$out" "$r" "during the test"), see console-$r.log")
			fi
		else
			# (a failed check, its exit status: counted once)
			[ -n "${anyfail[$r]:-}" ] || [ "$(cat "$f.rc")" = 0 ] ||
				problems+=("$r: exit status $(cat "$f.rc")")
			if m=$(problem "$f.dmesg" dmesg); then
				problems+=("$r: kernel log matches '${m%%	*}': ${m#*	}")
			elif m=$(problem "$f.console" console); then
				problems+=("$r: console matches '${m%%	*}': ${m#*	}")
			fi
		fi
		s=$(cat "$f.time" 2>/dev/null) && [ "$s" -gt "$secs" ] && secs=$s
	done
	if [ ${#problems[@]} -eq 0 ]; then
		sub+=("ok guests finished, kernel logs clean ($secs s)")
	else
		line=$(printf '%s; ' "${problems[@]}")
		sub+=("not ok guests failed or kernel logs not clean: ${line%; }")
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
		for m in "${notes[@]}"; do
			echo "#   $m"
		done
		return 0
	fi
	tap FAIL "$name"
	for m in "${problems[@]}" "${notes[@]}"; do
		echo "#   $m"
	done
	for r in $roles; do
		f=$out/shared/t/$name/$r
		[ -e "$f.out" ] && sed "s|^|# $name: $r: |" "$f.out"
		if [ -e "$f.dmesg" ] && problem "$f.dmesg" dmesg >/dev/null; then
			excerpt "$f.dmesg" | sed "s|^|# $name: $r: dmesg: |"
		elif [ -e "$f.console" ] && problem "$f.console" console >/dev/null; then
			excerpt "$f.console" | sed "s|^|# $name: $r: console: |"
		elif [ -n "${stopped[$r]:-}" ] && [ -e "$f.console" ]; then
			tail -n 20 "$f.console" | tr -d '\r' |
				sed "s|^|# $name: $r: console: |"
		fi
	done
	return 0
}

# boot_problems OUT RC: what failed in the boot in OUT (run.sh's exit
# status RC) that no test owns, one a line
boot_problems() {
	local out=$1 rc=$2 r m
	if [ "$rc" -gt 1 ]; then
		echo "run.sh failed (exit $rc)"
		return
	fi
	for r in $roles; do
		if m=$(problem "$out/console-$r.outside.log" console); then
			echo "$r: console outside the tests matches '${m%%	*}': ${m#*	}"
		fi
		if m=$(problem "$out/shared/$r.dmesg" dmesg); then
			echo "$r: kernel log after the last test matches '${m%%	*}': ${m#*	}"
		fi
		# a guest that stopped or gave up during a test: that test's
		if [ ! -e "$out/shared/$r.rc" ]; then
			[ -n "$stopper" ] && [ ! -e "$out/shared/t/$stopper/$r.rc" ] ||
				echo "$r: $(stop_reason "$out" "$r" "outside the tests")"
		elif [ "$(cat "$out/shared/$r.rc")" != 0 ] && [ -z "$stopper" ]; then
			echo "$r: exit status $(cat "$out/shared/$r.rc")$(grep -a -m1 -E '^(batch: .*stopping|guest-init: FATAL)' "$out/shared/$r.out" 2>/dev/null | sed 's/^/: /')"
		fi
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
	for r in $roles; do
		cut_console "$out" "$r"
	done
	stopper=
	unrun=
	fails0=$fails
	for t in "${gtests[@]}"; do
		report "$out" "$t" && continue
		if [ -n "$stopper" ]; then
			tap SKIP "$(basename "$t" .sh)" "not run: $stopper stopped the guests"
		else
			tap SKIP "$(basename "$t" .sh)" "not run: the boot ended before it (see $label's result)"
			unrun=${unrun:-$(basename "$t" .sh)}
		fi
	done
	[ -z "$dkms_pid" ] || { wait "$dkms_pid"; dkms_pid=; }
	mapfile -t bp < <(boot_problems "$out" "$rc")
	[ -z "$unrun" ] || bp+=("the guests ended before $unrun")
	# run.sh failed where neither a test nor the above shows why
	[ $rc -eq 0 ] || [ $fails -gt "$fails0" ] || [ ${#bp[@]} -gt 0 ] ||
		bp=("run.sh failed (exit $rc), for a reason no test shows: see run.log")
	if [ ${#bp[@]} -eq 0 ]; then
		tap OK "$label: guests booted once for ${#gtests[@]} test(s), clean outside the tests"
	else
		tap FAIL "$label: the boot failed outside its tests: $(join '; ' "${bp[@]}")"
		sed 's/^/# /' "$out/run.log"
		for r in $roles; do
			problem "$out/console-$r.outside.log" console >/dev/null &&
				excerpt "$out/console-$r.outside.log" |
					sed "s|^|# $label: $r: console: |"
		done
	fi
done
totals
# shellcheck disable=SC2317 # the read-whole idiom's exit (see the top)
exit
}
