// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: memory access for the engine.
 *
 * An MR of a process keeps an array of its pinned pages (built once at
 * registration) so that any byte is found in O(1): the byte at iova a
 * lives at offset (a - iova + first-page offset) of the MR's pages.  A
 * kernel DMA MR covers the kernel address space: its "iova" is the
 * address (ib_core's virtual DMA for a software device).  A fast-reg MR
 * (fastreg.c) maps its iova the same way onto the kernel addresses of
 * the pages its last REG_MR registered.
 *
 * The engine finds an MR by key with softhca_mr_get(), which checks the
 * whole key (index and key byte), the PD, the access rights and the
 * range, and takes a reference that dereg_mr waits for.  Any failure is
 * one answer, NULL: the caller turns it into the protection or access
 * error of its side.  The engine looks keys up through one-entry caches
 * it keeps from one WQE to the next (softhca_mr_get_cached(), req.c).
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <rdma/ib_umem.h>
#include <asm/unaligned.h>

#include "engine.h"

int softhca_mr_pages_init(struct softhca_mr *mr)
{
	struct sg_page_iter piter;
	size_t n = ib_umem_num_pages(mr->umem), i = 0;

	mr->pages = kvmalloc_array(n, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &piter, 0) {
		if (WARN_ON_ONCE(i == n))
			break;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	mr->npages = i;
	mr->page_off = ib_umem_offset(mr->umem);
	return 0;
}

void softhca_mr_pages_free(struct softhca_mr *mr)
{
	kvfree(mr->pages);
	mr->pages = NULL;
}

/* Does @mr (fields fixed while it is published) allow this access? */
static bool softhca_mr_allows(const struct softhca_mr *mr, struct ib_pd *pd,
			      int access, u64 addr, u64 len)
{
	u64 end;

	return mr->ibmr.pd == pd && (mr->access & access) == access &&
	       !check_add_overflow(addr, len, &end) && addr >= mr->iova &&
	       end - mr->iova <= mr->length;
}

/**
 * softhca_mr_get - find and reference the MR a key names
 * @sdev: the device the key belongs to
 * @key: lkey or rkey (they are equal)
 * @pd: the PD the MR must belong to
 * @access: IB_ACCESS_* bits the MR must grant (0: local read)
 * @addr: start of the range that must lie inside the MR
 * @len: its length
 *
 * Context: any; takes the MR xarray's lock briefly.
 * Return: the referenced MR, or NULL.
 */
struct softhca_mr *softhca_mr_get(struct softhca_dev *sdev, u32 key,
				  struct ib_pd *pd, int access, u64 addr,
				  u64 len)
{
	struct softhca_mr *mr;

	/*
	 * The key and the fields it covers are checked under the xarray's
	 * lock, which a fast-reg MR's REG_MR and invalidation take to change
	 * them (fastreg.c): the check sees one registration, whole.
	 */
	xa_lock_bh(&sdev->mrs);
	mr = xa_load(&sdev->mrs, key >> 8);
	if (mr && (READ_ONCE(mr->key) != key ||
		   !softhca_mr_allows(mr, pd, access, addr, len) ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	xa_unlock_bh(&sdev->mrs);
	return mr;
}

/**
 * softhca_mr_get_cached - softhca_mr_get() through a one-entry cache
 * @cache: NULL or an MR of @sdev the cache holds a reference on; a
 *	successful lookup of another key replaces it
 * @sdev: the device the key belongs to
 * @key: lkey or rkey
 * @pd: the PD the MR must belong to
 * @access: IB_ACCESS_* bits the MR must grant (0: local read)
 * @addr: start of the range that must lie inside the MR
 * @len: its length
 *
 * The engine looks up the same few keys for every WQE; a hit costs a
 * reference instead of the xarray lock and walk.  The checks are the
 * same: the whole key, PD, rights and range of an MR whose fields never
 * change while it is published.  An MR whose dereg has begun (@dead) is
 * not used again; its cached reference goes when the cache's owner next
 * looks (req.c), and dereg_mr waits for that, as for any reference, so
 * nothing touches the memory once dereg_mr has returned.
 *
 * Context: any.  The cache belongs to one QP, under its SQ lock.
 */
struct softhca_mr *softhca_mr_get_cached(struct softhca_mr **cache,
					 struct softhca_dev *sdev, u32 key,
					 struct ib_pd *pd, int access,
					 u64 addr, u64 len)
{
	struct softhca_mr *mr = *cache;

	/*
	 * The acquire pairs with REG_MR's release of @key (fastreg.c): the
	 * fields checked after it are those of the registration the key
	 * names.  An invalidated fast-reg MR has @key 0 and misses here;
	 * its xarray lookup below fails the same way.
	 */
	if (mr && smp_load_acquire(&mr->key) == key && !READ_ONCE(mr->dead)) {
		if (!softhca_mr_allows(mr, pd, access, addr, len))
			return NULL;
		refcount_inc(&mr->ref);
		return mr;
	}
	mr = softhca_mr_get(sdev, key, pd, access, addr, len);
	if (mr) {
		softhca_mr_cache_drop(cache);
		refcount_inc(&mr->ref);
		*cache = mr;
	}
	return mr;
}

/* Let go of a cached MR. */
void softhca_mr_cache_drop(struct softhca_mr **cache)
{
	if (*cache) {
		softhca_mr_put(*cache);
		*cache = NULL;
	}
}

void softhca_mr_put(struct softhca_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/**
 * softhca_segs_resolve - check the keys of a WQE's SGEs
 * @sdev: the device the keys must be valid on
 * @pd: the PD they must belong to
 * @sge: the SGEs (from the kernel copy of a WQE)
 * @n: how many
 * @access: what the memory must allow (IB_ACCESS_LOCAL_WRITE to be
 *	written, 0 to be read)
 * @segs: out, one referenced segment per non-empty SGE
 * @nseg: out, how many
 * @cache: the caller's MR cache on @sdev (softhca_mr_get_cached())
 *
 * Zero-length SGEs carry no data and their keys are not checked.
 *
 * Return: 0, or -EACCES with no reference held.
 */
int softhca_segs_resolve(struct softhca_dev *sdev, struct ib_pd *pd,
			 const struct softhca_sge *sge, u32 n, int access,
			 struct softhca_seg *segs, u32 *nseg,
			 struct softhca_mr **cache)
{
	u32 i, k = 0;

	for (i = 0; i < n; i++) {
		if (!sge[i].length)
			continue;
		segs[k].mr = softhca_mr_get_cached(cache, sdev, sge[i].lkey,
						   pd, access, sge[i].addr,
						   sge[i].length);
		if (!segs[k].mr) {
			softhca_segs_put(segs, k);
			return -EACCES;
		}
		segs[k].addr = sge[i].addr;
		segs[k].len = sge[i].length;
		k++;
	}
	*nseg = k;
	return 0;
}

void softhca_segs_put(struct softhca_seg *segs, u32 nseg)
{
	u32 i;

	for (i = 0; i < nseg; i++)
		if (segs[i].mr)
			softhca_mr_put(segs[i].mr);
}

void softhca_cursor_init(struct softhca_cursor *c, struct softhca_seg *segs,
			 u32 nseg)
{
	c->seg = segs;
	c->nseg = nseg;
	c->idx = 0;
	c->off = 0;
}

/* Move forward @len bytes; the caller knows they exist. */
void softhca_cursor_skip(struct softhca_cursor *c, u64 len)
{
	while (len && c->idx < c->nseg) {
		u32 step = min_t(u64, len, c->seg[c->idx].len - c->off);

		c->off += step;
		len -= step;
		if (c->off == c->seg[c->idx].len) {
			c->idx++;
			c->off = 0;
		}
	}
}

/*
 * Map the byte at @off of @s; *@room is how many bytes from there are
 * contiguous in the kernel mapping (to the end of the page or segment).
 */
static void *softhca_seg_map(const struct softhca_seg *s, u32 off, u32 *room)
{
	const struct softhca_mr *mr = s->mr;
	u64 o;

	if (mr && mr->fr)
		return softhca_fr_map(mr, s->addr + off, s->len - off, room);
	if (!mr || !mr->umem) {
		*room = s->len - off;
		return (void *)(uintptr_t)(s->addr + off);
	}
	o = s->addr + off - mr->iova + mr->page_off;
	*room = min_t(u64, s->len - off, PAGE_SIZE - offset_in_page(o));
	return kmap_local_page(mr->pages[o >> PAGE_SHIFT]) + offset_in_page(o);
}

static void softhca_seg_unmap(const struct softhca_seg *s, void *p)
{
	if (s->mr && s->mr->umem)
		kunmap_local(p);
}

/*
 * A short copy in words: most messages of a latency-bound exchange are
 * tens of bytes, where memcpy()'s "rep movsb" costs more to start than
 * to move them (and an emulator runs it a byte at a time, wqe.c).
 */
#define SOFTHCA_SHORT_COPY	256

static void softhca_copy_short(u8 *d, const u8 *s, u32 n)
{
	for (; n >= 8; n -= 8, d += 8, s += 8)
		put_unaligned(get_unaligned((const u64 *)s), (u64 *)d);
	if (n >= 4) {
		put_unaligned(get_unaligned((const u32 *)s), (u32 *)d);
		d += 4;
		s += 4;
		n -= 4;
	}
	while (n--)
		*d++ = *s++;
}

/**
 * softhca_copy - copy bytes between two positions
 * @dst: where they go
 * @src: where they come from
 * @len: how many
 *
 * Both cursors advance.  The caller checked that both hold @len more
 * bytes; the segments were range-checked against their MRs, so every
 * page index is inside the MR's page array.
 */
void softhca_copy(struct softhca_cursor *dst, struct softhca_cursor *src,
		  u32 len)
{
	while (len && dst->idx < dst->nseg && src->idx < src->nseg) {
		struct softhca_seg *ds = &dst->seg[dst->idx];
		struct softhca_seg *ss = &src->seg[src->idx];
		u32 droom, sroom, n;
		void *d, *s;

		s = softhca_seg_map(ss, src->off, &sroom);
		d = softhca_seg_map(ds, dst->off, &droom);
		n = min3(len, droom, sroom);
		if (n <= SOFTHCA_SHORT_COPY)
			softhca_copy_short(d, s, n);
		else
			memcpy(d, s, n);
		softhca_seg_unmap(ds, d);
		softhca_seg_unmap(ss, s);
		softhca_cursor_skip(dst, n);
		softhca_cursor_skip(src, n);
		len -= n;
	}
}

/* Copy @len bytes of kernel memory (a GRH, an atomic's result) to @dst. */
void softhca_copy_from_kernel(struct softhca_cursor *dst, const void *p,
			      u32 len)
{
	struct softhca_seg seg = { .addr = (uintptr_t)p, .len = len };
	struct softhca_cursor src;

	softhca_cursor_init(&src, &seg, 1);
	softhca_copy(dst, &src, len);
}

/* Copy @len bytes from @src (which advances) to kernel memory at @p. */
void softhca_copy_to_kernel(void *p, struct softhca_cursor *src, u32 len)
{
	struct softhca_seg seg = { .addr = (uintptr_t)p, .len = len };
	struct softhca_cursor dst;

	softhca_cursor_init(&dst, &seg, 1);
	softhca_copy(&dst, src, len);
}

/**
 * softhca_mem_atomic - an 8-byte atomic on an MR
 * @mr: the referenced MR (range and access already checked)
 * @addr: the iova, 8-byte aligned (so it does not cross a page)
 * @opcode: IB_UVERBS_WR_ATOMIC_CMP_AND_SWP or _FETCH_AND_ADD
 * @compare_add: the value compared (CAS) or added (FAA)
 * @swap: the value stored when the comparison matches (CAS)
 * @orig: out, the value before the operation
 *
 * The operation is a CPU atomic on the page itself, so it is atomic
 * against other softhca atomics and against the CPU's own atomics on
 * the same memory, with no lock of softhca's.
 *
 * Return: 0, or -EINVAL for a misaligned address.
 */
int softhca_mem_atomic(struct softhca_mr *mr, u64 addr, u8 opcode,
		       u64 compare_add, u64 swap, u64 *orig)
{
	struct softhca_seg s = { .mr = mr, .addr = addr, .len = 8 };
	atomic64_t *v;
	u32 room;

	if (addr & 7)
		return -EINVAL;
	v = softhca_seg_map(&s, 0, &room);
	if (opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP)
		*orig = atomic64_cmpxchg(v, compare_add, swap);
	else
		*orig = atomic64_fetch_add(compare_add, v);
	softhca_seg_unmap(&s, v);
	return 0;
}
