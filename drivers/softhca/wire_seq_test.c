// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the sequencing rules of connected QPs on the wire (wire_seq.c).
 *
 * The receive cases play packet streams through the UC receive state
 * machine the way a sender would cut messages (the opcodes come from
 * softhca_seq_opcode(), the masks from the opcode table) and check what
 * a receiver completes: every message whose packets all arrived, none
 * that lost one, whichever packet the network loses.
 */
#include <kunit/test.h>
#include <rdma/ib_user_verbs.h>

#include "roce_hdr.h"
#include "wire_seq.h"

#define MTU 1024
/* The opcode mask of a UC opcode. */
#define M(op) softhca_roce_ops[SOFTHCA_UC(op)].mask

static void opcode_sequences(struct kunit *test)
{
	static const struct {
		u8 wr, tp;
		bool first, last;
		int want;
	} cases[] = {
#define UC(op) SOFTHCA_UC(op)
#define S IB_UVERBS_WR_SEND
#define SI IB_UVERBS_WR_SEND_WITH_IMM
#define W IB_UVERBS_WR_RDMA_WRITE
#define WI IB_UVERBS_WR_RDMA_WRITE_WITH_IMM
#define T SOFTHCA_TP_UC
		{ S, T, true, true, UC(SEND_ONLY) },
		{ S, T, true, false, UC(SEND_FIRST) },
		{ S, T, false, false, UC(SEND_MIDDLE) },
		{ S, T, false, true, UC(SEND_LAST) },
		{ SI, T, true, true, UC(SEND_ONLY_WITH_IMMEDIATE) },
		/* Immediate data rides on the last packet only. */
		{ SI, T, true, false, UC(SEND_FIRST) },
		{ SI, T, false, false, UC(SEND_MIDDLE) },
		{ SI, T, false, true, UC(SEND_LAST_WITH_IMMEDIATE) },
		{ W, T, true, true, UC(RDMA_WRITE_ONLY) },
		{ W, T, true, false, UC(RDMA_WRITE_FIRST) },
		{ W, T, false, false, UC(RDMA_WRITE_MIDDLE) },
		{ W, T, false, true, UC(RDMA_WRITE_LAST) },
		{ WI, T, true, true, UC(RDMA_WRITE_ONLY_WITH_IMMEDIATE) },
		{ WI, T, true, false, UC(RDMA_WRITE_FIRST) },
		{ WI, T, false, true, UC(RDMA_WRITE_LAST_WITH_IMMEDIATE) },
		{ S, SOFTHCA_TP_RC, true, true, SOFTHCA_RC(SEND_ONLY) },
		/* SEND with invalidate: the IETH on the last packet, RC only. */
		{ IB_UVERBS_WR_SEND_WITH_INV, SOFTHCA_TP_RC, true, true,
		  SOFTHCA_RC(SEND_ONLY_WITH_INVALIDATE) },
		{ IB_UVERBS_WR_SEND_WITH_INV, SOFTHCA_TP_RC, true, false,
		  SOFTHCA_RC(SEND_FIRST) },
		{ IB_UVERBS_WR_SEND_WITH_INV, SOFTHCA_TP_RC, false, false,
		  SOFTHCA_RC(SEND_MIDDLE) },
		{ IB_UVERBS_WR_SEND_WITH_INV, SOFTHCA_TP_RC, false, true,
		  SOFTHCA_RC(SEND_LAST_WITH_INVALIDATE) },
		{ IB_UVERBS_WR_SEND_WITH_INV, T, true, true, -EOPNOTSUPP },
		{ IB_UVERBS_WR_SEND_WITH_INV, T, false, true, -EOPNOTSUPP },
		/* Requests answered by the responder are no packet stream. */
		{ IB_UVERBS_WR_RDMA_READ, T, true, true, -EOPNOTSUPP },
		{ IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, SOFTHCA_TP_RC, true, true,
		  -EOPNOTSUPP },
		/* UD has no multi-packet messages and no WRITE. */
		{ S, SOFTHCA_TP_UD, true, false, -EOPNOTSUPP },
		{ W, SOFTHCA_TP_UD, true, true, -EOPNOTSUPP },
#undef UC
#undef S
#undef SI
#undef W
#undef WI
#undef T
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, softhca_seq_opcode(cases[i].tp, cases[i].wr,
							     cases[i].first,
							     cases[i].last),
				    cases[i].want, "case %d", i);
}

static void packet_counts_and_chunks(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softhca_seq_npkts(0, MTU), 1U);
	KUNIT_EXPECT_EQ(test, softhca_seq_npkts(1, MTU), 1U);
	KUNIT_EXPECT_EQ(test, softhca_seq_npkts(MTU, MTU), 1U);
	KUNIT_EXPECT_EQ(test, softhca_seq_npkts(MTU + 1, MTU), 2U);
	KUNIT_EXPECT_EQ(test, softhca_seq_npkts(16384, MTU), 16U);
	KUNIT_EXPECT_EQ(test, softhca_seq_npkts(1ULL << 31, 256), 1U << 23);

	/* Chunks are whole packets, 1..SOFTHCA_SEQ_CHUNK_PKTS of them. */
	KUNIT_EXPECT_EQ(test, softhca_seq_chunk(256, MTU), 256U * MTU);
	KUNIT_EXPECT_EQ(test, softhca_seq_chunk(1, 4096), 4096U);
	KUNIT_EXPECT_EQ(test, softhca_seq_chunk(0, 4096), 4096U);
	KUNIT_EXPECT_EQ(test, softhca_seq_chunk(512, 4096), 2U << 20);
	KUNIT_EXPECT_EQ(test, softhca_seq_chunk(100000, 256), 512U * 256);
}

static void payload_lengths(struct kunit *test)
{
	u32 first = M(SEND_FIRST), middle = M(RDMA_WRITE_MIDDLE);
	u32 last = M(SEND_LAST), only = M(RDMA_WRITE_ONLY);

	KUNIT_EXPECT_TRUE(test, softhca_seq_paylen_ok(first, MTU, MTU));
	KUNIT_EXPECT_FALSE(test, softhca_seq_paylen_ok(first, MTU - 4, MTU));
	KUNIT_EXPECT_FALSE(test, softhca_seq_paylen_ok(middle, MTU + 4, MTU));
	KUNIT_EXPECT_TRUE(test, softhca_seq_paylen_ok(last, 1, MTU));
	KUNIT_EXPECT_TRUE(test, softhca_seq_paylen_ok(last, MTU, MTU));
	KUNIT_EXPECT_FALSE(test, softhca_seq_paylen_ok(last, MTU + 1, MTU));
	KUNIT_EXPECT_TRUE(test, softhca_seq_paylen_ok(only, 0, MTU));
}

/* One packet of a generated stream. */
struct pkt {
	u32 mask;
	u32 psn;
	u32 len;
	int msg;	/* which message it belongs to */
};

/*
 * Cut messages of @sizes bytes (@nmsg of them, alternately SEND and RDMA
 * WRITE with immediate) into packets from @psn on, as the sender does.
 */
static int make_stream(struct pkt *p, int max, const u32 *sizes, int nmsg,
		       u32 psn)
{
	int n = 0, m;

	for (m = 0; m < nmsg; m++) {
		u8 wr = m & 1 ? IB_UVERBS_WR_RDMA_WRITE_WITH_IMM :
				IB_UVERBS_WR_SEND;
		u32 left = sizes[m];
		bool first = true;

		do {
			u32 len = min_t(u32, left, MTU);
			bool last = len == left;
			int op = softhca_seq_opcode(SOFTHCA_TP_UC, wr, first, last);

			if (op < 0 || n == max)
				return -1;
			p[n].mask = softhca_roce_ops[op].mask;
			p[n].psn = psn;
			p[n].len = len;
			p[n].msg = m;
			psn = softhca_psn_add(psn, 1);
			left -= len;
			first = false;
			n++;
		} while (left);
	}
	return n;
}

/*
 * Play @n packets, all but the @lost-th (-1: none), and mark the messages
 * a receiver completes: a LAST taken while the message it ends was
 * started by a FIRST taken.  Return: the number of RESYNC and GAP
 * verdicts (the PSN jumps a receiver counts).
 */
static int play(struct kunit *test, const struct pkt *p, int n, int lost,
		u32 start, bool *done)
{
	struct softhca_seq_rx s;
	int i, cur = -1, jumps = 0;
	enum softhca_seq_verdict v;

	softhca_seq_rx_reset(&s, start);
	for (i = 0; i < n; i++) {
		if (i == lost)
			continue;
		v = softhca_seq_rx_step(&s, p[i].mask, p[i].psn, p[i].len, MTU);
		KUNIT_EXPECT_NE(test, v, SOFTHCA_SEQ_BAD_LEN);
		if (v == SOFTHCA_SEQ_RESYNC || v == SOFTHCA_SEQ_GAP)
			jumps++;
		if (v != SOFTHCA_SEQ_TAKE && v != SOFTHCA_SEQ_RESYNC)
			continue;
		if (p[i].mask & SOFTHCA_H_FIRST)
			cur = p[i].msg;
		/* A taken packet always continues the message taken last. */
		KUNIT_EXPECT_EQ(test, cur, p[i].msg);
		if (p[i].mask & SOFTHCA_H_LAST)
			done[p[i].msg] = true;
	}
	return jumps;
}

static void in_order_stream(struct kunit *test)
{
	static const u32 sizes[] = { 64, 16384, 0, 1024, 1025, 3000 };
	bool done[ARRAY_SIZE(sizes)] = {};
	struct pkt p[64];
	int n, m;

	n = make_stream(p, ARRAY_SIZE(p), sizes, ARRAY_SIZE(sizes), 100);
	KUNIT_ASSERT_EQ(test, n, 1 + 16 + 1 + 1 + 2 + 3);
	KUNIT_EXPECT_EQ(test, play(test, p, n, -1, 100, done), 0);
	for (m = 0; m < ARRAY_SIZE(sizes); m++)
		KUNIT_EXPECT_TRUE_MSG(test, done[m], "message %d", m);
}

/*
 * The point of UC sequencing: whichever single packet is lost, exactly
 * the message it belonged to is not completed, every other one is.
 */
static void one_loss_drops_one_message(struct kunit *test)
{
	static const u32 sizes[] = { 4096, 64, 2048, 1, 16384, 3000, 0, 1024 };
	bool done[ARRAY_SIZE(sizes)];
	struct pkt p[64];
	int n, lost, m, missing;

	n = make_stream(p, ARRAY_SIZE(p), sizes, ARRAY_SIZE(sizes), 7);
	KUNIT_ASSERT_GT(test, n, 0);
	for (lost = 0; lost < n; lost++) {
		memset(done, 0, sizeof(done));
		/* One loss, one PSN jump counted (none after the last). */
		KUNIT_EXPECT_EQ_MSG(test, play(test, p, n, lost, 7, done),
				    lost < n - 1 ? 1 : 0, "packet %d lost", lost);
		missing = 0;
		for (m = 0; m < ARRAY_SIZE(sizes); m++) {
			KUNIT_EXPECT_EQ_MSG(test, done[m], m != p[lost].msg,
					    "packet %d lost, message %d", lost, m);
			missing += !done[m];
		}
		KUNIT_EXPECT_EQ_MSG(test, missing, 1, "packet %d lost", lost);
	}
}

/* PSNs wrap at 2^24: a message across the wrap is in order. */
static void psn_wraps(struct kunit *test)
{
	static const u32 sizes[] = { 5 * MTU, 2 * MTU };
	bool done[ARRAY_SIZE(sizes)] = {};
	struct pkt p[16];
	int n;

	n = make_stream(p, ARRAY_SIZE(p), sizes, ARRAY_SIZE(sizes), 0xfffffd);
	KUNIT_ASSERT_EQ(test, n, 7);
	KUNIT_EXPECT_EQ(test, p[3].psn, 0U);
	KUNIT_EXPECT_EQ(test, play(test, p, n, -1, 0xfffffd, done), 0);
	KUNIT_EXPECT_TRUE(test, done[0]);
	KUNIT_EXPECT_TRUE(test, done[1]);
	/* And a loss just after the wrap still drops one message. */
	memset(done, 0, sizeof(done));
	KUNIT_EXPECT_EQ(test, play(test, p, n, 3, 0xfffffd, done), 1);
	KUNIT_EXPECT_FALSE(test, done[0]);
	KUNIT_EXPECT_TRUE(test, done[1]);
}

static void out_of_sequence(struct kunit *test)
{
	u32 first = M(SEND_FIRST), middle = M(SEND_MIDDLE), last = M(SEND_LAST);
	u32 wmiddle = M(RDMA_WRITE_MIDDLE), only = M(SEND_ONLY);
	struct softhca_seq_rx s;

	softhca_seq_rx_reset(&s, 10);
	/* A MIDDLE or LAST with no message started. */
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, middle, 10, MTU, MTU),
			SOFTHCA_SEQ_DROP);
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, last, 11, 5, MTU),
			SOFTHCA_SEQ_DROP);
	/* The next FIRST starts afresh, at its own PSN. */
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, first, 12, MTU, MTU),
			SOFTHCA_SEQ_TAKE);
	/* A WRITE packet inside a SEND: the SEND is dropped whole. */
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, wmiddle, 13, MTU, MTU),
			SOFTHCA_SEQ_DROP);
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, last, 14, 5, MTU),
			SOFTHCA_SEQ_DROP);
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, only, 15, 5, MTU),
			SOFTHCA_SEQ_TAKE);
	/* A jump between messages: what it skipped was lost. */
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, only, 20, 5, MTU),
			SOFTHCA_SEQ_RESYNC);
	KUNIT_EXPECT_EQ(test, s.epsn, 21U);
	softhca_seq_rx_reset(&s, 16);
	/* A duplicate (a PSN behind) inside a message is a gap too. */
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, first, 16, MTU, MTU),
			SOFTHCA_SEQ_TAKE);
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, middle, 16, MTU, MTU),
			SOFTHCA_SEQ_GAP);
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, last, 17, 5, MTU),
			SOFTHCA_SEQ_DROP);
	KUNIT_EXPECT_EQ(test, s.epsn, 17U);
}

static void bad_lengths(struct kunit *test)
{
	u32 first = M(SEND_FIRST), middle = M(SEND_MIDDLE), last = M(SEND_LAST);
	u32 only = M(SEND_ONLY);
	struct softhca_seq_rx s;

	softhca_seq_rx_reset(&s, 0);
	/* A short FIRST: the message goes, the PSN is used up. */
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, first, 0, MTU - 8, MTU),
			SOFTHCA_SEQ_BAD_LEN);
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, middle, 1, MTU, MTU),
			SOFTHCA_SEQ_DROP);
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, last, 2, 8, MTU),
			SOFTHCA_SEQ_DROP);
	/* An ONLY longer than the MTU, then a good one in order. */
	softhca_seq_rx_reset(&s, 3);
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, only, 3, MTU + 4, MTU),
			SOFTHCA_SEQ_BAD_LEN);
	KUNIT_EXPECT_EQ(test, softhca_seq_rx_step(&s, only, 4, MTU, MTU),
			SOFTHCA_SEQ_TAKE);
	KUNIT_EXPECT_FALSE(test, s.drop);
	KUNIT_EXPECT_EQ(test, s.cur, 0U);
}

static void source_port_symmetric(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softhca_seq_sport(17, 42),
			softhca_seq_sport(42, 17));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(softhca_seq_sport(5, 9)) & 0xc000,
			0xc000);
}

static struct kunit_case softhca_wire_seq_cases[] = {
	KUNIT_CASE(opcode_sequences),
	KUNIT_CASE(packet_counts_and_chunks),
	KUNIT_CASE(payload_lengths),
	KUNIT_CASE(in_order_stream),
	KUNIT_CASE(one_loss_drops_one_message),
	KUNIT_CASE(psn_wraps),
	KUNIT_CASE(out_of_sequence),
	KUNIT_CASE(bad_lengths),
	KUNIT_CASE(source_port_symmetric),
	{}
};

static struct kunit_suite softhca_wire_seq_suite = {
	.name = "softhca_wire_seq",
	.test_cases = softhca_wire_seq_cases,
};

kunit_test_suite(softhca_wire_seq_suite);
