// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: address handles.
 *
 * An AH is a RoCEv2 destination that ib_core has already resolved (GID
 * attribute, destination MAC).  Each AH gets a number a process puts in
 * its UD send WQEs (softhca_send_wqe.ud.ah_num); the engine finds the AH
 * by that number and checks it belongs to the sending QP's PD, so a WQE
 * cannot name another process's AH to any effect.
 */
#include <rdma/ib_verbs.h>

#include "engine.h"

/*
 * A non-sleepable create or destroy may come with IRQs off: ib_cm makes
 * and frees its MADs' AHs under its cm_id spinlock (spin_lock_irq), as
 * for nvme-rdma's connect.  Re-enabling BHs with IRQs off is a bug
 * (__local_bh_enable_ip() warns), so the table's lock is taken with
 * IRQs saved there: it is never taken in hard IRQ, and GFP_ATOMIC never
 * makes __xa_alloc() drop it.
 */
static int softhca_ah_insert(struct softhca_dev *sdev, struct softhca_ah *ah,
			     u32 flags)
{
	unsigned long irqflags;
	int err;

	if (flags & RDMA_CREATE_AH_SLEEPABLE)
		return xa_alloc_bh(&sdev->ahs, &ah->ah_num, ah,
				   XA_LIMIT(1, U32_MAX), GFP_KERNEL);
	xa_lock_irqsave(&sdev->ahs, irqflags);
	err = __xa_alloc(&sdev->ahs, &ah->ah_num, ah, XA_LIMIT(1, U32_MAX),
			 GFP_ATOMIC);
	xa_unlock_irqrestore(&sdev->ahs, irqflags);
	return err;
}

int softhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		      struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibah->device);
	struct softhca_create_ah_resp resp = {};
	struct rdma_ah_attr *attr = init->ah_attr;
	struct softhca_ah *ah = to_sah(ibah);
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
	ah->dest_dev = softhca_dev_by_gid(&attr->grh.dgid, dev_net(sdev->ndev));
	err = softhca_ah_insert(sdev, ah, init->flags);
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
	xa_erase_bh(&sdev->ahs, ah->ah_num);
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
	unsigned long irqflags;

	/* IRQs may be off (see softhca_ah_insert()). */
	xa_lock_irqsave(&sdev->ahs, irqflags);
	__xa_erase(&sdev->ahs, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ahs, irqflags);
	atomic_dec(&sdev->num_ahs);
	return 0;
}
