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

/* Which kind of object an event is about. */
enum shca_event_obj { SHCA_EV_CQ, SHCA_EV_QP, SHCA_EV_SRQ, SHCA_EV_WQ,
		      SHCA_EV_OTHER };

static enum shca_event_obj shca_event_obj(enum ibv_event_type type)
{
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		return SHCA_EV_CQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return SHCA_EV_QP;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return SHCA_EV_SRQ;
	case IBV_EVENT_WQ_FATAL:
		return SHCA_EV_WQ;
	default:
		return SHCA_EV_OTHER;	/* port or device: nothing to count */
	}
}

SHCA_EXPORT int ibv_get_async_event(struct ibv_context *context,
				    struct ibv_async_event *event)
{
	struct ib_uverbs_async_event_desc ev;
	void *obj;
	ssize_t n;

	n = read(context->async_fd, &ev, sizeof(ev));
	if (n != (ssize_t)sizeof(ev)) {
		if (n >= 0)
			errno = EIO;
		return -1;
	}
	event->event_type = (enum ibv_event_type)ev.event_type;
	obj = (void *)(uintptr_t)ev.element;
	switch (shca_event_obj(event->event_type)) {
	case SHCA_EV_CQ:
		event->element.cq = obj;
		break;
	case SHCA_EV_QP:
		event->element.qp = obj;
		break;
	case SHCA_EV_SRQ:
		event->element.srq = obj;
		break;
	case SHCA_EV_WQ:
		event->element.wq = obj;
		break;
	default:
		event->element.port_num = (int)ev.element;
		break;
	}
	return 0;
}

/* Count one acknowledged event on its object and wake a waiting destroy. */
static void shca_event_acked(pthread_mutex_t *mutex, pthread_cond_t *cond,
			     uint32_t *completed)
{
	pthread_mutex_lock(mutex);
	(*completed)++;
	pthread_cond_broadcast(cond);
	pthread_mutex_unlock(mutex);
}

SHCA_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;

	switch (shca_event_obj(event->event_type)) {
	case SHCA_EV_CQ:
		cq = event->element.cq;
		shca_event_acked(&cq->mutex, &cq->cond,
				 &cq->async_events_completed);
		break;
	case SHCA_EV_QP:
		qp = event->element.qp;
		shca_event_acked(&qp->mutex, &qp->cond, &qp->events_completed);
		break;
	case SHCA_EV_SRQ:
		srq = event->element.srq;
		shca_event_acked(&srq->mutex, &srq->cond,
				 &srq->events_completed);
		break;
	default:
		break;
	}
}
