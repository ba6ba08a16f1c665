// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: completion queues.
 *
 * The kernel is the only producer of a CQ.  Its producer index lives in
 * struct softhca_cq, never in the ring; the process's consumer index is
 * read from the ring only to find free slots (ring.h explains why a
 * wrong value cannot hurt anyone but the liar).  A CQE is written field
 * by field and published by a store-release of its owner byte, which
 * pairs with the library's load-acquire of that byte.
 *
 * A CQ with no room for a completion has overrun: it is marked dead,
 * SOFTHCA_CQ_F_OVERRUN is set in its header and IB_EVENT_CQ_ERR goes to
 * the owner; later completions are dropped, as the IBA allows.
 *
 * Locking: cq->lock, IRQ-safe, protects the producer side and the arm
 * state.  It nests inside a QP's queue locks and is never held while
 * taking another softhca lock.
 *
 * Events.  A process's CQ tells ib_uverbs at once (its handler only
 * queues an event).  A kernel consumer's handler may poll the CQ and
 * post new work from inside (ULPs do): it runs from an irq_work, in
 * hard-IRQ context like an HCA's completion interrupt, never under the
 * locks of the engine that produced the completion.
 */
#include <linux/irq_work.h>
#include <linux/log2.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "softhca.h"

/* The completion handler of a kernel consumer's CQ (hard IRQ). */
static void softhca_cq_comp_work(struct irq_work *work)
{
	struct softhca_cq *cq = container_of(work, struct softhca_cq,
					     comp_work);

	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

static u32 softhca_cq_entries(int cqe)
{
	return roundup_pow_of_two(max(cqe, 1));
}

int softhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibcq->device);
	struct softhca_create_cq_resp resp = {};
	struct softhca_cq *cq = to_scq(ibcq);
	u32 entries;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > softhca_limits.max_cqe)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	err = softhca_check_udata(udata, sizeof(resp));
	if (err)
		return err;
	if (!softhca_count_get(&sdev->num_cqs, softhca_limits.max_cq))
		return -ENOMEM;

	spin_lock_init(&cq->lock);
	init_irq_work(&cq->comp_work, softhca_cq_comp_work);
	entries = softhca_cq_entries(attr->cqe);
	err = softhca_ring_alloc(&cq->ring, udata, entries,
				 sizeof(struct softhca_cqe));
	if (err)
		goto err_count;

	if (udata) {
		resp.ring_offset = cq->ring.mmap_offset;
		resp.ring_size = cq->ring.size;
		resp.entries = entries;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	ibcq->cqe = entries;
	return 0;

err_ring:
	softhca_ring_free(&cq->ring);
err_count:
	atomic_dec(&sdev->num_cqs);
	return err;
}

int softhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct softhca_cq *cq = to_scq(ibcq);

	/*
	 * ib_core refused this while a QP or SRQ still used the CQ; a
	 * handler call queued by their last completion finishes first.
	 */
	irq_work_sync(&cq->comp_work);
	softhca_ring_free(&cq->ring);
	atomic_dec(&to_sdev(ibcq->device)->num_cqs);
	return 0;
}

/* The consumer index: the process's (untrusted) or the kernel's own. */
static u32 softhca_cq_cons(struct softhca_cq *cq)
{
	struct softhca_cq_hdr *hdr = softhca_ring_hdr(&cq->ring);

	if (!cq->ring.mentry)
		return cq->kcons;
	/*
	 * Pairs with the library's store-release of cons: the process
	 * has finished reading the CQEs below it before we reuse them.
	 */
	return smp_load_acquire(&hdr->cons);
}

/* Every field but owner, which publishes the CQE and goes last. */
static void softhca_cqe_write(struct softhca_cqe *slot,
			      const struct softhca_cqe *cqe)
{
	slot->wr_id = cqe->wr_id;
	slot->status = cqe->status;
	slot->opcode = cqe->opcode;
	slot->wc_flags = cqe->wc_flags;
	slot->vendor_err = cqe->vendor_err;
	slot->byte_len = cqe->byte_len;
	slot->imm_data = cqe->imm_data;
	slot->qp_num = cqe->qp_num;
	slot->src_qp = cqe->src_qp;
	slot->slid = cqe->slid;
	slot->pkey_index = cqe->pkey_index;
	slot->sl = cqe->sl;
	slot->dlid_path_bits = cqe->dlid_path_bits;
	slot->network_hdr_type = cqe->network_hdr_type;
}

/*
 * The arm word of a process's CQ (uapi: seq << 2 | SOFTHCA_CQ_ARM_*).
 * A request fires once: its sequence number is remembered, so a stale
 * request left in the word never fires again.
 * The full barrier orders the owner store of the CQE just written
 * before the load of the arm word; it pairs with the library's full
 * barrier between storing arm and polling the CQ again, so either the
 * library sees the CQE or this sees the request.
 */
static bool softhca_cq_mapped_arm(struct softhca_cq *cq,
				  struct softhca_cq_hdr *hdr, bool solicited)
{
	u32 arm, seq;

	/* CQE owner store before arm load; see above for the pairing. */
	smp_mb();
	arm = READ_ONCE(hdr->arm);
	seq = arm >> 2;
	if (!seq || seq == cq->arm_seq_done)
		return false;
	if ((arm & 3) != SOFTHCA_CQ_ARM_NEXT &&
	    !((arm & 3) == SOFTHCA_CQ_ARM_SOLICITED && solicited))
		return false;
	cq->arm_seq_done = seq;
	return true;
}

/**
 * softhca_cq_push - post one completion
 * @cq: the CQ
 * @cqe: the completion, owner byte ignored
 * @solicited: the completion is for a message with the solicited bit
 *
 * Fires the completion handler if the CQ was armed for this kind of
 * completion.  Context: any; takes cq->lock with IRQs off.
 *
 * Return: 0, or -ENOSPC if the CQ overran (now or earlier).
 */
int softhca_cq_push(struct softhca_cq *cq, const struct softhca_cqe *cqe,
		    bool solicited)
{
	struct softhca_cq_hdr *hdr = softhca_ring_hdr(&cq->ring);
	struct ib_event ev;
	struct softhca_cqe *slot;
	bool notify = false;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overrun)
		goto err_unlock;
	/*
	 * The consumer index read last still frees at least the slots
	 * below it (it only grows, and a lie only overruns the liar's own
	 * CQ): read the process's line again only when that value says
	 * full, not for every CQE.
	 */
	if (!softhca_ring_cq_space(cq->prod, cq->cons_seen, cq->ring.entries))
		cq->cons_seen = softhca_cq_cons(cq);
	if (!softhca_ring_cq_space(cq->prod, cq->cons_seen, cq->ring.entries)) {
		cq->overrun = true;
		WRITE_ONCE(hdr->flags, SOFTHCA_CQ_F_OVERRUN);
		spin_unlock_irqrestore(&cq->lock, flags);
		if (cq->ibcq.event_handler) {
			ev.device = cq->ibcq.device;
			ev.element.cq = &cq->ibcq;
			ev.event = IB_EVENT_CQ_ERR;
			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		return -ENOSPC;
	}

	slot = softhca_ring_slot(&cq->ring, cq->prod);
	softhca_cqe_write(slot, cqe);
	/* Pairs with the consumer's load-acquire of owner. */
	smp_store_release(&slot->owner,
			  softhca_cqe_owner(cq->prod, cq->ring.entries));
	cq->prod++;

	if (cq->armed == IB_CQ_NEXT_COMP ||
	    (cq->armed == IB_CQ_SOLICITED && solicited)) {
		cq->armed = 0;
		notify = true;
	}
	if (cq->ring.mentry && softhca_cq_mapped_arm(cq, hdr, solicited))
		notify = true;
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify && cq->ring.mentry) {
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	} else if (notify) {
		irq_work_queue(&cq->comp_work);
	}
	return 0;

err_unlock:
	spin_unlock_irqrestore(&cq->lock, flags);
	return -ENOSPC;
}

/*
 * Arm the CQ.  A request for all completions overrides a pending
 * solicited-only arm (the IBA's rule); a solicited-only request never
 * weakens an armed NEXT_COMP.
 */
int softhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct softhca_cq *cq = to_scq(ibcq);
	int type = flags & IB_CQ_SOLICITED_MASK;
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (type == IB_CQ_NEXT_COMP || cq->armed != IB_CQ_NEXT_COMP)
		cq->armed = type;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && !cq->ring.mentry &&
	    cq->kcons != cq->prod)
		missed = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return missed;
}

static void softhca_cqe_to_wc(const struct softhca_cqe *cqe, struct ib_wc *wc,
			      struct ib_device *ibdev)
{
	struct softhca_dev *sdev = to_sdev(ibdev);
	struct softhca_qp *qp;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->ex.imm_data = (__force __be32)cqe->imm_data;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->port_num = SOFTHCA_PORT;
	wc->network_hdr_type = cqe->network_hdr_type;
	/* ib_init_ah_attr_from_wc() takes the header type from here. */
	if (wc->wc_flags & IB_WC_GRH)
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
	/*
	 * Kernel consumers get the QP pointer.  The QP cannot be gone: a
	 * kernel ULP destroys its QPs only after draining their CQEs.
	 */
	qp = xa_load(&sdev->qps, cqe->qp_num);
	wc->qp = qp ? &qp->ibqp : NULL;
}

/*
 * Poll a kernel consumer's CQ.  A process polls its ring directly and
 * ib_uverbs' POLL_CQ command is not enabled for softhca.
 */
int softhca_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct softhca_cq *cq = to_scq(ibcq);
	struct softhca_cqe *cqe;
	unsigned long flags;
	int n = 0;

	if (cq->ring.mentry)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num && cq->kcons != cq->prod) {
		cqe = softhca_ring_slot(&cq->ring, cq->kcons);
		softhca_cqe_to_wc(cqe, &wc[n++], ibcq->device);
		cq->kcons++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * softhca_resize_cq - give the CQ a ring of a new size
 * @ibcq: the CQ
 * @cqe: the number of CQEs it must hold at least
 * @udata: the command's driver data (NULL for a kernel consumer)
 *
 * The completions the process has not consumed yet move to the start of
 * the new ring, in order and with fresh owner bytes; the response says
 * how many.  The library does this under its CQ lock and starts
 * consuming the new ring at index 0.  The number of unconsumed CQEs
 * comes from the process's consumer index: it is clamped to what the
 * old ring can hold, so a lie only garbles the liar's own CQEs.
 */
int softhca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct softhca_resize_cq_resp resp = {};
	struct softhca_cq *cq = to_scq(ibcq);
	struct softhca_ring nring, oring;
	struct softhca_cqe *src, *dst;
	u32 entries, cons, used, i;
	unsigned long flags;
	int err;

	if (cqe < 1 || cqe > softhca_limits.max_cqe)
		return -EINVAL;
	err = softhca_check_udata(udata, sizeof(resp));
	if (err)
		return err;

	entries = softhca_cq_entries(cqe);
	err = softhca_ring_alloc(&nring, udata, entries,
				 sizeof(struct softhca_cqe));
	if (err)
		return err;

	spin_lock_irqsave(&cq->lock, flags);
	cons = softhca_cq_cons(cq);
	used = cq->prod - cons;
	if (used > cq->ring.entries)
		used = cq->ring.entries;
	if (used > entries) {
		spin_unlock_irqrestore(&cq->lock, flags);
		softhca_ring_free(&nring);
		return -EINVAL;
	}
	for (i = 0; i < used; i++) {
		src = softhca_ring_slot(&cq->ring, cq->prod - used + i);
		dst = softhca_ring_slot(&nring, i);
		memcpy(dst, src, sizeof(*dst));
		dst->owner = softhca_cqe_owner(i, entries);
	}
	oring = cq->ring;
	cq->ring = nring;
	cq->prod = used;
	cq->kcons = 0;
	cq->cons_seen = 0;
	spin_unlock_irqrestore(&cq->lock, flags);

	/* Nothing writes the old ring any more. */
	softhca_ring_free(&oring);
	ibcq->cqe = entries;
	if (!udata)
		return 0;
	resp.ring_offset = cq->ring.mmap_offset;
	resp.ring_size = cq->ring.size;
	resp.entries = entries;
	resp.copied = used;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}
