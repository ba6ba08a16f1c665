// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: posting work for kernel consumers.
 *
 * A kernel consumer's QP and SRQ have rings in kernel memory with the
 * layout a process's rings have (uapi/rdma/softhca-abi.h), and the same
 * engine takes work from them: post_send, post_recv and post_srq_recv
 * here are the library's producer, written in the kernel.  Each turns a
 * work request into a ring slot, publishes the producer index with a
 * store-release (the engine's load-acquire of prod pairs with it, as with
 * a process's rings), and hands the QP to its poller.  The engine still
 * copies and validates every slot it takes: one consumer, one set of
 * rules, whoever the producer is.
 *
 * Context.  ULPs post from any context: ib_mad posts under a spinlock
 * with IRQs off, others from completion handlers.  So posting never
 * sleeps and never runs the engine inline (the requester takes its locks
 * with BHs off, which is wrong with IRQs off): the producer lock is an
 * IRQ-safe spinlock of its own (post_lock, taken by nothing else and
 * nested in nothing of ours), and softhca_engine_kick() is IRQ-safe.  A
 * post to a QP in the error state completes with WR_FLUSH_ERR, by the
 * QP's flush work in process context (ib_drain_qp() relies on it).
 *
 * Addresses.  softhca uses ib_core's virtual DMA (no DMA device): the
 * addresses in a kernel consumer's SGEs are kernel virtual addresses,
 * covered by the PD's DMA MR (ib_alloc_pd() makes one; its lkey is the
 * PD's local_dma_lkey).  Inline data is copied from them here.
 *
 * Fast registration (fastreg.c) is for kernel QPs only: REG_MR,
 * LOCAL_INV and SEND_WITH_INV are built here into the WQE fields wqe.h
 * lists, and the engine accepts them only from a kernel ring.
 */
#include <rdma/ib_verbs.h>

#include "engine.h"
#include "wqe.h"

/* Free slots of a kernel ring whose producer index is in its header. */
static u32 softhca_kring_space(struct softhca_wq *wq)
{
	struct softhca_wq_hdr *hdr = softhca_ring_hdr(&wq->ring);

	/* Pairs with the engine's store-release of cons. */
	return wq->ring.entries - (hdr->prod - smp_load_acquire(&hdr->cons));
}

/* Publish @n more slots (post_lock held). */
static void softhca_kring_publish(struct softhca_wq *wq, u32 n)
{
	struct softhca_wq_hdr *hdr = softhca_ring_hdr(&wq->ring);

	/* Pairs with the engine's load-acquire of prod: slots first. */
	smp_store_release(&hdr->prod, hdr->prod + n);
}

static int softhca_kwr_sges(void *data, const struct ib_sge *sg, int n,
			    u32 max_sge)
{
	struct softhca_sge *sge = data;
	int i;

	if (n < 0 || n > max_sge)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		sge[i].addr = sg[i].addr;
		sge[i].length = sg[i].length;
		sge[i].lkey = sg[i].lkey;
	}
	return 0;
}

/* Copy a WR's gather list into the slot as inline data. */
static int softhca_kwr_inline(struct softhca_send_wqe *w,
			      const struct ib_send_wr *wr, u32 max_inline)
{
	u8 *p = (u8 *)(w + 1);
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > max_inline - len)
			return -EINVAL;
		memcpy(p + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	w->inline_len = len;
	w->ctrl.flags |= SOFTHCA_WQE_F_INLINE;
	return 0;
}

/* The opcode-specific part of a send WR. */
static int softhca_kwr_opcode(struct softhca_qp *qp, struct softhca_send_wqe *w,
			      const struct ib_send_wr *wr)
{
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		if (softhca_is_ud(qp->ibqp.qp_type)) {
			w->ud.ah_num = to_sah(ud_wr(wr)->ah)->ah_num;
			w->ud.remote_qpn = ud_wr(wr)->remote_qpn;
			w->remote_qkey = ud_wr(wr)->remote_qkey;
		}
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->remote_addr = rdma_wr(wr)->remote_addr;
		w->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->remote_addr = atomic_wr(wr)->remote_addr;
		w->rkey = atomic_wr(wr)->rkey;
		w->compare_add = atomic_wr(wr)->compare_add;
		w->swap = atomic_wr(wr)->swap;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		w->ctrl.imm_data = wr->ex.invalidate_rkey;
		break;
	case IB_WR_REG_MR:
		/*
		 * The MR goes by its key (the engine looks it up like any
		 * key); its iova and length as they are now, when the WR
		 * takes its place in the queue (wqe.h: the layout).
		 */
		w->rkey = reg_wr(wr)->key;
		w->xrc_srqn = reg_wr(wr)->access;
		w->remote_addr = reg_wr(wr)->mr->iova;
		w->compare_add = reg_wr(wr)->mr->length;
		break;
	default:
		return -EINVAL;
	}
	/* IB_WR_* == IB_UVERBS_WR_* here; REG_MR (0x20) fits the u8 too. */
	w->ctrl.opcode = wr->opcode;
	if (!softhca_opcode_valid(qp->ibqp.qp_type, w->ctrl.opcode) &&
	    !softhca_kopcode_valid(qp->ibqp.qp_type, w->ctrl.opcode))
		return -EINVAL;
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		w->ctrl.imm_data = (__force u32)wr->ex.imm_data;
	return 0;
}

/* Build the slot of one send WR. */
static int softhca_kwr_send(struct softhca_qp *qp, struct softhca_send_wqe *w,
			    const struct ib_send_wr *wr)
{
	int err;

	memset(w, 0, SOFTHCA_SEND_WQE_HDR);
	w->ctrl.wr_id = wr->wr_id;
	if (wr->send_flags & IB_SEND_SIGNALED)
		w->ctrl.flags |= SOFTHCA_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		w->ctrl.flags |= SOFTHCA_WQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		w->ctrl.flags |= SOFTHCA_WQE_F_FENCE;
	err = softhca_kwr_opcode(qp, w, wr);
	if (err)
		return err;
	/* Local operations move no data. */
	if (wr->opcode == IB_WR_REG_MR || wr->opcode == IB_WR_LOCAL_INV)
		return wr->num_sge ? -EINVAL : 0;
	if ((wr->send_flags & IB_SEND_INLINE) &&
	    wr->opcode != IB_WR_RDMA_READ &&
	    wr->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
	    wr->opcode != IB_WR_ATOMIC_FETCH_AND_ADD)
		return softhca_kwr_inline(w, wr, qp->sq.max_inline);
	w->ctrl.num_sge = wr->num_sge;
	return softhca_kwr_sges(w + 1, wr->sg_list, wr->num_sge,
				qp->sq.max_sge);
}

/*
 * Fill slots from a chain of work requests and publish them: @build
 * fills one slot from *@wrp and, on success, moves *@wrp to the next
 * request.  On an error *@wrp is the request that was not posted.
 */
static int softhca_kpost(struct softhca_wq *wq, const void **wrp, void *owner,
			 int (*build)(void *owner, void *slot, const void **wrp),
			 u32 *posted)
{
	struct softhca_wq_hdr *hdr = softhca_ring_hdr(&wq->ring);
	unsigned long flags;
	u32 n = 0, space;
	int err = 0;

	spin_lock_irqsave(&wq->post_lock, flags);
	space = softhca_kring_space(wq);
	while (*wrp) {
		if (n == space) {
			err = -ENOMEM;
			break;
		}
		err = build(owner, softhca_ring_slot(&wq->ring, hdr->prod + n),
			    wrp);
		if (err)
			break;
		n++;
	}
	softhca_kring_publish(wq, n);
	spin_unlock_irqrestore(&wq->post_lock, flags);
	*posted = n;
	return err;
}

static int softhca_kbuild_send(void *owner, void *slot, const void **wrp)
{
	const struct ib_send_wr *wr = *wrp;
	int err;

	err = softhca_kwr_send(owner, slot, wr);
	if (!err)
		*wrp = wr->next;
	return err;
}

/**
 * softhca_kpost_send - ib_post_send() on a kernel consumer's QP
 * @qp: the QP
 * @wr: the chain of work requests
 * @bad_wr: out: the first one not posted
 *
 * Return: 0, -EINVAL (a QP without a send queue or not yet in RTS, a
 * malformed request), -ENOMEM (the send queue is full).
 */
int softhca_kpost_send(struct softhca_qp *qp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr)
{
	const void *next = wr;
	u32 n;
	int err;

	/*
	 * An XRC_TGT QP has no send queue; ib_uverbs creates it without
	 * udata, so a process's POST_SEND on its handle arrives here too.
	 */
	if (!qp->sq.ring.entries || READ_ONCE(qp->state) < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = softhca_kpost(&qp->sq, &next, qp, softhca_kbuild_send, &n);
	if (err)
		*bad_wr = next;
	if (n)
		softhca_kposted(qp);
	return err;
}

/* Build the slot of one receive WR. */
static int softhca_kbuild_recv(void *owner, void *slot, const void **wrp)
{
	const struct ib_recv_wr *wr = *wrp;
	struct softhca_wq *wq = owner;
	struct softhca_recv_wqe *w = slot;
	int err;

	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	w->reserved = 0;
	err = softhca_kwr_sges(w + 1, wr->sg_list, wr->num_sge, wq->max_sge);
	if (!err)
		*wrp = wr->next;
	return err;
}

/* Post receive WRs to a kernel ring (a QP's RQ or an SRQ). */
static int softhca_kpost_recv_wq(struct softhca_wq *wq,
				 const struct ib_recv_wr *wr,
				 const struct ib_recv_wr **bad_wr, u32 *posted)
{
	const void *next = wr;
	int err;

	err = softhca_kpost(wq, &next, wq, softhca_kbuild_recv, posted);
	if (err)
		*bad_wr = next;
	return err;
}

/**
 * softhca_kpost_recv - ib_post_recv() on a kernel consumer's QP
 * @qp: the QP
 * @wr: the chain of work requests
 * @bad_wr: out: the first one not posted
 *
 * Return: 0, -EINVAL (a QP in RESET or with an SRQ, a malformed
 * request), -ENOMEM (the receive queue is full).
 */
int softhca_kpost_recv(struct softhca_qp *qp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	u32 n;
	int err;

	if (!qp->rq.ring.entries || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = softhca_kpost_recv_wq(&qp->rq, wr, bad_wr, &n);
	/* Arriving messages take receive WQEs: only ERR needs a hand. */
	if (n) {
		smp_mb();	/* as in softhca_kposted() */
		if (READ_ONCE(qp->state) == IB_QPS_ERR)
			queue_work(system_wq, &qp->kflush_work);
	}
	return err;
}

/**
 * softhca_kpost_srq_recv - ib_post_srq_recv() on a kernel consumer's SRQ
 * @srq: the SRQ
 * @wr: the chain of work requests
 * @bad_wr: out: the first one not posted
 *
 * Return: 0, -EINVAL (a malformed request), -ENOMEM (the SRQ is full).
 */
int softhca_kpost_srq_recv(struct softhca_srq *srq, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	u32 n;

	return softhca_kpost_recv_wq(&srq->rq, wr, bad_wr, &n);
}

/*
 * New work on a kernel consumer's QP: the poller runs the send queue; in
 * the error state the flush work completes everything with WR_FLUSH_ERR
 * (also what the engine will never take).
 */
void softhca_kposted(struct softhca_qp *qp)
{
	/*
	 * The store-release of prod before the load of state; pairs with
	 * the full barrier of the move to ERR (try_cmpxchg) before the
	 * flush reads prod: the flush sees the new WQEs, or we see ERR.
	 */
	smp_mb();
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		queue_work(system_wq, &qp->kflush_work);
	else
		softhca_engine_kick(qp);
}

/* The flush work of a kernel consumer's QP (process context). */
void softhca_kflush_work(struct work_struct *work)
{
	struct softhca_qp *qp = container_of(work, struct softhca_qp,
					     kflush_work);

	if (READ_ONCE(qp->state) == IB_QPS_ERR && !READ_ONCE(qp->dying))
		softhca_qp_flush(qp);
}
