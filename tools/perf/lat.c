// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca-perf: latency.
 *
 * SEND and RDMA WRITE are ping-pongs.  When one thread drives both ends
 * (MODE_LOCAL) each hop is timed on its own: from posting on one end to
 * the other end seeing the message (its receive completion for SEND, the
 * last byte of the buffer changing for WRITE, as perftest does), a true
 * one-way latency on one clock.  With two processes the sender times the
 * round trip and halves it.  RDMA READ and atomics are timed from the
 * post to their own completion: a full round trip, reported as such.
 *
 * Sends are signaled one in SIG_EVERY and their completions reaped on
 * the way, so a send completion never sits on the measured path.
 *
 * SOFTHCA_PERF_SAMPLES=FILE (environment) appends every timed sample,
 * in microseconds and in the order taken, to FILE: a ping-pong's hops
 * alternate direction, so where each message falls in the SIG_EVERY
 * cycle shows what the signaled ones (on RC, those asking for an ACK)
 * cost the hops around them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "perf.h"

#define SIG_EVERY 8

struct flow {			/* one direction of a ping-pong */
	struct perf_end *e;	/* sender */
	const struct perf_peer *p;
	struct perf_end *rx;	/* receiver (MODE_LOCAL), else NULL */
	long posted, pending;	/* sends; signaled ones not yet reaped */
};

static int reap(struct perf_run *r, struct flow *f, bool block)
{
	struct ibv_wc wc[4];
	int n;

	if (block)
		n = perf_poll(f->e, f->e->scq, 4, wc, r->o->events);
	else
		n = ibv_poll_cq(f->e->scq, 4, wc);
	if (n < 0 || perf_wc_ok(wc, n))
		return -1;
	f->pending -= n;
	return 0;
}

static int flow_send(struct perf_run *r, struct flow *f, uint32_t bytes)
{
	bool sig = f->posted % SIG_EVERY == SIG_EVERY - 1;

	if (f->pending && reap(r, f, false))
		return -1;
	while (f->pending >= 2)
		if (reap(r, f, true))
			return -1;
	if (r->o->op == OP_WRITE)
		f->e->buf[f->e->rlen + bytes - 1] = (uint8_t)(f->posted % 255 + 1);
	if (perf_post(r, f->e, f->p, 0, bytes, sig, 0, 0))
		return -1;
	f->posted++;
	f->pending += sig;
	return 0;
}

/* Wait for message @seq of a flow at @e, its receiver. */
static int arrive(struct perf_run *r, struct perf_end *e, long seq,
		  uint32_t bytes)
{
	uint64_t limit, start = 0;
	unsigned long spins = 0;
	struct ibv_wc wc;

	if (r->o->op == OP_SEND) {
		if (perf_poll(e, e->rcq, 1, &wc, r->o->events) != 1 ||
		    perf_wc_ok(&wc, 1))
			return -1;
		e->rq_out[0]--;
		return 0;
	}
	limit = (uint64_t)(perf_ticks_per_us * 10e6);
	while (((volatile uint8_t *)e->buf)[bytes - 1] != (uint8_t)(seq % 255 + 1)) {
		if (++spins % 4096)
			continue;
		if (!start) {
			start = perf_ticks();
		} else if (perf_ticks() - start > limit) {
			fprintf(stderr, "softhca-perf: RDMA WRITE did not land in 10 s\n");
			return -1;
		}
	}
	return 0;
}

/* Replace the receive a SEND used (after the hop's timestamp). */
static int prepost(struct perf_run *r, struct perf_end *e)
{
	return r->o->op == OP_SEND ? perf_fill_rq(e, 16) : 0;
}

/* @n ping-pongs; @t (if not NULL) gets one sample per measured hop. */
static long pingpong(struct perf_run *r, struct flow *ab, struct flow *ba,
		     uint32_t bytes, long n, double *t)
{
	long i, k = 0;
	uint64_t t0;

	for (i = 0; i < n; i++) {
		if (r->o->mode == MODE_LOCAL) {
			struct flow *f[2] = { ab, ba };
			int d;

			for (d = 0; d < 2; d++) {	/* there and back */
				t0 = perf_ticks();
				if (flow_send(r, f[d], bytes) ||
				    arrive(r, f[d]->rx, f[d]->posted - 1, bytes))
					return -1;
				if (t)
					t[k++] = (double)(perf_ticks() - t0);
				if (prepost(r, f[d]->rx))
					return -1;
			}
		} else if (!r->server) {
			t0 = perf_ticks();
			if (flow_send(r, ab, bytes) ||
			    arrive(r, r->a, ab->posted - 1, bytes))
				return -1;
			if (t)
				t[k++] = (double)(perf_ticks() - t0) / 2;
			if (prepost(r, r->a))
				return -1;
		} else {
			if (arrive(r, r->a, ab->posted, bytes) ||
			    prepost(r, r->a) || flow_send(r, ab, bytes))
				return -1;
		}
	}
	return k;
}

/* READ or atomic: @n operations, each waited for. */
static long roundtrips(struct perf_run *r, uint32_t bytes, long n, long *seq,
		       double *t)
{
	struct ibv_wc wc;
	long i, k = 0;
	uint64_t t0;

	for (i = 0; i < n; i++, (*seq)++) {
		t0 = perf_ticks();
		if (perf_post(r, r->a, &r->pa, 0, bytes, true, 0,
			      (uint64_t)*seq) ||
		    perf_poll(r->a, r->a->scq, 1, &wc, r->o->events) != 1 ||
		    perf_wc_ok(&wc, 1))
			return -1;
		if (t)
			t[k++] = (double)(perf_ticks() - t0);
	}
	return k;
}

int perf_lat(struct perf_run *r, uint32_t bytes, long iters,
	     struct perf_result *res)
{
	struct flow ab = { r->a, &r->pa, r->b, 0, 0 };
	struct flow ba = { r->b, &r->pb, r->a, 0, 0 };
	long warm = iters / 10 < 100 ? iters / 10 : 100, n, seq = 0;
	bool pingpong_op = r->o->op == OP_SEND || r->o->op == OP_WRITE;
	const char *samples = getenv("SOFTHCA_PERF_SAMPLES");
	struct perf_meter m = { 0 };
	double *t;
	long i;

	/* Fresh buffers: a WRITE's last byte must change every time. */
	for (i = 0; i < 2 && pingpong_op; i++) {
		struct perf_end *e = i ? r->b : r->a;

		if (e)
			e->buf[bytes ? bytes - 1 : 0] = 0;
	}
	t = calloc((size_t)iters * 2 + 1, sizeof(*t));
	if (!t)
		return -1;
	if (pingpong_op) {
		if (prepost(r, r->a) || (r->b && prepost(r, r->b)))
			goto fail;
		if (r->o->mode == MODE_FORK && perf_sync(r->fd))
			goto fail;
		perf_meter_begin(&m);
		if (pingpong(r, &ab, &ba, bytes, warm, NULL) < 0)
			goto fail;
		if (r->o->mode == MODE_FORK && perf_sync(r->fd))
			goto fail;
		perf_meter_start(&m);
		n = pingpong(r, &ab, &ba, bytes, iters, t);
	} else {
		if (r->o->mode == MODE_FORK && perf_sync(r->fd))
			goto fail;
		if (r->server) {
			/* The responder's CPU plays no part in a READ. */
			perf_meter_start(&m);
			n = 0;
		} else {
			perf_meter_begin(&m);
			if (roundtrips(r, bytes, warm, &seq, NULL) < 0)
				goto fail;
			perf_meter_start(&m);
			n = roundtrips(r, bytes, iters, &seq, t);
		}
	}
	if (n < 0)
		goto fail;
	/* Let the other process finish its last hop before closing. */
	if (r->o->mode == MODE_FORK && !pingpong_op && perf_sync(r->fd))
		goto fail;
	if (perf_window_close(r, &m, n, res))
		goto fail;
	for (i = 0; i < n; i++)
		t[i] *= perf_ticks_to_us(&m, 1);
	if (samples) {
		FILE *sf = fopen(samples, "a");

		if (!sf) {
			perror(samples);
			goto fail;
		}
		for (i = 0; i < n; i++)
			fprintf(sf, "%.2f\n", t[i]);
		fclose(sf);
	}
	perf_stats(t, n, res);
	/* Reap what is left so the next size starts from empty queues. */
	while (ab.pending && !reap(r, &ab, true))
		;
	while (r->b && ba.pending && !reap(r, &ba, true))
		;
	free(t);
	return ab.pending || ba.pending ? -1 : 0;
fail:
	free(m.kth0);	/* a window left open */
	free(t);
	return -1;
}
