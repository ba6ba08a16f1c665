#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Bulk on a rough wire: 256 MiB of each opcode's traffic, every byte
# checked, with netem losing, duplicating, delaying and reordering what
# both veths of the pair carry (wire_lib.sh's ROUGH: loss 5 %,
# duplicate 2 %, a quarter of the packets 2 ms ahead of the rest).
#   - softhca <-> softhca: SEND, SEND with immediate, RDMA WRITE and
#     WRITE with immediate, 1 MiB messages, 128 MiB of each each way
#     (uc_wire -R's ping-pong); RDMA READ of random sizes up to 1 MiB
#     into random layouts of 1 to 4 SGEs, 256 MiB in all.
#   - softhca -> rxe: the same four opcodes, 256 MiB of each from
#     softhca's requester to rxe's responder (rxe answers each round with
#     64 B messages: rxe's requester waits out its local ACK timeout, 67
#     ms here, for a lost last packet, and a trial's 1 MiB ping-pong with
#     rxe answering in kind moved 0.8 MiB/s).  softhca READing from rxe,
#     256 MiB (SOFTHCA_BULK_RXE_READ in MiB, environment): rxe sends each
#     response in an skb of its own, so netem loses and reorders single
#     packets; softhca's requester holds the responses ahead of a gap
#     and asks again only when a transmission's last response is in
#     (wire_read.c), about 2 packets on the veth a packet taken (15 when it
#     asked again at every gap, 341 s for 256 MiB; 55 s), or when the
#     responses stalled for its reorder window, and probes a READ
#     nothing answered (35-40 s).
#   - rxe -> softhca: rxe READing 256 MiB from softhca's responder, with
#     a local ACK timeout of 16 ms (-T 12): rxe's requester waits it out
#     for a lost last response (34 s; 79 s with 67 ms, 21 s with 4 ms,
#     whose 8 tries make 32 ms, short beside the sanitizer tier's
#     guest).  rxe's SENDs and WRITEs are not run at this volume: its
#     requester goes back to each PSN the responder NAKs, and netem's
#     reordering makes a NAK of every early packet, as the IBA has the
#     responder do (64 MiB took 70 s, 13 packets on the veth a packet
#     of use); wire_rc.sh's rough points cover that direction.
# Each point requires that the devices counted packets sent again or
# duplicates received.  netem acts on skbs, and softhca's transmit
# batches (net_batch.c) cross a veth as one skb each: these points keep
# the module's batches (64 packets), so a loss takes a batch, and the
# requester goes back to it (the rough points of wire_rc.sh send 2
# packets a batch instead, at a few MiB per point).  Atomics move 8
# bytes each; their rough-wire points (sums exact, duplicates answered
# from saved results) are wire_rc.sh's.
# Debian's kernel only (run.sh): a GiB checked under KASAN and TCG would
# take most of an hour; wire_rc.sh's rough points take the same paths at
# a smaller volume.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/wire_lib.sh"

BULK_MIB=256
RXE_READ_MIB=${SOFTHCA_BULK_RXE_READ:-256}

# bulk CHECK NS1 VETH1 NS2 VETH2 NAME DEVS CHECKARGS...: wire_lib.sh's
# rough_run with the module's batches, at most 900 s.
bulk() {
	rough_run 64 900 "$@"
}

# moved NAME MIB: the READ client's total (uc_wire -V) was MIB MiB at least.
moved() {
	b=$(sed -n 's/.*checked, \([0-9]*\) bytes in all.*/\1/p' "$TMP/$1.cli")
	echo "NOTE: $1: $b bytes READ"
	if [ -z "$b" ] || [ "$b" -lt $(($2 << 20)) ]; then
		echo "$1: fewer than $2 MiB READ"
		return 1
	fi
}

# rd_moved MIB ARGS: bulk with rd_check (ARGS as bulk's after CHECK),
# then moved (rxe's requester: nothing of it is counted here).
rd_moved() {
	rmib=$1
	shift
	bulk rd_check "$@" || return 1
	moved "$5" "$rmib"
}

# rd_bulk MIB ARGS: rd_moved, and softhca's requester (DEVS) held
# responses ahead of a gap (netem reorders a quarter of them) and asked
# again for a READ whose responses stalled with some missing, before
# the local ACK timeout (read_stalls: the reorder window, wire_read.c),
# and sent a READ nothing answered again early, as a probe (read_probes:
# netem loses READ REQUESTs too).
rd_bulk() {
	# shellcheck disable=SC2086
	rbh0=$(sum rx_read_held $7) rbs0=$(sum read_stalls $7) rbt0=$(sum ack_timeouts $7)
	# shellcheck disable=SC2086
	rbp0=$(sum read_probes $7)
	rd_moved "$@" || return 1
	# shellcheck disable=SC2086
	rbh=$(($(sum rx_read_held $7) - rbh0)) rbs=$(($(sum read_stalls $7) - rbs0))
	# shellcheck disable=SC2086
	rbt=$(($(sum ack_timeouts $7) - rbt0)) rbp=$(($(sum read_probes $7) - rbp0))
	echo "NOTE: $6: $rbh READ responses held ahead of a gap; in the reorder window $rbs READs asked again, $rbp probes; $rbt ACK timeouts"
	[ "$rbh" -gt 0 ] || { echo "$6: no READ response held on a reordering wire"; return 1; }
	[ "$rbs" -gt 0 ] || { echo "$6: no READ asked again in the reorder window on a lossy wire"; return 1; }
	[ "$rbp" -gt 0 ] || { echo "$6: no READ probed on a lossy wire"; return 1; }
}

teardown
t "wire_bulk: setup (veths, namespaces, softhca and rxe devices)" setup
m=$((BULK_MIB / 2))
t "wire_bulk: rough wire, softhca <-> softhca, SEND/WRITE (+imm) 1 MiB, $BULK_MIB MiB of each opcode" \
	bulk rc_check wns2 wa0 wns3 wa1 bulk_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19200 -n $m -s 1048576
t "wire_bulk: rough wire, softhca <-> softhca, RDMA READ up to 1 MiB, $BULK_MIB MiB" \
	rd_bulk $BULK_MIB wns2 wa0 wns3 wa1 bulk_rd_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19201 -s 1048576 -n 20 -V $BULK_MIB
t "wire_bulk: rough wire, softhca client, rxe server, SEND/WRITE (+imm) 1 MiB, $BULK_MIB MiB of each opcode to rxe" \
	rxe bulk rc_check - wr0 wns1 wr1 bulk_sh_rxe shw1 \
	- rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19202 -n $BULK_MIB -s 1048576 -a 64
t "wire_bulk: rough wire, softhca requester, rxe responder, RDMA READ up to 1,000,000 B, $RXE_READ_MIB MiB" \
	rxe rd_bulk "$RXE_READ_MIB" - wr0 wns1 wr1 bulk_rd_sh_rxe shw1 \
	- rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19203 -s 1000000 -n 20 -V "$RXE_READ_MIB"
t "wire_bulk: rough wire, rxe requester, softhca responder, RDMA READ up to 1,000,000 B, $BULK_MIB MiB" \
	rxe rd_moved $BULK_MIB wns1 wr1 - wr0 bulk_rd_rxe_sh shw1 \
	wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 19204 -s 1000000 -n 20 -V $BULK_MIB -T 12
teardown
t "wire_bulk: deleting the namespaces takes their devices and sockets" sockets_gone
cleanup_all
rm -rf "$TMP"
tap_done
