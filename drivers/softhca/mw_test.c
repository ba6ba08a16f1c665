// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the pure rules of memory windows (mw.c): what a bind may do
 * (softhca_mw_bind_check()) and what a remote access through a window's
 * key may do (softhca_mw_allows()), and again for a READ answered over
 * time (softhca_mw_still()).  The device paths around them are
 * exercised from user space (selftests/mw.c).
 */
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "engine.h"

#define MW_INDEX	(SOFTHCA_MW_INDEX_MIN + 5)
#define MR_IOVA		0x10000ULL
#define MR_LEN		0x4000ULL

struct mw_env {
	struct ib_pd pd, other_pd;
	struct softhca_mr mr;
	struct softhca_mw mw;
	struct softhca_mw_bind b;
};

static void mw_env_init(struct mw_env *e, enum ib_mw_type type)
{
	memset(e, 0, sizeof(*e));
	e->mr.ibmr.pd = &e->pd;
	e->mr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND;
	e->mr.iova = MR_IOVA;
	e->mr.length = MR_LEN;
	e->mw.ibmw.pd = &e->pd;
	e->mw.ibmw.type = type;
	e->mw.index = MW_INDEX;
	e->b.key = (MW_INDEX << 8) | 0x42;
	e->b.addr = MR_IOVA + 0x100;
	e->b.length = 0x200;
	e->b.access = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
}

static int check(struct mw_env *e)
{
	return softhca_mw_bind_check(&e->mw, &e->pd, &e->b, &e->mr);
}

static void mw_bind_rules(struct kunit *test)
{
	struct mw_env e;

	mw_env_init(&e, IB_MW_TYPE_1);
	KUNIT_EXPECT_EQ(test, check(&e), 0);
	/* The whole MR, to its last byte; one byte beyond it is refused. */
	e.b.addr = MR_IOVA;
	e.b.length = MR_LEN;
	KUNIT_EXPECT_EQ(test, check(&e), 0);
	e.b.length = MR_LEN + 1;
	KUNIT_EXPECT_EQ(test, check(&e), -ERANGE);
	e.b.addr = MR_IOVA - 1;
	e.b.length = 2;
	KUNIT_EXPECT_EQ(test, check(&e), -ERANGE);
	e.b.addr = U64_MAX - 1;
	e.b.length = 8;
	KUNIT_EXPECT_EQ(test, check(&e), -ERANGE);

	/* No MW_BIND on the MR; remote write without local write. */
	mw_env_init(&e, IB_MW_TYPE_1);
	e.mr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, check(&e), -EACCES);
	e.mr.access = IB_ACCESS_MW_BIND;
	KUNIT_EXPECT_EQ(test, check(&e), -EACCES);
	e.b.access = IB_ACCESS_REMOTE_ATOMIC;
	KUNIT_EXPECT_EQ(test, check(&e), -EACCES);
	e.b.access = IB_ACCESS_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, check(&e), 0);

	/* Window rights beyond remote ones, zero-based: refused. */
	mw_env_init(&e, IB_MW_TYPE_1);
	e.b.access |= IB_ZERO_BASED;
	KUNIT_EXPECT_EQ(test, check(&e), -EINVAL);
	e.b.access = IB_ACCESS_LOCAL_WRITE;
	KUNIT_EXPECT_EQ(test, check(&e), -EINVAL);

	/* PDs: the QP's, the MR's and the window's must be one. */
	mw_env_init(&e, IB_MW_TYPE_1);
	KUNIT_EXPECT_EQ(test, softhca_mw_bind_check(&e.mw, &e.other_pd, &e.b,
						    &e.mr), -EINVAL);
	e.mr.ibmr.pd = &e.other_pd;
	KUNIT_EXPECT_EQ(test, check(&e), -EINVAL);

	/* The key must carry the window's index; fast-reg MRs have none. */
	mw_env_init(&e, IB_MW_TYPE_1);
	e.b.key = ((MW_INDEX + 1) << 8) | 0x42;
	KUNIT_EXPECT_EQ(test, check(&e), -EINVAL);
	mw_env_init(&e, IB_MW_TYPE_1);
	e.mr.fr = true;
	KUNIT_EXPECT_EQ(test, check(&e), -EINVAL);

	/* Type 1: length 0 unbinds, with no MR; a bound one binds again. */
	mw_env_init(&e, IB_MW_TYPE_1);
	e.b.length = 0;
	KUNIT_EXPECT_EQ(test, softhca_mw_bind_check(&e.mw, &e.pd, &e.b, NULL),
			0);
	e.b.length = 0x200;
	e.mw.key = (MW_INDEX << 8) | 0x41;
	KUNIT_EXPECT_EQ(test, check(&e), 0);
}

static void mw_bind_type2(struct kunit *test)
{
	struct mw_env e;

	mw_env_init(&e, IB_MW_TYPE_2);
	KUNIT_EXPECT_EQ(test, check(&e), 0);
	/* Only from the free state, never to length 0. */
	e.mw.key = (MW_INDEX << 8) | 0x41;
	KUNIT_EXPECT_EQ(test, check(&e), -EBUSY);
	e.mw.key = 0;
	e.b.length = 0;
	KUNIT_EXPECT_EQ(test, softhca_mw_bind_check(&e.mw, &e.pd, &e.b, NULL),
			-EINVAL);
	/* C10-72: the binding QP's PD is the window's. */
	e.b.length = 0x200;
	KUNIT_EXPECT_EQ(test, softhca_mw_bind_check(&e.mw, &e.other_pd, &e.b,
						    &e.mr), -EINVAL);
}

/* A bound window of @type over [0x100, 0x300) of the MR, for QP 7. */
static void mw_env_bound(struct mw_env *e, enum ib_mw_type type)
{
	mw_env_init(e, type);
	e->mw.key = e->b.key;
	e->mw.mr = &e->mr;
	e->mw.addr = e->b.addr;
	e->mw.length = e->b.length;
	e->mw.access = IB_ACCESS_REMOTE_WRITE;
	e->mw.qpn = 7;
}

static void mw_remote_access(struct kunit *test)
{
	u64 a = MR_IOVA + 0x100;
	struct mw_env e;
	u32 k;

	mw_env_bound(&e, IB_MW_TYPE_1);
	k = e.mw.key;
	KUNIT_EXPECT_TRUE(test, softhca_mw_allows(&e.mw, k, &e.pd, 9,
						  IB_ACCESS_REMOTE_WRITE,
						  a, 0x200));
	/* Outside the window (inside the MR), another right, key, PD. */
	KUNIT_EXPECT_FALSE(test, softhca_mw_allows(&e.mw, k, &e.pd, 9,
						   IB_ACCESS_REMOTE_WRITE,
						   a, 0x201));
	KUNIT_EXPECT_FALSE(test, softhca_mw_allows(&e.mw, k, &e.pd, 9,
						   IB_ACCESS_REMOTE_WRITE,
						   a - 1, 1));
	KUNIT_EXPECT_FALSE(test, softhca_mw_allows(&e.mw, k, &e.pd, 9,
						   IB_ACCESS_REMOTE_READ,
						   a, 8));
	KUNIT_EXPECT_FALSE(test, softhca_mw_allows(&e.mw, k ^ 1, &e.pd, 9,
						   IB_ACCESS_REMOTE_WRITE,
						   a, 8));
	KUNIT_EXPECT_FALSE(test, softhca_mw_allows(&e.mw, k, &e.other_pd, 9,
						   IB_ACCESS_REMOTE_WRITE,
						   a, 8));
	KUNIT_EXPECT_FALSE(test, softhca_mw_allows(&e.mw, k, &e.pd, 9,
						   IB_ACCESS_REMOTE_WRITE,
						   U64_MAX - 3, 8));

	/* Type 2B: only through the QP it is bound to. */
	mw_env_bound(&e, IB_MW_TYPE_2);
	KUNIT_EXPECT_TRUE(test, softhca_mw_allows(&e.mw, k, &e.pd, 7,
						  IB_ACCESS_REMOTE_WRITE,
						  a, 8));
	KUNIT_EXPECT_FALSE(test, softhca_mw_allows(&e.mw, k, &e.pd, 9,
						   IB_ACCESS_REMOTE_WRITE,
						   a, 8));
	/* Unbound (invalidated): nothing, not even its last key. */
	e.mw.key = 0;
	e.mw.mr = NULL;
	KUNIT_EXPECT_FALSE(test, softhca_mw_allows(&e.mw, k, &e.pd, 7,
						   IB_ACCESS_REMOTE_WRITE,
						   a, 8));
	KUNIT_EXPECT_FALSE(test, softhca_mw_allows(&e.mw, 0, &e.pd, 7, 0,
						   a, 8));
}

/* The READ of mw_still_after_check(): 0x200 B from the window's start. */
static bool still(const struct mw_env *e, u32 key)
{
	return softhca_mw_still(&e->mw, key, &e->mr, 7, IB_ACCESS_REMOTE_READ,
				MR_IOVA + 0x100, 0x200);
}

/* A type 2B window bound as mw_env_bound() does, for remote read. */
static void mw_env_read(struct mw_env *e)
{
	mw_env_bound(e, IB_MW_TYPE_2);
	e->mw.access = IB_ACCESS_REMOTE_READ;
}

/*
 * A READ answered over time checks its window again before each batch
 * (softhca_mw_still(), wire_rc_resp.c): what still allows it, and each
 * change of the binding since the first check that must end it.
 */
static void mw_still_after_check(struct kunit *test)
{
	struct softhca_mr other;
	struct mw_env e;
	u32 k;

	mw_env_read(&e);
	k = e.mw.key;
	KUNIT_EXPECT_TRUE(test, still(&e, k));
	/* Bound again under the same key to another MR of the PD. */
	other = e.mr;
	e.mw.mr = &other;
	KUNIT_EXPECT_FALSE(test, still(&e, k));
	/* Moved off part of the range, the same MR and key. */
	e.mw.mr = &e.mr;
	e.mw.addr += 0x100;
	e.mw.length -= 0x100;
	KUNIT_EXPECT_FALSE(test, still(&e, k));
	/* Bound under another key (ibv_inc_rkey()), or invalidated. */
	mw_env_read(&e);
	e.mw.key = (MW_INDEX << 8) | 0x43;
	KUNIT_EXPECT_FALSE(test, still(&e, k));
	e.mw.key = 0;
	e.mw.mr = NULL;
	KUNIT_EXPECT_FALSE(test, still(&e, k));
	/* Bound again to another QP, or without remote read. */
	mw_env_read(&e);
	e.mw.qpn = 8;
	KUNIT_EXPECT_FALSE(test, still(&e, k));
	e.mw.qpn = 7;
	e.mw.access = IB_ACCESS_REMOTE_WRITE;
	KUNIT_EXPECT_FALSE(test, still(&e, k));
}

static void mw_key_space(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, softhca_key_is_mw((SOFTHCA_MR_INDEX_MAX << 8) |
						   0xff));
	KUNIT_EXPECT_TRUE(test, softhca_key_is_mw(SOFTHCA_MW_INDEX_MIN << 8));
	KUNIT_EXPECT_TRUE(test, softhca_key_is_mw(0xffffffff));
	KUNIT_EXPECT_FALSE(test, softhca_key_is_mw(0x100));
}

static struct kunit_case softhca_mw_cases[] = {
	KUNIT_CASE(mw_bind_rules),
	KUNIT_CASE(mw_bind_type2),
	KUNIT_CASE(mw_remote_access),
	KUNIT_CASE(mw_still_after_check),
	KUNIT_CASE(mw_key_space),
	{}
};

static struct kunit_suite softhca_mw_suite = {
	.name = "softhca_mw",
	.test_cases = softhca_mw_cases,
};

kunit_test_suite(softhca_mw_suite);
