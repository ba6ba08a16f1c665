#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# What softhca puts on the wire, seen from outside, and what it takes
# from a hostile one (wire_lib.sh's topology):
#   - Capture: tcpdump records the RoCEv2 frames of RC (SEND, WRITE,
#     READ, atomics, RNR), UC and UD traffic, softhca <-> softhca and softhca <->
#     rdma_rxe both ways.  tshark (Debian's Wireshark) must decode every
#     UDP 4791 frame as InfiniBand with nothing malformed, and
#     roce_tool.py recomputes every frame's ICRC, written apart from the
#     driver's (rxe's frames are right by construction: they check the
#     tool, the tool checks softhca's).
#   - Packet fuzzer: roce_tool.py sends tens of thousands of frames
#     made from the captured ones (destination QP, opcode, PSN, bytes of
#     the headers and payload changed, truncated, extended, or random;
#     most with a right ICRC again, so they reach the transport's
#     checks) at shw2 from its peer's veth, aimed at the QPs of a running
#     ibv_rc_pingpong pair, at QP 1, at QPs that do not exist.  Meanwhile
#     uc_wire's checked RC traffic runs between the same devices on
#     other QPs, again and again until the fuzzer is done: every round
#     must complete byte-exact.  Afterwards the device still serves a new
#     pair; the drop counters moved.  A splat fails the run (run-guest).
# FUZZ_FRAMES (default 30000; 1000 on the debug kernel, where 3000 took
# 171 s of make check's longest guest: each of the fuzzer's ten kinds of
# frame still comes about 100 times, and the volume is Debian's
# kernel's) and FUZZ_SEED (default: random, printed) choose the frames.
. "$(dirname "$0")/lib.sh"
# The debug kernel runs no rxe point here (stock_rxe below).
# shellcheck disable=SC2034 # WIRE_RXE: read by wire_lib.sh
debug_kernel && WIRE_RXE=0
. "$(dirname "$0")/wire_lib.sh"

PERF=$REPO/build/bin/softhca-perf
TOOL_PY=$REPO/selftests/roce_tool.py
if debug_kernel; then FRAMES=${FUZZ_FRAMES:-1000}; else FRAMES=${FUZZ_FRAMES:-30000}; fi
SEED=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
T=120

# capture NS DEV PCAP CMD...: tcpdump on DEV in NS into PCAP while CMD
# runs; CMD's status.
capture() {
	cns=$1 cdev=$2 pcap=$3
	shift 3
	# Run as the background job itself (not in a subshell), so that the
	# signal below reaches tcpdump.
	if [ "$cns" = - ]; then
		tcpdump -i "$cdev" -U -s 0 -w "$pcap" udp port 4791 > "$pcap.log" 2>&1 &
	else
		ip netns exec "$cns" tcpdump -i "$cdev" -U -s 0 -w "$pcap" udp port 4791 \
			> "$pcap.log" 2>&1 &
	fi
	cap=$!
	# tcpdump says "listening on" once its socket is attached.
	wait_for 30 grep -q 'listening on' "$pcap.log" ||
		{ kill $cap; cat "$pcap.log"; return 1; }
	"$@"
	crc=$?
	sleep 1
	kill -TERM $cap
	wait $cap
	grep -E 'captured|dropped by kernel' "$pcap.log"
	return $crc
}

# write_stream: 64 B RDMA WRITEs from shw2 to shw3 in bursts of 16
# (softhca-perf, which drives both ends), the message rate benchmark's
# traffic: its bursts leave in frag-list batches (net_batch.c).
write_stream() {
	g=$(gid_index shw2 10.78.0.1) || return 1
	"$PERF" write_bw -s 64 -n 3000 -g "$g" -d shw2 -D shw3 > "$TMP/ws.out" 2>&1 ||
		{ cat "$TMP/ws.out"; return 1; }
	echo "NOTE: write_stream: $(awk '$1 == 64 { print $2 " WRITEs, " $4 " Mpps" }' "$TMP/ws.out")"
}

# The softhca <-> softhca traffic: RC SEND/WRITE (+imm) to 64 KiB, RC
# READ to 1 MiB, atomics, RNR, UC, UD, a window of 64 B SENDs, a stream
# of 64 B WRITEs.
traffic_sh() {
	uc checked cap_rc wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19001 -R -n 4 -s 65536 &&
	uc 'end mark sent' cap_win wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19007 -R -Q 32 -U 16 -s 64 -S 500 &&
	write_stream &&
	uc 'READs of' cap_rd wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19002 -R -D -n 4 -s 1048576 &&
	uc 'atomics checked' cap_at wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19006 -R -A -n 10 &&
	uc checked cap_rnr wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19003 -R -W -n 3 -s 64 &&
	uc checked cap_uc wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19004 -n 4 -s 4096 &&
	pair ibv_ud_pingpong 'bytes in' cap_ud wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19005 -n 20 -s 512 -c
}

# softhca <-> rxe, each side the server once: RC SEND/WRITE (+imm),
# READ, atomics; UD; a window of 64 B SENDs from softhca (their trains
# leave in frag-list batches, net_batch.c).
traffic_rxe() {
	uc checked capx_rc - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19011 -R -n 4 -s 16384 &&
	uc checked capx_rc2 wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 19012 -R -n 4 -s 16384 &&
	uc 'end mark sent' capx_win - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19018 -R -Q 32 -U 16 -s 64 -S 500 &&
	uc 'READs of' capx_rd - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19013 -R -D -n 4 -s 100000 &&
	uc 'READs of' capx_rd2 wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 19014 -R -D -n 4 -s 100000 &&
	uc 'atomics checked' capx_at - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19016 -R -A -n 10 &&
	uc 'atomics checked' capx_at2 wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 19017 -R -A -n 10 &&
	pair ibv_ud_pingpong 'bytes in' capx_ud - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 19015 -n 20 -s 512 -c
}

# tshark_clean PCAP MIN: at least MIN UDP 4791 frames, each decoded as
# InfiniBand, none malformed or short, and no error in tshark's expert
# info for the RoCEv2 headers.  tshark's heuristics also guess what a
# payload carries (Ethernet, SMB Direct, NVMe, ...): on test patterns a
# guess may fail, so frames whose payload a heuristic took are counted
# in the note, not judged.
tshark_clean() {
	command -v tshark > /dev/null || { echo "SKIP: no tshark (tools/setup-deps installs it)"; return 77; }
	# tshark wants a writable home for its profile.  RPC-over-RDMA's
	# heuristic would take some payloads for its own (Documentation/wire.rst).
	HOME=$TMP tshark -n -r "$1" --disable-protocol rpcordma -T fields \
		-e frame.number -e frame.protocols -e _ws.expert.severity \
		> "$1.txt" 2> "$1.err" || { cat "$1.err"; return 1; }
	n=$(wc -l < "$1.txt")
	notib=$(grep -vc 'udp:infiniband' "$1.txt")
	bad=$(grep -Ec 'udp:infiniband(:data)?:_ws\.(malformed|short)' "$1.txt")
	# Expert severities: 2097152 note, 4194304 warning, 8388608 error.
	# The RoCEv2 headers' own: the protocol chain ends at infiniband
	# (or its "data").
	err=$(awk -F'\t' '$3 ~ /8388608/ && $2 ~ /udp:infiniband(:data)?$/' "$1.txt" | wc -l)
	guessed=$(awk -F'\t' '$2 !~ /udp:infiniband(:data)?(:_ws\.[a-z]+)?$/' "$1.txt" | wc -l)
	echo "NOTE: tshark: $n frames, $notib not InfiniBand, $bad malformed, $err with errors ($guessed payloads taken by a heuristic, not judged)"
	[ "$n" -ge "$2" ] && [ "$notib" = 0 ] && [ "$bad" = 0 ] && [ "$err" = 0 ] || {
		grep -v 'udp:infiniband' "$1.txt" | head -5
		grep -E '_ws\.malformed|_ws\.short' "$1.txt" | head -5
		awk -F'\t' '$3 ~ /8388608/' "$1.txt" | head -5
		return 1
	}
}

# icrc_right PCAP: every frame's ICRC recomputed (roce_tool.py).
icrc_right() {
	out=$(python3 "$TOOL_PY" icrc "$1")
	rc=$?
	printf '%s\n' "$out" | head -1 | sed 's/^/NOTE: /'
	printf '%s\n' "$out" | sed 's/^/# /'
	return $rc
}

# qpns_of DEV COMM: the QP numbers of DEV's QPs of program COMM (the
# device's restrack, as "rdma resource show qp" lists it).
qpns_of() {
	rdma resource show qp link "$1/1" | awk -v c="$2" '
		{ for (i = 1; i < NF; i++) { if ($i == "lqpn") q = $(i + 1); if ($i == "comm" && $(i + 1) == c) print q } }'
}

DROPS="rx_bad_icrc rx_malformed rx_bad_pkey rx_no_qp rx_unsupported rx_bad_peer rx_psn_gaps rx_seq_drops rx_duplicates rx_stale_acks tx_naks"

# counts: shw2's drop and NAK counters, "name value" a line.
counts() {
	for c in $DROPS; do
		hwc_read shw2 "$c"
		# shellcheck disable=SC2154 # hwc_v: set by hwc_read
		echo "$c $hwc_v"
	done
}

# moved BEFORE: the counters that moved since BEFORE (counts' output),
# "name +delta" on one line; the sum in $moved_sum.  Builtins only
# (the debug kernel's forks and execs: see hwc).
moved() {
	moved_sum=0 line=
	# shellcheck disable=SC2086
	set -- $1
	while [ $# -ge 2 ]; do
		hwc_read shw2 "$1"
		d=$((hwc_v - $2))
		moved_sum=$((moved_sum + d))
		[ $d = 0 ] || line="$line $1 +$d"
		shift 2
	done
	echo "$line"
}

fuzz() {
	[ -x "$UCW" ] || { echo "SKIP: $UCW not built"; return 77; }
	[ -s "$TMP/sh.pcap" ] || { echo "no capture to start from"; return 1; }
	c0=$(counts)
	# The targets: an ibv_rc_pingpong pair that runs for the whole time.
	sg=$(gid_index shw2 10.78.0.1) cg=$(gid_index shw3 10.78.0.2) || return 1
	ip netns exec wns2 timeout 600 "$RUN" ibv_rc_pingpong -d shw2 -g "$sg" -p 19021 -n 100000000 -s 64 \
		> "$TMP/victim.srv" 2>&1 &
	vs=$!
	wait_for 20 listens_in $vs 19021 || { cat "$TMP/victim.srv"; return 1; }
	ip netns exec wns3 timeout 600 "$RUN" ibv_rc_pingpong -d shw3 -g "$cg" -p 19021 -n 100000000 -s 64 10.78.0.1 \
		> "$TMP/victim.cli" 2>&1 &
	vc=$!
	wait_for 30 sh -c "[ -n \"\$(rdma resource show qp link shw2/1 | grep ibv_rc_pingpong)\" ]" ||
		{ echo "the target pair has no QP"; cat "$TMP/victim.srv" "$TMP/victim.cli"; return 1; }
	targets=$(qpns_of shw2 ibv_rc_pingpong | tr '\n' ',')1
	spare=$(qpns_of shw2 ibv_rc_pingpong | sort -n | tail -1)
	mac=$(ip -n wns2 -o link show wa0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	echo "NOTE: seed $SEED, $FRAMES frames at shw2's QPs $targets (FUZZ_SEED=$SEED FUZZ_FRAMES=$FRAMES to replay)"
	ip netns exec wns3 timeout 900 python3 "$TOOL_PY" fuzz wa1 "$mac" 10.78.0.2 10.78.0.1 "$TMP/sh.pcap" \
		"$FRAMES" "$SEED" --target "$targets" --spare "$spare" > "$TMP/fuzz.out" 2>&1 &
	fz=$!
	# Checked RC traffic on other QPs until the fuzzer is done (the
	# rounds' times add up to the fuzzer's, give or take the last round).
	rounds=0 rc=0 took=
	while kill -0 $fz 2>/dev/null || [ $rounds = 0 ]; do
		rounds=$((rounds + 1))
		read -r r0 _ < /proc/uptime
		uc checked live_$rounds wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 \
			$((19100 + rounds)) -R -n 10 -s 16384 > "$TMP/live.out" 2>&1 ||
			{ rc=1; cat "$TMP/live.out"; break; }
		read -r r1 _ < /proc/uptime
		took="$took $(( ${r1%.*} - ${r0%.*} ))"
	done
	wait $fz
	frc=$?
	cat "$TMP/fuzz.out"
	echo "NOTE: each round of traffic beside the fuzzer took (s):$took"
	# The targets may have failed on what they were sent (143: alive
	# until killed here).
	kill $vs $vc 2>/dev/null
	wait $vs
	vsr=$?
	wait $vc
	vcr=$?
	m=$(moved "$c0")
	# What a target that ended by itself said (its error, on stderr,
	# lands before the stdout it flushes at exit).
	for v in srv:$vsr cli:$vcr; do
		[ "${v#*:}" = 143 ] && continue
		vf=$TMP/victim.${v%:*}
		said=$(grep -iE 'fail|err|couldn' "$vf" | head -1)
		[ -n "$said" ] || said=$(tail -1 "$vf")
		echo "NOTE: the target ${v%:*} ended by itself: $said"
	done
	echo "NOTE: $rounds rounds of checked RC traffic beside the fuzzer; the target pair exited $vsr/$vcr; shw2's counters:$m"
	[ $frc = 0 ] || { echo "the fuzzer failed ($frc)"; return 1; }
	[ $rc = 0 ] || return 1
	moved "$c0" > /dev/null
	[ $moved_sum -gt 0 ] || { echo "no drop counted"; return 1; }
	# The device still serves a new pair.
	uc checked after_fuzz wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19099 -R -n 4 -s 65536
}

# stock CMD...: a check of a capture's bytes by a program (tshark, our
# ICRC), the same frames whatever the kernel: Debian's kernel only.  The
# debug kernel (SOFTHCA_SUITE=debug) runs the captured traffic and the
# fuzzer, its kernel paths, and leaves out these minutes of user space.
stock() {
	stock_only "user space reading a capture: Debian's kernel runs it" || return 77
	"$@"
}

# The captured veths cut softhca's UDP GSO skbs (net_batch.c) into
# packets before tcpdump sees them, as a NIC puts them on the wire.  A
# veth hands a GSO skb whole to its peer (the receiving socket cuts it),
# so a capture on either end would show one datagram of many packets;
# with gso_max_segs 1 the stack segments before the device
# (gso_features_check()), and the frames whose ICRCs are checked below
# are the segments the kernel made of softhca's batches.  wa0 takes no
# frag list (tx-gso-list off), as a NIC with UDP segmentation offload:
# shw2's batches are page fragments there, and shw3's (wa1) frag lists,
# so the capture on wa0 holds packets cut from both shapes.
setup_segmenting() {
	setup || return 1
	command -v ethtool > /dev/null ||
		{ echo "no ethtool (tools/setup-deps installs it)"; return 1; }
	ip link set wr0 gso_max_segs 1 && ip -n wns1 link set wr1 gso_max_segs 1 &&
	ip -n wns2 link set wa0 gso_max_segs 1 && ip -n wns3 link set wa1 gso_max_segs 1 &&
	ip netns exec wns2 ethtool -K wa0 tx-gso-list off
}

# skbs_fail CMD...: CMD while one in ten of the skbs softhca would send
# packets in cannot be had (fail_skb, net.c): a frag list's packet then
# goes in pages, a lone packet (an ACK, say) is lost and RC recovers.
# shw3's netdev takes frag lists, so a batch of page fragments from shw3
# is the fallback's.  Needs fault injection (the debug kernel has it).
skbs_fail() {
	fa=/sys/kernel/debug/softhca/fail_skb
	if [ ! -d $fa ]; then
		echo "SKIP: no $fa (a kernel without fault injection; the debug kernel has it)"
		return 77
	fi
	d0=$(hwc shw3 tx_drops) g0=$(hwc shw3 tx_gso_skbs) l0=$(hwc shw3 tx_gso_lists)
	echo 1 > $fa/interval && echo -1 > $fa/times && echo 0 > $fa/verbose &&
		echo "${FAIL_SKB_PERCENT:-10}" > $fa/probability || return 1
	"$@"
	rc=$?
	echo 0 > $fa/probability
	d=$(($(hwc shw3 tx_drops) - d0)) g=$(($(hwc shw3 tx_gso_skbs) - g0))
	l=$(($(hwc shw3 tx_gso_lists) - l0))
	echo "NOTE: shw3: $d packets lost, $g GSO skbs, $((g - l)) of them page fragments"
	[ $rc = 0 ] || return 1
	[ "$d" -gt 0 ] || { echo "shw3 lost no packet: nothing was injected"; return 1; }
	[ $((g - l)) -gt 0 ] || { echo "shw3 never fell back to pages"; return 1; }
}

# stock_rxe CMD...: the softhca <-> rxe traffic, on Debian's kernel only.
# On the debug kernel it took two minutes of the tier and runs the
# kernel paths of softhca that the softhca <-> softhca traffic runs
# there already.
stock_rxe() {
	stock_only "softhca <-> rxe runs softhca's paths that softhca <-> softhca runs here; Debian's kernel runs it" ||
		return 77
	"$@"
}

t "wire_capture: veths in namespaces, softhca and rxe devices on them" setup_segmenting
t "wire_capture: RC, UC, UD softhca <-> softhca captured on wa0" \
	capture wns2 wa0 "$TMP/sh.pcap" batched "shw2 frags shw3 lists" traffic_sh
t "wire_capture: RC and UD softhca <-> rxe captured on wr0" \
	stock_rxe rxe capture - wr0 "$TMP/rxe.pcap" batched "shw1 lists" traffic_rxe
t "wire_capture: tshark decodes every softhca <-> softhca frame, none malformed" \
	stock tshark_clean "$TMP/sh.pcap" 100
t "wire_capture: tshark decodes every softhca <-> rxe frame, none malformed" \
	stock rxe tshark_clean "$TMP/rxe.pcap" 50
t "wire_capture: every softhca <-> softhca frame's ICRC recomputed" \
	stock icrc_right "$TMP/sh.pcap"
t "wire_capture: every softhca <-> rxe frame's ICRC recomputed (rxe's and softhca's)" \
	stock rxe icrc_right "$TMP/rxe.pcap"
t "wire_capture: $FRAMES fuzzed frames at shw2 beside checked RC traffic" fuzz
t "wire_capture: RC SEND/WRITE while one skb in ten cannot be had, every byte" \
	skbs_fail uc checked fi_rc wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 19098 -R -n 8 -s 65536
teardown
t "wire_capture: deleting the namespaces takes their devices and sockets" sockets_gone
cleanup_all
rm -rf "$TMP"
tap_done
