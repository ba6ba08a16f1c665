// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: protection domains.
 *
 * A PD carries no state of its own yet; it is the object every MR, QP,
 * SRQ and AH is checked against.  The per-device count enforces max_pd.
 */
#include <rdma/ib_verbs.h>

#include "softhca.h"

int softhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibpd->device);
	int err;

	/* Nothing is defined for alloc_pd's driver data, in either way. */
	err = softhca_check_udata_in(udata);
	if (err)
		return err;

	if (!softhca_count_get(&sdev->num_pds, softhca_limits.max_pd))
		return -ENOMEM;
	return 0;
}

int softhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->num_pds);
	return 0;
}
