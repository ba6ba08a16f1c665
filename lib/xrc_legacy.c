// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: the legacy XRC calls (include/infiniband/softhca_xrc.h),
 * built on the modern XRC verbs only.
 *
 * A receive QP lives in the kernel, owned by its domain, for as long as
 * some process holds a handle on it (ib_uverbs: the handle from
 * CREATE_QP with an XRCD, or one from OPEN_QP).  A process's
 * registration is exactly one such handle, kept here per domain object
 * and QP number: create registers the creator, reg opens a handle,
 * unreg destroys it, and a process that exits loses its handles with its
 * file descriptor, which counts as unregistering.  Registering twice is
 * one registration (as the legacy kernel did); unregistering a QP the
 * process is not registered for is EINVAL.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/softhca_xrc.h>

#include "internal.h"

struct shca_xrc_reg {
	struct shca_xrc_reg *next;
	uint32_t qpn;
	struct ibv_qp *qp;		/* this process's handle */
};

struct shca_xrc_domain {
	struct ibv_xrc_domain pub;	/* first: the legacy pointer */
	struct ibv_xrcd *xrcd;
	pthread_mutex_t lock;		/* protects regs */
	struct shca_xrc_reg *regs;
};

static struct shca_xrc_domain *to_dom(struct ibv_xrc_domain *d)
{
	return (struct shca_xrc_domain *)d;
}

/* The registration for @qpn, or NULL.  Called with dom->lock held. */
static struct shca_xrc_reg **shca_xrc_find(struct shca_xrc_domain *dom,
					   uint32_t qpn)
{
	struct shca_xrc_reg **r;

	for (r = &dom->regs; *r; r = &(*r)->next)
		if ((*r)->qpn == qpn)
			return r;
	return NULL;
}

static int shca_xrc_add(struct shca_xrc_domain *dom, struct ibv_qp *qp)
{
	struct shca_xrc_reg *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return ENOMEM;
	reg->qpn = qp->qp_num;
	reg->qp = qp;
	reg->next = dom->regs;
	dom->regs = reg;
	return 0;
}

static struct ibv_qp *shca_xrc_open(struct shca_xrc_domain *dom, uint32_t qpn)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = qpn,
		.xrcd = dom->xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};

	return ibv_open_qp(dom->pub.context, &oa);
}

SHCA_EXPORT struct ibv_xrc_domain *
ibv_open_xrc_domain(struct ibv_context *context, int fd, int oflag)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflag,
	};
	struct shca_xrc_domain *dom;

	dom = calloc(1, sizeof(*dom));
	if (!dom) {
		errno = ENOMEM;
		return NULL;
	}
	dom->xrcd = ibv_open_xrcd(context, &xa);
	if (!dom->xrcd) {
		free(dom);
		return NULL;	/* errno from ibv_open_xrcd */
	}
	pthread_mutex_init(&dom->lock, NULL);
	dom->pub.context = context;
	dom->pub.handle = to_shca_xrcd(dom->xrcd)->handle;
	return &dom->pub;
}

/*
 * EBUSY while the process still holds SRQs or registrations in the
 * domain (the kernel refuses; nothing is released behind its back).
 */
SHCA_EXPORT int ibv_close_xrc_domain(struct ibv_xrc_domain *d)
{
	struct shca_xrc_domain *dom = to_dom(d);
	int err;

	pthread_mutex_lock(&dom->lock);
	err = dom->regs ? EBUSY : ibv_close_xrcd(dom->xrcd);
	pthread_mutex_unlock(&dom->lock);
	if (err)
		return err;
	pthread_mutex_destroy(&dom->lock);
	free(dom);
	return 0;
}

SHCA_EXPORT struct ibv_srq *
ibv_create_xrc_srq(struct ibv_pd *pd, struct ibv_xrc_domain *xrc_domain,
		   struct ibv_cq *xrc_cq, struct ibv_srq_init_attr *srq_init_attr)
{
	struct ibv_srq_init_attr_ex ex = {
		.srq_context = srq_init_attr->srq_context,
		.attr = srq_init_attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.cq = xrc_cq,
	};
	struct ibv_srq *srq;

	if (!xrc_domain || !xrc_cq) {
		errno = EINVAL;
		return NULL;
	}
	ex.xrcd = to_dom(xrc_domain)->xrcd;
	srq = ibv_create_srq_ex(pd->context, &ex);
	if (srq)
		srq_init_attr->attr = ex.attr;
	return srq;
}

/* Only xrc_domain is read; every other member "is being ignored". */
SHCA_EXPORT int ibv_create_xrc_rcv_qp(struct ibv_qp_init_attr *init_attr,
				      uint32_t *xrc_rcv_qpn)
{
	struct shca_xrc_domain *dom;
	struct ibv_qp_init_attr_ex ex = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_qp *qp;
	int err;

	if (!init_attr || !init_attr->xrc_domain || !xrc_rcv_qpn)
		return EINVAL;
	dom = to_dom(init_attr->xrc_domain);
	ex.xrcd = dom->xrcd;
	qp = ibv_create_qp_ex(dom->pub.context, &ex);
	if (!qp)
		return errno;
	pthread_mutex_lock(&dom->lock);
	err = shca_xrc_add(dom, qp);
	pthread_mutex_unlock(&dom->lock);
	if (err) {
		ibv_destroy_qp(qp);
		return err;
	}
	*xrc_rcv_qpn = qp->qp_num;
	return 0;
}

SHCA_EXPORT int ibv_reg_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
				   uint32_t xrc_qp_num)
{
	struct shca_xrc_domain *dom = to_dom(xrc_domain);
	struct ibv_qp *qp;
	int err = 0;

	pthread_mutex_lock(&dom->lock);
	if (!shca_xrc_find(dom, xrc_qp_num)) {
		qp = shca_xrc_open(dom, xrc_qp_num);
		err = qp ? shca_xrc_add(dom, qp) : errno;
		if (qp && err)
			ibv_destroy_qp(qp);
	}
	pthread_mutex_unlock(&dom->lock);
	return err;
}

SHCA_EXPORT int ibv_unreg_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
				     uint32_t xrc_qp_num)
{
	struct shca_xrc_domain *dom = to_dom(xrc_domain);
	struct shca_xrc_reg **r, *reg;
	int err = EINVAL;

	pthread_mutex_lock(&dom->lock);
	r = shca_xrc_find(dom, xrc_qp_num);
	if (r) {
		reg = *r;
		err = ibv_destroy_qp(reg->qp);
		if (!err) {
			*r = reg->next;
			free(reg);
		}
	}
	pthread_mutex_unlock(&dom->lock);
	return err;
}

/*
 * A handle for one call: the registration's, or one opened for the call
 * (*@temp set: the caller destroys it).  Called with dom->lock held.
 */
static struct ibv_qp *shca_xrc_handle(struct shca_xrc_domain *dom,
				      uint32_t qpn, struct ibv_qp **temp)
{
	struct shca_xrc_reg **r = shca_xrc_find(dom, qpn);

	*temp = NULL;
	if (r)
		return (*r)->qp;
	*temp = shca_xrc_open(dom, qpn);
	return *temp;
}

SHCA_EXPORT int ibv_modify_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
				      uint32_t xrc_qp_num,
				      struct ibv_qp_attr *attr, int attr_mask)
{
	struct shca_xrc_domain *dom = to_dom(xrc_domain);
	struct ibv_qp *qp, *temp;
	int err;

	pthread_mutex_lock(&dom->lock);
	qp = shca_xrc_handle(dom, xrc_qp_num, &temp);
	err = qp ? ibv_modify_qp(qp, attr, attr_mask) : errno;
	if (temp)
		ibv_destroy_qp(temp);
	pthread_mutex_unlock(&dom->lock);
	return err;
}

SHCA_EXPORT int ibv_query_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
				     uint32_t xrc_qp_num,
				     struct ibv_qp_attr *attr, int attr_mask,
				     struct ibv_qp_init_attr *init_attr)
{
	struct shca_xrc_domain *dom = to_dom(xrc_domain);
	struct ibv_qp *qp, *temp;
	int err;

	pthread_mutex_lock(&dom->lock);
	qp = shca_xrc_handle(dom, xrc_qp_num, &temp);
	err = qp ? ibv_query_qp(qp, attr, attr_mask, init_attr) : errno;
	if (!err) {
		init_attr->qp_context = NULL;	/* the handle's, not the QP's */
		init_attr->xrc_domain = xrc_domain;
	}
	if (temp)
		ibv_destroy_qp(temp);
	pthread_mutex_unlock(&dom->lock);
	return err;
}
