#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# RC on the wire (drivers/softhca/wire_rc.c, wire_rc_resp.c,
# wire_rc_seq.c): softhca against Debian's rdma_rxe in both directions
# and against another softhca device in another namespace, IPv4 and
# IPv6 GIDs, path MTU 1024.
#   - Debian's unmodified ibv_rc_pingpong (SEND), up to 1 MiB.
#   - uc_wire -R (selftests/uc_wire.c on an RC QP): SEND, SEND with
#     immediate, RDMA WRITE, RDMA WRITE with immediate, both ways, every
#     byte, length, opcode and immediate checked, sizes 0 to 16 MiB,
#     each message and receive in a random cut of 1 to 4 SGEs.
#   - RNR: the server posts its receives late; the client's SENDs are
#     RNR NAKed and complete once taken (rx_naks_rnr counted).
#   - Loss: netem drops packets on the sender's veth; every message
#     still completes byte-exact, with retransmissions counted.
#   - A rough wire: netem loses, duplicates and reorders packets on both
#     veths of a pair; SEND/WRITE, READ and atomics still complete
#     byte-exact (sums exact), softhca <-> softhca and with rxe.
#   - A dead peer (its QP destroyed): RETRY_EXC_ERR after the retries,
#     not a hang.
#   - The route changes mid-stream (reroute): the route a QP keeps
#     (net.c) is looked up again, IPv4 and IPv6.
#   - Quiet messages (wire_rc.c): SENDs signaled one in 8 leave the
#     others without AckReq (tx_quiet_msgs), with and without loss,
#     softhca and rxe responders; a quiet SEND left alone asks for its
#     answer by sending its last packet again with AckReq
#     (tx_quiet_expired), which either responder ACKs as a duplicate; a
#     READ posted behind a quiet WRITE makes the train ask at once
#     (tx_quiet_asks); a full train whose signaled message asked does
#     not ask again for the quiet ones behind it.
#   - RDMA READ (uc_wire -R -D): sizes 0 to 1 MiB (1,000,000 B against
#     rxe) and up to 16 MiB, random offsets and 1 to 4 SGEs, every byte
#     and the bytes around the SGEs checked; softhca as requester and as
#     responder against rxe, softhca <-> softhca; READ RESPONSE packets
#     counted (tx_read_resps, rx_read_resps); under 5% loss of the
#     responses, softhca <-> softhca and softhca's to rxe (rxe resumes
#     the READ from the response missing: the answer continues
#     MIDDLE..., LAST).
#   - Atomics (uc_wire -R -A): FETCH_ADD and CMP_AND_SWP, each returned
#     original value and the final memory checked; softhca as requester
#     and as responder against rxe, softhca <-> softhca; under 5% loss
#     of the requests and of the ATOMIC ACKNOWLEDGEs (the duplicates
#     answered from the saved results, rx_dup_atomics, and the sum exact:
#     no FETCH_ADD carried out twice).
# The topology is wire_lib.sh's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/wire_lib.sh"

V6A=fd77:0000:0000:0000:0000:0000:0000:0001
V6B=fd77:0000:0000:0000:0000:0000:0000:0002

# rc_pingpong NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]
rc_pingpong() {
	pair ibv_rc_pingpong 'bytes in' "$@" -c -m 1024
}

# at_check NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]: the
# client's atomics on the server's targets (uc_wire -R -A).
at_check() {
	[ -x "$UCW" ] || { echo "SKIP: $UCW not built (no libibverbs)"; return 77; }
	pair "$UCW" 'atomics checked' "$@" -R -A
}

# atomic_counted SDEV CDEV: the responder SDEV carried out atomics, the
# requester CDEV sent them.
atomic_counted() {
	tx=$(hwc "$2" tx_atomics) rx=$(hwc "$1" rx_atomics)
	echo "NOTE: $2 tx_atomics $tx, $1 rx_atomics $rx"
	[ "$tx" -gt 0 ] && [ "$rx" -gt 0 ]
}

# lossy_atomic DUPDEV ARGS: lossy with the atomics as the check; DUPDEV
# ("-": none), a softhca responder whose answers are lost, must have
# answered duplicates from its saved results.
lossy_atomic() {
	dd_=$1
	shift
	[ "$dd_" = - ] || a0=$(hwc "$dd_" rx_dup_atomics)
	chk=at_check
	lossy "$@"
	rc=$?
	chk=
	[ $rc = 0 ] || return 1
	[ "$dd_" = - ] && return 0
	a=$(($(hwc "$dd_" rx_dup_atomics) - a0))
	echo "NOTE: $dd_: $a duplicate atomics answered from saved results"
	[ $a -gt 0 ] || { echo "no duplicate atomic answered"; return 1; }
}

# as_responder LOSSY ARGS: LOSSY (lossy_atomic, lossy_read) with softhca
# the responder only: its rx_duplicates must grow (it sends nothing again
# itself).
as_responder() {
	lossctr=rx_duplicates
	"$@"
	rc=$?
	lossctr=
	return $rc
}

# read_counted SDEV CDEV: the responder SDEV sent READ RESPONSE packets,
# the requester CDEV took them.
read_counted() {
	tx=$(hwc "$1" tx_read_resps) rx=$(hwc "$2" rx_read_resps)
	echo "NOTE: $1 tx_read_resps $tx, $2 rx_read_resps $rx"
	[ "$tx" -gt 0 ] && [ "$rx" -gt 0 ]
}

# rc_sizes NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT: rc_check by
# sizes (wire_lib.sh's by_sizes).
rc_sizes() {
	by_sizes rc_check "$@"
}

# by_shash CMD...: CMD with the ICRC's bulk summed by the crypto API's
# crc32 (icrc=shash, icrc.c: the module takes the faster of it and
# crc32_le(), and under TCG that is crc32_le()), the module's own choice
# back after.  Both sides check: rxe drops a frame whose ICRC is wrong.
by_shash() {
	bs_p=/sys/module/softhca/parameters/icrc
	echo shash > $bs_p 2>/dev/null ||
		{ echo "SKIP: no crc32 shash in this kernel ($(cat $bs_p))"; return 77; }
	case $(cat $bs_p) in
	shash*) "$@"; bs_rc=$? ;;
	*) echo "icrc reads $(cat $bs_p) after shash was written"; bs_rc=1 ;;
	esac
	echo auto > $bs_p
	return $bs_rc
}

# lossy NS DEV PCT NAME DEVS CHECKARGS...: netem drops PCT% of what DEV
# (a veth in NS) sends while rc_check runs; the devices DEVS (softhca)
# must have sent packets again.
lossy() {
	# Not ns: inns() sets that one.
	lns=$1 veth=$2 pct=$3 name=$4 devs=$5
	shift 5
	# shellcheck disable=SC2086
	r0=$(sum ${lossctr:-tx_retransmits} $devs) t0=$(sum ack_timeouts $devs)
	q0=$(sum rx_naks_seq $devs) d0=$(sum rx_duplicates $devs)
	inns "$lns" tc qdisc add dev "$veth" root netem loss "$pct%" ||
		{ echo "no netem here"; return 1; }
	loss_batches 2
	${chk:-rc_check} "$name" "$@"
	rc=$?
	loss_batches 64
	drops=$(inns "$lns" tc -s qdisc show dev "$veth" | awk '/dropped/ { print $0; exit }')
	inns "$lns" tc qdisc del dev "$veth" root
	[ $rc = 0 ] || return 1
	# shellcheck disable=SC2086
	r=$(($(sum ${lossctr:-tx_retransmits} $devs) - r0)) t=$(($(sum ack_timeouts $devs) - t0))
	# shellcheck disable=SC2086
	q=$(($(sum rx_naks_seq $devs) - q0)) d=$(($(sum rx_duplicates $devs) - d0))
	echo "NOTE: $name: tc: $drops; softhca: $r ${lossctr:-packets sent again (tx_retransmits)}, $t ACK timeouts, $q sequence NAKs, $d duplicates received"
	[ $r -gt 0 ] || { echo "no ${lossctr:-tx_retransmits} counted"; return 1; }
}

# lossy_read ARGS: lossy, the check a READ (the timeout longer: every
# lost response costs a round).
lossy_read() {
	chk=rd_check T=240
	lossy "$@"
	rc=$?
	chk= T=60
	return $rc
}

# rough CHECK NS1 VETH1 NS2 VETH2 NAME DEVS CHECKARGS...: wire_lib.sh's
# rough_run with 2 packets a transmit batch (losses about as often as
# per packet), at most 240 s.
rough() {
	rough_run 2 240 "$@"
}

# win_check NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]: the
# client streams 64 B SENDs (-S N in ARGS), 64 outstanding (uc_wire -R
# -Q); the server checks every one, none missing (or it fails).
win_check() {
	[ -x "$UCW" ] || { echo "SKIP: $UCW not built (no libibverbs)"; return 77; }
	pair "$UCW" 'end mark sent' "$@" -R -Q 64 -s 64
}

# window NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT CDEV_SOFTHCA:
# win_check of 3000 SENDs; the softhca client sent them in trains (64
# posted as one list: a train takes them together, req_train.c).  How
# many retire before their train's answer is shown, not required: with
# the responder's softirq on the requester's CPU every ACK of a train
# may come before the requester looks again (slow_window requires it).
# lists NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT CDEV_SOFTHCA: 500
# SENDs of 64 B, 32 outstanding, one signaled in 16 (the client then
# posts 16 at a time), every message checked by the server: the softhca
# client's trains leave in batches, each a frag list (net_batch.c: a
# veth takes them; wire_lib.sh's batched).
lists() {
	[ -x "$UCW" ] || { echo "SKIP: $UCW not built (no libibverbs)"; return 77; }
	batched "${10} lists" pair "$UCW" 'end mark sent' "$1" "$2" "$3" "$4" \
		"$5" "$6" "$7" "$8" "$9" -R -Q 32 -U 16 -s 64 -S 500
}

window() {
	cd_=${10}
	n0=$(hwc "$cd_" tx_train_early) m0=$(hwc "$cd_" tx_train_msgs)
	win_check "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" -S 3000 || return 1
	n=$(($(hwc "$cd_" tx_train_early) - n0)) m=$(($(hwc "$cd_" tx_train_msgs) - m0))
	echo "NOTE: $1: $m messages sent in trains, $n retired before their train's answer"
	[ $m -gt 0 ] || { echo "no message went in a train"; return 1; }
}

# slow_window NS VETH NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT
# CDEV_SOFTHCA: win_check of 1000 SENDs with the requests' veth VETH
# (in NS) at 1 Mbit/s (netem rate): a train's bursts (one skb of 16
# packets each) leave 13 ms apart, the ACK of the first comes back
# while the others wait, and its WQEs must retire then (tx_train_early:
# the window slid).
slow_window() {
	sw_ns=$1 sw_veth=$2 cd_=${12}
	shift 2
	n0=$(hwc "$cd_" tx_train_early)
	inns "$sw_ns" tc qdisc add dev "$sw_veth" root netem rate 1mbit ||
		{ echo "no netem here"; return 1; }
	win_check "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" -S 1000
	rc=$?
	inns "$sw_ns" tc qdisc del dev "$sw_veth" root
	[ $rc = 0 ] || return 1
	n=$(($(hwc "$cd_" tx_train_early) - n0))
	echo "NOTE: $1: $n messages retired before their train's answer"
	[ $n -gt 0 ] || { echo "no message retired on a partial ACK"; return 1; }
}

# with_param NAME VALUE CMD...: CMD with softhca's module parameter NAME
# at VALUE, the value before it restored after.
with_param() {
	wp_p=/sys/module/softhca/parameters/$1
	wp_old=$(cat "$wp_p") && echo "$2" > "$wp_p" || return 1
	shift 2
	"$@"
	wp_rc=$?
	echo "$wp_old" > "$wp_p"
	return $wp_rc
}

# with_quiet US CMD...: CMD with ack_quiet_us US (0: quiet messages
# off; the module's default is 100).
with_quiet() {
	with_param ack_quiet_us "$@"
}

# quietly CMD...: CMD with quiet messages on (ack_quiet_us 100, as the
# module's default is; whatever an earlier point left, it holds here).
quietly() {
	with_quiet 100 "$@"
}

# chunked PKTS DEVS CMD...: CMD with wire_chunk_pkts PKTS, so that its
# long messages go in many chunks, two in flight at a time (req_train.c:
# the next chunk leaves before the answer to the one before it); DEVS
# (softhca) must have sent chunks that way (tx_chunks_ahead).
chunked() {
	ck_pkts=$1 ck_devs=$2
	shift 2
	# shellcheck disable=SC2086
	a0=$(sum tx_chunks_ahead $ck_devs)
	with_param wire_chunk_pkts "$ck_pkts" "$@" || return 1
	# shellcheck disable=SC2086
	a=$(($(sum tx_chunks_ahead $ck_devs) - a0))
	echo "NOTE: $a chunks sent before the answer to the one before them"
	[ $a -gt 0 ] || { echo "no chunk went ahead (tx_chunks_ahead)"; return 1; }
}

# quiet NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT CDEV_SOFTHCA: a
# window of 3000 SENDs of which one in 8 is signaled (uc_wire -U 8): the
# others went quiet (no AckReq, wire_rc.c), most of them.
quiet() {
	cd_=${10}
	q0=$(hwc "$cd_" tx_quiet_msgs) a0=$(hwc "$cd_" rx_acks)
	win_check "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" -S 3000 -U 8 || return 1
	q=$(($(hwc "$cd_" tx_quiet_msgs) - q0)) a=$(($(hwc "$cd_" rx_acks) - a0))
	echo "NOTE: $1: $q of 3000 SENDs quiet, $a ACKs taken"
	[ $q -ge 2000 ] || { echo "fewer than 2000 quiet SENDs"; return 1; }
}

# perf_from SDEV SADDR: perf, softhca-perf (77, a skip, when not built),
# and pf_g, SDEV's GID index for SADDR.
perf_from() {
	perf=$REPO/build/bin/softhca-perf
	[ -x "$perf" ] || { echo "SKIP: $perf not built"; return 77; }
	pf_g=$(gid_index "$1" "$2") || return 1
}

# perf_counted SDEV SADDR PDEV RUNS C1 C2 ARGS...: softhca-perf ARGS from
# SDEV (its GID for SADDR) to PDEV, RUNS times; c1 and c2 are then what
# SDEV's counters C1 and C2 grew by.
perf_counted() {
	perf_from "$1" "$2" || return
	pc_d=$1 pc_p=$3 pc_n=$4 pc_c1=$5 pc_c2=$6
	shift 6
	pc_a=$(hwc "$pc_d" "$pc_c1") pc_b=$(hwc "$pc_d" "$pc_c2") pc_r=1
	while [ $pc_r -le "$pc_n" ]; do
		"$perf" "$@" -g "$pf_g" -d "$pc_d" -D "$pc_p" > /dev/null ||
			{ echo "softhca-perf $* failed (run $pc_r)"; return 1; }
		pc_r=$((pc_r + 1))
	done
	c1=$(($(hwc "$pc_d" "$pc_c1") - pc_a)) c2=$(($(hwc "$pc_d" "$pc_c2") - pc_b))
}

# quiet_full NAME SDEV SADDR PDEV: softhca-perf's 64 B WRITE stream from
# SDEV (its GID for SADDR) to PDEV, three runs of 50000 WRITEs, 128
# outstanding, one in 16 signaled: a train holds 64 messages at most, so
# it fills.  The signaled one in it asked for an answer, which retires
# the WQEs up to it and lets the train slide: a full train must not ask
# again for the quiet ones behind it (tx_quiet_asks: its last packet
# sent again, a duplicate at the responder).  Until 2026-11-27 it did:
# 6, 271 and 128 times in three such runs (the stream up to 17 % slower
# for it); since, 0 or 1 time in a run on a quiet host.  On a loaded one
# (make check's two guests) it still asked up to 15 times in a run when
# the answer was already in, not yet taken (CI failed on 7); since
# 2026-11-28 such a train waits for the requester to take it: 0 in
# eight runs beside a debug guest, against 0-15 (24 in all) before.
quiet_full() {
	perf_counted "$2" "$3" "$4" 3 tx_quiet_msgs tx_quiet_asks \
		write_bw -s 64 -n 50000 -t 128 || return
	q=$c1 k=$c2
	echo "NOTE: $1: $q of 150000 WRITEs quiet, a full train asked $k times"
	[ "$q" -ge 100000 ] || { echo "fewer than 100000 quiet WRITEs"; return 1; }
	[ "$k" -le 5 ] || { echo "a full train asked for an answer already coming"; return 1; }
}

# quiet_long NAME SDEV SADDR PDEV: softhca-perf's 1 MiB WRITE stream
# from SDEV to PDEV (50 WRITEs, 8 outstanding, one in 8 signaled): a
# message of several chunks (256 KiB each at the veths' 1 KiB path MTU)
# asks for its answer at its end as at every chunk's, so none goes quiet
# and no train asks by a probe.  Until 2026-11-27 the last chunk went
# quiet, and the next WRITE, too long to join the train, made it ask at
# once (tx_quiet_asks): 93 times in 100 such WRITEs.
quiet_long() {
	perf_counted "$2" "$3" "$4" 1 tx_quiet_msgs tx_quiet_asks \
		write_bw -s 1M -n 50 -t 8 || return
	q=$c1 k=$c2
	echo "NOTE: $1: $q of 50 1 MiB WRITEs quiet, $k asks by a probe"
	[ "$q" = 0 ] || { echo "a message of several chunks went quiet"; return 1; }
	[ "$k" -le 2 ] || { echo "the stream's trains asked by probes"; return 1; }
}

# quiet_late NAME SDEV SADDR PDEV: softhca-perf's SEND ping-pong (10000
# hops, one send in 8 signaled): a quiet wait that ran out before the
# poller came back, the next SEND already posted, lets that SEND join
# the train instead of asking by a probe first (tx_quiet_late).  It
# happened 425-916 times in such runs; the probes (tx_quiet_expired)
# fell from 329-906 to 45-100 a run (2026-11-27).  Checked: the path is
# taken.
quiet_late() {
	perf_counted "$2" "$3" "$4" 1 tx_quiet_late tx_quiet_expired \
		send_lat -s 64 -n 5000 || return
	l=$c1 e=$c2
	echo "NOTE: $1: $l quiet waits joined late, $e probes, in 10000 hops"
	[ "$l" -gt 0 ] || { echo "no SEND joined a quiet train whose wait ran out"; return 1; }
}

# nosys NAME SDEV SADDR PDEV: softhca-perf's RC SEND ping-pong (10000
# hops, one send in 8 signaled) from SDEV (its GID for SADDR) to PDEV
# makes no system call a hop: the poller takes every post.  A train
# waiting for the answer its signaled SEND asked for was given back to
# the doorbell at once, so the post after it rang it: 0.035-0.056 system
# calls a hop (2026-11-27); kept watched for its idle budget since,
# 0.001-0.004 in a guest alone on its host, 0.013 and 0.028 in make check
# beside the debug kernel's guest: hops slowed past the idle budget give
# the QP back too (the host deschedules the benchmark's vCPU), and beside
# another guest one module's runs went from 0.005 to 0.077, with two CPU
# hogs on the host to 0.37 (2026-11-28).  A run under the threshold
# passes; only three runs at 0.025 and above, as the regression made in
# every run, fail.
nosys() {
	# A hop slower than the poller's idle budget gives the QP back to
	# the doorbell: on the debug kernel (this file run there by name,
	# run.sh leaves it out) 0.04-0.14 a hop.
	stock_only "system calls a hop follow the hop's time, many times longer under KASAN" || return 77
	perf_from "$2" "$3" || return
	for ns_try in 1 2 3; do
		ns_o=$("$perf" send_lat -s 64 -n 5000 --json -g "$pf_g" -d "$2" -D "$4") ||
			{ echo "softhca-perf send_lat failed"; return 1; }
		ns_s=$(echo "$ns_o" | sed -n 's/.*"syscalls_per_op":\([0-9.]*\).*/\1/p')
		[ -n "$ns_s" ] || { echo "no syscalls_per_op in: $ns_o"; return 1; }
		echo "NOTE: $1: $ns_s system calls a hop (run $ns_try)"
		awk -v s="$ns_s" 'BEGIN { exit !(s < 0.025) }' && return 0
	done
	echo "$ns_s system calls a hop in three runs (a doorbell a signaled SEND?)"
	return 1
}

# at_once NAME SDEV SADDR PDEV: softhca-perf's RC SEND ping-pong with
# completion events (2000 hops, one send in 8 signaled) from SDEV to
# PDEV: a process that sleeps on its CQ leaves its QP to the doorbell,
# no poller spins on it, and the ACK its signaled SEND asked for must
# complete the WQE in the receive softirq (rx_acks_at_once), not wait for
# a poller's pass.  Before 2026-11-27 none did (no such counter).  At
# least 20 (156 of some 1700 ACKs in a run: most find the QP on a
# poller that spins on it again, which takes the answer within a pass,
# or a doorbell's run holding it, which takes it itself).
at_once() {
	perf_counted "$2" "$3" "$4" 1 rx_acks_at_once rx_acks \
		send_lat -s 64 -n 2000 -e || return
	echo "NOTE: $1: $c1 of $c2 ACKs taken in the receive softirq"
	[ "$c1" -ge 20 ] || { echo "fewer than 20 ACKs taken at once"; return 1; }
}

# loud NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT CDEV_SOFTHCA: the
# window of quiet() with ack_quiet_us 0: quiet messages off, every
# message asks for its answer, none goes quiet.
loud() {
	cd_=${10}
	q0=$(hwc "$cd_" tx_quiet_msgs)
	with_quiet 0 win_check "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" \
		-S 3000 -U 8 || return 1
	q=$(($(hwc "$cd_" tx_quiet_msgs) - q0))
	echo "NOTE: $1: $q of 3000 SENDs quiet with ack_quiet_us 0"
	[ $q = 0 ] || { echo "a message went quiet with quiet messages off"; return 1; }
}

# probe NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT CDEV_SOFTHCA: 200
# SENDs posted one at a time 2 ms apart, one in 4 signaled (uc_wire -Q 4
# -U 4 -Z 2000): each quiet one waits alone past ack_quiet_us and asks
# for its answer (tx_quiet_expired: its last packet again, with
# AckReq), which the responder gives as to a duplicate.
probe() {
	cd_=${10}
	p0=$(hwc "$cd_" tx_quiet_expired) t0=$(hwc "$cd_" ack_timeouts)
	pair "$UCW" 'end mark sent' "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" \
		-R -s 64 -S 200 -Q 4 -U 4 -Z 2000 || return 1
	p=$(($(hwc "$cd_" tx_quiet_expired) - p0)) t=$(($(hwc "$cd_" ack_timeouts) - t0))
	echo "NOTE: $1: $p probes, $t ACK timeouts"
	[ $p -ge 100 ] || { echo "fewer than 100 probes for 150 quiet SENDs alone"; return 1; }
	[ $t = 0 ] || { echo "a probe is not a timeout"; return 1; }
}

# quiet_read NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT CDEV_SOFTHCA:
# rd_check with an unsignaled 64 B WRITE posted alone before each READ
# (uc_wire -D -U 2): the WRITE goes quiet and the READ cannot join its
# train, so the train asks for its answer at once (tx_quiet_asks), not
# when its quiet wait runs out: ack_quiet_us is 1 s here, and none may
# run out.
quiet_read() {
	cd_=${10}
	a0=$(hwc "$cd_" tx_quiet_asks) e0=$(hwc "$cd_" tx_quiet_expired)
	with_quiet 1000000 rd_check "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" \
		-n 20 -s 65536 -U 2 || return 1
	a=$(($(hwc "$cd_" tx_quiet_asks) - a0)) e=$(($(hwc "$cd_" tx_quiet_expired) - e0))
	echo "NOTE: $1: $a asks for a quiet WRITE's answer, $e quiet waits ran out"
	[ $a -ge 20 ] || { echo "fewer than 20 asks for 37 READs behind quiet WRITEs"; return 1; }
	[ $e = 0 ] || { echo "a READ waited for a quiet wait to run out"; return 1; }
}

# lossy_win ARGS: lossy, the check a window of 2000 SENDs.  The loss
# must hit the requests: in a window, a lost ACK is covered by the next
# one, and nothing need be sent again.
lossy_win() {
	chk=win_check
	lossy "$@" -S 2000
	rc=$?
	chk=
	return $rc
}

# rnr NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT CDEV_SOFTHCA: the
# server posts late; the softhca client counts RNR NAKs.
rnr() {
	cd_=${10}
	n0=$(hwc "$cd_" rx_naks_rnr)
	rc_check "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" -n 5 -s 64 -W || return 1
	n=$(($(hwc "$cd_" rx_naks_rnr) - n0))
	echo "NOTE: $1: $n RNR NAKs"
	[ $n -gt 0 ] || { echo "no RNR NAK counted"; return 1; }
}

# dead NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT: the server's QP is
# destroyed; the softhca client's SEND must end in RETRY_EXC_ERR.
dead() {
	pair "$UCW" 'RETRY_EXC_ERR\|retry counter' "$@" -R -E -s 64
}

# sent_since DEV P0 N: DEV has sent at least N packets since its
# tx_packets read P0.
sent_since() { [ $(($(hwc "$1" tx_packets) - $2)) -ge "$3" ]; }

# reroute NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT: 300 SENDs of
# 64 B, one every 10 ms (local ACK timeout 0.54 s), and once 20 have gone,
# the client's namespace routes the server's GID address for half a
# second through a gateway on the link that nobody answers for (a route
# more specific than the subnet's; a blackhole would not do for IPv4: a
# lookup bound to the netdev that finds one assumes the destination is
# on the link).  A route kept between packets (net.c) must not outlive
# either change: the sends of that half second go to the gateway and are
# lost, the retries (tx_retransmits) carry them once the route is gone,
# and every SEND arrives.  A route kept past the change would have
# taken them straight to the server: nothing retransmitted.
reroute() {
	cd_=$6 pl=32 gw=${4%.*}.99
	case $4 in *:*) pl=128 gw=${4%:*}:0099 ;; esac
	r0=$(hwc "$cd_" tx_retransmits) p0=$(hwc "$cd_" tx_packets)
	(
		wait_for 30 sent_since "$cd_" "$p0" 20
		inns "$5" ip route add "$4/$pl" via "$gw" && sleep 0.5 &&
			inns "$5" ip route del "$4/$pl" via "$gw"
	) &
	bh=$!
	pair "$UCW" 'end mark sent' "$@" -R -T 17 -s 64 -S 300 -Q 2 -Z 10000
	rc=$?
	wait $bh || { echo "the route could not be set and removed"; return 1; }
	[ $rc = 0 ] || return 1
	r=$(($(hwc "$cd_" tx_retransmits) - r0))
	echo "NOTE: $1: $r retransmitted"
	[ $r -gt 0 ] || { echo "nothing retransmitted: a route kept past the change"; return 1; }
}

# Nothing refused nor malformed in the loss-free points.
counted() {
	for d in shw1 shw2 shw3; do
		for c in rx_acks tx_acks; do
			[ "$(hwc $d $c)" -gt 0 ] || { echo "$d $c is $(hwc $d $c)"; return 1; }
		done
		for c in rx_bad_icrc rx_malformed rx_bad_pkey rx_bad_peer rx_naks_other \
			 tx_drops; do
			[ "$(hwc $d $c)" = 0 ] || { echo "$d $c is $(hwc $d $c)"; return 1; }
		done
	done
	echo "NOTE: shw1: $(hwc shw1 tx_packets) packets sent, $(hwc shw1 rx_acks) ACKs taken, $(hwc shw1 tx_acks) sent, $(hwc shw1 tx_retransmits) retransmitted"
}

# The SEND/WRITE points post four WQEs at once (uc_wire -R): the three
# behind the first go in its train, answered with it (req_train.c).
trains() {
	for d in shw1 shw2 shw3; do
		echo "NOTE: $d: $(hwc $d tx_train_msgs) messages sent in trains, $(hwc $d tx_packets) packets"
		[ "$(hwc $d tx_train_msgs)" -gt 0 ] || { echo "$d sent no train"; return 1; }
	done
}

t "wire_rc: veths in namespaces, softhca and rxe devices on them" setup
t "wire_rc: ibv_rc_pingpong softhca -> rxe, 64 B (IPv4)" \
	rxe rc_pingpong pp_sh_rxe4s - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18901 -n 200 -s 64
t "wire_rc: ibv_rc_pingpong softhca -> rxe, 1000000 B (IPv4)" \
	rxe rc_pingpong pp_sh_rxe4l - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18902 -n 20 -s 1000000
t "wire_rc: ibv_rc_pingpong rxe -> softhca, 64 B (IPv4)" \
	rxe rc_pingpong pp_rxe_sh4s wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18903 -n 200 -s 64
t "wire_rc: ibv_rc_pingpong rxe -> softhca, 1000000 B (IPv4)" \
	rxe rc_pingpong pp_rxe_sh4l wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18904 -n 20 -s 1000000
t "wire_rc: ibv_rc_pingpong softhca -> rxe, 16 KiB (IPv6)" \
	rxe rc_pingpong pp_sh_rxe6 - rxe0 $V6A wns1 shw1 $V6B 10.77.0.1 18905 -n 50 -s 16384
t "wire_rc: ibv_rc_pingpong rxe -> softhca, 16 KiB (IPv6)" \
	rxe rc_pingpong pp_rxe_sh6 wns1 shw1 $V6B - rxe0 $V6A 10.77.0.2 18906 -n 50 -s 16384
t "wire_rc: ibv_rc_pingpong softhca <-> softhca across namespaces, 64 B" \
	rc_pingpong pp_sh_sh_s wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18907 -n 200 -s 64
t "wire_rc: ibv_rc_pingpong softhca <-> softhca across namespaces, 1 MiB" \
	rc_pingpong pp_sh_sh_l wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18908 -n 20 -s 1048576
t "wire_rc: SEND/WRITE (+imm) checked, softhca client, rxe server, 0 B to 16 MiB in random SGE cuts (IPv4)" \
	rxe rc_sizes ck_sh_rxe4 - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18910
t "wire_rc: SEND/WRITE (+imm) checked, rxe client, softhca server, 0 B to 16 MiB in random SGE cuts (IPv4)" \
	rxe rc_sizes ck_rxe_sh4 wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18920
t "wire_rc: SEND/WRITE (+imm) checked, softhca <-> rxe, 64 KiB, the ICRC by the crypto API's crc32" \
	rxe by_shash rc_check ck_sh_rxe_shash - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19069 -n 20 -s 65536
t "wire_rc: SEND/WRITE (+imm) checked, softhca <-> rxe, 16 KiB (IPv6), PSNs wrap" \
	rxe rc_check ck_sh_rxe6 - rxe0 $V6A wns1 shw1 $V6B 10.77.0.1 18930 -n 20 -s 16384 -P 0xffff00
t "wire_rc: SEND/WRITE (+imm) checked, softhca <-> softhca, 0 B to 16 MiB in random SGE cuts" \
	rc_sizes ck_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18940
t "wire_rc: port counters: ACKs both ways, nothing refused" counted
t "wire_rc: SEND/WRITE posted together went in trains (tx_train_msgs), each device" trains
t "wire_rc: a window of trains, 3000 SENDs of 64 B, 64 outstanding, softhca <-> softhca, every one" \
	window win_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19050 shw3
t "wire_rc: a window of trains, 3000 SENDs of 64 B, 64 outstanding, softhca -> rxe, every one" \
	rxe window win_sh_rxe - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19051 shw1
t "wire_rc: frag-list batches over IPv6 GIDs (64 B SENDs, 16 posted at a time), softhca -> rxe, every one" \
	rxe lists lists_sh_rxe6 - rxe0 $V6A wns1 shw1 $V6B 10.77.0.1 19056 shw1
t "wire_rc: the window slides: WQEs retire on the ACK of a train's first bursts (requests at 1 Mbit/s)" \
	slow_window wns3 wa1 win_slow_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19055 shw3
t "wire_rc: quiet messages: 3000 SENDs, one in 8 signaled, the others without AckReq, softhca <-> softhca" \
	quietly quiet quiet_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19060 shw3
t "wire_rc: quiet messages: 3000 SENDs, one in 8 signaled, softhca -> rxe" \
	rxe quietly quiet quiet_sh_rxe - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19061 shw1
t "wire_rc: quiet messages: a full train does not ask for the answer already coming, softhca <-> softhca" \
	quietly quiet_full qfull_sh_sh shw2 10.78.0.1 shw3
t "wire_rc: quiet messages: 1 MiB WRITEs (several chunks each) ask at their end, no probe, softhca <-> softhca" \
	quietly quiet_long qlong_sh_sh shw2 10.78.0.1 shw3
t "wire_rc: quiet messages: a SEND posted before a late poller joins the train, no probe, softhca <-> softhca" \
	quietly quiet_late qlate_sh_sh shw2 10.78.0.1 shw3
t "wire_rc: an RC SEND ping-pong makes no system call a hop (below 0.025), softhca <-> softhca" \
	quietly nosys nosys_sh_sh shw2 10.78.0.1 shw3
t "wire_rc: an ACK for a QP no poller spins on completes its WQE in the receive softirq, softhca <-> softhca" \
	quietly at_once atonce_sh_sh shw2 10.78.0.1 shw3
t "wire_rc: ack_quiet_us 0: 3000 SENDs, one in 8 signaled, every one asks, softhca <-> softhca" \
	loud loud_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19068 shw3
t "wire_rc: a quiet SEND left alone asks for its answer (probe), softhca <-> softhca" \
	quietly probe probe_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19062 shw3
t "wire_rc: a quiet SEND left alone asks for its answer (probe), softhca -> rxe" \
	rxe quietly probe probe_sh_rxe - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19063 shw1
t "wire_rc: a READ behind a quiet WRITE: the train asks at once, softhca <-> softhca" \
	quiet_read qread_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19066 shw3
t "wire_rc: a READ behind a quiet WRITE: the train asks at once, softhca -> rxe" \
	rxe quiet_read qread_sh_rxe - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19067 shw1
t "wire_rc: RNR: SENDs before the receives are posted, softhca -> softhca" \
	rnr rnr_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18950 shw3
t "wire_rc: RNR: SENDs before the receives are posted, softhca -> rxe" \
	rxe rnr rnr_sh_rxe - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18951 shw1
t "wire_rc: 5% loss on the wire, softhca <-> softhca, 16 KiB, every byte" \
	lossy wns2 wa0 5 loss_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18960 -n 30 -s 16384
t "wire_rc: 5% loss on the wire, softhca <-> softhca, 1 MiB, every byte" \
	lossy wns3 wa1 5 loss_sh_sh_l "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18961 -n 3 -s 1048576
t "wire_rc: 5% loss from softhca to rxe, 16 KiB, every byte" \
	rxe lossy wns1 wr1 5 loss_sh_rxe shw1 \
	- rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18962 -n 30 -s 16384
t "wire_rc: 5% loss of the requests, softhca <-> softhca, a window of 2000 SENDs of 64 B, every one" \
	lossy_win wns3 wa1 5 win_loss_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19052
t "wire_rc: 5% loss from softhca to rxe, a window of 2000 SENDs of 64 B, every one" \
	rxe lossy_win wns1 wr1 5 win_loss_sh_rxe shw1 \
	- rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19053
t "wire_rc: 5% loss of the requests, quiet SENDs (one in 8 signaled), softhca <-> softhca, every one" \
	quietly lossy_win wns3 wa1 5 win_loss_quiet_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19064 -U 8
t "wire_rc: 5% loss from softhca to rxe, quiet SENDs (one in 8 signaled), every one" \
	rxe quietly lossy_win wns1 wr1 5 win_loss_quiet_sh_rxe shw1 \
	- rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19065 -U 8
t "wire_rc: RDMA READ checked, softhca requester, rxe responder, 0 B to 1000000 B (IPv4)" \
	rxe rd_check rd_sh_rxe - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18980 -n 20 -s 1000000
t "wire_rc: RDMA READ checked, rxe requester, softhca responder, 0 B to 1000000 B (IPv4)" \
	rxe rd_check rd_rxe_sh wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18981 -n 20 -s 1000000
t "wire_rc: RDMA READ checked, softhca <-> rxe, 16 KiB (IPv6), PSNs wrap" \
	rxe rd_check rd_sh_rxe6 - rxe0 $V6A wns1 shw1 $V6B 10.77.0.1 18982 -n 20 -s 16384 -P 0xffff00
t "wire_rc: RDMA READ checked, softhca <-> softhca, 0 B to 1 MiB" \
	rd_check rd_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18983 -n 20 -s 1048576
t "wire_rc: RDMA READ checked, softhca requester, rxe responder, up to 16 MiB" \
	rxe rd_check rd_sh_rxe16 - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18987 -n 4 -s 16777216
t "wire_rc: RDMA READ checked, rxe requester, softhca responder, up to 16 MiB" \
	rxe rd_check rd_rxe_sh16 wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18988 -n 4 -s 16777216
t "wire_rc: RDMA READ checked, softhca <-> softhca, up to 16 MiB" \
	rd_check rd_sh_sh16 wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18989 -n 4 -s 16777216
t "wire_rc: READ RESPONSE packets counted (softhca responder and requester)" \
	read_counted shw2 shw3
t "wire_rc: RDMA READ under 5% loss, softhca <-> softhca, up to 1 MiB, every byte" \
	lossy_read wns2 wa0 5 rd_loss_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18984 -n 3 -s 1048576
t "wire_rc: atomics checked, softhca requester, rxe responder (IPv4)" \
	rxe at_check at_sh_rxe - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18990 -n 200
t "wire_rc: atomics checked, rxe requester, softhca responder (IPv4)" \
	rxe at_check at_rxe_sh wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18991 -n 200
t "wire_rc: atomics checked, softhca <-> rxe (IPv6), PSNs wrap" \
	rxe at_check at_sh_rxe6 - rxe0 $V6A wns1 shw1 $V6B 10.77.0.1 18992 -n 100 -P 0xffff80
t "wire_rc: atomics checked, softhca <-> softhca" \
	at_check at_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18993 -n 200
t "wire_rc: atomics counted (softhca responder and requester)" \
	atomic_counted shw2 shw3
t "wire_rc: atomics under 5% loss of the ATOMIC ACKs, softhca <-> softhca, sum exact" \
	lossy_atomic shw2 wns2 wa0 5 at_loss_ack_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18994 -n 300
t "wire_rc: atomics under 5% loss of the requests, softhca <-> softhca, sum exact" \
	lossy_atomic - wns3 wa1 5 at_loss_req_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18995 -n 300
t "wire_rc: atomics under 5% loss from softhca to rxe, softhca requester, sum exact" \
	rxe lossy_atomic - wns1 wr1 5 at_loss_sh_rxe shw1 \
	- rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18996 -n 300
t "wire_rc: atomics under 5% loss of softhca's ATOMIC ACKs to rxe, sum exact" \
	rxe as_responder lossy_atomic shw1 wns1 wr1 5 at_loss_rxe_sh shw1 \
	wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18997 -n 300
t "wire_rc: rough wire (loss, duplication, reordering both ways), softhca <-> softhca, SEND/WRITE 64 KiB" \
	rough rc_check wns2 wa0 wns3 wa1 rough_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19040 -n 20 -s 65536
t "wire_rc: rough wire, softhca <-> softhca, a window of 2000 SENDs of 64 B" \
	rough win_check wns2 wa0 wns3 wa1 rough_win_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19054 -S 2000
t "wire_rc: rough wire, softhca <-> softhca, RDMA READ up to 1 MiB" \
	rough rd_check wns2 wa0 wns3 wa1 rough_rd_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19041 -n 3 -s 1048576
t "wire_rc: rough wire, softhca <-> softhca, atomics, sum exact" \
	rough at_check wns2 wa0 wns3 wa1 rough_at_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19042 -n 200
t "wire_rc: rough wire, softhca <-> softhca, SEND/WRITE 64 KiB in 8 KiB chunks, two in flight" \
	chunked 8 "shw2 shw3" rough rc_check wns2 wa0 wns3 wa1 rough_ck_sh_sh "shw2 shw3" \
	wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19047 -n 20 -s 65536
t "wire_rc: rough wire, softhca client, rxe server, SEND/WRITE 16 KiB" \
	rxe rough rc_check - wr0 wns1 wr1 rough_sh_rxe shw1 \
	- rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19043 -n 20 -s 16384
t "wire_rc: rough wire, softhca client, rxe server, SEND/WRITE 16 KiB in 2 KiB chunks, two in flight" \
	chunked 2 shw1 rxe rough rc_check - wr0 wns1 wr1 rough_ck_sh_rxe shw1 \
	- rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19048 -n 20 -s 16384
# A READ resumed after a lost response: rxe answers MIDDLE..., LAST (a
# softhca that took only FIRST there ended such READs in RETRY_EXC_ERR);
# softhca answers rxe's the same way now (rxe's requester takes either).
t "wire_rc: rough wire, softhca requester, rxe responder, RDMA READ up to 100000 B" \
	rxe rough rd_check - wr0 wns1 wr1 rough_rd_sh_rxe shw1 \
	- rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19044 -n 3 -s 100000
t "wire_rc: RDMA READ under 5% loss of softhca's responses to rxe, up to 100000 B" \
	rxe as_responder lossy_read wns1 wr1 5 rd_loss_rxe_sh shw1 \
	wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 19046 -n 3 -s 100000
t "wire_rc: rough wire, rxe requester, softhca responder, atomics, sum exact" \
	rxe rough at_check - wr0 wns1 wr1 rough_at_rxe_sh shw1 \
	wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 19045 -n 200
t "wire_rc: the route changes mid-stream (a dead gateway for 0.5 s): no route kept past it, softhca <-> softhca" \
	reroute reroute_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18972
t "wire_rc: the route changes mid-stream (IPv6), softhca -> rxe" \
	rxe reroute reroute_sh_rxe6 - rxe0 $V6A wns1 shw1 $V6B 10.77.0.1 18973
t "wire_rc: a dead peer (QP destroyed): RETRY_EXC_ERR, softhca -> softhca" \
	dead dead_sh_sh wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18970
t "wire_rc: a dead peer (QP destroyed): RETRY_EXC_ERR, softhca -> rxe" \
	rxe dead dead_sh_rxe - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18971
teardown
t "wire_rc: deleting the namespaces takes their devices and sockets" sockets_gone
cleanup_all
rm -rf "$TMP"
tap_done
