#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest test of cm_inject against a peer's kernel CM. Run it with
#     make -C tools/cm_inject
#     tools/vm/run.sh --kver KVER --guests 2 --no-module \
#         --script tools/cm_inject/smoke.sh
# B loads ib_cm. A captures eth0 (UDP 4791) with tcpdump and sends CM REQs
# with every private-data variant to B's RoCE GIDs (link-local, and
# IPv4-mapped for one of them), for a service ID nobody listens on. B's
# ib_cm must answer each REQ with one REJ, reason 8 (invalid service ID).
# One more valid REQ goes to the rdma_cm service ID of an `ib_send_bw -R`
# server on B: ib_cm must accept its primary path (else REJ 12, invalid
# GID) and hand it to rdma_cm, which finds no rdma_cm header in the private
# data and rejects it (REJ 28, consumer defined). A checks the answers with
# cm_inject --wait, and decodes the capture with a single tshark run: each
# REQ's service ID and private data as sent, one REJ with the right reason
# per REQ. B checks its CM counters. The capture is kept as cm.pcap (and
# the decoded fields as cm.tsv) in the run's shared directory.
# shellcheck disable=SC2317 # functions below are run through check
set -eu
# shellcheck source=SCRIPTDIR/../vm/guest-lib.sh
. "$VM_LIB"

SID_QPN=0xabcdef
SID=0x1000000000abcdef
UD_QPN=0x123456
REJ_INVALID_SID=8
# ib_send_bw -R listens on RDMA_PS_TCP port PP_PORT: SID 0x0106 << 16 | port
PP_PORT=18515
LISTEN_SID=$(printf '0x%016x' $((0x01060000 + PP_PORT)))
REJ_CONSUMER=28

log "cm_inject smoke test on $KVER as $ROLE of $ROLES"

rxe_up

# The CM counters of rxe0 port 1 (their directory moved in 5.13).
cm_counter() {
	local d
	for d in /sys/class/infiniband/rxe0/ports/1 \
		/sys/class/infiniband_cm/rxe0/1; do
		if [ -r "$d/$1" ]; then
			cat "$d/$1"
			return 0
		fi
	done
	echo "no CM counter $1" >&2
	return 1
}

case $ROLE in
B)
	check "modprobe ib_cm rdma_ucm" modprobe -a ib_cm rdma_ucm
	cat /sys/class/infiniband/rxe0/ports/1/gids/0 >"$SHARED/B.gid"
	rx0=0
	tx0=0
	if ! rx0=$(cm_counter cm_rx_msgs/req) ||
	   ! tx0=$(cm_counter cm_tx_msgs/rej); then
		check "CM counters of rxe0 port 1" false
	fi
	timeout 200 ib_send_bw -R -d rxe0 -p $PP_PORT >/tmp/send_bw.log 2>&1 &
	send_bw_pid=$!
	rdma_cm_listening() {
		for _ in $(seq 100); do
			rdma resource show cm_id 2>/dev/null |
				grep -qE "LISTEN.*:$PP_PORT\b|:$PP_PORT\b.*LISTEN" &&
				return 0
			sleep 0.2
		done
		rdma resource show cm_id
		return 1
	}
	check "ib_send_bw -R listening on rdma_cm port $PP_PORT" rdma_cm_listening
	;;
A)
	check "modprobe ib_umad" modprobe ib_umad
	;;
esac
barrier ready

inject_a() {
	local bin=build/cm_inject/cm_inject
	local dgid6 dgid4 total=0 tcpdump_pid
	local -a runs

	if [ ! -x "$bin" ]; then
		check "build cm_inject (not built on the host)" \
			make -C tools/cm_inject OUT=/tmp/cm_inject
		bin=/tmp/cm_inject/cm_inject
	fi
	dgid6=$(cat "$SHARED/B.gid")
	dgid4=::ffff:$(peer_ip B)

	tcpdump -i eth0 -n -U -Z root -w /tmp/cm.pcap udp port 4791 \
		2>/tmp/tcpdump.err &
	tcpdump_pid=$!
	tcpdump_ready() {
		for _ in $(seq 100); do
			grep -q 'listening on' /tmp/tcpdump.err && return 0
			sleep 0.1
		done
		cat /tmp/tcpdump.err
		return 1
	}
	check "tcpdump capturing on eth0" tcpdump_ready

	# variant, destination GID, count, first communication ID, SID,
	# expected REJ reason
	runs=("valid $dgid6 1 0x1000 $SID $REJ_INVALID_SID"
	      "none $dgid6 1 0x2000 $SID $REJ_INVALID_SID"
	      "short $dgid6 1 0x3000 $SID $REJ_INVALID_SID"
	      "garbage $dgid6 3 0x4000 $SID $REJ_INVALID_SID"
	      "bad-qpn $dgid6 1 0x5000 $SID $REJ_INVALID_SID"
	      "tiny-mtu $dgid6 1 0x6000 $SID $REJ_INVALID_SID"
	      "reserved $dgid6 1 0x7000 $SID $REJ_INVALID_SID"
	      "valid $dgid4 1 0x8000 $SID $REJ_INVALID_SID"
	      "valid $dgid6 1 0x9000 $LISTEN_SID $REJ_CONSUMER")
	: >/tmp/inject.log
	inject() {
		local out
		local -a args=(--ud-qpn "$UD_QPN" -n "$3" -c "$4" --wait 20000)
		# our own SID through the helper option, to try that too
		if [ "$5" = "$SID" ]; then
			args+=(--sid-linux "$SID_QPN" "$1" "$2")
		else
			args+=("$1" "$2" "$5")
		fi
		out=$(timeout 60 "$bin" "${args[@]}") || {
			echo "$out"
			return 1
		}
		echo "$out" | tee -a /tmp/inject.log
		echo "$out" | grep -q "^received count=$3 " &&
			! echo "$out" | grep '^reply ' |
			grep -v "type=REJ .* reason=$6 "
	}
	for r in "${runs[@]}"; do
		# shellcheck disable=SC2086 # fields of $r
		set -- $r
		check "cm_inject $1 to $2 SID $5 (x$3): REJ reason $6 each" \
			inject "$@"
		total=$((total + $3))
	done
	echo "$total" >"$SHARED/A.total"
	signal sent

	sleep 1
	kill -INT "$tcpdump_pid"
	wait "$tcpdump_pid" || true
	cp /tmp/cm.pcap "$SHARED/cm.pcap"

	# One tshark run (slow to start under TCG); fields separated by |
	tshark -r /tmp/cm.pcap -T fields -E separator='|' \
		-e frame.number -e ipv6.src -e ip.src \
		-e infiniband.mad.attributeid -e infiniband.cm.req \
		-e infiniband.cm.req.serviceid -e infiniband.cm.req.localqpn \
		-e infiniband.cm.req.private -e infiniband.cm.rej.remotecommid \
		-e infiniband.cm.rej.reason -e infiniband.cm.rej.msgrej \
		-e infiniband.cm.req.ip_cm \
		>/tmp/cm.tsv 2>/tmp/tshark.err || true
	cp /tmp/cm.tsv "$SHARED/cm.tsv"

	# Every REQ of inject.log on the wire once, with its SID and private
	# data (zero-padded to 92 octets), and one REJ for it: reason 8, or 28
	# for the REQ to the listener. Wireshark shows the private data of a
	# REQ to an rdma_cm SID as an "IP CM" header (field 12), not field 8.
	decoded() {
		awk -F'|' -v sid="$SID" -v lsid="$LISTEN_SID" \
			-v reason="$(printf '0x%04x' "$REJ_INVALID_SID")" \
			-v lreason="$(printf '0x%04x' "$REJ_CONSUMER")" '
		FNR == NR {
			if ($0 !~ /^req /)
				next
			n = split($0, kv, " ")
			for (i = 2; i <= n; i++) {
				split(kv[i], f, "=")
				v[f[1]] = f[2]
			}
			id = v["comm_id"]
			want_sid[id] = v["sid"]
			want_reason[id] = v["sid"] == lsid ? lreason : reason
			pd = v["pdata"]
			while (length(pd) < 184)
				pd = pd "0"
			want_pd[id] = pd
			next
		}
		$1 !~ /^[0-9]+$/ { next }
		{ frames++ }
		$4 == "0x0010" {
			reqs[$5]++
			if (!($5 in want_sid)) {
				print "unexpected REQ: " $0
				bad++
			} else if ($6 != want_sid[$5] ||
				   ($6 != sid && $6 != lsid)) {
				print "REQ " $5 ": SID " $6 ", sent " want_sid[$5]
				bad++
			} else if (($8 != "" ? $8 : $12) != want_pd[$5]) {
				print "REQ " $5 ": private data " $8 $12
				print "  sent " want_pd[$5]
				bad++
			}
			if (!shown_req++)
				print "REQ: " $0
		}
		$4 == "0x0012" {
			rejs[$9]++
			if ($10 != want_reason[$9] || $11 != "0x00") {
				print "REJ of " $9 ": reason " $10 " msg " $11
				bad++
			}
			if (!shown_rej[$10]++)
				print "REJ: " $0
		}
		END {
			for (id in want_sid) {
				total++
				if (reqs[id] != 1 || rejs[id] != 1) {
					printf "%s: %d REQ(s), %d REJ(s)\n",
					       id, reqs[id], rejs[id]
					bad++
				}
			}
			printf "%d REQs sent, %d frames captured\n", total, frames
			exit (bad > 0 || total == 0)
		}' /tmp/inject.log /tmp/cm.tsv
	}
	check "tshark: SID and private data of every REQ, one REJ each" \
		decoded
}

counters_b() {
	local total rx tx
	total=$(cat "$SHARED/A.total")
	rx=$(($(cm_counter cm_rx_msgs/req) - rx0))
	tx=$(($(cm_counter cm_tx_msgs/rej) - tx0))
	echo "A sent $total REQs; B's CM received $rx REQs, sent $tx REJs"
	[ "$rx" -eq "$total" ] && [ "$tx" -eq "$total" ]
}

case $ROLE in
A)
	inject_a
	;;
B)
	wait_for A sent 240
	sleep 1
	check "B's ib_cm counted every REQ and REJ" counters_b
	kill "$send_bw_pid" 2>/dev/null || true
	wait "$send_bw_pid" 2>/dev/null || true
	;;
esac

barrier end 300
finish
