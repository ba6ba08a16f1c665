#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Runs inside the guest: the RoCEv2 wire rows of make bench (guest.sh
# calls it last; alone: tools/vm/run-guest -- sh tools/bench/wire.sh
# OUT).  Appends one JSON object per result to $1, case names wire_*.
# Every pair below puts its frames on a veth (checked by the veth's
# packet counters, written as case wire_veth):
#
#   softhca <-> softhca  bwn2 wa0 10.78.0.1 shw2 | bwn3 wa1 10.78.0.2 shw3
#     one softhca-perf drives both (softhca looks routes and sockets up
#     in each netdev's namespace).
#   rxe <-> rxe          init_net xv0 10.79.0.1 rxw0 | xv1 10.79.0.2 rxw1
#     rdma_rxe of 6.1 works in init_net only, so both ends are there;
#     policy routing sends what one end addresses to the other out of
#     its own veth instead of over lo (see rxe_pair_routes), and
#     accept_local lets the other end take a packet from a local source.
#     One softhca-perf-ibverbs drives both.
#   softhca <-> rxe      init_net mv0 10.81.0.1 rxm0 | bwn1 mv1 10.81.0.2 shm1
#     two processes (softhca-perf has no client/server mode): Debian's
#     perftest, rxe's server in init_net, softhca's client under
#     softhca-run in bwn1; its rxe column is perftest on rxw0 <- rxw1.
#
# Then the same 1 MiB WRITE under 5 % loss (netem on both ends of every
# veth).
#
# WIRE_REPS (environment, default 5): how many times the softhca-perf
# rows run, softhca and rxe back to back each time (a record's "rep"):
# between runs the same module's 64 B rate spread 0.036-0.079 Mpps and
# rxe's 0.014-0.049 (where RPS puts each flow's softirq: every run's new
# QPs hash anew), so make bench reports medians (tools/bench/table.py).
# WIRE_ROWS (environment): run only these softhca-perf rows, a list of
# lat, rate and bw, and neither the perftest nor the loss rows (to
# iterate on one figure); unset: everything.  WIRE_PROFILE=PREFIX: each
# of those rows runs under "perf record -a" (cpu-clock: the guest has no
# PMU under TCG), its profile in PREFIX.CASE.DEVICE.data and .txt (each
# function's share of all samples and of the poller's, by itself and with
# what it calls: tools/bench/profile.py; the figures are then not
# comparable with a run without it).
#
# WIRE_PLACE_REPS (environment, default 2; 0: none): then the same three
# rows again, and the UD SEND ping-pong beside the RC one (the floor under
# it, table.py's "RC SEND floor"), with the receive placed, not hashed:
# the benchmark pinned to CPU 0 and each end's receive (its veth's RPS
# mask, set by rss) steered either to CPU 0, the benchmark's ("app"), or
# to CPU 1 ("oth": rxe's idle CPU, softhca's poller's, which leaves the
# benchmark's CPU), all four combinations, as records of case
# wire_place_* with a "place" field (the first end's
# receive, shw2's or rxw0's, then the second's).  Hashed, each run draws
# a placement: rxe's RC SEND was 22-29 us in some runs and 57-105 in
# others of one guest, and a guest's median of five then depended on
# the draw (its ratio 0.30-0.92 across three guests); placed, the figure
# of each combination repeats (Documentation/performance.rst).
# WIRE_PLACES (environment): only these placements, e.g. "app/oth".
cd "$(dirname "$0")/../.." || exit 1
. selftests/lib.sh
out=${1:-build/bench/wire.jsonl}
mkdir -p build/bench
P=build/bin/softhca-perf
PI=build/bin/softhca-perf-ibverbs
RUN=tools/softhca-run
wfailed=0

modprobe ib_uverbs
modprobe softhca
modprobe rdma_rxe || { echo "bench wire: rdma_rxe does not load" >&2; exit 1; }

# v4gid DEV ADDR: DEV's GID index for IPv4 ADDR (selftests/lib.sh's
# gid_index), waited for.
v4gid() {
	n=0
	while [ $n -lt 100 ]; do
		gid_index "$1" "$2" 2>/dev/null && return 0
		n=$((n + 1))
		sleep 0.1
	done
	echo "bench wire: no GID $2 on $1" >&2
	return 1
}

# addr NS IF ADDR: ADDR/24 on IF in NS ("-": init_net), IF up.
addr() {
	if [ "$1" = - ]; then set -- "" "$2" "$3"; else set -- "-n $1" "$2" "$3"; fi
	# shellcheck disable=SC2086
	ip $1 addr add "$3/24" dev "$2" && ip $1 link set "$2" up
}

# The rxe pair's routes: a packet from one end's address to the other's
# leaves by its own veth.  Rules at preference 10 (ahead of the local
# table, moved from 0 to 1000) send locally made packets (iif lo) from
# A to B through a table whose only route is B on A's veth; arriving
# ones are still delivered by the local table.  Static neighbours spare
# ARP (refused from a local source); accept_local and rp_filter 0 let
# the receiving veth take a packet whose source is a local address.
rxe_pair_routes() {
	ip rule add pref 1000 lookup local && ip rule del pref 0 lookup local &&
	ip route add 10.79.0.2 dev xv0 src 10.79.0.1 table 791 &&
	ip route add 10.79.0.1 dev xv1 src 10.79.0.2 table 792 &&
	ip rule add pref 10 iif lo from 10.79.0.1 to 10.79.0.2 lookup 791 &&
	ip rule add pref 10 iif lo from 10.79.0.2 to 10.79.0.1 lookup 792 &&
	ip neigh replace 10.79.0.2 dev xv0 lladdr "$(cat /sys/class/net/xv1/address)" nud permanent &&
	ip neigh replace 10.79.0.1 dev xv1 lladdr "$(cat /sys/class/net/xv0/address)" nud permanent || return 1
	for i in xv0 xv1; do
		sysctl -qw net.ipv4.conf.$i.accept_local=1 net.ipv4.conf.$i.rp_filter=0 || return 1
	done
	sysctl -qw net.ipv4.conf.all.rp_filter=0
}

wire_setup() {
	for ns in bwn1 bwn2 bwn3; do
		ip netns add $ns && ip -n $ns link set lo up || return 1
	done
	ip -n bwn2 link add wa0 type veth peer name wa1 netns bwn3 &&
	addr bwn2 wa0 10.78.0.1 && addr bwn3 wa1 10.78.0.2 || return 1
	ip link add xv0 type veth peer name xv1 &&
	addr - xv0 10.79.0.1 && addr - xv1 10.79.0.2 && rxe_pair_routes || return 1
	ip link add mv0 type veth peer name mv1 netns bwn1 &&
	addr - mv0 10.81.0.1 && addr bwn1 mv1 10.81.0.2 || return 1
	# Flow-steered receive on every veth, as the tests' (selftests/lib.sh).
	rss wa0 bwn2 && rss wa1 bwn3 && rss xv0 && rss xv1 && rss mv0 &&
	rss mv1 bwn1 || return 1
	ip netns exec bwn2 rdma link add shw2 type softhca netdev wa0 &&
	ip netns exec bwn3 rdma link add shw3 type softhca netdev wa1 &&
	ip netns exec bwn1 rdma link add shm1 type softhca netdev mv1 &&
	rdma link add rxw0 type rxe netdev xv0 &&
	rdma link add rxw1 type rxe netdev xv1 &&
	rdma link add rxm0 type rxe netdev mv0 || return 1
	gsh=$(v4gid shw2 10.78.0.1) && [ "$(v4gid shw3 10.78.0.2)" = "$gsh" ] &&
	grx=$(v4gid rxw0 10.79.0.1) && [ "$(v4gid rxw1 10.79.0.2)" = "$grx" ] &&
	gm0=$(v4gid rxm0 10.81.0.1) && gm1=$(v4gid shm1 10.81.0.2) ||
		{ echo "bench wire: IPv4 GIDs differ between the ends" >&2; return 1; }
}

wire_teardown() {
	for d in shw2 shw3 shm1 rxw0 rxw1 rxm0; do rdma link delete $d 2>/dev/null; done
	ip link del xv0 2>/dev/null
	ip link del mv0 2>/dev/null
	for ns in bwn1 bwn2 bwn3; do ip netns del $ns 2>/dev/null; done
	ip rule del pref 10 2>/dev/null
	ip rule del pref 10 2>/dev/null
	ip rule add pref 0 lookup local 2>/dev/null && ip rule del pref 1000 lookup local 2>/dev/null
	true
}

# txp NS IF: IF's transmitted packets.
txp() {
	if [ "$1" = - ]; then cat "/sys/class/net/$2/statistics/tx_packets"
	else ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_packets"; fi
}

# veth PAIR NS0 IF0 NS1 IF1 BEFORE0 BEFORE1: the packets both ends sent
# since BEFORE0/BEFORE1, as a wire_veth object.
veth() {
	a=$(($(txp "$2" "$3") - $6)) b=$(($(txp "$4" "$5") - $7))
	echo "# wire: $1: $3 sent $a packets, $5 sent $b" >&2
	echo "{\"case\":\"wire_veth\",\"pair\":\"$1\",\"if0\":\"$3\",\"tx0\":$a,\"if1\":\"$5\",\"tx1\":$b}" >> "$out"
}

# perf CASE ARGS...: softhca-perf on shw2 -> shw3 and softhca-perf-ibverbs
# on rxw0 -> rxw1, the same arguments.
perf() {
	name=$1
	shift
	for side in softhca rxe; do
		if [ $side = softhca ]; then
			prog=$P ends="-g $gsh -d shw2 -D shw3"
		else
			prog=$PI ends="-g $grx -d rxw0 -D rxw1"
		fi
		echo "# $name $side: $* $ends" >&2
		prof=
		[ -n "${WIRE_PROFILE:-}" ] &&
			prof="command perf record -q -a -g -e cpu-clock -o $WIRE_PROFILE.$name.$side.data --"
		# shellcheck disable=SC2086
		if $prof timeout 300 $pin "$prog" "$@" $ends --json > build/bench/wire.out; then
			sed "s|^{|{\"case\":\"$name\",\"device\":\"$side\",\"rep\":$rep,${place:+\"place\":\"$place\",}|" build/bench/wire.out >> "$out" ||
				wfailed=$((wfailed + 1))
		else
			echo "bench wire: $name on $side failed" >&2
			wfailed=$((wfailed + 1))
		fi
		[ -z "$prof" ] || for c in "" softhca/0; do
			command perf script -i "$WIRE_PROFILE.$name.$side.data" \
				-F comm,ip,sym 2> /dev/null |
				tools/bench/profile.py ${c:+--comm "$c"}
		done > "$WIRE_PROFILE.$name.$side.txt" 2>&1
	done
}

# pt CASE DEVICE PAIR TEST BYTES ITERS: perftest's ib_TEST on PAIR,
# reported as DEVICE: shrx softhca <-> rxe (server on rxm0 in init_net,
# client on shm1 in bwn1 under softhca-run), rxrx rxe <-> rxe (server
# on rxw0, client on rxw1), shsh softhca <-> softhca (server on shw2 in
# bwn2, client on shw3 in bwn3).
ptport=18950
. tools/bench/perftest.sh
pt() {
	case $3 in
	shrx) set -- "$1" "$2" "$4" "$5" "$6" "" rxm0 "$gm0" "ip netns exec bwn1 $RUN" shm1 "$gm1" 10.81.0.1 ;;
	rxrx) set -- "$1" "$2" "$4" "$5" "$6" "" rxw0 "$grx" "" rxw1 "$grx" localhost ;;
	shsh) set -- "$1" "$2" "$4" "$5" "$6" "ip netns exec bwn2 $RUN" shw2 "$gsh" \
		"ip netns exec bwn3 $RUN" shw3 "$gsh" 10.78.0.1 ;;
	esac
	perftest_run "$@" || wfailed=$((wfailed + 1))
}

# loss PCT: netem loss PCT % on both ends of the three veths (0: none).
loss() {
	for x in "bwn2 wa0" "bwn3 wa1" "- xv0" "- xv1" "- mv0" "bwn1 mv1"; do
		# shellcheck disable=SC2086
		set -- "$1" $x
		if [ "$2" = - ]; then set -- "$1" tc "$3"; else set -- "$1" "tc -n $2" "$3"; fi
		if [ "$1" = 0 ]; then
			# shellcheck disable=SC2086
			$2 qdisc del dev "$3" root 2>/dev/null
		else
			# shellcheck disable=SC2086
			$2 qdisc replace dev "$3" root netem loss "$1%" || return 1
		fi
	done
}

wire_teardown
if ! wire_setup; then
	echo "bench wire: setup failed" >&2
	wire_teardown
	exit 1
fi
modprobe sch_netem
sh_a=$(txp bwn2 wa0) sh_b=$(txp bwn3 wa1) rx_a=$(txp - xv0) rx_b=$(txp - xv1)
mx_a=$(txp - mv0) mx_b=$(txp bwn1 mv1)

# Run lengths: rxe on the wire under TCG takes some 20 us a hop, 20-40 us
# a 64 B WRITE and some 5 ms a MiB; a second or two a case each.
# row NAME: whether WIRE_ROWS asks for row NAME.
row() {
	case " ${WIRE_ROWS:-lat rate bw} " in *" $1 "*) return 0 ;; esac
	return 1
}

pin='' place=''
rep=1
while [ "$rep" -le "${WIRE_REPS:-5}" ]; do
	row lat && perf wire_lat_send send_lat -s 64 -n 5000
	# The same ping-pong on UD: no ACKs, so beside the RC row it shows
	# what answering each SEND costs (Documentation/performance.rst).
	row lat && perf wire_lat_send_ud send_lat -c UD -s 64 -n 5000
	row rate && perf wire_rate_write write_bw -s 64 -n 50000
	row bw && perf wire_bw_write write_bw -s 1M -n 100
	rep=$((rep + 1))
done
# The placed rows (WIRE_PLACE_REPS above).  CPU 1 stands for "the other
# CPU": with more than two, the poller may settle on yet another one.
if [ "$(nproc)" -lt 2 ] || [ "${WIRE_PLACE_REPS:-2}" -eq 0 ]; then
	[ "$(nproc)" -ge 2 ] || echo "bench wire: one CPU, no placed rows" >&2
else
	pin="taskset -c 0"
	rep=1
	while [ "$rep" -le "${WIRE_PLACE_REPS:-2}" ]; do
		for place in ${WIRE_PLACES:-app/app app/oth oth/app oth/oth}; do
			# RPS masks: 1 is CPU 0, 2 CPU 1.
			a=1 b=1
			[ "${place%/*}" = oth ] && a=2
			[ "${place#*/}" = oth ] && b=2
			{ rss wa0 bwn2 $a && rss wa1 bwn3 $b && rss xv0 "" $a &&
				rss xv1 "" $b; } || { wfailed=$((wfailed + 1)); continue; }
			row lat && perf wire_place_lat_send send_lat -s 64 -n 5000
			# UD, no ACKs and no RC state: the floor under the RC
			# row (table.py's "RC SEND floor").
			row lat && perf wire_place_lat_ud send_lat -c UD -s 64 -n 5000
			row rate && perf wire_place_rate_write write_bw -s 64 -n 50000
			row bw && perf wire_place_bw_write write_bw -s 1M -n 100
		done
		rep=$((rep + 1))
	done
	pin='' place=''
	{ rss wa0 bwn2 && rss wa1 bwn3 && rss xv0 && rss xv1; } || wfailed=$((wfailed + 1))
fi

if [ -n "${WIRE_ROWS:-}" ]; then
	: # the softhca-perf rows asked for only
elif command -v ib_send_lat > /dev/null; then
	for c in "lat_send send_lat 64 5000" "rate_write write_bw 64 50000" \
		 "bw_write write_bw 1048576 100"; do
		# shellcheck disable=SC2086
		set -- $c
		pt "wire_sh_rxe_$1" softhca shrx "$2" "$3" "$4"
		pt "wire_sh_rxe_$1" rxe rxrx "$2" "$3" "$4"
	done
else
	echo "bench wire: perftest not installed, no softhca <-> rxe rows" >&2
fi
veth softhca-softhca bwn2 wa0 bwn3 wa1 "$sh_a" "$sh_b"
veth rxe-rxe - xv0 - xv1 "$rx_a" "$rx_b"
veth softhca-rxe - mv0 bwn1 mv1 "$mx_a" "$mx_b"

# Under loss by perftest, all three pairs: softhca-perf gives up after
# 10 s without a completion, and rxe <-> rxe went that long (one 1 MiB
# WRITE) at 5 % loss.  The rxe <-> rxe figure serves both rows.
if [ -n "${WIRE_ROWS:-}" ]; then
	:
elif ! command -v ib_write_bw > /dev/null; then
	echo "bench wire: perftest not installed, no loss rows" >&2
elif loss 5; then
	pt wire_bw_write_loss5 softhca shsh write_bw 1048576 20
	pt wire_bw_write_loss5 rxe rxrx write_bw 1048576 20
	pt wire_sh_rxe_bw_write_loss5 softhca shrx write_bw 1048576 20
	grep '"case":"wire_bw_write_loss5","device":"rxe"' "$out" | tail -1 |
		sed 's/"case":"wire_bw_write_loss5"/"case":"wire_sh_rxe_bw_write_loss5"/' >> "$out"
	loss 0
else
	echo "bench wire: netem failed" >&2
	wfailed=$((wfailed + 1))
fi
rm -f build/bench/wire.out
wire_teardown
echo "# bench wire: $wfailed runs failed"
[ $wfailed = 0 ]
