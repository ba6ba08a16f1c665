// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: fast registration (FRWR) for kernel consumers.
 *
 * A fast-reg MR (alloc_mr, IB_MR_TYPE_MEM_REG) is created empty and
 * invalid.  Its life is driven from the send queue of a kernel QP:
 *   map_mr_sg   (consumer, any time the MR is not in use) fills the MR's
 *               page list through ib_sg_to_pages();
 *   REG_MR      (engine, in send-queue order) makes the MR valid under
 *               the WR's key with its access rights, over the iova and
 *               length the MR had when the WR was posted, on the pages
 *               map_mr_sg left;
 *   LOCAL_INV   (engine) or a received SEND_WITH_INV (responder) make it
 *               invalid again: every later use of the key fails.
 * softhca uses ib_core's virtual DMA, so the "DMA addresses" in the page
 * list are kernel virtual addresses (sg_virt()), read like the addresses
 * of the PD's DMA MR (mem.c).
 *
 * State and ordering.  The engine accepts a key only while it equals
 * mr->key (0: invalid).  REG_MR and invalidation change mr->key and the
 * fields it covers (access, iova, length, page_off, page_shift, npages)
 * under the MR xarray's lock (sdev->mrs), the lock softhca_mr_get()
 * checks them under; REG_MR writes the fields first and publishes the
 * key with a store-release, which the lockless check of an engine's
 * one-entry MR cache (softhca_mr_get_cached()) pairs with an acquire.
 * So a lookup sees either the old key with nothing, or the new key with
 * its fields.  REG_MR is refused on a valid MR (the IBA's "free state"
 * rule), so the fields of a valid MR never change under a lookup.  The
 * lock nests inside sq.lock and resp.lock, as in every lookup.
 *
 * An engine reference taken before an invalidation may still be in use
 * after it (an RDMA WRITE being placed when the consumer invalidates):
 * the IBA leaves such a race to the consumer.  The page list is never
 * freed under a reference (dereg_mr waits for them), and the page index
 * softhca_fr_map() computes is kept inside the part of the list every
 * registration filled even if the consumer registered the MR again
 * meanwhile, so no race reads outside it or an entry never set.
 *
 * One use is not the consumer's to order: the RDMA READ answered on the
 * wire by the QP's worker (wire_rc_resp.c), which may still be copying
 * when a later request on the same QP, a SEND_WITH_INV, has invalidated
 * the key and completed, and the consumer has given the pages back: a
 * duplicate READ, sent again by a requester that had its data already,
 * is answered that way.  The worker therefore copies each batch under
 * mr->fr_lock's read side after checking the key again
 * (softhca_fr_read_lock()); invalidation takes the write side to clear
 * the key, so it completes only between batches, and the answer stops
 * at the next one.
 *
 * Only kernel QPs carry REG_MR (kverbs.c builds its WQE; wqe.c refuses
 * it on a process's ring).  The WQE names the MR by its key, looked up
 * in the xarray with a reference like any key, never by a pointer.
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>

#include "engine.h"
#include "wqe.h"

struct ib_mr *softhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg)
{
	struct softhca_dev *sdev = to_sdev(ibpd->device);
	struct softhca_mr *mr;

	/* No signature offload, no SG_GAPS registration. */
	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SOFTHCA_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = softhca_mr_alloc(sdev);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->fr = true;
	mr->fr_max = max_num_sg;
	rwlock_init(&mr->fr_lock);
	mr->fr_pages = kvcalloc(max_num_sg, sizeof(*mr->fr_pages), GFP_KERNEL);
	return softhca_mr_finish(sdev, mr, mr->fr_pages ? 0 : -ENOMEM);
}

static int softhca_fr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct softhca_mr *mr = to_smr(ibmr);

	if (mr->fr_npages == mr->fr_max)
		return -ENOMEM;
	/* An engine may read a stale entry of a racing consumer: no tear. */
	WRITE_ONCE(mr->fr_pages[mr->fr_npages], addr);
	mr->fr_npages++;
	return 0;
}

int softhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		      unsigned int *sg_offset)
{
	struct softhca_mr *mr = to_smr(ibmr);
	int n;

	/* ib_map_mr_sg() set ibmr->page_size. */
	if (!is_power_of_2(ibmr->page_size) || ibmr->page_size < SZ_512)
		return -EINVAL;
	mr->fr_npages = 0;
	mr->fr_shift = ilog2(ibmr->page_size);
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, softhca_fr_set_page);
	mr->fr_map_off = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

/*
 * The kernel address of the byte at @addr of a fast-reg MR's
 * registration; *@room: how many bytes from there (at most @left) are
 * contiguous.  The caller's reference keeps the page list.
 */
void *softhca_fr_map(const struct softhca_mr *mr, u64 addr, u32 left,
		     u32 *room)
{
	u32 shift = READ_ONCE(mr->page_shift);
	u64 o = addr - READ_ONCE(mr->iova) + READ_ONCE(mr->page_off);
	u64 size = 1ULL << shift, i = o >> shift, in = o & (size - 1);
	u32 n = READ_ONCE(mr->npages);

	/*
	 * Only a consumer that registered again under our use gets here.
	 * Entries below any registration's npages were all set once (and
	 * are never cleared); those above may never have been.
	 */
	if (unlikely(i >= n))
		i = n ? n - 1 : 0;
	*room = min_t(u64, left, size - in);
	return (void *)(uintptr_t)(READ_ONCE(mr->fr_pages[i]) + in);
}

/* The fast-reg MR at @key's index, referenced; or NULL. */
static struct softhca_mr *softhca_fr_get(struct softhca_dev *sdev, u32 key,
					 struct ib_pd *pd)
{
	struct softhca_mr *mr;

	xa_lock_bh(&sdev->mrs);
	mr = xa_load(&sdev->mrs, key >> 8);
	if (mr && (!mr->fr || mr->ibmr.pd != pd || READ_ONCE(mr->dead) ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	xa_unlock_bh(&sdev->mrs);
	return mr;
}

/**
 * softhca_fastreg_reg - execute a REG_MR WQE
 * @qp: the kernel QP whose send queue holds it (sq.lock held)
 * @w: the kernel copy of the WQE: rkey the new key, remote_addr the
 *	iova, compare_add the length, xrc_srqn the access flags
 *
 * Return: the completion status.
 */
u8 softhca_fastreg_reg(struct softhca_qp *qp, const struct softhca_send_wqe *w)
{
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	u32 key = w->rkey, access = w->xrc_srqn;
	u64 iova = w->remote_addr, length = w->compare_add, span;
	struct softhca_mr *mr;
	u8 status = IB_WC_SUCCESS;

	mr = softhca_fr_get(sdev, key, qp->ibqp.pd);
	if (!mr)
		return IB_WC_LOC_PROT_ERR;
	span = (u64)mr->fr_npages << mr->fr_shift;
	/* No windows on pages the consumer may register again (mw.c). */
	if (softhca_mr_check_access(access) || (access & IB_ACCESS_MW_BIND) ||
	    length > softhca_limits.max_mr_size ||
	    mr->fr_map_off + length > span) {
		status = IB_WC_LOC_QP_OP_ERR;
		goto out;
	}
	xa_lock_bh(&sdev->mrs);
	if (mr->key) {
		/* A valid MR is not registered again: invalidate it first. */
		status = IB_WC_LOC_QP_OP_ERR;
	} else {
		mr->access = access;
		mr->iova = iova;
		mr->length = length;
		mr->page_off = mr->fr_map_off;
		mr->page_shift = mr->fr_shift;
		mr->npages = mr->fr_npages;
		mr->fr_key = key;
		/* Fields first: pairs with softhca_mr_get_cached(). */
		smp_store_release(&mr->key, key);
	}
	xa_unlock_bh(&sdev->mrs);
out:
	softhca_mr_put(mr);
	return status;
}

/**
 * softhca_mr_invalidate - make a fast-reg MR invalid
 * @sdev: the device of the key
 * @pd: the PD the MR must belong to (of the QP that invalidates)
 * @key: the key of the MR's last registration
 *
 * Invalidating an invalid MR again is allowed.  Context: any (the MR
 * xarray's lock, BH-safe, is taken; the MR cannot be freed under it:
 * dereg_mr erases it under the same lock before it waits).
 *
 * Return: 0, or -EINVAL when @key names no fast-reg MR of @pd.
 */
int softhca_mr_invalidate(struct softhca_dev *sdev, struct ib_pd *pd, u32 key)
{
	struct softhca_mr *mr;
	int err = -EINVAL;

	xa_lock_bh(&sdev->mrs);
	mr = xa_load(&sdev->mrs, key >> 8);
	if (mr && mr->fr && mr->fr_key == key && mr->ibmr.pd == pd &&
	    !READ_ONCE(mr->dead)) {
		/* Waits out a copy under the old key (softhca_fr_read_lock()). */
		write_lock(&mr->fr_lock);
		WRITE_ONCE(mr->key, 0);
		write_unlock(&mr->fr_lock);
		err = 0;
	}
	xa_unlock_bh(&sdev->mrs);
	return err;
}

/*
 * Execute a LOCAL_INV WQE: a fast-reg MR's key or a type 2 memory
 * window's (mw.c).  Return: the completion status.
 */
u8 softhca_fastreg_local_inv(struct softhca_qp *qp, u32 key)
{
	if (softhca_key_invalidate(to_sdev(qp->ibqp.device), qp->ibqp.pd,
				   qp->ibqp.qp_num, false, key))
		return IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}
