// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca-perf: posting operations, reaping send completions, and
 * closing a measurement window (shared by lat.c and bw.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perf.h"

/* Post one operation on traffic QP @q of @e towards @p. */
int perf_post(struct perf_run *r, struct perf_end *e,
	      const struct perf_peer *p, int q, uint32_t bytes, bool signaled,
	      uint64_t wr_id, uint64_t cmp)
{
	const struct perf_opts *o = r->o;
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + e->rlen, .length = bytes,
		.lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
	}, *bad;

	switch (o->op) {
	case OP_SEND:
		wr.opcode = IBV_WR_SEND;
		if (o->qpt == IBV_QPT_UD) {
			wr.wr.ud.ah = e->ah;
			wr.wr.ud.remote_qpn = p->qpn[q];
			wr.wr.ud.remote_qkey = PERF_QKEY;
		}
		break;
	case OP_WRITE:
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = p->addr;
		wr.wr.rdma.rkey = p->rkey;
		break;
	case OP_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = p->addr;
		wr.wr.rdma.rkey = p->rkey;
		break;
	case OP_ATOMIC:
		sge.length = 8;
		wr.opcode = o->cas ? IBV_WR_ATOMIC_CMP_AND_SWP :
			    IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = p->addr;
		wr.wr.atomic.rkey = p->rkey;
		wr.wr.atomic.compare_add = o->cas ? cmp : 1;
		wr.wr.atomic.swap = cmp + 1;
		break;
	}
	if ((o->op == OP_SEND || o->op == OP_WRITE) && bytes &&
	    bytes <= (uint32_t)o->inline_max)
		wr.send_flags |= IBV_SEND_INLINE;
	if (ibv_post_send(e->qp[q], &wr, &bad)) {
		fprintf(stderr, "softhca-perf: post_send: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* A completion that is not a success ends the run, saying why. */
int perf_wc_ok(const struct ibv_wc *wc, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (wc[i].status == IBV_WC_SUCCESS)
			continue;
		fprintf(stderr, "softhca-perf: completion error on QP %u: %s (%d)\n",
			wc[i].qp_num, ibv_wc_status_str(wc[i].status),
			wc[i].status);
		return -1;
	}
	return 0;
}

/*
 * Close the window: stop the meter and compute the per-operation costs.
 * With two processes the responder sends its own counts (system calls,
 * CPU) and they are added, so the figures cover the application's both
 * ends, as in one process.
 */
int perf_window_close(struct perf_run *r, struct perf_meter *m, long ops,
		      struct perf_result *res)
{
	struct { long long sys; uint64_t cpu_ns; } mine, peer;

	perf_meter_stop(m);
	perf_meter_result(m, ops, res);
	if (r->o->mode != MODE_FORK)
		return 0;
	mine.sys = res->sys_per_op < 0 ? -1 :
		(long long)(res->sys_per_op * (double)ops + 0.5);
	mine.cpu_ns = m->cpu1 - m->cpu0;
	if (r->server)
		return perf_send_all(r->fd, &mine, sizeof(mine));
	if (perf_recv_all(r->fd, &peer, sizeof(peer)))
		return -1;
	if (mine.sys < 0 || peer.sys < 0)
		res->sys_per_op = -1;
	else
		res->sys_per_op = (double)(mine.sys + peer.sys) /
				  (double)(ops ? ops : 1);
	res->cpu_us_per_op = (double)(mine.cpu_ns + peer.cpu_ns) / 1e3 /
			     (double)(ops ? ops : 1);
	return 0;
}
