// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: RC on the wire, the responder.
 *
 * A request packet (ICRC, headers and P_Key checked, wire.c) is taken by
 * an RC QP of the number its BTH names, in a state that receives, from
 * the path's peer (the IP addresses set at RTR), as for UC
 * (wire_resp.c).  The sequencing rules (softhca_rc_rx_step(), under
 * wire.rx_lock) then decide:
 *
 *   expected PSN   to the responder (resp.c) as one chunk of a message
 *                  from another host; taken: the PSN advances and, if
 *                  the packet asked (AckReq), an ACK (syndrome 0x1F:
 *                  unlimited credits, as rxe sends) carries it and the
 *                  MSN.  RNR: an RNR NAK with the QP's min_rnr_timer and
 *                  the PSN stays (the requester sends it again).  A
 *                  NAK from the responder (invalid request, remote
 *                  access, remote operational): that NAK, and the QP
 *                  goes to ERR, as on one host.
 *   behind         a duplicate (the requester went back): not delivered
 *                  again; with AckReq, ACKed with the last in-order PSN.
 *   ahead          a gap: one PSN sequence NAK with the expected PSN,
 *                  then silent drops until it arrives.
 *
 * RDMA WRITE: the RETH is checked once at FIRST for the whole range
 * (wire_resp.c, softhca_wire_deliver()); a refused one is a remote
 * access NAK.
 *
 * Atomics (wire_atomic.c): an atomic request at the expected PSN is
 * carried out once and answered with an ATOMIC ACKNOWLEDGE (whatever
 * its AckReq: an atomic is always answered); a duplicate is answered
 * from the saved result, never carried out again, or dropped when
 * none is kept.
 *
 * RDMA READ: a READ REQUEST at the expected PSN is checked as resp.c
 * checks one on this host (the QP takes READs at all: an invalid
 * request NAK otherwise; the QP's remote-read right and the R_Key's
 * MR, PD, rights and the whole range: a remote access NAK otherwise),
 * moves the expected PSN by its span (softhca_rc_read_span(), one PSN
 * per response packet), counts as a message (MSN) and is kept with the
 * atomics' records (its PSN range: a duplicate from the middle of it is
 * answered MIDDLE..., LAST, wire_rc_seq.c).  A duplicate READ
 * (behind the expected PSN: the requester lost a response) is checked
 * the same way and read again from the PSN and range it names; the
 * expected PSN stays.  The responses, READ RESPONSE FIRST, MIDDLE...,
 * LAST or ONLY with an AETH (ACK, the MSN) on the first and last, are
 * built after rx_lock is dropped, straight from the MR (the reference
 * taken by the check is held until the last is sent).  A READ of up to
 * SOFTHCA_RC_RD_INLINE packets is answered from this softirq; a longer
 * one (rxe asks for several MiB in one READ) goes to the QP's worker
 * (wire.tx_work, process context, BHs off per batch of packets and
 * cond_resched() between batches), and so does every answer behind it
 * until the worker has sent it: answers leave in the order of the
 * requests (a requester takes an ACK past a READ it is waiting for as
 * a sign the READ's responses were lost).  dereg_mr of the MR waits
 * for the worker to be done with it.
 *
 * Counters: tx_acks, tx_naks, rx_duplicates, rx_psn_gaps (NAKed gaps),
 * rx_seq_drops (packets dropped behind a NAK), tx_read_resps, tx_drops
 * (an answer with no memory to queue it: as if lost).
 *
 * XRC: an XRC_TGT is this responder, its answers in XRC's opcodes.  A
 * request whose XRCETH names no XRC SRQ of the QP's domain is refused
 * before anything else is done with it: a remote access NAK (as on one
 * host, resp.c), counted as rx_bad_xrc_srq; the XRC_TGT stays as it is,
 * the expected PSN too (the XRC_INI's WQE ends in REM_ACCESS_ERR and
 * the INI in ERR, as for any NAK).  The SRQ's PD is the one its R_Keys
 * are checked against (softhca_wire_rkey()).
 *
 * Context: softirq.  Lock order: wire.rx_lock, then the responder's
 * (resp.lock, RQ/SRQ, CQ); answers are sent after rx_lock is dropped.
 */
#include <linux/slab.h>

#include "counters.h"
#include "wire.h"

/* READ responses sent from the receive softirq at most; more: the worker. */
#define SOFTHCA_RC_RD_INLINE	16
/* Packets the worker sends with BHs off before it may reschedule. */
#define SOFTHCA_RC_TX_BATCH	32

/*
 * An answer to send once rx_lock is dropped (syndrome 0: none): an
 * ACKNOWLEDGE (with @atomic: an ATOMIC ACKNOWLEDGE of @orig), or
 * (@read) the responses to a READ.
 */
struct softhca_rc_reply {
	bool send;
	bool read;
	bool atomic;
	u8 syndrome;
	u64 orig;
	u32 psn;
	u32 msn;
	struct softhca_mr *rd_mr;	/* referenced; NULL: nothing to read */
	u32 rd_key;			/* the R_Key it was checked under */
	u64 rd_va;
	u32 rd_len;
	u32 rd_npkts;
	u32 rd_mtu;
	u32 rd_sent;			/* responses sent so far */
	bool rd_mid;			/* resumes a READ: no FIRST */
	union ib_gid sgid;		/* ours */
	union ib_gid dgid;		/* the peer's */
};

/* An answer left to the worker (wire.tx_jobs). */
struct softhca_rc_job {
	struct list_head node;
	struct softhca_rc_reply r;
};

static void softhca_rc_reply(struct softhca_rc_reply *r, u8 syndrome, u32 psn,
			     u32 msn)
{
	r->send = true;
	r->syndrome = syndrome;
	r->psn = psn;
	r->msn = msn;
}

/* Send an ACKNOWLEDGE to the QP's peer.  Context: softirq, no lock held. */
static void softhca_rc_send_reply(struct softhca_dev *sdev,
				  struct softhca_qp *qp,
				  const struct softhca_rc_reply *r)
{
	u32 dqpn = READ_ONCE(qp->attr.dest_qp_num);
	struct softhca_roce_fields f = {
		.opcode = softhca_wire_op(qp->ibqp.qp_type,
					  r->atomic ?
					  SOFTHCA_RC(ATOMIC_ACKNOWLEDGE) :
					  SOFTHCA_RC(ACKNOWLEDGE)),
		.pkey = SOFTHCA_ROCE_DEF_PKEY,
		.dqpn = dqpn,
		.psn = r->psn,
		.syndrome = r->syndrome,
		.msn = r->msn,
		.orig = r->orig,
	};
	struct softhca_path path = {
		.sgid = r->sgid,
		.dgid = r->dgid,
		.route = &qp->wire.route,
		.sport = softhca_seq_sport(qp->ibqp.qp_num, dqpn),
	};

	softhca_count(sdev, (r->syndrome & SOFTHCA_AETH_TYPE_MASK) ?
		      SOFTHCA_CNT_TX_NAKS : SOFTHCA_CNT_TX_ACKS);
	softhca_wire_xmit(sdev, &f, NULL, 0, &path);
}

/*
 * Responses @r->rd_sent up to @end of a READ, straight from the MR.
 * Context: BHs off, no lock of the QP held.
 */
static void softhca_rc_read_pkts(struct softhca_dev *sdev,
				 struct softhca_qp *qp,
				 const struct softhca_rc_reply *r, u32 end)
{
	u32 dqpn = READ_ONCE(qp->attr.dest_qp_num), i, plen, left;
	struct softhca_seg seg = {
		.mr = r->rd_mr,
		.addr = r->rd_va,
		.len = r->rd_len,
	};
	struct softhca_roce_fields f = {
		.pkey = SOFTHCA_ROCE_DEF_PKEY,
		.dqpn = dqpn,
		.syndrome = SOFTHCA_AETH_ACK | SOFTHCA_AETH_NO_CREDITS,
		.msn = r->msn,
	};
	struct softhca_path path = {
		.sgid = r->sgid,
		.dgid = r->dgid,
		.route = &qp->wire.route,
		.sport = softhca_seq_sport(qp->ibqp.qp_num, dqpn),
	};
	struct softhca_txb b = {};	/* the responses, batched */
	struct softhca_cursor src;

	softhca_cursor_init(&src, &seg, r->rd_mr ? 1 : 0);
	softhca_cursor_skip(&src, (u64)r->rd_sent * r->rd_mtu);
	left = r->rd_len - min_t(u64, r->rd_len, (u64)r->rd_sent * r->rd_mtu);
	for (i = r->rd_sent; i < end; i++) {
		plen = min(left, r->rd_mtu);
		f.opcode = softhca_wire_op(qp->ibqp.qp_type,
					   softhca_rc_read_op(i, r->rd_npkts,
							      r->rd_mid));
		f.psn = softhca_psn_add(r->psn, i);
		softhca_txb_add(sdev, &b, &f, &src, plen, &path);
		left -= plen;
	}
	softhca_txb_flush(sdev, &b);
	softhca_txb_release(&b);
	softhca_count_add(sdev, SOFTHCA_CNT_TX_READ_RESPS, end - r->rd_sent);
}

/*
 * The responses to a READ: @max more of its @r->rd_npkts packets from
 * @r->psn, which let go of the MR with the last.  The R_Key is checked
 * again first: a fast-reg MR's key is also held valid while they are
 * copied (fastreg.c), a window's is only checked (mw.c: the memory
 * stays its MR's).  A key invalidated (or a window moved) since the
 * request was checked ends the answer here, the rest unsent
 * (tx_read_revoked).  Only a requester that sent the READ again (the
 * invalidating SEND_WITH_INV came behind it) or one that raced its own
 * invalidation sees that: the first wanted nothing more, the second
 * times out and sends the READ again, which the check of the key NAKs.
 * Return: true once the last is sent (or the answer ended).
 * Context: BHs off, no lock held.
 */
static bool softhca_rc_send_read(struct softhca_dev *sdev,
				 struct softhca_qp *qp,
				 struct softhca_rc_reply *r, u32 max)
{
	struct softhca_mr *mr = r->rd_mr;
	u32 end;
	bool ok;

	end = r->rd_npkts - r->rd_sent > max ? r->rd_sent + max : r->rd_npkts;
	if (mr && mr->fr) {
		ok = softhca_fr_read_lock(mr, r->rd_key);
		if (ok)
			softhca_rc_read_pkts(sdev, qp, r, end);
		softhca_fr_read_unlock(mr);
	} else {
		ok = !mr || !softhca_key_is_mw(r->rd_key) ||
		     softhca_mw_recheck(sdev, r->rd_key, mr, qp->ibqp.qp_num,
					IB_ACCESS_REMOTE_READ, r->rd_va,
					r->rd_len);
		if (ok)
			softhca_rc_read_pkts(sdev, qp, r, end);
	}
	if (!ok) {
		softhca_count(sdev, SOFTHCA_CNT_TX_READ_REVOKED);
		end = r->rd_npkts;
	}
	r->rd_sent = end;
	if (end < r->rd_npkts)
		return false;
	if (mr)
		softhca_mr_put(mr);
	r->rd_mr = NULL;
	return true;
}

/*
 * Send what @r holds, @max READ responses at most.  Return: true once
 * all of it is sent.  Context: BHs off, no lock held.
 */
static bool softhca_rc_send(struct softhca_dev *sdev, struct softhca_qp *qp,
			    struct softhca_rc_reply *r, u32 max)
{
	if (r->read && !softhca_rc_send_read(sdev, qp, r, max))
		return false;
	if (r->send)
		softhca_rc_send_reply(sdev, qp, r);
	return true;
}

/*
 * The answer to a request, once rx_lock is dropped: sent from here, or
 * left to the worker when it is a long READ or the worker has answers
 * still to send (they go first).  Context: softirq.
 */
static void softhca_rc_answer_out(struct softhca_dev *sdev,
				  struct softhca_qp *qp,
				  struct softhca_rc_reply *r)
{
	struct softhca_wire_qp *w = &qp->wire;
	struct softhca_rc_job *job;

	spin_lock(&w->tx_lock);
	if (list_empty(&w->tx_jobs) &&
	    (!r->read || r->rd_npkts <= SOFTHCA_RC_RD_INLINE)) {
		spin_unlock(&w->tx_lock);
		softhca_rc_send(sdev, qp, r, U32_MAX);
		return;
	}
	job = kmalloc(sizeof(*job), GFP_ATOMIC);
	if (!job) {
		spin_unlock(&w->tx_lock);
		/* As if lost: the requester asks again. */
		if (r->rd_mr)
			softhca_mr_put(r->rd_mr);
		softhca_count(sdev, SOFTHCA_CNT_TX_DROPS);
		return;
	}
	job->r = *r;
	list_add_tail(&job->node, &w->tx_jobs);
	spin_unlock(&w->tx_lock);
	queue_work(system_wq, &w->tx_work);
}

/**
 * softhca_wire_rc_tx_work - send the answers the responder left
 * @work: the QP's wire.tx_work
 *
 * A job leaves the list once sent whole, so an answer arriving
 * meanwhile queues behind it.  Runs while the QP exists: destroy_qp
 * cancels it once no packet can reach the QP.
 *
 * Context: process (system_wq).
 */
void softhca_wire_rc_tx_work(struct work_struct *work)
{
	struct softhca_qp *qp = container_of(work, struct softhca_qp,
					     wire.tx_work);
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	struct softhca_wire_qp *w = &qp->wire;
	struct softhca_rc_job *job;
	bool done;

	for (;;) {
		spin_lock_bh(&w->tx_lock);
		job = list_first_entry_or_null(&w->tx_jobs,
					       struct softhca_rc_job, node);
		spin_unlock_bh(&w->tx_lock);
		if (!job)
			return;
		/* Only this worker takes jobs off: @job stays first. */
		local_bh_disable();
		done = READ_ONCE(qp->dying) ||
		       softhca_rc_send(sdev, qp, &job->r, SOFTHCA_RC_TX_BATCH);
		local_bh_enable();
		if (done) {
			spin_lock_bh(&w->tx_lock);
			list_del(&job->node);
			spin_unlock_bh(&w->tx_lock);
			if (job->r.rd_mr)
				softhca_mr_put(job->r.rd_mr);
			kfree(job);
		}
		cond_resched();
	}
}

/* The answers left unsent (destroy_qp, the worker cancelled). */
void softhca_wire_rc_tx_drop(struct softhca_qp *qp)
{
	struct softhca_rc_job *job, *tmp;

	list_for_each_entry_safe(job, tmp, &qp->wire.tx_jobs, node) {
		list_del(&job->node);
		if (job->r.rd_mr)
			softhca_mr_put(job->r.rd_mr);
		kfree(job);
	}
}

/* A NAK's syndrome for a responder's answer. */
static u8 softhca_rc_nak_syndrome(enum softhca_ack ack)
{
	switch (ack) {
	case SOFTHCA_NAK_ACCESS:
		return SOFTHCA_AETH_NAK | SOFTHCA_NAK_REM_ACCESS;
	case SOFTHCA_NAK_OP:
		return SOFTHCA_AETH_NAK | SOFTHCA_NAK_REM_OP;
	default:
		return SOFTHCA_AETH_NAK | SOFTHCA_NAK_INVALID;
	}
}

/*
 * The expected packet to the responder.  Called with rx_lock held.
 * Return: the async event the QP must move to ERR with (0: none).
 */
static int softhca_rc_deliver(struct softhca_dev *sdev, struct softhca_qp *qp,
			      const struct softhca_roce_pkt *pkt, u32 psn,
			      struct softhca_rc_reply *r)
{
	struct softhca_msg msg = {};
	struct softhca_rc_rx *s = &qp->wire.rc;
	enum softhca_ack ack;

	if (!softhca_wire_deliver(sdev, qp, pkt, &msg, &ack)) {
		/* The RETH's range refused at FIRST, or a length past it. */
		ack = (pkt->mask & SOFTHCA_H_FIRST) ? SOFTHCA_NAK_ACCESS :
						      SOFTHCA_NAK_INV;
		softhca_rc_reply(r, softhca_rc_nak_syndrome(ack), psn, s->msn);
		return ack == SOFTHCA_NAK_ACCESS ? IB_EVENT_QP_ACCESS_ERR :
						   IB_EVENT_QP_REQ_ERR;
	}
	switch (ack) {
	case SOFTHCA_ACK:
		softhca_rc_rx_taken(s, pkt->mask);
		if (softhca_bth_ackreq(softhca_pkt_bth(pkt)))
			softhca_rc_reply(r, SOFTHCA_AETH_ACK |
					 SOFTHCA_AETH_NO_CREDITS, psn, s->msn);
		break;
	case SOFTHCA_RNR:
		softhca_rc_rx_rnr(s);
		softhca_rc_reply(r, SOFTHCA_AETH_RNR_NAK |
				 (msg.rnr_timer & SOFTHCA_AETH_VAL_MASK),
				 psn, s->msn);
		break;
	case SOFTHCA_NO_PEER:
	case SOFTHCA_BUSY:
		/* Not receiving after all: as if lost, the requester retries. */
		softhca_count(sdev, SOFTHCA_CNT_RX_SEQ_DROPS);
		break;
	default:
		softhca_rc_reply(r, softhca_rc_nak_syndrome(ack), psn, s->msn);
		return msg.peer_err ?: IB_EVENT_QP_REQ_ERR;
	}
	return msg.peer_err;
}

/*
 * A READ REQUEST at the expected PSN, or (@dup) behind it.  Checked as
 * resp.c checks a READ on this host; its responses are left in @r, with
 * the MR referenced.  Called with rx_lock held.
 * Return: the async event the QP must move to ERR with (0: none).
 */
static int softhca_rc_read(struct softhca_dev *sdev, struct softhca_qp *qp,
			   const struct softhca_roce_pkt *pkt, u32 psn,
			   bool dup, struct softhca_rc_reply *r)
{
	const struct softhca_reth *reth = softhca_pkt_reth(pkt);
	struct softhca_rc_rx *s = &qp->wire.rc;
	u32 len, npkts;
	u64 va;

	/* The opcode table gives a READ REQUEST its RETH. */
	len = be32_to_cpu(reth->len);
	va = be64_to_cpu(reth->va);
	npkts = softhca_rc_read_span(len, qp->wire.rx_mtu);
	if (!npkts || !READ_ONCE(qp->attr.max_dest_rd_atomic)) {
		softhca_rc_reply(r, softhca_rc_nak_syndrome(SOFTHCA_NAK_INV),
				 psn, s->msn);
		return IB_EVENT_QP_REQ_ERR;
	}
	if (!(READ_ONCE(qp->attr.qp_access_flags) & IB_ACCESS_REMOTE_READ))
		goto access;
	r->rd_mr = NULL;
	r->rd_key = be32_to_cpu(reth->rkey);
	if (len) {
		r->rd_mr = softhca_wire_rkey(qp, pkt, r->rd_key,
					     IB_ACCESS_REMOTE_READ, va, len);
		if (!r->rd_mr)
			goto access;
	}
	if (!dup) {
		softhca_rc_rx_read(s, npkts);
		softhca_rc_rd_save(&qp->wire.atm, psn, npkts);
	}
	r->rd_mid = dup && softhca_rc_rd_mid(&qp->wire.atm, psn);
	r->read = true;
	r->psn = psn;
	r->msn = s->msn;
	r->rd_va = va;
	r->rd_len = len;
	r->rd_npkts = npkts;
	r->rd_mtu = qp->wire.rx_mtu;
	return 0;
access:
	softhca_rc_reply(r, softhca_rc_nak_syndrome(SOFTHCA_NAK_ACCESS), psn,
			 s->msn);
	return IB_EVENT_QP_ACCESS_ERR;
}

/*
 * An atomic request at the expected PSN, or (@dup) behind it: carried
 * out, or (@dup) its saved result found again (wire_atomic.c); answered
 * with the original value in an ATOMIC ACKNOWLEDGE, or NAKed, or (a
 * duplicate with no result kept) dropped.  Called with rx_lock held.
 * Return: the async event the QP must move to ERR with (0: none).
 */
static int softhca_rc_atomic(struct softhca_dev *sdev, struct softhca_qp *qp,
			     const struct softhca_roce_pkt *pkt, u32 psn,
			     bool dup, struct softhca_rc_reply *r)
{
	struct softhca_rc_rx *s = &qp->wire.rc;
	enum softhca_ack ack = SOFTHCA_NO_PEER;
	int peer_err = 0;

	if (!dup)
		peer_err = softhca_wire_atm_exec(sdev, qp, pkt, psn, &ack,
						 &r->orig);
	else if (softhca_wire_atm_dup(sdev, qp, psn, &r->orig))
		ack = SOFTHCA_ACK;
	switch (ack) {
	case SOFTHCA_ACK:
		r->atomic = true;
		softhca_rc_reply(r, SOFTHCA_AETH_ACK | SOFTHCA_AETH_NO_CREDITS,
				 psn, s->msn);
		return 0;
	case SOFTHCA_NO_PEER:
	case SOFTHCA_BUSY:
	case SOFTHCA_RNR:
		/*
		 * Not receiving after all, or a duplicate whose result is
		 * gone: as if lost (the requester retries, if it waits).
		 */
		softhca_count(sdev, SOFTHCA_CNT_RX_SEQ_DROPS);
		return 0;
	default:
		softhca_rc_reply(r, softhca_rc_nak_syndrome(ack), psn, s->msn);
		return peer_err ?: IB_EVENT_QP_REQ_ERR;
	}
}

/*
 * Does @pkt name an SRQ the QP may take it for?  Only an XRC_TGT's
 * requests name one (XRCETH): an XRC SRQ of its domain.
 */
static bool softhca_rc_srq_ok(struct softhca_qp *qp,
			      const struct softhca_roce_pkt *pkt)
{
	const struct softhca_xrceth *xrceth = softhca_pkt_xrceth(pkt);
	struct softhca_srq *srq;

	if (!xrceth)
		return true;
	srq = softhca_xrc_srq_get(qp, softhca_xrceth_srqn(xrceth));
	if (!srq)
		return false;
	softhca_srq_put(srq);
	return true;
}

/*
 * What the sequencing rules make of a request from the QP's peer, and
 * the answer it gets.  Called with rx_lock held.
 * Return: the async event the QP must move to ERR with (0: none).
 */
static int softhca_rc_step(struct softhca_dev *sdev, struct softhca_qp *qp,
			   const struct softhca_roce_pkt *pkt, u32 psn,
			   struct softhca_rc_reply *r)
{
	const struct softhca_bth *bth = softhca_pkt_bth(pkt);
	struct softhca_wire_qp *w = &qp->wire;
	struct softhca_rc_rx *s = &w->rc;

	switch (softhca_rc_rx_step(s, pkt->mask, psn, pkt->paylen,
				   w->rx_mtu)) {
	case SOFTHCA_RC_TAKE:
		return softhca_rc_deliver(sdev, qp, pkt, psn, r);
	case SOFTHCA_RC_READ:
		return softhca_rc_read(sdev, qp, pkt, psn, false, r);
	case SOFTHCA_RC_ATOMIC:
		return softhca_rc_atomic(sdev, qp, pkt, psn, false, r);
	case SOFTHCA_RC_DUP:
		softhca_count(sdev, SOFTHCA_CNT_RX_DUPLICATES);
		/* A READ again: read again (its PSNs are behind us). */
		if ((pkt->mask & SOFTHCA_H_READ) && !pkt->paylen)
			return softhca_rc_read(sdev, qp, pkt, psn, true, r);
		if (pkt->mask & SOFTHCA_H_ATOMIC)
			return softhca_rc_atomic(sdev, qp, pkt, psn, true, r);
		if (softhca_bth_ackreq(bth))
			softhca_rc_reply(r, SOFTHCA_AETH_ACK |
					 SOFTHCA_AETH_NO_CREDITS,
					 softhca_psn_add(s->epsn,
							 SOFTHCA_PSN_MASK),
					 s->msn);
		return 0;
	case SOFTHCA_RC_NAK_SEQ:
		softhca_count(sdev, SOFTHCA_CNT_RX_PSN_GAPS);
		softhca_rc_reply(r, SOFTHCA_AETH_NAK | SOFTHCA_NAK_PSN_SEQ,
				 s->epsn, s->msn);
		return 0;
	case SOFTHCA_RC_DROP:
		softhca_count(sdev, SOFTHCA_CNT_RX_SEQ_DROPS);
		/* Asked again: the NAK was lost (a probe). */
		if (softhca_bth_ackreq(bth) && softhca_rc_rx_ask_again(s, psn)) {
			softhca_count(sdev, SOFTHCA_CNT_TX_NAKS_AGAIN);
			softhca_rc_reply(r, SOFTHCA_AETH_NAK |
					 SOFTHCA_NAK_PSN_SEQ, s->epsn, s->msn);
		}
		return 0;
	case SOFTHCA_RC_INVALID:
	default:
		softhca_rc_reply(r, SOFTHCA_AETH_NAK | SOFTHCA_NAK_INVALID,
				 psn, s->msn);
		return IB_EVENT_QP_REQ_ERR;
	}
}

/**
 * softhca_wire_rcv_rc - a request packet arrived for @sdev (RC or XRC)
 * @sdev: the device bound to the netdev it arrived on (held)
 * @skb: the packet (linear, checked; not consumed)
 * @pkt: its parse
 *
 * Context: softirq.
 */
void softhca_wire_rcv_rc(struct softhca_dev *sdev, struct sk_buff *skb,
			 const struct softhca_roce_pkt *pkt)
{
	u32 psn = softhca_bth_psn(softhca_pkt_bth(pkt));
	struct softhca_rc_reply r = {};
	union ib_gid sgid, dgid;
	struct softhca_wire_qp *w;
	struct softhca_qp *qp;
	int peer_err = 0;

	qp = softhca_qp_get(sdev, softhca_bth_qpn(softhca_pkt_bth(pkt)));
	if (!qp || !softhca_wire_takes(qp->ibqp.qp_type, pkt->mask)) {
		softhca_count(sdev, SOFTHCA_CNT_RX_NO_QP);
		goto out;
	}
	w = &qp->wire;
	softhca_wire_gids(skb, &sgid, &dgid);
	spin_lock(&w->rx_lock);
	if (!softhca_wire_admit(sdev, qp, skb)) {
		spin_unlock(&w->rx_lock);
		goto out;
	}
	if (psn == w->rc.epsn && !softhca_rc_srq_ok(qp, pkt)) {
		/*
		 * XRC: an SRQ outside the XRC_TGT's domain, or none, is
		 * refused as on one host (resp.c): a remote access NAK, and
		 * the XRC_TGT stays as it is, its expected PSN included.
		 */
		softhca_count(sdev, SOFTHCA_CNT_RX_BAD_XRC_SRQ);
		softhca_rc_reply(&r, softhca_rc_nak_syndrome(SOFTHCA_NAK_ACCESS),
				 psn, w->rc.msn);
	} else {
		peer_err = softhca_rc_step(sdev, qp, pkt, psn, &r);
	}
	spin_unlock(&w->rx_lock);
	if (r.read || r.send) {
		/* Back to where it came from. */
		r.sgid = dgid;
		r.dgid = sgid;
		softhca_rc_answer_out(sdev, qp, &r);
	}
	if (peer_err)
		softhca_qp_error(qp, peer_err);
out:
	if (qp)
		softhca_qp_put(qp);
}
