// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the RoCEv2 transport.
 *
 * The second implementation of struct softhca_transport (engine.h):
 * where the same-host transport hands a message to the responder, this
 * one puts it in RoCEv2 packets (roce_hdr.h) and gives them to the net
 * layer (net.c), and what arrives from the net layer goes to the
 * responder of the QP it names, as a message from a QP elsewhere.
 *
 * UD here: a UD message is one packet (the requester refuses longer
 * ones, req.c); it is sent and forgotten, like on any HCA: a packet the
 * network loses, or that no QP takes, still completes with success at
 * the sender.  A received UD packet must pass the checks of IBA 9.6 and
 * of rxe, the peer we interoperate with: a good ICRC, a valid UD opcode
 * with its DETH, the default P_Key, a UD QP of that number here; the
 * Q_Key is the responder's to check (resp.c).  UC goes to wire_conn.c
 * (sending) and wire_resp.c (receiving); RC to wire_rc.c (sending, and
 * the ACKs and NAKs that come back) and wire_rc_resp.c (receiving).
 * XRC goes to the same two: an XRC_INI sends as an RC requester, an
 * XRC_TGT receives as an RC responder, with XRC's opcodes (the prefix
 * 101b, and the XRCETH naming the target SRQ in every request; wire.h
 * says where the types differ).
 *
 * Context: sending runs under the sending QP's sq.lock with BHs off;
 * receiving runs in softirq (the UDP socket's receive), where the
 * responder's locks are taken as everywhere, with BHs off.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ipv6.h>

#include "counters.h"
#include "wire.h"

/**
 * softhca_wire_xmit - build one packet and send it
 * @sdev: the sending device
 * @f: its header fields (the opcode says which headers it has)
 * @data: where its payload comes from (advanced by @len); NULL if none
 * @len: payload bytes
 * @path: addresses and UDP source port
 *
 * Context: any but hard IRQ; no sleeping (GFP_ATOMIC).
 * Return: 0 when the packet went to the IP layer; a negative errno when
 * it was not sent (counted as a tx drop: to the peer, a lost packet).
 */
int softhca_wire_xmit(struct softhca_dev *sdev,
		      const struct softhca_roce_fields *f,
		      struct softhca_cursor *data, u32 len,
		      const struct softhca_path *path)
{
	u32 hdr_len = softhca_roce_ops[f->opcode].hdr_len;
	u32 pad = -len & 3, plen = hdr_len + len + pad;
	struct sk_buff *skb;
	u8 *p;

	skb = softhca_net_alloc_skb(plen + SOFTHCA_ICRC_LEN);
	if (!skb) {
		if (data)
			softhca_cursor_skip(data, len);
		softhca_count(sdev, SOFTHCA_CNT_TX_DROPS);
		return -ENOMEM;
	}
	p = skb_put(skb, plen + SOFTHCA_ICRC_LEN);
	if (softhca_roce_build(p, hdr_len, f, len) < 0) {
		kfree_skb(skb);
		if (data)
			softhca_cursor_skip(data, len);
		softhca_count(sdev, SOFTHCA_CNT_TX_DROPS);
		return -EINVAL;
	}
	if (len)
		softhca_copy_to_kernel(p + hdr_len, data, len);
	memset(p + hdr_len + len, 0, pad);
	return softhca_net_xmit(sdev, skb, path);
}

/* UD: one packet, sent and forgotten. */
static enum softhca_ack softhca_wire_send_ud(struct softhca_qp *qp,
					     struct softhca_dest *dest,
					     struct softhca_msg *msg)
{
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	struct softhca_roce_fields f = {
		.opcode = msg->opcode == IB_UVERBS_WR_SEND_WITH_IMM ?
			  SOFTHCA_UD(SEND_ONLY_WITH_IMMEDIATE) :
			  SOFTHCA_UD(SEND_ONLY),
		.se = msg->solicited,
		.pkey = SOFTHCA_ROCE_DEF_PKEY,
		.dqpn = dest->qpn,
		.psn = qp->attr.sq_psn + qp->req.wire_sent,
		.qkey = msg->qkey,
		.sqpn = qp->ibqp.qp_num,
		.imm = (__force __be32)msg->imm,
	};
	struct softhca_path path = {
		.sgid = dest->sgid,
		.dgid = dest->dgid,
		.route = &qp->wire.route,
		.sport = softhca_seq_sport(qp->ibqp.qp_num, dest->qpn),
	};

	if (msg->opcode != IB_UVERBS_WR_SEND &&
	    msg->opcode != IB_UVERBS_WR_SEND_WITH_IMM)
		return SOFTHCA_ACK;	/* the WQE check let no other through */
	qp->req.wire_sent++;
	/* Lost or not, a datagram is done once it is sent. */
	softhca_wire_xmit(sdev, &f, msg->data, msg->len, &path);
	return SOFTHCA_ACK;
}

/**
 * softhca_wire_send - the RoCEv2 transport's send
 * @qp: the sending QP
 * @dest: the destination (loopback.c: a UD AH no device here owns)
 * @msg: the message
 *
 * Context: @qp's sq.lock held, BHs off.
 */
enum softhca_ack softhca_wire_send(struct softhca_qp *qp,
				   struct softhca_dest *dest,
				   struct softhca_msg *msg)
{
	enum softhca_ack ack;

	if (softhca_is_ud(qp->ibqp.qp_type))
		return softhca_wire_send_ud(qp, dest, msg);
	if (qp->ibqp.qp_type == IB_QPT_UC)
		ack = softhca_wire_send_uc(qp, dest, msg);
	else	/* RC and XRC_INI (an XRC_TGT has no send queue) */
		ack = softhca_wire_send_rc(qp, dest, msg);
	/* In flight, a train may join the batch: the requester flushes. */
	if (ack != SOFTHCA_PENDING)
		softhca_txb_flush(to_sdev(qp->ibqp.device), &qp->wire.txb);
	return ack;
}

/**
 * softhca_wire_append - the RoCEv2 transport's append (a train)
 * @qp: the sending QP
 * @dest: its peer
 * @msg: a whole message to send behind the chunk in flight
 *
 * RC and XRC_INI only: UC and UD need no answer to go on.
 * Context: @qp's sq.lock held, BHs off.
 */
bool softhca_wire_append(struct softhca_qp *qp, struct softhca_dest *dest,
			 struct softhca_msg *msg)
{
	if (!softhca_qpt_reliable(qp->ibqp.qp_type))
		return false;
	return softhca_wire_rc_append(qp, dest, msg);
}

/**
 * softhca_wire_flush - the RoCEv2 transport's flush
 * @qp: the sending QP, whose chunk (and train) is in flight
 *
 * Context: @qp's sq.lock held, BHs off.
 */
void softhca_wire_flush(struct softhca_qp *qp)
{
	softhca_txb_flush(to_sdev(qp->ibqp.device), &qp->wire.txb);
}

const struct softhca_transport softhca_wire = {
	.send = softhca_wire_send,
	.append = softhca_wire_append,
	.flush = softhca_wire_flush,
	.taken = softhca_wire_rc_taken,
	.slide = softhca_wire_rc_slide,
	.quiet = softhca_wire_rc_quiet,
	.probe = softhca_wire_rc_probe,
	.tail_wait = softhca_wire_tail_wait,
	.tail = softhca_wire_tail,
};

/* The packet's IP addresses as GIDs (IPv4: IPv4-mapped). */
void softhca_wire_gids(const struct sk_buff *skb, union ib_gid *sgid,
		       union ib_gid *dgid)
{
	if (ip_hdr(skb)->version == 4) {
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr,
				       (struct in6_addr *)sgid->raw);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)dgid->raw);
	} else {
		memcpy(sgid->raw, &ipv6_hdr(skb)->saddr, sizeof(sgid->raw));
		memcpy(dgid->raw, &ipv6_hdr(skb)->daddr, sizeof(dgid->raw));
	}
}

/**
 * softhca_wire_payload - bytes of a received skb as a cursor
 * @skb: the packet (no frag list: softhca_wire_rcv() linearizes those)
 * @off: where the bytes start, from skb->data
 * @len: how many (inside the skb)
 * @pl: out, the segments and a cursor at their start
 *
 * Page fragments are read through the kernel's direct map
 * (skb_frag_address()): softhca is built for 64-bit kernels, which have
 * no highmem.
 */
void softhca_wire_payload(const struct sk_buff *skb, u32 off, u32 len,
			  struct softhca_wire_payload *pl)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);
	u32 head = skb_headlen(skb), n = 0, i, take;

	if (off < head) {
		take = min(len, head - off);
		pl->seg[n++] = (struct softhca_seg){
			.addr = (uintptr_t)skb->data + off, .len = take,
		};
		len -= take;
		off = 0;
	} else {
		off -= head;
	}
	for (i = 0; len && i < sh->nr_frags; i++) {
		const skb_frag_t *f = &sh->frags[i];
		u32 size = skb_frag_size(f);

		if (off >= size) {
			off -= size;
			continue;
		}
		take = min(len, size - off);
		pl->seg[n++] = (struct softhca_seg){
			.addr = (uintptr_t)skb_frag_address(f) + off,
			.len = take,
		};
		len -= take;
		off = 0;
	}
	WARN_ON_ONCE(len);	/* the parser kept @len inside the skb */
	softhca_cursor_init(&pl->cur, pl->seg, n);
}

/* The payload of a parsed packet (@pkt->skb's, or its one buffer's). */
void softhca_wire_pkt_payload(const struct softhca_roce_pkt *pkt,
			      struct softhca_wire_payload *pl)
{
	const struct sk_buff *skb = pkt->skb;

	if (!skb) {
		pl->seg[0] = (struct softhca_seg){
			.addr = (uintptr_t)softhca_pkt_payload(pkt),
			.len = pkt->paylen,
		};
		softhca_cursor_init(&pl->cur, pl->seg, 1);
		return;
	}
	/* skb->data at the BTH (softhca_wire_rcv()) */
	softhca_wire_payload(skb, pkt->payload, pkt->paylen, pl);
}

/*
 * A UD datagram from @sgid to @dgid (the packet's addresses) for QP @qpn
 * of @sdev; false: no UD QP by that number.
 */
static bool softhca_wire_ud_to(struct softhca_dev *sdev, u32 qpn,
			       const union ib_gid *sgid,
			       const union ib_gid *dgid,
			       const struct softhca_roce_pkt *pkt)
{
	const struct softhca_deth *deth = softhca_pkt_deth(pkt);
	const struct softhca_immdt *immdt = softhca_pkt_immdt(pkt);
	struct softhca_wire_payload pl;
	struct softhca_dest dest = {};
	struct softhca_msg msg = {};
	struct softhca_qp *qp;

	qp = softhca_qp_get(sdev, qpn);
	if (!qp || !softhca_is_ud(qp->ibqp.qp_type)) {
		if (qp)
			softhca_qp_put(qp);
		return false;
	}
	dest.qp = qp;
	dest.sdev = sdev;
	dest.dev = sdev->ibdev.index + 1;
	dest.qpn = qpn;
	dest.qkey = be32_to_cpu(deth->qkey);
	dest.sgid = *sgid;
	dest.dgid = *dgid;

	softhca_wire_pkt_payload(pkt, &pl);
	msg.src_qpn = softhca_deth_sqp(deth);
	msg.src_qpt = IB_QPT_UD;
	msg.opcode = immdt ? IB_UVERBS_WR_SEND_WITH_IMM : IB_UVERBS_WR_SEND;
	msg.first = true;
	msg.last = true;
	msg.solicited = softhca_bth_se(softhca_pkt_bth(pkt));
	msg.imm = immdt ? (__force u32)immdt->imm : 0;
	msg.qkey = dest.qkey;
	msg.len = pkt->paylen;
	msg.total = pkt->paylen;
	msg.data = &pl.cur;
	softhca_resp_deliver(&dest, &msg);
	softhca_mr_cache_drop(&dest.mr_cache);
	if (msg.peer_err)
		softhca_qp_error(qp, msg.peer_err);
	softhca_qp_put(qp);
	return true;
}

/*
 * A datagram to a multicast group: to every QP of @sdev attached to the
 * packet's destination (mcast.c), each with its own copy.
 */
static void softhca_wire_rcv_mcast(struct softhca_dev *sdev,
				   const union ib_gid *sgid,
				   const union ib_gid *dgid,
				   const struct softhca_roce_pkt *pkt)
{
	u32 qpn[SOFTHCA_MAX_MCAST_QP];
	u32 i, n, got = 0;

	n = softhca_mcast_members(sdev, dgid, qpn, ARRAY_SIZE(qpn));
	for (i = 0; i < n; i++)
		got += softhca_wire_ud_to(sdev, qpn[i], sgid, dgid, pkt);
	if (!got)
		softhca_count(sdev, SOFTHCA_CNT_RX_NO_QP);
}

/* A UD packet (parsed, its ICRC good) for a QP of @sdev or a group. */
static void softhca_wire_rcv_ud(struct softhca_dev *sdev, struct sk_buff *skb,
				const struct softhca_roce_pkt *pkt)
{
	u32 qpn = softhca_bth_qpn(softhca_pkt_bth(pkt));
	union ib_gid sgid, dgid;

	if (!softhca_pkt_deth(pkt) || !(pkt->mask & SOFTHCA_H_ONLY)) {
		softhca_count(sdev, SOFTHCA_CNT_RX_MALFORMED);
		return;
	}
	softhca_wire_gids(skb, &sgid, &dgid);
	if (qpn == SOFTHCA_MCAST_QPN)
		softhca_wire_rcv_mcast(sdev, &sgid, &dgid, pkt);
	else if (!softhca_wire_ud_to(sdev, qpn, &sgid, &dgid, pkt))
		softhca_count(sdev, SOFTHCA_CNT_RX_NO_QP);
}

/*
 * An RC or XRC packet: a request to the responder, an answer (ACKNOWLEDGE,
 * ATOMIC ACKNOWLEDGE, READ RESPONSE) to the completer.  Each takes it
 * only for a QP of its transport (softhca_wire_takes()): RC's for RC,
 * XRC requests for an XRC_TGT, XRC answers for an XRC_INI.
 */
static void softhca_wire_rcv_reliable(struct softhca_dev *sdev,
				      struct sk_buff *skb,
				      const struct softhca_roce_pkt *pkt)
{
	if (pkt->mask & SOFTHCA_H_REQ)
		softhca_wire_rcv_rc(sdev, skb, pkt);
	else if (pkt->mask & SOFTHCA_H_READ)
		softhca_wire_rcv_read_resp(sdev, skb, pkt);
	else
		softhca_wire_rcv_ack(sdev, skb, pkt);
}

/**
 * softhca_wire_rcv - a RoCEv2 packet arrived for @sdev
 * @sdev: the device bound to the netdev it arrived on (held)
 * @skb: the packet, skb->data at its BTH, network and transport headers
 *	set; consumed
 *
 * Context: softirq (net.c).
 */
void softhca_wire_rcv(struct softhca_dev *sdev, struct sk_buff *skb)
{
	enum softhca_counter why = SOFTHCA_CNT_RX_MALFORMED;
	u8 hdrs[SOFTHCA_ROCE_MAX_HDRS];
	struct softhca_roce_pkt pkt;
	const void *h;
	int err;

	/*
	 * The payload is used where it is (page fragments of a batch's
	 * segment are copied from directly); a frag list (not made by
	 * softhca's senders or rxe's) is linearized.  The transport headers
	 * are parsed in place when linear, else from a copy on this stack:
	 * a segment of a received batch has only the IP and UDP headers in
	 * its head, and pulling the BTH into it reallocated the head (a
	 * kmalloc, a copy and a free a packet: 8 % of the poller's time in
	 * a 1 MiB WRITE stream).  So pkt.bth may point at hdrs, valid until
	 * this returns, and the payload's place in the skb is pkt.payload
	 * (skb->data is at the BTH), never pkt.bth - skb->data.
	 */
	if (skb_has_frag_list(skb) && skb_linearize(skb))
		goto drop;
	h = skb_header_pointer(skb, 0, min_t(u32, skb->len, sizeof(hdrs)), hdrs);
	if (!h || softhca_roce_parse(h, skb->len, &pkt))
		goto drop;
	pkt.skb = skb;
	err = softhca_icrc_check_hdrs(skb, pkt.bth);
	if (err) {
		if (err == -EBADMSG)
			why = SOFTHCA_CNT_RX_BAD_ICRC;
		goto drop;
	}
	/* The default partition only (the low 15 bits; either membership). */
	if ((softhca_bth_pkey(softhca_pkt_bth(&pkt)) & 0x7fff) != 0x7fff) {
		why = SOFTHCA_CNT_RX_BAD_PKEY;
		goto drop;
	}
	softhca_count(sdev, SOFTHCA_CNT_RX_PACKETS);
	softhca_count_add(sdev, SOFTHCA_CNT_RX_BYTES, skb->len);
	if ((pkt.opcode & SOFTHCA_TP_MASK) == SOFTHCA_TP_UD)
		softhca_wire_rcv_ud(sdev, skb, &pkt);
	else if ((pkt.opcode & SOFTHCA_TP_MASK) == SOFTHCA_TP_UC)
		softhca_wire_rcv_uc(sdev, skb, &pkt);
	else if (pkt.mask & (SOFTHCA_H_RC | SOFTHCA_H_XRC))
		softhca_wire_rcv_reliable(sdev, skb, &pkt);
	else
		softhca_count(sdev, SOFTHCA_CNT_RX_UNSUPPORTED);
	softhca_net_consume(skb);
	return;
drop:
	softhca_count(sdev, why);
	kfree_skb(skb);
}
