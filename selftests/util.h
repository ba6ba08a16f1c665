/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by softhca's C selftests. */
#ifndef SOFTHCA_SELFTEST_UTIL_H
#define SOFTHCA_SELFTEST_UTIL_H

#include <string.h>
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

#endif
