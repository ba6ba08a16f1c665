// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: copying the kernel's wire structs to and from verbs
 * structs.  librdmacm reads QP attributes (rdma_init_qp_attr), address
 * handles and path records from the rdma_ucm device in the kernel's
 * layout (<rdma/ib_user_verbs.h>, <rdma/ib_user_sa.h>) and has these
 * calls convert them.  Byte order is the same on both sides: big-endian
 * fields stay big-endian.
 */
#include <string.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>

#include "internal.h"

SHCA_EXPORT void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
					    struct ib_uverbs_ah_attr *src)
{
	const struct ib_uverbs_global_route *g = &src->grh;

	memcpy(dst->grh.dgid.raw, g->dgid, sizeof(dst->grh.dgid.raw));
	dst->grh.flow_label = g->flow_label;
	dst->grh.sgid_index = g->sgid_index;
	dst->grh.hop_limit = g->hop_limit;
	dst->grh.traffic_class = g->traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

/*
 * Every attribute but qp_state: the caller chose the state it asked the
 * kernel about and keeps it (libibverbs leaves it alone too).
 */
SHCA_EXPORT void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
					    struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = (enum ibv_qp_state)src->cur_qp_state;
	dst->path_mtu = (enum ibv_mtu)src->path_mtu;
	dst->path_mig_state = (enum ibv_mig_state)src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = (unsigned int)src->qp_access_flags;

	dst->cap = (struct ibv_qp_cap){
		.max_send_wr = src->max_send_wr,
		.max_recv_wr = src->max_recv_wr,
		.max_send_sge = src->max_send_sge,
		.max_recv_sge = src->max_recv_sge,
		.max_inline_data = src->max_inline_data,
	};
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);

	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

/*
 * The path record fields both structs share, in one place for both
 * directions: K is the ib_user_path_rec, V the ibv_sa_path_rec, and
 * COPY(v_field, k_field) assigns in the direction being built.
 */
#define PATH_REC_FIELDS(COPY)					\
	COPY(dlid, dlid)					\
	COPY(slid, slid)					\
	COPY(raw_traffic, raw_traffic)				\
	COPY(flow_label, flow_label)				\
	COPY(hop_limit, hop_limit)				\
	COPY(traffic_class, traffic_class)			\
	COPY(reversible, reversible)				\
	COPY(numb_path, numb_path)				\
	COPY(pkey, pkey)					\
	COPY(sl, sl)						\
	COPY(mtu_selector, mtu_selector)			\
	COPY(mtu, mtu)						\
	COPY(rate_selector, rate_selector)			\
	COPY(rate, rate)					\
	COPY(packet_life_time_selector, packet_life_time_selector) \
	COPY(packet_life_time, packet_life_time)		\
	COPY(preference, preference)

SHCA_EXPORT void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
					     struct ib_user_path_rec *src)
{
#define TO_VERBS(v, k) dst->v = src->k;
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid.raw));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid.raw));
	PATH_REC_FIELDS(TO_VERBS)
#undef TO_VERBS
}

SHCA_EXPORT void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
					   struct ibv_sa_path_rec *src)
{
#define TO_KERN(v, k) dst->k = src->v;
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	PATH_REC_FIELDS(TO_KERN)
#undef TO_KERN
}
