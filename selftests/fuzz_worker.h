/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The verbs fuzzer's workers (fuzz.c): the objects a worker holds on each
 * device, the memory it registers, and the arguments its operations draw
 * from their PRNG, valid or not.  After fuzz.h and the library's
 * internal.h (the operations reach into its rings).
 */
#ifndef SOFTHCA_SELFTEST_FUZZ_WORKER_H
#define SOFTHCA_SELFTEST_FUZZ_WORKER_H

#include <fcntl.h>
#include <sys/mman.h>

#define ARENA		(4 << 20)
#define MAXSGE		34
#define NOOP		(-1)
#define RW		(PROT_READ | PROT_WRITE)
#define BK_QP		16		/* + QP type: a published QPN */
#define K_CH		NKIND		/* completion channels: slots, no handle */

static uint8_t *arena;			/* the memory valid MRs cover */
static uint8_t *ro, *guard, *shm;	/* read-only, PROT_NONE, a shared file */
static int xfile[2];			/* the shared XRC domains' files */
static char xpath[2][64];

struct dev {
	struct ibv_context *ctx;
	uint32_t gen;			/* S->link_gen when opened */
	int dead;			/* EIO after its link was deleted */
	union ibv_gid gid;
	struct ibv_pd *pd[2];
	struct ibv_cq *cq[4];
	struct ibv_mr *mr[6];
	struct ibv_srq *srq[3];
	struct ibv_qp *qp[8];
	struct ibv_ah *ah[3];
	struct ibv_xrcd *xrcd[2];	/* xrcd[k] opened on xfile[k] (mostly) */
	struct ibv_comp_channel *ch[2];
	struct { int kind; uint32_t h; } raw[16];	/* made by raw commands */
	uint32_t stale[16];		/* handles of destroyed objects */
	unsigned int nraw, nstale, noffs;
	uint64_t offs[8];		/* mmap offsets from raw responses */
	struct { void *p; size_t len; } map[4];	/* our mappings of them */
};
static struct dev D[2];
/* The side thread reads D[]'s contexts under it; opens and closes write. */
static pthread_rwlock_t dev_lock;
static uint32_t live_h[2][32];		/* the handles in D[d]'s slots, or 0 */
static void *grave[256];		/* what failed to go at close: reachable */
static unsigned int ngrave;

/* One operation: its PRNG, device, and what its arguments allow. */
struct op {
	uint64_t r;
	int arg;			/* from the table */
	int dev;
	struct dev *d;
	int devs;			/* devices reached, bits */
	int valid;			/* all arguments valid: it must succeed */
	int badptr;			/* a bad pointer passed: EFAULT is fine */
	const char *broken;		/* a check of the op's own failed */
	struct ibv_pd *pd;		/* SGEs mostly name MRs of this PD */
	int side;			/* run by the side thread (fuzz.c) */
	char *desc;
};

#define R(n)		rnd(&o->r, (n))
#define P(pct)		chance(&o->r, (pct))
#define W64()		rnd64(&o->r)
#define WILD()		wild(&o->r)
#define DESC(...)	desc(o, __VA_ARGS__)
#define LIVE(d, a)	pick(o, (void **)(d)->a, ARRAY_SIZE((d)->a), 1)
#define EMPTY(d, a)	pick(o, (void **)(d)->a, ARRAY_SIZE((d)->a), 0)

/* Add to the description of the operation under way (shared memory). */
__attribute__((format(printf, 2, 3)))
static void desc(struct op *o, const char *fmt, ...)
{
	size_t l = strlen(o->desc);
	va_list ap;

	if (l && l + 2 < DESCLEN) {
		memcpy(o->desc + l, "; ", 3);
		l += 2;
	}
	va_start(ap, fmt);
	vsnprintf(o->desc + l, DESCLEN - l, fmt, ap);
	va_end(ap);
}

/* A random used (or empty) slot of @n, or -1. */
static int pick(struct op *o, void **slot, size_t n, int used)
{
	size_t i, k = R(n);

	for (i = 0; i < n; i++, k = (k + 1) % n)
		if (!!slot[k] == used)
			return (int)k;
	return -1;
}

/* Mostly @o's device; with @pct % the other one, when it is open. */
static struct dev *some_dev(struct op *o, int pct)
{
	int i = P(pct) && D[!o->dev].ctx ? !o->dev : o->dev;

	o->devs |= 1 << i;
	return &D[i];
}

static void fill_random(struct op *o, void *p, size_t n)
{
	uint64_t v;
	size_t i;

	for (i = 0; i < n; i += sizeof(v)) {
		v = W64();
		memcpy((char *)p + i, &v, n - i < sizeof(v) ? n - i : sizeof(v));
	}
}

/* ---- the worker's objects ---- */
static void **slots(struct dev *d, int kind, int *n)
{
#define SLOTS(a) do { *n = ARRAY_SIZE(d->a); return (void **)d->a; } while (0)
	switch (kind) {
	case K_PD: SLOTS(pd);
	case K_CQ: SLOTS(cq);
	case K_MR: SLOTS(mr);
	case K_SRQ: SLOTS(srq);
	case K_QP: SLOTS(qp);
	case K_AH: SLOTS(ah);
	case K_XRCD: SLOTS(xrcd);
	default: SLOTS(ch);
	}
#undef SLOTS
}

static uint32_t lib_handle(int kind, void *obj)
{
	switch (kind) {
	case K_PD: return ((struct ibv_pd *)obj)->handle;
	case K_CQ: return ((struct ibv_cq *)obj)->handle;
	case K_MR: return ((struct ibv_mr *)obj)->handle;
	case K_SRQ: return ((struct ibv_srq *)obj)->handle;
	case K_QP: return ((struct ibv_qp *)obj)->handle;
	case K_AH: return ((struct ibv_ah *)obj)->handle;
	case K_XRCD: return to_shca_xrcd(obj)->handle;
	default: return (uint32_t)((struct ibv_comp_channel *)obj)->fd;
	}
}

static int lib_destroy(int kind, void *obj)
{
	switch (kind) {
	case K_PD: return ibv_dealloc_pd(obj);
	case K_CQ: return ibv_destroy_cq(obj);
	case K_MR: return ibv_dereg_mr(obj);
	case K_SRQ: return ibv_destroy_srq(obj);
	case K_QP: return ibv_destroy_qp(obj);
	case K_AH: return ibv_destroy_ah(obj);
	case K_XRCD: return ibv_close_xrcd(obj);
	default: return ibv_destroy_comp_channel(obj);
	}
}

/* Whether @obj (or, for NULL, handle @h) is a live library object of @d. */
static int lib_holds(struct dev *d, int kind, void *obj, uint32_t h)
{
	int k, n, i;
	void **s;

	for (k = obj ? kind : 0; k < (obj ? kind + 1 : NKIND); k++) {
		s = slots(d, k, &n);
		for (i = 0; i < n; i++)
			if (s[i] && (obj ? s[i] == obj : lib_handle(k, s[i]) == h))
				return 1;
	}
	return 0;
}

static void forget(struct dev *d, void **slot, uint32_t h)
{
	d->stale[d->nstale++ % ARRAY_SIZE(d->stale)] = h;
	*slot = NULL;
}

static void bury(void *p)
{
	if (ngrave < ARRAY_SIZE(grave))
		grave[ngrave++] = p;
}

/* ---- arguments ---- */

/*
 * A range to register: in the arena (1 returned), or memory that is not
 * fit, with o->badptr set: read-only, PROT_NONE, unmapped (below
 * mmap_min_addr, non-canonical), the kernel's, wrapping, huge, a ring.
 */
static int pick_mem(struct op *o, uint64_t *addr, uint64_t *len)
{
	uint64_t off = (uint64_t)R(ARENA / 4096) * 4096 + (P(50) ? R(4096) : 0);
	int k = LIVE(o->d, qp);
	struct shca_ring *ring;

	*addr = (uintptr_t)arena + off;
	*len = 1 + R(P(50) ? 65536 : ARENA - off);
	if (*len > ARENA - off)
		*len = ARENA - off;
	if (P(70))
		return 1;
	o->badptr = 1;
	switch (R(9)) {
	case 0: *addr = (uintptr_t)ro + R(8192); break;
	case 1: *addr = (uintptr_t)guard; break;
	case 2: *addr = (uint64_t)R(16) * 4096; break;
	case 3: *addr = (1ULL << 47) + (uint64_t)R(4096) * 4096; break;
	case 4: *addr = 0xffff888000000000ULL + (uint64_t)R(1 << 20) * 4096; break;
	case 5: *addr = UINT64_MAX - R(8192); break;
	case 6: *len = WILD(); break;
	case 7:
		*addr = (uintptr_t)shm + R(8192);
		*len = 1 + R((uintptr_t)shm + 8192 - *addr);
		o->badptr = 0;
		break;
	default:
		ring = k >= 0 ? &to_shca_qp(o->d->qp[k])->sq.ring : NULL;
		if (ring && ring->map) {
			*addr = (uintptr_t)ring->map;
			*len = ring->map_len;
		}
	}
	return 0;
}

/* An SGE inside one of our MRs (mostly), or any address, length, key. */
static void rand_sge(struct op *o, struct ibv_sge *s)
{
	int k = LIVE(o->d, mr);
	struct bent b;
	uint64_t off, room;
	size_t i;

	for (i = 0; o->pd && P(70) && i < ARRAY_SIZE(o->d->mr); i++)
		if (o->d->mr[i] && o->d->mr[i]->pd == o->pd)
			k = (int)i;	/* one of the PD the WQE's QP is in */
	if (k >= 0 && P(75)) {
		off = R(o->d->mr[k]->length);
		room = o->d->mr[k]->length - off;
		s->addr = (uintptr_t)o->d->mr[k]->addr + off;
		s->length = (uint32_t)(P(90) ? R((P(70) && room > 4096 ? 4096 : room) + 1) : WILD());
		s->lkey = o->d->mr[k]->lkey;
		return;
	}
	s->addr = P(50) ? (uintptr_t)arena + R(ARENA) : WILD();
	s->length = (uint32_t)(P(50) ? R(4096) : WILD());
	s->lkey = P(50) && board_get(&o->r, BK_MR, -1, &b) ? b.aux : (uint32_t)W64();
}

/* A remote address and key: mostly a published MR's, maybe beyond it. */
static void rand_remote(struct op *o, uint64_t *addr, uint32_t *rkey)
{
	struct bent b;

	if (P(80) && board_get(&o->r, BK_MR, -1, &b)) {
		*addr = b.addr + (P(85) ? R(b.len) : WILD());
		*rkey = P(90) ? b.num : b.num ^ (1u << R(32));
	} else {
		*addr = WILD();
		*rkey = (uint32_t)W64();
	}
	if (P(50))
		*addr &= ~7ULL;		/* atomics want alignment */
}

/* A published number of @kind, or a random one. */
static uint32_t board_num(struct op *o, uint32_t kind, int pct)
{
	struct bent b;

	return P(pct) && board_get(&o->r, kind, -1, &b) ? b.num : (uint32_t)W64();
}

static int in_arena(const struct ibv_mr *mr)
{
	uintptr_t a = (uintptr_t)mr->addr;

	return a >= (uintptr_t)arena && a + mr->length <= (uintptr_t)arena + ARENA;
}

static void publish_mr(struct op *o, int dev, struct ibv_mr *mr)
{
	/* Only arena memory: peers write into what they find here. */
	if (in_arena(mr))
		board_put(&o->r, BK_MR, dev, mr->rkey, mr->lkey,
			  (uintptr_t)mr->addr, mr->length);
}

/* What the side thread may read of D[]: the handles, not the structs. */
static void live_refresh(void)
{
	int d, k, i, n, m;
	void **s;

	for (d = 0; d < 2; d++)
		for (k = m = 0; k < NKIND; k++)
			for (s = slots(&D[d], k, &n), i = 0; i < n; i++, m++)
				STORE(live_h[d][m], s[i] ? lib_handle(k, s[i]) : 0);
}

static uint32_t pick_handle(struct op *o)
{
	struct dev *d = o->d;

	if (o->side && P(70))
		return LOAD(live_h[o->dev][R(ARRAY_SIZE(live_h[0]))]);
	switch (R(4)) {
	case 0: return d->stale[R(ARRAY_SIZE(d->stale))];
	case 1: return R(64);
	case 2: return d->nraw ? d->raw[R(ARRAY_SIZE(d->raw))].h : R(8);
	default: return (uint32_t)WILD();
	}
}

/* The empty post_send/post_recv command the library rings as doorbell. */
static int doorbell(struct op *o, uint32_t cmd, uint32_t handle)
{
	uint32_t req[6] = { 0, 0, handle, 0, 0, 0 }, resp[2];
	uint64_t p = (uintptr_t)resp;

	memcpy(req, &p, sizeof(p));
	req[5] = cmd == IB_USER_VERBS_CMD_POST_SEND ?
		 sizeof(struct ib_uverbs_send_wr) : sizeof(struct ib_uverbs_recv_wr);
	return raw_cmd(o->d->ctx->cmd_fd, cmd, req, sizeof(req), sizeof(resp));
}

/* ---- a device's context and everything in it ---- */
static int dev_open(int i)
{
	struct dev *d = &D[i];
	struct ibv_context *c;

	d->gen = LOAD(S->link_gen);
	errno = ENODEV;
	c = open_by_name(devname[i]);
	if (!c)
		return errno;
	fcntl(c->async_fd, F_SETFL, O_NONBLOCK);
	if (!ibv_query_gid(c, 1, 0, &d->gid))
		memcpy(&S->gid[i], &d->gid, sizeof(d->gid));
	d->pd[0] = ibv_alloc_pd(c);
	pthread_rwlock_wrlock(&dev_lock);
	d->ctx = c;
	pthread_rwlock_unlock(&dev_lock);
	return d->pd[0] ? 0 : errno;
}

/* Destroy everything (raw objects first, users before what they use). */
static void dev_close(struct dev *d)
{
	static const int order[] = { K_QP, K_SRQ, K_AH, K_MR, K_CQ, K_CH, K_XRCD, K_PD };
	size_t i, j;
	void **s;
	int n, k;

	d->dead = 0;
	if (!d->ctx)
		return;
	pthread_rwlock_wrlock(&dev_lock);
	for (i = 0; i < ARRAY_SIZE(order); i++)
		for (j = 0; j < ARRAY_SIZE(d->raw); j++)
			if (d->raw[j].kind == order[i] + 1)
				raw_destroy(d->ctx->cmd_fd, order[i], d->raw[j].h);
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		s = slots(d, order[i], &n);
		for (k = 0; k < n; k++, ADD(S->w[W].beat[0], 1))
			if (s[k] && lib_destroy(order[i], s[k]))
				bury(s[k]);
	}
	for (i = 0; i < ARRAY_SIZE(d->map); i++)
		if (d->map[i].p)
			munmap(d->map[i].p, d->map[i].len);
	ibv_close_device(d->ctx);
	memset(d, 0, sizeof(*d));
	pthread_rwlock_unlock(&dev_lock);
}

static void *map_or_die(void *at, size_t len, int prot, int flags, int fd)
{
	void *p = mmap(at, len, prot, flags, fd, 0);

	if (p == MAP_FAILED) {
		perror("fuzz: mmap");
		_exit(2);
	}
	return p;
}

/* Arena, read-only pages and guards between, a shared file, XRC files. */
static void worker_memory(void)
{
	uint8_t *m = map_or_die(NULL, ARENA + 5 * 4096, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1);
	int fd = memfd_create("fuzz", 0), k;

	arena = map_or_die(m + 4096, ARENA, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1);
	guard = arena + ARENA;
	ro = map_or_die(guard + 4096, 8192, PROT_READ,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1);
	if (fd < 0 || ftruncate(fd, 8192))
		_exit(2);
	shm = map_or_die(NULL, 8192, RW, MAP_SHARED, fd);
	close(fd);
	for (k = 0; k < 2; k++) {
		xfile[k] = open(xpath[k], O_RDWR | O_CREAT, 0600);
		if (xfile[k] < 0)
			_exit(2);
	}
}

/* ---- arguments of the verbs-level operations ---- */
static uint32_t cap(struct op *o, uint32_t small)
{
	return P(90) ? R(small + 1) : (uint32_t)WILD();
}

static const enum ibv_qp_type qp_types[] = {
	IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	IBV_QPT_XRC_SEND,
};

/* 1..4 receive WRs of random SGEs on @qp's RQ or on @srq. */
static int post_recvs(struct op *o, struct ibv_qp *qp, struct ibv_srq *srq,
		      uint32_t max_sge)
{
	struct ibv_recv_wr wr[4], *bad;
	struct ibv_sge sge[4][MAXSGE];
	int n = 1 + (int)R(4), i, j;

	o->pd = qp ? qp->pd : srq->pd;
	for (i = 0; i < n; i++) {
		wr[i].wr_id = W64();
		wr[i].num_sge = P(3) ? -1 : (int)R(max_sge + 2 < MAXSGE ? max_sge + 2 : MAXSGE);
		wr[i].sg_list = sge[i];
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		for (j = 0; j < wr[i].num_sge; j++)
			rand_sge(o, &sge[i][j]);
	}
	DESC("%d WRs, the first with %d SGEs", n, wr[0].num_sge);
	return qp ? ibv_post_recv(qp, wr, &bad) : ibv_post_srq_recv(srq, wr, &bad);
}

/*
 * Take @qp one state further (towards @dqpn at @dgid) with sane, partly
 * random attributes; from RTS and the error states, somewhere back.
 */
static int step_qp(struct op *o, struct ibv_qp *qp, uint32_t dqpn,
		   const union ibv_gid *dgid)
{
	struct ibv_qp_attr a, q;
	struct ibv_qp_init_attr ia;
	int t = qp->qp_type, mask = IBV_QP_STATE, err;

	o->valid = 1;
	err = ibv_query_qp(qp, &q, IBV_QP_STATE, &ia);
	if (err)
		return err;
	o->valid = 0;
	memset(&a, 0, sizeof(a));
	switch (q.qp_state) {
	case IBV_QPS_RESET:
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qkey = 0x1234;
		a.qp_access_flags = (int)R(8) << 1;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			(t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
		o->valid = t >= IBV_QPT_RC && t <= IBV_QPT_UD;
		break;
	case IBV_QPS_INIT:
		a.qp_state = IBV_QPS_RTR;
		if (t == IBV_QPT_UD)
			break;
		a.path_mtu = P(90) ? IBV_MTU_1024 : (enum ibv_mtu)R(8);
		a.dest_qp_num = dqpn;
		a.rq_psn = R(1 << 24);
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = *dgid;
		a.ah_attr.grh.hop_limit = 64;
		a.max_dest_rd_atomic = (uint8_t)R(17);
		a.min_rnr_timer = (uint8_t)R(32);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (t == IBV_QPT_RC || t == IBV_QPT_XRC_RECV)
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPS_RTR:
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = R(1 << 24);
		a.timeout = (uint8_t)(P(80) ? 1 + R(14) : R(32));
		a.retry_cnt = (uint8_t)R(8);
		a.rnr_retry = (uint8_t)R(8);
		a.max_rd_atomic = (uint8_t)R(17);
		mask |= IBV_QP_SQ_PSN;
		if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND)
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		else if (t == IBV_QPT_XRC_RECV)
			mask |= IBV_QP_TIMEOUT;
		break;
	case IBV_QPS_RTS:	/* often stays, with another RNR timer */
		a.qp_state = P(40) ? IBV_QPS_RTS : P(35) ? IBV_QPS_SQD :
			     P(60) ? IBV_QPS_ERR : IBV_QPS_RESET;
		a.min_rnr_timer = (uint8_t)R(32);
		if (a.qp_state == IBV_QPS_RTS && t == IBV_QPT_RC)
			mask |= IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPS_SQD:
		/* SQD -> RTS of an XRC_TGT once oopsed (b48721c). */
		a.qp_state = P(70) ? IBV_QPS_RTS : IBV_QPS_ERR;
		break;
	default:
		a.qp_state = IBV_QPS_RESET;
	}
	DESC("type %d %d->%d", t, q.qp_state, a.qp_state);
	return ibv_modify_qp(qp, &a, mask);
}

static const enum ibv_wr_opcode wr_ops[] = {	/* UD: 2, UC: 4, RC: 7 */
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
};

static void rand_send(struct op *o, struct ibv_qp *qp, struct ibv_send_wr *w,
		      struct ibv_sge *sge, struct ibv_ah *ah)
{
	int t = qp->qp_type, j;
	uint32_t max = to_shca_qp(qp)->sq.max_sge + 2;

	o->pd = qp->pd;
	w->wr_id = W64();
	w->opcode = P(95) ? wr_ops[R(t == IBV_QPT_UD ? 2 : t == IBV_QPT_UC ? 4 : 7)] :
			    (enum ibv_wr_opcode)R(16);
	w->send_flags = R(16);
	w->num_sge = (int)R(max < MAXSGE ? max : MAXSGE);
	w->sg_list = sge;
	w->imm_data = (uint32_t)W64();
	for (j = 0; j < w->num_sge; j++) {
		if (!(w->send_flags & IBV_SEND_INLINE)) {
			rand_sge(o, &sge[j]);
			continue;
		}
		/* The library copies inline data at once: real memory. */
		sge[j].addr = (uintptr_t)arena + R(ARENA - 4096);
		sge[j].length = R(P(90) ? 64 : 4096);
		sge[j].lkey = (uint32_t)W64();
	}
	if (t == IBV_QPT_UD) {
		w->wr.ud.ah = ah;
		w->wr.ud.remote_qpn = board_num(o, BK_QP + IBV_QPT_UD, 85);
		w->wr.ud.remote_qkey = P(80) ? 0x1234 : (uint32_t)W64();
		return;
	}
	if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		rand_remote(o, &w->wr.atomic.remote_addr, &w->wr.atomic.rkey);
		w->wr.atomic.compare_add = W64();
		w->wr.atomic.swap = W64();
	} else {
		rand_remote(o, &w->wr.rdma.remote_addr, &w->wr.rdma.rkey);
	}
	w->qp_type.xrc.remote_srqn = board_num(o, BK_SRQN, 85);
}

#endif
