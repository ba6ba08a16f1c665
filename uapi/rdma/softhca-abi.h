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
#define SOFTHCA_UVERBS_ABI_VERSION	1

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

#endif /* SOFTHCA_ABI_USER_H */
