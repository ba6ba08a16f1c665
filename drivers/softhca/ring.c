// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: ring allocation.
 *
 * A ring a process maps comes from vmalloc_user() (zeroed, and allowed
 * in remap_vmalloc_range()) and is published through the ucontext's
 * mmap entries; from then on the mmap entry owns the memory and frees it
 * when both the object and every mapping of it are gone (ucontext.c).
 * A kernel consumer's ring is plain vzalloc() memory the object owns.
 */
#include <linux/log2.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "softhca.h"

/* Largest ring a single object may have: 64 MiB of slots. */
#define SOFTHCA_RING_MAX_BYTES	(64UL << 20)

/**
 * softhca_ring_alloc - allocate a ring and, for a process, map it
 * @ring: filled in on success, zeroed on failure
 * @udata: the create command's udata (user ring) or NULL (kernel ring)
 * @entries: slots, a power of two
 * @stride: slot size, a power of two
 *
 * Return: 0 or a negative errno.
 */
int softhca_ring_alloc(struct softhca_ring *ring, struct ib_udata *udata,
		       u32 entries, u32 stride)
{
	struct softhca_ucontext *uc;
	struct softhca_mmap_entry *entry;
	size_t size;

	memset(ring, 0, sizeof(*ring));
	if (WARN_ON(!is_power_of_2(entries) || !is_power_of_2(stride)))
		return -EINVAL;
	if ((size_t)entries * stride > SOFTHCA_RING_MAX_BYTES)
		return -EINVAL;
	size = PAGE_ALIGN(SOFTHCA_RING_HDR_SIZE + (size_t)entries * stride);

	ring->buf = udata ? vmalloc_user(size) : vzalloc(size);
	if (!ring->buf)
		return -ENOMEM;
	ring->size = size;
	ring->entries = entries;
	ring->stride = stride;
	if (!udata)
		return 0;

	uc = rdma_udata_to_drv_context(udata, struct softhca_ucontext, ibuc);
	entry = softhca_mmap_insert(uc, ring->buf, size, true,
				    &ring->mmap_offset);
	if (IS_ERR(entry)) {
		vfree(ring->buf);
		memset(ring, 0, sizeof(*ring));
		return PTR_ERR(entry);
	}
	ring->mentry = &entry->rdma_entry;
	return 0;
}

/*
 * Let go of a ring (an absent, zeroed ring is fine too).  A user ring's
 * memory outlives this call for as long as the process keeps it mapped;
 * the kernel never touches it again.
 */
void softhca_ring_free(struct softhca_ring *ring)
{
	if (ring->mentry)
		rdma_user_mmap_entry_remove(ring->mentry);
	else
		vfree(ring->buf);
	memset(ring, 0, sizeof(*ring));
}
