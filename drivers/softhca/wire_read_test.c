// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the RC requester's READ responses (wire_read.c).
 *
 * Each case plays READ RESPONSE packets at the completer's step
 * (softhca_wire_rd_resp()) for a READ of eight packets whose PSNs wrap,
 * as a lossy, reordering, duplicating wire delivers them, and checks what
 * is taken in order, what is held, and which answer is recorded when:
 * an ACK once every PSN is in, a resend once the last response came with
 * one before it missing, none while the first of a transmission is
 * missing (the timer's).  The requester's side (softhca_wire_rd_take(),
 * softhca_wire_rd_begin()) then keeps what was taken in order and sends
 * the READ again for the rest, with the responses held still held.  The
 * reorder timer's side (softhca_wire_rd_watch(), softhca_wire_rd_look())
 * is played by calling its look where the window would be over.
 */
#include <kunit/test.h>
#include <linux/skbuff.h>

#include "roce_hdr.h"
#include "softhca.h"
#include "wire.h"
#include "wire_seq.h"

#define MTU	1024
#define NPKTS	8
#define FIRST	0xfffffdU	/* PSNs 0xfffffd..4: they wrap */

struct rd_case {
	struct softhca_wire_qp w;
	u32 total;	/* the chunk's packets in its first transmission */
	bool kick;
	u32 watches;	/* times the timer was to be armed */
};

static u32 psn_at(u32 i)
{
	return softhca_psn_add(FIRST, i);
}

/* A READ of @n packets (the last @tail bytes) goes out at FIRST + @skip. */
static void rd_start(struct rd_case *c, u32 skip, u32 n, u32 tail)
{
	struct softhca_wire_qp *w = &c->w;

	w->mtu = MTU;
	w->ack_first = psn_at(skip);
	w->ack_next = psn_at(skip + n);
	w->ack_inflight = true;
	w->ack_read = true;
	w->ack_ready = false;
	spin_lock_bh(&w->ack_lock);
	softhca_wire_rd_begin(w, true, (n - 1) * MTU + tail);
	spin_unlock_bh(&w->ack_lock);
}

/* A READ of @total packets, its last half an MTU. */
static void rd_init_n(struct kunit *test, struct rd_case *c, u32 total)
{
	memset(c, 0, sizeof(*c));
	c->total = total;
	spin_lock_init(&c->w.ack_lock);
	__skb_queue_head_init(&c->w.rd_q);
	__skb_queue_head_init(&c->w.rd_ooo);
	rd_start(c, 0, total, MTU / 2);
}

static void rd_init(struct kunit *test, struct rd_case *c)
{
	rd_init_n(test, c, NPKTS);
}

static void rd_fini(struct rd_case *c)
{
	__skb_queue_purge(&c->w.rd_q);
	__skb_queue_purge(&c->w.rd_ooo);
}

/*
 * Response @i of the chunk's first transmission arrives (its opcode and
 * size as the responder sends them); @mid: from a transmission resumed
 * at @i.
 */
static enum softhca_rc_rd_verdict rd_recv(struct kunit *test,
					  struct rd_case *c, u32 i, bool mid)
{
	u32 len = i == c->total - 1 ? MTU / 2 : MTU;
	enum softhca_rc_rd_verdict v;
	struct sk_buff *skb;

	skb = alloc_skb(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	spin_lock_bh(&c->w.ack_lock);
	v = softhca_wire_rd_resp(&c->w, skb, psn_at(i),
				 softhca_rc_read_op(i, c->total, mid), 0,
				 len, &c->kick);
	/* As the completer does next: whether to arm the reorder timer. */
	if (softhca_wire_rd_watch(&c->w, v))
		c->watches++;
	spin_unlock_bh(&c->w.ack_lock);
	consume_skb(skb);	/* the caller's reference */
	return v;
}

/* The PSNs on @q are consecutive from @from. */
static void expect_run(struct kunit *test, struct sk_buff_head *q, u32 from)
{
	struct sk_buff *skb;

	skb_queue_walk(q, skb) {
		KUNIT_EXPECT_EQ(test, softhca_rd_cb(skb)->psn, from);
		from = softhca_psn_add(from, 1);
	}
}

static bool answered(struct rd_case *c, enum softhca_ack ack)
{
	return c->w.ack_ready && c->w.ack_answer == ack;
}

/* In order: taken one by one, the last answers it. */
static void rd_in_order(struct kunit *test)
{
	struct rd_case c;
	u32 i;

	rd_init(test, &c);
	for (i = 0; i < NPKTS - 1; i++) {
		KUNIT_EXPECT_EQ(test, rd_recv(test, &c, i, false),
				SOFTHCA_RC_RD_TAKE);
		KUNIT_EXPECT_FALSE(test, c.kick);
	}
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, i, false), SOFTHCA_RC_RD_DONE);
	KUNIT_EXPECT_TRUE(test, c.kick);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_ACK));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_q), NPKTS);
	expect_run(test, &c.w.rd_q, FIRST);
	/* Behind what is taken, and for nothing in flight: stale. */
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 3, false), SOFTHCA_RC_RD_STALE);
	rd_fini(&c);
}

/* Reordered and duplicated: held, each once, taken when the gap fills. */
static void rd_reordered(struct kunit *test)
{
	struct rd_case c;

	rd_init(test, &c);
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 0, false), SOFTHCA_RC_RD_TAKE);
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 2, false), SOFTHCA_RC_RD_AHEAD);
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 4, false), SOFTHCA_RC_RD_AHEAD);
	/* 0 taken; 2 and 4 held; the second 2 was not held again. */
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_q), 1U);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_ooo), 2U);
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 2, false), SOFTHCA_RC_RD_STALE);
	/* 3 goes between them. */
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 3, false), SOFTHCA_RC_RD_AHEAD);
	expect_run(test, &c.w.rd_ooo, psn_at(2));
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 1, false), SOFTHCA_RC_RD_TAKE);
	/* 1 filled the gap: 0..4 taken, nothing held. */
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_q), 5U);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_ooo), 0U);
	KUNIT_EXPECT_EQ(test, c.w.rd_next, psn_at(5));
	KUNIT_EXPECT_FALSE(test, c.w.ack_ready);
	rd_recv(test, &c, 6, false);
	rd_recv(test, &c, 5, false);
	KUNIT_EXPECT_FALSE(test, c.w.ack_ready);
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 7, false), SOFTHCA_RC_RD_DONE);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_ACK));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_q), NPKTS);
	expect_run(test, &c.w.rd_q, FIRST);
	rd_fini(&c);
}

/*
 * One lost: the last response asks again; a late one before the
 * requester took that still completes it.
 */
static void rd_lost_then_late(struct kunit *test)
{
	struct rd_case c;
	u32 i;

	rd_init(test, &c);
	for (i = 0; i < NPKTS; i++)
		if (i != 2)
			rd_recv(test, &c, i, false);
	KUNIT_EXPECT_TRUE(test, c.kick);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_RESEND));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_q), 2U);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_ooo), NPKTS - 3);
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 2, false), SOFTHCA_RC_RD_TAKE);
	KUNIT_EXPECT_TRUE(test, c.kick);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_ACK));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_q), NPKTS);
	expect_run(test, &c.w.rd_q, FIRST);
	rd_fini(&c);
}

/*
 * One lost, the requester takes the resend: what was taken in order is
 * done, the READ goes again from the gap with the rest still held, and
 * the gap's response alone completes it.
 */
static void rd_resend_keeps_held(struct kunit *test)
{
	struct softhca_msg msg = { .len = (NPKTS - 1) * MTU + MTU / 2 };
	struct sk_buff_head q;
	struct rd_case c;
	u32 i, n;

	rd_init(test, &c);
	for (i = 0; i < NPKTS; i++)
		if (i != 3)
			rd_recv(test, &c, i, false);
	KUNIT_ASSERT_TRUE(test, answered(&c, SOFTHCA_RESEND));
	__skb_queue_head_init(&q);
	spin_lock_bh(&c.w.ack_lock);
	n = softhca_wire_rd_take(&c.w, SOFTHCA_RESEND, &msg, &q);
	spin_unlock_bh(&c.w.ack_lock);
	KUNIT_EXPECT_EQ(test, n, 3U);
	KUNIT_EXPECT_EQ(test, msg.acked, 3U * MTU);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&q), 3U);
	KUNIT_EXPECT_TRUE(test, c.w.rd_resume);
	__skb_queue_purge(&q);
	/* The READ again for the chunk's rest, at the first PSN missing. */
	rd_start(&c, 3, NPKTS - 3, MTU / 2);
	KUNIT_EXPECT_TRUE(test, c.w.rd_mid);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_ooo), NPKTS - 4);
	/* Its first response, MIDDLE: the four held follow it. */
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 3, true), SOFTHCA_RC_RD_TAKE);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_ACK));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_q), NPKTS - 3);
	expect_run(test, &c.w.rd_q, psn_at(3));
	/* The rest of that transmission's answer: stale. */
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 4, true), SOFTHCA_RC_RD_STALE);
	rd_fini(&c);
}

/*
 * The first response of a transmission missing: the rest is held but no
 * resend is recorded (it may be late; a lost one is the timer's, a retry).
 */
static void rd_first_missing(struct kunit *test)
{
	struct rd_case c;
	u32 i;

	rd_init(test, &c);
	for (i = 1; i < NPKTS; i++)
		KUNIT_EXPECT_EQ(test, rd_recv(test, &c, i, false),
				SOFTHCA_RC_RD_AHEAD);
	KUNIT_EXPECT_FALSE(test, c.w.ack_ready);
	KUNIT_EXPECT_FALSE(test, c.kick);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_ooo), NPKTS - 1);
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 0, false), SOFTHCA_RC_RD_TAKE);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_ACK));
	rd_fini(&c);
}

/*
 * A misshapen response ahead asks again at once; a new transmission
 * that is not a READ, or a READ elsewhere, drops the responses held.
 */
static void rd_bad_and_trim(struct kunit *test)
{
	struct sk_buff *skb;
	struct rd_case c;

	rd_init(test, &c);
	rd_recv(test, &c, 0, false);
	rd_recv(test, &c, 2, false);
	rd_recv(test, &c, 5, false);
	skb = alloc_skb(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	spin_lock_bh(&c.w.ack_lock);
	KUNIT_EXPECT_EQ(test,
			softhca_wire_rd_resp(&c.w, skb, psn_at(4),
					     softhca_rc_read_op(4, NPKTS, true),
					     0, MTU - 4, &c.kick),
			SOFTHCA_RC_RD_BAD);
	spin_unlock_bh(&c.w.ack_lock);
	consume_skb(skb);
	KUNIT_EXPECT_TRUE(test, c.kick);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_RESEND));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_ooo), 2U);
	/* A READ again from PSN 3 keeps 5, drops 2 (outside its range). */
	__skb_queue_purge(&c.w.rd_q);
	c.w.rd_resume = true;
	rd_start(&c, 3, NPKTS - 3, MTU / 2);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_ooo), 1U);
	expect_run(test, &c.w.rd_ooo, psn_at(5));
	/* Then a chunk that is not a READ: none kept. */
	spin_lock_bh(&c.w.ack_lock);
	softhca_wire_rd_begin(&c.w, false, MTU);
	spin_unlock_bh(&c.w.ack_lock);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_ooo), 0U);
	rd_fini(&c);
}

/*
 * The reorder timer's look, as when its window is over (@early: see
 * softhca_wire_rd_look()).
 */
static enum softhca_rd_look rd_look_at(struct rd_case *c, bool early)
{
	enum softhca_rd_look look;

	spin_lock_bh(&c->w.ack_lock);
	look = softhca_wire_rd_look(&c->w, early);
	spin_unlock_bh(&c->w.ack_lock);
	return look;
}

static enum softhca_rd_look rd_look(struct rd_case *c)
{
	return rd_look_at(c, false);
}

/*
 * The first response missing a whole window while later ones came: the
 * timer watches from the first held, once, and its look asks again for
 * the chunk from its start (no progress: a retry, req.c); answered, the
 * timer has nothing more to watch.
 */
static void rd_window_first_missing(struct kunit *test)
{
	struct softhca_msg msg = { .len = (NPKTS - 1) * MTU + MTU / 2 };
	struct sk_buff_head q;
	struct rd_case c;
	u32 i;

	rd_init(test, &c);
	/* Short: the first taken is not watched. */
	for (i = 1; i < NPKTS; i++)
		rd_recv(test, &c, i, false);
	KUNIT_EXPECT_EQ(test, c.watches, 1U);
	KUNIT_EXPECT_FALSE(test, c.w.ack_ready);
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_STALLED);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_RESEND));
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_GONE);
	__skb_queue_head_init(&q);
	spin_lock_bh(&c.w.ack_lock);
	KUNIT_EXPECT_EQ(test, softhca_wire_rd_take(&c.w, SOFTHCA_RESEND, &msg,
						   &q), 0U);
	spin_unlock_bh(&c.w.ack_lock);
	KUNIT_EXPECT_EQ(test, msg.acked, 0U);
	KUNIT_EXPECT_TRUE(test, msg.probe);	/* early: no retry */
	KUNIT_EXPECT_EQ(test, c.w.rd_probes, 1);
	/* Sent again whole: the held stay; a new transmission, a new watch. */
	rd_start(&c, 0, NPKTS, MTU / 2);
	KUNIT_EXPECT_FALSE(test, c.w.rd_watch);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&c.w.rd_ooo), NPKTS - 1);
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 0, false), SOFTHCA_RC_RD_TAKE);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_ACK));
	KUNIT_EXPECT_EQ(test, c.w.rd_probes, 0);	/* progress */
	KUNIT_EXPECT_EQ(test, c.watches, 1U);
	rd_fini(&c);
}

/* The requester takes the answer recorded: what rd_take() made of it. */
static u32 rd_take_resend(struct kunit *test, struct rd_case *c,
			  struct softhca_msg *msg)
{
	struct sk_buff_head q;
	u32 n;

	__skb_queue_head_init(&q);
	spin_lock_bh(&c->w.ack_lock);
	n = softhca_wire_rd_take(&c->w, SOFTHCA_RESEND, msg, &q);
	spin_unlock_bh(&c->w.ack_lock);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&q), n);
	__skb_queue_purge(&q);
	return n;
}

/*
 * A long chunk is watched from its start: while the responses come the
 * look waits again, once they stop short of the last (it was lost) the
 * rest is asked for, the part taken kept (no probe).  A short chunk
 * taken in order is never watched.
 */
static void rd_window_last_lost(struct kunit *test)
{
	const u32 n = 20;
	struct softhca_msg msg = { .len = (n - 1) * MTU + MTU / 2 };
	struct rd_case c;
	u32 i;

	rd_init_n(test, &c, n);
	KUNIT_EXPECT_TRUE(test, c.w.rd_watch);
	for (i = 0; i < 5; i++)
		rd_recv(test, &c, i, false);
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_LATER);
	for (; i < n - 1; i++)
		rd_recv(test, &c, i, false);
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_LATER);
	KUNIT_EXPECT_FALSE(test, c.w.ack_ready);
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_STALLED);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_RESEND));
	KUNIT_EXPECT_EQ(test, rd_take_resend(test, &c, &msg), n - 1);
	KUNIT_EXPECT_FALSE(test, msg.probe);
	KUNIT_EXPECT_EQ(test, c.watches, 0U);
	rd_fini(&c);

	rd_init(test, &c);
	KUNIT_EXPECT_FALSE(test, c.w.rd_watch);
	for (i = 0; i < NPKTS - 1; i++)
		rd_recv(test, &c, i, false);
	KUNIT_EXPECT_EQ(test, c.watches, 0U);
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_GONE);
	KUNIT_EXPECT_FALSE(test, c.w.ack_ready);
	rd_fini(&c);
}

/*
 * Nothing answers a long READ within the window: it goes again as a
 * probe (no retry), up to SOFTHCA_RD_PROBES (3) times in a row, and then
 * only the local ACK timeout sends it again, until a response comes:
 * then a probe may go again.
 */
static void rd_window_probe(struct kunit *test)
{
	const u32 n = 20;
	struct softhca_msg msg = { .len = (n - 1) * MTU + MTU / 2 };
	struct rd_case c;
	int i;

	rd_init_n(test, &c, n);
	/* Before twice the time a first response took: no probe yet. */
	KUNIT_EXPECT_EQ(test, rd_look_at(&c, true), SOFTHCA_RD_LATER);
	KUNIT_EXPECT_FALSE(test, c.w.ack_ready);
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_PROBE);
	KUNIT_EXPECT_TRUE(test, answered(&c, SOFTHCA_RESEND));
	KUNIT_EXPECT_EQ(test, rd_take_resend(test, &c, &msg), 0U);
	KUNIT_EXPECT_TRUE(test, msg.probe);
	/* The probe's transmission: nothing again, twice more. */
	for (i = 0; i < 2; i++) {
		rd_start(&c, 0, n, MTU / 2);
		KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_PROBE);
		KUNIT_EXPECT_EQ(test, rd_take_resend(test, &c, &msg), 0U);
		KUNIT_EXPECT_TRUE(test, msg.probe);
	}
	KUNIT_EXPECT_EQ(test, c.w.rd_probes, 3);
	/* Then nothing again: the timeout's turn. */
	rd_start(&c, 0, n, MTU / 2);
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_GONE);
	KUNIT_EXPECT_FALSE(test, c.w.ack_ready);
	/* The timeout's resend (no answer recorded): a retry, no probe. */
	KUNIT_EXPECT_EQ(test, rd_take_resend(test, &c, &msg), 0U);
	KUNIT_EXPECT_FALSE(test, msg.probe);
	rd_start(&c, 0, n, MTU / 2);
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_GONE);
	/* One ahead of the first is no progress: still the timeout's. */
	rd_start(&c, 0, n, MTU / 2);
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 5, false), SOFTHCA_RC_RD_AHEAD);
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_GONE);
	KUNIT_EXPECT_FALSE(test, c.w.ack_ready);
	/* One taken in order: the next silence may be probed again. */
	KUNIT_EXPECT_EQ(test, rd_recv(test, &c, 0, false), SOFTHCA_RC_RD_TAKE);
	rd_fini(&c);
	rd_start(&c, 1, n - 1, MTU / 2);
	KUNIT_EXPECT_EQ(test, rd_look(&c), SOFTHCA_RD_PROBE);
	rd_fini(&c);
}

/*
 * How long a READ nothing answered waits for a probe: twice the smoothed
 * time to a first response while the times hold steady, longer once
 * they vary (one long wait behind other READs), and back towards twice
 * the mean as they steady again.
 */
static void rd_probe_wait(struct kunit *test)
{
	struct softhca_wire_qp w = {};
	const u64 ms = NSEC_PER_MSEC;
	u64 wait;
	int i;

	softhca_rtt_fold(&w.rd_rtt, ms);
	KUNIT_EXPECT_EQ(test, w.rd_rtt.srtt, ms);
	/* The first sample's deviation is half of it: 1 + 4 * 0.5 ms. */
	KUNIT_EXPECT_EQ(test, softhca_wire_rd_probe_wait(&w), 3 * ms);
	for (i = 0; i < 40; i++)
		softhca_rtt_fold(&w.rd_rtt, ms);
	KUNIT_EXPECT_EQ(test, w.rd_rtt.srtt, ms);
	KUNIT_EXPECT_EQ(test, softhca_wire_rd_probe_wait(&w), 2 * ms);
	/*
	 * One answer after 9 ms: srtt 2 ms, the deviation a quarter of 8 ms
	 * (plus what is left of the first one's): a wait of 10 ms, not 4.
	 */
	softhca_rtt_fold(&w.rd_rtt, 9 * ms);
	KUNIT_EXPECT_EQ(test, w.rd_rtt.srtt, 2 * ms);
	wait = softhca_wire_rd_probe_wait(&w);
	KUNIT_EXPECT_GE(test, wait, 10 * ms);
	KUNIT_EXPECT_LE(test, wait, 10 * ms + 1000);
	/* Steady again: the wait shrinks back towards twice the mean. */
	for (i = 0; i < 40; i++)
		softhca_rtt_fold(&w.rd_rtt, ms);
	KUNIT_EXPECT_LT(test, softhca_wire_rd_probe_wait(&w), 2 * ms + ms / 10);
	KUNIT_EXPECT_GE(test, softhca_wire_rd_probe_wait(&w), 2 * w.rd_rtt.srtt);
}

static struct kunit_case softhca_wire_read_cases[] = {
	KUNIT_CASE(rd_in_order),
	KUNIT_CASE(rd_reordered),
	KUNIT_CASE(rd_lost_then_late),
	KUNIT_CASE(rd_resend_keeps_held),
	KUNIT_CASE(rd_first_missing),
	KUNIT_CASE(rd_bad_and_trim),
	KUNIT_CASE(rd_window_first_missing),
	KUNIT_CASE(rd_window_last_lost),
	KUNIT_CASE(rd_window_probe),
	KUNIT_CASE(rd_probe_wait),
	{}
};

static struct kunit_suite softhca_wire_read_suite = {
	.name = "softhca_wire_read",
	.test_cases = softhca_wire_read_cases,
};

kunit_test_suite(softhca_wire_read_suite);
