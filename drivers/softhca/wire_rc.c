// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: RC on the wire, the requester and its completer.
 *
 * Stop-and-wait per chunk.  The requester (req.c) runs one WQE at a time
 * in chunks; on the wire a chunk is a whole number of path-MTU packets
 * (softhca_seq_chunk()) sent with consecutive PSNs, AckReq on the last.
 * The transport then answers SOFTHCA_PENDING and keeps the chunk's PSN
 * range [ack_first, ack_next) in qp->wire; the requester waits, at most
 * the local ACK timeout.
 *
 * The completer runs in softirq when an ACKNOWLEDGE arrives: it checks
 * the AETH against the range in flight (softhca_rc_answer(): an answer
 * outside it is stale and ignored), records the answer under ack_lock
 * and kicks the engine.  The requester's next visit calls send again for
 * the same chunk and gets the recorded answer as if the send had
 * returned it: ACK (the chunk is done), RNR (wait the responder's timer,
 * then the chunk goes again from its first PSN), a NAK that ends the WQE
 * in error.  With no answer when the timer ran out, or a PSN sequence
 * NAK, it says SOFTHCA_RESEND: the chunk goes again with the same PSNs
 * from the first one the responder is not known to have taken (a NAK's
 * PSN, a partial ACK: go-back-N), a retry of retry_cnt unless that
 * made progress.  Nothing known taken: from the chunk's start (the
 * responder ACKs again what it already has).
 *
 * The first answer to a transmission wins, but an ACK of the whole chunk
 * replaces a sequence NAK (a NAK from an earlier round that crossed the
 * packets sent again).
 *
 * Counters: tx_retransmits (packets sent again), ack_timeouts, rx_acks,
 * rx_naks_rnr, rx_naks_seq, rx_naks_other, rx_stale_acks.
 *
 * Context: sending under sq.lock with BHs off; the completer in softirq.
 * Lock order: sq.lock, then ack_lock; the completer takes rx_lock (to
 * check the peer) and ack_lock one after the other, never nested.
 */
#include "counters.h"
#include "wire.h"

/*
 * RC's attributes changed (the path is set by wire_conn.c): RESET forgets
 * the chunk in flight and its answer, a new SQ PSN starts from scratch.
 * Context: process (modify_qp).
 */
void softhca_wire_rc_modify(struct softhca_qp *qp,
			    const struct ib_qp_attr *attr, int mask,
			    bool reset)
{
	struct softhca_wire_qp *w = &qp->wire;

	if (!reset && !(mask & IB_QP_SQ_PSN))
		return;
	spin_lock_bh(&qp->sq.lock);
	spin_lock(&w->ack_lock);
	w->ack_inflight = false;
	WRITE_ONCE(w->ack_ready, false);
	w->resend = false;
	spin_unlock(&w->ack_lock);
	qp->req.wire_chunk = 0;
	spin_unlock_bh(&qp->sq.lock);
}

/*
 * The answer recorded for the chunk in flight, or SOFTHCA_RESEND when
 * none came (the wait is over: the requester asks only then).  The chunk
 * is no longer in flight either way.  Called with ack_lock held.
 */
static enum softhca_ack softhca_wire_rc_take(struct softhca_qp *qp,
					     struct softhca_msg *msg)
{
	struct softhca_wire_qp *w = &qp->wire;
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	enum softhca_ack ack = SOFTHCA_RESEND;
	u32 acked = 0;

	if (w->ack_ready) {
		ack = w->ack_answer;
		msg->rnr_timer = w->ack_rnr;
	} else {
		softhca_count(sdev, SOFTHCA_CNT_ACK_TIMEOUTS);
	}
	w->ack_inflight = false;
	WRITE_ONCE(w->ack_ready, false);
	if (ack == SOFTHCA_RESEND || ack == SOFTHCA_RNR) {
		/* Whole packets before the last: never the whole chunk. */
		if ((u64)w->ack_pkts * w->mtu < msg->len)
			acked = w->ack_pkts;
		msg->acked = acked * w->mtu;
		w->resend = true;
	}
	/* What comes next starts where the responder stands. */
	if (ack != SOFTHCA_ACK)
		w->sq_psn = softhca_psn_add(w->ack_first, acked);
	return ack;
}

/**
 * softhca_wire_send_rc - an RC chunk: send it, or hand over its answer
 * @qp: the sending QP
 * @dest: its peer (the wire: @dest->qpn only)
 * @msg: the chunk (the same chunk until it is answered, req.c)
 *
 * Context: @qp's sq.lock held, BHs off.
 * Return: SOFTHCA_PENDING once sent; the answer (or SOFTHCA_RESEND) on
 * the visit after.
 */
enum softhca_ack softhca_wire_send_rc(struct softhca_qp *qp,
				      struct softhca_dest *dest,
				      struct softhca_msg *msg)
{
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	struct softhca_wire_qp *w = &qp->wire;
	enum softhca_ack ack;
	u32 npkts;

	if (!w->mtu)
		return SOFTHCA_NO_PEER;	/* no path: RTR sets one */
	/* READ and atomics have no packets here yet. */
	if (softhca_seq_opcode(SOFTHCA_TP_RC, msg->opcode, true, true) < 0)
		return SOFTHCA_NAK_INV;
	spin_lock(&w->ack_lock);
	if (w->ack_inflight) {
		ack = softhca_wire_rc_take(qp, msg);
		spin_unlock(&w->ack_lock);
		return ack;
	}
	/* In flight before the first packet leaves: its ACK may be quick. */
	npkts = softhca_seq_npkts(msg->len, w->mtu);
	w->ack_first = w->sq_psn;
	w->ack_next = softhca_psn_add(w->sq_psn, npkts);
	w->ack_inflight = true;
	w->ack_pkts = 0;
	WRITE_ONCE(w->ack_ready, false);
	spin_unlock(&w->ack_lock);

	if (w->resend) {
		softhca_count_add(sdev, SOFTHCA_CNT_TX_RETRANSMITS, npkts);
		w->resend = false;
	}
	softhca_wire_send_pkts(qp, dest, msg, SOFTHCA_TP_RC, true);
	return SOFTHCA_PENDING;
}

/* An answer for the chunk in flight, as the requester takes it. */
static u8 softhca_wire_rc_ack_of(enum softhca_rc_answer a)
{
	switch (a) {
	case SOFTHCA_RC_ANS_ACK:
		return SOFTHCA_ACK;
	case SOFTHCA_RC_ANS_RNR:
		return SOFTHCA_RNR;
	case SOFTHCA_RC_ANS_SEQ:
		return SOFTHCA_RESEND;
	case SOFTHCA_RC_ANS_ACCESS:
		return SOFTHCA_NAK_ACCESS;
	case SOFTHCA_RC_ANS_OP:
		return SOFTHCA_NAK_OP;
	default:
		return SOFTHCA_NAK_INV;
	}
}

static void softhca_wire_rc_count(struct softhca_dev *sdev,
				  enum softhca_rc_answer a)
{
	static const u8 cnt[] = {
		[SOFTHCA_RC_ANS_STALE] = SOFTHCA_CNT_RX_STALE_ACKS,
		[SOFTHCA_RC_ANS_PART] = SOFTHCA_CNT_RX_ACKS,
		[SOFTHCA_RC_ANS_ACK] = SOFTHCA_CNT_RX_ACKS,
		[SOFTHCA_RC_ANS_RNR] = SOFTHCA_CNT_RX_NAKS_RNR,
		[SOFTHCA_RC_ANS_SEQ] = SOFTHCA_CNT_RX_NAKS_SEQ,
		[SOFTHCA_RC_ANS_INV] = SOFTHCA_CNT_RX_NAKS_OTHER,
		[SOFTHCA_RC_ANS_ACCESS] = SOFTHCA_CNT_RX_NAKS_OTHER,
		[SOFTHCA_RC_ANS_OP] = SOFTHCA_CNT_RX_NAKS_OTHER,
	};

	softhca_count(sdev, cnt[a]);
}

/**
 * softhca_wire_rcv_ack - an ACKNOWLEDGE arrived (the completer)
 * @sdev: the device bound to the netdev it arrived on (held)
 * @skb: the packet (linear, checked; not consumed)
 * @pkt: its parse (an AETH is there: the opcode table says so)
 *
 * Context: softirq.
 */
void softhca_wire_rcv_ack(struct softhca_dev *sdev, struct sk_buff *skb,
			  const struct softhca_roce_pkt *pkt)
{
	const struct softhca_aeth *aeth = softhca_pkt_aeth(pkt);
	u32 psn = softhca_bth_psn(softhca_pkt_bth(pkt));
	enum softhca_rc_answer a = SOFTHCA_RC_ANS_STALE;
	struct softhca_wire_qp *w;
	struct softhca_qp *qp;
	bool peer, kick = false;
	u8 ack;

	qp = softhca_qp_get(sdev, softhca_bth_qpn(softhca_pkt_bth(pkt)));
	if (!qp || qp->ibqp.qp_type != IB_QPT_RC || !aeth) {
		softhca_count(sdev, SOFTHCA_CNT_RX_NO_QP);
		goto out;
	}
	w = &qp->wire;
	spin_lock(&w->rx_lock);
	peer = softhca_wire_from_peer(qp, skb);
	spin_unlock(&w->rx_lock);
	if (!peer) {
		softhca_count(sdev, SOFTHCA_CNT_RX_BAD_PEER);
		goto out;
	}

	spin_lock(&w->ack_lock);
	if (w->ack_inflight) {
		a = softhca_rc_answer(w->ack_first, w->ack_next, psn,
				      softhca_aeth_syndrome(aeth));
		w->ack_pkts = max(w->ack_pkts,
				  softhca_rc_acked(w->ack_first, psn, a));
	}
	if (a != SOFTHCA_RC_ANS_STALE && a != SOFTHCA_RC_ANS_PART) {
		ack = softhca_wire_rc_ack_of(a);
		if (!w->ack_ready ||
		    (ack == SOFTHCA_ACK && w->ack_answer == SOFTHCA_RESEND)) {
			w->ack_answer = ack;
			w->ack_rnr = softhca_aeth_value(aeth);
			/* Pairs with the engine's lockless look. */
			WRITE_ONCE(w->ack_ready, true);
			kick = true;
		}
	}
	spin_unlock(&w->ack_lock);
	softhca_wire_rc_count(sdev, a);
	if (kick)
		softhca_engine_kick(qp);
out:
	if (qp)
		softhca_qp_put(qp);
}
