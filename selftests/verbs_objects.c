// SPDX-License-Identifier: GPL-2.0-only
/*
 * Verbs objects through libsofthca: CQ, QP, SRQ, MR, AH, XRCD, the QP
 * state machine, the flush to WR_FLUSH_ERR, events and every error path
 * the man pages name.  TAP output.  Needs SOFTHCA_DEV (a softhca device
 * whose port has a GID at index 0).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tap.h"
#include "util.h"

/* QPs per multicast group (drivers/softhca: SOFTHCA_MAX_MCAST_QP). */
#define SHCA_MCAST_QP 56

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_device_attr dattr;

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_cq *cq,
			      struct ibv_srq *srq, uint32_t wr, uint32_t sge)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = sge, .max_recv_sge = sge },
	};

	return ibv_create_qp(pd, &a);
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE, .qkey = 0x11111111,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int rc_to_rts(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = 0x123456,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .hop_limit = 64, .sgid_index = 0 } },
	};
	int err;

	if (ibv_query_gid(ctx, 1, 0, &a.ah_attr.grh.dgid))
		return errno;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x654321;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

TEST(device_reports_limits)
{
	CHECK(dattr.max_qp > 0 && dattr.max_qp_wr > 0 && dattr.max_sge > 0,
	      "qp %d wr %d sge %d", dattr.max_qp, dattr.max_qp_wr,
	      dattr.max_sge);
	CHECK(dattr.max_cq > 0 && dattr.max_cqe > 0 && dattr.max_mr > 0 &&
	      dattr.max_srq > 0 && dattr.max_srq_wr > 0 && dattr.max_ah > 0,
	      "object limits");
	CHECK(dattr.max_mr_size >= (1ULL << 30), "max_mr_size %llu",
	      (unsigned long long)dattr.max_mr_size);
	CHECK(dattr.device_cap_flags & IBV_DEVICE_XRC, "XRC capability");
	CHECK(dattr.atomic_cap == IBV_ATOMIC_HCA, "atomic_cap %d",
	      dattr.atomic_cap);
}

TEST(mr_keys_and_access)
{
	static char buf[8192];
	struct ibv_mr *a, *b;
	uint32_t old;

	a = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		       IBV_ACCESS_REMOTE_ATOMIC);
	REQUIRE(a, "reg_mr");
	CHECK(a->lkey == a->rkey && a->addr == buf && a->length == sizeof(buf),
	      "mr fields");
	b = ibv_reg_mr(pd, buf, sizeof(buf), 0);
	REQUIRE(b, "second reg_mr of the same buffer");
	CHECK(b->lkey != a->lkey, "distinct keys");
	old = b->lkey;
	CHECK(ibv_rereg_mr(b, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE) == 0, "rereg access");
	CHECK(b->lkey != old && (b->lkey & 0xff) != (old & 0xff),
	      "rereg changes the key byte (%#x -> %#x)", old, b->lkey);
	old = b->lkey;
	CHECK(ibv_rereg_mr(b, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			   buf + 4096, 4096, 0) == 0, "rereg translation");
	CHECK(b->lkey != old && b->addr == buf + 4096 && b->length == 4096,
	      "rereg translation fields");
	CHECK(ibv_rereg_mr(b, 0, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT,
	      "rereg without flags");
	CHECK(ibv_dereg_mr(b) == 0 && ibv_dereg_mr(a) == 0, "dereg");

	/* ibv_reg_mr(3): remote write or atomic needs local write. */
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE) &&
	      errno == EINVAL, "remote write without local write");
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC) &&
	      errno == EINVAL, "remote atomic without local write");
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE) &&
	      errno == EINVAL, "zero length");
	errno = 0;
	CHECK(!ibv_reg_mr(pd, (void *)8, 4096, 0) && errno == EFAULT,
	      "unmapped memory");
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_ZERO_BASED) &&
	      errno == EOPNOTSUPP, "zero-based MRs not offered");
	/* Memory windows may be bound to it (selftests/mw.c). */
	a = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_MW_BIND);
	CHECK(a && !ibv_dereg_mr(a), "MW_BIND access");
}

/*
 * Without CAP_IPC_LOCK, pinned MR pages count against RLIMIT_MEMLOCK
 * (ibv_reg_mr(3): ENOMEM).  The tests run as root, so a child process
 * drops the capability from its effective set and lowers the limit; it
 * opens its own context, as a process that did not fork would.
 */
static int memlock_child(const char *name)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	struct rlimit rl = { 64 << 10, 64 << 10 };
	struct ibv_context *c;
	struct ibv_mr *small, *big;
	struct ibv_pd *p;
	size_t len = 1 << 20;
	void *buf;

	if (syscall(SYS_capget, &hdr, data))
		return 10;
	data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &hdr, data) || setrlimit(RLIMIT_MEMLOCK, &rl))
		return 11;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	c = open_by_name(name);
	p = c ? ibv_alloc_pd(c) : NULL;
	if (buf == MAP_FAILED || !p)
		return 12;
	small = ibv_reg_mr(p, buf, 16 << 10, IBV_ACCESS_LOCAL_WRITE);
	if (!small)
		return 13;		/* within the limit: must work */
	errno = 0;
	big = ibv_reg_mr(p, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (big || errno != ENOMEM)
		return 14;		/* over the limit: ENOMEM */
	if (ibv_dereg_mr(small))
		return 15;
	/* Deregistration gave the pages back to the budget. */
	small = ibv_reg_mr(p, buf, 60 << 10, IBV_ACCESS_LOCAL_WRITE);
	if (!small || ibv_dereg_mr(small))
		return 16;
	return ibv_dealloc_pd(p) || ibv_close_device(c) ? 17 : 0;
}

TEST(mr_memlock_limit)
{
	const char *name = getenv("SOFTHCA_DEV");
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (!pid)
		_exit(memlock_child(name));
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child failed at step %d (13: small MR refused, 14: no ENOMEM "
	      "over the limit)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

TEST(cq_sizes_and_errors)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;

	cq = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	REQUIRE(cq, "create_cq");
	CHECK(cq->cqe >= 100, "cqe %d", cq->cqe);
	CHECK(ibv_resize_cq(cq, 1000) == 0 && cq->cqe >= 1000, "resize %d",
	      cq->cqe);
	CHECK(ibv_resize_cq(cq, 0) == EINVAL, "resize to 0");
	CHECK(ibv_resize_cq(cq, dattr.max_cqe + 1) == EINVAL, "resize over max");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy");

	errno = 0;
	CHECK(!ibv_create_cq(ctx, 0, NULL, NULL, 0) && errno == EINVAL, "cqe 0");
	errno = 0;
	CHECK(!ibv_create_cq(ctx, dattr.max_cqe + 1, NULL, NULL, 0) &&
	      errno == EINVAL, "cqe over max_cqe");
	errno = 0;
	CHECK(!ibv_create_cq(ctx, 4, NULL, NULL, ctx->num_comp_vectors) &&
	      errno == EINVAL, "comp_vector out of range");

	ch = ibv_create_comp_channel(ctx);
	REQUIRE(ch, "comp channel");
	cq = ibv_create_cq(ctx, 4, NULL, ch, 0);
	REQUIRE(cq, "cq on channel");
	CHECK(ibv_destroy_comp_channel(ch) == EBUSY, "channel in use");
	CHECK(ibv_destroy_cq(cq) == 0 && ibv_destroy_comp_channel(ch) == 0,
	      "teardown");
}

TEST(qp_create_caps_and_errors)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 5, .max_recv_wr = 3, .max_send_sge = 2,
			 .max_recv_sge = 3, .max_inline_data = 100 },
	};
	enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	struct ibv_qp *qp;
	unsigned int i;

	REQUIRE(cq, "cq");
	qp = ibv_create_qp(pd, &a);
	REQUIRE(qp, "create RC");
	CHECK(a.cap.max_send_wr >= 5 && a.cap.max_recv_wr >= 3 &&
	      a.cap.max_send_sge >= 2 && a.cap.max_recv_sge >= 3 &&
	      a.cap.max_inline_data >= 100, "caps written back: %u %u %u %u %u",
	      a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge,
	      a.cap.max_recv_sge, a.cap.max_inline_data);
	CHECK(qp->qp_num >= 2 && qp->qp_num <= 0xffffff && qp->state ==
	      IBV_QPS_RESET, "qpn %u", qp->qp_num);
	/* ibv_destroy_cq(3): EBUSY while a QP uses it. */
	CHECK(ibv_destroy_cq(cq) == EBUSY, "destroy CQ in use");
	CHECK(ibv_dealloc_pd(pd) == EBUSY, "dealloc PD in use");
	CHECK(ibv_destroy_qp(qp) == 0, "destroy");

	for (i = 0; i < 3; i++) {
		qp = make_qp(types[i], cq, NULL, 8, 1);
		CHECK(qp && qp->qp_type == types[i], "type %d", types[i]);
		if (qp)
			ibv_destroy_qp(qp);
	}

	a.cap.max_send_wr = dattr.max_qp_wr + 1;
	errno = 0;
	CHECK(!ibv_create_qp(pd, &a) && errno == EINVAL, "send wr over max");
	a.cap.max_send_wr = 4;
	a.cap.max_recv_sge = dattr.max_sge + 1;
	errno = 0;
	CHECK(!ibv_create_qp(pd, &a) && errno == EINVAL, "sge over max");
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = 1 << 20;
	errno = 0;
	CHECK(!ibv_create_qp(pd, &a) && errno == EINVAL, "inline over max");
	a.cap.max_inline_data = 0;
	a.qp_type = IBV_QPT_RAW_PACKET;
	errno = 0;
	CHECK(!ibv_create_qp(pd, &a) && errno == EOPNOTSUPP, "raw packet");
	a.qp_type = IBV_QPT_RC;
	a.send_cq = NULL;
	errno = 0;
	CHECK(!ibv_create_qp(pd, &a) && errno == EINVAL, "no send CQ");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy CQ");
}

TEST(qp_wrong_pd)
{
	struct ibv_context *other = open_by_name(getenv("SOFTHCA_DEV"));
	struct ibv_pd *opd = other ? ibv_alloc_pd(other) : NULL;
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	REQUIRE(opd && cq, "second context");
	/* The PD belongs to another context: its handle means nothing here. */
	errno = 0;
	CHECK(!ibv_create_qp(opd, &a), "QP with a CQ of another context");
	/* ib_uverbs finds no such CQ handle in that context. */
	CHECK(errno == EINVAL || errno == ENOENT, "errno %d", errno);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(opd);
	ibv_close_device(other);
}

TEST(qp_state_machine_rc)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, cq, NULL, 4, 1);
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	REQUIRE(cq && qp, "objects");
	/* Invalid: RESET -> RTR, and INIT without its required attributes. */
	CHECK(to_state(qp, IBV_QPS_RTR) == EINVAL, "RESET->RTR");
	CHECK(to_state(qp, IBV_QPS_INIT) == EINVAL, "RESET->INIT, no attrs");
	CHECK(to_init(qp) == 0, "RESET->INIT");
	CHECK(to_state(qp, IBV_QPS_RTS) == EINVAL, "INIT->RTS");
	CHECK(to_state(qp, IBV_QPS_RTR) == EINVAL, "INIT->RTR, no attrs");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 2;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT) == EINVAL,
	      "port 2");
	a.port_num = 1;
	a.pkey_index = 1;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX) ==
	      EINVAL, "pkey index 1");
	CHECK(rc_to_rts(qp, qp->qp_num) == 0, "INIT->RTR->RTS");
	CHECK(ibv_query_qp(qp, &a, IBV_QP_STATE, &init) == 0, "query");
	CHECK(a.qp_state == IBV_QPS_RTS && a.path_mtu == IBV_MTU_1024 &&
	      a.rq_psn == 0x123456 && a.sq_psn == 0x654321 &&
	      a.timeout == 14 && a.retry_cnt == 7 && a.rnr_retry == 7 &&
	      a.max_rd_atomic == 4 && a.max_dest_rd_atomic == 4 &&
	      a.min_rnr_timer == 12 && a.dest_qp_num == qp->qp_num &&
	      a.qp_access_flags == IBV_ACCESS_REMOTE_WRITE &&
	      a.ah_attr.is_global && a.ah_attr.grh.hop_limit == 64,
	      "query returns what was set");
	CHECK(init.qp_type == IBV_QPT_RC && init.send_cq == cq &&
	      init.cap.max_send_wr >= 4, "init attrs");
	a.timeout = 32;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_TIMEOUT) == EINVAL, "timeout 32");
	a.retry_cnt = 8;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_RETRY_CNT) == EINVAL, "retry 8");
	a.min_rnr_timer = 3;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER) == 0,
	      "RTS->RTS min_rnr_timer");
	CHECK(to_state(qp, IBV_QPS_SQD) == 0, "RTS->SQD");
	CHECK(to_state(qp, IBV_QPS_RTS) == 0, "SQD->RTS");
	CHECK(to_state(qp, IBV_QPS_RTR) == EINVAL, "RTS->RTR");
	CHECK(to_state(qp, IBV_QPS_ERR) == 0, "RTS->ERR");
	CHECK(to_state(qp, IBV_QPS_RTS) == EINVAL, "ERR->RTS");
	CHECK(to_state(qp, IBV_QPS_RESET) == 0, "ERR->RESET");
	CHECK(to_init(qp) == 0, "RESET->INIT again");
	CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0, "teardown");
}

TEST(qp_state_machine_ud)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp = make_qp(IBV_QPT_UD, cq, NULL, 4, 1);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	struct ibv_qp_init_attr init;

	REQUIRE(cq && qp, "objects");
	CHECK(to_init(qp) == 0, "INIT with qkey");
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0, "RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 7;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0, "RTS");
	CHECK(ibv_query_qp(qp, &a, IBV_QP_QKEY, &init) == 0 &&
	      a.qkey == 0x11111111 && a.sq_psn == 7, "qkey %#x", a.qkey);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0, i;

	for (i = 0; i < 1000 && got < n; i++) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
		if (got < n)
			usleep(1000);
	}
	return got;
}

TEST(err_flushes_outstanding_work)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, (void *)0x5ca1ab1e, ch, 0);
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, cq, NULL, 8, 1);
	static char buf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf),
				       IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uintptr_t)buf, sizeof(buf), 0 };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_wc wc[16];
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int i, n;

	REQUIRE(ch && cq && qp && mr, "objects");
	sge.lkey = mr->lkey;
	CHECK(ibv_post_recv(qp, &rwr, &bad) == EINVAL, "post_recv in RESET");
	REQUIRE(to_init(qp) == 0, "INIT");
	CHECK(ibv_post_send(qp, &swr, &sbad) == EINVAL && sbad == &swr,
	      "post_send in INIT");
	for (i = 0; i < 3; i++) {
		rwr.wr_id = 100 + i;
		CHECK(ibv_post_recv(qp, &rwr, &bad) == 0, "post_recv %d", i);
	}
	CHECK(ibv_poll_cq(cq, 16, wc) == 0, "nothing completes by itself");
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "arm");
	REQUIRE(to_state(qp, IBV_QPS_ERR) == 0, "ERR");
	n = poll_n(cq, wc, 3);
	CHECK(n == 3, "3 flushed, got %d", n);
	for (i = 0; i < n; i++)
		CHECK(wc[i].wr_id == (uint64_t)(100 + i) &&
		      wc[i].status == IBV_WC_WR_FLUSH_ERR &&
		      wc[i].qp_num == qp->qp_num, "wc %d: id %llu status %s", i,
		      (unsigned long long)wc[i].wr_id,
		      ibv_wc_status_str(wc[i].status));
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0 && ev_cq == cq &&
	      ev_ctx == (void *)0x5ca1ab1e, "completion event");
	ibv_ack_cq_events(cq, 1);

	/* Work posted in ERR is flushed too (the library rings the doorbell). */
	rwr.wr_id = 200;
	CHECK(ibv_post_recv(qp, &rwr, &bad) == 0, "post_recv in ERR");
	swr.wr_id = 300;
	CHECK(ibv_post_send(qp, &swr, &sbad) == 0, "post_send in ERR");
	n = poll_n(cq, wc, 2);
	CHECK(n == 2 && wc[0].status == IBV_WC_WR_FLUSH_ERR &&
	      wc[1].status == IBV_WC_WR_FLUSH_ERR &&
	      wc[0].wr_id + wc[1].wr_id == 500, "flushed after ERR: %d", n);
	CHECK(ibv_poll_cq(cq, 16, wc) == 0, "nothing more");
	CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0 &&
	      ibv_destroy_comp_channel(ch) == 0 && ibv_dereg_mr(mr) == 0,
	      "teardown");
}

TEST(post_errors_and_bad_wr)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qp = make_qp(IBV_QPT_UD, cq, NULL, 4, 1);
	struct ibv_sge sge[4] = {};
	struct ibv_recv_wr r[6], *rbad;
	struct ibv_send_wr s = { .sg_list = sge, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE }, *sbad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int i, cap;

	REQUIRE(cq && qp && to_init(qp) == 0, "UD QP in INIT");
	memset(r, 0, sizeof(r));
	cap = 4;
	{
		struct ibv_qp_init_attr init;

		ibv_query_qp(qp, &a, 0, &init);
		cap = (int)init.cap.max_recv_wr;
	}
	REQUIRE(cap < 6, "recv queue of %d", cap);
	for (i = 0; i < 6; i++) {
		r[i].wr_id = i;
		r[i].sg_list = sge;
		r[i].num_sge = 1;
		r[i].next = i < 5 ? &r[i + 1] : NULL;
	}
	r[1].num_sge = 4;		/* over max_recv_sge */
	CHECK(ibv_post_recv(qp, &r[0], &rbad) == EINVAL && rbad == &r[1],
	      "too many SGEs: bad_wr is the second WR");
	r[1].num_sge = 1;
	/* r[0] went in: cap - 1 more fit, then the queue is full. */
	CHECK(ibv_post_recv(qp, &r[1], &rbad) == ENOMEM && rbad == &r[cap],
	      "full RQ: bad_wr is the first WR that did not fit");

	a.qp_state = IBV_QPS_RTR;
	ibv_modify_qp(qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	REQUIRE(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0, "RTS");
	CHECK(ibv_post_send(qp, &s, &sbad) == EINVAL && sbad == &s,
	      "RDMA WRITE on UD");
	s.opcode = IBV_WR_SEND;
	s.wr.ud.ah = NULL;
	CHECK(ibv_post_send(qp, &s, &sbad) == EINVAL, "UD send without AH");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

TEST(cq_resize_keeps_completions)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = make_qp(IBV_QPT_UC, cq, NULL, 8, 1);
	struct ibv_recv_wr rwr = {}, *bad;
	struct ibv_wc wc[8];
	int i, n;

	REQUIRE(cq && qp && to_init(qp) == 0, "objects");
	for (i = 0; i < 5; i++) {
		rwr.wr_id = i;
		ibv_post_recv(qp, &rwr, &bad);
	}
	REQUIRE(to_state(qp, IBV_QPS_ERR) == 0, "ERR");
	REQUIRE(poll_n(cq, wc, 1) == 1 && wc[0].wr_id == 0, "first CQE");
	CHECK(ibv_resize_cq(cq, 200) == 0, "grow");
	n = poll_n(cq, wc, 4);
	CHECK(n == 4, "4 CQEs survive the resize, got %d", n);
	for (i = 0; i < n; i++)
		CHECK(wc[i].wr_id == (uint64_t)i + 1, "order %d", i);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

TEST(cq_overrun_raises_cq_err)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, cq, NULL, 4, 1);
	struct ibv_recv_wr rwr = {}, *bad;
	struct ibv_async_event ev;
	int i;

	REQUIRE(cq && qp && cq->cqe == 1 && to_init(qp) == 0, "objects");
	for (i = 0; i < 3; i++)
		ibv_post_recv(qp, &rwr, &bad);
	REQUIRE(to_state(qp, IBV_QPS_ERR) == 0, "ERR");
	REQUIRE(ibv_get_async_event(ctx, &ev) == 0, "async event");
	CHECK(ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq,
	      "CQ_ERR, got %s", ibv_event_type_str(ev.event_type));
	ibv_ack_async_event(&ev);
	CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0, "teardown");
}

TEST(srq_objects)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 10, .max_sge = 2 } };
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_srq_attr q;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	uint32_t num;

	srq = ibv_create_srq(pd, &sa);
	REQUIRE(srq && cq, "create_srq");
	CHECK(sa.attr.max_wr >= 10 && sa.attr.max_sge >= 2, "sizes written back");
	CHECK(ibv_query_srq(srq, &q) == 0 && q.max_wr == sa.attr.max_wr &&
	      q.srq_limit == 0, "query");
	q.srq_limit = 5;
	CHECK(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT) == 0, "arm limit");
	CHECK(ibv_query_srq(srq, &q) == 0 && q.srq_limit == 5, "limit read back");
	q.srq_limit = q.max_wr + 1;
	CHECK(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT) == EINVAL, "limit > max_wr");
	q.max_wr = 100;
	CHECK(ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR) == EOPNOTSUPP,
	      "resize not offered");
	CHECK(ibv_get_srq_num(srq, &num) == EOPNOTSUPP, "basic SRQ has no number");
	qp = make_qp(IBV_QPT_RC, cq, srq, 4, 1);
	REQUIRE(qp, "QP on SRQ");
	CHECK(ibv_destroy_srq(srq) == EBUSY, "SRQ in use");
	ibv_destroy_qp(qp);
	CHECK(ibv_destroy_srq(srq) == 0 && ibv_destroy_cq(cq) == 0, "teardown");
	sa.attr.max_wr = dattr.max_srq_wr + 1;
	errno = 0;
	CHECK(!ibv_create_srq(pd, &sa) && errno == EINVAL, "max_wr over limit");
}

TEST(xrc_objects)
{
	char path[] = "/tmp/softhca-xrcd-XXXXXX";
	int fd = mkstemp(path);
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = O_CREAT,
	};
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *ini, *tgt;
	uint32_t num = 0;

	REQUIRE(fd >= 0 && cq, "setup");
	xrcd = ibv_open_xrcd(ctx, &xa);
	REQUIRE(xrcd, "open_xrcd");
	{
		struct ibv_srq_init_attr_ex sa = {
			.attr = { .max_wr = 8, .max_sge = 1 },
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
			.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = xrcd, .cq = cq,
		};

		srq = ibv_create_srq_ex(ctx, &sa);
	}
	REQUIRE(srq, "XRC SRQ");
	CHECK(ibv_get_srq_num(srq, &num) == 0 && num > 0, "srq num %u", num);
	{
		struct ibv_qp_init_attr_ex qa = {
			.send_cq = cq, .qp_type = IBV_QPT_XRC_SEND,
			.cap = { .max_send_wr = 4, .max_send_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
		};

		ini = ibv_create_qp_ex(ctx, &qa);
		CHECK(ini && qa.cap.max_recv_wr == 0, "XRC_SEND QP");
		memset(&qa, 0, sizeof(qa));
		qa.qp_type = IBV_QPT_XRC_RECV;
		qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		qa.xrcd = xrcd;
		tgt = ibv_create_qp_ex(ctx, &qa);
		CHECK(tgt != NULL, "XRC_RECV QP");
	}
	if (tgt)
		CHECK(to_init(tgt) == 0, "XRC_RECV to INIT");
	if (ini)
		ibv_destroy_qp(ini);
	if (tgt)
		ibv_destroy_qp(tgt);
	CHECK(ibv_close_xrcd(xrcd) == EBUSY, "domain with an SRQ");
	CHECK(ibv_destroy_srq(srq) == 0 && ibv_close_xrcd(xrcd) == 0, "close");
	ibv_destroy_cq(cq);
	close(fd);
	unlink(path);
}

TEST(ah_objects)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1,
				 .grh = { .hop_limit = 64 } };
	struct ibv_ah *ah;

	REQUIRE(ibv_query_gid(ctx, 1, 0, &a.grh.dgid) == 0, "GID 0");
	ah = ibv_create_ah(pd, &a);
	REQUIRE(ah, "create_ah");
	CHECK(ibv_destroy_ah(ah) == 0, "destroy");
	a.port_num = 2;
	errno = 0;
	CHECK(!ibv_create_ah(pd, &a) && errno == EINVAL, "port 2");
	a.port_num = 1;
	a.is_global = 0;
	errno = 0;
	CHECK(!ibv_create_ah(pd, &a) && errno == EINVAL, "RoCE needs a GRH");
}

/*
 * Multicast attach and detach (the kernel's checks and limits; traffic
 * to a group is rdma_cm_wire.sh's, mckey on the wire).
 */
TEST(mcast_attach)
{
	union ibv_gid mc = { .raw = { [10] = 0xff, [11] = 0xff, [12] = 224,
				      [13] = 9, [14] = 9, [15] = 9 } };
	union ibv_gid mc2 = mc, uni;
	struct ibv_qp *ud[SHCA_MCAST_QP + 1] = {}, *rc;
	struct ibv_cq *cq;
	int i, n = (int)(sizeof(ud) / sizeof(ud[0])), bad = 0;

	CHECK(dattr.max_mcast_grp > 0 &&
	      dattr.max_mcast_qp_attach == SHCA_MCAST_QP &&
	      dattr.max_total_mcast_qp_attach >= dattr.max_mcast_qp_attach,
	      "limits: %d groups, %d QPs each, %d in all",
	      dattr.max_mcast_grp, dattr.max_mcast_qp_attach,
	      dattr.max_total_mcast_qp_attach);
	mc2.raw[15] = 10;
	REQUIRE(ibv_query_gid(ctx, 1, 0, &uni) == 0, "GID 0");
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	REQUIRE(cq, "cq");
	rc = make_qp(IBV_QPT_RC, cq, NULL, 1, 1);
	for (i = 0; i < n; i++)
		ud[i] = make_qp(IBV_QPT_UD, cq, NULL, 1, 1);
	REQUIRE(rc && ud[n - 1], "QPs");
	CHECK(ibv_attach_mcast(rc, &mc, 0) == EINVAL, "an RC QP");
	CHECK(ibv_attach_mcast(ud[0], &uni, 0) == EINVAL, "a unicast GID");
	CHECK(ibv_detach_mcast(ud[0], &mc, 0) == EINVAL, "detach, not attached");
	CHECK(ibv_attach_mcast(ud[0], &mc, 0) == 0 &&
	      ibv_attach_mcast(ud[0], &mc, 0) == 0, "attach, twice");
	CHECK(ibv_attach_mcast(ud[0], &mc2, 0) == 0, "a second group");
	for (i = 1; i < n - 1; i++)
		bad += ibv_attach_mcast(ud[i], &mc, 0) != 0;
	CHECK(!bad, "%d QPs attached to one group", n - 1);
	CHECK(ibv_attach_mcast(ud[n - 1], &mc, 0) == ENOMEM,
	      "QP %d of a group", n);
	CHECK(ibv_detach_mcast(ud[1], &mc, 0) == 0 &&
	      ibv_detach_mcast(ud[1], &mc, 0) == EINVAL, "detach, twice");
	CHECK(ibv_attach_mcast(ud[n - 1], &mc, 0) == 0, "room again");
	/*
	 * ib_uverbs refuses to destroy an attached QP (process exit would
	 * detach it); detached, it goes, and the group empties.
	 */
	CHECK(ibv_destroy_qp(ud[0]) == EBUSY, "destroy an attached QP");
	CHECK(ibv_detach_mcast(ud[0], &mc2, 0) == 0, "detach");
	for (i = 0; i < n; i++) {
		if (i != 1)
			bad += ibv_detach_mcast(ud[i], &mc, 0) != 0;
		bad += ibv_destroy_qp(ud[i]) != 0;
	}
	CHECK(!bad, "detach and destroy");
	ud[0] = make_qp(IBV_QPT_UD, cq, NULL, 1, 1);
	REQUIRE(ud[0], "UD QP");
	CHECK(ibv_attach_mcast(ud[0], &mc, 0) == 0 &&
	      ibv_detach_mcast(ud[0], &mc, 0) == 0 &&
	      ibv_detach_mcast(ud[0], &mc2, 0) == EINVAL, "a new QP");
	ibv_destroy_qp(ud[0]);
	ibv_destroy_qp(rc);
	ibv_destroy_cq(cq);
}

TEST(unsupported_calls)
{
	CHECK(ibv_qp_to_qp_ex(NULL) == NULL && errno == EOPNOTSUPP, "qp_ex");
	CHECK(ibv_fork_init() == 0 &&
	      ibv_is_fork_initialized() == IBV_FORK_UNNEEDED, "fork");
	CHECK(!strcmp(ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR),
		      "Work Request Flushed Error") &&
	      !strcmp(ibv_wc_status_str(999), "unknown") &&
	      !strcmp(ibv_port_state_str(IBV_PORT_ACTIVE), "active") &&
	      !strcmp(ibv_event_type_str(IBV_EVENT_SRQ_LIMIT_REACHED),
		      "SRQ limit reached"), "strings");
	CHECK(ibv_rate_to_mbps(IBV_RATE_100_GBPS) == 103125 &&
	      mult_to_ibv_rate(4) == IBV_RATE_10_GBPS, "rates");
}

int main(void)
{
	const char *name = getenv("SOFTHCA_DEV");

	if (!name) {
		printf("1..0 # SKIP SOFTHCA_DEV not set\n");
		return 0;
	}
	ctx = open_by_name(name);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd || ibv_query_device(ctx, &dattr)) {
		printf("Bail out! cannot open %s: %s\n", name, strerror(errno));
		return 1;
	}
	return tap_run();
}
