// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* libsofthca: protection domains. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

SHCA_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct ib_uverbs_alloc_pd req = {};
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	err = shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_ALLOC_PD,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	pd->context = context;
	pd->handle = resp.pd_handle;
	return pd;
}

SHCA_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct ib_uverbs_dealloc_pd req = { .pd_handle = pd->handle };
	int err;

	err = shca_cmd_noresp(pd->context->cmd_fd, IB_USER_VERBS_CMD_DEALLOC_PD,
			      &req, sizeof(req));
	err = shca_destroy_err(err);
	if (err)
		return err;
	free(pd);
	return 0;
}
