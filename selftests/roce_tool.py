#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""RoCEv2 frames for the wire selftests (wire_capture.sh), written
independently of the driver's packet layer (drivers/softhca/roce_hdr.c)
so that each checks the other.

  roce_tool.py icrc PCAP
      Recompute the ICRC of every UDP 4791 frame of an Ethernet capture
      (IPv4 and IPv6) and compare it with the one the frame carries.
      Prints the frames per sender and per opcode; exits 1 on any
      mismatch, or when the capture holds no RoCEv2 frame.  Before that
      it checks itself: a copy of each frame with one payload bit
      flipped must mismatch.

  roce_tool.py fuzz IFACE DSTMAC SRCIP DSTIP PCAP COUNT SEED \\
                    --target QPN[,QPN...] --spare QPN
      Send COUNT frames from IFACE (an AF_PACKET socket) to DSTIP at
      DSTMAC, each a mutation of a RoCEv2 frame of PCAP or random bytes:
      destination QP changed (to a --target QP, to QP 0, 1 or 0xffffff,
      to a random one from 0x800000 up), opcode changed, bytes flipped,
      truncated, extended, random.  No frame goes to a QP numbered above
      --spare and below 0x800000: the QPs a test creates after the
      targets (numbers are handed out upwards) are left alone.  Bytes
      flipped, truncated,
      most get a correct ICRC again so that they reach
      the transport's checks rather than stop at the ICRC.  Prints what
      it sent; the same SEED sends the same frames.

  roce_tool.py gso SRC DST
      Send UDP GSO datagrams (UDP_SEGMENT) from SRC to DST port 4791,
      IPv4 or IPv6, as a softhca batch (net_batch.c) crosses a veth:
      the receiving kernel cuts them into packets before the tunnel
      socket.  The ICRCs here are computed apart from the driver's, for
      the headers segmentation gives each packet, which is what
      net_batch.c assumes of the kernel.
      Each packet a UD SEND to QP 0x7ffff0 (none there: rx_no_qp), in
      64-byte segments but the last: "right" 8 packets, their ICRCs for
      the headers segmentation gives each (lengths, IPv4 IDs from 0 on:
      an unconnected socket's DF datagram has ID 0); "whole" the same
      with ICRCs for the uncut datagram's headers (8 wrong); "id0"
      (IPv4) ICRCs for ID 0 throughout (the first right, 7 wrong);
      "tiny" 40 bytes cut in 8 (5 malformed); "ragged" 3 right packets
      and a 6-byte tail (1 malformed).  wire.sh counts them.

ICRC (IBA Annex A17, RoCEv2): CRC-32 over 8 bytes of 0xff (for the LRH a
RoCEv2 packet does not have), the IP header with the fields a router
changes taken as all ones (IPv4 TOS, TTL, checksum; IPv6 traffic class,
flow label, hop limit), the UDP header with its checksum as all ones, the
BTH with its FECN/BECN byte as all ones, then the rest of the packet up
to the ICRC; the ICRC is that CRC's 32 bits, least significant byte
first.
"""
import random
import socket
import struct
import sys
import zlib

ROCE_PORT = 4791
OPNAMES = {
    0x00: "RC SEND_FIRST", 0x01: "RC SEND_MIDDLE", 0x02: "RC SEND_LAST",
    0x03: "RC SEND_LAST_IMM", 0x04: "RC SEND_ONLY", 0x05: "RC SEND_ONLY_IMM",
    0x06: "RC WRITE_FIRST", 0x07: "RC WRITE_MIDDLE", 0x08: "RC WRITE_LAST",
    0x09: "RC WRITE_LAST_IMM", 0x0a: "RC WRITE_ONLY", 0x0b: "RC WRITE_ONLY_IMM",
    0x0c: "RC READ_REQUEST", 0x0d: "RC READ_RESP_FIRST",
    0x0e: "RC READ_RESP_MIDDLE", 0x0f: "RC READ_RESP_LAST",
    0x10: "RC READ_RESP_ONLY", 0x11: "RC ACK", 0x12: "RC ATOMIC_ACK",
    0x13: "RC CMP_SWAP", 0x14: "RC FETCH_ADD",
    0x16: "RC SEND_LAST_INV", 0x17: "RC SEND_ONLY_INV",
    0x20: "UC SEND_FIRST", 0x21: "UC SEND_MIDDLE", 0x22: "UC SEND_LAST",
    0x23: "UC SEND_LAST_IMM", 0x24: "UC SEND_ONLY", 0x25: "UC SEND_ONLY_IMM",
    0x26: "UC WRITE_FIRST", 0x27: "UC WRITE_MIDDLE", 0x28: "UC WRITE_LAST",
    0x29: "UC WRITE_LAST_IMM", 0x2a: "UC WRITE_ONLY", 0x2b: "UC WRITE_ONLY_IMM",
    0x64: "UD SEND_ONLY", 0x65: "UD SEND_ONLY_IMM",
}


def pcap_frames(path):
    """The Ethernet frames of a classic pcap file (either byte order)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise SystemExit(f"{path}: not a pcap file")
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    else:
        raise SystemExit(f"{path}: not a pcap file")
    linktype = struct.unpack(e + "I", data[20:24])[0]
    if linktype != 1:
        raise SystemExit(f"{path}: link type {linktype}, not Ethernet")
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(e + "I", data[off + 8:off + 12])[0]
        orig = struct.unpack(e + "I", data[off + 12:off + 16])[0]
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if incl == orig:
            yield frame


def roce_of(frame):
    """(ip header offset, udp offset, bth offset, end, src) of a RoCEv2
    frame, or None."""
    if len(frame) < 14:
        return None
    etype = struct.unpack(">H", frame[12:14])[0]
    ip = 14
    if etype == 0x0800 and len(frame) >= ip + 20 and frame[ip] >> 4 == 4:
        ihl = (frame[ip] & 0x0f) * 4
        if frame[ip + 9] != 17:
            return None
        total = struct.unpack(">H", frame[ip + 2:ip + 4])[0]
        src = socket.inet_ntop(socket.AF_INET, frame[ip + 12:ip + 16])
        udp = ip + ihl
    elif etype == 0x86dd and len(frame) >= ip + 40 and frame[ip] >> 4 == 6:
        if frame[ip + 6] != 17:
            return None
        total = 40 + struct.unpack(">H", frame[ip + 4:ip + 6])[0]
        src = socket.inet_ntop(socket.AF_INET6, frame[ip + 8:ip + 24])
        udp = ip + 40
    else:
        return None
    end = ip + total
    if end > len(frame) or udp + 8 + 12 + 4 > end:
        return None
    if struct.unpack(">H", frame[udp + 2:udp + 4])[0] != ROCE_PORT:
        return None
    return ip, udp, udp + 8, end, src


def icrc(frame, ip, udp, bth, end):
    """The ICRC the frame's packet should carry (4 bytes)."""
    if frame[ip] >> 4 == 6:
        iph = bytearray(frame[ip:ip + 40])
        iph[0] |= 0x0f
        iph[1:4] = b"\xff\xff\xff"
        iph[7] = 0xff
    else:
        iph = bytearray(frame[ip:udp])
        iph[1] = 0xff
        iph[8] = 0xff
        iph[10:12] = b"\xff\xff"
    udph = bytearray(frame[udp:udp + 8])
    udph[6:8] = b"\xff\xff"
    b = bytearray(frame[bth:end - 4])
    b[4] = 0xff
    crc = zlib.crc32(b"\xff" * 8 + bytes(iph) + bytes(udph) + bytes(b))
    return struct.pack("<I", crc)


def cmd_icrc(path):
    n = bad = 0
    senders, ops = {}, {}
    for frame in pcap_frames(path):
        r = roce_of(frame)
        if not r:
            continue
        ip, udp, bth, end, src = r
        n += 1
        want = icrc(frame, ip, udp, bth, end)
        if frame[end - 4:end] != want:
            bad += 1
            if bad <= 5:
                print(f"frame {n} from {src}: ICRC {frame[end - 4:end].hex()}, "
                      f"computed {want.hex()}")
        # The check must be able to fail: one bit of the packet flipped.
        flipped = bytearray(frame)
        flipped[end - 5] ^= 0x01
        if icrc(bytes(flipped), ip, udp, bth, end) == want:
            print("the ICRC did not change with a flipped bit")
            return 1
        senders[src] = senders.get(src, 0) + 1
        op = OPNAMES.get(frame[bth], f"opcode 0x{frame[bth]:02x}")
        ops[op] = ops.get(op, 0) + 1
    print(f"{n} RoCEv2 frames, {n - bad} ICRCs right, {bad} wrong")
    for s in sorted(senders):
        print(f"  from {s}: {senders[s]}")
    for o in sorted(ops):
        print(f"  {o}: {ops[o]}")
    return 1 if bad or not n else 0


def ip4_sum(h):
    s = sum(struct.unpack(">10H", h))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def cmd_fuzz(args):
    iface, dstmac, srcip, dstip, path, count, seed = args[:7]
    opts = dict(zip(args[7::2], args[8::2]))
    targets = [int(x, 0) for x in opts.get("--target", "").split(",") if x]
    spare = int(opts.get("--spare", "0x7fffff"), 0)
    count, seed = int(count), int(seed)
    rng = random.Random(seed)
    templates = []
    for frame in pcap_frames(path):
        r = roce_of(frame)
        if r and frame[r[0]] >> 4 == 4:
            templates.append(bytes(frame[r[2]:r[3]]))	# BTH .. ICRC
    if not templates:
        print(f"{path}: no IPv4 RoCEv2 frame to start from")
        return 1
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    srcmac = s.getsockname()[4]
    eth = bytes.fromhex(dstmac.replace(":", "")) + srcmac + b"\x08\x00"
    sip, dip = socket.inet_aton(srcip), socket.inet_aton(dstip)
    kinds = {}

    def qpn():
        if targets and rng.random() < 0.7:
            return rng.choice(targets)
        return rng.choice([0, 1, 0xffffff, rng.randrange(0x800000, 0xffffff)])

    for i in range(count):
        p = bytearray(rng.choice(templates))
        k = rng.randrange(10)
        if k <= 2:		# another QP, bytes after the BTH flipped
            p[5:8] = qpn().to_bytes(3, "big")
            for _ in range(rng.randrange(4)):
                j = rng.randrange(12, max(13, len(p) - 4))
                if j < len(p):
                    p[j] ^= 1 << rng.randrange(8)
        elif k == 3:		# another opcode
            p[5:8] = qpn().to_bytes(3, "big")
            p[0] = rng.randrange(256)
        elif k == 4:		# bytes of the BTH flipped
            p[5:8] = qpn().to_bytes(3, "big")
            for _ in range(1 + rng.randrange(3)):
                p[rng.randrange(12)] ^= 1 << rng.randrange(8)
        elif k == 5:		# truncated
            p[5:8] = qpn().to_bytes(3, "big")
            p = p[:rng.randrange(len(p) + 1)]
        elif k == 6:		# extended
            p[5:8] = qpn().to_bytes(3, "big")
            p += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        elif k == 7:		# PSN moved
            p[5:8] = qpn().to_bytes(3, "big")
            p[9:12] = rng.randrange(1 << 24).to_bytes(3, "big")
        elif k == 8:		# random bytes
            p = bytearray(rng.randrange(256) for _ in range(rng.randrange(80)))
        # k == 9: the template as it is, to a target QP
        else:
            p[5:8] = qpn().to_bytes(3, "big")
        if len(p) >= 8 and spare < int.from_bytes(p[5:8], "big") < 0x800000:
            p[5:8] = (targets[0] if targets else 0).to_bytes(3, "big")
        udp = struct.pack(">HHHH", 49152 + rng.randrange(16384), ROCE_PORT,
                          8 + len(p), 0)
        iph = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(p),
                                    rng.randrange(65536), 0x4000, 64, 17, 0,
                                    sip, dip))
        iph[10:12] = struct.pack(">H", ip4_sum(bytes(iph)))
        frame = bytearray(eth + bytes(iph) + udp + bytes(p))
        if len(p) >= 16 and rng.random() < 0.85:	# a right ICRC again
            end = len(frame)
            frame[end - 4:end] = icrc(frame, 14, 34, 42, end)
        kinds[k] = kinds.get(k, 0) + 1
        s.send(bytes(frame))
    print(f"sent {count} frames (seed {seed}, {len(templates)} templates): " +
          ", ".join(f"kind {k}: {kinds[k]}" for k in sorted(kinds)))
    return 0


def cmd_gso(src, dst):
    v6 = ":" in dst
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((src, 0))
    # DF: an unconnected socket's datagram then gets IPv4 ID 0.
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, 23, 2)	# IPV6_MTU_DISCOVER, DO
    else:
        s.setsockopt(socket.IPPROTO_IP, 10, 2)		# IP_MTU_DISCOVER, DO
    sport = s.getsockname()[1]
    sa, da = socket.inet_pton(fam, src), socket.inet_pton(fam, dst)

    def with_icrc(pkt, seglen, ident):
        """pkt (BTH .. payload) and its ICRC, for a segment of seglen
        bytes of UDP payload and (IPv4) that ID."""
        udp = struct.pack(">HHHH", sport, ROCE_PORT, 8 + seglen, 0)
        if v6:
            ip = struct.pack(">IHBB16s16s", 0x60000000, 8 + seglen, 17, 64,
                             sa, da)
        else:
            ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 28 + seglen, ident,
                             0x4000, 64, 17, 0, sa, da)
        f = bytearray(12) + (b"\x86\xdd" if v6 else b"\x08\x00") + ip + udp
        f += pkt + bytes(4)
        return pkt + icrc(f, 14, 14 + len(ip), 22 + len(ip), len(f))

    def ud(psn, paylen):
        return (struct.pack(">BBHII", 0x64, 0, 0xffff, 0x7ffff0, psn) +
                struct.pack(">II", 0x11111111, 5) + bytes(range(paylen)))

    def batch(sizes, mode):
        total = sum(12 + 8 + n + 4 for n in sizes)
        out = b""
        for i, n in enumerate(sizes):
            p = ud(i, n)
            if mode == "right":
                out += with_icrc(p, len(p) + 4, i)
            elif mode == "whole":
                out += with_icrc(p, total, 0)
            else:
                out += with_icrc(p, len(p) + 4, 0)
        return out

    def send(name, data, gso):
        s.setsockopt(17, 103, gso)		# SOL_UDP, UDP_SEGMENT
        s.sendto(data, (dst, ROCE_PORT))
        print(f"{name}: {len(data)} bytes in segments of {gso}")

    sizes = [40] * 7 + [24]			# 64-byte packets, the last 48
    send("right", batch(sizes, "right"), 64)
    send("whole", batch(sizes, "whole"), 64)
    if not v6:
        send("id0", batch(sizes, "id0"), 64)
    send("tiny", bytes(40), 8)
    send("ragged", batch([40] * 3, "right") + bytes(6), 64)
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "icrc":
        return cmd_icrc(sys.argv[2])
    if len(sys.argv) >= 9 and sys.argv[1] == "fuzz":
        return cmd_fuzz(sys.argv[2:])
    if len(sys.argv) >= 4 and sys.argv[1] == "gso":
        return cmd_gso(sys.argv[2], sys.argv[3])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
