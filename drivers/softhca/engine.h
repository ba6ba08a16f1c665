/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: the engine that moves data.
 *
 *   engine.c    the pollers: which QPs are polled, NEED_WAKEUP, sleeping,
 *               giving the CPU back; the doorbell entry point
 *   req.c       the requester: takes send WQEs (copy, validate), runs
 *               them chunk by chunk, retires them and completes them
 *   resp.c      the responder: receive WQEs, remote keys, data placement,
 *               atomics and receive completions
 *   mem.c       MR lookup by key with a reference, SGE resolution, copy
 *   loopback.c  the transport seam: finds the peer QP of a message on
 *               this host (same device or another softhca device)
 *
 * A requester hands a message, or one chunk of a long one, to the
 * responder as a struct softhca_msg and gets a struct softhca_ack back,
 * the way a RoCE requester would get an ACK or NAK packet.  The
 * same-host transport calls the responder directly; a wire transport
 * would put the message in packets and return the answer later.
 *
 * Lock order (outermost first): the sending QP's sq.lock, the peer's
 * resp.lock, an RQ's or SRQ's rq.lock, a CQ's lock.  Nothing sleeps
 * under any of them; MR and peer-QP references are taken and dropped
 * within one visit, so dereg_mr and destroy_qp wait at most one visit.
 */
#ifndef SOFTHCA_ENGINE_H
#define SOFTHCA_ENGINE_H

#include "softhca.h"

/* One resolved piece of memory: an SGE after its key was checked. */
struct softhca_seg {
	struct softhca_mr *mr;	/* referenced; NULL: kernel memory (inline) */
	u64 addr;		/* iova within @mr, or a kernel address */
	u32 len;
};

/* A position in a list of segments. */
struct softhca_cursor {
	struct softhca_seg *seg;
	u32 nseg;
	u32 idx;
	u32 off;
};

/* The answer of a responder (the ACK/NAK of RoCE). */
enum softhca_ack {
	SOFTHCA_ACK,		/* done (or, for UC/UD, silently dropped) */
	SOFTHCA_RNR,		/* no receive WQE: retry after @rnr_timer */
	SOFTHCA_NAK_INV,	/* invalid request: REM_INV_REQ_ERR */
	SOFTHCA_NAK_ACCESS,	/* remote access error: REM_ACCESS_ERR */
	SOFTHCA_NAK_OP,		/* remote operational error: REM_OP_ERR */
	SOFTHCA_NO_PEER,	/* nobody answers (the packet would be
				 * dropped): RC/XRC send it again after
				 * the local ACK timeout, retry_cnt times,
				 * then RETRY_EXC_ERR
				 */
	SOFTHCA_BUSY,		/* XRC: the receiver is taking another
				 * sender's message: send again later
				 */
	SOFTHCA_PENDING,	/* RC on the wire: the chunk is sent, its
				 * answer comes later: wait for it, at most
				 * the local ACK timeout, then send again
				 */
	SOFTHCA_RESEND,		/* RC on the wire: no answer in time, or a
				 * PSN sequence NAK: send the chunk again
				 * now (a retry of retry_cnt)
				 */
};

/**
 * struct softhca_msg - one message, or one chunk of it, for a responder
 * @src_qpn: the sending QP's number (a receive completion's src_qp)
 * @src_dev: the sending QP's device, its ib_core index plus one; 0 for a
 *	QP on another host (the sender is known only by what a packet says)
 * @src_qpt: the sending QP's type (enum ib_qp_type)
 * @opcode: IB_UVERBS_WR_*
 * @first, @last: position of this chunk in its message
 * @solicited: the solicited-event bit (last chunk)
 * @quiet: its WQE asks for no completion (unsignaled, and the QP does not
 *	signal all): on the wire its answer may wait (wire_rc.c, "Quiet
 *	messages")
 * @imm: immediate data, network order
 * @qkey: UD: the Q_Key the message carries
 * @xrc_srqn: XRC: the SRQ the message is for (the XRCETH of RoCE)
 * @remote_addr, @rkey: RDMA and atomics, for this chunk
 * @compare_add, @swap: atomics
 * @len: bytes in this chunk
 * @total: bytes in the whole message (a SEND from another host: 0, its
 *	length is known at its end only)
 * @data: SEND/WRITE: where the payload comes from; READ: where it goes;
 *	atomics: unused (the result comes back in @atomic_orig)
 * @atomic_orig: out: the remote value before the atomic
 * @rnr_timer: out: with SOFTHCA_RNR, the receiver's min_rnr_timer code
 * @acked_pkts: out: the answer to a train (req_train.c): the packets at
 *	its start the responder took, whatever the answer
 * @acked: out: with SOFTHCA_RNR or SOFTHCA_RESEND (RC on the wire), the
 *	bytes at the chunk's start the responder took: done, not sent again
 * @probe: out: with SOFTHCA_RESEND, what is in flight goes again early
 *	as a probe (a READ nothing answered, wire_read.c; an answer a probe
 *	timeout late, wire_tail.c): no retry of retry_cnt
 * @peer_err: out: the responder's QP must move to ERR with this event
 *	(0: no); the requester does it once it dropped its own locks
 */
struct softhca_msg {
	u32 src_qpn;
	u32 src_dev;
	u8 src_qpt;
	u8 opcode;
	bool first;
	bool last;
	bool solicited;
	bool quiet;
	u32 imm;
	u32 qkey;
	u32 xrc_srqn;
	u64 remote_addr;
	u32 rkey;
	u64 compare_add;
	u64 swap;
	u32 len;
	u64 total;
	struct softhca_cursor *data;
	u64 atomic_orig;
	u8 rnr_timer;
	u32 acked_pkts;
	u32 acked;
	bool probe;
	int peer_err;
};

/* How a transport probes what is in flight (softhca_transport.tail). */
enum softhca_tail {
	SOFTHCA_TAIL_NONE,	/* no probe: wait the local ACK timeout */
	SOFTHCA_TAIL_RESEND,	/* all of it again: recorded as the answer */
	SOFTHCA_TAIL_LAST,	/* its last packet again, asking (@probe) */
};

/**
 * struct softhca_transport - how a message reaches its responder
 * @send: hand @msg (one chunk) from @qp to @dest and return the answer a
 *	RoCE responder would give.  The same-host transport (loopback.c)
 *	calls the responder; the RoCEv2 one (wire.c) puts the message in
 *	packets.  Context: @qp's sq.lock held, BHs off.
 *
 * @append: optional: send @msg, a whole message, behind the chunk in
 *	flight (the last of its message, just sent: SOFTHCA_PENDING), so
 *	that one answer covers both (a train, req_train.c).  Return: false
 *	when it cannot (no train here, the answer came already, the chunk
 *	in flight is a READ or an atomic); nothing was sent then.  Context:
 *	as @send.
 *
 * @flush: optional: send what @send and @append left in the QP's
 *	transmit batch (net_batch.c).  The requester calls it once it has
 *	appended what it will behind a chunk in flight (SOFTHCA_PENDING);
 *	@send flushes itself for any other answer.  Context: as @send.
 *
 * @taken: optional, with @slide: the packets at the start of a train in
 *	flight (@append) that the responder is known to have taken, short
 *	of the whole train.  Context: as @send.
 *
 * @slide: the first @msgs messages of a train, @pkts packets of what
 *	@taken said, retired before the train's answer came: what is in
 *	flight starts after them.  Context: as @send.
 *
 * @quiet: optional, with @probe: what is in flight ends in a packet that
 *	asked for no answer (quiet messages, wire_rc.c), so none comes by
 *	itself.  Context: as @send.
 *
 * @probe: ask for the answer to what is in flight: @msg is its last
 *	packet (the last of the last message sent), sent again asking for
 *	an answer; or, while that packet is still in the transmit batch,
 *	the batch asks when it goes.  Context: as @send.
 *
 * @tail_wait: optional, with @tail: how long what was just sent (or
 *	what is in flight, grown) waits for its answer before a tail probe,
 *	in ns; 0: no probe, the local ACK timeout alone.  Context: as @send.
 *
 * @tail: the wait @tail_wait gave ran out unanswered: what is in flight
 *	goes again, recorded as @send's next answer (SOFTHCA_RESEND, with
 *	@msg->probe): SOFTHCA_TAIL_RESEND; or the requester is to send its
 *	last packet again through @probe: SOFTHCA_TAIL_LAST; or neither
 *	(then the requester waits the local ACK timeout):
 *	SOFTHCA_TAIL_NONE.  Context: as @send.
 *
 * softhca_dest_get() picks the transport per destination, so the
 * requester never asks where its peer is.
 */
struct softhca_transport {
	enum softhca_ack (*send)(struct softhca_qp *qp,
				 struct softhca_dest *dest,
				 struct softhca_msg *msg);
	bool (*append)(struct softhca_qp *qp, struct softhca_dest *dest,
		       struct softhca_msg *msg);
	void (*flush)(struct softhca_qp *qp);
	u32 (*taken)(struct softhca_qp *qp);
	void (*slide)(struct softhca_qp *qp, u32 pkts, u32 msgs);
	bool (*quiet)(struct softhca_qp *qp);
	void (*probe)(struct softhca_qp *qp, struct softhca_dest *dest,
		      struct softhca_msg *msg);
	u64 (*tail_wait)(struct softhca_qp *qp);
	enum softhca_tail (*tail)(struct softhca_qp *qp);
};

extern const struct softhca_transport softhca_loopback;
extern const struct softhca_transport softhca_wire;

/* wire.c, wire_conn.c, wire_rc_resp.c, wire_atomic.c */
enum softhca_ack softhca_wire_send(struct softhca_qp *qp,
				   struct softhca_dest *dest,
				   struct softhca_msg *msg);
bool softhca_wire_append(struct softhca_qp *qp, struct softhca_dest *dest,
			 struct softhca_msg *msg);
void softhca_wire_flush(struct softhca_qp *qp);
void softhca_wire_qp_modify(struct softhca_qp *qp,
			    const struct ib_qp_attr *attr, int mask);
void softhca_wire_rc_tx_work(struct work_struct *work);
void softhca_wire_rc_tx_drop(struct softhca_qp *qp);
enum hrtimer_restart softhca_wire_rd_timer(struct hrtimer *t);
int softhca_wire_atm_resize(struct softhca_qp *qp,
			    const struct ib_qp_attr *attr, int mask);
void softhca_wire_atm_free(struct softhca_qp *qp);

/* kverbs.c */
int softhca_kpost_send(struct softhca_qp *qp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr);
int softhca_kpost_recv(struct softhca_qp *qp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
int softhca_kpost_srq_recv(struct softhca_srq *srq, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr);
void softhca_kposted(struct softhca_qp *qp);
void softhca_kflush_work(struct work_struct *work);

/* mem.c */
int softhca_mr_pages_init(struct softhca_mr *mr);
void softhca_mr_pages_free(struct softhca_mr *mr);
struct softhca_mr *softhca_mr_get(struct softhca_dev *sdev, u32 key,
				  struct ib_pd *pd, int access, u64 addr,
				  u64 len);
void softhca_mr_put(struct softhca_mr *mr);
struct softhca_mr *softhca_mr_get_cached(struct softhca_mr **cache,
					 struct softhca_dev *sdev, u32 key,
					 struct ib_pd *pd, int access,
					 u64 addr, u64 len);
void softhca_mr_cache_drop(struct softhca_mr **cache);
int softhca_segs_resolve(struct softhca_dev *sdev, struct ib_pd *pd,
			 const struct softhca_sge *sge, u32 n, int access,
			 struct softhca_seg *segs, u32 *nseg,
			 struct softhca_mr **cache);
void softhca_segs_put(struct softhca_seg *segs, u32 nseg);
void softhca_cursor_init(struct softhca_cursor *c, struct softhca_seg *segs,
			 u32 nseg);
void softhca_cursor_skip(struct softhca_cursor *c, u64 len);
void softhca_copy(struct softhca_cursor *dst, struct softhca_cursor *src,
		  u32 len);
void softhca_copy_to_kernel(void *p, struct softhca_cursor *src, u32 len);
void softhca_copy_from_kernel(struct softhca_cursor *dst, const void *p,
			      u32 len);
int softhca_mem_atomic(struct softhca_mr *mr, u64 addr, u8 opcode,
		       u64 compare_add, u64 swap, u64 *orig);

/* fastreg.c */
u8 softhca_fastreg_reg(struct softhca_qp *qp, const struct softhca_send_wqe *w);
u8 softhca_fastreg_local_inv(struct softhca_qp *qp, u32 key);
int softhca_mr_invalidate(struct softhca_dev *sdev, struct ib_pd *pd, u32 key);
void *softhca_fr_map(const struct softhca_mr *mr, u64 addr, u32 left,
		     u32 *room);

/**
 * softhca_fr_read_lock - hold off the invalidation of a fast-reg MR's key
 * @mr: the MR, referenced
 * @key: the key an access was checked under, some time ago
 *
 * For a copy out of the MR long after the check (a READ answered by a
 * worker, wire_rc_resp.c): while the lock is held no invalidation of
 * @key completes, so the pages behind the registration cannot be given
 * back by their owner, or mapped again, under the copy.  Unlock with
 * softhca_fr_read_unlock() whatever it returns.  Context: BHs off (the
 * writer's side runs in softirq).
 *
 * Return: whether @key is still the MR's, i.e. whether the caller may
 * copy out of it now.
 */
static inline bool softhca_fr_read_lock(struct softhca_mr *mr, u32 key)
	__acquires(&mr->fr_lock)
{
	read_lock(&mr->fr_lock);
	return READ_ONCE(mr->key) == key;
}

static inline void softhca_fr_read_unlock(struct softhca_mr *mr)
	__releases(&mr->fr_lock)
{
	read_unlock(&mr->fr_lock);
}

/* mw.c */
int softhca_mw_bind_check(const struct softhca_mw *mw, const struct ib_pd *pd,
			  const struct softhca_mw_bind *b,
			  const struct softhca_mr *mr);
bool softhca_mw_allows(const struct softhca_mw *mw, u32 key,
		       const struct ib_pd *pd, u32 qpn, int access, u64 addr,
		       u64 len);
u8 softhca_mw_bind(struct softhca_qp *qp, const struct softhca_send_wqe *w);
struct softhca_mr *softhca_mw_rkey_get(struct softhca_dev *sdev, u32 key,
				       struct ib_pd *pd, u32 qpn, int access,
				       u64 addr, u64 len);
bool softhca_mw_still(const struct softhca_mw *mw, u32 key,
		      const struct softhca_mr *mr, u32 qpn, int access,
		      u64 addr, u64 len);
bool softhca_mw_recheck(struct softhca_dev *sdev, u32 key,
			const struct softhca_mr *mr, u32 qpn, int access,
			u64 addr, u64 len);
int softhca_key_invalidate(struct softhca_dev *sdev, struct ib_pd *pd,
			   u32 qpn, bool remote, u32 key);
void softhca_mw_qp_gone(struct softhca_qp *qp);

/**
 * softhca_rkey_get - find and reference the memory an rkey names
 * @sdev: the device of the key
 * @key: an MR's key or a memory window's
 * @pd: the PD of the QP the access arrived on
 * @qpn: that QP's number (type 2B windows answer their own QP only)
 * @access: IB_ACCESS_REMOTE_* needed
 * @addr: start of the range
 * @len: its length
 *
 * The responder's lookup, on the same-host and the wire paths alike.
 * Return: the referenced MR the access goes to, or NULL.
 */
static inline struct softhca_mr *
softhca_rkey_get(struct softhca_dev *sdev, u32 key, struct ib_pd *pd, u32 qpn,
		 int access, u64 addr, u64 len)
{
	if (softhca_key_is_mw(key))
		return softhca_mw_rkey_get(sdev, key, pd, qpn, access, addr,
					   len);
	return softhca_mr_get(sdev, key, pd, access, addr, len);
}

/* loopback.c */
void softhca_devs_index_add(struct softhca_dev *sdev);
void softhca_devs_index_del(struct softhca_dev *sdev);
u32 softhca_dev_by_gid(const union ib_gid *gid, const struct softhca_dev *from);
enum softhca_ack softhca_loopback_send(struct softhca_qp *qp,
				       struct softhca_dest *dest,
				       struct softhca_msg *msg);
int softhca_dest_get(struct softhca_qp *qp, const struct softhca_send_wqe *wqe,
		     struct softhca_dest *dest);
void softhca_dest_put(struct softhca_dest *dest);
struct softhca_qp *softhca_qp_get(struct softhca_dev *sdev, u32 qpn);
bool softhca_sender_active(u32 dev, u32 qpn, u32 dest_qpn);

/* RC and XRC: the transports that acknowledge (and retry) */
static inline bool softhca_qpt_reliable(enum ib_qp_type t)
{
	return t == IB_QPT_RC || t == IB_QPT_XRC_INI || t == IB_QPT_XRC_TGT;
}

/* Is @op (IB_UVERBS_WR_*) an atomic? */
static inline bool softhca_is_atomic(u8 op)
{
	return op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

static inline bool softhca_is_ud(enum ib_qp_type t)
{
	return t == IB_QPT_UD || t == IB_QPT_GSI;
}

/* resp.c */
enum softhca_ack softhca_resp_deliver(struct softhca_dest *dest,
				      struct softhca_msg *msg);
void softhca_resp_flush(struct softhca_qp *qp);
struct softhca_srq *softhca_xrc_srq_get(struct softhca_qp *qp, u32 srqn);
u32 softhca_rnr_timer_ns(u8 min_rnr_timer);

/* req.c */
int softhca_req_run(struct softhca_qp *qp, u32 budget);
int softhca_req_try_run(struct softhca_qp *qp, u32 budget);
void softhca_req_cache_drop(struct softhca_req_cache *cache);
int softhca_req_cars_alloc(struct softhca_qp *qp);
void softhca_req_cars_free(struct softhca_qp *qp);
enum hrtimer_restart softhca_req_retry_timer(struct hrtimer *t);
void softhca_req_wait_unwatched(struct softhca_qp *qp);
bool softhca_req_answered(struct softhca_qp *qp);

/*
 * Inline, from req.c: each poller pass asks both of every watched QP.
 */

/**
 * softhca_req_cache_stale - does a cache hold an object going away?
 * @cache: a poller's cache of one of its QPs (only that poller thread
 *	and the QP's destroy, once the poller let go, touch it)
 *
 * A destroy_qp or dereg_mr waits for the references a cache holds; the
 * poller asks this each pass, so the wait is one pass at most.
 */
static inline bool
softhca_req_cache_stale(const struct softhca_req_cache *cache)
{
	const struct softhca_dest *dest = &cache->dest;

	return (dest->qp && (READ_ONCE(dest->qp->dying) ||
			     (dest->mr_cache &&
			      READ_ONCE(dest->mr_cache->dead)))) ||
	       (cache->lmr && READ_ONCE(cache->lmr->dead));
}

/* Car @i of a train (req_train.c), 0 the first behind the current WQE. */
static inline struct softhca_req_car *softhca_req_car(struct softhca_qp *qp,
						      u32 i)
{
	return &qp->req.cars[(qp->req.car_head + i) % qp->req.max_cars];
}

/*
 * A train waiting for its answer has work (req_train.c) when a partial
 * ACK came (WQEs may retire) or, while it has room, a WQE was posted
 * behind those it took.
 */
static inline bool softhca_req_train_moved(struct softhca_qp *qp)
{
	struct softhca_wq_hdr *hdr = softhca_ring_hdr(&qp->sq.ring);

	if (!READ_ONCE(qp->req.train_open))
		return false;
	if (READ_ONCE(qp->wire.ack_moved) || READ_ONCE(qp->req.ahead_due))
		return true;
	return !READ_ONCE(qp->req.train_full) &&
	       READ_ONCE(hdr->prod) - READ_ONCE(qp->sq.cons) >
	       1U + READ_ONCE(qp->req.ncars);
}

/*
 * Is there work the poller could do now?  A lockless look (the caller
 * re-checks after publishing NEED_WAKEUP): a WQE in progress that is not
 * waiting for its retry timer or whose wait is over, a train that can
 * move while it waits, or WQEs posted beyond the consumer index.
 *
 * A wait that is over counts as work: its timer has fired, and the kick
 * it gave may already be spent (a release that kept the QP for it, then
 * a release of every QP on a contended CPU before the next pass ran it).
 * Given back then, the QP waited for a timer that would never fire
 * again, its WQEs stuck (softhca-perf send_bw --fork --events, RNR
 * retries every 10 us: 4 runs in 10 hung).  A wait not yet over still
 * has its timer to come: it fires no earlier than retry_until, and a
 * kick it gives during a release is seen under the poller's lock.  An
 * answer that arrived from the wire (RC's ACK or NAK) ends a wait too:
 * the completer sets ack_ready before it kicks.
 */
static inline bool softhca_req_pending(struct softhca_qp *qp)
{
	struct softhca_wq_hdr *hdr = softhca_ring_hdr(&qp->sq.ring);

	if (!qp->sq.ring.entries)
		return false;
	if (READ_ONCE(qp->req.busy))
		return !READ_ONCE(qp->req.retry_wait) ||
		       READ_ONCE(qp->wire.ack_ready) ||
		       softhca_req_train_moved(qp) ||
		       READ_ONCE(qp->req.retry_fired) ==
		       READ_ONCE(qp->req.retry_until);
	return READ_ONCE(hdr->prod) != READ_ONCE(qp->sq.cons) &&
	       READ_ONCE(qp->state) == IB_QPS_RTS;
}

/* engine.c: tunables (module parameters, main.c) */
struct softhca_engine_params {
	unsigned int pollers;	/* poller threads per device */
	int poller_cpu;		/* first CPU to bind pollers to, -1: none */
	unsigned int idle_us;	/* spin this long without work, then sleep */
	unsigned int contended_us; /* CPU shared this long: yield (0: never) */
	unsigned int qp_budget;	/* WQEs per QP per visit */
	unsigned int chunk;	/* bytes per chunk of a long message */
	unsigned int wire_pkts;	/* path-MTU packets per chunk on the wire */
	unsigned int tx_batch;	/* packets per GSO skb (net_batch.c), 1: none */
	unsigned int quiet_us;	/* a quiet train's wait for more (wire_rc.c) */
	unsigned int reorder_us; /* a READ's responses stalled (wire_read.c) */
	unsigned int tail_us;	/* a tail probe's least wait (wire_tail.c) */
};

extern struct softhca_engine_params softhca_engine;

/*
 * The local ACK timeout, 4.096 us << timeout (IBA 9.7.6.1.3).  A timeout
 * of 0 means "wait forever": there, the chunk is sent again as often as
 * with timeout 14 (67 ms), without a limit (req.c).
 */
#define SOFTHCA_TIMEOUT_FOREVER	14

static inline u64 softhca_ack_timeout_ns(u8 timeout)
{
	return 4096ULL << (timeout ?: SOFTHCA_TIMEOUT_FOREVER);
}

#endif /* SOFTHCA_ENGINE_H */
