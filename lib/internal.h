/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * libsofthca internals.  The public API is the distribution's
 * <infiniband/verbs.h>; nothing in this header is exported.
 *
 * File map: sysfs.c (reading /sys), cmd.c (ib_uverbs write() commands),
 * device.c (discovery, open/close), query.c (device/port/GID queries),
 * pd.c (protection domains), ring.c (mapping rings), mr.c, cq.c (CQs,
 * comp channels), cq_poll.c (the CQ ring consumer), qp.c, qp_post.c (the
 * SQ/RQ ring producers), srq.c, ah.c, xrcd.c, event.c (async events),
 * strings.c (string helpers), misc.c (GID entries, calls softhca does
 * not support), fork.c (ibv_fork_init, MADV_DONTFORK ranges), marshall.c
 * (copying the kernel's uverbs/SA structs).  lib/dropin/ holds what only
 * the drop-in libibverbs.so.1 has: the provider interface and the
 * IBVERBS_1.0 compatibility symbols.
 */
#ifndef SOFTHCA_LIB_INTERNAL_H
#define SOFTHCA_LIB_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
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

/*
 * Sends still to ring the doorbell because this process sleeps on
 * completion events (set by ibv_get_cq_event, see qp_post.c).  One
 * counter per process, not per context: sleeping is what the process
 * does, and its sends on any context decide whether it sleeps again (a
 * process that waits on one context's channel and sends on another's
 * would otherwise leave those sends to the poller and sleep on every
 * answer).
 */
extern int shca_inline_posts;

/* Posts that run inline after each wait for a completion event. */
#define SHCA_INLINE_AFTER_EVENT 64

/* A mapped ring (ring.c). */
struct shca_ring {
	void *map;
	size_t map_len;
	uint8_t *slots;
	uint32_t entries;		/* power of two, 0: no ring */
	uint32_t stride;
};

/* A work queue the library produces into (SQ, RQ, SRQ). */
struct shca_wq {
	struct shca_ring ring;
	struct softhca_wq_hdr *hdr;
	pthread_spinlock_t lock;
	uint32_t prod;			/* private copy of hdr->prod */
	uint32_t cons;			/* hdr->cons when last read */
	uint32_t hint;			/* last value stored in hdr->hint */
	uint32_t max_sge;
	uint32_t max_inline;
};

/*
 * A CQ's ring: one immutable description per mapping, kept (with its
 * mapping) until the CQ is destroyed, so an unlocked empty-CQ check
 * racing ibv_resize_cq reads a whole, still mapped, old ring.  The
 * current one is cq->view (changed under the CQ lock, stored with
 * release for unlocked readers).
 */
struct shca_cq_view {
	struct shca_ring ring;
	struct shca_cq_view *older;
};

struct shca_cq {
	struct ibv_cq_ex cqx;		/* ibv_cq is its first member */
	struct shca_cq_view *view;	/* the current ring: view->ring */
	struct softhca_cq_hdr *hdr;
	pthread_spinlock_t lock;
	uint32_t cons;			/* private consumer index */
	const struct softhca_cqe *cur;	/* ibv_cq_ex iteration */
	uint64_t wc_flags;		/* what create_cq_ex asked to read */
	uint32_t arm_seq;		/* last request put in hdr->arm */
};

struct shca_qp {
	struct ibv_qp_ex qpx;		/* ibv_qp is its first member */
	struct shca_wq sq;
	struct shca_wq rq;
	int sq_sig_all;
};

struct shca_xrcd {
	struct ibv_xrcd ibxrcd;
	uint32_t handle;
};

struct shca_srq {
	struct ibv_srq ibsrq;
	struct shca_wq rq;
	enum ibv_srq_type type;
	uint32_t srqn;
};

static inline struct shca_xrcd *to_shca_xrcd(struct ibv_xrcd *x)
{
	return (struct shca_xrcd *)x;
}

struct shca_mr {
	struct ibv_mr ibmr;
	int dontfork;			/* its range counted in fork.c */
};

static inline struct shca_mr *to_shca_mr(struct ibv_mr *mr)
{
	return (struct shca_mr *)mr;
}

struct shca_ah {
	struct ibv_ah ibah;
	uint32_t ah_num;
};

static inline struct shca_cq *to_shca_cq(struct ibv_cq *cq)
{
	return (struct shca_cq *)cq;
}

static inline struct shca_qp *to_shca_qp(struct ibv_qp *qp)
{
	return (struct shca_qp *)qp;
}

static inline struct shca_srq *to_shca_srq(struct ibv_srq *srq)
{
	return (struct shca_srq *)srq;
}

/* The first byte of the slot for free-running index @i. */
static inline void *shca_slot(const struct shca_ring *r, uint32_t i)
{
	return r->slots + (size_t)(i & (r->entries - 1)) * r->stride;
}

static inline struct shca_device *to_shca_device(struct ibv_device *d)
{
	return (struct shca_device *)d;
}

static inline struct shca_context *to_shca_ctx(struct ibv_context *c)
{
	return (struct shca_context *)((char *)c -
				       offsetof(struct shca_context, vctx.context));
}

/*
 * Exported libibverbs calls that <infiniband/verbs.h> does not declare:
 * the distribution declares them in headers it no longer installs
 * (driver.h, marshall.h), yet programs and librdmacm call them.
 */
struct ibv_sa_path_rec;
struct ib_user_path_rec;

enum ibv_gid_type_sysfs {		/* as libibverbs numbers them */
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};

/* fork.c */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
/* sysfs.c */
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
/* misc.c */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, enum ibv_gid_type_sysfs *type);
/* marshall.c: uverbs/ib_user_sa structs <-> verbs structs */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src);

/* sysfs.c */
int shca_sysfs_read(const char *path, char *buf, size_t len);
int shca_sysfs_read_int(const char *path, long *val);

/* cmd.c: a legacy ib_uverbs command; @req starts with its response
 * pointer, which this function fills in; @resp is zeroed first.
 * Returns 0 or an errno. */
int shca_cmd(int fd, uint32_t command, void *req, size_t req_len,
	     void *resp, size_t resp_len);
/* An extended command: @req without response pointer, sizes in 8s. */
int shca_cmd_ex(int fd, uint32_t command, const void *req, size_t req_len,
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

/* ring.c */
int shca_ring_map(struct shca_ring *r, int fd, uint64_t offset, size_t len,
		  uint32_t entries, uint32_t stride);
void shca_ring_unmap(struct shca_ring *r);
int shca_wq_init(struct shca_wq *wq, int fd, uint64_t offset, size_t len,
		 uint32_t entries, uint32_t stride);
void shca_wq_destroy(struct shca_wq *wq);

/* Wait until every event the kernel reported for an object was acked. */
void shca_wait_events(pthread_mutex_t *mutex, pthread_cond_t *cond,
		      const uint32_t *acked, uint32_t reported);

/* The ops table entries (ibv_context_ops / verbs_context). */
int shca_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc);
int shca_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* mw.c */
struct ibv_mw *shca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int shca_dealloc_mw(struct ibv_mw *mw);
int shca_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);

int shca_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int shca_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int shca_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
int shca_wq_post_recv(struct shca_wq *wq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
void shca_cq_ex_init(struct shca_cq *cq);
struct ibv_cq_ex *shca_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *shca_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr);
struct ibv_srq *shca_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr);
int shca_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
struct ibv_qp *shca_open_qp(struct ibv_context *context,
			    struct ibv_qp_open_attr *attr);
struct ibv_xrcd *shca_open_xrcd(struct ibv_context *context,
				struct ibv_xrcd_init_attr *attr);
int shca_close_xrcd(struct ibv_xrcd *xrcd);
uint32_t shca_ah_num(struct ibv_ah *ah);

/* query.c: verbs_context.query_port, .query_device_ex */
int shca_query_port_ex(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *attr, size_t attr_len);
int shca_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);

#endif
