// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: trains, several messages answered as one (RC on the wire).
 *
 * The requester runs one WQE at a time (req.c), and on the wire an RC
 * chunk waits for its answer: a round trip per message, whatever its
 * size, so a run of small messages went at one per round trip.  A train
 * lets the requester go on: once a SEND or WRITE chunk that ends its
 * message is out (SOFTHCA_PENDING), the WQEs posted behind it are taken
 * as cars (copied once into qp->req.cars and checked, as req.c takes a
 * WQE) and each car's whole message is appended behind it through the
 * transport's append (wire_rc.c): its packets follow with the next
 * PSNs and the range in flight grows to cover them.  One answer then
 * covers the train.
 *
 * A car is appended only while the train stays short (SOFTHCA_CARS WQEs,
 * the packets of one chunk in flight), and only a SEND or WRITE whose
 * local SGEs resolve; the first WQE that is none of these stays taken,
 * unsent, and runs when its turn comes as if taken then (its error, if
 * its check found one, is reported then too: WQEs complete in order).
 *
 * The window (softhca_req_train_advance()).  While the train waits for
 * its answer, the requester comes back to it whenever a partial ACK
 * arrived (one per burst of SOFTHCA_TRAIN_BURST messages) or a WQE was
 * posted behind it: the WQEs the responder is known to have taken
 * retire, the first car left becomes the current WQE and the range in
 * flight starts after them (the transport's slide); then the new WQEs
 * are appended while there is room.  So the train slides over the send
 * queue, and a stream of small messages keeps several bursts on the
 * way instead of one per round trip.
 *
 * The answer (softhca_req_train_settle()): an ACK retires the first WQE
 * and every car sent, in order.  Any other answer says how many packets
 * at the train's start the responder took (msg->acked_pkts): the WQEs
 * those packets hold wholly are retired, and the first one they do not
 * becomes the current WQE with that part done, the answer applying to
 * it: sent again from there (go-back-N: the cars behind it follow
 * again), after an RNR wait, or completed with the NAK's error (the
 * QP's flush then completes the cars behind it).  The cars behind the
 * current WQE stay taken and go again in the next train.
 *
 * A long message's chunks (softhca_req_ahead()).  A SEND or WRITE longer
 * than a chunk went chunk by chunk, each waiting for its answer: a round
 * trip per chunk, which a wire with a real round trip pays in full.
 * Once a chunk that does not end its
 * message is out, the next chunk follows it (appended like a car, AckReq
 * on the last packet of each), two in flight at most.  It follows on the
 * requester's next visit, not at once (softhca_req_ahead_later()): the
 * visit ends with the sending CPU's softirq, which runs the receive when
 * the peer is a device of this host whose packets are received on this
 * CPU; the answer is then there before the next visit and the chunks go
 * one by one as before (two at once overran the softirq's budget there:
 * ksoftirqd then shared the CPU with the spinning poller, 6 % less
 * bandwidth).  Where the answer takes a round trip, the next chunk finds
 * it missing and goes.  The partial ACK of
 * the first moves the window (softhca_req_train_advance(): the first's
 * bytes are done, the second becomes the chunk in flight, the third
 * follows), and the answer to both settles them as one
 * (softhca_req_ahead_settle(): an ACK covers both; otherwise the packets
 * taken at the start are done and the rest goes again, go-back-N, in
 * chunks of the usual size).  Cars join only behind a message's last
 * chunk, as before.  qp->req.wire_ahead holds the second chunk's bytes.
 *
 * The cars are the kernel's copies, a ring (softhca_req_car()) whose
 * WQE copies were allocated with the QP: the flush reads their wr_id from
 * there (qp_state.c), never from the slot again.
 *
 * Context: the requester's, sq.lock held with BHs off.
 */
#include "counters.h"
#include "req.h"
#include "wire_seq.h"
#include "wqe.h"

/*
 * WQEs a train takes behind its first one, at most, and those it sends
 * in one burst.  A burst leaves as one transmit batch (net_batch.c),
 * AckReq on its last packet only, so the responder answers each burst
 * once; with several bursts on the way, the answer to the first lets
 * its WQEs retire (softhca_req_train_advance()) while the rest are
 * still travelling, and the application posts more behind them: the
 * train is a window sliding over the send queue, not one round trip per
 * batch.  Sixteen messages a burst keep the bursts long enough for one
 * ACK to matter little and leave four of them in a window of 64.
 */
#define SOFTHCA_CARS		63
#define SOFTHCA_TRAIN_BURST	16

/**
 * softhca_req_cars_alloc - room for a train's cars
 * @qp: an RC or XRC_INI QP with a send queue (others have no trains)
 *
 * Context: process (create_qp).  Return: 0 or -ENOMEM.
 */
int softhca_req_cars_alloc(struct softhca_qp *qp)
{
	u32 n = min_t(u32, SOFTHCA_CARS, qp->sq.ring.entries - 1), i;

	if (!n)
		return 0;
	qp->req.cars = kcalloc(n, sizeof(*qp->req.cars), GFP_KERNEL);
	if (!qp->req.cars)
		return -ENOMEM;
	qp->req.car_wqes = kcalloc(n, qp->sq.ring.stride, GFP_KERNEL);
	if (!qp->req.car_wqes) {
		kfree(qp->req.cars);
		qp->req.cars = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		qp->req.cars[i].wqe = qp->req.car_wqes + i * qp->sq.ring.stride;
	qp->req.max_cars = n;
	return 0;
}

void softhca_req_cars_free(struct softhca_qp *qp)
{
	kfree(qp->req.car_wqes);
	kfree(qp->req.cars);
}

/*
 * The first car becomes the current WQE (its copy copied over the
 * current one's, its entry freed at the ring's head).  Return: what its
 * check found.
 */
int softhca_req_car_promote(struct softhca_qp *qp)
{
	struct softhca_req_car *first = softhca_req_car(qp, 0);

	memcpy(qp->req.wqe, first->wqe, qp->sq.ring.stride);
	qp->req.len = first->len;
	qp->req.car_head = (qp->req.car_head + 1) % qp->req.max_cars;
	qp->req.ncars--;
	if (qp->req.cars_sent)
		qp->req.cars_sent--;
	return first->err;
}

/* Copy the next posted WQE into a car and check it.  Return: false if none. */
static bool softhca_req_car_take(struct softhca_qp *qp)
{
	struct softhca_wq_hdr *hdr = softhca_ring_hdr(&qp->sq.ring);
	struct softhca_req_car *car = softhca_req_car(qp, qp->req.ncars);
	int posted;

	/* Pairs with the producer's store-release of prod. */
	posted = softhca_ring_posted(smp_load_acquire(&hdr->prod),
				     qp->sq.cons, qp->sq.ring.entries);
	/* The current WQE holds slot cons, the cars the ones behind it. */
	if (posted <= 1 + qp->req.ncars)
		return false;	/* a corrupt prod is found by the next take */
	softhca_wqe_copy(car->wqe, softhca_ring_slot(&qp->sq.ring, qp->sq.cons +
						     1 + qp->req.ncars),
			 qp->sq.ring.stride);
	car->err = softhca_req_check(qp, car->wqe, &car->len);
	car->sent = false;
	qp->req.ncars++;
	return true;
}

/**
 * softhca_req_can_lead - may a WQE of @opcode ride in a train (or lead one)?
 * @opcode: its opcode
 *
 * A SEND or WRITE: nothing to wait for but the ACK.
 */
bool softhca_req_can_lead(u8 opcode)
{
	switch (opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

/* A message the train carries: checked, a SEND or WRITE. */
static bool softhca_req_car_ok(const struct softhca_req_car *car)
{
	return !car->err && softhca_req_can_lead(car->wqe->ctrl.opcode);
}

/*
 * Append bytes [@off, @off + @len) of the message of WQE copy @w (@total
 * bytes) behind what is in flight: a car's whole message, or the next
 * chunk of the current WQE.  @again: sent before (it asks for its
 * answer).  Return: false if not sent.
 */
static bool softhca_req_append(struct softhca_qp *qp, struct softhca_dest *dest,
			       const struct softhca_send_wqe *w, u64 off,
			       u32 len, u64 total, bool again,
			       struct softhca_mr **lmr)
{
	struct softhca_cursor local;
	struct softhca_msg msg = {};
	u32 nseg;
	bool ok;

	if (softhca_req_local(qp, w, &nseg, lmr))
		return false;	/* it fails when its turn comes */
	softhca_cursor_init(&local, qp->req.segs, nseg);
	softhca_cursor_skip(&local, off);
	softhca_req_msg(qp, w, dest, off, len, total, &local, &msg);
	msg.quiet &= !again;
	ok = dest->tp->append(qp, dest, &msg);
	if (!(w->ctrl.flags & SOFTHCA_WQE_F_INLINE))
		softhca_segs_put(qp->req.segs, nseg);
	return ok;
}

/* The packets in flight: the current WQE's chunk and the cars sent. */
static u32 softhca_req_train_pkts(struct softhca_qp *qp, u32 mtu)
{
	u32 pkts = softhca_seq_npkts(qp->req.wire_chunk, mtu), i;

	for (i = 0; i < qp->req.cars_sent; i++)
		pkts += softhca_seq_npkts(softhca_req_car(qp, i)->len, mtu);
	return pkts;
}

/**
 * softhca_req_probe - ask for the answer to what is in flight
 * @qp: the QP, waiting for the answer to what is in flight
 * @dest: its peer
 * @lmr: the run's local MR lookup
 *
 * The last packet in flight is built again (its local SGEs resolved
 * again) for the transport's probe: the last of the last car of a train
 * (a whole message), else the last of the current WQE's chunk in flight,
 * or of its chunk sent ahead (a long message: a packet of its middle
 * unless the chunk ends it).  For a quiet train (its last message quiet,
 * whole), and for a tail probe of a long range (wire_tail.c).  SGEs that
 * no longer resolve leave it to the full ACK timeout: what is in flight
 * then goes again, and the WQE fails there.
 *
 * Context: @qp's sq.lock held, BHs off.
 */
void softhca_req_probe(struct softhca_qp *qp, struct softhca_dest *dest,
		       struct softhca_mr **lmr)
{
	const struct softhca_send_wqe *w = qp->req.wqe;
	u64 total = qp->req.len, off, end;
	struct softhca_cursor local;
	struct softhca_msg msg = {};
	u32 mtu = qp->wire.mtu, nseg;

	end = qp->req.done + qp->req.wire_chunk + qp->req.wire_ahead;
	if (qp->req.cars_sent) {
		const struct softhca_req_car *car =
			softhca_req_car(qp, qp->req.cars_sent - 1);

		w = car->wqe;
		total = car->len;
		end = total;
	}
	if (!end || end > total)
		end = total;
	if (!mtu || softhca_req_local(qp, w, &nseg, lmr)) {
		dest->tp->probe(qp, dest, NULL);
		return;
	}
	/* Chunks are whole packets from the message's start. */
	off = end ? rounddown(end - 1, mtu) : 0;
	softhca_cursor_init(&local, qp->req.segs, nseg);
	softhca_cursor_skip(&local, off);
	softhca_req_msg(qp, w, dest, off, end - off, total, &local, &msg);
	dest->tp->probe(qp, dest, &msg);
	if (!(w->ctrl.flags & SOFTHCA_WQE_F_INLINE))
		softhca_segs_put(qp->req.segs, nseg);
}

/**
 * softhca_req_train_ask - a quiet train's wait ran out: ask for its answer
 * @qp: the QP, waiting for the answer to a train that ends quiet
 * @out: what the run leaves to do
 *
 * Nothing was posted behind it within ack_quiet_us: its last packet goes
 * again asking for the answer, which is then waited for as for any
 * train (the local ACK timeout).
 *
 * Return: 1 (a step).
 */
int softhca_req_train_ask(struct softhca_qp *qp, struct softhca_req_out *out)
{
	struct softhca_dest *dest = &out->cache->dest;

	if (softhca_dest_get(qp, qp->req.wqe, dest)) {
		WRITE_ONCE(qp->req.quiet_wait, false);
		return 1;	/* the wait is over: the next visit sends */
	}
	if (softhca_req_quiet(qp, dest)) {
		softhca_count(to_sdev(qp->ibqp.device),
			      SOFTHCA_CNT_TX_QUIET_EXPIRED);
		softhca_req_probe(qp, dest, &out->cache->lmr);
	}
	softhca_req_ack_wait(qp, dest);
	return 1;
}

/**
 * softhca_req_train_late - a quiet train's wait ran out with WQEs behind it
 * @qp: the QP, its quiet wait over (softhca_req_run())
 * @out: what the run leaves to do
 *
 * WQEs posted behind the train before the poller came back to it (busy
 * with the receive or other QPs) join it, which asks or waits quietly
 * again (softhca_req_train_advance()), instead of following a probe: the
 * probe would cost a packet sent again, a duplicate at the responder and
 * an ACK.  In a SEND ping-pong the probes fell from 3-9 % of the hops to
 * 0.5-1 % (2026-11-27).
 *
 * A partial answer that came meanwhile moves the train the same way: its
 * WQEs retire and the rest waits quietly again, as when it comes in time.
 *
 * Return: the steps (tx_quiet_late counts the call), 0 when the train
 * did not move: the caller asks (softhca_req_train_ask()).
 */
int softhca_req_train_late(struct softhca_qp *qp, struct softhca_req_out *out)
{
	int steps;

	if (!softhca_req_train_moved(qp))
		return 0;
	steps = softhca_req_train_advance(qp, out);
	if (steps)
		softhca_count(to_sdev(qp->ibqp.device), SOFTHCA_CNT_TX_QUIET_LATE);
	return steps;
}

/**
 * softhca_req_train_extend - append the WQEs posted behind the train
 * @qp: the QP; its current WQE's last chunk is in flight, unanswered
 *	(just sent, or waiting: softhca_req_train_advance())
 * @dest: their peer (the current WQE's: a connected QP has one)
 * @lmr: the run's local MR lookup kept from one WQE to the next
 * @burst: messages already in the transmit batch (the current WQE's
 *	chunk when it was just sent)
 *
 * Return: the cars appended.
 */
u32 softhca_req_train_extend(struct softhca_qp *qp, struct softhca_dest *dest,
			     struct softhca_mr **lmr, u32 burst)
{
	struct softhca_dev *sdev = to_sdev(qp->ibqp.device);
	u32 mtu = qp->wire.mtu, room, pkts, sent = 0;
	struct softhca_req_car *car;

	if (!dest->tp->append || !mtu || READ_ONCE(qp->state) != IB_QPS_RTS)
		return 0;
	/* The packets in flight: one chunk's, as a single long message's. */
	room = softhca_seq_chunk(READ_ONCE(softhca_engine.wire_pkts), mtu) / mtu;
	pkts = softhca_req_train_pkts(qp, mtu);
	room = room > pkts ? room - pkts : 0;
	for (;;) {
		if (qp->req.cars_sent == qp->req.max_cars)
			goto full;
		if (qp->req.cars_sent == qp->req.ncars &&
		    !softhca_req_car_take(qp))
			break;
		car = softhca_req_car(qp, qp->req.cars_sent);
		if (!softhca_req_car_ok(car))
			goto full;
		pkts = softhca_seq_npkts(car->len, mtu);
		/*
		 * No room; or not sent (its local SGEs do not resolve, or
		 * the answer came): only the answer or WQEs retiring change
		 * that, and trying again each pass would only cost.
		 */
		/* Whole: the room (a chunk's packets) bounds its length. */
		if (pkts > room ||
		    !softhca_req_append(qp, dest, car->wqe, 0, car->len,
					car->len, car->sent, lmr))
			goto full;
		if (car->sent)
			softhca_count_add(sdev, SOFTHCA_CNT_TX_RETRANSMITS, pkts);
		else
			softhca_count(sdev, SOFTHCA_CNT_TX_TRAIN_MSGS);
		car->sent = true;
		qp->req.cars_sent++;
		room -= pkts;
		sent++;
		if (++burst == SOFTHCA_TRAIN_BURST && dest->tp->flush) {
			dest->tp->flush(qp);
			burst = 0;
		}
	}
	return sent;
full:
	/* Only its answer, or WQEs of it retiring, change that. */
	WRITE_ONCE(qp->req.train_full, true);
	/* An answer it did not ask for is one nobody sends. */
	if (softhca_req_quiet(qp, dest)) {
		softhca_count(to_sdev(qp->ibqp.device),
			      SOFTHCA_CNT_TX_QUIET_ASKS);
		softhca_req_probe(qp, dest, lmr);
	}
	return sent;
}

/*
 * May the current WQE's next chunk go behind the one in flight?  Only a
 * SEND's or WRITE's (a READ's or an atomic's answer is data), one at a
 * time, only in RTS.
 */
static bool softhca_req_may_ahead(struct softhca_qp *qp,
				  const struct softhca_dest *dest)
{
	return !qp->req.wire_ahead && dest->tp->append &&
	       softhca_req_can_lead(qp->req.wqe->ctrl.opcode) &&
	       READ_ONCE(qp->state) == IB_QPS_RTS;
}

/**
 * softhca_req_ahead - send the current WQE's next chunk behind the one
 *	in flight
 * @qp: the QP; a chunk of its current WQE that does not end it is in
 *	flight, unanswered (qp->req.wire_chunk), none behind it
 * @dest: its peer
 * @lmr: the run's local MR lookup
 *
 * As softhca_req_may_ahead() allows.  Sent, the train is open (its partial ACK brings the requester
 * back, softhca_req_train_advance()) and full (nothing else joins until
 * the window moves); not sent, nothing changes but the train being full.
 *
 * Return: true when the chunk was sent.
 */
bool softhca_req_ahead(struct softhca_qp *qp, struct softhca_dest *dest,
		       struct softhca_mr **lmr)
{
	u64 off = qp->req.done + qp->req.wire_chunk;
	u32 mtu = qp->wire.mtu, chunk;

	WRITE_ONCE(qp->req.train_full, true);
	if (off >= qp->req.len || !mtu || !softhca_req_may_ahead(qp, dest))
		return false;
	chunk = min_t(u64, qp->req.len - off,
		      softhca_seq_chunk(READ_ONCE(softhca_engine.wire_pkts),
					mtu));
	if (!softhca_req_append(qp, dest, qp->req.wqe, off, chunk, qp->req.len,
				false, lmr))
		return false;
	qp->req.wire_ahead = chunk;
	WRITE_ONCE(qp->req.train_open, true);
	softhca_count(to_sdev(qp->ibqp.device), SOFTHCA_CNT_TX_CHUNKS_AHEAD);
	return true;
}

/**
 * softhca_req_ahead_later - the current WQE's next chunk, on the next visit
 * @qp: the QP; a chunk of its current WQE that does not end it was just
 *	sent (SOFTHCA_PENDING)
 * @dest: its peer
 *
 * Opens the train so that the engine comes back (softhca_req_train_moved())
 * and softhca_req_train_advance() sends the chunk if no answer came.
 */
void softhca_req_ahead_later(struct softhca_qp *qp,
			     const struct softhca_dest *dest)
{
	if (!softhca_req_may_ahead(qp, dest))
		return;
	WRITE_ONCE(qp->req.train_full, false);
	WRITE_ONCE(qp->req.train_open, true);
	WRITE_ONCE(qp->req.ahead_due, true);
}

/**
 * softhca_req_ahead_settle - the answer to a chunk and the one behind it
 * @qp: the QP, qp->req.wire_ahead set
 * @ack: the answer (SOFTHCA_PENDING never)
 * @msg: the first chunk, as the transport answered it: its acked and
 *	last are set here for both chunks
 * @chunk: the first chunk's bytes
 *
 * An ACK covers both.  Any other answer says how many packets at the
 * start the responder took (@msg->acked_pkts; never all of them): their
 * bytes are @msg->acked, and the answer applies to what follows.
 *
 * Return: the bytes of both chunks, for softhca_req_chunk() to go on
 * with as the chunk answered.
 */
u32 softhca_req_ahead_settle(struct softhca_qp *qp, enum softhca_ack ack,
			     struct softhca_msg *msg, u32 chunk)
{
	u32 both = chunk + qp->req.wire_ahead;

	qp->req.wire_ahead = 0;
	WRITE_ONCE(qp->req.train_open, false);
	WRITE_ONCE(qp->req.train_full, false);
	if (ack != SOFTHCA_ACK)
		msg->acked = min_t(u64, (u64)msg->acked_pkts * qp->wire.mtu,
				   both);
	msg->last = qp->req.done + both == qp->req.len;
	return both;
}

/*
 * The partial ACK of the chunk in flight, with the next one behind it:
 * the first's bytes are done, the second is the chunk in flight, and
 * the one after it follows (or, behind the message's last chunk, the
 * WQEs posted since).  Return: the budget steps it cost, 0 when the
 * first is not taken yet.
 */
static int softhca_req_ahead_advance(struct softhca_qp *qp,
				     struct softhca_req_out *out, u32 taken)
{
	struct softhca_dest *dest = &out->cache->dest;
	u32 pkts = softhca_seq_npkts(qp->req.wire_chunk, qp->wire.mtu);
	int steps = 1;

	if (taken < pkts)
		return 0;
	qp->req.done += qp->req.wire_chunk;
	qp->req.wire_chunk = qp->req.wire_ahead;
	qp->req.wire_ahead = 0;
	dest->tp->slide(qp, pkts, 1);
	/* Forward progress: the retry counts and the wait start again. */
	qp->req.rnr_left = qp->attr.rnr_retry;
	qp->req.retry_left = qp->attr.retry_cnt;
	WRITE_ONCE(qp->req.train_full, false);
	if (qp->req.done + qp->req.wire_chunk < qp->req.len)
		steps += softhca_req_ahead(qp, dest, &out->cache->lmr);
	else
		steps += softhca_req_train_extend(qp, dest, &out->cache->lmr, 0);
	if (dest->tp->flush)
		dest->tp->flush(qp);
	/* The wait for what is in flight now (a quiet one if it ends so). */
	softhca_req_ack_wait(qp, dest);
	return steps;
}

/**
 * softhca_req_train_advance - a train on its way, between its answers
 * @qp: the QP, waiting for the answer to its train (qp->req.train_open)
 * @out: what the run leaves to do
 *
 * The WQEs whose packets the responder is known to have taken (partial
 * ACKs: one per burst) retire in order, with their completions, and the
 * range in flight starts after them (the transport's slide); each one
 * retired is forward progress, so the retry counts and the ACK timeout
 * start again.  Then the WQEs posted since join the train, while it has
 * room.  The answer to the whole train is left to softhca_req_chunk(),
 * as before.
 *
 * Return: the budget steps it cost (WQEs retired and appended), 0 when
 * nothing moved.
 */
int softhca_req_train_advance(struct softhca_qp *qp, struct softhca_req_out *out)
{
	struct softhca_dest *dest = &out->cache->dest;
	u32 mtu = qp->wire.mtu, taken, pkts, slid = 0, msgs = 0, added;
	bool quiet;

	if (softhca_dest_get(qp, qp->req.wqe, dest) || !dest->tp->slide)
		return 0;
	if (READ_ONCE(qp->req.ahead_due)) {
		/* No answer yet to the chunk in flight: the next follows. */
		WRITE_ONCE(qp->req.ahead_due, false);
		if (!softhca_req_ahead(qp, dest, &out->cache->lmr))
			return 0;
		if (dest->tp->flush)
			dest->tp->flush(qp);
		softhca_req_ack_wait(qp, dest);
		return 1;
	}
	taken = dest->tp->taken(qp);
	if (qp->req.wire_ahead)
		return softhca_req_ahead_advance(qp, out, taken);
	pkts = softhca_seq_npkts(qp->req.wire_chunk, mtu);
	/* Never the last of the train: that is its answer (ACK). */
	while (qp->req.cars_sent && taken - slid >= pkts) {
		qp->req.done = qp->req.len;
		softhca_req_retire(qp, IB_WC_SUCCESS, out);
		/* Sent cars passed their check. */
		WARN_ON_ONCE(softhca_req_car_promote(qp));
		qp->req.busy = true;
		qp->req.done = 0;
		/* Sent whole: the train's room bounds its length. */
		qp->req.wire_chunk = qp->req.len;
		slid += pkts;
		msgs++;
		pkts = softhca_seq_npkts(qp->req.len, mtu);
	}
	if (msgs) {
		dest->tp->slide(qp, slid, msgs);
		softhca_count_add(to_sdev(qp->ibqp.device),
				  SOFTHCA_CNT_TX_TRAIN_EARLY, msgs);
		qp->req.rnr_left = qp->attr.rnr_retry;
		qp->req.retry_left = qp->attr.retry_cnt;
		softhca_req_ack_wait(qp, dest);
		WRITE_ONCE(qp->req.train_full, false);
	}
	/* Cars only behind a message's last chunk. */
	if (READ_ONCE(qp->req.train_full) ||
	    qp->req.done + qp->req.wire_chunk < qp->req.len)
		return msgs;
	added = softhca_req_train_extend(qp, dest, &out->cache->lmr, 0);
	if (dest->tp->flush)
		dest->tp->flush(qp);
	/*
	 * A quiet wait runs from the last quiet message sent; a train that
	 * asks now (a car that asks, or a probe) waits the ACK timeout.
	 */
	quiet = softhca_req_quiet(qp, dest);
	if ((added && quiet) || (qp->req.quiet_wait && !quiet))
		softhca_req_ack_wait(qp, dest);
	return msgs + added;
}

/**
 * softhca_req_train_settle - the answer to a train
 * @qp: the QP, its current WQE the train's first
 * @ack: the answer (SOFTHCA_PENDING never)
 * @msg: the current WQE's chunk, as the transport answered it
 *	(@msg->acked_pkts, @msg->rnr_timer)
 * @chunk: the bytes of that chunk
 * @out: what the run leaves to do
 *
 * Return: the budget steps it cost when progress was made, else 0 (the
 * requester's loop stops: a wait, or an error).
 */
int softhca_req_train_settle(struct softhca_qp *qp, enum softhca_ack ack,
			     const struct softhca_msg *msg, u64 chunk,
			     struct softhca_req_out *out)
{
	u32 mtu = qp->wire.mtu, sent = qp->req.cars_sent, pkts;
	u32 n = ack == SOFTHCA_ACK ? U32_MAX : msg->acked_pkts;
	bool progress = n > 0;
	int steps = 1;

	/* The cars not retired stay taken; they go again as if never sent. */
	qp->req.cars_sent = 0;
	qp->req.wire_chunk = 0;
	qp->req.train_open = false;
	WRITE_ONCE(qp->req.train_full, false);
	pkts = softhca_seq_npkts(chunk, mtu);
	if (n < pkts) {
		qp->req.done += (u64)n * mtu;
	} else {
		n -= pkts;
		qp->req.done = qp->req.len;
		softhca_req_retire(qp, IB_WC_SUCCESS, out);
		while (sent--) {
			/* Sent cars passed their check. */
			WARN_ON_ONCE(softhca_req_car_promote(qp));
			softhca_req_start(qp);
			pkts = softhca_seq_npkts(qp->req.len, mtu);
			if (n < pkts) {
				qp->req.done = (u64)n * mtu;
				break;
			}
			n -= pkts;
			qp->req.done = qp->req.len;
			softhca_req_retire(qp, IB_WC_SUCCESS, out);
			steps++;
		}
		if (!qp->req.busy)
			return steps;	/* all of it acknowledged */
	}
	/* Forward progress: the retry count starts again (IBA). */
	if (progress)
		qp->req.retry_left = qp->attr.retry_cnt;
	switch (ack) {
	case SOFTHCA_RESEND:
		/* A probe is no retry (msg->probe). */
		return progress || msg->probe ? steps :
		       softhca_req_resend(qp, out);
	case SOFTHCA_RNR:
		softhca_req_rnr(qp, msg->rnr_timer, out);
		return 0;
	case SOFTHCA_ACK:
		/* Cannot be: an ACK covers the whole train. */
		WARN_ON_ONCE(1);
		return 0;
	default:
		softhca_req_retire(qp, softhca_nak_status(ack), out);
		return 0;
	}
}
