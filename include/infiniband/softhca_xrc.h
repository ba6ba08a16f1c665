/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * libsofthca: the legacy XRC API (ibv_open_xrc_domain(3) and friends).
 *
 * Include this header in place of <infiniband/verbs.h> (it includes it).
 * The legacy pages describe a struct ibv_qp_init_attr with a trailing
 * xrc_domain member, which the distribution's header does not have.
 * Here the distribution's struct is declared under the name
 * ibv_qp_init_attr_base and struct ibv_qp_init_attr is that struct plus
 * xrc_domain, same members in the same order, so the legacy struct's
 * prefix is exactly what the library reads.  ibv_create_qp() and
 * ibv_query_qp() take it through inline wrappers.  A program written
 * from the legacy pages therefore compiles with one changed line, the
 * #include.
 *
 * The legacy calls map onto the modern XRC verbs of ib_uverbs:
 *   ibv_open_xrc_domain     ibv_open_xrcd (same file, same domain)
 *   ibv_create_xrc_srq      ibv_create_srq_ex with IBV_SRQT_XRC
 *   ibv_create_xrc_rcv_qp   ibv_create_qp_ex with IBV_QPT_XRC_RECV; the
 *                           handle is this process's registration
 *   ibv_reg_xrc_rcv_qp      ibv_open_qp: one more handle on the QP
 *   ibv_unreg_xrc_rcv_qp    ibv_destroy_qp of this process's handle; the
 *                           kernel destroys the QP with its last handle
 *   ibv_modify/query_xrc_rcv_qp   through this process's handle, or a
 *                           handle opened for the call
 *   IBV_QPT_XRC             IBV_QPT_XRC_SEND
 *   wr.xrc_remote_srq_num   wr.qp_type.xrc.remote_srqn
 * The number of an XRC SRQ (the legacy srq->xrc_srq_num) is read with
 * ibv_get_srq_num(3): the distribution's struct ibv_srq has no such
 * member.
 */
#ifndef SOFTHCA_XRC_H
#define SOFTHCA_XRC_H

#ifdef INFINIBAND_VERBS_H
#error "include <infiniband/softhca_xrc.h> before (or instead of) <infiniband/verbs.h>"
#endif

#define ibv_qp_init_attr ibv_qp_init_attr_base
#include <infiniband/verbs.h>
#undef ibv_qp_init_attr

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An XRC domain as the legacy calls see it. */
struct ibv_xrc_domain {
	struct ibv_context *context;
	uint32_t handle;
};

/* The legacy struct: the distribution's members, then xrc_domain. */
struct ibv_qp_init_attr {
	void *qp_context;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
	struct ibv_xrc_domain *xrc_domain;
};

/* The legacy XRC QP type is the sending side of XRC. */
#define IBV_QPT_XRC IBV_QPT_XRC_SEND

/* The legacy spelling of the destination SRQ in struct ibv_send_wr. */
#define xrc_remote_srq_num qp_type.xrc.remote_srqn

struct ibv_xrc_domain *ibv_open_xrc_domain(struct ibv_context *context,
					   int fd, int oflag);
int ibv_close_xrc_domain(struct ibv_xrc_domain *d);
struct ibv_srq *ibv_create_xrc_srq(struct ibv_pd *pd,
				   struct ibv_xrc_domain *xrc_domain,
				   struct ibv_cq *xrc_cq,
				   struct ibv_srq_init_attr *srq_init_attr);
int ibv_create_xrc_rcv_qp(struct ibv_qp_init_attr *init_attr,
			  uint32_t *xrc_rcv_qpn);
int ibv_modify_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
			  uint32_t xrc_qp_num, struct ibv_qp_attr *attr,
			  int attr_mask);
int ibv_query_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
			 uint32_t xrc_qp_num, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_qp_init_attr *init_attr);
int ibv_reg_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
		       uint32_t xrc_qp_num);
int ibv_unreg_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
			 uint32_t xrc_qp_num);

/*
 * ibv_create_qp(3) and ibv_query_qp(3) with the legacy struct: the
 * library reads and writes only the distribution's members, the prefix
 * of this struct.  xrc_domain is not needed by an IBV_QPT_XRC QP (the
 * sending side belongs to no domain) and is ignored; a query returns it
 * as NULL.
 */
static inline struct ibv_qp *
ibv_create_qp_xrc_legacy(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	return ibv_create_qp(pd, (struct ibv_qp_init_attr_base *)attr);
}

static inline int ibv_query_qp_xrc_legacy(struct ibv_qp *qp,
					  struct ibv_qp_attr *attr,
					  int attr_mask,
					  struct ibv_qp_init_attr *init_attr)
{
	int ret = ibv_query_qp(qp, attr, attr_mask,
			       (struct ibv_qp_init_attr_base *)init_attr);

	if (!ret)
		init_attr->xrc_domain = NULL;
	return ret;
}

#define ibv_create_qp ibv_create_qp_xrc_legacy
#define ibv_query_qp ibv_query_qp_xrc_legacy

#ifdef __cplusplus
}
#endif

#endif /* SOFTHCA_XRC_H */
