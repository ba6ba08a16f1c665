// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: memory regions.
 *
 * Keys: a key is (index << 8) | key byte.  The index (24 bits, never 0)
 * finds the MR in the device's xarray; the key byte comes from a
 * per-device counter, so registering again, also through rereg_mr,
 * yields a key that differs from the previous one even when the index is
 * reused.  lkey and rkey are the same value.
 *
 * User memory is pinned with ib_umem_get(), which charges it to the
 * process's RLIMIT_MEMLOCK (ENOMEM beyond it, unless CAP_IPC_LOCK).
 * An MR with MW_BIND access may have memory windows bound to it (mw.c):
 * it cannot be deregistered (EBUSY) until they are unbound.
 * The access-flag rules of the IBA (remote write or atomic need local
 * write) are checked by ib_core before these entry points run; this
 * file rejects what softhca does not offer.
 */
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "engine.h"

#define SOFTHCA_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			   IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			   IB_ACCESS_MW_BIND | IB_ACCESS_RELAXED_ORDERING)

int softhca_mr_check_access(int access)
{
	/* Zero-based and on-demand MRs are not offered. */
	if (access & (IB_ZERO_BASED | IB_ACCESS_ON_DEMAND))
		return -EOPNOTSUPP;
	if (access & ~(SOFTHCA_MR_ACCESS | IB_ACCESS_OPTIONAL))
		return -EINVAL;
	return 0;
}

struct softhca_mr *softhca_mr_alloc(struct softhca_dev *sdev)
{
	struct softhca_mr *mr;

	if (!softhca_count_get(&sdev->num_mrs, softhca_limits.max_mr))
		return ERR_PTR(-ENOMEM);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&sdev->num_mrs);
		return ERR_PTR(-ENOMEM);
	}
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	return mr;
}

/*
 * Publish @mr under a fresh key.  A fast-reg MR starts invalid (@key 0):
 * its first REG_MR makes it valid.
 */
static int softhca_mr_insert(struct softhca_dev *sdev, struct softhca_mr *mr)
{
	u32 index, key;
	int err;

	err = xa_alloc_cyclic_bh(&sdev->mrs, &index, mr,
				 XA_LIMIT(1, SOFTHCA_MR_INDEX_MAX), &sdev->next_mr,
				 GFP_KERNEL);
	if (err < 0)
		return err;
	key = (index << 8) | ((u32)atomic_inc_return(&sdev->key_gen) & 0xff);
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->fr_key = key;
	/* Lookups compare @key under the xarray's lock. */
	xa_lock_bh(&sdev->mrs);
	WRITE_ONCE(mr->key, mr->fr ? 0 : key);
	xa_unlock_bh(&sdev->mrs);
	return 0;
}

static void softhca_mr_free(struct softhca_dev *sdev, struct softhca_mr *mr)
{
	softhca_mr_pages_free(mr);
	kvfree(mr->fr_pages);
	ib_umem_release(mr->umem);
	kfree(mr);
	atomic_dec(&sdev->num_mrs);
}

/*
 * The end of every registration: publish @mr under a fresh key, or, on
 * an earlier error @err or a failed insert, free it.
 */
struct ib_mr *softhca_mr_finish(struct softhca_dev *sdev, struct softhca_mr *mr,
				int err)
{
	if (!err)
		err = softhca_mr_insert(sdev, mr);
	if (err) {
		softhca_mr_free(sdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* A kernel consumer's MR over all of its address space. */
struct ib_mr *softhca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct softhca_dev *sdev = to_sdev(ibpd->device);
	struct softhca_mr *mr;
	int err;

	err = softhca_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	mr = softhca_mr_alloc(sdev);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->access = access;
	mr->iova = 0;
	mr->length = U64_MAX;
	return softhca_mr_finish(sdev, mr, 0);
}

struct ib_mr *softhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibpd->device);
	struct softhca_mr *mr;
	int err;

	err = softhca_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	err = softhca_check_udata_in(udata);
	if (err)
		return ERR_PTR(err);
	if (!length || length > softhca_limits.max_mr_size ||
	    iova + length < iova)
		return ERR_PTR(-EINVAL);

	mr = softhca_mr_alloc(sdev);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto out;
	}
	err = softhca_mr_pages_init(mr);
	if (err)
		goto out;
	mr->access = access;
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
out:
	return softhca_mr_finish(sdev, mr, err);
}

/*
 * rereg_mr: always a new registration (new pages if asked, new key in
 * any case) that ib_uverbs swaps in under the same handle before it
 * deregisters the old one.  What the flags do not change is taken from
 * the old MR.
 */
struct ib_mr *softhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				    u64 length, u64 iova, int access,
				    struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct softhca_mr *old = to_smr(ibmr);

	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	if (!old->umem)
		return ERR_PTR(-EINVAL);
	/* ib_uverbs deregisters @old after: refuse now, as dereg_mr would. */
	if (READ_ONCE(old->mw_bound))
		return ERR_PTR(-EBUSY);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = old->umem->address;
		length = old->length;
		iova = old->iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = old->access;
	if (!(flags & IB_MR_REREG_PD))
		ibpd = ibmr->pd;
	return softhca_reg_user_mr(ibpd, start, length, iova, access, udata);
}

int softhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibmr->device);
	struct softhca_mr *mr = to_smr(ibmr);

	/*
	 * Not while windows are bound to it (a bind checks @dead under the
	 * same lock, so none is bound after this).  No new engine reference
	 * after the erase; QPs caching it let go once they see @dead (at
	 * their next run, or when their poller lets go of them); wait for
	 * the old references.
	 */
	xa_lock_bh(&sdev->mrs);
	if (mr->mw_bound) {
		xa_unlock_bh(&sdev->mrs);
		return -EBUSY;
	}
	WRITE_ONCE(mr->dead, true);
	__xa_erase(&sdev->mrs, mr->fr_key >> 8);
	xa_unlock_bh(&sdev->mrs);
	softhca_mr_put(mr);
	wait_for_completion(&mr->released);
	softhca_mr_free(sdev, mr);
	return 0;
}
