// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: device discovery, open and close.
 *
 * A softhca device is a uverbs character device whose ib_device carries
 * hca_type "softhca" in sysfs.  Device structs are reference counted: a
 * list holds one reference per entry and every open context one more, so
 * ibv_free_device_list() may run while contexts stay open, as the
 * ibv_get_device_list(3) man page allows.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <endian.h>

#include "internal.h"

#define UVERBS_CLASS "/sys/class/infiniband_verbs"
#define IB_CLASS "/sys/class/infiniband"

static void shca_device_get(struct shca_device *dev)
{
	__atomic_add_fetch(&dev->refcnt, 1, __ATOMIC_RELAXED);
}

void shca_device_put(struct shca_device *dev)
{
	if (__atomic_sub_fetch(&dev->refcnt, 1, __ATOMIC_ACQ_REL) == 0)
		free(dev);
}

/* "0011:2233:4455:6677" -> big-endian 64-bit GUID */
static int parse_guid(const char *s, __be64 *guid)
{
	unsigned int p[4];

	if (sscanf(s, "%4x:%4x:%4x:%4x", &p[0], &p[1], &p[2], &p[3]) != 4)
		return -EINVAL;
	*guid = htobe64(((uint64_t)p[0] << 48) | ((uint64_t)p[1] << 32) |
			((uint64_t)p[2] << 16) | p[3]);
	return 0;
}

static struct shca_device *probe_uverbs(const char *uverbs)
{
	char path[IBV_SYSFS_PATH_MAX + 64], ibname[IBV_SYSFS_NAME_MAX];
	char buf[64];
	struct shca_device *dev;
	long abi;

	snprintf(path, sizeof(path), UVERBS_CLASS "/%s/ibdev", uverbs);
	if (shca_sysfs_read(path, ibname, sizeof(ibname)) <= 0)
		return NULL;
	snprintf(path, sizeof(path), IB_CLASS "/%s/hca_type", ibname);
	if (shca_sysfs_read(path, buf, sizeof(buf)) <= 0 ||
	    strcmp(buf, SOFTHCA_HCA_TYPE) != 0)
		return NULL;
	snprintf(path, sizeof(path), UVERBS_CLASS "/%s/abi_version", uverbs);
	if (shca_sysfs_read_int(path, &abi))
		return NULL;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->refcnt = 1;
	dev->abi_version = (int)abi;
	dev->ibdev.node_type = IBV_NODE_CA;
	dev->ibdev.transport_type = IBV_TRANSPORT_IB;
	snprintf(dev->ibdev.name, sizeof(dev->ibdev.name), "%s", ibname);
	snprintf(dev->ibdev.dev_name, sizeof(dev->ibdev.dev_name), "%s", uverbs);
	snprintf(dev->ibdev.dev_path, sizeof(dev->ibdev.dev_path),
		 UVERBS_CLASS "/%s", uverbs);
	snprintf(dev->ibdev.ibdev_path, sizeof(dev->ibdev.ibdev_path),
		 IB_CLASS "/%s", ibname);
	snprintf(path, sizeof(path), IB_CLASS "/%s/node_guid", ibname);
	if (shca_sysfs_read(path, buf, sizeof(buf)) > 0)
		parse_guid(buf, &dev->guid);
	return dev;
}

static int cmp_dev(const void *a, const void *b)
{
	const struct ibv_device *const *da = a, *const *db = b;

	return strcmp((*da)->name, (*db)->name);
}

SHCA_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list = NULL, **grown;
	struct shca_device *dev;
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	list = calloc(1, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	dir = opendir(UVERBS_CLASS);
	if (dir) {
		while ((de = readdir(dir))) {
			if (strncmp(de->d_name, "uverbs", 6) != 0)
				continue;
			dev = probe_uverbs(de->d_name);
			if (!dev)
				continue;
			grown = realloc(list, (n + 2) * sizeof(*list));
			if (!grown) {
				free(dev);
				closedir(dir);
				list[n] = NULL;
				ibv_free_device_list(list);
				errno = ENOMEM;
				return NULL;
			}
			list = grown;
			list[n++] = &dev->ibdev;
		}
		closedir(dir);
	}
	list[n] = NULL;
	qsort(list, n, sizeof(*list), cmp_dev);
	if (num_devices)
		*num_devices = (int)n;
	return list;
}

SHCA_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	struct ibv_device **p;

	if (!list)
		return;
	for (p = list; *p; p++)
		shca_device_put(to_shca_device(*p));
	free(list);
}

SHCA_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

SHCA_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	return to_shca_device(device)->guid;
}

static int shca_get_context(struct shca_context *ctx, int fd)
{
	struct {
		struct ib_uverbs_get_context core;
		struct softhca_alloc_ucontext_req drv;
	} req = { .drv = { .abi_version = SOFTHCA_UVERBS_ABI_VERSION } };
	struct {
		struct ib_uverbs_get_context_resp core;
		struct softhca_alloc_ucontext_resp drv;
	} resp;
	const struct softhca_ctx_page *page;
	void *map;
	int err;

	err = shca_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &req, sizeof(req),
		       &resp, sizeof(resp));
	if (err)
		return err;

	ctx->vctx.context.async_fd = (int)resp.core.async_fd;
	ctx->vctx.context.num_comp_vectors = (int)resp.core.num_comp_vectors;
	if (resp.drv.abi_version != SOFTHCA_UVERBS_ABI_VERSION)
		return EPROTO;

	ctx->ctx_page_len = resp.drv.page_size;
	map = mmap(NULL, ctx->ctx_page_len, PROT_READ, MAP_SHARED, fd,
		   (off_t)resp.drv.ctx_page_offset);
	if (map == MAP_FAILED)
		return errno;
	page = map;
	if (page->magic != SOFTHCA_CTX_PAGE_MAGIC ||
	    page->abi_version != SOFTHCA_UVERBS_ABI_VERSION) {
		munmap(map, ctx->ctx_page_len);
		return EPROTO;
	}
	ctx->ctx_page = map;
	return 0;
}

SHCA_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct shca_device *dev = to_shca_device(device);
	char path[IBV_SYSFS_NAME_MAX + 32];
	struct shca_context *ctx;
	int fd, err;

	if (dev->abi_version != SOFTHCA_UVERBS_ABI_VERSION) {
		errno = EPROTO;
		return NULL;
	}
	snprintf(path, sizeof(path), "/dev/infiniband/%s", device->dev_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	ctx->vctx.context.async_fd = -1;
	err = shca_get_context(ctx, fd);
	if (err) {
		if (ctx->vctx.context.async_fd >= 0)
			close(ctx->vctx.context.async_fd);
		close(fd);
		free(ctx);
		errno = err;
		return NULL;
	}

	ctx->vctx.sz = sizeof(ctx->vctx);
	ctx->vctx.query_port = shca_query_port_ex;
	ctx->vctx.query_device_ex = shca_query_device_ex;
	ctx->vctx.create_cq_ex = shca_create_cq_ex;
	ctx->vctx.create_qp_ex = shca_create_qp_ex;
	ctx->vctx.open_qp = shca_open_qp;
	ctx->vctx.create_srq_ex = shca_create_srq_ex;
	ctx->vctx.get_srq_num = shca_get_srq_num;
	ctx->vctx.open_xrcd = shca_open_xrcd;
	ctx->vctx.close_xrcd = shca_close_xrcd;
	/* The data path: ring accesses, no system call (cq_poll.c, qp_post.c). */
	ctx->vctx.context.ops.poll_cq = shca_poll_cq;
	ctx->vctx.context.ops.req_notify_cq = shca_req_notify_cq;
	ctx->vctx.context.ops.post_send = shca_post_send;
	ctx->vctx.context.ops.post_recv = shca_post_recv;
	ctx->vctx.context.ops.post_srq_recv = shca_post_srq_recv;
	ctx->vctx.context.ops.alloc_mw = shca_alloc_mw;
	ctx->vctx.context.ops.dealloc_mw = shca_dealloc_mw;
	ctx->vctx.context.ops.bind_mw = shca_bind_mw;
	ctx->vctx.context.device = device;
	ctx->vctx.context.cmd_fd = fd;
	ctx->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);
	shca_device_get(dev);
	return &ctx->vctx.context;
}

SHCA_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct shca_context *ctx = to_shca_ctx(context);
	struct shca_device *dev = to_shca_device(context->device);

	munmap((void *)ctx->ctx_page, ctx->ctx_page_len);
	close(context->async_fd);
	/* Closing the command fd destroys every object of the context. */
	close(context->cmd_fd);
	pthread_mutex_destroy(&context->mutex);
	free(ctx);
	shca_device_put(dev);
	return 0;
}
