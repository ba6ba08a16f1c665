// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: connected QPs on the wire, the sending side.
 *
 * The path of a connected QP (its GIDs, path MTU, UDP source port, the
 * PSNs) is taken from its attributes when modify_qp sets them, into
 * qp->wire, and not looked at again per packet.
 *
 * UC.  The requester hands over a message chunk by chunk (req.c), each
 * chunk a whole number of path-MTU packets (softhca_seq_chunk()), so a
 * message goes out as FIRST, MIDDLE..., LAST (or ONLY) packets with
 * consecutive PSNs whatever the chunk size: SEND and RDMA WRITE, the
 * immediate data in the last packet, the RETH (address, R_Key, whole
 * length) in the first packet of a WRITE.  Nothing comes back: the WQE
 * completes once its last packet went to the IP layer, as on any HCA.
 * A packet that could not be sent (no memory, no route) still uses its
 * PSN, so the receiver sees a gap and drops that one message, exactly as
 * if the network had lost it.
 *
 * RC sends the same packets with RC opcodes (wire_rc.c), AckReq on
 * each chunk's last one, and waits for the answer; an XRC_INI with XRC
 * opcodes, each request's XRCETH naming the WQE's remote SRQ.  An
 * XRC_TGT keeps a path too: its answers go back along it.
 *
 * Context: sending runs under the QP's sq.lock with BHs off (req.c);
 * modify_qp is process context.
 */
#include "counters.h"
#include "wire.h"

/* The path in @attr, where @mask says it is given. */
static void softhca_wire_path_from(const struct ib_qp_attr *attr, int mask,
				   union ib_gid *sgid, union ib_gid *dgid,
				   u32 *mtu)
{
	if (mask & IB_QP_AV) {
		if (attr->ah_attr.grh.sgid_attr)
			*sgid = attr->ah_attr.grh.sgid_attr->gid;
		*dgid = attr->ah_attr.grh.dgid;
	}
	if (mask & IB_QP_PATH_MTU)
		*mtu = ib_mtu_enum_to_int(attr->path_mtu);
}

/*
 * The sending half, under sq.lock, and the receiving half, what
 * wire_resp.c checks packets against, under wire.rx_lock: each side
 * keeps its own copy, so neither takes the other's lock per packet.
 */
static void softhca_wire_path_set(struct softhca_qp *qp,
				  const struct ib_qp_attr *attr, int mask,
				  bool reset)
{
	struct softhca_wire_qp *w = &qp->wire;

	spin_lock_bh(&qp->sq.lock);
	softhca_wire_path_from(attr, mask, &w->sgid, &w->dgid, &w->mtu);
	if (mask & IB_QP_DEST_QPN)
		w->sport = softhca_seq_sport(qp->ibqp.qp_num,
					     attr->dest_qp_num);
	if (mask & IB_QP_SQ_PSN)
		w->sq_psn = attr->sq_psn & SOFTHCA_PSN_MASK;
	spin_unlock_bh(&qp->sq.lock);

	spin_lock_bh(&w->rx_lock);
	softhca_wire_path_from(attr, mask, &w->rx_sgid, &w->rx_dgid,
			       &w->rx_mtu);
	if (mask & IB_QP_RQ_PSN) {
		softhca_seq_rx_reset(&w->rx, attr->rq_psn);
		softhca_rc_rx_reset(&w->rc, attr->rq_psn);
	} else if (reset) {
		softhca_seq_rx_reset(&w->rx, 0);
		softhca_rc_rx_reset(&w->rc, 0);
	}
	/* Saved atomic results belong to the PSNs of before. */
	if (reset || (mask & IB_QP_RQ_PSN))
		softhca_rc_atm_clear(&w->atm);
	spin_unlock_bh(&w->rx_lock);
}

/**
 * softhca_wire_qp_modify - a connected QP's attributes changed
 * @qp: the QP (state_lock held)
 * @attr: the attributes modify_qp accepted
 * @mask: which of them were given
 *
 * Context: process (modify_qp), no spinlock held.
 */
void softhca_wire_qp_modify(struct softhca_qp *qp,
			    const struct ib_qp_attr *attr, int mask)
{
	bool reset = (mask & IB_QP_STATE) && attr->qp_state == IB_QPS_RESET;

	if (softhca_is_ud(qp->ibqp.qp_type))
		return;
	softhca_wire_path_set(qp, attr, mask, reset);
	if (softhca_qpt_reliable(qp->ibqp.qp_type))
		softhca_wire_rc_modify(qp, attr, mask, reset);
}

/*
 * A chunk as packets from qp->wire.sq_psn on, the QP type's opcodes
 * (softhca_wire_tp()), AckReq on the last packet when @ackreq.  They
 * join the QP's transmit batch: the transport's flush sends them.
 * Return: false when the WQE's opcode has no packets of that transport.
 */
bool softhca_wire_send_pkts(struct softhca_qp *qp, struct softhca_dest *dest,
			    struct softhca_msg *msg, bool ackreq)
{
	u8 tp = softhca_wire_tp(qp->ibqp.qp_type);
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	struct softhca_path path = {
		.sgid = qp->wire.sgid,
		.dgid = qp->wire.dgid,
		.route = &qp->wire.route,
		.sport = qp->wire.sport,
	};
	struct softhca_roce_fields f = {
		.pkey = SOFTHCA_ROCE_DEF_PKEY,
		.dqpn = dest->qpn,
		.imm = (__force __be32)msg->imm,
		.inv_rkey = msg->imm,	/* SEND_WITH_INV: the rkey, host order */
		.xrc_srqn = msg->xrc_srqn,	/* XRC opcodes only have an XRCETH */
	};
	u32 mtu = qp->wire.mtu, left = msg->len, plen;
	bool first = msg->first, last;
	int op;

	do {
		plen = min(left, mtu);
		last = msg->last && plen == left;
		op = softhca_seq_opcode(tp, msg->opcode, first, last);
		if (op < 0)
			return false;
		f.opcode = op;
		f.psn = qp->wire.sq_psn;
		f.se = last && msg->solicited;
		f.ackreq = ackreq && plen == left;
		if (first) {
			/* The RETH: where the whole message goes. */
			f.va = msg->remote_addr;
			f.rkey = msg->rkey;
			f.dma_len = msg->total;
		}
		softhca_txb_add(sdev, &qp->wire.txb, &f, msg->data, plen,
				&path);
		qp->wire.sq_psn = softhca_psn_add(qp->wire.sq_psn, 1);
		left -= plen;
		first = false;
	} while (left);
	return true;
}

/**
 * softhca_wire_send_uc - a UC message chunk as packets
 * @qp: the sending QP
 * @dest: its peer (the wire: @dest->qpn only)
 * @msg: the chunk; qp->req.done is its offset in the message, a whole
 *	number of path MTUs
 *
 * Context: @qp's sq.lock held, BHs off.
 * Return: SOFTHCA_ACK (nothing answers a UC packet).
 */
enum softhca_ack softhca_wire_send_uc(struct softhca_qp *qp,
				      struct softhca_dest *dest,
				      struct softhca_msg *msg)
{
	/* No path (RTR sets one), or an opcode the WQE check refused. */
	if (qp->wire.mtu)
		softhca_wire_send_pkts(qp, dest, msg, false);
	return SOFTHCA_ACK;
}
