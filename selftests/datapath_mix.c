// SPDX-License-Identifier: GPL-2.0-only
/*
 * The data path with random work: on RC, UC and UD, with and without an
 * SRQ, every opcode of the QP type with random sizes (0..1 MiB; UD up to
 * the path MTU) gathered from and scattered into 1..4 SGEs of random
 * lengths and offsets, checked byte for byte, with the completion fields
 * and guard bytes around every destination.  Then fairness: a 1 GiB RDMA
 * WRITE in flight on one QP does not hold up small SENDs on another.
 * TAP output.
 *
 * SOFTHCA_DEV names the device of the requesters, SOFTHCA_DEV2 (if set)
 * the responders'.  SOFTHCA_SEED replays a run (the seed is printed).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#include "pair.h"

#define MIB		(1u << 20)
#define GUARD		64
#define GUARD_BYTE	0x5a
#define ITERS		40

static uint64_t rng_state;

static uint32_t rnd(void)
{
	/* xorshift64*: reproducible from the printed seed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}

static uint32_t rnd_upto(uint32_t max)	/* 0..max */
{
	return max == UINT32_MAX ? rnd() : rnd() % (max + 1);
}

/* A size: small, medium or anything up to @max, equally often. */
static uint32_t rnd_size(uint32_t max)
{
	switch (rnd() % 3) {
	case 0:
		return rnd_upto(max < 256 ? max : 256);
	case 1:
		return rnd_upto(max < 65536 ? max : 65536);
	default:
		return rnd_upto(max);
	}
}

/*
 * Cut @total bytes into 1..4 SGEs over @buf (region j is the j-th MiB,
 * at a random offset in it), each 1..PIECE_MAX bytes long, so that up
 * to 1 MiB + a little fits.  Return: the SGE count (for an empty
 * message 0 or one empty SGE).
 */
#define PIECE_MAX	(MIB - 4096)

static int scatter(struct ibv_sge *sg, uint8_t *buf, uint32_t lkey,
		   uint32_t total)
{
	uint32_t left = total, lo, hi, rest;
	int k, j;

	if (!total) {
		sg[0] = (struct ibv_sge){ (uintptr_t)buf, 0, lkey };
		return rnd() % 2;
	}
	k = 1 + rnd() % 4;
	if ((uint32_t)k > total)
		k = total;
	if (k == 1 && total > PIECE_MAX)
		k = 2;
	for (j = 0; j < k; j++) {
		rest = k - j - 1;		/* pieces after this one */
		hi = left - rest < PIECE_MAX ? left - rest : PIECE_MAX;
		lo = left > rest * PIECE_MAX ? left - rest * PIECE_MAX : 1;
		sg[j].length = lo + rnd_upto(hi - lo);
		sg[j].addr = (uintptr_t)buf + (uint64_t)j * MIB +
			     rnd_upto(MIB - sg[j].length < 4096 ?
				      MIB - sg[j].length : 4096);
		sg[j].lkey = lkey;
		left -= sg[j].length;
	}
	return k;
}

/* Guard bytes after each SGE (within its MiB) and a poisoned inside. */
static void poison(const struct ibv_sge *sg, int k)
{
	int j;

	for (j = 0; j < k; j++) {
		uint8_t *p = (uint8_t *)(uintptr_t)sg[j].addr;
		uint64_t end = (sg[j].addr & (MIB - 1)) + sg[j].length;

		memset(p, GUARD_BYTE,
		       sg[j].length + (end + GUARD <= MIB ? GUARD : 0));
	}
}

static int guards_intact(const struct ibv_sge *sg, int k)
{
	int j, i;

	for (j = 0; j < k; j++) {
		const uint8_t *p = (uint8_t *)(uintptr_t)sg[j].addr +
				   sg[j].length;
		uint64_t end = (sg[j].addr & (MIB - 1)) + sg[j].length;

		for (i = 0; end + GUARD <= MIB && i < GUARD; i++)
			if (p[i] != GUARD_BYTE)
				return 0;
	}
	return 1;
}

/* Gather the bytes of @sg into @out (at most @max). Return: count. */
static size_t gather(uint8_t *out, const struct ibv_sge *sg, int k,
		     size_t max)
{
	size_t n = 0, c;
	int j;

	for (j = 0; j < k && n < max; j++) {
		c = sg[j].length < max - n ? sg[j].length : max - n;
		memcpy(out + n, (void *)(uintptr_t)sg[j].addr, c);
		n += c;
	}
	return n;
}

static void fill_sges(const struct ibv_sge *sg, int k, unsigned int seed)
{
	int j;

	for (j = 0; j < k; j++)
		fill((uint8_t *)(uintptr_t)sg[j].addr, sg[j].length, seed + j);
}

static uint32_t path_mtu_bytes(void)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(A.ctx, 1, &pa))
		return 256;
	/* the QPs run with IBV_MTU_1024 (pair.h); UD uses the port's */
	return 128u << pa.active_mtu;
}

/* Wait for the completion of @wr_id on @cq; others are a failure. */
static int wait_id(struct ibv_cq *cq, uint64_t wr_id, struct ibv_wc *wc)
{
	if (!wait_wc(cq, wc))
		return 0;
	return wc->wr_id == wr_id;
}

/* One random operation on @p. Return: 0, or -1 (diagnostic printed). */
static int mix_one(struct pair *p, enum ibv_qp_type type, uint32_t maxmsg,
		   unsigned int i, uint8_t *exp)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	};
	unsigned int nops = type == IBV_QPT_RC ? 5 : type == IBV_QPT_UC ? 4 : 2;
	enum ibv_wr_opcode op = ops[rnd() % nops];
	uint32_t n = rnd_size(maxmsg), grh = type == IBV_QPT_UD ? 40 : 0;
	struct ibv_sge sg[4], rg[4];
	struct ibv_send_wr swr = {
		.wr_id = 1000 + i, .sg_list = sg, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0x5eed0000 | i),
	}, *sbad;
	struct ibv_recv_wr rwr = { .wr_id = 2000 + i, .sg_list = rg }, *rbad;
	int is_send = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	int imm = op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
	int recv = is_send || op == IBV_WR_RDMA_WRITE_WITH_IMM;
	uint64_t roff = rnd_upto(BUF - n - 2 * GUARD) + GUARD;
	struct ibv_wc wc;
	size_t got;
	int k;

	/* the source, and what must arrive */
	if (op == IBV_WR_RDMA_READ) {
		fill(B.buf + roff, n, i);
		memcpy(exp, B.buf + roff, n);
		k = scatter(sg, A.buf, A.mr->lkey, n);
		poison(sg, k);
	} else {
		k = scatter(sg, A.buf, A.mr->lkey, n);
		fill_sges(sg, k, i * 8);
		gather(exp, sg, k, n);
	}
	swr.num_sge = k;
	/* the destination */
	if (is_send) {
		rwr.num_sge = scatter(rg, B.buf, B.mr->lkey,
				      n + grh + rnd_upto(100));
		poison(rg, rwr.num_sge);
	} else if (op != IBV_WR_RDMA_READ) {
		memset(B.buf + roff - GUARD, GUARD_BYTE, n + 2 * GUARD);
		rwr.num_sge = rnd() % 2;	/* WRITE_IMM: data not here */
		rg[0] = (struct ibv_sge){ (uintptr_t)B.buf, 16, B.mr->lkey };
	}
	pair_address(p, &swr, roff);
	if (recv && (p->srq ? ibv_post_srq_recv(p->srq, &rwr, &rbad) :
			      ibv_post_recv(p->b, &rwr, &rbad))) {
		printf("# post_recv: %s\n", strerror(errno));
		return -1;
	}
	if (ibv_post_send(p->a, &swr, &sbad)) {
		printf("# post_send op %d, %u B, %d SGEs: %s\n", op, n, k,
		       strerror(errno));
		return -1;
	}
	if (!wait_id(A.cq, swr.wr_id, &wc) || wc.status != IBV_WC_SUCCESS ||
	    wc.qp_num != p->a->qp_num) {
		printf("# op %d, %u B, %d SGEs: send completion %lu status %d\n",
		       op, n, k, (unsigned long)wc.wr_id, wc.status);
		return -1;
	}
	if (recv) {
		if (!wait_id(B.cq, rwr.wr_id, &wc) ||
		    wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != (is_send ? IBV_WC_RECV :
				  IBV_WC_RECV_RDMA_WITH_IMM) ||
		    wc.byte_len != n + grh || wc.qp_num != p->b->qp_num ||
		    wc.src_qp != p->a->qp_num ||
		    !!(wc.wc_flags & IBV_WC_WITH_IMM) != imm ||
		    (imm && wc.imm_data != swr.imm_data) ||
		    !!(wc.wc_flags & IBV_WC_GRH) != !!grh ||
		    /* RoCE: no LIDs, SL 0, the one P_Key */
		    wc.slid || wc.sl || wc.dlid_path_bits || wc.pkey_index) {
			printf("# op %d, %u B: recv wc id %lu status %d opcode %d len %u qp %u src %u flags %x\n",
			       op, n, (unsigned long)wc.wr_id, wc.status,
			       wc.opcode, wc.byte_len, wc.qp_num, wc.src_qp,
			       wc.wc_flags);
			return -1;
		}
	}
	/* the data, byte for byte, and nothing beyond it */
	if (op == IBV_WR_RDMA_READ) {
		uint8_t *got_buf = malloc(n + 1);

		got = gather(got_buf, sg, k, n);
		if (got != n || memcmp(got_buf, exp, n) || !guards_intact(sg, k)) {
			printf("# READ of %u B into %d SGEs: data or guard\n",
			       n, k);
			free(got_buf);
			return -1;
		}
		free(got_buf);
	} else if (is_send) {
		uint32_t room = 0, j;
		uint8_t *got_buf;

		for (j = 0; j < (uint32_t)rwr.num_sge; j++)
			room += rg[j].length;
		got_buf = malloc(room + 1);
		got = gather(got_buf, rg, rwr.num_sge, room);
		/* past byte_len the receive buffers are untouched */
		for (j = n + grh; j < room; j++)
			if (got_buf[j] != GUARD_BYTE)
				break;
		if (got != room || memcmp(got_buf + grh, exp, n) ||
		    j != room || !guards_intact(rg, rwr.num_sge)) {
			printf("# SEND of %u B from %d into %d SGEs: data or guard\n",
			       n, k, rwr.num_sge);
			free(got_buf);
			return -1;
		}
		free(got_buf);
	} else {
		const uint8_t *d = B.buf + roff;
		int j, bad = memcmp(d, exp, n) != 0;

		for (j = 1; j <= GUARD; j++)
			bad |= d[-j] != GUARD_BYTE || d[n - 1 + j] != GUARD_BYTE;
		if (bad) {
			printf("# WRITE of %u B from %d SGEs: data or guard\n",
			       n, k);
			return -1;
		}
	}
	return 0;
}

static void mix(enum ibv_qp_type type, int srq)
{
	struct opts o = {
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.rnr_retry = 7, .min_rnr_timer = 1, .srq = srq,
	};
	uint32_t maxmsg = type == IBV_QPT_UD ? path_mtu_bytes() : MIB;
	uint8_t *exp = malloc(MIB + 1);
	struct pair p;
	unsigned int i;

	REQUIRE(exp, "malloc");
	REQUIRE(!pair_make(&p, type, &o), "pair");
	for (i = 0; i < ITERS; i++)
		if (mix_one(&p, type, maxmsg, i, exp)) {
			CHECK(0, "random operation %u", i);
			break;
		}
	free(exp);
	pair_free(&p);
}

TEST(random_rc) { mix(IBV_QPT_RC, 0); }
TEST(random_rc_srq) { mix(IBV_QPT_RC, 1); }
TEST(random_uc) { mix(IBV_QPT_UC, 0); }
TEST(random_uc_srq) { mix(IBV_QPT_UC, 1); }
TEST(random_ud) { mix(IBV_QPT_UD, 0); }
TEST(random_ud_srq) { mix(IBV_QPT_UD, 1); }

/* Post @n WRs as one list on @qp; wait for @n completions into @wc. */
static int post_list_wait(struct ibv_qp *qp, struct ibv_send_wr *w, int n,
			  struct ibv_wc *wc)
{
	struct ibv_send_wr *bad;
	int i;

	for (i = 0; i < n - 1; i++)
		w[i].next = &w[i + 1];
	w[n - 1].next = NULL;
	if (ibv_post_send(qp, w, &bad))
		return -1;
	for (i = 0; i < n; i++)
		if (!wait_wc(A.cq, &wc[i]))
			return -1;
	return 0;
}

/*
 * The engine reuses the lookups of one WQE for the next ones of the same
 * run (destination QP, local and remote MRs): every WQE must still get
 * its own checks.  Lists posted at once, so that they run together: a
 * good RDMA WRITE then one past the end of the same rkey
 * (REM_ACCESS_ERR), a good SEND then one past the end of the same lkey
 * (LOC_PROT_ERR); UD SENDs alternating between two destinations land in
 * their own QPs.
 */
TEST(lookups_reused_within_a_run_still_check)
{
	struct ibv_sge ok = { (uintptr_t)A.buf, 4096, A.mr->lkey };
	struct ibv_sge past = { (uintptr_t)A.buf + BUF - 100, 4096,
				A.mr->lkey };
	struct ibv_send_wr w[3] = {};
	struct ibv_wc wc[3];
	struct pair p, u1, u2;
	struct opts uo = { 0 };
	int i;

	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair");
	for (i = 0; i < 3; i++) {
		w[i].wr_id = 10 + i;
		w[i].sg_list = &ok;
		w[i].num_sge = 1;
		w[i].opcode = IBV_WR_RDMA_WRITE;
		w[i].send_flags = IBV_SEND_SIGNALED;
		w[i].wr.rdma.rkey = B.mr->rkey;
		w[i].wr.rdma.remote_addr = (uintptr_t)B.buf + 4096 * i;
	}
	w[1].wr.rdma.remote_addr = (uintptr_t)B.buf + BUF - 100;
	REQUIRE(!post_list_wait(p.a, w, 2, wc), "two writes");
	CHECK(wc[0].wr_id == 10 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[1].wr_id == 11 && wc[1].status == IBV_WC_REM_ACCESS_ERR,
	      "write, write past the rkey's end: %s, %s",
	      ibv_wc_status_str(wc[0].status),
	      ibv_wc_status_str(wc[1].status));
	pair_free(&p);

	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair");
	REQUIRE(!post_recv(&p, 1, 0, 8192) && !post_recv(&p, 2, 8192, 8192),
		"recvs");
	for (i = 0; i < 2; i++) {
		w[i].opcode = IBV_WR_SEND;
		w[i].sg_list = i ? &past : &ok;
	}
	REQUIRE(!post_list_wait(p.a, w, 2, wc), "two sends");
	CHECK(wc[0].wr_id == 10 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[1].wr_id == 11 && wc[1].status == IBV_WC_LOC_PROT_ERR,
	      "send, send past the lkey's end: %s, %s",
	      ibv_wc_status_str(wc[0].status),
	      ibv_wc_status_str(wc[1].status));
	pair_free(&p);

	REQUIRE(!pair_make(&u1, IBV_QPT_UD, &uo) &&
		!pair_make(&u2, IBV_QPT_UD, &uo), "UD pairs");
	for (i = 0; i < 3; i++) {
		struct pair *to = i == 1 ? &u2 : &u1;

		REQUIRE(!post_recv(to, 100 + i, 65536 * (i + 1), 4096),
			"recv");
		w[i].opcode = IBV_WR_SEND_WITH_IMM;
		w[i].imm_data = htonl(i);
		w[i].sg_list = &ok;
		ok.length = 64;
		w[i].wr.ud.ah = to->ah;
		w[i].wr.ud.remote_qpn = to->b->qp_num;
		w[i].wr.ud.remote_qkey = 0x1234;
	}
	REQUIRE(!post_list_wait(u1.a, w, 3, wc), "three UD sends");
	for (i = 0; i < 3; i++)
		CHECK(wc[i].status == IBV_WC_SUCCESS, "UD send %d: %s", i,
		      ibv_wc_status_str(wc[i].status));
	for (i = 0; i < 3; i++) {
		REQUIRE(wait_wc(B.cq, &wc[0]), "UD recv");
		CHECK(wc[0].status == IBV_WC_SUCCESS &&
		      wc[0].qp_num == (wc[0].wr_id == 101 ? u2.b->qp_num :
						  u1.b->qp_num) &&
		      ntohl(wc[0].imm_data) == wc[0].wr_id - 100,
		      "UD recv %lu on QP %u", (unsigned long)wc[0].wr_id,
		      wc[0].qp_num);
	}
	pair_free(&u1);
	pair_free(&u2);
}

/*
 * REM_OP_ERR: a receive WQE whose SGE names no valid lkey (on the RQ,
 * then on an SRQ).  The responder completes it with LOC_PROT_ERR, the
 * requester's SEND completes with REM_OP_ERR, and both QPs end in ERR,
 * the rest of either queue flushed.
 */
static void rem_op_err(int srq)
{
	struct opts o = RC_OPTS;
	struct ibv_sge bad_sge = { (uintptr_t)B.buf, 4096, B.mr->lkey + 0x7f00 };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &bad_sge,
				   .num_sge = 1 }, *rbad;
	struct ibv_wc wc;
	struct pair p;

	o.srq = srq;
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &o), "pair");
	REQUIRE(!(srq ? ibv_post_srq_recv(p.srq, &rwr, &rbad) :
		  ibv_post_recv(p.b, &rwr, &rbad)), "post the bad receive");
	REQUIRE(!post1(&p, IBV_WR_SEND, 1, 0, 100, 0, 0) &&
		!post1(&p, IBV_WR_SEND, 2, 0, 100, 0, 0), "two sends");
	REQUIRE(wait_wc(B.cq, &wc), "responder wc");
	CHECK(wc.wr_id == 7 && wc.status == IBV_WC_LOC_PROT_ERR,
	      "bad receive SGE: %s", ibv_wc_status_str(wc.status));
	REQUIRE(wait_wc(A.cq, &wc), "requester wc");
	CHECK(wc.wr_id == 1 && wc.status == IBV_WC_REM_OP_ERR,
	      "send into it: %s", ibv_wc_status_str(wc.status));
	REQUIRE(wait_wc(A.cq, &wc), "second send wc");
	CHECK(wc.wr_id == 2 && wc.status == IBV_WC_WR_FLUSH_ERR,
	      "the send after it: %s", ibv_wc_status_str(wc.status));
	CHECK(qp_state(p.a) == IBV_QPS_ERR && qp_state(p.b) == IBV_QPS_ERR,
	      "both ends in ERR: %d %d", qp_state(p.a), qp_state(p.b));
	pair_free(&p);
}

TEST(rem_op_err_bad_receive_sge) { rem_op_err(0); }
TEST(rem_op_err_bad_srq_receive_sge) { rem_op_err(1); }

/*
 * FENCE: an RDMA READ (then a fetch-and-add) lands in local memory that
 * the next, fenced, RDMA WRITE sends on: the WRITE must carry what the
 * READ or the atomic brought, so it may start only once they completed.
 * Posted together, unsignaled except the last.
 */
TEST(fence_after_read_and_atomic)
{
	struct pair p;
	struct ibv_wc wc;
	uint64_t *word = (uint64_t *)(B.buf + 3 * MIB);
	struct ibv_sge rs = { (uintptr_t)A.buf, 65536, A.mr->lkey };
	struct ibv_sge as = { (uintptr_t)A.buf + 65536, 8, A.mr->lkey };
	struct ibv_sge ws = { (uintptr_t)A.buf, 65536 + 8, A.mr->lkey };
	struct ibv_send_wr w[3] = {
		{ .wr_id = 1, .sg_list = &rs, .num_sge = 1,
		  .opcode = IBV_WR_RDMA_READ, .next = &w[1] },
		{ .wr_id = 2, .sg_list = &as, .num_sge = 1,
		  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .next = &w[2] },
		{ .wr_id = 3, .sg_list = &ws, .num_sge = 1,
		  .opcode = IBV_WR_RDMA_WRITE,
		  .send_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED },
	}, *bad;
	int round;

	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair");
	for (round = 0; round < 20; round++) {
		fill(B.buf, 65536, 300 + round);		/* READ source */
		*word = 0x1111000000000000ull + round;	/* atomic target */
		memset(A.buf, 0, 65536 + 8);
		memset(B.buf + 2 * MIB, 0, 65536 + 8);	/* WRITE target */
		w[0].wr.rdma.remote_addr = (uintptr_t)B.buf;
		w[0].wr.rdma.rkey = B.mr->rkey;
		w[1].wr.atomic.remote_addr = (uintptr_t)word;
		w[1].wr.atomic.rkey = B.mr->rkey;
		w[1].wr.atomic.compare_add = 5;
		w[2].wr.rdma.remote_addr = (uintptr_t)B.buf + 2 * MIB;
		w[2].wr.rdma.rkey = B.mr->rkey;
		REQUIRE(!ibv_post_send(p.a, w, &bad), "post");
		REQUIRE(wait_wc(A.cq, &wc) && wc.wr_id == 3 &&
			wc.status == IBV_WC_SUCCESS, "fenced write: %s",
			ibv_wc_status_str(wc.status));
		CHECK(!memcmp(B.buf + 2 * MIB, B.buf, 65536),
		      "round %d: the WRITE carried the READ's data", round);
		CHECK(!memcmp(B.buf + 2 * MIB + 65536, &(uint64_t){
			0x1111000000000000ull + round }, 8),
		      "round %d: the WRITE carried the atomic's result",
		      round);
		CHECK(*word == 0x1111000000000005ull + round, "the add");
	}
	pair_free(&p);
}

/*
 * A 1 GiB view of one 4 MiB memfd: shared mappings side by side.  256 MiB
 * on the debug kernel (scaled() in pair.h): registering a GiB there
 * takes long, and 256 MiB is still a thousand budgets of the poller.
 */
#define BIG	((uint64_t)scaled(4) * (256ull << 20))
#define TILE	(4u << 20)
#define SMALL	50

static uint8_t *big_view(int fd)
{
	uint8_t *v = mmap(NULL, BIG, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint64_t off;

	if (v == MAP_FAILED)
		return NULL;
	for (off = 0; off < BIG; off += TILE)
		if (mmap(v + off, TILE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
			munmap(v, BIG);
			return NULL;
		}
	return v;
}

/*
 * Fairness: one RDMA WRITE of 1 GiB (from and to 1 GiB views of 4 MiB,
 * so that the guest needs no gigabyte) is in flight on one QP when 50
 * small SENDs are posted on another QP of the same devices, as one list
 * right behind it.  The engine moves a long message a chunk at a time
 * with a per-QP budget per visit, so every small SEND completes while
 * the WRITE still runs; a WRITE moved whole at one visit would finish
 * first.  Ordering, not timing, is what is checked, and it depends on
 * the engine alone: the SENDs were a ping-pong once, whose round trips
 * needed this process on a CPU, and on a starved guest the WRITE could
 * win that race however fair the engine.  The times are printed.
 */
TEST(fairness_small_sends_during_1gib_write)
{
	int fa = memfd_create("softhca-src", 0), fb = memfd_create("softhca-dst", 0);
	uint8_t *src = NULL, *dst = NULL;
	struct ibv_mr *mra = NULL, *mrb = NULL;
	struct pair big = { 0 }, small = { 0 };
	struct ibv_sge sge, ssge[SMALL];
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, swr[SMALL], *bad;
	struct timespec t0;
	double small_ms = 0, big_ms;
	int big_done = -1, big_status = -1, sent = 0, recvd = 0, bad_wc = 0, i;
	struct ibv_wc wc;
	long spins;

	REQUIRE(fa >= 0 && fb >= 0 && !ftruncate(fa, TILE) &&
		!ftruncate(fb, TILE), "memfd");
	src = big_view(fa);
	dst = big_view(fb);
	if (!src || !dst)
		goto out;
	fill(src, TILE, 77);
	memset(dst, 0, TILE);
	mra = ibv_reg_mr(A.pd, src, BIG, IBV_ACCESS_LOCAL_WRITE);
	mrb = ibv_reg_mr(B.pd, dst, BIG, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	CHECK(mra && mrb, "big MRs");
	if (!mra || !mrb || pair_make(&big, IBV_QPT_RC, &RC_OPTS) ||
	    pair_make(&small, IBV_QPT_RC, &RC_OPTS)) {
		CHECK(0, "setup");
		goto out;
	}
	for (i = 0; i < SMALL; i++) {
		if (post_recv(&small, 100 + i, 64 * i, 64)) {
			CHECK(0, "small receive %d", i);
			goto out;
		}
		ssge[i] = (struct ibv_sge){ (uintptr_t)A.buf + 64 * i, 64,
					    A.mr->lkey };
		swr[i] = (struct ibv_send_wr){
			.wr_id = 200 + i, .sg_list = &ssge[i], .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			.next = i + 1 < SMALL ? &swr[i + 1] : NULL,
		};
	}
	sge = (struct ibv_sge){ (uintptr_t)src, (uint32_t)BIG, mra->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = mrb->rkey;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (ibv_post_send(big.a, &wr, &bad) ||
	    ibv_post_send(small.a, swr, &bad)) {
		CHECK(0, "post the WRITE and the small SENDs");
		goto out;
	}
	for (spins = 0; (sent + recvd < 2 * SMALL || big_done < 0) &&
	     spins < 400000000L; spins++) {
		if (ibv_poll_cq(A.cq, 1, &wc) == 1) {
			if (wc.wr_id == 1) {
				big_done = sent;
				big_status = wc.status;
			} else if (wc.wr_id == 200u + sent &&
				   wc.status == IBV_WC_SUCCESS) {
				if (++sent == SMALL)
					small_ms = secs_since(&t0) * 1e3;
			} else {
				bad_wc++;
			}
		}
		if (ibv_poll_cq(B.cq, 1, &wc) == 1) {
			if (wc.wr_id == 100u + recvd &&
			    wc.status == IBV_WC_SUCCESS && wc.byte_len == 64)
				recvd++;
			else
				bad_wc++;
		}
		if (spins > 10000)
			sched_yield();
	}
	big_ms = secs_since(&t0) * 1e3;
	CHECK(!bad_wc && sent == SMALL && recvd == SMALL,
	      "small SENDs: %d sent, %d received in order, %d other completions",
	      sent, recvd, bad_wc);
	CHECK(big_status == IBV_WC_SUCCESS, "the big WRITE: status %d",
	      big_status);
	CHECK(big_done == SMALL,
	      "the big WRITE completed before small send %d of %d",
	      big_done, SMALL);
	CHECK(!memcmp(dst, src, TILE), "the written data");
	printf("# %d small SENDs done in %.1f ms while a %llu MiB RDMA WRITE ran (%.1f ms, %.0f MiB/s)\n",
	       SMALL, small_ms, (unsigned long long)(BIG >> 20), big_ms,
	       (BIG >> 20) / (big_ms / 1e3));
out:
	pair_free(&small);
	pair_free(&big);
	CHECK(!mra || !ibv_dereg_mr(mra), "dereg");
	CHECK(!mrb || !ibv_dereg_mr(mrb), "dereg");
	CHECK(src && dst, "1 GiB views");
	if (src)
		munmap(src, BIG);
	if (dst)
		munmap(dst, BIG);
	close(fa);
	close(fb);
}

int main(void)
{
	const char *seed = getenv("SOFTHCA_SEED"), *a, *b;
	int rc = sides_open_env(&a, &b);

	if (rc)
		return rc < 0 ? 0 : rc;
	rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL);
	if (!rng_state)
		rng_state = 1;
	printf("# requester on %s, responder on %s, SOFTHCA_SEED=%llu\n", a,
	       b, (unsigned long long)rng_state);
	return tap_run();
}
