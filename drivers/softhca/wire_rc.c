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
 * A long SEND or WRITE keeps two chunks in flight (req_train.c): the next
 * chunk is appended as a car is, so the answer to the first is a partial
 * ACK of the range, and the requester slides past it.
 *
 * Trains (req_train.c).  Behind a SEND or WRITE chunk that ends its
 * message, the requester may append whole messages of the WQEs posted
 * after it (softhca_wire_rc_append()): their packets follow with the
 * next PSNs and the range in flight grows to cover them, so one answer
 * covers them all and a run of small messages costs one round trip, not
 * one each.  An append is refused once the answer is recorded (it was
 * for the shorter range) and behind a READ or an atomic.  Whatever the
 * answer, the requester learns how many packets at the range's start the
 * responder took (msg->acked_pkts: ACKs of part of it, the PSN of a NAK
 * of any kind), retires the WQEs they hold and goes on from there.
 *
 * Quiet messages.  An answer is only worth its cost (an ACK crosses the
 * stack twice, on the CPUs the engine and the responder share) when
 * someone waits for it: the completion of a signaled WQE, or a WQE that
 * cannot join the train (softhca_req_probe()).  So the last packet of a
 * SEND or WRITE whose WQE is unsignaled asks for none (no AckReq: a
 * quiet message, softhca_wire_rc_asks()) when the message goes in one
 * chunk, unless it is sent again or SOFTHCA_QUIET_RUN messages in a row
 * went quiet (the window must slide, and the application's send queue
 * drain: half the queue at most).
 * A message of several chunks asks at its end as at each chunk's: one
 * ACK saved among several is worth nothing, and the WQE posted behind
 * it, long too, could not join the train, which then asked by a probe
 * (the last packet again): 93 of 100 1 MiB WRITEs of a stream did so.
 * IBA lets a requester set AckReq where it likes; a responder answers
 * an AckReq, and a later ACK covers every PSN before it.  The WQEs
 * posted behind a quiet message join its train; the first that asks
 * brings the answer to all.  When none comes (the application posted
 * nothing more within ack_quiet_us), or a WQE cannot join the train
 * (a READ, an atomic, a long message, no room), the requester asks:
 * the train's last packet goes again with AckReq (a probe,
 * softhca_wire_rc_probe()), or, while it is still in the transmit
 * batch, the batch sets AckReq on it (tx_quiet_expired, tx_quiet_asks);
 * but not while a message after the part already acknowledged asked:
 * that answer is coming (softhca_wire_rc_quiet()).
 * The responder takes the probe as a duplicate and ACKs where it
 * stands (IBA C9-105; rxe's duplicate_request() does the same), or NAKs
 * the gap before it when the quiet packet was lost.  A
 * SEND ping-pong whose sends are signaled one in eight then costs an
 * ACK every eighth message instead of one each.
 *
 * RDMA READ (wire_read.c): a READ chunk is one READ REQUEST whose
 * responses use the chunk's PSNs; the completer takes them into rd_q
 * (holding those ahead of a gap), the requester's next visit copies
 * them into its buffer.
 *
 * Atomics (wire_atomic.c): a chunk of one request packet, one PSN,
 * answered by an ATOMIC ACKNOWLEDGE, whose original value the completer
 * keeps (atm_orig) with the ACK it records; the requester's next visit
 * hands it over (msg->atomic_orig) and req.c writes it into the local
 * SGE.  A plain ACK means nothing to an atomic, an ATOMIC ACKNOWLEDGE
 * nothing to any other chunk: both are ignored as stale.
 *
 * XRC.  An XRC_INI is this requester and completer as they are, with
 * XRC's opcodes (softhca_wire_op()) and each request's XRCETH naming
 * the WQE's remote SRQ; it takes XRC answers only, an RC QP RC's
 * (softhca_wire_takes()).
 *
 * Counters: tx_retransmits (packets sent again), ack_timeouts, rx_acks,
 * rx_naks_rnr, rx_naks_seq, rx_naks_other, rx_stale_acks (READ's in
 * wire_read.c).
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
	w->ack_cars = 0;
	WRITE_ONCE(w->ack_ready, false);
	WRITE_ONCE(w->ack_moved, false);
	w->rnr_echo = false;
	w->resend = false;
	w->ack_quiet = false;
	w->quiet_run = 0;
	w->asked = false;
	w->rd_resume = false;
	w->rd_last = false;
	w->rd_watch = false;
	w->rd_probes = 0;
	w->rd_probe = false;
	w->rd_rtt = (struct softhca_rtt){};
	w->ack_rtt = (struct softhca_rtt){};
	w->ack_rtt_long = (struct softhca_rtt){};
	w->ack_timed = false;
	w->tail_probe = false;
	w->tail_probes = 0;
	__skb_queue_purge(&w->rd_q);
	__skb_queue_purge(&w->rd_ooo);
	spin_unlock(&w->ack_lock);
	qp->req.wire_chunk = 0;
	qp->req.wire_ahead = 0;
	WRITE_ONCE(qp->req.ahead_due, false);
	/* A train's WQEs stay taken; they go again as if never sent. */
	qp->req.cars_sent = 0;
	WRITE_ONCE(qp->req.train_open, false);
	WRITE_ONCE(qp->req.train_full, false);
	spin_unlock_bh(&qp->sq.lock);
}

/*
 * The answer recorded for the chunk in flight, or SOFTHCA_RESEND when
 * none came (the wait is over: the requester asks only then).  The chunk
 * is no longer in flight either way.  A READ's responses move to @q.
 * Called with ack_lock held.
 */
static enum softhca_ack softhca_wire_rc_take(struct softhca_qp *qp,
					     struct softhca_msg *msg,
					     struct sk_buff_head *q)
{
	struct softhca_wire_qp *w = &qp->wire;
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	enum softhca_ack ack = SOFTHCA_RESEND;
	u32 acked = 0;

	if (w->ack_ready) {
		ack = w->ack_answer;
		msg->rnr_timer = w->ack_rnr;
		if (ack == SOFTHCA_ACK && w->ack_atomic)
			msg->atomic_orig = w->atm_orig;
		/* An answer, not a probe of ours: the next may probe. */
		if (!w->tail_probe)
			w->tail_probes = 0;
	} else {
		softhca_count(sdev, SOFTHCA_CNT_ACK_TIMEOUTS);
	}
	w->ack_inflight = false;
	WRITE_ONCE(w->ack_ready, false);
	WRITE_ONCE(w->ack_moved, false);
	if (w->ack_cars) {
		/*
		 * A train: whatever the answer, the packets taken at its
		 * start (never all of them unless it is an ACK).
		 */
		if (ack != SOFTHCA_ACK && w->ack_pkts <
		    softhca_psn_sub(w->ack_next, w->ack_first))
			acked = w->ack_pkts;
		msg->acked_pkts = acked;
		if (ack == SOFTHCA_RESEND || ack == SOFTHCA_RNR)
			w->resend = true;
	} else if (w->ack_read) {
		acked = softhca_wire_rd_take(w, ack, msg, q);
		if (ack == SOFTHCA_RESEND)
			w->resend = true;
	} else if (ack == SOFTHCA_RESEND || ack == SOFTHCA_RNR) {
		/* Whole packets before the last: never the whole chunk. */
		if ((u64)w->ack_pkts * w->mtu < msg->len)
			acked = w->ack_pkts;
		msg->acked = acked * w->mtu;
		w->resend = true;
	}
	/* A tail probe goes again as a READ probe does: no retry. */
	msg->probe |= w->tail_probe;
	w->tail_probe = false;
	/* What comes next starts where the responder stands. */
	if (ack != SOFTHCA_ACK)
		w->sq_psn = softhca_psn_add(w->ack_first, acked);
	return ack;
}

/*
 * Quiet messages in a row at most: the responder's answer to the next
 * one retires them all, and the window slides on (req_train.c sends
 * bursts of the same length).
 */
#define SOFTHCA_QUIET_RUN	16

/*
 * The packets in flight up to the last one sent ask for an answer: one
 * is coming for them.  Context: sq.lock held.
 */
static void softhca_wire_rc_asked(struct softhca_wire_qp *w)
{
	w->asked = true;
	w->ask_next = w->ack_next;
}

/*
 * Does @msg's last packet ask for an answer (AckReq)?  Not for a quiet
 * message sent in one chunk (see the top of this file), unless it goes
 * @again or ends a run of quiet ones.  Context: sq.lock held.
 */
static bool softhca_wire_rc_asks(struct softhca_qp *qp,
				 const struct softhca_msg *msg, bool again)
{
	struct softhca_wire_qp *w = &qp->wire;
	u32 run = min_t(u32, SOFTHCA_QUIET_RUN, qp->sq.ring.entries / 2);

	if (!again && msg->quiet && msg->first && msg->last &&
	    READ_ONCE(softhca_engine.quiet_us) && w->quiet_run + 1 < run) {
		w->quiet_run++;
		w->ack_quiet = true;
		softhca_count(to_sdev(qp->ibqp.device), SOFTHCA_CNT_TX_QUIET);
		return false;
	}
	w->quiet_run = 0;
	w->ack_quiet = false;
	softhca_wire_rc_asked(w);
	return true;
}

/**
 * softhca_wire_rc_quiet - does what is in flight end in a quiet message?
 * @qp: the sending QP
 *
 * Context: @qp's sq.lock held.
 * Return: true when it does and no answer to it is coming or already in:
 * only asking (a probe) brings one.
 */
bool softhca_wire_rc_quiet(struct softhca_qp *qp)
{
	struct softhca_wire_qp *w = &qp->wire;
	bool coming;
	u32 ask;

	if (!w->ack_inflight || !w->ack_quiet)
		return false;
	/*
	 * A message before the quiet tail asked, and its answer has not come:
	 * that answer retires the WQEs up to it (a partial ACK), and the
	 * requester then waits for the rest, quiet again.  Asking now would
	 * cost a packet sent again and a duplicate at the responder for
	 * nothing: a stream of unsignaled WRITEs, its window full (no room
	 * for the next WQE), asked so about once in 150 messages and ran up
	 * to 17 % slower with quiet messages than without.
	 *
	 * An answer already in (the whole train's, or a partial ACK the
	 * requester has not taken yet) is the same: the requester takes it
	 * first, which retires WQEs and starts the quiet wait again for
	 * what is left.  That window is wider on a loaded host: the stream
	 * above asked so up to 15 times in 50,000 WRITEs there, and 0 times
	 * since in eight runs.
	 */
	spin_lock(&w->ack_lock);
	ask = softhca_psn_sub(w->ask_next, w->ack_first);
	coming = w->ack_ready || w->ack_moved ||
		 (w->asked && ask > w->ack_pkts &&
		  ask <= softhca_psn_sub(w->ack_next, w->ack_first));
	spin_unlock(&w->ack_lock);
	return !coming;
}

/**
 * softhca_wire_rc_probe - ask for the answer to a quiet train
 * @qp: the sending QP, what is in flight ending in a quiet message
 * @dest: its peer
 * @msg: the last packet in flight, as a chunk of its message; NULL when
 *	the requester cannot build it (it then waits the ACK timeout)
 *
 * The packet goes again with AckReq, the PSN it had; or, still in the
 * transmit batch, it asks when the batch goes.
 *
 * Context: @qp's sq.lock held, BHs off.
 */
void softhca_wire_rc_probe(struct softhca_qp *qp, struct softhca_dest *dest,
			   struct softhca_msg *msg)
{
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	struct softhca_wire_qp *w = &qp->wire;
	u32 psn = w->sq_psn;

	w->ack_quiet = false;
	w->quiet_run = 0;
	if (w->txb.n) {
		softhca_txb_ask(&w->txb);
		softhca_wire_rc_asked(w);
		return;
	}
	if (!msg)
		return;
	softhca_wire_rc_asked(w);
	w->sq_psn = softhca_psn_add(w->ack_next, SOFTHCA_PSN_MASK);
	softhca_wire_send_pkts(qp, dest, msg, true);
	w->sq_psn = psn;
	softhca_txb_flush(sdev, &w->txb);
}

/**
 * softhca_wire_rc_request - a request without payload (READ, atomic)
 * @qp: the sending QP (sq.lock held, BHs off)
 * @dest: its peer
 * @msg: the chunk it asks for (XRC: its SRQ)
 * @f: the request's opcode (RC's: the QP type's is used) and extension
 *	header; the BTH and the XRCETH are filled here (the next PSN,
 *	AckReq)
 * @npkts: the PSNs it uses (a READ: one per response packet)
 */
void softhca_wire_rc_request(struct softhca_qp *qp, struct softhca_dest *dest,
			     const struct softhca_msg *msg,
			     struct softhca_roce_fields *f, u32 npkts)
{
	struct softhca_wire_qp *w = &qp->wire;
	struct softhca_path path = {
		.sgid = w->sgid,
		.dgid = w->dgid,
		.route = &w->route,
		.sport = w->sport,
	};

	f->opcode = softhca_wire_op(qp->ibqp.qp_type, f->opcode);
	f->pkey = SOFTHCA_ROCE_DEF_PKEY;
	f->xrc_srqn = msg->xrc_srqn;
	f->dqpn = dest->qpn;
	f->psn = w->sq_psn;
	f->ackreq = true;
	/* After what the batch holds: PSN order (net_batch.c). */
	softhca_txb_flush(to_sdev(qp->ibqp.device), &w->txb);
	softhca_wire_xmit(to_sdev(qp->ibqp.device), f, NULL, 0, &path);
	w->sq_psn = softhca_psn_add(w->sq_psn, npkts);
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
	bool read = msg->opcode == IB_UVERBS_WR_RDMA_READ;
	bool atomic = softhca_is_atomic(msg->opcode);
	struct softhca_wire_qp *w = &qp->wire;
	struct sk_buff_head q;
	enum softhca_ack ack;
	bool again, asks;
	u32 npkts;

	if (!w->mtu)
		return SOFTHCA_NO_PEER;	/* no path: RTR sets one */
	if (!read && !atomic &&
	    softhca_seq_opcode(softhca_wire_tp(qp->ibqp.qp_type), msg->opcode,
			       true, true) < 0)
		return SOFTHCA_NAK_INV;
	if (atomic)
		npkts = 1;
	else if (read)
		npkts = softhca_rc_read_span(msg->len, w->mtu);
	else
		npkts = softhca_seq_npkts(msg->len, w->mtu);
	if (!npkts)
		return SOFTHCA_NAK_INV;	/* a chunk is never that long */
	__skb_queue_head_init(&q);
	spin_lock(&w->ack_lock);
	if (w->ack_inflight) {
		ack = softhca_wire_rc_take(qp, msg, &q);
		spin_unlock(&w->ack_lock);
		/* The local MRs are referenced: the requester's visit. */
		softhca_wire_rd_copy(&q, msg);
		return ack;
	}
	again = w->resend;
	/* In flight before the first packet leaves: its ACK may be quick. */
	w->ack_first = w->sq_psn;
	w->ack_next = softhca_psn_add(w->sq_psn, npkts);
	w->ack_inflight = true;
	w->ack_cars = 0;
	w->ack_pkts = 0;
	WRITE_ONCE(w->ack_moved, false);
	w->ack_read = read;
	w->ack_atomic = atomic;
	if (softhca_wire_rd_begin(w, read, msg->len))
		softhca_wire_rd_sent(qp, !again);
	/*
	 * A READ or an atomic is answered whatever AckReq says.  The time
	 * to the answer is a round trip for a first transmission (a READ's
	 * is not: its responses may take long; wire_read.c times its first).
	 */
	asks = read || atomic || softhca_wire_rc_asks(qp, msg, again);
	softhca_wire_tail_sent(w, asks && !again && !read);
	WRITE_ONCE(w->ack_ready, false);
	spin_unlock(&w->ack_lock);

	if (again) {
		softhca_count_add(sdev, SOFTHCA_CNT_TX_RETRANSMITS,
				  read ? 1 : npkts);
		w->resend = false;
	} else if (atomic) {
		softhca_count(sdev, SOFTHCA_CNT_TX_ATOMICS);
	}
	if (read || atomic) {
		/* Answered whatever AckReq says. */
		w->ack_quiet = false;
		w->quiet_run = 0;
	}
	if (read)
		softhca_wire_send_read(qp, dest, msg, npkts);
	else if (atomic)
		softhca_wire_send_atomic(qp, dest, msg);
	else
		softhca_wire_send_pkts(qp, dest, msg, asks);
	return SOFTHCA_PENDING;
}

/**
 * softhca_wire_rc_append - a whole SEND or WRITE behind the chunk in flight
 * @qp: the sending QP
 * @dest: its peer
 * @msg: the message (first and last)
 *
 * The range in flight grows by its packets before they leave, under
 * ack_lock: an answer to the range before is then an ACK of part of it,
 * never of the whole.
 *
 * Context: @qp's sq.lock held, BHs off.
 * Return: true once sent; false, nothing sent, when the answer to the
 * range in flight is recorded already, or the range is a READ's or an
 * atomic's.
 */
bool softhca_wire_rc_append(struct softhca_qp *qp, struct softhca_dest *dest,
			    struct softhca_msg *msg)
{
	struct softhca_wire_qp *w = &qp->wire;
	u32 npkts = softhca_seq_npkts(msg->len, w->mtu);
	bool ok, asks = false;

	if (softhca_seq_opcode(softhca_wire_tp(qp->ibqp.qp_type), msg->opcode,
			       true, true) < 0)
		return false;
	spin_lock(&w->ack_lock);
	ok = w->ack_inflight && !w->ack_ready && !w->ack_read &&
	     !w->ack_atomic && w->sq_psn == w->ack_next;
	if (ok) {
		w->ack_next = softhca_psn_add(w->ack_next, npkts);
		w->ack_cars++;
		asks = softhca_wire_rc_asks(qp, msg, false);
		softhca_wire_tail_sent(w, asks);
	}
	spin_unlock(&w->ack_lock);
	if (ok)
		softhca_wire_send_pkts(qp, dest, msg, asks);
	return ok;
}

/**
 * softhca_wire_rc_taken - how much of a train the responder has taken
 * @qp: the sending QP, a train in flight
 *
 * Context: @qp's sq.lock held, BHs off.
 * Return: the packets at the start of the range in flight that partial
 * ACKs (or a NAK's PSN) say the responder took; never the whole range
 * (an ACK of it is the train's answer, taken by the next send).
 */
u32 softhca_wire_rc_taken(struct softhca_qp *qp)
{
	struct softhca_wire_qp *w = &qp->wire;
	u32 n;

	spin_lock(&w->ack_lock);
	WRITE_ONCE(w->ack_moved, false);
	n = w->ack_inflight && w->ack_cars ? w->ack_pkts : 0;
	if (n >= softhca_psn_sub(w->ack_next, w->ack_first))
		n = 0;
	spin_unlock(&w->ack_lock);
	return n;
}

/**
 * softhca_wire_rc_slide - the first WQEs of a train retired
 * @qp: the sending QP
 * @pkts: their packets, at most what softhca_wire_rc_taken() said
 * @msgs: how many they were (the first and @msgs - 1 cars)
 *
 * The range in flight starts after them, with the car behind them
 * as its first message: an answer is then taken against what is still
 * in flight, and a go-back-N starts from there.
 *
 * Context: @qp's sq.lock held, BHs off.
 */
void softhca_wire_rc_slide(struct softhca_qp *qp, u32 pkts, u32 msgs)
{
	struct softhca_wire_qp *w = &qp->wire;

	spin_lock(&w->ack_lock);
	if (!WARN_ON_ONCE(!w->ack_inflight || msgs > w->ack_cars ||
			  pkts > w->ack_pkts)) {
		w->ack_first = softhca_psn_add(w->ack_first, pkts);
		w->ack_pkts -= pkts;
		w->ack_cars -= msgs;
	}
	spin_unlock(&w->ack_lock);
	/* Partial ACKs are answers: the rest is probed afresh. */
	w->tail_probes = 0;
}

/*
 * The RC or XRC_INI QP an answer (ACKNOWLEDGE, READ RESPONSE) is for,
 * referenced, when it comes from the QP's peer; else NULL (counted).
 */
struct softhca_qp *softhca_wire_rc_answered(struct softhca_dev *sdev,
					    struct sk_buff *skb,
					    const struct softhca_roce_pkt *pkt)
{
	struct softhca_qp *qp;
	bool peer;

	qp = softhca_qp_get(sdev, softhca_bth_qpn(softhca_pkt_bth(pkt)));
	if (!qp || !softhca_wire_takes(qp->ibqp.qp_type, pkt->mask)) {
		softhca_count(sdev, SOFTHCA_CNT_RX_NO_QP);
		goto drop;
	}
	spin_lock(&qp->wire.rx_lock);
	peer = softhca_wire_from_peer(qp, skb);
	spin_unlock(&qp->wire.rx_lock);
	if (peer)
		return qp;
	softhca_count(sdev, SOFTHCA_CNT_RX_BAD_PEER);
drop:
	if (qp)
		softhca_qp_put(qp);
	return NULL;
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

/*
 * Is this answer the echo of an RNR NAK taken before?  A responder that
 * refused PSN p for want of a receive WQE keeps expecting p, and one
 * that NAKs packets out of sequence (rdma_rxe does, once) answers the
 * packets sent behind p (a train's, a long message's) with a sequence
 * NAK for p.  It follows the RNR NAK closely, but the requester's RNR
 * wait may be shorter (rxe's RNR timer code 1 is 10 us): p may already
 * be out again when it comes, and it would pass for the answer to that
 * attempt, a retry counted against the transport retry count in every
 * RNR round, RETRY_EXC_ERR after seven, though the RNR retry count was
 * unlimited.  The first sequence NAK for p after that RNR NAK is taken
 * as its echo (ignored, counted stale); a later one is an answer.  Were
 * it a real one (p sent again and lost), the ACK timeout sends p again.
 * Called with ack_lock held.
 */
static bool softhca_wire_rc_rnr_echo(struct softhca_wire_qp *w, u32 psn,
				     const struct softhca_aeth *aeth)
{
	if (!w->rnr_echo || psn != w->rnr_echo_psn ||
	    softhca_aeth_type(aeth) != SOFTHCA_AETH_NAK ||
	    softhca_aeth_value(aeth) != SOFTHCA_NAK_PSN_SEQ)
		return false;
	w->rnr_echo = false;
	return true;
}

/**
 * softhca_wire_rcv_ack - an ACKNOWLEDGE or ATOMIC ACKNOWLEDGE arrived
 *	(the completer)
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
	const struct softhca_atmack *atmack = softhca_pkt_atmack(pkt);
	enum softhca_rc_answer a = SOFTHCA_RC_ANS_STALE;
	struct softhca_wire_qp *w;
	struct softhca_qp *qp;
	bool kick = false, ready = false;
	u32 acked;
	u8 ack;

	qp = aeth ? softhca_wire_rc_answered(sdev, skb, pkt) : NULL;
	if (!qp)
		return;
	w = &qp->wire;
	spin_lock(&w->ack_lock);
	if (softhca_wire_rc_rnr_echo(w, psn, aeth)) {
		a = SOFTHCA_RC_ANS_STALE;
	} else if (w->ack_inflight) {
		a = softhca_rc_answer(w->ack_first, w->ack_next, psn,
				      softhca_aeth_syndrome(aeth));
		/*
		 * A READ is answered by its responses, not by an ACK; an
		 * atomic by an ATOMIC ACKNOWLEDGE, and only it.
		 */
		if ((w->ack_read || w->ack_atomic != !!atmack) &&
		    (a == SOFTHCA_RC_ANS_ACK || a == SOFTHCA_RC_ANS_PART))
			a = SOFTHCA_RC_ANS_STALE;
		acked = softhca_rc_acked(w->ack_first, psn, a);
		/* A train's WQEs may retire before its answer comes. */
		if (a == SOFTHCA_RC_ANS_PART && w->ack_cars &&
		    acked > w->ack_pkts && !w->ack_ready) {
			WRITE_ONCE(w->ack_moved, true);
			kick = true;
		}
		w->ack_pkts = max(w->ack_pkts, acked);
		/*
		 * A train's NAK names the message it refuses: those before
		 * it were taken (a chunk alone ends in error either way).
		 */
		if (w->ack_cars && a >= SOFTHCA_RC_ANS_INV)
			w->ack_pkts = max(w->ack_pkts,
					  softhca_psn_sub(psn, w->ack_first));
		softhca_wire_tail_answer(w, a);
	}
	if (a != SOFTHCA_RC_ANS_STALE) {
		/* Packets behind the one refused draw a sequence NAK. */
		w->rnr_echo = a == SOFTHCA_RC_ANS_RNR &&
			      softhca_psn_sub(w->ack_next, psn) > 1;
		w->rnr_echo_psn = psn;
	}
	if (a != SOFTHCA_RC_ANS_STALE && a != SOFTHCA_RC_ANS_PART) {
		ack = softhca_wire_rc_ack_of(a);
		if (!w->ack_ready ||
		    (ack == SOFTHCA_ACK && w->ack_answer == SOFTHCA_RESEND)) {
			if (atmack)
				w->atm_orig = be64_to_cpu(atmack->orig);
			softhca_wire_rc_answer(w, ack, softhca_aeth_value(aeth));
			ready = true;
		}
	}
	spin_unlock(&w->ack_lock);
	softhca_wire_rc_count(sdev, a);
	if (ready) {
		/* Taken now if no poller spins on the QP. */
		if (softhca_engine_answer(qp))
			softhca_count(sdev, SOFTHCA_CNT_RX_ACKS_AT_ONCE);
	} else if (kick) {
		softhca_engine_kick(qp);
	}
	softhca_qp_put(qp);
}

/*
 * @ack is the answer for the chunk in flight, over any recorded before;
 * @rnr: its RNR timer code, with SOFTHCA_RNR (ack_lock held).
 */
void softhca_wire_rc_answer(struct softhca_wire_qp *w, enum softhca_ack ack,
			    u8 rnr)
{
	w->ack_answer = ack;
	w->ack_rnr = rnr;
	w->tail_probe = false;	/* a tail probe's record sets it after */
	/* Pairs with the engine's lockless look. */
	WRITE_ONCE(w->ack_ready, true);
}

/*
 * Record @ack for the chunk in flight unless one was (ack_lock held).
 * Return: true when the requester must be kicked.
 */
bool softhca_wire_rc_record(struct softhca_wire_qp *w, enum softhca_ack ack)
{
	if (w->ack_ready)
		return false;
	softhca_wire_rc_answer(w, ack, 0);
	return true;
}
