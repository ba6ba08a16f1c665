// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the pollers and the doorbell.
 *
 * Work reaches the engine two ways:
 *
 *  - The doorbell: a process rings it (an empty POST_SEND command) when
 *    its send queue's SOFTHCA_WQ_F_NEED_WAKEUP flag is set, which means
 *    "no poller watches this queue".  The doorbell runs the posted work
 *    right there, in the system call (waking a sleeping thread would
 *    cost tens of microseconds), and then hands the QP to its poller so
 *    that the next posts need no system call.
 *
 *  - The poller: a kernel thread (softhca_engine.pollers of them for
 *    the whole host, shared by every device, QPs spread by number) with
 *    a private list of the QPs it watches.  Only QPs handed to it are
 *    on that list, so a pass costs nothing for idle QPs.  Each pass
 *    gives each QP a budget (softhca_engine.qp_budget steps: a WQE, or
 *    16 KiB of a long message, per step).  A QP with no work for its
 *    idle budget (softhca_engine.idle_us, doubled per QP while releases
 *    prove premature, see softhca_engine_adapt_idle()) is given back: the
 *    poller sets NEED_WAKEUP in its ring, issues a full barrier and
 *    looks at the producer index once more.  That barrier pairs with the
 *    library's full barrier between publishing prod and reading flags
 *    (lib/qp_post.c): either the library sees NEED_WAKEUP and rings, or
 *    the poller sees the new prod and keeps the QP.  A poller with no
 *    QPs sleeps until a doorbell or a retry timer hands it one.
 *
 * Sharing the CPU: a poller that spins while another task wants its CPU
 * would slow that task down, and a process spinning on its CQ for work
 * only the poller can do would wait for the poller's next time slice.
 * So when the poller sees another runnable task on its CPU for
 * softhca_engine.contended_us in a row (a short-lived kworker does not
 * count: the poller calls schedule() as soon as another task is
 * runnable, so the kworker runs and the poller carries on), it gives
 * back every QP without work left (NEED_WAKEUP set: posts ring
 * the doorbell and run inline, as they would with no poller at all) and
 * stays out of the way for a while (doorbells do not hand QPs over
 * during that time unless work is left after the inline run).  QPs with
 * a backlog stay and are run a budget per pass until they drain.  An
 * unbound poller that wakes beside a runnable task moves to another CPU
 * first (softhca_poller_leave_busy_cpu()), and a QP's idle time counts
 * only the time the poller spent looking at it (poller->spun).
 *
 * Lending.  Until that back-off, the poller and the other task take
 * turns on the CPU in the scheduler's slices, milliseconds each: while
 * the poller is off its CPU, posts to its QPs (NEED_WAKEUP clear) wait
 * for its next turn, and while it spins on, the other task (often the
 * very process that posts, spinning on its CQ) waits for the CPU.  A
 * 64 B ping-pong over two pollers and one process on two CPUs took a
 * median 300-400 us a hop that way, its best hop 17 us.  So from the
 * first pass that sees another runnable task, the poller lends its QPs
 * whose peer is on another host (softhca_poller_lends()) to the
 * doorbell: NEED_WAKEUP set on each such send queue, with the same
 * barrier as a release (posts then run inline in their own system call,
 * whoever has the CPU), and a pass right after the barrier for what was
 * posted before it.  A lent QP stays on the list; while all its QPs are
 * lent, a pass that finds no work naps (softhca_poller_nap()) instead
 * of spinning beside the other task.  The first pass that finds the CPU
 * its own again takes the QPs back (NEED_WAKEUP clear).  poller->lent
 * says which: adopting a QP or keeping one a release gave up leaves
 * NEED_WAKEUP set while lent.
 *
 * QP membership: qp->poll_state says where a QP is (idle, queued for
 * the poller, or on its private list), under poller->lock.  Each list
 * membership holds a QP reference; destroy_qp marks the QP dying, which
 * makes the poller drop it on its next pass, and waits for the
 * references.
 *
 * No kick is lost.  A kick (a doorbell's hand-over, the end of a retry
 * wait) that finds the QP already on the private list sets
 * qp->poll_kicked, and the poller does not give back a kicked QP: it
 * looks at it once more.  Without that, a retry timer expiring between
 * the pass that found the QP waiting and that pass's release would
 * leave the QP waiting for a kick that had already come and gone: a WQE
 * that never runs again, and a process spinning on its CQ for ever.
 */
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>

#include "engine.h"

enum {
	SOFTHCA_POLL_IDLE,	/* no poller looks at it */
	SOFTHCA_POLL_QUEUED,	/* on poller->queue, not yet adopted */
	SOFTHCA_POLL_ACTIVE,	/* on the poller thread's private list */
};

/* After giving QPs back on a contended CPU, stay away this long. */
#define SOFTHCA_BACKOFF_NS	(20 * NSEC_PER_MSEC)
/*
 * A poller with its QPs lent and nothing to do sleeps this long between
 * passes: long enough for the other task to run (a wake-up costs some
 * 20 us under TCG), short next to the idle budget, and what a lent QP's
 * answer (an ACK its completer recorded) waits at most when its process
 * posts nothing more to run it.
 */
#define SOFTHCA_NAP_NS		(100 * NSEC_PER_USEC)

/**
 * softhca_engine_kick - hand a QP to its poller
 * @qp: the QP; nothing happens if it is dying or already watched
 *
 * Context: any.
 */
void softhca_engine_kick(struct softhca_qp *qp)
{
	struct softhca_poller *p = qp->poller;
	unsigned long flags;
	bool wake = false;

	/*
	 * A QP without a send queue (XRC_TGT) has nothing to run, and the
	 * poller would read its absent ring's flags (SQD -> RTS kicks).
	 */
	if (!qp->sq.ring.entries)
		return;
	spin_lock_irqsave(&p->lock, flags);
	if (qp->poll_state == SOFTHCA_POLL_IDLE && !READ_ONCE(qp->dying)) {
		refcount_inc(&qp->ref);
		WRITE_ONCE(qp->poll_state, SOFTHCA_POLL_QUEUED);
		list_add_tail(&qp->poll_node, &p->queue);
		wake = p->sleeping;
	} else if (qp->poll_state == SOFTHCA_POLL_ACTIVE) {
		/* Watched: the poller looks once more before a release. */
		qp->poll_kicked = true;
	}
	spin_unlock_irqrestore(&p->lock, flags);
	if (wake)
		wake_up_process(p->task);
}

/**
 * softhca_engine_detach - take a dying QP off a poller's queue
 * @qp: the QP, already marked dying
 *
 * A QP on the thread's private list is dropped by the thread itself on
 * its next pass; the caller waits for the QP's references either way.
 */
void softhca_engine_detach(struct softhca_qp *qp)
{
	struct softhca_poller *p = qp->poller;
	bool put = false;

	spin_lock_irq(&p->lock);
	if (qp->poll_state == SOFTHCA_POLL_QUEUED) {
		list_del_init(&qp->poll_node);
		WRITE_ONCE(qp->poll_state, SOFTHCA_POLL_IDLE);
		put = true;
	}
	spin_unlock_irq(&p->lock);
	if (put)
		softhca_qp_put(qp);
}

/*
 * The pollers' clock, read once per pass: local_clock() (the scheduler's
 * TSC-based clock), not ktime_get_ns(), which reads the clocksource and
 * where that is the HPET (a guest whose TSC is not trusted) costs a
 * device access per pass, most of a spinning pass's time.  It is
 * nanoseconds, monotonic per CPU and close across CPUs: enough for idle
 * budgets and back-off deadlines in microseconds to milliseconds.
 */
static u64 softhca_engine_clock(void)
{
	return local_clock();
}

/*
 * The idle budget adapts per QP.  A doorbell that comes soon after the
 * poller gave the QP back for being idle (within the budget the QP had)
 * says that the release came too early: its producer only paused, as a
 * ping-pong does when the host deschedules the application's vCPU for a
 * few hundred microseconds, and every such release costs the producer
 * a system call.  So the budget doubles, up to 64 times poll_idle_us
 * (io_uring's SQPOLL default is a whole second).  A doorbell after a
 * long quiet time (16 budgets) halves it: a QP that really goes idle
 * between bursts comes back to the short budget.  The fields are a
 * heuristic's: racing doorbells may lose an update, nothing else.
 */
#define SOFTHCA_IDLE_MAX_SHIFT	6

static u64 softhca_engine_idle_ns(const struct softhca_qp *qp)
{
	return ((u64)softhca_engine.idle_us * NSEC_PER_USEC) <<
	       READ_ONCE(qp->idle_shift);
}

static void softhca_engine_adapt_idle(struct softhca_qp *qp, u64 now)
{
	u64 released = READ_ONCE(qp->idle_released);
	unsigned int shift = READ_ONCE(qp->idle_shift);
	s64 gap;

	if (!released)
		return;
	/* One verdict per release (doorbells in a back-off come in rows). */
	WRITE_ONCE(qp->idle_released, 0);
	gap = now - released;	/* local_clock(): CPUs may differ a little */
	if (gap < (s64)softhca_engine_idle_ns(qp)) {
		if (shift < SOFTHCA_IDLE_MAX_SHIFT)
			WRITE_ONCE(qp->idle_shift, shift + 1);
	} else if (gap >= 16 * (s64)softhca_engine_idle_ns(qp) && shift) {
		WRITE_ONCE(qp->idle_shift, shift - 1);
	}
}

/**
 * softhca_engine_doorbell - a process rang its send queue's doorbell
 * @qp: a user QP not in ERR
 *
 * Context: process (the POST_SEND system call).
 */
void softhca_engine_doorbell(struct softhca_qp *qp)
{
	struct softhca_poller *p = qp->poller;
	unsigned int rounds = 16;

	softhca_engine_adapt_idle(qp, softhca_engine_clock());
	/* Run what was posted, a budget at a time, yielding in between. */
	while (softhca_req_run(qp, softhca_engine.qp_budget) &&
	       softhca_req_pending(qp) && --rounds)
		cond_resched();
	/*
	 * A backlog goes to the poller; so does the QP itself, to make the
	 * next posts syscall-free, unless its producer asked for inline
	 * runs only or the poller is backing off from a contended CPU.
	 */
	if (softhca_req_pending(qp) ||
	    (!(softhca_wq_hint(&qp->sq.ring) & SOFTHCA_WQ_HINT_INLINE) &&
	     softhca_engine_clock() >= READ_ONCE(p->contended_until)))
		softhca_engine_kick(qp);
}

/*
 * Only a connected QP (with a send queue) whose peer is on another host
 * is lent: its hop waits on the wire anyway, and a doorbell sends at
 * once.  A same-host hop is the poller's whole round trip: there a
 * system call per post cost more than the turns (make bench's
 * two-device SEND latency went from 4.1-4.4 to 8.6-9.0 us when every QP
 * was lent).
 */
static bool softhca_poller_lends(const struct softhca_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_XRC_INI:
		return !READ_ONCE(qp->dest_dev);
	default:
		return false;
	}
}

/*
 * Watched from now on: posts need no doorbell, unless the poller's QPs
 * are lent (its CPU is contended) and this one with them: then they
 * keep ringing it.
 */
static void softhca_poller_watch(struct softhca_poller *p,
				 struct softhca_qp *qp)
{
	if (!qp->sq.ring.entries)
		return;
	if (p->lent) {
		if (softhca_poller_lends(qp))
			return;
		p->all_lent = false;	/* one kept: no naps */
	}
	atomic_andnot(SOFTHCA_WQ_F_NEED_WAKEUP, softhca_wq_flags(&qp->sq.ring));
}

/*
 * Lend the watched QPs softhca_poller_lends() picks to the doorbell
 * (@lend), or take them all back (see the top of this file).  Lending
 * sets NEED_WAKEUP as a release does; what was posted before the
 * barrier is for the caller's next pass.
 */
static void softhca_poller_lend(struct softhca_poller *p, bool lend)
{
	struct softhca_qp *qp;

	WRITE_ONCE(p->lent, lend);	/* read by softhca_engine_answer() */
	p->all_lent = lend;
	list_for_each_entry(qp, &p->active, poll_node) {
		if (!qp->sq.ring.entries)
			continue;
		if (!lend)
			atomic_andnot(SOFTHCA_WQ_F_NEED_WAKEUP,
				      softhca_wq_flags(&qp->sq.ring));
		else if (softhca_poller_lends(qp))
			atomic_or(SOFTHCA_WQ_F_NEED_WAKEUP,
				  softhca_wq_flags(&qp->sq.ring));
		else
			p->all_lent = false;	/* one kept: no naps */
	}
	if (!lend)
		return;
	/*
	 * Pairs with the library's full barrier between its store of prod
	 * and its load of flags: either it rings, or the pass after this
	 * barrier sees its post.
	 */
	smp_mb__after_atomic();
}

/* Take the QPs handed over since the last pass. */
static void softhca_poller_adopt(struct softhca_poller *p)
{
	struct softhca_qp *qp;
	LIST_HEAD(fresh);

	/*
	 * Most passes find nothing handed over: look without the lock.  A
	 * QP queued after this look is seen by the next pass, and before
	 * sleeping the poller looks again under the lock.
	 */
	if (list_empty(&p->queue))
		return;
	spin_lock_irq(&p->lock);
	list_splice_init(&p->queue, &fresh);
	list_for_each_entry(qp, &fresh, poll_node) {
		WRITE_ONCE(qp->poll_state, SOFTHCA_POLL_ACTIVE);
		qp->poll_kicked = false;	/* this pass looks at it */
	}
	spin_unlock_irq(&p->lock);

	list_for_each_entry(qp, &fresh, poll_node) {
		qp->last_work = p->spun;
		softhca_poller_watch(p, qp);
	}
	list_splice_tail(&fresh, &p->active);
}

static void softhca_poller_drop(struct softhca_poller *p,
				struct softhca_qp *qp)
{
	/* Lookups cached by our runs must not outlive our watch (req.c). */
	softhca_req_cache_drop(&qp->req.cache);
	list_del_init(&qp->poll_node);
	spin_lock_irq(&p->lock);
	WRITE_ONCE(qp->poll_state, SOFTHCA_POLL_IDLE);
	spin_unlock_irq(&p->lock);
	softhca_qp_put(qp);
}

/**
 * softhca_engine_watches - does a poller look at @qp each pass?
 * @qp: the QP
 *
 * A QP queued for its poller counts: the poller's next pass adopts it.
 * The answer may be stale by the time the caller uses it; a release
 * marks the QP unwatched before it hands the QP's retry wait to the
 * timer (softhca_req_wait_unwatched()), which takes sq.lock.
 *
 * Context: any.
 */
bool softhca_engine_watches(const struct softhca_qp *qp)
{
	return READ_ONCE(qp->poll_state) != SOFTHCA_POLL_IDLE;
}

/**
 * softhca_engine_answer - the answer @qp's requester waits for came
 * @qp: an RC or XRC_INI QP on the wire (a reference held), its completer
 *	just recorded an ACK or a NAK for the chunk in flight
 *
 * A QP its poller spins on takes the answer within a pass.  One it does
 * not (given back to the doorbell, or lent while the poller's CPU is
 * contended, when the poller naps or waits for that CPU) took it only
 * when the poller came back: where every send is signaled and the
 * application waits for each send's completion (Debian's ib_send_lat
 * against rdma_rxe, three busy-polling tasks on two vCPUs) that was most
 * of a 200 us hop.  So the answer is taken here, in the receive softirq
 * (softhca_req_answered(): the WQEs it covers complete, nothing is
 * sent), and the poller is kicked for what follows, if anything does:
 * waking a poller that then finds nothing took the CPU from the very
 * process that was to answer next (rxe's perftest server beside it).
 * A post after the look rings the doorbell: an unwatched or lent QP's
 * ring has NEED_WAKEUP set.
 *
 * Context: softirq, no softhca lock held.
 * Return: true if the answer was taken here.
 */
bool softhca_engine_answer(struct softhca_qp *qp)
{
	bool taken = false;

	if (READ_ONCE(qp->poll_state) != SOFTHCA_POLL_ACTIVE ||
	    READ_ONCE(qp->poller->lent)) {
		taken = softhca_req_answered(qp);
		if (taken && !softhca_req_pending(qp))
			return true;
	}
	softhca_engine_kick(qp);
	return taken;
}

/*
 * Give a QP back to the doorbell, unless work raced in or it was kicked
 * since this pass looked at it.  Return: true if it was given back.
 */
static bool softhca_poller_release(struct softhca_poller *p,
				   struct softhca_qp *qp)
{
	bool kicked;

	if (qp->sq.ring.entries) {
		atomic_or(SOFTHCA_WQ_F_NEED_WAKEUP,
			  softhca_wq_flags(&qp->sq.ring));
		/*
		 * Pairs with the library's full barrier between its
		 * store of prod and its load of flags.
		 */
		smp_mb__after_atomic();
		if (softhca_req_pending(qp))
			goto keep;
	}
	/*
	 * Decided under the lock a kick takes: a kick before this point
	 * keeps the QP, a kick after it finds the QP idle and queues it.
	 */
	spin_lock_irq(&p->lock);
	kicked = qp->poll_kicked;
	qp->poll_kicked = false;
	if (!kicked) {
		list_del_init(&qp->poll_node);
		WRITE_ONCE(qp->poll_state, SOFTHCA_POLL_IDLE);
	}
	spin_unlock_irq(&p->lock);
	if (kicked)
		goto keep;
	/* Lookups cached by our runs must not outlive our watch (req.c). */
	softhca_req_cache_drop(&qp->req.cache);
	/* Its retry wait, if any, is the timer's from now on. */
	if (qp->sq.ring.entries)
		softhca_req_wait_unwatched(qp);
	softhca_qp_put(qp);
	return true;

keep:
	softhca_poller_watch(p, qp);
	return false;
}

/*
 * End a watched QP's retry wait whose deadline passed: the poller is the
 * timer of the QPs it watches (softhca_req_wait()).  The store is the
 * one the timer makes; a wait begun since this looked has a later
 * deadline, which the store does not match.
 */
static void softhca_poller_expire(struct softhca_qp *qp, u64 now)
{
	u64 until = READ_ONCE(qp->req.retry_until);

	if (READ_ONCE(qp->req.retry_wait) && now >= until &&
	    READ_ONCE(qp->req.retry_fired) != until)
		WRITE_ONCE(qp->req.retry_fired, until);
}

/* One pass over the watched QPs. Return: steps that made progress. */
static int softhca_poller_pass(struct softhca_poller *p, u64 now)
{
	struct softhca_qp *qp, *tmp;
	int work = 0, n;

	list_for_each_entry_safe(qp, tmp, &p->active, poll_node) {
		if (READ_ONCE(qp->dying)) {
			softhca_poller_drop(p, qp);
			continue;
		}
		/* A destroy or dereg waits for what the cache holds. */
		if (softhca_req_cache_stale(&qp->req.cache))
			softhca_req_cache_drop(&qp->req.cache);
		softhca_poller_expire(qp, now);
		/*
		 * A lockless look first: most passes find nothing.  A QP
		 * in a retry wait is run when the wait can end or move
		 * (softhca_req_pending(): its timer fired, an answer came,
		 * a WQE can join its train), not every pass: taking its
		 * lock each time made every pass of a ping-pong's poller,
		 * and so the notice of each post, slower on RC than on UD.
		 */
		n = softhca_req_pending(qp) ?
		    softhca_req_try_run(qp, softhca_engine.qp_budget) : 0;
		if (n) {
			qp->last_work = p->spun;
			work += n;
		}
		if (softhca_wq_hint(&qp->sq.ring) & SOFTHCA_WQ_HINT_INLINE) {
			/*
			 * Its producer sleeps on completion events and rings
			 * the doorbell for every post: the work runs in its
			 * own system call, not on a CPU that must wake it.
			 */
			softhca_poller_release(p, qp);
		} else if (n) {
			continue;
		} else if (READ_ONCE(qp->req.retry_wait) &&
			   !READ_ONCE(qp->req.answer_wait)) {
			/*
			 * An RNR or timeout pause ends by its timer, which
			 * kicks.  A wait for the answer to what is in
			 * flight is kept as an idle QP is, for its idle
			 * budget: the answer (its completer kicks) or the
			 * next post, which joins the train, usually comes
			 * within a round trip, and a QP given back at once
			 * made that post a doorbell and that answer a wake-up
			 * (a ping-pong's hop after a signaled SEND took
			 * twice the others).  Keeping it until its wait ended,
			 * whatever its length, cost make check 232 s of
			 * spinning.
			 */
			softhca_poller_release(p, qp);
		} else if (p->spun - qp->last_work >=
			   softhca_engine_idle_ns(qp)) {
			/*
			 * Judged by its next doorbell (adapt_idle above).
			 * Marked first: after the release our reference,
			 * maybe the last but the QP's own, is gone.
			 */
			WRITE_ONCE(qp->idle_released, now ?: 1);
			if (!softhca_poller_release(p, qp))
				WRITE_ONCE(qp->idle_released, 0);
		}
	}
	return work;
}

/*
 * Give every QP back that can go (contended CPU, or stopping): a QP with
 * work left stays watched, and the next passes run it a budget at a
 * time beside the others.  Running it to the end here would starve the
 * rest (one 1 GiB WRITE would hold up every small message behind it),
 * and handing a backlog back would leave it waiting for a doorbell that
 * its producer has no reason to ring.  A dying QP is dropped: its
 * destroy waits for this reference.
 */
static void softhca_poller_release_all(struct softhca_poller *p)
{
	struct softhca_qp *qp, *tmp;

	list_for_each_entry_safe(qp, tmp, &p->active, poll_node) {
		if (READ_ONCE(qp->dying))
			softhca_poller_drop(p, qp);
		else
			softhca_poller_release(p, qp);
	}
}

/*
 * A poller woken by a doorbell is usually placed on the CPU of the
 * process that rang (the scheduler's wake-affine choice, and with every
 * CPU busy-polling it does not look for an idle one), where that process
 * keeps spinning on its CQ: the two then share a CPU while another one
 * idles, the poller finds its CPU contended and backs off, and the
 * process's posts become system calls, 20 ms at a time, again after
 * every back-off.  So an unbound poller that wakes up beside another
 * runnable task moves: it allows itself every CPU of its home mask but
 * this one, then the whole home mask again (it stays where the move put
 * it until the scheduler has a reason to move it).  With no other CPU,
 * or other CPUs as busy, the contention check decides as before.
 */
static void softhca_poller_leave_busy_cpu(struct softhca_poller *p)
{
	int cpu = raw_smp_processor_id();

	if (p->bound || single_task_running())
		return;
	cpumask_and(p->elsewhere, p->home, cpu_online_mask);
	cpumask_clear_cpu(cpu, p->elsewhere);
	if (cpumask_empty(p->elsewhere) ||
	    set_cpus_allowed_ptr(current, p->elsewhere))
		return;
	set_cpus_allowed_ptr(current, p->home);
}

static void softhca_poller_sleep(struct softhca_poller *p)
{
	bool empty;

	set_current_state(TASK_INTERRUPTIBLE);
	spin_lock_irq(&p->lock);
	empty = list_empty(&p->queue);
	p->sleeping = empty;
	spin_unlock_irq(&p->lock);
	if (empty && !kthread_should_stop())
		schedule();
	__set_current_state(TASK_RUNNING);
	spin_lock_irq(&p->lock);
	p->sleeping = false;
	spin_unlock_irq(&p->lock);
	if (empty)
		softhca_poller_leave_busy_cpu(p);
}

/*
 * Lent QPs and nothing to do: off the CPU for SOFTHCA_NAP_NS.  Not a
 * schedule(): the scheduler would pick the poller again as long as its
 * share of the CPU is due, and the other task would wait.  Nothing
 * wakes a nap early but kthread_stop(): a kick of a watched QP only
 * marks it, and the nap is short.
 */
static void softhca_poller_nap(void)
{
	ktime_t t = ns_to_ktime(SOFTHCA_NAP_NS);

	set_current_state(TASK_INTERRUPTIBLE);
	if (!kthread_should_stop())
		schedule_hrtimeout_range(&t, SOFTHCA_NAP_NS / 4,
					 HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
}

/*
 * Sharing the CPU (see the top of this file).  @work: what the pass
 * just made; @since: when the current run of contended passes began, 0
 * if none.  Return: true if the poller gave its QPs back and backs off.
 */
static bool softhca_poller_share_cpu(struct softhca_poller *p, u64 now,
				     int work, u64 *since)
{
	if (single_task_running() || !softhca_engine.contended_us) {
		*since = 0;
		if (p->lent)
			softhca_poller_lend(p, false);
		return false;
	}
	if (!p->lent) {
		softhca_poller_lend(p, true);
		/* What was posted before the barrier: nobody rang for it. */
		work += softhca_poller_pass(p, now);
	}
	/*
	 * Another task is runnable here: let the scheduler pick now, not
	 * at its next tick (cond_resched() yields only when preemption is
	 * already due, so a woken kworker or RCU thread could wait for
	 * milliseconds and pass for contention).  With no work, nap: the
	 * lent QPs run in their doorbells meanwhile; not with a QP kept
	 * (softhca_poller_lends()), whose posts ring for nobody.
	 */
	if (work || !p->all_lent)
		schedule();
	else
		softhca_poller_nap();
	if (!*since) {
		*since = now;
		return false;
	}
	if (now - *since < (u64)softhca_engine.contended_us * NSEC_PER_USEC)
		return false;
	*since = 0;
	WRITE_ONCE(p->contended_until,
		   softhca_engine_clock() + SOFTHCA_BACKOFF_NS);
	softhca_poller_release_all(p);
	return true;
}

/*
 * A QP's idle time is the time its poller spent looking at it without
 * finding work, not wall time: when the poller itself is off its CPU
 * (the host deschedules the vCPU, or cond_resched() runs another task
 * for a while), nobody looked, and counting that time would give back
 * a busy QP the moment the poller returns (its next post then rings a
 * doorbell).  So the poller keeps its own clock, advanced by the wall
 * time between passes but never by more than this per pass.
 */
#define SOFTHCA_PASS_GAP_NS	(50 * NSEC_PER_USEC)

static int softhca_poller_fn(void *arg)
{
	struct softhca_poller *p = arg;
	u64 now, last = softhca_engine_clock(), contended_since = 0;
	int work;

	if (!p->bound)
		cpumask_copy(p->home, current->cpus_ptr);
	while (!kthread_should_stop()) {
		now = softhca_engine_clock();
		p->spun += min(now - last, (u64)SOFTHCA_PASS_GAP_NS);
		last = now;
		softhca_poller_adopt(p);
		work = softhca_poller_pass(p, now);
		if (list_empty(&p->active)) {
			softhca_poller_sleep(p);
			last = softhca_engine_clock();
			continue;
		}
		if (softhca_poller_share_cpu(p, now, work, &contended_since))
			continue;
		/*
		 * No cpu_relax() between passes (nor does io_uring's SQPOLL
		 * loop pause): a pass is reads of every watched ring, not a
		 * spin on one word, and a pause here is on the path of every
		 * post that lands during it (under QEMU TCG a "pause" leaves
		 * the translated code: about 0.2 us).
		 */
		cond_resched();
	}
	/* Every QP of every device is destroyed before the pollers stop. */
	softhca_poller_release_all(p);
	WARN_ON(!list_empty(&p->active));
	return 0;
}

/*
 * The host's pollers.  One set of threads serves every softhca device,
 * as io_uring's rings can share one SQPOLL thread (IORING_SETUP_ATTACH_WQ):
 * with a set per device, two devices' pollers and the one process that
 * drives a QP on each (the wire bench's softhca <-> softhca pair, two
 * hosts' worth of devices on one) were three threads spinning on two
 * CPUs, each poller finding its CPU contended by the other.  The set is
 * made with the first device and stopped with the last, under
 * softhca_pool_lock; QPs are spread over it by number (qp.c).
 */
static DEFINE_MUTEX(softhca_pool_lock);
static struct softhca_poller *softhca_pool;
static unsigned int softhca_pool_n;	/* threads made (stop frees these) */
static unsigned int softhca_pool_users;	/* devices started */

/* Stop the pool's threads; every QP is gone, so their lists are empty. */
static void softhca_pool_destroy(void)
{
	unsigned int i;

	lockdep_assert_held(&softhca_pool_lock);
	for (i = 0; i < softhca_pool_n; i++) {
		if (softhca_pool[i].task)
			kthread_stop(softhca_pool[i].task);
		free_cpumask_var(softhca_pool[i].home);
		free_cpumask_var(softhca_pool[i].elsewhere);
	}
	kfree(softhca_pool);
	softhca_pool = NULL;
	softhca_pool_n = 0;
}

static int softhca_pool_create(void)
{
	unsigned int i, n = softhca_engine.pollers;
	struct softhca_poller *p;
	int cpu, err;

	lockdep_assert_held(&softhca_pool_lock);
	softhca_pool = kcalloc(n, sizeof(*softhca_pool), GFP_KERNEL);
	if (!softhca_pool)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		p = &softhca_pool[i];
		spin_lock_init(&p->lock);
		INIT_LIST_HEAD(&p->queue);
		INIT_LIST_HEAD(&p->active);
		/* Counted before anything can fail: destroy frees the masks. */
		softhca_pool_n = i + 1;
		if (!zalloc_cpumask_var(&p->home, GFP_KERNEL) ||
		    !zalloc_cpumask_var(&p->elsewhere, GFP_KERNEL)) {
			err = -ENOMEM;
			goto fail;
		}
		p->task = kthread_create(softhca_poller_fn, p, "softhca/%u", i);
		if (IS_ERR(p->task)) {
			err = PTR_ERR(p->task);
			p->task = NULL;
			goto fail;
		}
		cpu = softhca_engine.poller_cpu;
		if (cpu >= 0) {
			cpu = (cpu + i) % nr_cpu_ids;
			if (cpu_online(cpu)) {
				kthread_bind(p->task, cpu);
				p->bound = true;
			}
		}
		wake_up_process(p->task);
	}
	return 0;

fail:
	softhca_pool_destroy();
	return err;
}

/**
 * softhca_engine_start - a device's pollers: the host's, made if none yet
 * @sdev: the device
 *
 * Context: process.  Return: 0 or a negative errno (nothing to undo).
 */
int softhca_engine_start(struct softhca_dev *sdev)
{
	int err = 0;

	mutex_lock(&softhca_pool_lock);
	if (!softhca_pool_users)
		err = softhca_pool_create();
	if (!err) {
		softhca_pool_users++;
		sdev->pollers = softhca_pool;
		sdev->npollers = softhca_pool_n;
	}
	mutex_unlock(&softhca_pool_lock);
	return err;
}

/**
 * softhca_engine_stop - a device lets go of the pollers (the last stops them)
 * @sdev: the device, every QP of it destroyed (none is on a poller's list)
 *
 * Context: process.  Nothing happens for a device not started.
 */
void softhca_engine_stop(struct softhca_dev *sdev)
{
	if (!sdev->pollers)
		return;
	mutex_lock(&softhca_pool_lock);
	if (!--softhca_pool_users)
		softhca_pool_destroy();
	mutex_unlock(&softhca_pool_lock);
	sdev->pollers = NULL;
	sdev->npollers = 0;
}
