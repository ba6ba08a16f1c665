// SPDX-License-Identifier: GPL-2.0-only
/*
 * A seeded verbs fuzzer aimed at softhca's kernel side (fuzz.sh runs it).
 *
 *   fuzz                FUZZ_WORKERS (3) processes make random verbs calls
 *                       on SOFTHCA_DEV and SOFTHCA_DEV2 for FUZZ_SECS (60) s;
 *                       they are killed with SIGKILL at random times and
 *                       replaced, and the second device's link is deleted
 *                       and added again (FUZZ_NETDEV2, default sv1) now and
 *                       then
 *   fuzz replay SEED N  one worker alone: the first N operations of SEED,
 *                       each printed with its arguments and outcome
 *
 * FUZZ_SEED (default: from the clock; printed first) decides everything
 * random.  Worker w of generation g runs with seed mix(FUZZ_SEED, w, g);
 * its n-th operation, picked from the table below, draws its arguments
 * from a PRNG seeded with (that seed, n) alone, so the sequence of
 * operations is a pure function of the worker's seed, whatever earlier
 * calls returned (the arguments name slots of the worker's object tables,
 * which those calls filled or not).  Kill and link times come from
 * FUZZ_SEED too.
 *
 * Arguments are valid and invalid: objects of the other device's context,
 * numbers other workers published on the shared board (QPNs, SRQNs,
 * rkeys, lkeys), stale and random handles (raw commands: the library's
 * structs of destroyed objects are gone), sizes at the edges, memory that
 * is not there, random masks and states, random WQEs written straight
 * into the rings and random bytes over ring headers and slots.  The
 * library only ever gets live objects: the target is the kernel.
 *
 * Failures print the run's seed, the worker's seed and the operation's
 * index with the last NRECENT operations: a worker killed by a signal we
 * did not send or exiting non-zero (a sanitizer report), EIO from a
 * device whose link was not deleted, EFAULT from a call whose pointers
 * were all valid, a call with valid arguments failing, no progress for
 * 30 s, a link delete or add failing or hanging.  The summary is printed
 * as NOTE lines; FUZZ_OUT (/tmp/fuzz-outcomes.txt) gets the count of each
 * (operation, errno) outcome and of each completion status polled.
 *
 * This file holds the verbs-level operations, their table, a worker's
 * loop and main(); fuzz.h the harness (PRNG, shared memory, raw
 * commands, the parent), fuzz_worker.h a worker's objects and argument
 * builders, fuzz_raw.h the operations below the library.
 */
#include "fuzz.h"
#include "util.h"
#include "../lib/internal.h"
#include "fuzz_worker.h"
#include "fuzz_raw.h"

/* ---- the operations: each returns 0, an errno or NOOP ---- */
static int op_open_dev(struct op *o)
{
	struct ibv_context *c;
	uint64_t req[1], resp[1];

	if (!o->d->ctx) {
		DESC("open %s", devname[o->dev]);
		return dev_open(o->dev);
	}
	DESC("another context on %s, a PD in it, closed", devname[o->dev]);
	errno = ENODEV;
	c = open_by_name(devname[o->dev]);
	if (!c)
		return errno;
	req[0] = (uintptr_t)resp;
	raw_cmd(c->cmd_fd, IB_USER_VERBS_CMD_ALLOC_PD, req, sizeof(req), 4);
	return ibv_close_device(c);
}

static int op_close_dev(struct op *o)
{
	DESC("close %s and everything in it", devname[o->dev]);
	dev_close(o->d);
	return 0;
}

static int op_alloc_pd(struct op *o)
{
	int k = EMPTY(o->d, pd);

	if (k < 0)
		return NOOP;
	DESC("pd[%d]", k);
	o->valid = 1;
	o->d->pd[k] = ibv_alloc_pd(o->d->ctx);
	return o->d->pd[k] ? 0 : errno;
}

/* Destroy a live object of kind o->arg through the library. */
static int op_destroy(struct op *o)
{
	int n, k, err;
	void **s = slots(o->d, o->arg, &n);
	uint32_t h;

	k = pick(o, s, (size_t)n, 1);
	if (k < 0)
		return NOOP;
	h = lib_handle(o->arg, s[k]);
	DESC("[%d] handle %u", k, h);
	/* Nothing can hold on to a QP, AH or MR: those must go. */
	o->valid = o->arg == K_QP || o->arg == K_AH || o->arg == K_MR;
	err = lib_destroy(o->arg, s[k]);
	if (!err)
		forget(o->d, &s[k], h);
	if (err == EBUSY && !trace)
		o->valid = 0;	/* the side thread's command holds it now */
	return err;
}

static int op_create_cq(struct op *o)
{
	int k = EMPTY(o->d, cq), c = LIVE(o->d, ch);
	int cqe = P(75) ? 1 + (int)R(P(80) ? 64 : 4096) : (int)WILD();
	int vec = P(90) ? 0 : (int)WILD();
	struct ibv_comp_channel *ch = c >= 0 && P(50) ? o->d->ch[c] : NULL;

	if (k < 0)
		return NOOP;
	DESC("[%d] cqe %d channel %d vector %d", k, cqe, ch ? c : -1, vec);
	o->valid = cqe >= 1 && cqe <= 4096 && !vec;
	o->d->cq[k] = ibv_create_cq(o->d->ctx, cqe, NULL, ch, vec);
	return o->d->cq[k] ? 0 : errno;
}

static int op_resize_cq(struct op *o)
{
	int k = LIVE(o->d, cq), cqe = P(70) ? 1 + (int)R(1024) : (int)WILD();

	if (k < 0)
		return NOOP;
	DESC("[%d] to %d", k, cqe);
	return ibv_resize_cq(o->d->cq[k], cqe);
}

static int op_poll_cq(struct op *o)
{
	struct ibv_wc wc[32];
	int k = LIVE(o->d, cq), n = 1 + (int)R(32), got, i;

	if (k < 0)
		return NOOP;
	DESC("[%d] up to %d", k, n);
	o->valid = 1;
	got = ibv_poll_cq(o->d->cq[k], n, wc);
	if (got < 0 || got > n)
		return ERANGE;
	ADD(S->wc, (uint64_t)got);
	for (i = 0; i < got; i++)	/* the status byte may be scribbled */
		ADD(S->wc_status[wc[i].status & 31], 1);
	return 0;
}

static int op_notify_cq(struct op *o)
{
	int k = LIVE(o->d, cq), sol = (int)R(2);

	if (k < 0)
		return NOOP;
	DESC("[%d] solicited %d", k, sol);
	return ibv_req_notify_cq(o->d->cq[k], sol);
}

/*
 * A completion event and an async event, if any, read without blocking
 * and acknowledged; an async event only when it names a live object of
 * ours (a raw command's object has no struct to count it on).
 */
static int op_get_events(struct op *o)
{
	struct ibv_async_event ev;
	struct ibv_cq *cq;
	void *cctx;
	int c = LIVE(o->d, ch), err = EAGAIN, kind = -1;

	DESC("channel %d, async fd", c);
	if (c >= 0 && !ibv_get_cq_event(o->d->ch[c], &cq, &cctx)) {
		if (!lib_holds(o->d, K_CQ, cq, 0))
			o->broken = "a completion event for a CQ that is not ours";
		ibv_ack_cq_events(cq, 1);
		err = 0;
	}
	if (ibv_get_async_event(o->d->ctx, &ev))
		return err == EAGAIN ? errno : err;
	switch (ev.event_type) {
	case IBV_EVENT_CQ_ERR:
		kind = K_CQ;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		kind = K_SRQ;
		break;
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR: case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
		kind = K_QP;
		break;
	default:
		break;
	}
	if (kind < 0 || lib_holds(o->d, kind, ev.element.qp, 0))
		ibv_ack_async_event(&ev);
	return 0;
}

static int op_create_ch(struct op *o)
{
	int k = EMPTY(o->d, ch);

	if (k < 0)
		return NOOP;
	DESC("[%d]", k);
	o->valid = 1;
	o->d->ch[k] = ibv_create_comp_channel(o->d->ctx);
	if (!o->d->ch[k])
		return errno;
	return fcntl(o->d->ch[k]->fd, F_SETFL, O_NONBLOCK) ? errno : 0;
}

static int op_reg_mr(struct op *o)
{
	uint64_t addr, len, iova;
	int good = pick_mem(o, &addr, &len);
	int access = P(75) ? IBV_ACCESS_LOCAL_WRITE | (int)R(8) << 1 : (int)WILD();
	int k = EMPTY(o->d, mr), p = LIVE(o->d, pd);
	struct ibv_mr *mr;

	iova = P(85) ? addr : WILD();
	if (k < 0 || p < 0)
		return NOOP;
	DESC("[%d] pd %d %#llx+%#llx iova %#llx access %#x", k, p, ULL(addr),
	     ULL(len), ULL(iova), access);
	o->valid = good && iova == addr && (access & ~0xf) == 0 && (access & 1);
	mr = ibv_reg_mr_iova2(o->d->pd[p], (void *)(uintptr_t)addr, len, iova,
			      (unsigned int)access);
	if (!mr)
		return errno;
	o->d->mr[k] = mr;
	publish_mr(o, o->dev, mr);
	return 0;
}

static int op_rereg_mr(struct op *o)
{
	struct dev *x = some_dev(o, 10);
	uint64_t addr, len;
	int good = pick_mem(o, &addr, &len);
	int flags = P(85) ? 1 + (int)R(7) : (int)WILD();
	int access = P(75) ? IBV_ACCESS_LOCAL_WRITE | (int)R(8) << 1 : (int)WILD();
	int k = LIVE(o->d, mr), p = LIVE(x, pd);

	if (k < 0 || (p < 0 && (flags & IBV_REREG_MR_CHANGE_PD)))
		return NOOP;
	DESC("[%d] flags %#x pd %d %#llx+%#llx access %#x", k, flags, p,
	     ULL(addr), ULL(len), access);
	/* The MR's own range may be gone (a ring, a destroyed mapping). */
	if (!in_arena(o->d->mr[k]) || ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && !good))
		o->badptr = 1;
	o->valid = flags == IBV_REREG_MR_CHANGE_ACCESS && (access & ~0xf) == 0 &&
		   (access & IBV_ACCESS_LOCAL_WRITE) && !o->badptr;
	errno = 0;
	if (ibv_rereg_mr(o->d->mr[k], flags, p >= 0 ? x->pd[p] : NULL,
			 (void *)(uintptr_t)addr, len, access))
		return errno ? errno : EINVAL;
	publish_mr(o, o->dev, o->d->mr[k]);
	return 0;
}

static int op_create_srq(struct op *o)
{
	struct dev *x = some_dev(o, 10);
	int k = EMPTY(o->d, srq), p = LIVE(o->d, pd), xr = LIVE(o->d, xrcd);
	int c = LIVE(x, cq), xrc = P(35) && xr >= 0 && c >= 0;
	struct ibv_srq_init_attr_ex a;
	struct ibv_srq *srq;
	uint32_t srqn;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = P(75) ? 1 + R(256) : (uint32_t)WILD();
	a.attr.max_sge = P(75) ? 1 + R(8) : (uint32_t)WILD();
	a.attr.srq_limit = P(80) ? 0 : (uint32_t)WILD();
	if (k < 0 || p < 0)
		return NOOP;
	a.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	a.pd = o->d->pd[p];
	if (xrc) {
		a.comp_mask |= IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			       IBV_SRQ_INIT_ATTR_CQ;
		a.srq_type = IBV_SRQT_XRC;
		a.xrcd = o->d->xrcd[xr];
		a.cq = x->cq[c];
	}
	DESC("[%d] %s max_wr %u max_sge %u limit %u", k, xrc ? "xrc" : "basic",
	     a.attr.max_wr, a.attr.max_sge, a.attr.srq_limit);
	o->valid = !xrc && a.attr.max_wr - 1 < 256 && a.attr.max_sge - 1 < 8 &&
		   !a.attr.srq_limit;
	srq = ibv_create_srq_ex(o->d->ctx, &a);
	if (!srq)
		return errno;
	o->d->srq[k] = srq;
	if (xrc && !ibv_get_srq_num(srq, &srqn))
		board_put(&o->r, BK_SRQN, o->dev, srqn, (uint32_t)xr, 0, 0);
	return 0;
}

static int op_modify_srq(struct op *o)
{
	int k = LIVE(o->d, srq), mask = P(80) ? 1 + (int)R(3) : (int)WILD();
	struct ibv_srq_attr a = { 0 };

	a.max_wr = P(50) ? R(512) : (uint32_t)WILD();
	a.srq_limit = P(70) ? R(64) : (uint32_t)WILD();
	if (k < 0)
		return NOOP;
	DESC("[%d] mask %#x max_wr %u limit %u", k, mask, a.max_wr, a.srq_limit);
	return ibv_modify_srq(o->d->srq[k], &a, mask);
}

static int op_query_srq(struct op *o)
{
	struct ibv_srq_attr a;
	int k = LIVE(o->d, srq);

	if (k < 0)
		return NOOP;
	DESC("[%d]", k);
	o->valid = 1;
	return ibv_query_srq(o->d->srq[k], &a);
}

static int op_post_srq_recv(struct op *o)
{
	int k = LIVE(o->d, srq);

	if (k < 0)
		return NOOP;
	return post_recvs(o, NULL, o->d->srq[k], to_shca_srq(o->d->srq[k])->rq.max_sge);
}

static int op_create_qp(struct op *o)
{
	struct dev *x = some_dev(o, 10);	/* where the CQs and SRQ come from */
	int k = EMPTY(o->d, qp), p = LIVE(o->d, pd), c1 = LIVE(x, cq);
	int c2 = LIVE(x, cq), s = LIVE(x, srq);
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.qp_type = P(95) ? qp_types[R(ARRAY_SIZE(qp_types))] : (enum ibv_qp_type)R(256);
	a.cap.max_send_wr = cap(o, 256);
	a.cap.max_recv_wr = cap(o, 256);
	a.cap.max_send_sge = cap(o, 8);
	a.cap.max_recv_sge = cap(o, 8);
	a.cap.max_inline_data = cap(o, 256);
	a.sq_sig_all = (int)R(2);
	if (k < 0 || p < 0 || c1 < 0 || c2 < 0)
		return NOOP;
	a.send_cq = x->cq[c1];
	a.recv_cq = x->cq[c2];
	if (s >= 0 && P(30))
		a.srq = x->srq[s];
	DESC("[%d] type %d pd %d cq %d/%d srq %d on %d, wr %u/%u sge %u/%u inline %u",
	     k, a.qp_type, p, c1, c2, a.srq ? s : -1, (int)(x - D),
	     a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge,
	     a.cap.max_recv_sge, a.cap.max_inline_data);
	o->valid = x == o->d && a.qp_type >= IBV_QPT_RC && a.qp_type <= IBV_QPT_UD &&
		   a.cap.max_send_wr - 1 < 256 && a.cap.max_recv_wr - 1 < 256 &&
		   a.cap.max_send_sge - 1 < 8 && a.cap.max_recv_sge - 1 < 8 &&
		   a.cap.max_inline_data <= 256 &&
		   (!a.srq || to_shca_srq(a.srq)->type == IBV_SRQT_BASIC);
	qp = ibv_create_qp(o->d->pd[p], &a);
	if (!qp)
		return errno;
	o->d->qp[k] = qp;
	board_put(&o->r, BK_QP + qp->qp_type, o->dev, qp->qp_num, 0, 0, 0);
	return 0;
}

/* An XRC receive QP (XRC_TGT) in one of our domains. */
static int op_create_tgt(struct op *o)
{
	int k = EMPTY(o->d, qp), x = LIVE(o->d, xrcd);
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	if (P(10))
		a.cap.max_recv_wr = (uint32_t)WILD();
	if (k < 0 || x < 0)
		return NOOP;
	a.xrcd = o->d->xrcd[x];
	DESC("[%d] xrcd %d recv_wr %u", k, x, a.cap.max_recv_wr);
	qp = ibv_create_qp_ex(o->d->ctx, &a);
	if (!qp)
		return errno;
	o->d->qp[k] = qp;
	board_put(&o->r, BK_QP + IBV_QPT_XRC_RECV, o->dev, qp->qp_num, (uint32_t)x, 0, 0);
	return 0;
}

/* Another process's XRC_TGT (or any number), opened in a domain of ours. */
static int op_open_qp(struct op *o)
{
	struct ibv_qp_open_attr a;
	struct bent b;
	int k = EMPTY(o->d, qp), x = LIVE(o->d, xrcd);
	int have = board_get(&o->r, BK_QP + IBV_QPT_XRC_RECV, o->dev, &b);
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	a.qp_type = IBV_QPT_XRC_RECV;
	a.qp_num = have && P(90) ? b.num : (uint32_t)W64();
	if (k < 0 || x < 0)
		return NOOP;
	if (have && o->d->xrcd[b.aux & 1])
		x = (int)(b.aux & 1);
	a.xrcd = o->d->xrcd[x];
	DESC("[%d] qpn %#x xrcd %d", k, a.qp_num, x);
	qp = ibv_open_qp(o->d->ctx, &a);
	if (!qp)
		return errno;
	o->d->qp[k] = qp;
	return 0;
}

/* One or two steps of a QP towards one of ours, a published QPN or any. */
static int op_connect(struct op *o)
{
	struct bent b;
	int k = LIVE(o->d, qp), j = LIVE(o->d, qp), dev = o->dev, t, err;
	uint32_t dqpn = (uint32_t)W64() & 0xffffff;

	if (k < 0)
		return NOOP;
	t = o->d->qp[k]->qp_type;
	if (P(40))
		dqpn = o->d->qp[j]->qp_num;
	else if (P(85) && board_get(&o->r, BK_QP + (t == IBV_QPT_XRC_SEND ?
				    IBV_QPT_XRC_RECV : t), -1, &b)) {
		dqpn = b.num;
		dev = (int)(b.dev & 1);
	}
	DESC("[%d] towards qpn %#x on %s", k, dqpn, devname[dev]);
	err = step_qp(o, o->d->qp[k], dqpn, &S->gid[dev]);
	if (!err && P(50))
		err = step_qp(o, o->d->qp[k], dqpn, &S->gid[dev]);
	return err;
}

/*
 * Two new RC or UC QPs (on one device or both) walked to RTS facing each
 * other, receives posted on the second: traffic that can succeed.
 */
static int op_make_pair(struct op *o)
{
	struct dev *x = some_dev(o, 40);
	int c = LIVE(o->d, cq), e = LIVE(x, cq), p = LIVE(o->d, pd), q = LIVE(x, pd);
	int i = EMPTY(o->d, qp), j, n, err = 0;
	struct ibv_qp_init_attr a;
	struct ibv_qp *qa, *qb;

	memset(&a, 0, sizeof(a));
	a.qp_type = P(70) ? IBV_QPT_RC : IBV_QPT_UC;
	a.cap = (struct ibv_qp_cap){ 64, 64, 4, 4, 64 };
	if (i < 0 || c < 0 || e < 0 || p < 0 || q < 0)
		return NOOP;
	DESC("type %d, cq %d pd %d and cq %d pd %d on %s", a.qp_type, c, p, e, q,
	     devname[x - D]);
	o->valid = 1;
	a.send_cq = a.recv_cq = o->d->cq[c];
	qa = o->d->qp[i] = ibv_create_qp(o->d->pd[p], &a);
	j = EMPTY(x, qp);
	if (!qa || j < 0)
		return qa ? 0 : errno;
	a.send_cq = a.recv_cq = x->cq[e];
	qb = x->qp[j] = ibv_create_qp(x->pd[q], &a);
	if (!qb)
		return errno;
	board_put(&o->r, BK_QP + a.qp_type, o->dev, qa->qp_num, 0, 0, 0);
	board_put(&o->r, BK_QP + a.qp_type, (int)(x - D), qb->qp_num, 0, 0, 0);
	for (n = 0; n < 3 && !err; n++) {	/* step_qp() judges each step */
		err = step_qp(o, qa, qb->qp_num, &x->gid);
		if (!err)
			err = step_qp(o, qb, qa->qp_num, &o->d->gid);
	}
	if (err)
		return err;
	o->valid = 0;
	return post_recvs(o, qb, NULL, 4);
}

static int op_modify_qp(struct op *o)
{
	struct ibv_qp_attr a;
	int k = LIVE(o->d, qp), mask = P(50) ? (int)R(1 << 21) : (int)WILD();

	fill_random(o, &a, sizeof(a));
	a.qp_state = (enum ibv_qp_state)R(P(90) ? 7 : 256);
	a.cur_qp_state = (enum ibv_qp_state)R(8);
	if (P(80))
		a.port_num = a.ah_attr.port_num = 1;
	if (P(50))
		a.ah_attr.grh.dgid = S->gid[R(2)];
	if (k < 0)
		return NOOP;
	DESC("[%d] mask %#x state %d", k, mask, a.qp_state);
	return ibv_modify_qp(o->d->qp[k], &a, mask);
}

static int op_query_qp(struct op *o)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int k = LIVE(o->d, qp), mask = P(80) ? (int)R(1 << 21) : (int)WILD();

	if (k < 0)
		return NOOP;
	DESC("[%d] mask %#x", k, mask);
	o->valid = mask >= 0 && mask < 1 << 21;
	return ibv_query_qp(o->d->qp[k], &a, mask, &ia);
}

static int op_post_send(struct op *o)
{
	struct dev *x = some_dev(o, 10);	/* where the AH comes from */
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge sge[4][MAXSGE];
	int k = LIVE(o->d, qp), a = LIVE(x, ah), n = 1 + (int)R(4), i;

	if (k < 0)
		return NOOP;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		rand_send(o, o->d->qp[k], &wr[i], sge[i], a >= 0 ? x->ah[a] : NULL);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	DESC("[%d] %d WRs, the first opcode %d flags %#x %d SGEs", k, n,
	     wr[0].opcode, wr[0].send_flags, wr[0].num_sge);
	return ibv_post_send(o->d->qp[k], wr, &bad);
}

static int op_post_recv(struct op *o)
{
	int k = LIVE(o->d, qp);

	if (k < 0)
		return NOOP;
	return post_recvs(o, o->d->qp[k], NULL, to_shca_qp(o->d->qp[k])->rq.max_sge);
}

static int op_create_ah(struct op *o)
{
	struct ibv_ah_attr a;
	int k = EMPTY(o->d, ah), p = LIVE(o->d, pd), g = (int)R(8);

	memset(&a, 0, sizeof(a));
	a.is_global = (uint8_t)P(90);
	a.port_num = (uint8_t)(P(85) ? 1 : R(256));
	a.grh.sgid_index = (uint8_t)(P(85) ? 0 : R(256));
	a.grh.hop_limit = (uint8_t)(P(80) ? 64 : R(256));
	a.grh.traffic_class = (uint8_t)R(256);
	a.grh.flow_label = P(80) ? R(1 << 20) : (uint32_t)W64();
	a.sl = (uint8_t)R(P(80) ? 8 : 256);
	a.static_rate = (uint8_t)(P(80) ? 0 : R(32));
	a.dlid = (uint16_t)R(65536);
	if (g < 4) {			/* a device's GID 0 */
		a.grh.dgid = S->gid[g & 1];
	} else if (g == 5) {		/* multicast */
		a.grh.dgid.raw[0] = 0xff;
		a.grh.dgid.raw[1] = 0x02;
		a.grh.dgid.raw[15] = 1;
	} else if (g == 6) {		/* IPv4-mapped 10/8 */
		a.grh.dgid.raw[10] = a.grh.dgid.raw[11] = 0xff;
		a.grh.dgid.raw[12] = 10;
		fill_random(o, &a.grh.dgid.raw[13], 3);
	} else if (g == 7) {
		fill_random(o, a.grh.dgid.raw, 16);
	}				/* 4: all zero */
	if (k < 0 || p < 0)
		return NOOP;
	DESC("[%d] gid kind %d global %d port %d sgid %d hop %d sl %d", k, g,
	     a.is_global, a.port_num, a.grh.sgid_index, a.grh.hop_limit, a.sl);
	o->valid = o->dev == 0 && !(g & 1) && g < 4 && a.is_global &&
		   a.port_num == 1 && !a.grh.sgid_index && a.grh.hop_limit == 64 &&
		   a.grh.flow_label < 1 << 20 && !a.static_rate;
	o->d->ah[k] = ibv_create_ah(o->d->pd[p], &a);
	return o->d->ah[k] ? 0 : errno;
}

static int op_open_xrcd(struct op *o)
{
	struct ibv_xrcd_init_attr a;
	int k = (int)R(2);

	memset(&a, 0, sizeof(a));
	a.comp_mask = P(95) ? IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS : R(8);
	a.fd = P(85) ? xfile[k] : P(50) ? -1 : o->d->ctx->cmd_fd;
	a.oflags = P(80) ? O_CREAT : P(50) ? O_CREAT | O_EXCL : (int)W64();
	if (o->d->xrcd[k])
		return NOOP;
	DESC("[%d] mask %#x fd %d oflags %#x", k, a.comp_mask, a.fd, a.oflags);
	o->valid = a.comp_mask == 3 && a.fd == xfile[k] && a.oflags == O_CREAT;
	o->d->xrcd[k] = ibv_open_xrcd(o->d->ctx, &a);
	return o->d->xrcd[k] ? 0 : errno;
}

static int op_query(struct op *o)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid g;
	uint16_t pkey;
	int what = (int)R(4), port = P(85) ? 1 : (int)R(256);
	int idx = P(70) ? 0 : (int)R(P(50) ? 300 : 65536);

	DESC("%d port %d index %d", what, port, idx);
	o->valid = o->dev == 0 && port == 1 && !idx;
	switch (what) {
	case 0: return ibv_query_device(o->d->ctx, &da);
	case 1: return ibv_query_port(o->d->ctx, (uint8_t)port, &pa);
	case 2: return ibv_query_gid(o->d->ctx, (uint8_t)port, idx, &g) ? errno : 0;
	default: return ibv_query_pkey(o->d->ctx, (uint8_t)port, idx, &pkey) ? errno : 0;
	}
}

/* Our numbers on the board again (other workers overwrite them). */
static int op_publish(struct op *o)
{
	int k = LIVE(o->d, qp), m = LIVE(o->d, mr);

	if (k < 0 && m < 0)
		return NOOP;
	DESC("qp %d mr %d", k, m);
	if (k >= 0)
		board_put(&o->r, BK_QP + o->d->qp[k]->qp_type, o->dev,
			  o->d->qp[k]->qp_num, 0, 0, 0);
	if (m >= 0)
		publish_mr(o, o->dev, o->d->mr[m]);
	return 0;
}

/* Raw commands take their names from their own tables (op_name()). */
#define RAW(i) { NULL, op_raw, i, 2 }
#define MAKE(i) { NULL, op_raw_create, i, 2 }
static const struct opdef {
	const char *name;
	int (*fn)(struct op *o);
	int arg, weight;
} ops[] = {
	{ "open_device", op_open_dev, 0, 2 }, { "close_device", op_close_dev, 0, 1 },
	{ "alloc_pd", op_alloc_pd, 0, 2 }, { "dealloc_pd", op_destroy, K_PD, 2 },
	{ "create_cq", op_create_cq, 0, 5 }, { "destroy_cq", op_destroy, K_CQ, 2 },
	{ "resize_cq", op_resize_cq, 0, 3 }, { "poll_cq", op_poll_cq, 0, 12 },
	{ "req_notify_cq", op_notify_cq, 0, 3 }, { "get_events", op_get_events, 0, 4 },
	{ "create_comp_channel", op_create_ch, 0, 1 },
	{ "destroy_comp_channel", op_destroy, K_CH, 1 },
	{ "reg_mr", op_reg_mr, 0, 6 }, { "rereg_mr", op_rereg_mr, 0, 3 },
	{ "dereg_mr", op_destroy, K_MR, 3 },
	{ "create_srq", op_create_srq, 0, 4 }, { "modify_srq", op_modify_srq, 0, 2 },
	{ "query_srq", op_query_srq, 0, 1 }, { "destroy_srq", op_destroy, K_SRQ, 2 },
	{ "post_srq_recv", op_post_srq_recv, 0, 6 },
	{ "create_qp", op_create_qp, 0, 8 }, { "create_xrc_tgt", op_create_tgt, 0, 2 },
	{ "open_qp", op_open_qp, 0, 2 }, { "destroy_qp", op_destroy, K_QP, 4 },
	{ "connect_qp", op_connect, 0, 8 }, { "make_pair", op_make_pair, 0, 3 },
	{ "modify_qp", op_modify_qp, 0, 5 }, { "query_qp", op_query_qp, 0, 2 },
	{ "post_send", op_post_send, 0, 14 }, { "post_recv", op_post_recv, 0, 8 },
	{ "ring_wqe", op_ring_wqe, 0, 5 }, { "scribble", op_scribble, 0, 3 },
	{ "create_ah", op_create_ah, 0, 3 }, { "destroy_ah", op_destroy, K_AH, 2 },
	{ "open_xrcd", op_open_xrcd, 0, 2 }, { "close_xrcd", op_destroy, K_XRCD, 1 },
	{ "mmap", op_mmap, 0, 2 }, { "query", op_query, 0, 2 },
	{ "remap_arena", op_remap, 0, 1 },
	{ "publish", op_publish, 0, 2 },
	RAW(0), RAW(1), RAW(2), RAW(3), RAW(4), RAW(5), RAW(6), RAW(7), RAW(8),
	RAW(9), RAW(10), RAW(11), RAW(12), RAW(13), RAW(14), RAW(15), RAW(16),
	RAW(17), MAKE(0), MAKE(1), MAKE(2), MAKE(3), MAKE(4), MAKE(5), MAKE(6),
	MAKE(7),
};

static const char *op_name(uint32_t k)
{
	if (k >= ARRAY_SIZE(ops))
		return "?";
	if (ops[k].name)
		return ops[k].name;
	return ops[k].fn == op_raw ? rawdefs[ops[k].arg].name : rawmakes[ops[k].arg].name;
}

static int pick_op(struct op *o)
{
	static int total;
	int k, x;

	if (!total)
		for (k = 0; k < (int)ARRAY_SIZE(ops); k++)
			total += ops[k].weight;
	x = (int)R(total);
	for (k = 0; x >= ops[k].weight; k++)
		x -= ops[k].weight;
	return k;
}

static void verdict(struct op *o, int k, uint64_t i, int err)
{
	const char *why = o->broken;
	uint32_t gen;

	if (!why && !err)
		return;
	if (!why) {
		/* The link went since the open, or is going (odd: deleting). */
		gen = LOAD(S->link_gen);
		if (err == EIO && (o->devs & 2) && (gen != D[1].gen || (gen & 1))) {
			D[1].dead = 1;	/* start it afresh */
			return;
		}
		if (err == EIO)
			why = "EIO from a device whose link was not deleted";
		else if (err == EFAULT && !o->badptr)
			why = "EFAULT though every pointer was valid";
		else if (o->valid)
			why = "a call with valid arguments failed";
		else
			return;
	}
	printf("FAIL: %s: worker %d (seed %#llx), %soperation #%llu %s %s(%s): %s "
	       "(link generation %u at open, %u now)\n",
	       why, W, ULL(wseed), o->side ? "side thread's " : "", ULL(i),
	       devname[o->dev], op_name((uint32_t)k), o->desc, errname(err),
	       D[1].gen, LOAD(S->link_gen));
	fflush(stdout);
	klog("<3>fuzz: worker %d failed at operation #%llu\n", W, ULL(i));
	_exit(3);
}

/*
 * A worker's second thread: raw commands that destroy nothing, on the
 * handles the first thread's objects have (or stale, random ones), in
 * parallel with its calls on the same objects.  Its own PRNG sequence;
 * the interleaving is the scheduler's.
 */
static void *side_run(void *arg)
{
	char text[DESCLEN];
	uint64_t i;
	int k, err;

	(void)arg;
	for (i = 0; !LOAD(S->stop); i++, ADD(S->w[W].beat[1], 1)) {
		struct op op = { .r = mix64(~wseed ^ mix64(i + 1)), .side = 1 }, *o = &op;

		for (k = 0; ops[k].fn != op_raw || rawdefs[ops[k].arg].kills >= 0; )
			k = (int)R(ARRAY_SIZE(ops));
		o->arg = ops[k].arg;
		o->dev = (int)R(2);
		o->d = &D[o->dev];
		o->devs = 1 << o->dev;
		o->desc = text;
		text[0] = 0;
		pthread_rwlock_rdlock(&dev_lock);
		err = o->d->ctx ? op_raw(o) : NOOP;
		pthread_rwlock_unlock(&dev_lock);
		/* At most one of these for each operation of the first thread. */
		while (i > LOAD(S->w[W].cur) + 64 && !LOAD(S->stop))
			usleep(500);
		if (err == NOOP)
			continue;
		outcome(k, err);
		ADD(S->ops, 1);
		ADD(S->side_ops, 1);
		verdict(o, k, i, err);
	}
	return NULL;
}

static void worker_run(uint64_t seed, uint64_t nops)
{
	struct wstat *w = &S->w[W];
	pthread_rwlockattr_t la;
	struct recent *rc;
	pthread_t side;
	uint64_t i;
	int k, err;

	wseed = seed;
	worker_memory();
	pthread_rwlockattr_init(&la);	/* a close must not wait for ever */
	pthread_rwlockattr_setkind_np(&la, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&dev_lock, &la);
	dev_open(0);
	dev_open(1);
	live_refresh();
	if (!trace && pthread_create(&side, NULL, side_run, NULL))
		_exit(2);
	for (i = 0; i < nops && !LOAD(S->stop); i++, ADD(w->beat[0], 1)) {
		struct op op = { .r = mix64(seed ^ mix64(i + 1)) }, *o = &op;

		k = pick_op(o);
		o->arg = ops[k].arg;
		o->dev = (int)R(2);
		o->d = &D[o->dev];
		o->devs = 1 << o->dev;
		if (D[1].dead)
			dev_close(&D[1]);
		rc = &w->recent[i % NRECENT];
		o->desc = rc->desc;
		o->desc[0] = 0;
		STORE(rc->op, (uint32_t)k);
		STORE(rc->dev, (uint32_t)o->dev);
		STORE(rc->idx, i);
		STORE(w->cur, i);
		err = o->d->ctx || ops[k].fn == op_open_dev ? ops[k].fn(o) : NOOP;
		if (trace)
			printf("#%llu %s %s(%s): %s\n", ULL(i), devname[o->dev],
			       op_name((uint32_t)k), o->desc,
			       err == NOOP ? "skipped" : errname(err));
		if (err == NOOP) {
			snprintf(o->desc, DESCLEN, "no-op");
			continue;
		}
		outcome(k, err);
		ADD(S->ops, 1);
		verdict(o, k, i, err);
		live_refresh();
	}
	if (!trace)
		pthread_join(side, NULL);
	dev_close(&D[0]);
	dev_close(&D[1]);
}

int main(int argc, char **argv)
{
	int k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	devname[0] = env_or("SOFTHCA_DEV", "sh0");
	devname[1] = env_or("SOFTHCA_DEV2", "sh1");
	netdev2 = env_or("FUZZ_NETDEV2", "sv1");
	S = mmap(NULL, sizeof(*S), RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED)
		return 2;
	memset(S, 0, sizeof(*S));
	for (k = 0; k < 2; k++)
		snprintf(xpath[k], sizeof(xpath[k]), "/tmp/fuzz-xrcd.%d.%d", getpid(), k);
	if (argc > 3 && !strcmp(argv[1], "replay")) {
		trace = 1;
		worker_run(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
		k = 0;
	} else if (argc > 1) {
		fprintf(stderr, "usage: %s [replay SEED N]\n", argv[0]);
		return 2;
	} else {
		k = run();
	}
	unlink(xpath[0]);
	unlink(xpath[1]);
	return k;
}

