// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the RoCEv2 packet format: the opcode table, the parser, the
 * header builder and the ICRC.  See roce_hdr.h.
 *
 * Besides the module, tools/roce-capture compiles this file as a user
 * space program (with small stand-ins for the kernel headers it needs)
 * to build the request frames it sends to rdma_rxe: everything that
 * needs an sk_buff stays under __KERNEL__.
 */
#include <linux/types.h>
#include <linux/crc32.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#ifdef __KERNEL__
#include <linux/skbuff.h>
#endif

#include "roce_hdr.h"

/*
 * What each operation carries, without its transport; named after the
 * opcode so that the table macros below can paste the name.
 */
#define M_SEND		(SOFTHCA_H_SEND | SOFTHCA_H_REQ | SOFTHCA_H_PAYLOAD)
#define M_WRITE		(SOFTHCA_H_WRITE | SOFTHCA_H_REQ | SOFTHCA_H_PAYLOAD)
#define M_RRESP		(SOFTHCA_H_READ | SOFTHCA_H_RESP | SOFTHCA_H_PAYLOAD)
#define M_ATOMIC	(SOFTHCA_H_ATOMIC | SOFTHCA_H_REQ | SOFTHCA_H_ATMETH | \
			 SOFTHCA_H_ONLY)

#define M_SEND_FIRST			(M_SEND | SOFTHCA_H_FIRST)
#define M_SEND_MIDDLE			(M_SEND | SOFTHCA_H_MIDDLE)
#define M_SEND_LAST			(M_SEND | SOFTHCA_H_LAST)
#define M_SEND_LAST_WITH_IMMEDIATE	(M_SEND_LAST | SOFTHCA_H_IMMDT)
#define M_SEND_LAST_WITH_INVALIDATE	(M_SEND_LAST | SOFTHCA_H_IETH)
#define M_SEND_ONLY			(M_SEND | SOFTHCA_H_ONLY)
#define M_SEND_ONLY_WITH_IMMEDIATE	(M_SEND_ONLY | SOFTHCA_H_IMMDT)
#define M_SEND_ONLY_WITH_INVALIDATE	(M_SEND_ONLY | SOFTHCA_H_IETH)
#define M_RDMA_WRITE_FIRST		(M_WRITE | SOFTHCA_H_FIRST | SOFTHCA_H_RETH)
#define M_RDMA_WRITE_MIDDLE		(M_WRITE | SOFTHCA_H_MIDDLE)
#define M_RDMA_WRITE_LAST		(M_WRITE | SOFTHCA_H_LAST)
#define M_RDMA_WRITE_LAST_WITH_IMMEDIATE (M_RDMA_WRITE_LAST | SOFTHCA_H_IMMDT)
#define M_RDMA_WRITE_ONLY		(M_WRITE | SOFTHCA_H_ONLY | SOFTHCA_H_RETH)
#define M_RDMA_WRITE_ONLY_WITH_IMMEDIATE (M_RDMA_WRITE_ONLY | SOFTHCA_H_IMMDT)
#define M_RDMA_READ_REQUEST		(SOFTHCA_H_READ | SOFTHCA_H_REQ | \
					 SOFTHCA_H_RETH | SOFTHCA_H_ONLY)
#define M_RDMA_READ_RESPONSE_FIRST	(M_RRESP | SOFTHCA_H_FIRST | SOFTHCA_H_AETH)
#define M_RDMA_READ_RESPONSE_MIDDLE	(M_RRESP | SOFTHCA_H_MIDDLE)
#define M_RDMA_READ_RESPONSE_LAST	(M_RRESP | SOFTHCA_H_LAST | SOFTHCA_H_AETH)
#define M_RDMA_READ_RESPONSE_ONLY	(M_RRESP | SOFTHCA_H_ONLY | SOFTHCA_H_AETH)
#define M_ACKNOWLEDGE			(SOFTHCA_H_ACK | SOFTHCA_H_RESP | \
					 SOFTHCA_H_AETH | SOFTHCA_H_ONLY)
#define M_ATOMIC_ACKNOWLEDGE		(SOFTHCA_H_ATOMIC | SOFTHCA_H_RESP | \
					 SOFTHCA_H_AETH | SOFTHCA_H_ATMACK | \
					 SOFTHCA_H_ONLY)
#define M_COMPARE_SWAP			M_ATOMIC
#define M_FETCH_ADD			M_ATOMIC

/* BTH and the extension headers of an operation, in bytes. */
#define HLEN(op)							\
	(SOFTHCA_BTH_LEN +						\
	 (M_##op & SOFTHCA_H_RETH ? SOFTHCA_RETH_LEN : 0) +		\
	 (M_##op & SOFTHCA_H_ATMETH ? SOFTHCA_ATMETH_LEN : 0) +		\
	 (M_##op & SOFTHCA_H_AETH ? SOFTHCA_AETH_LEN : 0) +		\
	 (M_##op & SOFTHCA_H_ATMACK ? SOFTHCA_ATMACK_LEN : 0) +		\
	 (M_##op & SOFTHCA_H_IMMDT ? SOFTHCA_IMMDT_LEN : 0) +		\
	 (M_##op & SOFTHCA_H_IETH ? SOFTHCA_IETH_LEN : 0))

#define RC(op)								\
	[SOFTHCA_TP_RC | SOFTHCA_OP_##op] = {				\
		.mask = M_##op | SOFTHCA_H_RC,				\
		.hdr_len = HLEN(op),					\
	}
/* XRC requests also name the target SRQ (XRCETH); its responses do not. */
#define XRC(op)								\
	[SOFTHCA_TP_XRC | SOFTHCA_OP_##op] = {				\
		.mask = M_##op | SOFTHCA_H_XRC |			\
			(M_##op & SOFTHCA_H_REQ ? SOFTHCA_H_XRCETH : 0),	\
		.hdr_len = HLEN(op) +					\
			(M_##op & SOFTHCA_H_REQ ? SOFTHCA_XRCETH_LEN : 0), \
	}
#define UC(op)								\
	[SOFTHCA_TP_UC | SOFTHCA_OP_##op] = {				\
		.mask = M_##op | SOFTHCA_H_UC,				\
		.hdr_len = HLEN(op),					\
	}
#define UD(op)								\
	[SOFTHCA_TP_UD | SOFTHCA_OP_##op] = {				\
		.mask = M_##op | SOFTHCA_H_UD | SOFTHCA_H_DETH,		\
		.hdr_len = HLEN(op) + SOFTHCA_DETH_LEN,			\
	}

/*
 * Every opcode rdma_rxe of Linux 6.1 sends or accepts.  RD, CNP and the
 * later additions (FLUSH, ATOMIC_WRITE) stay reserved: rxe drops them,
 * so nobody we talk to sends them.
 */
const struct softhca_roce_opinfo softhca_roce_ops[256] = {
	RC(SEND_FIRST),
	RC(SEND_MIDDLE),
	RC(SEND_LAST),
	RC(SEND_LAST_WITH_IMMEDIATE),
	RC(SEND_ONLY),
	RC(SEND_ONLY_WITH_IMMEDIATE),
	RC(RDMA_WRITE_FIRST),
	RC(RDMA_WRITE_MIDDLE),
	RC(RDMA_WRITE_LAST),
	RC(RDMA_WRITE_LAST_WITH_IMMEDIATE),
	RC(RDMA_WRITE_ONLY),
	RC(RDMA_WRITE_ONLY_WITH_IMMEDIATE),
	RC(RDMA_READ_REQUEST),
	RC(RDMA_READ_RESPONSE_FIRST),
	RC(RDMA_READ_RESPONSE_MIDDLE),
	RC(RDMA_READ_RESPONSE_LAST),
	RC(RDMA_READ_RESPONSE_ONLY),
	RC(ACKNOWLEDGE),
	RC(ATOMIC_ACKNOWLEDGE),
	RC(COMPARE_SWAP),
	RC(FETCH_ADD),
	RC(SEND_LAST_WITH_INVALIDATE),
	RC(SEND_ONLY_WITH_INVALIDATE),

	XRC(SEND_FIRST),
	XRC(SEND_MIDDLE),
	XRC(SEND_LAST),
	XRC(SEND_LAST_WITH_IMMEDIATE),
	XRC(SEND_ONLY),
	XRC(SEND_ONLY_WITH_IMMEDIATE),
	XRC(RDMA_WRITE_FIRST),
	XRC(RDMA_WRITE_MIDDLE),
	XRC(RDMA_WRITE_LAST),
	XRC(RDMA_WRITE_LAST_WITH_IMMEDIATE),
	XRC(RDMA_WRITE_ONLY),
	XRC(RDMA_WRITE_ONLY_WITH_IMMEDIATE),
	XRC(RDMA_READ_REQUEST),
	XRC(RDMA_READ_RESPONSE_FIRST),
	XRC(RDMA_READ_RESPONSE_MIDDLE),
	XRC(RDMA_READ_RESPONSE_LAST),
	XRC(RDMA_READ_RESPONSE_ONLY),
	XRC(ACKNOWLEDGE),
	XRC(ATOMIC_ACKNOWLEDGE),
	XRC(COMPARE_SWAP),
	XRC(FETCH_ADD),
	XRC(SEND_LAST_WITH_INVALIDATE),
	XRC(SEND_ONLY_WITH_INVALIDATE),

	UC(SEND_FIRST),
	UC(SEND_MIDDLE),
	UC(SEND_LAST),
	UC(SEND_LAST_WITH_IMMEDIATE),
	UC(SEND_ONLY),
	UC(SEND_ONLY_WITH_IMMEDIATE),
	UC(RDMA_WRITE_FIRST),
	UC(RDMA_WRITE_MIDDLE),
	UC(RDMA_WRITE_LAST),
	UC(RDMA_WRITE_LAST_WITH_IMMEDIATE),
	UC(RDMA_WRITE_ONLY),
	UC(RDMA_WRITE_ONLY_WITH_IMMEDIATE),

	UD(SEND_ONLY),
	UD(SEND_ONLY_WITH_IMMEDIATE),
};

/* The offset of one header, if the opcode carries it; the next offset. */
static inline u32 take(u32 mask, u32 bit, u8 *field, u32 off, u32 size)
{
	if (!(mask & bit))
		return off;
	*field = off;
	return off + size;
}

/**
 * softhca_roce_parse - check a packet and find its headers
 * @buf: the packet's BTH
 * @len: bytes from the BTH to the end of the ICRC
 * @pkt: filled on success
 *
 * Reads nothing at or beyond @buf + @len, whatever the bytes say.  The
 * ICRC is not checked here (it needs the IP and UDP headers).
 *
 * Return: 0; -EINVAL for a packet whose length does not fit its opcode
 * (too short, not a multiple of 4, payload or pad where the opcode has
 * none, pad longer than the payload); -EPROTONOSUPPORT for a transport
 * header version other than 0; -EOPNOTSUPP for a reserved or
 * unsupported opcode.
 */
int softhca_roce_parse(const void *buf, u32 len, struct softhca_roce_pkt *pkt)
{
	const struct softhca_bth *bth = buf;
	const struct softhca_roce_opinfo *op;
	u32 mask, off, rest;
	u8 pad;

	if (len < SOFTHCA_BTH_LEN + SOFTHCA_ICRC_LEN || len % 4)
		return -EINVAL;
	if (softhca_bth_tver(bth))
		return -EPROTONOSUPPORT;
	op = &softhca_roce_ops[bth->opcode];
	mask = op->mask;
	if (!mask)
		return -EOPNOTSUPP;
	if (len < op->hdr_len + SOFTHCA_ICRC_LEN)
		return -EINVAL;
	rest = len - op->hdr_len - SOFTHCA_ICRC_LEN;
	pad = softhca_bth_pad(bth);
	if (!(mask & SOFTHCA_H_PAYLOAD) && (rest || pad))
		return -EINVAL;
	/* Only a message's last packet is short of the path MTU. */
	if (pad > rest || (pad && !(mask & SOFTHCA_H_LAST)))
		return -EINVAL;

	memset(pkt, 0, sizeof(*pkt));
	pkt->bth = buf;
	pkt->len = len;
	pkt->opcode = bth->opcode;
	pkt->mask = mask;
	pkt->pad = pad;
	off = SOFTHCA_BTH_LEN;
	off = take(mask, SOFTHCA_H_XRCETH, &pkt->xrceth, off, SOFTHCA_XRCETH_LEN);
	off = take(mask, SOFTHCA_H_DETH, &pkt->deth, off, SOFTHCA_DETH_LEN);
	off = take(mask, SOFTHCA_H_RETH, &pkt->reth, off, SOFTHCA_RETH_LEN);
	off = take(mask, SOFTHCA_H_ATMETH, &pkt->atmeth, off, SOFTHCA_ATMETH_LEN);
	off = take(mask, SOFTHCA_H_AETH, &pkt->aeth, off, SOFTHCA_AETH_LEN);
	off = take(mask, SOFTHCA_H_ATMACK, &pkt->atmack, off, SOFTHCA_ATMACK_LEN);
	off = take(mask, SOFTHCA_H_IMMDT, &pkt->immdt, off, SOFTHCA_IMMDT_LEN);
	off = take(mask, SOFTHCA_H_IETH, &pkt->ieth, off, SOFTHCA_IETH_LEN);
	pkt->payload = off;
	pkt->paylen = rest - pad;
	return 0;
}

/**
 * softhca_roce_build - write a packet's BTH and extension headers
 * @buf: where the BTH goes; the payload follows the headers
 * @size: room at @buf
 * @f: the field values; @f->opcode decides which headers are written
 * @paylen: payload bytes that will follow (sets the BTH pad count; the
 *	caller writes the payload, the zero pad and the ICRC)
 *
 * Return: the length of the headers written; -EOPNOTSUPP for an opcode
 * the table does not have, -EINVAL for payload on an opcode without,
 * -ENOSPC when @size cannot hold the headers.
 */
int softhca_roce_build(void *buf, u32 size, const struct softhca_roce_fields *f,
		       u32 paylen)
{
	const struct softhca_roce_opinfo *op = &softhca_roce_ops[f->opcode];
	u32 mask = op->mask;
	struct softhca_bth *bth = buf;
	u8 *p = buf;
	u8 pad = -paylen & 3;

	if (!mask)
		return -EOPNOTSUPP;
	if (paylen && !(mask & SOFTHCA_H_PAYLOAD))
		return -EINVAL;
	if (size < op->hdr_len)
		return -ENOSPC;

	bth->opcode = f->opcode;
	bth->flags = (f->se ? SOFTHCA_BTH_SE : 0) |
		     (f->mig ? SOFTHCA_BTH_MIG : 0) |
		     pad << SOFTHCA_BTH_PAD_SHIFT;
	bth->pkey = cpu_to_be16(f->pkey);
	bth->qpn = cpu_to_be32(f->dqpn & SOFTHCA_QPN_MASK);
	bth->apsn = cpu_to_be32((f->ackreq ? SOFTHCA_BTH_ACKREQ : 0) |
				(f->psn & SOFTHCA_PSN_MASK));
	p += SOFTHCA_BTH_LEN;

	if (mask & SOFTHCA_H_XRCETH) {
		struct softhca_xrceth *x = (void *)p;

		x->srqn = cpu_to_be32(f->xrc_srqn & SOFTHCA_QPN_MASK);
		p += sizeof(*x);
	}
	if (mask & SOFTHCA_H_DETH) {
		struct softhca_deth *d = (void *)p;

		d->qkey = cpu_to_be32(f->qkey);
		d->sqp = cpu_to_be32(f->sqpn & SOFTHCA_QPN_MASK);
		p += sizeof(*d);
	}
	if (mask & SOFTHCA_H_RETH) {
		struct softhca_reth *r = (void *)p;

		r->va = cpu_to_be64(f->va);
		r->rkey = cpu_to_be32(f->rkey);
		r->len = cpu_to_be32(f->dma_len);
		p += sizeof(*r);
	}
	if (mask & SOFTHCA_H_ATMETH) {
		struct softhca_atmeth *a = (void *)p;

		a->va = cpu_to_be64(f->va);
		a->rkey = cpu_to_be32(f->rkey);
		a->swap_add = cpu_to_be64(f->swap_add);
		a->compare = cpu_to_be64(f->compare);
		p += sizeof(*a);
	}
	if (mask & SOFTHCA_H_AETH) {
		struct softhca_aeth *a = (void *)p;

		a->smsn = softhca_aeth_make(f->syndrome, f->msn);
		p += sizeof(*a);
	}
	if (mask & SOFTHCA_H_ATMACK) {
		struct softhca_atmack *a = (void *)p;

		a->orig = cpu_to_be64(f->orig);
		p += sizeof(*a);
	}
	if (mask & SOFTHCA_H_IMMDT) {
		struct softhca_immdt *i = (void *)p;

		i->imm = f->imm;
		p += sizeof(*i);
	}
	if (mask & SOFTHCA_H_IETH) {
		struct softhca_ieth *i = (void *)p;

		i->rkey = cpu_to_be32(f->inv_rkey);
		p += sizeof(*i);
	}
	return op->hdr_len;
}

/*
 * crc32_le()'s running value after ~0 and the 8 bytes of 0xff that stand
 * for the LRH a RoCEv2 packet does not have (KUnit checks the constant).
 */
#define SOFTHCA_ICRC_SEED	0xdebb20e3

#define IPV4_MIN_LEN	20
#define IPV6_LEN	40

/**
 * softhca_icrc_hdrs - start the ICRC of a packet: its headers
 * @iph: the IPv4 or IPv6 header (its version nibble decides; an IPv4
 *	header's options are covered, as its IHL says)
 * @udph: the UDP header
 * @bth: the BTH, followed by the extension headers
 * @hdr_len: bytes at @bth to cover (BTH and extension headers; more may
 *	be covered here if they are contiguous, payload included)
 *
 * The fields a router may change on the way (IPv4 TOS, TTL and header
 * checksum, IPv6 traffic class, flow label and hop limit, the UDP
 * checksum, the BTH FECN/BECN bits) count as all ones, so that the ICRC
 * holds end to end.
 *
 * Return: the running CRC, for softhca_icrc_update() and
 * softhca_icrc_finish().
 */
u32 softhca_icrc_hdrs(const void *iph, const void *udph, const void *bth,
		      u32 hdr_len)
{
	/*
	 * The masked copies go back to back into one buffer, summed by one
	 * crc32_le() call: 40 bytes (IPv4) in five 8-byte steps, where one
	 * call per header paid each call's alignment head and byte tail
	 * (a 64 B WRITE's receive spent a tenth of its time here).
	 */
	union {
		u8 b[IPV6_LEN + sizeof(struct udphdr) + SOFTHCA_BTH_LEN];
		u64 align;	/* crc32_le() sums 8-byte words */
	} buf;
	u8 *m = buf.b;
	u32 crc = SOFTHCA_ICRC_SEED, l3, ihl;
	const u8 *ip = iph;

	if (ip[0] >> 4 == 6) {
		l3 = IPV6_LEN;
		memcpy(m, ip, IPV6_LEN);
		m[0] |= 0x0f;			/* traffic class, high half */
		m[1] = 0xff;			/* traffic class, flow label */
		m[2] = 0xff;
		m[3] = 0xff;
		m[offsetof(struct ipv6hdr, hop_limit)] = 0xff;
	} else {
		l3 = IPV4_MIN_LEN;
		memcpy(m, ip, IPV4_MIN_LEN);
		m[offsetof(struct iphdr, tos)] = 0xff;
		m[offsetof(struct iphdr, ttl)] = 0xff;
		memset(&m[offsetof(struct iphdr, check)], 0xff, 2);
		ihl = (ip[0] & 0x0f) * 4;
		if (ihl > IPV4_MIN_LEN) {
			/* options (never sent here): between IP and UDP */
			crc = crc32_le(crc, m, IPV4_MIN_LEN);
			crc = crc32_le(crc, ip + IPV4_MIN_LEN,
				       ihl - IPV4_MIN_LEN);
			l3 = 0;
		}
	}

	memcpy(m + l3, udph, sizeof(struct udphdr));
	memset(&m[l3 + offsetof(struct udphdr, check)], 0xff, 2);
	memcpy(m + l3 + sizeof(struct udphdr), bth, SOFTHCA_BTH_LEN);
	/* FECN, BECN, resv */
	m[l3 + sizeof(struct udphdr) + offsetof(struct softhca_bth, qpn)] = 0xff;
	crc = crc32_le(crc, m, l3 + sizeof(struct udphdr) + SOFTHCA_BTH_LEN);

	return softhca_crc32(crc, (const u8 *)bth + SOFTHCA_BTH_LEN,
			     hdr_len - SOFTHCA_BTH_LEN);
}

/* Go on with the ICRC over payload (and pad) bytes, in wire order. */
u32 softhca_icrc_update(u32 crc, const void *p, u32 len)
{
	return softhca_crc32(crc, p, len);
}

/**
 * softhca_roce_frame - check the IP and UDP headers of a RoCEv2 frame
 * and parse the packet they carry
 * @iph: the frame's IPv4 or IPv6 header
 * @len: bytes at @iph (Ethernet padding beyond the IP length is allowed)
 * @pkt: the packet, as softhca_roce_parse() fills it
 *
 * Return: 0; -EINVAL when the IP or UDP header is malformed, not UDP, not
 * to port 4791 or longer than @len; softhca_roce_parse()'s errors.
 */
int softhca_roce_frame(const void *iph, u32 len, struct softhca_roce_pkt *pkt)
{
	const u8 *ip = iph;
	const struct udphdr *uh;
	u32 l3, l4;

	if (len < IPV4_MIN_LEN)
		return -EINVAL;
	if (ip[0] >> 4 == 4) {
		const struct iphdr *h = iph;

		l3 = h->ihl * 4;
		if (l3 < IPV4_MIN_LEN || h->protocol != IPPROTO_UDP ||
		    be16_to_cpu(h->tot_len) > len ||
		    be16_to_cpu(h->tot_len) < l3)
			return -EINVAL;
		len = be16_to_cpu(h->tot_len);
	} else if (ip[0] >> 4 == 6) {
		const struct ipv6hdr *h = iph;

		/* RoCEv2 has no IPv6 extension headers: UDP follows. */
		l3 = IPV6_LEN;
		if (len < l3 || h->nexthdr != IPPROTO_UDP ||
		    be16_to_cpu(h->payload_len) > len - l3)
			return -EINVAL;
		len = l3 + be16_to_cpu(h->payload_len);
	} else {
		return -EINVAL;
	}
	if (len - l3 < sizeof(*uh))
		return -EINVAL;
	uh = (const struct udphdr *)(ip + l3);
	l4 = be16_to_cpu(uh->len);
	if (l4 != len - l3 || uh->dest != cpu_to_be16(SOFTHCA_ROCE_UDP_PORT))
		return -EINVAL;
	return softhca_roce_parse(uh + 1, l4 - sizeof(*uh), pkt);
}

/*
 * The ICRC of a contiguous frame checked by softhca_roce_frame(): the
 * UDP header lies just before the BTH.
 */
static __le32 softhca_icrc_pkt(const void *iph,
			       const struct softhca_roce_pkt *pkt)
{
	u32 crc;

	crc = softhca_icrc_hdrs(iph, pkt->bth - sizeof(struct udphdr),
				pkt->bth, pkt->len - SOFTHCA_ICRC_LEN);
	return softhca_icrc_finish(crc);
}

/**
 * softhca_icrc_frame - the ICRC a contiguous frame should carry
 * @iph: the frame's IPv4 or IPv6 header
 * @len: bytes at @iph
 *
 * Return: the four ICRC bytes as they go on the wire; 0 when the frame
 * is malformed (softhca_roce_frame() fails), which is also a possible
 * ICRC: callers that care check the frame first.
 */
__le32 softhca_icrc_frame(const void *iph, u32 len)
{
	struct softhca_roce_pkt pkt;

	if (softhca_roce_frame(iph, len, &pkt))
		return 0;
	return softhca_icrc_pkt(iph, &pkt);
}

/**
 * softhca_icrc_verify - check a whole contiguous frame and its ICRC
 * @iph: the frame's IPv4 or IPv6 header
 * @len: bytes at @iph
 *
 * Return: 0; -EBADMSG when the ICRC does not match; softhca_roce_frame()'s
 * errors.
 */
int softhca_icrc_verify(const void *iph, u32 len)
{
	struct softhca_roce_pkt pkt;
	__le32 wire;
	int err;

	err = softhca_roce_frame(iph, len, &pkt);
	if (err)
		return err;
	memcpy(&wire, pkt.bth + pkt.len - SOFTHCA_ICRC_LEN, sizeof(wire));
	return wire == softhca_icrc_pkt(iph, &pkt) ? 0 : -EBADMSG;
}

/**
 * softhca_icrc_fill - write the ICRC of a whole contiguous frame
 * @iph: the frame's IPv4 or IPv6 header; the last four bytes of its
 *	packet are the ICRC's
 * @len: bytes at @iph
 *
 * Return: 0; softhca_roce_frame()'s errors (nothing written).
 */
int softhca_icrc_fill(void *iph, u32 len)
{
	struct softhca_roce_pkt pkt;
	__le32 icrc;
	int err;

	err = softhca_roce_frame(iph, len, &pkt);
	if (err)
		return err;
	icrc = softhca_icrc_pkt(iph, &pkt);
	memcpy((u8 *)pkt.bth + pkt.len - SOFTHCA_ICRC_LEN, &icrc, sizeof(icrc));
	return 0;
}

#ifdef __KERNEL__
/*
 * The ICRC of a packet in an skb whose network and transport headers are
 * set (the UDP header just before the BTH, both in the linear part), and
 * whose last four bytes are the ICRC's.  The BTH and the extension
 * headers may be in the linear part or not: a segment of a received
 * batch carries them in a page fragment, and they are read through a
 * copy then (as softhca_wire_rcv() parses them) rather than pulled, which
 * would reallocate the segment's head.  @hdrs: those headers when the
 * caller has them at hand (in place or copied), else NULL.  Payload may
 * be in fragments.
 */
static int softhca_icrc_skb(struct sk_buff *skb, const u8 *hdrs,
			    __le32 *icrc)
{
	int bth_off = skb_transport_offset(skb) + sizeof(struct udphdr);
	u8 copy[SOFTHCA_ROCE_MAX_HDRS];
	struct skb_seq_state st;
	const u8 *bth, *data;
	u32 hdr_len, from, total, done, n;
	u32 crc;

	if (bth_off < 0 || skb_headlen(skb) < bth_off ||
	    skb->len < bth_off + SOFTHCA_BTH_LEN + SOFTHCA_ICRC_LEN)
		return -EINVAL;
	bth = hdrs ?: skb_header_pointer(skb, bth_off, SOFTHCA_BTH_LEN, copy);
	hdr_len = softhca_roce_ops[bth[0]].hdr_len;
	if (!hdr_len || hdr_len > sizeof(copy) ||
	    skb->len < bth_off + hdr_len + SOFTHCA_ICRC_LEN)
		return -EINVAL;
	if (!hdrs)
		bth = skb_header_pointer(skb, bth_off, hdr_len, copy);
	crc = softhca_icrc_hdrs(skb_network_header(skb),
				skb_transport_header(skb), bth, hdr_len);

	/* payload and pad: linear, in page fragments or in a frag list */
	from = bth_off + hdr_len;
	total = skb->len - SOFTHCA_ICRC_LEN - from;
	if (from + total <= skb_headlen(skb)) {
		/* a small message's segment: no walk (it maps and unmaps) */
		crc = softhca_crc32(crc, skb->data + from, total);
		*icrc = softhca_icrc_finish(crc);
		return 0;
	}
	done = 0;
	skb_prepare_seq_read(skb, from, from + total, &st);
	/* a block may run past the range; the walk ends itself at 0 */
	while ((n = skb_seq_read(done, &data, &st)) != 0) {
		n = min(n, total - done);
		crc = softhca_crc32(crc, data, n);
		done += n;
	}
	*icrc = softhca_icrc_finish(crc);
	return 0;
}

/**
 * softhca_icrc_put - write the ICRC of a packet about to be sent
 * @skb: headers set as for softhca_icrc_check_skb(); its last four bytes
 *	(linear or not) receive the ICRC
 *
 * A packet too short for its opcode gets no ICRC (a bug of the caller:
 * it warns); the receiver drops it.
 */
void softhca_icrc_put(struct sk_buff *skb)
{
	__le32 icrc;

	if (WARN_ON_ONCE(softhca_icrc_skb(skb, NULL, &icrc)))
		return;
	skb_store_bits(skb, skb->len - SOFTHCA_ICRC_LEN, &icrc, sizeof(icrc));
}

/**
 * softhca_icrc_check_hdrs - check the ICRC of a received packet
 * @skb: network and transport headers set (the UDP header just before the
 *	BTH) and linear, skb->data anywhere at or before the BTH
 * @hdrs: the packet's BTH and extension headers, at least as many bytes
 *	as its opcode has (skb->data's, or a copy of them: what
 *	softhca_wire_rcv() parsed); NULL: read from @skb
 *
 * Return: 0; -EBADMSG when the ICRC does not match; -EINVAL when the
 * packet is too short for its opcode or its IP and UDP headers are not
 * linear.
 */
int softhca_icrc_check_hdrs(struct sk_buff *skb, const void *hdrs)
{
	__le32 icrc, wire;
	int err;

	err = softhca_icrc_skb(skb, hdrs, &icrc);
	if (err)
		return err;
	if (skb_copy_bits(skb, skb->len - SOFTHCA_ICRC_LEN, &wire,
			  sizeof(wire)))
		return -EINVAL;
	return icrc == wire ? 0 : -EBADMSG;
}

/* softhca_icrc_check_hdrs(), the headers read from @skb. */
int softhca_icrc_check_skb(struct sk_buff *skb)
{
	return softhca_icrc_check_hdrs(skb, NULL);
}
#endif /* __KERNEL__ */
