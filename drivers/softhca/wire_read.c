// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: RC on the wire, the requester's RDMA READ and its responses.
 *
 * A READ chunk is one READ REQUEST (its RETH: the chunk's remote address
 * and length) that uses the PSNs of its response packets, [ack_first,
 * ack_next) (softhca_wire_send_read()).  Its answer is the READ RESPONSE
 * packets, whose data belongs in the requester's buffer; but the
 * completer runs in softirq and holds no reference to the local MRs (the
 * requester takes them and drops them within one visit).  So the
 * completer (softhca_wire_rcv_read_resp()) checks each response
 * (softhca_rc_read_resp(): its opcode and payload length for its place)
 * and queues its skb on the QP: rd_q, in PSN order, at most the chunk's
 * packets (the PSN range bounds it); it records ACK when the last is
 * taken.  The requester's next visit, holding its MR references again,
 * copies the queued payload into msg->data (softhca_wire_rd_take(),
 * softhca_wire_rd_copy()).
 *
 * Loss and reordering.  A response ahead of the one expected (one before
 * it was lost, or the wire reordered them) is held: rd_ooo, one a PSN,
 * the chunk's range bounding it too (softhca_wire_rd_hold()); it moves
 * to rd_q when those before it come (softhca_wire_rd_settle()).  When
 * the chunk's last response has come and some before it have not, after
 * at least one was taken in order in this transmission, nothing more is
 * coming for them: SOFTHCA_RESEND is recorded.  A misshapen response
 * records it at once, the timer when nothing comes (a lost first or last
 * response).  The responses taken in order are then kept (msg->acked)
 * and the READ goes again for the rest of the chunk, from the first PSN
 * missing: the responder reads again what a duplicate READ asks.  The
 * responses held stay held (softhca_wire_rd_trim() keeps those within
 * the READ sent again), and each PSN is taken from whichever
 * transmission brings it first; until the requester takes a recorded
 * SOFTHCA_RESEND, responses are still taken and held, and the chunk's
 * last one turns it into an ACK.  So a lossy wire asks for a chunk's
 * rest a few times, not once a response lost (that had sent about
 * fifteen packets on the veth for each taken from rxe under the rough
 * wire of selftests/wire_bulk.sh, two now).  Each READ sent again starts
 * at or after the one before (rd_next only moves on): rxe takes a
 * duplicate READ only at or after the address its last one named.
 *
 * The reorder window.  A response missing with later ones held, the
 * last response of a chunk lost with nothing after it, and a READ
 * REQUEST lost (nothing answers it) would wait the local ACK timeout (67
 * ms at the usual timeout 14); a response held may only be late: the
 * wire reordered it.  So a transmission is watched by a timer of its own
 * (rd_timer) from its start when the chunk has SOFTHCA_RD_WATCH_PKTS
 * packets or more (a short READ is not worth a timer's arming per READ),
 * else from its first response held: every read_reorder_us (4 ms by
 * default; half the local ACK timeout at most), the timer looks whether
 * rd_next moved since its last look (softhca_wire_rd_look()).  Moved:
 * responses are coming, it looks again later.  Not moved, with some
 * response of the transmission in: the one expected stayed missing a
 * whole window while the responder answered behind it, or the responses
 * stopped short of the last: SOFTHCA_RESEND, as above (read_stalls).  A
 * resend with progress in the transmission is no retry (req.c).  Not
 * moved and nothing in, twice the smoothed time to a first response
 * after it was sent (rd_rtt, from first transmissions only: Karn's
 * rule), or that plus four deviations when the times vary more
 * (softhca_wire_rd_probe_wait()): the READ goes again as a probe
 * (read_probes; a probe after one window alone sent four for each READ
 * REQUEST lost on the rough wire, whose round trip is 4 ms).  An early
 * resend without progress (the probe, or a first response missing) goes
 * up to SOFTHCA_RD_PROBES times in a row, no retry (msg->probe), each
 * transmission watched for twice the window of the one before (a probe
 * once only left 1-5 ACK timeouts of 2.1 s in each round of nvmeof.sh's
 * rough fio, a READ REQUEST or its first response lost twice running);
 * then only the local ACK timeout sends the READ again, a retry each
 * time, until a response is taken in order, so the timeout and
 * retry_cnt stay the measure of a dead peer, and a response lost every
 * time (a path MTU the wire does not carry) still ends in RETRY_EXC_ERR.
 * The window is the smoothed time to a first response when that is
 * longer (a slow responder pauses as long).  Under selftests/wire_bulk.sh's
 * rough wire, whose reordering is 2 ms, most of the time of a READ from
 * rxe had gone to waiting out timeouts (106 resends of 508 in a 64 MiB
 * run).
 *
 * A NAK (the responder refused the READ) arrives as an ACKNOWLEDGE as
 * for any request (wire_rc.c); a plain ACK means nothing to a READ and
 * is ignored.
 *
 * Counters: rx_read_resps (READ RESPONSE packets taken or held; stale
 * ones, and one held already, count as rx_stale_acks), rx_read_held
 * (those held ahead of a gap), read_stalls and read_probes (the
 * reorder window's resends).
 *
 * Context: sending under sq.lock with BHs off; the completer and the
 * reorder timer (a soft hrtimer) in softirq.
 * Lock order as wire_rc.c's: sq.lock, then ack_lock; the completer takes
 * rx_lock (to check the peer) and ack_lock one after the other.
 */
#include "counters.h"
#include "wire.h"

/*
 * The READ responses a visit took over (softhca_wire_rc_take()): their
 * payload into the requester's buffer, then freed.  Called without
 * ack_lock: the queue is the caller's alone now.
 */
void softhca_wire_rd_copy(struct sk_buff_head *q, struct softhca_msg *msg)
{
	struct softhca_wire_payload pl;
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(q))) {
		const struct softhca_rd_cb *cb = softhca_rd_cb(skb);

		softhca_wire_payload(skb, cb->off, cb->len, &pl);
		softhca_copy(msg->data, &pl.cur, cb->len);
		consume_skb(skb);
	}
}

/*
 * The responses held stay only for a READ sent again for the chunk's
 * rest, and only those within its PSNs.
 */
static void softhca_wire_rd_trim(struct softhca_wire_qp *w, bool read)
{
	struct sk_buff *skb, *tmp;

	skb_queue_walk_safe(&w->rd_ooo, skb, tmp) {
		if (read && softhca_psn_in(w->ack_first, w->ack_next,
					   softhca_rd_cb(skb)->psn))
			continue;
		__skb_unlink(skb, &w->rd_ooo);
		consume_skb(skb);
	}
}

/* A chunk this long has the reorder timer watch it from its start. */
#define SOFTHCA_RD_WATCH_PKTS	16

/* Early resends without progress in a row, at most (see above). */
#define SOFTHCA_RD_PROBES	3

/**
 * softhca_wire_rd_begin - a chunk's transmission begins
 * @w: the QP's wire state, its range in flight [ack_first, ack_next) set
 * @read: the chunk is a READ
 * @len: its bytes
 *
 * Sets what the completer checks responses against; after a resend
 * (rd_resume), the READ resumes one partly answered.
 * Context: ack_lock held.
 * Return: whether the reorder timer is to watch it from now
 * (softhca_wire_rd_arm()).
 */
bool softhca_wire_rd_begin(struct softhca_wire_qp *w, bool read, u32 len)
{
	w->rd_next = w->ack_first;
	w->rd_len = len;
	w->rd_mtu = w->mtu;
	w->rd_mid = read && w->rd_resume;
	w->rd_resume = false;
	w->rd_last = false;
	w->rd_came = false;
	w->rd_timed = false;
	w->rd_sample = false;
	w->rd_probe = false;
	w->rd_seen = w->rd_next;
	w->rd_watch = read && softhca_psn_sub(w->ack_next, w->ack_first) >=
			      SOFTHCA_RD_WATCH_PKTS;
	softhca_wire_rd_trim(w, read);
	return w->rd_watch;
}

/*
 * A READ's answer: its responses queued so far move to @q.  ACK: all of
 * them (the whole chunk); no answer or a resend: the responses taken in
 * order are kept, whole MTUs, and the rest is asked for again; a NAK:
 * none.  Called with ack_lock held.
 */
u32 softhca_wire_rd_take(struct softhca_wire_qp *w, enum softhca_ack ack,
			 struct softhca_msg *msg, struct sk_buff_head *q)
{
	u32 n = skb_queue_len(&w->rd_q);

	skb_queue_splice_init(&w->rd_q, q);
	w->rd_resume = false;
	msg->probe = ack == SOFTHCA_RESEND && w->rd_probe;
	w->rd_probe = false;
	if (ack == SOFTHCA_ACK)
		return 0;
	if (ack != SOFTHCA_RESEND || (u64)n * w->rd_mtu >= msg->len) {
		__skb_queue_purge(q);
		__skb_queue_purge(&w->rd_ooo);
		return 0;
	}
	/*
	 * Sent again from its first PSN, a READ is the same READ again; from
	 * a later one, the responder continues the original responses.
	 */
	w->rd_resume = w->rd_mid || n;
	msg->acked = n * w->rd_mtu;
	return n;
}

/*
 * A READ chunk: one READ REQUEST, its RETH the chunk's remote range; it
 * uses @npkts PSNs, one per response packet.
 */
void softhca_wire_send_read(struct softhca_qp *qp, struct softhca_dest *dest,
			    struct softhca_msg *msg, u32 npkts)
{
	struct softhca_roce_fields f = {
		.opcode = SOFTHCA_RC(RDMA_READ_REQUEST),
		.va = msg->remote_addr,
		.rkey = msg->rkey,
		.dma_len = msg->len,
	};

	softhca_wire_rc_request(qp, dest, msg, &f, npkts);
}

/*
 * Hold a response ahead of the one expected, in PSN order; one already
 * held is not held twice.  Return: whether it was.  Called with ack_lock
 * held.
 */
static bool softhca_wire_rd_hold(struct softhca_wire_qp *w,
				 struct sk_buff *skb, u32 psn)
{
	u32 i = softhca_psn_sub(psn, w->rd_next);
	struct sk_buff *at;

	/* Mostly in order: from the tail. */
	skb_queue_reverse_walk(&w->rd_ooo, at) {
		u32 j = softhca_psn_sub(softhca_rd_cb(at)->psn, w->rd_next);

		if (j == i)
			return false;
		if (j < i) {
			__skb_queue_after(&w->rd_ooo, at, skb_get(skb));
			return true;
		}
	}
	__skb_queue_head(&w->rd_ooo, skb_get(skb));
	return true;
}

/*
 * After a response was taken or held: those held that now follow in
 * order are taken too; the last taken answers the READ (an ACK, even
 * over a SOFTHCA_RESEND the requester has not taken yet).  Else, once
 * the chunk's last response came and one was taken in order in this
 * transmission, what is missing before it is lost: SOFTHCA_RESEND, a
 * resend with progress (one without progress, the first response of the
 * transmission lost, is left to the timer, as a retry).  Return: whether
 * the engine should look.  Called with ack_lock held.
 */
static bool softhca_wire_rd_settle(struct softhca_wire_qp *w)
{
	struct sk_buff *skb;

	while ((skb = skb_peek(&w->rd_ooo)) &&
	       softhca_rd_cb(skb)->psn == w->rd_next) {
		__skb_unlink(skb, &w->rd_ooo);
		__skb_queue_tail(&w->rd_q, skb);
		w->rd_next = softhca_psn_add(w->rd_next, 1);
	}
	if (w->rd_next == w->ack_next) {
		softhca_wire_rc_answer(w, SOFTHCA_ACK, 0);
		return true;
	}
	if (w->rd_last && w->rd_next != w->ack_first)
		return softhca_wire_rc_record(w, SOFTHCA_RESEND);
	return false;
}

/**
 * softhca_wire_rd_resp - the completer's step for one READ RESPONSE
 * @w: the QP's wire state
 * @skb: the packet (a reference is taken when it is kept)
 * @psn: its PSN
 * @opcode: its opcode, as RC's
 * @off: its payload's offset from @skb->data
 * @paylen: its payload bytes
 * @kick: out: the engine should look (an answer was recorded)
 *
 * Context: ack_lock held.
 * Return: what became of it (softhca_rc_read_resp(); STALE as well for
 * one held already).
 */
enum softhca_rc_rd_verdict softhca_wire_rd_resp(struct softhca_wire_qp *w,
						struct sk_buff *skb, u32 psn,
						u8 opcode, u32 off, u32 paylen,
						bool *kick)
{
	enum softhca_rc_rd_verdict v = SOFTHCA_RC_RD_STALE;

	*kick = false;
	/* A resend recorded and not yet taken still gathers responses. */
	if (w->ack_inflight && w->ack_read &&
	    (!w->ack_ready || w->ack_answer == SOFTHCA_RESEND))
		v = softhca_rc_read_resp(w->ack_first, w->ack_next, w->rd_next,
					 psn, opcode, paylen, w->rd_len,
					 w->rd_mtu, w->rd_mid);
	if (v == SOFTHCA_RC_RD_TAKE || v == SOFTHCA_RC_RD_DONE ||
	    v == SOFTHCA_RC_RD_AHEAD) {
		w->rd_came = true;
		softhca_rd_cb(skb)->off = off;
		softhca_rd_cb(skb)->len = paylen;
		softhca_rd_cb(skb)->psn = psn;
	}
	switch (v) {
	case SOFTHCA_RC_RD_TAKE:
	case SOFTHCA_RC_RD_DONE:
		__skb_queue_tail(&w->rd_q, skb_get(skb));
		w->rd_next = softhca_psn_add(w->rd_next, 1);
		/* Progress: an early resend may help again. */
		w->rd_probes = 0;
		*kick = softhca_wire_rd_settle(w);
		break;
	case SOFTHCA_RC_RD_AHEAD:
		if (!softhca_wire_rd_hold(w, skb, psn))
			v = SOFTHCA_RC_RD_STALE;	/* held already */
		if (softhca_psn_sub(w->ack_next, psn) == 1)
			w->rd_last = true;
		*kick = softhca_wire_rd_settle(w);
		break;
	case SOFTHCA_RC_RD_BAD:
		/* Misshapen: ask again for the rest now. */
		*kick = softhca_wire_rc_record(w, SOFTHCA_RESEND);
		break;
	default:
		break;
	}
	return v;
}

/*
 * The reorder timer is to watch the READ in flight from here, its look
 * comparing rd_next with where it is now; false when it watches already.
 * Context: ack_lock held.
 */
static bool softhca_wire_rd_watch_from(struct softhca_wire_qp *w)
{
	if (w->rd_watch)
		return false;
	w->rd_watch = true;
	w->rd_seen = w->rd_next;
	return true;
}

/**
 * softhca_wire_rd_watch - should the reorder timer watch the transmission?
 * @w: the QP's wire state
 * @v: what became of the response that just came (softhca_wire_rd_resp())
 *
 * A short chunk is watched from its first response held, while no answer
 * is recorded (a long one is from its start); the timer's first look
 * compares rd_next with what it is now.
 * Context: ack_lock held.
 * Return: whether to arm the timer.
 */
bool softhca_wire_rd_watch(struct softhca_wire_qp *w,
			   enum softhca_rc_rd_verdict v)
{
	if (w->ack_ready || v != SOFTHCA_RC_RD_AHEAD)
		return false;
	return softhca_wire_rd_watch_from(w);
}

/**
 * softhca_wire_rd_look - the reorder timer looks at the READ it watches
 * @w: the QP's wire state
 * @early: too early for a probe: the READ went less than twice the
 *	smoothed time to its first response ago (rd_rtt)
 *
 * An early resend without progress in the transmission (nothing came, or
 * its first response is missing: lost, or late behind what the responder
 * still sends of an earlier transmission) goes as a probe: no retry, up
 * to SOFTHCA_RD_PROBES times in a row, each watched for a window twice
 * as long.  After them, until a response is taken in order, only the
 * local ACK timeout sends the READ again, a retry each time.  On a slow
 * responder (a debug kernel's) such first responses came more than a
 * window late time after time, and counting each early resend as a
 * retry ended READs in RETRY_EXC_ERR.
 *
 * Context: ack_lock held.
 * Return: SOFTHCA_RD_GONE: nothing to watch any more (answered, another
 * chunk in flight, or an early resend without progress went already:
 * the local ACK timeout's); SOFTHCA_RD_LATER: responses were taken since
 * the last look, or none came yet and it is @early: look again a window
 * later; SOFTHCA_RD_STALLED: none taken since, some of the transmission
 * came, and SOFTHCA_RESEND is recorded; SOFTHCA_RD_PROBE: none of the
 * transmission came, and SOFTHCA_RESEND is recorded.
 */
enum softhca_rd_look softhca_wire_rd_look(struct softhca_wire_qp *w,
					  bool early)
{
	if (!w->rd_watch || !w->ack_inflight || !w->ack_read || w->ack_ready)
		return SOFTHCA_RD_GONE;
	if (w->rd_next != w->rd_seen) {
		w->rd_seen = w->rd_next;
		return SOFTHCA_RD_LATER;
	}
	if (!w->rd_came && early)
		return SOFTHCA_RD_LATER;
	if (w->rd_next == w->ack_first) {
		if (w->rd_probes >= SOFTHCA_RD_PROBES) {
			w->rd_watch = false;
			return SOFTHCA_RD_GONE;
		}
		w->rd_probes++;
		w->rd_probe = true;
	}
	softhca_wire_rc_record(w, SOFTHCA_RESEND);
	return w->rd_came ? SOFTHCA_RD_STALLED : SOFTHCA_RD_PROBE;
}

/*
 * The window: read_reorder_us, or the smoothed time to a first response
 * when that is longer (a slow responder pauses as long), doubled for each
 * early resend without progress before, half the local ACK timeout at
 * most; 0: off.
 */
static u64 softhca_wire_rd_window(const struct softhca_qp *qp)
{
	u64 ns = (u64)READ_ONCE(softhca_engine.reorder_us) * NSEC_PER_USEC;

	if (!ns)
		return 0;
	ns = max(ns, qp->wire.rd_rtt.srtt) << qp->wire.rd_probes;
	return min(ns, softhca_ack_timeout_ns(READ_ONCE(qp->attr.timeout)) / 2);
}

/* Arm the reorder timer a window from @now, or watch nothing (0: off). */
static void softhca_wire_rd_due(struct softhca_qp *qp, ktime_t now)
{
	struct softhca_wire_qp *w = &qp->wire;
	u64 window = softhca_wire_rd_window(qp);

	if (!window) {
		w->rd_watch = false;
		return;
	}
	w->rd_due = ktime_add_ns(now, window);
	hrtimer_start(&w->rd_timer, w->rd_due, HRTIMER_MODE_ABS_SOFT);
}

/**
 * softhca_wire_rd_arm - the reorder timer watches the READ from now on
 * @qp: the QP, its wire.rd_watch set by softhca_wire_rd_watch()
 *
 * Context: ack_lock held.
 */
void softhca_wire_rd_arm(struct softhca_qp *qp)
{
	lockdep_assert_held(&qp->wire.ack_lock);
	softhca_wire_rd_due(qp, ktime_get());
}

/**
 * softhca_wire_rd_watch_late - the reorder timer watches the READ from now
 * @qp: the QP, a READ in flight, its answer a probe timeout late
 *	(wire_tail.c): its responses began and stopped short of the last
 *	with none held after a gap, or it is long and none came
 *
 * Context: ack_lock held.
 */
void softhca_wire_rd_watch_late(struct softhca_qp *qp)
{
	lockdep_assert_held(&qp->wire.ack_lock);
	if (softhca_wire_rd_watch_from(&qp->wire))
		softhca_wire_rd_arm(qp);
}

/**
 * softhca_wire_rd_sent - a READ watched from its sending goes out
 * @qp: the QP, its wire.rd_watch set by softhca_wire_rd_begin()
 * @first: its first transmission: the time to its first response is the
 *	round trip's (a resend's first response may answer an earlier
 *	transmission: not timed, as Karn's rule has it)
 *
 * Context: ack_lock held.
 */
void softhca_wire_rd_sent(struct softhca_qp *qp, bool first)
{
	struct softhca_wire_qp *w = &qp->wire;
	ktime_t now = ktime_get();

	lockdep_assert_held(&w->ack_lock);
	w->rd_sent = now;
	w->rd_timed = true;
	w->rd_sample = first;
	softhca_wire_rd_due(qp, now);
}

/* The first response of the READ timed from its sending came. */
static void softhca_wire_rd_rtt(struct softhca_wire_qp *w)
{
	u64 rtt = ktime_to_ns(ktime_sub(ktime_get(), w->rd_sent));

	softhca_rtt_fold(&w->rd_rtt, rtt);
}

/**
 * softhca_wire_rd_probe_wait - how long a READ nothing answered waits
 * @w: the QP's wire state
 *
 * From its sending, before it may go again as a probe: twice the
 * smoothed time to a first response, or that time plus four deviations
 * (TCP's RTO) when the times vary more.  A responder answering READs
 * behind other long READs (nvme-rdma's host under fio) varies by more
 * than its mean: twice the mean alone probed 6-9 % of nvmeof.sh's long
 * READs on a lossless veth (each then answered in full twice), the
 * deviations 2.4-2.9 %.  Context: ack_lock held.
 */
u64 softhca_wire_rd_probe_wait(const struct softhca_wire_qp *w)
{
	return softhca_rtt_wait(&w->rd_rtt);
}

/**
 * softhca_wire_rd_timer - the reorder window is over: look at the READ
 * @t: the QP's rd_timer
 *
 * Context: softirq (a soft hrtimer: it takes ack_lock, a lock of the
 * receive softirq).  destroy_qp cancels it once no packet can reach the
 * QP (nothing arms it after that) and before the QP is freed.
 */
enum hrtimer_restart softhca_wire_rd_timer(struct hrtimer *t)
{
	struct softhca_qp *qp = container_of(t, struct softhca_qp,
					     wire.rd_timer);
	struct softhca_wire_qp *w = &qp->wire;
	enum softhca_rd_look look = SOFTHCA_RD_GONE;
	ktime_t now = hrtimer_cb_get_time(t), probe_at;
	u64 wait;

	spin_lock(&w->ack_lock);
	/* Armed again while this waited for the lock: that arming stands. */
	if (hrtimer_is_queued(t)) {
		spin_unlock(&w->ack_lock);
		return HRTIMER_NORESTART;
	}
	if (!ktime_before(now, w->rd_due)) {
		wait = softhca_wire_rd_probe_wait(w);
		probe_at = ktime_add_ns(w->rd_sent, wait);
		look = softhca_wire_rd_look(w, w->rd_timed &&
					    ktime_before(now, probe_at));
	}
	if (look == SOFTHCA_RD_LATER) {
		w->rd_due = ktime_add_ns(now, softhca_wire_rd_window(qp));
		hrtimer_set_expires(t, w->rd_due);
	}
	spin_unlock(&w->ack_lock);
	if (look == SOFTHCA_RD_STALLED || look == SOFTHCA_RD_PROBE) {
		softhca_count(to_sdev(qp->ibqp.device),
			      look == SOFTHCA_RD_PROBE ? SOFTHCA_CNT_READ_PROBES :
							 SOFTHCA_CNT_READ_STALLS);
		softhca_engine_kick(qp);
	}
	return look == SOFTHCA_RD_LATER ? HRTIMER_RESTART : HRTIMER_NORESTART;
}

/**
 * softhca_wire_rcv_read_resp - a READ RESPONSE arrived (the completer)
 * @sdev: the device bound to the netdev it arrived on (held)
 * @skb: the packet (linear, checked; not consumed: a reference is taken
 *	to queue it)
 * @pkt: its parse
 *
 * Checked against the READ in flight (softhca_rc_read_resp()) and, when
 * it is the one expected, queued for the requester, or held when it is
 * ahead of that one; nothing is written to the requester's memory here.
 *
 * Context: softirq.
 */
void softhca_wire_rcv_read_resp(struct softhca_dev *sdev, struct sk_buff *skb,
				const struct softhca_roce_pkt *pkt)
{
	u32 psn = softhca_bth_psn(softhca_pkt_bth(pkt));
	enum softhca_rc_rd_verdict v;
	struct softhca_wire_qp *w;
	struct softhca_qp *qp;
	bool kick, first;

	qp = softhca_wire_rc_answered(sdev, skb, pkt);
	if (!qp)
		return;
	w = &qp->wire;
	spin_lock(&w->ack_lock);
	first = !w->rd_came;
	/* The payload's offset: pkt->payload counts from skb->data. */
	v = softhca_wire_rd_resp(w, skb, psn,
				 softhca_wire_op(IB_QPT_RC, pkt->opcode),
				 pkt->payload, pkt->paylen, &kick);
	if (first && w->rd_came && w->rd_sample)
		softhca_wire_rd_rtt(w);
	if (softhca_wire_rd_watch(w, v))
		softhca_wire_rd_arm(qp);
	spin_unlock(&w->ack_lock);
	softhca_count(sdev, v == SOFTHCA_RC_RD_STALE ?
		      SOFTHCA_CNT_RX_STALE_ACKS : SOFTHCA_CNT_RX_READ_RESPS);
	if (v == SOFTHCA_RC_RD_AHEAD)
		softhca_count(sdev, SOFTHCA_CNT_RX_READ_HELD);
	if (kick)
		softhca_engine_kick(qp);
	softhca_qp_put(qp);
}
