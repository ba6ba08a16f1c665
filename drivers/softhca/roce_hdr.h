/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: the RoCEv2 packet format (roce_hdr.c).
 *
 * What a RoCEv2 packet looks like on the wire, and nothing else: the
 * InfiniBand transport headers (BTH and the extension headers) as
 * packed big-endian structures, the IBA opcodes with a table of what
 * each one carries, the AETH and PSN rules, a parser that checks a
 * packet before anything reads it, builders for the transport, and the
 * ICRC.  No state, no allocation, no locks: every function may be
 * called from any context.
 *
 * A RoCEv2 packet: IPv4 or IPv6 / UDP (destination 4791) / BTH /
 * [XRCETH] [DETH] [RETH | AtomicETH] [AETH] [AtomicAckETH]
 * [ImmDt | IETH] / payload / pad (0-3 bytes, to a multiple of 4) /
 * ICRC (4 bytes).
 */
#ifndef SOFTHCA_ROCE_HDR_H
#define SOFTHCA_ROCE_HDR_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <asm/byteorder.h>

struct sk_buff;

#define SOFTHCA_ROCE_UDP_PORT	4791
#define SOFTHCA_ROCE_GSI_QKEY	0x80010000
#define SOFTHCA_ROCE_DEF_PKEY	0xffff
/* A Q_Key with this bit set in a UD send WR means "use the QP's own". */
#define SOFTHCA_ROCE_QKEY_PRIV	0x80000000

#define SOFTHCA_BTH_LEN		12
#define SOFTHCA_XRCETH_LEN	4
#define SOFTHCA_DETH_LEN	8
#define SOFTHCA_RETH_LEN	16
#define SOFTHCA_ATMETH_LEN	28
#define SOFTHCA_AETH_LEN	4
#define SOFTHCA_ATMACK_LEN	8
#define SOFTHCA_IMMDT_LEN	4
#define SOFTHCA_IETH_LEN	4
#define SOFTHCA_ICRC_LEN	4
/* The longest run of transport headers: BTH + XRCETH + AtomicETH. */
#define SOFTHCA_ROCE_MAX_HDRS	(SOFTHCA_BTH_LEN + SOFTHCA_XRCETH_LEN + \
				 SOFTHCA_ATMETH_LEN)

#define SOFTHCA_PSN_MASK	0xffffff
#define SOFTHCA_QPN_MASK	0xffffff

/*
 * Base Transport Header.  The 24-bit fields share a word with flag bits;
 * the accessors below hide which.
 */
struct softhca_bth {
	u8 opcode;
	u8 flags;		/* SE | M | PadCnt (2) | TVer (4) */
	__be16 pkey;
	__be32 qpn;		/* FECN | BECN | resv6 | DestQP (24) */
	__be32 apsn;		/* AckReq | resv7 | PSN (24) */
} __packed;

#define SOFTHCA_BTH_SE		0x80
#define SOFTHCA_BTH_MIG		0x40
#define SOFTHCA_BTH_PAD_SHIFT	4
#define SOFTHCA_BTH_PAD_MASK	0x30
#define SOFTHCA_BTH_TVER_MASK	0x0f
#define SOFTHCA_BTH_FECN	0x80000000
#define SOFTHCA_BTH_BECN	0x40000000
#define SOFTHCA_BTH_ACKREQ	0x80000000

/* XRC Extended Transport Header: the SRQ a message is for. */
struct softhca_xrceth {
	__be32 srqn;		/* resv8 | XRC SRQ (24) */
} __packed;

/* Datagram Extended Transport Header (UD). */
struct softhca_deth {
	__be32 qkey;
	__be32 sqp;		/* resv8 | source QP (24) */
} __packed;

/* RDMA Extended Transport Header (WRITE first/only, READ request). */
struct softhca_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/* Atomic Extended Transport Header (COMPARE_SWAP, FETCH_ADD). */
struct softhca_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/* ACK Extended Transport Header: syndrome (8) | MSN (24). */
struct softhca_aeth {
	__be32 smsn;
} __packed;

/* Atomic ACK Extended Transport Header: the value before the atomic. */
struct softhca_atmack {
	__be64 orig;
} __packed;

/* Immediate data: opaque, carried as the sender gave it. */
struct softhca_immdt {
	__be32 imm;
} __packed;

/* Invalidate Extended Transport Header: the R_Key to invalidate. */
struct softhca_ieth {
	__be32 rkey;
} __packed;

/* IBA opcodes (BTH byte 0): transport prefix (3 bits) | operation (5). */
enum {
	SOFTHCA_TP_RC			= 0x00,
	SOFTHCA_TP_UC			= 0x20,
	SOFTHCA_TP_RD			= 0x40,	/* never valid here */
	SOFTHCA_TP_UD			= 0x60,
	SOFTHCA_TP_CNP			= 0x80,	/* never valid here */
	SOFTHCA_TP_XRC			= 0xa0,
	SOFTHCA_TP_MASK			= 0xe0,
};

enum {
	SOFTHCA_OP_SEND_FIRST			= 0x00,
	SOFTHCA_OP_SEND_MIDDLE			= 0x01,
	SOFTHCA_OP_SEND_LAST			= 0x02,
	SOFTHCA_OP_SEND_LAST_WITH_IMMEDIATE	= 0x03,
	SOFTHCA_OP_SEND_ONLY			= 0x04,
	SOFTHCA_OP_SEND_ONLY_WITH_IMMEDIATE	= 0x05,
	SOFTHCA_OP_RDMA_WRITE_FIRST		= 0x06,
	SOFTHCA_OP_RDMA_WRITE_MIDDLE		= 0x07,
	SOFTHCA_OP_RDMA_WRITE_LAST		= 0x08,
	SOFTHCA_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09,
	SOFTHCA_OP_RDMA_WRITE_ONLY		= 0x0a,
	SOFTHCA_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0b,
	SOFTHCA_OP_RDMA_READ_REQUEST		= 0x0c,
	SOFTHCA_OP_RDMA_READ_RESPONSE_FIRST	= 0x0d,
	SOFTHCA_OP_RDMA_READ_RESPONSE_MIDDLE	= 0x0e,
	SOFTHCA_OP_RDMA_READ_RESPONSE_LAST	= 0x0f,
	SOFTHCA_OP_RDMA_READ_RESPONSE_ONLY	= 0x10,
	SOFTHCA_OP_ACKNOWLEDGE			= 0x11,
	SOFTHCA_OP_ATOMIC_ACKNOWLEDGE		= 0x12,
	SOFTHCA_OP_COMPARE_SWAP			= 0x13,
	SOFTHCA_OP_FETCH_ADD			= 0x14,
	SOFTHCA_OP_SEND_LAST_WITH_INVALIDATE	= 0x16,
	SOFTHCA_OP_SEND_ONLY_WITH_INVALIDATE	= 0x17,
};

/* Full opcodes, transport prefix included. */
#define SOFTHCA_RC(op)	(SOFTHCA_TP_RC | SOFTHCA_OP_##op)
#define SOFTHCA_UC(op)	(SOFTHCA_TP_UC | SOFTHCA_OP_##op)
#define SOFTHCA_UD(op)	(SOFTHCA_TP_UD | SOFTHCA_OP_##op)
#define SOFTHCA_XRC(op)	(SOFTHCA_TP_XRC | SOFTHCA_OP_##op)

/* What an opcode's packets carry (struct softhca_roce_opinfo.mask). */
enum {
	SOFTHCA_H_XRCETH	= 1 << 0,
	SOFTHCA_H_DETH		= 1 << 1,
	SOFTHCA_H_RETH		= 1 << 2,
	SOFTHCA_H_ATMETH	= 1 << 3,
	SOFTHCA_H_AETH		= 1 << 4,
	SOFTHCA_H_ATMACK	= 1 << 5,
	SOFTHCA_H_IMMDT		= 1 << 6,
	SOFTHCA_H_IETH		= 1 << 7,
	SOFTHCA_H_PAYLOAD	= 1 << 8,	/* may carry payload */

	/* position of the packet in its message */
	SOFTHCA_H_FIRST		= 1 << 9,
	SOFTHCA_H_MIDDLE	= 1 << 10,
	SOFTHCA_H_LAST		= 1 << 11,
	SOFTHCA_H_ONLY		= SOFTHCA_H_FIRST | SOFTHCA_H_LAST,

	/* kind of operation */
	SOFTHCA_H_SEND		= 1 << 12,
	SOFTHCA_H_WRITE		= 1 << 13,
	SOFTHCA_H_READ		= 1 << 14,	/* request and response */
	SOFTHCA_H_ATOMIC	= 1 << 15,	/* request and ATOMIC ACK */
	SOFTHCA_H_ACK		= 1 << 16,	/* ACKNOWLEDGE */
	SOFTHCA_H_REQ		= 1 << 17,	/* requester to responder */
	SOFTHCA_H_RESP		= 1 << 18,	/* responder to requester */

	/* the transports that allow it (exactly one: the prefix's) */
	SOFTHCA_H_RC		= 1 << 19,
	SOFTHCA_H_UC		= 1 << 20,
	SOFTHCA_H_UD		= 1 << 21,
	SOFTHCA_H_XRC		= 1 << 22,
};

/**
 * struct softhca_roce_opinfo - what one opcode carries
 * @mask: SOFTHCA_H_* bits; 0 for a reserved or unsupported opcode
 * @hdr_len: BTH plus every extension header, in bytes
 */
struct softhca_roce_opinfo {
	u32 mask;
	u8 hdr_len;
};

extern const struct softhca_roce_opinfo softhca_roce_ops[256];

static inline bool softhca_roce_op_valid(u8 opcode)
{
	return softhca_roce_ops[opcode].mask != 0;
}

/* --- BTH fields ------------------------------------------------------- */

static inline u8 softhca_bth_opcode(const struct softhca_bth *bth)
{
	return bth->opcode;
}

static inline bool softhca_bth_se(const struct softhca_bth *bth)
{
	return bth->flags & SOFTHCA_BTH_SE;
}

static inline bool softhca_bth_mig(const struct softhca_bth *bth)
{
	return bth->flags & SOFTHCA_BTH_MIG;
}

static inline u8 softhca_bth_pad(const struct softhca_bth *bth)
{
	return (bth->flags & SOFTHCA_BTH_PAD_MASK) >> SOFTHCA_BTH_PAD_SHIFT;
}

static inline u8 softhca_bth_tver(const struct softhca_bth *bth)
{
	return bth->flags & SOFTHCA_BTH_TVER_MASK;
}

static inline u16 softhca_bth_pkey(const struct softhca_bth *bth)
{
	return be16_to_cpu(bth->pkey);
}

static inline u32 softhca_bth_qpn(const struct softhca_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SOFTHCA_QPN_MASK;
}

static inline bool softhca_bth_fecn(const struct softhca_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SOFTHCA_BTH_FECN;
}

static inline bool softhca_bth_becn(const struct softhca_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SOFTHCA_BTH_BECN;
}

static inline bool softhca_bth_ackreq(const struct softhca_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SOFTHCA_BTH_ACKREQ;
}

static inline u32 softhca_bth_psn(const struct softhca_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SOFTHCA_PSN_MASK;
}

/* --- 24-bit fields of the other headers ------------------------------- */

static inline u32 softhca_xrceth_srqn(const struct softhca_xrceth *x)
{
	return be32_to_cpu(x->srqn) & SOFTHCA_QPN_MASK;
}

static inline u32 softhca_deth_sqp(const struct softhca_deth *d)
{
	return be32_to_cpu(d->sqp) & SOFTHCA_QPN_MASK;
}

/* --- AETH ------------------------------------------------------------- */

/* Syndrome: resv (1) | type (2) | value (5). */
#define SOFTHCA_AETH_TYPE_MASK	0x60
#define SOFTHCA_AETH_VAL_MASK	0x1f
#define SOFTHCA_AETH_ACK	0x00	/* value: credits */
#define SOFTHCA_AETH_RNR_NAK	0x20	/* value: RNR timer code */
#define SOFTHCA_AETH_NAK	0x60	/* value: NAK code below */
/* ACK credits "invalid": the responder does not count (rxe sends it). */
#define SOFTHCA_AETH_NO_CREDITS	0x1f

enum {
	SOFTHCA_NAK_PSN_SEQ	= 0,
	SOFTHCA_NAK_INVALID	= 1,
	SOFTHCA_NAK_REM_ACCESS	= 2,
	SOFTHCA_NAK_REM_OP	= 3,
	SOFTHCA_NAK_INV_RD_REQ	= 4,
};

static inline u8 softhca_aeth_syndrome(const struct softhca_aeth *a)
{
	return be32_to_cpu(a->smsn) >> 24;
}

static inline u8 softhca_aeth_type(const struct softhca_aeth *a)
{
	return softhca_aeth_syndrome(a) & SOFTHCA_AETH_TYPE_MASK;
}

/* Credits, RNR timer code or NAK code, after softhca_aeth_type(). */
static inline u8 softhca_aeth_value(const struct softhca_aeth *a)
{
	return softhca_aeth_syndrome(a) & SOFTHCA_AETH_VAL_MASK;
}

static inline u32 softhca_aeth_msn(const struct softhca_aeth *a)
{
	return be32_to_cpu(a->smsn) & SOFTHCA_PSN_MASK;
}

static inline __be32 softhca_aeth_make(u8 syndrome, u32 msn)
{
	return cpu_to_be32((u32)syndrome << 24 | (msn & SOFTHCA_PSN_MASK));
}

/* --- PSN arithmetic, modulo 2^24 -------------------------------------- */

static inline u32 softhca_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SOFTHCA_PSN_MASK;
}

/* How far @a lies ahead of @b, going forward round the circle. */
static inline u32 softhca_psn_sub(u32 a, u32 b)
{
	return (a - b) & SOFTHCA_PSN_MASK;
}

/*
 * @a - @b as a signed distance in [-2^23, 2^23): the shorter way round
 * the circle.  Shifting the difference into the top 24 bits and back
 * makes the arithmetic shift do the sign extension.
 */
static inline s32 softhca_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline bool softhca_psn_before(u32 a, u32 b)
{
	return softhca_psn_diff(a, b) < 0;
}

static inline bool softhca_psn_after(u32 a, u32 b)
{
	return softhca_psn_diff(a, b) > 0;
}

/* --- parsing ---------------------------------------------------------- */

/**
 * struct softhca_roce_pkt - a checked packet, from its BTH to its ICRC
 * @bth: the packet's first byte, or (@skb set) a copy of its headers
 * @len: bytes from the BTH to the end of the ICRC
 * @opcode: BTH opcode
 * @mask: softhca_roce_ops[@opcode].mask
 * @xrceth, @deth, @reth, @atmeth, @aeth, @atmack, @immdt, @ieth: each
 *	header's offset from @bth; 0 when the opcode has none
 * @payload: offset of the payload (the end of the headers)
 * @paylen: payload bytes, pad and ICRC removed
 * @pad: pad bytes between the payload and the ICRC
 * @skb: (kernel) the received packet, skb->data at its BTH: @bth is
 *	skb->data or a copy of the headers (softhca_wire_rcv()), and the
 *	payload is at @payload in the skb (softhca_wire_payload()); NULL:
 *	the whole packet is in one buffer at @bth
 *
 * Everything the header offsets point at lies inside @len: the accessors
 * below return pointers that may be dereferenced without further checks.
 * So does softhca_pkt_payload() when @skb is NULL (only then).
 */
struct softhca_roce_pkt {
	const u8 *bth;
	u32 len;
	u8 opcode;
	u8 pad;
	u32 mask;
	u8 xrceth, deth, reth, atmeth, aeth, atmack, immdt, ieth;
	u16 payload;
	u32 paylen;
#ifdef __KERNEL__
	const struct sk_buff *skb;
#endif
};

int softhca_roce_parse(const void *bth, u32 len, struct softhca_roce_pkt *pkt);

/* A header of a parsed packet, or NULL when its opcode has none. */
static inline const void *softhca_pkt_hdr(const struct softhca_roce_pkt *pkt,
					  u8 off)
{
	return off ? pkt->bth + off : NULL;
}

static inline const struct softhca_xrceth *
softhca_pkt_xrceth(const struct softhca_roce_pkt *pkt)
{
	return softhca_pkt_hdr(pkt, pkt->xrceth);
}

static inline const struct softhca_deth *
softhca_pkt_deth(const struct softhca_roce_pkt *pkt)
{
	return softhca_pkt_hdr(pkt, pkt->deth);
}

static inline const struct softhca_reth *
softhca_pkt_reth(const struct softhca_roce_pkt *pkt)
{
	return softhca_pkt_hdr(pkt, pkt->reth);
}

static inline const struct softhca_atmeth *
softhca_pkt_atmeth(const struct softhca_roce_pkt *pkt)
{
	return softhca_pkt_hdr(pkt, pkt->atmeth);
}

static inline const struct softhca_aeth *
softhca_pkt_aeth(const struct softhca_roce_pkt *pkt)
{
	return softhca_pkt_hdr(pkt, pkt->aeth);
}

static inline const struct softhca_atmack *
softhca_pkt_atmack(const struct softhca_roce_pkt *pkt)
{
	return softhca_pkt_hdr(pkt, pkt->atmack);
}

static inline const struct softhca_immdt *
softhca_pkt_immdt(const struct softhca_roce_pkt *pkt)
{
	return softhca_pkt_hdr(pkt, pkt->immdt);
}

static inline const struct softhca_ieth *
softhca_pkt_ieth(const struct softhca_roce_pkt *pkt)
{
	return softhca_pkt_hdr(pkt, pkt->ieth);
}

static inline const struct softhca_bth *
softhca_pkt_bth(const struct softhca_roce_pkt *pkt)
{
	return (const struct softhca_bth *)pkt->bth;
}

static inline const u8 *softhca_pkt_payload(const struct softhca_roce_pkt *pkt)
{
	return pkt->bth + pkt->payload;
}

/* --- building --------------------------------------------------------- */

/**
 * struct softhca_roce_fields - the values of a packet's headers
 *
 * Only the fields of the headers @opcode carries are read; values are in
 * host order (@imm excepted: immediate data is opaque, kept as sent).
 * 24-bit fields are truncated to 24 bits.
 */
struct softhca_roce_fields {
	u8 opcode;
	bool se;
	bool mig;
	bool ackreq;
	u16 pkey;
	u32 dqpn;
	u32 psn;
	u32 xrc_srqn;		/* XRCETH */
	u32 qkey;		/* DETH */
	u32 sqpn;		/* DETH */
	u64 va;			/* RETH, AtomicETH */
	u32 rkey;		/* RETH, AtomicETH */
	u32 dma_len;		/* RETH */
	u64 swap_add;		/* AtomicETH */
	u64 compare;		/* AtomicETH */
	u8 syndrome;		/* AETH */
	u32 msn;		/* AETH */
	u64 orig;		/* AtomicAckETH */
	__be32 imm;		/* ImmDt */
	u32 inv_rkey;		/* IETH */
};

int softhca_roce_build(void *buf, u32 size, const struct softhca_roce_fields *f,
		       u32 paylen);

/* --- ICRC ------------------------------------------------------------- */

/*
 * The ICRC is computed in three steps so that a packet's pieces may live
 * in different buffers:
 *
 *	crc = softhca_icrc_hdrs(iph, udph, bth, hdr_len);
 *	crc = softhca_icrc_update(crc, piece, len);	(payload, then pad)
 *	wire = softhca_icrc_finish(crc);
 *
 * The running value is crc32_le()'s, so crc32_le() itself may be called
 * between the steps.  The bulk goes through softhca_crc32() (icrc.c):
 * crc32_le() or the crypto API's crc32, whichever was faster at load.
 */
u32 softhca_crc32(u32 crc, const void *p, u32 len);
void softhca_icrc_init(void);
void softhca_icrc_exit(void);
const char *softhca_icrc_impl(void);
struct crypto_shash;
u32 softhca_crc32_shash(struct crypto_shash *tfm, u32 crc, const void *p,
			u32 len);

u32 softhca_icrc_hdrs(const void *iph, const void *udph, const void *bth,
		      u32 hdr_len);
u32 softhca_icrc_update(u32 crc, const void *p, u32 len);

/* The ICRC as its four bytes go on the wire (little endian). */
static inline __le32 softhca_icrc_finish(u32 crc)
{
	return cpu_to_le32(~crc);
}

/* A whole frame in one buffer, from its IP header (tests, linear skbs). */
int softhca_roce_frame(const void *iph, u32 len, struct softhca_roce_pkt *pkt);
__le32 softhca_icrc_frame(const void *iph, u32 len);
int softhca_icrc_verify(const void *iph, u32 len);
int softhca_icrc_fill(void *iph, u32 len);

/*
 * A packet in an sk_buff with its network and transport headers set, the
 * UDP header right before the BTH, the headers linear, the payload
 * anywhere (page fragments, frag list); the last four bytes are the
 * ICRC's.  skb->data may be at the IP header (transmit) or at the BTH
 * (receive, after the UDP layer).
 */
void softhca_icrc_put(struct sk_buff *skb);
int softhca_icrc_check_hdrs(struct sk_buff *skb, const void *hdrs);
int softhca_icrc_check_skb(struct sk_buff *skb);

#endif /* SOFTHCA_ROCE_HDR_H */
