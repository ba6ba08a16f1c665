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
 *  - The poller: a kernel thread per device (softhca_engine.pollers of
 *    them, QPs spread by number) with a private list of the QPs it
 *    watches.  Only QPs handed to it are on that list, so a pass costs
 *    nothing for idle QPs.  Each pass gives each QP a budget
 *    (softhca_engine.qp_budget steps: a WQE, or 16 KiB of a long
 *    message, per step).  A QP with no work for softhca_engine.idle_us
 *    is given back: the poller sets NEED_WAKEUP in its ring, issues a
 *    full barrier and looks at the producer index once more.  That barrier
 *    pairs with the library's full barrier between publishing prod and
 *    reading flags (lib/qp_post.c): either the library sees NEED_WAKEUP
 *    and rings, or the poller sees the new prod and keeps the QP.  A
 *    poller with no QPs sleeps until a doorbell or an RNR timer hands it
 *    one.
 *
 * Sharing the CPU: a poller that spins while another task wants its CPU
 * would slow that task down, and a process spinning on its CQ for work
 * only the poller can do would wait for the poller's next time slice.
 * So when the poller sees another runnable task on its CPU for
 * softhca_engine.contended_us in a row (a short-lived kworker does not
 * count: cond_resched() lets it run and the poller carries on), it
 * gives back every QP without work left (NEED_WAKEUP set: posts ring
 * the doorbell and run inline, as they would with no poller at all) and
 * stays out of the way for a while (doorbells do not hand QPs over
 * during that time unless work is left after the inline run).  QPs with
 * a backlog stay and are run a budget per pass until they drain.
 *
 * QP membership: qp->poll_state says where a QP is (idle, queued for
 * the poller, or on its private list), under poller->lock.  Each list
 * membership holds a QP reference; destroy_qp marks the QP dying, which
 * makes the poller drop it on its next pass, and waits for the
 * references.
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

	spin_lock_irqsave(&p->lock, flags);
	if (qp->poll_state == SOFTHCA_POLL_IDLE && !READ_ONCE(qp->dying)) {
		refcount_inc(&qp->ref);
		qp->poll_state = SOFTHCA_POLL_QUEUED;
		list_add_tail(&qp->poll_node, &p->queue);
		wake = p->sleeping;
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
		qp->poll_state = SOFTHCA_POLL_IDLE;
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

	/* Run what was posted, a budget at a time, yielding in between. */
	while (softhca_req_run(qp, softhca_engine.qp_budget, NULL) &&
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

/* Take the QPs handed over since the last pass. */
static void softhca_poller_adopt(struct softhca_poller *p, u64 now)
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
	list_for_each_entry(qp, &fresh, poll_node)
		qp->poll_state = SOFTHCA_POLL_ACTIVE;
	spin_unlock_irq(&p->lock);

	list_for_each_entry(qp, &fresh, poll_node) {
		qp->last_work = now;
		/* Watched from now on: posts need no doorbell. */
		atomic_andnot(SOFTHCA_WQ_F_NEED_WAKEUP,
			      softhca_wq_flags(&qp->sq.ring));
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
	qp->poll_state = SOFTHCA_POLL_IDLE;
	spin_unlock_irq(&p->lock);
	softhca_qp_put(qp);
}

/*
 * Give a QP back to the doorbell, unless work raced in.  Return: true if
 * it was given back.
 */
static bool softhca_poller_release(struct softhca_poller *p,
				   struct softhca_qp *qp)
{
	if (qp->sq.ring.entries) {
		atomic_or(SOFTHCA_WQ_F_NEED_WAKEUP,
			  softhca_wq_flags(&qp->sq.ring));
		/*
		 * Pairs with the library's full barrier between its
		 * store of prod and its load of flags.
		 */
		smp_mb__after_atomic();
		if (softhca_req_pending(qp)) {
			atomic_andnot(SOFTHCA_WQ_F_NEED_WAKEUP,
				      softhca_wq_flags(&qp->sq.ring));
			return false;
		}
	}
	softhca_poller_drop(p, qp);
	return true;
}

/* One pass over the watched QPs. Return: steps that made progress. */
static int softhca_poller_pass(struct softhca_poller *p, u64 now)
{
	u64 idle_ns = (u64)softhca_engine.idle_us * NSEC_PER_USEC;
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
		/*
		 * A lockless look first: most passes find nothing.  A QP
		 * in an RNR wait is not "pending" but must be run: only
		 * softhca_req_run() ends the wait once its time has come
		 * (the RNR timer kicks the QP here for that).
		 */
		n = softhca_req_pending(qp) || READ_ONCE(qp->req.rnr_wait) ?
		    softhca_req_run(qp, softhca_engine.qp_budget,
				    &qp->req.cache) : 0;
		if (n) {
			qp->last_work = now;
			work += n;
		}
		if (softhca_wq_hint(&qp->sq.ring) & SOFTHCA_WQ_HINT_INLINE) {
			/*
			 * Its producer sleeps on completion events and rings
			 * the doorbell for every post: the work runs in its
			 * own system call, not on a CPU that must wake it.
			 */
			softhca_poller_release(p, qp);
		} else if (!n && (now - qp->last_work >= idle_ns ||
				  READ_ONCE(qp->req.rnr_wait))) {
			/* An RNR wait ends by its timer, which kicks. */
			softhca_poller_release(p, qp);
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
}

static int softhca_poller_fn(void *arg)
{
	struct softhca_poller *p = arg;
	u64 now, contended_since = 0;

	while (!kthread_should_stop()) {
		now = softhca_engine_clock();
		softhca_poller_adopt(p, now);
		softhca_poller_pass(p, now);
		if (list_empty(&p->active)) {
			softhca_poller_sleep(p);
			continue;
		}
		if (single_task_running() || !softhca_engine.contended_us) {
			contended_since = 0;
		} else if (!contended_since) {
			contended_since = now;
		} else if (now - contended_since >=
			   (u64)softhca_engine.contended_us * NSEC_PER_USEC) {
			WRITE_ONCE(p->contended_until,
				   softhca_engine_clock() + SOFTHCA_BACKOFF_NS);
			softhca_poller_release_all(p);
			contended_since = 0;
			continue;
		}
		/*
		 * No cpu_relax() between passes (nor does io_uring's SQPOLL
		 * loop pause): a pass is reads of every watched ring, not a
		 * spin on one word, and a pause here is on the path of every
		 * post that lands during it (under QEMU TCG a "pause" leaves
		 * the translated code: about 0.2 us).
		 */
		cond_resched();
	}
	/* Every QP of the device is destroyed before its pollers stop. */
	softhca_poller_release_all(p);
	WARN_ON(!list_empty(&p->active));
	return 0;
}

/**
 * softhca_engine_start - create the device's poller threads
 * @sdev: the device
 * @name: the device name, for the threads' names
 */
int softhca_engine_start(struct softhca_dev *sdev, const char *name)
{
	unsigned int i, n = softhca_engine.pollers;
	struct softhca_poller *p;
	int cpu;

	sdev->pollers = kcalloc(n, sizeof(*sdev->pollers), GFP_KERNEL);
	if (!sdev->pollers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		p = &sdev->pollers[i];
		spin_lock_init(&p->lock);
		INIT_LIST_HEAD(&p->queue);
		INIT_LIST_HEAD(&p->active);
		p->task = kthread_create(softhca_poller_fn, p, "softhca/%s:%u",
					 name, i);
		if (IS_ERR(p->task)) {
			int err = PTR_ERR(p->task);

			p->task = NULL;
			softhca_engine_stop(sdev);
			return err;
		}
		cpu = softhca_engine.poller_cpu;
		if (cpu >= 0) {
			cpu = (cpu + i) % nr_cpu_ids;
			if (cpu_online(cpu))
				kthread_bind(p->task, cpu);
		}
		sdev->npollers = i + 1;
		wake_up_process(p->task);
	}
	return 0;
}

/* Stop the pollers; every QP is gone, so their lists are empty. */
void softhca_engine_stop(struct softhca_dev *sdev)
{
	unsigned int i;

	for (i = 0; i < sdev->npollers; i++)
		if (sdev->pollers[i].task)
			kthread_stop(sdev->pollers[i].task);
	kfree(sdev->pollers);
	sdev->pollers = NULL;
	sdev->npollers = 0;
}
