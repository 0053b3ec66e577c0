#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-stage.sh KVER MODDIR OUT [KSRC]
#
# The host half of selftests/dkms.sh (batch.sh runs it for a test with
# DKMS=1, while the guests boot, with OUT in their /shared): Debian's dkms adds, builds and installs this checkout's
# package (dkms.conf) for kernel KVER, then removes it, with every tree it
# writes under OUT: its dkms tree, its source tree, and an install tree
# that is MODDIR (the kernel's /lib/modules/KVER) with symlinks for the
# kernel's own modules. depmod runs over that tree after the install and
# after the removal (dkms's own would index the host's /lib/modules, so
# it is told --no-depmod); OUT/installed and OUT/removed keep what the
# guest needs of each state: updates/ and the modules.* index files. The
# host's /lib/modules, /usr/src and /var/lib/dkms are not touched; the
# module signing key dkms makes is OUT's too.
# OUT/steps gets one "ok - ..." / "not ok - ..." line per step, which the
# guest reports; step N's output is in OUT/stepN.log. KSRC: the
# kernel's build tree (default MODDIR/build). Exits 0 iff every step did.
# shellcheck disable=SC2317 # functions run through step
set -u
kver=${1:?KVER} moddir=${2:?MODDIR} out=${3:?OUT} ksrc=${4:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
[ -n "$ver" ] || { echo "dkms-stage: no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }

mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
rm -rf "${out:?}"/*
src=$out/src/ib_ipoib-$ver
root=$out/root
tree=$root/lib/modules/$kver
mkdir -p "$src" "$out/dkms" "$tree" || exit 1
# the package as dkms add takes it from /usr/src: the module's sources
cp "$top"/*.c "$top"/*.h "$top/Kbuild" "$top/Kconfig" "$top/dkms.conf" "$src/" ||
	exit 1
for f in "$moddir"/*; do
	b=${f##*/}
	case $b in
	modules.order | modules.builtin | modules.builtin.modinfo) ;;
	modules.* | updates | source) continue ;;
	esac
	ln -s "$f" "$tree/$b"
done

export mok_signing_key=$out/mok.key mok_certificate=$out/mok.pub
opts=(--dkmstree "$out/dkms" --sourcetree "$out/src"
	--installtree "$root/lib/modules" -m ib_ipoib -v "$ver")
[ -n "$ksrc" ] && opts+=(--kernelsourcedir "$ksrc")
fails=0
n=0
step() {	# step NAME CMD...: run CMD, log it, one line in steps
	local name=$1 log
	shift
	n=$((n + 1))
	log=$out/step$n.log
	if "$@" >"$log" 2>&1; then
		echo "ok - host: $name" >>"$out/steps"
	else
		echo "not ok - host: $name (see ${log#"$top"/})" >>"$out/steps"
		fails=$((fails + 1))
	fi
}
# keep STATE: updates/ and the index of the install tree as it is now
keep() {
	mkdir -p "$out/$1" &&
		cp "$tree"/modules.* "$out/$1/" &&
		if [ -d "$tree/updates" ]; then cp -r "$tree/updates" "$out/$1/"; fi
}
status_is() {	# dkms status says STATE for KVER
	local st
	st=$(dkms status "${opts[@]}" -k "$kver")
	echo "$st"
	grep -q "^ib_ipoib/$ver, $kver, [^:]*: $1\$" <<<"$st"
}

step "dkms add ib_ipoib/$ver" dkms add "${opts[@]}"
step "dkms build for $kver" dkms build "${opts[@]}" -k "$kver"
step "dkms install for $kver" dkms install "${opts[@]}" -k "$kver" --no-depmod
step "dkms status: installed" status_is installed
step "depmod over the install tree" depmod -b "$root" "$kver"
step "the index has updates/dkms/ib_ipoib" \
	grep -q '^updates/dkms/ib_ipoib\.ko[.a-z]*:' "$tree/modules.dep"
step "keep the installed state" keep installed
step "dkms remove for $kver" dkms remove "${opts[@]}" -k "$kver" --no-depmod
step "dkms status: nothing for $kver" sh -c \
	"! dkms status ${opts[*]@Q} -k $kver | grep -q ."
step "depmod over the install tree, again" depmod -b "$root" "$kver"
step "the index has no updates/dkms/ib_ipoib" \
	sh -c "! grep -q '^updates/dkms/' '$tree/modules.dep'"
step "keep the removed state" keep removed
exit $((fails != 0))
