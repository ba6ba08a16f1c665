// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: RC atomics on the wire (COMPARE_SWAP, FETCH_ADD).
 *
 * Requester.  An atomic is a chunk of one packet and one PSN: the
 * request carries an AtomicETH (the remote VA and R_Key, the swap or add
 * value, the compare value) and AckReq.  Its answer is an ATOMIC
 * ACKNOWLEDGE (AETH and AtomicAckETH: the remote value before the
 * atomic); the completer (wire_rc.c, softirq) keeps that value in
 * wire.atm_orig under ack_lock and records ACK.  It writes nothing to the
 * requester's memory: it holds no reference to the local MRs.  The
 * requester's next visit, holding them, takes the value with the ACK and
 * req.c writes its 8 bytes into the local SGE, as on one host.  A NAK
 * ends the WQE as for any request; no answer in time sends the same
 * request again with the same PSN, and the responder answers that
 * duplicate from its saved result.
 *
 * Outstanding READs and atomics.  The requester is stop-and-wait: one
 * chunk in flight per QP, so at most one READ or atomic is ever
 * outstanding, within any max_rd_atomic of at least 1 and within the
 * responder's max_dest_rd_atomic (at least 1 for it to take any).  A QP
 * whose max_rd_atomic is 0 still sends its READs and atomics one at a
 * time, as the same-host transport does; the responder refuses them
 * when its max_dest_rd_atomic is 0.
 *
 * Responder.  An atomic request at the expected PSN (the sequencing rules
 * say SOFTHCA_RC_ATOMIC) goes to the responder of resp.c as an 8-byte
 * atomic chunk from another host: the same checks as on one host (the
 * QP takes atomics at all and the VA is 8-byte aligned, else an invalid
 * request NAK; the QP's remote-atomic right and an R_Key whose MR grants
 * it over the 8 bytes, else a remote access NAK), and the same
 * execution, a CPU atomic on the page (softhca_mem_atomic(), no global
 * lock).  The original value is answered in an ATOMIC ACKNOWLEDGE and
 * saved by PSN in wire.atm, the last max_dest_rd_atomic of them.  A
 * duplicate (behind the expected PSN) is answered from there and not
 * carried out again; one with no record left is dropped, as rxe does.
 *
 * The saved results live in wire.atm under wire.rx_lock: modify_qp
 * allocates their records when max_dest_rd_atomic is set (process
 * context, so no allocation per packet), RESET and a new receive PSN
 * forget them (wire_conn.c), destroy_qp frees them.
 *
 * Counters: tx_atomics (requests sent, not counting the retransmissions
 * tx_retransmits counts), rx_atomics (carried out), rx_dup_atomics
 * (answered from a saved result); ATOMIC ACKNOWLEDGEs count as rx_acks,
 * a duplicate with no record as rx_seq_drops.
 */
#include <linux/slab.h>

#include "counters.h"
#include "wire.h"

/**
 * softhca_wire_atm_resize - records for max_dest_rd_atomic results
 * @qp: the QP (state_lock held)
 * @attr: the attributes modify_qp is given
 * @mask: which of them
 *
 * The records of an earlier size are dropped: the attribute changes
 * only on the way to RTR (or in SQD), with no duplicate to answer yet.
 *
 * Context: process (modify_qp), no spinlock held.
 * Return: 0, or -ENOMEM (nothing changed).
 */
int softhca_wire_atm_resize(struct softhca_qp *qp,
			    const struct ib_qp_attr *attr, int mask)
{
	struct softhca_wire_qp *w = &qp->wire;
	struct softhca_rc_atm_rec *rec = NULL, *old;
	u32 n;

	if (!softhca_qpt_reliable(qp->ibqp.qp_type) ||
	    !(mask & IB_QP_MAX_DEST_RD_ATOMIC))
		return 0;
	n = attr->max_dest_rd_atomic;
	if (n == w->atm.n)
		return 0;
	if (n) {
		rec = kcalloc(n, sizeof(*rec), GFP_KERNEL);
		if (!rec)
			return -ENOMEM;
	}
	spin_lock_bh(&w->rx_lock);
	old = w->atm.rec;
	w->atm.rec = rec;
	w->atm.n = n;
	w->atm.next = 0;
	spin_unlock_bh(&w->rx_lock);
	kfree(old);
	return 0;
}

/* The records go with the QP (destroy_qp: no packet reaches it now). */
void softhca_wire_atm_free(struct softhca_qp *qp)
{
	kfree(qp->wire.atm.rec);
	qp->wire.atm.rec = NULL;
	qp->wire.atm.n = 0;
}

/*
 * An atomic request as the responder's chunk (softhca_wire_deliver()):
 * the AtomicETH's operands where resp.c takes them.
 */
void softhca_wire_atm_msg(const struct softhca_roce_pkt *pkt,
			  struct softhca_msg *msg)
{
	const struct softhca_atmeth *a = softhca_pkt_atmeth(pkt);
	bool cas = (pkt->opcode & ~SOFTHCA_TP_MASK) ==
		   SOFTHCA_OP_COMPARE_SWAP;

	msg->opcode = cas ? IB_UVERBS_WR_ATOMIC_CMP_AND_SWP :
			    IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
	msg->remote_addr = be64_to_cpu(a->va);
	msg->rkey = be32_to_cpu(a->rkey);
	/* CMP_AND_SWP: compare_add is the compare value; FETCH_ADD: the add. */
	msg->compare_add = cas ? be64_to_cpu(a->compare) :
				 be64_to_cpu(a->swap_add);
	msg->swap = cas ? be64_to_cpu(a->swap_add) : 0;
	msg->len = sizeof(u64);
	msg->total = sizeof(u64);
	msg->first = true;
	msg->last = true;
}

/**
 * softhca_wire_atm_exec - an atomic request at the expected PSN
 * @sdev: the device it arrived on
 * @qp: its RC QP (rx_lock held)
 * @pkt: the request
 * @psn: its PSN
 * @ack: out: the responder's answer
 * @orig: out: with SOFTHCA_ACK, the value before the atomic
 *
 * Carried out by resp.c, its result saved for a duplicate, the expected
 * PSN moved past it (a message: the MSN too).
 * Return: the async event the QP must move to ERR with (0: none).
 */
int softhca_wire_atm_exec(struct softhca_dev *sdev, struct softhca_qp *qp,
			  const struct softhca_roce_pkt *pkt, u32 psn,
			  enum softhca_ack *ack, u64 *orig)
{
	struct softhca_msg msg = {};
	struct softhca_wire_qp *w = &qp->wire;

	/* No records: max_dest_rd_atomic 0, the responder refuses it. */
	softhca_wire_deliver(sdev, qp, pkt, &msg, ack);
	if (*ack != SOFTHCA_ACK)
		return msg.peer_err;
	softhca_rc_rx_read(&w->rc, 1);
	softhca_rc_atm_save(&w->atm, psn, msg.atomic_orig);
	softhca_count(sdev, SOFTHCA_CNT_RX_ATOMICS);
	*orig = msg.atomic_orig;
	return 0;
}

/**
 * softhca_wire_atm_dup - a duplicate atomic request's saved result
 * @sdev: the device it arrived on
 * @qp: its RC QP (rx_lock held)
 * @psn: its PSN (behind the expected one)
 * @orig: out: the original value its first execution returned
 *
 * Return: true when the result is kept (counted: rx_dup_atomics); false
 * when it is not (overwritten, or never carried out here): the request
 * is dropped, as rxe drops it.
 */
bool softhca_wire_atm_dup(struct softhca_dev *sdev, struct softhca_qp *qp,
			  u32 psn, u64 *orig)
{
	if (!softhca_rc_atm_find(&qp->wire.atm, psn, orig))
		return false;
	softhca_count(sdev, SOFTHCA_CNT_RX_DUP_ATOMICS);
	return true;
}

/**
 * softhca_wire_send_atomic - an atomic chunk: its one request packet
 * @qp: the sending QP (sq.lock held, BHs off)
 * @dest: its peer
 * @msg: the atomic (its operands as the WQE gave them)
 */
void softhca_wire_send_atomic(struct softhca_qp *qp, struct softhca_dest *dest,
			      struct softhca_msg *msg)
{
	bool cas = msg->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
	struct softhca_roce_fields f = {
		/* RC's opcode: softhca_wire_rc_request() takes the QP's */
		.opcode = cas ? SOFTHCA_RC(COMPARE_SWAP) : SOFTHCA_RC(FETCH_ADD),
		.va = msg->remote_addr,
		.rkey = msg->rkey,
		.swap_add = cas ? msg->swap : msg->compare_add,
		.compare = cas ? msg->compare_add : 0,
	};

	softhca_wire_rc_request(qp, dest, msg, &f, 1);
}
