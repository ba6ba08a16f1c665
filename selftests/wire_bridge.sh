#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# RoCEv2 through a Linux bridge, as containers are wired: each softhca
# device in a network namespace of its own on a veth whose other end is
# a port of a bridge in the initial namespace, and rdma_rxe on the
# bridge itself.  softhca's transmit batches (net_batch.c) leave as frag
# lists on a veth, which the bridge forwards whole to the other port, or
# passes up its own IP stack to rxe's socket: every message is checked
# byte for byte at the far end, and no packet may be refused there.
#   init_net  wbr0 10.79.0.1/24  rxeb (rdma_rxe); ports wbp1 wbp2
#   wbns1     wb1  10.79.0.2/24  shb1 (softhca), veth peer of wbp1
#   wbns2     wb2  10.79.0.3/24  shb2 (softhca), veth peer of wbp2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/wire_lib.sh"

setup_bridge() {
	ip link add wbr0 type bridge || return 1
	ip addr add 10.79.0.1/24 dev wbr0 && ip link set wbr0 up || return 1
	for i in 1 2; do
		ip netns add wbns$i && ip -n wbns$i link set lo up || return 1
		ip link add wbp$i type veth peer name wb$i netns wbns$i || return 1
		ip link set wbp$i master wbr0 && ip link set wbp$i up || return 1
		ip -n wbns$i addr add 10.79.0.$((i + 1))/24 dev wb$i &&
		ip -n wbns$i link set wb$i up || return 1
		rss wbp$i && rss wb$i wbns$i || return 1
		inns wbns$i rdma link add shb$i type softhca netdev wb$i || return 1
	done
	if [ -z "$rxe_why" ]; then
		rdma link add rxeb type rxe netdev wbr0 || return 1
	fi
	for d in shb1 shb2; do
		wait_for 10 grep -q 'ffff' /sys/class/infiniband/$d/ports/1/gids/1 ||
			{ echo "$d: no IPv4 GID"; return 1; }
	done
}

# refused_none DEV...: nothing arrived that the devices dropped as bad.
refused_none() {
	for d in "$@"; do
		for c in rx_bad_icrc rx_malformed rx_bad_pkey rx_bad_peer tx_drops; do
			hwc_read "$d" "$c" || return 1
			# shellcheck disable=SC2154 # hwc_read sets it (wire_lib.sh)
			[ "$hwc_v" = 0 ] || { echo "$d: $c $hwc_v"; return 1; }
		done
	done
}

# forwarded: the frames crossed the bridge (each port sent some; a
# batch is one skb on a veth, counted once).
forwarded() {
	for p in wbp1 wbp2; do
		read -r n < /sys/class/net/$p/statistics/tx_packets || return 1
		echo "NOTE: $p sent $n frames"
		[ "$n" -gt 10 ] || { echo "$p forwarded only $n frames"; return 1; }
	done
}

teardown_bridge() {
	for d in shb1 shb2 rxeb; do rdma link delete $d 2>/dev/null; done
	for i in 1 2; do ip link del wbp$i 2>/dev/null; done
	ip link del wbr0 2>/dev/null
	for ns in wbns1 wbns2; do ip netns del $ns 2>/dev/null; done
	modprobe -r rdma_rxe 2>/dev/null
	true
}

bridge_gone() {
	wait_for 10 sh -c '! ip netns list | grep -q wbns' || return 1
	! dev_exists shb1 && ! dev_exists shb2 ||
		{ echo "a device outlived its namespace"; ls /sys/class/infiniband; return 1; }
}

t "wire_bridge: a bridge, softhca devices in two namespaces on its ports, rxe on it" setup_bridge
t "wire_bridge: RC SEND/WRITE (+imm) softhca <-> softhca, 64 KiB, through the bridge" \
	batched "shb1 lists" uc checked bsw wbns2 shb2 10.79.0.3 wbns1 shb1 10.79.0.2 10.79.0.3 19201 -R -n 4 -s 65536
t "wire_bridge: RC SEND/WRITE (+imm) softhca <-> softhca, 64 B trains, through the bridge" \
	batched "shb1 lists" uc 'end mark sent' bwin wbns2 shb2 10.79.0.3 wbns1 shb1 10.79.0.2 10.79.0.3 19202 -R -Q 32 -U 16 -s 64 -S 500
t "wire_bridge: RC READ softhca <-> softhca, up to 1 MiB, through the bridge" \
	batched "shb2 lists" uc 'READs of' brd wbns2 shb2 10.79.0.3 wbns1 shb1 10.79.0.2 10.79.0.3 19203 -R -D -n 4 -s 1048576
t "wire_bridge: RC SEND/WRITE (+imm) softhca -> rxe on the bridge, 64 KiB" \
	rxe batched "shb1 lists" uc checked bxr - rxeb 10.79.0.1 wbns1 shb1 10.79.0.2 10.79.0.1 19204 -R -n 4 -s 65536
t "wire_bridge: RC SEND/WRITE (+imm) rxe on the bridge -> softhca, 64 KiB" \
	rxe uc checked bxr2 wbns1 shb1 10.79.0.2 - rxeb 10.79.0.1 10.79.0.2 19205 -R -n 4 -s 65536
t "wire_bridge: UD ibv_ud_pingpong softhca <-> softhca through the bridge" \
	pair ibv_ud_pingpong 'bytes in' bud wbns2 shb2 10.79.0.3 wbns1 shb1 10.79.0.2 10.79.0.3 19206 -n 20 -s 512 -c
t "wire_bridge: nothing refused as bad, nothing dropped on send" refused_none shb1 shb2
t "wire_bridge: the bridge forwarded the frames between its ports" forwarded
teardown_bridge
t "wire_bridge: deleting the namespaces takes their devices and sockets" bridge_gone
cleanup_all
rm -rf "$TMP"
tap_done
