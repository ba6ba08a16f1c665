#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# UC on the wire (drivers/softhca/wire_conn.c, wire_resp.c, wire_seq.c):
# softhca against Debian's rdma_rxe in both directions and against
# another softhca device in another namespace, IPv4 and IPv6 GIDs,
# messages below and above the path MTU (1024: 64 B is one packet,
# 16 KiB is FIRST, 14 MIDDLE, LAST).
#   - Debian's unmodified ibv_uc_pingpong (SEND).  Its -c checks little
#     (one byte a page, always 0: "i / page_size % sizeof(char)").
#   - uc_wire (selftests/uc_wire.c, on the distribution's libibverbs):
#     SEND, SEND with immediate, RDMA WRITE, RDMA WRITE with immediate,
#     both ways, every byte, length, opcode and immediate checked; from
#     0 B to 16 MiB each message and receive in a random cut of 1 to 4
#     SGEs.
#   - Loss: tc drops the one packet of a chosen PSN on the sender's veth
#     and the receiver completes every message but the one it belonged
#     to, counting one PSN gap (uc_wire -S/-L).
# The topology is wire_lib.sh's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/wire_lib.sh"

V6A=fd77:0000:0000:0000:0000:0000:0000:0001
V6B=fd77:0000:0000:0000:0000:0000:0000:0002

# uc_pingpong NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]
uc_pingpong() {
	pair ibv_uc_pingpong 'bytes in' "$@" -c
}

# uc_check NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT [ARGS]: wire_lib.sh's
# uc, checked (its -T on the debug kernel is for RC QPs only).
uc_check() {
	uc checked "$@"
}

# uc_sizes NAME SNS SDEV SADDR CNS CDEV CADDR HOST PORT: uc_check by
# sizes (wire_lib.sh's by_sizes).  UC has no flow control: a packet
# dropped anywhere loses its message and fails the point; the veths drop
# none (a transmit batch crosses as one skb, and the receive takes it
# apart in one softirq).
uc_sizes() {
	by_sizes uc_check "$@"
}

# psn_drop PSN / psn_drop_off: tc on wa0 (shw2's veth, egress) drops the
# IPv4 RoCEv2 packet whose BTH carries PSN (20 + 8 + 8 bytes in: the
# BTH's last word, AckReq and 7 reserved bits above the PSN).
psn_drop() {
	inns wns2 tc qdisc add dev wa0 root handle 1: prio || return 1
	inns wns2 tc filter add dev wa0 parent 1: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff \
		match u32 "$(printf '0x%06x' "$1")" 0x00ffffff at 36 action drop
}

psn_drop_off() {
	inns wns2 tc qdisc del dev wa0 root 2>/dev/null
	true
}

# lose NAME PSN LOST GAPS SEQ: 20 SENDs of 16 KiB (16 packets each,
# PSNs from 0x100) from shw2 to shw3 with the packet of PSN dropped on
# the way: exactly message LOST is missing, every other one intact; shw3
# counts GAPS more PSN gaps and SEQ more packets dropped for sequence.
# The qdisc sees a batch (net_batch.c: one GSO skb, segmented after it)
# as one packet with the first one's headers, so shw2 sends every packet
# alone meanwhile (loss_batches 1).
lose() {
	name=$1 psn=$2 lost=$3 gaps=$4 seq=$5
	g0=$(hwc shw3 rx_psn_gaps) s0=$(hwc shw3 rx_seq_drops)
	loss_batches 1 || return 1
	psn_drop "$psn" || { psn_drop_off; loss_batches 64; echo "tc cannot drop by PSN here"; return 1; }
	pair "$UCW" 'messages' "$name" wns3 shw3 10.78.0.2 wns2 shw2 10.78.0.1 10.78.0.2 18830 \
		-s 16384 -S 20 -P 0x100 -L "$lost"
	rc=$?
	loss_batches 64
	drops=$(inns wns2 tc -s filter show dev wa0 2>/dev/null | awk '/dropped/ { print $0; exit }')
	psn_drop_off
	[ $rc = 0 ] || return 1
	echo "NOTE: $name: tc: $drops"
	[ "$(hwc shw3 rx_psn_gaps)" = $((g0 + gaps)) ] ||
		{ echo "rx_psn_gaps $g0 -> $(hwc shw3 rx_psn_gaps), not +$gaps"; return 1; }
	[ "$(hwc shw3 rx_seq_drops)" = $((s0 + seq)) ] ||
		{ echo "rx_seq_drops $s0 -> $(hwc shw3 rx_seq_drops), not +$seq"; return 1; }
}

# handmade: a UC peer written by hand (python, raw IPv4, its own ICRC)
# for uc_wire's server on shw1: one SEND from an address that is not
# the peer's (dropped, rx_bad_peer), then, from the peer, the message
# uc_wire expects and its end mark, which it must complete, every byte
# checked.
handmade() {
	[ -x "$UCW" ] || { echo "SKIP: $UCW not built (no libibverbs)"; return 77; }
	b0=$(hwc shw1 rx_bad_peer)
	serve "$UCW" hand wns1 shw1 10.77.0.2 18840 -s 64 -S 1 -P 0x100 || return 1
	timeout "$T" python3 - 18840 > "$TMP/hand.cli" 2>&1 <<'PY'
import socket, struct, sys, zlib
port = int(sys.argv[1])
PEER, ROGUE, DST = "10.77.0.1", "10.77.0.9", "10.77.0.2"
s = socket.create_connection((DST, port))
gid = b"\0" * 10 + b"\xff\xff" + socket.inet_aton(PEER)
# uc_wire's struct dest: qpn, psn, rkey, (pad), addr, gid
s.sendall(struct.pack("<IIIIQ16s", 0x77, 0x100, 0, 0, 0, gid))
d = b""
while len(d) < 40:
    d += s.recv(40 - len(d))
qpn = struct.unpack_from("<I", d, 0)[0]
s.recv(1); s.sendall(b"s")		# both at RTS
raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
def pat(msg, k):				# uc_wire's pattern, op 0, from 0
    return (k * 7 + msg * 13 + (k >> 8) * 3) & 0xff
def send_only(src, psn, data):
    pad = -len(data) & 3
    body = struct.pack(">BBHII", 0x24, pad << 4, 0xffff, qpn, psn) + data + b"\0" * pad
    udp = struct.pack(">HHHH", 0xc123, 4791, 8 + len(body) + 4, 0)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(body) + 4,
                     0x1234, 0x4000, 64, 17, 0, socket.inet_aton(src),
                     socket.inet_aton(DST))
    # The ICRC: TOS, TTL, IP and UDP checksums and BTH byte 4 as ones.
    mip = bytearray(ip); mip[1] = 0xff; mip[8] = 0xff; mip[10:12] = b"\xff\xff"
    mudp = bytearray(udp); mudp[6:8] = b"\xff\xff"
    mbody = bytearray(body); mbody[4] = 0xff
    icrc = zlib.crc32(b"\xff" * 8 + bytes(mip) + bytes(mudp) + bytes(mbody))
    raw.sendto(ip + udp + body + struct.pack("<I", icrc), (DST, 0))
msg = bytearray(pat(0, k) for k in range(64))
msg[0:4] = struct.pack("<I", 0)
send_only(ROGUE, 0x100, bytes(msg))	# not the peer: dropped
send_only(PEER, 0x100, bytes(msg))	# message 0
send_only(PEER, 0x101, b"\x01")		# the end mark
s.recv(1); s.sendall(b"s")
print("sent")
PY
	served hand $? sent || return 1
	[ "$(hwc shw1 rx_bad_peer)" = $((b0 + 1)) ] ||
		{ echo "rx_bad_peer $b0 -> $(hwc shw1 rx_bad_peer), not +1"; return 1; }
	echo "NOTE: $(cat "$TMP/hand.srv")"
}

# The traffic was counted and none of it refused (the losses come later).
counted() {
	for d in shw1 shw2 shw3; do
		for c in tx_packets rx_packets; do
			[ "$(hwc $d $c)" -gt 0 ] || { echo "$d $c is $(hwc $d $c)"; return 1; }
		done
		for c in rx_bad_icrc rx_malformed rx_bad_pkey rx_no_qp rx_bad_peer \
			 rx_psn_gaps rx_seq_drops tx_drops; do
			[ "$(hwc $d $c)" = 0 ] || { echo "$d $c is $(hwc $d $c)"; return 1; }
		done
	done
	echo "NOTE: shw1: $(hwc shw1 tx_packets) packets sent, $(hwc shw1 rx_packets) received"
}

t "wire_uc: veths in namespaces, softhca and rxe devices on them" setup
t "wire_uc: ibv_uc_pingpong softhca -> rxe, 64 B (IPv4)" \
	rxe uc_pingpong pp_sh_rxe4s - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18801 -n 200 -s 64
t "wire_uc: ibv_uc_pingpong softhca -> rxe, 16 KiB (IPv4)" \
	rxe uc_pingpong pp_sh_rxe4l - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18802 -n 50 -s 16384
t "wire_uc: ibv_uc_pingpong rxe -> softhca, 64 B (IPv4)" \
	rxe uc_pingpong pp_rxe_sh4s wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18803 -n 200 -s 64
t "wire_uc: ibv_uc_pingpong rxe -> softhca, 16 KiB (IPv4)" \
	rxe uc_pingpong pp_rxe_sh4l wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18804 -n 50 -s 16384
t "wire_uc: ibv_uc_pingpong softhca -> rxe, 16 KiB (IPv6)" \
	rxe uc_pingpong pp_sh_rxe6 - rxe0 $V6A wns1 shw1 $V6B 10.77.0.1 18805 -n 50 -s 16384
t "wire_uc: ibv_uc_pingpong rxe -> softhca, 16 KiB (IPv6)" \
	rxe uc_pingpong pp_rxe_sh6 wns1 shw1 $V6B - rxe0 $V6A 10.77.0.2 18806 -n 50 -s 16384
t "wire_uc: ibv_uc_pingpong softhca <-> softhca across namespaces, 64 B" \
	uc_pingpong pp_sh_sh_s wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18807 -n 200 -s 64
t "wire_uc: ibv_uc_pingpong softhca <-> softhca across namespaces, 16 KiB" \
	uc_pingpong pp_sh_sh_l wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18808 -n 50 -s 16384
t "wire_uc: SEND/WRITE (+imm) checked, softhca client, rxe server, 64 B (IPv4)" \
	rxe uc_check ck_sh_rxe4s - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18811 -n 50 -s 64
t "wire_uc: SEND/WRITE (+imm) checked, softhca client, rxe server, 16 KiB (IPv4)" \
	rxe uc_check ck_sh_rxe4l - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18812 -n 20 -s 16384
t "wire_uc: SEND/WRITE (+imm) checked, rxe client, softhca server, 16 KiB (IPv4)" \
	rxe uc_check ck_rxe_sh4l wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18813 -n 20 -s 16384 -P 0xfffff8
t "wire_uc: SEND/WRITE (+imm) checked, softhca <-> rxe, 16 KiB (IPv6)" \
	rxe uc_check ck_sh_rxe6 - rxe0 $V6A wns1 shw1 $V6B 10.77.0.1 18814 -n 20 -s 16384
t "wire_uc: SEND/WRITE (+imm) checked, softhca <-> softhca, 64 B" \
	uc_check ck_sh_sh_s wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18815 -n 50 -s 64
t "wire_uc: SEND/WRITE (+imm) checked, softhca <-> softhca, 16 KiB, PSNs wrap" \
	uc_check ck_sh_sh_l wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18816 -n 20 -s 16384 -P 0xffff00
t "wire_uc: SEND/WRITE (+imm) checked, 0 B to 16 MiB in random cuts of 1 to 4 SGEs, softhca client, rxe server" \
	rxe uc_sizes ck_sh_rxe_g - rxe0 10.77.0.1 wns1 shw1 10.77.0.2 10.77.0.1 18860
t "wire_uc: SEND/WRITE (+imm) checked, 0 B to 16 MiB in random cuts of 1 to 4 SGEs, rxe client, softhca server" \
	rxe uc_sizes ck_rxe_sh_g wns1 shw1 10.77.0.2 - rxe0 10.77.0.1 10.77.0.2 18870
t "wire_uc: SEND/WRITE (+imm) checked, 0 B to 16 MiB in random cuts of 1 to 4 SGEs, softhca <-> softhca" \
	uc_sizes ck_sh_sh_g wns2 shw2 10.78.0.1 wns3 shw3 10.78.0.2 10.78.0.1 18880
t "wire_uc: port counters: traffic counted, nothing refused" counted
t "wire_uc: a hand-built UC SEND is taken from the peer, not from another address" handmade
# PSN 0x100 + 16 * 7 + 5: the sixth packet (a MIDDLE) of message 7; the
# 10 packets behind it in that message are dropped for sequence.
t "wire_uc: a lost MIDDLE packet drops exactly its message" \
	lose loss_middle $((0x100 + 16 * 7 + 5)) 7 1 10
# The LAST of message 12: nothing follows it in its message; the next
# FIRST starts afresh past the gap.
t "wire_uc: a lost LAST packet drops exactly its message" \
	lose loss_last $((0x100 + 16 * 12 + 15)) 12 1 0
# The FIRST of message 0: its 15 other packets are dropped.
t "wire_uc: a lost FIRST packet drops exactly its message" \
	lose loss_first 0x100 0 1 15
teardown
t "wire_uc: deleting the namespaces takes their devices and sockets" sockets_gone
cleanup_all
rm -rf "$TMP"
tap_done
