// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: fast registration (fastreg.c) against the engine's key checks
 * (mem.c), on a device that is only its MR table: a fast-reg MR is
 * invalid until REG_MR, valid under the new key only, and after
 * LOCAL_INV no lookup accepts the key, the engine's one-entry cache
 * (which still holds the MR) included.  Data written through the MR
 * lands on the pages map_mr_sg gave it, across a page boundary.  A
 * reference held across an invalidation and a new registration finds
 * its key refused and never maps outside the pages given.
 */
#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>

#include "engine.h"
#include "wqe.h"

struct fr_env {
	struct softhca_dev *sdev;
	struct ib_pd pd, other_pd;
	struct softhca_qp qp;
	struct softhca_mr *mr;
	u8 *buf;		/* two pages, what the MR maps */
};

/* On the heap: a softhca_qp and a softhca_dev are too big for a stack. */
static struct fr_env *fr_env_init(struct kunit *test)
{
	struct ib_mr *ibmr;
	struct fr_env *e;

	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	e->sdev = kunit_kzalloc(test, sizeof(*e->sdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->sdev);
	xa_init_flags(&e->sdev->mrs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	e->pd.device = &e->sdev->ibdev;
	e->other_pd.device = &e->sdev->ibdev;
	e->qp.ibqp.device = &e->sdev->ibdev;
	e->qp.ibqp.pd = &e->pd;
	e->buf = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO, 1);
	KUNIT_ASSERT_NOT_NULL(test, e->buf);

	/* Other types are refused. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(softhca_alloc_mr(&e->pd,
						       IB_MR_TYPE_SG_GAPS, 4)),
			-EOPNOTSUPP);
	ibmr = softhca_alloc_mr(&e->pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	/* What ib_alloc_mr() fills in. */
	ibmr->device = &e->sdev->ibdev;
	ibmr->pd = &e->pd;
	e->mr = to_smr(ibmr);
	return e;
}

static void fr_env_fini(struct fr_env *e)
{
	softhca_dereg_mr(&e->mr->ibmr, NULL);
	free_pages((unsigned long)e->buf, 1);
	xa_destroy(&e->sdev->mrs);
}

/* map_mr_sg over @len bytes of the buffer from @off (virtual DMA). */
static int fr_map(struct fr_env *e, u32 off, u32 len)
{
	struct scatterlist sg;

	sg_init_one(&sg, e->buf + off, len);
	sg_dma_address(&sg) = (uintptr_t)(e->buf + off);
	sg_dma_len(&sg) = len;
	e->mr->ibmr.page_size = PAGE_SIZE;
	return softhca_map_mr_sg(&e->mr->ibmr, &sg, 1, NULL);
}

/* Post-and-run a REG_MR of the MR as mapped, under @key. */
static u8 fr_reg(struct fr_env *e, u32 key, int access)
{
	struct softhca_send_wqe w = {
		.ctrl.opcode = IB_WR_REG_MR,
		.rkey = key,
		.xrc_srqn = access,
		.remote_addr = e->mr->ibmr.iova,
		.compare_add = e->mr->ibmr.length,
	};

	return softhca_fastreg_reg(&e->qp, &w);
}

/* Does the engine accept @key for @len bytes at @addr (remote write)? */
static bool fr_ok(struct fr_env *e, u32 key, u64 addr, u64 len)
{
	struct softhca_mr *mr;

	mr = softhca_mr_get(e->sdev, key, &e->pd, IB_ACCESS_REMOTE_WRITE,
			    addr, len);
	if (mr)
		softhca_mr_put(mr);
	return mr;
}

static void fr_register_and_invalidate(struct kunit *test)
{
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	struct softhca_mr *cache = NULL, *got;
	struct fr_env *e = fr_env_init(test);
	u32 k0, k1, k2;
	u64 iova;

	k0 = e->mr->ibmr.rkey;
	/* 100 bytes into the first page, to 100 bytes into the second. */
	KUNIT_ASSERT_EQ(test, fr_map(e, 100, PAGE_SIZE), 1);
	iova = e->mr->ibmr.iova;
	KUNIT_EXPECT_EQ(test, iova, (u64)(uintptr_t)(e->buf + 100));
	KUNIT_EXPECT_EQ(test, e->mr->fr_npages, 2U);

	/* Invalid before its first REG_MR. */
	KUNIT_EXPECT_FALSE(test, fr_ok(e, k0, iova, 8));

	ib_update_fast_reg_key(&e->mr->ibmr, (k0 & 0xff) + 1);
	k1 = e->mr->ibmr.rkey;
	KUNIT_EXPECT_EQ(test, fr_reg(e, k1, access), IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, fr_ok(e, k1, iova, PAGE_SIZE));
	KUNIT_EXPECT_FALSE(test, fr_ok(e, k0, iova, 8));	/* old byte */
	KUNIT_EXPECT_FALSE(test, fr_ok(e, k1, iova, PAGE_SIZE + 1));
	KUNIT_EXPECT_FALSE(test, fr_ok(e, k1, iova - 1, 8));
	/* A valid MR is not registered again. */
	KUNIT_EXPECT_EQ(test, fr_reg(e, k1, access), IB_WC_LOC_QP_OP_ERR);

	/* The data path: bytes across the page boundary land in buf. */
	got = softhca_mr_get_cached(&cache, e->sdev, k1, &e->pd,
				    IB_ACCESS_REMOTE_WRITE, iova, PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, got);
	{
		struct softhca_seg seg = {
			.mr = got, .addr = iova + PAGE_SIZE - 110, .len = 20,
		};
		static const char msg[20] = "fast-registered data";
		struct softhca_cursor dst;

		softhca_cursor_init(&dst, &seg, 1);
		softhca_copy_from_kernel(&dst, msg, sizeof(msg));
		KUNIT_EXPECT_EQ(test, memcmp(e->buf + PAGE_SIZE - 10, msg,
					     sizeof(msg)), 0);
	}
	softhca_mr_put(got);

	/* Wrong key byte, wrong PD: LOCAL_INV fails, the MR stays valid. */
	KUNIT_EXPECT_EQ(test, softhca_fastreg_local_inv(&e->qp, k0),
			IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, softhca_mr_invalidate(e->sdev, &e->other_pd, k1),
			-EINVAL);
	KUNIT_EXPECT_TRUE(test, fr_ok(e, k1, iova, 8));

	/* LOCAL_INV: the key is stale everywhere, the cache included. */
	KUNIT_EXPECT_EQ(test, softhca_fastreg_local_inv(&e->qp, k1),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(test, fr_ok(e, k1, iova, 8));
	KUNIT_EXPECT_PTR_EQ(test, cache, e->mr);
	got = softhca_mr_get_cached(&cache, e->sdev, k1, &e->pd, 0, iova, 8);
	KUNIT_EXPECT_NULL(test, got);
	if (got)	/* a failure must not leave dereg_mr waiting */
		softhca_mr_put(got);
	/* Invalidating again is allowed. */
	KUNIT_EXPECT_EQ(test, softhca_fastreg_local_inv(&e->qp, k1),
			IB_WC_SUCCESS);

	/* Registered again under a new key byte: only that one works. */
	ib_update_fast_reg_key(&e->mr->ibmr, (k1 & 0xff) + 1);
	k2 = e->mr->ibmr.rkey;
	KUNIT_EXPECT_EQ(test, fr_reg(e, k2, access), IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, fr_ok(e, k2, iova, 8));
	KUNIT_EXPECT_FALSE(test, fr_ok(e, k1, iova, 8));
	got = softhca_mr_get_cached(&cache, e->sdev, k1, &e->pd, 0, iova, 8);
	KUNIT_EXPECT_NULL(test, got);
	if (got)
		softhca_mr_put(got);
	/* Remote write needs the right: a local-write-only registration. */
	KUNIT_EXPECT_EQ(test, softhca_fastreg_local_inv(&e->qp, k2),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, fr_reg(e, k2, IB_ACCESS_LOCAL_WRITE),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(test, fr_ok(e, k2, iova, 8));

	softhca_mr_cache_drop(&cache);
	fr_env_fini(e);
}

/*
 * A reference taken under one registration, used after the consumer
 * invalidated the MR and registered it again elsewhere (the READ the
 * wire's worker answers late, wire_rc_resp.c): the key check the worker
 * makes per batch refuses the old key and takes the new one, and a copy
 * that raced it anyway maps inside pages some registration gave, never
 * a page-list entry no map_mr_sg set (the list is longer than any
 * mapping made here).
 */
static void fr_reused_under_reader(struct kunit *test)
{
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ;
	struct fr_env *e = fr_env_init(test);
	struct softhca_mr *held;
	u32 k1, k2, room;
	u8 *p, *end = e->buf + 2 * PAGE_SIZE;
	u64 iova1;
	bool ok;

	KUNIT_ASSERT_EQ(test, fr_map(e, 0, PAGE_SIZE), 1);
	iova1 = e->mr->ibmr.iova;
	ib_update_fast_reg_key(&e->mr->ibmr, (e->mr->ibmr.rkey & 0xff) + 1);
	k1 = e->mr->ibmr.rkey;
	KUNIT_ASSERT_EQ(test, fr_reg(e, k1, access), IB_WC_SUCCESS);
	held = softhca_mr_get(e->sdev, k1, &e->pd, IB_ACCESS_REMOTE_READ,
			      iova1, PAGE_SIZE);
	KUNIT_ASSERT_PTR_EQ(test, held, e->mr);

	local_bh_disable();
	ok = softhca_fr_read_lock(held, k1);
	softhca_fr_read_unlock(held);
	local_bh_enable();
	KUNIT_EXPECT_TRUE(test, ok);

	/* Invalidated, mapped on the second page, registered again. */
	KUNIT_EXPECT_EQ(test, softhca_fastreg_local_inv(&e->qp, k1),
			IB_WC_SUCCESS);
	local_bh_disable();
	ok = softhca_fr_read_lock(held, k1);
	softhca_fr_read_unlock(held);
	local_bh_enable();
	KUNIT_EXPECT_FALSE(test, ok);
	KUNIT_ASSERT_EQ(test, fr_map(e, PAGE_SIZE, PAGE_SIZE), 1);
	ib_update_fast_reg_key(&e->mr->ibmr, (k1 & 0xff) + 1);
	k2 = e->mr->ibmr.rkey;
	KUNIT_ASSERT_EQ(test, fr_reg(e, k2, access), IB_WC_SUCCESS);
	local_bh_disable();
	ok = softhca_fr_read_lock(held, k1);
	softhca_fr_read_unlock(held);
	local_bh_enable();
	KUNIT_EXPECT_FALSE(test, ok);
	local_bh_disable();
	ok = softhca_fr_read_lock(held, k2);
	softhca_fr_read_unlock(held);
	local_bh_enable();
	KUNIT_EXPECT_TRUE(test, ok);

	/*
	 * The old address is below the new iova: its page index wraps far
	 * past the list.  It must land on a page of the buffer.
	 */
	p = softhca_fr_map(held, iova1 + 8, 16, &room);
	KUNIT_EXPECT_TRUE(test, p >= e->buf && p + room <= end);
	/* And the new registration maps where it should. */
	p = softhca_fr_map(held, e->mr->ibmr.iova + 8, 16, &room);
	KUNIT_EXPECT_PTR_EQ(test, p, e->buf + PAGE_SIZE + 8);
	KUNIT_EXPECT_EQ(test, room, 16U);

	softhca_mr_put(held);
	fr_env_fini(e);
}

/* REG_MR beyond what map_mr_sg mapped, or with bad rights, fails. */
static void fr_register_bounds(struct kunit *test)
{
	struct fr_env *e = fr_env_init(test);
	u32 k;

	KUNIT_ASSERT_EQ(test, fr_map(e, 0, PAGE_SIZE), 1);
	k = e->mr->ibmr.rkey;
	e->mr->ibmr.length = PAGE_SIZE + 1;
	KUNIT_EXPECT_EQ(test, fr_reg(e, k, IB_ACCESS_LOCAL_WRITE),
			IB_WC_LOC_QP_OP_ERR);
	e->mr->ibmr.length = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, fr_reg(e, k, IB_ACCESS_MW_BIND),
			IB_WC_LOC_QP_OP_ERR);
	/* Another MR's index, another PD: a protection error. */
	KUNIT_EXPECT_EQ(test, fr_reg(e, k + 0x100, IB_ACCESS_LOCAL_WRITE),
			IB_WC_LOC_PROT_ERR);
	e->qp.ibqp.pd = &e->other_pd;
	KUNIT_EXPECT_EQ(test, fr_reg(e, k, IB_ACCESS_LOCAL_WRITE),
			IB_WC_LOC_PROT_ERR);
	e->qp.ibqp.pd = &e->pd;
	KUNIT_EXPECT_EQ(test, fr_reg(e, k, IB_ACCESS_LOCAL_WRITE),
			IB_WC_SUCCESS);
	fr_env_fini(e);
}

/* The kernel-only opcodes pass the WQE check on a kernel ring only. */
static void fr_kernel_opcodes(struct kunit *test)
{
	struct softhca_wqe_bounds b = {
		.qp_type = IB_QPT_RC, .stride = 128, .max_sge = 4,
		.max_inline = 64,
	};
	struct softhca_send_wqe w[4] = {};
	u64 len;

	w[0].ctrl.opcode = IB_WR_REG_MR;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), -EINVAL);
	/* A process's RC QP has them for its memory windows (mw.c) ... */
	w[0].ctrl.opcode = IB_WR_LOCAL_INV;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), 0);
	w[0].ctrl.opcode = IB_UVERBS_WR_BIND_MW;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), 0);
	w[0].ctrl.num_sge = 1;		/* a local operation: no data */
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), -EINVAL);
	w[0].ctrl.num_sge = 0;
	w[0].ctrl.opcode = IB_WR_SEND_WITH_INV;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), 0);
	/* ... not its UC QP, where a kernel consumer has them. */
	b.qp_type = IB_QPT_UC;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), -EINVAL);
	w[0].ctrl.opcode = IB_WR_LOCAL_INV;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), -EINVAL);
	b.kernel = true;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), 0);
	b.qp_type = IB_QPT_RC;
	w[0].ctrl.opcode = IB_WR_SEND_WITH_INV;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), 0);
	w[0].ctrl.opcode = IB_WR_REG_MR;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), 0);
	KUNIT_EXPECT_EQ(test, len, 0ULL);
	/* A local operation carries no data. */
	w[0].ctrl.num_sge = 1;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), -EINVAL);
	w[0].ctrl.num_sge = 0;
	w[0].ctrl.flags = SOFTHCA_WQE_F_INLINE;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), -EINVAL);
	/* Not on UD. */
	w[0].ctrl.flags = 0;
	b.qp_type = IB_QPT_UD;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(w, &b, &len), -EINVAL);
}

static struct kunit_case softhca_fastreg_cases[] = {
	KUNIT_CASE(fr_register_and_invalidate),
	KUNIT_CASE(fr_register_bounds),
	KUNIT_CASE(fr_reused_under_reader),
	KUNIT_CASE(fr_kernel_opcodes),
	{}
};

static struct kunit_suite softhca_fastreg_suite = {
	.name = "softhca_fastreg",
	.test_cases = softhca_fastreg_cases,
};

kunit_test_suite(softhca_fastreg_suite);
