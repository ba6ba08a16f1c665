// SPDX-License-Identifier: GPL-2.0-only
/*
 * port_events DEV DOWN_CMD UP_CMD: open DEV, run DOWN_CMD and expect an
 * IBV_EVENT_PORT_ERR for port 1 on the context's async fd, then run
 * UP_CMD and expect IBV_EVENT_PORT_ACTIVE.  The events are read in the
 * raw ib_uverbs format (struct ib_uverbs_async_event_desc).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "util.h"

static int expect_event(int fd, unsigned int want)
{
	struct ib_uverbs_async_event_desc ev;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (;;) {
		if (poll(&p, 1, 5000) != 1) {
			fprintf(stderr, "no event %u within 5 s\n", want);
			return 1;
		}
		if (read(fd, &ev, sizeof(ev)) != sizeof(ev)) {
			perror("read");
			return 1;
		}
		printf("# event %u element %llu\n", ev.event_type,
		       (unsigned long long)ev.element);
		if (ev.event_type == want)
			return ev.element == 1 ? 0 : 1;
	}
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	int ret;

	if (argc != 4)
		return 2;
	ctx = open_by_name(argv[1]);
	if (!ctx) {
		perror("open");
		return 1;
	}
	if (system(argv[2]))
		return 1;
	ret = expect_event(ctx->async_fd, IBV_EVENT_PORT_ERR);
	if (system(argv[3]))
		return 1;
	ret |= expect_event(ctx->async_fd, IBV_EVENT_PORT_ACTIVE);
	ibv_close_device(ctx);
	return ret;
}
