// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: device lifetime.
 *
 * A device is born in softhca_newlink() ("rdma link add") and dies by one
 * of three roads, all ending in ib_core calling softhca_dealloc_driver():
 *   - "rdma link delete" (ib_core's nldev_dellink, IBK_ALLOW_USER_UNREG);
 *   - its netdev unregistering (softhca_netdev_event, queued because the
 *     notifier runs under RTNL and unregistration may sleep on users);
 *   - module unload (softhca_remove_all).
 *
 * Locking: softhca_devs_lock (a mutex) protects softhca_devs and nothing
 * else.  It is never held across an ib_core register/unregister call, so
 * it cannot deadlock against ib_core's own locks or RTNL.  The netdev
 * notifier runs under RTNL and only takes softhca_devs_lock inside it:
 * lock order is RTNL -> softhca_devs_lock.
 */
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "engine.h"
#include "counters.h"
#include "net.h"

/* Protects softhca_devs only; see the locking rules above. */
DEFINE_MUTEX(softhca_devs_lock);
static LIST_HEAD(softhca_devs);

static struct softhca_dev *softhca_find_by_netdev(struct net_device *ndev)
{
	struct softhca_dev *sdev;

	lockdep_assert_held(&softhca_devs_lock);
	list_for_each_entry(sdev, &softhca_devs, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/* Why a netdev cannot carry a softhca device, as an errno. */
static int softhca_check_netdev(struct net_device *ndev)
{
	if (is_vlan_dev(ndev)) {
		pr_info_ratelimited("%s: %s is a VLAN device; bind to its real device\n",
				    SOFTHCA_DRV_NAME, netdev_name(ndev));
		return -EOPNOTSUPP;
	}
	if (ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN) {
		pr_info_ratelimited("%s: %s is not an Ethernet device\n",
				    SOFTHCA_DRV_NAME, netdev_name(ndev));
		return -EINVAL;
	}
	return 0;
}

static void softhca_init_ibdev(struct softhca_dev *sdev)
{
	struct ib_device *ibdev = &sdev->ibdev;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	strscpy(ibdev->node_desc, "softhca", sizeof(ibdev->node_desc));
	softhca_guid_from_mac(sdev->ndev->dev_addr, &ibdev->node_guid);
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_GET_CONTEXT) |
				  BIT_ULL(IB_USER_VERBS_CMD_QUERY_DEVICE) |
				  BIT_ULL(IB_USER_VERBS_CMD_QUERY_PORT) |
				  BIT_ULL(IB_USER_VERBS_CMD_ALLOC_PD) |
				  BIT_ULL(IB_USER_VERBS_CMD_DEALLOC_PD) |
				  /* the doorbells: empty POST_SEND/POST_RECV */
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, &softhca_dev_ops);
}

/**
 * softhca_newlink - rdma_link_ops.newlink: create a device on @ndev
 * @ibdev_name: the name the user asked for
 * @ndev: the netdev, referenced by the caller for the call's duration
 *
 * Called by ib_core under its link_ops rwsem (read), so module unload,
 * which unregisters the link ops first, cannot run concurrently.
 */
int softhca_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct softhca_dev *sdev;
	int err;

	err = softhca_check_netdev(ndev);
	if (err)
		return err;

	sdev = ib_alloc_device(softhca_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	atomic_set(&sdev->num_pds, 0);
	/*
	 * The RoCEv2 receive path looks QPs, SRQs and MRs up in softirq
	 * (wire.c): every user of these locks keeps BHs off.
	 */
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	xa_init_flags(&sdev->srqs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	xa_init_flags(&sdev->mrs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	xa_init_flags(&sdev->mws, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	/* AHs: also with IRQs off (ah.c). */
	xa_init_flags(&sdev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	INIT_LIST_HEAD(&sdev->list);
	INIT_LIST_HEAD(&sdev->net_node);
	INIT_LIST_HEAD(&sdev->mcasts);
	mutex_init(&sdev->mcast_lock);
	softhca_init_ibdev(sdev);
	err = softhca_counters_init(sdev);
	if (err)
		goto err_dealloc;
	err = softhca_engine_start(sdev);
	if (err)
		goto err_dealloc;

	/*
	 * Claim the netdev before registering so that two concurrent "link
	 * add" on one netdev cannot both succeed; the entry is removed by
	 * softhca_dealloc_driver() on every failure and teardown path.
	 */
	mutex_lock(&softhca_devs_lock);
	if (softhca_find_by_netdev(ndev)) {
		mutex_unlock(&softhca_devs_lock);
		pr_info_ratelimited("%s: %s already has a softhca device\n",
				    SOFTHCA_DRV_NAME, netdev_name(ndev));
		err = -EEXIST;
		goto err_dealloc;
	}
	list_add_tail(&sdev->list, &softhca_devs);
	mutex_unlock(&softhca_devs_lock);

	err = ib_device_set_netdev(&sdev->ibdev, ndev, SOFTHCA_PORT);
	if (err)
		goto err_dealloc;

	sdev->last_port_state = softhca_port_state(netif_running(ndev),
						   netif_carrier_ok(ndev),
						   READ_ONCE(ndev->mtu));

	/*
	 * On the wire of the netdev's namespace; if UDP 4791 is taken there
	 * (rdma_rxe in the initial namespace), the device still works
	 * between the QPs of this host (net.c said so in the log).
	 */
	err = softhca_net_attach(sdev);
	if (err && err != -EADDRINUSE)
		goto err_dealloc;

	err = ib_register_device(&sdev->ibdev, ibdev_name, NULL);
	if (err) {
		/* ib_core keeps the -ENFILE it uses for a taken name. */
		if (err == -ENFILE)
			err = -EEXIST;
		goto err_dealloc;
	}

	/*
	 * The netdev may have started unregistering while we registered;
	 * the notifier could not queue an unregistration for a device
	 * ib_core did not know yet, so it left a note and we do it here.
	 */
	softhca_devs_index_add(sdev);
	mutex_lock(&softhca_devs_lock);
	sdev->registered = true;
	if (sdev->ndev_gone)
		ib_unregister_device_queued(&sdev->ibdev);
	mutex_unlock(&softhca_devs_lock);

	dev_info(&sdev->ibdev.dev, "created on %s\n", netdev_name(ndev));
	return 0;

err_dealloc:
	/* Calls softhca_dealloc_driver(), which undoes everything above. */
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

/**
 * softhca_dealloc_driver - ops.dealloc_driver: last driver callback
 * @ibdev: the device being freed
 *
 * ib_core calls this once the device is unregistered (or from
 * ib_dealloc_device() on a failed registration); no other op runs
 * concurrently or afterwards.
 */
void softhca_dealloc_driver(struct ib_device *ibdev)
{
	struct softhca_dev *sdev = to_sdev(ibdev);

	/* ib_core destroyed every object before calling us. */
	WARN_ON(atomic_read(&sdev->num_pds) || atomic_read(&sdev->num_cqs) ||
		atomic_read(&sdev->num_qps) || atomic_read(&sdev->num_srqs) ||
		atomic_read(&sdev->num_mrs) || atomic_read(&sdev->num_ahs) ||
		atomic_read(&sdev->num_mws));
	/*
	 * An XRC domain is ib_core's from its first open to its last close;
	 * we only count it.  One still counted was never deallocated by
	 * ib_core, through no fault of ours: Linux 6.1's ib_create_qp_user()
	 * keeps a domain's use count when it fails after our create_qp made
	 * an XRC_TGT QP (selftests/failnth.c).  Said, not WARNed.
	 */
	if (atomic_read(&sdev->num_xrcds))
		ibdev_err(ibdev, "%d XRC domains never deallocated by ib_core\n",
			  atomic_read(&sdev->num_xrcds));
	WARN_ON(!xa_empty(&sdev->qps) || !xa_empty(&sdev->srqs) ||
		!xa_empty(&sdev->mrs) || !xa_empty(&sdev->ahs) ||
		!xa_empty(&sdev->mws));
	softhca_devs_index_del(sdev);
	softhca_mcast_free_all(sdev);	/* empty: every QP left its groups */
	softhca_net_detach(sdev);
	softhca_engine_stop(sdev);
	softhca_counters_free(sdev);
	xa_destroy(&sdev->qps);
	xa_destroy(&sdev->srqs);
	xa_destroy(&sdev->mrs);
	xa_destroy(&sdev->mws);
	xa_destroy(&sdev->ahs);
	mutex_destroy(&sdev->mcast_lock);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);

	mutex_lock(&softhca_devs_lock);
	if (!list_empty(&sdev->list))
		list_del_init(&sdev->list);
	mutex_unlock(&softhca_devs_lock);
}

/**
 * softhca_remove_all - unregister every device (module unload)
 *
 * The link ops are already unregistered, so no device can appear.  A
 * device whose netdev is going away may be unregistering concurrently on
 * ib_core's workqueue: ib_unregister_device() serialises with that on the
 * device's unregistration mutex and returns only once the device is gone
 * (and off our list, because softhca_dealloc_driver() ran under it).
 */
void softhca_remove_all(void)
{
	struct softhca_dev *sdev;

	for (;;) {
		mutex_lock(&softhca_devs_lock);
		sdev = list_first_entry_or_null(&softhca_devs,
						struct softhca_dev, list);
		if (sdev)
			get_device(&sdev->ibdev.dev);
		mutex_unlock(&softhca_devs_lock);
		if (!sdev)
			break;

		ib_unregister_device(&sdev->ibdev);
		/*
		 * dealloc_driver removed the entry; should ib_core not have
		 * known the device (no registration, so nothing to
		 * unregister), drop it here so the loop always ends.
		 */
		mutex_lock(&softhca_devs_lock);
		if (!list_empty(&sdev->list))
			list_del_init(&sdev->list);
		mutex_unlock(&softhca_devs_lock);
		put_device(&sdev->ibdev.dev);
	}
}

static void softhca_port_event(struct softhca_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;
	enum ib_port_state state;
	struct ib_event ev = {};

	state = softhca_port_state(netif_running(ndev), netif_carrier_ok(ndev),
				   READ_ONCE(ndev->mtu));
	if (state == sdev->last_port_state)
		return;
	sdev->last_port_state = state;

	ev.device = &sdev->ibdev;
	ev.element.port_num = SOFTHCA_PORT;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

static int softhca_netdev_event(struct notifier_block *nb,
				unsigned long event, void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct softhca_dev *sdev;

	ASSERT_RTNL();
	mutex_lock(&softhca_devs_lock);
	sdev = softhca_find_by_netdev(ndev);
	if (!sdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		/*
		 * Unregistration waits for users to close the device; that
		 * must not happen under RTNL.  Leave the entry on the list
		 * (it keeps its netdev reference until dealloc_driver) so a
		 * racing "link add" on the same name still sees it.
		 */
		if (sdev->registered)
			ib_unregister_device_queued(&sdev->ibdev);
		else
			sdev->ndev_gone = true;
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		softhca_port_event(sdev);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&softhca_devs_lock);
	return NOTIFY_DONE;
}

static struct notifier_block softhca_netdev_nb = {
	.notifier_call = softhca_netdev_event,
};

int softhca_netdev_notifier_register(void)
{
	return register_netdevice_notifier(&softhca_netdev_nb);
}

void softhca_netdev_notifier_unregister(void)
{
	unregister_netdevice_notifier(&softhca_netdev_nb);
}
