// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca-perf: devices, queue pairs and connecting them.
 *
 * Each end owns a context, a PD, a send CQ and a receive CQ (on one
 * completion channel when --events), one registered buffer and its QPs.
 * The buffer holds two halves of perf_end.rlen bytes: the first receives
 * (SEND and RDMA WRITE targets, the atomic word), the second is the
 * source of SENDs and WRITEs and the sink of READs and atomic results.
 *
 * Two processes exchange struct perf_wire over a socketpair; one process
 * driving both ends fills struct perf_peer directly from the other end.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "perf.h"

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i, found = 0;

	for (i = 0; list && list[i]; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		found = 1;
		ctx = ibv_open_device(list[i]);
	}
	if (list)
		ibv_free_device_list(list);
	if (!found)
		errno = ENODEV;
	return ctx;
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 1024;
}

static enum ibv_mtu mtu_enum(uint32_t bytes)
{
	enum ibv_mtu m = IBV_MTU_256;

	while (m < IBV_MTU_4096 && (128u << (m + 1)) <= bytes)
		m++;
	return m;
}

int perf_end_open(struct perf_end *e, const struct perf_opts *o,
		  const char *dev, size_t buf_len)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int cqe = o->depth * o->qps * 2 + 64;

	memset(e, 0, sizeof(*e));
	e->ctx = open_by_name(dev);
	if (!e->ctx) {
		fprintf(stderr, "softhca-perf: cannot open device %s: %s\n",
			dev, strerror(errno));
		return -1;
	}
	if (ibv_query_device(e->ctx, &da) ||
	    ibv_query_port(e->ctx, (uint8_t)o->ib_port, &pa) ||
	    ibv_query_gid(e->ctx, (uint8_t)o->ib_port, o->gid_index, &e->gid)) {
		fprintf(stderr, "softhca-perf: %s: cannot query device, port %d or GID %d: %s\n",
			dev, o->ib_port, o->gid_index, strerror(errno));
		return -1;
	}
	e->active_mtu = mtu_bytes(pa.active_mtu);
	e->max_rd = (uint32_t)(da.max_qp_rd_atom < da.max_qp_init_rd_atom ?
			       da.max_qp_rd_atom : da.max_qp_init_rd_atom);
	if (e->max_rd > 16)
		e->max_rd = 16;
	if (!e->max_rd)
		e->max_rd = 1;
	e->pd = ibv_alloc_pd(e->ctx);
	if (o->events) {
		e->ch = ibv_create_comp_channel(e->ctx);
		if (!e->ch)
			goto fail;
	}
	e->scq = ibv_create_cq(e->ctx, cqe, NULL, e->ch, 0);
	e->rcq = ibv_create_cq(e->ctx, cqe, NULL, e->ch, 0);
	e->buf_len = (buf_len + 4095) & ~(size_t)4095;
	e->rlen = (uint32_t)(e->buf_len / 2);
	e->buf = mmap(NULL, e->buf_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!e->pd || !e->scq || !e->rcq || e->buf == MAP_FAILED)
		goto fail;
	e->mr = ibv_reg_mr(e->pd, e->buf, e->buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!e->mr)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "softhca-perf: %s: cannot set up PD, CQs or a %zu-byte MR: %s\n",
		dev, e->buf_len, strerror(errno));
	return -1;
}

static struct ibv_qp *qp_make(struct perf_end *e, const struct perf_opts *o,
			      struct ibv_cq *cq, int depth, bool idle)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = idle ? cq : e->scq,
		.recv_cq = idle ? cq : e->rcq,
		.qp_type = idle ? IBV_QPT_RC : o->qpt,
		.cap = {
			.max_send_wr = (uint32_t)depth,
			.max_recv_wr = (uint32_t)depth,
			.max_send_sge = 1, .max_recv_sge = 1,
			.max_inline_data = idle ? 0 : (uint32_t)o->inline_max,
		},
	};

	return ibv_create_qp(e->pd, &ia);
}

/* The traffic QPs (and the idle ones) of @e, not yet connected. */
int perf_end_qps(struct perf_end *e, const struct perf_opts *o)
{
	int i, depth = o->depth + 16;

	e->nqps = o->qps;
	e->qp = calloc((size_t)e->nqps, sizeof(*e->qp));
	e->rq_out = calloc((size_t)e->nqps, sizeof(*e->rq_out));
	if (!e->qp || !e->rq_out)
		return -1;
	for (i = 0; i < e->nqps; i++) {
		e->qp[i] = qp_make(e, o, NULL, depth * 2, false);
		if (!e->qp[i])
			goto fail;
	}
	e->nidle = o->idle_qps / 2;
	if (!e->nidle)
		return 0;
	e->idle = calloc((size_t)e->nidle, sizeof(*e->idle));
	e->idle_cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	if (!e->idle || !e->idle_cq)
		goto fail;
	for (i = 0; i < e->nidle; i++) {
		e->idle[i] = qp_make(e, o, e->idle_cq, 1, true);
		if (!e->idle[i])
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "softhca-perf: cannot create QP %d: %s\n", i,
		strerror(errno));
	return -1;
}

static int qp_connect(struct ibv_qp *qp, const struct perf_opts *o,
		      const union ibv_gid *dgid, uint32_t dqpn, uint32_t mtu,
		      uint32_t max_rd)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = (uint8_t)o->ib_port,
		.qkey = PERF_QKEY,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (ibv_modify_qp(qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (qp->qp_type != IBV_QPT_UD) {
		a.path_mtu = mtu_enum(mtu);
		a.dest_qp_num = dqpn;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = (uint8_t)o->ib_port;
		a.ah_attr.grh.dgid = *dgid;
		a.ah_attr.grh.sgid_index = (uint8_t)o->gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.max_dest_rd_atomic = (uint8_t)max_rd;
		a.min_rnr_timer = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qp->qp_type != IBV_QPT_UD) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = (uint8_t)max_rd;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/* Bring @e's traffic QPs to RTS towards the peer's; UD: an AH to it. */
int perf_connect(struct perf_end *e, const struct perf_opts *o,
		 const struct perf_peer *p)
{
	uint32_t mtu = e->active_mtu < p->active_mtu ? e->active_mtu :
		       p->active_mtu;
	int i;

	for (i = 0; i < e->nqps; i++) {
		if (qp_connect(e->qp[i], o, &p->gid, p->qpn[i], mtu, e->max_rd)) {
			fprintf(stderr, "softhca-perf: cannot connect QP %u: %s\n",
				e->qp[i]->qp_num, strerror(errno));
			return -1;
		}
	}
	if (o->qpt == IBV_QPT_UD) {
		struct ibv_ah_attr ah = {
			.is_global = 1, .port_num = (uint8_t)o->ib_port,
			.grh = { .dgid = p->gid, .hop_limit = 64,
				 .sgid_index = (uint8_t)o->gid_index },
		};

		e->ah = ibv_create_ah(e->pd, &ah);
		if (!e->ah) {
			fprintf(stderr, "softhca-perf: cannot create an AH: %s\n",
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Connect the idle QPs of @a and @b pairwise (one process). */
int perf_connect_idle(struct perf_end *a, struct perf_end *b,
		      const struct perf_opts *o)
{
	int i;

	for (i = 0; i < a->nidle && i < b->nidle; i++) {
		if (qp_connect(a->idle[i], o, &b->gid, b->idle[i]->qp_num,
			       a->active_mtu, 1) ||
		    qp_connect(b->idle[i], o, &a->gid, a->idle[i]->qp_num,
			       b->active_mtu, 1)) {
			fprintf(stderr, "softhca-perf: cannot connect idle QP pair %d: %s\n",
				i, strerror(errno));
			return -1;
		}
	}
	return 0;
}

void perf_end_close(struct perf_end *e)
{
	int i;

	if (e->ah)
		ibv_destroy_ah(e->ah);
	for (i = 0; e->qp && i < e->nqps; i++)
		if (e->qp[i])
			ibv_destroy_qp(e->qp[i]);
	for (i = 0; e->idle && i < e->nidle; i++)
		if (e->idle[i])
			ibv_destroy_qp(e->idle[i]);
	free(e->qp);
	free(e->rq_out);
	free(e->idle);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->scq)
		ibv_destroy_cq(e->scq);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	if (e->idle_cq)
		ibv_destroy_cq(e->idle_cq);
	if (e->ch)
		ibv_destroy_comp_channel(e->ch);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->buf && e->buf != MAP_FAILED)
		munmap(e->buf, e->buf_len);
	if (e->ctx)
		ibv_close_device(e->ctx);
	memset(e, 0, sizeof(*e));
}

/* Move all @len bytes over @fd, in one direction or the other. */
static int xfer_all(int fd, char *p, size_t len, bool out)
{
	while (len) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int perf_send_all(int fd, const void *buf, size_t len)
{
	return xfer_all(fd, (char *)buf, len, true);
}

int perf_recv_all(int fd, void *buf, size_t len)
{
	return xfer_all(fd, buf, len, false);
}

/* Both processes reach this point before either goes on. */
int perf_sync(int fd)
{
	char c = 's';

	if (perf_send_all(fd, &c, 1) || perf_recv_all(fd, &c, 1))
		return -1;
	return 0;
}

/* Swap what each end needs to connect to the other. */
int perf_exchange(int fd, const struct perf_end *e, struct perf_peer *p)
{
	struct perf_wire w = {
		.gid = e->gid, .addr = (uintptr_t)e->buf, .rkey = e->mr->rkey,
		.nqps = (uint32_t)e->nqps, .active_mtu = e->active_mtu,
	};
	uint32_t qpn[256];
	int i;

	if (e->nqps > 256)
		return -1;
	for (i = 0; i < e->nqps; i++)
		qpn[i] = e->qp[i]->qp_num;
	if (perf_send_all(fd, &w, sizeof(w)) ||
	    perf_send_all(fd, qpn, sizeof(qpn[0]) * (size_t)e->nqps) ||
	    perf_recv_all(fd, &w, sizeof(w)) || w.nqps != (uint32_t)e->nqps)
		return -1;
	p->qpn = calloc(w.nqps, sizeof(*p->qpn));
	if (!p->qpn || perf_recv_all(fd, p->qpn, sizeof(*p->qpn) * w.nqps))
		return -1;
	p->gid = w.gid;
	p->addr = w.addr;
	p->rkey = w.rkey;
	p->active_mtu = w.active_mtu;
	return 0;
}

/* The peer as seen from one process that drives both ends. */
int perf_peer_of(const struct perf_end *e, struct perf_peer *p)
{
	int i;

	p->gid = e->gid;
	p->addr = (uintptr_t)e->buf;
	p->rkey = e->mr->rkey;
	p->active_mtu = e->active_mtu;
	p->qpn = calloc((size_t)e->nqps, sizeof(*p->qpn));
	if (!p->qpn)
		return -1;
	for (i = 0; i < e->nqps; i++)
		p->qpn[i] = e->qp[i]->qp_num;
	return 0;
}

/*
 * Reap up to @n completions from @cq.  Busy polling spins; with events
 * an empty CQ is armed, polled once more (a completion may have landed
 * before the arm), and then we sleep on the channel.  Gives up after
 * ten seconds without a completion (a peer that died, a lost message).
 */
int perf_poll(struct perf_end *e, struct ibv_cq *cq, int n, struct ibv_wc *wc,
	      bool events)
{
	uint64_t limit = (uint64_t)(perf_ticks_per_us * 10e6);
	struct pollfd pfd = { .fd = e->ch ? e->ch->fd : -1, .events = POLLIN };
	uint64_t start = 0;
	unsigned long spins = 0;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int k;

	for (;;) {
		k = ibv_poll_cq(cq, n, wc);
		if (k)
			return k;
		if (events) {
			if (ibv_req_notify_cq(cq, 0))
				return -1;
			k = ibv_poll_cq(cq, n, wc);
			if (k)
				return k;
			if (poll(&pfd, 1, 10000) != 1) {
				fprintf(stderr, "softhca-perf: no completion event for 10 s\n");
				return -1;
			}
			if (ibv_get_cq_event(e->ch, &ev_cq, &ev_ctx))
				return -1;
			ibv_ack_cq_events(ev_cq, 1);
			continue;
		}
		if (++spins % 4096)
			continue;
		if (!start)
			start = perf_ticks();
		else if (perf_ticks() - start > limit) {
			fprintf(stderr, "softhca-perf: no completion for 10 s\n");
			return -1;
		}
	}
}

/*
 * One receive on traffic QP @q of @e, of the whole receive half (so a
 * receive posted for one size fits every later one); e->rq_out counts
 * the receives outstanding, the caller drops it on each completion.
 */
int perf_post_recv(struct perf_end *e, int q)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf, .length = e->rlen,
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)q, .sg_list = &sge, .num_sge = 1,
	}, *bad;

	if (ibv_post_recv(e->qp[q], &wr, &bad)) {
		fprintf(stderr, "softhca-perf: post_recv: %s\n", strerror(errno));
		return -1;
	}
	e->rq_out[q]++;
	return 0;
}

/* Top every traffic QP's receive queue of @e up to @want receives. */
int perf_fill_rq(struct perf_end *e, int want)
{
	int q;

	for (q = 0; q < e->nqps; q++)
		while (e->rq_out[q] < want)
			if (perf_post_recv(e, q))
				return -1;
	return 0;
}
