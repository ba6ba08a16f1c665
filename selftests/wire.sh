#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# RoCEv2 on the wire (drivers/softhca/net.c, wire.c): real frames on a
# veth, softhca against Debian's rdma_rxe and against another softhca
# device in another network namespace.  So far UD: Debian's unmodified
# ibv_ud_pingpong (-c: every received buffer checked) under softhca-run
# on one side and on rxe, or under softhca-run too, on the other.  UC:
# wire_uc.sh.  The topology is wire_lib.sh's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/wire_lib.sh"

# ud_pingpong NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]:
# Debian's ibv_ud_pingpong between two devices (pair, wire_lib.sh), -c.
ud_pingpong() {
	pair ibv_ud_pingpong 'bytes in' "$@" -c
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

# Datagrams as a softhca batch crosses a veth (one UDP GSO skb each),
# sent by roce_tool.py gso from a plain UDP socket (any local program
# can): the kernel cuts them into packets before softhca's tunnel socket
# (udp_unexpected_gso(): Debian's 6.1 cuts every GSO skb bound for a
# tunnel), each packet is checked alone.  The good packets' ICRCs, which
# roce_tool.py computes for the headers each segment gets (lengths, IPv4
# IDs numbered on), pass: what net_batch.c assumes of segmentation, from
# a second implementation.  Per roce_tool.py's cases, IPv4: 12 good
# packets (to no QP), 15 wrong ICRCs (8 for the uncut datagram's
# headers, 7 for ID 0 throughout), 6 too short; IPv6: 11 good, 8 wrong
# ICRCs, 6 too short.
gso_cs="rx_packets rx_no_qp rx_bad_icrc rx_malformed"
gso_want="23 23 23 12"
gso_now() { for c in $gso_cs; do hwc shw1 "$c"; done | xargs; }
# The counters' moves since $gso_before, in $gso_cs's order.
gso_moved() {
	echo "$gso_before $(gso_now)" |
		awk '{ n = NF / 2; for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? " " : ""), $(i + n) - $i }'
}
gso_settled() { [ "$(gso_moved)" = "$gso_want" ]; }
gso_batches() {
	gso_before=$(gso_now)
	python3 "$REPO/selftests/roce_tool.py" gso 10.77.0.1 10.77.0.2 &&
		python3 "$REPO/selftests/roce_tool.py" gso fd77::1 fd77::2 || return 1
	wait_for 5 gso_settled ||
		{ echo "shw1's $gso_cs moved by $(gso_moved), not $gso_want"; return 1; }
	echo "NOTE: shw1's $gso_cs moved by $(gso_moved)"
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
t "wire: UDP GSO datagrams from a plain socket: each packet checked alone" gso_batches
teardown
t "wire: deleting the namespaces takes their devices and sockets" sockets_gone
cleanup_all
rm -rf "$TMP"
tap_done
