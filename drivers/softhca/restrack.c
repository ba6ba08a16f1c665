// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: what `rdma resource show ... -dd` adds for softhca objects.
 *
 * ib_core lists every QP, CQ, MR and PD with its generic attributes; the
 * driver's part is the engine's view: queue sizes and consumer indices,
 * where a connected QP's peer is, whether the requester is waiting, a
 * CQ's completions and overrun, an MR's kind and pinned pages.  The
 * values are read without locks (READ_ONCE): a snapshot for a human,
 * never used for a decision.
 */
#include <net/netlink.h>
#include <rdma/restrack.h>

#include "softhca.h"

static int softhca_res_u32s(struct sk_buff *msg, const char * const *names,
			    const u32 *vals, int n)
{
	struct nlattr *table;
	int i;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		if (rdma_nl_put_driver_u32(msg, names[i], vals[i])) {
			nla_nest_cancel(msg, table);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(msg, table);
	return 0;
}

int softhca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	static const char * const names[] = {
		"sq_entries", "sq_cons", "rq_entries", "rq_cons",
		"peer_dev", "req_busy", "req_retry_wait", "kernel",
	};
	struct softhca_qp *qp = to_sqp(ibqp);
	const u32 vals[] = {
		qp->sq.ring.entries, READ_ONCE(qp->sq.cons),
		qp->rq.ring.entries, READ_ONCE(qp->rq.cons),
		READ_ONCE(qp->dest_dev), READ_ONCE(qp->req.busy),
		READ_ONCE(qp->req.retry_wait), !qp->is_user,
	};

	return softhca_res_u32s(msg, names, vals, ARRAY_SIZE(vals));
}

int softhca_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	static const char * const names[] = {
		"entries", "completions", "overrun", "kernel",
	};
	struct softhca_cq *cq = to_scq(ibcq);
	const u32 vals[] = {
		cq->ring.entries, READ_ONCE(cq->prod), READ_ONCE(cq->overrun),
		!cq->ring.mentry,
	};

	return softhca_res_u32s(msg, names, vals, ARRAY_SIZE(vals));
}

int softhca_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	static const char * const names[] = { "dma", "pinned_pages" };
	struct softhca_mr *mr = to_smr(ibmr);
	const u32 vals[] = { !mr->umem, mr->npages };

	return softhca_res_u32s(msg, names, vals, ARRAY_SIZE(vals));
}
