#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# XRC on the wire (drivers/softhca/wire_rc.c, wire_rc_resp.c, wire_resp.c:
# an XRC_INI is the RC requester, an XRC_TGT the RC responder, with XRC
# opcodes and the XRCETH), softhca <-> softhca across namespaces (rxe
# has no XRC), IPv4 GIDs (index 1), path MTU 1024:
#   - Debian's unmodified ibv_xsrq_pingpong through softhca-run, server
#     in one namespace, client in the other.
#   - xrc.c's opcodes point (XRC_WIRE: initiators on shw2, receive QP
#     and SRQ on shw3): SEND of 0 to 300,000 B with and without
#     immediate, RDMA WRITE, WRITE with immediate, READ, FETCH_ADD,
#     CMP_AND_SWP, every byte, the receive completion's SRQ CQ, qp_num
#     and src_qp checked; XRC packets counted on both devices.
#   - The same under 5% loss (netem) of the initiator's packets, then of
#     the target's answers: every byte still right, packets sent again.
#   - A SEND naming another domain's SRQ, a WRITE naming none:
#     REM_ACCESS_ERR at the initiator, rx_bad_xrc_srq counted at the
#     target, which stays in RTR and serves the next initiator.
# The topology is wire_lib.sh's.
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2034 # WIRE_RXE: read by wire_lib.sh (no rxe here)
WIRE_RXE=0
. "$(dirname "$0")/wire_lib.sh"

XRC=$SELFTESTS/xrc

# xsrq NAME PORT: ibv_xsrq_pingpong, server on shw3 (wns3), its client
# on shw2 (wns2).
xsrq() {
	pair ibv_xsrq_pingpong 'QPN RECV' "$1" wns3 shw3 10.78.0.2 \
		wns2 shw2 10.78.0.1 10.78.0.2 "$2" -m 1024 -n 200 -s 4096
}

# xrc_wire NAME POINTS: xrc.c's POINTS (TAP_ONLY), initiators on shw2,
# receive side on shw3; its TAP output in $TMP/NAME.tap.  On the debug
# kernel the initiators wait 268 ms for an ACK (XRC_ACK_TIMEOUT 16), not
# 67 ms: niced beside the stock tier's guest, its vCPUs can go half a
# second without running, and 7 retries of 67 ms then run out with no
# packet lost (wire_capture.sh's RC pairs wait 1 s there; the lossy
# points here wait out a timeout per lost ACK, so less).
xrc_wire() {
	[ -x "$XRC" ] || { echo "SKIP: $XRC not built"; return 77; }
	ackt=14
	debug_kernel && ackt=16
	SOFTHCA_DEV=shw2 SOFTHCA_DEV2=shw3 SOFTHCA_GID_INDEX=1 XRC_WIRE=1 \
		XRC_ACK_TIMEOUT=$ackt XRC_BIG=${xrc_big:-0} TAP_ONLY=$2 \
		timeout $T "$XRC" > "$TMP/$1.tap" 2>&1
	rc=$?
	if [ $rc != 0 ] || grep -q '^not ok' "$TMP/$1.tap" ||
	   ! grep -q "^ok .*$2" "$TMP/$1.tap"; then
		echo "xrc exit $rc"
		cat "$TMP/$1.tap"
		return 1
	fi
}

# big NAME: xrc.c's opcodes point with XRC_BIG (SEND, WRITE and READ of
# 16 MiB too, 40 MiB buffers), on Debian's kernel: on the debug kernel
# the other points take the same paths.  The initiator's device sent
# the SEND's and the WRITE's 32 MiB, the target's the READ's 16.
big() {
	stock_only "16 MiB messages, the same paths as the opcodes point" || return 77
	i0=$(hwc shw2 tx_bytes) t0=$(hwc shw3 tx_bytes)
	xrc_big=1
	xrc_wire "$1" opcodes
	rc=$?
	xrc_big=0
	[ $rc = 0 ] || return 1
	i=$(($(hwc shw2 tx_bytes) - i0)) t=$(($(hwc shw3 tx_bytes) - t0))
	echo "NOTE: $1: shw2 sent $i bytes, shw3 $t"
	if [ $i -lt $((32 << 20)) ] || [ $t -lt $((16 << 20)) ]; then
		echo "fewer bytes on the wire than the 16 MiB messages"
		return 1
	fi
}

# opcodes NAME: xrc.c's opcodes point; XRC packets went both ways.
opcodes() {
	a0=$(hwc shw3 rx_acks) a2=$(hwc shw2 rx_acks)
	t3=$(hwc shw3 tx_acks)
	xrc_wire "$1" opcodes || return 1
	[ "$(hwc shw2 rx_acks)" -gt "$a2" ] && [ "$(hwc shw3 tx_acks)" -gt "$t3" ] ||
		{ echo "no ACKs from the target counted"; return 1; }
	[ "$(hwc shw3 rx_acks)" = "$a0" ] ||
		{ echo "the target took ACKs: it sends no requests"; return 1; }
	echo "NOTE: $1: shw2 sent $(hwc shw2 tx_packets) packets, $(hwc shw2 rx_read_resps) READ responses taken; shw3 $(hwc shw3 tx_acks) ACKs, $(hwc shw3 rx_atomics) atomics"
}

# lossy NS VETH PCT NAME: the opcodes point while netem drops PCT% of
# what VETH (in NS) sends; something was sent again.  The target answers
# with some 80 to 300 packets only: netem drops none of them in about one
# run of 60 (0.95^80), and a lost ACK that a later ACK covers needs
# nothing sent again (make check's debug tier once saw 81 packets, one
# dropped, none sent again, every byte right).  So the point runs again
# while nothing was sent again, up to four times in all.
lossy() {
	lns=$1 veth=$2 pct=$3 name=$4
	r0=$(($(hwc shw2 tx_retransmits) + $(hwc shw2 ack_timeouts)))
	d0=$(hwc shw3 rx_duplicates)
	inns "$lns" tc qdisc add dev "$veth" root netem loss "$pct%" ||
		{ echo "no netem here"; return 1; }
	loss_batches 2
	runs=0
	while [ $runs -lt 4 ]; do
		runs=$((runs + 1))
		xrc_wire "$name" opcodes
		rc=$?
		[ $rc = 0 ] || break
		drops=$(inns "$lns" tc -s qdisc show dev "$veth" | awk '/dropped/ { print $0; exit }')
		r=$(($(hwc shw2 tx_retransmits) + $(hwc shw2 ack_timeouts) - r0))
		[ $r -gt 0 ] && break
		echo "NOTE: $name: run $runs: nothing sent again (netem so far: $drops)"
	done
	loss_batches 64
	inns "$lns" tc qdisc del dev "$veth" root
	[ $rc = 0 ] || return 1
	d=$(($(hwc shw3 rx_duplicates) - d0))
	echo "NOTE: $name: $runs runs; tc: $drops; shw2: $r retransmissions and ACK timeouts; shw3: $d duplicates"
	[ $r -gt 0 ] || { echo "nothing sent again in $runs runs"; return 1; }
}

# refused NAME: xrc.c's other_domain_refused point; the target counted
# both requests it refused.
refused() {
	b0=$(hwc shw3 rx_bad_xrc_srq) n0=$(hwc shw2 rx_naks_other)
	xrc_wire "$1" other_domain_refused || return 1
	b=$(($(hwc shw3 rx_bad_xrc_srq) - b0)) n=$(($(hwc shw2 rx_naks_other) - n0))
	echo "NOTE: $1: shw3 refused $b requests (rx_bad_xrc_srq), shw2 took $n NAKs"
	[ $b -ge 2 ] && [ $n -ge 2 ] || { echo "rx_bad_xrc_srq +$b, rx_naks_other +$n: not +2"; return 1; }
}

# peer_counts: rx_no_qp, rx_qp_not_ready and rx_bad_peer of both
# devices, one line.
peer_counts() {
	for d in shw2 shw3; do
		printf '%s ' "$d rx_no_qp $(hwc $d rx_no_qp) rx_qp_not_ready $(hwc $d rx_qp_not_ready) rx_bad_peer $(hwc $d rx_bad_peer)"
	done
}

# clean: nothing malformed or refused on either device at all, and
# nothing misdirected (rx_no_qp, rx_bad_peer) during the opcodes point,
# whose QPs are connected in order on a lossless wire (peer_counts saved
# in $TMP/after_xsrq before it and $TMP/lossless after it).  Not judged:
# ibv_xsrq_pingpong's start-up, where shw2 dropped 4 packets in 3 of 9
# runs, the pingpong still completing byte-exact, when rx_bad_peer also
# counted packets for a QP not receiving yet (the likely cause, not yet
# confirmed: a SEND reaching the client's receive QP before the tool has
# moved it to RTR, dropped and sent again by the requester, as on any RC
# wire; rx_qp_not_ready now tells it apart); and the loss points, after which
# an answer to a request sent again may reach an initiator already gone.
clean() {
	for d in shw2 shw3; do
		for c in rx_bad_icrc rx_malformed rx_bad_pkey rx_unsupported tx_drops; do
			[ "$(hwc $d $c)" = 0 ] || { echo "$d $c is $(hwc $d $c)"; return 1; }
		done
	done
	before=$(cat "$TMP/after_xsrq") lossless=$(cat "$TMP/lossless")
	echo "NOTE: after ibv_xsrq_pingpong: $before"
	echo "NOTE: at the end: $(peer_counts)"
	[ "$before" = "$lossless" ] ||
		{ echo "misdirected packets in the opcodes point: $before -> $lossless"; return 1; }
}

t "wire_xrc: veths in namespaces, softhca devices on them" setup
t "wire_xrc: ibv_xsrq_pingpong softhca <-> softhca across namespaces, 4 KiB" \
	xsrq xsrq_sh_sh 19101
peer_counts > "$TMP/after_xsrq"
t "wire_xrc: SEND (+imm) 0 B to 300000 B, WRITE (+imm), READ, atomics, every byte" \
	opcodes ops_sh_sh
peer_counts > "$TMP/lossless"
t "wire_xrc: SEND, WRITE and READ of 16 MiB too, every byte" big ops_big
t "wire_xrc: 5% loss of the initiator's packets, every byte" \
	lossy wns2 wa0 5 ops_loss_req
t "wire_xrc: 5% loss of the target's answers, every byte" \
	lossy wns3 wa1 5 ops_loss_ans
t "wire_xrc: another domain's SRQ, or none: REM_ACCESS_ERR, the target serves on" \
	refused refused_sh_sh
t "wire_xrc: port counters: nothing malformed or refused, nothing misdirected in order and without loss" clean
teardown
t "wire_xrc: deleting the namespaces takes their devices and sockets" sockets_gone
cleanup_all
rm -rf "$TMP"
tap_done
