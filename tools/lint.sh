#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Lint: checkpatch --strict (from Debian's linux-source-6.12) over every C
# source, shellcheck over every shell script (*.sh and whatever starts
# with a sh or bash #! line; its options also in .shellcheckrc) and sparse
# (C=2) over the module for each kernel. Any finding fails.
# Usage: lint.sh [checkpatch | shellcheck | sparse KVER]...
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=$top/build/checkpatch
tarball=/usr/src/linux-source-6.12.tar.xz
kvers="6.12.117+deb12-amd64 6.1.0-56-amd64"

get_checkpatch() {
	[ -x "$cache/scripts/checkpatch.pl" ] && return 0
	if [ ! -f "$tarball" ]; then
		echo "lint: $tarball missing: apt-get install linux-source-6.12" >&2
		return 1
	fi
	mkdir -p "$cache"
	tar -xJf "$tarball" -C "$cache" --strip-components=1 \
		linux-source-6.12/scripts/checkpatch.pl \
		linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch
}

run_checkpatch() {
	local files out
	get_checkpatch
	files=$(cd "$top" && git ls-files -co --exclude-standard \
		'*.c' '*.h' | sort)
	# a checkpatch per core, a few files each
	out=$(cd "$top" && echo "$files" |
		xargs -P "$(nproc)" -n 8 "$cache/scripts/checkpatch.pl" \
			--strict --no-tree --terse --show-types --quiet -f 2>&1 |
		grep -v '^total: 0 errors, 0 warnings, 0 checks') || true
	if [ -n "$out" ]; then
		echo "$out"
		return 1
	fi
	echo "checkpatch --strict: $(echo "$files" | wc -w) files clean"
}

# shell_scripts: the scripts of the checkout, tracked or not yet (what
# .gitignore leaves out aside), one a line
shell_scripts() {
	local f line
	local shebang='^#![[:space:]]*(/usr)?/bin/(env[[:space:]]+)?(ba|da)?sh([[:space:]]|$)'
	(cd "$top" && git ls-files -co --exclude-standard) | sort |
	while IFS= read -r f; do
		[ -f "$top/$f" ] || continue	# deleted, not yet committed
		line=
		IFS= read -r line <"$top/$f" || true
		if [[ $f == *.sh || $line =~ $shebang ]]; then
			echo "$f"
		fi
	done
}

# run_shellcheck: following the files a script sources (-x), from the top
# of the tree (source= directives are relative to it) or beside the
# script; every severity, style included
run_shellcheck() {
	local files out
	if ! command -v shellcheck >/dev/null; then
		echo "lint: shellcheck missing: apt-get install shellcheck" >&2
		return 1
	fi
	mapfile -t files < <(shell_scripts)
	if out=$(cd "$top" && shellcheck -x -P SCRIPTDIR -S style -f gcc \
		"${files[@]}" 2>&1) && [ -z "$out" ]; then
		echo "shellcheck: ${#files[@]} scripts clean"
		return 0
	fi
	echo "${out:-shellcheck failed}"
	return 1
}

run_sparse() {
	local kver=$1 out
	out=$({ make -s -j"$(nproc)" -C "$top" modules KVER="$kver" C=2 &&
		make -s -j"$(nproc)" -C "$top/tools/softib" KVER="$kver" C=2; } 2>&1 |
		grep -v 'Skipping BTF generation') || true
	if [ -n "$out" ]; then
		echo "$out"
		return 1
	fi
	echo "sparse + W=1 ($kver, with tools/softib): clean"
}

if [ $# -eq 0 ]; then
	rc=0
	run_checkpatch || rc=1
	run_shellcheck || rc=1
	for k in $kvers; do
		run_sparse "$k" || rc=1
	done
	exit $rc
fi
while [ $# -gt 0 ]; do
	case $1 in
	checkpatch) run_checkpatch; shift ;;
	shellcheck) run_shellcheck; shift ;;
	sparse) run_sparse "$2"; shift 2 ;;
	*) echo "usage: $0 [checkpatch | shellcheck | sparse KVER]..." >&2; exit 2 ;;
	esac
done
