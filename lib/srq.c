// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: shared receive queues, basic and XRC.  Posting to an SRQ
 * is a ring write like a QP's receive queue (qp_post.c); an SRQ is never
 * in an error state, so it never needs a doorbell.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void shca_srq_destroy_cmd(struct ibv_context *ctx, uint32_t handle)
{
	struct ib_uverbs_destroy_srq req = { .srq_handle = handle };
	struct ib_uverbs_destroy_srq_resp resp;

	shca_cmd(ctx->cmd_fd, IB_USER_VERBS_CMD_DESTROY_SRQ, &req, sizeof(req),
		 &resp, sizeof(resp));
}

struct ibv_srq *shca_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr)
{
	uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	struct ib_uverbs_create_xsrq req = {};
	struct {
		struct ib_uverbs_create_srq_resp core;
		struct softhca_create_srq_resp drv;
	} resp;
	enum ibv_srq_type type = IBV_SRQT_BASIC;
	struct shca_srq *srq;
	struct ibv_srq *ibsrq;
	int err;

	if (attr->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)
		type = attr->srq_type;
	if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    (type == IBV_SRQT_XRC &&
	     (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
	      !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq))) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	ibsrq = &srq->ibsrq;

	req.user_handle = (uintptr_t)ibsrq;
	req.srq_type = type == IBV_SRQT_XRC ? IB_UVERBS_SRQT_XRC : IB_UVERBS_SRQT_BASIC;
	req.pd_handle = attr->pd->handle;
	req.max_wr = attr->attr.max_wr;
	req.max_sge = attr->attr.max_sge;
	req.srq_limit = attr->attr.srq_limit;
	if (type == IBV_SRQT_XRC) {
		req.xrcd_handle = to_shca_xrcd(attr->xrcd)->handle;
		req.cq_handle = attr->cq->handle;
	}
	err = shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_CREATE_XSRQ,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err)
		goto err_free;
	err = shca_wq_init(&srq->rq, context->cmd_fd, resp.drv.ring_offset,
			   resp.drv.ring_size, resp.drv.entries,
			   resp.drv.stride);
	if (!err && !srq->rq.ring.entries)
		err = EPROTO;
	if (err) {
		shca_srq_destroy_cmd(context, resp.core.srq_handle);
		goto err_free;
	}
	srq->rq.max_sge = resp.core.max_sge;
	srq->srqn = resp.drv.srqn;

	pthread_mutex_init(&ibsrq->mutex, NULL);
	pthread_cond_init(&ibsrq->cond, NULL);
	ibsrq->context = context;
	ibsrq->srq_context = attr->srq_context;
	ibsrq->pd = attr->pd;
	ibsrq->handle = resp.core.srq_handle;
	srq->type = type;
	/* ibv_create_srq(3): the real sizes are written back. */
	attr->attr.max_wr = resp.core.max_wr;
	attr->attr.max_sge = resp.core.max_sge;
	return ibsrq;

err_free:
	free(srq);
	errno = err;
	return NULL;
}

SHCA_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
					   struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_srq *srq;

	srq = shca_create_srq_ex(pd->context, &ex);
	if (srq)
		attr->attr = ex.attr;
	return srq;
}

int shca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);

	if (srq->type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	*srq_num = srq->srqn;
	return 0;
}

SHCA_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			       int mask)
{
	struct ib_uverbs_modify_srq req = {
		.srq_handle = srq->handle,
		.attr_mask = (uint32_t)mask,
		.max_wr = attr->max_wr,
		.srq_limit = attr->srq_limit,
	};

	return shca_cmd_noresp(srq->context->cmd_fd,
			       IB_USER_VERBS_CMD_MODIFY_SRQ, &req, sizeof(req));
}

SHCA_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ib_uverbs_query_srq req = { .srq_handle = srq->handle };
	struct ib_uverbs_query_srq_resp resp;
	int err;

	err = shca_cmd(srq->context->cmd_fd, IB_USER_VERBS_CMD_QUERY_SRQ,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err)
		return err;
	attr->max_wr = resp.max_wr;
	attr->max_sge = resp.max_sge;
	attr->srq_limit = resp.srq_limit;
	return 0;
}

SHCA_EXPORT int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);
	struct ib_uverbs_destroy_srq req = { .srq_handle = ibsrq->handle };
	struct ib_uverbs_destroy_srq_resp resp;
	int err, raw;

	raw = shca_cmd(ibsrq->context->cmd_fd, IB_USER_VERBS_CMD_DESTROY_SRQ,
		       &req, sizeof(req), &resp, sizeof(resp));
	err = shca_destroy_err(raw);
	if (err)
		return err;
	if (!raw)
		shca_wait_events(&ibsrq->mutex, &ibsrq->cond,
				 &ibsrq->events_completed,
				 resp.events_reported);
	shca_wq_destroy(&srq->rq);
	pthread_cond_destroy(&ibsrq->cond);
	pthread_mutex_destroy(&ibsrq->mutex);
	free(srq);
	return 0;
}

int shca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct shca_wq *rq = &to_shca_srq(ibsrq)->rq;
	int err;

	pthread_spin_lock(&rq->lock);
	err = shca_wq_post_recv(rq, wr, bad_wr);
	__atomic_store_n(&rq->hdr->prod, rq->prod, __ATOMIC_RELEASE);
	pthread_spin_unlock(&rq->lock);
	return err;
}
