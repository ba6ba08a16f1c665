// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the responder.
 *
 * softhca_resp_deliver() is what a message (or one chunk of it) does to
 * the QP it reaches: checks of the QP's state, peer and type; a receive
 * WQE taken for SEND and RDMA WRITE with immediate; remote key checks
 * for RDMA and atomics; the data placed; the receive completion.  Its
 * answer is the ACK/NAK a RoCE responder would send.
 *
 * Receive WQEs are copied once out of the RQ or SRQ ring into the QP's
 * private resp.wqe and validated there; the ring slot is free as soon as
 * it is copied (the consumer index moves at once).  A SEND that arrives
 * in chunks keeps its receive WQE and offset in resp until the last
 * chunk.  The keys of the WQE's SGEs are checked again for every chunk,
 * so no MR reference outlives a visit.
 *
 * Errors follow the IBA's responder classes.  RC: a missing receive WQE
 * is an RNR NAK; a message longer than the receive buffer is an invalid
 * request (the WQE completes with LOC_LEN_ERR); a bad receive SGE is an
 * operational error (LOC_PROT_ERR); a bad rkey or a QP without the
 * remote right is an access error.  NAKs other than RNR move the
 * responder's QP to ERR too (msg->peer_err carries the async event).
 * UC and UD drop what they cannot take: a consumed WQE completes in
 * error, the QP stays usable and the sender sees success.
 *
 * Locking: the QP's resp.lock around everything (messages from any
 * sender serialise here), the RQ/SRQ lock inside it only to take a WQE,
 * the CQ lock inside that.  Called with the sender's sq.lock held.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "engine.h"
#include "wqe.h"

#define SOFTHCA_GRH_LEN 40

/* IBA table of RNR NAK timer codes, in units of 10 us (code 0: 655.36 ms). */
static const u32 softhca_rnr_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
	12288, 16384, 24576, 32768, 49152,
};

u32 softhca_rnr_timer_ns(u8 min_rnr_timer)
{
	return softhca_rnr_10us[min_rnr_timer & 31] * 10000;
}

static bool softhca_resp_can_receive(enum ib_qp_state s)
{
	return s == IB_QPS_RTR || s == IB_QPS_RTS || s == IB_QPS_SQD ||
	       s == IB_QPS_SQE;
}

static bool softhca_is_ud(enum ib_qp_type t)
{
	return t == IB_QPT_UD || t == IB_QPT_GSI;
}

/* What an unanswerable message means to its sender. */
static enum softhca_ack softhca_resp_drop(struct softhca_msg *msg)
{
	return msg->src->ibqp.qp_type == IB_QPT_RC ? SOFTHCA_NO_PEER :
						      SOFTHCA_ACK;
}

/*
 * A responder error: RC answers with @nak and, with @event, moves the
 * receiving QP to ERR; UC and UD drop the message (the sender sees
 * success).
 */
static enum softhca_ack softhca_resp_nak(struct softhca_qp *qp,
					 struct softhca_msg *msg,
					 enum softhca_ack nak, int event)
{
	if (qp->ibqp.qp_type != IB_QPT_RC)
		return SOFTHCA_ACK;
	if (event)
		msg->peer_err = event;
	return nak;
}

/* The queue a QP takes receive WQEs from. */
static struct softhca_wq *softhca_resp_rq(struct softhca_qp *qp)
{
	return qp->srq ? &qp->srq->rq : &qp->rq;
}

/*
 * Take the next receive WQE into qp->resp.wqe.  Return: 0; -EAGAIN when
 * the queue is empty; -EIO when its producer index is impossible.
 */
static int softhca_resp_take(struct softhca_qp *qp)
{
	struct softhca_wq *rq = softhca_resp_rq(qp);
	struct softhca_wq_hdr *hdr;
	int posted;

	if (!rq->ring.entries)
		return -EAGAIN;
	hdr = softhca_ring_hdr(&rq->ring);
	spin_lock(&rq->lock);
	/* Pairs with the producer's store-release of prod. */
	posted = softhca_ring_posted(smp_load_acquire(&hdr->prod), rq->cons,
				     rq->ring.entries);
	if (posted <= 0) {
		spin_unlock(&rq->lock);
		return posted ? -EIO : -EAGAIN;
	}
	softhca_wqe_copy(qp->resp.wqe, softhca_ring_slot(&rq->ring, rq->cons),
			 rq->ring.stride);
	rq->cons++;
	/* The copy is done: the producer may reuse the slot. */
	smp_store_release(&hdr->cons, rq->cons);
	spin_unlock(&rq->lock);

	qp->resp.stride = rq->ring.stride;
	qp->resp.max_sge = rq->max_sge;
	qp->resp.busy = true;
	qp->resp.offset = 0;
	if (qp->srq)
		softhca_srq_check_limit(qp->srq);
	return 0;
}

/*
 * Take a receive WQE for @msg.  Return: true if taken; otherwise false
 * with the answer in *@ack: RNR (RC) or a drop when the queue is empty;
 * for an impossible producer index the receiving QP is broken whatever
 * its type.
 */
static bool softhca_resp_take_for(struct softhca_qp *qp,
				  struct softhca_msg *msg,
				  enum softhca_ack *ack)
{
	int err = softhca_resp_take(qp);

	if (!err)
		return true;
	if (err == -EAGAIN) {
		*ack = softhca_resp_nak(qp, msg, SOFTHCA_RNR, 0);
	} else {
		msg->peer_err = IB_EVENT_QP_FATAL;
		*ack = SOFTHCA_NAK_OP;
	}
	return false;
}

/* Complete the receive WQE in resp.wqe and forget it. */
static void softhca_resp_complete(struct softhca_qp *qp, u8 status, u8 opcode,
				  u32 byte_len, const struct softhca_msg *msg,
				  u8 wc_flags, u8 hdr_type)
{
	struct softhca_cqe cqe = {
		.wr_id = qp->resp.wqe->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = msg->src->ibqp.qp_num,
		.wc_flags = wc_flags,
		.network_hdr_type = hdr_type,
	};

	if (opcode == IB_WC_RECV_RDMA_WITH_IMM ||
	    msg->opcode == IB_UVERBS_WR_SEND_WITH_IMM) {
		cqe.wc_flags |= IB_WC_WITH_IMM;
		cqe.imm_data = msg->imm;
	}
	qp->resp.busy = false;
	/* An error completion is a solicited event too (IBA 11.4.2.2). */
	softhca_cq_push(to_scq(qp->ibqp.recv_cq), &cqe,
			msg->solicited || status != IB_WC_SUCCESS);
}

/* Check the current receive WQE and resolve its SGEs (referenced). */
static int softhca_resp_segs(struct softhca_qp *qp, u32 *nseg, u64 *cap)
{
	struct softhca_wqe_bounds b = {
		.stride = qp->resp.stride,
		.max_sge = qp->resp.max_sge,
	};
	struct ib_pd *pd = qp->srq ? qp->srq->ibsrq.pd : qp->ibqp.pd;
	int err;

	err = softhca_recv_wqe_check(qp->resp.wqe, &b, cap);
	if (err)
		return err;
	return softhca_segs_resolve(to_sdev(qp->ibqp.device), pd,
				    (const struct softhca_sge *)(qp->resp.wqe + 1),
				    qp->resp.wqe->num_sge, IB_ACCESS_LOCAL_WRITE,
				    qp->resp.segs, nseg);
}

/* The 40-byte GRH of a UD receive: IPv6, or IPv4 in its last 20 bytes. */
static u8 softhca_resp_grh(u8 *grh, const union ib_gid *sgid,
			   const union ib_gid *dgid, u32 len)
{
	memset(grh, 0, SOFTHCA_GRH_LEN);
	if (ipv6_addr_v4mapped((const struct in6_addr *)sgid)) {
		struct iphdr *ip = (struct iphdr *)(grh + 20);

		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->tot_len = htons(20 + 8 + 12 + 8 + len + 4);
		memcpy(&ip->saddr, sgid->raw + 12, 4);
		memcpy(&ip->daddr, dgid->raw + 12, 4);
		ip->check = ip_fast_csum(ip, 5);
		return RDMA_NETWORK_IPV4;
	}
	((struct ipv6hdr *)grh)->version = 6;
	((struct ipv6hdr *)grh)->payload_len = htons(8 + 12 + 8 + len + 4);
	((struct ipv6hdr *)grh)->nexthdr = IPPROTO_UDP;
	((struct ipv6hdr *)grh)->hop_limit = 64;
	memcpy(grh + 8, sgid->raw, 16);
	memcpy(grh + 24, dgid->raw, 16);
	return RDMA_NETWORK_IPV6;
}

/* A SEND chunk into the receive WQE (taken on the first chunk). */
static enum softhca_ack softhca_resp_send(struct softhca_dest *dest,
					  struct softhca_msg *msg)
{
	struct softhca_qp *qp = dest->qp;
	bool ud = softhca_is_ud(qp->ibqp.qp_type);
	struct softhca_cursor dst;
	u8 grh[SOFTHCA_GRH_LEN], hdr_type = 0;
	u32 nseg, extra = ud ? SOFTHCA_GRH_LEN : 0;
	enum softhca_ack ack;
	u64 cap;
	int err;

	if (msg->first) {
		/* A message restarted after a retry reuses its WQE. */
		if (!qp->resp.busy && !softhca_resp_take_for(qp, msg, &ack))
			return ack;
		qp->resp.offset = 0;
	} else if (!qp->resp.busy) {
		/* The start of this message was never seen: out of sequence. */
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_INV, 0);
	}

	err = softhca_resp_segs(qp, &nseg, &cap);
	if (err) {
		softhca_resp_complete(qp, err == -EACCES ? IB_WC_LOC_PROT_ERR :
				      IB_WC_LOC_QP_OP_ERR, IB_WC_RECV, 0, msg,
				      0, 0);
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_OP,
					IB_EVENT_QP_FATAL);
	}
	if (msg->total + extra > cap) {
		softhca_segs_put(qp->resp.segs, nseg);
		softhca_resp_complete(qp, IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0, msg,
				      0, 0);
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_INV,
					IB_EVENT_QP_REQ_ERR);
	}

	softhca_cursor_init(&dst, qp->resp.segs, nseg);
	if (ud) {
		hdr_type = softhca_resp_grh(grh, &dest->sgid,
					    &dest->dgid, msg->total);
		softhca_copy_from_kernel(&dst, grh, sizeof(grh));
	} else {
		softhca_cursor_skip(&dst, qp->resp.offset);
	}
	softhca_copy(&dst, msg->data, msg->len);
	softhca_segs_put(qp->resp.segs, nseg);
	qp->resp.offset += msg->len;

	if (msg->last)
		softhca_resp_complete(qp, IB_WC_SUCCESS, IB_WC_RECV,
				      msg->total + extra, msg,
				      ud ? IB_WC_GRH : 0, hdr_type);
	return SOFTHCA_ACK;
}

/*
 * The remote memory of an RDMA or atomic chunk: the QP must grant
 * @access and the rkey must name an MR of the QP's PD that grants it and
 * covers the range.  Return: the referenced MR, or NULL (access error).
 */
static struct softhca_mr *softhca_resp_rkey(struct softhca_qp *qp,
					    struct softhca_msg *msg, int access,
					    u32 len)
{
	if (!(qp->attr.qp_access_flags & access))
		return NULL;
	return softhca_mr_get(to_sdev(qp->ibqp.device), msg->rkey,
			      qp->ibqp.pd, access, msg->remote_addr, len);
}

/* RDMA WRITE (with immediate: its last chunk consumes a receive WQE). */
static enum softhca_ack softhca_resp_write(struct softhca_qp *qp,
					   struct softhca_msg *msg)
{
	bool imm = msg->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM && msg->last;
	struct softhca_cursor dst;
	struct softhca_seg seg;
	enum softhca_ack ack;

	if (msg->len) {
		seg.mr = softhca_resp_rkey(qp, msg, IB_ACCESS_REMOTE_WRITE,
					   msg->len);
		if (!seg.mr)
			return softhca_resp_nak(qp, msg, SOFTHCA_NAK_ACCESS,
						IB_EVENT_QP_ACCESS_ERR);
	} else if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE)) {
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_ACCESS,
						IB_EVENT_QP_ACCESS_ERR);
	}
	/* Take the WQE before writing, so an RNR retry finds it unchanged. */
	if (imm && !qp->resp.busy && !softhca_resp_take_for(qp, msg, &ack)) {
		if (msg->len)
			softhca_mr_put(seg.mr);
		return ack;
	}
	if (msg->len) {
		seg.addr = msg->remote_addr;
		seg.len = msg->len;
		softhca_cursor_init(&dst, &seg, 1);
		softhca_copy(&dst, msg->data, msg->len);
		softhca_mr_put(seg.mr);
	}
	if (imm)
		softhca_resp_complete(qp, IB_WC_SUCCESS,
				      IB_WC_RECV_RDMA_WITH_IMM, msg->total, msg,
				      0, 0);
	return SOFTHCA_ACK;
}

/* RDMA READ: the chunk's remote bytes go into the requester's buffer. */
static enum softhca_ack softhca_resp_read(struct softhca_qp *qp,
					  struct softhca_msg *msg)
{
	struct softhca_cursor src;
	struct softhca_seg seg;

	if (!qp->attr.max_dest_rd_atomic)
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_INV,
					IB_EVENT_QP_REQ_ERR);
	if (!msg->len)
		return SOFTHCA_ACK;
	seg.mr = softhca_resp_rkey(qp, msg, IB_ACCESS_REMOTE_READ, msg->len);
	if (!seg.mr)
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_ACCESS,
						IB_EVENT_QP_ACCESS_ERR);
	seg.addr = msg->remote_addr;
	seg.len = msg->len;
	softhca_cursor_init(&src, &seg, 1);
	softhca_copy(msg->data, &src, msg->len);
	softhca_mr_put(seg.mr);
	return SOFTHCA_ACK;
}

static enum softhca_ack softhca_resp_atomic(struct softhca_qp *qp,
					    struct softhca_msg *msg)
{
	struct softhca_mr *mr;
	int err;

	if (!qp->attr.max_dest_rd_atomic || (msg->remote_addr & 7))
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_INV,
					IB_EVENT_QP_REQ_ERR);
	mr = softhca_resp_rkey(qp, msg, IB_ACCESS_REMOTE_ATOMIC, 8);
	if (!mr)
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_ACCESS,
						IB_EVENT_QP_ACCESS_ERR);
	err = softhca_mem_atomic(mr, msg->remote_addr, msg->opcode,
				 msg->compare_add, msg->swap,
				 &msg->atomic_orig);
	softhca_mr_put(mr);
	return err ? SOFTHCA_NAK_INV : SOFTHCA_ACK;
}

/* Is @qp, as a receiver, the peer of @msg's sender? */
static bool softhca_resp_peer_ok(struct softhca_dest *dest,
				 struct softhca_msg *msg)
{
	struct softhca_qp *qp = dest->qp, *src = msg->src;
	enum ib_qp_type t = qp->ibqp.qp_type, st = src->ibqp.qp_type;

	if (softhca_is_ud(st))
		return softhca_is_ud(t) && dest->qkey == qp->attr.qkey;
	/* Connected: the receiver must be connected back to the sender. */
	return t == st && qp->attr.dest_qp_num == src->ibqp.qp_num;
}

/**
 * softhca_resp_deliver - a message (chunk) arrives at dest->qp
 * @dest: the referenced destination
 * @msg: the message; @msg->peer_err is set when the receiving QP must
 *	move to ERR (the caller does it after dropping its locks)
 *
 * Context: the sender's sq.lock held, BHs off.
 * Return: the responder's answer.
 */
enum softhca_ack softhca_resp_deliver(struct softhca_dest *dest,
				      struct softhca_msg *msg)
{
	struct softhca_qp *qp = dest->qp;
	enum softhca_ack ack;

	if (!softhca_resp_can_receive(READ_ONCE(qp->state)) ||
	    !softhca_resp_peer_ok(dest, msg))
		return softhca_resp_drop(msg);

	spin_lock(&qp->resp.lock);
	switch (msg->opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		ack = softhca_resp_send(dest, msg);
		break;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		ack = softhca_resp_write(qp, msg);
		break;
	case IB_UVERBS_WR_RDMA_READ:
		ack = softhca_resp_read(qp, msg);
		break;
	default:
		ack = softhca_resp_atomic(qp, msg);
		break;
	}
	spin_unlock(&qp->resp.lock);
	return ack;
}

/**
 * softhca_resp_flush - flush the receive WQE a message was filling
 * @qp: a QP entering ERR
 */
void softhca_resp_flush(struct softhca_qp *qp)
{
	struct softhca_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};

	if (!qp->resp.wqe)
		return;
	spin_lock_bh(&qp->resp.lock);
	if (qp->resp.busy) {
		cqe.wr_id = qp->resp.wqe->wr_id;
		qp->resp.busy = false;
		softhca_cq_push(to_scq(qp->ibqp.recv_cq), &cqe, true);
	}
	spin_unlock_bh(&qp->resp.lock);
}
