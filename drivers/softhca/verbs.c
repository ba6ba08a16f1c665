// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the ib_device_ops table.  Each entry point lives in the file
 * of its object (see the ownership map in softhca.h).
 */
#include <rdma/ib_verbs.h>

#include "counters.h"
#include "softhca.h"

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

	.alloc_hw_port_stats = softhca_alloc_hw_port_stats,
	.alloc_mr = softhca_alloc_mr,
	.alloc_mw = softhca_alloc_mw,
	.alloc_pd = softhca_alloc_pd,
	.alloc_ucontext = softhca_alloc_ucontext,
	.alloc_xrcd = softhca_alloc_xrcd,
	.attach_mcast = softhca_attach_mcast,
	.create_ah = softhca_create_ah,
	.create_user_ah = softhca_create_ah,
	.create_cq = softhca_create_cq,
	.create_qp = softhca_create_qp,
	.create_srq = softhca_create_srq,
	.dealloc_driver = softhca_dealloc_driver,
	.dealloc_mw = softhca_dealloc_mw,
	.dealloc_pd = softhca_dealloc_pd,
	.dealloc_ucontext = softhca_dealloc_ucontext,
	.dealloc_xrcd = softhca_dealloc_xrcd,
	.dereg_mr = softhca_dereg_mr,
	.destroy_ah = softhca_destroy_ah,
	.destroy_cq = softhca_destroy_cq,
	.destroy_qp = softhca_destroy_qp,
	.destroy_srq = softhca_destroy_srq,
	.detach_mcast = softhca_detach_mcast,
	.disassociate_ucontext = softhca_disassociate_ucontext,
	.get_dev_fw_str = softhca_get_dev_fw_str,
	.get_dma_mr = softhca_get_dma_mr,
	.get_hw_stats = softhca_get_hw_stats,
	.get_link_layer = softhca_get_link_layer,
	.get_port_immutable = softhca_get_port_immutable,
	.fill_res_qp_entry = softhca_fill_res_qp_entry,
	.fill_res_cq_entry = softhca_fill_res_cq_entry,
	.fill_res_mr_entry = softhca_fill_res_mr_entry,
	.map_mr_sg = softhca_map_mr_sg,
	.mmap = softhca_mmap,
	.mmap_free = softhca_mmap_free,
	.modify_qp = softhca_modify_qp,
	.modify_srq = softhca_modify_srq,
	.poll_cq = softhca_poll_cq,
	.post_recv = softhca_post_recv,
	.post_send = softhca_post_send,
	.post_srq_recv = softhca_post_srq_recv,
	.query_ah = softhca_query_ah,
	.query_device = softhca_query_device,
	.query_pkey = softhca_query_pkey,
	.query_port = softhca_query_port,
	.query_qp = softhca_query_qp,
	.query_srq = softhca_query_srq,
	.reg_user_mr = softhca_reg_user_mr,
	.req_notify_cq = softhca_req_notify_cq,
	.rereg_user_mr = softhca_rereg_user_mr,
	.resize_cq = softhca_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, softhca_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, softhca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, softhca_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, softhca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, softhca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, softhca_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, softhca_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, softhca_xrcd, ibxrcd),
};
