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

/* An IPv4 header's checksum is right (a one's complement sum of 0xffff). */
static int shca_ip4_csum_ok(const uint8_t *h)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* ::ffff:a.b.c.d, the RoCEv2 GID of an IPv4 address. */
static void shca_gid_from_ip4(union ibv_gid *gid, const uint8_t *addr)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], addr, 4);
}

/*
 * The 40 bytes before a UD message on RoCEv2 hold its IPv6 header, or 20
 * bytes of zeros and its IPv4 header (the kernel's network_hdr_type is
 * not in struct ibv_wc: the header itself tells, as in rdma-core).
 */
static int shca_grh_path(const struct ibv_grh *grh, union ibv_gid *sgid,
			 union ibv_gid *dgid, uint32_t *flow, uint8_t *tclass)
{
	const uint8_t *ip4 = (const uint8_t *)grh + 20;
	uint32_t vtf = be32toh(grh->version_tclass_flow);

	if (vtf >> 28 == 6) {
		*sgid = grh->sgid;
		*dgid = grh->dgid;
		*flow = vtf & 0xfffff;
		*tclass = (vtf >> 20) & 0xff;
		return 0;
	}
	if (ip4[0] == 0x45 && shca_ip4_csum_ok(ip4)) {
		shca_gid_from_ip4(sgid, ip4 + 12);
		shca_gid_from_ip4(dgid, ip4 + 16);
		*flow = 0;
		*tclass = ip4[1];
		return 0;
	}
	return EINVAL;
}

/*
 * ibv_init_ah_from_wc(3) for RoCE: the reply goes back to the message's
 * source, from our GID the message was sent to.
 */
SHCA_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context,
				    uint8_t port_num, struct ibv_wc *wc,
				    struct ibv_grh *grh,
				    struct ibv_ah_attr *ah_attr)
{
	union ibv_gid gid, sgid, dgid;
	uint32_t flow;
	uint8_t tclass;
	int i;

	if (!(wc->wc_flags & IBV_WC_GRH) || !grh)
		return EINVAL;
	if (shca_grh_path(grh, &sgid, &dgid, &flow, &tclass))
		return EINVAL;
	memset(ah_attr, 0, sizeof(*ah_attr));
	for (i = 0; ; i++) {
		if (ibv_query_gid(context, port_num, i, &gid))
			return ENOENT;
		if (!memcmp(&gid, &dgid, sizeof(gid)))
			break;
	}
	ah_attr->is_global = 1;
	ah_attr->port_num = port_num;
	ah_attr->sl = wc->sl;
	ah_attr->grh.dgid = sgid;
	ah_attr->grh.sgid_index = (uint8_t)i;
	ah_attr->grh.flow_label = flow;
	ah_attr->grh.traffic_class = tclass;
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
