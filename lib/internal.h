/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * libsofthca internals.  The public API is the distribution's
 * <infiniband/verbs.h>; nothing in this header is exported.
 *
 * File map: sysfs.c (reading /sys), cmd.c (ib_uverbs write() commands),
 * device.c (discovery, open/close), query.c (device/port/GID queries),
 * pd.c (protection domains).
 */
#ifndef SOFTHCA_LIB_INTERNAL_H
#define SOFTHCA_LIB_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "rdma/softhca-abi.h"

#define SHCA_EXPORT __attribute__((visibility("default")))

struct shca_device {
	struct ibv_device ibdev;	/* handed out to the application */
	int refcnt;			/* list + open contexts, atomics */
	int abi_version;		/* uverbs abi_version from sysfs */
	__be64 guid;
};

struct shca_context {
	struct verbs_context vctx;	/* ibv_context is its last member */
	const volatile struct softhca_ctx_page *ctx_page;
	size_t ctx_page_len;
};

static inline struct shca_device *to_shca_device(struct ibv_device *d)
{
	return (struct shca_device *)d;
}

static inline struct shca_context *to_shca_ctx(struct ibv_context *c)
{
	return (struct shca_context *)((char *)c -
				       offsetof(struct shca_context, vctx.context));
}

/* sysfs.c */
int shca_sysfs_read(const char *path, char *buf, size_t len);
int shca_sysfs_read_int(const char *path, long *val);

/* cmd.c: a legacy ib_uverbs command; @req starts with its response
 * pointer, which this function fills in; @resp is zeroed first.
 * Returns 0 or an errno. */
int shca_cmd(int fd, uint32_t command, void *req, size_t req_len,
	     void *resp, size_t resp_len);
/* A command without a response (the destroy/dealloc family). */
int shca_cmd_noresp(int fd, uint32_t command, const void *req,
		    size_t req_len);

/*
 * A destroy command answered with EIO means the device was removed and
 * the kernel already destroyed the object with it: the user's destroy
 * has nothing left to do and succeeds, so its memory is released.
 */
static inline int shca_destroy_err(int err)
{
	return err == EIO ? 0 : err;
}

/* device.c */
void shca_device_put(struct shca_device *dev);

/* query.c: verbs_context.query_port */
int shca_query_port_ex(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *attr, size_t attr_len);

#endif
