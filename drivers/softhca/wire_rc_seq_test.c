// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the sequencing rules of RC on the wire (wire_rc_seq.c).
 *
 * The responder cases play the streams a go-back-N requester produces
 * (a chunk, a loss, the chunk again from its first PSN) through the
 * receive rules and check that each packet is taken exactly once, in
 * order, whatever was lost; the requester cases check which answers
 * finish, repeat or ignore the chunk in flight.  The XRC cases check
 * that XRC is RC under another prefix: its packets as the QP types
 * build them (XRCETH included), which QP takes which, and the same
 * sequencing.
 */
#include <kunit/test.h>

#include "roce_hdr.h"
#include "softhca.h"
#include "wire.h"
#include "wire_seq.h"

#define MTU 1024
#define M(op) softhca_roce_ops[SOFTHCA_RC(op)].mask
#define ACK (SOFTHCA_AETH_ACK | SOFTHCA_AETH_NO_CREDITS)
#define NAK(code) (SOFTHCA_AETH_NAK | (code))

/* Take a packet the way wire_rc_resp.c does when the responder ACKs. */
static enum softhca_rc_verdict step(struct softhca_rc_rx *s, u32 mask, u32 psn,
				    u32 len)
{
	enum softhca_rc_verdict v = softhca_rc_rx_step(s, mask, psn, len, MTU);

	if (v == SOFTHCA_RC_TAKE)
		softhca_rc_rx_taken(s, mask);
	return v;
}

static void in_order_and_msn(struct kunit *test)
{
	struct softhca_rc_rx s;

	softhca_rc_rx_reset(&s, 100);
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_FIRST), 100, MTU), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, s.cur, (u32)SOFTHCA_H_SEND);
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_MIDDLE), 101, MTU), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, s.msn, 0U);
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_LAST_WITH_IMMEDIATE), 102, 1),
			SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, s.msn, 1U);
	KUNIT_EXPECT_EQ(test, step(&s, M(RDMA_WRITE_ONLY), 103, 0),
			SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, s.msn, 2U);
	KUNIT_EXPECT_EQ(test, s.epsn, 104U);
	KUNIT_EXPECT_EQ(test, s.cur, 0U);
}

/* A lost packet: one NAK, silence, then the go-back-N stream again. */
static void gap_naks_once_then_duplicates(struct kunit *test)
{
	struct softhca_rc_rx s;
	u32 psn, taken = 0;

	softhca_rc_rx_reset(&s, 0);
	/* A chunk of 8 packets, 0..7; packet 3 is lost. */
	for (psn = 0; psn < 8; psn++) {
		u32 mask = psn == 0 ? M(RDMA_WRITE_FIRST) :
			   psn == 7 ? M(RDMA_WRITE_LAST) : M(RDMA_WRITE_MIDDLE);
		enum softhca_rc_verdict v;

		if (psn == 3)
			continue;
		v = step(&s, mask, psn, psn == 7 ? 10 : MTU);
		if (psn < 3)
			KUNIT_EXPECT_EQ(test, v, SOFTHCA_RC_TAKE);
		else if (psn == 4)
			KUNIT_EXPECT_EQ(test, v, SOFTHCA_RC_NAK_SEQ);
		else
			KUNIT_EXPECT_EQ(test, v, SOFTHCA_RC_DROP);
		taken += v == SOFTHCA_RC_TAKE;
	}
	KUNIT_EXPECT_EQ(test, s.epsn, 3U);
	/* The requester goes back to the chunk's start. */
	for (psn = 0; psn < 8; psn++) {
		u32 mask = psn == 0 ? M(RDMA_WRITE_FIRST) :
			   psn == 7 ? M(RDMA_WRITE_LAST) : M(RDMA_WRITE_MIDDLE);
		enum softhca_rc_verdict v = step(&s, mask, psn,
						 psn == 7 ? 10 : MTU);

		KUNIT_EXPECT_EQ(test, v, psn < 3 ? SOFTHCA_RC_DUP :
					 SOFTHCA_RC_TAKE);
		taken += v == SOFTHCA_RC_TAKE;
	}
	KUNIT_EXPECT_EQ(test, taken, 8U);
	KUNIT_EXPECT_EQ(test, s.msn, 1U);
	KUNIT_EXPECT_FALSE(test, s.nak_sent);
	/* The whole chunk again (its ACK was lost): all duplicates. */
	KUNIT_EXPECT_EQ(test, step(&s, M(RDMA_WRITE_LAST), 7, 10),
			SOFTHCA_RC_DUP);
	/* A new gap NAKs again. */
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_ONLY), 9, 1), SOFTHCA_RC_NAK_SEQ);
	/*
	 * Behind it, packets asking for an answer are dropped silently,
	 * each at a new PSN (reordered); one that asks again at a PSN that
	 * asked before is a probe: the NAK was lost, it goes again.
	 */
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_ONLY), 10, 1), SOFTHCA_RC_DROP);
	KUNIT_EXPECT_FALSE(test, softhca_rc_rx_ask_again(&s, 10));
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_ONLY), 12, 1), SOFTHCA_RC_DROP);
	KUNIT_EXPECT_FALSE(test, softhca_rc_rx_ask_again(&s, 12));
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_ONLY), 12, 1), SOFTHCA_RC_DROP);
	KUNIT_EXPECT_TRUE(test, softhca_rc_rx_ask_again(&s, 12));
	KUNIT_EXPECT_TRUE(test, softhca_rc_rx_ask_again(&s, 12));
	/* The expected PSN taken: nothing is NAKed again. */
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_ONLY), 8, 1), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_FALSE(test, softhca_rc_rx_ask_again(&s, 12));
	/* Behind an RNR NAK, never (the requester waits its timer). */
	softhca_rc_rx_rnr(&s);
	KUNIT_EXPECT_FALSE(test, softhca_rc_rx_ask_again(&s, 12));
	KUNIT_EXPECT_FALSE(test, softhca_rc_rx_ask_again(&s, 12));
}

static void rnr_keeps_psn(struct kunit *test)
{
	struct softhca_rc_rx s;

	softhca_rc_rx_reset(&s, 5);
	KUNIT_EXPECT_EQ(test, softhca_rc_rx_step(&s, M(SEND_FIRST), 5, MTU, MTU),
			SOFTHCA_RC_TAKE);
	softhca_rc_rx_rnr(&s);		/* no receive WQE */
	/* The rest of the burst: dropped without a NAK of its own. */
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_LAST), 6, 4), SOFTHCA_RC_DROP);
	KUNIT_EXPECT_EQ(test, s.epsn, 5U);
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_FIRST), 5, MTU), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_LAST), 6, 4), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, s.msn, 1U);
}

static void invalid_requests(struct kunit *test)
{
	struct softhca_rc_rx s;

	softhca_rc_rx_reset(&s, 0);
	/* A MIDDLE with no message in progress. */
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_MIDDLE), 0, MTU),
			SOFTHCA_RC_INVALID);
	/* A FIRST shorter than the MTU, a LAST longer. */
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_FIRST), 0, 8), SOFTHCA_RC_INVALID);
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_ONLY), 0, MTU + 4),
			SOFTHCA_RC_INVALID);
	/* A WRITE packet inside a SEND, a FIRST inside a message. */
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_FIRST), 0, MTU), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, step(&s, M(RDMA_WRITE_MIDDLE), 1, MTU),
			SOFTHCA_RC_INVALID);
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_FIRST), 1, MTU),
			SOFTHCA_RC_INVALID);
	/* A READ inside a SEND, and responses are no requests. */
	KUNIT_EXPECT_EQ(test, step(&s, M(RDMA_READ_REQUEST), 1, 0),
			SOFTHCA_RC_INVALID);
	KUNIT_EXPECT_EQ(test, step(&s, M(ACKNOWLEDGE), 1, 0),
			SOFTHCA_RC_INVALID);
	KUNIT_EXPECT_EQ(test, s.epsn, 1U);
}

/* An atomic request: between messages, no payload, one PSN. */
static void atomic_request(struct kunit *test)
{
	struct softhca_rc_rx s;

	softhca_rc_rx_reset(&s, 7);
	KUNIT_EXPECT_EQ(test, step(&s, M(COMPARE_SWAP), 7, 0),
			SOFTHCA_RC_ATOMIC);
	KUNIT_EXPECT_EQ(test, step(&s, M(FETCH_ADD), 7, 0), SOFTHCA_RC_ATOMIC);
	KUNIT_EXPECT_EQ(test, step(&s, M(FETCH_ADD), 7, 4), SOFTHCA_RC_INVALID);
	/* Carried out: one PSN, one message. */
	softhca_rc_rx_read(&s, 1);
	KUNIT_EXPECT_EQ(test, s.epsn, 8U);
	KUNIT_EXPECT_EQ(test, s.msn, 1U);
	KUNIT_EXPECT_EQ(test, step(&s, M(FETCH_ADD), 7, 0), SOFTHCA_RC_DUP);
	/* Inside a SEND; and an ATOMIC ACKNOWLEDGE is no request. */
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_FIRST), 8, MTU), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, step(&s, M(COMPARE_SWAP), 9, 0),
			SOFTHCA_RC_INVALID);
	KUNIT_EXPECT_EQ(test, step(&s, M(ATOMIC_ACKNOWLEDGE), 9, 0),
			SOFTHCA_RC_INVALID);
	/* The requester: the ATOMIC ACKNOWLEDGE of its one PSN ends it. */
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(9, 10, 9, ACK),
			SOFTHCA_RC_ANS_ACK);
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(9, 10, 8, ACK),
			SOFTHCA_RC_ANS_STALE);
}

/* The saved results: the last n by PSN, the oldest overwritten. */
static void atomic_records(struct kunit *test)
{
	struct softhca_rc_atm_rec rec[3];
	struct softhca_rc_atm t = { .rec = rec, .n = 3 };
	u64 v;

	softhca_rc_atm_clear(&t);
	KUNIT_EXPECT_FALSE(test, softhca_rc_atm_find(&t, 0, &v));
	softhca_rc_atm_save(&t, 0xfffffe, 100);
	softhca_rc_atm_save(&t, 0xffffff, 101);
	softhca_rc_atm_save(&t, 0x1000000, 102);	/* PSN 0 */
	KUNIT_EXPECT_TRUE(test, softhca_rc_atm_find(&t, 0, &v));
	KUNIT_EXPECT_EQ(test, v, 102ULL);
	KUNIT_EXPECT_TRUE(test, softhca_rc_atm_find(&t, 0xfffffe, &v));
	KUNIT_EXPECT_EQ(test, v, 100ULL);
	/* A fourth overwrites the first. */
	softhca_rc_atm_save(&t, 1, 103);
	KUNIT_EXPECT_FALSE(test, softhca_rc_atm_find(&t, 0xfffffe, &v));
	KUNIT_EXPECT_TRUE(test, softhca_rc_atm_find(&t, 0xffffff, &v));
	KUNIT_EXPECT_EQ(test, v, 101ULL);
	KUNIT_EXPECT_TRUE(test, softhca_rc_atm_find(&t, 1, &v));
	KUNIT_EXPECT_EQ(test, v, 103ULL);
	/* RESET forgets them all. */
	softhca_rc_atm_clear(&t);
	KUNIT_EXPECT_FALSE(test, softhca_rc_atm_find(&t, 1, &v));
	/* No records (max_dest_rd_atomic 0): nothing is kept. */
	t.n = 0;
	softhca_rc_atm_save(&t, 5, 1);
	KUNIT_EXPECT_FALSE(test, softhca_rc_atm_find(&t, 5, &v));
}

/*
 * FETCH_ADDs over a path that loses answers: the requester sends each
 * again with its PSN until answered; the responder, as wire_rc_resp.c
 * does, carries out an expected one and answers a duplicate from its
 * records.  Every answer must carry the sum before its add, and the sum
 * must come out exactly once per add, whatever was lost.
 */
static void atomic_replay(struct kunit *test)
{
	struct softhca_rc_atm_rec rec[1];
	struct softhca_rc_atm t = { .rec = rec, .n = 1 };
	struct softhca_rc_rx s;
	u64 mem = 1000, want = 1000, orig;
	u32 psn = 0xfffff0, i, tries, lost = 0, dups = 0;
	bool answered;

	softhca_rc_rx_reset(&s, psn);
	softhca_rc_atm_clear(&t);
	for (i = 1; i <= 40; i++, psn = softhca_psn_add(psn, 1)) {
		for (answered = false, tries = 0; !answered; tries++) {
			KUNIT_ASSERT_LT(test, tries, 10U);
			switch (softhca_rc_rx_step(&s, M(FETCH_ADD), psn, 0,
						   MTU)) {
			case SOFTHCA_RC_ATOMIC:
				orig = mem;
				mem += i;
				softhca_rc_rx_read(&s, 1);
				softhca_rc_atm_save(&t, psn, orig);
				break;
			case SOFTHCA_RC_DUP:
				KUNIT_ASSERT_TRUE(test,
						  softhca_rc_atm_find(&t, psn,
								      &orig));
				dups++;
				break;
			default:
				KUNIT_FAIL(test, "PSN %u not taken", psn);
				return;
			}
			/* Every third answer of a pattern is lost. */
			answered = (i + tries) % 3 != 0;
			lost += !answered;
		}
		KUNIT_EXPECT_EQ(test, orig, want);
		want += i;
	}
	KUNIT_EXPECT_EQ(test, mem, 1000ULL + 40 * 41 / 2);
	KUNIT_EXPECT_EQ(test, mem, want);
	KUNIT_EXPECT_EQ(test, dups, lost);
	KUNIT_EXPECT_GT(test, lost, 0U);
}

static void psn_wraps(struct kunit *test)
{
	struct softhca_rc_rx s;

	softhca_rc_rx_reset(&s, 0xffffff);
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_FIRST), 0xffffff, MTU),
			SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, s.epsn, 0U);
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_LAST), 0xffffff, 3),
			SOFTHCA_RC_DUP);
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_LAST), 0, 3), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_TRUE(test, softhca_psn_in(0xfffffe, 2, 0xffffff));
	KUNIT_EXPECT_TRUE(test, softhca_psn_in(0xfffffe, 2, 1));
	KUNIT_EXPECT_FALSE(test, softhca_psn_in(0xfffffe, 2, 2));
	KUNIT_EXPECT_FALSE(test, softhca_psn_in(0xfffffe, 2, 0xfffffd));
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(0xfffffe, 2, 1, ACK),
			SOFTHCA_RC_ANS_ACK);
}

static void answers(struct kunit *test)
{
	/* In flight: PSNs 10..13. */
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 13, ACK),
			SOFTHCA_RC_ANS_ACK);
	/* rxe ACKs a duplicate with its last in-order PSN: part only. */
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 11, ACK),
			SOFTHCA_RC_ANS_PART);
	/* An ACK of an earlier chunk, or of one not sent yet. */
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 9, ACK),
			SOFTHCA_RC_ANS_STALE);
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 14, ACK),
			SOFTHCA_RC_ANS_STALE);
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 10,
						SOFTHCA_AETH_RNR_NAK | 12),
			SOFTHCA_RC_ANS_RNR);
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 12,
						NAK(SOFTHCA_NAK_PSN_SEQ)),
			SOFTHCA_RC_ANS_SEQ);
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 12,
						NAK(SOFTHCA_NAK_INVALID)),
			SOFTHCA_RC_ANS_INV);
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 10,
						NAK(SOFTHCA_NAK_REM_ACCESS)),
			SOFTHCA_RC_ANS_ACCESS);
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 10,
						NAK(SOFTHCA_NAK_REM_OP)),
			SOFTHCA_RC_ANS_OP);
	/* A NAK outside the range is stale too; a reserved type is. */
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 20,
						NAK(SOFTHCA_NAK_PSN_SEQ)),
			SOFTHCA_RC_ANS_STALE);
	KUNIT_EXPECT_EQ(test, softhca_rc_answer(10, 14, 13, 0x40),
			SOFTHCA_RC_ANS_STALE);
}

/* How much of the chunk in flight (PSNs 10..13) an answer shows taken. */
static void progress(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softhca_rc_acked(10, 11, SOFTHCA_RC_ANS_PART), 2U);
	KUNIT_EXPECT_EQ(test, softhca_rc_acked(10, 12, SOFTHCA_RC_ANS_SEQ), 2U);
	/* A NAK of the first packet: nothing taken. */
	KUNIT_EXPECT_EQ(test, softhca_rc_acked(10, 10, SOFTHCA_RC_ANS_SEQ), 0U);
	KUNIT_EXPECT_EQ(test, softhca_rc_acked(10, 13, SOFTHCA_RC_ANS_RNR), 3U);
	KUNIT_EXPECT_EQ(test, softhca_rc_acked(10, 12, SOFTHCA_RC_ANS_STALE), 0U);
	KUNIT_EXPECT_EQ(test, softhca_rc_acked(10, 12, SOFTHCA_RC_ANS_INV), 0U);
	KUNIT_EXPECT_EQ(test, softhca_rc_acked(0xfffffe, 1,
					       SOFTHCA_RC_ANS_SEQ), 3U);
}

/* The PSNs a READ uses: one per response packet, at least one. */
static void read_span(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softhca_rc_read_span(0, MTU), 1U);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_span(1, MTU), 1U);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_span(MTU, MTU), 1U);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_span(MTU + 1, MTU), 2U);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_span(1 << 20, MTU), 1024U);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_span(1 << 20, 256), 4096U);
	/* 2 GiB at 256 B: 2^23 PSNs, half the space: refused. */
	KUNIT_EXPECT_EQ(test, softhca_rc_read_span(1U << 31, 256), 0U);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_span(100, 0), 0U);
}

/* The responder: a READ between messages moves the PSN by its span. */
static void read_request(struct kunit *test)
{
	struct softhca_rc_rx s;

	softhca_rc_rx_reset(&s, 0xfffffe);
	KUNIT_EXPECT_EQ(test, softhca_rc_rx_step(&s, M(RDMA_READ_REQUEST),
						 0xfffffe, 0, MTU),
			SOFTHCA_RC_READ);
	softhca_rc_rx_read(&s, 3);
	KUNIT_EXPECT_EQ(test, s.epsn, 1U);
	KUNIT_EXPECT_EQ(test, s.msn, 1U);
	/* Again from its middle (a requester that lost a response). */
	KUNIT_EXPECT_EQ(test, softhca_rc_rx_step(&s, M(RDMA_READ_REQUEST),
						 0xffffff, 0, MTU),
			SOFTHCA_RC_DUP);
	KUNIT_EXPECT_EQ(test, s.epsn, 1U);
	/* Inside a SEND, or with a payload: invalid. */
	KUNIT_EXPECT_EQ(test, step(&s, M(SEND_FIRST), 1, MTU), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, softhca_rc_rx_step(&s, M(RDMA_READ_REQUEST), 2,
						 0, MTU),
			SOFTHCA_RC_INVALID);
	softhca_rc_rx_reset(&s, 5);
	KUNIT_EXPECT_EQ(test, softhca_rc_rx_step(&s, M(RDMA_READ_REQUEST), 5,
						 4, MTU),
			SOFTHCA_RC_INVALID);
}

/* The response opcodes: ONLY, or FIRST, MIDDLE..., LAST. */
static void read_opcodes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softhca_rc_read_op(0, 1, false),
			SOFTHCA_RC(RDMA_READ_RESPONSE_ONLY));
	KUNIT_EXPECT_EQ(test, softhca_rc_read_op(0, 2, false),
			SOFTHCA_RC(RDMA_READ_RESPONSE_FIRST));
	KUNIT_EXPECT_EQ(test, softhca_rc_read_op(1, 2, false),
			SOFTHCA_RC(RDMA_READ_RESPONSE_LAST));
	KUNIT_EXPECT_EQ(test, softhca_rc_read_op(1, 3, false),
			SOFTHCA_RC(RDMA_READ_RESPONSE_MIDDLE));
	/* Resuming a READ: its answer continues with MIDDLE..., LAST. */
	KUNIT_EXPECT_EQ(test, softhca_rc_read_op(0, 1, true),
			SOFTHCA_RC(RDMA_READ_RESPONSE_LAST));
	KUNIT_EXPECT_EQ(test, softhca_rc_read_op(0, 3, true),
			SOFTHCA_RC(RDMA_READ_RESPONSE_MIDDLE));
	KUNIT_EXPECT_EQ(test, softhca_rc_read_op(2, 3, true),
			SOFTHCA_RC(RDMA_READ_RESPONSE_LAST));
	KUNIT_EXPECT_TRUE(test, M(RDMA_READ_RESPONSE_FIRST) & SOFTHCA_H_AETH);
	KUNIT_EXPECT_FALSE(test, M(RDMA_READ_RESPONSE_MIDDLE) & SOFTHCA_H_AETH);
	KUNIT_EXPECT_TRUE(test, M(RDMA_READ_RESPONSE_LAST) & SOFTHCA_H_AETH);
	KUNIT_EXPECT_TRUE(test, M(RDMA_READ_RESPONSE_ONLY) & SOFTHCA_H_AETH);
}

/* The requester: a READ of 2.5 MTU at PSNs 0xfffffe..0 (wrapping). */
static void read_responses(struct kunit *test)
{
	u32 len = 2 * MTU + MTU / 2, f = 0xfffffe, n = 1;
	u8 first = SOFTHCA_RC(RDMA_READ_RESPONSE_FIRST);
	u8 mid = SOFTHCA_RC(RDMA_READ_RESPONSE_MIDDLE);
	u8 last = SOFTHCA_RC(RDMA_READ_RESPONSE_LAST);

	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, f, first, MTU,
						   len, MTU, false),
			SOFTHCA_RC_RD_TAKE);
	/* Behind what is expected, or outside the READ: stale. */
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, 0xffffff, f, first,
						   MTU, len, MTU, false),
			SOFTHCA_RC_RD_STALE);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, 1, mid, MTU,
						   len, MTU, false),
			SOFTHCA_RC_RD_STALE);
	/* Ahead of the one expected (lost or late): held. */
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, 0xffffff, 0, last,
						   MTU / 2, len, MTU, false),
			SOFTHCA_RC_RD_AHEAD);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, 0, last, MTU / 2,
						   len, MTU, false),
			SOFTHCA_RC_RD_AHEAD);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, 0xffffff, mid, MTU,
						   len, MTU, false),
			SOFTHCA_RC_RD_AHEAD);
	/*
	 * From a transmission begun at its PSN (a READ sent again whole by
	 * a responder that kept no record): FIRST, or ONLY at the last.
	 */
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, 0xffffff, first,
						   MTU, len, MTU, false),
			SOFTHCA_RC_RD_AHEAD);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, 0,
						   SOFTHCA_RC(RDMA_READ_RESPONSE_ONLY),
						   MTU / 2, len, MTU, false),
			SOFTHCA_RC_RD_AHEAD);
	/* Ahead, but misshapen for its place: LAST or MIDDLE, length. */
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, 0xffffff, last,
						   MTU, len, MTU, false),
			SOFTHCA_RC_RD_BAD);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, 0, mid, MTU / 2,
						   len, MTU, false),
			SOFTHCA_RC_RD_BAD);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, 0, last, MTU,
						   len, MTU, false),
			SOFTHCA_RC_RD_BAD);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, 0xffffff, mid,
						   MTU - 1, len, MTU, false),
			SOFTHCA_RC_RD_BAD);
	/* Wrong opcode, or wrong length for its place. */
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, 0xffffff, 0xffffff,
						   last, MTU, len, MTU, false),
			SOFTHCA_RC_RD_BAD);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, 0xffffff, 0xffffff,
						   mid, MTU - 4, len, MTU, false),
			SOFTHCA_RC_RD_BAD);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, 0, 0, last, MTU,
						   len, MTU, false),
			SOFTHCA_RC_RD_BAD);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, 0, 0, last, MTU / 2,
						   len, MTU, false),
			SOFTHCA_RC_RD_DONE);
	/* A zero-length READ: one ONLY without payload. */
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(7, 8, 7, 7,
						   softhca_rc_read_op(0, 1, false),
						   0, 0, MTU, false),
			SOFTHCA_RC_RD_DONE);
}

/*
 * The requester resumes a READ of 2.5 MTU at PSNs 0xfffffe..0 from 0xffffff
 * (the first response taken, the second lost): the answer should be
 * MIDDLE, LAST; FIRST, LAST is taken too, MIDDLE for a READ not resumed
 * is not.
 */
static void read_resumed(struct kunit *test)
{
	u32 len = MTU + MTU / 2, f = 0xffffff, n = 1;
	u8 first = SOFTHCA_RC(RDMA_READ_RESPONSE_FIRST);
	u8 mid = SOFTHCA_RC(RDMA_READ_RESPONSE_MIDDLE);
	u8 last = SOFTHCA_RC(RDMA_READ_RESPONSE_LAST);
	u8 only = SOFTHCA_RC(RDMA_READ_RESPONSE_ONLY);

	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, f, mid, MTU,
						   len, MTU, true),
			SOFTHCA_RC_RD_TAKE);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, f, first, MTU,
						   len, MTU, true),
			SOFTHCA_RC_RD_TAKE);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, f, f, mid, MTU,
						   len, MTU, false),
			SOFTHCA_RC_RD_BAD);
	/* Only the first response may be either. */
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, 0, 0, last, MTU / 2,
						   len, MTU, true),
			SOFTHCA_RC_RD_DONE);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(f, n, 0, 0, mid, MTU / 2,
						   len, MTU, true),
			SOFTHCA_RC_RD_BAD);
	/* The last packet alone: LAST (or ONLY). */
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(0, 1, 0, 0, last, MTU / 2,
						   MTU / 2, MTU, true),
			SOFTHCA_RC_RD_DONE);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(0, 1, 0, 0, only, MTU / 2,
						   MTU / 2, MTU, true),
			SOFTHCA_RC_RD_DONE);
	KUNIT_EXPECT_EQ(test, softhca_rc_read_resp(0, 1, 0, 0, last, MTU / 2,
						   MTU / 2, MTU, false),
			SOFTHCA_RC_RD_BAD);
}

/*
 * The responder's READ records: a duplicate from inside a kept READ's
 * PSNs (not its first) resumes it; the records are shared with the
 * atomics', the oldest overwritten, and never taken for one another.
 */
static void read_records(struct kunit *test)
{
	struct softhca_rc_atm_rec rec[2];
	struct softhca_rc_atm t = { .rec = rec, .n = 2 };
	u64 v;

	softhca_rc_atm_clear(&t);
	KUNIT_EXPECT_FALSE(test, softhca_rc_rd_mid(&t, 1));
	softhca_rc_rd_save(&t, 0xfffffe, 4);		/* 0xfffffe..1 */
	KUNIT_EXPECT_FALSE(test, softhca_rc_rd_mid(&t, 0xfffffe));
	KUNIT_EXPECT_TRUE(test, softhca_rc_rd_mid(&t, 0xffffff));
	KUNIT_EXPECT_TRUE(test, softhca_rc_rd_mid(&t, 0));
	KUNIT_EXPECT_TRUE(test, softhca_rc_rd_mid(&t, 1));
	KUNIT_EXPECT_FALSE(test, softhca_rc_rd_mid(&t, 2));
	KUNIT_EXPECT_FALSE(test, softhca_rc_rd_mid(&t, 0xfffffd));
	/* A READ's record is no atomic's. */
	KUNIT_EXPECT_FALSE(test, softhca_rc_atm_find(&t, 0xfffffe, &v));
	softhca_rc_atm_save(&t, 2, 7);
	KUNIT_EXPECT_FALSE(test, softhca_rc_rd_mid(&t, 2));
	KUNIT_EXPECT_TRUE(test, softhca_rc_atm_find(&t, 2, &v));
	/* A third record overwrites the READ's. */
	softhca_rc_rd_save(&t, 3, 1);
	KUNIT_EXPECT_FALSE(test, softhca_rc_rd_mid(&t, 0));
	KUNIT_EXPECT_FALSE(test, softhca_rc_rd_mid(&t, 3));
	softhca_rc_atm_clear(&t);
	KUNIT_EXPECT_FALSE(test, softhca_rc_atm_find(&t, 2, &v));
}

#define MX(op) softhca_roce_ops[SOFTHCA_XRC(op)].mask

/*
 * An XRC request as an XRC_INI builds it (wire_conn.c, wire_rc.c): the
 * QP type's opcode, the XRCETH after the BTH; parsed back, it goes to an
 * XRC_TGT and to nothing else.
 */
static void xrc_request_packet(struct kunit *test)
{
	struct softhca_roce_fields f = {
		.opcode = softhca_wire_op(IB_QPT_XRC_INI, SOFTHCA_RC(SEND_ONLY)),
		.pkey = SOFTHCA_ROCE_DEF_PKEY,
		.dqpn = 0x12,
		.psn = 0xabcdef,
		.ackreq = true,
		.xrc_srqn = 0x1234567,	/* 24 bits on the wire */
	};
	static const u8 payload[5] = { 1, 2, 3, 4, 5 };
	struct softhca_roce_pkt p;
	u8 buf[64] = {};
	u32 hlen = softhca_roce_ops[f.opcode].hdr_len;

	KUNIT_ASSERT_EQ(test, f.opcode, 0xa4);
	KUNIT_ASSERT_EQ(test, hlen, SOFTHCA_BTH_LEN + SOFTHCA_XRCETH_LEN);
	KUNIT_ASSERT_EQ(test, softhca_roce_build(buf, sizeof(buf), &f,
						 sizeof(payload)), (int)hlen);
	memcpy(buf + hlen, payload, sizeof(payload));
	/* BTH byte 0, then the XRCETH: resv8 | SRQ number. */
	KUNIT_EXPECT_EQ(test, buf[0], 0xa4);
	KUNIT_EXPECT_EQ(test, buf[12], 0);
	KUNIT_EXPECT_EQ(test, buf[13], 0x23);
	KUNIT_EXPECT_EQ(test, buf[14], 0x45);
	KUNIT_EXPECT_EQ(test, buf[15], 0x67);
	/* BTH, XRCETH, 5 bytes, 3 of pad, the ICRC. */
	KUNIT_ASSERT_EQ(test, softhca_roce_parse(buf, hlen + 8 + SOFTHCA_ICRC_LEN,
						 &p), 0);
	KUNIT_EXPECT_EQ(test, p.xrceth, SOFTHCA_BTH_LEN);
	KUNIT_EXPECT_EQ(test, softhca_xrceth_srqn(softhca_pkt_xrceth(&p)),
			0x234567U);
	KUNIT_EXPECT_EQ(test, p.payload, hlen);
	KUNIT_EXPECT_EQ(test, p.paylen, 5U);
	KUNIT_EXPECT_EQ(test, memcmp(softhca_pkt_payload(&p), payload, 5), 0);
	KUNIT_EXPECT_TRUE(test, softhca_wire_takes(IB_QPT_XRC_TGT, p.mask));
	KUNIT_EXPECT_FALSE(test, softhca_wire_takes(IB_QPT_XRC_INI, p.mask));
	KUNIT_EXPECT_FALSE(test, softhca_wire_takes(IB_QPT_RC, p.mask));
	KUNIT_EXPECT_FALSE(test, softhca_wire_takes(IB_QPT_UC, p.mask));
	/* And an RC request goes to an RC QP, not to an XRC_TGT. */
	KUNIT_EXPECT_TRUE(test, softhca_wire_takes(IB_QPT_RC, M(SEND_ONLY)));
	KUNIT_EXPECT_FALSE(test, softhca_wire_takes(IB_QPT_XRC_TGT,
						    M(SEND_ONLY)));
}

/*
 * The answers an XRC_TGT sends (wire_rc_resp.c): XRC's opcodes without
 * an XRCETH, for an XRC_INI only; every RC opcode has its XRC mirror.
 */
static void xrc_answers(struct kunit *test)
{
	u32 op;

	KUNIT_EXPECT_EQ(test, softhca_wire_op(IB_QPT_XRC_TGT,
					      SOFTHCA_RC(ACKNOWLEDGE)), 0xb1);
	KUNIT_EXPECT_EQ(test, softhca_wire_op(IB_QPT_XRC_TGT,
					      SOFTHCA_RC(ATOMIC_ACKNOWLEDGE)),
			0xb2);
	KUNIT_EXPECT_EQ(test, softhca_wire_op(IB_QPT_XRC_TGT,
					      softhca_rc_read_op(0, 3, false)),
			SOFTHCA_XRC(RDMA_READ_RESPONSE_FIRST));
	KUNIT_EXPECT_EQ(test, softhca_wire_op(IB_QPT_RC, SOFTHCA_RC(FETCH_ADD)),
			SOFTHCA_RC(FETCH_ADD));
	KUNIT_EXPECT_EQ(test, softhca_wire_op(IB_QPT_UC,
					      SOFTHCA_RC(RDMA_WRITE_ONLY)),
			SOFTHCA_UC(RDMA_WRITE_ONLY));
	/* The requester reads an XRC READ RESPONSE as RC's. */
	KUNIT_EXPECT_EQ(test, softhca_wire_op(IB_QPT_RC,
					      SOFTHCA_XRC(RDMA_READ_RESPONSE_LAST)),
			SOFTHCA_RC(RDMA_READ_RESPONSE_LAST));
	KUNIT_EXPECT_FALSE(test, MX(ACKNOWLEDGE) & SOFTHCA_H_XRCETH);
	KUNIT_EXPECT_TRUE(test, softhca_wire_takes(IB_QPT_XRC_INI,
						   MX(ACKNOWLEDGE)));
	KUNIT_EXPECT_TRUE(test, softhca_wire_takes(IB_QPT_XRC_INI,
						   MX(RDMA_READ_RESPONSE_ONLY)));
	KUNIT_EXPECT_FALSE(test, softhca_wire_takes(IB_QPT_XRC_TGT,
						    MX(ATOMIC_ACKNOWLEDGE)));
	KUNIT_EXPECT_FALSE(test, softhca_wire_takes(IB_QPT_RC, MX(ACKNOWLEDGE)));
	KUNIT_EXPECT_FALSE(test, softhca_wire_takes(IB_QPT_XRC_INI,
						    M(ACKNOWLEDGE)));
	for (op = 0; op < SOFTHCA_TP_UC; op++) {
		u32 rc = softhca_roce_ops[op].mask;
		u32 xrc = softhca_roce_ops[softhca_wire_op(IB_QPT_XRC_INI,
							   op)].mask;

		KUNIT_EXPECT_EQ_MSG(test, rc & ~SOFTHCA_H_RC,
				    xrc & ~(SOFTHCA_H_XRC | SOFTHCA_H_XRCETH),
				    "opcode 0x%02x", op);
	}
}

/* XRC requests follow RC's sequencing rules, packet for packet. */
static void xrc_sequencing(struct kunit *test)
{
	struct softhca_rc_rx s;

	softhca_rc_rx_reset(&s, 7);
	KUNIT_EXPECT_EQ(test, step(&s, MX(SEND_FIRST), 7, MTU), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, step(&s, MX(SEND_MIDDLE), 9, MTU),
			SOFTHCA_RC_NAK_SEQ);
	KUNIT_EXPECT_EQ(test, step(&s, MX(SEND_MIDDLE), 8, MTU), SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, step(&s, MX(SEND_LAST_WITH_IMMEDIATE), 9, 10),
			SOFTHCA_RC_TAKE);
	KUNIT_EXPECT_EQ(test, s.msn, 1U);
	KUNIT_EXPECT_EQ(test, step(&s, MX(SEND_LAST), 9, 10), SOFTHCA_RC_DUP);
	KUNIT_EXPECT_EQ(test, step(&s, MX(RDMA_READ_REQUEST), 10, 0),
			SOFTHCA_RC_READ);
	KUNIT_EXPECT_EQ(test, step(&s, MX(FETCH_ADD), 10, 0),
			SOFTHCA_RC_ATOMIC);
	KUNIT_EXPECT_EQ(test, step(&s, MX(RDMA_WRITE_MIDDLE), 10, MTU),
			SOFTHCA_RC_INVALID);
}

/*
 * softhca_wire_rc_quiet(): a train whose tail is quiet needs a probe only
 * when no answer to it is coming or already in; a probe for nothing
 * costs a packet sent again and a duplicate at the responder.
 */
static void quiet_tail_asks(struct kunit *test)
{
	struct softhca_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct softhca_wire_qp *w;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	w = &qp->wire;
	spin_lock_init(&w->ack_lock);
	/* 64 one-packet messages in flight from PSN 100, the last quiet. */
	w->ack_first = 100;
	w->ack_next = 164;
	w->ack_inflight = true;
	w->ack_cars = 63;
	w->ack_quiet = true;
	KUNIT_EXPECT_TRUE(test, softhca_wire_rc_quiet(qp));
	/* The 48th asked: its answer is coming. */
	w->asked = true;
	w->ask_next = 148;
	KUNIT_EXPECT_FALSE(test, softhca_wire_rc_quiet(qp));
	/* It came (a partial ACK), not yet taken: the requester takes it. */
	w->ack_pkts = 48;
	w->ack_moved = true;
	KUNIT_EXPECT_FALSE(test, softhca_wire_rc_quiet(qp));
	/* Taken, the 48 retired: only a probe brings the rest's answer. */
	w->ack_moved = false;
	w->ack_first = 148;
	w->ack_pkts = 0;
	w->ack_cars = 15;
	KUNIT_EXPECT_TRUE(test, softhca_wire_rc_quiet(qp));
	/* The whole train's answer is in: nothing to ask for. */
	w->ack_ready = true;
	KUNIT_EXPECT_FALSE(test, softhca_wire_rc_quiet(qp));
	/* A tail that asked, or nothing in flight: no probe. */
	w->ack_ready = false;
	w->ack_quiet = false;
	KUNIT_EXPECT_FALSE(test, softhca_wire_rc_quiet(qp));
	w->ack_quiet = true;
	w->ack_inflight = false;
	KUNIT_EXPECT_FALSE(test, softhca_wire_rc_quiet(qp));
}

static struct kunit_case softhca_wire_rc_seq_cases[] = {
	KUNIT_CASE(in_order_and_msn),
	KUNIT_CASE(gap_naks_once_then_duplicates),
	KUNIT_CASE(rnr_keeps_psn),
	KUNIT_CASE(invalid_requests),
	KUNIT_CASE(atomic_request),
	KUNIT_CASE(atomic_records),
	KUNIT_CASE(atomic_replay),
	KUNIT_CASE(psn_wraps),
	KUNIT_CASE(answers),
	KUNIT_CASE(progress),
	KUNIT_CASE(read_span),
	KUNIT_CASE(read_request),
	KUNIT_CASE(read_opcodes),
	KUNIT_CASE(read_responses),
	KUNIT_CASE(read_resumed),
	KUNIT_CASE(read_records),
	KUNIT_CASE(xrc_request_packet),
	KUNIT_CASE(xrc_answers),
	KUNIT_CASE(xrc_sequencing),
	KUNIT_CASE(quiet_tail_asks),
	{}
};

static struct kunit_suite softhca_wire_rc_seq_suite = {
	.name = "softhca_wire_rc_seq",
	.test_cases = softhca_wire_rc_seq_cases,
};

kunit_test_suite(softhca_wire_rc_seq_suite);
