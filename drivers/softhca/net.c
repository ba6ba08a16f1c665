// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the net layer under the RoCEv2 transport.
 *
 * Sockets.  RoCEv2 is UDP to port 4791.  UDP ports belong to a network
 * namespace, so softhca keeps one pair of kernel sockets (IPv4, and IPv6
 * bound v6-only) per namespace, opened when the first softhca device on
 * a netdev of that namespace is created and closed with the last one.
 * A device lives and dies with its netdev's namespace: moving the netdev
 * elsewhere unregisters it (device.c), so the pair never changes under a
 * device.  rdma_rxe of 6.1 binds the same port in the initial namespace
 * when it loads: whoever comes first has it there; a softhca device that
 * finds the port taken works on this host only (and says so once).
 *
 * Receive.  The sockets are UDP tunnel sockets: the UDP layer hands
 * every datagram to softhca_net_rcv() in softirq, under RCU.  The packet
 * belongs to the device bound to the netdev it arrived on (the
 * namespace's list of devices, read under RCU), which is held for the
 * call with ib_device_try_get(): that fails once the device started to
 * unregister, and the list entry outlives the last reader (detach waits
 * for a grace period before the device can be freed).
 *
 * Transmit.  The transport builds BTH .. ICRC in an skb with
 * SOFTHCA_NET_HEADROOM in front; softhca_net_xmit() routes it in the
 * netdev's namespace out of that netdev, puts the UDP and IP headers in
 * front, fills the ICRC (which covers them) and hands the packet to the
 * IP layer.  Runs of packets to one peer go as one UDP GSO skb
 * (net_batch.c) through the same two steps, softhca_net_prepare() and
 * softhca_net_send().  It uses no socket, only the namespace: sdev->net,
 * read under RCU, says the namespace is still there; its exit clears it
 * and waits a grace period before the namespace can go.  Transmitted
 * skbs come from softhca_net_alloc_skb() and received ones are freed by
 * softhca_net_consume(): per-CPU caches.
 *
 * Locking: softhca_net_lock (a mutex: opening sockets sleeps) serialises
 * attach, detach and a namespace's exit; it protects every struct
 * softhca_net and every device's net and net_node.
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include "softhca.h"
#include "counters.h"
#include "net.h"
#include "roce_hdr.h"

/**
 * struct softhca_net - softhca in one network namespace
 * @sock4: the UDP 4791 socket for IPv4; NULL while no device is attached
 * @sock6: the same for IPv6 (v6-only)
 * @devs: the attached devices (net_node; readers: receive, under RCU)
 * @users: devices attached
 * @busy_said: the port was found taken (said once)
 */
struct softhca_net {
	struct socket *sock4;
	struct socket *sock6;
	struct list_head devs;
	unsigned int users;
	bool busy_said;
};

static unsigned int softhca_net_id __read_mostly;
static DEFINE_MUTEX(softhca_net_lock);

/* Receive: one UDP datagram for port 4791, skb->data at the UDP header. */
static int softhca_net_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct softhca_net *sn = net_generic(sock_net(sk), softhca_net_id);
	struct softhca_dev *sdev, *found = NULL;

	list_for_each_entry_rcu(sdev, &sn->devs, net_node) {
		if (sdev->ndev == skb->dev) {
			if (ib_device_try_get(&sdev->ibdev))
				found = sdev;
			break;
		}
	}
	if (!found || !pskb_may_pull(skb, sizeof(struct udphdr))) {
		kfree_skb(skb);
		return 0;
	}
	__skb_pull(skb, sizeof(struct udphdr));
	softhca_wire_rcv(found, skb);
	ib_device_put(&found->ibdev);
	return 0;	/* consumed */
}

static struct socket *softhca_net_sock(struct net *net, bool v6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = softhca_net_rcv,
	};
	struct udp_port_cfg cfg = {
		.family = v6 ? AF_INET6 : AF_INET,
		.local_udp_port = htons(SOFTHCA_ROCE_UDP_PORT),
		.ipv6_v6only = v6,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(net, sock, &tcfg);
	/*
	 * A tunnel socket asks for CHECKSUM_COMPLETE on what it receives,
	 * for the inner packet's checksum.  RoCEv2 has none (the ICRC covers
	 * the packet), and with the request udp_rcv_segment() sums every
	 * segment of a received batch in software (4 % of the poller's time
	 * in a 1 MiB WRITE stream over a veth).  The UDP checksum itself is
	 * still verified before softhca_net_rcv() sees a datagram.
	 */
	inet_dec_convert_csum(sock->sk);
	return sock;
}

static void softhca_net_close(struct softhca_net *sn)
{
	if (sn->sock6)
		udp_tunnel_sock_release(sn->sock6);
	if (sn->sock4)
		udp_tunnel_sock_release(sn->sock4);
	sn->sock4 = NULL;
	sn->sock6 = NULL;
}

static int softhca_net_open(struct net *net, struct softhca_net *sn)
{
	struct socket *sock;

	sock = softhca_net_sock(net, false);
	if (IS_ERR(sock))
		return PTR_ERR(sock);
	sn->sock4 = sock;
	if (!ipv6_mod_enabled())
		return 0;
	sock = softhca_net_sock(net, true);
	if (IS_ERR(sock)) {
		softhca_net_close(sn);
		return PTR_ERR(sock);
	}
	sn->sock6 = sock;
	return 0;
}

/**
 * softhca_net_attach - put a new device on the wire of its namespace
 * @sdev: the device (its netdev held)
 *
 * Context: process, may sleep (rdma link add).
 * Return: 0; -EADDRINUSE when UDP 4791 is taken in the namespace (the
 * device then works on this host only); -ENODEV when the namespace is
 * going away; another errno from socket creation.
 */
int softhca_net_attach(struct softhca_dev *sdev)
{
	struct net *net = maybe_get_net(dev_net(sdev->ndev));
	struct softhca_net *sn;
	int err = 0;

	if (!net)
		return -ENODEV;
	sn = net_generic(net, softhca_net_id);
	mutex_lock(&softhca_net_lock);
	if (!sn->users)
		err = softhca_net_open(net, sn);
	if (!err) {
		sn->users++;
		list_add_tail_rcu(&sdev->net_node, &sn->devs);
		rcu_assign_pointer(sdev->net, sn);
	} else if (err == -EADDRINUSE && !sn->busy_said) {
		sn->busy_said = true;
		dev_info(&sdev->ibdev.dev,
			 "UDP port %u is taken in this network namespace (rdma_rxe?): RoCEv2 off, this host only\n",
			 SOFTHCA_ROCE_UDP_PORT);
	}
	mutex_unlock(&softhca_net_lock);
	put_net(net);
	return err;
}

/**
 * softhca_net_detach - take a device off the wire
 * @sdev: the device, unregistered (nothing transmits any more)
 *
 * Context: process, may sleep.  Waits for the receive paths that may
 * still be looking at the device.
 */
void softhca_net_detach(struct softhca_dev *sdev)
{
	struct softhca_net *sn;

	mutex_lock(&softhca_net_lock);
	sn = rcu_dereference_protected(sdev->net,
				       lockdep_is_held(&softhca_net_lock));
	if (sn) {
		list_del_rcu(&sdev->net_node);
		RCU_INIT_POINTER(sdev->net, NULL);
		if (!--sn->users)
			softhca_net_close(sn);
	}
	mutex_unlock(&softhca_net_lock);
	if (sn)
		synchronize_rcu();
}

/* Is the device on the wire?  (A lockless look, for reports.) */
bool softhca_net_attached(struct softhca_dev *sdev)
{
	return rcu_access_pointer(sdev->net);
}

static __be32 softhca_gid_v4(const union ib_gid *gid)
{
	__be32 a;

	memcpy(&a, gid->raw + 12, 4);
	return a;
}

/**
 * softhca_route_init - a QP's route cache, empty
 * @r: the cache
 */
void softhca_route_init(struct softhca_route *r)
{
	spin_lock_init(&r->lock);
	r->dst = NULL;
}

/**
 * softhca_route_destroy - let go of the route a cache keeps
 * @r: the cache; nothing sends through it now
 */
void softhca_route_destroy(struct softhca_route *r)
{
	dst_release(r->dst);
	r->dst = NULL;
}

/*
 * The route kept for @p, a reference taken, if it was looked up for
 * @p's addresses and TOS and nothing in the namespace's routing changed
 * since (the dst's check, as a dst_cache makes it); else NULL.
 * Context: BHs off (every sender's: the requester under sq.lock, the
 * responder in softirq or with BHs disabled); @p's source address set
 * (a lookup may choose one, the kept route would not).
 */
static struct dst_entry *softhca_route_get(const struct softhca_path *p)
{
	struct softhca_route *r = p->route;
	struct dst_entry *dst, *stale = NULL;

	if (!r || WARN_ON_ONCE(!in_softirq()))
		return NULL;
	spin_lock(&r->lock);
	dst = r->dst;
	if (!dst || r->tclass != p->tclass ||
	    memcmp(&r->dgid, &p->dgid, sizeof(r->dgid)) ||
	    memcmp(&r->sgid, &p->sgid, sizeof(r->sgid))) {
		dst = NULL;
	} else if (unlikely(dst->obsolete &&
			    !dst->ops->check(dst, r->cookie))) {
		stale = dst;
		r->dst = NULL;
		dst = NULL;
	} else {
		dst_hold(dst);
	}
	spin_unlock(&r->lock);
	dst_release(stale);
	return dst;
}

/* Keep @dst (the caller's reference stays the caller's) for @p.  BHs off. */
static void softhca_route_set(const struct softhca_path *p,
			      struct dst_entry *dst, u32 cookie)
{
	struct softhca_route *r = p->route;
	struct dst_entry *old;

	if (!r || !in_softirq())
		return;
	dst_hold(dst);
	spin_lock(&r->lock);
	old = r->dst;
	r->dst = dst;
	r->cookie = cookie;
	r->tclass = p->tclass;
	r->sgid = p->sgid;
	r->dgid = p->dgid;
	spin_unlock(&r->lock);
	dst_release(old);
}

/*
 * Route, then the IPv4 header; the ICRC is the caller's.  @segs IDs are
 * taken: a GSO skb's segments are numbered from the one in its header.
 */
static int softhca_net_ip4(struct net *net, struct net_device *ndev,
			   struct sk_buff *skb, const struct softhca_path *p,
			   u16 segs)
{
	struct flowi4 fl4 = {
		.flowi4_oif = ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_tos = RT_TOS(p->tclass),
		.daddr = softhca_gid_v4(&p->dgid),
		.saddr = softhca_gid_v4(&p->sgid),
	};
	/* A lookup may choose the source; a kept route would not. */
	bool keep = fl4.saddr;
	struct dst_entry *dst = keep ? softhca_route_get(p) : NULL;
	struct rtable *rt;
	struct iphdr *iph;

	if (!dst) {
		rt = ip_route_output_key(net, &fl4);
		if (IS_ERR(rt))
			return PTR_ERR(rt);
		dst = &rt->dst;
		if (keep)
			softhca_route_set(p, dst, 0);
	}
	skb_dst_set(skb, dst);

	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = p->tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = p->hop_limit ?: 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl4.saddr;
	iph->daddr = fl4.daddr;
	iph->check = 0;
	__ip_select_ident(net, iph, segs);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	return 0;
}

static int softhca_net_ip6(struct net *net, struct net_device *ndev,
			   struct sk_buff *skb, const struct softhca_path *p)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct flowi6 fl6 = {
		.flowi6_oif = ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst = NULL;
	struct ipv6hdr *ip6h;
	bool keep;

	memcpy(&fl6.daddr, p->dgid.raw, sizeof(fl6.daddr));
	memcpy(&fl6.saddr, p->sgid.raw, sizeof(fl6.saddr));
	/* As for IPv4: a kept route only for a source given. */
	keep = !ipv6_addr_any(&fl6.saddr);
	if (keep)
		dst = softhca_route_get(p);
	if (!dst) {
		dst = ip6_dst_lookup_flow(net, NULL, &fl6, NULL);
		if (IS_ERR(dst))
			return PTR_ERR(dst);
		if (keep)
			softhca_route_set(p, dst,
					  rt6_get_cookie((struct rt6_info *)dst));
	}
	skb_dst_set(skb, dst);

	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, p->tclass, 0);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = p->hop_limit ?: 64;
	ip6h->saddr = fl6.saddr;
	ip6h->daddr = fl6.daddr;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	return 0;
#else
	return -EAFNOSUPPORT;
#endif
}

/**
 * softhca_net_prepare - route a RoCEv2 skb and put its UDP and IP headers on
 * @sdev: the sending device
 * @skb: BTH .. ICRC, SOFTHCA_NET_HEADROOM in front (not consumed)
 * @path: addresses and UDP source port
 * @segs: the packets @skb will become (net_batch.c: more than one is a
 *	GSO skb whose IPv4 IDs follow the header's); 1 for one packet
 *
 * The UDP checksum is left 0 (RoCEv2 leaves it to the ICRC, IPv6 too)
 * and skb->ip_summed CHECKSUM_NONE; the ICRC is not filled.
 *
 * Context: rcu_read_lock() held, up to softhca_net_send().
 * Return: 0; a negative errno when it cannot be routed or the device is
 * off the wire.
 */
int softhca_net_prepare(struct softhca_dev *sdev, struct sk_buff *skb,
			const struct softhca_path *path, u16 segs)
{
	bool v4 = ipv6_addr_v4mapped((const struct in6_addr *)path->dgid.raw);
	struct net_device *ndev = sdev->ndev;
	struct udphdr *uh;
	struct net *net;
	int err;

	if (!rcu_dereference(sdev->net))
		return -ENETDOWN;
	net = dev_net(ndev);

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = path->sport;
	uh->dest = htons(SOFTHCA_ROCE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;

	err = v4 ? softhca_net_ip4(net, ndev, skb, path, segs) :
		   softhca_net_ip6(net, ndev, skb, path);
	if (err) {
		/* As it came: the caller frees or keeps it. */
		__skb_pull(skb, sizeof(*uh));
		return err;
	}
	skb->dev = ndev;
	skb->ip_summed = CHECKSUM_NONE;
	return 0;
}

/**
 * softhca_net_send - hand a prepared skb to the IP layer
 * @sdev: the sending device
 * @skb: from softhca_net_prepare(), its ICRC (or ICRCs) filled; consumed
 *
 * Context: rcu_read_lock() held since softhca_net_prepare().
 * Return: 0; -ENOBUFS when the IP layer dropped it.
 */
int softhca_net_send(struct softhca_dev *sdev, struct sk_buff *skb)
{
	struct net *net = dev_net(sdev->ndev);
	int err;

	if (skb->protocol == htons(ETH_P_IP) || !IS_ENABLED(CONFIG_IPV6))
		err = ip_local_out(net, NULL, skb);
	else
		err = ip6_local_out(net, NULL, skb);
	return net_xmit_eval(err) ? -ENOBUFS : 0;
}

/*
 * Where this CPU's NAPI caches may be used: with BHs off (no softirq can
 * run here and touch them meanwhile), and not in a hard IRQ that may
 * have interrupted a softirq using them.
 */
static bool softhca_net_napi_ok(void)
{
	return in_softirq() && !in_hardirq();
}

#ifdef CONFIG_FAULT_INJECTION
/*
 * fail_skb: the kernel's fault-injection attributes (debugfs
 * softhca/fail_skb, Documentation/fault-injection) over every skb a
 * packet is sent in, so that a test can take the transmit's ways out
 * when none can be had (a batch's fallback to pages, a packet lost and
 * sent again) on a kernel built with fault injection.
 */
static DECLARE_FAULT_ATTR(softhca_fail_skb);
static struct dentry *softhca_debugfs;

static bool softhca_net_skb_fails(unsigned int len)
{
	return should_fail(&softhca_fail_skb, len);
}

static void softhca_net_faults_init(void)
{
	softhca_debugfs = debugfs_create_dir("softhca", NULL);
	/* Without it the attributes stay off: nothing to undo. */
	fault_create_debugfs_attr("fail_skb", softhca_debugfs,
				  &softhca_fail_skb);
}

static void softhca_net_faults_exit(void)
{
	debugfs_remove_recursive(softhca_debugfs);
}
#else
static bool softhca_net_skb_fails(unsigned int len)
{
	return false;
}

static void softhca_net_faults_init(void)
{
}

static void softhca_net_faults_exit(void)
{
}
#endif

/**
 * softhca_net_alloc_skb - an skb for @len bytes of a packet (BTH onwards)
 * @len: the bytes the caller puts
 *
 * SOFTHCA_NET_HEADROOM is reserved in front.  Every sender runs with
 * BHs off (sq.lock, the receive softirq, timers): there the head comes
 * from this CPU's page-fragment cache and the sk_buff from its NAPI
 * cache, which softhca_net_consume() refills where the packets arrive,
 * so a stream of small packets costs no slab allocation and free per
 * packet each way (kmalloc() and the sk_buff cache were a tenth of a
 * 64 B WRITE stream's CPU).  Elsewhere, or for a head over a page, it
 * is a plain alloc_skb().
 *
 * Context: any but hard IRQ; no sleeping.
 * Return: the skb, or NULL (no memory, or fail_skb injected a failure).
 */
struct sk_buff *softhca_net_alloc_skb(unsigned int len)
{
	unsigned int size = SKB_DATA_ALIGN(SOFTHCA_NET_HEADROOM + len) +
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data;

	if (softhca_net_skb_fails(len))
		return NULL;
	if (softhca_net_napi_ok() && size <= PAGE_SIZE) {
		data = napi_alloc_frag(size);
		if (!data)
			return NULL;
		skb = napi_build_skb(data, size);
		if (!skb) {
			skb_free_frag(data);
			return NULL;
		}
	} else {
		skb = alloc_skb(SOFTHCA_NET_HEADROOM + len,
				GFP_ATOMIC | __GFP_NOWARN);
		if (!skb)
			return NULL;
	}
	skb_reserve(skb, SOFTHCA_NET_HEADROOM);
	return skb;
}

/**
 * softhca_net_consume - free a received packet that was taken
 * @skb: the packet; consumed
 *
 * In the receive softirq its sk_buff goes to this CPU's NAPI cache,
 * where softhca_net_alloc_skb() finds it for the next packet sent.
 *
 * Context: any but hard IRQ.
 */
void softhca_net_consume(struct sk_buff *skb)
{
	napi_consume_skb(skb, softhca_net_napi_ok());
}

/**
 * softhca_net_xmit - send one RoCEv2 packet
 * @sdev: the sending device
 * @skb: BTH .. pad, with room for the ICRC behind (skb->len counts it)
 *	and SOFTHCA_NET_HEADROOM in front; consumed
 * @path: addresses and UDP source port
 *
 * Context: any but hard IRQ (the IP output path runs with BHs off).
 * Return: 0 when the packet went to the IP layer (it may still be lost,
 * as any packet may); a negative errno when it could not be routed or
 * the device is off the wire.
 */
int softhca_net_xmit(struct softhca_dev *sdev, struct sk_buff *skb,
		     const struct softhca_path *path)
{
	unsigned int len = skb->len;
	int err;

	rcu_read_lock();
	err = softhca_net_prepare(sdev, skb, path, 1);
	if (err) {
		rcu_read_unlock();
		kfree_skb(skb);
		softhca_count(sdev, SOFTHCA_CNT_TX_DROPS);
		return err;
	}
	softhca_icrc_put(skb);
	err = softhca_net_send(sdev, skb);
	rcu_read_unlock();
	if (err) {
		softhca_count(sdev, SOFTHCA_CNT_TX_DROPS);
		return err;
	}
	softhca_count(sdev, SOFTHCA_CNT_TX_PACKETS);
	softhca_count_add(sdev, SOFTHCA_CNT_TX_BYTES, len);
	return 0;
}

static __net_init int softhca_net_ns_init(struct net *net)
{
	struct softhca_net *sn = net_generic(net, softhca_net_id);

	INIT_LIST_HEAD(&sn->devs);
	return 0;
}

/*
 * The namespace goes: its netdevs are gone already (device pernet ops
 * exit first), but unregistering their softhca devices is queued work
 * that may not have run.  Take them off the wire here, before the
 * namespace's memory can go.
 */
static __net_exit void softhca_net_ns_exit(struct net *net)
{
	struct softhca_net *sn = net_generic(net, softhca_net_id);
	struct softhca_dev *sdev, *tmp;

	mutex_lock(&softhca_net_lock);
	list_for_each_entry_safe(sdev, tmp, &sn->devs, net_node) {
		list_del_rcu(&sdev->net_node);
		RCU_INIT_POINTER(sdev->net, NULL);
	}
	if (sn->users)
		softhca_net_close(sn);
	sn->users = 0;
	mutex_unlock(&softhca_net_lock);
	synchronize_rcu();
}

static struct pernet_operations softhca_net_ops = {
	.init = softhca_net_ns_init,
	.exit = softhca_net_ns_exit,
	.id = &softhca_net_id,
	.size = sizeof(struct softhca_net),
};

int softhca_net_init(void)
{
	int err = register_pernet_subsys(&softhca_net_ops);

	if (!err)
		softhca_net_faults_init();
	return err;
}

void softhca_net_exit(void)
{
	softhca_net_faults_exit();
	unregister_pernet_subsys(&softhca_net_ops);
}
