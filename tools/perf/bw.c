// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca-perf: bandwidth and message rate.
 *
 * The requester keeps up to --depth operations in flight on each of its
 * --qps QPs, posting round robin, and signals one WQE in CQ_MOD (and the
 * last one of each QP); a signaled completion retires every WQE before
 * it.  For SEND the responder keeps each receive queue full, reposting
 * as completions arrive; in one thread the same loop serves both.  The
 * window runs from the first post to the last completion.
 *
 * UD has no flow control: the sender's rate is reported, and receives
 * that a full receive queue dropped are not waited for.
 */
#include <stdio.h>
#include <stdlib.h>

#include "perf.h"

#define CQ_MOD 16

struct bw_state {
	long *posted, *done, *quota;
	long total_posted, total_done, received, iters;
	int cq_mod, nqps, next;
};

/* Reap receive completions at @e, reposting each receive. */
static int serve_rq(struct perf_run *r, struct perf_end *e,
		    struct bw_state *s, bool block)
{
	struct ibv_wc wc[32];
	int n, i;

	n = block ? perf_poll(e, e->rcq, 32, wc, r->o->events) :
		    ibv_poll_cq(e->rcq, 32, wc);
	if (n < 0 || perf_wc_ok(wc, n))
		return -1;
	for (i = 0; i < n; i++) {
		e->rq_out[wc[i].wr_id]--;
		if (perf_post_recv(e, (int)wc[i].wr_id))
			return -1;
	}
	s->received += n;
	return 0;
}

/* Post on every QP that has room, round robin. */
static int post_some(struct perf_run *r, uint32_t bytes, struct bw_state *s)
{
	int tries;

	for (tries = 0; tries < s->nqps && s->total_posted < s->iters; tries++) {
		int q = s->next;
		long k = s->posted[q];
		bool sig;

		s->next = (s->next + 1) % s->nqps;
		if (k == s->quota[q] || k - s->done[q] >= r->o->depth)
			continue;
		sig = (k + 1) % s->cq_mod == 0 || k + 1 == s->quota[q];
		if (perf_post(r, r->a, &r->pa, q, bytes, sig,
			      ((uint64_t)q << 32) | (uint64_t)k,
			      (uint64_t)s->total_posted))
			return -1;
		s->posted[q]++;
		s->total_posted++;
		tries = -1;	/* keep going while anything had room */
	}
	return 0;
}

static int reap_sends(struct perf_run *r, struct bw_state *s, bool block)
{
	struct ibv_wc wc[32];
	int n, i;

	n = block ? perf_poll(r->a, r->a->scq, 32, wc, r->o->events) :
		    ibv_poll_cq(r->a->scq, 32, wc);
	if (n < 0 || perf_wc_ok(wc, n))
		return -1;
	for (i = 0; i < n; i++) {
		int q = (int)(wc[i].wr_id >> 32);
		long k = (long)(uint32_t)wc[i].wr_id + 1;

		s->total_done += k - s->done[q];
		s->done[q] = k;
	}
	return 0;
}

/* The requester's loop; with MODE_LOCAL it also serves the receiver. */
static int drive(struct perf_run *r, uint32_t bytes, struct bw_state *s)
{
	bool serve = r->o->mode == MODE_LOCAL && r->o->op == OP_SEND;
	bool ud = r->o->qpt == IBV_QPT_UD;

	while (s->total_done < s->iters ||
	       (serve && !ud && s->received < s->iters)) {
		if (post_some(r, bytes, s))
			return -1;
		if (s->total_done < s->iters &&
		    reap_sends(r, s, !serve && s->total_posted == s->iters))
			return -1;
		if (serve && serve_rq(r, r->b, s, false))
			return -1;
	}
	while (serve && ud) {	/* what has arrived, without waiting */
		long before = s->received;

		if (serve_rq(r, r->b, s, false))
			return -1;
		if (s->received == before)
			break;
	}
	return 0;
}

int perf_bw(struct perf_run *r, uint32_t bytes, long iters,
	    struct perf_result *res)
{
	struct bw_state s = { .iters = iters, .nqps = r->a->nqps };
	struct perf_meter m = { 0 };
	int q, rc = -1;

	s.cq_mod = r->o->depth < CQ_MOD ? r->o->depth : CQ_MOD;
	s.posted = calloc((size_t)s.nqps, sizeof(long));
	s.done = calloc((size_t)s.nqps, sizeof(long));
	s.quota = calloc((size_t)s.nqps, sizeof(long));
	if (!s.posted || !s.done || !s.quota)
		goto out;
	for (q = 0; q < s.nqps; q++)
		s.quota[q] = iters / s.nqps + (q < iters % s.nqps);

	if (r->o->op == OP_SEND) {
		struct perf_end *rx = r->o->mode == MODE_LOCAL ? r->b :
				      r->server ? r->a : NULL;

		if (rx && perf_fill_rq(rx, 2 * r->o->depth + 16))
			goto out;
	}
	if (r->o->mode == MODE_FORK && perf_sync(r->fd))
		goto out;
	perf_meter_start(&m);
	if (!r->server) {
		if (drive(r, bytes, &s))
			goto out;
	} else if (r->o->op == OP_SEND) {
		while (s.received < iters)
			if (serve_rq(r, r->a, &s, true))
				goto out;
	}
	if (r->o->mode == MODE_FORK && perf_sync(r->fd))
		goto out;
	if (perf_window_close(r, &m, iters, res))
		goto out;
	res->mpps = (double)iters / (double)(m.ns1 - m.ns0) * 1e3;
	res->mib_s = res->mpps * 1e6 * (r->o->op == OP_ATOMIC ? 8 : bytes) /
		     (1 << 20);
	rc = 0;
out:
	free(m.kth0);	/* a window left open */
	free(s.posted);
	free(s.done);
	free(s.quota);
	return rc;
}
