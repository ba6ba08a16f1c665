// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: the rest of the libibverbs API.
 *
 * GID entries are read from sysfs.  Calls for features softhca does not
 * have (multicast, importing objects, ECE, address resolution from a
 * GID) exist so that every libibverbs program links, and fail with
 * EOPNOTSUPP (NULL with errno, or the errno value, as each man page
 * specifies).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The kernel index is not in sysfs; ibv_get_device_index(3): -1. */
SHCA_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	(void)device;
	return -1;
}

SHCA_EXPORT int ibv_get_pkey_index(struct ibv_context *context,
				   uint8_t port_num, __be16 pkey)
{
	__be16 p;
	int i;

	for (i = 0; !ibv_query_pkey(context, port_num, i, &p); i++)
		if (p == pkey)
			return i;
	return -1;
}

static int shca_gid_type(struct ibv_context *context, uint32_t port,
			 unsigned int index, enum ibv_gid_type *type)
{
	char path[IBV_SYSFS_PATH_MAX + 64], buf[32];

	snprintf(path, sizeof(path), "%s/ports/%u/gid_attrs/types/%u",
		 context->device->ibdev_path, port, index);
	if (shca_sysfs_read(path, buf, sizeof(buf)) <= 0)
		return ENODATA;
	if (!strcmp(buf, "RoCE v2"))
		*type = IBV_GID_TYPE_ROCE_V2;
	else if (!strcmp(buf, "IB/RoCE v1"))
		*type = IBV_GID_TYPE_ROCE_V1;
	else
		*type = IBV_GID_TYPE_IB;
	return 0;
}

/*
 * The GID type as libibverbs' provider interface reports it (libmlx5 and
 * the like call this): 0, or -1 with errno set.  A port without a
 * gid_attrs/types entry (InfiniBand) has IB/RoCE v1 GIDs.
 */
SHCA_EXPORT int ibv_query_gid_type(struct ibv_context *context,
				   uint8_t port_num, unsigned int index,
				   enum ibv_gid_type_sysfs *type)
{
	char path[IBV_SYSFS_PATH_MAX + 64], buf[32];
	int ret;

	snprintf(path, sizeof(path), "%s/ports/%u/gid_attrs/types/%u",
		 context->device->ibdev_path, port_num, index);
	ret = shca_sysfs_read(path, buf, sizeof(buf));
	if (ret == -EINVAL || ret == -ENOENT) {
		*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	if (!strcmp(buf, "RoCE v2")) {
		*type = IBV_GID_TYPE_SYSFS_ROCE_V2;
	} else if (!strcmp(buf, "IB/RoCE v1")) {
		*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
	} else {
		errno = EOPNOTSUPP;
		return -1;
	}
	return 0;
}

SHCA_EXPORT int _ibv_query_gid_ex(struct ibv_context *context,
				  uint32_t port_num, uint32_t gid_index,
				  struct ibv_gid_entry *entry, uint32_t flags,
				  size_t entry_size)
{
	char path[IBV_SYSFS_PATH_MAX + 64], buf[IFNAMSIZ + 1];
	static const union ibv_gid zero;

	if (flags || entry_size < sizeof(*entry) || port_num > UINT8_MAX ||
	    gid_index > INT32_MAX)
		return EINVAL;
	if (ibv_query_gid(context, (uint8_t)port_num, (int)gid_index,
			  &entry->gid))
		return errno;
	/* ibv_query_gid_ex(3): an empty entry is ENODATA. */
	if (!memcmp(&entry->gid, &zero, sizeof(zero)))
		return ENODATA;
	entry->gid_index = gid_index;
	entry->port_num = port_num;
	if (shca_gid_type(context, port_num, gid_index, &entry->gid_type))
		return ENODATA;
	snprintf(path, sizeof(path), "%s/ports/%u/gid_attrs/ndevs/%u",
		 context->device->ibdev_path, port_num, gid_index);
	entry->ndev_ifindex = 0;
	if (shca_sysfs_read(path, buf, sizeof(buf)) > 0)
		entry->ndev_ifindex = if_nametoindex(buf);
	return 0;
}

SHCA_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					 struct ibv_gid_entry *entries,
					 size_t max_entries, uint32_t flags,
					 size_t entry_size)
{
	struct ibv_port_attr pattr;
	size_t n = 0;
	int i, err;

	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;
	if (ibv_query_port(context, 1, &pattr))
		return -errno;
	for (i = 0; i < pattr.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		err = _ibv_query_gid_ex(context, 1, (uint32_t)i, &e, 0,
					sizeof(e));
		if (err == ENODATA)
			continue;
		if (err)
			return -err;
		if (n == max_entries)
			return -EINVAL;
		memcpy((char *)entries + n * entry_size, &e, sizeof(e));
		n++;
	}
	return (ssize_t)n;
}

/*
 * Multicast: the kernel checks the rest (a UD QP, a multicast GID, the
 * limits) and puts the group's Ethernet address in the netdev's filter;
 * the IP-level join (IGMP/MLD) is the caller's, as rdma_cm does it.
 */
SHCA_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
				 uint16_t lid)
{
	struct ib_uverbs_attach_mcast req = {
		.qp_handle = qp->handle,
		.mlid = lid,
	};

	memcpy(req.gid, gid->raw, sizeof(req.gid));
	return shca_cmd_noresp(qp->context->cmd_fd,
			       IB_USER_VERBS_CMD_ATTACH_MCAST, &req, sizeof(req));
}

SHCA_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
				 uint16_t lid)
{
	struct ib_uverbs_detach_mcast req = {
		.qp_handle = qp->handle,
		.mlid = lid,
	};

	memcpy(req.gid, gid->raw, sizeof(req.gid));
	return shca_cmd_noresp(qp->context->cmd_fd,
			       IB_USER_VERBS_CMD_DETACH_MCAST, &req, sizeof(req));
}

SHCA_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
					    struct ibv_ah_attr *attr,
					    uint8_t eth_mac[6], uint16_t *vid)
{
	(void)context; (void)attr; (void)eth_mac; (void)vid;
	return EOPNOTSUPP;
}

SHCA_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

SHCA_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context,
					 uint32_t pd_handle)
{
	(void)context; (void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

SHCA_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

SHCA_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd; (void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

SHCA_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

SHCA_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context,
					 uint32_t dm_handle)
{
	(void)context; (void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

SHCA_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

SHCA_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	return EOPNOTSUPP;
}

SHCA_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	return EOPNOTSUPP;
}
