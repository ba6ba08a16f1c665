// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the sequencing rules of connected QPs on the wire (see
 * wire_seq.h).
 *
 * A message longer than the path MTU goes as FIRST, MIDDLE..., LAST
 * packets, each FIRST and MIDDLE exactly one MTU of payload (rxe drops
 * anything else), one PSN each, modulo 2^24.  A receiver of an
 * unreliable connection (UC) takes packets in PSN order only: on a gap
 * the message in progress is lost, its later packets are dropped, and
 * the next FIRST or ONLY starts afresh at whatever PSN it carries (UC
 * resynchronises on the first packet of a message: nothing is
 * acknowledged or sent again, so waiting for the lost PSN would wait
 * forever).
 */
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <rdma/ib_user_verbs.h>

#include "roce_hdr.h"
#include "wire_seq.h"

/**
 * softhca_seq_opcode - the BTH opcode of one packet of a message
 * @tp: the transport prefix (SOFTHCA_TP_UC, SOFTHCA_TP_RC)
 * @wr_opcode: the message's IB_UVERBS_WR_* opcode
 * @first: the packet is the message's first
 * @last: the packet is the message's last (both: the only one)
 *
 * Immediate data goes in the last packet, and so does a SEND with
 * invalidate's IETH (RC and XRC only: UC has no such opcodes).
 * Return: the opcode, or -EOPNOTSUPP for a WR opcode this transport does
 * not carry that way (READ and atomics are requests answered by the
 * responder, not a stream of packets).
 */
int softhca_seq_opcode(u8 tp, u8 wr_opcode, bool first, bool last)
{
	bool imm = wr_opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
		   wr_opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	int op;

	switch (wr_opcode) {
	case IB_UVERBS_WR_SEND_WITH_INV:
		/* FIRST, MIDDLE as a SEND; LAST and ONLY carry the IETH. */
		if (!last)
			op = first ? SOFTHCA_OP_SEND_FIRST : SOFTHCA_OP_SEND_MIDDLE;
		else
			op = first ? SOFTHCA_OP_SEND_ONLY_WITH_INVALIDATE :
				     SOFTHCA_OP_SEND_LAST_WITH_INVALIDATE;
		op |= tp;
		return softhca_roce_op_valid(op) ? op : -EOPNOTSUPP;
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		op = SOFTHCA_OP_SEND_FIRST;
		break;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		op = SOFTHCA_OP_RDMA_WRITE_FIRST;
		break;
	default:
		return -EOPNOTSUPP;
	}
	/*
	 * Both run FIRST, MIDDLE, LAST, LAST with immediate, ONLY, ONLY with
	 * immediate from their base (IBA opcodes 0x00-0x05, 0x06-0x0B).
	 */
	if (first && last)
		op += 4 + imm;
	else if (last)
		op += 2 + imm;
	else if (!first)
		op += 1;
	op |= tp;
	return softhca_roce_op_valid(op) ? op : -EOPNOTSUPP;
}

/* Packets of a @len-byte message at a path MTU of @mtu (0 bytes: 1). */
u32 softhca_seq_npkts(u64 len, u32 mtu)
{
	return len ? DIV_ROUND_UP_ULL(len, mtu) : 1;
}

/*
 * The requester's chunk on the wire (the part of a message one step
 * sends): @pkts path-MTU packets, clamped to 1..SOFTHCA_SEQ_CHUNK_PKTS,
 * so that every packet but a message's last is a full MTU however the
 * message is cut into chunks.  @mtu: a connected QP's path MTU, never 0.
 */
u32 softhca_seq_chunk(u32 pkts, u32 mtu)
{
	return clamp_t(u32, pkts, 1, SOFTHCA_SEQ_CHUNK_PKTS) * mtu;
}

/* Payload a packet may carry: FIRST and MIDDLE exactly one MTU. */
bool softhca_seq_paylen_ok(u32 mask, u32 paylen, u32 mtu)
{
	if (!(mask & SOFTHCA_H_LAST))
		return paylen == mtu;
	return paylen <= mtu;
}

/* Expect @psn next, with no message in progress (RTR, RESET). */
void softhca_seq_rx_reset(struct softhca_seq_rx *s, u32 psn)
{
	s->epsn = psn & SOFTHCA_PSN_MASK;
	s->cur = 0;
	s->drop = false;
}

/**
 * softhca_seq_rx_step - what a UC receiver does with one packet
 * @s: the QP's receive state, updated
 * @mask: the packet's opcode mask (softhca_roce_ops[])
 * @psn: its PSN
 * @paylen: its payload bytes
 * @mtu: the path MTU in bytes
 *
 * A FIRST or ONLY packet always starts a new message at its own PSN,
 * abandoning one in progress (its tail was lost).  Any other packet must
 * carry the expected PSN and continue the message in progress with the
 * same operation; otherwise it and the rest of its message are dropped.
 * A packet whose payload the MTU rules refuse ends its message too.
 */
enum softhca_seq_verdict softhca_seq_rx_step(struct softhca_seq_rx *s,
					     u32 mask, u32 psn, u32 paylen,
					     u32 mtu)
{
	u32 kind = mask & (SOFTHCA_H_SEND | SOFTHCA_H_WRITE);
	enum softhca_seq_verdict v = SOFTHCA_SEQ_TAKE;

	psn &= SOFTHCA_PSN_MASK;
	if (mask & SOFTHCA_H_FIRST) {
		/* A jump not already seen (as a GAP) lost what it skipped. */
		if (psn != s->epsn && !s->drop)
			v = SOFTHCA_SEQ_RESYNC;
	} else if (s->drop) {
		return SOFTHCA_SEQ_DROP;
	} else if (psn != s->epsn) {
		s->drop = true;
		s->cur = 0;
		return SOFTHCA_SEQ_GAP;
	} else if (!s->cur || s->cur != kind) {
		s->drop = true;
		s->cur = 0;
		return SOFTHCA_SEQ_DROP;
	}
	if (!kind || !softhca_seq_paylen_ok(mask, paylen, mtu)) {
		/* The PSN is used up; the message is not. */
		s->epsn = softhca_psn_add(psn, 1);
		s->drop = !(mask & SOFTHCA_H_LAST);
		s->cur = 0;
		return SOFTHCA_SEQ_BAD_LEN;
	}
	s->epsn = softhca_psn_add(psn, 1);
	s->drop = false;
	s->cur = (mask & SOFTHCA_H_LAST) ? 0 : kind;
	return v;
}

/*
 * The UDP source port of a connection: 0xC000 plus a hash of the two QP
 * numbers, symmetric, so that ECMP spreads QP pairs and both directions
 * of one take the same path (receivers ignore it).
 */
__be16 softhca_seq_sport(u32 a, u32 b)
{
	u32 h = a ^ b;

	h ^= h >> 14;
	return htons(0xc000 | (h & 0x3fff));
}
