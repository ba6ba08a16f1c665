// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: shared receive queues, basic and XRC.
 *
 * An SRQ is one receive ring (same layout as a QP's RQ) that any number
 * of QPs, or for an XRC SRQ any XRC_TGT QP of its domain, take WQEs
 * from.  Its number is allocated from a per-device space so that an XRC
 * send can name it.
 *
 * srq_limit: when armed (non-zero) and the number of posted WQEs drops
 * below it as the engine takes one, IB_EVENT_SRQ_LIMIT_REACHED fires
 * once and the limit disarms (reads back as 0), as ibv_modify_srq(3)
 * describes.
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "engine.h"
#include "wqe.h"

struct lock_class_key softhca_srq_lock_key;

int softhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibsrq->device);
	struct softhca_create_srq_resp resp = {};
	struct softhca_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	u32 entries, stride, srqn;
	int err;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	if (attr->max_wr < 1 || attr->max_wr > softhca_limits.max_srq_wr ||
	    attr->max_sge > softhca_limits.max_sge)
		return -EINVAL;
	err = softhca_check_udata(udata, sizeof(resp));
	if (err)
		return err;
	if (!softhca_count_get(&sdev->num_srqs, softhca_limits.max_srq))
		return -ENOMEM;

	softhca_wq_init(&srq->rq, &softhca_srq_lock_key);
	refcount_set(&srq->ref, 1);
	init_completion(&srq->released);
	srq->limit = 0;		/* srq_limit is not an input of create */
	entries = roundup_pow_of_two(attr->max_wr);
	stride = softhca_recv_stride(attr->max_sge);
	err = softhca_ring_alloc(&srq->rq.ring, udata, entries, stride);
	if (err)
		goto err_count;
	srq->rq.max_sge = min_t(u32, softhca_limits.max_sge,
				(stride - sizeof(struct softhca_recv_wqe)) /
				sizeof(struct softhca_sge));

	err = xa_alloc_cyclic_bh(&sdev->srqs, &srqn, NULL,
				 XA_LIMIT(1, SOFTHCA_MAX_NUM), &sdev->next_srqn,
				 GFP_KERNEL);
	if (err < 0)
		goto err_ring;
	srq->srqn = srqn;
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srqn;

	attr->max_wr = entries;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = 0;

	if (udata) {
		resp.ring_offset = srq->rq.ring.mmap_offset;
		resp.ring_size = srq->rq.ring.size;
		resp.entries = entries;
		resp.stride = stride;
		resp.srqn = srqn;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_srqn;
	}
	xa_store_bh(&sdev->srqs, srqn, srq, GFP_KERNEL);
	return 0;

err_srqn:
	xa_erase_bh(&sdev->srqs, srqn);
err_ring:
	softhca_ring_free(&srq->rq.ring);
err_count:
	atomic_dec(&sdev->num_srqs);
	return err;
}

int softhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct softhca_srq *srq = to_ssrq(ibsrq);
	int err;

	err = softhca_check_udata_in(udata);
	if (err)
		return err;
	/* Resizing a ring a process has mapped is not offered. */
	if (mask & ~IB_SRQ_LIMIT)
		return -EOPNOTSUPP;
	if (attr->srq_limit > srq->rq.ring.entries)
		return -EINVAL;
	spin_lock_bh(&srq->rq.lock);
	srq->limit = attr->srq_limit;
	spin_unlock_bh(&srq->rq.lock);
	return 0;
}

int softhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct softhca_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.ring.entries;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int softhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibsrq->device);
	struct softhca_srq *srq = to_ssrq(ibsrq);

	/*
	 * ib_core refused this while a QP still used the SRQ.  An XRC SRQ
	 * is found by number: once out of the xarray no new reference is
	 * taken; wait for a delivery in progress to let go of it.
	 */
	xa_erase_bh(&sdev->srqs, srq->srqn);
	softhca_srq_put(srq);
	wait_for_completion(&srq->released);
	softhca_ring_free(&srq->rq.ring);
	atomic_dec(&sdev->num_srqs);
	return 0;
}

/**
 * softhca_srq_get - an SRQ by number, referenced
 * @sdev: the device
 * @srqn: the number
 *
 * Context: any; takes the xarray's lock.
 * Return: the SRQ, or NULL when there is none (or it is being destroyed).
 */
struct softhca_srq *softhca_srq_get(struct softhca_dev *sdev, u32 srqn)
{
	struct softhca_srq *srq;

	xa_lock_bh(&sdev->srqs);
	srq = xa_load(&sdev->srqs, srqn);
	if (srq && !refcount_inc_not_zero(&srq->ref))
		srq = NULL;
	xa_unlock_bh(&sdev->srqs);
	return srq;
}

void softhca_srq_put(struct softhca_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->released);
}

/*
 * A process's SRQ is posted to through its ring; a kernel consumer's
 * through kverbs.c.
 */
int softhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct softhca_srq *srq = to_ssrq(ibsrq);

	if (srq->rq.ring.mentry) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	return softhca_kpost_srq_recv(srq, wr, bad_wr);
}

/**
 * softhca_srq_check_limit - fire SRQ_LIMIT_REACHED if it is due
 * @srq: the SRQ, after the engine took a WQE from it
 *
 * Context: process or softirq; takes srq->rq.lock.
 */
void softhca_srq_check_limit(struct softhca_srq *srq)
{
	struct softhca_wq_hdr *hdr = softhca_ring_hdr(&srq->rq.ring);
	struct ib_event ev;
	bool fire = false;
	int posted;

	spin_lock_bh(&srq->rq.lock);
	/* Pairs with the library's store-release of prod. */
	posted = softhca_ring_posted(smp_load_acquire(&hdr->prod),
				     srq->rq.cons, srq->rq.ring.entries);
	if (srq->limit && posted >= 0 && posted < srq->limit) {
		srq->limit = 0;
		fire = true;
	}
	spin_unlock_bh(&srq->rq.lock);

	if (fire && srq->ibsrq.event_handler) {
		ev.device = srq->ibsrq.device;
		ev.element.srq = &srq->ibsrq;
		ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
}
