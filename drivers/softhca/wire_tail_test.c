// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the RC requester's tail probe (wire_tail.c).
 *
 * The probe timeout from the answers' round trip and its floor; which
 * answers time a round trip (a first transmission that asked, answered
 * by an ACK of the whole range in flight: Karn's rule); and when what is
 * in flight may be probed at all (softhca_wire_tail_wait(): backing off
 * without an answer between, not once answered, not a long SEND or
 * WRITE range, not a READ that the reorder timer watches).
 */
#include <kunit/test.h>

#include "softhca.h"
#include "wire.h"
#include "wire_seq.h"

#define US	NSEC_PER_USEC
#define MS	NSEC_PER_MSEC

/* Without a round trip or a floor no probe; the floor bounds it below. */
static void tail_pto(struct kunit *test)
{
	struct softhca_rtt r = {};
	int i;

	KUNIT_EXPECT_EQ(test, softhca_wire_tail_pto(&r, MS), 0);
	softhca_rtt_fold(&r, 50 * US);
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_pto(&r, 0), 0);
	/* 50 us steady (a guest's ACK): the 1 ms floor. */
	for (i = 0; i < 40; i++)
		softhca_rtt_fold(&r, 50 * US);
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_pto(&r, MS), MS);
	/* 4 ms steady (netem's 2 ms each way): about twice that. */
	for (i = 0; i < 80; i++)
		softhca_rtt_fold(&r, 4 * MS);
	KUNIT_EXPECT_GT(test, softhca_wire_tail_pto(&r, MS), 8 * MS - MS / 10);
	KUNIT_EXPECT_LT(test, softhca_wire_tail_pto(&r, MS), 8 * MS + MS / 10);
	/* A round trip of 0 ns still counts as measured. */
	r = (struct softhca_rtt){};
	softhca_rtt_fold(&r, 0);
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_pto(&r, MS), MS);
}

/* What times a round trip, and what does not. */
static void tail_timing(struct kunit *test)
{
	struct softhca_wire_qp w = {};

	spin_lock_init(&w.ack_lock);
	spin_lock_bh(&w.ack_lock);
	/* A resend (or a quiet tail) is not timed: its ACK is not sampled. */
	softhca_wire_tail_sent(&w, false);
	softhca_wire_tail_answer(&w, SOFTHCA_RC_ANS_ACK);
	KUNIT_EXPECT_EQ(test, w.ack_rtt.srtt, 0);
	/* A partial ACK answers an earlier ask: the timing stands. */
	softhca_wire_tail_sent(&w, true);
	softhca_wire_tail_answer(&w, SOFTHCA_RC_ANS_PART);
	KUNIT_EXPECT_TRUE(test, w.ack_timed);
	softhca_wire_tail_answer(&w, SOFTHCA_RC_ANS_STALE);
	KUNIT_EXPECT_TRUE(test, w.ack_timed);
	/* A long range's answer is timed apart (it waits for every packet). */
	w.mtu = 4096;
	w.ack_next = 5;
	softhca_wire_tail_answer(&w, SOFTHCA_RC_ANS_ACK);
	KUNIT_EXPECT_EQ(test, w.ack_rtt.srtt, 0);
	KUNIT_EXPECT_NE(test, w.ack_rtt_long.srtt, 0);
	w.ack_next = 1;
	softhca_wire_tail_sent(&w, true);
	/* The ACK of the whole range times it, once. */
	softhca_wire_tail_answer(&w, SOFTHCA_RC_ANS_ACK);
	KUNIT_EXPECT_FALSE(test, w.ack_timed);
	KUNIT_EXPECT_NE(test, w.ack_rtt.srtt, 0);
	/* A sequence NAK ends the timing: what follows is a resend. */
	softhca_wire_tail_sent(&w, true);
	softhca_wire_tail_answer(&w, SOFTHCA_RC_ANS_SEQ);
	KUNIT_EXPECT_FALSE(test, w.ack_timed);
	spin_unlock_bh(&w.ack_lock);
}

/* When what is in flight may be probed. */
static void tail_when(struct kunit *test)
{
	struct softhca_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct softhca_wire_qp *w;
	unsigned int tail_us = READ_ONCE(softhca_engine.tail_us);

	KUNIT_ASSERT_NOT_NULL(test, qp);
	w = &qp->wire;
	spin_lock_init(&w->ack_lock);
	WRITE_ONCE(softhca_engine.tail_us, 1000);
	w->ack_inflight = true;
	local_bh_disable();
	/* Nothing measured yet: the timeout alone. */
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), 0);
	softhca_rtt_fold(&w->ack_rtt, 50 * US);
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), MS);
	/* Probed already, no answer taken since: twice, four times... */
	w->tail_probes = 1;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), 2 * MS);
	w->tail_probes = 3;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), 8 * MS);
	/* ... until the requester leaves it to the timeout. */
	w->tail_probes = 8;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), 0);
	w->tail_probes = 0;
	/* The answer is in: the requester takes it. */
	w->ack_ready = true;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), 0);
	w->ack_ready = false;
	/*
	 * A READ: waited for unless its reorder window watches it already
	 * (its responses begun or not: softhca_wire_tail() then hands it
	 * to the window).
	 */
	w->ack_read = true;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), MS);
	w->rd_came = true;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), MS);
	w->rd_came = false;
	w->rd_watch = true;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), 0);
	w->rd_watch = false;
	w->ack_read = false;
	/*
	 * 16 KiB in flight at most is a short range: 4 packets of 4 KiB.
	 * Five are a long one, with a round trip of its own: none yet, the
	 * short ranges' PTO; then a first of 4 ms: 4 + 4 x 2 ms.  A long
	 * READ waits the short ranges' PTO, then goes to its reorder window.
	 */
	w->mtu = 4096;
	w->ack_next = 4;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), MS);
	w->ack_next = 5;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), MS);
	softhca_rtt_fold(&w->ack_rtt_long, 4 * MS);
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), 12 * MS);
	w->ack_read = true;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), MS);
	w->ack_read = false;
	w->ack_next = 0;
	/* Nothing in flight; or the parameter at 0. */
	w->ack_inflight = false;
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), 0);
	w->ack_inflight = true;
	WRITE_ONCE(softhca_engine.tail_us, 0);
	KUNIT_EXPECT_EQ(test, softhca_wire_tail_wait(qp), 0);
	local_bh_enable();
	WRITE_ONCE(softhca_engine.tail_us, tail_us);
}

static struct kunit_case softhca_wire_tail_cases[] = {
	KUNIT_CASE(tail_pto),
	KUNIT_CASE(tail_timing),
	KUNIT_CASE(tail_when),
	{}
};

static struct kunit_suite softhca_wire_tail_suite = {
	.name = "softhca_wire_tail",
	.test_cases = softhca_wire_tail_cases,
};

kunit_test_suite(softhca_wire_tail_suite);
