// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: memory regions.  ibv_reg_mr(3) semantics: NULL with errno
 * on failure; ibv_dereg_mr/ibv_rereg_mr return an errno value.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* What ib_uverbs accepts; the kernel refines the verdict. */
#define SHCA_ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			   IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | \
			   IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | \
			   IBV_ACCESS_RELAXED_ORDERING)

SHCA_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					    size_t length, uint64_t iova,
					    unsigned int access)
{
	struct ib_uverbs_reg_mr req = {
		.start = (uintptr_t)addr,
		.length = length,
		.hca_va = iova,
		.pd_handle = pd->handle,
	};
	struct ib_uverbs_reg_mr_resp resp;
	struct shca_mr *smr;
	struct ibv_mr *mr;
	int err;

	/* Optional-range flags are best effort: drop what is unknown. */
	access &= SHCA_ACCESS_KNOWN |
		  (IBV_ACCESS_OPTIONAL_RANGE & IBV_ACCESS_RELAXED_ORDERING);
	req.access_flags = access;
	smr = calloc(1, sizeof(*smr));
	if (!smr) {
		errno = ENOMEM;
		return NULL;
	}
	mr = &smr->ibmr;
	/* After ibv_fork_init(), a child must not share these pages (fork.c). */
	smr->dontfork = !(access & IBV_ACCESS_ON_DEMAND);
	if (smr->dontfork && ibv_dontfork_range(addr, length)) {
		free(smr);
		return NULL;
	}
	err = shca_cmd(pd->context->cmd_fd, IB_USER_VERBS_CMD_REG_MR,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err) {
		if (smr->dontfork)
			ibv_dofork_range(addr, length);
		free(smr);
		errno = err;
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->handle = resp.mr_handle;
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	return mr;
}

/* The exported ABI symbols; verbs.h wraps them in macros of the same name. */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova
SHCA_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr,
				      size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr,
				(unsigned int)access);
}

SHCA_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
					   size_t length, uint64_t iova,
					   int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

SHCA_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					     size_t length, uint64_t iova,
					     int fd, int access)
{
	(void)pd; (void)offset; (void)length; (void)iova; (void)fd;
	(void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

SHCA_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			     void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr req = {
		.mr_handle = mr->handle,
		.flags = (uint32_t)flags,
	};
	struct ib_uverbs_rereg_mr_resp resp;
	struct shca_mr *smr = to_shca_mr(mr);
	int err, new_dontfork;

	/* ibv_rereg_mr(3): these are the flag-related errors. */
	if (flags <= 0 || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		req.start = (uintptr_t)addr;
		req.length = length;
		req.hca_va = (uintptr_t)addr;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		req.pd_handle = pd->handle;
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		req.access_flags = (uint32_t)access;

	/* The new range is kept from a child before the kernel uses it. */
	new_dontfork = smr->dontfork;
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		new_dontfork = !(access & IBV_ACCESS_ON_DEMAND);
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && new_dontfork &&
	    ibv_dontfork_range(addr, length))
		return IBV_REREG_MR_ERR_DONT_FORK_NEW;

	err = shca_cmd(mr->context->cmd_fd, IB_USER_VERBS_CMD_REREG_MR,
		       &req, sizeof(req), &resp, sizeof(resp));
	if (err) {
		if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && new_dontfork)
			ibv_dofork_range(addr, length);
		errno = err;
		/* The kernel changed nothing: the MR is as it was. */
		return IBV_REREG_MR_ERR_CMD;
	}
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		if (smr->dontfork)
			ibv_dofork_range(mr->addr, mr->length);
		mr->addr = addr;
		mr->length = length;
	} else if (new_dontfork != smr->dontfork) {
		/* Access changed to or from on-demand paging. */
		if (new_dontfork)
			ibv_dontfork_range(mr->addr, mr->length);
		else
			ibv_dofork_range(mr->addr, mr->length);
	}
	smr->dontfork = new_dontfork;
	return 0;
}

SHCA_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct ib_uverbs_dereg_mr req = { .mr_handle = mr->handle };
	int err;

	err = shca_cmd_noresp(mr->context->cmd_fd, IB_USER_VERBS_CMD_DEREG_MR,
			      &req, sizeof(req));
	err = shca_destroy_err(err);
	if (err)
		return err;
	if (to_shca_mr(mr)->dontfork)
		ibv_dofork_range(mr->addr, mr->length);
	free(to_shca_mr(mr));
	return 0;
}
