/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: the kernel's view of a shared ring.
 *
 * The layout (header blocks, slot sizes, who writes what) is the ABI in
 * uapi/rdma/softhca-abi.h.  This header holds the index arithmetic the
 * kernel applies to values it reads from a ring.  Those values come from
 * user space and may be anything: every function here takes the
 * kernel's own private index as the trusted reference and reports a
 * user index that cannot be true instead of computing with it.
 */
#ifndef SOFTHCA_RING_H
#define SOFTHCA_RING_H

#include <linux/atomic.h>
#include <linux/types.h>

struct rdma_user_mmap_entry;

/**
 * struct softhca_ring - one ring buffer
 * @buf: header + slots, vmalloc_user() memory for a ring a process maps,
 *	vzalloc() for a kernel consumer's ring
 * @size: bytes of @buf (whole pages)
 * @entries: slots, a power of two (0: the queue does not exist)
 * @stride: bytes per slot, a power of two
 * @mentry: the mmap entry that owns @buf for a user ring, NULL otherwise
 * @mmap_offset: what user space passes to mmap() for this ring
 */
struct softhca_ring {
	void *buf;
	size_t size;
	u32 entries;
	u32 stride;
	struct rdma_user_mmap_entry *mentry;
	u64 mmap_offset;
};

static inline void *softhca_ring_hdr(const struct softhca_ring *ring)
{
	return ring->buf;
}

/*
 * The kernel-written flags word of a work queue header (SOFTHCA_WQ_F_*).
 * Several kernel paths change it (the poller's NEED_WAKEUP, the error
 * path's ERROR), so it is only ever changed with atomic operations.
 */
static inline atomic_t *softhca_wq_flags(const struct softhca_ring *ring)
{
	return (atomic_t *)&((struct softhca_wq_hdr *)ring->buf)->flags;
}

/* The producer's SOFTHCA_WQ_HINT_* (user-written: any value is safe). */
static inline u32 softhca_wq_hint(const struct softhca_ring *ring)
{
	return READ_ONCE(((struct softhca_wq_hdr *)ring->buf)->hint);
}

static inline void *softhca_ring_slot(const struct softhca_ring *ring,
				      u32 index)
{
	return ring->buf + SOFTHCA_RING_HDR_SIZE +
	       (size_t)(index & (ring->entries - 1)) * ring->stride;
}

/**
 * softhca_ring_posted - WQEs a producer has published beyond @cons
 * @prod: the producer index as read from the ring (untrusted)
 * @cons: the kernel's private consumer index (trusted)
 * @entries: ring size
 *
 * Indices are free-running u32s, so the distance prod - cons is
 * meaningful across wrap-around.  A producer can be at most @entries
 * ahead of the consumer; anything else (including a producer index that
 * went backwards) is corruption.
 *
 * Return: the number of WQEs in [cons, prod), or -EINVAL.
 */
static inline int softhca_ring_posted(u32 prod, u32 cons, u32 entries)
{
	u32 n = prod - cons;

	if (n > entries)
		return -EINVAL;
	return n;
}

/**
 * softhca_ring_cq_space - free CQE slots from the kernel's point of view
 * @prod: the kernel's private producer index (trusted)
 * @cons: the consumer index the process published (untrusted)
 * @entries: ring size
 *
 * A consumer index ahead of the producer, or more than @entries behind
 * it, cannot be true; it is treated as "no space" so a lying process
 * overruns its own CQ rather than making the kernel overwrite CQEs it
 * has not consumed.
 *
 * Return: slots the kernel may fill.
 */
static inline u32 softhca_ring_cq_space(u32 prod, u32 cons, u32 entries)
{
	u32 used = prod - cons;

	if (used > entries)
		return 0;
	return entries - used;
}

/*
 * The owner byte a CQE written at @index carries: the pass parity plus
 * one (see the uapi).  @entries is a power of two, so the parity of
 * index / entries is the bit @entries selects.
 */
static inline u8 softhca_cqe_owner(u32 index, u32 entries)
{
	return (index & entries) ? 2 : 1;
}

#endif /* SOFTHCA_RING_H */
