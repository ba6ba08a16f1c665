// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: validation of WQE copies (wqe.c).
 *
 * Each case builds a WQE in a buffer the size of a slot, as a hostile
 * process could write it, and checks the verdict.
 */
#include <kunit/test.h>
#include <rdma/ib_user_verbs.h>

#include "softhca.h"
#include "wqe.h"

struct wqe_buf {
	union {
		struct softhca_send_wqe send;
		struct softhca_recv_wqe recv;
		u8 raw[256];
	};
};

static struct softhca_sge *send_sges(struct wqe_buf *b)
{
	return (struct softhca_sge *)(&b->send + 1);
}

static struct softhca_sge *recv_sges(struct wqe_buf *b)
{
	return (struct softhca_sge *)(&b->recv + 1);
}

static const struct softhca_wqe_bounds rc4 = {
	.qp_type = IB_QPT_RC, .stride = 128, .max_sge = 4, .max_inline = 80,
};

static void opcode_table(struct kunit *test)
{
	static const u8 all[] = {
		IB_UVERBS_WR_SEND, IB_UVERBS_WR_SEND_WITH_IMM,
		IB_UVERBS_WR_RDMA_WRITE, IB_UVERBS_WR_RDMA_WRITE_WITH_IMM,
		IB_UVERBS_WR_RDMA_READ, IB_UVERBS_WR_ATOMIC_CMP_AND_SWP,
		IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD,
	};
	/* ibv_post_send(3): which QP types take each opcode above. */
	static const struct {
		enum ib_qp_type type;
		bool ok[7];
	} table[] = {
		{ IB_QPT_RC,      { 1, 1, 1, 1, 1, 1, 1 } },
		{ IB_QPT_XRC_INI, { 1, 1, 1, 1, 1, 1, 1 } },
		{ IB_QPT_UC,      { 1, 1, 1, 1, 0, 0, 0 } },
		{ IB_QPT_UD,      { 1, 1, 0, 0, 0, 0, 0 } },
		{ IB_QPT_GSI,     { 1, 1, 0, 0, 0, 0, 0 } },
		{ IB_QPT_XRC_TGT, { 0, 0, 0, 0, 0, 0, 0 } },
	};
	int t, o;

	for (t = 0; t < ARRAY_SIZE(table); t++)
		for (o = 0; o < ARRAY_SIZE(all); o++)
			KUNIT_EXPECT_EQ_MSG(test,
					    softhca_opcode_valid(table[t].type,
								 all[o]),
					    table[t].ok[o], "type %d opcode %u",
					    table[t].type, all[o]);
	/* Opcodes softhca does not implement, and garbage. */
	KUNIT_EXPECT_FALSE(test, softhca_opcode_valid(IB_QPT_UC,
						      IB_UVERBS_WR_LOCAL_INV));
	KUNIT_EXPECT_FALSE(test, softhca_opcode_valid(IB_QPT_UD,
						      IB_UVERBS_WR_BIND_MW));
	/* Memory windows: a process's RC QP binds and invalidates. */
	KUNIT_EXPECT_TRUE(test, softhca_opcode_valid(IB_QPT_RC,
						     IB_UVERBS_WR_LOCAL_INV));
	KUNIT_EXPECT_TRUE(test, softhca_opcode_valid(IB_QPT_RC,
						     IB_UVERBS_WR_BIND_MW));
	KUNIT_EXPECT_FALSE(test, softhca_opcode_valid(IB_QPT_RC, 0xff));
}

static void send_good(struct kunit *test)
{
	struct wqe_buf b = {};
	u64 len = 0;

	b.send.ctrl.opcode = IB_UVERBS_WR_SEND;
	b.send.ctrl.flags = SOFTHCA_WQE_F_SIGNALED | SOFTHCA_WQE_F_SOLICITED;
	b.send.ctrl.num_sge = 3;
	send_sges(&b)[0].length = 100;
	send_sges(&b)[1].length = 0;
	send_sges(&b)[2].length = 28;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len), 0);
	KUNIT_EXPECT_EQ(test, len, 128ULL);

	b.send.ctrl.num_sge = 0;	/* a zero-length send is legal */
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len), 0);
	KUNIT_EXPECT_EQ(test, len, 0ULL);
}

static void send_malformed(struct kunit *test)
{
	struct wqe_buf b = {};
	u64 len;

	b.send.ctrl.opcode = IB_UVERBS_WR_RDMA_WRITE;
	b.send.ctrl.num_sge = 5;		/* over max_sge */
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EINVAL);
	b.send.ctrl.num_sge = 255;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EINVAL);
	b.send.ctrl.num_sge = 1;
	b.send.ctrl.flags = 0x10;		/* unknown flag */
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EINVAL);
	b.send.ctrl.flags = 0;
	b.send.ctrl.reserved = 1;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EINVAL);
	b.send.ctrl.reserved = 0;
	b.send.ctrl.opcode = 0x7f;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EINVAL);
}

static void send_sges_bounded_by_stride(struct kunit *test)
{
	/* max_sge alone would allow 4; a 64-byte slot holds one SGE. */
	const struct softhca_wqe_bounds small = {
		.qp_type = IB_QPT_RC, .stride = 64, .max_sge = 4,
	};
	struct wqe_buf b = {};
	u64 len;

	b.send.ctrl.opcode = IB_UVERBS_WR_SEND;
	b.send.ctrl.num_sge = 1;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &small, &len), 0);
	b.send.ctrl.num_sge = 2;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &small, &len),
			-EINVAL);
}

static void send_lengths(struct kunit *test)
{
	struct wqe_buf b = {};
	u64 len;

	b.send.ctrl.opcode = IB_UVERBS_WR_SEND;
	b.send.ctrl.num_sge = 2;
	send_sges(&b)[0].length = 0x80000000u;	/* 2 GiB: the maximum */
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len), 0);
	send_sges(&b)[1].length = 1;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EMSGSIZE);
	send_sges(&b)[0].length = 0xffffffffu;
	send_sges(&b)[1].length = 0xffffffffu;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EMSGSIZE);
}

static void send_atomics(struct kunit *test)
{
	struct wqe_buf b = {};
	u64 len;

	b.send.ctrl.opcode = IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
	b.send.ctrl.num_sge = 1;
	send_sges(&b)[0].length = 8;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len), 0);
	send_sges(&b)[0].length = 4;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EMSGSIZE);
	b.send.ctrl.opcode = IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
	b.send.ctrl.num_sge = 0;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EMSGSIZE);
	/* Atomics are RC/XRC only. */
	b.send.ctrl.num_sge = 1;
	send_sges(&b)[0].length = 8;
	{
		struct softhca_wqe_bounds uc = rc4;

		uc.qp_type = IB_QPT_UC;
		KUNIT_EXPECT_EQ(test,
				softhca_send_wqe_check(&b.send, &uc, &len),
				-EINVAL);
	}
}

static void send_inline(struct kunit *test)
{
	struct wqe_buf b = {};
	u64 len;

	b.send.ctrl.opcode = IB_UVERBS_WR_SEND;
	b.send.ctrl.flags = SOFTHCA_WQE_F_INLINE;
	b.send.inline_len = 80;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len), 0);
	KUNIT_EXPECT_EQ(test, len, 80ULL);
	b.send.inline_len = 81;			/* over max_inline */
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EMSGSIZE);
	b.send.inline_len = 0xffffffffu;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EMSGSIZE);
	b.send.inline_len = 8;
	b.send.ctrl.num_sge = 1;		/* inline has no SGEs */
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EINVAL);
	b.send.ctrl.num_sge = 0;
	b.send.ctrl.opcode = IB_UVERBS_WR_RDMA_READ;	/* no inline READ */
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EINVAL);
	b.send.ctrl.opcode = IB_UVERBS_WR_RDMA_WRITE;
	b.send.inline_reserved = 1;
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&b.send, &rc4, &len),
			-EINVAL);
	/* The slot bounds inline data even if max_inline is larger. */
	{
		struct softhca_wqe_bounds big = rc4;

		big.stride = 64;
		big.max_inline = 4096;
		b.send.inline_reserved = 0;
		b.send.inline_len = 17;
		KUNIT_EXPECT_EQ(test,
				softhca_send_wqe_check(&b.send, &big, &len),
				-EMSGSIZE);
	}
}

static void recv_rules(struct kunit *test)
{
	const struct softhca_wqe_bounds rq = {
		.stride = 64, .max_sge = 3,
	};
	struct wqe_buf b = {};
	u64 len;

	b.recv.num_sge = 3;
	recv_sges(&b)[0].length = 10;
	recv_sges(&b)[2].length = 20;
	KUNIT_EXPECT_EQ(test, softhca_recv_wqe_check(&b.recv, &rq, &len), 0);
	KUNIT_EXPECT_EQ(test, len, 30ULL);
	b.recv.num_sge = 4;
	KUNIT_EXPECT_EQ(test, softhca_recv_wqe_check(&b.recv, &rq, &len),
			-EINVAL);
	b.recv.num_sge = 0xffffffffu;
	KUNIT_EXPECT_EQ(test, softhca_recv_wqe_check(&b.recv, &rq, &len),
			-EINVAL);
	b.recv.num_sge = 1;
	b.recv.reserved = 5;
	KUNIT_EXPECT_EQ(test, softhca_recv_wqe_check(&b.recv, &rq, &len),
			-EINVAL);
}

static void copy_is_the_only_read(struct kunit *test)
{
	struct wqe_buf slot = {}, copy;
	u64 len;

	slot.send.ctrl.opcode = IB_UVERBS_WR_SEND;
	slot.send.ctrl.num_sge = 1;
	softhca_wqe_copy(&copy, &slot, rc4.stride);
	/* A racing writer changes the slot after the copy... */
	slot.send.ctrl.num_sge = 200;
	/* ...and the verdict on the copy is unaffected. */
	KUNIT_EXPECT_EQ(test, softhca_send_wqe_check(&copy.send, &rc4, &len), 0);
	KUNIT_EXPECT_EQ(test, copy.send.ctrl.num_sge, 1);
}

static struct kunit_case softhca_wqe_cases[] = {
	KUNIT_CASE(opcode_table),
	KUNIT_CASE(send_good),
	KUNIT_CASE(send_malformed),
	KUNIT_CASE(send_sges_bounded_by_stride),
	KUNIT_CASE(send_lengths),
	KUNIT_CASE(send_atomics),
	KUNIT_CASE(send_inline),
	KUNIT_CASE(recv_rules),
	KUNIT_CASE(copy_is_the_only_read),
	{}
};

static struct kunit_suite softhca_wqe_suite = {
	.name = "softhca_wqe",
	.test_cases = softhca_wqe_cases,
};

kunit_test_suite(softhca_wqe_suite);
