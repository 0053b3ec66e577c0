# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Test counting shared by tools/check.sh (make check) and
# tools/check-debug.sh (make check-debug). Source it after setting
# CHECK_LOGS (a directory for one log per test); then call step / tap for
# each test and check_summary NAME at the end, which prints
# "N passed, N failed" and returns non-zero on any failure.

passed=0
failed=0
check_start=$(date +%s)

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
	t0=$(date +%s)
	shift
	log=$(check_log_name "$name")
	"$@" >"$log" 2>&1
	record "$name" $? "$log"
	took "$name" "$t0"
}

# tap NAME CMD...: every TAP result line of CMD counts as a test; CMD
# failing without a failed TAP line is one more failure.
tap() {
	local name=$1 log rc n0=$failed line t0
	t0=$(date +%s)
	shift
	log=$(check_log_name "$name")
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
	took "$name" "$t0"
}

# check_summary WHAT: the closing lines; status 0 iff nothing failed
check_summary() {
	echo "# $1 took $(($(date +%s) - check_start)) s; logs in ${CHECK_LOGS#"$PWD"/}/"
	echo "$passed passed, $failed failed"
	[ $failed -eq 0 ]
}
