// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: ring index arithmetic (ring.h) and WQE slot sizes (wqe.c).
 *
 * The indices come from user space, so the cases are the hostile ones:
 * wrap-around of the free-running u32, a full ring, a producer that runs
 * ahead or goes backwards, a consumer index that lies.
 */
#include <kunit/test.h>

#include "softhca.h"
#include "wqe.h"

static void posted_counts(struct kunit *test)
{
	static const struct {
		u32 prod, cons, entries;
		int want;
	} cases[] = {
		{ 0, 0, 8, 0 },
		{ 3, 0, 8, 3 },
		{ 8, 0, 8, 8 },				/* full */
		{ 9, 0, 8, -EINVAL },			/* beyond capacity */
		{ 0, 1, 8, -EINVAL },			/* went backwards */
		{ 2, 0xfffffffe, 8, 4 },		/* across the wrap */
		{ 6, 0xfffffffe, 8, 8 },
		{ 7, 0xfffffffe, 8, -EINVAL },
		{ 0xfffffffe, 2, 8, -EINVAL },		/* backwards across it */
		{ 0x80000000, 0, 8, -EINVAL },
		{ 65536, 0, 65536, 65536 },
		{ 1, 1, 1, 0 },
		{ 2, 1, 1, 1 },
		{ 3, 1, 1, -EINVAL },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    softhca_ring_posted(cases[i].prod,
							cases[i].cons,
							cases[i].entries),
				    cases[i].want, "prod %u cons %u entries %u",
				    cases[i].prod, cases[i].cons,
				    cases[i].entries);
}

static void cq_space_never_trusts_cons(struct kunit *test)
{
	/* Honest consumers. */
	KUNIT_EXPECT_EQ(test, softhca_ring_cq_space(0, 0, 16), 16U);
	KUNIT_EXPECT_EQ(test, softhca_ring_cq_space(16, 0, 16), 0U);
	KUNIT_EXPECT_EQ(test, softhca_ring_cq_space(20, 10, 16), 6U);
	KUNIT_EXPECT_EQ(test, softhca_ring_cq_space(3, 0xfffffff0, 32), 13U);
	/* A consumer ahead of the producer, or hopelessly behind: no room. */
	KUNIT_EXPECT_EQ(test, softhca_ring_cq_space(5, 6, 16), 0U);
	KUNIT_EXPECT_EQ(test, softhca_ring_cq_space(100, 0, 16), 0U);
	KUNIT_EXPECT_EQ(test, softhca_ring_cq_space(0, 0x80000000, 16), 0U);
}

static void cqe_owner_alternates(struct kunit *test)
{
	u32 entries = 4, i;

	/* Never 0 (a zeroed ring is empty), flips every pass. */
	for (i = 0; i < 4 * entries; i++)
		KUNIT_EXPECT_EQ_MSG(test, softhca_cqe_owner(i, entries),
				    (u8)(((i / entries) & 1) + 1), "index %u", i);
	KUNIT_EXPECT_EQ(test, softhca_cqe_owner(0xffffffff, 1 << 20), 2);
	KUNIT_EXPECT_EQ(test, softhca_cqe_owner(0, 1 << 20), 1);
}

static void slot_of_index(struct kunit *test)
{
	struct softhca_ring ring = {
		.buf = (void *)0x10000, .entries = 8, .stride = 64,
	};

	KUNIT_EXPECT_PTR_EQ(test, softhca_ring_slot(&ring, 0),
			    (void *)(0x10000 + SOFTHCA_RING_HDR_SIZE));
	KUNIT_EXPECT_PTR_EQ(test, softhca_ring_slot(&ring, 9),
			    (void *)(0x10000 + SOFTHCA_RING_HDR_SIZE + 64));
	/* Any u32 lands inside the ring. */
	KUNIT_EXPECT_PTR_EQ(test, softhca_ring_slot(&ring, 0xffffffff),
			    (void *)(0x10000 + SOFTHCA_RING_HDR_SIZE + 7 * 64));
}

static void strides(struct kunit *test)
{
	/* One SGE of any opcode fits in 64 bytes. */
	KUNIT_EXPECT_EQ(test, softhca_send_stride(1, 0), 64U);
	KUNIT_EXPECT_EQ(test, softhca_send_stride(0, 0), 64U);
	KUNIT_EXPECT_EQ(test, softhca_send_stride(1, 16), 64U);
	KUNIT_EXPECT_EQ(test, softhca_send_stride(2, 0), 128U);
	KUNIT_EXPECT_EQ(test, softhca_send_stride(1, 17), 128U);
	KUNIT_EXPECT_EQ(test, softhca_send_stride(5, 0), 128U);
	KUNIT_EXPECT_EQ(test, softhca_send_stride(32, 512), 1024U);
	KUNIT_EXPECT_EQ(test, softhca_send_stride(255, 4096), 8192U);
	KUNIT_EXPECT_EQ(test, softhca_recv_stride(0), 32U);
	KUNIT_EXPECT_EQ(test, softhca_recv_stride(1), 32U);
	KUNIT_EXPECT_EQ(test, softhca_recv_stride(2), 64U);
	KUNIT_EXPECT_EQ(test, softhca_recv_stride(3), 64U);
	KUNIT_EXPECT_EQ(test, softhca_recv_stride(4), 128U);
	KUNIT_EXPECT_EQ(test, softhca_recv_stride(255), 4096U);
}

static void abi_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct softhca_send_wqe),
			(size_t)SOFTHCA_SEND_WQE_HDR);
	KUNIT_EXPECT_EQ(test, sizeof(struct softhca_cqe), (size_t)64);
	KUNIT_EXPECT_EQ(test, sizeof(struct softhca_wq_hdr),
			(size_t)SOFTHCA_RING_HDR_SIZE);
	KUNIT_EXPECT_EQ(test, sizeof(struct softhca_cq_hdr),
			(size_t)SOFTHCA_RING_HDR_SIZE);
	KUNIT_EXPECT_EQ(test, offsetof(struct softhca_wq_hdr, cons),
			(size_t)SOFTHCA_RING_BLOCK);
	/* flags on a line of its own, away from cons */
	KUNIT_EXPECT_EQ(test, offsetof(struct softhca_wq_hdr, flags),
			(size_t)SOFTHCA_RING_BLOCK * 3 / 2);
	KUNIT_EXPECT_EQ(test, offsetof(struct softhca_cq_hdr, flags),
			(size_t)SOFTHCA_RING_BLOCK);
}

static struct kunit_case softhca_ring_cases[] = {
	KUNIT_CASE(posted_counts),
	KUNIT_CASE(cq_space_never_trusts_cons),
	KUNIT_CASE(cqe_owner_alternates),
	KUNIT_CASE(slot_of_index),
	KUNIT_CASE(strides),
	KUNIT_CASE(abi_sizes),
	{}
};

static struct kunit_suite softhca_ring_suite = {
	.name = "softhca_ring",
	.test_cases = softhca_ring_cases,
};

kunit_test_suite(softhca_ring_suite);
