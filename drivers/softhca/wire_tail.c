// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: RC on the wire, the tail probe.
 *
 * A packet lost in the middle of what a QP sends is found soon: the
 * responder NAKs the next one as out of sequence (wire_rc_resp.c).  The
 * last packet in flight (the tail), or the answer to it, lost has nothing
 * behind it, and only the local ACK timeout sends it again.  rdma_cm
 * gives a RoCE QP timeout 19 (CMA_IBOE_PACKET_LIFETIME 18 in 6.1: 2.1 s),
 * and a request/response ULP sends mostly tails: nvme-rdma's commands,
 * responses and READs of a 4 KiB block are one packet each.  On a veth
 * losing 5 % of its packets, nvmeof.sh's fio ran at 7-9 IOPS instead of
 * 900-1300, its keep-alives took 2152 ms, and an I/O timed out (30 s).
 *
 * So, as TCP's tail loss probe (RFC 8985): the requester keeps a smoothed
 * round trip of its answers (ack_rtt: from the sending of a packet that
 * asked, AckReq, to its answer in the completer; first transmissions
 * only, Karn's rule), and when what is in flight has waited the probe
 * timeout
 *
 *	PTO = max(2 x srtt, srtt + 4 x rttvar, tail_probe_us)
 *
 * for its answer, it goes again at once (softhca_wire_tail()): the
 * resend is recorded as its answer, a probe (msg->probe), no retry of
 * retry_cnt, from the first packet the responder is not known to have
 * taken, as after a timeout.  The responder takes what it lacks, ACKs a
 * duplicate where it stands (IBA C9-105) or NAKs a gap.  A probe lost, or
 * its answer, is probed again after twice the wait (2 x PTO, then 4 x
 * ...: a backoff, as TCP's RTO) until the requester takes an answer or
 * a partial ACK slides a train; a wait that would end after the local
 * ACK timeout is the timeout's, a retry each time.  So a dead peer still
 * ends in RETRY_EXC_ERR after retry_cnt timeouts, the probes' waits
 * (less than two timeouts in all) later than without.  With one probe
 * only, the 5 % loss above still left 17 timeouts in 16 MiB of fio (the
 * probe or its answer lost).
 *
 * A long SEND or WRITE range (more than SOFTHCA_TAIL_BYTES: its packets
 * times the path MTU) is probed otherwise.  Sent again whole by every
 * probe, a spurious one costs the range: probing 128 KiB WRITEs so,
 * nvmeof.sh's fio without loss drew 750 probes, the host took 6424
 * duplicates, and fio ran at 560 IOPS instead of 1,300.  And the answer
 * to a long range waits for the responder to take every packet (a copy
 * and a CRC-32 each), so a short range's round trip says little of it.
 * So a long range has its own round trip too (ack_rtt_long, timed as
 * above; its PTO is the larger of the two, its floor four times
 * tail_probe_us), and its probe is its last packet sent again asking for
 * an answer (the requester builds it, softhca_req_probe(), as for a
 * quiet train): the responder answers where it stands (ACK, a partial
 * ACK that slides a train, a NAK of a gap) or takes the packet it
 * lacked, the tail.  A responder that had NAKed a gap and lost the NAK
 * drops what is ahead of the gap: softhca's sends the NAK again for a
 * packet that asks again (softhca_rc_rx_ask_again()), without which the
 * last-packet probe changed nothing on nvmeof.sh's rough wire.
 *
 * No probe before a round trip was measured (srtt 0), for a quiet train
 * (it asks after ack_quiet_us, wire_rc.c), or with tail_probe_us 0 (only
 * the timeout).  A READ the reorder timer watches is left to it
 * (wire_read.c has its own probe and stall rules); one whose responses
 * began, or a long one, is handed to it when the probe timeout runs out
 * (softhca_wire_rd_watch_late()): it asks again for the rest once no
 * response came for a window.  Its last responses lost had set nothing
 * watching it, and the READs of nvmeof.sh's target waited out most of the
 * ACK timeouts left on the rough wire so.
 *
 * The floor, 1 ms by default, keeps a probe from racing an answer that
 * is merely late: a guest's ACK takes 20-100 us under TCG, its outliers
 * a millisecond.
 *
 * Counters: tail_probes.
 */
#include "counters.h"
#include "wire.h"

/*
 * Probes in a row without an answer, at most: each waits twice as long
 * as the one before, and the requester sends none whose wait would end
 * after the local ACK timeout's (req.c).
 */
#define SOFTHCA_TAIL_PROBES	8

/*
 * The floor of a long range's PTO, in floors of a short one's: a long
 * range's answer varies more (nvme-rdma's host answers behind its other
 * work), and with the short ranges' floor its spurious probes doubled the
 * target's tail_probes in nvmeof.sh's fio without loss.
 */
#define SOFTHCA_TAIL_LONG_FLOOR	4

/* A range in flight longer than this (bytes) is a long one. */
#define SOFTHCA_TAIL_BYTES	16384

/**
 * softhca_rtt_fold - one more round trip
 * @r: the estimate
 * @rtt: the time, in ns
 *
 * Folded into @r->srtt and its deviation into @r->var, with gains 1/8
 * and 1/4 (TCP's SRTT and RTTVAR, RFC 6298).  The first time starts
 * both.  @r->srtt never falls to 0 once set (0 means none measured).
 */
void softhca_rtt_fold(struct softhca_rtt *r, u64 rtt)
{
	u64 dev;

	if (!r->srtt) {
		r->srtt = rtt ?: 1;
		r->var = rtt / 2;
		return;
	}
	dev = rtt > r->srtt ? rtt - r->srtt : r->srtt - rtt;
	r->var = r->var - r->var / 4 + dev / 4;
	r->srtt = r->srtt - r->srtt / 8 + rtt / 8;
}

/**
 * softhca_rtt_wait - how long an answer is not yet late
 * @r: the estimate
 *
 * Return: twice the smoothed time, or that time plus four deviations
 * (TCP's RTO) when the times vary more; 0 when none was measured.
 */
u64 softhca_rtt_wait(const struct softhca_rtt *r)
{
	return max(2 * r->srtt, r->srtt + 4 * r->var);
}

/**
 * softhca_wire_tail_pto - the probe timeout
 * @r: the answers' round trip
 * @floor: the least wait, in ns (0: no probe)
 *
 * Return: the wait before a tail probe, in ns; 0: no probe.
 */
u64 softhca_wire_tail_pto(const struct softhca_rtt *r, u64 floor)
{
	if (!floor || !r->srtt)
		return 0;
	return max(softhca_rtt_wait(r), floor);
}

/**
 * softhca_wire_tail_sent - the range in flight ends in packets just sent
 * @w: the QP's wire state
 * @timed: the last of them asks for an answer and goes for the first
 *	time: the time to its answer is a round trip
 *
 * Context: ack_lock held.
 */
void softhca_wire_tail_sent(struct softhca_wire_qp *w, bool timed)
{
	lockdep_assert_held(&w->ack_lock);
	w->ack_timed = timed;
	if (timed)
		w->ack_sent = local_clock();
}

/* More than SOFTHCA_TAIL_BYTES in flight.  Context: ack_lock held. */
static bool softhca_wire_tail_long(const struct softhca_wire_qp *w)
{
	u64 bytes = (u64)softhca_psn_sub(w->ack_next, w->ack_first) * w->mtu;

	return bytes > SOFTHCA_TAIL_BYTES;
}

/*
 * How the probe timeout's end is met (see the top of this file): nothing
 * in flight, an answer in, or a READ the reorder timer watches, nothing;
 * a long SEND or WRITE range, SOFTHCA_TAIL_LAST; any other READ, and a
 * short SEND, WRITE or atomic range, SOFTHCA_TAIL_RESEND
 * (softhca_wire_tail() hands a READ whose responses began, or a long
 * one, to the reorder window instead).  Context: ack_lock held.
 */
static enum softhca_tail softhca_wire_tail_kind(const struct softhca_wire_qp *w)
{
	if (!w->ack_inflight || w->ack_ready)
		return SOFTHCA_TAIL_NONE;
	if (w->ack_read)
		return w->rd_watch ? SOFTHCA_TAIL_NONE : SOFTHCA_TAIL_RESEND;
	return softhca_wire_tail_long(w) && !w->ack_atomic ?
	       SOFTHCA_TAIL_LAST : SOFTHCA_TAIL_RESEND;
}

/**
 * softhca_wire_tail_answer - the completer took an answer (@a) for the
 *	range in flight
 * @w: the QP's wire state
 * @a: the answer: an ACK of the whole range times the last packet that
 *	asked; a partial ACK answers an earlier one (the timing stands);
 *	any other ends the timing (what goes next is a resend)
 *
 * local_clock() may differ a little between the CPUs of the sending and
 * of the answer: a round trip is a few microseconds off at worst.
 *
 * Context: ack_lock held.
 */
void softhca_wire_tail_answer(struct softhca_wire_qp *w,
			      enum softhca_rc_answer a)
{
	u64 now;

	lockdep_assert_held(&w->ack_lock);
	if (a == SOFTHCA_RC_ANS_STALE || a == SOFTHCA_RC_ANS_PART)
		return;
	if (a == SOFTHCA_RC_ANS_ACK && w->ack_timed) {
		now = local_clock();
		softhca_rtt_fold(softhca_wire_tail_long(w) ? &w->ack_rtt_long :
							     &w->ack_rtt,
				 now > w->ack_sent ? now - w->ack_sent : 0);
	}
	w->ack_timed = false;
}

/**
 * softhca_wire_tail_wait - how long what is in flight waits for its
 *	answer before a tail probe
 * @qp: the sending QP, what is in flight just sent or grown
 *
 * Context: @qp's sq.lock held, BHs off.
 * Return: the probe timeout in ns, doubled for each probe in a row since
 * the last answer taken; 0: no probe (see the top of this file), the
 * local ACK timeout alone.
 */
u64 softhca_wire_tail_wait(struct softhca_qp *qp)
{
	u64 floor = (u64)READ_ONCE(softhca_engine.tail_us) * NSEC_PER_USEC;
	struct softhca_wire_qp *w = &qp->wire;
	enum softhca_tail kind;
	u64 pto = 0;

	if (!floor || w->tail_probes >= SOFTHCA_TAIL_PROBES)
		return 0;
	spin_lock(&w->ack_lock);
	kind = softhca_wire_tail_kind(w);
	if (kind != SOFTHCA_TAIL_NONE)
		pto = softhca_wire_tail_pto(&w->ack_rtt, floor);
	/*
	 * A long range waits for its own round trip too, once one is
	 * measured (its answer waits for every packet), with its higher
	 * floor; until then the short ranges' PTO.
	 */
	if (kind == SOFTHCA_TAIL_LAST)
		pto = max(pto, softhca_wire_tail_pto(&w->ack_rtt_long,
						     SOFTHCA_TAIL_LONG_FLOOR * floor));
	spin_unlock(&w->ack_lock);
	return pto << w->tail_probes;
}

/**
 * softhca_wire_tail - the probe timeout ran out: what is in flight goes
 *	again
 * @qp: the sending QP, its wait from softhca_wire_tail_wait() over
 *
 * Context: @qp's sq.lock held, BHs off.
 * Return: SOFTHCA_TAIL_RESEND: the resend is recorded as the answer (a
 * probe); SOFTHCA_TAIL_LAST: the requester sends the last packet in flight
 * again, asking (counted here); SOFTHCA_TAIL_NONE: the answer came
 * meanwhile, or a READ went to its reorder window (which asks again for
 * the rest if no response comes for a window): the requester waits the
 * timeout.
 */
enum softhca_tail softhca_wire_tail(struct softhca_qp *qp)
{
	struct softhca_wire_qp *w = &qp->wire;
	enum softhca_tail kind;

	if (w->tail_probes < SOFTHCA_TAIL_PROBES)
		w->tail_probes++;
	spin_lock(&w->ack_lock);
	kind = softhca_wire_tail_kind(w);
	if (kind == SOFTHCA_TAIL_RESEND && w->ack_read &&
	    (w->rd_came || softhca_wire_tail_long(w))) {
		/*
		 * A READ whose responses began, or a long one: the reorder
		 * window takes it over from here (wire_read.c), and asks for
		 * the rest if no response comes for a window.  Its last
		 * responses lost had nothing to set it watching: nvmeof.sh's
		 * rough fio waited out most of its ACK timeouts there.
		 */
		softhca_wire_rd_watch_late(qp);
		kind = SOFTHCA_TAIL_NONE;
	} else if (kind == SOFTHCA_TAIL_RESEND) {
		softhca_wire_rc_answer(w, SOFTHCA_RESEND, 0);
		w->tail_probe = true;
	}
	/* The answer the probe draws is no round trip (Karn). */
	if (kind != SOFTHCA_TAIL_NONE)
		w->ack_timed = false;
	spin_unlock(&w->ack_lock);
	if (kind != SOFTHCA_TAIL_NONE)
		softhca_count(to_sdev(qp->ibqp.device), SOFTHCA_CNT_TAIL_PROBES);
	return kind;
}
