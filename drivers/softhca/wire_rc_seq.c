// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the sequencing rules of RC on the wire (see wire_seq.h).
 *
 * Responder.  An RC receiver takes packets strictly in PSN order (IBA
 * 9.7.5): the expected PSN is delivered when its opcode continues the
 * message in progress; a PSN behind it is a duplicate of what was
 * already taken (the requester went back after a lost ACK) and is
 * ACKed again, not delivered; a PSN ahead means packets were lost: one
 * PSN sequence NAK names the expected PSN, then later packets are
 * dropped silently until it arrives (rxe does the same, and a NAK per
 * packet would make the requester go back once per packet).  After an
 * RNR NAK the expected PSN stays where it is and the rest of the
 * requester's burst is dropped the same way.
 *
 * Requester.  It has one chunk in flight, PSNs [first, next); an ACK
 * or NAK whose PSN is outside that range is stale (an answer to an
 * earlier transmission) and ignored.  An ACK finishes the chunk only
 * when it covers its last PSN: rxe ACKs duplicates with its last
 * in-order PSN, which may be inside the chunk; such an ACK, and a NAK's
 * PSN, still tell how much of the chunk arrived (softhca_rc_acked()).
 *
 * RDMA READ.  A READ REQUEST is one packet that uses as many PSNs as its
 * response has packets (softhca_rc_read_span()): the responder moves its
 * expected PSN past all of them at once and answers with READ RESPONSE
 * FIRST, MIDDLE..., LAST (or ONLY) packets carrying those PSNs
 * (softhca_rc_read_op()).  A READ REQUEST behind the expected PSN is a
 * duplicate the requester sent again: the responder reads again from
 * the PSN it names without moving the expected PSN (the IBA allows
 * reading twice).  The requester takes the responses in PSN order
 * (softhca_rc_read_resp()); one ahead of the one expected is held until
 * those before it come (a response was lost, or the wire reordered
 * them).  When the last has come and some before it have not, the READ
 * goes again for the rest of the chunk, from the PSN of the first
 * response missing, and the responses held fill in whatever its answer
 * loses again (wire_read.c).  The answer to such a resumed
 * READ continues the original one: MIDDLE..., LAST, never FIRST (the
 * IBA's rule, and rxe's answer: a requester that took only FIRST there
 * ended every such READ in RETRY_EXC_ERR).  So the responder keeps each
 * READ's PSN range (softhca_rc_rd_save()) to tell a duplicate from the
 * middle of one (softhca_rc_rd_mid()) from a READ sent again whole.
 *
 * Atomics.  COMPARE_SWAP and FETCH_ADD are one packet and one PSN,
 * between messages, without payload.  Unlike a READ, a duplicate must
 * not be carried out again (the IBA's duplicate request rules): the
 * responder keeps the original values of its last max_dest_rd_atomic
 * atomics by PSN (struct softhca_rc_atm) and answers a duplicate from
 * there; one whose record was overwritten is dropped (the requester
 * cannot still be waiting for it: it never has more atomics outstanding
 * than that).
 */
#include <linux/kernel.h>

#include "roce_hdr.h"
#include "wire_seq.h"

/* Expect @psn next, nothing in progress (RTR, RESET). */
void softhca_rc_rx_reset(struct softhca_rc_rx *s, u32 psn)
{
	s->epsn = psn & SOFTHCA_PSN_MASK;
	s->msn = 0;
	s->cur = 0;
	s->nak_sent = false;
}

/**
 * softhca_rc_rx_step - what an RC responder does with one packet
 * @s: the QP's receive state (only @s->nak_sent changes here: the
 *	expected PSN moves once the responder took the packet,
 *	softhca_rc_rx_taken())
 * @mask: the packet's opcode mask (softhca_roce_ops[])
 * @psn: its PSN
 * @paylen: its payload bytes
 * @mtu: the path MTU in bytes
 */
enum softhca_rc_verdict softhca_rc_rx_step(struct softhca_rc_rx *s, u32 mask,
					   u32 psn, u32 paylen, u32 mtu)
{
	u32 kind = mask & (SOFTHCA_H_SEND | SOFTHCA_H_WRITE);

	psn &= SOFTHCA_PSN_MASK;
	if (psn != s->epsn) {
		if (softhca_psn_before(psn, s->epsn))
			return SOFTHCA_RC_DUP;
		if (s->nak_sent)
			return SOFTHCA_RC_DROP;
		s->nak_sent = true;
		s->nak_seq = true;
		s->nak_asked = false;
		return SOFTHCA_RC_NAK_SEQ;
	}
	if ((mask & (SOFTHCA_H_READ | SOFTHCA_H_REQ)) ==
	    (SOFTHCA_H_READ | SOFTHCA_H_REQ))
		/* Between messages only, and it carries no payload. */
		return s->cur || paylen ? SOFTHCA_RC_INVALID : SOFTHCA_RC_READ;
	if ((mask & (SOFTHCA_H_ATOMIC | SOFTHCA_H_REQ)) ==
	    (SOFTHCA_H_ATOMIC | SOFTHCA_H_REQ))
		return s->cur || paylen ? SOFTHCA_RC_INVALID :
					  SOFTHCA_RC_ATOMIC;
	if (!kind || !(mask & SOFTHCA_H_REQ))
		return SOFTHCA_RC_INVALID;
	if (mask & SOFTHCA_H_FIRST) {
		if (s->cur)
			return SOFTHCA_RC_INVALID;
	} else if (s->cur != kind) {
		return SOFTHCA_RC_INVALID;
	}
	if (!softhca_seq_paylen_ok(mask, paylen, mtu))
		return SOFTHCA_RC_INVALID;
	return SOFTHCA_RC_TAKE;
}

/* The responder took the expected packet (of opcode mask @mask). */
void softhca_rc_rx_taken(struct softhca_rc_rx *s, u32 mask)
{
	u32 kind = mask & (SOFTHCA_H_SEND | SOFTHCA_H_WRITE);

	s->epsn = softhca_psn_add(s->epsn, 1);
	s->nak_sent = false;
	if (mask & SOFTHCA_H_LAST) {
		s->cur = 0;
		s->msn = softhca_psn_add(s->msn, 1);
	} else {
		s->cur = kind;
	}
}

/* The responder took a READ REQUEST of @npkts response packets. */
void softhca_rc_rx_read(struct softhca_rc_rx *s, u32 npkts)
{
	s->epsn = softhca_psn_add(s->epsn, npkts);
	s->nak_sent = false;
	s->msn = softhca_psn_add(s->msn, 1);
}

/**
 * softhca_rc_read_span - the PSNs a READ of @len bytes uses
 * @len: the bytes its RETH asks for
 * @mtu: the path MTU in bytes
 *
 * One per response packet, at least one (a zero-length READ is answered
 * by a READ RESPONSE ONLY without payload).  Return: 0 for a READ whose
 * PSNs would not fit a quarter of the PSN space: its PSNs could not be
 * told from those before it (the responder refuses it).
 */
u32 softhca_rc_read_span(u32 len, u32 mtu)
{
	u32 n;

	if (!mtu)
		return 0;
	n = softhca_seq_npkts(len, mtu);
	return n < (SOFTHCA_PSN_MASK + 1) / 4 ? n : 0;
}

/*
 * The opcode of READ RESPONSE packet @i (from 0) of @n; @mid: they
 * answer a READ resumed from the middle of an earlier one, whose
 * responses they continue (no FIRST, no ONLY).
 */
u8 softhca_rc_read_op(u32 i, u32 n, bool mid)
{
	bool last = i + 1 >= n;

	if (!i && !mid)
		return last ? SOFTHCA_RC(RDMA_READ_RESPONSE_ONLY) :
			      SOFTHCA_RC(RDMA_READ_RESPONSE_FIRST);
	return last ? SOFTHCA_RC(RDMA_READ_RESPONSE_LAST) :
		      SOFTHCA_RC(RDMA_READ_RESPONSE_MIDDLE);
}

/**
 * softhca_rc_read_resp - what the requester does with a READ RESPONSE
 * @first: the PSN of the READ in flight
 * @next: the PSN after its last response
 * @expect: the PSN of the response expected next, in [@first, @next)
 *	(@first: none taken yet)
 * @psn: the packet's PSN
 * @opcode: its BTH opcode
 * @paylen: its payload bytes
 * @len: the bytes the READ asked for
 * @mtu: the path MTU in bytes
 * @mid: the READ resumes an earlier one from its middle
 *
 * Every response but the last carries one MTU, the last the rest, with
 * the opcode its place calls for.  The first answer to a resumed READ
 * should be MIDDLE (or LAST); FIRST (or ONLY) is taken as well: the
 * payload is checked the same, and a responder that keeps no record of
 * the READ it resumes can only begin it again.  A response ahead of the
 * one expected may come from an earlier transmission of the READ as
 * well as from this one, which begin at different PSNs: its opcode is
 * checked against both shapes (FIRST or MIDDLE before the last, LAST or
 * ONLY at it), its payload length exactly.
 */
enum softhca_rc_rd_verdict softhca_rc_read_resp(u32 first, u32 next,
						u32 expect, u32 psn, u8 opcode,
						u32 paylen, u32 len, u32 mtu,
						bool mid)
{
	u32 n = softhca_psn_sub(next, first);
	u32 i = softhca_psn_sub(psn, first);
	u32 e = softhca_psn_sub(expect, first);
	u64 want;

	if (!softhca_psn_in(first, next, psn) || i < e)
		return SOFTHCA_RC_RD_STALE;
	if (i > e) {
		/* i > 0: FIRST or ONLY only from a transmission begun there. */
		if (opcode != softhca_rc_read_op(i, n, true) &&
		    opcode != softhca_rc_read_op(0, i + 1 == n ? 1 : 2, false))
			return SOFTHCA_RC_RD_BAD;
	} else if (opcode != softhca_rc_read_op(i, n, mid) &&
		   (!mid || i || opcode != softhca_rc_read_op(i, n, false))) {
		return SOFTHCA_RC_RD_BAD;
	}
	want = i == n - 1 ? (u64)len - (u64)i * mtu : mtu;
	if (paylen != want)
		return SOFTHCA_RC_RD_BAD;
	if (i > e)
		return SOFTHCA_RC_RD_AHEAD;
	return i == n - 1 ? SOFTHCA_RC_RD_DONE : SOFTHCA_RC_RD_TAKE;
}

/* Forget every saved atomic result (RESET, a new receive PSN). */
void softhca_rc_atm_clear(struct softhca_rc_atm *t)
{
	u32 i;

	for (i = 0; i < t->n; i++)
		t->rec[i].valid = false;
	t->next = 0;
}

/*
 * A record over the oldest one.  A table of none (max_dest_rd_atomic 0)
 * keeps nothing: such a responder refuses READs and atomics anyway.
 */
static void softhca_rc_rec_put(struct softhca_rc_atm *t, u32 psn, u32 span,
			       bool read, u64 orig)
{
	struct softhca_rc_atm_rec *r;

	if (!t->n)
		return;
	r = &t->rec[t->next];
	r->psn = psn & SOFTHCA_PSN_MASK;
	r->span = span;
	r->read = read;
	r->orig = orig;
	r->valid = true;
	t->next = t->next + 1 < t->n ? t->next + 1 : 0;
}

/* Save the original value of the atomic at @psn. */
void softhca_rc_atm_save(struct softhca_rc_atm *t, u32 psn, u64 orig)
{
	softhca_rc_rec_put(t, psn, 1, false, orig);
}

/* Keep the PSN range of the READ at @psn (@span PSNs). */
void softhca_rc_rd_save(struct softhca_rc_atm *t, u32 psn, u32 span)
{
	softhca_rc_rec_put(t, psn, span, true, 0);
}

/*
 * A duplicate READ at @psn resumes a kept READ from after its first PSN.
 * Return: false too when no READ kept covers @psn (it is then answered
 * as a READ of its own, from FIRST).
 */
bool softhca_rc_rd_mid(const struct softhca_rc_atm *t, u32 psn)
{
	u32 i, off;

	psn &= SOFTHCA_PSN_MASK;
	for (i = 0; i < t->n; i++) {
		if (!t->rec[i].valid || !t->rec[i].read)
			continue;
		off = softhca_psn_sub(psn, t->rec[i].psn);
		if (off && off < t->rec[i].span)
			return true;
	}
	return false;
}

/*
 * The saved original value of the atomic at @psn.  Return: false when
 * none is kept (never carried out here, or overwritten since).
 */
bool softhca_rc_atm_find(const struct softhca_rc_atm *t, u32 psn, u64 *orig)
{
	u32 i;

	psn &= SOFTHCA_PSN_MASK;
	for (i = 0; i < t->n; i++) {
		if (t->rec[i].valid && !t->rec[i].read &&
		    t->rec[i].psn == psn) {
			*orig = t->rec[i].orig;
			return true;
		}
	}
	return false;
}

/* The responder answered the expected packet with an RNR NAK. */
void softhca_rc_rx_rnr(struct softhca_rc_rx *s)
{
	s->nak_sent = true;
	s->nak_seq = false;
}

/**
 * softhca_rc_rx_ask_again - a packet dropped behind a sequence NAK asks
 *	for an answer (AckReq)
 * @s: the QP's receive state
 * @psn: the packet's PSN
 *
 * A requester that sends a packet again asking for an answer, while the
 * responder drops what is ahead of its gap, never got the NAK: the NAK
 * was lost, and the requester is probing (wire_tail.c sends the last
 * packet of a long range again).  Dropped silently, the probe would leave
 * the requester to its local ACK timeout (2.1 s under rdma_cm); so the
 * NAK goes again for a packet asking at a PSN that asked before since the
 * NAK.  A packet merely behind others (reordered) asks at a new PSN and
 * is dropped silently still, as IBA has it: one NAK per gap.
 *
 * Return: true when the sequence NAK is to be sent again.
 */
bool softhca_rc_rx_ask_again(struct softhca_rc_rx *s, u32 psn)
{
	psn &= SOFTHCA_PSN_MASK;
	if (!s->nak_sent || !s->nak_seq)
		return false;
	if (s->nak_asked && s->nak_ask == psn)
		return true;
	s->nak_asked = true;
	s->nak_ask = psn;
	return false;
}

/* Is @psn in [@first, @next), modulo 2^24? */
bool softhca_psn_in(u32 first, u32 next, u32 psn)
{
	return softhca_psn_sub(psn, first) < softhca_psn_sub(next, first);
}

/**
 * softhca_rc_acked - packets of the chunk in flight an answer shows taken
 * @first: the chunk's first PSN
 * @psn: the PSN the answer carries (inside the chunk)
 * @a: what the answer means (softhca_rc_answer())
 *
 * An ACK covers its PSN and everything before it; a sequence or RNR NAK
 * names the PSN the responder expects, so what is before it was taken.
 * The requester sends the rest only (go-back-N from there): on a lossy
 * path a long chunk would otherwise rarely get through whole.
 */
u32 softhca_rc_acked(u32 first, u32 psn, enum softhca_rc_answer a)
{
	u32 n = softhca_psn_sub(psn, first);

	switch (a) {
	case SOFTHCA_RC_ANS_PART:
		return n + 1;
	case SOFTHCA_RC_ANS_SEQ:
	case SOFTHCA_RC_ANS_RNR:
		return n;
	default:
		return 0;
	}
}

/**
 * softhca_rc_answer - what an ACK or NAK says about the chunk in flight
 * @first: the chunk's first PSN
 * @next: the PSN after its last
 * @psn: the PSN the answer carries
 * @syndrome: its AETH syndrome
 */
enum softhca_rc_answer softhca_rc_answer(u32 first, u32 next, u32 psn,
					 u8 syndrome)
{
	psn &= SOFTHCA_PSN_MASK;
	if (!softhca_psn_in(first, next, psn))
		return SOFTHCA_RC_ANS_STALE;
	switch (syndrome & SOFTHCA_AETH_TYPE_MASK) {
	case SOFTHCA_AETH_ACK:
		return psn == softhca_psn_add(next, SOFTHCA_PSN_MASK) ?
		       SOFTHCA_RC_ANS_ACK : SOFTHCA_RC_ANS_PART;
	case SOFTHCA_AETH_RNR_NAK:
		return SOFTHCA_RC_ANS_RNR;
	case SOFTHCA_AETH_NAK:
		break;
	default:
		return SOFTHCA_RC_ANS_STALE;	/* reserved */
	}
	switch (syndrome & SOFTHCA_AETH_VAL_MASK) {
	case SOFTHCA_NAK_PSN_SEQ:
		return SOFTHCA_RC_ANS_SEQ;
	case SOFTHCA_NAK_REM_ACCESS:
		return SOFTHCA_RC_ANS_ACCESS;
	case SOFTHCA_NAK_REM_OP:
		return SOFTHCA_RC_ANS_OP;
	default:
		return SOFTHCA_RC_ANS_INV;
	}
}
