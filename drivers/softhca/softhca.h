/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: internal definitions shared by the driver's files.
 *
 * Ownership map (one concern per file):
 *   main.c      module init/exit, module parameters, rdma_link_ops
 *   device.c    device lifetime: create on "rdma link add", the device
 *               list, netdev events, unregister paths
 *   port.c      pure helpers deriving port attributes from a netdev
 *               (MTU, GUID, state); unit-tested by port_test.c
 *   query.c     query_device/query_port/query_pkey/port_immutable and
 *               the sysfs attributes
 *   ucontext.c  per-process context and the mmap entry plumbing
 *   pd.c        protection domains
 *   verbs.c     the ib_device_ops table
 */
#ifndef SOFTHCA_H
#define SOFTHCA_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "../../uapi/rdma/softhca-abi.h"

#define SOFTHCA_DRV_NAME	"softhca"
#define SOFTHCA_DRV_VERSION	"0.1.0"
#define SOFTHCA_PORT		1

/*
 * Bytes a RoCEv2 packet spends on headers around its payload in the
 * worst case: IPv6 (40) + UDP (8) + BTH (12) + XRCETH (4) + RETH (16) +
 * ImmDt (4) + ICRC (4).  The active MTU is the largest IB MTU that fits
 * in the netdev MTU minus this.
 */
#define SOFTHCA_ROCE_OVERHEAD	88

/* Tunable limits; see main.c for the module parameters behind them. */
struct softhca_limits {
	unsigned int max_pd;
	unsigned int max_qp;
	unsigned int max_qp_wr;
	unsigned int max_sge;
	unsigned int max_cq;
	unsigned int max_cqe;
	unsigned int max_mr;
	unsigned int max_srq;
	unsigned int max_srq_wr;
	unsigned int max_inline;
	u64 max_mr_size;
};

extern struct softhca_limits softhca_limits;

/**
 * struct softhca_dev - one software HCA bound to one netdev
 * @ibdev: core device; must stay first (ib_alloc_device requirement)
 * @ndev: the bound netdev, reference held for the device's lifetime
 * @ndev_tracker: tracker for that reference
 * @list: entry in the driver's device list, protected by softhca_devs_lock
 * @last_port_state: port state last reported as an event, protected by
 *	RTNL (only the netdev notifier updates it)
 * @registered: ib_register_device() succeeded (softhca_devs_lock)
 * @ndev_gone: the netdev unregistered before @registered was set
 *	(softhca_devs_lock); newlink then queues the unregistration
 * @num_pds: PDs allocated on this device, bounded by max_pd
 */
struct softhca_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head list;
	enum ib_port_state last_port_state;
	bool registered;
	bool ndev_gone;
	atomic_t num_pds;
};

static inline struct softhca_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct softhca_dev, ibdev);
}

struct softhca_ucontext {
	struct ib_ucontext ibuc;
	struct softhca_ctx_page *ctx_page;	/* vmalloc_user, kernel-written */
	struct rdma_user_mmap_entry *ctx_entry;
};

static inline struct softhca_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct softhca_ucontext, ibuc);
}

/**
 * struct softhca_mmap_entry - a kernel buffer a process may map
 * @rdma_entry: core entry; gives the mmap offset and refcounting
 * @vaddr: vmalloc_user() memory, freed in mmap_free when the last user
 *	(the object or a live VMA) lets go
 * @writable: whether user space may map it writable
 */
struct softhca_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *vaddr;
	bool writable;
};

struct softhca_pd {
	struct ib_pd ibpd;
};

/* port.c: pure helpers, no device state */
enum ib_mtu softhca_mtu_from_netdev(unsigned int netdev_mtu);
enum ib_port_state softhca_port_state(bool running, bool carrier,
				      unsigned int netdev_mtu);
u8 softhca_phys_state(bool running, bool carrier);
void softhca_guid_from_mac(const u8 *mac, __be64 *guid);

/* device.c */
extern struct mutex softhca_devs_lock;
int softhca_newlink(const char *ibdev_name, struct net_device *ndev);
void softhca_remove_all(void);
int softhca_netdev_notifier_register(void);
void softhca_netdev_notifier_unregister(void);
void softhca_dealloc_driver(struct ib_device *ibdev);

/* query.c */
int softhca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			 struct ib_udata *udata);
int softhca_query_port(struct ib_device *ibdev, u32 port,
		       struct ib_port_attr *attr);
int softhca_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
		       u16 *pkey);
int softhca_get_port_immutable(struct ib_device *ibdev, u32 port,
			       struct ib_port_immutable *immutable);
void softhca_get_dev_fw_str(struct ib_device *ibdev, char *str);
extern const struct attribute_group softhca_attr_group;

/* ucontext.c */
int softhca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void softhca_dealloc_ucontext(struct ib_ucontext *ibuc);
void softhca_disassociate_ucontext(struct ib_ucontext *ibuc);
int softhca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void softhca_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
struct softhca_mmap_entry *softhca_mmap_insert(struct softhca_ucontext *uc,
					       void *vaddr, size_t size,
					       bool writable, u64 *offset);

/* pd.c */
int softhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int softhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* verbs.c */
extern const struct ib_device_ops softhca_dev_ops;

#endif /* SOFTHCA_H */
