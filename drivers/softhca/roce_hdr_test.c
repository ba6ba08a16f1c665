// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the RoCEv2 packet layer (roce_hdr.c).
 *
 * The ICRC and header layout are checked against frames rdma_rxe put on
 * a wire (roce_frames_test.h, captured by tools/roce-capture): a layer
 * that only agrees with itself could be wrong in the same way both ways.
 * The parser gets hostile input: every truncation of those frames and
 * random bytes, each in a buffer of exactly its length so that KASAN
 * sees any read past it.
 *
 * Every check is an assertion: a case stops at its first failure.  The
 * debugfs log of a case (what selftests/kunit.sh reads) holds 512 bytes,
 * and a case whose failures overflow it loses its own result line.
 */
#include <asm/unaligned.h>
#include <crypto/hash.h>
#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/udp.h>

#include "roce_hdr.h"
#include "roce_frames_test.h"

#define ETH_LEN	14

/* A small deterministic generator: failures must be reproducible. */
static u32 rnd_next(u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static u32 l3_len(const u8 *ip)
{
	return ip[0] >> 4 == 6 ? sizeof(struct ipv6hdr) : (ip[0] & 15) * 4;
}

/* Every present header and the payload lie inside the parsed length. */
static void expect_sane(struct kunit *test, const struct softhca_roce_pkt *p,
			u32 len)
{
	static const struct {
		u32 bit;
		size_t off;
		u32 size;
	} hdrs[] = {
		{ SOFTHCA_H_XRCETH, offsetof(struct softhca_roce_pkt, xrceth),
		  SOFTHCA_XRCETH_LEN },
		{ SOFTHCA_H_DETH, offsetof(struct softhca_roce_pkt, deth),
		  SOFTHCA_DETH_LEN },
		{ SOFTHCA_H_RETH, offsetof(struct softhca_roce_pkt, reth),
		  SOFTHCA_RETH_LEN },
		{ SOFTHCA_H_ATMETH, offsetof(struct softhca_roce_pkt, atmeth),
		  SOFTHCA_ATMETH_LEN },
		{ SOFTHCA_H_AETH, offsetof(struct softhca_roce_pkt, aeth),
		  SOFTHCA_AETH_LEN },
		{ SOFTHCA_H_ATMACK, offsetof(struct softhca_roce_pkt, atmack),
		  SOFTHCA_ATMACK_LEN },
		{ SOFTHCA_H_IMMDT, offsetof(struct softhca_roce_pkt, immdt),
		  SOFTHCA_IMMDT_LEN },
		{ SOFTHCA_H_IETH, offsetof(struct softhca_roce_pkt, ieth),
		  SOFTHCA_IETH_LEN },
	};
	int i;

	KUNIT_ASSERT_EQ(test, p->len, len);
	KUNIT_ASSERT_EQ(test, p->payload + p->paylen + p->pad +
			SOFTHCA_ICRC_LEN, len);
	KUNIT_ASSERT_EQ(test, p->payload, softhca_roce_ops[p->opcode].hdr_len);
	for (i = 0; i < ARRAY_SIZE(hdrs); i++) {
		u8 off = *((const u8 *)p + hdrs[i].off);

		if (!(p->mask & hdrs[i].bit)) {
			KUNIT_ASSERT_EQ(test, off, 0);
			continue;
		}
		KUNIT_ASSERT_GE(test, off, SOFTHCA_BTH_LEN);
		KUNIT_ASSERT_LE(test, off + hdrs[i].size, p->payload);
	}
}

/* --- the opcode table ---------------------------------------------------- */

static void header_sizes(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, sizeof(struct softhca_bth), SOFTHCA_BTH_LEN);
	KUNIT_ASSERT_EQ(test, sizeof(struct softhca_xrceth), SOFTHCA_XRCETH_LEN);
	KUNIT_ASSERT_EQ(test, sizeof(struct softhca_deth), SOFTHCA_DETH_LEN);
	KUNIT_ASSERT_EQ(test, sizeof(struct softhca_reth), SOFTHCA_RETH_LEN);
	KUNIT_ASSERT_EQ(test, sizeof(struct softhca_atmeth), SOFTHCA_ATMETH_LEN);
	KUNIT_ASSERT_EQ(test, sizeof(struct softhca_aeth), SOFTHCA_AETH_LEN);
	KUNIT_ASSERT_EQ(test, sizeof(struct softhca_atmack), SOFTHCA_ATMACK_LEN);
	KUNIT_ASSERT_EQ(test, sizeof(struct softhca_immdt), SOFTHCA_IMMDT_LEN);
	KUNIT_ASSERT_EQ(test, sizeof(struct softhca_ieth), SOFTHCA_IETH_LEN);
	KUNIT_ASSERT_EQ(test, SOFTHCA_BTH_LEN, 12);
	KUNIT_ASSERT_EQ(test, SOFTHCA_DETH_LEN, 8);
	KUNIT_ASSERT_EQ(test, SOFTHCA_RETH_LEN, 16);
	KUNIT_ASSERT_EQ(test, SOFTHCA_ATMETH_LEN, 28);
	KUNIT_ASSERT_EQ(test, SOFTHCA_ATMACK_LEN, 8);
	KUNIT_ASSERT_EQ(test, SOFTHCA_ROCE_UDP_PORT, 4791);
	KUNIT_ASSERT_EQ(test, SOFTHCA_ROCE_GSI_QKEY, 0x80010000);
}

static void opcode_table(struct kunit *test)
{
	/* IBA opcodes, by transport: RC and XRC 0x00-0x14 and 0x16-0x17 */
	static const u32 tp_bit[8] = {
		[0] = SOFTHCA_H_RC, [1] = SOFTHCA_H_UC, [3] = SOFTHCA_H_UD,
		[5] = SOFTHCA_H_XRC,
	};
	int op, valid = 0, max = 0;

	for (op = 0; op < 256; op++) {
		const struct softhca_roce_opinfo *o = &softhca_roce_ops[op];
		u8 tp = op >> 5, low = op & 0x1f;
		bool want;
		u32 m = o->mask, len;

		switch (tp) {
		case 0:
		case 5:
			want = low <= 0x14 || low == 0x16 || low == 0x17;
			break;
		case 1:
			want = low <= 0x0b;
			break;
		case 3:
			want = low == 0x04 || low == 0x05;
			break;
		default:
			want = false;	/* RD, CNP, reserved */
		}
		KUNIT_ASSERT_EQ_MSG(test, softhca_roce_op_valid(op), want,
				    "opcode %#x", op);
		if (!m)
			continue;
		valid++;
		max = max_t(int, max, o->hdr_len);

		/* the length is the sum of the headers the mask names */
		len = SOFTHCA_BTH_LEN;
		len += m & SOFTHCA_H_XRCETH ? SOFTHCA_XRCETH_LEN : 0;
		len += m & SOFTHCA_H_DETH ? SOFTHCA_DETH_LEN : 0;
		len += m & SOFTHCA_H_RETH ? SOFTHCA_RETH_LEN : 0;
		len += m & SOFTHCA_H_ATMETH ? SOFTHCA_ATMETH_LEN : 0;
		len += m & SOFTHCA_H_AETH ? SOFTHCA_AETH_LEN : 0;
		len += m & SOFTHCA_H_ATMACK ? SOFTHCA_ATMACK_LEN : 0;
		len += m & SOFTHCA_H_IMMDT ? SOFTHCA_IMMDT_LEN : 0;
		len += m & SOFTHCA_H_IETH ? SOFTHCA_IETH_LEN : 0;
		KUNIT_ASSERT_EQ_MSG(test, o->hdr_len, len, "opcode %#x", op);

		/* one transport, the prefix's */
		KUNIT_ASSERT_EQ_MSG(test, m & (SOFTHCA_H_RC | SOFTHCA_H_UC |
					       SOFTHCA_H_UD | SOFTHCA_H_XRC),
				    tp_bit[tp], "opcode %#x", op);
		/* a position, a direction */
		KUNIT_ASSERT_NE(test, m & (SOFTHCA_H_FIRST | SOFTHCA_H_MIDDLE |
					   SOFTHCA_H_LAST), 0);
		KUNIT_ASSERT_TRUE_MSG(test, !(m & SOFTHCA_H_REQ) !=
					    !(m & SOFTHCA_H_RESP),
				      "opcode %#x", op);
		/* XRC requests name their SRQ, nothing else does */
		KUNIT_ASSERT_EQ_MSG(test, !!(m & SOFTHCA_H_XRCETH),
				    tp == 5 && !!(m & SOFTHCA_H_REQ),
				    "opcode %#x", op);
		KUNIT_ASSERT_EQ(test, !!(m & SOFTHCA_H_DETH), tp == 3);
		/* RETH and AtomicETH never together, ImmDt and IETH neither */
		KUNIT_ASSERT_NE(test, m & (SOFTHCA_H_RETH | SOFTHCA_H_ATMETH),
				SOFTHCA_H_RETH | SOFTHCA_H_ATMETH);
		KUNIT_ASSERT_NE(test, m & (SOFTHCA_H_IMMDT | SOFTHCA_H_IETH),
				SOFTHCA_H_IMMDT | SOFTHCA_H_IETH);
	}
	KUNIT_ASSERT_EQ(test, valid, 23 + 23 + 12 + 2);
	KUNIT_ASSERT_EQ(test, max, SOFTHCA_ROCE_MAX_HDRS);

	/* a few by name */
	KUNIT_ASSERT_EQ(test, softhca_roce_ops[SOFTHCA_RC(SEND_ONLY)].hdr_len, 12);
	KUNIT_ASSERT_EQ(test,
			softhca_roce_ops[SOFTHCA_RC(RDMA_WRITE_ONLY_WITH_IMMEDIATE)].hdr_len,
			32);
	KUNIT_ASSERT_EQ(test, softhca_roce_ops[SOFTHCA_RC(RDMA_READ_REQUEST)].hdr_len,
			28);
	KUNIT_ASSERT_EQ(test, softhca_roce_ops[SOFTHCA_RC(ACKNOWLEDGE)].hdr_len, 16);
	KUNIT_ASSERT_EQ(test, softhca_roce_ops[SOFTHCA_RC(ATOMIC_ACKNOWLEDGE)].hdr_len,
			24);
	KUNIT_ASSERT_EQ(test, softhca_roce_ops[SOFTHCA_XRC(COMPARE_SWAP)].hdr_len,
			44);
	KUNIT_ASSERT_EQ(test, softhca_roce_ops[SOFTHCA_XRC(ACKNOWLEDGE)].hdr_len, 16);
	KUNIT_ASSERT_EQ(test,
			softhca_roce_ops[SOFTHCA_UD(SEND_ONLY_WITH_IMMEDIATE)].hdr_len,
			24);
	KUNIT_ASSERT_EQ(test, softhca_roce_ops[SOFTHCA_UC(SEND_ONLY)].mask &
			SOFTHCA_H_ONLY, SOFTHCA_H_ONLY);
	KUNIT_ASSERT_FALSE(test, softhca_roce_op_valid(SOFTHCA_UC(RDMA_READ_REQUEST)));
	KUNIT_ASSERT_FALSE(test, softhca_roce_op_valid(SOFTHCA_UD(SEND_FIRST)));
	KUNIT_ASSERT_FALSE(test, softhca_roce_op_valid(0x15));
}

/* --- build and parse ----------------------------------------------------- */

static void fields_for(struct softhca_roce_fields *f, u8 op, u32 seed)
{
	memset(f, 0, sizeof(*f));
	f->opcode = op;
	f->se = seed & 1;
	f->mig = seed & 2;
	f->ackreq = seed & 4;
	f->pkey = 0xffff - seed;
	f->dqpn = 0x123456 + seed;
	f->psn = 0xfffff0 + seed;		/* some past the wrap */
	f->xrc_srqn = 0xabcdef - seed;
	f->qkey = 0x80010000 + seed;
	f->sqpn = 0x000001 + seed;
	f->va = 0x0123456789abcdefull + seed;
	f->rkey = 0xdeadbeef ^ seed;
	f->dma_len = 4096 + seed;
	f->swap_add = 0x1111222233334444ull * (seed + 1);
	f->compare = 0x5555666677778888ull ^ seed;
	f->syndrome = 0x60 | (seed & 3);
	f->msn = 0xfedcba - seed;
	f->orig = 0x99aabbccddeeff00ull + seed;
	f->imm = cpu_to_be32(0x01020304 + seed);
	f->inv_rkey = 0x76543210 + seed;
}

/* Read back every field the opcode carries through the accessors. */
static void expect_fields(struct kunit *test, const struct softhca_roce_pkt *p,
			  const struct softhca_roce_fields *f)
{
	const struct softhca_bth *bth = softhca_pkt_bth(p);
	u32 m = p->mask;

	KUNIT_ASSERT_EQ(test, softhca_bth_opcode(bth), f->opcode);
	KUNIT_ASSERT_EQ(test, softhca_bth_se(bth), f->se);
	KUNIT_ASSERT_EQ(test, softhca_bth_mig(bth), f->mig);
	KUNIT_ASSERT_EQ(test, softhca_bth_ackreq(bth), f->ackreq);
	KUNIT_ASSERT_EQ(test, softhca_bth_tver(bth), 0);
	KUNIT_ASSERT_FALSE(test, softhca_bth_fecn(bth));
	KUNIT_ASSERT_FALSE(test, softhca_bth_becn(bth));
	KUNIT_ASSERT_EQ(test, softhca_bth_pkey(bth), f->pkey);
	KUNIT_ASSERT_EQ(test, softhca_bth_qpn(bth), f->dqpn & SOFTHCA_QPN_MASK);
	KUNIT_ASSERT_EQ(test, softhca_bth_psn(bth), f->psn & SOFTHCA_PSN_MASK);

	KUNIT_ASSERT_EQ(test, !!softhca_pkt_xrceth(p), !!(m & SOFTHCA_H_XRCETH));
	if (softhca_pkt_xrceth(p))
		KUNIT_ASSERT_EQ(test, softhca_xrceth_srqn(softhca_pkt_xrceth(p)),
				f->xrc_srqn & SOFTHCA_QPN_MASK);
	KUNIT_ASSERT_EQ(test, !!softhca_pkt_deth(p), !!(m & SOFTHCA_H_DETH));
	if (softhca_pkt_deth(p)) {
		KUNIT_ASSERT_EQ(test, be32_to_cpu(softhca_pkt_deth(p)->qkey),
				f->qkey);
		KUNIT_ASSERT_EQ(test, softhca_deth_sqp(softhca_pkt_deth(p)),
				f->sqpn & SOFTHCA_QPN_MASK);
	}
	KUNIT_ASSERT_EQ(test, !!softhca_pkt_reth(p), !!(m & SOFTHCA_H_RETH));
	if (softhca_pkt_reth(p)) {
		const struct softhca_reth *r = softhca_pkt_reth(p);

		KUNIT_ASSERT_EQ(test, be64_to_cpu(r->va), f->va);
		KUNIT_ASSERT_EQ(test, be32_to_cpu(r->rkey), f->rkey);
		KUNIT_ASSERT_EQ(test, be32_to_cpu(r->len), f->dma_len);
	}
	KUNIT_ASSERT_EQ(test, !!softhca_pkt_atmeth(p), !!(m & SOFTHCA_H_ATMETH));
	if (softhca_pkt_atmeth(p)) {
		const struct softhca_atmeth *a = softhca_pkt_atmeth(p);

		KUNIT_ASSERT_EQ(test, be64_to_cpu(a->va), f->va);
		KUNIT_ASSERT_EQ(test, be32_to_cpu(a->rkey), f->rkey);
		KUNIT_ASSERT_EQ(test, be64_to_cpu(a->swap_add), f->swap_add);
		KUNIT_ASSERT_EQ(test, be64_to_cpu(a->compare), f->compare);
	}
	KUNIT_ASSERT_EQ(test, !!softhca_pkt_aeth(p), !!(m & SOFTHCA_H_AETH));
	if (softhca_pkt_aeth(p)) {
		KUNIT_ASSERT_EQ(test, softhca_aeth_syndrome(softhca_pkt_aeth(p)),
				f->syndrome);
		KUNIT_ASSERT_EQ(test, softhca_aeth_msn(softhca_pkt_aeth(p)),
				f->msn & SOFTHCA_PSN_MASK);
	}
	KUNIT_ASSERT_EQ(test, !!softhca_pkt_atmack(p), !!(m & SOFTHCA_H_ATMACK));
	if (softhca_pkt_atmack(p))
		KUNIT_ASSERT_EQ(test, be64_to_cpu(softhca_pkt_atmack(p)->orig),
				f->orig);
	KUNIT_ASSERT_EQ(test, !!softhca_pkt_immdt(p), !!(m & SOFTHCA_H_IMMDT));
	if (softhca_pkt_immdt(p))
		KUNIT_ASSERT_EQ(test, be32_to_cpu(softhca_pkt_immdt(p)->imm),
				be32_to_cpu(f->imm));
	KUNIT_ASSERT_EQ(test, !!softhca_pkt_ieth(p), !!(m & SOFTHCA_H_IETH));
	if (softhca_pkt_ieth(p))
		KUNIT_ASSERT_EQ(test, be32_to_cpu(softhca_pkt_ieth(p)->rkey),
				f->inv_rkey);
}

static void build_parse_roundtrip(struct kunit *test)
{
	static const u32 paylens[] = { 0, 1, 2, 3, 4, 5, 7, 256, 1021 };
	struct softhca_roce_fields f;
	struct softhca_roce_pkt p;
	int op, i, n = 0;
	u8 *buf;

	buf = kunit_kmalloc(test, SOFTHCA_ROCE_MAX_HDRS + 1024 + 4, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (op = 0; op < 256; op++) {
		const struct softhca_roce_opinfo *o = &softhca_roce_ops[op];

		if (!o->mask)
			continue;
		for (i = 0; i < ARRAY_SIZE(paylens); i++) {
			u32 pl = paylens[i], pad = -pl & 3, len;
			int hlen;

			if (pl && !(o->mask & SOFTHCA_H_PAYLOAD))
				break;
			/* only a last packet is shorter than the MTU */
			if (pad && !(o->mask & SOFTHCA_H_LAST))
				continue;
			fields_for(&f, op, i + op);
			memset(buf, 0xa5, SOFTHCA_ROCE_MAX_HDRS + 1024 + 4);
			hlen = softhca_roce_build(buf, o->hdr_len, &f, pl);
			KUNIT_ASSERT_EQ_MSG(test, hlen, o->hdr_len,
					    "opcode %#x", op);
			/* nothing written past the headers */
			KUNIT_ASSERT_EQ(test, buf[hlen], 0xa5);
			memset(buf + hlen, 0x3c, pl);
			memset(buf + hlen + pl, 0, pad);
			len = hlen + pl + pad + SOFTHCA_ICRC_LEN;
			KUNIT_ASSERT_EQ_MSG(test, softhca_roce_parse(buf, len, &p),
					    0, "opcode %#x paylen %u", op, pl);
			expect_sane(test, &p, len);
			KUNIT_ASSERT_EQ(test, p.paylen, pl);
			KUNIT_ASSERT_EQ(test, p.pad, pad);
			KUNIT_ASSERT_EQ(test, softhca_bth_pad(softhca_pkt_bth(&p)),
					pad);
			KUNIT_ASSERT_PTR_EQ(test, softhca_pkt_payload(&p),
					    (const u8 *)buf + hlen);
			expect_fields(test, &p, &f);
			n++;
		}
	}
	KUNIT_ASSERT_GT(test, n, 200);
}

static void build_rejects(struct kunit *test)
{
	struct softhca_roce_fields f;
	u8 buf[SOFTHCA_ROCE_MAX_HDRS];
	int op;

	for (op = 0; op < 256; op++) {
		const struct softhca_roce_opinfo *o = &softhca_roce_ops[op];

		fields_for(&f, op, 0);
		if (!o->mask) {
			KUNIT_ASSERT_EQ(test, softhca_roce_build(buf, sizeof(buf),
								 &f, 0),
					-EOPNOTSUPP);
			continue;
		}
		KUNIT_ASSERT_EQ(test, softhca_roce_build(buf, o->hdr_len - 1,
							 &f, 0), -ENOSPC);
		if (!(o->mask & SOFTHCA_H_PAYLOAD))
			KUNIT_ASSERT_EQ(test, softhca_roce_build(buf, sizeof(buf),
								 &f, 4),
					-EINVAL);
	}
}

/* A valid packet of @op, @paylen bytes of payload, in a buffer of its size. */
static u8 *make_pkt(struct kunit *test, u8 op, u32 paylen, u32 *len)
{
	struct softhca_roce_fields f;
	u8 *buf;
	int hlen;

	*len = softhca_roce_ops[op].hdr_len + ALIGN(paylen, 4) +
	       SOFTHCA_ICRC_LEN;
	buf = kunit_kzalloc(test, *len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	fields_for(&f, op, 1);
	hlen = softhca_roce_build(buf, *len, &f, paylen);
	KUNIT_ASSERT_EQ(test, hlen, softhca_roce_ops[op].hdr_len);
	return buf;
}

static void parse_rejects(struct kunit *test)
{
	struct softhca_roce_pkt p;
	u32 len, base;
	u8 *b;
	int op;

	/* too short for anything, or not whole words */
	b = make_pkt(test, SOFTHCA_RC(SEND_ONLY), 8, &len);
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, 0, &p), -EINVAL);
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, 12, &p), -EINVAL);
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, 15, &p), -EINVAL);
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, 16, &p), 0);
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, len - 1, &p), -EINVAL);
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, len - 2, &p), -EINVAL);
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, len, &p), 0);

	/* transport version */
	b[1] |= 1;
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, len, &p), -EPROTONOSUPPORT);
	b[1] &= ~SOFTHCA_BTH_TVER_MASK;

	/* every reserved opcode */
	for (op = 0; op < 256; op++) {
		if (softhca_roce_op_valid(op))
			continue;
		b[0] = op;
		KUNIT_ASSERT_EQ_MSG(test, softhca_roce_parse(b, len, &p),
				    -EOPNOTSUPP, "opcode %#x", op);
	}
	b[0] = SOFTHCA_RC(SEND_ONLY);

	/* pad larger than the payload; pad on a packet that is not last */
	b = make_pkt(test, SOFTHCA_RC(SEND_ONLY), 0, &len);
	b[1] |= 3 << SOFTHCA_BTH_PAD_SHIFT;
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, len, &p), -EINVAL);
	b = make_pkt(test, SOFTHCA_RC(SEND_LAST), 4, &len);
	b[1] |= 3 << SOFTHCA_BTH_PAD_SHIFT;
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, len, &p), 0);
	KUNIT_ASSERT_EQ(test, p.paylen, 1);
	b[0] = SOFTHCA_RC(SEND_MIDDLE);
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, len, &p), -EINVAL);
	b[0] = SOFTHCA_RC(RDMA_READ_RESPONSE_FIRST);
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, len, &p), -EINVAL);

	/* payload, or pad, on an opcode without payload */
	for (op = 0; op < 256; op++) {
		if (!softhca_roce_op_valid(op) ||
		    softhca_roce_ops[op].mask & SOFTHCA_H_PAYLOAD)
			continue;
		b = make_pkt(test, op, 0, &base);
		KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, base, &p), 0);
		expect_sane(test, &p, base);
		KUNIT_ASSERT_EQ(test, p.paylen, 0);
		b[1] |= 1 << SOFTHCA_BTH_PAD_SHIFT;
		KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, base, &p), -EINVAL);
		b = kunit_kzalloc(test, base + 4, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, b);
		b[0] = op;
		KUNIT_ASSERT_EQ_MSG(test, softhca_roce_parse(b, base + 4, &p),
				    -EINVAL, "opcode %#x", op);
		/* and too short for its headers */
		KUNIT_ASSERT_EQ(test, softhca_roce_parse(b, base - 4, &p),
				-EINVAL);
	}
}

/*
 * Every length of every captured frame, the packet at the BTH and the
 * frame at the IP header, each copied into a buffer of exactly that
 * length: a successful parse must stay inside it, and KASAN reports any
 * read past its end.
 */
static void parse_truncations(struct kunit *test)
{
	int i, ok_pkt = 0, ok_frame = 0;
	u32 n;

	for (i = 0; i < ARRAY_SIZE(roce_frames); i++) {
		const struct roce_frame *fr = &roce_frames[i];
		const u8 *ip = fr->data + ETH_LEN;
		u32 iplen = fr->len - ETH_LEN;
		u32 bth_off = l3_len(ip) + sizeof(struct udphdr);
		u32 full = iplen - bth_off;
		struct softhca_roce_pkt p;
		u8 *b;
		int err;

		for (n = 0; n <= iplen; n++) {
			b = kunit_kmalloc(test, n ? n : 1, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, b);
			memcpy(b, ip, n);
			err = softhca_roce_frame(b, n, &p);
			if (!err) {
				ok_frame++;
				KUNIT_ASSERT_EQ(test, n, iplen);
				KUNIT_ASSERT_EQ(test, softhca_icrc_verify(b, n), 0);
			} else {
				KUNIT_ASSERT_LT(test, n, iplen);
				KUNIT_ASSERT_NE(test, softhca_icrc_verify(b, n), 0);
			}
			kunit_kfree(test, b);
		}
		for (n = 0; n <= full; n++) {
			b = kunit_kmalloc(test, n ? n : 1, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, b);
			memcpy(b, ip + bth_off, n);
			err = softhca_roce_parse(b, n, &p);
			if (!err) {
				ok_pkt++;
				expect_sane(test, &p, n);
				KUNIT_ASSERT_EQ(test, p.opcode, fr->opcode);
			} else {
				KUNIT_ASSERT_TRUE(test, err == -EINVAL);
				KUNIT_ASSERT_TRUE(test, n != full);
			}
			kunit_kfree(test, b);
		}
	}
	KUNIT_ASSERT_EQ(test, ok_frame, ARRAY_SIZE(roce_frames));
	KUNIT_ASSERT_GE(test, ok_pkt, ARRAY_SIZE(roce_frames));
}

/* Random bytes, and real frames with random bytes stamped on them. */
static void parse_random(struct kunit *test)
{
	struct softhca_roce_pkt p;
	u32 s = 0x2545f491, len, i, j;
	u8 *b;

	for (i = 0; i < 20000; i++) {
		const struct roce_frame *fr =
			&roce_frames[i % ARRAY_SIZE(roce_frames)];
		u32 iplen = fr->len - ETH_LEN;
		bool frame = i & 1;

		len = rnd_next(&s) % (frame ? iplen + 1 : 96);
		b = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, b);
		if (frame) {
			memcpy(b, fr->data + ETH_LEN, len);
			for (j = rnd_next(&s) % 4; j; j--)
				if (len)
					b[rnd_next(&s) % len] = rnd_next(&s);
			if (!softhca_roce_frame(b, len, &p))
				KUNIT_ASSERT_TRUE(test, p.bth + p.len <= b + len);
			softhca_icrc_verify(b, len);
		} else {
			for (j = 0; j < len; j++)
				b[j] = rnd_next(&s);
			/* most random first bytes are reserved opcodes */
			if (len && (i & 2))
				b[0] &= 0x1f;
			if (len > 1)
				b[1] &= ~SOFTHCA_BTH_TVER_MASK;
			if (!softhca_roce_parse(b, len, &p))
				expect_sane(test, &p, len);
		}
		kunit_kfree(test, b);
	}
}

/* --- PSN and AETH ---------------------------------------------------------- */

static void psn_arith(struct kunit *test)
{
	u32 s = 12345, i;

	KUNIT_ASSERT_EQ(test, softhca_psn_add(0xffffff, 1), 0);
	KUNIT_ASSERT_EQ(test, softhca_psn_add(0xfffffe, 3), 1);
	KUNIT_ASSERT_EQ(test, softhca_psn_add(5, 0x1000000), 5);
	KUNIT_ASSERT_EQ(test, softhca_psn_add(0, 0xffffff), 0xffffff);

	KUNIT_ASSERT_EQ(test, softhca_psn_diff(0, 0xffffff), 1);
	KUNIT_ASSERT_EQ(test, softhca_psn_diff(0xffffff, 0), -1);
	KUNIT_ASSERT_EQ(test, softhca_psn_diff(0x000010, 0xfffff0), 0x20);
	KUNIT_ASSERT_EQ(test, softhca_psn_diff(0xfffff0, 0x000010), -0x20);
	KUNIT_ASSERT_EQ(test, softhca_psn_diff(0x7fffff, 0), 0x7fffff);
	KUNIT_ASSERT_EQ(test, softhca_psn_diff(0x800000, 0), -0x800000);
	KUNIT_ASSERT_EQ(test, softhca_psn_diff(0x123456, 0x123456), 0);
	/* bits above the 24 do not count */
	KUNIT_ASSERT_EQ(test, softhca_psn_diff(0xff000001, 0x00ffffff), 2);

	/* forward distance: never negative, the long way round if need be */
	KUNIT_ASSERT_EQ(test, softhca_psn_sub(2, 0xfffffe), 4);
	KUNIT_ASSERT_EQ(test, softhca_psn_sub(0xfffffe, 2), 0xfffffc);
	KUNIT_ASSERT_EQ(test, softhca_psn_sub(7, 7), 0);
	KUNIT_ASSERT_EQ(test, softhca_psn_sub(0x800000, 0), 0x800000);

	KUNIT_ASSERT_TRUE(test, softhca_psn_before(0xffffff, 0));
	KUNIT_ASSERT_TRUE(test, softhca_psn_after(0, 0xffffff));
	KUNIT_ASSERT_TRUE(test, softhca_psn_before(0xfffff0, 0x10));
	KUNIT_ASSERT_FALSE(test, softhca_psn_after(0xfffff0, 0x10));
	KUNIT_ASSERT_FALSE(test, softhca_psn_before(7, 7));
	KUNIT_ASSERT_FALSE(test, softhca_psn_after(7, 7));
	KUNIT_ASSERT_TRUE(test, softhca_psn_before(0x100, 0x101));
	KUNIT_ASSERT_TRUE(test, softhca_psn_after(0x101, 0x100));

	for (i = 0; i < 10000; i++) {
		u32 a = rnd_next(&s) & SOFTHCA_PSN_MASK;
		s32 d = (s32)(rnd_next(&s) % 0xffffff) - 0x7fffff;
		u32 b = softhca_psn_add(a, (u32)d);

		KUNIT_ASSERT_EQ(test, softhca_psn_diff(b, a), d);
		KUNIT_ASSERT_EQ(test, softhca_psn_diff(a, b), -d);
		KUNIT_ASSERT_EQ(test, softhca_psn_after(b, a), d > 0);
		KUNIT_ASSERT_EQ(test, softhca_psn_before(b, a), d < 0);
	}
}

static void aeth_fields(struct kunit *test)
{
	struct softhca_aeth a;

	a.smsn = softhca_aeth_make(SOFTHCA_AETH_ACK | SOFTHCA_AETH_NO_CREDITS,
				   0x1123456);
	KUNIT_ASSERT_EQ(test, softhca_aeth_type(&a), SOFTHCA_AETH_ACK);
	KUNIT_ASSERT_EQ(test, softhca_aeth_value(&a), 0x1f);
	KUNIT_ASSERT_EQ(test, softhca_aeth_msn(&a), 0x123456);
	KUNIT_ASSERT_EQ(test, be32_to_cpu(a.smsn), 0x1f123456);

	a.smsn = softhca_aeth_make(SOFTHCA_AETH_RNR_NAK | 14, 7);
	KUNIT_ASSERT_EQ(test, softhca_aeth_type(&a), SOFTHCA_AETH_RNR_NAK);
	KUNIT_ASSERT_EQ(test, softhca_aeth_value(&a), 14);
	KUNIT_ASSERT_EQ(test, softhca_aeth_syndrome(&a), 0x2e);

	a.smsn = softhca_aeth_make(SOFTHCA_AETH_NAK | SOFTHCA_NAK_REM_OP, 0);
	KUNIT_ASSERT_EQ(test, softhca_aeth_type(&a), SOFTHCA_AETH_NAK);
	KUNIT_ASSERT_EQ(test, softhca_aeth_value(&a), SOFTHCA_NAK_REM_OP);
	KUNIT_ASSERT_EQ(test, softhca_aeth_syndrome(&a), 0x63);
	KUNIT_ASSERT_EQ(test, SOFTHCA_AETH_NAK | SOFTHCA_NAK_PSN_SEQ, 0x60);
	KUNIT_ASSERT_EQ(test, SOFTHCA_AETH_NAK | SOFTHCA_NAK_INVALID, 0x61);
	KUNIT_ASSERT_EQ(test, SOFTHCA_AETH_NAK | SOFTHCA_NAK_REM_ACCESS, 0x62);
}

/* Build @f (@paylen bytes of payload to follow): exactly the @n bytes @want. */
static void expect_built(struct kunit *test, u8 *buf, u32 size,
			 const struct softhca_roce_fields *f, u32 paylen,
			 const u8 *want, u32 n)
{
	KUNIT_ASSERT_EQ(test, softhca_roce_build(buf, size, f, paylen), (int)n);
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, n), 0);
}

/*
 * The atomic headers byte by byte, as the IBA lays them out: an
 * AtomicETH (VA, R_Key, swap or add, compare) right after the BTH; an
 * ATOMIC ACKNOWLEDGE's AETH then AtomicAckETH (the original value).
 */
static void atomic_headers(struct kunit *test)
{
	static const u8 cas[] = {
		0x13, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
		0x80, 0x12, 0x34, 0x56,				/* BTH */
		0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78,	/* VA */
		0xca, 0xfe, 0x00, 0x01,				/* R_Key */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* swap */
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,	/* compare */
	};
	static const u8 aack[] = {
		0x12, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x22,
		0x00, 0x12, 0x34, 0x56,				/* BTH */
		0x1f, 0x00, 0x00, 0x05,				/* AETH */
		0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,	/* orig */
	};
	struct softhca_roce_fields f = {
		.opcode = SOFTHCA_RC(COMPARE_SWAP),
		.pkey = 0xffff,
		.dqpn = 0x11,
		.psn = 0x123456,
		.ackreq = true,
		.va = 0x7f0012345678ULL,
		.rkey = 0xcafe0001,
		.swap_add = 0x0102030405060708ULL,
		.compare = 0x1112131415161718ULL,
	};
	u8 buf[64] = {};
	struct softhca_roce_pkt p;
	const struct softhca_atmeth *a;

	expect_built(test, buf, sizeof(buf), &f, 0, cas, sizeof(cas));
	/* Parsed back (an ICRC's room after the headers). */
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(buf, sizeof(cas) + 4, &p), 0);
	KUNIT_EXPECT_EQ(test, p.atmeth, (u8)SOFTHCA_BTH_LEN);
	KUNIT_EXPECT_EQ(test, p.paylen, 0U);
	KUNIT_EXPECT_TRUE(test, p.mask & SOFTHCA_H_ATOMIC);
	KUNIT_EXPECT_TRUE(test, p.mask & SOFTHCA_H_REQ);
	a = softhca_pkt_atmeth(&p);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(a->va), f.va);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(a->rkey), f.rkey);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(a->swap_add), f.swap_add);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(a->compare), f.compare);
	/* FETCH_ADD: the same header, the add in the swap field. */
	f.opcode = SOFTHCA_RC(FETCH_ADD);
	KUNIT_ASSERT_EQ(test, softhca_roce_build(buf, sizeof(buf), &f, 0),
			(int)sizeof(cas));
	KUNIT_EXPECT_EQ(test, buf[0], 0x14);
	KUNIT_EXPECT_EQ(test, memcmp(buf + 1, cas + 1, sizeof(cas) - 1), 0);

	memset(&f, 0, sizeof(f));
	memset(buf, 0, sizeof(buf));
	f.opcode = SOFTHCA_RC(ATOMIC_ACKNOWLEDGE);
	f.pkey = 0xffff;
	f.dqpn = 0x22;
	f.psn = 0x123456;
	f.syndrome = SOFTHCA_AETH_ACK | SOFTHCA_AETH_NO_CREDITS;
	f.msn = 5;
	f.orig = 0xfedcba9876543210ULL;
	expect_built(test, buf, sizeof(buf), &f, 0, aack, sizeof(aack));
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(buf, sizeof(aack) + 4, &p), 0);
	KUNIT_EXPECT_EQ(test, p.aeth, (u8)SOFTHCA_BTH_LEN);
	KUNIT_EXPECT_EQ(test, p.atmack, (u8)(SOFTHCA_BTH_LEN + SOFTHCA_AETH_LEN));
	KUNIT_EXPECT_EQ(test, softhca_aeth_msn(softhca_pkt_aeth(&p)), 5U);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(softhca_pkt_atmack(&p)->orig), f.orig);
	/* Payload is refused on both. */
	KUNIT_EXPECT_EQ(test, softhca_roce_build(buf, sizeof(buf), &f, 8),
			-EINVAL);
}

/* SEND with invalidate: the IETH (the R_Key) after the BTH, payload after. */
static void ieth_header(struct kunit *test)
{
	static const u8 sinv[] = {
		0x17, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x33,
		0x80, 0x00, 0x00, 0x09,				/* BTH */
		0x12, 0x34, 0x56, 0x78,				/* IETH */
	};
	struct softhca_roce_fields f = {
		.opcode = SOFTHCA_RC(SEND_ONLY_WITH_INVALIDATE),
		.pkey = 0xffff,
		.dqpn = 0x33,
		.psn = 9,
		.ackreq = true,
		.inv_rkey = 0x12345678,
	};
	u8 buf[64] = {};
	struct softhca_roce_pkt p;

	/* 4 bytes of payload: no pad. */
	expect_built(test, buf, sizeof(buf), &f, 4, sinv, sizeof(sinv));
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(buf, sizeof(sinv) + 8, &p), 0);
	KUNIT_EXPECT_EQ(test, p.ieth, (u8)SOFTHCA_BTH_LEN);
	KUNIT_EXPECT_EQ(test, p.paylen, 4U);
	KUNIT_EXPECT_TRUE(test, p.mask & SOFTHCA_H_SEND);
	KUNIT_EXPECT_TRUE(test, (p.mask & SOFTHCA_H_ONLY) == SOFTHCA_H_ONLY);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(softhca_pkt_ieth(&p)->rkey),
			0x12345678U);
	/* LAST: the same header; UC has neither opcode. */
	f.opcode = SOFTHCA_RC(SEND_LAST_WITH_INVALIDATE);
	KUNIT_ASSERT_EQ(test, softhca_roce_build(buf, sizeof(buf), &f, 4),
			(int)sizeof(sinv));
	KUNIT_EXPECT_EQ(test, buf[0], 0x16);
	KUNIT_EXPECT_FALSE(test, softhca_roce_op_valid(SOFTHCA_UC(SEND_ONLY_WITH_INVALIDATE)));
}

/* --- rxe's frames ---------------------------------------------------------- */

/*
 * The ICRC spelled out the slow way, independently of roce_hdr.c: a
 * masked copy of the whole packet behind 8 bytes of 0xff, standard
 * CRC-32, complemented, little endian.
 */
static __le32 ref_icrc(struct kunit *test, const u8 *ip, u32 len)
{
	static const u8 lrh[8] = { 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff, 0xff, 0xff };
	u32 l3 = l3_len(ip), crc;
	u8 *m;

	m = kunit_kmalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	memcpy(m, ip, len);
	if (ip[0] >> 4 == 6) {
		m[0] |= 0x0f;
		memset(m + 1, 0xff, 3);		/* traffic class, flow label */
		m[7] = 0xff;			/* hop limit */
	} else {
		m[1] = 0xff;			/* TOS */
		m[8] = 0xff;			/* TTL */
		memset(m + 10, 0xff, 2);	/* header checksum */
	}
	memset(m + l3 + 6, 0xff, 2);		/* UDP checksum */
	m[l3 + 8 + 4] = 0xff;			/* BTH FECN, BECN, resv6 */
	crc = crc32_le(~0U, lrh, sizeof(lrh));
	crc = crc32_le(crc, m, len - SOFTHCA_ICRC_LEN);
	kunit_kfree(test, m);
	return cpu_to_le32(~crc);
}

static void rxe_frames_parse(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(roce_frames); i++) {
		const struct roce_frame *fr = &roce_frames[i];
		const u8 *ip = fr->data + ETH_LEN;
		u32 iplen = fr->len - ETH_LEN;
		const struct softhca_bth *bth;
		struct softhca_roce_pkt p;

		KUNIT_ASSERT_EQ(test, fr->data[12], fr->v6 ? 0x86 : 0x08);
		KUNIT_ASSERT_EQ_MSG(test, softhca_roce_frame(ip, iplen, &p), 0,
				    "%s", fr->name);
		bth = softhca_pkt_bth(&p);
		KUNIT_ASSERT_PTR_EQ(test, p.bth, ip + l3_len(ip) + 8);
		expect_sane(test, &p, iplen - l3_len(ip) - 8);
		KUNIT_ASSERT_EQ_MSG(test, p.opcode, fr->opcode, "%s", fr->name);
		KUNIT_ASSERT_EQ_MSG(test, softhca_bth_qpn(bth), fr->qpn, "%s",
				    fr->name);
		KUNIT_ASSERT_EQ_MSG(test, softhca_bth_psn(bth), fr->psn, "%s",
				    fr->name);
		KUNIT_ASSERT_EQ_MSG(test, p.paylen, fr->paylen, "%s", fr->name);
		KUNIT_ASSERT_EQ_MSG(test, p.pad, fr->pad, "%s", fr->name);
		KUNIT_ASSERT_EQ_MSG(test, softhca_bth_ackreq(bth), fr->ackreq,
				    "%s", fr->name);
		KUNIT_ASSERT_EQ(test, softhca_bth_pkey(bth),
				SOFTHCA_ROCE_DEF_PKEY);
		KUNIT_ASSERT_EQ(test, softhca_bth_tver(bth), 0);
		if (softhca_pkt_aeth(&p))
			KUNIT_ASSERT_EQ_MSG(test,
					    softhca_aeth_syndrome(softhca_pkt_aeth(&p)),
					    fr->syndrome, "%s", fr->name);
		if (softhca_pkt_deth(&p)) {
			/* tools/roce-capture-rxe's UD sends */
			KUNIT_ASSERT_EQ(test,
					be32_to_cpu(softhca_pkt_deth(&p)->qkey),
					0x11111111);
			KUNIT_ASSERT_EQ(test, fr->qpn, 0xdef);
		}
		/* rxe asks for an ACK at the end of every RC message */
		if ((p.mask & (SOFTHCA_H_RC | SOFTHCA_H_REQ)) ==
		    (SOFTHCA_H_RC | SOFTHCA_H_REQ))
			KUNIT_ASSERT_EQ_MSG(test, fr->ackreq,
					    !!(p.mask & SOFTHCA_H_LAST), "%s",
					    fr->name);
	}
}

static void rxe_frames_icrc(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(roce_frames); i++) {
		const struct roce_frame *fr = &roce_frames[i];
		const u8 *ip = fr->data + ETH_LEN;
		u32 iplen = fr->len - ETH_LEN, l3 = l3_len(ip), cut;
		const u8 *end = ip + iplen - SOFTHCA_ICRC_LEN;
		struct softhca_roce_pkt p;
		__le32 wire;
		u32 crc;

		memcpy(&wire, end, sizeof(wire));
		KUNIT_ASSERT_EQ_MSG(test, softhca_icrc_verify(ip, iplen), 0,
				    "%s", fr->name);
		KUNIT_ASSERT_EQ_MSG(test,
				    le32_to_cpu(softhca_icrc_frame(ip, iplen)),
				    le32_to_cpu(wire), "%s", fr->name);
		KUNIT_ASSERT_EQ_MSG(test,
				    le32_to_cpu(ref_icrc(test, ip, iplen)),
				    le32_to_cpu(wire), "%s", fr->name);

		/* incrementally: headers, then the payload in pieces */
		KUNIT_ASSERT_EQ(test, softhca_roce_frame(ip, iplen, &p), 0);
		for (cut = 0; cut <= p.paylen + p.pad; cut += 1 + cut * 3) {
			const u8 *pay = softhca_pkt_payload(&p);

			crc = softhca_icrc_hdrs(ip, ip + l3, p.bth, p.payload);
			crc = softhca_icrc_update(crc, pay, cut);
			crc = softhca_icrc_update(crc, pay + cut,
						  end - pay - cut);
			KUNIT_ASSERT_EQ_MSG(test,
					    le32_to_cpu(softhca_icrc_finish(crc)),
					    le32_to_cpu(wire), "%s cut %u",
					    fr->name, cut);
		}
	}
}

/* Fields of a parsed packet, as a transport would hand them to the builder. */
static void fields_of(const struct softhca_roce_pkt *p,
		      struct softhca_roce_fields *f)
{
	const struct softhca_bth *bth = softhca_pkt_bth(p);

	memset(f, 0, sizeof(*f));
	f->opcode = p->opcode;
	f->se = softhca_bth_se(bth);
	f->mig = softhca_bth_mig(bth);
	f->ackreq = softhca_bth_ackreq(bth);
	f->pkey = softhca_bth_pkey(bth);
	f->dqpn = softhca_bth_qpn(bth);
	f->psn = softhca_bth_psn(bth);
	if (softhca_pkt_xrceth(p))
		f->xrc_srqn = softhca_xrceth_srqn(softhca_pkt_xrceth(p));
	if (softhca_pkt_deth(p)) {
		f->qkey = be32_to_cpu(softhca_pkt_deth(p)->qkey);
		f->sqpn = softhca_deth_sqp(softhca_pkt_deth(p));
	}
	if (softhca_pkt_reth(p)) {
		f->va = be64_to_cpu(softhca_pkt_reth(p)->va);
		f->rkey = be32_to_cpu(softhca_pkt_reth(p)->rkey);
		f->dma_len = be32_to_cpu(softhca_pkt_reth(p)->len);
	}
	if (softhca_pkt_atmeth(p)) {
		f->va = be64_to_cpu(softhca_pkt_atmeth(p)->va);
		f->rkey = be32_to_cpu(softhca_pkt_atmeth(p)->rkey);
		f->swap_add = be64_to_cpu(softhca_pkt_atmeth(p)->swap_add);
		f->compare = be64_to_cpu(softhca_pkt_atmeth(p)->compare);
	}
	if (softhca_pkt_aeth(p)) {
		f->syndrome = softhca_aeth_syndrome(softhca_pkt_aeth(p));
		f->msn = softhca_aeth_msn(softhca_pkt_aeth(p));
	}
	if (softhca_pkt_atmack(p))
		f->orig = be64_to_cpu(softhca_pkt_atmack(p)->orig);
	if (softhca_pkt_immdt(p))
		f->imm = softhca_pkt_immdt(p)->imm;
	if (softhca_pkt_ieth(p))
		f->inv_rkey = be32_to_cpu(softhca_pkt_ieth(p)->rkey);
}

/*
 * The builder, given the fields of each rxe frame, writes rxe's header
 * bytes; with the payload and softhca_icrc_fill() the whole frame comes
 * out byte for byte.
 */
static void rxe_frames_rebuild(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(roce_frames); i++) {
		const struct roce_frame *fr = &roce_frames[i];
		const u8 *ip = fr->data + ETH_LEN;
		u32 iplen = fr->len - ETH_LEN;
		u32 bth_off = l3_len(ip) + sizeof(struct udphdr);
		struct softhca_roce_fields f;
		struct softhca_roce_pkt p;
		u8 *b;
		int hlen;

		KUNIT_ASSERT_EQ(test, softhca_roce_frame(ip, iplen, &p), 0);
		fields_of(&p, &f);
		b = kunit_kzalloc(test, iplen, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, b);
		memcpy(b, ip, bth_off);		/* IP and UDP as rxe made them */
		hlen = softhca_roce_build(b + bth_off, iplen - bth_off, &f,
					  p.paylen);
		KUNIT_ASSERT_EQ(test, hlen, (int)p.payload);
		KUNIT_ASSERT_EQ_MSG(test, memcmp(b, ip, bth_off + hlen), 0,
				    "%s", fr->name);
		memcpy(b + bth_off + hlen, softhca_pkt_payload(&p), p.paylen);
		KUNIT_ASSERT_EQ(test, softhca_icrc_fill(b, iplen), 0);
		KUNIT_ASSERT_EQ_MSG(test, memcmp(b, ip, iplen), 0, "%s",
				    fr->name);
		kunit_kfree(test, b);
	}
}

/* IP header bytes the ICRC masks, and those that shape the frame. */
static const u8 v4_masked[] = { 1, 8, 10, 11 };	/* TOS, TTL, checksum */
static const u8 v4_shape[] = { 0, 2, 3, 9 };	/* IHL, length, protocol */
static const u8 v6_masked[] = { 1, 2, 3, 7 };	/* class, flow, hop limit */
static const u8 v6_shape[] = { 0, 4, 5, 6 };	/* version, length, next */

static void mark(bool *a, const u8 *offs)
{
	int i;

	for (i = 0; i < 4; i++)
		a[offs[i]] = true;
}

/*
 * A one-bit change anywhere the ICRC covers breaks it; a change of a
 * field it masks (one a router may rewrite) does not.
 */
static void rxe_frames_bitflips(struct kunit *test)
{
	int i, pos, bit;

	for (i = 0; i < ARRAY_SIZE(roce_frames); i++) {
		const struct roce_frame *fr = &roce_frames[i];
		u32 iplen = fr->len - ETH_LEN, l3, udp, bth;
		bool masked[sizeof(struct ipv6hdr) + 8 + SOFTHCA_BTH_LEN] = {};
		/* fields whose change alters the frame's structure */
		bool shape[sizeof(struct ipv6hdr) + 8 + SOFTHCA_BTH_LEN] = {};
		struct softhca_roce_pkt p;
		u8 *b;

		b = kunit_kmalloc(test, iplen, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, b);
		memcpy(b, fr->data + ETH_LEN, iplen);
		l3 = l3_len(b);
		udp = l3;
		bth = l3 + 8;
		if (fr->v6) {
			mark(masked, v6_masked);
			mark(shape, v6_shape);
		} else {
			mark(masked, v4_masked);
			mark(shape, v4_shape);
		}
		masked[udp + 6] = true;			/* UDP checksum */
		masked[udp + 7] = true;
		masked[bth + 4] = true;			/* FECN, BECN, resv6 */
		for (pos = udp + 2; pos < udp + 6; pos++)
			shape[pos] = true;		/* port, length */
		shape[bth] = true;			/* opcode */
		shape[bth + 1] = true;			/* pad, TVer */
		KUNIT_ASSERT_EQ(test, softhca_roce_frame(b, iplen, &p), 0);

		for (pos = 0; pos < iplen; pos++) {
			for (bit = 0; bit < 8; bit++) {
				bool m = pos < ARRAY_SIZE(masked) && masked[pos];
				bool s = pos < ARRAY_SIZE(shape) && shape[pos];
				int err;

				/*
				 * IPv6 byte 0: version (high half), then
				 * the traffic class, masked
				 */
				if (fr->v6 && pos == 0 && bit < 4) {
					m = true;
					s = false;
				}
				b[pos] ^= 1 << bit;
				err = softhca_icrc_verify(b, iplen);
				b[pos] ^= 1 << bit;
				if (m)
					KUNIT_ASSERT_EQ_MSG(test, err, 0,
							    "%s byte %d bit %d",
							    fr->name, pos, bit);
				else if (s)
					KUNIT_ASSERT_NE_MSG(test, err, 0,
							    "%s byte %d bit %d",
							    fr->name, pos, bit);
				else
					KUNIT_ASSERT_EQ_MSG(test, err, -EBADMSG,
							    "%s byte %d bit %d",
							    fr->name, pos, bit);
			}
			/* the big payloads: every bit of some bytes only */
			if (pos > bth + 64 && pos + 70 < iplen)
				pos += 61;
		}
		/* all the masked fields at once, to anything */
		for (pos = 0; pos < ARRAY_SIZE(masked); pos++)
			if (masked[pos])
				b[pos] = 0x5a ^ pos;
		if (fr->v6)
			b[0] = 0x6a;
		KUNIT_ASSERT_EQ_MSG(test, softhca_icrc_verify(b, iplen), 0, "%s",
				    fr->name);
		kunit_kfree(test, b);
	}
}

/*
 * One frame in an skb (@payload: its payload's offset from the BTH): @lin
 * bytes from the IP header linear, the rest in a page fragment.  Returns
 * what softhca_icrc_check_skb() says of it as sent, with its ICRC zeroed,
 * after softhca_icrc_put(), as the receive path sees it (skb->data at the
 * BTH), and with a payload bit flipped (-EBADMSG when the packet has no
 * payload to flip); and what softhca_icrc_check_hdrs() says as the
 * receive path calls it, with the headers it parsed (in place or copied).
 */
static void frame_skb_checks(struct kunit *test, const u8 *ip, u32 iplen,
			     u32 l3, u32 lin, u32 payload, int res[6])
{
	u8 hdrs[SOFTHCA_ROCE_MAX_HDRS];
	const void *h;
	struct sk_buff *skb;
	struct page *page;
	__le32 zero = 0;

	skb = alloc_skb(lin, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, ip, lin);
	if (iplen > lin) {
		page = alloc_page(GFP_KERNEL);
		if (!page) {
			kfree_skb(skb);
			KUNIT_FAIL(test, "no page");
			return;
		}
		memcpy(page_address(page), ip + lin, iplen - lin);
		skb_add_rx_frag(skb, 0, page, 0, iplen - lin, PAGE_SIZE);
	}
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, l3);

	res[0] = softhca_icrc_check_skb(skb);
	/* as the transmit path sees it: ICRC zero, then put */
	skb_store_bits(skb, iplen - SOFTHCA_ICRC_LEN, &zero, 4);
	res[1] = softhca_icrc_check_skb(skb);
	softhca_icrc_put(skb);
	res[2] = softhca_icrc_check_skb(skb);
	/* as the receive path sees it: skb->data at the BTH */
	skb_pull(skb, l3 + sizeof(struct udphdr));
	res[3] = softhca_icrc_check_skb(skb);
	h = skb_header_pointer(skb, 0, min_t(u32, skb->len, sizeof(hdrs)), hdrs);
	res[5] = h ? softhca_icrc_check_hdrs(skb, h) : -EINVAL;
	/* a flipped bit in the last payload byte (or the pad) */
	res[4] = -EBADMSG;
	if (skb->len > payload + SOFTHCA_ICRC_LEN) {
		u8 c;

		skb_copy_bits(skb, skb->len - 5, &c, 1);
		c ^= 0x10;
		skb_store_bits(skb, skb->len - 5, &c, 1);
		res[4] = softhca_icrc_check_skb(skb);
	}
	kfree_skb(skb);
}

/*
 * The sk_buff helpers, with the payload in a page fragment the way a
 * zero-copy transmit or a GRO'd receive would have it, with the
 * transport headers there too, as in a segment of a received batch
 * (its head holds the IP and UDP headers only), and linear as a whole.
 */
static void rxe_frames_skb(struct kunit *test)
{
	static const int want[6] = { 0, -EBADMSG, 0, 0, -EBADMSG, 0 };
	int i, split, k;

	for (i = 0; i < ARRAY_SIZE(roce_frames); i++) {
		const struct roce_frame *fr = &roce_frames[i];
		const u8 *ip = fr->data + ETH_LEN;
		u32 iplen = fr->len - ETH_LEN, l3 = l3_len(ip), lin;
		struct softhca_roce_pkt p;
		int res[6] = { 0 };

		KUNIT_ASSERT_EQ(test, softhca_roce_frame(ip, iplen, &p), 0);
		for (split = 0; split < 3; split++) {
			/*
			 * headers and 3 payload bytes linear, or IP and UDP,
			 * or all of it (a small message's received segment)
			 */
			lin = split == 1 ? l3 + sizeof(struct udphdr) :
			      split == 2 ? iplen :
			      min(iplen, (u32)(p.bth - ip) + p.payload + 3);
			frame_skb_checks(test, ip, iplen, l3, lin, p.payload,
					 res);
			for (k = 0; k < 6; k++)
				KUNIT_ASSERT_EQ_MSG(test, res[k], want[k],
						    "%s, %u linear, check %d",
						    fr->name, lin, k);
		}
	}
}

/*
 * IPv4 options (softhca never sends them; a peer's stack might): the
 * ICRC covers them where the IHL says, between the IP and UDP headers.
 * Each IPv4 frame of rxe's with 4, 8 and 40 bytes of options put in
 * (NOPs, then a byte pattern): softhca_icrc_fill() writes what the slow
 * reference computes, and the skb paths agree with it.
 */
static void rxe_frames_ip_options(struct kunit *test)
{
	static const int want[6] = { 0, -EBADMSG, 0, 0, -EBADMSG, 0 };
	static const u32 opts[] = { 4, 8, 40 };
	int i, j, k, res[6];

	for (i = 0; i < ARRAY_SIZE(roce_frames); i++) {
		const struct roce_frame *fr = &roce_frames[i];
		const u8 *ip = fr->data + ETH_LEN;
		u32 iplen = fr->len - ETH_LEN, tot, o;
		struct softhca_roce_pkt p;
		__le32 icrc;
		u8 *b;

		if (fr->v6)
			continue;
		KUNIT_ASSERT_EQ(test, l3_len(ip), 20U);
		for (j = 0; j < ARRAY_SIZE(opts); j++) {
			o = opts[j];
			b = kunit_kmalloc(test, iplen + o, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, b);
			memcpy(b, ip, 20);
			for (k = 0; k < o; k++)
				b[20 + k] = k < 2 ? 1 : 0x30 + k;
			memcpy(b + 20 + o, ip + 20, iplen - 20);
			b[0] = 0x40 | (20 + o) / 4;
			tot = get_unaligned_be16(ip + 2) + o;
			put_unaligned_be16(tot, b + 2);
			KUNIT_ASSERT_EQ_MSG(test, softhca_roce_frame(b, iplen + o, &p),
					    0, "%s +%u", fr->name, o);
			/* the reference differs from the frame without options */
			icrc = ref_icrc(test, b, iplen + o);
			KUNIT_ASSERT_NE(test, le32_to_cpu(icrc),
					le32_to_cpu(ref_icrc(test, ip, iplen)));
			KUNIT_ASSERT_EQ(test, softhca_icrc_fill(b, iplen + o), 0);
			KUNIT_ASSERT_EQ_MSG(test,
					    le32_to_cpu(softhca_icrc_frame(b, iplen + o)),
					    le32_to_cpu(icrc), "%s +%u", fr->name, o);
			KUNIT_ASSERT_EQ(test, memcmp(b + iplen + o - 4, &icrc, 4), 0);
			/* skbs: headers linear (the receive path's), and all */
			for (k = 0; k < 2; k++) {
				frame_skb_checks(test, b, iplen + o, 20 + o,
						 k ? iplen + o : 28 + o, p.payload,
						 res);
				KUNIT_ASSERT_EQ(test, memcmp(res, want, sizeof(want)), 0);
			}
			kunit_kfree(test, b);
		}
	}
}

/*
 * The two implementations of the ICRC's bulk (icrc.c) agree with each
 * other and with crc32_le() at every length and alignment around the
 * shash's 64-byte steps, and the running value carries across pieces
 * summed by either: the choice may change while a packet is summed.
 */
static void icrc_impls_agree(struct kunit *test)
{
	static const u32 lens[] = { 0, 1, 3, 15, 16, 63, 64, 65, 127, 128,
				    129, 1000, 1024, 4095, 4096, 9000 };
	struct crypto_shash *tfm;
	u32 i, off, a, b, c, seed;
	u8 *buf;

	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm))
		kunit_skip(test, "no crc32 shash in this kernel: only crc32_le() sums the ICRC");
	buf = kunit_kmalloc(test, 9000 + 8, GFP_KERNEL);
	if (!buf)
		crypto_free_shash(tfm);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	kunit_info(test, "%s against crc32_le(); softhca_crc32() by %s\n",
		   crypto_shash_driver_name(tfm), softhca_icrc_impl());
	get_random_bytes(buf, 9000 + 8);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		for (off = 0; off < 8; off += 3) {
			seed = get_random_u32();
			a = crc32_le(seed, buf + off, lens[i]);
			b = softhca_crc32_shash(tfm, seed, buf + off, lens[i]);
			KUNIT_EXPECT_EQ_MSG(test, a, b, "len %u off %u", lens[i], off);
			c = softhca_crc32(seed, buf + off, lens[i]);
			KUNIT_EXPECT_EQ_MSG(test, a, c, "len %u off %u (%s)", lens[i], off,
					    softhca_icrc_impl());
			/* a piece by each: the running value carries */
			c = softhca_crc32_shash(tfm, crc32_le(seed, buf + off, lens[i] / 2),
						buf + off + lens[i] / 2,
						lens[i] - lens[i] / 2);
			KUNIT_EXPECT_EQ_MSG(test, a, c, "split, len %u off %u", lens[i], off);
		}
	}
	crypto_free_shash(tfm);
}

static struct kunit_case softhca_roce_hdr_cases[] = {
	KUNIT_CASE(header_sizes),
	KUNIT_CASE(opcode_table),
	KUNIT_CASE(build_parse_roundtrip),
	KUNIT_CASE(build_rejects),
	KUNIT_CASE(parse_rejects),
	KUNIT_CASE(parse_truncations),
	KUNIT_CASE(parse_random),
	KUNIT_CASE(psn_arith),
	KUNIT_CASE(aeth_fields),
	KUNIT_CASE(atomic_headers),
	KUNIT_CASE(ieth_header),
	KUNIT_CASE(rxe_frames_parse),
	KUNIT_CASE(rxe_frames_icrc),
	KUNIT_CASE(rxe_frames_rebuild),
	KUNIT_CASE(rxe_frames_bitflips),
	KUNIT_CASE(rxe_frames_skb),
	KUNIT_CASE(rxe_frames_ip_options),
	KUNIT_CASE(icrc_impls_agree),
	{}
};

static struct kunit_suite softhca_roce_hdr_suite = {
	.name = "softhca_roce_hdr",
	.test_cases = softhca_roce_hdr_cases,
};

kunit_test_suite(softhca_roce_hdr_suite);
