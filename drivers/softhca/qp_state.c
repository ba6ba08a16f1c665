// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the QP state machine (modify_qp) and the flush.
 *
 * Which transitions exist, and which attributes each one requires and
 * allows, is the IBA's table as ib_modify_qp_is_ok() encodes it; this
 * file adds the range checks of each attribute and what a transition
 * does to the queues:
 *   any -> RESET  both work queues become empty: the kernel's consumer
 *                 indices and the published ones go to 0 and the
 *                 library zeroes its producer indices (it does so after
 *                 the command succeeds, before it posts again);
 *   any -> ERR    SOFTHCA_WQ_F_ERROR is raised in both rings and every
 *                 outstanding WQE completes with IB_WC_WR_FLUSH_ERR;
 *                 work posted later is flushed when the library rings
 *                 the doorbell (it does whenever it sees the flag);
 *   RTS -> SQD    no new send WQE starts; the one in flight (a long
 *                 message, or one waiting for an RNR retry) finishes,
 *                 and then IB_EVENT_SQ_DRAINED is raised if asked (at
 *                 once when nothing is in flight);
 *   SQD -> RTS    the send queue resumes: the QP goes to its poller.
 *
 * Locking: qp->state_lock (a mutex: this is always process context)
 * serialises modify and query.  The engine moves a QP to ERR on its own
 * (softhca_qp_error) without that mutex, so every state change is a
 * cmpxchg from the state it was decided on: a modify that lost the race
 * against the engine fails with EINVAL instead of undoing the error.
 * The flush takes only the queue locks (then the CQ's lock inside).
 */
#include <rdma/ib_verbs.h>

#include "engine.h"

#define SOFTHCA_QP_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			   IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

void softhca_qp_event(struct softhca_qp *qp, enum ib_event_type type)
{
	struct ib_event ev;

	if (!qp->ibqp.event_handler)
		return;
	ev.device = qp->ibqp.device;
	ev.element.qp = &qp->ibqp;
	ev.event = type;
	qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* Range checks the state table does not make. */
static int softhca_qp_check_attr(struct softhca_qp *qp,
				 const struct ib_qp_attr *attr, int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != SOFTHCA_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SOFTHCA_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SOFTHCA_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SOFTHCA_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SOFTHCA_MAX_NUM)
		return -EINVAL;
	if ((mask & IB_QP_SQ_PSN) && attr->sq_psn > SOFTHCA_MAX_NUM)
		return -EINVAL;
	if ((mask & IB_QP_RQ_PSN) && attr->rq_psn > SOFTHCA_MAX_NUM)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		if (attr->ah_attr.type != RDMA_AH_ATTR_TYPE_ROCE ||
		    rdma_ah_get_port_num(&attr->ah_attr) != SOFTHCA_PORT ||
		    !(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
			return -EINVAL;
	}
	/* No alternate path (APM), no rate limiting. */
	if (mask & (IB_QP_ALT_PATH | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EOPNOTSUPP;
	return 0;
}

/* Record what was set, for query_qp. */
static void softhca_qp_store_attr(struct softhca_qp *qp,
				  const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		a->ah_attr = attr->ah_attr;
		/* ib_core owns the GID attribute reference, not us. */
		a->ah_attr.grh.sgid_attr = NULL;
	}
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
}

/* Tell the library both queues are in error (SOFTHCA_WQ_F_ERROR). */
static void softhca_qp_set_error_flags(struct softhca_qp *qp)
{
	if (qp->sq.ring.entries)
		atomic_or(SOFTHCA_WQ_F_ERROR, softhca_wq_flags(&qp->sq.ring));
	if (qp->rq.ring.entries)
		atomic_or(SOFTHCA_WQ_F_ERROR, softhca_wq_flags(&qp->rq.ring));
}

/* Empty a queue (-> RESET); @flags is what its header starts with. */
static void softhca_wq_reset(struct softhca_wq *wq, u32 flags)
{
	struct softhca_wq_hdr *hdr;

	if (!wq->ring.entries)
		return;
	hdr = softhca_ring_hdr(&wq->ring);
	spin_lock_bh(&wq->lock);
	wq->cons = 0;
	wq->prod_seen = 0;
	/* Pairs with the library's load-acquire of cons. */
	smp_store_release(&hdr->cons, 0);
	atomic_set(softhca_wq_flags(&wq->ring), flags);
	spin_unlock_bh(&wq->lock);
}

/*
 * Complete every WQE in [cons, prod) of @wq with WR_FLUSH_ERR.  Only the
 * wr_id of each slot is read, with one 8-byte load: nothing else of the
 * slot matters to a flush.  Return: false if the producer index was
 * impossible (the caller raises QP_FATAL), true otherwise.
 */
static bool softhca_wq_flush(struct softhca_qp *qp, struct softhca_wq *wq,
			     struct ib_cq *ibcq, bool send)
{
	bool busy = false;
	struct softhca_wq_hdr *hdr;
	struct softhca_cqe cqe;
	int n, i, ncars = 0;
	u32 prod;

	if (!wq->ring.entries || !ibcq)
		return true;
	hdr = softhca_ring_hdr(&wq->ring);
	memset(&cqe, 0, sizeof(cqe));
	cqe.status = IB_WC_WR_FLUSH_ERR;
	cqe.opcode = send ? IB_WC_SEND : IB_WC_RECV;
	cqe.qp_num = qp->ibqp.qp_num;

	spin_lock_bh(&wq->lock);
	/* Pairs with the library's store-release of prod. */
	prod = smp_load_acquire(&hdr->prod);
	n = softhca_ring_posted(prod, wq->cons, wq->ring.entries);
	/*
	 * The WQE in flight and a train's cars behind it (req_train.c) are
	 * the kernel's copies, not the slots.
	 */
	if (send) {
		busy = qp->req.busy;
		ncars = qp->req.ncars;
		qp->req.busy = false;
		qp->req.ncars = 0;
		qp->req.cars_sent = 0;
		qp->req.retry_wait = false;
		WRITE_ONCE(qp->req.quiet_wait, false);
		qp->req.drain_notify = false;
		WRITE_ONCE(qp->req.train_open, false);
	}
	for (i = 0; i < n; i++) {
		cqe.wr_id = READ_ONCE(*(u64 *)softhca_ring_slot(&wq->ring,
								wq->cons));
		if (busy && !i)
			cqe.wr_id = qp->req.wqe->ctrl.wr_id;
		else if (i - busy < ncars)
			cqe.wr_id = softhca_req_car(qp, i - busy)->wqe->ctrl.wr_id;
		if (softhca_cq_push(to_scq(ibcq), &cqe, false))
			break;	/* the CQ overran and is dead */
		wq->cons++;
	}
	/*
	 * The slots are free once the kernel has read them: the release
	 * orders our wr_id loads before the library's reuse of the slots
	 * (it load-acquires cons).
	 */
	smp_store_release(&hdr->cons, wq->cons);
	spin_unlock_bh(&wq->lock);
	return n >= 0;
}

/**
 * softhca_qp_flush - complete a QP's outstanding work with WR_FLUSH_ERR
 * @qp: a QP in the error state
 *
 * Also flushes the receive WQE a message was filling.  An SRQ's WQEs
 * are not the QP's and stay where they are.  Context: process, no
 * softhca lock held.
 */
void softhca_qp_flush(struct softhca_qp *qp)
{
	bool ok;

	ok = softhca_wq_flush(qp, &qp->sq, qp->ibqp.send_cq, true);
	softhca_resp_flush(qp);
	ok &= softhca_wq_flush(qp, &qp->rq, qp->ibqp.recv_cq, false);
	if (!ok)
		softhca_qp_event(qp, IB_EVENT_QP_FATAL);
}

/*
 * Move to ERR from whatever live state the QP is in.  Return: false if
 * it already was in ERR or in RESET (where there is nothing to flush).
 */
static bool softhca_qp_to_err(struct softhca_qp *qp)
{
	enum ib_qp_state old = READ_ONCE(qp->state);

	for (;;) {
		if (old == IB_QPS_ERR || old == IB_QPS_RESET)
			return false;
		if (try_cmpxchg(&qp->state, &old, IB_QPS_ERR))
			break;
	}
	softhca_qp_set_error_flags(qp);
	return true;
}

/**
 * softhca_qp_error - the engine moves a QP to ERR
 * @qp: the QP (referenced by the caller)
 * @event: async event to raise (0: none; a requester's error is told by
 *	its error completion)
 *
 * Context: process, no softhca lock held.
 */
void softhca_qp_error(struct softhca_qp *qp, int event)
{
	if (!softhca_qp_to_err(qp))
		return;
	softhca_qp_flush(qp);
	if (event)
		softhca_qp_event(qp, event);
}

/**
 * softhca_qp_fatal - the QP broke (a corrupted ring)
 * @qp: the QP
 *
 * Moves it to ERR, flushes it and tells its owner with IB_EVENT_QP_FATAL.
 */
void softhca_qp_fatal(struct softhca_qp *qp)
{
	if (softhca_qp_to_err(qp))
		softhca_qp_flush(qp);
	softhca_qp_event(qp, IB_EVENT_QP_FATAL);
}

/* RTS -> SQD: SQ_DRAINED now, or when the WQE in flight retires. */
static bool softhca_qp_start_drain(struct softhca_qp *qp)
{
	bool now;

	spin_lock_bh(&qp->sq.lock);
	now = !qp->req.busy;
	if (!now)
		qp->req.drain_notify = qp->attr.en_sqd_async_notify;
	spin_unlock_bh(&qp->sq.lock);
	return now && qp->attr.en_sqd_async_notify;
}

/* The requester and responder forget everything (-> RESET). */
static void softhca_qp_reset(struct softhca_qp *qp)
{
	softhca_wq_reset(&qp->sq, SOFTHCA_WQ_F_NEED_WAKEUP);
	softhca_wq_reset(&qp->rq, 0);
	spin_lock_bh(&qp->sq.lock);
	qp->req.busy = false;
	qp->req.ncars = 0;
	qp->req.cars_sent = 0;
	qp->req.retry_wait = false;
	WRITE_ONCE(qp->req.quiet_wait, false);
	qp->req.drain_notify = false;
	WRITE_ONCE(qp->req.train_open, false);
	spin_unlock_bh(&qp->sq.lock);
	spin_lock_bh(&qp->resp.lock);
	qp->resp.busy = false;
	spin_unlock_bh(&qp->resp.lock);
}

int softhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_udata *udata)
{
	struct softhca_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, new;
	bool drained = false;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	err = softhca_check_udata_in(udata);
	if (err)
		return err;

	mutex_lock(&qp->state_lock);
	cur = qp->state;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		err = -EINVAL;
		goto out;
	}
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out;
	}
	err = softhca_qp_check_attr(qp, attr, mask);
	if (err)
		goto out;
	/*
	 * RC on the wire: room for the saved atomic results, before any
	 * change (the only step that may fail for want of memory).
	 */
	err = softhca_wire_atm_resize(qp, attr, mask);
	if (err)
		goto out;

	if ((mask & IB_QP_STATE) && new != cur &&
	    !try_cmpxchg(&qp->state, &cur, new)) {
		err = -EINVAL;	/* the engine moved it to ERR meanwhile */
		goto out;
	}
	softhca_qp_store_attr(qp, attr, mask);
	/*
	 * Where the peer of a connected QP lives, from its path (the state
	 * table accepts a path only for connected QP types).
	 */
	if (mask & IB_QP_AV)
		WRITE_ONCE(qp->dest_dev,
			   softhca_dev_by_gid(&attr->ah_attr.grh.dgid,
					      to_sdev(qp->ibqp.device)));
	/* ... and how it is reached on the wire when it is elsewhere. */
	softhca_wire_qp_modify(qp, attr, mask);
	if (!(mask & IB_QP_STATE) || new == cur)
		goto out;

	switch (new) {
	case IB_QPS_RESET:
		softhca_qp_reset(qp);
		break;
	case IB_QPS_ERR:
		softhca_qp_set_error_flags(qp);
		softhca_qp_flush(qp);
		break;
	case IB_QPS_SQD:
		drained = softhca_qp_start_drain(qp);
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_SQD)
			softhca_engine_kick(qp);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&qp->state_lock);
	if (drained)
		softhca_qp_event(qp, IB_EVENT_SQ_DRAINED);
	return err;
}
