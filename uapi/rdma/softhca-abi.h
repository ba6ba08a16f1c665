/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * softhca user/kernel ABI.
 *
 * Everything a process exchanges with the softhca driver beyond the
 * generic ib_uverbs uapi lives here: the driver-private "udata" that
 * follows each uverbs command and response, and the layout of every
 * page the driver maps into a process.  Documentation/abi.rst describes
 * each field, who writes it and which barrier pairs with which.
 *
 * Rules for this file:
 *  - fixed-width __u/__aligned types only; every struct is a multiple of
 *    8 bytes and has no implicit padding;
 *  - a field is never reused: a change of meaning bumps
 *    SOFTHCA_UVERBS_ABI_VERSION, which the kernel checks at
 *    alloc_ucontext so a mismatched library fails with EPROTO instead of
 *    misreading memory.
 */
#ifndef SOFTHCA_ABI_USER_H
#define SOFTHCA_ABI_USER_H

#include <linux/types.h>

/*
 * Reported in /sys/class/infiniband_verbs/uverbsN/abi_version and
 * carried in every alloc_ucontext request.
 */
#define SOFTHCA_UVERBS_ABI_VERSION	4

/* Value of /sys/class/infiniband/<dev>/hca_type for a softhca device. */
#define SOFTHCA_HCA_TYPE		"softhca"

/*
 * alloc_ucontext (IB_USER_VERBS_CMD_GET_CONTEXT) driver data.
 *
 * The library must send the request; a context opened without it (for
 * example by a provider that does not know softhca) is refused with
 * EPROTO, as is any other abi_version.
 */
struct softhca_alloc_ucontext_req {
	__u32 abi_version;	/* SOFTHCA_UVERBS_ABI_VERSION */
	__u32 reserved;		/* must be zero */
};

struct softhca_alloc_ucontext_resp {
	__u32 abi_version;	/* what the kernel speaks */
	__u32 page_size;	/* PAGE_SIZE: ring sizes are multiples of it */
	__aligned_u64 ctx_page_offset;	/* mmap offset of the context page */
	__aligned_u64 capability_flags;	/* SOFTHCA_CAP_* */
};

/* No optional capability exists yet; bits are added, never reassigned. */
#define SOFTHCA_CAP_NONE		0ULL

/*
 * The context page: one read-only page per ucontext, mapped by the
 * library at ctx_page_offset with PROT_READ.  Only the kernel writes it.
 * It proves the mmap path end to end and is where per-context shared
 * state that the kernel publishes will live.
 */
#define SOFTHCA_CTX_PAGE_MAGIC		0x73686361u	/* "shca" */

struct softhca_ctx_page {
	__u32 magic;		/* SOFTHCA_CTX_PAGE_MAGIC, written once */
	__u32 abi_version;	/* SOFTHCA_UVERBS_ABI_VERSION */
	__u32 dev_index;	/* ib_device index, for diagnostics */
	__u32 reserved;
};

/*
 * ---------------------------------------------------------------------
 * Shared rings
 * ---------------------------------------------------------------------
 *
 * Every queue (SQ, RQ, SRQ, CQ) is one kernel buffer the library maps
 * read-write at the mmap offset the create response names.  A mapping
 * starts with a 256-byte header of two 128-byte blocks, each written by
 * exactly one side (128 bytes so that the adjacent-line prefetcher does
 * not drag the other side's line along), followed by power-of-two slots
 * at offset SOFTHCA_RING_HDR_SIZE.  Indices are free-running 32-bit
 * counters; slot = index & (entries - 1).
 *
 * The kernel treats every byte of a mapping as hostile: it reads an
 * index once, checks it against its own private copy of the other
 * index, copies a slot once into kernel memory and validates the copy.
 * A process that corrupts its ring only hurts its own queue: the QP
 * goes to the error state with an async event (IB_EVENT_QP_FATAL).
 */
#define SOFTHCA_RING_HDR_SIZE		256
#define SOFTHCA_RING_BLOCK		128

/*
 * Work queue header (SQ, RQ, SRQ): user space produces, the kernel
 * consumes.
 *
 *  prod   user-written.  The library fills slots, then publishes prod
 *         with a store-release; the kernel reads it with a load-acquire
 *         (pairs with that release), so slot contents are visible first.
 *         RQ/SRQ: the kernel reads it again only when it has taken every
 *         WQE below the value it read last.
 *  cons   kernel-written.  SQ: WQEs retired (completed, in order, also
 *         the unsignaled ones): slots below cons may be reused.  RQ and
 *         SRQ: WQEs the kernel has taken (copied) for a message.  The
 *         kernel stores it with a release after it is done with the
 *         slot; the library loads it with an acquire.  The queue is full
 *         when prod - cons == entries.  The library need not read it
 *         for every post: a value read earlier (with acquire) frees at
 *         least the slots below it, so it reads cons again only when
 *         that value says the queue is full.
 *  flags  kernel-written, SOFTHCA_WQ_F_*, on a cache line of its own:
 *         cons changes with every WQE, flags almost never, and the
 *         library reads flags after every post, a read that would fetch
 *         the line the kernel has just written if cons were on it.
 *         NEED_WAKEUP: the poller is going to sleep, or lends the
 *         queue to the doorbell while its CPU is contended; after publishing
 *         prod the library issues a full barrier, reads flags and, only
 *         if NEED_WAKEUP is set, rings the doorbell (the post_send
 *         command).  The poller sets
 *         the flag, issues a full barrier and re-reads prod before
 *         sleeping: one of the two sides always sees the other.
 *         ERROR: the queue's QP is in the error state (informational:
 *         the library still posts, the kernel flushes).  A receive
 *         queue never gets NEED_WAKEUP: arriving messages take its
 *         WQEs, so post_recv rings only for ERROR.  A new or reset send
 *         queue starts with NEED_WAKEUP set (no poller watches it).
 *  hint   user-written, SOFTHCA_WQ_HINT_*, send queues only.  INLINE:
 *         the producer sleeps on completion events, so it rings the
 *         doorbell for each post and wants the work run inline in that
 *         system call only: the kernel then hands the queue to a poller
 *         only for a backlog the doorbell left.  Read with READ_ONCE at
 *         each doorbell; any value is safe (it only picks who runs the
 *         work), so a hostile value costs its writer CPU and nothing
 *         else.
 */
struct softhca_wq_hdr {
	__u32 prod;
	__u32 hint;
	__u32 user_reserved[SOFTHCA_RING_BLOCK / 4 - 2];
	__u32 cons;
	__u32 kern_reserved0[SOFTHCA_RING_BLOCK / 8 - 1];
	__u32 flags;		/* offset SOFTHCA_RING_BLOCK * 3 / 2 */
	__u32 kern_reserved[SOFTHCA_RING_BLOCK / 8 - 1];
};

#define SOFTHCA_WQ_F_NEED_WAKEUP	0x1
#define SOFTHCA_WQ_F_ERROR		0x2

/* hint (user-written, a scheduling hint only; zero in older libraries) */
#define SOFTHCA_WQ_HINT_INLINE		0x1

/*
 * Send WQE: a 48-byte header (control + one opcode segment, same
 * offsets for every opcode) followed by the data area: num_sge
 * scatter/gather entries, or inline_len bytes of inline data when
 * SOFTHCA_WQE_F_INLINE is set (then num_sge is zero; inline data is
 * allowed for SEND and RDMA WRITE opcodes, not for READ or atomics).
 * The slot size (sq_stride) is the smallest power of two >= 64 that holds the header plus the QP's
 * max_send_sge SGEs or max_inline_data bytes; a one-SGE WQE of any
 * opcode fits in 64 bytes.
 */
struct softhca_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

struct softhca_send_ctrl {
	__aligned_u64 wr_id;
	__u8 opcode;		/* enum ib_uverbs_wr_opcode (IBV_WR_*) */
	__u8 flags;		/* SOFTHCA_WQE_F_* */
	__u8 num_sge;		/* SGEs in the data area (not inline) */
	__u8 reserved;		/* must be zero */
	__u32 imm_data;		/* immediate (network order) or invalidate rkey */
};

/*
 * The 48-byte header.  Fields an opcode does not use must be zero only
 * where noted; the kernel ignores the others.
 *
 * Memory windows (RC only; the WQE has no data area, num_sge 0, no
 * INLINE flag):
 *   IBV_WR_BIND_MW   rkey         the window's new key: its index bits
 *                                 (31..8) are the window's, the low byte
 *                                 the consumer's choice (ibv_inc_rkey)
 *                    remote_addr  start of the range, in the MR's
 *                                 addresses (windows are not zero-based)
 *                    compare_add  length of the range; 0 unbinds (type 1)
 *                    swap         low 32 bits: the MR's lkey (any value
 *                                 for an unbind)
 *                    xrc_srqn     the window's rights: IBV_ACCESS_REMOTE_
 *                                 READ, _WRITE, _ATOMIC, nothing else
 *                    The window is found by the key's index; the kernel
 *                    checks every field of its copy (type, PD, free
 *                    state, MR rights and range) and completes a bad
 *                    bind with IBV_WC_MW_BIND_ERR, the QP in error.
 *                    ibv_bind_mw (type 1) posts the same WQE.
 *   IBV_WR_LOCAL_INV ctrl.imm_data: the key to invalidate (host order),
 *                    a type 2 window's current key
 *   IBV_WR_SEND_WITH_INV  a SEND; ctrl.imm_data: the rkey (host order)
 *                    the receiver invalidates before it completes the
 *                    receive with SOFTHCA_CQE_F_WITH_INV
 */
struct softhca_send_wqe {
	struct softhca_send_ctrl ctrl;
	union {
		__aligned_u64 remote_addr;	/* RDMA and atomic opcodes */
		struct {
			__u32 ah_num;		/* UD: from create_ah */
			__u32 remote_qpn;	/* UD: destination QP */
		} ud;
	};
	union {
		__u32 rkey;			/* RDMA and atomic opcodes */
		__u32 remote_qkey;		/* UD */
	};
	__u32 xrc_srqn;			/* XRC: destination SRQ number */
	union {
		__aligned_u64 compare_add;	/* atomics */
		struct {
			__u32 inline_len;	/* SOFTHCA_WQE_F_INLINE */
			__u32 inline_reserved;	/* must be zero then */
		};
	};
	__aligned_u64 swap;		/* ATOMIC_CMP_AND_SWP */
	/* followed by the data area */
};

#define SOFTHCA_SEND_WQE_HDR		48
#define SOFTHCA_SEND_MIN_STRIDE		64

#define SOFTHCA_WQE_F_SIGNALED		0x1
#define SOFTHCA_WQE_F_SOLICITED		0x2
#define SOFTHCA_WQE_F_FENCE		0x4
#define SOFTHCA_WQE_F_INLINE		0x8
#define SOFTHCA_WQE_F_ALL		0x0f

/*
 * Receive WQE (RQ and SRQ): 16-byte header, then num_sge SGEs.  The slot
 * size (rq_stride / srq_stride) is the smallest power of two >= 32 that
 * holds max_recv_sge SGEs.
 */
struct softhca_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;		/* must be zero */
	/* followed by num_sge struct softhca_sge */
};

#define SOFTHCA_RECV_MIN_STRIDE		32

/*
 * CQ header: the kernel produces completions, user space consumes them.
 *
 *  cons   user-written, stored with a release by each poll that
 *         consumed completions.  The kernel reads it (acquire) to find
 *         free slots, again only when the value it read last says the
 *         CQ is full; a lower value than the truth only makes the kernel
 *         report an overrun early.
 *  arm    user-written: req_notify_cq without a system call.  The
 *         library stores (seq << 2) | type, type SOFTHCA_CQ_ARM_SOLICITED
 *         or SOFTHCA_CQ_ARM_NEXT, seq a request counter it increments
 *         (never 0), then issues a full barrier before polling again.
 *         After writing a CQE the kernel issues a full barrier, reads
 *         arm, and raises a completion event if the request matches and
 *         its seq differs from the last seq that fired (so a request
 *         fires once: stale requests do nothing).  The two barriers
 *         pair: either the library's next poll sees the CQE, or the
 *         kernel sees the request.
 *  flags  kernel-written, SOFTHCA_CQ_F_*.  OVERRUN: a completion found
 *         the CQ full; the CQ is in error and IB_EVENT_CQ_ERR was sent.
 */
struct softhca_cq_hdr {
	__u32 cons;
	__u32 arm;
	__u32 user_reserved[SOFTHCA_RING_BLOCK / 4 - 2];
	__u32 flags;
	__u32 kern_reserved[SOFTHCA_RING_BLOCK / 4 - 1];
};

#define SOFTHCA_CQ_F_OVERRUN		0x1

/*
 * A CQE's wc_flags: the kernel's IB_WC_* values, which are not the
 * ibv_wc_flags a library reports (IBV_WC_WITH_INV is 0x8 there).
 */
#define SOFTHCA_CQE_F_GRH		0x1
#define SOFTHCA_CQE_F_WITH_IMM		0x2
#define SOFTHCA_CQE_F_WITH_INV		0x4	/* imm_data: the rkey */

#define SOFTHCA_CQ_ARM_SOLICITED	1
#define SOFTHCA_CQ_ARM_NEXT		2

/*
 * A completion, 64 bytes.  The kernel writes every field, then stores
 * owner with a release; the library loads owner with an acquire (pairs
 * with that release) and only then reads the rest.  owner is the pass
 * parity plus one: a CQE at index i is valid when owner ==
 * ((i / entries) & 1) + 1, so a zeroed ring holds no valid CQE and a
 * stale CQE from the previous pass never looks new.  The consumer never
 * reads a producer index.
 */
struct softhca_cqe {
	__aligned_u64 wr_id;
	__u8 status;		/* enum ib_uverbs_wc_status */
	__u8 opcode;		/* enum ib_uverbs_wc_opcode */
	__u8 wc_flags;		/* SOFTHCA_CQE_F_* */
	__u8 owner;		/* see above; written last */
	__u32 vendor_err;
	__u32 byte_len;
	__u32 imm_data;		/* network order; or the invalidated rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u16 slid;
	__u16 pkey_index;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 network_hdr_type;
	__u8 reserved0;
	__u32 reserved[6];
};

/*
 * ---------------------------------------------------------------------
 * Create commands' driver data
 * ---------------------------------------------------------------------
 * Requests carry nothing yet; the kernel refuses any non-zero request
 * bytes with EINVAL so that future fields can be added safely.
 */
struct softhca_create_cq_resp {
	__aligned_u64 ring_offset;	/* mmap offset of the CQ ring */
	__u32 ring_size;		/* bytes to map */
	__u32 entries;			/* slots, a power of two */
};

/* resize_cq answers with a new ring; the old one is retired. */
struct softhca_resize_cq_resp {
	__aligned_u64 ring_offset;
	__u32 ring_size;
	__u32 entries;
	__u32 copied;			/* CQEs carried over, at index 0.. */
	__u32 reserved;
};

struct softhca_create_qp_resp {
	__aligned_u64 sq_offset;	/* 0 if the QP has no send queue */
	__aligned_u64 rq_offset;	/* 0 if it has none (SRQ, XRC) */
	__u32 sq_size;			/* bytes to map */
	__u32 rq_size;
	__u32 sq_entries;
	__u32 rq_entries;
	__u32 sq_stride;
	__u32 rq_stride;
	__u32 qpn;
	__u32 reserved;
};

struct softhca_create_srq_resp {
	__aligned_u64 ring_offset;
	__u32 ring_size;
	__u32 entries;
	__u32 stride;
	__u32 srqn;
};

struct softhca_create_ah_resp {
	__u32 ah_num;			/* goes into softhca_send_seg.ud.ah_num */
	__u32 reserved;
};

#endif /* SOFTHCA_ABI_USER_H */
