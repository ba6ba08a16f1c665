// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the transmit batch, a run of RoCEv2 packets as one UDP GSO skb.
 *
 * Each packet costs the IP stack about the same whatever its size: a
 * route lookup, the output hooks, the qdisc, the driver (across a veth,
 * the peer's backlog and its whole receive path).  A requester sends
 * runs of packets to one peer (the path-MTU packets of a chunk, a train
 * of small messages, req_train.c), a responder the packets of a READ
 * response.  They are written as they come (softhca_txb_add()) and
 * leave as one skb (softhca_txb_flush()) that the stack cuts into
 * packets at the last moment: in software before a netdev that cannot
 * (validate_xmit_skb()), in a NIC that can (UDP segmentation offload),
 * or, across a veth, in the receiving UDP socket (udp_rcv_segment():
 * softhca's and rdma_rxe's tunnel sockets take no GSO skb), so each
 * receiver sees ordinary packets.
 *
 * Two shapes, by the netdev, chosen when a batch's first packet is
 * written.  Page fragments: the packets are written back to back into
 * pages, which go with the skb and reach the netdev uncopied; the shape
 * for a NIC that cuts UDP GSO itself (UDP segmentation offload:
 * NETIF_F_GSO_UDP_L4 and no NETIF_F_GSO_FRAGLIST).  A frag list, the
 * shape UDP GRO builds (SKB_GSO_FRAGLIST), for every other netdev: each
 * packet is written into an skb of its own, the first one the head,
 * each other one on the head's frag list with its own IP and UDP
 * headers.  A software netdev (a veth, a bridge) hands it on whole and
 * the receiving socket cuts it (skb_segment_list()) by unlinking those
 * skbs and copying a MAC header into each; a netdev that segments
 * nothing cuts it the same way before it.  Page fragments cut there
 * (skb_segment()) cost an skb and a header copy a packet, and a
 * receiver reading packets across pages: across a veth the frag lists
 * carried 13-27 % more WRITEs of 256 B to 4 KiB and 7-21 % more 1 MiB
 * WRITE and READ bandwidth, even copied once more from pages into their
 * skbs as they were at first (Documentation/performance.rst).  A packet
 * whose skb cannot be had ends the frag list and starts a batch in
 * pages.
 *
 * UDP GSO (SKB_GSO_UDP_L4) cuts the payload into gso_size pieces and
 * gives each its own UDP and IP header.  So a batch holds packets of
 * one length, the last one as long or shorter, each a whole RoCEv2
 * packet (BTH .. ICRC).  The ICRC covers the IP and UDP headers of its
 * own segment: its IPv4 total length and ID, its UDP length.  The
 * lengths follow from the packet's, and segmentation numbers the IPv4
 * IDs on from the header's (inet_gso_segment(), as TSO does; net.c
 * reserves as many), so the flush fills each packet's ICRC for the
 * headers it will have.  A NIC whose UDP segmentation numbered the IDs
 * otherwise would break every ICRC but the first: tx_batch=1 sends each
 * packet alone.
 *
 * The UDP checksum: GSO needs CHECKSUM_PARTIAL (the pseudo-header's sum
 * in the header, completed per segment by the NIC or the stack, or
 * trusted as it is across a veth); a lone packet keeps RoCEv2's 0
 * (net.c).  The ICRC counts the field as all ones either way.
 *
 * Memory: a batch in pages is written into whole pages, which go with
 * its skb; what is left of the last page starts the next batch (the
 * page then held by both: the skb reads only its own part), since the
 * kernel may zero every page it hands out (init_on_alloc) and a run of
 * small messages would pay a page each.  A batch in pages of one packet
 * is copied into a linear skb, as before batches existed, and the next
 * batch is written where it was: a lone packet costs no page, and its
 * receiver need not linearize it (one written into an skb leaves in
 * it).  The skbs of frag lists and lone packets come from per-CPU
 * caches (softhca_net_alloc_skb()).
 *
 * Order: a requester's batch lives in its QP (qp->wire.txb) under
 * sq.lock, and is flushed before sq.lock is let go (the transport's
 * flush, req.c); its READ and atomic requests go alone, and only while
 * the batch is empty, so a QP's packets leave in PSN order.  A
 * responder's batch lives on its stack for one READ's responses.
 *
 * AckReq: a train sets AckReq on the last packet of each message that
 * wants an answer (not a quiet one, wire_rc.c); a batch moves it to its
 * last packet (a READ's responses carry none), so the responder answers
 * the run once, with the PSN of the last, which acknowledges all before
 * it.  A packet lost in between is NAKed for its sequence whatever
 * AckReq says.
 */
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/udp.h>

#include "softhca.h"
#include "counters.h"
#include "engine.h"
#include "net.h"
#include "roce_hdr.h"

/* Room left in a page worth starting the next batch in. */
#define SOFTHCA_TXB_REUSE	256

/* Byte @off of the pages, and how many follow it in its page. */
static u8 *softhca_txb_at(struct page *const *pages, u32 off, u32 *room)
{
	*room = PAGE_SIZE - offset_in_page(off);
	return (u8 *)page_address(pages[off >> PAGE_SHIFT]) +
	       offset_in_page(off);
}

/* Copy @len bytes at @off out of (@in) or into the pages. */
static void softhca_txb_bytes(struct page *const *pages, u32 off, void *buf,
			      u32 len, bool in)
{
	u32 room, n;
	u8 *p;

	while (len) {
		p = softhca_txb_at(pages, off, &room);
		n = min(len, room);
		if (in)
			memcpy(buf, p, n);
		else
			memcpy(p, buf, n);
		buf += n;
		off += n;
		len -= n;
	}
}

/* Go on with @crc over @len bytes at @off. */
static u32 softhca_txb_crc(struct page *const *pages, u32 off, u32 len,
			   u32 crc)
{
	u32 room, n;
	u8 *p;

	while (len) {
		p = softhca_txb_at(pages, off, &room);
		n = min(len, room);
		crc = softhca_icrc_update(crc, p, n);
		off += n;
		len -= n;
	}
	return crc;
}

/* Field by field: the struct has padding. */
static bool softhca_path_same(const struct softhca_path *a,
			      const struct softhca_path *b)
{
	return !memcmp(&a->sgid, &b->sgid, sizeof(a->sgid)) &&
	       !memcmp(&a->dgid, &b->dgid, sizeof(a->dgid)) &&
	       a->route == b->route && a->sport == b->sport &&
	       a->tclass == b->tclass && a->hop_limit == b->hop_limit;
}

/* Pages for @len more bytes.  Return: 0; -ENOMEM. */
static int softhca_txb_room(struct softhca_txb *b, u32 len)
{
	u32 i, end = (b->len + len - 1) >> PAGE_SHIFT;

	for (i = b->len >> PAGE_SHIFT; i <= end; i++) {
		if (b->pages[i])
			continue;
		b->pages[i] = alloc_page(GFP_ATOMIC | __GFP_NOWARN);
		if (!b->pages[i])
			return -ENOMEM;
	}
	return 0;
}

/* Append @len bytes of @src at the batch's end. */
static void softhca_txb_put(struct softhca_txb *b, void *src, u32 len)
{
	softhca_txb_bytes(b->pages, b->len, src, len, false);
	b->len += len;
}

/* Append @len bytes of payload from @data (which advances). */
static void softhca_txb_copy(struct softhca_txb *b,
			     struct softhca_cursor *data, u32 len)
{
	u32 room, n;
	u8 *p;

	while (len) {
		p = softhca_txb_at(b->pages, b->len, &room);
		n = min(len, room);
		softhca_copy_to_kernel(p, data, n);
		b->len += n;
		len -= n;
	}
}

/*
 * The shape of a batch of several packets (see the top of this file):
 * page fragments for a netdev that cuts UDP GSO itself and takes no
 * frag list, a frag list for any other.
 */
static bool softhca_txb_listed(const struct softhca_dev *sdev)
{
	netdev_features_t f = READ_ONCE(sdev->ndev->features);

	return !(f & NETIF_F_GSO_UDP_L4) || (f & NETIF_F_GSO_FRAGLIST);
}

/*
 * A packet of a frag-list batch, written straight into its own skb
 * (@plen bytes: the headers, @len of payload from @data, the pad and the
 * ICRC's place, which the flush fills), chained behind the batch's last.
 */
static void softhca_txb_put_skb(struct softhca_txb *b, struct sk_buff *skb,
				const u8 *hdr, u32 hdr_len,
				struct softhca_cursor *data, u32 len, u32 plen)
{
	skb_put_data(skb, hdr, hdr_len);
	if (len)
		softhca_copy_to_kernel(skb_put(skb, len), data, len);
	skb_put_zero(skb, plen - hdr_len - len);
	if (b->skbs)
		b->skbs_tail->next = skb;
	else
		b->skbs = skb;
	b->skbs_tail = skb;
}

/**
 * softhca_txb_add - write one packet into a batch
 * @sdev: the sending device
 * @b: the batch; flushed first when the packet cannot join it (another
 *	length or peer, no room), flushed after when it is full
 * @f: the packet's header fields
 * @data: its payload (advances by @len, sent or not); NULL if @len is 0
 * @len: payload bytes
 * @path: its peer
 *
 * Context: any but hard IRQ; no sleeping.  The caller serialises @b.
 * Return: 0; a negative errno when the packet was not written (counted
 * as a tx drop: to the peer, a lost packet).
 */
int softhca_txb_add(struct softhca_dev *sdev, struct softhca_txb *b,
		    const struct softhca_roce_fields *f,
		    struct softhca_cursor *data, u32 len,
		    const struct softhca_path *path)
{
	u32 max = READ_ONCE(softhca_engine.tx_batch);
	u8 hdr[SOFTHCA_ROCE_MAX_HDRS], zero[3 + SOFTHCA_ICRC_LEN] = {};
	struct sk_buff *skb = NULL;
	u32 plen;
	int hdr_len, err;

	hdr_len = softhca_roce_build(hdr, sizeof(hdr), f, len);
	if (hdr_len < 0) {
		err = hdr_len;
		goto drop;
	}
	plen = hdr_len + len + (-len & 3) + SOFTHCA_ICRC_LEN;
	if (b->n && (b->last != b->seg || plen > b->seg ||
		     b->bytes + plen > SOFTHCA_TXB_BYTES ||
		     !softhca_path_same(&b->path, path)))
		softhca_txb_flush(sdev, b);
	if (b->n ? !!b->skbs : softhca_txb_listed(sdev)) {
		skb = softhca_net_alloc_skb(plen);
		/* None to be had: this packet starts a batch in pages. */
		if (!skb && b->n)
			softhca_txb_flush(sdev, b);
	}
	if (!skb) {
		err = softhca_txb_room(b, plen);
		if (err)
			goto drop;
	}
	if (!b->n) {
		b->path = *path;
		b->seg = plen;
	}
	if (skb) {
		softhca_txb_put_skb(b, skb, hdr, hdr_len, data, len, plen);
	} else {
		softhca_txb_put(b, hdr, hdr_len);
		if (len)
			softhca_txb_copy(b, data, len);
		/* The pad, and the ICRC's place: the flush fills it. */
		softhca_txb_put(b, zero, plen - hdr_len - len);
	}
	b->bytes += plen;
	b->last = plen;
	b->n++;
	if (b->n >= max)
		softhca_txb_flush(sdev, b);
	return 0;

drop:
	if (data)
		softhca_cursor_skip(data, len);
	softhca_count(sdev, SOFTHCA_CNT_TX_DROPS);
	return err;
}

/*
 * Each packet's ICRC, for the IP and UDP headers its segment will have:
 * the skb's with the segment's lengths and (IPv4) its ID.  The packets
 * are in @pages, or (@pages NULL) in @skb and the skbs on its frag list.
 */
static void softhca_txb_icrcs(const struct softhca_txb *b,
			      struct page *const *pages, struct sk_buff *skb)
{
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} ip;
	struct udphdr uh = *udp_hdr(skb);
	bool v4 = ip_hdr(skb)->version == 4;
	u8 bth[SOFTHCA_BTH_LEN];
	struct sk_buff *nskb = skb_shinfo(skb)->frag_list;
	u32 i, off = b->start, plen, crc;
	__le32 icrc;
	u16 id = 0;
	u8 *p;

	if (v4) {
		ip.v4 = *ip_hdr(skb);
		id = ntohs(ip.v4.id);
	} else {
		ip.v6 = *ipv6_hdr(skb);
	}
	for (i = 0; i < b->n; i++, off += plen) {
		plen = i == b->n - 1 ? b->last : b->seg;
		uh.len = htons(sizeof(uh) + plen);
		if (v4) {
			ip.v4.tot_len = htons(sizeof(ip.v4) + sizeof(uh) + plen);
			ip.v4.id = htons(id + i);
		} else {
			ip.v6.payload_len = uh.len;
		}
		if (!pages) {
			p = i ? nskb->data :
				skb_transport_header(skb) + sizeof(uh);
			if (i)
				nskb = nskb->next;
			crc = softhca_icrc_hdrs(&ip, &uh, p, SOFTHCA_BTH_LEN);
			crc = softhca_icrc_update(crc, p + SOFTHCA_BTH_LEN,
						  plen - SOFTHCA_BTH_LEN -
						  SOFTHCA_ICRC_LEN);
			icrc = softhca_icrc_finish(crc);
			memcpy(p + plen - SOFTHCA_ICRC_LEN, &icrc, sizeof(icrc));
			continue;
		}
		softhca_txb_bytes(pages, off, bth, sizeof(bth), true);
		crc = softhca_icrc_hdrs(&ip, &uh, bth, sizeof(bth));
		crc = softhca_txb_crc(pages, off + sizeof(bth),
				      plen - sizeof(bth) - SOFTHCA_ICRC_LEN, crc);
		icrc = softhca_icrc_finish(crc);
		softhca_txb_bytes(pages, off + plen - SOFTHCA_ICRC_LEN, &icrc,
				  sizeof(icrc), false);
	}
}

/*
 * AckReq on the last packet when any packet of the batch asked (or the
 * batch was asked to, softhca_txb_ask()), on none before it: the answer
 * to the last covers them all.  Before the ICRCs, which cover the bit.
 */
static void softhca_txb_ackreq(struct softhca_txb *b)
{
	u32 i, off = b->start + offsetof(struct softhca_bth, apsn), room;
	struct sk_buff *skb = b->skbs;
	bool ask = b->ask;
	u8 *p;

	b->ask = false;
	for (i = 0; i < b->n; i++, off += b->seg) {
		if (skb) {
			p = skb->data + offsetof(struct softhca_bth, apsn);
			skb = skb->next;
		} else {
			p = softhca_txb_at(b->pages, off, &room);
		}
		ask |= *p & (SOFTHCA_BTH_ACKREQ >> 24);
		if (i + 1 < b->n)
			*p &= ~(SOFTHCA_BTH_ACKREQ >> 24);
		else if (ask)
			*p |= SOFTHCA_BTH_ACKREQ >> 24;
	}
}

/**
 * softhca_txb_ask - the batch's last packet must ask for an answer
 * @b: a batch holding packets (RC requests)
 *
 * Context: as softhca_txb_add().
 */
void softhca_txb_ask(struct softhca_txb *b)
{
	b->ask = true;
}

/*
 * The UDP checksum's seed for a datagram of @len bytes from the UDP
 * header on: the pseudo-header's sum, which the NIC or the stack
 * completes (CHECKSUM_PARTIAL).
 */
static void softhca_txb_udp_seed(struct sk_buff *skb, unsigned int len)
{
	if (ip_hdr(skb)->version == 4)
		udp_hdr(skb)->check = ~udp_v4_check(len, ip_hdr(skb)->saddr,
						    ip_hdr(skb)->daddr, 0);
	else
		udp_hdr(skb)->check = ~udp_v6_check(len, &ipv6_hdr(skb)->saddr,
						    &ipv6_hdr(skb)->daddr, 0);
}

/* The segmentation's part: its size and count, the UDP checksum's start. */
static void softhca_txb_gso(const struct softhca_txb *b, struct sk_buff *skb)
{
	struct udphdr *uh = udp_hdr(skb);
	unsigned int len = ntohs(uh->len);

	skb_shinfo(skb)->gso_size = b->seg;
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4;
	if (skb_has_frag_list(skb)) {
		/*
		 * Cutting a frag list changes no UDP checksum: the head's
		 * is its own packet's, as each one behind it is
		 * (softhca_txb_list_one()).
		 */
		skb_shinfo(skb)->gso_type |= SKB_GSO_FRAGLIST;
		len = sizeof(*uh) + b->seg;
	}
	skb_shinfo(skb)->gso_segs = b->n;
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct udphdr, check);
	softhca_txb_udp_seed(skb, len);
}

/*
 * A batch of one packet leaves as before batches existed: copied into a
 * linear skb (a receiver then need not linearize it), and the batch
 * writes the next packet where this one was.
 */
static void softhca_txb_flush_one(struct softhca_dev *sdev,
				  struct softhca_txb *b)
{
	u32 bytes = b->bytes;
	struct sk_buff *skb;

	b->n = 0;
	b->bytes = 0;
	b->len = b->start;
	skb = softhca_net_alloc_skb(bytes);
	if (!skb) {
		softhca_count(sdev, SOFTHCA_CNT_TX_DROPS);
		return;
	}
	softhca_txb_bytes(b->pages, b->start, skb_put(skb, bytes), bytes, true);
	softhca_net_xmit(sdev, skb, &b->path);
}

/*
 * A packet of a frag-list batch behind the head: in front of its bytes,
 * the head's IP and UDP headers with its own lengths (the IPv4
 * ID and header checksum are segmentation's, inet_gso_segment(); the
 * ICRC assumed them).  skb->data stays at the BTH, as GRO leaves the
 * skbs of a frag list: the head's lengths count only what lies there.
 */
static void softhca_txb_list_one(const struct sk_buff *head,
				 struct sk_buff *nskb)
{
	int nhlen = skb_transport_offset(head) + sizeof(struct udphdr);
	u32 ulen = sizeof(struct udphdr) + nskb->len;
	struct udphdr *uh;

	memcpy(nskb->data - nhlen, skb_network_header(head), nhlen);
	skb_set_network_header(nskb, -nhlen);
	skb_set_transport_header(nskb, -(int)sizeof(*uh));
	uh = udp_hdr(nskb);
	uh->len = htons(ulen);
	if (ip_hdr(nskb)->version == 4)
		ip_hdr(nskb)->tot_len = htons(nhlen + nskb->len);
	else
		ipv6_hdr(nskb)->payload_len = uh->len;
	/* Its own seed, as the head's (softhca_txb_gso()). */
	softhca_txb_udp_seed(nskb, ulen);
}

/*
 * Send @skb, which holds the batch's packets: in page fragments from
 * @pages, or (@pages NULL) as a frag list.  Consumes @skb.
 * Return: 0, or a negative errno (nothing sent).
 */
static int softhca_txb_send(struct softhca_dev *sdev,
			    const struct softhca_txb *b,
			    struct page *const *pages, struct sk_buff *skb)
{
	struct sk_buff *nskb;
	int err;

	rcu_read_lock();
	err = softhca_net_prepare(sdev, skb, &b->path, b->n);
	if (err) {
		rcu_read_unlock();
		kfree_skb(skb);
		return err;
	}
	softhca_txb_icrcs(b, pages, skb);
	skb_walk_frags(skb, nskb)
		softhca_txb_list_one(skb, nskb);
	softhca_txb_gso(b, skb);
	err = softhca_net_send(sdev, skb);
	rcu_read_unlock();
	return err;
}

/*
 * A batch written into skbs: alone, or as a frag list.  The batch's
 * pages are left as they were for the next batch.  Return: 0, or a
 * negative errno (nothing sent).
 */
static int softhca_txb_flush_list(struct softhca_dev *sdev,
				  struct softhca_txb *b)
{
	struct sk_buff *skb = b->skbs, *nskb;

	b->skbs = NULL;
	b->skbs_tail = NULL;
	if (!skb->next)
		return softhca_net_xmit(sdev, skb, &b->path);
	skb_shinfo(skb)->frag_list = skb->next;
	skb->next = NULL;
	skb_walk_frags(skb, nskb) {
		skb->len += nskb->len;
		skb->data_len += nskb->len;
		skb->truesize += nskb->truesize;
	}
	return softhca_txb_send(sdev, b, NULL, skb);
}

/**
 * softhca_txb_flush - send what a batch holds
 * @sdev: the sending device
 * @b: the batch; empty after
 *
 * Context: as softhca_txb_add().
 */
void softhca_txb_flush(struct softhca_dev *sdev, struct softhca_txb *b)
{
	u32 npages = DIV_ROUND_UP(b->len, PAGE_SIZE), n = b->n, i, off, size;
	u32 bytes = b->bytes, end = offset_in_page(b->len);
	struct page *pages[SOFTHCA_TXB_PAGES];
	struct sk_buff *skb;
	int err = -ENOMEM;

	if (!n)
		return;
	softhca_txb_ackreq(b);
	if (b->skbs) {
		err = softhca_txb_flush_list(sdev, b);
		b->n = 0;
		b->bytes = 0;
		/* A lone packet: counted by softhca_net_xmit(). */
		if (n == 1)
			return;
		if (!err)
			softhca_count(sdev, SOFTHCA_CNT_TX_GSO_LISTS);
		end = b->start;	/* the pages hold nothing of this batch */
		goto out;
	}
	if (n == 1) {
		softhca_txb_flush_one(sdev, b);
		return;
	}
	/* Page fragments: the pages go with the skb; any beyond stay. */
	memcpy(pages, b->pages, npages * sizeof(pages[0]));
	memset(b->pages, 0, npages * sizeof(pages[0]));

	skb = softhca_net_alloc_skb(0);
	if (!skb) {
		for (i = 0; i < npages; i++)
			put_page(pages[i]);
		end = 0;
		goto out;
	}
	for (i = 0, off = b->start; i < npages; i++, off = 0) {
		size = min_t(u32, PAGE_SIZE, b->len - i * PAGE_SIZE) - off;
		skb_fill_page_desc(skb, i, pages[i], off, size);
	}
	skb->len += bytes;
	skb->data_len += bytes;
	skb->truesize += npages * PAGE_SIZE;
	/*
	 * The next batch starts in what is left of the last page: a lone
	 * small packet then costs no page of its own (the kernel may zero
	 * every page it hands out, init_on_alloc).
	 */
	if (end && PAGE_SIZE - end >= SOFTHCA_TXB_REUSE) {
		get_page(pages[npages - 1]);
		b->pages[0] = pages[npages - 1];
	} else {
		end = 0;
	}

	err = softhca_txb_send(sdev, b, pages, skb);
out:
	b->n = 0;
	b->bytes = 0;
	b->start = end;
	b->len = end;
	if (err) {
		softhca_count_add(sdev, SOFTHCA_CNT_TX_DROPS, n);
		return;
	}
	softhca_count_add(sdev, SOFTHCA_CNT_TX_PACKETS, n);
	softhca_count_add(sdev, SOFTHCA_CNT_TX_BYTES, bytes);
	softhca_count(sdev, SOFTHCA_CNT_TX_GSO);
}

/* Let go of what an idle batch keeps (a QP's, when the QP goes). */
void softhca_txb_release(struct softhca_txb *b)
{
	u32 i;

	WARN_ON_ONCE(b->n);
	kfree_skb_list(b->skbs);
	b->skbs = NULL;
	b->skbs_tail = NULL;
	b->bytes = 0;
	for (i = 0; i < SOFTHCA_TXB_PAGES; i++) {
		if (b->pages[i])
			put_page(b->pages[i]);
		b->pages[i] = NULL;
	}
	b->n = 0;
	b->start = 0;
	b->len = 0;
}
