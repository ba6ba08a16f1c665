// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: the CQ ring consumer (no system call).
 *
 * A CQE at index i is valid when its owner byte equals the pass parity
 * plus one ((i & entries) ? 2 : 1).  The owner byte is loaded with
 * acquire, pairing with the kernel's store-release of it after the
 * other fields, so the fields read afterwards are the new ones.  The
 * consumer index is published with a store-release once per poll call
 * (pairs with the kernel's load-acquire before it reuses a slot).
 *
 * ibv_poll_cq on an empty CQ does not take the CQ's lock: a busy-polling
 * thread spends most calls there, and an atomic lock operation per empty
 * poll is most of their cost.  The unlocked look is safe because it can
 * only err towards taking the lock: cq->cons is advanced only under the
 * lock (with relaxed atomic stores, so the unlocked load is not torn),
 * and a slot behind the true consumer index still carries the owner
 * byte of its pass, so a stale index reads "ready" and the locked path
 * decides.  "Empty" is answered only for a slot the kernel had not
 * written when we looked, which is what an empty CQ is (a poll racing
 * ibv_resize_cq may answer it once for a CQE the resize moved).  The
 * ring is read through cq->view, one pointer to a description that
 * stays mapped until the CQ is destroyed (internal.h).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* The CQE at free-running index @i of @r, if the kernel has written it. */
static const struct softhca_cqe *shca_cqe_at(const struct shca_ring *r,
					     uint32_t i)
{
	const struct softhca_cqe *cqe = shca_slot(r, i);
	uint8_t want = (i & r->entries) ? 2 : 1;

	if (__atomic_load_n(&cqe->owner, __ATOMIC_ACQUIRE) != want)
		return NULL;
	return cqe;
}

/* The next CQE to consume (under the CQ lock). */
static const struct softhca_cqe *shca_cq_peek(struct shca_cq *cq)
{
	return shca_cqe_at(&cq->view->ring, cq->cons);
}

static void shca_cq_advance(struct shca_cq *cq)
{
	__atomic_store_n(&cq->cons, cq->cons + 1, __ATOMIC_RELAXED);
}

static void shca_cq_publish(struct shca_cq *cq)
{
	__atomic_store_n(&cq->hdr->cons, cq->cons, __ATOMIC_RELEASE);
}

/* The CQE's flags are the kernel's (SOFTHCA_CQE_F_*): ibv_wc_flags differ. */
static unsigned int shca_wc_flags(uint8_t f)
{
	return (f & SOFTHCA_CQE_F_GRH ? IBV_WC_GRH : 0) |
	       (f & SOFTHCA_CQE_F_WITH_IMM ? IBV_WC_WITH_IMM : 0) |
	       (f & SOFTHCA_CQE_F_WITH_INV ? IBV_WC_WITH_INV : 0);
}

static void shca_cqe_to_wc(const struct softhca_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = shca_wc_flags(cqe->wc_flags);
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

int shca_poll_cq(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	const struct softhca_cqe *cqe;
	const struct shca_cq_view *v = __atomic_load_n(&cq->view,
						      __ATOMIC_ACQUIRE);
	int n = 0;

	/* Empty: answered without the lock (see the top of this file). */
	if (!shca_cqe_at(&v->ring, __atomic_load_n(&cq->cons, __ATOMIC_RELAXED)))
		return 0;
	pthread_spin_lock(&cq->lock);
	while (n < num && (cqe = shca_cq_peek(cq))) {
		shca_cqe_to_wc(cqe, &wc[n++]);
		shca_cq_advance(cq);
	}
	if (n)
		shca_cq_publish(cq);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/* Make the CQE at cons the ibv_cq_ex's current one, if there is one. */
static int shca_cq_ex_load(struct shca_cq *cq)
{
	cq->cur = shca_cq_peek(cq);
	if (!cq->cur)
		return ENOENT;
	cq->cqx.wr_id = cq->cur->wr_id;
	cq->cqx.status = (enum ibv_wc_status)cq->cur->status;
	return 0;
}

/* ibv_cq_ex: start_poll takes the lock, end_poll drops it. */
static int shca_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct shca_cq *cq = (struct shca_cq *)cqx;
	int err;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	err = shca_cq_ex_load(cq);
	if (err)
		pthread_spin_unlock(&cq->lock);
	return err;
}

static int shca_next_poll(struct ibv_cq_ex *cqx)
{
	struct shca_cq *cq = (struct shca_cq *)cqx;

	shca_cq_advance(cq);
	return shca_cq_ex_load(cq);
}

static void shca_end_poll(struct ibv_cq_ex *cqx)
{
	struct shca_cq *cq = (struct shca_cq *)cqx;

	/* The CQE that start/next_poll returned last is consumed too. */
	if (cq->cur)
		shca_cq_advance(cq);
	cq->cur = NULL;
	shca_cq_publish(cq);
	pthread_spin_unlock(&cq->lock);
}

#define SHCA_CQ_READ(name, type, expr)					\
static type shca_read_##name(struct ibv_cq_ex *cqx)			\
{									\
	const struct softhca_cqe *c = ((struct shca_cq *)cqx)->cur;	\
	return (type)(expr);						\
}

SHCA_CQ_READ(opcode, enum ibv_wc_opcode, c->opcode)
SHCA_CQ_READ(vendor_err, uint32_t, c->vendor_err)
SHCA_CQ_READ(byte_len, uint32_t, c->byte_len)
SHCA_CQ_READ(imm_data, __be32, c->imm_data)
SHCA_CQ_READ(qp_num, uint32_t, c->qp_num)
SHCA_CQ_READ(src_qp, uint32_t, c->src_qp)
SHCA_CQ_READ(wc_flags, unsigned int, shca_wc_flags(c->wc_flags))
SHCA_CQ_READ(slid, uint32_t, c->slid)
SHCA_CQ_READ(sl, uint8_t, c->sl)
SHCA_CQ_READ(dlid_path_bits, uint8_t, c->dlid_path_bits)

void shca_cq_ex_init(struct shca_cq *cq)
{
	struct ibv_cq_ex *x = &cq->cqx;

	x->start_poll = shca_start_poll;
	x->next_poll = shca_next_poll;
	x->end_poll = shca_end_poll;
	x->read_opcode = shca_read_opcode;
	x->read_vendor_err = shca_read_vendor_err;
	x->read_byte_len = shca_read_byte_len;
	x->read_imm_data = shca_read_imm_data;
	x->read_qp_num = shca_read_qp_num;
	x->read_src_qp = shca_read_src_qp;
	x->read_wc_flags = shca_read_wc_flags;
	x->read_slid = shca_read_slid;
	x->read_sl = shca_read_sl;
	x->read_dlid_path_bits = shca_read_dlid_path_bits;
}
