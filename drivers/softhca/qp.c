// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: queue pair creation, query and destruction.
 *
 * A QP owns up to two rings: the send queue (absent on XRC_TGT) and the
 * receive queue (absent when the QP receives from an SRQ, and on both
 * XRC types).  Ring sizes are powers of two at least as large as asked;
 * the capabilities written back into the init attributes (and so into
 * the create response) are what the rings really hold, which is what
 * the verbs promise ("may be larger than requested").
 *
 * State changes live in qp_state.c.
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "engine.h"
#include "wqe.h"

static bool softhca_qp_has_sq(enum ib_qp_type type)
{
	return type != IB_QPT_XRC_TGT;
}

static bool softhca_qp_has_rq(const struct ib_qp_init_attr *init)
{
	return !init->srq && init->qp_type != IB_QPT_XRC_INI &&
	       init->qp_type != IB_QPT_XRC_TGT;
}

static int softhca_qp_check_init(const struct ib_qp_init_attr *init,
				 struct ib_udata *udata)
{
	const struct ib_qp_cap *cap = &init->cap;
	const struct softhca_limits *lim = &softhca_limits;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		break;
	case IB_QPT_GSI:
		/* QP1 belongs to the kernel's MAD layer. */
		if (udata)
			return -EOPNOTSUPP;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (softhca_qp_has_sq(init->qp_type) &&
	    (cap->max_send_wr > lim->max_qp_wr ||
	     cap->max_send_sge > lim->max_sge ||
	     cap->max_inline_data > lim->max_inline))
		return -EINVAL;
	if (softhca_qp_has_rq(init) &&
	    (cap->max_recv_wr > lim->max_qp_wr ||
	     cap->max_recv_sge > lim->max_sge))
		return -EINVAL;
	return 0;
}

struct lock_class_key softhca_sq_lock_key;
struct lock_class_key softhca_rq_lock_key;

/* Allocate the rings and write the real capacities back into @cap. */
static int softhca_qp_alloc_rings(struct softhca_qp *qp,
				  struct ib_qp_init_attr *init,
				  struct ib_udata *udata)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 stride, entries;
	int err;

	softhca_wq_init(&qp->sq, &softhca_sq_lock_key);
	softhca_wq_init(&qp->rq, &softhca_rq_lock_key);

	if (softhca_qp_has_sq(init->qp_type)) {
		entries = roundup_pow_of_two(max(cap->max_send_wr, 1U));
		stride = softhca_send_stride(cap->max_send_sge,
					     cap->max_inline_data);
		err = softhca_ring_alloc(&qp->sq.ring, udata, entries, stride);
		if (err)
			return err;
		qp->sq.max_sge = min_t(u32, softhca_limits.max_sge,
				       (stride - SOFTHCA_SEND_WQE_HDR) /
				       sizeof(struct softhca_sge));
		qp->sq.max_inline = min_t(u32, softhca_limits.max_inline,
					  stride - SOFTHCA_SEND_WQE_HDR);
		cap->max_send_wr = entries;
		cap->max_send_sge = qp->sq.max_sge;
		cap->max_inline_data = qp->sq.max_inline;
	} else {
		cap->max_send_wr = 0;
		cap->max_send_sge = 0;
		cap->max_inline_data = 0;
	}

	if (softhca_qp_has_rq(init)) {
		entries = roundup_pow_of_two(max(cap->max_recv_wr, 1U));
		stride = softhca_recv_stride(cap->max_recv_sge);
		err = softhca_ring_alloc(&qp->rq.ring, udata, entries, stride);
		if (err)
			goto err_sq;
		qp->rq.max_sge = min_t(u32, softhca_limits.max_sge,
				       (stride - sizeof(struct softhca_recv_wqe)) /
				       sizeof(struct softhca_sge));
		cap->max_recv_wr = entries;
		cap->max_recv_sge = qp->rq.max_sge;
	} else {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	return 0;

err_sq:
	softhca_ring_free(&qp->sq.ring);
	return err;
}

static void softhca_qp_free_rings(struct softhca_qp *qp)
{
	softhca_ring_free(&qp->sq.ring);
	softhca_ring_free(&qp->rq.ring);
}

/*
 * The engine's private buffers: the copy of the send WQE being run and
 * of the receive WQE being filled, and their resolved SGEs.  A QP that
 * receives from an SRQ (or, XRC_TGT, from any SRQ of its domain) needs
 * room for that SRQ's WQEs.
 */
static int softhca_qp_alloc_engine(struct softhca_qp *qp,
				   struct ib_qp_init_attr *init)
{
	u32 rstride = 0, rsge = 0;

	if (qp->sq.ring.entries) {
		qp->req.wqe = kzalloc(qp->sq.ring.stride, GFP_KERNEL);
		qp->req.segs = kcalloc(qp->sq.max_sge + 1,
				       sizeof(*qp->req.segs), GFP_KERNEL);
		if (!qp->req.wqe || !qp->req.segs)
			return -ENOMEM;
		/* RC on the wire sends trains of them (req_train.c). */
		if (softhca_qpt_reliable(init->qp_type) &&
		    softhca_req_cars_alloc(qp))
			return -ENOMEM;
	}
	if (qp->srq) {
		rstride = qp->srq->rq.ring.stride;
		rsge = qp->srq->rq.max_sge;
	} else if (qp->rq.ring.entries) {
		rstride = qp->rq.ring.stride;
		rsge = qp->rq.max_sge;
	} else if (init->qp_type == IB_QPT_XRC_TGT) {
		rsge = softhca_limits.max_sge;
		rstride = softhca_recv_stride(rsge);
	}
	if (rstride) {
		qp->resp.wqe = kzalloc(rstride, GFP_KERNEL);
		qp->resp.segs = kcalloc(rsge + 1, sizeof(*qp->resp.segs),
					GFP_KERNEL);
		if (!qp->resp.wqe || !qp->resp.segs)
			return -ENOMEM;
	}
	return 0;
}

static void softhca_qp_free_engine(struct softhca_qp *qp)
{
	softhca_req_cars_free(qp);
	kfree(qp->req.wqe);
	kfree(qp->req.segs);
	kfree(qp->resp.wqe);
	kfree(qp->resp.segs);
	/* READ responses a chunk left behind (nothing queues them now). */
	__skb_queue_purge(&qp->wire.rd_q);
	__skb_queue_purge(&qp->wire.rd_ooo);
	softhca_txb_release(&qp->wire.txb);
	softhca_route_destroy(&qp->wire.route);
	softhca_wire_atm_free(qp);
}

/* Engine state of a new QP; its send queue starts unwatched. */
static void softhca_qp_init_engine(struct softhca_dev *sdev,
				   struct softhca_qp *qp)
{
	struct net_device *ndev = sdev->ndev;

	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	INIT_LIST_HEAD(&qp->poll_node);
	qp->poll_state = 0;
	spin_lock_init(&qp->resp.lock);
	spin_lock_init(&qp->wire.rx_lock);
	spin_lock_init(&qp->wire.ack_lock);
	__skb_queue_head_init(&qp->wire.rd_q);
	__skb_queue_head_init(&qp->wire.rd_ooo);
	spin_lock_init(&qp->wire.tx_lock);
	softhca_route_init(&qp->wire.route);
	INIT_LIST_HEAD(&qp->wire.tx_jobs);
	INIT_WORK(&qp->wire.tx_work, softhca_wire_rc_tx_work);
	hrtimer_init(&qp->wire.rd_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	qp->wire.rd_timer.function = softhca_wire_rd_timer;
	hrtimer_init(&qp->retry_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	qp->retry_timer.function = softhca_req_retry_timer;
	INIT_WORK(&qp->kflush_work, softhca_kflush_work);
	qp->req.ud_max = ib_mtu_enum_to_int(softhca_mtu_from_netdev(READ_ONCE(ndev->mtu)));
	if (qp->sq.ring.entries)
		atomic_set(softhca_wq_flags(&qp->sq.ring),
			   SOFTHCA_WQ_F_NEED_WAKEUP);
}

/* Reserve a QP number; the QP becomes visible by number only when ready. */
static int softhca_qpn_alloc(struct softhca_dev *sdev, enum ib_qp_type type,
			     u32 *qpn)
{
	int err;

	if (type == IB_QPT_GSI) {
		*qpn = 1;
		return xa_insert_bh(&sdev->qps, 1, NULL, GFP_KERNEL);
	}
	/* 0 and 1 are the special QPs, SOFTHCA_MCAST_QPN multicast's. */
	err = xa_alloc_cyclic_bh(&sdev->qps, qpn, NULL,
				 XA_LIMIT(2, SOFTHCA_MCAST_QPN - 1), &sdev->next_qpn,
				 GFP_KERNEL);
	return err < 0 ? err : 0;
}

int softhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	struct softhca_create_qp_resp resp = {};
	struct softhca_qp *qp = to_sqp(ibqp);
	u32 qpn;
	int err;

	err = softhca_qp_check_init(init, udata);
	if (err)
		return err;
	err = softhca_check_udata(udata, sizeof(resp));
	if (err)
		return err;
	if (!softhca_count_get(&sdev->num_qps, softhca_limits.max_qp))
		return -ENOMEM;

	mutex_init(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.path_mtu = IB_MTU_1024;
	qp->attr.port_num = SOFTHCA_PORT;
	qp->sq_sig_type = init->sq_sig_type;
	qp->is_user = !!udata;
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->xrcd = init->qp_type == IB_QPT_XRC_TGT ? init->xrcd : NULL;

	err = softhca_qp_alloc_rings(qp, init, udata);
	if (err)
		goto err_count;
	err = softhca_qp_alloc_engine(qp, init);
	if (err)
		goto err_engine;
	softhca_qp_init_engine(sdev, qp);
	err = softhca_qpn_alloc(sdev, init->qp_type, &qpn);
	if (err)
		goto err_engine;
	ibqp->qp_num = qpn;
	qp->poller = &sdev->pollers[qpn % sdev->npollers];
	qp->attr.cap = init->cap;

	if (udata) {
		resp.sq_offset = qp->sq.ring.mmap_offset;
		resp.rq_offset = qp->rq.ring.mmap_offset;
		resp.sq_size = qp->sq.ring.size;
		resp.rq_size = qp->rq.ring.size;
		resp.sq_entries = qp->sq.ring.entries;
		resp.rq_entries = qp->rq.ring.entries;
		resp.sq_stride = qp->sq.ring.stride;
		resp.rq_stride = qp->rq.ring.stride;
		resp.qpn = qpn;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_qpn;
	}
	xa_store_bh(&sdev->qps, qpn, qp, GFP_KERNEL);
	return 0;

err_qpn:
	xa_erase_bh(&sdev->qps, qpn);
err_engine:
	softhca_qp_free_engine(qp);
	softhca_qp_free_rings(qp);
err_count:
	atomic_dec(&sdev->num_qps);
	return err;
}

int softhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	struct softhca_qp *qp = to_sqp(ibqp);

	/*
	 * No new reference can be taken once the QP is out of the xarray
	 * and dying; wait for the senders, pollers and timers that hold
	 * one, then nothing else touches the QP.  Storing NULL in the
	 * allocating xarray keeps the number reserved: no new QP gets it
	 * before the type 2B windows bound to this one are unbound below.
	 */
	softhca_mcast_qp_gone(qp);
	xa_store_bh(&sdev->qps, ibqp->qp_num, NULL, GFP_KERNEL);
	WRITE_ONCE(qp->dying, true);
	softhca_engine_detach(qp);
	softhca_qp_put(qp);
	wait_for_completion(&qp->released);
	hrtimer_cancel(&qp->retry_timer);
	hrtimer_cancel(&qp->wire.rd_timer);
	cancel_work_sync(&qp->kflush_work);
	/* No packet can reach the QP now: nothing queues answers again. */
	cancel_work_sync(&qp->wire.tx_work);
	softhca_wire_rc_tx_drop(qp);
	softhca_req_cache_drop(&qp->req.cache);	/* the poller let go */
	softhca_mw_qp_gone(qp);
	xa_erase_bh(&sdev->qps, ibqp->qp_num);	/* the number is free now */
	softhca_qp_free_engine(qp);
	softhca_qp_free_rings(qp);
	mutex_destroy(&qp->state_lock);
	atomic_dec(&sdev->num_qps);
	return 0;
}

int softhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init)
{
	struct softhca_qp *qp = to_sqp(ibqp);

	mutex_lock(&qp->state_lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = qp->state == IB_QPS_SQD && READ_ONCE(qp->req.busy);
	mutex_unlock(&qp->state_lock);

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->xrcd = qp->xrcd;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_type;
	return 0;
}

/*
 * ib_uverbs' POST_SEND and POST_RECV commands, sent with no work
 * requests, are the doorbells of a process's QP: the work itself is in
 * the rings.  A QP in the error state flushes what was posted since the
 * last flush (the library rings whenever it sees SOFTHCA_WQ_F_ERROR);
 * otherwise the send queue's work runs (engine.c).  A receive queue
 * needs no doorbell to be consumed: messages take its WQEs.  A kernel
 * consumer's work requests go into its rings through kverbs.c.
 */
static int softhca_doorbell(struct softhca_qp *qp, bool send)
{
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		softhca_qp_flush(qp);
	else if (send)
		softhca_engine_doorbell(qp);
	return 0;
}

int softhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	struct softhca_qp *qp = to_sqp(ibqp);

	if (!qp->is_user)
		return softhca_kpost_send(qp, wr, bad_wr);
	if (wr) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	return softhca_doorbell(qp, true);
}

int softhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct softhca_qp *qp = to_sqp(ibqp);

	if (!qp->is_user)
		return softhca_kpost_recv(qp, wr, bad_wr);
	if (wr) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	return softhca_doorbell(qp, false);
}
