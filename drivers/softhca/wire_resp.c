// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: connected QPs on the wire, the receiving side.
 *
 * UC.  A packet (ICRC, headers and P_Key already checked, wire.c) is
 * taken only by a UC QP of the number its BTH names, in a state that
 * receives, and only when it comes from the QP's peer: the IP source
 * and destination must be the path's GIDs set at RTR (a UC packet
 * carries no source QP number; rxe checks the same).  Then the
 * sequencing rules (wire_seq.c) decide, per QP under wire.rx_lock:
 * in-order packets of a message go to the responder (resp.c) one by
 * one, as chunks of a message from another host; a PSN gap, an opcode
 * out of sequence or a payload the path MTU does not allow drops the
 * rest of the message, silently, and the next FIRST or ONLY starts
 * afresh.  A receive WQE the lost message had taken stays with the QP
 * and the next SEND fills it from its start (no completion for the lost
 * one), as rxe does.
 *
 * RDMA WRITE: the RETH of the FIRST (or ONLY) packet is checked once,
 * the whole range against the R_Key (the QP's remote-write right, the
 * MR's PD, rights and bounds); the later packets follow it at their
 * offsets and may not write past its length, and the LAST must end it
 * exactly.  The responder checks every packet's range again (resp.c).
 * RC's responder (wire_rc_resp.c) uses the same check.
 *
 * XRC_TGT (wire_rc_resp.c's responder too): it has no PD nor receive
 * queue of its own.  Each request names an XRC SRQ (XRCETH); the R_Keys
 * of a WRITE or READ are checked against that SRQ's PD, when it is an
 * SRQ of the QP's XRC domain (softhca_wire_rkey()), and the responder
 * (resp.c) takes the receive WQE from it and completes on its CQ.
 *
 * Every drop is counted (counters.c): rx_no_qp, rx_qp_not_ready,
 * rx_bad_peer, rx_psn_gaps (a message lost to a gap, counted once),
 * rx_seq_drops (the packets dropped for it, and out-of-sequence or
 * misshapen ones).
 *
 * Context: softirq (net.c's receive).  Lock order: wire.rx_lock, then
 * the responder's (resp.lock, RQ/SRQ, CQ).
 */
#include "counters.h"
#include "wire.h"

bool softhca_wire_can_receive(enum ib_qp_state s)
{
	return s == IB_QPS_RTR || s == IB_QPS_RTS || s == IB_QPS_SQD ||
	       s == IB_QPS_SQE;
}

/**
 * softhca_wire_from_peer - does a packet come from a connected QP's peer?
 * @qp: the QP (rx_lock held)
 * @skb: the packet
 *
 * Its IP source must be the path's destination set at RTR, and its
 * destination our path's source (UC names no source QP; rxe checks the
 * same).  A QP without a path (before RTR) has no peer.
 */
bool softhca_wire_from_peer(const struct softhca_qp *qp,
			    const struct sk_buff *skb)
{
	const struct softhca_wire_qp *w = &qp->wire;
	union ib_gid sgid, dgid;

	softhca_wire_gids(skb, &sgid, &dgid);
	return w->rx_mtu && !memcmp(&sgid, &w->rx_dgid, sizeof(sgid)) &&
	       !memcmp(&dgid, &w->rx_sgid, sizeof(dgid));
}

/**
 * softhca_wire_admit - may a connected QP take a packet now?
 * @sdev: the device (for the counters)
 * @qp: the UC or RC QP its BTH names (rx_lock held)
 * @skb: the packet
 *
 * Only while receiving (RTR, RTS, SQD, SQE; else rx_qp_not_ready) and
 * from the QP's peer (else rx_bad_peer); a refusal is counted here.
 */
bool softhca_wire_admit(struct softhca_dev *sdev, const struct softhca_qp *qp,
			const struct sk_buff *skb)
{
	if (!softhca_wire_can_receive(READ_ONCE(qp->state))) {
		softhca_count(sdev, SOFTHCA_CNT_RX_QP_NOT_READY);
		return false;
	}
	if (!softhca_wire_from_peer(qp, skb)) {
		softhca_count(sdev, SOFTHCA_CNT_RX_BAD_PEER);
		return false;
	}
	return true;
}

/**
 * softhca_wire_rkey - the memory a request's R_Key names, referenced
 * @qp: the receiving QP (rx_lock held)
 * @pkt: the request
 * @rkey: the R_Key
 * @access: the right it needs (IB_ACCESS_REMOTE_*)
 * @va: the first byte
 * @len: the bytes
 *
 * The key must belong to the QP's PD (its SRQ's), or for a request with
 * an XRCETH (an XRC_TGT's) to the PD of the XRC SRQ it names, which
 * must be of the QP's domain.  Return: NULL when it does not.
 */
struct softhca_mr *softhca_wire_rkey(struct softhca_qp *qp,
				     const struct softhca_roce_pkt *pkt,
				     u32 rkey, int access, u64 va, u32 len)
{
	const struct softhca_xrceth *xrceth = softhca_pkt_xrceth(pkt);
	struct ib_pd *pd = qp->srq ? qp->srq->ibsrq.pd : qp->ibqp.pd;
	struct softhca_srq *xsrq = NULL;
	struct softhca_mr *mr;

	if (xrceth) {
		xsrq = softhca_xrc_srq_get(qp, softhca_xrceth_srqn(xrceth));
		if (!xsrq)
			return NULL;
		pd = xsrq->ibsrq.pd;
	}
	mr = softhca_rkey_get(to_sdev(qp->ibqp.device), rkey, pd,
			      qp->ibqp.qp_num, access, va, len);
	/* The SRQ's reference kept its PD alive for the check only. */
	if (xsrq)
		softhca_srq_put(xsrq);
	return mr;
}

/*
 * A WRITE's FIRST: may its RETH's range be written at all?  Checked once
 * for the message, so a message that could only partly land is dropped
 * whole.  The MR found goes to @cache, the packet's one-entry MR cache
 * (empty), where the responder's lookup of the same key for this chunk
 * (softhca_resp_rkey()) finds it: a one-packet WRITE then looks its key
 * up once, not twice.  Not a window's MR: its key is the window's, which
 * is never cached.  Called with rx_lock held.
 */
static bool softhca_wire_reth_ok(struct softhca_qp *qp,
				 const struct softhca_roce_pkt *pkt,
				 const struct softhca_reth *reth,
				 struct softhca_mr **cache)
{
	u32 len = be32_to_cpu(reth->len);
	struct softhca_mr *mr;

	if (!(READ_ONCE(qp->attr.qp_access_flags) & IB_ACCESS_REMOTE_WRITE))
		return false;
	if (!len)
		return true;
	mr = softhca_wire_rkey(qp, pkt, be32_to_cpu(reth->rkey),
			       IB_ACCESS_REMOTE_WRITE, be64_to_cpu(reth->va),
			       len);
	if (!mr)
		return false;
	if (!*cache && !softhca_key_is_mw(be32_to_cpu(reth->rkey)))
		*cache = mr;
	else
		softhca_mr_put(mr);
	return true;
}

/*
 * Where a WRITE packet goes; false when it does not fit the RETH taken
 * at FIRST (the message is then dropped).  @cache: the packet's MR
 * cache (softhca_wire_reth_ok()).  Called with rx_lock held.
 */
static bool softhca_wire_write_pkt(struct softhca_qp *qp,
				   const struct softhca_roce_pkt *pkt,
				   struct softhca_msg *msg,
				   struct softhca_mr **cache)
{
	const struct softhca_reth *reth = softhca_pkt_reth(pkt);
	struct softhca_wire_qp *w = &qp->wire;

	if (pkt->mask & SOFTHCA_H_FIRST) {
		if (!reth || !softhca_wire_reth_ok(qp, pkt, reth, cache))
			return false;
		w->wr_va = be64_to_cpu(reth->va);
		w->wr_rkey = be32_to_cpu(reth->rkey);
		w->wr_len = be32_to_cpu(reth->len);
		w->wr_off = 0;
	}
	if (pkt->paylen > w->wr_len - w->wr_off)
		return false;
	if ((pkt->mask & SOFTHCA_H_LAST) &&
	    w->wr_off + pkt->paylen != w->wr_len)
		return false;
	msg->remote_addr = w->wr_va + w->wr_off;
	msg->rkey = w->wr_rkey;
	msg->total = w->wr_len;
	msg->opcode = softhca_pkt_immdt(pkt) ? IB_UVERBS_WR_RDMA_WRITE_WITH_IMM :
					       IB_UVERBS_WR_RDMA_WRITE;
	w->wr_off += pkt->paylen;
	return true;
}

/* Count what the sequencing rules said; true when the packet is taken. */
static bool softhca_wire_seq_count(struct softhca_dev *sdev,
				   enum softhca_seq_verdict v)
{
	switch (v) {
	case SOFTHCA_SEQ_TAKE:
		return true;
	case SOFTHCA_SEQ_RESYNC:
		/* Whatever came before it was lost. */
		softhca_count(sdev, SOFTHCA_CNT_RX_PSN_GAPS);
		return true;
	case SOFTHCA_SEQ_GAP:
		softhca_count(sdev, SOFTHCA_CNT_RX_PSN_GAPS);
		break;
	default:
		break;
	}
	softhca_count(sdev, SOFTHCA_CNT_RX_SEQ_DROPS);
	return false;
}

/**
 * softhca_wire_deliver - one in-order packet to the responder
 * @sdev: the device it arrived on
 * @qp: its connected QP (rx_lock held)
 * @pkt: the packet
 * @msg: in, zeroed; out, the chunk as delivered, with the responder's
 *	@rnr_timer and @peer_err
 * @ack: out, the responder's answer
 *
 * The packet is a chunk of a message from the QP's peer (the path was
 * checked; UC names no source QP, RC's is the peer's anyway), for an
 * XRC_TGT to the SRQ its XRCETH names.
 * Return: false when an RDMA WRITE packet does not fit the RETH taken at
 * its FIRST (nothing delivered).
 */
bool softhca_wire_deliver(struct softhca_dev *sdev, struct softhca_qp *qp,
			  const struct softhca_roce_pkt *pkt,
			  struct softhca_msg *msg, enum softhca_ack *ack)
{
	const struct softhca_immdt *immdt = softhca_pkt_immdt(pkt);
	const struct softhca_ieth *ieth = softhca_pkt_ieth(pkt);
	const struct softhca_bth *bth = softhca_pkt_bth(pkt);
	struct softhca_dest dest = {
		.qp = qp,
		.sdev = sdev,
		.dev = sdev->ibdev.index + 1,
		.qpn = qp->ibqp.qp_num,
	};
	const struct softhca_xrceth *xrceth = softhca_pkt_xrceth(pkt);
	struct softhca_wire_payload pl;

	msg->src_qpn = READ_ONCE(qp->attr.dest_qp_num);
	msg->src_qpt = softhca_wire_peer_qpt(qp->ibqp.qp_type);
	msg->xrc_srqn = xrceth ? softhca_xrceth_srqn(xrceth) : 0;
	msg->first = pkt->mask & SOFTHCA_H_FIRST;
	msg->last = pkt->mask & SOFTHCA_H_LAST;
	msg->solicited = softhca_bth_se(bth);
	msg->imm = immdt ? (__force u32)immdt->imm : 0;
	msg->len = pkt->paylen;
	if (pkt->mask & SOFTHCA_H_WRITE) {
		if (!softhca_wire_write_pkt(qp, pkt, msg, &dest.mr_cache)) {
			softhca_mr_cache_drop(&dest.mr_cache);
			return false;
		}
	} else if (pkt->mask & SOFTHCA_H_ATOMIC) {
		softhca_wire_atm_msg(pkt, msg);	/* RC only: wire_atomic.c */
	} else if (ieth) {
		/*
		 * SEND with invalidate (RC): its last packet names the rkey
		 * the responder invalidates before completing (resp.c).
		 */
		msg->opcode = IB_UVERBS_WR_SEND_WITH_INV;
		msg->imm = be32_to_cpu(ieth->rkey);
	} else {
		/* The length is known at the end only: the responder counts. */
		msg->opcode = immdt ? IB_UVERBS_WR_SEND_WITH_IMM :
				      IB_UVERBS_WR_SEND;
	}
	softhca_wire_pkt_payload(pkt, &pl);
	msg->data = &pl.cur;
	*ack = softhca_resp_deliver(&dest, msg);
	msg->data = NULL;
	softhca_mr_cache_drop(&dest.mr_cache);
	return true;
}

/*
 * One in-order UC packet to the responder.  Called with rx_lock held.
 * Return: the async event the QP must move to ERR with (0: none), for
 * the caller to act on once it dropped rx_lock.
 */
static int softhca_wire_deliver_uc(struct softhca_dev *sdev,
				   struct softhca_qp *qp,
				   const struct softhca_roce_pkt *pkt)
{
	struct softhca_msg msg = {};
	enum softhca_ack ack;

	if (!softhca_wire_deliver(sdev, qp, pkt, &msg, &ack)) {
		/* The rest of this message goes too. */
		qp->wire.rx.drop = !(pkt->mask & SOFTHCA_H_LAST);
		qp->wire.rx.cur = 0;
		softhca_count(sdev, SOFTHCA_CNT_RX_SEQ_DROPS);
		return 0;
	}
	/*
	 * The responder refused the message (no receive WQE, a short one,
	 * a bad SGE): UC drops it whole, the responder forgot its state.
	 */
	if (!READ_ONCE(qp->resp.busy) && !msg.last &&
	    !(pkt->mask & SOFTHCA_H_WRITE)) {
		qp->wire.rx.drop = true;
		qp->wire.rx.cur = 0;
	}
	return msg.peer_err;
}

/**
 * softhca_wire_rcv_uc - a UC packet arrived for @sdev
 * @sdev: the device bound to the netdev it arrived on (held)
 * @skb: the packet (linear, checked; not consumed)
 * @pkt: its parse
 *
 * Context: softirq.
 */
void softhca_wire_rcv_uc(struct softhca_dev *sdev, struct sk_buff *skb,
			 const struct softhca_roce_pkt *pkt)
{
	u32 psn = softhca_bth_psn(softhca_pkt_bth(pkt));
	struct softhca_wire_qp *w;
	enum softhca_seq_verdict v;
	struct softhca_qp *qp;
	int peer_err = 0;

	qp = softhca_qp_get(sdev, softhca_bth_qpn(softhca_pkt_bth(pkt)));
	if (!qp || qp->ibqp.qp_type != IB_QPT_UC) {
		softhca_count(sdev, SOFTHCA_CNT_RX_NO_QP);
		goto out;
	}
	w = &qp->wire;
	spin_lock(&w->rx_lock);
	if (!softhca_wire_admit(sdev, qp, skb)) {
		spin_unlock(&w->rx_lock);
		goto out;
	}
	v = softhca_seq_rx_step(&w->rx, pkt->mask, psn, pkt->paylen,
				w->rx_mtu);
	if (softhca_wire_seq_count(sdev, v))
		peer_err = softhca_wire_deliver_uc(sdev, qp, pkt);
	spin_unlock(&w->rx_lock);
	/* A broken receive queue: as for UD (wire.c), from here. */
	if (peer_err)
		softhca_qp_error(qp, peer_err);
out:
	if (qp)
		softhca_qp_put(qp);
}
