#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The mutation lane (make mutants): measure the VM selftests against
# small deliberate defects of the driver, one concern each, kept as
# patches beside this script (NN-name.patch).
#
#   tools/mutants/run.sh [--build-only] [--list] [--kver KVER] [NAME...]
#
# For each mutant (all by default; NAME is a patch's name without
# .patch, or a unique start of one, such as 03): the tracked files of the
# checkout are copied to build/mutants/NAME/src, the patch is applied
# there (git apply), the module is built for KVER (default
# IPOIB_KVER or 6.12.117+deb12-amd64; W=1, and a warning counts as a
# failed build; the test build, TEST_HOOKS=1, where the header says
# Hooks: 1 or a test needs it), and each of its Tests runs from this
# checkout with that module:
#   IPOIB_VM_TAG=mut-NAME selftests/T.sh \
#     --module build/mutants/NAME/src/build/KVER[-hooks]/ib_ipoib.ko
# The first test that fails a check kills the mutant, and the mutant's
# later tests do not run. The check is the first failed leaf of that
# test's subtest that passed on the unmutated tree: the first time a test
# fails a check, the same test runs once with the module built from an
# unpatched copy (build/mutants/baseline/). Checks are matched by name
# without the guests' prefix, numbers as 0, and the occurrence of the
# name in the test. Where every failed check failed there too, the test
# kills nothing; where the first such check was never reached there, the
# mutant is "unconfirmed". A survivor whose tests skipped checks says how
# many ("N checks skipped"). A mutant that does not apply or build is
# reported as such, not as killed; so is a test that failed without a
# failed check (its boot went wrong: "error"). The logs are in
# build/mutants/NAME/.
# At the end a table (mutant | concern | killed by | symmetric) is
# printed and written to build/mutants/table.txt (rewritten after each
# mutant, so an interrupted run keeps what it measured).
#   --build-only  apply and build only (no VM): does each mutant build?
#   --list        the mutants and their headers; nothing is built
#   --kver KVER   the kernel to build for (and to boot)
#   MUTANTS_JOBS  make -j for the builds (default: the number of CPUs)
# Exits 0 whatever the mutants did (it is a measurement), 2 on bad usage.
#
# A patch starts with comment lines, before its first "diff --git",
# that this script reads (git apply ignores them):
#   # SPDX-License-Identifier: GPL-2.0
#   # Concern: what the defect is about
#   # What: the defect, in one line
#   # Tests: selftests/T.sh [selftests/U.sh ...], in the order to run
#   # Hooks: 0 | 1        (1: the test build, make TEST_HOOKS=1)
#   # Symmetric: yes | no (yes: both ends of a test run the same code and
#   #                      may agree with each other; only an independent
#   #                      peer could tell)
#   # Note: ... (optional, and lines after it starting "#   ")
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kver=${IPOIB_KVER:-6.12.117+deb12-amd64}
jobs=${MUTANTS_JOBS:-$(nproc)}
build_only=
list=

usage() {
	sed -n 's/^#   tools\/mutants\/run.sh/usage: tools\/mutants\/run.sh/p' "$0"
}

while [ $# -gt 0 ]; do
	case $1 in
	--build-only) build_only=1; shift ;;
	--list) list=1; shift ;;
	--kver)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		kver=$2
		shift 2
		;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) break ;;
	esac
done

# the patches to run, in order
patches=()
if [ $# -eq 0 ]; then
	for p in "$here"/[0-9]*.patch; do
		[ -e "$p" ] && patches+=("$p")
	done
else
	for n in "$@"; do
		n=${n##*/}
		n=${n%.patch}
		if [ -e "$here/$n.patch" ]; then
			patches+=("$here/$n.patch")
			continue
		fi
		m=()
		for p in "$here/$n"*.patch; do
			[ -e "$p" ] && m+=("$p")
		done
		if [ ${#m[@]} -ne 1 ]; then
			echo "run.sh: ${#m[@]} mutants match '$n' (tools/mutants/*.patch)" >&2
			exit 2
		fi
		patches+=("${m[0]}")
	done
fi
[ ${#patches[@]} -gt 0 ] || { echo "run.sh: no mutants in $here" >&2; exit 2; }

# field PATCH KEY: the header's "# KEY: value", before the first diff
field() {
	sed -n "/^diff --git /q; s/^# *$2: *//p" "$1" | head -n1
}

name_of() {
	local n=${1##*/}
	echo "${n%.patch}"
}

if [ -n "$list" ]; then
	for p in "${patches[@]}"; do
		printf '%s\n  Concern: %s\n  What: %s\n  Tests: %s\n  Hooks: %s  Symmetric: %s\n' \
			"$(name_of "$p")" "$(field "$p" Concern)" "$(field "$p" What)" \
			"$(field "$p" Tests)" "$(field "$p" Hooks)" "$(field "$p" Symmetric)"
	done
	exit 0
fi

outdir=$top/build/mutants
mkdir -p "$outdir"
table=$outdir/table.txt
sep=$'\x1f'	# between the fields of a row
rows=()	# name, concern, verdict, symmetric

# write_table: the rows so far, as columns, into table.txt
write_table() {
	local r w1=6 w2=7 w3=9 a b c d
	for r in "${rows[@]}"; do
		IFS=$sep read -r a b c d <<<"$r"
		[ "${#a}" -le "$w1" ] || w1=${#a}
		[ "${#b}" -le "$w2" ] || w2=${#b}
		[ "${#c}" -le "$w3" ] || w3=${#c}
	done
	{
		echo "# mutation lane: $kver, $(date -u +%Y-%m-%dT%H:%MZ)," \
			"$(git -C "$top" rev-parse --short HEAD 2>/dev/null)$(
			[ -z "$(git -C "$top" status --porcelain --untracked-files=no 2>/dev/null)" ] ||
				echo '+changes')"
		printf '%-*s | %-*s | %-*s | %s\n' "$w1" mutant "$w2" concern \
			"$w3" "killed by" symmetric
		for r in "${rows[@]}"; do
			IFS=$sep read -r a b c d <<<"$r"
			printf '%-*s | %-*s | %-*s | %s\n' "$w1" "$a" "$w2" "$b" \
				"$w3" "$c" "$d"
		done
	} >"$table"
}

# copy_tree DST: the checkout's tracked files as they are now
copy_tree() {
	local f
	mkdir -p "$1"
	(
		cd "$top" || exit 1
		git ls-files -z | while IFS= read -r -d '' f; do
			# (a tracked file deleted in the work tree: not copied)
			[ -e "$f" ] && printf '%s\0' "$f"
		done | cpio -0pdm --quiet "$1"
	)
}

# leaves LOG: the checks of the test's subtest (batch.sh indents them by
# two spaces), one per line: "ok|fail|skip<TAB>KEY<TAB>DESC", where KEY is
# DESC without its guests' prefix and with each number as 0 (values a
# run measured), then "#K" for the K-th check of that KEY (names repeat
# within a test)
leaves() {
	awk '/^  (not )?ok [0-9]+ / {
		st = $1 == "not" ? "fail" : "ok"
		d = $0
		sub(/^  (not )?ok [0-9]+ /, "", d)
		if (d ~ / # SKIP/)
			st = "skip"
		k = d
		sub(/^[A-Z](,[A-Z])*: /, "", k)
		gsub(/[0-9]+/, "0", k)
		printf "%s\t%s#%d\t%s\n", st, k, ++n[k], d
	}' "$1"
}

# failed_leaves LOG: the descriptions of the failed checks
failed_leaves() {
	leaves "$1" | awk -F'\t' '$1 == "fail" { print $3 }'
}

# build_tree SRC HOOKS LOG: make the module in SRC (W=1 is the
# Makefile's; a warning counts as a failure); sets verdict on failure
build_tree() {
	if ! (cd "$1" && nice -n 19 make -s -j"$jobs" modules KVER="$kver" \
		${2:+TEST_HOOKS=1}) >"$3" 2>&1; then
		tail -n 20 "$3" | sed 's/^/#   /'
		verdict="build failed"
		return 1
	fi
	if grep -v 'Skipping BTF generation' "$3" | grep -q .; then
		sed 's/^/#   /' "$3"
		verdict="build warnings"
		return 1
	fi
	if [ ! -f "$1/build/$kver${2:+-hooks}/ib_ipoib.ko" ]; then
		verdict="build failed: no ib_ipoib.ko"
		return 1
	fi
}

# run_test T KO LOG TAG: one selftest with that module; its exit status
run_test() {
	(cd "$top" && IPOIB_KVER="$kver" IPOIB_VM_TAG="$4" \
		"./$1" --module "$2") >"$3" 2>&1
}

# baseline T HOOKS: sets base_leaves to a file with leaves() of T on the
# unmutated tree (build/mutants/baseline/T[-hooks].leaves; T runs once
# per lane run, the copy is built once per HOOKS); false if it cannot
declare -A base_done=()
base_leaves=
baseline() {
	local t=$1 hooks=$2 b=$outdir/baseline tn key
	tn=$(basename "$t" .sh)${hooks:+-hooks}
	key=$tn
	base_leaves=$b/$tn.leaves
	if [ -z "${base_done[$key]:-}" ]; then
		base_done[$key]=error
		if [ -z "${base_done[copy]:-}" ]; then
			rm -rf "$b"
			mkdir -p "$b"
			copy_tree "$b/src" >"$b/copy.log" 2>&1 || return 1
			base_done[copy]=1
		fi
		if [ -z "${base_done[build$hooks]:-}" ]; then
			echo "# baseline: building the unmutated tree${hooks:+ (TEST_HOOKS=1)}"
			build_tree "$b/src" "$hooks" "$b/build${hooks:+-hooks}.log" ||
				return 1
			base_done[build$hooks]=1
		fi
		echo "# baseline: $t on the unmutated tree (log: ${b#"$top"/}/$tn.log)"
		run_test "$t" "$b/src/build/$kver${hooks:+-hooks}/ib_ipoib.ko" \
			"$b/$tn.log" mut-baseline
		leaves "$b/$tn.log" >"$base_leaves"
		base_done[$key]=ok
	fi
	[ "${base_done[$key]}" = ok ]
}

# judge LOG: sets leaf to the first failed check of LOG that passed on
# the unmutated tree (a kill), else why not: "both" if every failed
# check failed there too, "unconfirmed: DESC" for the first that the
# baseline did not pass or fail (it never got there)
judge() {
	local st k d bst
	leaf=
	while IFS=$'\t' read -r st k d; do
		[ "$st" = fail ] || continue
		bst=$(awk -F'\t' -v k="$k" '$2 == k { print $1; exit }' "$base_leaves")
		case $bst in
		ok) leaf=$d; return ;;
		fail) ;;
		*) [ -n "$leaf" ] || leaf="unconfirmed: $d" ;;
		esac
	done < <(leaves "$1")
	[ -n "$leaf" ] || leaf=both
}

# run_mutant PATCH: sets verdict
verdict=
run_mutant() {
	local p=$1 name out src hooks t tn log rc leaf ko skips='' both='' passed=0 nskip=0
	local -a tests
	name=$(name_of "$p")
	out=$outdir/$name
	src=$out/src
	hooks=$(field "$p" Hooks)
	case $hooks in
	0) hooks= ;;
	1) ;;
	*) verdict="bad header: Hooks: '$hooks'"; return ;;
	esac
	read -ra tests <<<"$(field "$p" Tests)"
	if [ ${#tests[@]} -eq 0 ]; then
		verdict="bad header: no Tests"
		return
	fi
	for t in "${tests[@]}"; do
		if [ ! -f "$top/$t" ]; then
			verdict="bad header: no test $t"
			return
		fi
		grep -qx 'TEST_HOOKS=1' "$top/$t" && hooks=1
	done
	rm -rf "$out"
	mkdir -p "$out"
	echo "# $name: $(field "$p" What)"
	if ! copy_tree "$src" >"$out/copy.log" 2>&1; then
		verdict="error: cannot copy the tree (see ${out#"$top"/}/copy.log)"
		return
	fi
	# a repository of its own: git apply then patches this copy, not
	# the checkout the copy sits in
	git -C "$src" init -q
	if ! git -C "$src" apply "$p" >"$out/apply.log" 2>&1; then
		sed 's/^/#   /' "$out/apply.log"
		verdict="does not apply"
		return
	fi
	echo "# $name: building for $kver${hooks:+ (TEST_HOOKS=1)}"
	build_tree "$src" "$hooks" "$out/build.log" || return
	ko=$src/build/$kver${hooks:+-hooks}/ib_ipoib.ko
	if [ -n "$build_only" ]; then
		verdict="builds (not run)"
		return
	fi
	for t in "${tests[@]}"; do
		tn=$(basename "$t" .sh)
		log=$out/$tn.log
		echo "# $name: $t --module ${ko#"$top"/} (log: ${log#"$top"/})"
		run_test "$t" "$ko" "$log" "mut-$name"
		rc=$?
		nskip=$((nskip + $(leaves "$log" | grep -c '^skip')))
		if [ -n "$(failed_leaves "$log")" ]; then
			if ! baseline "$t" "$hooks"; then
				verdict="error: no baseline for $tn (see build/mutants/baseline/)"
				return
			fi
			judge "$log"
			case $leaf in
			both)
				# every failed check fails unmutated too
				both="$both $tn"
				continue
				;;
			unconfirmed:*)
				verdict="$tn: $leaf (the unmutated tree's run did not get there)"
				return
				;;
			esac
			verdict="$tn: $leaf"
			return
		fi
		case $rc in
		0) passed=$((passed + 1)) ;;
		4) skips="$skips $tn" ;;
		*)
			leaf=$(sed -n 's/^not ok [0-9][0-9]* //p' "$log" | head -n1)
			verdict="error: $tn: ${leaf:-exit $rc, no result} (see ${log#"$top"/})"
			return
			;;
		esac
	done
	if [ -n "$both" ]; then
		verdict="survived (failed only what fails unmutated too:$both)"
	elif [ "$passed" -eq 0 ]; then
		verdict="not run (skipped:$skips)"
	elif [ -n "$skips" ]; then
		verdict="survived (skipped:$skips)"
	else
		verdict="survived"
	fi
	[ "$nskip" -eq 0 ] || verdict="$verdict; $nskip checks skipped"
}

for p in "${patches[@]}"; do
	run_mutant "$p"
	echo "# $(name_of "$p"): $verdict"
	rows+=("$(name_of "$p")$sep$(field "$p" Concern)$sep$verdict$sep$(field "$p" Symmetric)")
	write_table
done
echo
cat "$table"
echo "# table written to ${table#"$top"/}"
exit 0
