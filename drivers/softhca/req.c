// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the requester.
 *
 * softhca_req_run() advances one QP's send queue by up to @budget steps.
 * Each chunk moved (the first one taking its WQE) costs a step per
 * 16 KiB begun, so a visit moves many small messages or a few hundred
 * KiB of a long one.  Taking a WQE is the hostile-ring rule in action:
 * the slot is copied once into qp->req.wqe and only the copy is validated
 * and used; the ring's producer index is read once per step and checked
 * against the kernel's own consumer index.
 *
 * A message is cut into chunks of softhca_engine.chunk bytes so that a
 * 1 GiB RDMA WRITE takes many visits and other QPs run in between; the
 * progress (bytes done) is kernel-private in qp->req.  Each chunk goes
 * to the responder through the transport (loopback.c), which answers
 * like a RoCE responder: ACK, RNR NAK, a NAK that ends the WQE in error,
 * or nothing at all.  WQEs retire in order: the consumer index the process sees
 * moves past a WQE when it is complete, signaled or not, and only
 * signaled WQEs and errors produce a CQE.
 *
 * Retries.  An RNR NAK, and on RC and XRC a message nobody answered for
 * (no such QP, or one not ready to receive: not yet at RTR, or connected
 * elsewhere; on a fabric the packet would be dropped), leave the WQE in
 * place and the QP in a retry wait: after the responder's RNR timer, or
 * the local ACK timeout (4.096 us << timeout), the same chunk is sent
 * again, until rnr_retry or retry_cnt retries were spent
 * (RNR_RETRY_EXC_ERR, RETRY_EXC_ERR).  So a sender that starts before
 * its peer reached RTR, as programs that connect one side after the
 * other do, sees its message arrive once the peer is ready, as on any
 * HCA.  The wait is an hrtimer (never early, so the run it triggers
 * finds the wait over); its expiry hands the QP to the poller, which
 * may be watching the QP at that moment: engine.c keeps such a kick
 * from being lost.
 *
 * On the wire, an RC chunk that ends its SEND or WRITE may take the
 * SENDs and WRITEs posted behind it along in a train (req_train.c), a
 * window of them in flight; they retire in order as ACKs cover them,
 * the train's waits included (softhca_req_train_advance()).
 *
 * FENCE needs no wait here: a WQE starts only after every earlier one
 * has completed (RDMA READs and atomics included; a train carries
 * neither), which is what a fence asks for.
 *
 * Lookups (the destination QP and its device, the local MR, the remote
 * MR) are kept from one WQE to the next in a struct softhca_req_cache,
 * references held, and every use still checks key, PD, rights and range.
 * A doorbell's run keeps them for that run only.  The QP's poller keeps
 * them in qp->req.cache across its runs (softhca_req_try_run(), which
 * takes sq.lock by trylock: a QP another runs is theirs for that pass;
 * a hop of a ping-pong then costs no lookup at all) and is the only
 * thread that touches that cache: it lets go of an entry whose QP is
 * dying or whose MR is dead at its next pass, and of all of them when it
 * stops watching the QP, so a destroy_qp or dereg_mr waits one pass at
 * most for them.
 *
 * Errors that move QPs to ERR (ours, or the responder's for a NAK) are
 * carried out after sq.lock is dropped: the flush takes the queue locks
 * itself, and the responder may be this very QP.
 */
#include <linux/hrtimer.h>
#include <linux/indirect_call_wrapper.h>
#include <linux/sched/clock.h>
#include <rdma/ib_verbs.h>

#include "req.h"
#include "wqe.h"

static u8 softhca_wc_opcode(u8 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

/* Complete the current WQE with @status and free its slot. */
void softhca_req_retire(struct softhca_qp *qp, u8 status,
			struct softhca_req_out *out)
{
	struct softhca_wq_hdr *hdr = softhca_ring_hdr(&qp->sq.ring);
	const struct softhca_send_wqe *w = qp->req.wqe;
	struct softhca_cqe cqe = {
		.wr_id = w->ctrl.wr_id,
		.status = status,
		.opcode = softhca_wc_opcode(w->ctrl.opcode),
		.qp_num = qp->ibqp.qp_num,
	};

	if (status == IB_WC_SUCCESS)
		cqe.byte_len = qp->req.len;

	/*
	 * The slot is free before the completion says so: a process that
	 * polls the CQE and posts at once must find room (perftest's
	 * one-entry send queues got ENOMEM "now and then" when the CQE came
	 * first).  The CQE is built from the kernel's copy, not the slot.
	 */
	qp->req.busy = false;
	qp->sq.cons++;
	/*
	 * Pairs with the producer's load-acquire of cons; the CQE's owner
	 * store-release below orders this store before the CQE too.
	 */
	smp_store_release(&hdr->cons, qp->sq.cons);

	if (status != IB_WC_SUCCESS || (w->ctrl.flags & SOFTHCA_WQE_F_SIGNALED) ||
	    qp->sq_sig_type == IB_SIGNAL_ALL_WR)
		softhca_cq_push(to_scq(qp->ibqp.send_cq), &cqe, false);
	if (status != IB_WC_SUCCESS)
		out->err = true;
	/* A train's WQEs taken behind it are in flight too. */
	if (qp->req.drain_notify && !qp->req.ncars) {
		qp->req.drain_notify = false;
		out->drained = true;
	}
}

/*
 * Validate a WQE's kernel copy @w (never the slot) and find its message
 * length.  Return: 0 or a negative errno (the WQE completes in error).
 */
int softhca_req_check(struct softhca_qp *qp, struct softhca_send_wqe *w,
		      u64 *len)
{
	struct softhca_wqe_bounds b = {
		.qp_type = qp->ibqp.qp_type,
		.stride = qp->sq.ring.stride,
		.max_sge = qp->sq.max_sge,
		.max_inline = qp->sq.max_inline,
		.kernel = !qp->is_user,
	};
	int err;

	err = softhca_send_wqe_check(w, &b, len);
	if (!err && (qp->ibqp.qp_type == IB_QPT_UD ||
		     qp->ibqp.qp_type == IB_QPT_GSI) && *len > qp->req.ud_max)
		err = -EMSGSIZE;	/* a datagram fits one packet */
	if (err)
		*len = 0;
	return err;
}

/* The current WQE (qp->req.wqe, qp->req.len) starts: nothing done yet. */
void softhca_req_start(struct softhca_qp *qp)
{
	qp->req.busy = true;
	qp->req.done = 0;
	qp->req.retry_wait = false;
	qp->req.quiet_wait = false;
	qp->req.wire_chunk = 0;
	qp->req.wire_ahead = 0;
	qp->req.ahead_due = false;
	qp->req.train_open = false;
	WRITE_ONCE(qp->req.train_full, false);
	qp->req.rnr_left = qp->attr.rnr_retry;
	qp->req.retry_left = qp->attr.retry_cnt;
}

/*
 * Take the next WQE: copy it once, validate the copy.  One a train took
 * already (req_train.c) comes first, copied and checked then; it was
 * started, so it also runs in SQD.
 */
static int softhca_req_take(struct softhca_qp *qp, struct softhca_req_out *out)
{
	struct softhca_wq_hdr *hdr = softhca_ring_hdr(&qp->sq.ring);
	enum ib_qp_state state = READ_ONCE(qp->state);
	int posted, err;

	if (qp->req.ncars && (state == IB_QPS_RTS || state == IB_QPS_SQD)) {
		err = softhca_req_car_promote(qp);
		softhca_req_start(qp);
		goto check;
	}
	if (state != IB_QPS_RTS)
		return 0;	/* SQD: nothing new starts; ERR: the flush */
	/* Pairs with the producer's store-release of prod. */
	posted = softhca_ring_posted(smp_load_acquire(&hdr->prod),
				     qp->sq.cons, qp->sq.ring.entries);
	if (posted <= 0) {
		out->fatal = posted < 0;
		return 0;
	}
	softhca_wqe_copy(qp->req.wqe, softhca_ring_slot(&qp->sq.ring,
							qp->sq.cons),
			 qp->sq.ring.stride);
	softhca_req_start(qp);
	err = softhca_req_check(qp, qp->req.wqe, &qp->req.len);
check:
	if (err) {
		qp->req.len = 0;
		softhca_req_retire(qp, err == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
				   IB_WC_LOC_QP_OP_ERR, out);
		return 0;
	}
	return 1;
}

/*
 * @msg: the @len bytes at @off of the message of WQE copy @w (@total
 * bytes in all) for @dest, its payload from (or, a READ, to) @data.
 */
void softhca_req_msg(struct softhca_qp *qp, const struct softhca_send_wqe *w,
		     const struct softhca_dest *dest, u64 off, u32 len,
		     u64 total, struct softhca_cursor *data,
		     struct softhca_msg *msg)
{
	msg->src_qpn = qp->ibqp.qp_num;
	msg->src_dev = qp->ibqp.device->index + 1;
	msg->src_qpt = qp->ibqp.qp_type;
	msg->opcode = w->ctrl.opcode;
	msg->first = !off;
	msg->last = off + len == total;
	msg->solicited = msg->last && (w->ctrl.flags & SOFTHCA_WQE_F_SOLICITED);
	msg->quiet = !(w->ctrl.flags & SOFTHCA_WQE_F_SIGNALED) &&
		     qp->sq_sig_type != IB_SIGNAL_ALL_WR;
	msg->imm = w->ctrl.imm_data;
	msg->qkey = dest->qkey;
	msg->xrc_srqn = w->xrc_srqn;
	msg->remote_addr = w->remote_addr + off;
	msg->rkey = w->rkey;
	msg->compare_add = w->compare_add;
	msg->swap = w->swap;
	msg->len = len;
	msg->total = total;
	msg->data = data;
}

/* The local side of WQE copy @w as qp->req.segs (inline: the copy). */
int softhca_req_local(struct softhca_qp *qp, const struct softhca_send_wqe *w,
		      u32 *nseg, struct softhca_mr **cache)
{
	int access = 0;

	if (w->ctrl.flags & SOFTHCA_WQE_F_INLINE) {
		qp->req.segs[0].mr = NULL;
		qp->req.segs[0].addr = (uintptr_t)(w + 1);
		qp->req.segs[0].len = w->inline_len;
		*nseg = w->inline_len ? 1 : 0;
		return 0;
	}
	if (w->ctrl.opcode == IB_UVERBS_WR_RDMA_READ ||
	    softhca_is_atomic(w->ctrl.opcode))
		access = IB_ACCESS_LOCAL_WRITE;
	return softhca_segs_resolve(to_sdev(qp->ibqp.device), qp->ibqp.pd,
				    (const struct softhca_sge *)(w + 1),
				    w->ctrl.num_sge, access, qp->req.segs, nseg,
				    cache);
}

u8 softhca_nak_status(enum softhca_ack ack)
{
	switch (ack) {
	case SOFTHCA_NAK_INV:
		return IB_WC_REM_INV_REQ_ERR;
	case SOFTHCA_NAK_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case SOFTHCA_NAK_OP:
		return IB_WC_REM_OP_ERR;
	default:
		return IB_WC_RETRY_EXC_ERR;
	}
}

/*
 * Cover the wait ending at @until with qp->retry_timer.  A timer already
 * queued to fire no later stays as it is, and when it fires before the
 * deadline it is set again for the rest (softhca_req_retry_timer()):
 * arming costs clock reads and a clock event device reprogrammed (a
 * guest's HPET and local APIC, device accesses; in a guest sometimes
 * tens of microseconds).  sq.lock, held here and taken by the timer,
 * orders the two.
 */
static void softhca_req_arm(struct softhca_qp *qp, u64 until, u64 now)
{
	lockdep_assert_held(&qp->sq.lock);
	if (READ_ONCE(qp->dying) ||
	    (hrtimer_is_queued(&qp->retry_timer) &&
	     qp->req.retry_armed <= until))
		return;
	qp->req.retry_armed = until;
	hrtimer_start(&qp->retry_timer,
		      ns_to_ktime(until > now ? until - now : 0),
		      HRTIMER_MODE_REL_SOFT);
}

/*
 * Send the current chunk again in @wait_ns.
 *
 * On the wire every RC message starts a wait (for its answer, or a quiet
 * one), each later than the last.  While a poller watches the QP, the
 * poller ends the wait: it reads the clock each pass anyway and looks at
 * every watched QP (softhca_poller_pass()).  With a timer instead, a
 * ping-pong's 100 us quiet waits fired it every third hop, each an
 * interrupt and a softirq on some CPU of the hop's path.  A QP no poller
 * watches (a doorbell ran it) is covered by qp->retry_timer, and so is a
 * watched one's wait when the poller gives the QP back before the wait
 * is over (softhca_req_wait_unwatched()).  A QP whose release races with
 * this: either this sees it unwatched and arms, or the release, which
 * takes sq.lock after it marked the QP unwatched, sees this wait.
 *
 * Deadlines are local_clock() times (the TSC; the monotonic clock reads
 * a guest's HPET, a device access): CPUs may differ a little, so a wait
 * may end that much early or late, never by more.  A watched wait ends
 * at the first pass after its deadline: with the poller's QPs lent (its
 * CPU contended, engine.c), up to a nap later.
 */
static void softhca_req_wait(struct softhca_qp *qp, u64 wait_ns)
{
	u64 now = local_clock(), until = now + wait_ns;

	lockdep_assert_held(&qp->sq.lock);
	qp->req.retry_wait = true;
	WRITE_ONCE(qp->req.quiet_wait, false);
	qp->req.tail_wait = false;
	WRITE_ONCE(qp->req.answer_wait, false);
	WRITE_ONCE(qp->req.retry_until, until);
	if (!softhca_engine_watches(qp))
		softhca_req_arm(qp, until, now);
}

/**
 * softhca_req_wait_unwatched - the poller gave @qp back: time its wait
 * @qp: the QP, no longer watched (its poller holds a reference still)
 *
 * Context: process, no softhca lock held.
 */
void softhca_req_wait_unwatched(struct softhca_qp *qp)
{
	spin_lock_bh(&qp->sq.lock);
	if (qp->req.retry_wait &&
	    READ_ONCE(qp->req.retry_fired) != qp->req.retry_until)
		softhca_req_arm(qp, qp->req.retry_until, local_clock());
	spin_unlock_bh(&qp->sq.lock);
}

/* An RNR NAK: wait the responder's timer, or give up. */
void softhca_req_rnr(struct softhca_qp *qp, u8 min_rnr_timer,
		     struct softhca_req_out *out)
{
	if (!qp->req.rnr_left) {
		softhca_req_retire(qp, IB_WC_RNR_RETRY_EXC_ERR, out);
		return;
	}
	if (qp->req.rnr_left != 7)	/* 7 means retry forever */
		qp->req.rnr_left--;
	softhca_req_wait(qp, softhca_rnr_timer_ns(min_rnr_timer));
}

/* Nobody answered: wait the local ACK timeout and send again, or give up. */
static void softhca_req_no_answer(struct softhca_qp *qp,
				  struct softhca_req_out *out)
{
	u8 timeout = qp->attr.timeout;

	if (timeout && !qp->req.retry_left) {
		softhca_req_retire(qp, IB_WC_RETRY_EXC_ERR, out);
		return;
	}
	if (timeout)
		qp->req.retry_left--;
	softhca_req_wait(qp, softhca_ack_timeout_ns(timeout));
}

/*
 * Wait for the answer to what is in flight, the local ACK timeout at
 * most; ack_quiet_us at most when it ends in a quiet message (wire_rc.c),
 * which asks for no answer: then the train asks (softhca_req_train_ask());
 * else the transport's probe timeout at most when it gives one
 * (wire_tail.c): then what is in flight goes again (softhca_req_tail()).
 */
void softhca_req_ack_wait(struct softhca_qp *qp, const struct softhca_dest *dest)
{
	u64 ns = softhca_ack_timeout_ns(qp->attr.timeout), pto = 0;
	bool quiet = softhca_req_quiet(qp, dest);

	if (quiet)
		ns = min_t(u64, ns, (u64)READ_ONCE(softhca_engine.quiet_us) *
				    NSEC_PER_USEC);
	else if (dest->tp->tail_wait)
		pto = dest->tp->tail_wait(qp);
	if (pto >= ns)
		pto = 0;	/* the timeout comes first */
	softhca_req_wait(qp, pto ?: ns);
	WRITE_ONCE(qp->req.quiet_wait, quiet);
	qp->req.tail_wait = pto != 0;
	WRITE_ONCE(qp->req.answer_wait, true);
}

/*
 * The probe timeout ran out with no answer (softhca_req_ack_wait()):
 * what is in flight goes again on the next step, as a probe; or its last
 * packet goes again now, asking, and the wait goes on (twice as long:
 * wire_tail.c); or, when the transport sends no probe after all, the wait
 * goes on, the local ACK timeout's.  Return: 1 (a step).
 */
static int softhca_req_tail(struct softhca_qp *qp, struct softhca_req_out *out)
{
	struct softhca_dest *dest = &out->cache->dest;
	enum softhca_tail kind;

	qp->req.tail_wait = false;
	if (softhca_dest_get(qp, qp->req.wqe, dest))
		return 1;	/* the wait is over: the next step sends */
	kind = dest->tp->tail(qp);
	if (kind == SOFTHCA_TAIL_LAST)
		softhca_req_probe(qp, dest, &out->cache->lmr);
	if (kind != SOFTHCA_TAIL_RESEND && !READ_ONCE(qp->wire.ack_ready))
		softhca_req_ack_wait(qp, dest);
	return 1;
}

/*
 * RC on the wire: the chunk is out, its ACK comes from softirq (the
 * completer, wire_comp.c).  Wait for it at most the local ACK timeout;
 * the completer's kick, or the timer, brings the requester back, and
 * the transport then hands over the answer, or says to send again.
 * Return: 1 when the answer is already there (the caller's loop goes
 * on and takes it at once), else 0.
 */
static int softhca_req_pending_wait(struct softhca_qp *qp,
				    const struct softhca_dest *dest)
{
	softhca_req_ack_wait(qp, dest);
	if (!READ_ONCE(qp->wire.ack_ready))
		return 0;
	qp->req.retry_wait = false;
	return 1;
}

/*
 * RC on the wire: no answer within the local ACK timeout, or a PSN
 * sequence NAK: a retry of retry_cnt, the chunk goes again at once with
 * the same PSNs.  Return: 1 to send again, 0 when given up.
 */
int softhca_req_resend(struct softhca_qp *qp, struct softhca_req_out *out)
{
	u8 timeout = qp->attr.timeout;

	if (timeout && !qp->req.retry_left) {
		softhca_req_retire(qp, IB_WC_RETRY_EXC_ERR, out);
		return 0;
	}
	if (timeout)
		qp->req.retry_left--;
	return 1;
}

/*
 * What moving @len bytes costs of a visit's budget: one step per 16 KiB
 * begun (at least one), so that a visit moves a few hundred KiB of a
 * long message, not qp_budget whole chunks (16 x 64 KiB took about 2 ms
 * in the guest, a long wait for a small message on the next QP).
 */
#define SOFTHCA_STEP_BYTES	16384

/*
 * REG_MR (kernel QPs), LOCAL_INV and BIND_MW: carried out here, in the
 * send queue's order, as one step.  Return: 1 when done, 0 on an error.
 */
static int softhca_req_local_op(struct softhca_qp *qp,
				struct softhca_req_out *out)
{
	const struct softhca_send_wqe *w = qp->req.wqe;
	u8 status;

	if (w->ctrl.opcode == IB_WR_REG_MR)
		status = softhca_fastreg_reg(qp, w);
	else if (w->ctrl.opcode == IB_UVERBS_WR_BIND_MW)
		status = softhca_mw_bind(qp, w);
	else
		status = softhca_fastreg_local_inv(qp, w->ctrl.imm_data);
	softhca_req_retire(qp, status, out);
	return status == IB_WC_SUCCESS;
}

/*
 * Run one chunk of the current WQE.  Return: the budget steps it cost
 * when progress was made, else 0.
 */
static int softhca_req_chunk(struct softhca_qp *qp, struct softhca_req_out *out)
{
	const struct softhca_send_wqe *w = qp->req.wqe;
	struct softhca_dest *dest = &out->cache->dest;
	struct softhca_msg msg = {};
	struct softhca_cursor local;
	bool ahead = false;
	enum softhca_ack ack;
	u32 nseg, chunk;
	int err;

	if (softhca_opcode_local(w->ctrl.opcode))
		return softhca_req_local_op(qp, out);
	err = softhca_dest_get(qp, w, dest);
	if (err == -ENOENT) {
		/* UC and UD: a message nobody takes is lost, not failed. */
		if (!softhca_qpt_reliable(qp->ibqp.qp_type)) {
			softhca_req_retire(qp, IB_WC_SUCCESS, out);
			return 1;
		}
		softhca_req_no_answer(qp, out);
		return 0;
	}
	/*
	 * RoCEv2 has SEND with invalidate for RC and XRC only: a UC one to
	 * another host fails cleanly instead of arriving as a plain SEND.
	 */
	if (err || (dest->tp == &softhca_wire &&
		    qp->ibqp.qp_type == IB_QPT_UC &&
		    w->ctrl.opcode == IB_WR_SEND_WITH_INV)) {
		softhca_req_retire(qp, IB_WC_LOC_QP_OP_ERR, out);
		return 0;
	}
	if (softhca_req_local(qp, w, &nseg, &out->cache->lmr)) {
		softhca_req_retire(qp, IB_WC_LOC_PROT_ERR, out);
		return 0;
	}
	softhca_cursor_init(&local, qp->req.segs, nseg);
	softhca_cursor_skip(&local, qp->req.done);

	/*
	 * On the wire, whole packets: a chunk is wire_chunk_pkts path-MTU
	 * packets, longer than a same-host one (chunk_bytes) because an RC
	 * chunk waits a round trip for its ACK (256 x 1 KiB: 1.3x the bytes
	 * per second of 64).  An RC chunk in flight keeps its size until
	 * answered (the module parameters may change meanwhile).  Only a
	 * connected QP has a path MTU (RTR; softhca_wire_qp_modify() skips
	 * UD and GSI): a UD or GSI message is one packet of at most the
	 * port's MTU and goes whole.
	 */
	chunk = softhca_engine.chunk;
	if (dest->tp == &softhca_wire && qp->wire.mtu)
		chunk = softhca_seq_chunk(READ_ONCE(softhca_engine.wire_pkts),
					  qp->wire.mtu);
	if (qp->req.wire_chunk)
		chunk = qp->req.wire_chunk;
	chunk = min_t(u64, qp->req.len - qp->req.done, chunk);
	softhca_req_msg(qp, w, dest, qp->req.done, chunk, qp->req.len, &local,
			&msg);

	ack = INDIRECT_CALL_2(dest->tp->send, softhca_loopback_send,
			      softhca_wire_send, qp, dest, &msg);
	if (ack != SOFTHCA_PENDING && qp->req.cars_sent) {
		/* The answer to a train: req_train.c sorts it out. */
		if (!(w->ctrl.flags & SOFTHCA_WQE_F_INLINE))
			softhca_segs_put(qp->req.segs, nseg);
		return softhca_req_train_settle(qp, ack, &msg, chunk, out);
	}
	if (ack != SOFTHCA_PENDING)
		WRITE_ONCE(qp->req.ahead_due, false);	/* answered first */
	if (ack != SOFTHCA_PENDING && qp->req.wire_ahead) {
		/* The answer covers the chunk sent behind it too. */
		chunk = softhca_req_ahead_settle(qp, ack, &msg, chunk);
		ahead = true;
	}
	/*
	 * In flight, the chunk keeps its size; sent again, what is left of
	 * it (an RDMA READ asked again must stay within the PSNs the
	 * responder gave it; a SEND or WRITE that had two chunks in flight
	 * goes on in chunks of the usual size).
	 */
	qp->req.wire_chunk = ack == SOFTHCA_PENDING ? chunk :
			     ack == SOFTHCA_RESEND && !ahead ?
			     chunk - msg.acked : 0;
	/*
	 * The last chunk of a SEND or WRITE: WQEs posted meanwhile may
	 * follow it (a READ's or an atomic's answer comes first).
	 */
	WRITE_ONCE(qp->req.train_open, ack == SOFTHCA_PENDING && msg.last &&
		   dest->tp->append && softhca_req_can_lead(w->ctrl.opcode));
	WRITE_ONCE(qp->req.train_full, false);
	if (msg.acked) {
		/* Forward progress: the retry count starts again (IBA). */
		qp->req.done += msg.acked;
		qp->req.retry_left = qp->attr.retry_cnt;
	}
	if (ack == SOFTHCA_ACK && softhca_is_atomic(msg.opcode))
		softhca_copy_from_kernel(&local, &msg.atomic_orig, 8);
	if (!(w->ctrl.flags & SOFTHCA_WQE_F_INLINE))
		softhca_segs_put(qp->req.segs, nseg);
	if (msg.peer_err && !out->peer_event) {
		out->peer_event = msg.peer_err;
		out->peer = *dest;	/* takes over the references */
		memset(dest, 0, sizeof(*dest));
	}

	switch (ack) {
	case SOFTHCA_ACK:
		qp->req.done += chunk;
		qp->req.rnr_left = qp->attr.rnr_retry;
		qp->req.retry_left = qp->attr.retry_cnt;
		if (msg.last)
			softhca_req_retire(qp, IB_WC_SUCCESS, out);
		return max(1U, DIV_ROUND_UP(chunk, SOFTHCA_STEP_BYTES));
	case SOFTHCA_RNR:
		softhca_req_rnr(qp, msg.rnr_timer, out);
		return 0;
	case SOFTHCA_NO_PEER:
		softhca_req_no_answer(qp, out);
		return 0;
	case SOFTHCA_BUSY:
		return 0;	/* unchanged: the next visit sends it again */
	case SOFTHCA_PENDING:
		/*
		 * The message's last chunk: others may follow it at once;
		 * another of a long SEND or WRITE: its next chunk may, on
		 * the next visit (req_train.c).
		 */
		if (msg.last)
			softhca_req_train_extend(qp, dest, &out->cache->lmr, 1);
		else
			softhca_req_ahead_later(qp, dest);
		if (dest->tp->flush)
			dest->tp->flush(qp);
		return softhca_req_pending_wait(qp, dest);
	case SOFTHCA_RESEND:
		return msg.acked || msg.probe ? 1 : softhca_req_resend(qp, out);
	default:
		softhca_req_retire(qp, softhca_nak_status(ack), out);
		return 0;
	}
}

/* Carry out what a run decided, without sq.lock. */
static void softhca_req_after(struct softhca_qp *qp,
			      struct softhca_req_out *out)
{
	if (out->peer_event) {
		softhca_qp_error(out->peer.qp, out->peer_event);
		softhca_dest_put(&out->peer);
	}
	if (out->fatal)
		softhca_qp_fatal(qp);
	else if (out->err)
		softhca_qp_error(qp, 0);
	if (out->drained)
		softhca_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/* Let go of every cached lookup (none left after). */
void softhca_req_cache_drop(struct softhca_req_cache *cache)
{
	softhca_dest_put(&cache->dest);
	softhca_mr_cache_drop(&cache->lmr);
}

/*
 * softhca_req_run()'s loop, sq.lock held (BHs off): the steps made, and
 * in @out what is left for softhca_req_after() once the lock is let go.
 */
static int softhca_req_steps(struct softhca_qp *qp, u32 budget,
			     struct softhca_req_out *out)
{
	int work = 0, steps;

	lockdep_assert_held(&qp->sq.lock);
	while (work < budget && !out->err && !out->fatal) {
		if (!qp->req.busy) {
			if (!softhca_req_take(qp, out))
				break;
		} else if (qp->req.retry_wait) {
			/* Over when its time is, or an answer came (RC). */
			if (!READ_ONCE(qp->wire.ack_ready) &&
			    READ_ONCE(qp->req.retry_fired) !=
			    qp->req.retry_until) {
				/* A train moves on between its answers. */
				steps = softhca_req_train_moved(qp) ?
					softhca_req_train_advance(qp, out) : 0;
				if (!steps)
					break;
				work += steps;
				continue;
			}
			if (qp->req.quiet_wait && !READ_ONCE(qp->wire.ack_ready)) {
				/*
				 * The wait ran out: WQEs posted behind the
				 * train join it, or else it asks.
				 */
				steps = softhca_req_train_late(qp, out);
				work += steps ?: softhca_req_train_ask(qp, out);
				continue;
			}
			if (qp->req.tail_wait && !READ_ONCE(qp->wire.ack_ready)) {
				work += softhca_req_tail(qp, out);
				continue;
			}
			qp->req.retry_wait = false;
			qp->req.quiet_wait = false;
		} else if (READ_ONCE(qp->state) != IB_QPS_RTS &&
			   READ_ONCE(qp->state) != IB_QPS_SQD) {
			break;
		}
		steps = softhca_req_chunk(qp, out);
		if (!steps)
			break;
		work += steps;
	}
	return work;
}

/**
 * softhca_req_run - advance a QP's send queue
 * @qp: the QP (a reference held by the caller)
 * @budget: steps at most (a WQE taken with its first chunk, or a chunk,
 *	is one step per 16 KiB begun)
 *
 * A doorbell's run: its lookups last for this run only (the poller's
 * runs, softhca_req_try_run(), keep theirs in &qp->req.cache).
 *
 * Context: process context, no softhca lock held.
 * Return: the steps that made progress.
 */
int softhca_req_run(struct softhca_qp *qp, u32 budget)
{
	struct softhca_req_cache run_cache = {};
	struct softhca_req_out out = { .cache = &run_cache };
	int work;

	if (!qp->sq.ring.entries || READ_ONCE(qp->dying))
		return 0;
	spin_lock_bh(&qp->sq.lock);
	work = softhca_req_steps(qp, budget, &out);
	spin_unlock_bh(&qp->sq.lock);
	softhca_req_cache_drop(&run_cache);
	softhca_req_after(qp, &out);
	return work;
}

/**
 * softhca_req_try_run - softhca_req_run() for a QP's poller, unless
 *	another runs the QP
 * @qp: the QP (a reference held by the caller)
 * @budget: as softhca_req_run()'s
 *
 * A doorbell (the poller lent its QPs, or the QP was given back) or a
 * receive softirq taking an answer may hold sq.lock: they run the QP
 * meanwhile, so this pass makes no progress on it, as when the poller
 * waited for the lock and found the work done (a lent poller then naps
 * rather than spins), and the next pass looks again.  Spinning for the
 * lock instead kept BHs off on the poller's CPU for the whole of the
 * doorbell's run, and with them the receive of the very packets that
 * run sent (a 64 B WRITE stream: a tenth of the poller's time spent
 * there, on two vCPUs).
 *
 * Context: process context, no softhca lock held.
 * Return: the steps that made progress; 0 if the lock was held.
 */
int softhca_req_try_run(struct softhca_qp *qp, u32 budget)
{
	struct softhca_req_out out = { .cache = &qp->req.cache };
	int work;

	if (!qp->sq.ring.entries || READ_ONCE(qp->dying))
		return 0;
	if (!spin_trylock_bh(&qp->sq.lock))
		return 0;
	work = softhca_req_steps(qp, budget, &out);
	spin_unlock_bh(&qp->sq.lock);
	softhca_req_after(qp, &out);
	return work;
}

/**
 * softhca_req_answered - take the answer a QP's requester waits for, now
 * @qp: the QP (a reference held), its completer just recorded an answer
 *	(an ACK or a NAK)
 *
 * What the requester's next visit would do with the answer, and no more:
 * the WQEs an ACK covers retire and complete, a NAK's error completes
 * its WQE, an RNR or sequence NAK starts its wait or counts its retry;
 * the next chunk or WQE, or the chunk sent again, waits for that visit
 * (softhca_engine_answer() kicks), since sending is the poller's or the
 * doorbell's work, not a receive softirq's.  A requester running
 * meanwhile holds sq.lock and takes the answer itself.
 *
 * Context: softirq (BHs off), no softhca lock held.
 * Return: true if the answer was taken here.
 */
bool softhca_req_answered(struct softhca_qp *qp)
{
	struct softhca_req_cache run_cache = {};
	struct softhca_req_out out = { .cache = &run_cache };
	bool taken = false;

	if (!qp->sq.ring.entries || READ_ONCE(qp->dying) ||
	    !spin_trylock(&qp->sq.lock))
		return false;
	if (qp->req.busy && qp->req.retry_wait &&
	    READ_ONCE(qp->wire.ack_ready)) {
		qp->req.retry_wait = false;
		qp->req.quiet_wait = false;
		softhca_req_chunk(qp, &out);
		taken = true;
	}
	spin_unlock(&qp->sq.lock);
	softhca_req_cache_drop(&run_cache);
	softhca_req_after(qp, &out);
	return taken;
}

/**
 * softhca_req_retry_timer - a retry wait is over: hand the QP to its poller
 * @t: the QP's retry_timer
 *
 * The timer may fire before the current wait's deadline: waits that
 * ended later than it was armed for left it as it was (softhca_req_wait()).
 * It then goes again for the deadline, unless a poller watches the QP
 * now, which ends the wait itself (softhca_req_wait()).  A requester that
 * armed it again while this waited for sq.lock decided for itself: its
 * arming stands.
 *
 * Context: softirq (a soft hrtimer: it takes sq.lock, a BH lock).
 * destroy_qp cancels the timer after the QP is marked dying (a kick then
 * does nothing) and before the QP is freed.
 */
enum hrtimer_restart softhca_req_retry_timer(struct hrtimer *t)
{
	struct softhca_qp *qp = container_of(t, struct softhca_qp, retry_timer);
	u64 until, now;

	spin_lock(&qp->sq.lock);
	if (hrtimer_is_queued(t)) {
		spin_unlock(&qp->sq.lock);
		return HRTIMER_NORESTART;
	}
	until = qp->req.retry_until;
	now = local_clock();
	if (qp->req.retry_wait && !READ_ONCE(qp->dying) && now < until) {
		/* A poller took the QP since: it ends the wait. */
		if (softhca_engine_watches(qp)) {
			spin_unlock(&qp->sq.lock);
			return HRTIMER_NORESTART;
		}
		qp->req.retry_armed = until;
		hrtimer_set_expires(t, ktime_add_ns(hrtimer_cb_get_time(t),
						    until - now));
		spin_unlock(&qp->sq.lock);
		return HRTIMER_RESTART;
	}
	/* Never early: the deadline it stores is the current one's. */
	WRITE_ONCE(qp->req.retry_fired, until);
	spin_unlock(&qp->sq.lock);
	softhca_engine_kick(qp);
	return HRTIMER_NORESTART;
}
