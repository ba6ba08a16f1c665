// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: the work queue producers (no system call in steady state).
 *
 * Protocol (uapi/rdma/softhca-abi.h, struct softhca_wq_hdr):
 *   1. check for room: prod - cons < entries, cons load-acquired (pairs
 *      with the kernel's store-release after it is done with a slot);
 *   2. write the WQEs into their slots;
 *   3. store-release prod (pairs with the kernel's load-acquire), so
 *      the kernel sees whole WQEs;
 *   4. full barrier, then read flags: the barrier orders the store of
 *      prod before the load of flags, pairing with the kernel's barrier
 *      between setting NEED_WAKEUP and re-reading prod.  Only when a
 *      flag asks for it (NEED_WAKEUP: the poller sleeps; ERROR: the QP
 *      must flush the new WQEs) is the doorbell rung, an empty
 *      POST_SEND/POST_RECV command.
 *   5. a process that sleeps on completion events (it called
 *      ibv_get_cq_event) rings the send doorbell anyway for its next
 *      SHCA_INLINE_AFTER_EVENT sends, on any of its contexts: the
 *      doorbell runs the work inline, so a same-host peer's completion
 *      (and ours) is there before we go to sleep, instead of the
 *      poller producing it on another CPU and paying a cross-CPU
 *      wakeup for it.  A busy-polling process
 *      never sets it; an event-driven one costs what rxe costs, one
 *      system call per post, and waits no wakeup it could avoid.  The
 *      queue's hint word says so to the kernel, which then leaves the
 *      queue to the doorbell instead of handing it to a poller.
 *
 * Errors follow ibv_post_send(3): the first WR that cannot be posted is
 * returned in bad_wr with an errno value; the ones before it are posted.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static int shca_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return type == IBV_QPT_RC || type == IBV_QPT_UC ||
		       type == IBV_QPT_UD || type == IBV_QPT_XRC_SEND;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type == IBV_QPT_RC || type == IBV_QPT_UC ||
		       type == IBV_QPT_XRC_SEND;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND;
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC;	/* memory windows (mw.c) */
	default:
		return 0;
	}
}

static void shca_doorbell(struct ibv_qp *qp, int send)
{
	uint64_t resp;

	if (send) {
		struct ib_uverbs_post_send req = {
			.qp_handle = qp->handle,
			.wqe_size = sizeof(struct ib_uverbs_send_wr),
		};

		shca_cmd(qp->context->cmd_fd, IB_USER_VERBS_CMD_POST_SEND,
			 &req, sizeof(req), &resp, sizeof(uint32_t) * 2);
	} else {
		struct ib_uverbs_post_recv req = {
			.qp_handle = qp->handle,
			.wqe_size = sizeof(struct ib_uverbs_recv_wr),
		};

		shca_cmd(qp->context->cmd_fd, IB_USER_VERBS_CMD_POST_RECV,
			 &req, sizeof(req), &resp, sizeof(uint32_t) * 2);
	}
}

/* Publish prod; report whether the kernel asked for a doorbell. */
static int shca_wq_publish(struct shca_wq *wq)
{
	__atomic_store_n(&wq->hdr->prod, wq->prod, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&wq->hdr->flags, __ATOMIC_RELAXED) &
	       (SOFTHCA_WQ_F_NEED_WAKEUP | SOFTHCA_WQ_F_ERROR);
}

/*
 * Step 5: one of the sends that run inline after an event wait?  The
 * queue's hint tells the kernel so (the doorbell system call orders the
 * store before the kernel's read).
 */
int shca_inline_posts;

static int shca_inline_wanted(struct shca_wq *sq)
{
	uint32_t hint = 0;

	if (__atomic_load_n(&shca_inline_posts, __ATOMIC_RELAXED) > 0) {
		__atomic_fetch_sub(&shca_inline_posts, 1, __ATOMIC_RELAXED);
		hint = SOFTHCA_WQ_HINT_INLINE;
	}
	if (hint != sq->hint) {
		sq->hint = hint;
		__atomic_store_n(&sq->hdr->hint, hint, __ATOMIC_RELAXED);
	}
	return hint != 0;
}

/*
 * Step 1.  cons only grows, so the value read last frees at least the
 * slots below it: read the kernel's line again only when that value
 * says full (a read per post would fetch a line the kernel writes for
 * every WQE).  The acquire that read it still orders the kernel's last
 * use of those slots before our writes.
 */
static int shca_wq_full(struct shca_wq *wq)
{
	if (wq->prod - wq->cons < wq->ring.entries)
		return 0;
	wq->cons = __atomic_load_n(&wq->hdr->cons, __ATOMIC_ACQUIRE);
	return wq->prod - wq->cons >= wq->ring.entries;
}

static int shca_build_send(struct shca_qp *qp, struct ibv_send_wr *wr,
			   struct softhca_send_wqe *w)
{
	enum ibv_qp_type type = qp->qpx.qp_base.qp_type;
	struct softhca_sge *sge = (struct softhca_sge *)(w + 1);
	uint8_t *data = (uint8_t *)(w + 1);
	uint64_t len = 0;
	int i;

	if (!shca_opcode_ok(type, wr->opcode) || wr->num_sge < 0)
		return EINVAL;
	if (wr->send_flags & ~(unsigned int)(IBV_SEND_FENCE |
		IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE))
		return EINVAL;

	memset(w, 0, SOFTHCA_SEND_WQE_HDR);
	w->ctrl.wr_id = wr->wr_id;
	w->ctrl.opcode = (uint8_t)wr->opcode;
	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		w->ctrl.flags |= SOFTHCA_WQE_F_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		w->ctrl.flags |= SOFTHCA_WQE_F_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		w->ctrl.flags |= SOFTHCA_WQE_F_FENCE;
	if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
	    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		w->ctrl.imm_data = wr->imm_data;
	if (wr->opcode == IBV_WR_SEND_WITH_INV)
		w->ctrl.imm_data = wr->invalidate_rkey;

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_BIND_MW:
		/* The layout of the ABI header's BIND_MW; no data area. */
		w->rkey = wr->bind_mw.rkey;
		w->remote_addr = wr->bind_mw.bind_info.addr;
		w->compare_add = wr->bind_mw.bind_info.length;
		w->xrc_srqn = wr->bind_mw.bind_info.mw_access_flags;
		if (wr->bind_mw.bind_info.mr)
			w->swap = wr->bind_mw.bind_info.mr->lkey;
		return 0;
	case IBV_WR_LOCAL_INV:
		w->ctrl.imm_data = wr->invalidate_rkey;
		return 0;
	default:
		break;
	}
	if (type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah)
			return EINVAL;
		w->ud.ah_num = shca_ah_num(wr->wr.ud.ah);
		w->ud.remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
	}
	if (type == IBV_QPT_XRC_SEND)
		w->xrc_srqn = wr->qp_type.xrc.remote_srqn;

	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    wr->opcode != IBV_WR_RDMA_READ &&
	    wr->opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
	    wr->opcode != IBV_WR_ATOMIC_FETCH_AND_ADD) {
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->sq.max_inline)
			return EINVAL;
		/* ibv_post_send(3): the buffers are reusable at return. */
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(data, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			data += wr->sg_list[i].length;
		}
		w->ctrl.flags |= SOFTHCA_WQE_F_INLINE;
		w->inline_len = (uint32_t)len;
		return 0;
	}

	if ((uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	w->ctrl.num_sge = (uint8_t)wr->num_sge;
	return 0;
}

int shca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_wq *sq = &qp->sq;
	int err = 0, ring;

	/* No send queue (XRC receive QP), or not yet ready to send. */
	if (!sq->ring.entries || ibqp->state == IBV_QPS_RESET ||
	    ibqp->state == IBV_QPS_INIT || ibqp->state == IBV_QPS_RTR) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&sq->lock);
	for (; wr; wr = wr->next) {
		if (shca_wq_full(sq)) {
			err = ENOMEM;
			break;
		}
		err = shca_build_send(qp, wr, shca_slot(&sq->ring, sq->prod));
		if (err)
			break;
		sq->prod++;
	}
	ring = shca_inline_wanted(sq);
	ring |= shca_wq_publish(sq);
	pthread_spin_unlock(&sq->lock);
	if (err)
		*bad_wr = wr;
	if (ring)
		shca_doorbell(ibqp, 1);
	return err;
}

/* Fill receive WQEs; the caller publishes. */
int shca_wq_post_recv(struct shca_wq *wq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct softhca_recv_wqe *w;
	struct softhca_sge *sge;
	int i;

	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			*bad_wr = wr;
			return EINVAL;
		}
		if (shca_wq_full(wq)) {
			*bad_wr = wr;
			return ENOMEM;
		}
		w = shca_slot(&wq->ring, wq->prod);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->reserved = 0;
		sge = (struct softhca_sge *)(w + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		wq->prod++;
	}
	return 0;
}

int shca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_wq *rq = &qp->rq;
	int err, ring;

	/* A QP on an SRQ (or an XRC QP) has no receive queue. */
	if (!rq->ring.entries || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&rq->lock);
	err = shca_wq_post_recv(rq, wr, bad_wr);
	ring = shca_wq_publish(rq);
	pthread_spin_unlock(&rq->lock);
	if (ring)
		shca_doorbell(ibqp, 0);
	return err;
}
