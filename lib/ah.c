// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: address handles.  The kernel resolves the destination and
 * answers with a number that UD send WQEs carry (softhca_send_wqe.ud).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

SHCA_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd,
					 struct ibv_ah_attr *attr)
{
	struct ib_uverbs_create_ah req = {};
	struct {
		struct ib_uverbs_create_ah_resp core;
		struct softhca_create_ah_resp drv;
	} resp;
	struct shca_ah *ah;
	int err;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	req.user_handle = (uintptr_t)ah;
	req.pd_handle = pd->handle;
	req.attr.dlid = attr->dlid;
	req.attr.sl = attr->sl;
	req.attr.src_path_bits = attr->src_path_bits;
	req.attr.static_rate = attr->static_rate;
	req.attr.is_global = attr->is_global;
	req.attr.port_num = attr->port_num;
	memcpy(req.attr.grh.dgid, attr->grh.dgid.raw, 16);
	req.attr.grh.flow_label = attr->grh.flow_label;
	req.attr.grh.sgid_index = attr->grh.sgid_index;
	req.attr.grh.hop_limit = attr->grh.hop_limit;
	req.attr.grh.traffic_class = attr->grh.traffic_class;

	err = shca_cmd(pd->context->cmd_fd, IB_USER_VERBS_CMD_CREATE_AH,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	ah->ibah.context = pd->context;
	ah->ibah.pd = pd;
	ah->ibah.handle = resp.core.ah_handle;
	ah->ah_num = resp.drv.ah_num;
	return &ah->ibah;
}

uint32_t shca_ah_num(struct ibv_ah *ah)
{
	return ((struct shca_ah *)ah)->ah_num;
}

SHCA_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct ib_uverbs_destroy_ah req = { .ah_handle = ah->handle };
	int err;

	err = shca_cmd_noresp(ah->context->cmd_fd, IB_USER_VERBS_CMD_DESTROY_AH,
			      &req, sizeof(req));
	err = shca_destroy_err(err);
	if (err)
		return err;
	free(ah);
	return 0;
}

/*
 * ibv_init_ah_from_wc(3) for RoCE: the reply goes back to the GRH's
 * source, from our GID the message was sent to.
 */
SHCA_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context,
				    uint8_t port_num, struct ibv_wc *wc,
				    struct ibv_grh *grh,
				    struct ibv_ah_attr *ah_attr)
{
	union ibv_gid gid;
	uint32_t flow;
	int i;

	if (!(wc->wc_flags & IBV_WC_GRH) || !grh)
		return EINVAL;
	memset(ah_attr, 0, sizeof(*ah_attr));
	for (i = 0; ; i++) {
		if (ibv_query_gid(context, port_num, i, &gid))
			return ENOENT;
		if (!memcmp(&gid, &grh->dgid, sizeof(gid)))
			break;
	}
	flow = be32toh(grh->version_tclass_flow);
	ah_attr->is_global = 1;
	ah_attr->port_num = port_num;
	ah_attr->sl = wc->sl;
	ah_attr->grh.dgid = grh->sgid;
	ah_attr->grh.sgid_index = (uint8_t)i;
	ah_attr->grh.flow_label = flow & 0xfffff;
	ah_attr->grh.traffic_class = (flow >> 20) & 0xff;
	ah_attr->grh.hop_limit = 0xff;
	return 0;
}

SHCA_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,
						 struct ibv_wc *wc,
						 struct ibv_grh *grh,
						 uint8_t port_num)
{
	struct ibv_ah_attr attr;
	int err;

	err = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr);
	if (err) {
		errno = err;
		return NULL;
	}
	return ibv_create_ah(pd, &attr);
}
