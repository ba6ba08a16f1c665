// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: asynchronous events (ibv_get_async_event(3)).
 *
 * Each event read from the context's async fd names its object by the
 * user_handle given at creation (the ibv_* pointer), or a port number.
 * Acknowledging counts the event on its object; destroying the object
 * waits until every event the kernel reported for it was acknowledged.
 */
#include <errno.h>
#include <unistd.h>

#include "internal.h"

SHCA_EXPORT int ibv_get_async_event(struct ibv_context *context,
				    struct ibv_async_event *event)
{
	struct ib_uverbs_async_event_desc ev;
	ssize_t n;

	n = read(context->async_fd, &ev, sizeof(ev));
	if (n != (ssize_t)sizeof(ev)) {
		if (n >= 0)
			errno = EIO;
		return -1;
	}
	event->event_type = (enum ibv_event_type)ev.event_type;
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR:
		event->element.cq = (struct ibv_cq *)(uintptr_t)ev.element;
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		event->element.qp = (struct ibv_qp *)(uintptr_t)ev.element;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		event->element.srq = (struct ibv_srq *)(uintptr_t)ev.element;
		break;
	case IBV_EVENT_WQ_FATAL:
		event->element.wq = (struct ibv_wq *)(uintptr_t)ev.element;
		break;
	default:
		event->element.port_num = (int)ev.element;
		break;
	}
	return 0;
}

SHCA_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_broadcast(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		return;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_broadcast(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		return;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct ibv_srq *srq = event->element.srq;

		pthread_mutex_lock(&srq->mutex);
		srq->events_completed++;
		pthread_cond_broadcast(&srq->cond);
		pthread_mutex_unlock(&srq->mutex);
		return;
	}
	default:
		return;
	}
}
