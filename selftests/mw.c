// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory windows (TAP): ibv_alloc_mw(3), ibv_bind_mw(3) for type 1,
 * IBV_WR_BIND_MW / IBV_WR_LOCAL_INV / IBV_WR_SEND_WITH_INV for type 2B,
 * remote access through a window's rkey, the errors of each.
 *
 * The window is on the responder side B, bound by B's QP on a window MR
 * (MW_BIND access) over part of B's buffer; A's requester writes and
 * reads through the window's key.  SOFTHCA_DEV names A's device,
 * SOFTHCA_DEV2 (optional) B's.  Every test point makes its own QP pair:
 * an error moves a QP to the error state.
 */
#include <infiniband/verbs.h>

#include "pair.h"

#define WOFF	(1 << 20)	/* the window MR: B's buffer from here */
#define WLEN	(64 << 10)
#define MW_OFF	4096		/* the window: this far into the MR */
#define MW_LEN	8192
#define RW	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static struct ibv_mr *wmr_reg(int access)
{
	return ibv_reg_mr(B.pd, B.buf + WOFF, WLEN, access);
}

static struct ibv_mw_bind_info winfo(struct ibv_mr *mr, uint64_t off,
				     uint64_t len, unsigned int access)
{
	struct ibv_mw_bind_info bi = {
		.mr = mr, .addr = (uintptr_t)B.buf + WOFF + off, .length = len,
		.mw_access_flags = access,
	};

	/* An unbind names no MR and no range (ibv_bind_mw() checks). */
	if (!mr)
		bi.addr = 0;
	return bi;
}

/* The window MR (local write, MW_BIND), a window of @type, a QP pair. */
static int win_setup(struct ibv_mr **wmr, struct ibv_mw **mw,
		     enum ibv_mw_type type, struct pair *p)
{
	*wmr = wmr_reg(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	*mw = ibv_alloc_mw(B.pd, type);
	if (!*wmr || !*mw)
		return -1;
	return pair_make(p, IBV_QPT_RC, &RC_OPTS);
}

static void win_teardown(struct ibv_mr *wmr, struct ibv_mw *mw,
			 struct pair *p)
{
	pair_free(p);
	CHECK(!ibv_dealloc_mw(mw), "dealloc");
	CHECK(!ibv_dereg_mr(wmr), "dereg");
}

/*
 * The completion of the work request @wr_id on @cq: its status; -1 when
 * none came, it was another's, or it succeeded with an opcode other
 * than @op (-1: any opcode).
 */
static int done1(struct ibv_cq *cq, uint64_t wr_id, int op)
{
	struct ibv_wc wc;

	if (wait_wc(cq, &wc) != 1 || wc.wr_id != wr_id)
		return -1;
	if (op >= 0 && wc.status == IBV_WC_SUCCESS && (int)wc.opcode != op)
		return -1;
	return wc.status;
}

/* Post @wr on @qp; done1() of it on @cq (-1 as well when posting failed). */
static int post_done(struct ibv_qp *qp, struct ibv_cq *cq,
		     struct ibv_send_wr *wr, int op)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, wr, &bad) ? -1 : done1(cq, wr->wr_id, op);
}

/* ibv_bind_mw on @qp and its completion's status (-1: none, an error). */
static int bind1(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind_info bi)
{
	struct ibv_mw_bind b = { .wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = bi };

	return ibv_bind_mw(qp, mw, &b) ? -1 : done1(B.cq, 0xb1, IBV_WC_BIND_MW);
}

/* IBV_WR_BIND_MW of a type 2 window under @rkey; completion status. */
static int bind2(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey,
		 struct ibv_mw_bind_info bi)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xb2, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	};

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = bi;
	return post_done(qp, B.cq, &wr, IBV_WC_BIND_MW);
}

/* LOCAL_INV of @rkey on B's QP; completion status. */
static int local_inv(struct ibv_qp *qp, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 0x17, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey,
	};

	return post_done(qp, B.cq, &wr, IBV_WC_LOCAL_INV);
}

/*
 * RDMA @op of @len bytes between A's buffer at @aoff and the window MR's
 * bytes at @off (B's addresses), through @rkey, from @qp.  Return: the
 * requester's completion status, -1 for none.
 */
static int rdma1(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t rkey,
		 uint64_t aoff, uint64_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)A.buf + aoff, len, A.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x77, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};

	wr.wr.rdma.remote_addr = (uintptr_t)B.buf + WOFF + off;
	wr.wr.rdma.rkey = rkey;
	return post_done(qp, A.cq, &wr, -1);
}

TEST(alloc_dealloc_both_types)
{
	struct ibv_device_attr_ex da;
	struct ibv_mw *m1, *m2;

	REQUIRE(!ibv_query_device_ex(B.ctx, NULL, &da), "query_device_ex");
	CHECK(da.orig_attr.max_mw > 0, "max_mw %d", da.orig_attr.max_mw);
	CHECK(da.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW,
	      "MEM_WINDOW cap");
	CHECK(da.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
	      "MEM_WINDOW_TYPE_2B cap");
	m1 = ibv_alloc_mw(B.pd, IBV_MW_TYPE_1);
	m2 = ibv_alloc_mw(B.pd, IBV_MW_TYPE_2);
	REQUIRE(m1 && m2, "alloc_mw");
	CHECK(m1->type == IBV_MW_TYPE_1 && m2->type == IBV_MW_TYPE_2,
	      "types");
	CHECK(m1->rkey != m2->rkey && (m1->rkey >> 8) != (m2->rkey >> 8) &&
	      m1->rkey != B.mr->rkey, "distinct keys %x %x", m1->rkey,
	      m2->rkey);
	CHECK(!ibv_dealloc_mw(m1), "dealloc type 1");
	CHECK(!ibv_dealloc_mw(m2), "dealloc type 2");
	CHECK(!ibv_alloc_mw(B.pd, (enum ibv_mw_type)3), "type 3 refused");
}

TEST(type1_bind_write_read)
{
	struct ibv_mr *wmr;
	struct ibv_mw *mw;
	uint32_t old;
	struct pair p;

	REQUIRE(!win_setup(&wmr, &mw, IBV_MW_TYPE_1, &p),
		"window MR, window, pair");
	old = mw->rkey;
	CHECK(bind1(p.b, mw, winfo(wmr, MW_OFF, MW_LEN, RW)) ==
	      IBV_WC_SUCCESS, "bind");
	CHECK(mw->rkey != old && (mw->rkey >> 8) == (old >> 8),
	      "ibv_bind_mw gave a new key %x (was %x)", mw->rkey, old);
	/* WRITE the whole window, READ it back elsewhere, compare. */
	fill(A.buf, MW_LEN, 11);
	memset(A.buf + MW_LEN, 0, MW_LEN);
	memset(B.buf + WOFF, 0, WLEN);
	CHECK(rdma1(p.a, IBV_WR_RDMA_WRITE, mw->rkey, 0, MW_OFF, MW_LEN) ==
	      IBV_WC_SUCCESS, "write through the window");
	CHECK(!memcmp(B.buf + WOFF + MW_OFF, A.buf, MW_LEN), "written data");
	CHECK(B.buf[WOFF + MW_OFF - 1] == 0 &&
	      B.buf[WOFF + MW_OFF + MW_LEN] == 0, "nothing around it");
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, mw->rkey, MW_LEN, MW_OFF, MW_LEN) ==
	      IBV_WC_SUCCESS, "read through the window");
	CHECK(!memcmp(A.buf + MW_LEN, A.buf, MW_LEN), "read data");
	/* Binding again moves it: the old key is dead, the new one works. */
	old = mw->rkey;
	CHECK(bind1(p.b, mw, winfo(wmr, 0, 4096, RW)) == IBV_WC_SUCCESS,
	      "rebind");
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, mw->rkey, 0, 0, 4096) ==
	      IBV_WC_SUCCESS, "read through the moved window");
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, old, 0, 0, 64) ==
	      IBV_WC_REM_ACCESS_ERR, "the old key after a rebind");
	win_teardown(wmr, mw, &p);
}

/*
 * Run one sub-case of a test point even when an earlier one failed (a
 * REQUIRE returns at once once the point has failed).
 */
#define SUBCASE(call)							\
	do {								\
		int failed_before = tap_failed_now;			\
									\
		tap_failed_now = 0;					\
		call;							\
		tap_failed_now |= failed_before;			\
	} while (0)

/* One access beyond a bound type 1 window, or one it does not grant. */
static void outside(enum ibv_wr_opcode op, uint64_t off, uint32_t len,
		    unsigned int access)
{
	struct ibv_mr *wmr;
	struct ibv_mw *mw;
	struct pair p;

	REQUIRE(!win_setup(&wmr, &mw, IBV_MW_TYPE_1, &p),
		"window MR, window, pair");
	CHECK(bind1(p.b, mw, winfo(wmr, MW_OFF, MW_LEN, access)) ==
	      IBV_WC_SUCCESS, "bind");
	memset(B.buf + WOFF, 0, WLEN);
	fill(A.buf, len, 3);
	CHECK(rdma1(p.a, op, mw->rkey, 0, off, len) == IBV_WC_REM_ACCESS_ERR,
	      "access at %llu+%u refused", (unsigned long long)off, len);
	CHECK(!B.buf[WOFF + off], "nothing written");
	win_teardown(wmr, mw, &p);
}

TEST(outside_window_rem_access_err)
{
	/* Inside the MR, past the window's end; before its start. */
	SUBCASE(outside(IBV_WR_RDMA_WRITE, MW_OFF + MW_LEN - 100, 200, RW));
	SUBCASE(outside(IBV_WR_RDMA_READ, MW_OFF - 8, 16, RW));
	/* A right the window does not grant. */
	SUBCASE(outside(IBV_WR_RDMA_WRITE, MW_OFF, 64,
			IBV_ACCESS_REMOTE_READ));
}

/* A fetch-and-add of @add on the window MR's word at @off through @rkey. */
static int faa1(struct ibv_qp *qp, uint32_t rkey, uint64_t off, uint64_t add)
{
	struct ibv_sge sge = { (uintptr_t)A.buf, 8, A.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0xaa, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
	};

	wr.wr.atomic.remote_addr = (uintptr_t)B.buf + WOFF + off;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = add;
	return post_done(qp, A.cq, &wr, -1);
}

TEST(atomics_through_window)
{
	uint64_t *word = (uint64_t *)(B.buf + WOFF + MW_OFF);
	struct ibv_mr *wmr;
	struct ibv_mw *mw;
	struct pair p;

	REQUIRE(!win_setup(&wmr, &mw, IBV_MW_TYPE_1, &p),
		"window MR, window, pair");
	CHECK(bind1(p.b, mw, winfo(wmr, MW_OFF, 64,
				   IBV_ACCESS_REMOTE_ATOMIC)) ==
	      IBV_WC_SUCCESS, "bind an atomic window");
	*word = 40;
	memset(A.buf, 0xff, 8);
	CHECK(faa1(p.a, mw->rkey, MW_OFF, 2) == IBV_WC_SUCCESS, "FAA");
	CHECK(*word == 42 && *(uint64_t *)A.buf == 40,
	      "word %llu, fetched %llu", (unsigned long long)*word,
	      (unsigned long long)*(uint64_t *)A.buf);
	/* The last word of the window, then the first word past it. */
	CHECK(faa1(p.a, mw->rkey, MW_OFF + 56, 1) == IBV_WC_SUCCESS,
	      "FAA on the window's last word");
	CHECK(faa1(p.a, mw->rkey, MW_OFF + 64, 1) == IBV_WC_REM_ACCESS_ERR,
	      "FAA past the window");
	win_teardown(wmr, mw, &p);
	/* A window without the atomic right refuses it. */
	REQUIRE(!win_setup(&wmr, &mw, IBV_MW_TYPE_1, &p),
		"window MR, window, pair 2");
	CHECK(bind1(p.b, mw, winfo(wmr, MW_OFF, 64, RW)) == IBV_WC_SUCCESS,
	      "bind a read/write window");
	CHECK(faa1(p.a, mw->rkey, MW_OFF, 1) == IBV_WC_REM_ACCESS_ERR,
	      "FAA without the right");
	CHECK(*word == 42, "word untouched: %llu", (unsigned long long)*word);
	win_teardown(wmr, mw, &p);
}

TEST(type2_bind_use_local_inv)
{
	struct ibv_mr *wmr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t key;

	REQUIRE(!win_setup(&wmr, &mw, IBV_MW_TYPE_2, &p),
		"window MR, window, pair");
	key = ibv_inc_rkey(mw->rkey);
	CHECK(bind2(p.b, mw, key, winfo(wmr, MW_OFF, MW_LEN, RW)) ==
	      IBV_WC_SUCCESS, "bind");
	fill(A.buf, 512, 5);
	CHECK(rdma1(p.a, IBV_WR_RDMA_WRITE, key, 0, MW_OFF + 100, 512) ==
	      IBV_WC_SUCCESS, "write through the window");
	CHECK(!memcmp(B.buf + WOFF + MW_OFF + 100, A.buf, 512), "data");
	CHECK(local_inv(p.b, key) == IBV_WC_SUCCESS, "local invalidate");
	CHECK(rdma1(p.a, IBV_WR_RDMA_WRITE, key, 0, MW_OFF, 8) ==
	      IBV_WC_REM_ACCESS_ERR, "the stale key after LOCAL_INV");
	pair_free(&p);
	/* Free again: it binds again under a new key byte. */
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair 2");
	key = ibv_inc_rkey(key);
	CHECK(bind2(p.b, mw, key, winfo(wmr, 0, 64, RW)) == IBV_WC_SUCCESS,
	      "bind after invalidation");
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, key, 0, 0, 64) == IBV_WC_SUCCESS,
	      "read through it");
	CHECK(bind2(p.b, mw, ibv_inc_rkey(key), winfo(wmr, 0, 64, RW)) ==
	      IBV_WC_MW_BIND_ERR, "a bound type 2 window does not bind");
	CHECK(qp_state(p.b) == IBV_QPS_ERR, "binder in error");
	win_teardown(wmr, mw, &p);
}

TEST(send_with_inv)
{
	struct ibv_mr *wmr;
	struct ibv_mw *mw;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = 0x51, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	struct pair p;
	uint32_t key;

	REQUIRE(!win_setup(&wmr, &mw, IBV_MW_TYPE_2, &p),
		"window MR, window, pair");
	key = ibv_inc_rkey(mw->rkey);
	REQUIRE(bind2(p.b, mw, key, winfo(wmr, 0, MW_LEN, RW)) ==
		IBV_WC_SUCCESS, "bind");
	CHECK(rdma1(p.a, IBV_WR_RDMA_WRITE, key, 0, 0, 64) == IBV_WC_SUCCESS,
	      "write before");
	REQUIRE(!post_recv(&p, 0x52, 0, 256), "post_recv");
	sge = (struct ibv_sge){ (uintptr_t)A.buf, 100, A.mr->lkey };
	wr.invalidate_rkey = key;
	REQUIRE(!ibv_post_send(p.a, &wr, &bad), "post SEND_WITH_INV");
	CHECK(wait_wc(A.cq, &wc) == 1 && wc.wr_id == 0x51 &&
	      wc.status == IBV_WC_SUCCESS, "send completion %d", wc.status);
	REQUIRE(wait_wc(B.cq, &wc) == 1, "receive completion");
	CHECK(wc.wr_id == 0x52 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_RECV && wc.byte_len == 100,
	      "receive status %d opcode %d len %u", wc.status, wc.opcode,
	      wc.byte_len);
	CHECK((wc.wc_flags & IBV_WC_WITH_INV) &&
	      !(wc.wc_flags & IBV_WC_WITH_IMM), "wc_flags %x", wc.wc_flags);
	CHECK(wc.invalidated_rkey == key, "invalidated_rkey %x (key %x)",
	      wc.invalidated_rkey, key);
	CHECK(rdma1(p.a, IBV_WR_RDMA_WRITE, key, 0, 0, 64) ==
	      IBV_WC_REM_ACCESS_ERR, "the key after SEND_WITH_INV");
	win_teardown(wmr, mw, &p);
}

TEST(type2b_other_qp_rejected)
{
	struct ibv_mr *wmr = wmr_reg(IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(B.pd, IBV_MW_TYPE_2);
	struct pair p, q;
	uint32_t key;

	REQUIRE(wmr && mw, "window MR and window");
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS) &&
		!pair_make(&q, IBV_QPT_RC, &RC_OPTS), "pairs");
	key = ibv_inc_rkey(mw->rkey);
	CHECK(bind2(p.b, mw, key, winfo(wmr, 0, MW_LEN, RW)) ==
	      IBV_WC_SUCCESS, "bind on p.b");
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, key, 0, 0, 64) == IBV_WC_SUCCESS,
	      "through the QP it is bound to");
	CHECK(rdma1(q.a, IBV_WR_RDMA_READ, key, 0, 0, 64) ==
	      IBV_WC_REM_ACCESS_ERR, "through another QP (same PD)");
	pair_free(&q);
	win_teardown(wmr, mw, &p);
}

/* A type 1 bind that must fail: MW_BIND_ERR, the binder in error. */
static void bind_fails(int mr_access, uint64_t off, uint64_t len,
		       unsigned int access, const char *what)
{
	struct ibv_mr *wmr = wmr_reg(mr_access);
	struct ibv_mw *mw = ibv_alloc_mw(B.pd, IBV_MW_TYPE_1);
	struct pair p;

	REQUIRE(wmr && mw, "%s: window MR and window", what);
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair");
	CHECK(bind1(p.b, mw, winfo(wmr, off, len, access)) ==
	      IBV_WC_MW_BIND_ERR, "%s: MW_BIND_ERR", what);
	CHECK(qp_state(p.b) == IBV_QPS_ERR, "%s: binder in error", what);
	CHECK(!ibv_dereg_mr(wmr), "%s: dereg (nothing bound)", what);
	pair_free(&p);
	CHECK(!ibv_dealloc_mw(mw), "dealloc");
}

TEST(bind_errors)
{
	SUBCASE(bind_fails(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			   0, 64, RW, "no MW_BIND on the MR"));
	SUBCASE(bind_fails(IBV_ACCESS_MW_BIND, 0, 64, IBV_ACCESS_REMOTE_WRITE,
			   "remote write without local write on the MR"));
	SUBCASE(bind_fails(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
			   WLEN - 64, 128, RW, "beyond the MR"));
	/* The control: the same MR rights bind a read-only window. */
	{
		struct ibv_mr *wmr = wmr_reg(IBV_ACCESS_MW_BIND);
		struct ibv_mw *mw = ibv_alloc_mw(B.pd, IBV_MW_TYPE_1);
		struct pair p;

		REQUIRE(wmr && mw && !pair_make(&p, IBV_QPT_RC, &RC_OPTS),
			"control setup");
		CHECK(bind1(p.b, mw, winfo(wmr, 0, 64,
					   IBV_ACCESS_REMOTE_READ)) ==
		      IBV_WC_SUCCESS, "read-only window on a MW_BIND MR");
		pair_free(&p);
		CHECK(!ibv_dealloc_mw(mw) && !ibv_dereg_mr(wmr), "cleanup");
	}
}

TEST(type1_local_inv_refused)
{
	struct ibv_mr *wmr;
	struct ibv_mw *mw;
	struct pair p;
	int st;

	REQUIRE(!win_setup(&wmr, &mw, IBV_MW_TYPE_1, &p),
		"window MR, window, pair");
	CHECK(bind1(p.b, mw, winfo(wmr, 0, 64, RW)) == IBV_WC_SUCCESS, "bind");
	st = local_inv(p.b, mw->rkey);
	CHECK(st > 0, "LOCAL_INV of a type 1 window fails (status %d)", st);
	CHECK(qp_state(p.b) == IBV_QPS_ERR, "the invalidating QP in error");
	pair_free(&p);
	/* Still bound: it answers any QP of its PD, and keeps its MR. */
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair 2");
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, mw->rkey, 0, 0, 64) ==
	      IBV_WC_SUCCESS, "still bound");
	CHECK(ibv_dereg_mr(wmr) == EBUSY, "its MR still busy");
	win_teardown(wmr, mw, &p);
}

/*
 * The window MR with two windows bound over it by @p's responder QP: a
 * type 1 over [0, 64), a type 2 over [64, 128) under *@k2.
 */
static int two_windows(struct ibv_mr **wmr, struct ibv_mw **m1,
		       struct ibv_mw **m2, uint32_t *k2, struct pair *p)
{
	if (win_setup(wmr, m1, IBV_MW_TYPE_1, p))
		return -1;
	*m2 = ibv_alloc_mw(B.pd, IBV_MW_TYPE_2);
	if (!*m2)
		return -1;
	*k2 = ibv_inc_rkey((*m2)->rkey);
	if (bind1(p->b, *m1, winfo(*wmr, 0, 64, RW)) != IBV_WC_SUCCESS)
		return -1;
	return bind2(p->b, *m2, *k2, winfo(*wmr, 64, 64, RW));
}

TEST(dereg_mr_with_bound_window_ebusy)
{
	struct ibv_mr *wmr;
	struct ibv_mw *m1, *m2;
	struct pair p;
	uint32_t k2;

	REQUIRE(!two_windows(&wmr, &m1, &m2, &k2, &p), "two windows bound");
	CHECK(ibv_dereg_mr(wmr) == EBUSY, "dereg with two windows bound");
	/* Unbind type 1 (length 0, no MR): still one bound. */
	CHECK(bind1(p.b, m1, winfo(NULL, 0, 0, 0)) == IBV_WC_SUCCESS,
	      "unbind type 1");
	CHECK(ibv_dereg_mr(wmr) == EBUSY, "dereg with one window bound");
	CHECK(local_inv(p.b, k2) == IBV_WC_SUCCESS, "invalidate type 2");
	CHECK(ibv_dereg_mr(wmr) == 0, "dereg once nothing is bound");
	pair_free(&p);
	CHECK(!ibv_dealloc_mw(m1) && !ibv_dealloc_mw(m2), "dealloc");
}

TEST(dealloc_bound_window)
{
	struct ibv_mr *wmr;
	struct ibv_mw *m1, *m2;
	uint32_t k1, k2;
	struct pair p;

	REQUIRE(!two_windows(&wmr, &m1, &m2, &k2, &p), "two windows bound");
	k1 = m1->rkey;
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, k1, 0, 0, 64) == IBV_WC_SUCCESS,
	      "type 1 answers");
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, k2, 0, 64, 64) == IBV_WC_SUCCESS,
	      "type 2 answers");
	CHECK(!ibv_dealloc_mw(m2), "dealloc bound type 2");
	CHECK(!ibv_dealloc_mw(m1), "dealloc bound type 1");
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, k1, 0, 0, 64) ==
	      IBV_WC_REM_ACCESS_ERR, "type 1 key after dealloc");
	pair_free(&p);
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair 2");
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, k2, 0, 64, 64) ==
	      IBV_WC_REM_ACCESS_ERR, "type 2 key after dealloc");
	pair_free(&p);
	CHECK(!ibv_dereg_mr(wmr), "dereg: the windows let go of the MR");
}

TEST(type2_freed_with_its_qp)
{
	struct ibv_mr *wmr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t key;

	REQUIRE(!win_setup(&wmr, &mw, IBV_MW_TYPE_2, &p),
		"window MR, window, pair");
	key = ibv_inc_rkey(mw->rkey);
	CHECK(bind2(p.b, mw, key, winfo(wmr, 0, 64, RW)) == IBV_WC_SUCCESS,
	      "bind");
	CHECK(ibv_dereg_mr(wmr) == EBUSY, "dereg while bound");
	/* Destroying the QP it is bound to invalidates it. */
	pair_free(&p);
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair 2");
	key = ibv_inc_rkey(key);
	CHECK(bind2(p.b, mw, key, winfo(wmr, 64, 64, RW)) == IBV_WC_SUCCESS,
	      "free again: binds on a new QP");
	CHECK(rdma1(p.a, IBV_WR_RDMA_READ, key, 0, 64, 64) == IBV_WC_SUCCESS,
	      "and answers it");
	pair_free(&p);
	CHECK(!ibv_dereg_mr(wmr), "dereg once its QPs are gone");
	CHECK(!ibv_dealloc_mw(mw), "dealloc");
}

int main(void)
{
	return pair_main();
}
