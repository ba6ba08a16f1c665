/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: the net layer of the RoCEv2 transport (net.c).
 *
 * UDP port 4791 is bound once per network namespace, for IPv4 and for
 * IPv6, when the first softhca device on a netdev of that namespace is
 * created; every datagram it receives goes to the device bound to the
 * netdev it arrived on.  Transmission builds the IP and UDP headers of
 * a packet whose RoCE part (BTH .. ICRC) the transport built, in the
 * netdev's namespace, out of that netdev.
 */
#ifndef SOFTHCA_NET_H
#define SOFTHCA_NET_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct softhca_dev;

/* Room a transmitted skb needs in front of its BTH. */
#define SOFTHCA_NET_HEADROOM \
	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + sizeof(struct udphdr))

/**
 * struct softhca_route - the route a QP's packets took last
 * @lock: the fields below; taken with BHs off (every sender's context)
 * @dst: the route, a reference held; NULL: none kept
 * @cookie: the IPv6 route's serial number (its dst check); 0 for IPv4
 * @tclass: the TOS it was looked up for (IPv4 routes depend on it)
 * @sgid: the source it was looked up for
 * @dgid: the destination
 *
 * A connected QP sends every packet to one peer, and looking its route
 * up again per packet (ip_route_output_key(): the FIB, its lookup
 * locks) is what the kernel's tunnels spare themselves with a dst_cache.
 * This one is keyed by the addresses it was looked up for, so any path
 * may use it: another peer's (a UD QP's next datagram, a path changed by
 * modify_qp) replaces it.  A routing change anywhere in the namespace
 * makes it stale (the dst's check), and the next packet looks the route
 * up again.  One entry under a lock, not one per CPU as a dst_cache
 * keeps: a QP is made often (a per-CPU allocation each time) and sends
 * from one or two CPUs at once (its requester, its responder's answers).
 */
struct softhca_route {
	spinlock_t lock;	/* see above */
	struct dst_entry *dst;
	u32 cookie;
	u8 tclass;
	union ib_gid sgid;
	union ib_gid dgid;
};

void softhca_route_init(struct softhca_route *r);
void softhca_route_destroy(struct softhca_route *r);

/**
 * struct softhca_path - the network ends of a packet
 * @sgid: our GID (a RoCEv2 GID of the device: IPv4-mapped or IPv6)
 * @dgid: the peer's GID
 * @route: where the route is kept between packets (the sending QP's);
 *	NULL: looked up for this packet only
 * @sport: the UDP source port (RoCEv2: 0xC000 | a flow hash; receivers
 *	ignore it, switches spread flows by it)
 * @tclass: IPv4 TOS / IPv6 traffic class
 * @hop_limit: TTL / hop limit (0: 64)
 */
struct softhca_path {
	union ib_gid sgid;
	union ib_gid dgid;
	struct softhca_route *route;
	__be16 sport;
	u8 tclass;
	u8 hop_limit;
};

int softhca_net_init(void);
void softhca_net_exit(void);
int softhca_net_attach(struct softhca_dev *sdev);
void softhca_net_detach(struct softhca_dev *sdev);
bool softhca_net_attached(struct softhca_dev *sdev);
struct sk_buff *softhca_net_alloc_skb(unsigned int len);
void softhca_net_consume(struct sk_buff *skb);
int softhca_net_xmit(struct softhca_dev *sdev, struct sk_buff *skb,
		     const struct softhca_path *path);
int softhca_net_prepare(struct softhca_dev *sdev, struct sk_buff *skb,
			const struct softhca_path *path, u16 segs);
int softhca_net_send(struct softhca_dev *sdev, struct sk_buff *skb);

/*
 * A transmit batch (net_batch.c): packets to one peer written back to
 * back into pages, or each into an skb of its own (a frag list), sent
 * as one UDP GSO skb.  At most SOFTHCA_TXB_BYTES:
 * an IPv4 datagram's 16-bit length holds it with the headers.
 */
#define SOFTHCA_TXB_BYTES	(60 * 1024)
/* One more: a batch starts where the last one ended in its last page. */
#define SOFTHCA_TXB_PAGES	(DIV_ROUND_UP(SOFTHCA_TXB_BYTES, PAGE_SIZE) + 1)

/**
 * struct softhca_txb - packets waiting to leave together
 * @pages: where they are written, a reference held on each; NULL past
 *	the last one allocated
 * @path: their peer (every packet of a batch has the same)
 * @start: where the first packet begins in @pages[0] (the rest of the
 *	last batch's last page: the page is shared with the skb that
 *	carries that batch, which reads only what lies before @start)
 * @len: where the last packet ends, counted from @pages[0]'s first byte
 * @seg: the length of every packet but the last (the GSO size)
 * @last: the last packet's length (less than @seg: nothing may follow)
 * @n: packets written
 * @bytes: their bytes
 * @skbs: the packets of a batch written into skbs, chained by ->next
 *	(NULL: the batch is in @pages)
 * @skbs_tail: the last of them
 * @ask: the last packet must ask for an answer (softhca_txb_ask())
 */
struct softhca_txb {
	struct page *pages[SOFTHCA_TXB_PAGES];
	struct softhca_path path;
	struct sk_buff *skbs;
	struct sk_buff *skbs_tail;
	u32 bytes;
	u32 start;
	u32 len;
	u32 seg;
	u32 last;
	u16 n;
	bool ask;
};

struct softhca_roce_fields;
struct softhca_cursor;

int softhca_txb_add(struct softhca_dev *sdev, struct softhca_txb *b,
		    const struct softhca_roce_fields *f,
		    struct softhca_cursor *data, u32 len,
		    const struct softhca_path *path);
void softhca_txb_ask(struct softhca_txb *b);
void softhca_txb_flush(struct softhca_dev *sdev, struct softhca_txb *b);
void softhca_txb_release(struct softhca_txb *b);

/* wire.c: a RoCEv2 packet arrived (skb->data at its BTH); consumes @skb */
void softhca_wire_rcv(struct softhca_dev *sdev, struct sk_buff *skb);

#endif /* SOFTHCA_NET_H */
