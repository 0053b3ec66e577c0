# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What counts as a kernel problem in a guest's log, shared by run.sh (whole
# boots) and batch.sh (each test of a shared boot). Source it; set
# alloc_ok=1 first where failed allocations are expected (fault injection).

# Kernel problems. Matched case-sensitively as extended regexps; "BUG" and
# "Oops" as whole words so that e.g. "DEBUG" does not count. The checkers
# of a debug kernel report through these too: KASAN ("BUG: KASAN:"),
# lockdep ("WARNING: possible circular locking ...", "BUG: sleeping
# function ..."), UBSAN, kmemleak, debugobjects, list and refcount debug.
bad_patterns=(
	'\bBUG\b'
	'WARNING:'
	'\bOops\b'
	'refcount_t:'
	'list_add corruption'
	'list_del corruption'
	'slab-out-of-bounds'
	'hung_task'
	'blocked for more than'
	'unregister_netdevice: waiting'
	'Kernel panic'
	'general protection fault'
	'Call Trace'
	'\bUBSAN:'
	'\bODEBUG:'
	'unreferenced object 0x'
	'suspected memory leak'
	'trying to register non-static key'
)

# kernel_log FILE: FILE, less the reports of failed allocations if they are
# expected (--alloc-failures-expected): from warn_alloc's first line to the
# end of its call trace.
kernel_log() {
	if [ -z "$alloc_ok" ]; then
		cat "$1"
		return
	fi
	awk '/(page allocation failure|vmalloc error): / { skip = 1 }
		!skip { print }
		skip && /<\/TASK>/ { skip = 0 }' "$1"
}

# scan FILE KIND: print "PATTERN<TAB>LINE" for the first bad line of FILE.
# KIND=console: only kernel lines count (they carry a printk timestamp);
# lines of the test script's own output, e.g. `#   ` check output that may
# quote dmesg, do not.
scan() {
	local file=$1 kind=$2 p line
	[ -r "$file" ] || return 1
	for p in "${bad_patterns[@]}"; do
		if [ "$kind" = console ]; then
			line=$(kernel_log "$file" | grep -aE '\[ *[0-9]+\.[0-9]+\]' |
				grep -avE '^#' | grep -aE -m1 -- "$p") || continue
		else
			line=$(kernel_log "$file" | grep -aE -m1 -- "$p") || continue
		fi
		printf '%s\t%s\n' "$p" "$(printf '%s' "$line" | tr -d '\r' | cut -c1-200)"
		return 0
	done
	return 1
}

# excerpt FILE: the kernel's report, from a few lines before the first bad
# line on (a KASAN or lockdep report starts with a line of '=' and its
# title), at most 100 lines.
excerpt() {
	local first p n
	first=
	for p in "${bad_patterns[@]}"; do
		n=$(kernel_log "$1" | grep -anE -- "$p" | grep -avE '^[0-9]+:#' |
			head -n1 | cut -d: -f1)
		[ -n "$n" ] || continue
		if [ -z "$first" ] || [ "$n" -lt "$first" ]; then
			first=$n
		fi
	done
	[ -n "$first" ] || return 0
	first=$((first > 3 ? first - 3 : 1))
	kernel_log "$1" | sed -n "$first,$((first + 99))p" | tr -d '\r'
}

