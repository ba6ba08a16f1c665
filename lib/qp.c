// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: queue pairs (create, modify, query, destroy).
 *
 * The kernel allocates the send and receive rings and sizes them; the
 * create response says where to map them.  After a successful modify to
 * RESET the work queues are empty again: the kernel zeroed its consumer
 * indices and this file zeroes the producer indices (see qp_state.c in
 * the driver).  Posting is in qp_post.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int shca_qp_check_attr(struct ibv_qp_init_attr_ex *attr)
{
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
			 IBV_QP_INIT_ATTR_CREATE_FLAGS;

	if (attr->comp_mask & ~known)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_XRC_SEND:
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
		    !attr->send_cq)
			return EINVAL;
		if (attr->qp_type != IBV_QPT_XRC_SEND && !attr->recv_cq)
			return EINVAL;
		break;
	case IBV_QPT_XRC_RECV:
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd)
			return EINVAL;
		break;
	default:
		return EOPNOTSUPP;
	}
	return 0;
}

/* The ibv_qp fields every new handle gets from its command's response. */
static void shca_qp_init_ibqp(struct ibv_qp *ibqp, struct ibv_context *context,
			      void *qp_context, enum ibv_qp_type type,
			      const struct ib_uverbs_create_qp_resp *resp)
{
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
	ibqp->context = context;
	ibqp->qp_context = qp_context;
	ibqp->handle = resp->qp_handle;
	ibqp->qp_num = resp->qpn;
	ibqp->qp_type = type;
}

static void shca_qp_destroy_cmd(struct ibv_context *ctx, uint32_t handle)
{
	struct ib_uverbs_destroy_qp req = { .qp_handle = handle };
	struct ib_uverbs_destroy_qp_resp resp;

	shca_cmd(ctx->cmd_fd, IB_USER_VERBS_CMD_DESTROY_QP, &req, sizeof(req),
		 &resp, sizeof(resp));
}

struct ibv_qp *shca_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct ib_uverbs_create_qp req = {};
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct softhca_create_qp_resp drv;
	} resp;
	struct ibv_qp *ibqp;
	struct shca_qp *qp;
	int err;

	err = shca_qp_check_attr(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	ibqp = &qp->qpx.qp_base;

	req.user_handle = (uintptr_t)ibqp;
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		/* XRC_TGT: ib_uverbs takes the XRCD handle in pd_handle. */
		req.pd_handle = to_shca_xrcd(attr->xrcd)->handle;
	} else {
		req.pd_handle = attr->pd->handle;
		req.send_cq_handle = attr->send_cq->handle;
		if (attr->qp_type != IBV_QPT_XRC_SEND)
			req.recv_cq_handle = attr->recv_cq->handle;
		if (attr->srq) {
			req.srq_handle = attr->srq->handle;
			req.is_srq = 1;
		}
	}
	req.max_send_wr = attr->cap.max_send_wr;
	req.max_recv_wr = attr->cap.max_recv_wr;
	req.max_send_sge = attr->cap.max_send_sge;
	req.max_recv_sge = attr->cap.max_recv_sge;
	req.max_inline_data = attr->cap.max_inline_data;
	req.sq_sig_all = !!attr->sq_sig_all;
	req.qp_type = (uint8_t)attr->qp_type;

	err = shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_CREATE_QP,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err)
		goto err_free;

	err = shca_wq_init(&qp->sq, context->cmd_fd, resp.drv.sq_offset,
			   resp.drv.sq_size, resp.drv.sq_entries,
			   resp.drv.sq_stride);
	if (err)
		goto err_destroy;
	err = shca_wq_init(&qp->rq, context->cmd_fd, resp.drv.rq_offset,
			   resp.drv.rq_size, resp.drv.rq_entries,
			   resp.drv.rq_stride);
	if (err)
		goto err_sq;
	qp->sq.max_sge = resp.core.max_send_sge;
	qp->sq.max_inline = resp.core.max_inline_data;
	qp->rq.max_sge = resp.core.max_recv_sge;
	qp->sq_sig_all = !!attr->sq_sig_all;

	shca_qp_init_ibqp(ibqp, context, attr->qp_context, attr->qp_type,
			  &resp.core);
	ibqp->pd = attr->qp_type == IBV_QPT_XRC_RECV ? NULL : attr->pd;
	ibqp->send_cq = attr->send_cq;
	ibqp->recv_cq = attr->recv_cq;
	ibqp->srq = attr->srq;
	ibqp->state = IBV_QPS_RESET;

	/* ibv_create_qp(3): the caps are updated to what was created. */
	attr->cap.max_send_wr = resp.core.max_send_wr;
	attr->cap.max_recv_wr = resp.core.max_recv_wr;
	attr->cap.max_send_sge = resp.core.max_send_sge;
	attr->cap.max_recv_sge = resp.core.max_recv_sge;
	attr->cap.max_inline_data = resp.core.max_inline_data;
	return ibqp;

err_sq:
	shca_wq_destroy(&qp->sq);
err_destroy:
	shca_qp_destroy_cmd(context, resp.core.qp_handle);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

SHCA_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
					 struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp;

	qp = shca_create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

/*
 * ibv_open_qp(3): another handle on an XRC_RECV QP of a domain, by
 * number.  ib_uverbs keeps the QP itself (owned by the domain) until its
 * last handle, the creator's included, is destroyed; a handle has no
 * rings (an XRC_RECV QP has no queues of its own).
 */
struct ibv_qp *shca_open_qp(struct ibv_context *context,
			    struct ibv_qp_open_attr *attr)
{
	uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			IBV_QP_OPEN_ATTR_TYPE;
	struct ib_uverbs_open_qp req = {};
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_qp *ibqp;
	struct shca_qp *qp;
	int err;

	if ((attr->comp_mask & need) != need ||
	    attr->comp_mask & ~(need | IBV_QP_OPEN_ATTR_CONTEXT) ||
	    !attr->xrcd) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	ibqp = &qp->qpx.qp_base;
	req.user_handle = (uintptr_t)ibqp;
	req.pd_handle = to_shca_xrcd(attr->xrcd)->handle;
	req.qpn = attr->qp_num;
	req.qp_type = (uint8_t)attr->qp_type;
	err = shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_OPEN_QP,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err) {
		free(qp);
		errno = err;
		return NULL;
	}
	shca_qp_init_ibqp(ibqp, context,
			  attr->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT ?
			  attr->qp_context : NULL, attr->qp_type, &resp);
	ibqp->state = IBV_QPS_UNKNOWN;
	return ibqp;
}

static void shca_copy_dest(struct ib_uverbs_qp_dest *d,
			   const struct ibv_ah_attr *a)
{
	memcpy(d->dgid, a->grh.dgid.raw, sizeof(d->dgid));
	d->flow_label = a->grh.flow_label;
	d->sgid_index = a->grh.sgid_index;
	d->hop_limit = a->grh.hop_limit;
	d->traffic_class = a->grh.traffic_class;
	d->dlid = a->dlid;
	d->sl = a->sl;
	d->src_path_bits = a->src_path_bits;
	d->static_rate = a->static_rate;
	d->is_global = a->is_global;
	d->port_num = a->port_num;
}

static void shca_wq_reset(struct shca_wq *wq)
{
	if (!wq->ring.entries)
		return;
	pthread_spin_lock(&wq->lock);
	wq->prod = 0;
	wq->cons = 0;
	__atomic_store_n(&wq->hdr->prod, 0, __ATOMIC_RELEASE);
	pthread_spin_unlock(&wq->lock);
}

SHCA_EXPORT int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			      int mask)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct ib_uverbs_modify_qp req = {};
	int err;

	req.qp_handle = ibqp->handle;
	req.attr_mask = (uint32_t)mask;
	req.qkey = attr->qkey;
	req.rq_psn = attr->rq_psn;
	req.sq_psn = attr->sq_psn;
	req.dest_qp_num = attr->dest_qp_num;
	req.qp_access_flags = (uint32_t)attr->qp_access_flags;
	req.pkey_index = attr->pkey_index;
	req.alt_pkey_index = attr->alt_pkey_index;
	req.qp_state = (uint8_t)attr->qp_state;
	req.cur_qp_state = (uint8_t)attr->cur_qp_state;
	req.path_mtu = (uint8_t)attr->path_mtu;
	req.path_mig_state = (uint8_t)attr->path_mig_state;
	req.en_sqd_async_notify = attr->en_sqd_async_notify;
	req.max_rd_atomic = attr->max_rd_atomic;
	req.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	req.min_rnr_timer = attr->min_rnr_timer;
	req.port_num = attr->port_num;
	req.timeout = attr->timeout;
	req.retry_cnt = attr->retry_cnt;
	req.rnr_retry = attr->rnr_retry;
	req.alt_port_num = attr->alt_port_num;
	req.alt_timeout = attr->alt_timeout;
	if (mask & IBV_QP_AV)
		shca_copy_dest(&req.dest, &attr->ah_attr);
	if (mask & IBV_QP_ALT_PATH)
		shca_copy_dest(&req.alt_dest, &attr->alt_ah_attr);

	err = shca_cmd_noresp(ibqp->context->cmd_fd,
			      IB_USER_VERBS_CMD_MODIFY_QP, &req, sizeof(req));
	if (err)
		return err;
	if (mask & IBV_QP_STATE) {
		ibqp->state = attr->qp_state;
		if (attr->qp_state == IBV_QPS_RESET) {
			shca_wq_reset(&qp->sq);
			shca_wq_reset(&qp->rq);
		}
	}
	return 0;
}

static void shca_dest_to_ah(struct ibv_ah_attr *a,
			    const struct ib_uverbs_qp_dest *d)
{
	memcpy(a->grh.dgid.raw, d->dgid, sizeof(d->dgid));
	a->grh.flow_label = d->flow_label;
	a->grh.sgid_index = d->sgid_index;
	a->grh.hop_limit = d->hop_limit;
	a->grh.traffic_class = d->traffic_class;
	a->dlid = d->dlid;
	a->sl = d->sl;
	a->src_path_bits = d->src_path_bits;
	a->static_rate = d->static_rate;
	a->is_global = d->is_global;
	a->port_num = d->port_num;
}

SHCA_EXPORT int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			     int mask, struct ibv_qp_init_attr *init)
{
	struct ib_uverbs_query_qp req = {
		.qp_handle = ibqp->handle,
		.attr_mask = (uint32_t)mask,
	};
	struct ib_uverbs_query_qp_resp resp;
	int err;

	err = shca_cmd(ibqp->context->cmd_fd, IB_USER_VERBS_CMD_QUERY_QP,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err)
		return err;

	memset(attr, 0, sizeof(*attr));
	attr->qkey = resp.qkey;
	attr->rq_psn = resp.rq_psn;
	attr->sq_psn = resp.sq_psn;
	attr->dest_qp_num = resp.dest_qp_num;
	attr->qp_access_flags = (int)resp.qp_access_flags;
	attr->pkey_index = resp.pkey_index;
	attr->alt_pkey_index = resp.alt_pkey_index;
	attr->qp_state = (enum ibv_qp_state)resp.qp_state;
	attr->cur_qp_state = (enum ibv_qp_state)resp.cur_qp_state;
	attr->path_mtu = (enum ibv_mtu)resp.path_mtu;
	attr->path_mig_state = (enum ibv_mig_state)resp.path_mig_state;
	attr->sq_draining = resp.sq_draining;
	attr->max_rd_atomic = resp.max_rd_atomic;
	attr->max_dest_rd_atomic = resp.max_dest_rd_atomic;
	attr->min_rnr_timer = resp.min_rnr_timer;
	attr->port_num = resp.port_num;
	attr->timeout = resp.timeout;
	attr->retry_cnt = resp.retry_cnt;
	attr->rnr_retry = resp.rnr_retry;
	attr->alt_port_num = resp.alt_port_num;
	attr->alt_timeout = resp.alt_timeout;
	attr->cap.max_send_wr = resp.max_send_wr;
	attr->cap.max_recv_wr = resp.max_recv_wr;
	attr->cap.max_send_sge = resp.max_send_sge;
	attr->cap.max_recv_sge = resp.max_recv_sge;
	attr->cap.max_inline_data = resp.max_inline_data;
	shca_dest_to_ah(&attr->ah_attr, &resp.dest);
	shca_dest_to_ah(&attr->alt_ah_attr, &resp.alt_dest);

	memset(init, 0, sizeof(*init));
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->qp_type = ibqp->qp_type;
	init->cap = attr->cap;
	init->sq_sig_all = resp.sq_sig_all;
	ibqp->state = attr->qp_state;
	return 0;
}

SHCA_EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct ib_uverbs_destroy_qp req = { .qp_handle = ibqp->handle };
	struct ib_uverbs_destroy_qp_resp resp;
	int err, raw;

	raw = shca_cmd(ibqp->context->cmd_fd, IB_USER_VERBS_CMD_DESTROY_QP,
		       &req, sizeof(req), &resp, sizeof(resp));
	err = shca_destroy_err(raw);
	if (err)
		return err;
	/* After a device removal (EIO) no count came back to wait for. */
	if (!raw)
		shca_wait_events(&ibqp->mutex, &ibqp->cond,
				 &ibqp->events_completed, resp.events_reported);
	shca_wq_destroy(&qp->sq);
	shca_wq_destroy(&qp->rq);
	pthread_cond_destroy(&ibqp->cond);
	pthread_mutex_destroy(&ibqp->mutex);
	free(qp);
	return 0;
}

/* The work-request-builder API (ibv_wr_*) is not offered. */
SHCA_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	(void)qp;
	errno = EOPNOTSUPP;
	return NULL;
}

SHCA_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp,
					   enum ibv_wr_opcode op,
					   uint32_t flags)
{
	(void)qp; (void)op; (void)flags;
	/* In-order placement is not promised (ibv_query_qp_data_in_order(3)). */
	return 0;
}
