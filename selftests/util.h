/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by softhca's C selftests. */
#ifndef SOFTHCA_SELFTEST_UTIL_H
#define SOFTHCA_SELFTEST_UTIL_H

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

/* Open the device called @name; NULL with errno set when that fails. */
static inline struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	/* The context holds its own reference on the device. */
	ibv_free_device_list(list);
	return ctx;
}

/* Microseconds since *@t0 (CLOCK_MONOTONIC). */
static inline long us_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000L + (t.tv_nsec - t0->tv_nsec) / 1000;
}

/*
 * The next completion on @cq, in *@wc, within @ms milliseconds: 1, 0 when
 * none came, -1 when a verb failed.  @cq needs a completion channel.  It
 * spins 200 us, then sleeps on the channel: the waits of the wire tests
 * are ACK and RNR timers, netem's losses and the peer's turn, and a
 * process spinning through them took a vCPU from the guest's pollers and
 * softirqs, and in make check from the host's other guest.  The CQ is
 * armed again each time round (an armed CQ stays armed), and the poll
 * after the arming finds a completion that came before it and raised no
 * event.
 */
static inline int cq_wait(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	struct pollfd pfd = { .fd = cq->channel->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	struct timespec t0;
	void *ev_ctx;
	long us;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		us = us_since(&t0);
		if (us > ms * 1000L)
			return 0;
		if (us < 200)
			continue;
		if (ibv_req_notify_cq(cq, 0))
			return -1;
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		n = poll(&pfd, 1, (int)(ms - us / 1000) + 1);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0) {
			if (ibv_get_cq_event(cq->channel, &ev_cq, &ev_ctx))
				return -1;
			ibv_ack_cq_events(ev_cq, 1);
		}
	}
}

#endif
