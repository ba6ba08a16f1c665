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
 * XRC: an XRC_TGT QP has no queue of its own.  Every message names an
 * XRC SRQ (msg->xrc_srqn); it must be an XRC SRQ of the QP's domain,
 * and its PD, not the QP's, is what rkeys and receive SGEs are checked
 * against, its CQ takes the receive completions.  An SRQ that is not in
 * the domain (or does not exist: the two are not told apart, a domain
 * is a protection boundary) is a remote access error for the sender; the
 * XRC_TGT, which other senders share, stays as it is.  Any XRC_INI
 * connected to an XRC_TGT may send through it (on this host nothing
 * orders one sender's packets against another's); a SEND that arrives
 * in chunks keeps the receive WQE for its sender (resp.owner_*), and
 * another sender is answered BUSY until it ends or until its sender is
 * found gone, when the held WQE completes with WR_FLUSH_ERR.
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

/*
 * The receive side of one message: the QP's RQ or SRQ, or for XRC_TGT
 * the SRQ the message names (referenced for the delivery).
 */
struct softhca_rx {
	struct softhca_srq *srq;	/* NULL: the QP's own RQ */
	struct ib_pd *pd;		/* rkeys and receive SGEs belong to it */
	struct ib_cq *cq;		/* receive completions */
	struct softhca_mr **mrc;	/* the sender's MR cache for this device */
};

/* What an unanswerable message means to its sender. */
static enum softhca_ack softhca_resp_drop(struct softhca_msg *msg)
{
	return softhca_qpt_reliable(msg->src_qpt) ? SOFTHCA_NO_PEER : SOFTHCA_ACK;
}

/*
 * A responder error: RC and XRC answer with @nak and, with @event, move
 * the receiving QP to ERR; UC and UD drop the message (the sender sees
 * success).
 */
static enum softhca_ack softhca_resp_nak(struct softhca_qp *qp,
					 struct softhca_msg *msg,
					 enum softhca_ack nak, int event)
{
	if (!softhca_qpt_reliable(qp->ibqp.qp_type))
		return SOFTHCA_ACK;
	if (event)
		msg->peer_err = event;
	return nak;
}

/*
 * Take the next receive WQE into qp->resp.wqe.  Return: 0; -EAGAIN when
 * the queue is empty; -EIO when its producer index is impossible.
 */
static int softhca_resp_take(struct softhca_qp *qp, struct softhca_rx *rx)
{
	struct softhca_wq *rq = rx->srq ? &rx->srq->rq : &qp->rq;
	struct softhca_wq_hdr *hdr;
	u32 avail;
	int posted;

	if (!rq->ring.entries)
		return -EAGAIN;
	hdr = softhca_ring_hdr(&rq->ring);
	spin_lock(&rq->lock);
	/*
	 * WQEs below the prod read last are still there to take: read the
	 * producer's line again only when they are used up (or a flush
	 * moved cons past them), not for every message.
	 */
	avail = rq->prod_seen - rq->cons;
	if (!avail || avail > rq->ring.entries) {
		/* Pairs with the producer's store-release of prod. */
		posted = softhca_ring_posted(smp_load_acquire(&hdr->prod),
					     rq->cons, rq->ring.entries);
		if (posted <= 0) {
			spin_unlock(&rq->lock);
			return posted ? -EIO : -EAGAIN;
		}
		rq->prod_seen = rq->cons + posted;
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
	if (rx->srq)
		softhca_srq_check_limit(rx->srq);
	return 0;
}

/*
 * Take a receive WQE for @msg.  Return: true if taken; otherwise false
 * with the answer in *@ack: RNR (RC) or a drop when the queue is empty;
 * for an impossible producer index the receiving QP is broken whatever
 * its type.
 */
static bool softhca_resp_take_for(struct softhca_qp *qp,
				  struct softhca_rx *rx,
				  struct softhca_msg *msg,
				  enum softhca_ack *ack)
{
	int err = softhca_resp_take(qp, rx);

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
static void softhca_resp_complete(struct softhca_qp *qp, struct softhca_rx *rx,
				  u8 status, u8 opcode, u32 byte_len,
				  const struct softhca_msg *msg, u8 wc_flags,
				  u8 hdr_type)
{
	struct softhca_cqe cqe = {
		.wr_id = qp->resp.wqe->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = msg->src_qpn,
		.wc_flags = wc_flags,
		.network_hdr_type = hdr_type,
	};

	if (opcode == IB_WC_RECV_RDMA_WITH_IMM ||
	    msg->opcode == IB_UVERBS_WR_SEND_WITH_IMM) {
		cqe.wc_flags |= IB_WC_WITH_IMM;
		cqe.imm_data = msg->imm;
	} else if (msg->opcode == IB_UVERBS_WR_SEND_WITH_INV &&
		   status == IB_WC_SUCCESS) {
		/* wc->ex.invalidate_rkey: the same word, host order. */
		cqe.wc_flags |= IB_WC_WITH_INVALIDATE;
		cqe.imm_data = msg->imm;
	}
	qp->resp.busy = false;
	/* An error completion is a solicited event too (IBA 11.4.2.2). */
	softhca_cq_push(to_scq(rx->cq), &cqe,
			msg->solicited || status != IB_WC_SUCCESS);
}

/* Check the current receive WQE and resolve its SGEs (referenced). */
static int softhca_resp_segs(struct softhca_qp *qp, struct softhca_rx *rx,
			     u32 *nseg, u64 *cap)
{
	struct softhca_wqe_bounds b = {
		.stride = qp->resp.stride,
		.max_sge = qp->resp.max_sge,
	};
	int err;

	err = softhca_recv_wqe_check(qp->resp.wqe, &b, cap);
	if (err)
		return err;
	return softhca_segs_resolve(to_sdev(qp->ibqp.device), rx->pd,
				    (const struct softhca_sge *)(qp->resp.wqe + 1),
				    qp->resp.wqe->num_sge, IB_ACCESS_LOCAL_WRITE,
				    qp->resp.segs, nseg, rx->mrc);
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
					  struct softhca_rx *rx,
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
		if (!qp->resp.busy && !softhca_resp_take_for(qp, rx, msg, &ack))
			return ack;
		qp->resp.offset = 0;
	} else if (!qp->resp.busy) {
		/* The start of this message was never seen: out of sequence. */
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_INV, 0);
	}

	err = softhca_resp_segs(qp, rx, &nseg, &cap);
	if (err) {
		softhca_resp_complete(qp, rx, err == -EACCES ? IB_WC_LOC_PROT_ERR :
				      IB_WC_LOC_QP_OP_ERR, IB_WC_RECV, 0, msg,
				      0, 0);
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_OP,
					IB_EVENT_QP_FATAL);
	}
	/*
	 * The whole message must fit.  A message from another host says
	 * its length only by ending (@msg->total 0): each chunk is checked
	 * as it comes.
	 */
	if (max(msg->total, qp->resp.offset + msg->len) + extra > cap) {
		softhca_segs_put(qp->resp.segs, nseg);
		softhca_resp_complete(qp, rx, IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0,
				      msg, 0, 0);
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

	/*
	 * SEND_WITH_INV: the rkey it carries (in @msg->imm) is invalidated
	 * before the receive completes, so a consumer that sees the
	 * completion finds the MR or window invalid (fastreg.c, mw.c).  It
	 * must name a fast-reg MR of the receive side's PD, or a type 2
	 * window of that PD bound to this QP.
	 */
	if (msg->last && msg->opcode == IB_UVERBS_WR_SEND_WITH_INV &&
	    softhca_key_invalidate(to_sdev(qp->ibqp.device), rx->pd,
				   qp->ibqp.qp_num, true, msg->imm)) {
		softhca_resp_complete(qp, rx, IB_WC_LOC_PROT_ERR, IB_WC_RECV, 0,
				      msg, 0, 0);
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_INV,
					IB_EVENT_QP_REQ_ERR);
	}
	if (msg->last)
		softhca_resp_complete(qp, rx, IB_WC_SUCCESS, IB_WC_RECV,
				      qp->resp.offset + extra, msg,
				      ud ? IB_WC_GRH : 0, hdr_type);
	return SOFTHCA_ACK;
}

/*
 * The remote memory of an RDMA or atomic chunk: the QP must grant
 * @access and the rkey must name an MR of the QP's PD that grants it and
 * covers the range, or a window that does (mw.c; never cached: its
 * invalidation must take effect at once).  Return: the referenced MR,
 * or NULL (access error).
 */
static struct softhca_mr *softhca_resp_rkey(struct softhca_qp *qp,
					    struct softhca_rx *rx,
					    struct softhca_msg *msg, int access,
					    u32 len)
{
	if (!(qp->attr.qp_access_flags & access))
		return NULL;
	if (softhca_key_is_mw(msg->rkey))
		return softhca_mw_rkey_get(to_sdev(qp->ibqp.device), msg->rkey,
					   rx->pd, qp->ibqp.qp_num, access,
					   msg->remote_addr, len);
	return softhca_mr_get_cached(rx->mrc, to_sdev(qp->ibqp.device),
				     msg->rkey, rx->pd, access,
				     msg->remote_addr, len);
}

/* RDMA WRITE (with immediate: its last chunk consumes a receive WQE). */
static enum softhca_ack softhca_resp_write(struct softhca_qp *qp,
					   struct softhca_rx *rx,
					   struct softhca_msg *msg)
{
	bool imm = msg->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM && msg->last;
	struct softhca_cursor dst;
	struct softhca_seg seg;
	enum softhca_ack ack;

	if (msg->len) {
		seg.mr = softhca_resp_rkey(qp, rx, msg, IB_ACCESS_REMOTE_WRITE,
					   msg->len);
		if (!seg.mr)
			return softhca_resp_nak(qp, msg, SOFTHCA_NAK_ACCESS,
						IB_EVENT_QP_ACCESS_ERR);
	} else if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE)) {
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_ACCESS,
						IB_EVENT_QP_ACCESS_ERR);
	}
	/* Take the WQE before writing, so an RNR retry finds it unchanged. */
	if (imm && !qp->resp.busy &&
	    !softhca_resp_take_for(qp, rx, msg, &ack)) {
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
		softhca_resp_complete(qp, rx, IB_WC_SUCCESS,
				      IB_WC_RECV_RDMA_WITH_IMM, msg->total, msg,
				      0, 0);
	return SOFTHCA_ACK;
}

/* RDMA READ: the chunk's remote bytes go into the requester's buffer. */
static enum softhca_ack softhca_resp_read(struct softhca_qp *qp,
					  struct softhca_rx *rx,
					  struct softhca_msg *msg)
{
	struct softhca_cursor src;
	struct softhca_seg seg;

	if (!qp->attr.max_dest_rd_atomic)
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_INV,
					IB_EVENT_QP_REQ_ERR);
	if (!msg->len)
		return SOFTHCA_ACK;
	seg.mr = softhca_resp_rkey(qp, rx, msg, IB_ACCESS_REMOTE_READ,
				   msg->len);
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
					    struct softhca_rx *rx,
					    struct softhca_msg *msg)
{
	struct softhca_mr *mr;
	int err;

	if (!qp->attr.max_dest_rd_atomic || (msg->remote_addr & 7))
		return softhca_resp_nak(qp, msg, SOFTHCA_NAK_INV,
					IB_EVENT_QP_REQ_ERR);
	mr = softhca_resp_rkey(qp, rx, msg, IB_ACCESS_REMOTE_ATOMIC, 8);
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
	struct softhca_qp *qp = dest->qp;
	enum ib_qp_type t = qp->ibqp.qp_type, st = msg->src_qpt;

	if (softhca_is_ud(st))
		return softhca_is_ud(t) && dest->qkey == qp->attr.qkey;
	/* XRC: any XRC_INI connected to the XRC_TGT (see the top). */
	if (st == IB_QPT_XRC_INI)
		return t == IB_QPT_XRC_TGT;
	/* Connected: the receiver must be connected back to the sender. */
	return t == st && qp->attr.dest_qp_num == msg->src_qpn;
}

/* Does a message of this opcode consume a receive WQE? */
static bool softhca_resp_takes_wqe(u8 opcode)
{
	return opcode == IB_UVERBS_WR_SEND ||
	       opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
	       opcode == IB_UVERBS_WR_SEND_WITH_INV ||
	       opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
}

/**
 * softhca_xrc_srq_get - the SRQ an XRC message names
 * @qp: the XRC_TGT QP it arrived at
 * @srqn: the SRQ number (msg->xrc_srqn, the XRCETH on the wire)
 *
 * Return: the SRQ, referenced, when it is an XRC SRQ of @qp's domain;
 * NULL otherwise (no such SRQ and another domain's are not told apart:
 * a domain is a protection boundary).
 */
struct softhca_srq *softhca_xrc_srq_get(struct softhca_qp *qp, u32 srqn)
{
	struct softhca_srq *srq;

	srq = softhca_srq_get(to_sdev(qp->ibqp.device), srqn);
	if (srq && (srq->ibsrq.srq_type != IB_SRQT_XRC ||
		    srq->ibsrq.ext.xrc.xrcd != qp->xrcd)) {
		softhca_srq_put(srq);
		srq = NULL;
	}
	return srq;
}

/*
 * Complete the receive WQE a message was filling with WR_FLUSH_ERR on
 * @cq (NULL: nowhere) and forget it.  Called with resp.lock held.
 */
static void softhca_resp_flush_held(struct softhca_qp *qp, struct ib_cq *cq)
{
	struct softhca_cqe cqe = {
		.wr_id = qp->resp.wqe->wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};

	qp->resp.busy = false;
	if (cq)
		softhca_cq_push(to_scq(cq), &cqe, true);
}

/*
 * XRC_TGT: flush the held receive WQE on its SRQ's CQ (nothing if the
 * SRQ is gone: so is the WQE's owner).  Called with resp.lock held.
 */
static void softhca_resp_xrc_drop(struct softhca_qp *qp)
{
	struct softhca_srq *srq = softhca_xrc_srq_get(qp, qp->resp.srqn);

	softhca_resp_flush_held(qp, srq ? srq->ibsrq.ext.cq : NULL);
	if (srq)
		softhca_srq_put(srq);
}

/*
 * XRC_TGT: may @msg's sender use the responder state?  Yes when no
 * message is half received, or its own is; when another sender's is and
 * that sender is gone, the held WQE is flushed and the state is taken
 * over.  Called with resp.lock held.
 */
static bool softhca_resp_xrc_claim(struct softhca_qp *qp,
				   struct softhca_msg *msg)
{
	u32 dev = msg->src_dev, qpn = msg->src_qpn;

	if (qp->resp.busy) {
		if (qp->resp.owner_dev == dev && qp->resp.owner_qpn == qpn) {
			if (qp->resp.srqn == msg->xrc_srqn)
				return true;
			/* A new message from the same sender, elsewhere. */
		} else if (softhca_sender_active(qp->resp.owner_dev,
						 qp->resp.owner_qpn,
						 qp->ibqp.qp_num)) {
			return false;
		}
		softhca_resp_xrc_drop(qp);
	}
	qp->resp.owner_dev = dev;
	qp->resp.owner_qpn = qpn;
	qp->resp.srqn = msg->xrc_srqn;
	return true;
}

/* The receive side of @msg at @qp.  Return: false when there is none. */
static bool softhca_resp_rx(struct softhca_qp *qp, struct softhca_msg *msg,
			    struct softhca_rx *rx)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		rx->srq = softhca_xrc_srq_get(qp, msg->xrc_srqn);
		if (!rx->srq)
			return false;
		rx->pd = rx->srq->ibsrq.pd;
		rx->cq = rx->srq->ibsrq.ext.cq;
		return true;
	}
	rx->srq = qp->srq;
	rx->pd = qp->srq ? qp->srq->ibsrq.pd : qp->ibqp.pd;
	rx->cq = qp->ibqp.recv_cq;
	return true;
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
	bool xrc = qp->ibqp.qp_type == IB_QPT_XRC_TGT;
	struct softhca_rx rx;
	enum softhca_ack ack;

	if (!softhca_resp_can_receive(READ_ONCE(qp->state)) ||
	    !softhca_resp_peer_ok(dest, msg))
		return softhca_resp_drop(msg);
	/* XRC: an SRQ outside the domain; the shared XRC_TGT stays. */
	if (!softhca_resp_rx(qp, msg, &rx))
		return SOFTHCA_NAK_ACCESS;
	rx.mrc = &dest->mr_cache;

	spin_lock(&qp->resp.lock);
	if (xrc && softhca_resp_takes_wqe(msg->opcode) &&
	    !softhca_resp_xrc_claim(qp, msg)) {
		ack = SOFTHCA_BUSY;
		goto out;
	}
	switch (msg->opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
	case IB_UVERBS_WR_SEND_WITH_INV:
		ack = softhca_resp_send(dest, &rx, msg);
		break;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		ack = softhca_resp_write(qp, &rx, msg);
		break;
	case IB_UVERBS_WR_RDMA_READ:
		ack = softhca_resp_read(qp, &rx, msg);
		break;
	default:
		ack = softhca_resp_atomic(qp, &rx, msg);
		break;
	}
out:
	spin_unlock(&qp->resp.lock);
	if (ack == SOFTHCA_RNR)
		msg->rnr_timer = qp->attr.min_rnr_timer;
	if (xrc)
		softhca_srq_put(rx.srq);
	return ack;
}

/**
 * softhca_resp_flush - flush the receive WQE a message was filling
 * @qp: a QP entering ERR
 */
void softhca_resp_flush(struct softhca_qp *qp)
{
	if (!qp->resp.wqe)
		return;
	spin_lock_bh(&qp->resp.lock);
	if (qp->resp.busy && qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		softhca_resp_xrc_drop(qp);
	else if (qp->resp.busy)
		softhca_resp_flush_held(qp, qp->ibqp.recv_cq);
	spin_unlock_bh(&qp->resp.lock);
}
