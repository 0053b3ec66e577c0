#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh --kver KVER --guests N --script PATH [--timeout SECONDS] [--out DIR]
#        [--module KO] [--no-module] [--env NAME=VALUE]...
#        [--kernel IMAGE --modroot DIR] [--append ARGS] [--machine TYPE]
#        [--smp N] [--nics N] [--alloc-failures-expected]
#
# Boot N (1 to 26) QEMU/TCG guests (roles A, B, C, ...) of /boot/vmlinuz-KVER on
# one virtual Ethernet segment, run `bash PATH` in each of them (see
# guest-init.sh and guest-lib.sh) and judge the results. The host root is the
# guests' root (read-only 9p plus a tmpfs overlay); OUT/shared is mounted
# read-write at /shared in every guest.
#
#   --module KO   install KO as /lib/modules/KVER/updates/<name> in every guest
#                 (default: build/KVER/ib_ipoib.ko of this repo, if it exists)
#   --no-module   install no module
#   --env N=V     export N=V in the guest script's environment (repeatable)
#   --out DIR     results (default: a new dir under build/vm/runs/); the
#                 guests' /shared is DIR/shared, and /shared/host is left
#                 to the caller
#   --timeout S   for the whole run (default 300)
#   --kernel IMAGE  boot IMAGE instead of /boot/vmlinuz-KVER (a kernel built
#                 here, e.g. the debug kernel of tools/debug-kernel/build.sh)
#   --modroot DIR the modules of that kernel are DIR/lib/modules/KVER
#                 (modules_install INSTALL_MOD_PATH=DIR); the guests see
#                 them at /lib/modules/KVER
#   --append ARGS more kernel command line
#   --machine T   QEMU machine type (default q35)
#   --smp N       vCPUs per guest (default 1; races need 2 to interleave)
#   --nics N      NICs per guest, 1 (default) or 2: eth1 on the same segment
#                 as eth0 (then a vde_switch links even two guests), down
#                 until a test brings it up
#   --alloc-failures-expected  the kernel's report of a failed allocation
#                 (warn_alloc: "page allocation failure", "vmalloc error",
#                 with its call trace) is no problem: fault injection
#
# A guest passes iff its script exited 0 and neither its console nor its
# dmesg shows a kernel problem (see bad_patterns below). Exit status: 0 if
# every guest passed, 1 if not, 2 on a usage or setup error. Nothing here
# loads a module on the host or touches the host's network: the guests are
# linked by a QEMU socket pair on 127.0.0.1 (2 guests) or a vde_switch on a
# unix socket (3 or more).
# The whole script is read before it runs: editing it meanwhile is safe.
{
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() {
	sed -n '4,7p' "$0" | sed 's/^# //' >&2
	exit 2
}
die() {
	echo "run.sh: $*" >&2
	exit 2
}

kver=
nguests=
script=
timeout=300
out=
module=
module_set=
kernel=
modroot=
append=
machine=q35
smp=1
nics=1
alloc_ok=
envs=()
while [ $# -gt 0 ]; do
	case $1 in
	--kver) kver=${2:?}; shift 2 ;;
	--guests) nguests=${2:?}; shift 2 ;;
	--script) script=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--module) module=${2:?}; module_set=1; shift 2 ;;
	--no-module) module=; module_set=1; shift ;;
	--env) envs+=("${2:?}"); shift 2 ;;
	--kernel) kernel=${2:?}; shift 2 ;;
	--modroot) modroot=${2:?}; shift 2 ;;
	--append) append=${2:?}; shift 2 ;;
	--machine) machine=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--nics) nics=${2:?}; shift 2 ;;
	--alloc-failures-expected) alloc_ok=1; shift ;;
	-h | --help) usage ;;
	*) echo "run.sh: unknown argument $1" >&2; usage ;;
	esac
done
if [ -z "$kver" ] || [ -z "$nguests" ] || [ -z "$script" ]; then
	usage
fi
case $nguests in '' | *[!0-9]*) die "--guests: not a number" ;; esac
if [ "$nguests" -lt 1 ] || [ "$nguests" -gt 26 ]; then
	die "--guests must be 1..26"
fi
case $timeout in '' | *[!0-9]*) die "--timeout: not a number" ;; esac
case $smp in [1-4]) ;; *) die "--smp must be 1..4" ;; esac
case $nics in [12]) ;; *) die "--nics must be 1 or 2" ;; esac
kernel=${kernel:-/boot/vmlinuz-$kver}
[ -r "$kernel" ] || die "no $kernel"
kernel=$(readlink -f "$kernel")
if [ -n "$modroot" ]; then
	modroot=$(readlink -f "$modroot")
fi
moddir=$modroot/lib/modules/$kver
[ -d "$moddir" ] || die "no $moddir"
[ -r "$script" ] || die "no script $script"
script=$(readlink -f "$script")
if [ -z "$module_set" ] && [ -e "$repo/build/$kver/ib_ipoib.ko" ]; then
	module=$repo/build/$kver/ib_ipoib.ko
fi
if [ -n "$module" ]; then
	[ -r "$module" ] || die "no module $module"
	module=$(readlink -f "$module")
	case $module in *.ko) ;; *) die "--module must be a .ko file" ;; esac
fi
for e in "${envs[@]}"; do
	case $e in [A-Za-z_]*=*) ;; *) die "--env wants NAME=VALUE, got '$e'" ;; esac
done
for tool in qemu-system-x86_64 depmod modprobe cpio ss; do
	command -v "$tool" >/dev/null || die "$tool not found (tools/deps.sh)"
done
{ [ "$nguests" = 2 ] && [ "$nics" = 1 ]; } || command -v vde_switch >/dev/null ||
	die "vde_switch not found (vde2)"

vmdir=$repo/build/vm
mkdir -p "$vmdir"
# A vCPU per core: this machine has two, and guests are CPU-bound under
# TCG (they time out when runs overlap more). A run of one vCPU takes one
# of two machine-wide slots, whichever checkout it comes from; a run of
# more takes both, in order (so two such runs cannot deadlock). The locks
# are inherited by QEMU and vde_switch, so they are held until the last of
# them is gone.
lock=${IPOIB_VM_LOCK:-/tmp/ib_ipoib-vm.lock}
exec 8>>"$lock.1" 9>>"$lock"
if [ $((nguests * smp)) -gt 1 ]; then
	if ! flock -n 9 || ! flock -n 8; then
		echo "run.sh: waiting for both slots ($lock, $lock.1)"
		flock 9 && flock 8
	fi
else
	waited=
	while :; do
		# keep the slot taken, let go of the other
		if flock -n 9; then exec 8>&-; break; fi
		if flock -n 8; then exec 9>&-; break; fi
		[ -n "$waited" ] || echo "run.sh: waiting for a slot ($lock, $lock.1)"
		waited=1
		sleep 0.5	# the poll
	done
fi
if [ -z "$out" ]; then
	mkdir -p "$vmdir/runs"
	out=$(mktemp -d "$vmdir/runs/$(date +%Y%m%d-%H%M%S)-$kver-XXXX")
fi
mkdir -p "$out"
out=$(readlink -f "$out")
# These paths go on QEMU's and the kernel's command lines.
case "$out$script$module$kernel$modroot" in
*[[:space:],]*) die "paths must not contain spaces or commas" ;;
esac
# A fresh shared directory and fresh logs for this run; OUT/shared/host
# is the caller's, who may be writing there for the guests (batch.sh).
if [ -d "$out/shared" ]; then
	find "$out/shared" -mindepth 1 -maxdepth 1 ! -name host -exec rm -rf {} +
fi
rm -f "$out"/console-*.log "$out"/qemu-*.log
mkdir -p "$out/shared/flags"
letters=ABCDEFGHIJKLMNOPQRSTUVWXYZ
roles=
for i in $(seq 0 $((nguests - 1))); do
	roles="$roles ${letters:i:1}"
done
roles=${roles# }

t_start=$(date +%s.%N)
elapsed() {
	awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t_start }"
}

# The caches below are shared by the runs of a kernel, which may overlap
# now (one slot each): one run at a time builds or reads them into place.
exec 7>>"$vmdir/cache.lock"
flock 7

# --- initramfs, cached by kernel version and content hash -----------------
ihash=$( {
	cat "$here/initramfs-init.sh" "$here/mkinitramfs.sh"
	echo "$moddir"
	stat -c '%s %Y' /bin/busybox "$moddir/modules.dep"
} | sha256sum | cut -c1-16)
initrd=$vmdir/initramfs-$kver-$ihash.cpio
if [ ! -e "$initrd" ]; then
	echo "run.sh: building $initrd"
	rm -f "$vmdir/initramfs-$kver-"*.cpio
	"$here/mkinitramfs.sh" "$kver" "$initrd" ${modroot:+"$modroot"} ||
		die "mkinitramfs failed"
fi

# --- depmod on the host, over a staging tree -------------------------------
# Equivalent to copying the module to /lib/modules/KVER/updates/ and running
# `depmod -a KVER` in the guest (which reads every module of the kernel over
# 9p under TCG), without touching the host's /lib/modules: the staging tree
# links to the host's modules; only the new index files are real, and the
# guest copies them over its (overlay) /lib/modules/KVER.
depmod_dir=
if [ -n "$module" ]; then
	mhash=$( {
		sha256sum "$module"
		echo "$moddir"
		stat -c '%s %Y' "$moddir/modules.dep"
	} | sha256sum | cut -c1-16)
	stage=$vmdir/depmod/$kver-$mhash
	depmod_dir=$stage/lib/modules/$kver
	if [ ! -e "$stage/done" ]; then
		rm -rf "$stage"
		mkdir -p "$depmod_dir/updates"
		for f in "$moddir"/*; do
			b=${f##*/}
			case $b in
			modules.order | modules.builtin | modules.builtin.modinfo) ;;
			modules.* | updates | build | source) continue ;;
			esac
			ln -s "$f" "$depmod_dir/$b"
		done
		if [ -d "$moddir/updates" ]; then
			for f in "$moddir/updates"/*; do
				[ -e "$f" ] && ln -s "$f" "$depmod_dir/updates/"
			done
		fi
		cp "$module" "$depmod_dir/updates/"
		t0=$(date +%s.%N)
		depmod -b "$stage" "$kver" || die "depmod failed"
		echo "run.sh: host depmod for $kver took $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s"
		grep -q "^updates/${module##*/}:" "$depmod_dir/modules.dep" ||
			die "depmod did not index updates/${module##*/}"
		: >"$stage/done"
	fi
fi

flock -u 7
exec 7>&-

# --- guest configuration -------------------------------------------------
conf=$out/guest.conf
{
	echo "# generated by run.sh"
	printf 'VM_SCRIPT=%q\n' "$script"
	printf 'VM_ROLES=%q\n' "$roles"
	printf 'VM_KVER=%q\n' "$kver"
	printf 'VM_MODULE=%q\n' "$module"
	printf 'VM_DEPMOD=%q\n' "$depmod_dir"
	printf 'VM_MODDIR=%q\n' "${modroot:+$moddir}"
	printf 'VM_CWD=%q\n' "$repo"
	if [ ${#envs[@]} -gt 0 ]; then
		printf 'VM_ENV=%q\n' "$out/guest.env"
	fi
} >"$conf"
if [ ${#envs[@]} -gt 0 ]; then
	for e in "${envs[@]}"; do
		printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"
	done >"$out/guest.env"
fi

# --- cleanup --------------------------------------------------------------
declare -A qpid=()
vde_pid=
netdir=
cleanup() {
	local r
	for r in "${!qpid[@]}"; do
		kill "${qpid[$r]}" 2>/dev/null || true
	done
	for r in "${!qpid[@]}"; do
		wait "${qpid[$r]}" 2>/dev/null || true
	done
	if [ -n "$vde_pid" ]; then
		kill "$vde_pid" 2>/dev/null || true
	fi
	[ -z "$netdir" ] || rm -rf "$netdir"
}
trap cleanup EXIT
trap 'echo "run.sh: interrupted" >&2; exit 130' INT TERM HUP

# --- start the guests -----------------------------------------------------
cmdline_base="console=ttyS0 panic_on_warn=1 oops=panic panic=-1 slub_debug=FZPU"
cmdline_base="$cmdline_base ipoib_vm.init=$here/guest-init.sh ipoib_vm.conf=$conf"
cmdline_base="$cmdline_base${append:+ $append}"

# start_guest ROLE INDEX NETDEV [NETDEV2]: start QEMU in the background;
# NETDEV2 (id n1) is eth1's.
start_guest() {
	local role=$1 idx=$2 netdev=$3 mac nic2=()
	mac=$(printf '52:54:00:12:34:%02x' $((idx + 1)))
	[ -z "${4:-}" ] || nic2=(-netdev "$4" -device
		"virtio-net-pci,netdev=n1,mac=$(printf '52:54:00:12:35:%02x' $((idx + 1)))")
	# q35: with the default i440fx machine, enabling each ACPI PCI
	# interrupt link (LNKB..LNKD) takes ~2 s under TCG; q35 boots ~6 s faster.
	# thread=single: with one host thread per vCPU (thread=multi), QEMU 7.2
	# can keep a translation of code another vCPU is patching; the guest
	# then hits a stale int3 after a static key flip and panics (seen in
	# sched_clock_tick at boot, netif_receive_skb_list_internal under
	# ping). One thread runs the vCPUs in turn, so a write to code and its
	# translation never overlap.
	qemu-system-x86_64 -name "ipoib-vm-$role" -machine "$machine" \
		-accel tcg,thread=single -cpu max -m 1024 -smp "$smp" \
		-nodefaults -display none -no-reboot \
		-serial "file:$out/console-$role.log" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "$cmdline_base ipoib_vm.role=$role" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$out/shared,mount_tag=shared,security_model=none,multidevs=remap" \
		-netdev "$netdev" \
		-device "virtio-net-pci,netdev=n0,mac=$mac" "${nic2[@]}" \
		</dev/null >"$out/qemu-$role.log" 2>&1 &
	qpid[$role]=$!
}

port_in_use() {
	[ -n "$(ss -Htan "sport = :$1")" ]
}

# wait_listening PORT PID: until PORT is listening or PID died (10 s max).
wait_listening() {
	local i
	for i in $(seq 100); do
		[ -n "$(ss -Htln "sport = :$1")" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1	# the poll
	done
	return 1
}

if [ "$nguests" -eq 2 ] && [ "$nics" = 1 ]; then
	# A listens, B connects: B must start after A's socket is listening.
	started=
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 30000))
		port_in_use "$port" && continue
		start_guest A 0 "socket,id=n0,listen=127.0.0.1:$port"
		if wait_listening "$port" "${qpid[A]}"; then
			started=1
			break
		fi
		kill "${qpid[A]}" 2>/dev/null || true
		wait "${qpid[A]}" 2>/dev/null || true
		unset 'qpid[A]'
	done
	[ -n "$started" ] || die "could not start guest A: $(cat "$out/qemu-A.log")"
	start_guest B 1 "socket,id=n0,connect=127.0.0.1:$port"
	link="socket pair on 127.0.0.1:$port"
else
	netdir=$(mktemp -d /tmp/ipoib-vm-net.XXXXXX)
	vde_switch --sock "$netdir/switch" --daemon --pidfile "$netdir/vde.pid" \
		>"$out/vde.log" 2>&1 || die "vde_switch failed: $(cat "$out/vde.log")"
	for _ in $(seq 50); do
		[ -s "$netdir/vde.pid" ] && [ -S "$netdir/switch/ctl" ] && break
		sleep 0.1	# the poll
	done
	vde_pid=$(cat "$netdir/vde.pid" 2>/dev/null) || die "vde_switch did not start"
	i=0
	for r in $roles; do
		eth1_net=
		[ "$nics" = 1 ] || eth1_net="vde,id=n1,sock=$netdir/switch"
		start_guest "$r" "$i" "vde,id=n0,sock=$netdir/switch" ${eth1_net:+"$eth1_net"}
		i=$((i + 1))
	done
	link="vde_switch $netdir/switch"
fi
echo "run.sh: $nguests guests ($roles) of $kver, $link"
echo "run.sh: script $script${module:+, module $module}"
echo "run.sh: output in $out"

# --- wait -----------------------------------------------------------------
declare -A done_at=() hung=() rc_at=()
deadline=$(($(date +%s) + timeout))
aborted=
while :; do
	running=0
	for r in $roles; do
		[ -n "${done_at[$r]:-}" ] && continue
		if kill -0 "${qpid[$r]}" 2>/dev/null; then
			# A guest that reported but does not power off is stopped.
			if [ -e "$out/shared/$r.rc" ]; then
				: "${rc_at[$r]:=$(date +%s)}"
				if [ $(($(date +%s) - rc_at[$r])) -gt 20 ]; then
					echo "run.sh: guest $r reported but did not power off; killing it"
					kill "${qpid[$r]}" 2>/dev/null || true
				fi
			fi
			running=$((running + 1))
			continue
		fi
		wait "${qpid[$r]}" 2>/dev/null || true
		done_at[$r]=$(elapsed)
		if [ ! -e "$out/shared/$r.rc" ] && [ -z "$aborted" ]; then
			# Died without a result: let the others stop waiting for it.
			echo "guest $r stopped without a result" >"$out/shared/flags/ABORT"
			aborted=1
		fi
	done
	[ "$running" -eq 0 ] && break
	if [ "$(date +%s)" -ge "$deadline" ]; then
		for r in $roles; do
			if [ -z "${done_at[$r]:-}" ]; then
				hung[$r]=1
				kill "${qpid[$r]}" 2>/dev/null || true
				wait "${qpid[$r]}" 2>/dev/null || true
				done_at[$r]=$(elapsed)
			fi
		done
		break
	fi
	sleep 0.5	# the poll
done
qpid=()
cleanup
vde_pid=
netdir=
wall=$(elapsed)

# --- judge ----------------------------------------------------------------
# shellcheck source=tools/vm/kernel-log.sh
. "$here/kernel-log.sh"

failed=0
echo
for r in $roles; do
	reasons=()
	rcfile=$out/shared/$r.rc
	con=$out/console-$r.log
	cp -f "$out/shared/$r.dmesg" "$out/dmesg-$r.log" 2>/dev/null || true
	rc=
	[ -r "$rcfile" ] && rc=$(cat "$rcfile")
	if [ -n "${hung[$r]:-}" ]; then
		reasons+=("hung: no result after ${timeout}s, killed")
	elif [ -z "$rc" ]; then
		reasons+=("stopped without a result (crash or panic?)")
	elif [ "$rc" != 0 ]; then
		reasons+=("script exit status $rc")
	fi
	report=
	report_file=
	if m=$(scan "$out/shared/$r.dmesg" dmesg); then
		reasons+=("dmesg matches '${m%%	*}': ${m#*	}")
		report="kernel report, from $out/shared/$r.dmesg:"
		report_file=$out/shared/$r.dmesg
	fi
	if m=$(scan "$con" console); then
		reasons+=("console matches '${m%%	*}': ${m#*	}")
		if [ -z "$report" ]; then
			report="kernel report, from $con:"
			report_file=$con
		fi
	fi
	boot=$(grep -a -m1 'guest-init: running' "$con" 2>/dev/null |
		sed -n 's/.* at \([0-9.]*\) s.*/\1/p') || true
	if [ ${#reasons[@]} -eq 0 ]; then
		echo "== $r: PASS (script started at ${boot:-?} s guest uptime, guest done at ${done_at[$r]} s)"
	else
		failed=$((failed + 1))
		echo "== $r: FAIL (script started at ${boot:-?} s guest uptime, guest done at ${done_at[$r]} s)"
		for reason in "${reasons[@]}"; do
			echo "   reason: $reason"
		done
	fi
	if [ -r "$out/shared/$r.out" ]; then
		grep -aE '^((not )?ok - |guest-init: FATAL)' "$out/shared/$r.out" |
			sed 's/^/   /' || true
	fi
	if [ -n "$report" ]; then
		echo "   --- $report"
		excerpt "$report_file" | sed 's/^/   | /'
	fi
	if [ -z "$rc" ]; then
		echo "   --- last 40 lines of $con:"
		tail -n 40 "$con" 2>/dev/null | tr -d '\r' | sed 's/^/   | /'
	fi
done
echo
if [ "$failed" -eq 0 ]; then
	echo "run.sh: PASS: $nguests of $nguests guests passed ($kver, $(basename "$script"), ${wall}s wall) $out"
	exit 0
fi
echo "run.sh: FAIL: $failed of $nguests guests failed ($kver, $(basename "$script"), ${wall}s wall) $out"
exit 1
# shellcheck disable=SC2317 # the read-whole idiom's exit (see the top)
exit
}
