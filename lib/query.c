// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: device, port, GID and P_Key queries.
 *
 * Device and port attributes come from the kernel through ib_uverbs
 * commands; GID and P_Key table entries from sysfs, where ib_core
 * publishes its tables.  Return conventions follow the verbs man pages:
 * ibv_query_device/ibv_query_port return 0 or an errno value,
 * ibv_query_gid/ibv_query_pkey return 0 or -1 with errno set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "internal.h"

/* The kernel's device attributes in verbs form (fw_ver from sysfs). */
static void device_attr_from_kern(struct ibv_context *context,
				  struct ibv_device_attr *attr,
				  const struct ib_uverbs_query_device_resp *resp)
{
	char path[IBV_SYSFS_PATH_MAX + 16];

	memset(attr, 0, sizeof(*attr));
	snprintf(path, sizeof(path), "%s/fw_ver", context->device->ibdev_path);
	if (shca_sysfs_read(path, attr->fw_ver, sizeof(attr->fw_ver)) < 0)
		attr->fw_ver[0] = '\0';
	attr->node_guid = resp->node_guid;
	attr->sys_image_guid = resp->sys_image_guid;
	attr->max_mr_size = resp->max_mr_size;
	attr->page_size_cap = resp->page_size_cap;
	attr->vendor_id = resp->vendor_id;
	attr->vendor_part_id = resp->vendor_part_id;
	attr->hw_ver = resp->hw_ver;
	attr->max_qp = (int)resp->max_qp;
	attr->max_qp_wr = (int)resp->max_qp_wr;
	attr->device_cap_flags = resp->device_cap_flags;
	attr->max_sge = (int)resp->max_sge;
	attr->max_sge_rd = (int)resp->max_sge_rd;
	attr->max_cq = (int)resp->max_cq;
	attr->max_cqe = (int)resp->max_cqe;
	attr->max_mr = (int)resp->max_mr;
	attr->max_pd = (int)resp->max_pd;
	attr->max_qp_rd_atom = (int)resp->max_qp_rd_atom;
	attr->max_ee_rd_atom = (int)resp->max_ee_rd_atom;
	attr->max_res_rd_atom = (int)resp->max_res_rd_atom;
	attr->max_qp_init_rd_atom = (int)resp->max_qp_init_rd_atom;
	attr->max_ee_init_rd_atom = (int)resp->max_ee_init_rd_atom;
	attr->atomic_cap = (enum ibv_atomic_cap)resp->atomic_cap;
	attr->max_ee = (int)resp->max_ee;
	attr->max_rdd = (int)resp->max_rdd;
	attr->max_mw = (int)resp->max_mw;
	attr->max_raw_ipv6_qp = (int)resp->max_raw_ipv6_qp;
	attr->max_raw_ethy_qp = (int)resp->max_raw_ethy_qp;
	attr->max_mcast_grp = (int)resp->max_mcast_grp;
	attr->max_mcast_qp_attach = (int)resp->max_mcast_qp_attach;
	attr->max_total_mcast_qp_attach = (int)resp->max_total_mcast_qp_attach;
	attr->max_ah = (int)resp->max_ah;
	attr->max_fmr = (int)resp->max_fmr;
	attr->max_map_per_fmr = (int)resp->max_map_per_fmr;
	attr->max_srq = (int)resp->max_srq;
	attr->max_srq_wr = (int)resp->max_srq_wr;
	attr->max_srq_sge = (int)resp->max_srq_sge;
	attr->max_pkeys = resp->max_pkeys;
	attr->local_ca_ack_delay = resp->local_ca_ack_delay;
	attr->phys_port_cnt = resp->phys_port_cnt;
}

SHCA_EXPORT int ibv_query_device(struct ibv_context *context,
				 struct ibv_device_attr *attr)
{
	struct ib_uverbs_query_device req = {};
	struct ib_uverbs_query_device_resp resp;
	int err;

	err = shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_QUERY_DEVICE,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err)
		return err;
	device_attr_from_kern(context, attr, &resp);
	return 0;
}

/*
 * verbs_context.query_device_ex, behind the ibv_query_device_ex() inline
 * of verbs.h: the extended uverbs command, whose answer starts with the
 * legacy one.  Without this op the inline falls back to ibv_query_device
 * and leaves every extended field zero, phys_port_cnt_ex included.
 * @attr_size is what the caller's verbs.h knows; nothing past it is
 * written.
 */
int shca_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device req = {};
	struct ib_uverbs_ex_query_device_resp resp;
	struct ibv_device_attr_ex full;
	int err;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	err = shca_cmd_ex(context->cmd_fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE,
			  &req, sizeof(req), &resp, sizeof(resp));
	if (err)
		return err;

	memset(&full, 0, sizeof(full));
	device_attr_from_kern(context, &full.orig_attr, &resp.base);
	full.odp_caps.general_caps = resp.odp_caps.general_caps;
	full.odp_caps.per_transport_caps.rc_odp_caps =
		resp.odp_caps.per_transport_caps.rc_odp_caps;
	full.odp_caps.per_transport_caps.uc_odp_caps =
		resp.odp_caps.per_transport_caps.uc_odp_caps;
	full.odp_caps.per_transport_caps.ud_odp_caps =
		resp.odp_caps.per_transport_caps.ud_odp_caps;
	full.completion_timestamp_mask = resp.timestamp_mask;
	full.hca_core_clock = resp.hca_core_clock;
	full.device_cap_flags_ex = resp.device_cap_flags_ex;
	full.rss_caps.supported_qpts = resp.rss_caps.supported_qpts;
	full.rss_caps.max_rwq_indirection_tables =
		resp.rss_caps.max_rwq_indirection_tables;
	full.rss_caps.max_rwq_indirection_table_size =
		resp.rss_caps.max_rwq_indirection_table_size;
	full.max_wq_type_rq = resp.max_wq_type_rq;
	full.raw_packet_caps = resp.raw_packet_caps;
	full.tm_caps.max_rndv_hdr_size = resp.tm_caps.max_rndv_hdr_size;
	full.tm_caps.max_num_tags = resp.tm_caps.max_num_tags;
	full.tm_caps.flags = resp.tm_caps.flags;
	full.tm_caps.max_ops = resp.tm_caps.max_ops;
	full.tm_caps.max_sge = resp.tm_caps.max_sge;
	full.cq_mod_caps.max_cq_count = resp.cq_moderation_caps.max_cq_moderation_count;
	full.cq_mod_caps.max_cq_period = resp.cq_moderation_caps.max_cq_moderation_period;
	full.max_dm_size = resp.max_dm_size;
	full.xrc_odp_caps = resp.xrc_odp_caps;
	/* uverbs reports at most 255 ports in the legacy field. */
	full.phys_port_cnt_ex = resp.base.phys_port_cnt;

	if (attr_size > sizeof(full))
		attr_size = sizeof(full);
	memcpy(attr, &full, attr_size);
	return 0;
}

int shca_query_port_ex(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *attr, size_t attr_len)
{
	struct ib_uverbs_query_port req = { .port_num = port_num };
	struct ib_uverbs_query_port_resp resp;
	struct ibv_port_attr full;
	int err;

	err = shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_QUERY_PORT,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err)
		return err;

	memset(&full, 0, sizeof(full));
	full.state = (enum ibv_port_state)resp.state;
	full.max_mtu = (enum ibv_mtu)resp.max_mtu;
	full.active_mtu = (enum ibv_mtu)resp.active_mtu;
	full.gid_tbl_len = (int)resp.gid_tbl_len;
	full.port_cap_flags = resp.port_cap_flags;
	full.max_msg_sz = resp.max_msg_sz;
	full.bad_pkey_cntr = resp.bad_pkey_cntr;
	full.qkey_viol_cntr = resp.qkey_viol_cntr;
	full.pkey_tbl_len = resp.pkey_tbl_len;
	full.lid = resp.lid;
	full.sm_lid = resp.sm_lid;
	full.lmc = resp.lmc;
	full.max_vl_num = resp.max_vl_num;
	full.sm_sl = resp.sm_sl;
	full.subnet_timeout = resp.subnet_timeout;
	full.init_type_reply = resp.init_type_reply;
	full.active_width = resp.active_width;
	full.active_speed = resp.active_speed;
	full.phys_state = resp.phys_state;
	full.link_layer = resp.link_layer;
	full.flags = resp.flags;

	/* An older caller may pass a shorter struct; never write past it. */
	if (attr_len > sizeof(full))
		attr_len = sizeof(full);
	memcpy(attr, &full, attr_len);
	return 0;
}

/*
 * The exported symbol behind the ibv_query_port() inline of verbs.h for
 * callers that reach it directly; @attr is a full struct ibv_port_attr
 * minus the fields added since (port_cap_flags2).
 */
#undef ibv_query_port
SHCA_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			       struct _compat_ibv_port_attr *attr)
{
	return shca_query_port_ex(context, port_num,
				  (struct ibv_port_attr *)attr,
				  offsetof(struct ibv_port_attr,
					   port_cap_flags2));
}

/*
 * Read entry @index of a port's sysfs @table ("gids", "pkeys") into @buf;
 * -1 with errno set (EINVAL for a port or index that does not exist).
 */
static int port_table_read(struct ibv_context *context, uint8_t port_num,
			   const char *table, int index, char *buf, size_t len)
{
	char path[IBV_SYSFS_PATH_MAX + 64];
	int ret;

	if (port_num == 0 || index < 0) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/ports/%u/%s/%d",
		 context->device->ibdev_path, port_num, table, index);
	ret = shca_sysfs_read(path, buf, len);
	if (ret < 0) {
		errno = ret == -ENOENT ? EINVAL : -ret;
		return -1;
	}
	return 0;
}

SHCA_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
			      int index, union ibv_gid *gid)
{
	unsigned int w[8];
	char buf[64];
	int i;

	if (port_table_read(context, port_num, "gids", index, buf, sizeof(buf)))
		return -1;
	if (sscanf(buf, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1], &w[2],
		   &w[3], &w[4], &w[5], &w[6], &w[7]) != 8) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < 8; i++) {
		gid->raw[2 * i] = (uint8_t)(w[i] >> 8);
		gid->raw[2 * i + 1] = (uint8_t)w[i];
	}
	return 0;
}

SHCA_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
			       int index, __be16 *pkey)
{
	unsigned long v;
	char buf[16];
	char *end;

	if (port_table_read(context, port_num, "pkeys", index, buf,
			    sizeof(buf)))
		return -1;
	v = strtoul(buf, &end, 0);
	if (end == buf || v > 0xffff) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htons((uint16_t)v);
	return 0;
}
