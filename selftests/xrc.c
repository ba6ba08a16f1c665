// SPDX-License-Identifier: GPL-2.0-only
/*
 * XRC through libsofthca: every XRC opcode with data checked byte for
 * byte, SRQs of another domain refused, ibv_open_qp(3) lifetimes, and
 * the legacy API of <infiniband/softhca_xrc.h> across processes: one
 * process creates the receive QP, others register, the creator exits
 * and traffic from two initiator processes still lands in two SRQs of
 * two receiver processes through that one QP, a process killed while
 * registered keeps nothing alive, and the last unregister destroys the
 * QP.  TAP output.
 *
 * This file is itself a program written against the legacy header: it
 * includes <infiniband/softhca_xrc.h> in place of <infiniband/verbs.h>.
 *
 * SOFTHCA_DEV names the initiators' device, SOFTHCA_DEV2 (when set) the
 * device of the receive QPs and SRQs.  SOFTHCA_GID_INDEX (default 0)
 * is the GID both use.  XRC_WIRE set: the two are on different hosts
 * (RoCEv2, wire_xrc.sh), where a receive QP answers the one initiator
 * its destination QP number names (packets of RC and XRC name no
 * source QP): it is connected again for each new initiator.  XRC_BIG
 * not 0: each end's buffer is 40 MiB instead of 4, and the opcodes point
 * also SENDs, WRITEs and READs 16 MiB.
 */
#include <infiniband/softhca_xrc.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "tap.h"
#include "util.h"

/* Each end's buffer: 4 MiB, or BIG_BUF with XRC_BIG (buf_bytes). */
#define BUF_DEFAULT (4 << 20)
#define BIG_BUF (40 << 20)
#define BIG_MSG (16 << 20)
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;
	union ibv_gid gid;
};

static const char *dev_i, *dev_r;	/* initiators', receivers' device */
static int gid_index;			/* SOFTHCA_GID_INDEX */
static int xrc_wire;			/* XRC_WIRE: across the wire */
static int ack_timeout = 14;		/* XRC_ACK_TIMEOUT: 4.096 us << it */
static int xrc_big;			/* XRC_BIG not 0: 16 MiB messages */
static size_t buf_bytes = BUF_DEFAULT;	/* XRC_BIG: BIG_BUF */

static int end_open(struct end *e, const char *name)
{
	memset(e, 0, sizeof(*e));
	e->ctx = open_by_name(name);
	if (!e->ctx)
		return -1;
	e->pd = ibv_alloc_pd(e->ctx);
	e->chan = ibv_create_comp_channel(e->ctx);
	e->cq = e->chan ? ibv_create_cq(e->ctx, 1024, NULL, e->chan, 0) : NULL;
	e->buf = mmap(NULL, buf_bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!e->pd || !e->cq || e->buf == MAP_FAILED)
		return -1;
	e->mr = ibv_reg_mr(e->pd, e->buf, buf_bytes, ACCESS);
	if (!e->mr || ibv_query_gid(e->ctx, 1, gid_index, &e->gid))
		return -1;
	return 0;
}

static void end_close(struct end *e)
{
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->chan)
		ibv_destroy_comp_channel(e->chan);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->buf && e->buf != MAP_FAILED)
		munmap(e->buf, buf_bytes);
	if (e->ctx)
		ibv_close_device(e->ctx);
	memset(e, 0, sizeof(*e));
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/* The next completion on @cq, within 60 s (util.h: cq_wait()). */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return cq_wait(cq, wc, 60000) == 1;
}

/*
 * The receive QP through INIT to RTR, connected to the initiator
 * @ini_qpn (only the wire needs it: on one host any initiator of the
 * domain's QPs may send through it).
 */
static void tgt_attr(int step, const union ibv_gid *gid, uint32_t ini_qpn,
		     struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	if (!step) {
		a->qp_state = IBV_QPS_INIT;
		a->port_num = 1;
		a->qp_access_flags = ACCESS;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS;
		return;
	}
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.dgid = *gid;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.grh.sgid_index = gid_index;
	a->dest_qp_num = ini_qpn;
	a->max_dest_rd_atomic = 4;
	a->min_rnr_timer = 1;
	*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		IBV_QP_MIN_RNR_TIMER;
}

static int tgt_up(struct ibv_qp *qp, const union ibv_gid *gid,
		  uint32_t ini_qpn)
{
	struct ibv_qp_attr a;
	int mask;

	tgt_attr(0, gid, ini_qpn, &a, &mask);
	if (ibv_modify_qp(qp, &a, mask))
		return -1;
	tgt_attr(1, gid, ini_qpn, &a, &mask);
	return ibv_modify_qp(qp, &a, mask);
}

/*
 * A new initiator for a receive QP that is up: on one host nothing to
 * do; across the wire the receive QP goes through RESET to answer it.
 */
static int tgt_connect(struct ibv_qp *qp, const union ibv_gid *gid,
		       uint32_t ini_qpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (!xrc_wire)
		return 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	return tgt_up(qp, gid, ini_qpn);
}

static int legacy_tgt_up(struct ibv_xrc_domain *d, uint32_t qpn,
			 const union ibv_gid *gid)
{
	struct ibv_qp_attr a;
	int mask;

	tgt_attr(0, gid, 0, &a, &mask);
	if (ibv_modify_xrc_rcv_qp(d, qpn, &a, mask))
		return -1;
	tgt_attr(1, gid, 0, &a, &mask);
	return ibv_modify_xrc_rcv_qp(d, qpn, &a, mask);
}

/* An XRC send QP (the legacy IBV_QPT_XRC, through the legacy struct). */
static struct ibv_qp *ini_create(struct end *e)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq,
		.cap = { .max_send_wr = 64, .max_send_sge = 4,
			 .max_inline_data = 64 },
		.qp_type = IBV_QPT_XRC,
	};

	return ibv_create_qp(e->pd, &ia);
}

static int ini_up(struct ibv_qp *qp, uint32_t tgt_qpn,
		  const union ibv_gid *gid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = tgt_qpn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = gid_index;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = ack_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static struct ibv_srq *xsrq_create(struct end *e, struct ibv_xrcd *xrcd)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 64, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = e->pd, .xrcd = xrcd,
		.cq = e->cq,
	};

	return ibv_create_srq_ex(e->ctx, &sa);
}

static struct ibv_xrcd *xrcd_open(struct ibv_context *ctx, int fd)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = O_CREAT,
	};

	return ibv_open_xrcd(ctx, &xa);
}

static int srq_post(struct ibv_srq *srq, struct end *e, uint64_t id,
		    uint64_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)e->buf + off, len, e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/*
 * One XRC work request from @e's buffer at @off (two SGEs when @len
 * allows), to SRQ @srqn; wait for its completion.  Return: the status,
 * or -1 when none came.
 */
static int xpost(struct ibv_qp *qp, struct end *e, enum ibv_wr_opcode op,
		 uint64_t off, uint32_t len, uint32_t srqn, uint64_t raddr,
		 uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	uint32_t half = len / 2;
	struct ibv_sge sge[2] = {
		{ (uintptr_t)e->buf + off, half, e->mr->lkey },
		{ (uintptr_t)e->buf + off + half, len - half, e->mr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = off, .sg_list = sge, .num_sge = len > 1 ? 2 : 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0x5a000000 | len),
	}, *bad;
	struct ibv_wc wc;

	if (len <= 1)
		sge[0].length = len;
	wr.xrc_remote_srq_num = srqn;	/* the legacy spelling */
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	if (!wait_wc(e->cq, &wc) || wc.wr_id != off)
		return -1;
	return wc.status;
}

/* Every XRC opcode, one process, data byte for byte. */
TEST(opcodes)
{
	static const uint32_t sizes[] = { 0, 1, 4097, 300000, BIG_MSG };
	char path[] = "/tmp/softhca-xrc-XXXXXX";
	struct end I, T;
	struct ibv_xrcd *xrcd = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *tgt = NULL, *ini = NULL;
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	uint64_t *word;
	uint32_t srqn;
	struct ibv_wc wc;
	unsigned int i;
	int fd;

	fd = mkstemp(path);
	REQUIRE(fd >= 0, "mkstemp");
	unlink(path);
	REQUIRE(!end_open(&I, dev_i) && !end_open(&T, dev_r), "open ends");
	xrcd = xrcd_open(T.ctx, fd);
	REQUIRE(xrcd, "open_xrcd");
	srq = xsrq_create(&T, xrcd);
	REQUIRE(srq && !ibv_get_srq_num(srq, &srqn), "XRC SRQ");
	qa.xrcd = xrcd;
	tgt = ibv_create_qp_ex(T.ctx, &qa);
	ini = ini_create(&I);
	REQUIRE(tgt && ini, "QPs");
	REQUIRE(!tgt_up(tgt, &I.gid, ini->qp_num) &&
		!ini_up(ini, tgt->qp_num, &T.gid), "connect");

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int imm = i & 1;

		if (sizes[i] == BIG_MSG && !xrc_big)
			continue;
		fill(I.buf, sizes[i], i + 1);
		memset(T.buf, 0, sizes[i] + 16);
		CHECK(!srq_post(srq, &T, 100 + i, 0, (uint32_t)buf_bytes),
		      "post_srq_recv");
		CHECK(xpost(ini, &I, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
			    0, sizes[i], srqn, 0, 0, 0, 0) == IBV_WC_SUCCESS,
		      "SEND %u", sizes[i]);
		REQUIRE(wait_wc(T.cq, &wc), "receive completion");
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 100 + i &&
		      wc.opcode == IBV_WC_RECV && wc.byte_len == sizes[i] &&
		      wc.qp_num == tgt->qp_num && wc.src_qp == ini->qp_num,
		      "recv wc: status %d id %lu op %d len %u qpn %u src %u",
		      wc.status, (unsigned long)wc.wr_id, wc.opcode,
		      wc.byte_len, wc.qp_num, wc.src_qp);
		CHECK(!imm || ((wc.wc_flags & IBV_WC_WITH_IMM) &&
			       ntohl(wc.imm_data) == (0x5a000000 | sizes[i])),
		      "immediate data");
		CHECK(!memcmp(I.buf, T.buf, sizes[i]) && !T.buf[sizes[i]],
		      "SEND data, %u bytes", sizes[i]);
	}

	fill(I.buf, 200000, 77);
	CHECK(xpost(ini, &I, IBV_WR_RDMA_WRITE, 0, 200000, srqn,
		    (uintptr_t)T.buf + 8, T.mr->rkey, 0, 0) == IBV_WC_SUCCESS &&
	      !memcmp(I.buf, T.buf + 8, 200000), "RDMA WRITE 200000");
	if (xrc_big) {
		fill(I.buf, BIG_MSG, 76);
		CHECK(xpost(ini, &I, IBV_WR_RDMA_WRITE, 0, BIG_MSG, srqn,
			    (uintptr_t)T.buf + 8, T.mr->rkey, 0, 0) ==
		      IBV_WC_SUCCESS && !memcmp(I.buf, T.buf + 8, BIG_MSG),
		      "RDMA WRITE 16 MiB");
		fill(T.buf + 4096, BIG_MSG, 75);
		CHECK(xpost(ini, &I, IBV_WR_RDMA_READ, buf_bytes / 2, BIG_MSG,
			    srqn, (uintptr_t)T.buf + 4096, T.mr->rkey, 0, 0) ==
		      IBV_WC_SUCCESS &&
		      !memcmp(I.buf + buf_bytes / 2, T.buf + 4096, BIG_MSG),
		      "RDMA READ 16 MiB");
	}
	CHECK(!srq_post(srq, &T, 7, buf_bytes / 2, 64), "post_srq_recv");
	fill(I.buf, 5000, 78);
	CHECK(xpost(ini, &I, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 5000, srqn,
		    (uintptr_t)T.buf, T.mr->rkey, 0, 0) == IBV_WC_SUCCESS &&
	      !memcmp(I.buf, T.buf, 5000), "RDMA WRITE with immediate");
	CHECK(wait_wc(T.cq, &wc) && wc.wr_id == 7 &&
	      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	      ntohl(wc.imm_data) == (0x5a000000 | 5000), "its receive wc");
	fill(T.buf + 4096, 70000, 79);
	CHECK(xpost(ini, &I, IBV_WR_RDMA_READ, buf_bytes / 2, 70000, srqn,
		    (uintptr_t)T.buf + 4096, T.mr->rkey, 0, 0) ==
	      IBV_WC_SUCCESS && !memcmp(I.buf + buf_bytes / 2, T.buf + 4096, 70000),
	      "RDMA READ 70000");

	word = (uint64_t *)(T.buf + 64);
	*word = 40;
	CHECK(xpost(ini, &I, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, srqn,
		    (uintptr_t)word, T.mr->rkey, 2, 0) == IBV_WC_SUCCESS &&
	      *(uint64_t *)I.buf == 40 && *word == 42, "FETCH_AND_ADD");
	CHECK(xpost(ini, &I, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 8, srqn,
		    (uintptr_t)word, T.mr->rkey, 42, 7) == IBV_WC_SUCCESS &&
	      *(uint64_t *)I.buf == 42 && *word == 7, "CMP_AND_SWP");

	/*
	 * The receive QP through RTS, SQD and back to RTS (it has no send
	 * queue: SQD -> RTS once handed it to a poller, which read the
	 * absent ring and oopsed); it still receives.
	 */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS,
					 .timeout = 14 };

		CHECK(!ibv_modify_qp(tgt, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				     IBV_QP_SQ_PSN), "receive QP to RTS");
		a.qp_state = IBV_QPS_SQD;
		CHECK(!ibv_modify_qp(tgt, &a, IBV_QP_STATE), "to SQD");
		a.qp_state = IBV_QPS_RTS;
		CHECK(!ibv_modify_qp(tgt, &a, IBV_QP_STATE), "back to RTS");
		fill(I.buf, 3000, 80);
		CHECK(!srq_post(srq, &T, 8, 0, 4096), "post_srq_recv");
		CHECK(xpost(ini, &I, IBV_WR_SEND, 0, 3000, srqn, 0, 0, 0, 0) ==
		      IBV_WC_SUCCESS && wait_wc(T.cq, &wc) && wc.wr_id == 8 &&
		      !memcmp(I.buf, T.buf, 3000), "SEND after SQD -> RTS");
	}

	CHECK(!ibv_destroy_qp(ini) && !ibv_destroy_qp(tgt) &&
	      !ibv_destroy_srq(srq) && !ibv_close_xrcd(xrcd), "teardown");
	close(fd);
	end_close(&I);
	end_close(&T);
}

/*
 * A send naming an SRQ of another domain, or no SRQ at all, fails with
 * REM_ACCESS_ERR; the receive QP stays usable for other senders.
 */
TEST(other_domain_refused)
{
	char p1[] = "/tmp/softhca-xrc-XXXXXX", p2[] = "/tmp/softhca-xrc-XXXXXX";
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_xrcd *x1, *x2;
	struct ibv_srq *s1, *s2;
	struct ibv_qp *tgt, *ini;
	uint32_t n1, n2;
	struct ibv_wc wc;
	struct end I, T;
	int f1, f2;

	f1 = mkstemp(p1);
	f2 = mkstemp(p2);
	REQUIRE(f1 >= 0 && f2 >= 0, "mkstemp");
	unlink(p1);
	unlink(p2);
	REQUIRE(!end_open(&I, dev_i) && !end_open(&T, dev_r), "open ends");
	x1 = xrcd_open(T.ctx, f1);
	x2 = xrcd_open(T.ctx, f2);
	REQUIRE(x1 && x2, "two domains");
	s1 = xsrq_create(&T, x1);
	s2 = xsrq_create(&T, x2);
	REQUIRE(s1 && s2 && !ibv_get_srq_num(s1, &n1) &&
		!ibv_get_srq_num(s2, &n2), "an SRQ in each");
	qa.xrcd = x1;
	tgt = ibv_create_qp_ex(T.ctx, &qa);
	REQUIRE(tgt && !tgt_up(tgt, &I.gid, 0), "receive QP in domain 1");

	CHECK(!srq_post(s2, &T, 1, 0, 4096), "post to SRQ 2");
	ini = ini_create(&I);
	REQUIRE(ini && !tgt_connect(tgt, &I.gid, ini->qp_num) &&
		!ini_up(ini, tgt->qp_num, &T.gid), "initiator");
	CHECK(xpost(ini, &I, IBV_WR_SEND, 0, 100, n2, 0, 0, 0, 0) ==
	      IBV_WC_REM_ACCESS_ERR, "SEND to domain 2's SRQ");
	CHECK(ibv_destroy_qp(ini) == 0, "destroy");
	ini = ini_create(&I);
	REQUIRE(ini && !tgt_connect(tgt, &I.gid, ini->qp_num) &&
		!ini_up(ini, tgt->qp_num, &T.gid), "initiator");
	CHECK(xpost(ini, &I, IBV_WR_RDMA_WRITE, 0, 100, 0xfffff0,
		    (uintptr_t)T.buf, T.mr->rkey, 0, 0) ==
	      IBV_WC_REM_ACCESS_ERR, "WRITE naming no SRQ");
	{
		struct ibv_qp_init_attr ia;
		struct ibv_qp_attr a;

		CHECK(!ibv_query_qp(tgt, &a, IBV_QP_STATE, &ia) &&
		      a.qp_state == IBV_QPS_RTR,
		      "the receive QP stays in RTR (state %d)", a.qp_state);
	}
	CHECK(ibv_destroy_qp(ini) == 0, "destroy");
	CHECK(ibv_poll_cq(T.cq, 1, &wc) == 0, "nothing reached SRQ 2");

	/* The shared receive QP still serves a well-behaved sender. */
	ini = ini_create(&I);
	REQUIRE(ini && !tgt_connect(tgt, &I.gid, ini->qp_num) &&
		!ini_up(ini, tgt->qp_num, &T.gid), "initiator");
	CHECK(!srq_post(s1, &T, 2, 8192, 4096), "post to SRQ 1");
	fill(I.buf, 100, 5);
	CHECK(xpost(ini, &I, IBV_WR_SEND, 0, 100, n1, 0, 0, 0, 0) ==
	      IBV_WC_SUCCESS, "SEND to domain 1's SRQ");
	CHECK(wait_wc(T.cq, &wc) && wc.wr_id == 2 && wc.status == 0 &&
	      !memcmp(I.buf, T.buf + 8192, 100), "landed in SRQ 1");

	CHECK(!ibv_destroy_qp(ini) && !ibv_destroy_qp(tgt) &&
	      !ibv_destroy_srq(s1) && !ibv_destroy_srq(s2) &&
	      !ibv_close_xrcd(x1) && !ibv_close_xrcd(x2), "teardown");
	close(f1);
	close(f2);
	end_close(&I);
	end_close(&T);
}

/* ibv_open_qp: a second handle keeps the QP after its creator's goes. */
TEST(open_qp_lifetime)
{
	char path[] = "/tmp/softhca-xrc-XXXXXX";
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_xrcd *xrcd, *xrcd2;
	struct ibv_context *ctx2;
	struct ibv_qp *tgt, *h2, *ini;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_srq *srq;
	struct ibv_wc wc;
	struct end I, T;
	uint32_t srqn, qpn;
	int fd;

	fd = mkstemp(path);
	REQUIRE(fd >= 0, "mkstemp");
	unlink(path);
	REQUIRE(!end_open(&I, dev_i) && !end_open(&T, dev_r), "open ends");
	ctx2 = open_by_name(dev_r);
	REQUIRE(ctx2, "second context");
	xrcd = xrcd_open(T.ctx, fd);
	xrcd2 = xrcd_open(ctx2, fd);
	REQUIRE(xrcd && xrcd2, "one domain, two contexts");
	srq = xsrq_create(&T, xrcd);
	REQUIRE(srq && !ibv_get_srq_num(srq, &srqn), "XRC SRQ");
	qa.xrcd = xrcd;
	tgt = ibv_create_qp_ex(T.ctx, &qa);
	REQUIRE(tgt && !tgt_up(tgt, &I.gid, 0), "receive QP");
	qpn = tgt->qp_num;

	oa.qp_num = qpn;
	oa.xrcd = xrcd2;
	h2 = ibv_open_qp(ctx2, &oa);
	REQUIRE(h2 && h2->qp_num == qpn, "open_qp");
	oa.qp_num = qpn + 1000;
	errno = 0;
	CHECK(!ibv_open_qp(ctx2, &oa) && errno == EINVAL, "no such QP");
	CHECK(!ibv_query_qp(h2, &a, IBV_QP_STATE, &ia) &&
	      a.qp_state == IBV_QPS_RTR, "query through the second handle");
	CHECK(!ibv_destroy_qp(tgt), "the creator's handle goes");

	ini = ini_create(&I);
	REQUIRE(ini && !ini_up(ini, qpn, &T.gid), "initiator");
	CHECK(!srq_post(srq, &T, 9, 0, 4096), "post");
	fill(I.buf, 3000, 9);
	CHECK(xpost(ini, &I, IBV_WR_SEND, 0, 3000, srqn, 0, 0, 0, 0) ==
	      IBV_WC_SUCCESS && wait_wc(T.cq, &wc) && wc.qp_num == qpn &&
	      !memcmp(I.buf, T.buf, 3000), "traffic still flows");

	CHECK(!ibv_destroy_qp(h2), "the last handle goes");
	oa.qp_num = qpn;
	errno = 0;
	CHECK(!ibv_open_qp(ctx2, &oa) && errno == EINVAL, "the QP is gone");
	CHECK(xpost(ini, &I, IBV_WR_SEND, 0, 10, srqn, 0, 0, 0, 0) ==
	      IBV_WC_RETRY_EXC_ERR, "a send to it: retry exceeded");

	CHECK(!ibv_destroy_qp(ini) && !ibv_destroy_srq(srq) &&
	      !ibv_close_xrcd(xrcd) && !ibv_close_xrcd(xrcd2), "teardown");
	ibv_close_device(ctx2);
	close(fd);
	end_close(&I);
	end_close(&T);
}

/* ---- the legacy API across processes ---- */

static int in_child;

/*
 * Parent <-> child words.  A child whose peer is gone exits; the parent
 * reads ~0 from a child that died (its exit status tells why).
 */
static void put(int fd, uint32_t v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v) && in_child)
		_exit(90);
}

static uint32_t get(int fd)
{
	uint32_t v;

	if (read(fd, &v, sizeof(v)) != sizeof(v)) {
		if (in_child)
			_exit(91);
		return ~0u;
	}
	return v;
}

#define NMSG 6
#define MSG_LEN 200000	/* several chunks: two senders interleave */

static const char *xrc_path;
static union ibv_gid gid_i, gid_r;

/* The test's domain file, opened in @ctx (NULL if @ctx is). */
static struct ibv_xrc_domain *legacy_domain(struct ibv_context *ctx)
{
	int fd = open(xrc_path, O_RDWR);

	if (fd < 0 || !ctx)
		return NULL;
	return ibv_open_xrc_domain(ctx, fd, O_CREAT);
}

/* The creator: makes the receive QP, then exits without unregistering. */
static int role_creator(int fd)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC };
	struct ibv_xrc_domain *d = legacy_domain(open_by_name(dev_r));
	uint32_t qpn;

	if (!d)
		return 10;
	ia.xrc_domain = d;	/* the only member read */
	if (ibv_create_xrc_rcv_qp(&ia, &qpn) ||
	    legacy_tgt_up(d, qpn, &gid_i))
		return 11;
	put(fd, qpn);
	get(fd);	/* the others registered */
	return 0;
}

/* A receiver: registers, owns an SRQ, checks what lands in it. */
static int role_receiver(int fd)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32, .max_sge = 1 } };
	struct ibv_qp_init_attr ia;
	struct ibv_xrc_domain *d;
	struct ibv_qp_attr a;
	struct ibv_srq *srq;
	uint32_t qpn, seed, srqn, i, last;
	uint8_t *want;
	struct ibv_wc wc;
	struct end e;

	qpn = get(fd);
	if (end_open(&e, dev_r))
		return 20;
	d = legacy_domain(e.ctx);
	if (!d || ibv_reg_xrc_rcv_qp(d, qpn) || ibv_reg_xrc_rcv_qp(d, qpn))
		return 21;
	srq = ibv_create_xrc_srq(e.pd, d, e.cq, &sa);
	if (!srq || ibv_get_srq_num(srq, &srqn))
		return 22;
	for (i = 0; i < NMSG; i++)
		if (srq_post(srq, &e, i, (uint64_t)i * MSG_LEN, MSG_LEN))
			return 23;
	put(fd, srqn);
	seed = get(fd);		/* traffic starts */
	want = malloc(MSG_LEN);
	for (i = 0; i < NMSG; i++) {
		if (!wait_wc(e.cq, &wc) || wc.status || wc.wr_id != i ||
		    wc.byte_len != MSG_LEN || wc.qp_num != qpn)
			return 24;
		fill(want, MSG_LEN, seed + i);
		if (memcmp(want, e.buf + (uint64_t)i * MSG_LEN, MSG_LEN))
			return 25;
	}
	put(fd, NMSG);
	last = get(fd);		/* 1: the last to unregister */
	if (ibv_query_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE, &ia) ||
	    a.qp_state != IBV_QPS_RTR || ia.xrc_domain != d)
		return 26;
	if (ibv_unreg_xrc_rcv_qp(d, qpn) ||
	    ibv_unreg_xrc_rcv_qp(d, qpn) != EINVAL)
		return 27;
	if (last && !ibv_query_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE, &ia))
		return 28;	/* destroyed with the last registration */
	if (ibv_destroy_srq(srq) || ibv_close_xrc_domain(d))
		return 29;
	return 0;
}

/* Registers and then waits to be killed. */
static int role_victim(int fd)
{
	struct ibv_xrc_domain *d = legacy_domain(open_by_name(dev_r));
	uint32_t qpn = get(fd);

	if (!d || ibv_reg_xrc_rcv_qp(d, qpn))
		return 30;
	put(fd, 1);
	pause();
	return 31;
}

/* An initiator: NMSG messages to one SRQ, through the receive QP. */
static int role_initiator(int fd)
{
	uint32_t qpn = get(fd), srqn = get(fd), seed = get(fd), i;
	struct ibv_qp *qp;
	struct end e;

	if (end_open(&e, dev_i))
		return 40;
	qp = ini_create(&e);
	if (!qp || qp->qp_type != IBV_QPT_XRC || ini_up(qp, qpn, &gid_r))
		return 41;
	put(fd, 1);
	get(fd);
	for (i = 0; i < NMSG; i++) {
		fill(e.buf, MSG_LEN, seed + i);
		if (xpost(qp, &e, IBV_WR_SEND, 0, MSG_LEN, srqn, 0, 0, 0, 0))
			return 42;
	}
	put(fd, NMSG);
	return 0;
}

struct child {
	pid_t pid;
	int fd;
};

static int spawn(struct child *c, int (*role)(int))
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (!c->pid) {
		in_child = 1;
		close(sv[0]);
		_exit(role(sv[1]));
	}
	close(sv[1]);
	c->fd = sv[0];
	return 0;
}

/* The child's exit status (-signal if killed). */
static int reap(struct child *c)
{
	int st;

	close(c->fd);
	if (waitpid(c->pid, &st, 0) != c->pid)
		return -1000;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

TEST(legacy_shared_receive_qp)
{
	char path[] = "/tmp/softhca-xrc-XXXXXX";
	struct child cr, ra, rb, vk, i1, i2;
	struct ibv_context *ctx;
	struct ibv_xrc_domain *d;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	uint32_t qpn, na, nb;
	int fd, rc;

	signal(SIGPIPE, SIG_IGN);
	fd = mkstemp(path);
	REQUIRE(fd >= 0, "mkstemp");
	close(fd);
	xrc_path = path;
	fflush(stdout);

	REQUIRE(!spawn(&cr, role_creator), "fork");
	qpn = get(cr.fd);
	REQUIRE(!spawn(&ra, role_receiver) && !spawn(&rb, role_receiver) &&
		!spawn(&vk, role_victim), "fork");
	put(ra.fd, qpn);
	put(rb.fd, qpn);
	put(vk.fd, qpn);
	na = get(ra.fd);
	nb = get(rb.fd);
	get(vk.fd);
	CHECK(na != nb, "two SRQs: %u %u", na, nb);
	put(cr.fd, 1);
	CHECK((rc = reap(&cr)) == 0, "creator: %d", rc);

	/* The creator is gone: two initiators, one QP, two SRQs. */
	REQUIRE(!spawn(&i1, role_initiator) && !spawn(&i2, role_initiator),
		"fork");
	put(i1.fd, qpn);
	put(i1.fd, na);
	put(i1.fd, 1000);
	put(i2.fd, qpn);
	put(i2.fd, nb);
	put(i2.fd, 2000);
	get(i1.fd);
	get(i2.fd);
	put(ra.fd, 1000);
	put(rb.fd, 2000);
	put(i1.fd, 1);
	put(i2.fd, 1);
	CHECK(get(i1.fd) == NMSG && get(i2.fd) == NMSG, "all sent");
	CHECK(get(ra.fd) == NMSG && get(rb.fd) == NMSG, "all received");
	CHECK((rc = reap(&i1)) == 0, "initiator 1: %d", rc);
	CHECK((rc = reap(&i2)) == 0, "initiator 2: %d", rc);

	/* A process killed while registered counts as unregistered. */
	kill(vk.pid, SIGKILL);
	CHECK(reap(&vk) == -SIGKILL, "victim killed");
	put(ra.fd, 0);
	CHECK((rc = reap(&ra)) == 0, "receiver A: %d", rc);
	put(rb.fd, 1);
	CHECK((rc = reap(&rb)) == 0, "receiver B (last): %d", rc);

	ctx = open_by_name(dev_r);
	d = legacy_domain(ctx);
	REQUIRE(d, "domain");
	CHECK(ibv_query_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE, &ia) == EINVAL,
	      "the QP is gone");
	CHECK(ibv_reg_xrc_rcv_qp(d, qpn) == EINVAL, "cannot register");
	CHECK(ibv_unreg_xrc_rcv_qp(d, qpn) == EINVAL, "nor unregister");
	CHECK(!ibv_close_xrc_domain(d), "close");
	ibv_close_device(ctx);
	unlink(path);
}

int main(void)
{
	struct end e;

	dev_i = getenv("SOFTHCA_DEV");
	dev_r = getenv("SOFTHCA_DEV2");
	if (getenv("SOFTHCA_GID_INDEX"))
		gid_index = atoi(getenv("SOFTHCA_GID_INDEX"));
	xrc_wire = !!getenv("XRC_WIRE");
	if (getenv("XRC_ACK_TIMEOUT"))
		ack_timeout = atoi(getenv("XRC_ACK_TIMEOUT"));
	xrc_big = getenv("XRC_BIG") && atoi(getenv("XRC_BIG"));
	if (xrc_big)
		buf_bytes = BIG_BUF;
	if (!dev_i) {
		printf("1..0 # SKIP SOFTHCA_DEV not set\n");
		return 0;
	}
	if (!dev_r)
		dev_r = dev_i;
	if (end_open(&e, dev_i))
		return 1;
	gid_i = e.gid;
	end_close(&e);
	if (end_open(&e, dev_r))
		return 1;
	gid_r = e.gid;
	end_close(&e);
	return tap_run();
}
