/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: what the requester (req.c) shares with its trains
 * (req_train.c); nothing outside the two uses it.
 */
#ifndef SOFTHCA_REQ_H
#define SOFTHCA_REQ_H

#include "engine.h"

/* What a run leaves to do once sq.lock is dropped. */
struct softhca_req_out {
	bool err;		/* our QP goes to ERR */
	bool fatal;		/* ... with IB_EVENT_QP_FATAL (a corrupt ring) */
	bool drained;		/* SQD reached with nothing in flight */
	int peer_event;		/* the responder's QP goes to ERR */
	struct softhca_dest peer;
	struct softhca_req_cache *cache;	/* lookups kept across steps */
};

/* req.c */
void softhca_req_retire(struct softhca_qp *qp, u8 status,
			struct softhca_req_out *out);
int softhca_req_check(struct softhca_qp *qp, struct softhca_send_wqe *w,
		      u64 *len);
int softhca_req_local(struct softhca_qp *qp, const struct softhca_send_wqe *w,
		      u32 *nseg, struct softhca_mr **cache);
void softhca_req_start(struct softhca_qp *qp);
void softhca_req_msg(struct softhca_qp *qp, const struct softhca_send_wqe *w,
		     const struct softhca_dest *dest, u64 off, u32 len,
		     u64 total, struct softhca_cursor *data,
		     struct softhca_msg *msg);
void softhca_req_rnr(struct softhca_qp *qp, u8 min_rnr_timer,
		     struct softhca_req_out *out);
int softhca_req_resend(struct softhca_qp *qp, struct softhca_req_out *out);
void softhca_req_ack_wait(struct softhca_qp *qp, const struct softhca_dest *dest);

/* Does what is in flight end in a quiet message (wire_rc.c)? */
static inline bool softhca_req_quiet(struct softhca_qp *qp,
				     const struct softhca_dest *dest)
{
	return dest->tp->quiet && dest->tp->quiet(qp);
}

u8 softhca_nak_status(enum softhca_ack ack);

/* req_train.c */
int softhca_req_car_promote(struct softhca_qp *qp);
bool softhca_req_can_lead(u8 opcode);
u32 softhca_req_train_extend(struct softhca_qp *qp, struct softhca_dest *dest,
			     struct softhca_mr **lmr, u32 burst);
int softhca_req_train_advance(struct softhca_qp *qp, struct softhca_req_out *out);
int softhca_req_train_ask(struct softhca_qp *qp, struct softhca_req_out *out);
void softhca_req_probe(struct softhca_qp *qp, struct softhca_dest *dest,
		       struct softhca_mr **lmr);
int softhca_req_train_late(struct softhca_qp *qp, struct softhca_req_out *out);
int softhca_req_train_settle(struct softhca_qp *qp, enum softhca_ack ack,
			     const struct softhca_msg *msg, u64 chunk,
			     struct softhca_req_out *out);
bool softhca_req_ahead(struct softhca_qp *qp, struct softhca_dest *dest,
		       struct softhca_mr **lmr);
void softhca_req_ahead_later(struct softhca_qp *qp,
			     const struct softhca_dest *dest);
u32 softhca_req_ahead_settle(struct softhca_qp *qp, enum softhca_ack ack,
			     struct softhca_msg *msg, u32 chunk);

#endif
