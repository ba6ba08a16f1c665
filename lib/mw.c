// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: memory windows (ibv_alloc_mw(3), ibv_bind_mw(3)).
 *
 * ibv_alloc_mw, ibv_dealloc_mw and ibv_bind_mw are inline functions of
 * <infiniband/verbs.h> that call the context's ops, set here.  A type 1
 * bind is a BIND_MW work request on the QP's send queue, like a type 2
 * bind posted with IBV_WR_BIND_MW (qp_post.c builds both): the kernel
 * carries it out in send queue order and completes it (IBV_WC_BIND_MW,
 * or IBV_WC_MW_BIND_ERR with the QP in error).  As ibv_bind_mw(3) says,
 * mw->rkey holds the window's new key once the request is posted.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

struct ibv_mw *shca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw req = {
		.pd_handle = pd->handle,
		.mw_type = (uint8_t)type,
	};
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	err = shca_cmd(pd->context->cmd_fd, IB_USER_VERBS_CMD_ALLOC_MW,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = resp.rkey;
	mw->handle = resp.mw_handle;
	mw->type = type;
	return mw;
}

int shca_dealloc_mw(struct ibv_mw *mw)
{
	struct ib_uverbs_dealloc_mw req = { .mw_handle = mw->handle };
	int err;

	err = shca_cmd_noresp(mw->context->cmd_fd, IB_USER_VERBS_CMD_DEALLOC_MW,
			      &req, sizeof(req));
	err = shca_destroy_err(err);
	if (err)
		return err;
	free(mw);
	return 0;
}

/* ibv_bind_mw() checked that @mw is of type 1. */
int shca_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	}, *bad;
	int err;

	/* An unbind (length 0) needs no MR; a bind does. */
	if (!mw_bind->bind_info.mr && mw_bind->bind_info.length)
		return EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	err = shca_post_send(qp, &wr, &bad);
	if (!err)
		mw->rkey = wr.bind_mw.rkey;
	return err;
}
