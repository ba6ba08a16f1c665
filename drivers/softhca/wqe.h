/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: copy-then-validate of work requests read from a ring.
 *
 * The rule: a WQE is copied out of the shared ring exactly once, into
 * kernel memory, and only that copy is validated and used.  Reading a
 * field twice from the ring would let a racing process change it
 * between the check and the use.
 */
#ifndef SOFTHCA_WQE_H
#define SOFTHCA_WQE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "../../uapi/rdma/softhca-abi.h"

/* Largest message the port advertises (max_msg_sz): 2 GiB. */
#define SOFTHCA_MAX_MSG_SIZE	0x80000000ULL

/*
 * What a queue was created to hold; the bounds a WQE is checked against.
 * @kernel: a kernel consumer's queue (ring in kernel memory), where the
 * kernel-only opcodes are valid too.
 */
struct softhca_wqe_bounds {
	enum ib_qp_type qp_type;
	u32 stride;
	u32 max_sge;
	u32 max_inline;
	bool kernel;
};

/*
 * The kernel-only opcodes (IB_WR_*, fastreg.c) reuse the send WQE's
 * fields:
 *   REG_MR         rkey: the new key; remote_addr: iova; compare_add:
 *                  length; xrc_srqn: IB_ACCESS_* flags; no SGEs
 *   LOCAL_INV      ctrl.imm_data: the key to invalidate; no SGEs
 *   SEND_WITH_INV  a SEND whose ctrl.imm_data is the rkey the receiver
 *                  invalidates
 * BIND_MW, LOCAL_INV and SEND_WITH_INV are also a process's (RC): their
 * layout is in uapi/rdma/softhca-abi.h.
 */

void softhca_wqe_copy(void *dst, const void *slot, u32 stride);
int softhca_send_wqe_check(const struct softhca_send_wqe *wqe,
			   const struct softhca_wqe_bounds *b, u64 *total_len);
int softhca_recv_wqe_check(const struct softhca_recv_wqe *wqe,
			   const struct softhca_wqe_bounds *b, u64 *total_len);
bool softhca_opcode_valid(enum ib_qp_type qp_type, u8 opcode);
bool softhca_kopcode_valid(enum ib_qp_type qp_type, u8 opcode);
bool softhca_opcode_local(u8 opcode);
u32 softhca_send_stride(u32 max_sge, u32 max_inline);
u32 softhca_recv_stride(u32 max_sge);

#endif /* SOFTHCA_WQE_H */
