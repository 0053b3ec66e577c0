#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Smoke test of the VM harness and of soft-RoCE in the guests, and an
# example of a guest script. Run it with
#     tools/vm/run.sh --kver KVER --guests 2 --script tools/vm/smoke.sh
# Every role brings up rxe0 and pings every other role; A and B run
# ibv_ud_pingpong (B serves, A connects).
#
# SMOKE_FAIL (set with run.sh --env SMOKE_FAIL=...) makes roles misbehave on
# purpose, at once and instead of the smoke test, to show that the harness
# notices; selftest.sh uses it. A list of ROLE:CASE, e.g. "A:check B:warn":
#   check  a failing check            warn   "WARNING:" line in the kernel log
#   panic  crash the guest kernel     hang   never finish
# shellcheck disable=SC2317 # functions below are run through check
set -eu
# shellcheck source=SCRIPTDIR/guest-lib.sh
. "$VM_LIB"

log "smoke test on $KVER as $ROLE of $ROLES"

if [ -n "${SMOKE_FAIL:-}" ]; then
	for f in $SMOKE_FAIL; do
		[ "${f%%:*}" = "$ROLE" ] || continue
		case ${f#*:} in
		check) check "deliberate failure (SMOKE_FAIL=check)" false ;;
		warn) echo "WARNING: test (SMOKE_FAIL=warn)" >/dev/kmsg ;;
		panic) echo c >/proc/sysrq-trigger ;;
		hang) log "SMOKE_FAIL=hang: sleeping"; sleep 100000 ;;
		*) check "unknown SMOKE_FAIL=$f" false ;;
		esac
	done
	barrier end
	finish
fi

rxe_up
barrier rxe-up

for peer in $ROLES; do
	[ "$peer" = "$ROLE" ] && continue
	check "ping $peer ($(peer_ip "$peer"))" pings 3 -W 5 "$(peer_ip "$peer")"
done

rdma_link_active() {
	rdma link show
	rdma link show rxe0/1 | grep -q 'state ACTIVE'
}
check "rdma link shows rxe0 ACTIVE" rdma_link_active

devinfo_port1_ethernet() {
	local info
	info=$(ibv_devinfo -d rxe0)
	printf '%s\n' "$info"
	printf '%s\n' "$info" | awk '
		$1 == "port:" { port = $2 }
		$1 == "link_layer:" && port == 1 && $2 == "Ethernet" { ok = 1 }
		END { exit !ok }'
}
check "ibv_devinfo -d rxe0: port 1, link_layer Ethernet" devinfo_port1_ethernet

# UD ping-pong over rxe0, GID index 0 (the fe80:: link-local GID). 1024-byte
# messages: rxe's active MTU behind a 1500-byte NIC is 1024.
pp_port=18515
pp_args="-d rxe0 -g 0 -s 1024 -n 200 -p $pp_port"
case $ROLE in
B)
	# shellcheck disable=SC2086
	timeout 120 ibv_ud_pingpong $pp_args >/tmp/ud_pingpong.log 2>&1 &
	pp_pid=$!
	listening() {
		for _ in $(seq 100); do
			[ -n "$(ss -Hltn "sport = :$pp_port")" ] && return 0
			sleep 0.1
		done
		return 1
	}
	check "ibv_ud_pingpong server listening on :$pp_port" listening
	signal ud-server-ready
	pp_rc=0
	wait "$pp_pid" || pp_rc=$?
	show_server() {
		cat /tmp/ud_pingpong.log
		return "$1"
	}
	check "ibv_ud_pingpong server" show_server "$pp_rc"
	;;
A)
	wait_for B ud-server-ready 60
	# shellcheck disable=SC2086
	check "ibv_ud_pingpong client to $(peer_ip B)" \
		timeout 90 ibv_ud_pingpong $pp_args "$(peer_ip B)"
	;;
esac

barrier end
finish
