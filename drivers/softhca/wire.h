/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: what the files of the RoCEv2 transport share.
 *
 *   wire.c       the transport's entry points: send (UD and the
 *                dispatch), receive (checks common to every packet,
 *                UD, the dispatch), building one packet
 *   wire_conn.c  connected QPs, sending: a message as path-MTU packets,
 *                and the path taken from the QP's attributes
 *   wire_resp.c  connected QPs, receiving: PSN order, the message in
 *                progress, delivery to the responder (resp.c)
 *   wire_seq.c   the sequencing rules themselves (pure); RC's in
 *                wire_rc_seq.c
 *   wire_rc.c    RC: the requester's chunks in flight, the completer
 *                (ACKs and NAKs arriving, READ responses queued)
 *   wire_rc_resp.c RC: the responder (PSN order, ACKs and NAKs sent,
 *                READ requests answered)
 *   wire_atomic.c RC atomics: the request sent, the responder's
 *                execution and its saved results for duplicates
 *
 * XRC is RC with another opcode prefix: an XRC_INI is an RC requester,
 * an XRC_TGT an RC responder whose requests name their SRQ (XRCETH).
 * The files above serve both; what differs by QP type is in the three
 * helpers below and nowhere else (and the SRQ an XRC request names,
 * wire_resp.c).
 */
#ifndef SOFTHCA_WIRE_H
#define SOFTHCA_WIRE_H

#include "engine.h"
#include "net.h"
#include "roce_hdr.h"

/*
 * The opcode prefix of a connected QP type's packets: XRC_INI and
 * XRC_TGT speak XRC, whose opcodes mirror RC's (IBA: the same operation
 * codes under prefix 101b; its requests carry an XRCETH, which the
 * opcode table adds, roce_hdr.c).
 */
static inline u8 softhca_wire_tp(enum ib_qp_type t)
{
	switch (t) {
	case IB_QPT_UC:
		return SOFTHCA_TP_UC;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return SOFTHCA_TP_XRC;
	default:
		return SOFTHCA_TP_RC;
	}
}

/* The opcode of @t's transport that mirrors the RC opcode @rc_op. */
static inline u8 softhca_wire_op(enum ib_qp_type t, u8 rc_op)
{
	return softhca_wire_tp(t) | (rc_op & ~SOFTHCA_TP_MASK);
}

/*
 * Does a QP of type @t take a packet of opcode mask @mask?  Its
 * transport's packets only, and of XRC's, an XRC_INI (the requester)
 * the answers and an XRC_TGT (the responder) the requests.
 */
static inline bool softhca_wire_takes(enum ib_qp_type t, u32 mask)
{
	switch (t) {
	case IB_QPT_UC:
		return mask & SOFTHCA_H_UC;
	case IB_QPT_RC:
		return mask & SOFTHCA_H_RC;
	case IB_QPT_XRC_INI:
		return (mask & SOFTHCA_H_XRC) && (mask & SOFTHCA_H_RESP);
	case IB_QPT_XRC_TGT:
		return (mask & SOFTHCA_H_XRC) && (mask & SOFTHCA_H_REQ);
	default:
		return false;
	}
}

/* The type of the QP at the other end of a connection to a @t. */
static inline enum ib_qp_type softhca_wire_peer_qpt(enum ib_qp_type t)
{
	return t == IB_QPT_XRC_TGT ? IB_QPT_XRC_INI : t;
}

/*
 * A received packet's payload as segments of kernel memory: what follows
 * the headers in the linear part, then the page fragments.  A batch the
 * sender's GSO cut into packets arrives as fragments of its pages:
 * copying from them spares skb_linearize() (an allocation and a copy of
 * every such packet).  Up to one segment per fragment, and the head's.
 */
struct softhca_wire_payload {
	struct softhca_seg seg[MAX_SKB_FRAGS + 1];
	struct softhca_cursor cur;
};

/* wire.c */
int softhca_wire_xmit(struct softhca_dev *sdev,
		      const struct softhca_roce_fields *f,
		      struct softhca_cursor *data, u32 len,
		      const struct softhca_path *path);
void softhca_wire_gids(const struct sk_buff *skb, union ib_gid *sgid,
		       union ib_gid *dgid);
void softhca_wire_payload(const struct sk_buff *skb, u32 off, u32 len,
			  struct softhca_wire_payload *pl);
void softhca_wire_pkt_payload(const struct softhca_roce_pkt *pkt,
			      struct softhca_wire_payload *pl);

/* wire_conn.c */
enum softhca_ack softhca_wire_send_uc(struct softhca_qp *qp,
				      struct softhca_dest *dest,
				      struct softhca_msg *msg);

/* wire_resp.c */
void softhca_wire_rcv_uc(struct softhca_dev *sdev, struct sk_buff *skb,
			 const struct softhca_roce_pkt *pkt);
bool softhca_wire_can_receive(enum ib_qp_state s);
bool softhca_wire_admit(struct softhca_dev *sdev, const struct softhca_qp *qp,
			const struct sk_buff *skb);
bool softhca_wire_from_peer(const struct softhca_qp *qp,
			    const struct sk_buff *skb);
bool softhca_wire_deliver(struct softhca_dev *sdev, struct softhca_qp *qp,
			  const struct softhca_roce_pkt *pkt,
			  struct softhca_msg *msg, enum softhca_ack *ack);
struct softhca_mr *softhca_wire_rkey(struct softhca_qp *qp,
				     const struct softhca_roce_pkt *pkt,
				     u32 rkey, int access, u64 va, u32 len);
bool softhca_wire_send_pkts(struct softhca_qp *qp, struct softhca_dest *dest,
			    struct softhca_msg *msg, bool ackreq);

/* wire_rc.c */
void softhca_wire_rc_modify(struct softhca_qp *qp,
			    const struct ib_qp_attr *attr, int mask,
			    bool reset);
enum softhca_ack softhca_wire_send_rc(struct softhca_qp *qp,
				      struct softhca_dest *dest,
				      struct softhca_msg *msg);
bool softhca_wire_rc_append(struct softhca_qp *qp, struct softhca_dest *dest,
			    struct softhca_msg *msg);
u32 softhca_wire_rc_taken(struct softhca_qp *qp);
void softhca_wire_rc_slide(struct softhca_qp *qp, u32 pkts, u32 msgs);
bool softhca_wire_rc_quiet(struct softhca_qp *qp);
void softhca_wire_rc_probe(struct softhca_qp *qp, struct softhca_dest *dest,
			   struct softhca_msg *msg);
void softhca_wire_rc_request(struct softhca_qp *qp, struct softhca_dest *dest,
			     const struct softhca_msg *msg,
			     struct softhca_roce_fields *f, u32 npkts);
void softhca_wire_rcv_ack(struct softhca_dev *sdev, struct sk_buff *skb,
			  const struct softhca_roce_pkt *pkt);
void softhca_wire_rc_answer(struct softhca_wire_qp *w, enum softhca_ack ack,
			    u8 rnr);
bool softhca_wire_rc_record(struct softhca_wire_qp *w, enum softhca_ack ack);
struct softhca_qp *softhca_wire_rc_answered(struct softhca_dev *sdev,
					    struct sk_buff *skb,
					    const struct softhca_roce_pkt *pkt);

/* wire_tail.c */
void softhca_rtt_fold(struct softhca_rtt *r, u64 rtt);
u64 softhca_rtt_wait(const struct softhca_rtt *r);
void softhca_wire_tail_sent(struct softhca_wire_qp *w, bool timed);
void softhca_wire_tail_answer(struct softhca_wire_qp *w,
			      enum softhca_rc_answer a);
u64 softhca_wire_tail_pto(const struct softhca_rtt *r, u64 floor);
u64 softhca_wire_tail_wait(struct softhca_qp *qp);
enum softhca_tail softhca_wire_tail(struct softhca_qp *qp);

/* wire_read.c */
/*
 * The payload a READ RESPONSE skb carries, and its PSN (set when it is
 * queued or held).
 */
struct softhca_rd_cb {
	u32 off;	/* from skb->data */
	u32 len;
	u32 psn;
};

static inline struct softhca_rd_cb *softhca_rd_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct softhca_rd_cb) > sizeof(skb->cb));
	return (struct softhca_rd_cb *)skb->cb;
}

void softhca_wire_send_read(struct softhca_qp *qp, struct softhca_dest *dest,
			    struct softhca_msg *msg, u32 npkts);
bool softhca_wire_rd_begin(struct softhca_wire_qp *w, bool read, u32 len);
enum softhca_rc_rd_verdict softhca_wire_rd_resp(struct softhca_wire_qp *w,
						struct sk_buff *skb, u32 psn,
						u8 opcode, u32 off, u32 paylen,
						bool *kick);
/* What the reorder timer found (softhca_wire_rd_look()). */
enum softhca_rd_look {
	SOFTHCA_RD_GONE,
	SOFTHCA_RD_LATER,
	SOFTHCA_RD_STALLED,
	SOFTHCA_RD_PROBE,
};

bool softhca_wire_rd_watch(struct softhca_wire_qp *w,
			   enum softhca_rc_rd_verdict v);
enum softhca_rd_look softhca_wire_rd_look(struct softhca_wire_qp *w,
					  bool early);
void softhca_wire_rd_arm(struct softhca_qp *qp);
void softhca_wire_rd_watch_late(struct softhca_qp *qp);
u64 softhca_wire_rd_probe_wait(const struct softhca_wire_qp *w);
void softhca_wire_rd_sent(struct softhca_qp *qp, bool first);
u32 softhca_wire_rd_take(struct softhca_wire_qp *w, enum softhca_ack ack,
			 struct softhca_msg *msg, struct sk_buff_head *q);
void softhca_wire_rd_copy(struct sk_buff_head *q, struct softhca_msg *msg);
void softhca_wire_rcv_read_resp(struct softhca_dev *sdev, struct sk_buff *skb,
				const struct softhca_roce_pkt *pkt);

/* wire_atomic.c */
void softhca_wire_atm_msg(const struct softhca_roce_pkt *pkt,
			  struct softhca_msg *msg);
int softhca_wire_atm_exec(struct softhca_dev *sdev, struct softhca_qp *qp,
			  const struct softhca_roce_pkt *pkt, u32 psn,
			  enum softhca_ack *ack, u64 *orig);
bool softhca_wire_atm_dup(struct softhca_dev *sdev, struct softhca_qp *qp,
			  u32 psn, u64 *orig);
void softhca_wire_send_atomic(struct softhca_qp *qp, struct softhca_dest *dest,
			      struct softhca_msg *msg);

/* wire_rc_resp.c */
void softhca_wire_rcv_rc(struct softhca_dev *sdev, struct sk_buff *skb,
			 const struct softhca_roce_pkt *pkt);

#endif /* SOFTHCA_WIRE_H */
