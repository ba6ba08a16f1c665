// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: WQE layout rules and validation of a WQE's kernel copy.
 *
 * Everything here is pure (no device state), so wqe_test.c can drive
 * every rule with crafted WQEs.  Return conventions, which the engine
 * maps to completion statuses:
 *   -EINVAL    malformed WQE (bad opcode for the QP type, unknown flags,
 *              too many SGEs, non-zero reserved bytes): a local QP
 *              operation error;
 *   -EMSGSIZE  lengths that cannot be right (over the maximum message
 *              size, inline data over the queue's limit, an atomic whose
 *              local buffer is not 8 bytes): a local length error.
 */
#include <linux/log2.h>
#include <linux/string.h>
#include <rdma/ib_user_verbs.h>

#include "wqe.h"

/* Slot size for a send queue: header + the larger of SGEs and inline. */
u32 softhca_send_stride(u32 max_sge, u32 max_inline)
{
	u32 data = max_t(u32, max_sge * sizeof(struct softhca_sge),
			 max_inline);

	return max_t(u32, SOFTHCA_SEND_MIN_STRIDE,
		     roundup_pow_of_two(SOFTHCA_SEND_WQE_HDR + data));
}

u32 softhca_recv_stride(u32 max_sge)
{
	u32 bytes = sizeof(struct softhca_recv_wqe) +
		    max_sge * sizeof(struct softhca_sge);

	return max_t(u32, SOFTHCA_RECV_MIN_STRIDE, roundup_pow_of_two(bytes));
}

/*
 * The one read of a slot.  Reading memory another thread may be writing
 * is fine here: whatever mix of old and new words lands in @dst, only
 * @dst is looked at afterwards.  Word loads, not memcpy(): a slot is a
 * few dozen bytes (a stride is a power of two >= 32), and memcpy() is a
 * "rep movsb" on ERMS CPUs, whose start-up cost is most of a short copy
 * on hardware and which an emulator runs a byte at a time (about 2 ns a
 * byte under QEMU TCG, where 3 such copies were a tenth of a SEND's hop).
 */
void softhca_wqe_copy(void *dst, const void *slot, u32 stride)
{
	const u64 *s = slot;
	u64 *d = dst;
	u32 i;

	for (i = 0; i < stride / sizeof(u64); i++)
		d[i] = READ_ONCE(s[i]);
}

/* The opcode table of ibv_post_send(3), per QP type. */
bool softhca_opcode_valid(enum ib_qp_type qp_type, u8 opcode)
{
	switch (opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return qp_type == IB_QPT_RC || qp_type == IB_QPT_UC ||
		       qp_type == IB_QPT_UD || qp_type == IB_QPT_GSI ||
		       qp_type == IB_QPT_XRC_INI;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return qp_type == IB_QPT_RC || qp_type == IB_QPT_UC ||
		       qp_type == IB_QPT_XRC_INI;
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return qp_type == IB_QPT_RC || qp_type == IB_QPT_XRC_INI;
	case IB_UVERBS_WR_BIND_MW:
	case IB_UVERBS_WR_LOCAL_INV:
	case IB_UVERBS_WR_SEND_WITH_INV:
		/* Memory windows (mw.c), on RC. */
		return qp_type == IB_QPT_RC;
	default:
		return false;
	}
}

/*
 * Opcodes only a kernel consumer posts: fast registration needs a
 * consumer whose ring the kernel trusts (the REG_MR WQE is built by
 * kverbs.c).  LOCAL_INV and SEND_WITH_INV are also a process's on RC,
 * for its memory windows; a kernel consumer has them on UC and XRC too.
 */
bool softhca_kopcode_valid(enum ib_qp_type qp_type, u8 opcode)
{
	switch (opcode) {
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
	case IB_WR_SEND_WITH_INV:
		return qp_type == IB_QPT_RC || qp_type == IB_QPT_UC ||
		       qp_type == IB_QPT_XRC_INI;
	default:
		return false;
	}
}

/* A local operation: no data, no SGE, nothing inline. */
bool softhca_opcode_local(u8 opcode)
{
	return opcode == IB_WR_LOCAL_INV || opcode == IB_WR_REG_MR ||
	       opcode == IB_UVERBS_WR_BIND_MW;
}

static bool softhca_opcode_inline_ok(u8 opcode)
{
	return opcode == IB_UVERBS_WR_SEND ||
	       opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
	       opcode == IB_UVERBS_WR_SEND_WITH_INV ||
	       opcode == IB_UVERBS_WR_RDMA_WRITE ||
	       opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
}

static int softhca_sge_total(const struct softhca_sge *sge, u32 n,
			     u64 *total_len)
{
	u64 total = 0;
	u32 i;

	/* n <= 255 and each length < 2^32: the sum cannot overflow a u64. */
	for (i = 0; i < n; i++)
		total += sge[i].length;
	if (total > SOFTHCA_MAX_MSG_SIZE)
		return -EMSGSIZE;
	*total_len = total;
	return 0;
}

/**
 * softhca_send_wqe_check - validate the kernel copy of a send WQE
 * @wqe: the copy (@b->stride bytes), never the ring slot itself
 * @b: the queue's bounds
 * @total_len: out, the message length
 *
 * Return: 0, -EINVAL or -EMSGSIZE (see the top of this file).
 */
int softhca_send_wqe_check(const struct softhca_send_wqe *wqe,
			   const struct softhca_wqe_bounds *b, u64 *total_len)
{
	const struct softhca_send_ctrl *c = &wqe->ctrl;
	u64 len;
	int err;

	if (c->reserved || (c->flags & ~SOFTHCA_WQE_F_ALL))
		return -EINVAL;
	if (!softhca_opcode_valid(b->qp_type, c->opcode) &&
	    !(b->kernel && softhca_kopcode_valid(b->qp_type, c->opcode)))
		return -EINVAL;
	if (softhca_opcode_local(c->opcode)) {
		if (c->num_sge || (c->flags & SOFTHCA_WQE_F_INLINE))
			return -EINVAL;
		*total_len = 0;
		return 0;
	}

	if (c->flags & SOFTHCA_WQE_F_INLINE) {
		if (!softhca_opcode_inline_ok(c->opcode) || c->num_sge ||
		    wqe->inline_reserved)
			return -EINVAL;
		if (wqe->inline_len > b->max_inline ||
		    wqe->inline_len > b->stride - SOFTHCA_SEND_WQE_HDR)
			return -EMSGSIZE;
		*total_len = wqe->inline_len;
		return 0;
	}

	if (c->num_sge > b->max_sge ||
	    SOFTHCA_SEND_WQE_HDR + c->num_sge * sizeof(struct softhca_sge) >
	    b->stride)
		return -EINVAL;
	err = softhca_sge_total((const struct softhca_sge *)(wqe + 1),
				c->num_sge, &len);
	if (err)
		return err;
	/* An atomic reads or writes exactly one 8-byte local buffer. */
	if ((c->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	     c->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD) && len != 8)
		return -EMSGSIZE;
	*total_len = len;
	return 0;
}

/**
 * softhca_recv_wqe_check - validate the kernel copy of a receive WQE
 * @wqe: the copy (@b->stride bytes)
 * @b: the queue's bounds (qp_type is not used)
 * @total_len: out, the buffer space the WQE offers
 *
 * Return: 0, -EINVAL or -EMSGSIZE.
 */
int softhca_recv_wqe_check(const struct softhca_recv_wqe *wqe,
			   const struct softhca_wqe_bounds *b, u64 *total_len)
{
	if (wqe->reserved)
		return -EINVAL;
	if (wqe->num_sge > b->max_sge ||
	    sizeof(*wqe) + (u64)wqe->num_sge * sizeof(struct softhca_sge) >
	    b->stride)
		return -EINVAL;
	return softhca_sge_total((const struct softhca_sge *)(wqe + 1),
				 wqe->num_sge, total_len);
}
