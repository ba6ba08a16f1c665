// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: memory windows (IBA 10.6.7), type 1 and type 2B.
 *
 * A window is a remote key onto a range of an MR.  It is allocated
 * unbound; a BIND_MW work request, executed by the requester in send
 * queue order, binds it to a range of an MR that has MW_BIND access,
 * under a key whose index is the window's and whose low byte the
 * consumer chose (ibv_inc_rkey()).  Type 1: ibv_bind_mw() posts that
 * request; binding again moves the window, a bind of length 0 unbinds
 * it; it cannot be invalidated.  Type 2B: bound by ibv_post_send()
 * IBV_WR_BIND_MW only while free, it is tied to the QP that bound it
 * (only messages that arrive on that QP may use its key), and freed by
 * LOCAL_INV, by a received SEND_WITH_INV that names its key, or by the
 * destruction of that QP.
 *
 * Keys.  A window's key index lies in the upper half of the 24-bit
 * index space (SOFTHCA_MW_INDEX_MIN..), MRs in the lower one: an MR
 * lookup (an lkey, mem.c) never finds a window, and the responder knows
 * from a key alone which lookup it needs (softhca_rkey_get()).
 *
 * State and locking.  The binding (@key, @mr, @addr, @length, @access,
 * @qpn) is written and read only under the lock of sdev->mrs, the lock
 * every key check takes; @key is 0 while the window is not bound (no
 * window key is 0: its index is not).  sdev->mws maps the index to the
 * window; a lookup loads from it and uses the window under the lock of
 * sdev->mrs, and never keeps the pointer beyond it.
 *
 * Lifetimes.  The engine never holds a window: a remote lookup returns
 * the window's MR with a reference, like an MR lookup, and the data
 * path works on the MR (dereg_mr waits for that reference).  So
 * dealloc_mw only has to make the window unreachable: it erases it from
 * sdev->mws, then unbinds it under the lock of sdev->mrs; any lookup
 * that loaded it before the erase still held that lock, so once
 * dealloc_mw has taken it no one can reach the window and ib_core may
 * free it.  A bound window counts on its MR (@mw_bound, under the same
 * lock): dereg_mr refuses with EBUSY while windows are bound, so the
 * MR a binding points to outlives the binding.  As for fast-reg MRs
 * (fastreg.c), an access that took its reference before an
 * invalidation may finish after it: the IBA leaves that race to the
 * consumer; the memory stays the MR's.  A READ answered over time on
 * the wire looks again before each batch (softhca_mw_recheck()), so
 * only the batch under way finishes.
 */
#include <linux/overflow.h>
#include <rdma/ib_verbs.h>

#include "engine.h"

int softhca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibmw->device);
	struct softhca_mw *mw = to_smw(ibmw);
	u32 index;
	int err;

	err = softhca_check_udata_in(udata);
	if (err)
		return err;
	/* ib_uverbs passes the consumer's type; type 2 is 2B here. */
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (!softhca_count_get(&sdev->num_mws, SOFTHCA_MAX_MW))
		return -ENOMEM;
	err = xa_alloc_cyclic_bh(&sdev->mws, &index, mw,
				 XA_LIMIT(SOFTHCA_MW_INDEX_MIN, SOFTHCA_MAX_NUM),
				 &sdev->next_mw, GFP_KERNEL);
	if (err < 0) {
		atomic_dec(&sdev->num_mws);
		return err;
	}
	mw->index = index;
	ibmw->rkey = (index << 8) |
		     ((u32)atomic_inc_return(&sdev->key_gen) & 0xff);
	return 0;
}

/* Undo a binding.  Context: the lock of sdev->mrs held. */
static void softhca_mw_unbind_locked(struct softhca_mw *mw)
{
	if (mw->mr)
		mw->mr->mw_bound--;
	mw->mr = NULL;
	WRITE_ONCE(mw->key, 0);
}

int softhca_dealloc_mw(struct ib_mw *ibmw)
{
	struct softhca_dev *sdev = to_sdev(ibmw->device);
	struct softhca_mw *mw = to_smw(ibmw);

	/* Unreachable first, then unbound: see the top of this file. */
	xa_erase_bh(&sdev->mws, mw->index);
	xa_lock_bh(&sdev->mrs);
	softhca_mw_unbind_locked(mw);
	xa_unlock_bh(&sdev->mrs);
	atomic_dec(&sdev->num_mws);
	return 0;
}

/**
 * softhca_mw_bind_check - may this bind be carried out?
 * @mw: the window (its binding read under the lock of sdev->mrs)
 * @pd: the PD of the QP that binds
 * @b: the bind, from the kernel copy of the WQE
 * @mr: the MR @b->lkey names, its key, PD and range checked by the
 *	lookup; NULL when @b->length is 0
 *
 * Pure: the IBA's rules on plain values, for softhca_mw_bind() and the
 * KUnit suite.
 *
 * Return: 0, or -EINVAL (the window, QP or request), -EBUSY (a type 2
 * window still bound), -EACCES (the MR's rights), -ERANGE (the range).
 */
int softhca_mw_bind_check(const struct softhca_mw *mw, const struct ib_pd *pd,
			  const struct softhca_mw_bind *b,
			  const struct softhca_mr *mr)
{
	u64 end;

	/* The window, the QP and the MR share one PD (C10-72 for type 2). */
	if (mw->ibmw.pd != pd || (b->key >> 8) != mw->index)
		return -EINVAL;
	/* Remote rights only: no zero-based windows. */
	if (b->access & ~(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_ATOMIC))
		return -EINVAL;
	if (mw->ibmw.type == IB_MW_TYPE_2) {
		/* Bound from the free state only, never with length 0. */
		if (mw->key)
			return -EBUSY;
		if (!b->length)
			return -EINVAL;
	}
	if (!b->length)
		return 0;	/* a type 1 unbind */
	if (!mr || mr->fr || mr->ibmr.pd != mw->ibmw.pd)
		return -EINVAL;
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	/* C10-74: a window that lets others write needs local write. */
	if ((b->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (check_add_overflow(b->addr, b->length, &end) ||
	    b->addr < mr->iova || end - mr->iova > mr->length)
		return -ERANGE;
	return 0;
}

/**
 * softhca_mw_allows - may a remote access use this window?
 * @mw: the window (binding read under the lock of sdev->mrs)
 * @key: the rkey the message carries
 * @pd: the PD of the QP the message arrived on
 * @qpn: that QP's number (a type 2B window answers only its own QP)
 * @access: IB_ACCESS_REMOTE_* the access needs
 * @addr: start of the range, which must lie in the window
 * @len: its length
 *
 * Pure, like softhca_mw_bind_check().
 */
bool softhca_mw_allows(const struct softhca_mw *mw, u32 key,
		       const struct ib_pd *pd, u32 qpn, int access, u64 addr,
		       u64 len)
{
	u64 end;

	return mw->key && mw->key == key && mw->mr &&
	       mw->ibmw.pd == pd &&
	       (mw->ibmw.type == IB_MW_TYPE_1 || mw->qpn == qpn) &&
	       (mw->access & access) == access &&
	       !check_add_overflow(addr, len, &end) && addr >= mw->addr &&
	       end - mw->addr <= mw->length;
}

/**
 * softhca_mw_bind - execute a BIND_MW WQE
 * @qp: the QP whose send queue holds it (sq.lock held)
 * @w: the kernel copy of the WQE (uapi/rdma/softhca-abi.h: the layout)
 *
 * Return: the completion status; any failure is IB_WC_MW_BIND_ERR,
 * which moves @qp to the error state (the requester does that).
 */
u8 softhca_mw_bind(struct softhca_qp *qp, const struct softhca_send_wqe *w)
{
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	struct softhca_mw_bind b = {
		.key = w->rkey,
		.lkey = (u32)w->swap,
		.addr = w->remote_addr,
		.length = w->compare_add,
		.access = w->xrc_srqn,
	};
	struct softhca_mr *mr = NULL;
	struct softhca_mw *mw;
	u8 status = IB_WC_MW_BIND_ERR;

	if (!softhca_key_is_mw(b.key))
		return IB_WC_MW_BIND_ERR;
	/* The lkey names an MR of the QP's PD that covers the range. */
	if (b.length) {
		mr = softhca_mr_get(sdev, b.lkey, qp->ibqp.pd, 0, b.addr,
				    b.length);
		if (!mr)
			return IB_WC_MW_BIND_ERR;
	}
	xa_lock_bh(&sdev->mrs);
	mw = xa_load(&sdev->mws, b.key >> 8);
	/* dereg_mr sets @dead under this lock once no window is bound. */
	if (mw && !softhca_mw_bind_check(mw, qp->ibqp.pd, &b, mr) &&
	    !(mr && mr->dead)) {
		softhca_mw_unbind_locked(mw);
		if (mr) {
			mr->mw_bound++;
			mw->mr = mr;
			mw->addr = b.addr;
			mw->length = b.length;
			mw->access = b.access;
			mw->qpn = qp->ibqp.qp_num;
			WRITE_ONCE(mw->key, b.key);
		}
		status = IB_WC_SUCCESS;
	}
	xa_unlock_bh(&sdev->mrs);
	if (mr)
		softhca_mr_put(mr);
	return status;
}

/**
 * softhca_mw_rkey_get - the MR behind a window's rkey, referenced
 * @sdev: the device of the key
 * @key: a window key (softhca_key_is_mw())
 * @pd: the PD of the QP the access arrived on
 * @qpn: that QP's number
 * @access: IB_ACCESS_REMOTE_* the access needs
 * @addr: start of the range
 * @len: its length
 *
 * The rules are softhca_mw_allows()'s.
 *
 * Return: the window's MR with a reference, or NULL.  The caller works
 * on the MR at @addr (a window is not zero-based: its addresses are its
 * MR's).
 */
struct softhca_mr *softhca_mw_rkey_get(struct softhca_dev *sdev, u32 key,
				       struct ib_pd *pd, u32 qpn, int access,
				       u64 addr, u64 len)
{
	struct softhca_mr *mr = NULL;
	struct softhca_mw *mw;

	xa_lock_bh(&sdev->mrs);
	mw = xa_load(&sdev->mws, key >> 8);
	if (mw && softhca_mw_allows(mw, key, pd, qpn, access, addr, len) &&
	    refcount_inc_not_zero(&mw->mr->ref))
		mr = mw->mr;
	xa_unlock_bh(&sdev->mrs);
	return mr;
}

/**
 * softhca_mw_still - does a window still allow an access it allowed?
 * @mw: the window (binding read under the lock of sdev->mrs)
 * @key: the rkey the access was checked under
 * @mr: the MR the check found behind it
 * @qpn: as for softhca_mw_allows()
 * @access: likewise
 * @addr: likewise
 * @len: likewise
 *
 * Pure, like softhca_mw_allows().  No PD is named: a binding's MR has
 * the window's PD (softhca_mw_bind_check()), which the first check
 * compared with the QP's.
 */
bool softhca_mw_still(const struct softhca_mw *mw, u32 key,
		      const struct softhca_mr *mr, u32 qpn, int access,
		      u64 addr, u64 len)
{
	return mw->mr == mr &&
	       softhca_mw_allows(mw, key, mr->ibmr.pd, qpn, access, addr, len);
}

/**
 * softhca_mw_recheck - check again a window key checked some time ago
 * @sdev: the device of the key
 * @key: a window key (softhca_key_is_mw()) an access was checked under
 * @mr: the MR softhca_mw_rkey_get() returned for it (still referenced)
 * @qpn: as for softhca_mw_rkey_get()
 * @access: likewise
 * @addr: likewise
 * @len: likewise
 *
 * For a READ answered over time: wire_rc_resp.c checks before each
 * batch, so a window invalidated, unbound, moved or bound again since
 * ends the answer, as rxe checks before it goes on with one.  Unlike a
 * fast-reg MR's key (softhca_fr_read_lock()) nothing holds the binding
 * while the batch is copied: the memory stays the window's MR's
 * whatever happens to the window, so this only narrows the race the
 * IBA leaves to the consumer to one batch.
 * Context: any; takes the lock of sdev->mrs.
 */
bool softhca_mw_recheck(struct softhca_dev *sdev, u32 key,
			const struct softhca_mr *mr, u32 qpn, int access,
			u64 addr, u64 len)
{
	struct softhca_mw *mw;
	bool ok;

	xa_lock_bh(&sdev->mrs);
	mw = xa_load(&sdev->mws, key >> 8);
	ok = mw && softhca_mw_still(mw, key, mr, qpn, access, addr, len);
	xa_unlock_bh(&sdev->mrs);
	return ok;
}

/**
 * softhca_mw_qp_gone - invalidate the type 2B windows bound to a QP
 * @qp: a QP being destroyed, which the engine no longer runs (so it
 *	binds nothing more)
 *
 * Its number may be given to a new QP, which must not inherit them; and
 * their MRs may be deregistered once nothing can use the windows.
 * Context: process; walks every window of the device.
 */
void softhca_mw_qp_gone(struct softhca_qp *qp)
{
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	struct softhca_mw *mw;
	unsigned long i;

	/* A window found here is not freed under us (see the top). */
	xa_lock_bh(&sdev->mrs);
	xa_for_each(&sdev->mws, i, mw)
		if (mw->ibmw.type == IB_MW_TYPE_2 && mw->key &&
		    mw->qpn == qp->ibqp.qp_num)
			softhca_mw_unbind_locked(mw);
	xa_unlock_bh(&sdev->mrs);
}

/**
 * softhca_key_invalidate - LOCAL_INV, or a received SEND_WITH_INV
 * @sdev: the device of the key
 * @pd: the PD of the QP that invalidates
 * @qpn: with @remote, the QP the SEND_WITH_INV arrived on
 * @remote: a SEND_WITH_INV: a type 2B window must be bound to @qpn
 * @key: the key to invalidate: a fast-reg MR's (fastreg.c) or a type 2
 *	window's; the window must be bound under exactly this key
 *
 * Return: 0, or -EINVAL when @key names nothing that @pd may invalidate
 * (a type 1 window never may).
 */
int softhca_key_invalidate(struct softhca_dev *sdev, struct ib_pd *pd,
			   u32 qpn, bool remote, u32 key)
{
	struct softhca_mw *mw;
	int err = -EINVAL;

	if (!softhca_key_is_mw(key))
		return softhca_mr_invalidate(sdev, pd, key);
	xa_lock_bh(&sdev->mrs);
	mw = xa_load(&sdev->mws, key >> 8);
	if (mw && mw->ibmw.type == IB_MW_TYPE_2 && mw->key == key &&
	    mw->ibmw.pd == pd && (!remote || mw->qpn == qpn)) {
		softhca_mw_unbind_locked(mw);
		err = 0;
	}
	xa_unlock_bh(&sdev->mrs);
	return err;
}
