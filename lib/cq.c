// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: completion queues and completion channels.
 *
 * The kernel allocates the CQ ring; this file maps it and hands out the
 * ibv_cq.  Consuming CQEs (ibv_poll_cq and the ibv_cq_ex iterator) is in
 * cq_poll.c.  Completion events arrive on the channel's fd as uverbs
 * comp_event_desc records carrying the user_handle given at creation,
 * which is the ibv_cq pointer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

SHCA_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct ib_uverbs_create_comp_channel req = {};
	struct ib_uverbs_create_comp_channel_resp resp;
	struct ibv_comp_channel *ch;
	int err;

	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	err = shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err) {
		free(ch);
		errno = err;
		return NULL;
	}
	ch->context = context;
	ch->fd = (int)resp.fd;
	ch->refcnt = 0;
	return ch;
}

SHCA_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	int refs;

	pthread_mutex_lock(&channel->context->mutex);
	refs = channel->refcnt;
	pthread_mutex_unlock(&channel->context->mutex);
	/* ibv_create_comp_channel(3): CQs still attached make this fail. */
	if (refs)
		return EBUSY;
	close(channel->fd);
	free(channel);
	return 0;
}

static int shca_cq_check_attr(struct ibv_context *context,
			      const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->cqe < 1 || attr->cqe > INT32_MAX)
		return EINVAL;
	if (attr->comp_vector >= (uint32_t)context->num_comp_vectors)
		return EINVAL;
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && attr->flags)
		return EOPNOTSUPP;
	/* Only what a plain ibv_wc carries can be read. */
	if (attr->wc_flags & ~(uint64_t)(IBV_WC_STANDARD_FLAGS))
		return EOPNOTSUPP;
	return 0;
}

static struct shca_cq *shca_create_cq_common(struct ibv_context *context,
					     struct ibv_cq_init_attr_ex *attr)
{
	struct ib_uverbs_create_cq req = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct softhca_create_cq_resp drv;
	} resp;
	struct ib_uverbs_destroy_cq dreq = {};
	struct ib_uverbs_destroy_cq_resp dresp;
	struct ibv_cq *ibcq;
	struct shca_cq *cq;
	int err;

	err = shca_cq_check_attr(context, attr);
	if (err) {
		errno = err;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ibcq = ibv_cq_ex_to_cq(&cq->cqx);

	req.user_handle = (uintptr_t)ibcq;
	req.cqe = attr->cqe;
	req.comp_vector = attr->comp_vector;
	req.comp_channel = attr->channel ? attr->channel->fd : -1;
	err = shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_CREATE_CQ,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err)
		goto err_free;

	cq->view = calloc(1, sizeof(*cq->view));
	err = cq->view ? shca_ring_map(&cq->view->ring, context->cmd_fd,
				       resp.drv.ring_offset, resp.drv.ring_size,
				       resp.drv.entries,
				       sizeof(struct softhca_cqe)) : ENOMEM;
	if (!err && !cq->view->ring.entries)
		err = EPROTO;
	if (err)
		goto err_destroy;
	cq->hdr = cq->view->ring.map;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_init(&ibcq->mutex, NULL);
	pthread_cond_init(&ibcq->cond, NULL);
	ibcq->context = context;
	ibcq->channel = attr->channel;
	ibcq->cq_context = attr->cq_context;
	ibcq->handle = resp.core.cq_handle;
	ibcq->cqe = (int)resp.core.cqe;
	cq->wc_flags = attr->wc_flags;
	shca_cq_ex_init(cq);
	if (attr->channel) {
		pthread_mutex_lock(&context->mutex);
		attr->channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	return cq;

err_destroy:
	if (cq->view)
		shca_ring_unmap(&cq->view->ring);
	free(cq->view);
	dreq.cq_handle = resp.core.cq_handle;
	shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_DESTROY_CQ, &dreq,
		 sizeof(dreq), &dresp, sizeof(dresp));
err_free:
	free(cq);
	errno = err;
	return NULL;
}

SHCA_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
					 void *cq_context,
					 struct ibv_comp_channel *channel,
					 int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = (uint32_t)cqe,
		.cq_context = cq_context,
		.channel = channel,
		.comp_vector = (uint32_t)comp_vector,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct shca_cq *cq;

	if (cqe < 1 || comp_vector < 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = shca_create_cq_common(context, &attr);
	return cq ? ibv_cq_ex_to_cq(&cq->cqx) : NULL;
}

struct ibv_cq_ex *shca_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct shca_cq *cq = shca_create_cq_common(context, attr);

	return cq ? &cq->cqx : NULL;
}

SHCA_EXPORT int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct ib_uverbs_resize_cq req = {
		.cq_handle = ibcq->handle,
		.cqe = (uint32_t)cqe,
	};
	struct {
		struct ib_uverbs_resize_cq_resp core;
		struct softhca_resize_cq_resp drv;
	} resp;
	struct shca_cq_view *view;
	int err, tries;

	if (cqe < 1)
		return EINVAL;
	view = calloc(1, sizeof(*view));
	if (!view)
		return ENOMEM;
	/*
	 * Hold the CQ while the kernel moves unconsumed CQEs to the new
	 * ring: publish what we consumed first, so it moves only the rest.
	 */
	pthread_spin_lock(&cq->lock);
	__atomic_store_n(&cq->hdr->cons, cq->cons, __ATOMIC_RELEASE);
	err = shca_cmd(ibcq->context->cmd_fd, IB_USER_VERBS_CMD_RESIZE_CQ,
		       &req, sizeof(req), &resp, sizeof(resp));
	/*
	 * The kernel writes the new ring from now on: the library must
	 * follow, or completions land where nobody reads them.  A mapping
	 * refused for want of memory is tried again (one failed allocation,
	 * as selftests/failnth.c injects, left the CQ silent before); one
	 * that keeps failing leaves the CQ unreadable: EIO.
	 */
	for (tries = 0; !err && tries < 8; tries++) {
		err = shca_ring_map(&view->ring, ibcq->context->cmd_fd,
				    resp.drv.ring_offset, resp.drv.ring_size,
				    resp.drv.entries,
				    sizeof(struct softhca_cqe));
		if (err != ENOMEM && err != EAGAIN)
			break;
		err = tries < 7 ? 0 : EIO;
	}
	if (!err) {
		/* The old mapping stays for unlocked readers (cq_poll.c). */
		view->older = cq->view;
		cq->hdr = view->ring.map;
		__atomic_store_n(&cq->cons, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&cq->view, view, __ATOMIC_RELEASE);
		ibcq->cqe = (int)resp.core.cqe;
		view = NULL;
	}
	pthread_spin_unlock(&cq->lock);
	free(view);
	return err;
}

SHCA_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct ib_uverbs_destroy_cq req = { .cq_handle = ibcq->handle };
	struct ib_uverbs_destroy_cq_resp resp;
	struct ibv_context *context = ibcq->context;
	int err, raw;

	raw = shca_cmd(context->cmd_fd, IB_USER_VERBS_CMD_DESTROY_CQ,
		       &req, sizeof(req), &resp, sizeof(resp));
	err = shca_destroy_err(raw);
	if (err)
		return err;
	if (raw) {
		/* Device removed: no event counts came back to wait for. */
		resp.comp_events_reported = ibcq->comp_events_completed;
		resp.async_events_reported = ibcq->async_events_completed;
	}
	if (ibcq->channel) {
		pthread_mutex_lock(&context->mutex);
		ibcq->channel->refcnt--;
		pthread_mutex_unlock(&context->mutex);
	}
	/* ibv_destroy_cq(3): events must have been acknowledged. */
	pthread_mutex_lock(&ibcq->mutex);
	while (ibcq->comp_events_completed != resp.comp_events_reported ||
	       ibcq->async_events_completed != resp.async_events_reported)
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	pthread_mutex_unlock(&ibcq->mutex);

	while (cq->view) {
		struct shca_cq_view *older = cq->view->older;

		shca_ring_unmap(&cq->view->ring);
		free(cq->view);
		cq->view = older;
	}
	pthread_spin_destroy(&cq->lock);
	pthread_cond_destroy(&ibcq->cond);
	pthread_mutex_destroy(&ibcq->mutex);
	free(cq);
	return 0;
}

/*
 * ibv_req_notify_cq(3) without a system call: a request in the CQ's arm
 * word (uapi: seq << 2 | type).  The full barrier orders the store of
 * the request before the caller's next poll; it pairs with the kernel's
 * barrier between writing a CQE and reading the word, so a CQE that
 * lands while we arm is either seen by that poll or raises the event.
 */
int shca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	uint32_t seq;

	pthread_spin_lock(&cq->lock);
	seq = ++cq->arm_seq & 0x3fffffff;
	if (!seq)
		seq = cq->arm_seq = 1;	/* 0 means "never armed" */
	__atomic_store_n(&cq->hdr->arm, seq << 2 |
			 (solicited_only ? SOFTHCA_CQ_ARM_SOLICITED :
					   SOFTHCA_CQ_ARM_NEXT),
			 __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pthread_spin_unlock(&cq->lock);
	return 0;
}

SHCA_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel,
				 struct ibv_cq **cq, void **cq_context)
{
	struct ib_uverbs_comp_event_desc ev;
	ssize_t n;

	/* A sleeper: its next sends run inline in the doorbell (qp_post.c). */
	__atomic_store_n(&shca_inline_posts, SHCA_INLINE_AFTER_EVENT,
			 __ATOMIC_RELAXED);
	n = read(channel->fd, &ev, sizeof(ev));
	if (n != (ssize_t)sizeof(ev)) {
		if (n >= 0)
			errno = EIO;
		return -1;
	}
	*cq = (struct ibv_cq *)(uintptr_t)ev.cq_handle;
	*cq_context = (*cq)->cq_context;
	return 0;
}

SHCA_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
