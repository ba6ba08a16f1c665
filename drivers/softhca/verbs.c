// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the ib_device_ops table.
 *
 * ib_core refuses to register a device that lacks any of its mandatory
 * verbs (QP, CQ and MR among them).  Until those objects are implemented
 * their entry points below answer -EOPNOTSUPP, which ib_uverbs passes to
 * user space unchanged: the device registers, and every caller is told
 * plainly that the operation is not available.
 */
#include <rdma/ib_verbs.h>

#include "softhca.h"

static int softhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			     struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int softhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			     int mask, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int softhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	return 0;	/* unreachable: no QP can be created */
}

static int softhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			     const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static int softhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			     const struct ib_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static int softhca_create_cq(struct ib_cq *ibcq,
			     const struct ib_cq_init_attr *attr,
			     struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int softhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	return 0;	/* unreachable: no CQ can be created */
}

static int softhca_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}

static int softhca_req_notify_cq(struct ib_cq *ibcq,
				 enum ib_cq_notify_flags flags)
{
	return -EOPNOTSUPP;
}

static struct ib_mr *softhca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static struct ib_mr *softhca_reg_user_mr(struct ib_pd *ibpd, u64 start,
					 u64 length, u64 iova, int access,
					 struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int softhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	return 0;	/* unreachable: no MR can be registered */
}

static enum rdma_link_layer softhca_get_link_layer(struct ib_device *ibdev,
						   u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

const struct ib_device_ops softhca_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SOFTHCA_UVERBS_ABI_VERSION,

	.device_group = &softhca_attr_group,

	.alloc_pd = softhca_alloc_pd,
	.alloc_ucontext = softhca_alloc_ucontext,
	.create_cq = softhca_create_cq,
	.create_qp = softhca_create_qp,
	.dealloc_driver = softhca_dealloc_driver,
	.dealloc_pd = softhca_dealloc_pd,
	.dealloc_ucontext = softhca_dealloc_ucontext,
	.dereg_mr = softhca_dereg_mr,
	.disassociate_ucontext = softhca_disassociate_ucontext,
	.destroy_cq = softhca_destroy_cq,
	.destroy_qp = softhca_destroy_qp,
	.get_dev_fw_str = softhca_get_dev_fw_str,
	.get_dma_mr = softhca_get_dma_mr,
	.get_link_layer = softhca_get_link_layer,
	.get_port_immutable = softhca_get_port_immutable,
	.mmap = softhca_mmap,
	.mmap_free = softhca_mmap_free,
	.modify_qp = softhca_modify_qp,
	.poll_cq = softhca_poll_cq,
	.post_recv = softhca_post_recv,
	.post_send = softhca_post_send,
	.query_device = softhca_query_device,
	.query_pkey = softhca_query_pkey,
	.query_port = softhca_query_port,
	.reg_user_mr = softhca_reg_user_mr,
	.req_notify_cq = softhca_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_pd, softhca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, softhca_ucontext, ibuc),
};
