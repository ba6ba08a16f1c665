// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: mapping the kernel's rings.
 *
 * Every ring is one shared mapping of the uverbs fd at the offset the
 * create response gave; slots start SOFTHCA_RING_HDR_SIZE bytes in.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

int shca_ring_map(struct shca_ring *r, int fd, uint64_t offset, size_t len,
		  uint32_t entries, uint32_t stride)
{
	memset(r, 0, sizeof(*r));
	if (!entries)
		return 0;
	/* Never trust sizes blindly: the slots must fit in what we map. */
	if ((entries & (entries - 1)) || (stride & (stride - 1)) ||
	    (uint64_t)entries * stride + SOFTHCA_RING_HDR_SIZE > len)
		return EPROTO;
	r->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      (off_t)offset);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return errno;
	}
	r->map_len = len;
	r->slots = (uint8_t *)r->map + SOFTHCA_RING_HDR_SIZE;
	r->entries = entries;
	r->stride = stride;
	return 0;
}

void shca_ring_unmap(struct shca_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	memset(r, 0, sizeof(*r));
}

int shca_wq_init(struct shca_wq *wq, int fd, uint64_t offset, size_t len,
		 uint32_t entries, uint32_t stride)
{
	int err;

	memset(wq, 0, sizeof(*wq));
	err = shca_ring_map(&wq->ring, fd, offset, len, entries, stride);
	if (err)
		return err;
	wq->hdr = wq->ring.map;
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

void shca_wq_destroy(struct shca_wq *wq)
{
	if (wq->ring.map)
		pthread_spin_destroy(&wq->lock);
	shca_ring_unmap(&wq->ring);
}

void shca_wait_events(pthread_mutex_t *mutex, pthread_cond_t *cond,
		      const uint32_t *acked, uint32_t reported)
{
	pthread_mutex_lock(mutex);
	while (*acked != reported)
		pthread_cond_wait(cond, mutex);
	pthread_mutex_unlock(mutex);
}
