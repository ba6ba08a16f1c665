// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the same-host transport.
 *
 * A message goes to a QP number on a device.  The device is found once,
 * from a destination GID (an RC/UC QP's path at RTR, a UD AH at
 * creation): the softhca device whose GID table holds that GID and
 * whose netdev is in the same network namespace as the sender's, as a
 * device index.  (A device in another namespace is reached the way a
 * container reaches it, through the network: a namespace is not
 * bypassed.)  Per message, softhca_dest_get() turns (device index, QP
 * number) into references on the device's registration and on the QP
 * (kept from one message to the next, see req.c) and the same-host
 * transport, whose send is the responder itself.  A destination that no
 * device here owns (UD, UC, RC, XRC: every transport that sends) goes on
 * the wire (wire.c) when the sender's device is on it.  So does one that
 * another device of the sender's namespace owns when the same_host
 * parameter is off: kernel ULPs open every rdma_cm ID in the initial
 * namespace, and that is how two devices there get a path over the
 * network between them, as two HCAs of one host cabled together have
 * (selftests/nvmeof.sh).  A device always reaches itself directly: its
 * own packets would come back over lo, where no device takes them.
 *
 * Every registered softhca device is in softhca_dev_xa under its ib_core
 * index.  Its lock is taken with IRQs off everywhere: lookups run under
 * a send queue's lock, which the receive softirq takes too, and from
 * any context (lockdep saw newlink's plain xa_store() under that order
 * in the fuzzer; the xarray is made with XA_FLAGS_LOCK_IRQ to match).
 * Lookups take the xarray lock and then the device's registration
 * reference (ib_device_try_get), which fails once unregistration has
 * begun; the entry is erased in dealloc_driver, before the device's
 * memory can go.
 */
#include <rdma/ib_cache.h>

#include "engine.h"
#include "net.h"

/*
 * XA_FLAGS_LOCK_IRQ: xa_store_irq() may drop the lock to allocate a node
 * (GFP_KERNEL), and it drops and retakes it as the xarray's flags say;
 * without the flag it kept IRQs off across a sleeping allocation.
 */
static DEFINE_XARRAY_FLAGS(softhca_dev_xa, XA_FLAGS_LOCK_IRQ);

/* Read when a destination is resolved: changes apply to later ones. */
static bool softhca_same_host = true;
module_param_named(same_host, softhca_same_host, bool, 0644);
MODULE_PARM_DESC(same_host, "devices whose netdevs share a network namespace talk through the same-host transport, default Y; N: over the network, as devices on two hosts (a device still reaches itself directly); applies to QPs moved to RTR and AHs created afterwards");

void softhca_devs_index_add(struct softhca_dev *sdev)
{
	xa_store_irq(&softhca_dev_xa, sdev->ibdev.index, sdev, GFP_KERNEL);
}

void softhca_devs_index_del(struct softhca_dev *sdev)
{
	xa_cmpxchg_irq(&softhca_dev_xa, sdev->ibdev.index, sdev, NULL,
		       GFP_KERNEL);
}

/* A device by index, with its registration held; NULL if gone. */
static struct softhca_dev *softhca_dev_get(unsigned long index)
{
	struct softhca_dev *sdev;
	unsigned long flags;

	xa_lock_irqsave(&softhca_dev_xa, flags);
	sdev = xa_load(&softhca_dev_xa, index);
	if (sdev && !ib_device_try_get(&sdev->ibdev))
		sdev = NULL;
	xa_unlock_irqrestore(&softhca_dev_xa, flags);
	return sdev;
}

/**
 * softhca_dev_by_gid - which softhca device on this host owns a GID
 * @gid: the GID
 * @from: the sending device, whose netdev's network namespace the
 *	device's netdev must be in
 *
 * Context: any (no sleeping).
 * Return: the device's index plus one, or 0 when no softhca device here
 * has that GID (or only another device while same_host is off).
 */
u32 softhca_dev_by_gid(const union ib_gid *gid, const struct softhca_dev *from)
{
	const struct net *net = dev_net(from->ndev);
	bool same_host = READ_ONCE(softhca_same_host);
	const struct ib_gid_attr *attr;
	struct softhca_dev *sdev;
	unsigned long index = 0, flags;

	for (;; index++) {
		xa_lock_irqsave(&softhca_dev_xa, flags);
		sdev = xa_find(&softhca_dev_xa, &index, ULONG_MAX, XA_PRESENT);
		if (sdev && !ib_device_try_get(&sdev->ibdev))
			sdev = ERR_PTR(-ENODEV);	/* going away: skip */
		xa_unlock_irqrestore(&softhca_dev_xa, flags);
		if (!sdev)
			return 0;
		if (IS_ERR(sdev))
			continue;
		if (!net_eq(dev_net(sdev->ndev), net) ||
		    (!same_host && sdev != from)) {
			ib_device_put(&sdev->ibdev);
			continue;
		}
		attr = rdma_find_gid_by_port(&sdev->ibdev, gid,
					     IB_GID_TYPE_ROCE_UDP_ENCAP,
					     SOFTHCA_PORT, NULL);
		ib_device_put(&sdev->ibdev);
		if (!IS_ERR(attr)) {
			rdma_put_gid_attr(attr);
			return index + 1;
		}
	}
}

/* A QP by number, referenced; NULL if there is none (or it is dying). */
struct softhca_qp *softhca_qp_get(struct softhca_dev *sdev, u32 qpn)
{
	struct softhca_qp *qp;

	xa_lock_bh(&sdev->qps);
	qp = xa_load(&sdev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_bh(&sdev->qps);
	return qp;
}

/**
 * softhca_sender_active - is a connected QP still sending to us?
 * @dev: the sender's device, its ib_device index plus one (0: a QP on
 *	another host, which only its own packets speak for: "active")
 * @qpn: the sender's QP number
 * @dest_qpn: the receiving QP's number
 *
 * An XRC_TGT asks this about the XRC_INI whose message it holds half
 * received when another INI wants in: a sender that is gone, in error,
 * not in the middle of a message, or connected elsewhere will never
 * finish it.  A lockless look (the answer may be stale by the time it
 * is used; a wrong "active" only makes the other sender retry later).
 *
 * Context: any (no sleeping).
 */
bool softhca_sender_active(u32 dev, u32 qpn, u32 dest_qpn)
{
	struct softhca_dev *sdev;
	enum ib_qp_state state;
	struct softhca_qp *qp;
	bool active = false;

	if (!dev)
		return true;
	sdev = softhca_dev_get(dev - 1);
	if (!sdev)
		return false;
	qp = softhca_qp_get(sdev, qpn);
	if (qp) {
		state = READ_ONCE(qp->state);
		active = READ_ONCE(qp->req.busy) &&
			 (state == IB_QPS_RTS || state == IB_QPS_SQD) &&
			 READ_ONCE(qp->attr.dest_qp_num) == dest_qpn;
		softhca_qp_put(qp);
	}
	ib_device_put(&sdev->ibdev);
	return active;
}

/* A UD WQE's AH, by number: it must belong to the sending QP's PD. */
static int softhca_dest_ah(struct softhca_qp *qp,
			   const struct softhca_send_wqe *wqe, u32 *dev,
			   struct softhca_dest *dest)
{
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	struct softhca_ah *ah;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&sdev->ahs, flags);
	ah = xa_load(&sdev->ahs, wqe->ud.ah_num);
	if (ah && ah->ibah.pd == qp->ibqp.pd) {
		*dev = ah->dest_dev;
		dest->sgid = ah->sgid;
		dest->dgid = ah->attr.grh.dgid;
		err = 0;
	}
	xa_unlock_irqrestore(&sdev->ahs, flags);
	return err;
}

/**
 * softhca_dest_get - where a send WQE's message goes
 * @qp: the sending QP
 * @wqe: the kernel copy of the WQE (UD: names the AH and the QP)
 * @dest: in, the destination of the previous message (@dest->qp NULL
 *	for none): kept, references and caches included, when the message
 *	goes to the same QP and that QP is not being destroyed; out, the
 *	referenced destination, or @dest->qp NULL on an error
 *
 * The destination is resolved once, not once per chunk: @dest lives in
 * a struct softhca_req_cache, for one run (a doorbell) or across the
 * runs of the QP's poller, which lets go of a dying destination at its
 * next pass (req.c); a destroy of the destination QP waits that long.
 *
 * Return: 0; -ENOENT when nobody on this host answers for the
 * destination; -EINVAL when a UD WQE names no AH of the QP's PD.
 */
int softhca_dest_get(struct softhca_qp *qp, const struct softhca_send_wqe *wqe,
		     struct softhca_dest *dest)
{
	struct softhca_dest to = {};
	int err;

	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		err = softhca_dest_ah(qp, wqe, &to.dev, &to);
		if (err)
			goto fail;
		to.qpn = wqe->ud.remote_qpn & SOFTHCA_MAX_NUM;
		/* A Q_Key with the high bit set means "use the QP's". */
		to.qkey = (wqe->remote_qkey & 0x80000000) ?
			  qp->attr.qkey : wqe->remote_qkey;
	} else {
		to.dev = READ_ONCE(qp->dest_dev);
		to.qpn = qp->attr.dest_qp_num;
	}
	/*
	 * Nobody here: the wire, which carries every QP type that sends,
	 * when the device is on it.  A connected QP's path is in qp->wire.
	 */
	if (!to.dev && softhca_net_attached(to_sdev(qp->ibqp.device))) {
		softhca_dest_put(dest);
		to.tp = &softhca_wire;
		*dest = to;
		return 0;
	}
	if (dest->qp && dest->dev == to.dev && dest->qpn == to.qpn &&
	    !READ_ONCE(dest->qp->dying)) {
		dest->qkey = to.qkey;
		dest->sgid = to.sgid;
		dest->dgid = to.dgid;
		return 0;
	}
	err = -ENOENT;
	if (!to.dev)
		goto fail;
	to.sdev = softhca_dev_get(to.dev - 1);
	if (!to.sdev)
		goto fail;
	to.qp = softhca_qp_get(to.sdev, to.qpn);
	if (!to.qp) {
		ib_device_put(&to.sdev->ibdev);
		goto fail;
	}
	softhca_dest_put(dest);
	to.tp = &softhca_loopback;
	*dest = to;
	return 0;

fail:
	softhca_dest_put(dest);
	return err;
}

/* Drop a destination's references (none if @dest->qp is NULL). */
void softhca_dest_put(struct softhca_dest *dest)
{
	dest->tp = NULL;
	if (!dest->qp)
		return;
	softhca_mr_cache_drop(&dest->mr_cache);
	softhca_qp_put(dest->qp);
	ib_device_put(&dest->sdev->ibdev);
	dest->qp = NULL;
}

/* The same-host transport: the responder answers at once. */
enum softhca_ack softhca_loopback_send(struct softhca_qp *qp,
				       struct softhca_dest *dest,
				       struct softhca_msg *msg)
{
	return softhca_resp_deliver(dest, msg);
}

const struct softhca_transport softhca_loopback = {
	.send = softhca_loopback_send,
};
