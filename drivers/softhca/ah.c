// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: address handles.
 *
 * An AH is a RoCEv2 destination that ib_core has already resolved (GID
 * attribute, destination MAC).  Each AH gets a number a process puts in
 * its UD send WQEs (softhca_send_wqe.ud.ah_num); the engine finds the AH
 * by that number and checks it belongs to the sending QP's PD, so a WQE
 * cannot name another process's AH to any effect.
 *
 * Kernel consumers create and destroy AHs in atomic context, ib_cm even
 * with IRQs off (under spin_lock_irqsave()): the AH xarray's lock is
 * IRQ-safe and always taken with irqsave (device.c, loopback.c).
 */
#include <rdma/ib_verbs.h>

#include "engine.h"

static void softhca_ah_erase(struct softhca_dev *sdev, struct softhca_ah *ah)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ahs, flags);
	__xa_erase(&sdev->ahs, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ahs, flags);
}

int softhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		      struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibah->device);
	struct softhca_create_ah_resp resp = {};
	struct rdma_ah_attr *attr = init->ah_attr;
	struct softhca_ah *ah = to_sah(ibah);
	gfp_t gfp = (init->flags & RDMA_CREATE_AH_SLEEPABLE) ?
		    GFP_KERNEL : GFP_ATOMIC;
	unsigned long flags;
	int err;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    rdma_ah_get_port_num(attr) != SOFTHCA_PORT ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	err = softhca_check_udata(udata, sizeof(resp));
	if (err)
		return err;
	if (!softhca_count_get(&sdev->num_ahs, softhca_limits.max_ah))
		return -ENOMEM;

	ah->attr = *attr;
	/* ib_core holds the GID attribute reference for the AH's life. */
	ah->attr.grh.sgid_attr = NULL;
	if (attr->grh.sgid_attr)
		ah->sgid = attr->grh.sgid_attr->gid;
	ah->dest_dev = softhca_dev_by_gid(&attr->grh.dgid, sdev);
	/* With GFP_KERNEL (IRQs on) __xa_alloc() may drop the lock to allocate. */
	xa_lock_irqsave(&sdev->ahs, flags);
	err = __xa_alloc(&sdev->ahs, &ah->ah_num, ah, XA_LIMIT(1, U32_MAX), gfp);
	xa_unlock_irqrestore(&sdev->ahs, flags);
	if (err)
		goto err_count;

	if (udata) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	softhca_ah_erase(sdev, ah);
err_count:
	atomic_dec(&sdev->num_ahs);
	return err;
}

int softhca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_sah(ibah)->attr;
	return 0;
}

int softhca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct softhca_dev *sdev = to_sdev(ibah->device);
	struct softhca_ah *ah = to_sah(ibah);

	softhca_ah_erase(sdev, ah);
	atomic_dec(&sdev->num_ahs);
	return 0;
}
