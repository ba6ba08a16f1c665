// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: device and port queries, and the device's sysfs attributes.
 *
 * Everything reported here is either a fixed property of softhca or is
 * computed on each call from the bound netdev, so a query can never
 * disagree with the netdev (no cached copy to go stale).
 *
 * The limits reported are the ones the create verbs enforce (module
 * parameters, main.c).
 */
#include <linux/netdevice.h>
#include <linux/sysfs.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "softhca.h"

/* Size of the RoCE GID table ib_core maintains for us. */
#define SOFTHCA_GID_TABLE_LEN	32

int softhca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			 struct ib_udata *udata)
{
	const struct softhca_limits *lim = &softhca_limits;

	/* No driver-specific query_device input or output is defined. */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 0;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = lim->max_mr_size;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = 0xffffff;	/* no IEEE OUI of its own */
	attr->hw_ver = 0;
	attr->max_qp = lim->max_qp;
	attr->max_qp_wr = lim->max_qp_wr;
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_XRC |
				 IB_DEVICE_SHUTDOWN_PORT |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	/* Fast registration: kernel QPs only (fastreg.c). */
	attr->max_fast_reg_page_list_len = SOFTHCA_MAX_FAST_REG_PAGES;
	attr->max_send_sge = lim->max_sge;
	attr->max_recv_sge = lim->max_sge;
	attr->max_sge_rd = lim->max_sge;
	attr->max_cq = lim->max_cq;
	attr->max_cqe = lim->max_cqe;
	attr->max_mr = lim->max_mr;
	attr->max_mw = SOFTHCA_MAX_MW;
	attr->max_pd = lim->max_pd;
	attr->max_qp_rd_atom = SOFTHCA_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SOFTHCA_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SOFTHCA_MAX_RD_ATOMIC * lim->max_qp;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
	attr->max_ah = lim->max_ah;
	attr->max_mcast_grp = SOFTHCA_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SOFTHCA_MAX_MCAST_QP;
	attr->max_total_mcast_qp_attach = SOFTHCA_MAX_MCAST_GRP *
					  SOFTHCA_MAX_MCAST_QP;
	attr->max_srq = lim->max_srq;
	attr->max_srq_wr = lim->max_srq_wr;
	attr->max_srq_sge = lim->max_sge;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
	return 0;
}

int softhca_query_port(struct ib_device *ibdev, u32 port,
		       struct ib_port_attr *attr)
{
	struct net_device *ndev = to_sdev(ibdev)->ndev;
	unsigned int mtu = READ_ONCE(ndev->mtu);
	bool running = netif_running(ndev);
	bool carrier = netif_carrier_ok(ndev);
	enum ib_mtu active;
	int err;

	/* ib_core validated @port and zeroed @attr. */
	active = softhca_mtu_from_netdev(mtu);
	attr->state = softhca_port_state(running, carrier, mtu);
	attr->phys_state = softhca_phys_state(running, carrier);
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = active ? active : IB_MTU_256;
	attr->gid_tbl_len = SOFTHCA_GID_TABLE_LEN;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = 0x80000000u;	/* 2 GiB, the IBA maximum */
	attr->max_vl_num = 1;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->ip_gids = true;

	err = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	return err;
}

int softhca_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
		       u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

int softhca_get_port_immutable(struct ib_device *ibdev, u32 port,
			       struct ib_port_immutable *immutable)
{
	/*
	 * RoCEv2 with MADs and the CM: ib_mad creates the GSI QP (QP1,
	 * qp.c) on the port, ib_cm and rdma_cm attach to it.
	 */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->gid_tbl_len = SOFTHCA_GID_TABLE_LEN;
	immutable->pkey_tbl_len = 1;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

void softhca_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", SOFTHCA_DRV_VERSION);
}

/*
 * sysfs: /sys/class/infiniband/<dev>/hca_type lets libsofthca tell a
 * softhca device from any other without opening it (the driver id of an
 * out-of-tree driver is RDMA_DRIVER_UNKNOWN, which says nothing).
 */
static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", SOFTHCA_HCA_TYPE);
}
static DEVICE_ATTR_RO(hca_type);

static ssize_t parent_netdev_show(struct device *device,
				  struct device_attribute *attr, char *buf)
{
	struct softhca_dev *sdev =
		rdma_device_to_drv_device(device, struct softhca_dev, ibdev);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}
static DEVICE_ATTR_RO(parent_netdev);

static struct attribute *softhca_attrs[] = {
	&dev_attr_hca_type.attr,
	&dev_attr_parent_netdev.attr,
	NULL,
};

const struct attribute_group softhca_attr_group = {
	.attrs = softhca_attrs,
};
