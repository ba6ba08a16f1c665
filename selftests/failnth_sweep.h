/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fault-injection sweep (failnth.c): the known Linux 6.1 bugs it
 * runs into, one attempt at the nth allocation, a sweep over n.
 * Included once, in order, by failnth.c.
 */
#ifndef SOFTHCA_SELFTEST_FAILNTH_SWEEP_H
#define SOFTHCA_SELFTEST_FAILNTH_SWEEP_H

/* ---------------------------------------------------------------------
 * Known bugs of Linux 6.1 that the sweeps run into: the one place that
 * lists them.
 *
 * These and nothing else are not counted against softhca, and each only
 * on evidence: a sweep's misbehaviour (@symptom) is excused when the
 * stack of that attempt's injected fault (read from the kernel log,
 * turned on for every attempt of @sweep) matches one of @fault with no
 * softhca frame inside it, i.e. the allocation that failed was ib_core's
 * own, made after the driver had done its part; a kmemleak report is
 * excused when its allocation backtrace begins with one of @leak (so no
 * softhca frame lies between the allocation and the ib_core function
 * that leaks it; softhca's frames further out, like softhca_newlink()
 * calling ib_register_device(), are how every device registers), at most
 * @leaks_per_hit objects per @leak for each attempt excused above (when
 * @leaks_per_hit is 0, the bug has no symptom a sweep sees, and its
 * reports are excused only when @sweep ran).  Spec syntax: frames_match().
 */
enum symptom {
	SYM_NONE,
	SYM_XRCD_LEAK,	/* an XRC domain outlives its last close */
};

struct known_bug {
	const char *name;
	const char *where;	/* in linux-source-6.1 */
	const char *sweep;
	enum symptom symptom;
	const char *fault[3];
	const char *leak[3];
	int leaks_per_hit;
	int hits;		/* attempts excused in this run */
};

static struct known_bug known_bugs[] = {
	/*
	 * ib_create_qp_user() for an XRC_TGT QP: once the driver's
	 * create_qp has succeeded, create_xrc_qp_user() takes a use count
	 * on the XRC domain (atomic_inc(&xrcd->usecnt)), then allocates
	 * the creator's handle (__ib_open_qp(): kzalloc) and stores the
	 * QP in the domain (xa_store()).  When either fails,
	 * ib_create_qp_user() destroys the real QP with ib_destroy_qp(),
	 * which never drops that use count: only __ib_destroy_shared_qp()
	 * does.  The call fails with ENOMEM as it should, but the domain
	 * then outlives its last ibv_close_xrcd(): ib_uverbs keeps it and
	 * its inode-table entry (xrcd_table_insert()) for good, kmemleak
	 * reports both once the device is gone, and the driver is never
	 * asked to deallocate it (softhca_dealloc_driver() says so).  The
	 * xa_store() failure takes two failed allocations (XArray retries
	 * a failed GFP_NOWAIT node allocation with GFP_KERNEL), so a
	 * single injected fault reaches only __ib_open_qp()'s.
	 */
	{
		.name = "ib_create_qp_user() leaks an XRC domain use count when it fails after the driver made the XRC_TGT QP",
		.where = "drivers/infiniband/core/verbs.c: create_xrc_qp_user(), ib_create_qp_user()",
		.sweep = "ibv_create_qp XRC_RECV",
		.symptom = SYM_XRCD_LEAK,
		.fault = { "__ib_open_qp ib_create_qp_user",
			   "xa_store ib_create_qp_user" },
		.leak = { "__kmalloc ib_alloc_xrcd_user ib_uverbs_open_xrcd",
			  "kmalloc_trace ib_uverbs_open_xrcd" },
		.leaks_per_hit = 1,
	},
	/*
	 * uverbs_alloc_api(), ib_uverbs's table of methods for a new
	 * device: when building it fails, uverbs_destroy_api() frees the
	 * radix tree by deleting its entries (uapi_remove_range()).  A
	 * radix_tree_insert() that failed halfway (lib/radix-tree.c,
	 * __radix_tree_create(): a node allocation failed after the nodes
	 * above it were linked in) leaves empty nodes that no entry leads
	 * to; deleting the entries frees neither them nor their ancestors,
	 * whose counts they keep above zero.  ib_core ignores the failed
	 * client add (the device registers without its uverbs node), and
	 * the nodes leak.  No sweep check sees it: kmemleak does.
	 */
	{
		.name = "uverbs_alloc_api() error path leaks the radix tree nodes of a half-done insert",
		.where = "drivers/infiniband/core/uverbs_uapi.c: uverbs_alloc_api(), uverbs_destroy_api()",
		.sweep = "rdma link add",
		.fault = { "radix_tree_node_alloc radix_tree_insert uapi_add_get_elm uapi_merge_def+ uverbs_alloc_api" },
		.leak = { "radix_tree_node_alloc radix_tree_insert uapi_add_get_elm uapi_merge_def+ uverbs_alloc_api ib_uverbs_add_one" },
	},
};

#define NKNOWN ((int)(sizeof(known_bugs) / sizeof(known_bugs[0])))

/* The known bug whose @sym this fault stack shows, or NULL. */
static struct known_bug *known_fault(enum symptom sym, struct fstack *st)
{
	int i, k;

	if (!st->done)
		return NULL;
	for (i = 0; i < NKNOWN; i++)
		for (k = 0; k < 3 && known_bugs[i].fault[k]; k++)
			if (known_bugs[i].symptom == sym &&
			    frames_match(st->f, st->n, known_bugs[i].fault[k], 0))
				return &known_bugs[i];
	return NULL;
}

/* Whether attempts of sweep @name need their fault's stack. */
static int sweep_needs_stacks(const char *name)
{
	int i;

	for (i = 0; i < NKNOWN; i++)
		if (known_bugs[i].symptom != SYM_NONE &&
		    !strcmp(known_bugs[i].sweep, name))
			return 1;
	return 0;
}

/* The stack, short: from the allocator out, @max frames. */
static const char *stack_str(const struct fstack *st, int max)
{
	static char buf[1024];
	size_t len = 0;
	int i, shown = 0;

	buf[0] = 0;
	for (i = 0; i < st->n && shown < max; i++) {
		if (!strncmp(st->f[i], "dump_stack", 10) ||
		    !strncmp(st->f[i], "should_fail", 11) ||
		    !strncmp(st->f[i], "__should_fail", 13) ||
		    !strncmp(st->f[i], "__kmem_cache_alloc", 18))
			continue;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
					shown ? " < " : "", st->f[i]);
		if (len >= sizeof(buf))
			break;
		shown++;
	}
	return buf;
}

static void note_errno(struct result *r, int e)
{
	int i;

	for (i = 0; i < MAX_ERRNO; i++) {
		if (r->err[i] == e || !r->err[i]) {
			r->err[i] = e;
			r->err_n[i]++;
			return;
		}
	}
}

static int errno_ok(const struct op *op, int e)
{
	int i;

	if (e == ENOMEM)
		return 1;
	for (i = 0; i < 3 && op->also[i]; i++)
		if (op->also[i] == e)
			return 1;
	return 0;
}

static void report(const struct result *r)
{
	char errs[160] = "";
	size_t len = 0;
	int i;

	for (i = 0; i < MAX_ERRNO && r->err[i]; i++)
		len += (size_t)snprintf(errs + len, sizeof(errs) - len,
					"%s%s x%d", i ? ", " : "",
					strerrorname_np(r->err[i]), r->err_n[i]);
	printf("NOTE: %s: %d sites", r->name, r->sites);
	if (r->skipped)
		printf(" (%d tried, %d sampled out inside %s, stride %d)",
		       r->sites - r->skipped, r->skipped, cur->region, stride);
	printf(", %d failed (%s), %d absorbed", r->failed, len ? errs : "-",
	       r->absorbed);
	if (r->known)
		printf(", %d excused as a known kernel bug", r->known);
	printf(", %.1f s\n", r->secs);
}

/*
 * One attempt at site @n: arm, call, check.  Returns 0 when the fault
 * fired (*@bad set on misbehaviour), 1 when it did not and the call
 * succeeded (the result is left for the caller: done(1) or done(0)),
 * -1 when the sweep cannot go on.
 */
static int attempt(const struct op *op, struct result *r, int n, int *bad)
{
	int err, fired, leaks;
	struct snap before;

	if (take_snap(&before)) {
		printf("# %s: cannot read the counters\n", op->name);
		return -1;
	}
	err = op->prep ? op->prep() : 0;
	if (err) {
		printf("# %s n=%d: preparation failed: %s\n", op->name, n,
		       strerror(err));
		return -1;
	}
	/* A sampled sweep's evidence is the fault's stack (in_region). */
	set_verbose(stacks_asked(op->name, n) || sweep_needs_stacks(op->name) ||
		    op->in_region ? 2 : verbose_dflt);
	kmsg_skip();
	arm((unsigned int)n);
	err = op->call();
	fired = disarm();
	kmsg_read_fault();
	log_site(op->name, n, fired, err);
	if (trace)
		printf("# trace: %s n=%d fired %d: %s\n", op->name, n, fired,
		       err ? strerrorname_np(err) : "ok");
	if (!fired) {
		if (!err)
			return 1;
		printf("# %s n=%d: failed without an injected fault: %s\n",
		       op->name, n, strerror(err));
		return -1;
	}
	leaks = xrcd_leaks;
	in_attempt = 1;
	if (err) {
		r->failed++;
		note_errno(r, err);
		if (!errno_ok(op, err)) {
			printf("# %s n=%d: failed with %s (%s)\n", op->name, n,
			       strerrorname_np(err), strerror(err));
			*bad = 1;
		}
		if (op->failed && op->failed())
			*bad = 1, printf("# %s n=%d: state after the failure is wrong\n",
					 op->name, n);
	} else {
		r->absorbed++;
		if (op->done(0))
			*bad = 1, printf("# %s n=%d: the result of an absorbed fault is wrong\n",
					 op->name, n);
	}
	in_attempt = 0;
	if (xrcd_leaks != leaks) {
		struct known_bug *kb = known_fault(SYM_XRCD_LEAK, &fault_stack);

		if (kb) {
			kb->hits++;
			r->known++;
			printf("NOTE: known 6.1 ib_core bug: %s n=%d: %s (%s); the injected fault: %s\n",
			       op->name, n, kb->name, kb->where,
			       stack_str(&fault_stack, 5));
		} else {
			printf("# %s n=%d: the file's XRC domain outlived its last close: a use count leaked; the injected fault: %s\n",
			       op->name, n, fault_stack.done ?
			       stack_str(&fault_stack, 8) :
			       "no stack (__GFP_NOWARN, or not asked for)");
			*bad = 1;
		}
	}
	if (snap_diff(&before, op->name, n))
		*bad = 1;
	return 0;
}

/*
 * Sweep @op: fail its 1st, 2nd, ... allocation until it succeeds
 * without the fault.  Returns 0 when every step behaved.
 *
 * With @op->in_region, sites proven to lie inside @op->region are
 * sampled: after an attempt whose fault was inside it (at a), the next
 * is a + stride; when that one (or one of the next few tried one by
 * one) is inside too, with a's key, at b, every site between a and b
 * was inside the same run of code that never calls the driver, and
 * those not tried are counted as sampled out.  When no such site is
 * found soon after the landing, or the call ran out of allocations,
 * the skipped sites are all tried after all.
 */
static int sweep(const struct op *op)
{
	enum { WALK = 4 };
	struct result *r = &results[nresults];
	int n = 1, bad = 0, last = cap, rc;
	/* Sampling: the last site inside, where the jump from it landed,
	 * the skipped sites being tried (bt: up to bt_end, then resume). */
	int anchor = 0, land = 0, bt = 0, bt_end = 0, resume = 0;
	unsigned long key, anchor_key = 0;
	double t0 = now();

	if (nresults == (int)(sizeof(results) / sizeof(results[0]))) {
		printf("# more sweeps than results[] holds\n");
		return -1;
	}
	nresults++;
	cur = op;
	if (op->cap && !cap_env)
		last = op->cap;
	r->name = op->name;
	while (n <= last) {
		rc = attempt(op, r, n, &bad);
		if (rc < 0)
			return -1;
		if (bad)
			r->ok = 0;	/* go on: later steps tell more */
		if (rc == 1 && land) {
			/* The call ran out of allocations: try the skipped. */
			if (op->done(0))
				bad = 1;
			bt = 1, resume = n, bt_end = land - 1, n = anchor + 1;
			land = 0;
			continue;
		}
		if (rc == 1) {
			r->sites = n - 1;
			if (op->done(1))
				bad = 1;
			r->ok = !bad;
			r->secs = now() - t0;
			report(r);
			return bad ? -1 : 0;
		}
		if (bt) {
			if (n < bt_end) {
				n++;
			} else {
				bt = 0;
				n = resume;
			}
			continue;
		}
		key = op->in_region && stride > 1 ? op->in_region() : 0;
		if (key && (!land || key == anchor_key)) {
			if (land)
				r->skipped += land - anchor - 1;
			anchor = n, anchor_key = key;
			land = n = n + stride;
			continue;
		}
		if (land && n - land + 1 >= WALK) {
			/* Not inside again soon: try the skipped sites. */
			bt = 1, resume = n + 1, bt_end = land - 1, n = anchor + 1;
			land = 0;
			continue;
		}
		n++;
	}
	printf("# %s: no success within %d injected faults\n", op->name, last);
	return -1;
}

#endif
