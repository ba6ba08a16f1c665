/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: internal definitions shared by the driver's files.
 *
 * Ownership map (one concern per file):
 *   main.c      module init/exit, module parameters, rdma_link_ops
 *   device.c    device lifetime: create on "rdma link add", the device
 *               list, netdev events, unregister paths
 *   port.c      pure helpers deriving port attributes from a netdev
 *               (MTU, GUID, state); unit-tested by port_test.c
 *   query.c     query_device/query_port/query_pkey/port_immutable and
 *               the sysfs attributes
 *   ucontext.c  per-process context and the mmap entry plumbing
 *   pd.c        protection domains
 *   ring.h      kernel view of the shared rings: slots, index checks
 *   ring.c      ring allocation and mapping
 *   wqe.c       copy-then-validate of WQEs read from a ring (pure;
 *               unit-tested by wqe_test.c, ring_test.c)
 *   cq.c        completion queues: create/resize/destroy, the CQE
 *               producer, arming and completion events
 *   qp.c        QP create/query/destroy, QP numbers
 *   qp_state.c  modify_qp: the IBA state machine and its attributes,
 *               and the flush to WR_FLUSH_ERR on entering ERR
 *   srq.c       shared receive queues (basic and XRC), srq_limit
 *   mr.c        memory regions and keys
 *   fastreg.c   fast registration: alloc_mr, map_mr_sg, REG_MR, LOCAL_INV
 *   mw.c        memory windows (types 1 and 2B): alloc/dealloc, BIND_MW,
 *               invalidation, remote keys that name a window
 *   ah.c        address handles
 *   xrcd.c      XRC domains
 *   verbs.c     the ib_device_ops table
 *   engine.h    the data path: engine.c (pollers, doorbell), req.c
 *               (requester), resp.c (responder), mem.c (MR access),
 *               loopback.c (the same-host transport)
 */
#ifndef SOFTHCA_H
#define SOFTHCA_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "../../uapi/rdma/softhca-abi.h"
#include "net.h"
#include "ring.h"
#include "wire_seq.h"

#define SOFTHCA_DRV_NAME	"softhca"
#define SOFTHCA_DRV_VERSION	"0.1.0"
#define SOFTHCA_PORT		1

/*
 * Bytes a RoCEv2 packet spends on headers around its payload in the
 * worst case: IPv6 (40) + UDP (8) + BTH (12) + XRCETH (4) + RETH (16) +
 * ImmDt (4) + ICRC (4).  The active MTU is the largest IB MTU that fits
 * in the netdev MTU minus this.
 */
#define SOFTHCA_ROCE_OVERHEAD	88

/* Tunable limits; see main.c for the module parameters behind them. */
struct softhca_limits {
	unsigned int max_pd;
	unsigned int max_qp;
	unsigned int max_qp_wr;
	unsigned int max_sge;
	unsigned int max_cq;
	unsigned int max_cqe;
	unsigned int max_mr;
	unsigned int max_srq;
	unsigned int max_srq_wr;
	unsigned int max_inline;
	unsigned int max_ah;
	unsigned long max_mr_size;
};

/* Outstanding RDMA READ/atomic operations per QP, either direction. */
#define SOFTHCA_MAX_RD_ATOMIC	16
/* Pages a fast-reg MR may map (max_fast_reg_page_list_len). */
#define SOFTHCA_MAX_FAST_REG_PAGES	512
/* Largest QP, SRQ and MR numbers (24-bit on the wire). */
#define SOFTHCA_MAX_NUM		0xffffff
/*
 * The 24-bit index of a key: MRs take the lower half, memory windows
 * the upper one (mw.c), so a key says by itself which it names and an
 * MR lookup never finds a window.
 */
#define SOFTHCA_MR_INDEX_MAX	0x7fffff
#define SOFTHCA_MW_INDEX_MIN	0x800000
/* Memory windows per device (max_mw). */
#define SOFTHCA_MAX_MW		65536
/* The destination QP number of a multicast datagram: never a QP's. */
#define SOFTHCA_MCAST_QPN	0xffffff
/* Multicast groups per device, UD QPs per group (mcast.c). */
#define SOFTHCA_MAX_MCAST_GRP	1024
#define SOFTHCA_MAX_MCAST_QP	56

extern struct softhca_limits softhca_limits;

/**
 * struct softhca_dev - one software HCA bound to one netdev
 * @ibdev: core device; must stay first (ib_alloc_device requirement)
 * @ndev: the bound netdev, reference held for the device's lifetime
 * @ndev_tracker: tracker for that reference
 * @list: entry in the driver's device list, protected by softhca_devs_lock
 * @last_port_state: port state last reported as an event, protected by
 *	RTNL (only the netdev notifier updates it)
 * @registered: ib_register_device() succeeded (softhca_devs_lock)
 * @ndev_gone: the netdev unregistered before @registered was set
 *	(softhca_devs_lock); newlink then queues the unregistration
 * @num_pds: PDs allocated on this device, bounded by max_pd
 * @num_cqs, @num_qps, @num_srqs, @num_mrs, @num_ahs, @num_xrcds: object
 *	counts, each bounded by its limit
 * @qps: QP number -> struct softhca_qp (xa_lock; the engine looks QPs up
 *	here by number)
 * @srqs: SRQ number -> struct softhca_srq (XRC sends name an SRQ)
 * @mrs: key index (key >> 8) -> struct softhca_mr.  Its lock also
 *	guards every key's validity: an MR's key and fields, and a memory
 *	window's binding (mw.c)
 * @mws: key index -> struct softhca_mw (indices from
 *	SOFTHCA_MW_INDEX_MIN); looked up under the lock of @mrs
 * @num_mws: memory windows, bounded by SOFTHCA_MAX_MW
 * @ahs: ah_num -> struct softhca_ah (a UD WQE names its AH by number)
 * @key_gen: source of the low key byte of MR keys
 * @mcasts: multicast groups (mcast.c; RCU readers)
 * @mcast_lock: orders changes of @mcasts
 * @num_mcasts: groups in @mcasts (@mcast_lock)
 */
struct softhca_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head list;
	enum ib_port_state last_port_state;
	bool registered;
	bool ndev_gone;
	atomic_t num_pds;
	atomic_t num_cqs;
	atomic_t num_qps;
	atomic_t num_srqs;
	atomic_t num_mrs;
	atomic_t num_ahs;
	atomic_t num_xrcds;
	atomic_t num_mws;
	struct xarray qps;
	struct xarray srqs;
	struct xarray mrs;
	struct xarray mws;
	struct xarray ahs;
	u32 next_qpn;		/* xa_alloc_cyclic cursors, under the xa_lock */
	u32 next_srqn;
	u32 next_mr;
	u32 next_mw;
	atomic_t key_gen;
	struct softhca_poller *pollers;	/* the host's (engine.c) */
	unsigned int npollers;
	struct softhca_counters __percpu *counters;	/* counters.h */
	struct softhca_net __rcu *net;	/* net.c: on the wire (NULL: not) */
	struct list_head net_node;	/* in net->devs (net.c) */
	struct list_head mcasts;
	struct mutex mcast_lock;	/* orders changes of @mcasts */
	u32 num_mcasts;
};

/**
 * struct softhca_poller - one poller thread (engine.c), shared by the devices
 * @task: the thread
 * @lock: protects @queue, @sleeping and every QP's poll_state
 * @queue: QPs handed over and not yet adopted (qp->poll_node)
 * @active: QPs the thread watches; touched by the thread only
 * @sleeping: the thread sleeps and a hand-over must wake it
 * @contended_until: until then (ktime ns) doorbells run inline only
 * @spun: the thread's own clock (ns it spent looking, engine.c), by
 *	which its QPs' idle time is measured; touched by the thread only
 * @lent: its QPs are lent to the doorbell (a contended CPU, engine.c);
 *	touched by the thread only
 * @all_lent: while @lent, every QP it watches with a send queue was
 *	lent (none is one it must keep spinning for); the thread only
 * @bound: bound to a CPU by poller_cpu (it never moves itself)
 * @home: the CPUs it may run on (unbound), @elsewhere: scratch mask
 */
struct softhca_poller {
	struct task_struct *task;
	spinlock_t lock;	/* see above */
	struct list_head queue;
	struct list_head active;
	bool sleeping;
	u64 contended_until;
	u64 spun;
	bool lent;
	bool all_lent;
	bool bound;
	cpumask_var_t home;
	cpumask_var_t elsewhere;
};

static inline struct softhca_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct softhca_dev, ibdev);
}

struct softhca_ucontext {
	struct ib_ucontext ibuc;
	struct softhca_ctx_page *ctx_page;	/* vmalloc_user, kernel-written */
	struct rdma_user_mmap_entry *ctx_entry;
};

static inline struct softhca_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct softhca_ucontext, ibuc);
}

/**
 * struct softhca_mmap_entry - a kernel buffer a process may map
 * @rdma_entry: core entry; gives the mmap offset and refcounting
 * @vaddr: vmalloc_user() memory, freed in mmap_free when the last user
 *	(the object or a live VMA) lets go
 * @writable: whether user space may map it writable
 */
struct softhca_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *vaddr;
	bool writable;
};

struct softhca_pd {
	struct ib_pd ibpd;
};

static inline struct softhca_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct softhca_pd, ibpd);
}

/**
 * struct softhca_cq - a completion queue
 * @lock: protects everything below it; taken with IRQs off because
 *	completions may be produced from softirq context (the wire
 *	transport) as well as from process context
 * @ring: the CQE ring; the kernel only ever writes its slots
 * @prod: next CQE index to write (kernel-private; never read back from
 *	the ring)
 * @armed: IB_CQ_SOLICITED / IB_CQ_NEXT_COMP armed by req_notify_cq, 0
 *	when disarmed
 * @overrun: a completion found the CQ full; the CQ is dead
 * @comp_work: a kernel consumer's CQ: calls its completion handler in
 *	hard-IRQ context, as an HCA's interrupt would, outside every lock
 *	of the engine that produced the completion (cq.c)
 */
struct softhca_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* see above */
	struct softhca_ring ring;
	u32 prod;
	u32 kcons;		/* consumer index of kernel-owned CQs */
	u32 cons_seen;		/* consumer index when last read (cq_push) */
	int armed;
	u32 arm_seq_done;	/* last mapped arm request that fired */
	bool overrun;
	struct irq_work comp_work;
};

static inline struct softhca_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct softhca_cq, ibcq);
}

/**
 * struct softhca_wq - kernel-private state of one work queue (SQ or RQ)
 * @ring: the shared ring (hostile: see ring.h)
 * @cons: kernel copy of the consumer index it publishes (SQ: retired;
 *	RQ: taken)
 * @max_sge: SGEs per WQE this queue was created for
 * @max_inline: inline bytes per send WQE (SQ only)
 * @lock: protects @cons and the ring's kernel-written header fields
 * @post_lock: a kernel consumer's ring: serialises its producers
 *	(kverbs.c); IRQ-safe, nests in no softhca lock and takes none
 */
struct softhca_wq {
	struct softhca_ring ring;
	u32 cons;
	u32 prod_seen;		/* RQ/SRQ: prod when last read (resp.c) */
	u32 max_sge;
	u32 max_inline;
	spinlock_t lock;	/* see above */
	spinlock_t post_lock;	/* see above */
};

/*
 * Lock classes of the queue locks.  One spin_lock_init() site would put
 * every queue lock in one lockdep class, and the data path nests a
 * sender's send queue lock around its receiver's receive queue lock:
 * lockdep would call that recursive locking.  Send queues, receive
 * queues and SRQs are three classes (engine.h gives their order).
 */
extern struct lock_class_key softhca_sq_lock_key;
extern struct lock_class_key softhca_rq_lock_key;
extern struct lock_class_key softhca_srq_lock_key;

/* A queue's kernel state before its ring exists (QP or SRQ create). */
static inline void softhca_wq_init(struct softhca_wq *wq,
				   struct lock_class_key *key)
{
	spin_lock_init(&wq->lock);
	lockdep_set_class(&wq->lock, key);
	spin_lock_init(&wq->post_lock);
	wq->cons = 0;
	wq->prod_seen = 0;
}

struct softhca_seg;
struct softhca_mr;

struct softhca_transport;
struct softhca_net;
struct softhca_counters;

/*
 * Where a message goes: the result of the lookup (loopback.c).  @tp is
 * how it gets there: the same-host transport, with @qp and @sdev the
 * referenced receiving QP and its device; or the wire, with @qp NULL.
 */
struct softhca_dest {
	const struct softhca_transport *tp;	/* NULL: nowhere */
	struct softhca_qp *qp;	/* referenced */
	struct softhca_dev *sdev;	/* registration held (ib_device_try_get) */
	union ib_gid sgid;	/* UD, wire: the sender's GID (GRH, IP source) */
	union ib_gid dgid;	/* UD, wire: the destination GID */
	u32 dev;		/* @sdev's index plus one */
	u32 qpn;
	u32 qkey;
	struct softhca_mr *mr_cache;	/* keys on @sdev (mem.c), referenced */
};

/**
 * struct softhca_req_cache - lookups kept from one WQE to the next
 * @dest: the destination of the last message (references held; @dest.qp
 *	NULL when none)
 * @lmr: the last local MR looked up, referenced (NULL when none)
 */
struct softhca_req_cache {
	struct softhca_dest dest;
	struct softhca_mr *lmr;
};

/**
 * struct softhca_req_car - a WQE taken behind the current one (a train,
 *	req_train.c)
 * @wqe: its kernel copy (sq stride bytes), copied once and checked
 * @len: its message length (0 when @err)
 * @err: what checking the copy found (0, or the negative errno it
 *	completes with when its turn comes)
 * @sent: it was put on the wire once (sent again: retransmissions)
 */
struct softhca_req_car {
	struct softhca_send_wqe *wqe;
	u64 len;
	int err;
	bool sent;
};

/**
 * struct softhca_req - requester state of a send queue (req.c), under
 *	the SQ's lock; kernel memory only
 * @wqe: the kernel copy of the current WQE (sq stride bytes)
 * @segs: its SGEs once resolved (max_sge + 1 entries)
 * @len: its message length
 * @done: bytes of it acknowledged so far
 * @busy: @wqe is taken and not retired
 * @retry_wait: the current WQE waits until @retry_until (local_clock()) to
 *	send its next chunk again: after an RNR NAK, or when nobody
 *	answered (the local ACK timeout); the QP's poller ends the wait
 *	while it watches the QP, qp->retry_timer otherwise (req.c)
 * @retry_fired: the @retry_until whose wait the poller or qp->retry_timer
 *	ended (stored before the QP runs or is kicked): the wait is over
 *	when the two are equal, a look that reads no clock (a guest's HPET
 *	read is a device access, and the poller looks at a waiting train
 *	each pass)
 * @retry_armed: when qp->retry_timer, while queued, fires (local_clock()):
 *	a wait that ends no earlier leaves it as it is (req.c)
 * @rnr_left: RNR retries left (7: no limit)
 * @retry_left: retries left when nobody answers (retry_cnt; a timeout
 *	of 0 means no limit)
 * @drain_notify: raise SQ_DRAINED when the WQE in flight retires
 * @ud_max: largest UD message (the port MTU when the QP was created)
 * @wire_sent: packets put on the wire (wire.c: a UD packet's PSN is
 *	the QP's sq_psn plus this)
 * @wire_chunk: RC on the wire: the bytes of the chunk in flight (0:
 *	none), so that the answer applies to what was sent
 * @wire_ahead: RC on the wire: the bytes of @wqe's next chunk, sent
 *	behind @wire_chunk before its answer came (0: none; req_train.c)
 * @ahead_due: RC on the wire: @wqe's next chunk goes behind @wire_chunk
 *	on the requester's next visit if the answer has not come by then
 *	(req_train.c); read without the lock by the engine
 * @cache: lookups the QP's poller keeps between its runs (req.c)
 * @cars: RC and XRC_INI: WQEs taken behind @wqe for a train
 *	(req_train.c), a ring of @max_cars entries from @car_head, in ring
 *	order (allocated with the QP; softhca_req_car() indexes it)
 * @car_wqes: the cars' WQE copies, one allocation (@max_cars strides)
 * @max_cars: the most a train takes behind its first WQE
 * @car_head: the entry of @cars that holds the first car
 * @ncars: WQEs taken into @cars, not retired
 * @cars_sent: the first of them that are in flight with @wqe's last
 *	chunk, answered with it (0: no train in flight)
 * @train_open: the chunk in flight ends its SEND or WRITE (and the
 *	transport can append): WQEs posted while it waits may join its
 *	train (req_train.c); read without the lock by the engine
 * @train_full: the train took what it could (no room, or a WQE that
 *	cannot ride): only an ACK that lets WQEs retire may change that;
 *	read without the lock by the engine
 * @quiet_wait: the retry wait is a quiet train's (req_train.c): when it
 *	ends unanswered the train asks for its answer (a probe) instead of
 *	going again; read without the lock by the engine
 * @tail_wait: the retry wait ends a probe timeout after what is in
 *	flight went (wire_tail.c): when it ends unanswered what is in
 *	flight goes again as a tail probe, no retry
 * @answer_wait: the retry wait is for the answer to what is in flight
 *	(softhca_req_ack_wait(), quiet or not), not an RNR or timeout
 *	pause: the poller keeps watching the QP while it is idle for less
 *	than its idle budget (engine.c); read without the lock there
 */
struct softhca_req {
	struct softhca_send_wqe *wqe;
	struct softhca_seg *segs;
	u64 len;
	u64 done;
	u64 retry_until;
	u64 retry_fired;
	u64 retry_armed;
	bool busy;
	bool retry_wait;
	bool drain_notify;
	u8 rnr_left;
	u8 retry_left;
	u32 ud_max;
	u32 wire_sent;
	u32 wire_chunk;
	u32 wire_ahead;
	bool ahead_due;
	struct softhca_req_cache cache;
	struct softhca_req_car *cars;
	void *car_wqes;
	u8 max_cars;
	u8 car_head;
	u8 ncars;
	u8 cars_sent;
	bool train_open;
	bool train_full;
	bool quiet_wait;
	bool tail_wait;
	bool answer_wait;
};

/**
 * struct softhca_resp - responder state of a QP (resp.c)
 * @lock: serialises messages arriving at the QP
 * @wqe: the kernel copy of the receive WQE being filled
 * @segs: its SGEs once resolved
 * @stride, @max_sge: bounds of the queue @wqe came from
 * @busy: @wqe holds a WQE taken for a message not finished yet
 * @offset: bytes of that message placed so far
 * @srqn: XRC_TGT: the XRC SRQ @wqe came from
 * @owner_dev, @owner_qpn: XRC_TGT: the device (ib_core index plus one,
 *	0: another host) and number of the XRC_INI QP whose message @wqe is
 *	being filled by (several INIs may send through one XRC_TGT; see
 *	resp.c)
 */
struct softhca_resp {
	spinlock_t lock;	/* see above */
	struct softhca_recv_wqe *wqe;
	struct softhca_seg *segs;
	u32 stride;
	u32 max_sge;
	bool busy;
	u64 offset;
	u32 srqn;
	u32 owner_dev;
	u32 owner_qpn;
};

/**
 * struct softhca_rtt - a smoothed round trip (wire_tail.c)
 * @srtt: the smoothed time, in ns (0: none measured yet)
 * @var: the smoothed deviation of the times from @srtt, in ns
 */
struct softhca_rtt {
	u64 srtt;
	u64 var;
};

/**
 * struct softhca_wire_qp - a connected QP's RoCEv2 state (wire_conn.c,
 *	wire_resp.c), set from its attributes by modify_qp, so that no
 *	packet recomputes it; kernel memory only
 * @sgid, @dgid: the path's GIDs (the AV given at RTR): the IP source
 *	and destination of what it sends (sq.lock)
 * @sport: the UDP source port of its packets (sq.lock)
 * @mtu: the path MTU in bytes (sq.lock)
 * @sq_psn: the PSN of the next packet it sends (sq.lock)
 * @rx_lock: serialises the packets it receives (softirq) against each
 *	other and against modify_qp; taken before resp.lock
 * @rx: the receive sequence (rx_lock)
 * @rx_sgid, @rx_dgid, @rx_mtu: the path as the receiver checks it: a
 *	packet must come from @rx_dgid to @rx_sgid (rx_lock)
 * @wr_va, @wr_rkey, @wr_len, @wr_off: the RDMA WRITE being received:
 *	its RETH (checked once, at FIRST) and the bytes placed (rx_lock)
 * @rc: RC: the responder's receive sequence (rx_lock)
 * @atm: RC responder: the original values of the last max_dest_rd_atomic
 *	atomics, for their duplicates (wire_atomic.c); the records are
 *	allocated by modify_qp and freed by destroy_qp (rx_lock)
 * @ack_lock: RC: the requester's chunk in flight and its answer, shared
 *	by the requester (sq.lock held, BHs off) and the completer
 *	(softirq); taken after sq.lock, never with rx_lock
 * @ack_first, @ack_next: the PSNs of the chunk in flight, [first, next)
 * @ack_inflight: a chunk is in flight, waiting for its answer
 * @ack_cars: whole messages appended behind it (a train, req_train.c)
 * @ack_ready: its answer arrived (@ack_answer, @ack_rnr): read without
 *	the lock by the engine to end the requester's wait early
 * @ack_answer: an enum softhca_ack: the answer to hand the requester
 * @ack_rnr: with SOFTHCA_RNR, the responder's RNR timer code
 * @ack_pkts: packets at the chunk's start the peer is known to have
 *	taken (partial ACKs, a NAK's PSN)
 * @ack_moved: a partial ACK raised @ack_pkts since the requester last
 *	looked (softhca_wire_rc_taken()): WQEs of a train may retire;
 *	read without the lock by the engine
 * @rnr_echo, @rnr_echo_psn: an RNR NAK for @rnr_echo_psn came with
 *	packets sent behind it: a sequence NAK for that PSN may follow, the
 *	responder's answer to those packets (wire_rc.c) (ack_lock)
 * @resend: the next chunk sent is a retransmission (counted)
 * @ack_quiet: the last packet in flight asked for no answer (quiet
 *	messages, wire_rc.c) (sq.lock)
 * @quiet_run: quiet messages sent since the last one that asked (sq.lock)
 * @ask_next: the PSN after the last packet sent asking for an answer
 *	(AckReq), while @asked (sq.lock): an answer asked for and not yet in
 *	(softhca_wire_rc_quiet())
 * @ack_read: the chunk in flight is an RDMA READ: its answer is READ
 *	RESPONSE packets, queued on @rd_q
 * @ack_atomic: the chunk in flight is an atomic: its answer is an
 *	ATOMIC ACKNOWLEDGE, whose original value the completer keeps in
 *	@atm_orig for the requester's next visit to write into its buffer
 * @atm_orig: see @ack_atomic (ack_lock)
 * @rd_next: the PSN of the READ RESPONSE expected next
 * @rd_len, @rd_mtu: the bytes the READ asked for, the path MTU it used
 * @rd_mid: the READ in flight resumes a partly answered one from the
 *	PSN of its first response missing: its answer continues the
 *	original responses (MIDDLE..., LAST)
 * @rd_resume: the next READ sent is such a resumption (sq.lock)
 * @tx_lock: RC responder: guards @tx_jobs (softirq and the worker)
 * @tx_jobs: answers the responder left to @tx_work, in order: a long
 *	READ's responses, and every answer behind one (an answer never
 *	overtakes an earlier one)
 * @tx_work: sends @tx_jobs in process context (wire_rc_resp.c)
 * @rd_q: the READ RESPONSE packets taken, in PSN order, at most the
 *	chunk's (its PSN range bounds them); the completer queues them,
 *	the requester's next visit copies their payload into its buffer
 *	(it holds the local MR references then, the completer never does)
 * @rd_ooo: READ RESPONSE packets ahead of @rd_next, held in PSN order,
 *	one a PSN, within the chunk's range; they move to @rd_q when the
 *	ones before them come, and stay across a READ sent again for the
 *	chunk's rest (ack_lock)
 * @rd_last: the response at the chunk's last PSN came in this
 *	transmission (ack_lock)
 * @rd_timer: the READ's reorder timer (wire_read.c): it looks whether
 *	the responses stalled with some missing, or none came
 * @rd_watch: @rd_timer watches this transmission (ack_lock)
 * @rd_seen: @rd_next when the timer was armed or last looked (ack_lock)
 * @rd_due: when the timer's look is due (the monotonic clock; ack_lock)
 * @rd_came: a response of this transmission came (ack_lock)
 * @rd_timed: @rd_timer watches this transmission from when it was sent,
 *	at @rd_sent (ack_lock)
 * @rd_sample: ... and it is a first transmission: the time to its first
 *	response goes into @rd_srtt (ack_lock)
 * @rd_rtt: the smoothed time from a watched READ's sending to its first
 *	response and its deviation (ack_lock): a probe waits twice the
 *	first, or it plus four times the second, at least
 * @rd_probes: early resends of a READ nothing answered in order since
 *	(ack_lock): each doubles the reorder window; after
 *	SOFTHCA_RD_PROBES, the next waits the local ACK timeout
 * @rd_probe: the resend recorded is such a probe (ack_lock)
 * @ack_rtt: the smoothed time from the sending of a packet that asked
 *	(AckReq) to its answer, and its deviation, for ranges in flight of
 *	16 KiB at most (wire_tail.c; ack_lock)
 * @ack_rtt_long: the same for longer ranges (ack_lock)
 * @ack_sent: when the last packet in flight that asked went
 *	(local_clock()), while @ack_timed (ack_lock)
 * @ack_timed: the answer to the range in flight goes into @ack_rtt: its
 *	last packet asked and went for the first time (ack_lock)
 * @tail_probe: the resend recorded is a tail probe (ack_lock)
 * @tail_probes: tail probes sent since the requester last took an
 *	answer: each waits twice as long as the one before (sq.lock)
 * @txb: the requester's packets not yet sent (net_batch.c): empty
 *	whenever sq.lock is free (sq.lock)
 * @route: the route its packets took last, requests and answers alike
 *	(net.h)
 */
struct softhca_wire_qp {
	union ib_gid sgid;
	union ib_gid dgid;
	__be16 sport;
	u32 mtu;
	u32 sq_psn;
	spinlock_t rx_lock;	/* see above */
	struct softhca_seq_rx rx;
	union ib_gid rx_sgid;
	union ib_gid rx_dgid;
	u32 rx_mtu;
	u64 wr_va;
	u32 wr_rkey;
	u32 wr_len;
	u32 wr_off;
	struct softhca_rc_rx rc;
	struct softhca_rc_atm atm;
	spinlock_t ack_lock;	/* see above */
	u32 ack_first;
	u32 ack_next;
	bool ack_inflight;
	u8 ack_cars;
	bool ack_ready;
	u8 ack_answer;
	u8 ack_rnr;
	u32 ack_pkts;
	bool ack_moved;
	bool rnr_echo;
	u32 rnr_echo_psn;
	bool resend;
	bool ack_quiet;
	u8 quiet_run;
	bool asked;
	u32 ask_next;
	bool ack_read;
	bool ack_atomic;
	u64 atm_orig;
	u32 rd_next;
	u32 rd_len;
	u32 rd_mtu;
	bool rd_mid;
	bool rd_resume;
	struct sk_buff_head rd_q;
	struct sk_buff_head rd_ooo;
	bool rd_last;
	struct hrtimer rd_timer;
	bool rd_watch;
	u32 rd_seen;
	ktime_t rd_due;
	bool rd_came;
	bool rd_timed;
	bool rd_sample;
	ktime_t rd_sent;
	struct softhca_rtt rd_rtt;
	u8 rd_probes;
	bool rd_probe;
	struct softhca_rtt ack_rtt;
	struct softhca_rtt ack_rtt_long;
	u64 ack_sent;
	bool ack_timed;
	bool tail_probe;
	u8 tail_probes;
	spinlock_t tx_lock;	/* see above */
	struct list_head tx_jobs;
	struct work_struct tx_work;
	struct softhca_txb txb;
	struct softhca_route route;
};

/**
 * struct softhca_qp - a queue pair
 * @state_lock: serialises modify_qp, query_qp and the flush; protects
 *	@attr and @state writes (the engine reads @state with READ_ONCE)
 * @attr: every attribute modify_qp accepted, as query_qp returns it
 * @state: current IBA state
 * @sq, @rq: the queues (an absent queue has ring.entries == 0)
 * @srq: the SRQ the QP receives from, or NULL
 * @xrcd: XRC_TGT only: the domain its SRQs must belong to
 * @dying: destroy_qp has begun: the engine lets go of the QP
 * @ref: held by the QP itself, by each poller list it is on and by a
 *	sender delivering to it; destroy_qp waits for @released
 * @dest_dev: RC/UC: index + 1 of the device holding the peer (0: none
 *	on this host), from the path given at RTR
 * @poller: the poller thread that watches it when asked (engine.c)
 * @poll_node, @poll_state: its place with the poller (poller->lock)
 * @poll_kicked: kicked while the poller watched it: the poller must
 *	look at it once more before giving it back (poller->lock)
 * @last_work: when the poller last found work on it (poller->spun)
 * @idle_shift: the poller keeps watching it poll_idle_us << @idle_shift
 *	without work (engine.c: adaptive; written by doorbells only)
 * @idle_released: when the poller last gave it back for being idle, 0
 *	if its last release had another reason (written by the poller)
 * @req, @resp: requester and responder state
 * @wire: connected QPs: the RoCEv2 path and sequence state
 * @retry_timer: ends a retry wait (req.c)
 * @kflush_work: a kernel consumer's QP: flushes what was posted in ERR
 *	(kverbs.c)
 */
struct softhca_qp {
	struct ib_qp ibqp;
	struct mutex state_lock;	/* see above */
	struct ib_qp_attr attr;
	enum ib_qp_state state;
	enum ib_sig_type sq_sig_type;
	struct softhca_wq sq;
	struct softhca_wq rq;
	struct softhca_srq *srq;
	struct ib_xrcd *xrcd;
	bool is_user;
	bool dying;
	refcount_t ref;
	struct completion released;
	u32 dest_dev;
	struct softhca_poller *poller;
	struct list_head poll_node;
	int poll_state;
	bool poll_kicked;
	u64 last_work;
	unsigned int idle_shift;
	u64 idle_released;
	struct softhca_req req;
	struct softhca_resp resp;
	struct softhca_wire_qp wire;
	struct hrtimer retry_timer;
	struct work_struct kflush_work;
};

static inline struct softhca_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct softhca_qp, ibqp);
}

/**
 * struct softhca_srq - a shared receive queue
 * @rq: the receive ring and its kernel-private consumer index
 * @limit: srq_limit; 0 when disarmed (it disarms when the event fires)
 * @srqn: SRQ number (XRC sends address it)
 * @ref: held by the SRQ itself and by the engine while an XRC message is
 *	delivered into it (found by number, one visit at a time);
 *	destroy_srq waits for @released.  A basic SRQ is pinned by its QPs
 *	(ib_core's usecnt) and needs no reference.
 */
struct softhca_srq {
	struct ib_srq ibsrq;
	struct softhca_wq rq;
	u32 limit;
	u32 srqn;
	refcount_t ref;
	struct completion released;
};

static inline struct softhca_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct softhca_srq, ibsrq);
}

/**
 * struct softhca_mr - a memory region
 * @umem: pinned user pages, NULL for a DMA MR (kernel address space)
 * @access: IB_ACCESS_* granted
 * @iova, @length: the range the keys cover
 * @ref: the MR's own and the engine's (a run, or a QP's lookup cache);
 *	dereg waits for @released
 * @dead: dereg has begun: cached references let go of it (req.c)
 * @pages, @npages: the pinned pages in order (user MRs)
 * @page_off: offset of @iova in the first page (user and fast-reg MRs)
 * @key: the key the engine accepts; 0 while a fast-reg MR is invalid.
 *	It is not ibmr.lkey: ib_update_fast_reg_key() changes that one in
 *	the consumer's hands before its REG_MR executes.
 * @fr: a fast-registration MR (alloc_mr), see fastreg.c; then:
 * @fr_key: the key of its last registration (what LOCAL_INV names)
 * @fr_pages: @fr_max page addresses: map_mr_sg fills them, REG_MR uses
 *	them (kernel virtual addresses: ib_core's virtual DMA)
 * @fr_npages, @fr_shift: what map_mr_sg mapped, the page size's log2
 * @fr_map_off: offset of ibmr.iova in the first page, as mapped
 * @fr_lock: readers: a copy out of the registration after its key was
 *	checked (softhca_fr_read_lock()); writer: invalidation, which so
 *	never completes under such a copy
 * @page_shift: a fast-reg MR's registered page size, log2
 * @mw_bound: memory windows bound to the MR (mw.c), under the lock of
 *	sdev->mrs; dereg_mr fails with EBUSY while it is not zero
 */
struct softhca_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	int access;
	u64 iova;
	u64 length;
	refcount_t ref;
	struct completion released;
	bool dead;
	struct page **pages;
	size_t npages;
	u32 page_off;
	u32 key;
	bool fr;
	u32 fr_key;
	u64 *fr_pages;
	u32 fr_max;
	u32 fr_npages;
	u32 fr_shift;
	u32 fr_map_off;
	rwlock_t fr_lock;
	u32 page_shift;
	u32 mw_bound;
};

static inline struct softhca_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct softhca_mr, ibmr);
}

/**
 * struct softhca_mw - a memory window (mw.c)
 * @ibmw: core object; ibmw.rkey is the key alloc_mw gave it
 * @index: its key index (key >> 8), fixed; its entry in sdev->mws
 *
 * The binding, written and read under the lock of sdev->mrs only:
 * @key: the key remote accesses must carry; 0 while not bound
 * @mr: the MR it is bound to (counted in its @mw_bound), or NULL
 * @addr, @length: the bound range, in @mr's addresses
 * @access: IB_ACCESS_REMOTE_* it grants
 * @qpn: type 2B: the QP that bound it, the only one it answers
 */
struct softhca_mw {
	struct ib_mw ibmw;
	u32 index;
	u32 key;
	struct softhca_mr *mr;
	u64 addr;
	u64 length;
	int access;
	u32 qpn;
};

static inline struct softhca_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct softhca_mw, ibmw);
}

/* Does @key name a memory window (not an MR)?  See SOFTHCA_MW_INDEX_MIN. */
static inline bool softhca_key_is_mw(u32 key)
{
	return (key >> 8) >= SOFTHCA_MW_INDEX_MIN;
}

/* A BIND_MW WQE's request, decoded from its kernel copy (mw.c). */
struct softhca_mw_bind {
	u32 key;
	u32 lkey;
	u64 addr;
	u64 length;
	int access;
};

/**
 * struct softhca_ah - an address handle (RoCEv2: the resolved L2/L3 path)
 * @attr: the attributes it was created with
 * @ah_num: the number user WQEs name it by
 * @dest_dev: index + 1 of the softhca device owning the destination GID
 *	(0: not on this host)
 * @sgid: the source GID (the receiver's GRH carries it)
 */
struct softhca_ah {
	struct ib_ah ibah;
	struct rdma_ah_attr attr;
	u32 ah_num;
	u32 dest_dev;
	union ib_gid sgid;
};

static inline struct softhca_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct softhca_ah, ibah);
}

struct softhca_xrcd {
	struct ib_xrcd ibxrcd;
};

/* port.c: pure helpers, no device state */
enum ib_mtu softhca_mtu_from_netdev(unsigned int netdev_mtu);
enum ib_port_state softhca_port_state(bool running, bool carrier,
				      unsigned int netdev_mtu);
u8 softhca_phys_state(bool running, bool carrier);
void softhca_guid_from_mac(const u8 *mac, __be64 *guid);

/* device.c */
extern struct mutex softhca_devs_lock;
int softhca_newlink(const char *ibdev_name, struct net_device *ndev);
void softhca_remove_all(void);
int softhca_netdev_notifier_register(void);
void softhca_netdev_notifier_unregister(void);
void softhca_dealloc_driver(struct ib_device *ibdev);

/* query.c */
int softhca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			 struct ib_udata *udata);
int softhca_query_port(struct ib_device *ibdev, u32 port,
		       struct ib_port_attr *attr);
int softhca_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
		       u16 *pkey);
int softhca_get_port_immutable(struct ib_device *ibdev, u32 port,
			       struct ib_port_immutable *immutable);
void softhca_get_dev_fw_str(struct ib_device *ibdev, char *str);
extern const struct attribute_group softhca_attr_group;

/* restrack.c */
int softhca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int softhca_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int softhca_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

/* ucontext.c */
int softhca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void softhca_dealloc_ucontext(struct ib_ucontext *ibuc);
void softhca_disassociate_ucontext(struct ib_ucontext *ibuc);
int softhca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void softhca_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
struct softhca_mmap_entry *softhca_mmap_insert(struct softhca_ucontext *uc,
					       void *vaddr, size_t size,
					       bool writable, u64 *offset);

/* pd.c */
int softhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int softhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* ring.c */
int softhca_ring_alloc(struct softhca_ring *ring, struct ib_udata *udata,
		       u32 entries, u32 stride);
void softhca_ring_free(struct softhca_ring *ring);

/* cq.c */
int softhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata);
int softhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int softhca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int softhca_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int softhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int softhca_cq_push(struct softhca_cq *cq, const struct softhca_cqe *cqe,
		    bool solicited);

/* qp.c */
int softhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata);
int softhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init);
int softhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/* mcast.c */
int softhca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int softhca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void softhca_mcast_qp_gone(struct softhca_qp *qp);
void softhca_mcast_free_all(struct softhca_dev *sdev);
u32 softhca_mcast_members(struct softhca_dev *sdev, const union ib_gid *gid,
			  u32 *qpn, u32 max);
int softhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr);
int softhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);

/* qp_state.c */
int softhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_udata *udata);
void softhca_qp_flush(struct softhca_qp *qp);
void softhca_qp_fatal(struct softhca_qp *qp);
void softhca_qp_error(struct softhca_qp *qp, int event);
void softhca_qp_event(struct softhca_qp *qp, enum ib_event_type type);

static inline void softhca_qp_put(struct softhca_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/* engine.c */
void softhca_engine_kick(struct softhca_qp *qp);
bool softhca_engine_watches(const struct softhca_qp *qp);
bool softhca_engine_answer(struct softhca_qp *qp);
void softhca_engine_detach(struct softhca_qp *qp);
void softhca_engine_doorbell(struct softhca_qp *qp);
int softhca_engine_start(struct softhca_dev *sdev);
void softhca_engine_stop(struct softhca_dev *sdev);

/* srq.c */
int softhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata);
int softhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata);
int softhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int softhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int softhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr);
void softhca_srq_check_limit(struct softhca_srq *srq);
struct softhca_srq *softhca_srq_get(struct softhca_dev *sdev, u32 srqn);
void softhca_srq_put(struct softhca_srq *srq);

/* mr.c */
struct ib_mr *softhca_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *softhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata);
struct ib_mr *softhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				    u64 length, u64 iova, int access,
				    struct ib_pd *ibpd, struct ib_udata *udata);
int softhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int softhca_mr_check_access(int access);
struct softhca_mr *softhca_mr_alloc(struct softhca_dev *sdev);
struct ib_mr *softhca_mr_finish(struct softhca_dev *sdev, struct softhca_mr *mr,
				int err);

/* mw.c */
int softhca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int softhca_dealloc_mw(struct ib_mw *ibmw);

/* fastreg.c */
struct ib_mr *softhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg);
int softhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		      unsigned int *sg_offset);

/* ah.c */
int softhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		      struct ib_udata *udata);
int softhca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int softhca_destroy_ah(struct ib_ah *ibah, u32 flags);

/* xrcd.c */
int softhca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int softhca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);

/* Shared by the verbs: driver request data must be empty. */
static inline int softhca_check_udata_in(struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}

/*
 * A create verb of a process: empty request, and room for the @resp_len
 * bytes of driver response.  Kernel callers (no udata) pass trivially.
 */
static inline int softhca_check_udata(struct ib_udata *udata, size_t resp_len)
{
	int err = softhca_check_udata_in(udata);

	if (err)
		return err;
	if (udata && udata->outlen < resp_len)
		return -EINVAL;
	return 0;
}

/* Take one unit of a per-device object count bounded by @limit. */
static inline bool softhca_count_get(atomic_t *count, unsigned int limit)
{
	if (atomic_inc_return(count) > limit) {
		atomic_dec(count);
		return false;
	}
	return true;
}

/* verbs.c */
extern const struct ib_device_ops softhca_dev_ops;

#endif /* SOFTHCA_H */
