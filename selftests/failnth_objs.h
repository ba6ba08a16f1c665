/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The objects the fault-injection sweeps make and use (failnth.c): QP
 * transitions and a SEND checked byte for byte.
 * Included once, in order, by failnth.c.
 */
#ifndef SOFTHCA_SELFTEST_FAILNTH_OBJS_H
#define SOFTHCA_SELFTEST_FAILNTH_OBJS_H

/* ---------------------------------------------------------------------
 * The objects: what a sweep finally created, used by the later ones
 */

static struct ibv_device **dev_list;
static struct ibv_device *dev;
static struct ibv_context *ctx;
static struct ibv_comp_channel *ch;
static struct ibv_pd *pd;
static struct ibv_mr *mr, *mr2;
static struct ibv_cq *cq;
static struct ibv_qp *qrc, *qud, *xini, *xtgt;
static struct ibv_srq *srq, *xsrq;
static struct ibv_xrcd *xrcd;
static struct ibv_ah *ah;
static union ibv_gid gid;
static uint8_t *sbuf, *rbuf, *rbuf2;	/* 64 KiB each, touched */
#define BUFSZ (64 << 10)

/* Scratch of the current attempt. */
static struct ibv_mr *t_mr;
static struct ibv_cq *t_cq;
static struct ibv_qp *t_qp;
static struct ibv_srq *t_srq;
static struct ibv_xrcd *t_xrcd;

static int e(void *p)
{
	return p ? 0 : (errno ? errno : EIO);
}

/* Destroyers that report what went wrong. */
static int destroy_qp(struct ibv_qp **q)
{
	int err = *q ? ibv_destroy_qp(*q) : 0;

	if (err)
		printf("# destroy_qp: %s\n", strerror(err));
	*q = NULL;
	return err ? -1 : 0;
}

static int destroy_cq(struct ibv_cq **c)
{
	int err = *c ? ibv_destroy_cq(*c) : 0;

	if (err)
		printf("# destroy_cq: %s\n", strerror(err));
	*c = NULL;
	return err ? -1 : 0;
}

/* Wait up to 5 s for one completion (a clock, not a count of sleeps:
 * under TCG a short sleep takes far longer than asked). */
static int wait_wc(struct ibv_cq *c, struct ibv_wc *wc)
{
	double end = now() + 5;
	int n;

	do {
		n = ibv_poll_cq(c, 1, wc);
		if (n)
			return n;
		usleep(100);
	} while (now() < end);
	return ibv_poll_cq(c, 1, wc);
}

/* ---------------------------------------------------------------------
 * QP transitions
 */

static int qp_modify_to(struct ibv_qp *q, enum ibv_qp_state s, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = s };
	enum ibv_qp_type t = q->qp_type;
	int mask = IBV_QP_STATE;

	switch (s) {
	case IBV_QPS_INIT:
		a.port_num = 1;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (t == IBV_QPT_UD) {
			a.qkey = 0x1234;
			mask |= IBV_QP_QKEY;
		} else {
			a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ;
			mask |= IBV_QP_ACCESS_FLAGS;
		}
		break;
	case IBV_QPS_RTR:
		if (t == IBV_QPT_UD)
			break;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dqpn;
		a.rq_psn = 0x111;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = gid;
		a.ah_attr.grh.hop_limit = 64;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (t != IBV_QPT_UC) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
		break;
	case IBV_QPS_RTS:
		a.sq_psn = 0x111;
		mask |= IBV_QP_SQ_PSN;
		if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND) {
			a.timeout = 14;
			a.retry_cnt = 7;
			a.rnr_retry = 7;
			a.max_rd_atomic = 4;
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		}
		break;
	default:
		break;
	}
	return ibv_modify_qp(q, &a, mask);
}

/* RESET -> INIT -> RTR (-> RTS unless @rtr_only), peer @dqpn. */
static int qp_up(struct ibv_qp *q, uint32_t dqpn, int rtr_only)
{
	int err = qp_modify_to(q, IBV_QPS_INIT, dqpn);

	if (!err)
		err = qp_modify_to(q, IBV_QPS_RTR, dqpn);
	if (!err && !rtr_only)
		err = qp_modify_to(q, IBV_QPS_RTS, dqpn);
	return err;
}

static int qp_state_now(struct ibv_qp *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(q, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

static struct ibv_qp *qp_new(enum ibv_qp_type t, struct ibv_context *c,
			     struct ibv_pd *p, struct ibv_cq *cc,
			     struct ibv_srq *s, struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = t, .send_cq = cc, .recv_cq = cc, .srq = s,
		.cap = { .max_send_wr = 16, .max_recv_wr = s ? 0 : 16,
			 .max_send_sge = 2, .max_recv_sge = s ? 0 : 2,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = p,
	};

	if (t == IBV_QPT_XRC_SEND) {
		a.recv_cq = NULL;
		a.cap.max_recv_wr = 0;
		a.cap.max_recv_sge = 0;
	} else if (t == IBV_QPT_XRC_RECV) {
		memset(&a, 0, sizeof(a));
		a.qp_type = t;
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		a.xrcd = x;
	}
	return ibv_create_qp_ex(c, &a);
}

/* ---------------------------------------------------------------------
 * A SEND through a pair of objects, byte for byte
 */

static int send_check(struct ibv_qp *from, struct ibv_send_wr *wr,
		      struct ibv_cq *rcq, struct ibv_mr *smr, uint8_t *src,
		      uint8_t *dst, size_t dst_off, unsigned int seed)
{
	struct ibv_sge sge = { (uintptr_t)src, MSG_LEN, smr->lkey };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int i, got_send = 0, got_recv = 0;
	size_t k;

	for (k = 0; k < MSG_LEN; k++)
		src[k] = (uint8_t)(seed * 31 + k * 7);
	memset(dst, 0, MSG_LEN + dst_off);
	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr_id = 1;
	if (ibv_post_send(from, wr, &bad)) {
		printf("# post_send: %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < 2; i++) {
		if (!wait_wc(rcq, &wc)) {
			printf("# no completion (send %d, recv %d)\n", got_send,
			       got_recv);
			return -1;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			printf("# completion %llu: %s\n",
			       (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status));
			return -1;
		}
		if (wc.opcode == IBV_WC_SEND)
			got_send = 1;
		else if (wc.opcode == IBV_WC_RECV &&
			 wc.byte_len == MSG_LEN + dst_off)
			got_recv = 1;
	}
	if (!got_send || !got_recv) {
		printf("# completions: send %d recv %d\n", got_send, got_recv);
		return -1;
	}
	if (memcmp(src, dst + dst_off, MSG_LEN)) {
		printf("# received bytes differ\n");
		return -1;
	}
	return 0;
}

static int post_recv_to(struct ibv_qp *q, struct ibv_srq *s,
			struct ibv_mr *rmr, uint8_t *dst, size_t len)
{
	struct ibv_sge sge = { (uintptr_t)dst, (uint32_t)len, rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return s ? ibv_post_srq_recv(s, &wr, &bad) : ibv_post_recv(q, &wr, &bad);
}

/*
 * Everything on context @c made afresh: PD, CQ, MR, two RC QPs, one
 * SEND.  For a device that a sweep created.
 */
static int loopback_send(struct ibv_context *c)
{
	struct ibv_pd *p = ibv_alloc_pd(c);
	struct ibv_cq *cc = ibv_create_cq(c, 16, NULL, NULL, 0);
	struct ibv_mr *m = p ? ibv_reg_mr(p, sbuf, BUFSZ, IBV_ACCESS_LOCAL_WRITE)
			     : NULL;
	struct ibv_mr *rm = p ? ibv_reg_mr(p, rbuf2, BUFSZ, IBV_ACCESS_LOCAL_WRITE)
			      : NULL;
	struct ibv_qp *a = p && cc ? qp_new(IBV_QPT_RC, c, p, cc, NULL, NULL) : NULL;
	struct ibv_qp *b = p && cc ? qp_new(IBV_QPT_RC, c, p, cc, NULL, NULL) : NULL;
	struct ibv_send_wr wr = {};
	union ibv_gid g0 = gid;
	int bad = -1;

	if (!p || !cc || !m || !rm || !a || !b) {
		printf("# objects on the new device: %s\n", strerror(errno));
		goto out;
	}
	if (ibv_query_gid(c, 1, 0, &gid) ||
	    qp_up(a, b->qp_num, 0) || qp_up(b, a->qp_num, 0) ||
	    post_recv_to(b, NULL, rm, rbuf2, BUFSZ)) {
		printf("# connecting on the new device: %s\n", strerror(errno));
		goto out;
	}
	bad = send_check(a, &wr, cc, m, sbuf, rbuf2, 0, 99);
out:
	gid = g0;
	if (a)
		bad |= destroy_qp(&a);
	if (b)
		bad |= destroy_qp(&b);
	if (m)
		ibv_dereg_mr(m);
	if (rm)
		ibv_dereg_mr(rm);
	if (cc)
		bad |= destroy_cq(&cc);
	if (p)
		ibv_dealloc_pd(p);
	return bad ? -1 : 0;
}

#endif
