// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: XRC domains.
 *
 * A domain is a name that XRC SRQs and XRC_TGT QPs belong to; it holds
 * no state of its own.  Sharing one between processes by file (OPEN_XRCD
 * with an fd) is done entirely by ib_uverbs, which keeps one ib_xrcd per
 * inode and calls alloc/dealloc for the first open and last close.
 * Domains count against max_pd.
 */
#include <rdma/ib_verbs.h>

#include "softhca.h"

int softhca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibxrcd->device);
	int err;

	err = softhca_check_udata_in(udata);
	if (err)
		return err;
	if (!softhca_count_get(&sdev->num_xrcds, softhca_limits.max_pd))
		return -ENOMEM;
	return 0;
}

int softhca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibxrcd->device)->num_xrcds);
	return 0;
}
