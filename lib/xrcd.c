// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: XRC domains (ibv_open_xrcd(3)).  Sharing a domain between
 * processes by file is ib_uverbs' OPEN_XRCD: the same inode gives the
 * same domain; O_CREAT creates it when the inode has none yet.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "internal.h"

struct ibv_xrcd *shca_open_xrcd(struct ibv_context *context,
				struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd req = {};
	struct ib_uverbs_open_xrcd_resp resp;
	struct shca_xrcd *xrcd;
	int err;

	if (attr->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_FD |
					  IBV_XRCD_INIT_ATTR_OFLAGS) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->oflags & ~(O_CREAT | O_EXCL)) {
		errno = EINVAL;
		return NULL;
	}
	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd) {
		errno = ENOMEM;
		return NULL;
	}
	req.fd = (uint32_t)attr->fd;
	req.oflags = (uint32_t)attr->oflags;
	err = shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_OPEN_XRCD,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err) {
		free(xrcd);
		errno = err;
		return NULL;
	}
	xrcd->ibxrcd.context = context;
	xrcd->handle = resp.xrcd_handle;
	return &xrcd->ibxrcd;
}

int shca_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct shca_xrcd *xrcd = to_shca_xrcd(ibxrcd);
	struct ib_uverbs_close_xrcd req = { .xrcd_handle = xrcd->handle };
	int err;

	err = shca_cmd_noresp(ibxrcd->context->cmd_fd,
			      IB_USER_VERBS_CMD_CLOSE_XRCD, &req, sizeof(req));
	err = shca_destroy_err(err);
	if (err)
		return err;
	free(xrcd);
	return 0;
}
