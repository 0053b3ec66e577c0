# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Test counting shared by tools/check.sh (make check), check-debug.sh and
# coverage.sh. Source it after setting CHECK_LOGS (a directory for one log
# per test); call check_begin N (N: the top-level tests to come), then
# step / tap / record for each, and check_summary NAME at the end.
#
# The output is KTAP (Documentation/dev-tools/ktap.rst): the version line
# and the plan, then one result per top-level test; a tap test's own
# results (a VM batch's checks, the unit tests) come first, as a subtest
# indented by two spaces. "N passed, N failed" counts the leaves: each
# step, and each result of a tap test, not the tap test's summary line; a
# leaf of a subtest of the tap test's own (a VM selftest of a batch) is
# named after it ("SUBTEST: DESC"). A leaf marked "# SKIP" counts as
# skipped, and as failed where every prerequisite must be present
# (CHECK_SKIP_FAILS=1: CI, which installs them all with tools/deps.sh),
# but for a test that did not run because another failed ("# SKIP not
# run: ..."): that failure is counted already.

passed=0
failed=0
skipped=0
not_run=0
n_top=0
counting=
check_start=$(date +%s)

check_begin() {	# check_begin N
	echo "KTAP version 1"
	echo "1..$1"
}

# check_count FUNC: the number of top-level tests FUNC would run (it runs
# with $counting set: step, tap, record and tap_report only count, and
# FUNC must not do more than call them); run it as $(check_count FUNC)
check_count() {
	counting=1
	"$@" >/dev/null
	echo "$n_top"
}

# leaf RC DESC [SKIP-REASON]: count one leaf
leaf() {
	if [ -n "${3:-}" ]; then
		skipped=$((skipped + 1))
		[[ $3 != "not run:"* ]] || not_run=$((not_run + 1))
	elif [ "$1" -eq 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
}

# record NAME RC [LOG]: a top-level test that is a leaf
record() {
	n_top=$((n_top + 1))
	[ -z "$counting" ] || return 0
	leaf "$2" "$1"
	if [ "$2" -eq 0 ]; then
		echo "ok $n_top $1"
	else
		echo "not ok $n_top $1"
		[ -n "${3:-}" ] && tail -n 40 "$3" | sed 's/^/#   /'
	fi
}

check_log_name() {	# check_log_name NAME: the log file of test NAME
	echo "$CHECK_LOGS/$(echo "$1" | tr -c 'a-zA-Z0-9._-' '_').log"
}

# took NAME SINCE: a comment line with the seconds NAME took (where a
# run's time goes, in CI's output too)
took() {
	echo "# $1: $(($(date +%s) - $2)) s"
}

# step NAME CMD...: one test, passed iff CMD exits 0
step() {
	local name=$1 log t0
	[ -z "$counting" ] || { n_top=$((n_top + 1)); return 0; }
	t0=$(date +%s)
	shift
	log=$(check_log_name "$name")
	"$@" >"$log" 2>&1
	record "$name" $? "$log"
	took "$name" "$t0"
}

# tap NAME CMD...: CMD prints TAP or KTAP; each of its results that is a
# leaf is a subtest of NAME; CMD failing without a failed result is one
# more, failed.
tap() {
	local name=$1 log rc t0
	[ -z "$counting" ] || { n_top=$((n_top + 1)); return 0; }
	t0=$(date +%s)
	shift
	log=$(check_log_name "$name")
	"$@" >"$log" 2>&1
	rc=$?
	tap_report "$name" "$log" "$rc" "$t0"
}

# tap_leaves LOG: the leaf results of a TAP/KTAP log, one per line as
# "ok|not ok<TAB>DESC<TAB>SKIP-REASON": every result of a nested block
# (its DESC after the block's "# Subtest:" name, if it has one), and each
# top-level one that does not close a block (its summary)
tap_leaves() {
	awk '
	/^ +# Subtest: / { name = $0; sub(/^ +# Subtest: /, "", name); next }
	match($0, /^ *(not )?ok( [0-9]+)?( -)? /) {
		ind = match($0, /[^ ]/) - 1
		line = substr($0, ind + 1)
		if (ind == 0 && nested) { nested = 0; name = ""; next }
		if (ind > 0) nested = 1
		st = line ~ /^not ok/ ? "not ok" : "ok"
		sub(/^(not )?ok( [0-9]+)?( -)? /, "", line)
		skip = ""
		if (match(line, / # [Ss][Kk][Ii][Pp]( |$)/)) {
			skip = substr(line, RSTART + 8)
			if (skip == "") skip = "skipped"
			line = substr(line, 1, RSTART - 1)
		}
		if (ind > 0 && name != "") line = name ": " line
		printf "%s\t%s\t%s\n", st, line, skip
	}' "$1"
}

# tap_report NAME LOG RC T0: the subtest of tap NAME from its log
tap_report() {
	local name=$1 log=$2 rc=$3 t0=$4 st desc skip n=0 bad=0 sub=""
	[ -z "$counting" ] || { n_top=$((n_top + 1)); return 0; }
	while IFS=$'\t' read -r st desc skip; do
		n=$((n + 1))
		if [ "$st" = ok ]; then
			leaf 0 "$desc" "$skip"
		else
			leaf 1 "$desc"
			bad=$((bad + 1))
		fi
		sub+="  $st $n $desc${skip:+ # SKIP $skip}"$'\n'
	done < <(tap_leaves "$log")
	if [ "$rc" -eq 4 ] && [ $bad -eq 0 ]; then
		# kselftest's exit status for "nothing ran: skipped"
		n=$((n + 1))
		leaf 0 "$name" "exit 4"
		sub+="  ok $n $name # SKIP nothing ran (exit 4)"$'\n'
	elif [ "$rc" -ne 0 ] && [ $bad -eq 0 ]; then
		n=$((n + 1))
		leaf 1 "$name (exit $rc)"
		bad=1
		sub+="  not ok $n $name (exit $rc)"$'\n'
	fi
	echo "  # Subtest: $name"
	echo "  KTAP version 1"
	echo "  1..$n"
	printf '%s' "$sub"
	n_top=$((n_top + 1))
	if [ $bad -eq 0 ]; then
		echo "ok $n_top $name"
	else
		echo "not ok $n_top $name"
		tail -n 60 "$log" | sed 's/^/#   /'
	fi
	took "$name" "$t0"
}

# check_summary WHAT: the closing lines; status 0 iff nothing failed
check_summary() {
	local fails=$failed missing=$((skipped - not_run))
	echo "# $1 took $(($(date +%s) - check_start)) s; logs in ${CHECK_LOGS#"$PWD"/}/"
	echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
	[ $not_run -eq 0 ] ||
		echo "# $not_run skipped: not run, after a failure counted above"
	if [ $missing -gt 0 ] && [ -n "${CHECK_SKIP_FAILS:-}" ]; then
		echo "# $missing skipped, counted as failed: every prerequisite should be installed here (CHECK_SKIP_FAILS)"
		fails=$((fails + missing))
	elif [ $missing -gt 0 ]; then
		echo "# $missing skipped (a program or a kernel feature a test needs is missing: tools/deps.sh installs the programs)"
	fi
	echo "$passed passed, $fails failed"
	[ $fails -eq 0 ]
}
