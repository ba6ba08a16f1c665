// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: UD multicast (attach_mcast, detach_mcast).
 *
 * A device keeps its groups in a list: a group is a multicast GID and
 * the numbers of the UD QPs attached to it.  A group is never changed in
 * place: attach and detach, under mcast_lock, build the new group and
 * replace the old one (list_replace_rcu(), kfree_rcu()), so that the
 * receive path (softirq, wire.c) reads one consistent member list under
 * RCU and a datagram reaches each attached QP exactly once.
 *
 * On the wire (RoCEv2) a group is an IP multicast address: the GID's
 * IPv4-mapped form, or the IPv6 address itself.  The first attach of a
 * group adds its Ethernet multicast address to the netdev's filter
 * (dev_mc_add()), the last detach takes it out again, as an HCA programs
 * its multicast filter.  The IP-level membership (IGMP, MLD) is the
 * joiner's, as with rdma_rxe: rdma_cm takes it in rdma_join_multicast().
 * A datagram sent to a group leaves through the IP stack (net.c), which
 * also loops a copy back to the members on this host.
 *
 * A QP that is destroyed leaves its groups (ib_uverbs detaches a
 * process's QPs first; a kernel consumer might not).
 *
 * Locking: mcast_lock (a mutex: attach and detach run in process
 * context) orders every change of the list; readers take rcu_read_lock
 * only.  dev_mc_add() and dev_mc_del() take the netdev's address lock
 * inside it.
 */
#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <rdma/ib_addr.h>

#include "softhca.h"

/**
 * struct softhca_mcast - one multicast group of a device
 * @node: in sdev->mcasts (RCU)
 * @rcu: frees a replaced group after the readers
 * @gid: the group's GID
 * @mac: its Ethernet multicast address (in the netdev's filter)
 * @nqp: QPs attached
 * @qpn: their numbers
 */
struct softhca_mcast {
	struct list_head node;
	struct rcu_head rcu;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	u32 nqp;
	u32 qpn[];
};

/* The group of @gid, or NULL.  mcast_lock or RCU held. */
static struct softhca_mcast *softhca_mcast_find(struct softhca_dev *sdev,
						const union ib_gid *gid)
{
	struct softhca_mcast *m;

	list_for_each_entry_rcu(m, &sdev->mcasts, node,
				lockdep_is_held(&sdev->mcast_lock))
		if (!memcmp(&m->gid, gid, sizeof(*gid)))
			return m;
	return NULL;
}

/* A copy of @old (or a new group of @gid) with room for @nqp QPs. */
static struct softhca_mcast *softhca_mcast_new(const struct softhca_mcast *old,
					       const union ib_gid *gid, u32 nqp)
{
	struct softhca_mcast *m;

	m = kzalloc(struct_size(m, qpn, nqp), GFP_KERNEL);
	if (!m)
		return NULL;
	if (old) {
		m->gid = old->gid;
		ether_addr_copy(m->mac, old->mac);
		m->nqp = old->nqp;
		memcpy(m->qpn, old->qpn, old->nqp * sizeof(old->qpn[0]));
		return m;
	}
	m->gid = *gid;
	if (ipv6_addr_v4mapped((const struct in6_addr *)gid->raw)) {
		__be32 a;

		memcpy(&a, gid->raw + 12, sizeof(a));
		ip_eth_mc_map(a, m->mac);
	} else {
		ipv6_eth_mc_map((const struct in6_addr *)gid->raw, m->mac);
	}
	return m;
}

static int softhca_mcast_qp_index(const struct softhca_mcast *m, u32 qpn)
{
	u32 i;

	for (i = 0; i < m->nqp; i++)
		if (m->qpn[i] == qpn)
			return i;
	return -1;
}

int softhca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	struct softhca_mcast *old, *m;
	int err = 0;

	/* ib_uverbs calls here without ib_attach_mcast()'s checks. */
	if (ibqp->qp_type != IB_QPT_UD ||
	    !rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;

	mutex_lock(&sdev->mcast_lock);
	old = softhca_mcast_find(sdev, gid);
	if (old && softhca_mcast_qp_index(old, ibqp->qp_num) >= 0)
		goto out;	/* attached already: nothing to do */
	err = -ENOMEM;
	if (old && old->nqp >= SOFTHCA_MAX_MCAST_QP)
		goto out;
	if (!old && sdev->num_mcasts >= SOFTHCA_MAX_MCAST_GRP)
		goto out;
	m = softhca_mcast_new(old, gid, old ? old->nqp + 1 : 1);
	if (!m)
		goto out;
	m->qpn[m->nqp++] = ibqp->qp_num;
	if (old) {
		list_replace_rcu(&old->node, &m->node);
		kfree_rcu(old, rcu);
	} else {
		err = dev_mc_add(sdev->ndev, m->mac);
		if (err) {
			kfree(m);
			goto out;
		}
		list_add_tail_rcu(&m->node, &sdev->mcasts);
		sdev->num_mcasts++;
	}
	err = 0;
out:
	mutex_unlock(&sdev->mcast_lock);
	return err;
}

/* Group @m leaves the device and the netdev's filter.  mcast_lock held. */
static void softhca_mcast_unlink(struct softhca_dev *sdev,
				 struct softhca_mcast *m)
{
	list_del_rcu(&m->node);
	sdev->num_mcasts--;
	dev_mc_del(sdev->ndev, m->mac);
	kfree_rcu(m, rcu);
}

/*
 * Take QP @qpn out of group @old.  Called with mcast_lock held.
 * Return: 0, or -EINVAL when it is not attached.
 */
static int softhca_mcast_remove(struct softhca_dev *sdev,
				struct softhca_mcast *old, u32 qpn)
{
	int i = softhca_mcast_qp_index(old, qpn);
	struct softhca_mcast *m;

	if (i < 0)
		return -EINVAL;
	if (old->nqp == 1) {
		softhca_mcast_unlink(sdev, old);
		return 0;
	}
	m = softhca_mcast_new(old, NULL, old->nqp);
	if (!m) {
		/*
		 * No memory for the smaller copy: blank the entry in place.
		 * A reader sees the old number or 0 (no QP has number 0
		 * here: QP0 does not exist on RoCE), never a torn value.
		 */
		WRITE_ONCE(old->qpn[i], 0);
		return 0;
	}
	m->qpn[i] = m->qpn[--m->nqp];
	list_replace_rcu(&old->node, &m->node);
	kfree_rcu(old, rcu);
	return 0;
}

int softhca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	struct softhca_mcast *old;
	int err = -EINVAL;

	mutex_lock(&sdev->mcast_lock);
	old = softhca_mcast_find(sdev, gid);
	if (old)
		err = softhca_mcast_remove(sdev, old, ibqp->qp_num);
	mutex_unlock(&sdev->mcast_lock);
	return err;
}

/* QP @qp is being destroyed: out of every group. */
void softhca_mcast_qp_gone(struct softhca_qp *qp)
{
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	struct softhca_mcast *m, *tmp;

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return;
	mutex_lock(&sdev->mcast_lock);
	list_for_each_entry_safe(m, tmp, &sdev->mcasts, node)
		softhca_mcast_remove(sdev, m, qp->ibqp.qp_num);
	mutex_unlock(&sdev->mcast_lock);
}

/* The device goes: no QP is left, so neither is a group; be sure. */
void softhca_mcast_free_all(struct softhca_dev *sdev)
{
	struct softhca_mcast *m, *tmp;

	mutex_lock(&sdev->mcast_lock);
	list_for_each_entry_safe(m, tmp, &sdev->mcasts, node)
		softhca_mcast_unlink(sdev, m);
	mutex_unlock(&sdev->mcast_lock);
}

/**
 * softhca_mcast_members - the QPs a datagram to group @gid goes to
 * @sdev: the device it arrived on
 * @gid: the destination GID of the packet
 * @qpn: out, the attached QPs' numbers
 * @max: room in @qpn (SOFTHCA_MAX_MCAST_QP is enough)
 *
 * Context: any (RCU).
 * Return: how many numbers were stored.
 */
u32 softhca_mcast_members(struct softhca_dev *sdev, const union ib_gid *gid,
			  u32 *qpn, u32 max)
{
	struct softhca_mcast *m;
	u32 n = 0;

	rcu_read_lock();
	m = softhca_mcast_find(sdev, gid);
	if (m) {
		n = min(m->nqp, max);
		memcpy(qpn, m->qpn, n * sizeof(*qpn));
	}
	rcu_read_unlock();
	return n;
}
