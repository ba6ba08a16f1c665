/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The two ends of softhca's data path selftests: a requester side A and
 * a responder side B (a context, PD, CQ with a completion channel and a
 * 4 MiB registered buffer each, on one device or two) and QP pairs
 * between them (RC, UC, UD; the responder on an SRQ or not), with the
 * helpers to post, wait for and check work.  For single-file test
 * programs: everything is static.
 */
#ifndef SOFTHCA_SELFTEST_PAIR_H
#define SOFTHCA_SELFTEST_PAIR_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>

#include "tap.h"
#include "util.h"

#define BUF (4 << 20)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	uint8_t *buf;
	struct ibv_mr *mr;
	union ibv_gid gid;
};

static struct side A, B;	/* requester side, responder side */

struct pair {
	struct ibv_qp *a, *b;
	struct ibv_srq *srq;
	struct ibv_ah *ah;	/* UD: a -> b */
};

struct opts {
	int access;		/* b's qp_access_flags */
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	int srq;
	int sig_all;
	uint32_t recv_sge;
};

static inline int side_open(struct side *s, const char *name)
{
	s->ctx = open_by_name(name);
	if (!s->ctx)
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->ch = ibv_create_comp_channel(s->ctx);
	s->cq = s->ch ? ibv_create_cq(s->ctx, 4096, NULL, s->ch, 0) : NULL;
	s->buf = mmap(NULL, BUF, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!s->pd || !s->cq || s->buf == MAP_FAILED)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!s->mr || ibv_query_gid(s->ctx, 1, 0, &s->gid))
		return -1;
	return 0;
}

static inline int qp_connect(struct ibv_qp *qp, struct side *peer,
			     uint32_t dqpn, const struct opts *o, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access, .qkey = 0x1234,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (qp->qp_type == IBV_QPT_UD)
		mask |= IBV_QP_QKEY;
	else
		mask |= IBV_QP_ACCESS_FLAGS;
	if (ibv_modify_qp(qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (qp->qp_type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dqpn;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = peer->gid;
		a.ah_attr.grh.hop_limit = 64;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (qp->qp_type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = o->min_rnr_timer;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qp->qp_type == IBV_QPT_RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = o->rnr_retry;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &a, mask);
}

static inline int pair_make(struct pair *p, enum ibv_qp_type type,
			    const struct opts *o)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = A.cq, .recv_cq = A.cq, .qp_type = type,
		.sq_sig_all = o->sig_all,
		.cap = { .max_send_wr = 256, .max_recv_wr = 256,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 256 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 256,
						  .max_sge = 4 } };
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };

	memset(p, 0, sizeof(*p));
	p->a = ibv_create_qp(A.pd, &ia);
	ia.send_cq = B.cq;
	ia.recv_cq = B.cq;
	ia.sq_sig_all = 0;
	if (o->recv_sge)
		ia.cap.max_recv_sge = o->recv_sge;
	if (o->srq) {
		p->srq = ibv_create_srq(B.pd, &sa);
		ia.srq = p->srq;
	}
	p->b = ibv_create_qp(B.pd, &ia);
	if (!p->a || !p->b)
		return -1;
	if (qp_connect(p->a, &B, p->b->qp_num, o, 0) ||
	    qp_connect(p->b, &A, p->a->qp_num, o, o->access))
		return -1;
	if (type == IBV_QPT_UD) {
		ah.grh.dgid = B.gid;
		ah.grh.hop_limit = 64;
		p->ah = ibv_create_ah(A.pd, &ah);
		if (!p->ah)
			return -1;
	}
	return 0;
}

static inline void pair_free(struct pair *p)
{
	struct ibv_wc wc[16];

	CHECK(!p->a || !ibv_destroy_qp(p->a), "destroy qp a");
	CHECK(!p->b || !ibv_destroy_qp(p->b), "destroy qp b");
	CHECK(!p->srq || !ibv_destroy_srq(p->srq), "destroy srq");
	CHECK(!p->ah || !ibv_destroy_ah(p->ah), "destroy ah");
	/* Leave the shared CQs empty for the next test. */
	while (ibv_poll_cq(A.cq, 16, wc) > 0 || ibv_poll_cq(B.cq, 16, wc) > 0)
		;
}

static const struct opts RC_OPTS = {
	.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC,
	.rnr_retry = 7, .min_rnr_timer = 1,
};

/* Wait for one completion on @cq (busy polling, bounded). */
static inline int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	long spins;
	int n;

	for (spins = 0; spins < 200000000L; spins++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		if (spins > 100000)
			sched_yield();
	}
	return 0;
}

/* Nothing more arrives on @cq within a short while. */
static inline int cq_quiet(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 2000; i++) {
		if (ibv_poll_cq(cq, 1, &wc))
			return 0;
		usleep(50);
	}
	return 1;
}

static inline void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static inline int post_recv(struct pair *p, uint64_t id, uint64_t off,
			    uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)B.buf + off, len, B.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (p->srq)
		return ibv_post_srq_recv(p->srq, &wr, &bad);
	return ibv_post_recv(p->b, &wr, &bad);
}

/*
 * A loop count for this kernel: on the sanitizer tier's debug kernel
 * (SOFTHCA_SUITE=debug, set by tools/check) every access is checked and
 * runs several times slower under TCG, and KASAN, lockdep and kmemleak
 * look at every object and lock anyway: long loops run a tenth (at
 * least 1).  Same rule as scaled() in lib.sh.
 */
static inline long scaled(long n)
{
	const char *s = getenv("SOFTHCA_SUITE");

	if (!s || strcmp(s, "debug"))
		return n;
	return n / 10 > 0 ? n / 10 : 1;
}

/* Seconds since @t0 (CLOCK_MONOTONIC). */
static inline double secs_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The QP's state, or -1. */
static inline int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

/* Address @wr to B's buffer at @roff (RDMA) or, on UD, to p->b. */
static inline void pair_address(const struct pair *p, struct ibv_send_wr *wr,
				uint64_t roff)
{
	wr->wr.rdma.remote_addr = (uintptr_t)B.buf + roff;
	wr->wr.rdma.rkey = B.mr->rkey;
	if (p->ah) {
		wr->wr.ud.ah = p->ah;
		wr->wr.ud.remote_qpn = p->b->qp_num;
		wr->wr.ud.remote_qkey = 0x1234;
	}
}

static inline int post1(struct pair *p, enum ibv_wr_opcode op, uint64_t id,
			uint64_t off, uint32_t len, int flags, uint64_t roff)
{
	struct ibv_sge sge = { (uintptr_t)A.buf + off, len, A.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = flags | IBV_SEND_SIGNALED,
		.imm_data = htonl(0xabcd0000 | (uint32_t)id),
	}, *bad;

	pair_address(p, &wr, roff);
	return ibv_post_send(p->a, &wr, &bad);
}

/*
 * The start of main(): A on SOFTHCA_DEV, B on SOFTHCA_DEV2 or the same
 * device.  Return: 0 to go on; otherwise the process's exit status, with
 * the TAP plan (skip) or bail-out already printed.
 */
static inline int sides_open_env(const char **a, const char **b)
{
	*a = getenv("SOFTHCA_DEV");
	*b = getenv("SOFTHCA_DEV2");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!*a) {
		printf("1..0 # SKIP SOFTHCA_DEV not set\n");
		return -1;
	}
	if (!*b)
		*b = *a;
	if (side_open(&A, *a) || side_open(&B, *b)) {
		printf("Bail out! cannot set up %s/%s: %s\n", *a, *b,
		       strerror(errno));
		return 1;
	}
	return 0;
}

/* main() of a pair test program: open the sides, run the test points. */
static inline int pair_main(void)
{
	const char *a, *b;
	int rc = sides_open_env(&a, &b);

	if (rc)
		return rc < 0 ? 0 : rc;
	printf("# requester on %s, responder on %s\n", a, b);
	return tap_run();
}

#endif
