# SPDX-License-Identifier: GPL-2.0-only
# The RoCEv2 wire topology of wire.sh and wire_uc.sh: veths in network
# namespaces, softhca devices on them and Debian's rdma_rxe, and the
# helpers that run a program pair across it.  Source it after lib.sh.
#
# Topology (rxe of 6.1 works in the initial namespace only, and its
# socket takes every RoCEv2 packet there, so softhca stays out of it):
#   init_net  wr0 10.77.0.1/24 fd77::1/64  rxe0 (rdma_rxe)
#   wns1      wr1 10.77.0.2/24 fd77::2/64  shw1 (softhca)
#   wns2      wa0 10.78.0.1/24             shw2 (softhca)
#   wns3      wa1 10.78.0.2/24             shw3 (softhca)
# ib_core shows every device in every namespace (shared mode); a program
# run in a namespace reaches its peer over that namespace's veth.

RUN=$REPO/tools/softhca-run
UCW=$SELFTESTS/uc_wire
TMP=$(mktemp -d)
T=60

modprobe ib_uverbs
modprobe softhca
# WIRE_RXE=0 (set before sourcing this): a file with no rxe point, or
# none on this kernel; rdma_rxe is neither loaded nor given a device
# (on the debug kernel that took several seconds of setup).
rxe_why=
if [ "${WIRE_RXE:-1}" = 0 ]; then
	rxe_why="this file runs no point against rdma_rxe here"
elif ! modprobe rdma_rxe 2>/dev/null; then
	rxe_why="rdma_rxe does not load in this kernel"
fi

# rxe CMD...: a point against rdma_rxe, skipped (saying why) without it.
rxe() {
	[ -z "$rxe_why" ] || { echo "SKIP: $rxe_why"; return 77; }
	"$@"
}

# inns NS CMD...: CMD in namespace NS ("-": the initial one).
inns() {
	ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}

setup() {
	for ns in wns1 wns2 wns3; do ip netns add $ns || return 1; done
	for ns in wns1 wns2 wns3; do ip -n $ns link set lo up || return 1; done
	ip link add wr0 type veth peer name wr1 netns wns1 || return 1
	ip addr add 10.77.0.1/24 dev wr0 && ip -6 addr add fd77::1/64 dev wr0 nodad &&
	ip link set wr0 up || return 1
	ip -n wns1 addr add 10.77.0.2/24 dev wr1 &&
	ip -n wns1 -6 addr add fd77::2/64 dev wr1 nodad &&
	ip -n wns1 link set wr1 up || return 1
	ip -n wns2 link add wa0 type veth peer name wa1 netns wns3 || return 1
	ip -n wns2 addr add 10.78.0.1/24 dev wa0 && ip -n wns2 link set wa0 up &&
	ip -n wns3 addr add 10.78.0.2/24 dev wa1 && ip -n wns3 link set wa1 up || return 1
	rss wr0 && rss wr1 wns1 && rss wa0 wns2 && rss wa1 wns3 || return 1
	inns wns1 rdma link add shw1 type softhca netdev wr1 || return 1
	inns wns2 rdma link add shw2 type softhca netdev wa0 || return 1
	inns wns3 rdma link add shw3 type softhca netdev wa1 || return 1
	if [ -z "$rxe_why" ]; then
		rdma link add rxe0 type rxe netdev wr0 || return 1
	fi
	# The IPv4 GIDs (index 1 after the link-local one) must be listed.
	for d in shw1 shw2 shw3; do
		wait_for 10 grep -q 'ffff' /sys/class/infiniband/$d/ports/1/gids/1 ||
			{ echo "$d: no IPv4 GID"; return 1; }
	done
}

# wrap DEV: how a program reaches DEV: softhca-run for softhca devices.
wrap() {
	case "$1" in
	rxe*) echo "" ;;
	*) echo "$RUN" ;;
	esac
}

# serve PROG NAME NS DEV ADDR PORT [ARGS]: PROG's server on DEV in NS
# with the GID of ADDR, in the background ($srv), output in
# $TMP/NAME.srv; returns once it listens on TCP PORT.
serve() {
	prog=$1 sname=$2 sns=$3 sdev=$4 saddr=$5 sport=$6
	shift 6
	sg=$(gid_index "$sdev" "$saddr") || return 1
	# Not through inns (a function: backgrounded, a subshell): $srv
	# must be the process that enters SNS (ip execs timeout there), for
	# listens_in to read SNS's sockets.
	nsx=
	[ "$sns" = - ] || nsx="ip netns exec $sns"
	# shellcheck disable=SC2046,SC2086
	$nsx timeout "$T" $(wrap "$sdev") "$prog" -d "$sdev" -g "$sg" -p "$sport" "$@" \
		> "$TMP/$sname.srv" 2>&1 &
	srv=$!
	# Up to 20 s, less if it dies first (it will never listen then).
	# Until ip has entered SNS, $srv's sockets are the initial
	# namespace's, where no test listens on a port of another's.
	n=0
	while ! listens_in "$srv" "$sport"; do
		n=$((n + 1))
		if [ $n -gt 200 ] || ! kill -0 "$srv" 2>/dev/null; then
			kill "$srv" 2>/dev/null; wait "$srv"
			echo "server never listened"; cat "$TMP/$sname.srv"
			return 1
		fi
		sleep 0.1
	done
}

# served NAME CRC [OKPAT]: the client of serve's server NAME exited CRC
# (its output in $TMP/NAME.cli): both must exit 0, the client print
# OKPAT.
served() {
	wait "$srv"
	src=$?
	if [ $src != 0 ] || [ "$2" != 0 ] || ! grep -q "${3:-.}" "$TMP/$1.cli"; then
		echo "server exit $src, client exit $2"
		echo "--- server"; cat "$TMP/$1.srv"
		echo "--- client"; cat "$TMP/$1.cli"
		return 1
	fi
}

# pair PROG OKPAT NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]:
# PROG's server on SDEV in SNS with the GID of SADDR, its client on CDEV
# in CNS with the GID of CADDR, exchanging QP numbers and GIDs over TCP
# with HOST (the server's IPv4 address: the tools listen on IPv4 only);
# both must exit 0 and the client print OKPAT.
pair() {
	prog=$1 okpat=$2
	shift 2
	name=$1 sns=$2 sdev=$3 saddr=$4 cns=$5 cdev=$6 caddr=$7 host=$8 port=$9
	shift 9
	cg=$(gid_index "$cdev" "$caddr") || return 1
	serve "$prog" "$name" "$sns" "$sdev" "$saddr" "$port" "$@" || return 1
	# shellcheck disable=SC2046
	inns "$cns" timeout "$T" $(wrap "$cdev") "$prog" -d "$cdev" -g "$cg" -p "$port" "$@" "$host" \
		> "$TMP/$name.cli" 2>&1
	served "$name" $? "$okpat" || return 1
	echo "NOTE: $name: $(grep "$okpat" "$TMP/$name.cli" | head -1)"
}

# hwc DEV NAME: one of DEV's port counters (counters.c).
# read, not cat: an exec costs about 0.2 s on the debug kernel.
# hwc_read DEV NAME: the same into $hwc_v, without the subshell of
# $(hwc ...), for loops over many counters.
hwc_read() { read -r hwc_v < "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
hwc() { hwc_read "$1" "$2" && echo "$hwc_v"; }

# uc OKPAT NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]: pair
# with uc_wire.  On the debug kernel the RC pairs wait 1 s for an ACK
# (-T 18), not 67 ms: niced beside the stock tier's guest, that guest's
# vCPUs can go half a second without running (retry_cnt 7 of 67 ms ran
# out there, with no packet lost).
uc() {
	[ -x "$UCW" ] || { echo "SKIP: $UCW not built (no libibverbs)"; return 77; }
	if debug_kernel; then pair "$UCW" "$@" -T 18; else pair "$UCW" "$@"; fi
}

# batched "DEV SHAPE ..." CMD...: CMD, and each DEV sent batches
# (net_batch.c), all of its SHAPE: "frags" (page fragments) or "lists"
# (frag lists).
batched() {
	# shellcheck disable=SC2086 # the pairs are words
	set -- $1 -- "$@"
	: > "$TMP/gso0"
	while [ "$1" != -- ]; do
		echo "$1 $2 $(hwc "$1" tx_gso_skbs) $(hwc "$1" tx_gso_lists)" >> "$TMP/gso0"
		shift 2
	done
	shift 2	# --, and the pairs' word
	"$@" || return 1
	while read -r d shape g0 l0; do
		g=$(($(hwc "$d" tx_gso_skbs) - g0)) l=$(($(hwc "$d" tx_gso_lists) - l0))
		echo "NOTE: $d sent $g GSO skbs, $l of them frag lists"
		[ "$g" -gt 0 ] || { echo "$d sent no GSO skb"; return 1; }
		case $shape in
		frags) [ "$l" = 0 ] || { echo "$d sent frag lists"; return 1; } ;;
		*) [ "$l" = "$g" ] || { echo "$d sent page fragments"; return 1; } ;;
		esac
	done < "$TMP/gso0"
}

# rc_check NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]: uc_wire
# -R's checked ping-pong (SEND, SEND with immediate, WRITE, WRITE with
# immediate) between the pair.
rc_check() {
	uc checked "$@" -R
}

# by_sizes CHECK NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT: CHECK
# (rc_check, uc_check...) at 0, 64, 1024 B, 16 KiB, 1 MiB and 16 MiB
# (ports PORT to PORT + 5), each message and receive cut into 1 to 4
# SGEs at random (uc_wire -G).
by_sizes() {
	sz_chk=$1 sz_name=$2 sz_port=${10}
	for sz in 0 64 1024 16384 1048576 16777216; do
		case $sz in
		1048576) n=4 ;;
		16777216) n=1 ;;	# 4 x 16 MiB each way, new cuts each
		*) n=20 ;;
		esac
		if [ $sz = 16777216 ] && debug_kernel; then
			# The same paths as 1 MiB, and rxe under KASAN
			# outlasted the pair's minute (wire_rc.sh run
			# there by name; wire_uc.sh in make check-full).
			echo "NOTE: ${sz_name}: 16 MiB left out on the debug kernel"
			continue
		fi
		"$sz_chk" "${sz_name}_$sz" "$3" "$4" "$5" "$6" "$7" "$8" "$9" \
			"$sz_port" -n $n -s $sz -G || return 1
		sz_port=$((sz_port + 1))
	done
}

# rd_check NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]: the
# client READs from the server's buffer (uc_wire -R -D).
rd_check() {
	uc 'READs of' "$@" -R -D
}

# sum COUNTER DEV...: a counter summed over devices.
sum() {
	c=$1 n=0
	shift
	for d in "$@"; do n=$((n + $(hwc "$d" "$c"))); done
	echo $n
}

# ROUGH: what netem does to both veths of a pair on a rough wire (the
# rough points of wire_rc.sh, wire_bulk.sh): loss, duplication, and
# reordering (a quarter of the packets go at once, the rest 2 ms late,
# so those overtake them).
# shellcheck disable=SC2034 # for the files that source this one
ROUGH="loss 5% duplicate 2% delay 2ms reorder 25% 50%"

# rough_run BATCH SECS CHECK NS1 VETH1 NS2 VETH2 NAME DEVS CHECKARGS...:
# ROUGH on both veths (each direction) while CHECK (rc_check, rd_check,
# at_check...) runs its pair, at most SECS seconds, softhca sending
# BATCH packets a transmit batch (loss_batches below; netem takes or
# leaves a batch whole); every message checked, and softhca's devices
# (DEVS) sent packets again or received duplicates.
rough_run() {
	rbatch=$1 rsecs=$2 chk_=$3 n1=$4 v1=$5 n2=$6 v2=$7 name=$8 devs=$9
	shift 9
	# shellcheck disable=SC2086
	r0=$(sum tx_retransmits $devs) d0=$(sum rx_duplicates $devs)
	# shellcheck disable=SC2086
	inns "$n1" tc qdisc add dev "$v1" root netem $ROUGH &&
	inns "$n2" tc qdisc add dev "$v2" root netem $ROUGH ||
		{ echo "no netem here"; inns "$n1" tc qdisc del dev "$v1" root; return 1; }
	T=$rsecs
	loss_batches "$rbatch"
	s0=$(date +%s)
	"$chk_" "$name" "$@"
	rc=$?
	s=$(($(date +%s) - s0))
	loss_batches 64
	T=60
	# From tc -s's "Sent B bytes P pkt (dropped D, ...)": P and D.
	# shellcheck disable=SC2016 # awk's fields, not the shell's
	tc_sent='/dropped/ { d = $7; sub(",", "", d); print $4, d; exit }'
	st1=$(inns "$n1" tc -s qdisc show dev "$v1" | awk "$tc_sent")
	st2=$(inns "$n2" tc -s qdisc show dev "$v2" | awk "$tc_sent")
	inns "$n1" tc qdisc del dev "$v1" root
	inns "$n2" tc qdisc del dev "$v2" root
	[ $rc = 0 ] || return 1
	# shellcheck disable=SC2086
	r=$(($(sum tx_retransmits $devs) - r0)) d=$(($(sum rx_duplicates $devs) - d0))
	echo "NOTE: $name: $s s; tc (skbs sent, dropped) $v1: $st1, $v2: $st2; softhca: $r packets sent again, $d duplicates received"
	[ $((r + d)) -gt 0 ] || { echo "neither a retransmission nor a duplicate counted"; return 1; }
}

# loss_batches N: softhca's transmit batches (net_batch.c: one UDP GSO
# skb each) of at most N packets.  netem loses, duplicates and reorders
# skbs, so a batch goes or stays whole: the loss points send 2 packets a
# batch (batches still, and about as many losses as packets would
# have: one point sent about 40 batches and netem's 5 % dropped none),
# then loss_batches 64 (the default) again.
loss_batches() { echo "$1" > /sys/module/softhca/parameters/tx_batch; }

teardown() {
	for d in shw1 shw2 shw3 rxe0; do
		rdma link delete $d 2>/dev/null
	done
	ip link del wr0 2>/dev/null
	for ns in wns1 wns2 wns3; do ip netns del $ns 2>/dev/null; done
	modprobe -r rdma_rxe 2>/dev/null
	true
}

# After the namespaces are gone: their sockets went with their devices.
sockets_gone() {
	wait_for 10 sh -c '! ip netns list | grep -q wns' || return 1
	! dev_exists shw1 && ! dev_exists shw2 && ! dev_exists shw3 ||
		{ echo "a device outlived its namespace"; ls /sys/class/infiniband; return 1; }
}

