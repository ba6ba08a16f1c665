// SPDX-License-Identifier: GPL-2.0-only
/*
 * The data path through libsofthca: every opcode of ibv_post_send(3) per
 * QP type, with data checked byte for byte, the completion fields of
 * ibv_poll_cq(3), send flags, SRQs, the error statuses, completion
 * events, and 100,000 post/poll iterations under a seccomp filter that
 * kills the process on any system call.  TAP output.
 *
 * SOFTHCA_DEV names the device of the requesters; SOFTHCA_DEV2, when
 * set, the device of the responders (two devices on one host), else
 * both ends are on SOFTHCA_DEV.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tap.h"
#include "util.h"

#include "pair.h"

/* RC SEND of random sizes up to 1 MiB, 3 SGEs into 2, byte for byte. */
TEST(rc_send_sizes_multi_sge)
{
	static const uint32_t sizes[] = { 0, 1, 63, 64, 4095, 4097, 65536,
					  65537, 300001, 1 << 20 };
	struct ibv_wc wc;
	struct pair p;
	unsigned int i;

	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = sizes[i], s1 = n / 3, s2 = n / 3, s3 = n - s1 - s2;
		uint32_t r1 = n / 2 + 5;
		struct ibv_sge sg[3] = {
			{ (uintptr_t)A.buf, s1, A.mr->lkey },
			{ (uintptr_t)A.buf + 1500000, s2, A.mr->lkey },
			{ (uintptr_t)A.buf + 2700000, s3, A.mr->lkey },
		};
		struct ibv_sge rg[2] = {
			{ (uintptr_t)B.buf + 7, r1, B.mr->lkey },
			{ (uintptr_t)B.buf + 2000003, n + 100, B.mr->lkey },
		};
		struct ibv_recv_wr rwr = { .wr_id = 100 + i, .sg_list = rg,
					   .num_sge = 2 }, *rbad;
		struct ibv_send_wr swr = { .wr_id = i, .sg_list = sg,
					   .num_sge = 3,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED },
				   *sbad;
		uint8_t *exp = malloc(n + 1);
		int ok;

		fill(A.buf, s1, i);
		fill(A.buf + 1500000, s2, i + 1);
		fill(A.buf + 2700000, s3, i + 2);
		memcpy(exp, A.buf, s1);
		memcpy(exp + s1, A.buf + 1500000, s2);
		memcpy(exp + s1 + s2, A.buf + 2700000, s3);
		REQUIRE(!ibv_post_recv(p.b, &rwr, &rbad), "post_recv");
		REQUIRE(!ibv_post_send(p.a, &swr, &sbad), "post_send");
		REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
			wc.opcode == IBV_WC_SEND && wc.wr_id == i &&
			wc.qp_num == p.a->qp_num,
			"send completion %u: status %d", n, wc.status);
		REQUIRE(wait_wc(B.cq, &wc) && wc.status == IBV_WC_SUCCESS,
			"recv completion %u: status %d", n, wc.status);
		CHECK(wc.opcode == IBV_WC_RECV && wc.byte_len == n &&
		      wc.wr_id == 100 + i && wc.qp_num == p.b->qp_num &&
		      wc.src_qp == p.a->qp_num && !(wc.wc_flags & IBV_WC_WITH_IMM),
		      "recv fields for %u: len %u", n, wc.byte_len);
		ok = n <= r1 ? !memcmp(B.buf + 7, exp, n) :
			!memcmp(B.buf + 7, exp, r1) &&
			!memcmp(B.buf + 2000003, exp + r1, n - r1);
		CHECK(ok, "data of a %u-byte send", n);
		free(exp);
	}
	pair_free(&p);
}

/* SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM, READ on RC. */
TEST(rc_imm_write_read)
{
	struct ibv_wc wc;
	struct pair p;

	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair");
	fill(A.buf, 200000, 7);
	REQUIRE(!post_recv(&p, 1, 0, 4096), "recv");
	REQUIRE(!post1(&p, IBV_WR_SEND_WITH_IMM, 5, 0, 100, 0, 0), "send imm");
	REQUIRE(wait_wc(B.cq, &wc), "recv wc");
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	      (wc.wc_flags & IBV_WC_WITH_IMM) &&
	      wc.imm_data == htonl(0xabcd0005) && wc.byte_len == 100,
	      "send with imm: flags %x imm %x", wc.wc_flags, wc.imm_data);
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS, "send wc");

	REQUIRE(!post1(&p, IBV_WR_RDMA_WRITE, 6, 0, 200000, 0, 300000),
		"write");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		wc.opcode == IBV_WC_RDMA_WRITE, "write wc %d", wc.status);
	CHECK(!memcmp(B.buf + 300000, A.buf, 200000), "written data");
	CHECK(cq_quiet(B.cq), "a plain write completes nothing remotely");

	REQUIRE(!post_recv(&p, 2, 0, 0), "recv for imm");
	REQUIRE(!post1(&p, IBV_WR_RDMA_WRITE_WITH_IMM, 7, 10, 5000, 0,
		       600000), "write imm");
	REQUIRE(wait_wc(B.cq, &wc), "write imm recv wc");
	CHECK(wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 2 &&
	      (wc.wc_flags & IBV_WC_WITH_IMM) &&
	      wc.imm_data == htonl(0xabcd0007) && wc.byte_len == 5000,
	      "write with imm: opcode %d len %u", wc.opcode, wc.byte_len);
	CHECK(!memcmp(B.buf + 600000, A.buf + 10, 5000), "write imm data");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS, "wc");

	fill(B.buf + 1000000, 150000, 9);
	REQUIRE(!post1(&p, IBV_WR_RDMA_READ, 8, 2000000, 150000, 0, 1000000),
		"read");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		wc.opcode == IBV_WC_RDMA_READ, "read wc %d", wc.status);
	CHECK(!memcmp(A.buf + 2000000, B.buf + 1000000, 150000), "read data");
	pair_free(&p);
}

struct faa_arg {
	uint64_t *v;
	int n;
};

static void *cpu_adder(void *arg)
{
	struct faa_arg *a = arg;
	int i;

	for (i = 0; i < a->n; i++)
		__atomic_fetch_add(a->v, 1000000, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Atomics: values returned, and coherent with CPU atomics. */
TEST(rc_atomics)
{
	uint64_t *rv = (uint64_t *)(B.buf + 8192), *res = (uint64_t *)A.buf;
	struct ibv_sge sge = { (uintptr_t)A.buf, 8, A.mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	long adds = scaled(20000);
	struct faa_arg fa = { rv, adds };
	struct ibv_wc wc;
	struct pair p;
	pthread_t th;
	int i;

	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair");
	*rv = 42;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.remote_addr = (uintptr_t)rv;
	wr.wr.atomic.rkey = B.mr->rkey;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 77;
	REQUIRE(!ibv_post_send(p.a, &wr, &bad), "cas");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		wc.opcode == IBV_WC_COMP_SWAP, "cas wc");
	CHECK(*res == 42 && *rv == 77, "cas: old %lu now %lu",
	      (unsigned long)*res, (unsigned long)*rv);
	REQUIRE(!ibv_post_send(p.a, &wr, &bad), "failing cas");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS, "wc");
	CHECK(*res == 77 && *rv == 77, "cas that does not match");

	*rv = 0;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.compare_add = 1;
	pthread_create(&th, NULL, cpu_adder, &fa);
	for (i = 0; i < adds; i++) {
		REQUIRE(!ibv_post_send(p.a, &wr, &bad), "faa %d", i);
		REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
			wc.opcode == IBV_WC_FETCH_ADD, "faa wc");
	}
	pthread_join(th, NULL);
	CHECK(*rv == (uint64_t)adds * 1000000 + adds,
	      "%ld softhca and %ld CPU adds: %lu", adds, adds,
	      (unsigned long)*rv);

	wr.wr.atomic.remote_addr = (uintptr_t)rv + 4;
	REQUIRE(!ibv_post_send(p.a, &wr, &bad), "misaligned");
	REQUIRE(wait_wc(A.cq, &wc), "wc");
	CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR, "misaligned atomic: %s",
	      ibv_wc_status_str(wc.status));
	pair_free(&p);
}

/* INLINE: the buffer is reusable at return; unsignaled WQEs retire. */
TEST(inline_and_unsignaled)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .num_sge = 1 }, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pair p;
	char msg[64];
	int i, n = 0, err;

	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair");
	strcpy(msg, "inline payload");
	sge = (struct ibv_sge){ (uintptr_t)msg, 15, 0xdeadbeef };
	wr.sg_list = &sge;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	REQUIRE(!post_recv(&p, 1, 0, 64), "recv");
	REQUIRE(!ibv_post_send(p.a, &wr, &bad), "inline send (bad lkey)");
	memset(msg, 'x', sizeof(msg));
	REQUIRE(wait_wc(B.cq, &wc) && wc.status == IBV_WC_SUCCESS, "recv");
	CHECK(!strcmp((char *)B.buf, "inline payload"), "inline data");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS, "send wc");

	/* 600 unsignaled sends through a 256-deep SQ, one signaled. */
	sge = (struct ibv_sge){ (uintptr_t)A.buf, 8, A.mr->lkey };
	wr.send_flags = 0;
	for (i = 0; i < 600; i++) {
		/* The RQ fills up when the sends run behind the posts. */
		while ((err = post_recv(&p, i, 0, 64)) == ENOMEM)
			while (ibv_poll_cq(B.cq, 1, &wc) > 0)
				n++;
		REQUIRE(!err, "recv %d", i);
		wr.wr_id = i;
		wr.send_flags = i == 599 ? IBV_SEND_SIGNALED : 0;
		while (ibv_post_send(p.a, &wr, &bad) == ENOMEM)
			sched_yield();	/* SQ full until WQEs retire */
		while (ibv_poll_cq(B.cq, 1, &wc) > 0)
			n++;
	}
	REQUIRE(wait_wc(A.cq, &wc), "the signaled one");
	CHECK(wc.wr_id == 599 && wc.status == IBV_WC_SUCCESS,
	      "only the signaled WQE completes: wr_id %lu",
	      (unsigned long)wc.wr_id);
	while (n < 600 && wait_wc(B.cq, &wc))
		n++;
	CHECK(n == 600, "600 receives: %d", n);
	CHECK(cq_quiet(A.cq), "no completion for unsignaled WQEs");
	pair_free(&p);
}

/* UC: SEND, SEND_WITH_IMM, WRITE, WRITE_WITH_IMM; no receive: dropped. */
TEST(uc_opcodes)
{
	struct opts o = { .access = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_wc wc;
	struct pair p;

	REQUIRE(!pair_make(&p, IBV_QPT_UC, &o), "pair");
	fill(A.buf, 70000, 3);
	REQUIRE(!post_recv(&p, 1, 0, 70000), "recv");
	REQUIRE(!post1(&p, IBV_WR_SEND_WITH_IMM, 1, 0, 70000, 0, 0), "send");
	REQUIRE(wait_wc(B.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		wc.byte_len == 70000 && (wc.wc_flags & IBV_WC_WITH_IMM),
		"uc recv");
	CHECK(!memcmp(A.buf, B.buf, 70000), "uc send data");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS, "wc");
	REQUIRE(!post1(&p, IBV_WR_RDMA_WRITE, 2, 0, 3000, 0, 100000), "wr");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS, "wc");
	CHECK(!memcmp(A.buf, B.buf + 100000, 3000), "uc write data");
	REQUIRE(!post_recv(&p, 3, 0, 0), "recv");
	REQUIRE(!post1(&p, IBV_WR_RDMA_WRITE_WITH_IMM, 3, 0, 10, 0, 200000),
		"write imm");
	REQUIRE(wait_wc(B.cq, &wc) &&
		wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM, "uc write imm");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS, "wc");
	/* No receive posted: the message is lost, the sender succeeds. */
	REQUIRE(!post1(&p, IBV_WR_SEND, 4, 0, 10, 0, 0), "send");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS,
		"uc send without receive: %s", ibv_wc_status_str(wc.status));
	CHECK(cq_quiet(B.cq), "nothing received");
	errno = 0;
	CHECK(post1(&p, IBV_WR_RDMA_READ, 5, 0, 8, 0, 0) == EINVAL,
	      "no READ on UC");
	pair_free(&p);
}

/* UD: GRH first, byte_len with it, src_qp; wrong Q_Key dropped. */
TEST(ud_send_grh)
{
	struct opts o = { 0 };
	struct ibv_wc wc;
	struct pair p;
	struct ibv_grh *grh = (struct ibv_grh *)B.buf;

	REQUIRE(!pair_make(&p, IBV_QPT_UD, &o), "pair");
	fill(A.buf, 1000, 11);
	REQUIRE(!post_recv(&p, 1, 0, 2000), "recv");
	REQUIRE(!post1(&p, IBV_WR_SEND_WITH_IMM, 1, 0, 1000, 0, 0), "send");
	REQUIRE(wait_wc(B.cq, &wc) && wc.status == IBV_WC_SUCCESS, "ud recv");
	CHECK(wc.byte_len == 1040 && (wc.wc_flags & IBV_WC_GRH) &&
	      (wc.wc_flags & IBV_WC_WITH_IMM) && wc.src_qp == p.a->qp_num &&
	      wc.pkey_index == 0, "ud wc: len %u flags %x src %u",
	      wc.byte_len, wc.wc_flags, wc.src_qp);
	CHECK(!memcmp(B.buf + 40, A.buf, 1000), "ud data after the GRH");
	CHECK(!memcmp(&grh->sgid, &A.gid, 16) && !memcmp(&grh->dgid, &B.gid, 16),
	      "GRH GIDs");
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS, "wc");

	/* A receive too small for GRH + data completes in error. */
	REQUIRE(!post_recv(&p, 2, 0, 100), "small recv");
	REQUIRE(!post1(&p, IBV_WR_SEND, 2, 0, 1000, 0, 0), "send");
	REQUIRE(wait_wc(B.cq, &wc), "wc");
	CHECK(wc.status == IBV_WC_LOC_LEN_ERR, "short UD receive: %s",
	      ibv_wc_status_str(wc.status));
	REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS, "wc");
	pair_free(&p);
}

/* An RC pair whose responder takes from an SRQ. */
TEST(rc_over_srq)
{
	struct opts o = RC_OPTS;
	struct ibv_wc wc;
	struct pair p;
	int i;

	o.srq = 1;
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &o), "pair");
	for (i = 0; i < 8; i++)
		REQUIRE(!post_recv(&p, 50 + i, 1000 * i, 1000), "srq recv");
	for (i = 0; i < 8; i++) {
		fill(A.buf + 100000, 500, i);
		REQUIRE(!post1(&p, IBV_WR_SEND, i, 100000, 500, 0, 0), "send");
		REQUIRE(wait_wc(B.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
			wc.wr_id == 50 + (uint64_t)i &&
			wc.qp_num == p.b->qp_num, "srq wc %d", i);
		CHECK(!memcmp(B.buf + 1000 * i, A.buf + 100000, 500),
		      "srq data %d", i);
		REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS,
			"wc");
	}
	pair_free(&p);
}

/* The error statuses, and the states both ends end up in. */
TEST(rc_errors)
{
	struct opts o = RC_OPTS;
	struct ibv_wc wc;
	struct pair p;

	/* Receive buffer too small: LOC_LEN_ERR there, REM_INV_REQ_ERR here. */
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &o), "pair");
	REQUIRE(!post_recv(&p, 1, 0, 10), "recv");
	REQUIRE(!post1(&p, IBV_WR_SEND, 1, 0, 100, 0, 0), "send");
	REQUIRE(wait_wc(A.cq, &wc), "wc");
	CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR, "requester: %s",
	      ibv_wc_status_str(wc.status));
	REQUIRE(wait_wc(B.cq, &wc), "wc");
	CHECK(wc.status == IBV_WC_LOC_LEN_ERR && wc.wr_id == 1,
	      "responder: %s", ibv_wc_status_str(wc.status));
	CHECK(qp_state(p.a) == IBV_QPS_ERR && qp_state(p.b) == IBV_QPS_ERR,
	      "both ends in ERR");
	/* Work posted in ERR is flushed. */
	REQUIRE(!post1(&p, IBV_WR_SEND, 2, 0, 1, 0, 0), "post in ERR");
	REQUIRE(wait_wc(A.cq, &wc), "flush");
	CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 2, "flushed");
	pair_free(&p);

	/* Bad rkey: REM_ACCESS_ERR. */
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &o), "pair");
	{
		struct ibv_sge sge = { (uintptr_t)A.buf, 8, A.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)B.buf;
		wr.wr.rdma.rkey = B.mr->rkey ^ 0x100;
		REQUIRE(!ibv_post_send(p.a, &wr, &bad), "post");
	}
	REQUIRE(wait_wc(A.cq, &wc), "wc");
	CHECK(wc.status == IBV_WC_REM_ACCESS_ERR, "bad rkey: %s",
	      ibv_wc_status_str(wc.status));
	CHECK(qp_state(p.b) == IBV_QPS_ERR, "responder in ERR");
	pair_free(&p);

	/* Outside the MR: REM_ACCESS_ERR; nothing written beyond. */
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &o), "pair");
	REQUIRE(!post1(&p, IBV_WR_RDMA_WRITE, 4, 0, 100, 0, BUF - 50), "post");
	REQUIRE(wait_wc(A.cq, &wc), "wc");
	CHECK(wc.status == IBV_WC_REM_ACCESS_ERR, "range: %s",
	      ibv_wc_status_str(wc.status));
	pair_free(&p);

	/* The responder QP does not allow remote writes. */
	o.access = IBV_ACCESS_REMOTE_READ;
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &o), "pair");
	REQUIRE(!post1(&p, IBV_WR_RDMA_WRITE, 5, 0, 100, 0, 0), "post");
	REQUIRE(wait_wc(A.cq, &wc), "wc");
	CHECK(wc.status == IBV_WC_REM_ACCESS_ERR, "no remote write: %s",
	      ibv_wc_status_str(wc.status));
	pair_free(&p);
	o = RC_OPTS;

	/* Bad lkey: LOC_PROT_ERR, and later WQEs flush. */
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &o), "pair");
	{
		struct ibv_sge sge = { (uintptr_t)A.buf, 8, A.mr->lkey + 1 };
		struct ibv_send_wr wr = { .wr_id = 6, .sg_list = &sge,
					  .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		REQUIRE(!post_recv(&p, 6, 0, 64), "recv");
		REQUIRE(!ibv_post_send(p.a, &wr, &bad), "post");
	}
	REQUIRE(wait_wc(A.cq, &wc), "wc");
	CHECK(wc.status == IBV_WC_LOC_PROT_ERR && wc.wr_id == 6,
	      "bad lkey: %s", ibv_wc_status_str(wc.status));
	CHECK(qp_state(p.a) == IBV_QPS_ERR && qp_state(p.b) == IBV_QPS_RTS,
	      "a local error moves only the requester");
	pair_free(&p);

	/* No receive and rnr_retry 2: RNR_RETRY_EXC_ERR after the waits. */
	o.rnr_retry = 2;
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &o), "pair");
	REQUIRE(!post1(&p, IBV_WR_SEND, 7, 0, 8, 0, 0), "post");
	REQUIRE(wait_wc(A.cq, &wc), "wc");
	CHECK(wc.status == IBV_WC_RNR_RETRY_EXC_ERR, "rnr: %s",
	      ibv_wc_status_str(wc.status));
	CHECK(qp_state(p.b) == IBV_QPS_RTS, "responder unharmed by RNR");
	pair_free(&p);

	/* RNR then a receive arrives: the send completes. */
	o.rnr_retry = 7;
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &o), "pair");
	REQUIRE(!post1(&p, IBV_WR_SEND, 8, 0, 8, 0, 0), "post");
	usleep(20000);
	REQUIRE(!post_recv(&p, 8, 0, 64), "late recv");
	REQUIRE(wait_wc(A.cq, &wc), "wc");
	CHECK(wc.status == IBV_WC_SUCCESS, "rnr retried: %s",
	      ibv_wc_status_str(wc.status));
	pair_free(&p);
}

/*
 * A message sent before its peer reached RTR is not lost and does not
 * fail: nobody answers it, so it is sent again after the local ACK
 * timeout (timeout 14: 67 ms) until the peer is ready, as on a fabric.
 * Programs that connect one side after the other (the XRC ping-pong's
 * server sends the moment its own side is up) depend on it.  A peer
 * that never comes ends the WQE in RETRY_EXC_ERR, and not before the
 * retry_cnt (7) timeouts have passed.
 */
TEST(rc_peer_not_ready_yet)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = A.cq, .recv_cq = A.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct timespec t0;
	struct ibv_wc wc;
	struct pair p = {};
	double dt;

	p.a = ibv_create_qp(A.pd, &ia);
	ia.send_cq = B.cq;
	ia.recv_cq = B.cq;
	p.b = ibv_create_qp(B.pd, &ia);
	REQUIRE(p.a && p.b, "QPs");
	REQUIRE(!qp_connect(p.a, &B, p.b->qp_num, &RC_OPTS, 0), "a to RTS");
	fill(A.buf, 64, 11);
	memset(B.buf, 0, 64);
	REQUIRE(!post1(&p, IBV_WR_SEND, 1, 0, 64, 0, 0), "send to b in RESET");
	usleep(150000);
	if (ibv_poll_cq(A.cq, 1, &wc))
		CHECK(0, "a completion while b is not ready: id %llu %s",
		      (unsigned long long)wc.wr_id,
		      ibv_wc_status_str(wc.status));
	REQUIRE(!qp_connect(p.b, &A, p.a->qp_num, &RC_OPTS, RC_OPTS.access),
		"b to RTS");
	REQUIRE(!post_recv(&p, 2, 0, 64), "recv");
	REQUIRE(wait_wc(A.cq, &wc), "send wc");
	CHECK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS,
	      "send to a late peer: %s", ibv_wc_status_str(wc.status));
	REQUIRE(wait_wc(B.cq, &wc), "recv wc");
	CHECK(wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS &&
	      wc.byte_len == 64 && !memcmp(A.buf, B.buf, 64),
	      "received: %s, %u bytes", ibv_wc_status_str(wc.status),
	      wc.byte_len);
	CHECK(!ibv_destroy_qp(p.b), "destroy b");
	p.b = NULL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	REQUIRE(!post1(&p, IBV_WR_SEND, 3, 0, 64, 0, 0), "send to nobody");
	REQUIRE(wait_wc(A.cq, &wc), "wc");
	dt = secs_since(&t0);
	CHECK(wc.wr_id == 3 && wc.status == IBV_WC_RETRY_EXC_ERR,
	      "send to a destroyed peer: %s", ibv_wc_status_str(wc.status));
	CHECK(dt >= 7 * 0.067, "RETRY_EXC_ERR after %.3f s: before 7 timeouts",
	      dt);
	printf("# RETRY_EXC_ERR after %.3f s (timeout 14, retry_cnt 7)\n", dt);
	pair_free(&p);
}

/* One completion on @cq within @secs seconds. */
static int wait_wc_secs(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (secs_since(&t0) < secs)
		if (ibv_poll_cq(cq, 1, wc))
			return 1;
	return 0;
}

/*
 * Keeps the poller busy beside a test: RDMA WRITEs on a QP pair of its
 * own (own CQ), until *stop.  A poller with other work adopts a QP the
 * moment a timer kicks it, instead of first waking up.
 */
struct busy_pair {
	volatile int stop;
	long writes;
	int err;
};

static void *busy_pair_fn(void *arg)
{
	struct busy_pair *bp = arg;
	struct ibv_cq *cq = ibv_create_cq(A.ctx, 64, NULL, NULL, 0);
	struct ibv_cq *bcq = ibv_create_cq(B.ctx, 64, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *a = NULL, *b = NULL;
	struct ibv_sge sge = { (uintptr_t)A.buf + (2 << 20), 64, A.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)B.buf + (2 << 20), B.mr->rkey },
	}, *bad;
	struct ibv_wc wc;

	bp->err = 1;
	if (!cq || !bcq)
		goto out;
	a = ibv_create_qp(A.pd, &ia);
	ia.send_cq = bcq;
	ia.recv_cq = bcq;
	b = ibv_create_qp(B.pd, &ia);
	if (a && b && !qp_connect(a, &B, b->qp_num, &RC_OPTS, 0) &&
	    !qp_connect(b, &A, a->qp_num, &RC_OPTS, RC_OPTS.access)) {
		bp->err = 0;
		while (!bp->stop && !bp->err) {
			if (ibv_post_send(a, &wr, &bad) ||
			    !wait_wc_secs(cq, &wc, 5) || wc.status)
				bp->err = 1;
			bp->writes++;
		}
	}
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
out:
	if (cq)
		ibv_destroy_cq(cq);
	if (bcq)
		ibv_destroy_cq(bcq);
	return NULL;
}

/*
 * RNR waits end, however the retry timer's expiry falls against the
 * poller's passes: a send meets an empty receive queue (min_rnr_timer
 * 12: 0.64 ms), the receive comes a random 0..2 ms later, many times,
 * while another QP keeps the poller busy.  Every send must complete;
 * one that waits for ever is a kick the poller lost.
 */
TEST(rnr_waits_end)
{
	struct busy_pair bp = {};
	struct opts o = RC_OPTS;
	struct ibv_wc wc;
	struct pair p;
	pthread_t th;
	int i, n = scaled(300), lost = 0;

	if (getenv("RNR_ROUNDS"))
		n = atoi(getenv("RNR_ROUNDS"));
	o.min_rnr_timer = 12;
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &o), "pair");
	REQUIRE(!pthread_create(&th, NULL, busy_pair_fn, &bp), "thread");
	srand(7);
	for (i = 0; i < n && !lost && !tap_failed_now; i++) {
		CHECK(!post1(&p, IBV_WR_SEND, i, 0, 32, 0, 0), "send %d", i);
		usleep(rand() % 2000);
		CHECK(!post_recv(&p, i, 0, 64), "recv %d", i);
		if (!wait_wc_secs(A.cq, &wc, 5) || !wait_wc_secs(B.cq, &wc, 5)) {
			printf("# send %d: no completion in 5 s\n", i);
			lost = 1;
			break;
		}
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)i,
		      "recv %d: %s", i, ibv_wc_status_str(wc.status));
	}
	bp.stop = 1;
	pthread_join(th, NULL);
	CHECK(!lost, "an RNR wait that never ended (after %d sends)", i);
	CHECK(!bp.err, "the busy pair's writes (%ld done)", bp.writes);
	printf("# %d RNR waits ended, %ld writes beside them\n", i, bp.writes);
	pair_free(&p);
}

/*
 * A one-entry send queue: the slot of a WQE is free by the time its
 * completion can be polled, so a post right after the poll never finds
 * the queue full (perftest's latency tools run so; with the CQE pushed
 * before the consumer index moved, ib_read_lat failed with ENOMEM in
 * about half of its 2,000-iteration runs).
 */
TEST(one_entry_sq_post_after_poll)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = A.cq, .recv_cq = A.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_wc wc;
	struct pair p = {};
	int i, n = scaled(2000), err = 0;

	p.a = ibv_create_qp(A.pd, &ia);
	ia.send_cq = B.cq;
	ia.recv_cq = B.cq;
	p.b = ibv_create_qp(B.pd, &ia);
	REQUIRE(p.a && p.b, "QPs");
	REQUIRE(!qp_connect(p.a, &B, p.b->qp_num, &RC_OPTS, 0) &&
		!qp_connect(p.b, &A, p.a->qp_num, &RC_OPTS, RC_OPTS.access),
		"connect");
	for (i = 0; i < n && !err; i++) {
		err = post1(&p, IBV_WR_RDMA_READ, i, 0, 64, 0, 4096);
		if (err)
			break;
		if (!wait_wc_secs(A.cq, &wc, 5) || wc.status != IBV_WC_SUCCESS)
			err = -1;
	}
	CHECK(!err, "READ %d of %d on a one-entry SQ: post returned %d", i, n,
	      err);
	pair_free(&p);
}

/* Solicited-only arming fires for a solicited message only. */
TEST(completion_events)
{
	struct ibv_cq *ecq;
	void *ectx;
	struct ibv_wc wc;
	struct pollfd pfd = { .fd = B.ch->fd, .events = POLLIN };
	struct pair p;

	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair");
	REQUIRE(!post_recv(&p, 1, 0, 64) && !post_recv(&p, 2, 0, 64), "recv");
	REQUIRE(!ibv_req_notify_cq(B.cq, 1), "arm solicited");
	REQUIRE(!post1(&p, IBV_WR_SEND, 1, 0, 8, 0, 0), "send");
	REQUIRE(wait_wc(B.cq, &wc), "wc");
	CHECK(poll(&pfd, 1, 200) == 0, "no event for an unsolicited message");
	REQUIRE(!post1(&p, IBV_WR_SEND, 2, 0, 8, IBV_SEND_SOLICITED, 0),
		"send");
	CHECK(poll(&pfd, 1, 5000) == 1, "event for a solicited message");
	REQUIRE(!ibv_get_cq_event(B.ch, &ecq, &ectx) && ecq == B.cq, "event");
	ibv_ack_cq_events(ecq, 1);
	REQUIRE(wait_wc(B.cq, &wc), "wc");
	CHECK(poll(&pfd, 1, 100) == 0, "an arm fires once");
	pair_free(&p);
}

/*
 * The poller keeps a busy QP's lookups (destination QP, local and remote
 * MR) from one run to the next, references held.  datapath.sh loads the
 * module with poll_idle_us=1000000, so after its traffic the sender stays
 * watched, idle, for a second: deregistering the MRs it used and
 * destroying its peer must not wait for that second (the poller lets go
 * of a dying QP or a dead MR at its next pass).  The bound, half the
 * idle time, separates one pass from the idle timeout.
 */
TEST(cached_objects_go_at_once)
{
	struct ibv_mr *lmr = ibv_reg_mr(A.pd, A.buf, 65536,
					IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *rmr = ibv_reg_mr(B.pd, B.buf + 65536, 65536,
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE);
	struct ibv_sge sge = { (uintptr_t)A.buf, 64, 0 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct timespec t0;
	struct ibv_wc wc;
	struct pair p;
	double dt, dt_r, dt_l;
	int i;

	REQUIRE(lmr && rmr, "MRs");
	REQUIRE(!pair_make(&p, IBV_QPT_RC, &RC_OPTS), "pair");
	sge.lkey = lmr->lkey;
	wr.wr.rdma.remote_addr = (uintptr_t)B.buf + 65536;
	wr.wr.rdma.rkey = rmr->rkey;
	for (i = 0; i < 10; i++) {
		wr.wr_id = i;
		REQUIRE(!ibv_post_send(p.a, &wr, &bad), "write");
		REQUIRE(wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS,
			"write wc: %s", ibv_wc_status_str(wc.status));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(!ibv_dereg_mr(rmr), "dereg the remote MR");
	dt = secs_since(&t0);
	CHECK(dt < 0.5, "dereg of an MR a watched QP cached: %.3f s", dt);
	dt_r = dt;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(!ibv_dereg_mr(lmr), "dereg the local MR");
	dt = secs_since(&t0);
	CHECK(dt < 0.5, "dereg of a local MR a watched QP cached: %.3f s", dt);
	dt_l = dt;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(!ibv_destroy_qp(p.b), "destroy the peer");
	dt = secs_since(&t0);
	CHECK(dt < 0.5, "destroy of a QP a watched QP cached: %.3f s", dt);
	/* The margin under the bound, on record (a busy host's debug tier). */
	printf("# dereg of the remote MR %.3f s, of the local MR %.3f s, destroy of the peer %.3f s\n",
	       dt_r, dt_l, dt);
	p.b = NULL;
	/* The sender, its peer gone: RETRY_EXC_ERR, no hang. */
	wr.wr_id = 99;
	wr.wr.rdma.rkey = B.mr->rkey;
	sge.lkey = A.mr->lkey;
	REQUIRE(!ibv_post_send(p.a, &wr, &bad), "write to nobody");
	REQUIRE(wait_wc(A.cq, &wc), "wc");
	CHECK(wc.wr_id == 99 && wc.status == IBV_WC_RETRY_EXC_ERR,
	      "write to a destroyed peer: %s", ibv_wc_status_str(wc.status));
	pair_free(&p);
}

/*
 * 100,000 post_send/post_recv/poll_cq iterations with no system call.
 * A child (with its own context: ib_uverbs refuses commands from a
 * process other than the one that opened the device) pins itself, warms
 * its QP up so the doorbell hands it to the poller, then installs a
 * seccomp filter that kills it on any system call and runs the loop,
 * reporting through shared memory.  Its exit is its first system call,
 * so it dies of SIGSYS after reporting.
 */
static long nosys_iters;	/* the loop's length (scaled) */

static int nosys_poll2(void)
{
	struct ibv_wc wc;
	long spins;
	int n = 0;

	for (spins = 0; n < 2 && spins < 100000000L; spins++) {
		if (ibv_poll_cq(A.cq, 1, &wc) > 0) {
			if (wc.status != IBV_WC_SUCCESS)
				return -1;
			n++;
		}
		if (ibv_poll_cq(B.cq, 1, &wc) > 0) {
			if (wc.status != IBV_WC_SUCCESS)
				return -1;
			n++;
		}
	}
	return n == 2 ? 0 : -1;
}

static void nosys_child(const char *a, const char *b, volatile long *done)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { 1, f };
	struct rlimit nocore = { 0, 0 };
	cpu_set_t cpus;
	struct pair p;
	long i;

	setrlimit(RLIMIT_CORE, &nocore);
	/* Keep off the poller's CPU (datapath.sh binds it to CPU 1). */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	if (side_open(&A, a) || side_open(&B, b) ||
	    pair_make(&p, IBV_QPT_RC, &RC_OPTS))
		_exit(2);
	/*
	 * Warm up; pause past the poller's back-off in case it met
	 * contention, and warm up again: the last doorbell hands the QP
	 * to the poller.
	 */
	for (i = 0; i < 2100; i++) {
		if (i == 2000)
			usleep(50000);
		if (post_recv(&p, i, 0, 64) ||
		    post1(&p, IBV_WR_SEND, i, 0, 64, 0, 0) || nosys_poll2())
			_exit(3);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		_exit(4);
	for (i = 0; i < nosys_iters; i++) {
		if (post_recv(&p, i, 0, 64) ||
		    post1(&p, IBV_WR_SEND, i, 0, 64, 0, 0) || nosys_poll2())
			break;
		*done = i + 1;
	}
	_exit(0);	/* a system call: SIGSYS */
}

TEST(no_syscalls_in_steady_state)
{
	volatile long *done = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const char *a = getenv("SOFTHCA_DEV"), *b = getenv("SOFTHCA_DEV2");
	struct timespec t0 = { 0 }, t1 = { 0 };
	cpu_set_t cpus, old;
	int status, t;
	pid_t pid;

	REQUIRE(done != MAP_FAILED, "mmap");
	nosys_iters = scaled(100000);
	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (!pid)
		nosys_child(a, b ? b : a, done);
	/*
	 * Watch the child's progress to time the loop (it cannot), from
	 * the child's CPU and rarely enough not to disturb the poller.
	 */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_getaffinity(0, sizeof(old), &old);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	for (t = 0; t < 12000 && waitpid(pid, &status, WNOHANG) != pid; t++) {
		if (*done && !t0.tv_sec)
			clock_gettime(CLOCK_MONOTONIC, &t0);
		if (*done < nosys_iters)
			clock_gettime(CLOCK_MONOTONIC, &t1);
		usleep(10000);
	}
	sched_setaffinity(0, sizeof(old), &old);
	if (t == 12000) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	CHECK(*done == nosys_iters, "iterations without a system call: %ld",
	      *done);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
	      "the child's exit was its first system call (status %x)",
	      status);
	printf("# %ld post_send+post_recv+poll_cq iterations under seccomp, "
	       "about %.2f us each (64-byte RC SEND, one thread, both ends)\n",
	       *done, ((t1.tv_sec - t0.tv_sec) * 1e9 +
		       (t1.tv_nsec - t0.tv_nsec)) / 1e3 / (*done ? *done : 1));
	munmap((void *)done, 4096);
}

int main(void)
{
	return pair_main();
}
