#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# RoCEv2 on the wire (drivers/softhca/net.c, wire.c): real frames on a
# veth, softhca against Debian's rdma_rxe and against another softhca
# device in another network namespace.  So far UD: Debian's unmodified
# ibv_ud_pingpong (-c: every received buffer checked) under softhca-run
# on one side and on rxe, or under softhca-run too, on the other.
#
# Topology (rxe of 6.1 works in the initial namespace only, and its
# socket takes every RoCEv2 packet there, so softhca stays out of it):
#   init_net  wr0 10.77.0.1/24 fd77::1/64  rxe0 (rdma_rxe)
#   wns1      wr1 10.77.0.2/24 fd77::2/64  shw1 (softhca)
#   wns2      wa0 10.78.0.1/24             shw2 (softhca)
#   wns3      wa1 10.78.0.2/24             shw3 (softhca)
# ib_core shows every device in every namespace (shared mode); a program
# run in a namespace reaches its peer over that namespace's veth.
. "$(dirname "$0")/lib.sh"

RUN=$REPO/tools/softhca-run
TMP=$(mktemp -d)
T=60

modprobe ib_uverbs
modprobe softhca
rxe_why=
if ! modprobe rdma_rxe 2>/dev/null; then
	rxe_why="rdma_rxe does not load in this kernel"
fi

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

# gid_index DEV ADDR: the index of DEV's GID for ADDR (IPv4 dotted, or
# IPv6 written out in full as sysfs prints it), for -g.
gid_index() {
	case "$2" in
	*.*) g=$(echo "$2" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }') ;;
	*) g=$2 ;;
	esac
	for f in /sys/class/infiniband/$1/ports/1/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = "$g" ] && { echo "${f##*/}"; return 0; }
	done
	echo "no GID $2 on $1" >&2
	return 1
}

# listening NS PORT: a TCP socket listens on PORT in NS.
listening() {
	hex=$(printf '%04X' "$2")
	inns "$1" cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }'
}

# wrap DEV: how a program reaches DEV: softhca-run for softhca devices.
wrap() {
	case "$1" in
	rxe*) echo "" ;;
	*) echo "$RUN" ;;
	esac
}

# ud_pingpong NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]: the
# server on SDEV in SNS with the GID of SADDR, the client on CDEV in CNS
# with the GID of CADDR, exchanging QP numbers and GIDs over TCP with
# HOST (the server's IPv4 address: the tools listen on IPv4 only).
ud_pingpong() {
	name=$1 sns=$2 sdev=$3 saddr=$4 cns=$5 cdev=$6 caddr=$7 host=$8 port=$9
	shift 9
	sg=$(gid_index "$sdev" "$saddr") && cg=$(gid_index "$cdev" "$caddr") || return 1
	# shellcheck disable=SC2046
	inns "$sns" timeout $T $(wrap "$sdev") ibv_ud_pingpong -d "$sdev" -g "$sg" -p "$port" -c "$@" \
		> "$TMP/$name.srv" 2>&1 &
	srv=$!
	if ! wait_for 20 listening "$sns" "$port"; then
		kill $srv 2>/dev/null; wait $srv
		echo "server never listened"; cat "$TMP/$name.srv"
		return 1
	fi
	# shellcheck disable=SC2046
	inns "$cns" timeout $T $(wrap "$cdev") ibv_ud_pingpong -d "$cdev" -g "$cg" -p "$port" -c "$@" "$host" \
		> "$TMP/$name.cli" 2>&1
	crc=$?
	wait $srv
	src=$?
	if [ $src != 0 ] || [ $crc != 0 ] || ! grep -q 'bytes in' "$TMP/$name.cli"; then
		echo "server exit $src, client exit $crc"
		echo "--- server"; cat "$TMP/$name.srv"
		echo "--- client"; cat "$TMP/$name.cli"
		return 1
	fi
	echo "NOTE: $name: $(grep 'bytes in' "$TMP/$name.cli" | head -1)"
}

need_rxe() {
	[ -z "$rxe_why" ] || { echo "SKIP: $rxe_why"; return 77; }
	ud_pingpong "$@"
}

# A softhca device in a namespace other than the one rdma_rxe holds the
# port in has its own sockets (net.c): shw1 is on the wire.
on_wire() {
	inns wns1 cat /proc/net/udp | awk '{ print $2 }' | grep -qi ':12B7$' ||
		{ echo "no UDP 4791 socket in wns1"; inns wns1 cat /proc/net/udp; return 1; }
}

# hwc DEV NAME: one of DEV's port counters (counters.c).
hwc() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }

# The traffic above was counted, and none of it was refused.
counted() {
	for d in shw1 shw2 shw3; do
		for c in tx_packets tx_bytes rx_packets rx_bytes; do
			[ "$(hwc $d $c)" -gt 0 ] || { echo "$d $c is $(hwc $d $c)"; return 1; }
		done
		for c in rx_bad_icrc rx_malformed rx_bad_pkey tx_drops; do
			[ "$(hwc $d $c)" = 0 ] || { echo "$d $c is $(hwc $d $c)"; return 1; }
		done
	done
	rdma statistic show link shw1/1 | grep -q 'rx_packets' ||
		{ echo "rdma statistic shows no rx_packets"; rdma statistic show link shw1/1; return 1; }
	echo "NOTE: shw1: $(hwc shw1 tx_packets) packets sent, $(hwc shw1 rx_packets) received"
}

# Hostile frames from the initial namespace to shw1: a UD SEND with a bad
# ICRC, a truncated BTH, a BTH of transport version 1, a packet of
# another partition; each dropped and counted, none delivered.
hostile() {
	i0=$(hwc shw1 rx_bad_icrc) m0=$(hwc shw1 rx_malformed) p0=$(hwc shw1 rx_bad_pkey)
	r0=$(hwc shw1 rx_packets)
	python3 - <<'PY' || return 1
import socket, struct, zlib
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst = ("10.77.0.2", 4791)
def ud(flags=0, pkey=0xffff):
    bth = struct.pack(">BBHII", 0x64, flags, pkey, 2, 1)
    deth = struct.pack(">II", 0x11111111, 5)
    return bth + deth + b"abcd"
s.sendto(ud() + b"\xde\xad\xbe\xef", dst)		# bad ICRC
s.sendto(ud()[:6], dst)					# truncated BTH
s.sendto(ud(flags=1) + b"\0\0\0\0", dst)		# TVer 1
PY
	wait_for 5 sh -c "[ \$(cat /sys/class/infiniband/shw1/ports/1/hw_counters/rx_bad_icrc) = $((i0 + 1)) ]" ||
		{ echo "rx_bad_icrc $i0 -> $(hwc shw1 rx_bad_icrc)"; return 1; }
	wait_for 5 sh -c "[ \$(cat /sys/class/infiniband/shw1/ports/1/hw_counters/rx_malformed) = $((m0 + 2)) ]" ||
		{ echo "rx_malformed $m0 -> $(hwc shw1 rx_malformed)"; return 1; }
	[ "$(hwc shw1 rx_packets)" = "$r0" ] || { echo "a hostile frame was taken"; return 1; }
	[ "$(hwc shw1 rx_bad_pkey)" = "$p0" ] || { echo "rx_bad_pkey moved"; return 1; }
}

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

t "wire: veths in namespaces, softhca and rxe devices on them" setup
t "wire: softhca binds UDP 4791 in its namespace" on_wire
V6A=fd77:0000:0000:0000:0000:0000:0000:0001
V6B=fd77:0000:0000:0000:0000:0000:0000:0002
t "wire: UD softhca -> rxe (IPv4, softhca client)" \
	need_rxe ud_sh_rxe4 - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18701 -n 200 -s 1024
t "wire: UD rxe -> softhca (IPv4, rxe client)" \
	need_rxe ud_rxe_sh4 wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18702 -n 200 -s 1024
t "wire: UD softhca <-> softhca across namespaces (IPv4)" \
	ud_pingpong ud_sh_sh4 wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18703 -n 500 -s 1024
t "wire: UD softhca -> rxe, IPv6 GIDs" \
	need_rxe ud_sh_rxe6 - rxe0 $V6A wns1 shw1 $V6B 10.77.0.1 18704 -n 200 -s 512
t "wire: UD rxe -> softhca, IPv6 GIDs" \
	need_rxe ud_rxe_sh6 wns1 shw1 $V6B - rxe0 $V6A 10.77.0.2 18705 -n 200 -s 512
t "wire: port counters (rdma statistic, hw_counters)" counted
t "wire: hostile frames dropped and counted" hostile
teardown
t "wire: deleting the namespaces takes their devices and sockets" sockets_gone
cleanup_all
rm -rf "$TMP"
tap_done
