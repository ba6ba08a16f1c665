// SPDX-License-Identifier: GPL-2.0-only
/*
 * A seeded verbs fuzzer aimed at softhca's kernel side (fuzz.sh runs it).
 *
 *   fuzz                FUZZ_WORKERS (3) processes make random verbs calls
 *                       on SOFTHCA_DEV and SOFTHCA_DEV2 for FUZZ_SECS (90) s;
 *                       they are killed with SIGKILL at random times and
 *                       replaced, and the second device's link is deleted
 *                       and added again (FUZZ_NETDEV2, default sv1) now and
 *                       then
 *   fuzz replay SEED N  one worker alone: the first N operations of SEED,
 *                       each printed with its arguments and outcome
 *   fuzz check          a valid RC SEND and RDMA WRITE from SOFTHCA_DEV to
 *                       SOFTHCA_DEV2, byte for byte
 *
 * FUZZ_SEED (default: from the clock; printed first) decides everything
 * random.  Worker w of generation g runs with seed mix(FUZZ_SEED, w, g);
 * its n-th operation, picked from the table below, draws its arguments
 * from a PRNG seeded with (that seed, n) alone, so the sequence of
 * operations is a pure function of the worker's seed, whatever earlier
 * calls returned (the arguments name slots of the worker's object tables,
 * which those calls filled or not).  Kill and link times come from
 * FUZZ_SEED too.
 *
 * Arguments are valid and invalid: objects of the other device's context,
 * numbers other workers published on the shared board (QPNs, SRQNs,
 * rkeys, lkeys), stale and random handles (raw commands: the library's
 * structs of destroyed objects are gone), sizes at the edges, memory that
 * is not there, random masks and states, random WQEs written straight
 * into the rings and random bytes over ring headers and slots.  The
 * library only ever gets live objects: the target is the kernel.
 *
 * Failures print the run's seed, the worker's seed and the operation's
 * index with the last NRECENT operations: a worker killed by a signal we
 * did not send or exiting non-zero (a sanitizer report), EIO from a
 * device whose link was not deleted, EFAULT from a call whose pointers
 * were all valid, a call with valid arguments failing, no progress for
 * 30 s, a link delete or add failing or hanging.  The summary is printed
 * as NOTE lines; FUZZ_OUT (/tmp/fuzz-outcomes.txt) gets the count of each
 * (operation, errno) outcome.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "fuzz.h"
#include "util.h"
#include "../lib/internal.h"

#define ARENA		(4 << 20)
#define MAXSGE		34
#define HANG_SECS	30
#define NOOP		(-1)
#define RW		(PROT_READ | PROT_WRITE)

static int W;				/* this worker's slot in S->w */
static uint64_t wseed;			/* and its seed */
static int trace;			/* replay: print every operation */
static int known_bugs;			/* FUZZ_KNOWN_BUGS: run into them too */
static const char *devname[2];
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
	char *desc;
};

#define R(n)		rnd(&o->r, (n))
#define P(pct)		chance(&o->r, (pct))
#define W64()		rnd64(&o->r)
#define WILD()		wild(&o->r)
#define DESC(...)	snprintf(o->desc, DESCLEN, __VA_ARGS__)
#define LIVE(d, a)	pick(o, (void **)(d)->a, ARRAY_SIZE((d)->a), 1)
#define EMPTY(d, a)	pick(o, (void **)(d)->a, ARRAY_SIZE((d)->a), 0)
#define ULL(x)		((unsigned long long)(x))
#define BK_QP		16		/* + QP type: a published QPN */

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
	default: SLOTS(xrcd);
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
	default: return to_shca_xrcd(obj)->handle;
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
	default: return ibv_close_xrcd(obj);
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
	uint64_t off;

	if (k >= 0 && P(75)) {
		off = R(o->d->mr[k]->length);
		s->addr = (uintptr_t)o->d->mr[k]->addr + off;
		s->length = (uint32_t)(P(90) ? R(o->d->mr[k]->length - off + 1) : WILD());
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

static uint32_t pick_handle(struct op *o)
{
	struct dev *d = o->d;

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

/* Into the kernel log too: a panic's console still names the seeds. */
static void klog(const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int fd = open("/dev/kmsg", O_WRONLY);

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (fd >= 0 && write(fd, line, strlen(line)) < 0)
		fd = fd + 0;
	if (fd >= 0)
		close(fd);
}

/* ---- the operations: each returns 0, an errno or NOOP ---- */
static int dev_open(int i);
static void dev_close(struct dev *d);

static int op_open_dev(struct op *o)
{
	struct ibv_context *c;
	uint64_t req[1], resp[1];

	if (!o->d->ctx) {
		DESC("open %s", devname[o->dev]);
		return dev_open(o->dev);
	}
	DESC("another context on %s, a PD in it, closed", devname[o->dev]);
	errno = ENODEV;
	c = open_by_name(devname[o->dev]);
	if (!c)
		return errno;
	req[0] = (uintptr_t)resp;
	raw_cmd(c->cmd_fd, IB_USER_VERBS_CMD_ALLOC_PD, req, sizeof(req), 4);
	return ibv_close_device(c);
}

static int op_close_dev(struct op *o)
{
	DESC("close %s and everything in it", devname[o->dev]);
	dev_close(o->d);
	return 0;
}

static int op_alloc_pd(struct op *o)
{
	int k = EMPTY(o->d, pd);

	if (k < 0)
		return NOOP;
	DESC("pd[%d]", k);
	o->valid = 1;
	o->d->pd[k] = ibv_alloc_pd(o->d->ctx);
	return o->d->pd[k] ? 0 : errno;
}

/* Destroy a live object of kind o->arg through the library. */
static int op_destroy(struct op *o)
{
	int n, k, err;
	void **s = slots(o->d, o->arg, &n);
	uint32_t h;

	k = pick(o, s, (size_t)n, 1);
	if (k < 0)
		return NOOP;
	h = lib_handle(o->arg, s[k]);
	DESC("[%d] handle %u", k, h);
	/* Nothing can hold on to a QP, AH or MR: those must go. */
	o->valid = o->arg == K_QP || o->arg == K_AH || o->arg == K_MR;
	err = lib_destroy(o->arg, s[k]);
	if (!err)
		forget(o->d, &s[k], h);
	return err;
}

static int op_create_cq(struct op *o)
{
	int k = EMPTY(o->d, cq), c = LIVE(o->d, ch);
	int cqe = P(75) ? 1 + (int)R(P(80) ? 64 : 4096) : (int)WILD();
	int vec = P(90) ? 0 : (int)WILD();
	struct ibv_comp_channel *ch = c >= 0 && P(50) ? o->d->ch[c] : NULL;

	if (k < 0)
		return NOOP;
	DESC("[%d] cqe %d channel %d vector %d", k, cqe, ch ? c : -1, vec);
	o->valid = cqe >= 1 && cqe <= 4096 && !vec;
	o->d->cq[k] = ibv_create_cq(o->d->ctx, cqe, NULL, ch, vec);
	return o->d->cq[k] ? 0 : errno;
}

static int op_resize_cq(struct op *o)
{
	int k = LIVE(o->d, cq), cqe = P(70) ? 1 + (int)R(1024) : (int)WILD();

	if (k < 0)
		return NOOP;
	DESC("[%d] to %d", k, cqe);
	return ibv_resize_cq(o->d->cq[k], cqe);
}

static int op_poll_cq(struct op *o)
{
	struct ibv_wc wc[32];
	int k = LIVE(o->d, cq), n = 1 + (int)R(32), got, i;

	if (k < 0)
		return NOOP;
	DESC("[%d] up to %d", k, n);
	o->valid = 1;
	got = ibv_poll_cq(o->d->cq[k], n, wc);
	if (got < 0 || got > n)
		return ERANGE;
	ADD(S->wc, (uint64_t)got);
	for (i = 0; i < got; i++)
		if (wc[i].status == IBV_WC_SUCCESS)
			ADD(S->wc_ok, 1);
	return 0;
}

static int op_notify_cq(struct op *o)
{
	int k = LIVE(o->d, cq), sol = (int)R(2);

	if (k < 0)
		return NOOP;
	DESC("[%d] solicited %d", k, sol);
	return ibv_req_notify_cq(o->d->cq[k], sol);
}

/*
 * A completion event and an async event, if any, read without blocking
 * and acknowledged; an async event only when it names a live object of
 * ours (a raw command's object has no struct to count it on).
 */
static int op_get_events(struct op *o)
{
	struct ibv_async_event ev;
	struct ibv_cq *cq;
	void *cctx;
	int c = LIVE(o->d, ch), err = EAGAIN, kind = -1;

	DESC("channel %d, async fd", c);
	if (c >= 0 && !ibv_get_cq_event(o->d->ch[c], &cq, &cctx)) {
		if (!lib_holds(o->d, K_CQ, cq, 0))
			o->broken = "a completion event for a CQ that is not ours";
		ibv_ack_cq_events(cq, 1);
		err = 0;
	}
	if (ibv_get_async_event(o->d->ctx, &ev))
		return err == EAGAIN ? errno : err;
	switch (ev.event_type) {
	case IBV_EVENT_CQ_ERR:
		kind = K_CQ;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		kind = K_SRQ;
		break;
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR: case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
		kind = K_QP;
		break;
	default:
		break;
	}
	if (kind < 0 || lib_holds(o->d, kind, ev.element.qp, 0))
		ibv_ack_async_event(&ev);
	return 0;
}

static int op_create_ch(struct op *o)
{
	int k = EMPTY(o->d, ch);

	if (k < 0)
		return NOOP;
	DESC("[%d]", k);
	o->valid = 1;
	o->d->ch[k] = ibv_create_comp_channel(o->d->ctx);
	if (!o->d->ch[k])
		return errno;
	return fcntl(o->d->ch[k]->fd, F_SETFL, O_NONBLOCK) ? errno : 0;
}

static int op_destroy_ch(struct op *o)
{
	int k = LIVE(o->d, ch), err;

	if (k < 0)
		return NOOP;
	DESC("[%d]", k);
	err = ibv_destroy_comp_channel(o->d->ch[k]);
	if (!err)
		o->d->ch[k] = NULL;
	return err;
}

static int op_reg_mr(struct op *o)
{
	uint64_t addr, len, iova;
	int good = pick_mem(o, &addr, &len);
	int access = P(75) ? IBV_ACCESS_LOCAL_WRITE | (int)R(8) << 1 : (int)WILD();
	int k = EMPTY(o->d, mr), p = LIVE(o->d, pd);
	struct ibv_mr *mr;

	iova = P(85) ? addr : WILD();
	if (k < 0 || p < 0)
		return NOOP;
	DESC("[%d] pd %d %#llx+%#llx iova %#llx access %#x", k, p, ULL(addr),
	     ULL(len), ULL(iova), access);
	o->valid = good && iova == addr && (access & ~0xf) == 0 && (access & 1);
	mr = ibv_reg_mr_iova2(o->d->pd[p], (void *)(uintptr_t)addr, len, iova,
			      (unsigned int)access);
	if (!mr)
		return errno;
	o->d->mr[k] = mr;
	publish_mr(o, o->dev, mr);
	return 0;
}

static int op_rereg_mr(struct op *o)
{
	struct dev *x = some_dev(o, 10);
	uint64_t addr, len;
	int good = pick_mem(o, &addr, &len);
	int flags = P(85) ? 1 + (int)R(7) : (int)WILD();
	int access = P(75) ? IBV_ACCESS_LOCAL_WRITE | (int)R(8) << 1 : (int)WILD();
	int k = LIVE(o->d, mr), p = LIVE(x, pd);

	if (k < 0 || (p < 0 && (flags & IBV_REREG_MR_CHANGE_PD)))
		return NOOP;
	DESC("[%d] flags %#x pd %d %#llx+%#llx access %#x", k, flags, p,
	     ULL(addr), ULL(len), access);
	/* The MR's own range may be gone (a ring, a destroyed mapping). */
	if (!in_arena(o->d->mr[k]) || ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && !good))
		o->badptr = 1;
	o->valid = flags == IBV_REREG_MR_CHANGE_ACCESS && (access & ~0xf) == 0 &&
		   (access & IBV_ACCESS_LOCAL_WRITE) && !o->badptr;
	errno = 0;
	if (ibv_rereg_mr(o->d->mr[k], flags, p >= 0 ? x->pd[p] : NULL,
			 (void *)(uintptr_t)addr, len, access))
		return errno ? errno : EINVAL;
	publish_mr(o, o->dev, o->d->mr[k]);
	return 0;
}

static int op_create_srq(struct op *o)
{
	struct dev *x = some_dev(o, 10);
	int k = EMPTY(o->d, srq), p = LIVE(o->d, pd), xr = LIVE(o->d, xrcd);
	int c = LIVE(x, cq), xrc = P(35) && xr >= 0 && c >= 0;
	struct ibv_srq_init_attr_ex a;
	struct ibv_srq *srq;
	uint32_t srqn;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = P(75) ? 1 + R(256) : (uint32_t)WILD();
	a.attr.max_sge = P(75) ? 1 + R(8) : (uint32_t)WILD();
	a.attr.srq_limit = P(80) ? 0 : (uint32_t)WILD();
	if (k < 0 || p < 0)
		return NOOP;
	a.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	a.pd = o->d->pd[p];
	if (xrc) {
		a.comp_mask |= IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			       IBV_SRQ_INIT_ATTR_CQ;
		a.srq_type = IBV_SRQT_XRC;
		a.xrcd = o->d->xrcd[xr];
		a.cq = x->cq[c];
	}
	DESC("[%d] %s max_wr %u max_sge %u limit %u", k, xrc ? "xrc" : "basic",
	     a.attr.max_wr, a.attr.max_sge, a.attr.srq_limit);
	o->valid = !xrc && a.attr.max_wr - 1 < 256 && a.attr.max_sge - 1 < 8 &&
		   !a.attr.srq_limit;
	srq = ibv_create_srq_ex(o->d->ctx, &a);
	if (!srq)
		return errno;
	o->d->srq[k] = srq;
	if (xrc && !ibv_get_srq_num(srq, &srqn))
		board_put(&o->r, BK_SRQN, o->dev, srqn, (uint32_t)xr, 0, 0);
	return 0;
}

static int op_modify_srq(struct op *o)
{
	int k = LIVE(o->d, srq), mask = P(80) ? 1 + (int)R(3) : (int)WILD();
	struct ibv_srq_attr a = { 0 };

	a.max_wr = P(50) ? R(512) : (uint32_t)WILD();
	a.srq_limit = P(70) ? R(64) : (uint32_t)WILD();
	if (k < 0)
		return NOOP;
	DESC("[%d] mask %#x max_wr %u limit %u", k, mask, a.max_wr, a.srq_limit);
	return ibv_modify_srq(o->d->srq[k], &a, mask);
}

static int op_query_srq(struct op *o)
{
	struct ibv_srq_attr a;
	int k = LIVE(o->d, srq);

	if (k < 0)
		return NOOP;
	DESC("[%d]", k);
	o->valid = 1;
	return ibv_query_srq(o->d->srq[k], &a);
}

/* 1..4 receive WRs of random SGEs on @qp's RQ or on @srq. */
static int post_recvs(struct op *o, struct ibv_qp *qp, struct ibv_srq *srq,
		      uint32_t max_sge)
{
	struct ibv_recv_wr wr[4], *bad;
	struct ibv_sge sge[4][MAXSGE];
	int n = 1 + (int)R(4), i, j;

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

static int op_post_srq_recv(struct op *o)
{
	int k = LIVE(o->d, srq);

	if (k < 0)
		return NOOP;
	return post_recvs(o, NULL, o->d->srq[k], to_shca_srq(o->d->srq[k])->rq.max_sge);
}

static uint32_t cap(struct op *o, uint32_t small)
{
	return P(90) ? R(small + 1) : (uint32_t)WILD();
}

static const enum ibv_qp_type qp_types[] = {
	IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	IBV_QPT_XRC_SEND,
};

static int op_create_qp(struct op *o)
{
	struct dev *x = some_dev(o, 10);	/* where the CQs and SRQ come from */
	int k = EMPTY(o->d, qp), p = LIVE(o->d, pd), c1 = LIVE(x, cq);
	int c2 = LIVE(x, cq), s = LIVE(x, srq);
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.qp_type = P(95) ? qp_types[R(ARRAY_SIZE(qp_types))] : (enum ibv_qp_type)R(256);
	a.cap.max_send_wr = cap(o, 256);
	a.cap.max_recv_wr = cap(o, 256);
	a.cap.max_send_sge = cap(o, 8);
	a.cap.max_recv_sge = cap(o, 8);
	a.cap.max_inline_data = cap(o, 256);
	a.sq_sig_all = (int)R(2);
	if (k < 0 || p < 0 || c1 < 0 || c2 < 0)
		return NOOP;
	a.send_cq = x->cq[c1];
	a.recv_cq = x->cq[c2];
	if (s >= 0 && P(30))
		a.srq = x->srq[s];
	DESC("[%d] type %d pd %d cq %d/%d srq %d on %d, wr %u/%u sge %u/%u inline %u",
	     k, a.qp_type, p, c1, c2, a.srq ? s : -1, (int)(x - D),
	     a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge,
	     a.cap.max_recv_sge, a.cap.max_inline_data);
	o->valid = x == o->d && a.qp_type >= IBV_QPT_RC && a.qp_type <= IBV_QPT_UD &&
		   a.cap.max_send_wr - 1 < 256 && a.cap.max_recv_wr - 1 < 256 &&
		   a.cap.max_send_sge - 1 < 8 && a.cap.max_recv_sge - 1 < 8 &&
		   a.cap.max_inline_data <= 256 &&
		   (!a.srq || to_shca_srq(a.srq)->type == IBV_SRQT_BASIC);
	qp = ibv_create_qp(o->d->pd[p], &a);
	if (!qp)
		return errno;
	o->d->qp[k] = qp;
	board_put(&o->r, BK_QP + qp->qp_type, o->dev, qp->qp_num, 0, 0, 0);
	return 0;
}

/* An XRC receive QP (XRC_TGT) in one of our domains. */
static int op_create_tgt(struct op *o)
{
	int k = EMPTY(o->d, qp), x = LIVE(o->d, xrcd);
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	if (P(10))
		a.cap.max_recv_wr = (uint32_t)WILD();
	if (k < 0 || x < 0)
		return NOOP;
	a.xrcd = o->d->xrcd[x];
	DESC("[%d] xrcd %d recv_wr %u", k, x, a.cap.max_recv_wr);
	qp = ibv_create_qp_ex(o->d->ctx, &a);
	if (!qp)
		return errno;
	o->d->qp[k] = qp;
	board_put(&o->r, BK_QP + IBV_QPT_XRC_RECV, o->dev, qp->qp_num, (uint32_t)x, 0, 0);
	return 0;
}

/* Another process's XRC_TGT (or any number), opened in a domain of ours. */
static int op_open_qp(struct op *o)
{
	struct ibv_qp_open_attr a;
	struct bent b;
	int k = EMPTY(o->d, qp), x = LIVE(o->d, xrcd);
	int have = board_get(&o->r, BK_QP + IBV_QPT_XRC_RECV, o->dev, &b);
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	a.qp_type = IBV_QPT_XRC_RECV;
	a.qp_num = have && P(90) ? b.num : (uint32_t)W64();
	if (k < 0 || x < 0)
		return NOOP;
	if (have && o->d->xrcd[b.aux & 1])
		x = (int)(b.aux & 1);
	a.xrcd = o->d->xrcd[x];
	DESC("[%d] qpn %#x xrcd %d", k, a.qp_num, x);
	qp = ibv_open_qp(o->d->ctx, &a);
	if (!qp)
		return errno;
	o->d->qp[k] = qp;
	return 0;
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
	case IBV_QPS_RTS:
		a.qp_state = P(60) ? IBV_QPS_ERR : P(50) ? IBV_QPS_SQD : IBV_QPS_RESET;
		if (t == IBV_QPT_XRC_RECV && !known_bugs)	/* known bug 1 */
			a.qp_state = IBV_QPS_ERR;
		break;
	case IBV_QPS_SQD:
		a.qp_state = P(50) ? IBV_QPS_RTS : IBV_QPS_ERR;
		/*
		 * Known bug 1: SQD -> RTS kicks the QP to its poller, which
		 * sets flags in a send ring an XRC_TGT does not have (NULL
		 * pointer write in softhca_poller_adopt(), a panic).
		 */
		if (t == IBV_QPT_XRC_RECV && !known_bugs)
			a.qp_state = IBV_QPS_ERR;
		break;
	default:
		a.qp_state = IBV_QPS_RESET;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/* One step of a QP towards one of ours, a published QPN or any number. */
static int op_connect(struct op *o)
{
	struct bent b;
	int k = LIVE(o->d, qp), j = LIVE(o->d, qp), dev = o->dev, t;
	uint32_t dqpn = (uint32_t)W64() & 0xffffff;

	if (k < 0)
		return NOOP;
	t = o->d->qp[k]->qp_type;
	if (P(40))
		dqpn = o->d->qp[j]->qp_num;
	else if (P(85) && board_get(&o->r, BK_QP + (t == IBV_QPT_XRC_SEND ?
				    IBV_QPT_XRC_RECV : t), -1, &b)) {
		dqpn = b.num;
		dev = (int)(b.dev & 1);
	}
	DESC("[%d] towards qpn %#x on %s", k, dqpn, devname[dev]);
	return step_qp(o, o->d->qp[k], dqpn, &S->gid[dev]);
}

/* Two RC or UC QPs of ours (on one device or two) walked to RTS, facing. */
static int op_connect_pair(struct op *o)
{
	struct dev *x = some_dev(o, 40);
	int i = LIVE(o->d, qp), j = LIVE(x, qp), n, err = 0;
	struct ibv_qp *a, *b;

	if (i < 0 || j < 0)
		return NOOP;
	a = o->d->qp[i];
	b = x->qp[j];
	if (a == b || a->qp_type != b->qp_type ||
	    (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC))
		return NOOP;
	DESC("[%d] and [%d] on %s", i, j, devname[x - D]);
	for (n = 0; n < 3 && !err; n++) {
		err = step_qp(o, a, b->qp_num, &x->gid);
		if (!err)
			err = step_qp(o, b, a->qp_num, &o->d->gid);
	}
	return err;
}

static int op_modify_qp(struct op *o)
{
	struct ibv_qp_attr a;
	int k = LIVE(o->d, qp), mask = P(50) ? (int)R(1 << 21) : (int)WILD();

	fill_random(o, &a, sizeof(a));
	a.qp_state = (enum ibv_qp_state)R(P(90) ? 7 : 256);
	a.cur_qp_state = (enum ibv_qp_state)R(8);
	if (P(80))
		a.port_num = a.ah_attr.port_num = 1;
	if (P(50))
		a.ah_attr.grh.dgid = S->gid[R(2)];
	if (k < 0)
		return NOOP;
	/* Known bug 1: no XRC_TGT into SQD (and out of it to RTS). */
	if (o->d->qp[k]->qp_type == IBV_QPT_XRC_RECV && !known_bugs &&
	    (a.qp_state == IBV_QPS_SQD || a.qp_state == IBV_QPS_RTS))
		a.qp_state = IBV_QPS_ERR;
	DESC("[%d] mask %#x state %d", k, mask, a.qp_state);
	return ibv_modify_qp(o->d->qp[k], &a, mask);
}

static int op_query_qp(struct op *o)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int k = LIVE(o->d, qp), mask = P(80) ? (int)R(1 << 21) : (int)WILD();

	if (k < 0)
		return NOOP;
	DESC("[%d] mask %#x", k, mask);
	o->valid = mask >= 0 && mask < 1 << 21;
	return ibv_query_qp(o->d->qp[k], &a, mask, &ia);
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

static int op_post_send(struct op *o)
{
	struct dev *x = some_dev(o, 10);	/* where the AH comes from */
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge sge[4][MAXSGE];
	int k = LIVE(o->d, qp), a = LIVE(x, ah), n = 1 + (int)R(4), i;

	if (k < 0)
		return NOOP;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		rand_send(o, o->d->qp[k], &wr[i], sge[i], a >= 0 ? x->ah[a] : NULL);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	DESC("[%d] %d WRs, the first opcode %d flags %#x %d SGEs", k, n,
	     wr[0].opcode, wr[0].send_flags, wr[0].num_sge);
	return ibv_post_send(o->d->qp[k], wr, &bad);
}

static int op_post_recv(struct op *o)
{
	int k = LIVE(o->d, qp);

	if (k < 0)
		return NOOP;
	return post_recvs(o, o->d->qp[k], NULL, to_shca_qp(o->d->qp[k])->rq.max_sge);
}

/* A ring of a live QP (0: SQ, 1: RQ) or SRQ (2), with its handle. */
static struct shca_wq *pick_wq(struct op *o, int *which, uint32_t *h)
{
	int k = LIVE(o->d, qp), s = LIVE(o->d, srq);
	struct shca_wq *wq = NULL;

	*which = (int)R(3);
	if (*which < 2 && k >= 0) {
		wq = *which ? &to_shca_qp(o->d->qp[k])->rq : &to_shca_qp(o->d->qp[k])->sq;
		*h = o->d->qp[k]->handle;
	} else if (*which == 2 && s >= 0) {
		wq = &to_shca_srq(o->d->srq[s])->rq;
		*h = o->d->srq[s]->handle;
	}
	return wq && wq->ring.entries ? wq : NULL;
}

/* A WQE of random fields written into a ring as its producer, published. */
static int op_ring_wqe(struct op *o)
{
	struct softhca_send_wqe *s;
	struct softhca_recv_wqe *r;
	struct ibv_sge g;
	struct shca_wq *wq;
	uint64_t addr;
	uint32_t h = 0, stride, i;
	uint8_t *slot;
	int which;

	wq = pick_wq(o, &which, &h);
	if (!wq)
		return NOOP;
	stride = wq->ring.stride;
	slot = shca_slot(&wq->ring, wq->prod);
	fill_random(o, slot, stride);
	if (P(70) && which == 0) {
		s = (void *)slot;
		s->ctrl.opcode = (uint8_t)R(P(80) ? 7 : 256);
		s->ctrl.flags = (uint8_t)R(P(80) ? 16 : 256);
		s->ctrl.num_sge = (uint8_t)R(P(80) ? (stride - 48) / 16 + 1 : 256);
		s->ctrl.reserved = (uint8_t)P(10);
		if (P(70)) {
			rand_remote(o, &addr, &s->rkey);
			s->remote_addr = addr;
		} else
			s->ud.ah_num = R(P(50) ? 8 : UINT32_MAX);
		s->xrc_srqn = board_num(o, BK_SRQN, 70);
		if (s->ctrl.flags & SOFTHCA_WQE_F_INLINE && P(70)) {
			s->inline_len = R(stride - 48 + 1);
			s->inline_reserved = 0;
		}
	} else if (P(70) && which) {
		r = (void *)slot;
		r->num_sge = P(80) ? R((stride - 16) / 16 + 1) : (uint32_t)WILD();
		r->reserved = (uint32_t)P(10);
	}
	for (i = which ? 16 : 48; P(70) && i + 16 <= stride; i += 16) {
		rand_sge(o, &g);
		memcpy(slot + i, &(struct softhca_sge){ g.addr, g.length, g.lkey }, 16);
	}
	wq->prod += P(95) ? 1 : R(2 * wq->ring.entries + 2);
	__atomic_store_n(&wq->hdr->prod, wq->prod, __ATOMIC_RELEASE);
	DESC("%s prod %u, first words %#x %#x", which == 2 ? "srq" : which ? "rq" : "sq",
	     wq->prod, ((uint32_t *)slot)[2], ((uint32_t *)slot)[3]);
	if (which == 2 || P(30))
		return 0;		/* the poller or the next message takes it */
	return doorbell(o, which ? IB_USER_VERBS_CMD_POST_RECV :
			IB_USER_VERBS_CMD_POST_SEND, h);
}

/* Random words over a ring's header (indices, flags, arm) and slots. */
static int op_scribble(struct op *o)
{
	static const uint32_t hdr_words[] = { 0, 1, 2, 32, 33, 48, 49 };
	int k = LIVE(o->d, cq), n = 1 + (int)R(8), which, i;
	struct shca_wq *wq = pick_wq(o, &which, &(uint32_t){ 0 });
	struct shca_ring *ring = wq ? &wq->ring : NULL;
	uint32_t *w, words, at;

	if (k >= 0 && (P(30) || !ring))
		ring = &to_shca_cq(o->d->cq[k])->view->ring;
	if (!ring)
		return NOOP;
	w = ring->map;
	words = (uint32_t)(ring->map_len / 4);
	DESC("%d words of a %u-word %s ring", n, words, wq && ring == &wq->ring ?
	     "work queue" : "CQ");
	for (i = 0; i < n; i++) {
		at = P(40) ? hdr_words[R(ARRAY_SIZE(hdr_words))] : R(words);
		w[at] = (uint32_t)WILD();
	}
	return 0;
}

static int op_create_ah(struct op *o)
{
	struct ibv_ah_attr a;
	int k = EMPTY(o->d, ah), p = LIVE(o->d, pd), g = (int)R(8);

	memset(&a, 0, sizeof(a));
	a.is_global = (uint8_t)P(90);
	a.port_num = (uint8_t)(P(85) ? 1 : R(256));
	a.grh.sgid_index = (uint8_t)(P(85) ? 0 : R(256));
	a.grh.hop_limit = (uint8_t)(P(80) ? 64 : R(256));
	a.grh.traffic_class = (uint8_t)R(256);
	a.grh.flow_label = P(80) ? R(1 << 20) : (uint32_t)W64();
	a.sl = (uint8_t)R(P(80) ? 8 : 256);
	a.static_rate = (uint8_t)(P(80) ? 0 : R(32));
	a.dlid = (uint16_t)R(65536);
	if (g < 4) {			/* a device's GID 0 */
		a.grh.dgid = S->gid[g & 1];
	} else if (g == 5) {		/* multicast */
		a.grh.dgid.raw[0] = 0xff;
		a.grh.dgid.raw[1] = 0x02;
		a.grh.dgid.raw[15] = 1;
	} else if (g == 6) {		/* IPv4-mapped 10/8 */
		a.grh.dgid.raw[10] = a.grh.dgid.raw[11] = 0xff;
		a.grh.dgid.raw[12] = 10;
		fill_random(o, &a.grh.dgid.raw[13], 3);
	} else if (g == 7) {
		fill_random(o, a.grh.dgid.raw, 16);
	}				/* 4: all zero */
	if (k < 0 || p < 0)
		return NOOP;
	DESC("[%d] gid kind %d global %d port %d sgid %d hop %d sl %d", k, g,
	     a.is_global, a.port_num, a.grh.sgid_index, a.grh.hop_limit, a.sl);
	o->valid = o->dev == 0 && !(g & 1) && g < 4 && a.is_global &&
		   a.port_num == 1 && !a.grh.sgid_index && a.grh.hop_limit == 64 &&
		   a.grh.flow_label < 1 << 20 && !a.static_rate;
	o->d->ah[k] = ibv_create_ah(o->d->pd[p], &a);
	return o->d->ah[k] ? 0 : errno;
}

static int op_open_xrcd(struct op *o)
{
	struct ibv_xrcd_init_attr a;
	int k = (int)R(2);

	memset(&a, 0, sizeof(a));
	a.comp_mask = P(95) ? IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS : R(8);
	a.fd = P(85) ? xfile[k] : P(50) ? -1 : o->d->ctx->cmd_fd;
	a.oflags = P(80) ? O_CREAT : P(50) ? O_CREAT | O_EXCL : (int)W64();
	if (o->d->xrcd[k])
		return NOOP;
	DESC("[%d] mask %#x fd %d oflags %#x", k, a.comp_mask, a.fd, a.oflags);
	o->valid = a.comp_mask == 3 && a.fd == xfile[k] && a.oflags == O_CREAT;
	o->d->xrcd[k] = ibv_open_xrcd(o->d->ctx, &a);
	return o->d->xrcd[k] ? 0 : errno;
}

/* ---- raw commands on stale, random and raw handles ---- */
#define RAWDEF(n, c, l, rsp, h, k) { n, IB_USER_VERBS_CMD_##c, l, rsp, h, k }
static const struct rawdef {
	const char *name;
	uint32_t cmd;
	uint16_t len, resp;
	uint8_t hoff;
	int8_t kills;			/* the kind it destroys, or -1 */
} rawdefs[] = {
	RAWDEF("raw_destroy_qp", DESTROY_QP, 16, 4, 8, K_QP),
	RAWDEF("raw_modify_qp", MODIFY_QP, sizeof(struct ib_uverbs_modify_qp), 0,
	       offsetof(struct ib_uverbs_modify_qp, qp_handle), -1),
	RAWDEF("raw_query_qp", QUERY_QP, 16, sizeof(struct ib_uverbs_query_qp_resp), 8, -1),
	RAWDEF("raw_destroy_cq", DESTROY_CQ, 16, 8, 8, K_CQ),
	RAWDEF("raw_resize_cq", RESIZE_CQ, 16, 8 + sizeof(struct softhca_resize_cq_resp), 8, -1),
	RAWDEF("raw_poll_cq", POLL_CQ, 16, 8 + 16 * sizeof(struct ib_uverbs_wc), 8, -1),
	RAWDEF("raw_req_notify_cq", REQ_NOTIFY_CQ, 8, 0, 0, -1),
	RAWDEF("raw_dereg_mr", DEREG_MR, 4, 0, 0, K_MR),
	RAWDEF("raw_rereg_mr", REREG_MR, sizeof(struct ib_uverbs_rereg_mr), 8, 8, -1),
	RAWDEF("raw_destroy_srq", DESTROY_SRQ, 16, 4, 8, K_SRQ),
	RAWDEF("raw_modify_srq", MODIFY_SRQ, 16, 0, 0, -1),
	RAWDEF("raw_query_srq", QUERY_SRQ, 16, sizeof(struct ib_uverbs_query_srq_resp), 8, -1),
	RAWDEF("raw_destroy_ah", DESTROY_AH, 4, 0, 0, K_AH),
	RAWDEF("raw_dealloc_pd", DEALLOC_PD, 4, 0, 0, K_PD),
	RAWDEF("raw_close_xrcd", CLOSE_XRCD, 4, 0, 0, K_XRCD),
	RAWDEF("raw_post_send", POST_SEND, 24, 4, 8, -1),
	RAWDEF("raw_post_recv", POST_RECV, 24, 4, 8, -1),
	RAWDEF("raw_post_srq_recv", POST_SRQ_RECV, 24, 4, 8, -1),
};

static void raw_forget(struct dev *d, uint32_t h)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(d->raw); i++)
		if (d->raw[i].kind && d->raw[i].h == h)
			d->raw[i].kind = 0;
	d->stale[d->nstale++ % ARRAY_SIZE(d->stale)] = h;
}

/* Work requests for the kernel's own post path (softhca refuses them). */
static size_t raw_post_body(struct op *o, uint32_t *q, int send)
{
	uint32_t wrs = P(80) ? R(4) : (uint32_t)WILD(), sges = P(80) ? R(5) : (uint32_t)WILD();
	uint32_t size = send ? sizeof(struct ib_uverbs_send_wr) : sizeof(struct ib_uverbs_recv_wr);
	uint64_t body;
	uint32_t i;

	q[3] = wrs;
	q[4] = sges;
	q[5] = P(85) ? size : R(256);
	for (i = 0; send && i < 4 && i * size + 24 + sizeof(struct ib_uverbs_send_wr) <= 1024; i++) {
		struct ib_uverbs_send_wr *w = (void *)((char *)q + 24 + i * size);

		w->num_sge = R(sges + 1);
		w->opcode = R(P(80) ? 7 : 256);
		w->wr.ud.ah = R(16);
	}
	body = (uint64_t)wrs * q[5] + (uint64_t)sges * sizeof(struct ib_uverbs_sge);
	return 24 + (body <= 1000 && P(90) ? (size_t)body : R(250) * 4);
}

static int op_raw(struct op *o)
{
	const struct rawdef *c = &rawdefs[o->arg];
	static uint64_t resp[512];
	uint64_t req[128];
	uint32_t h = pick_handle(o);
	size_t len = c->len;
	int err;

	memset(req, 0, sizeof(req));
	if (P(50))
		fill_random(o, req, sizeof(req));
	if (c->resp) {
		req[0] = (uintptr_t)resp;
		if (P(5)) {
			req[0] = WILD();
			o->badptr = 1;
		}
	}
	/* Never destroy a library object behind the library's back. */
	if (c->kills >= 0 && lib_holds(o->d, 0, NULL, h))
		h = ~h;
	memcpy((char *)req + c->hoff, &h, sizeof(h));
	/* Known bug 1: no QP into SQD, or an XRC_TGT could leave it to RTS. */
	if (c->cmd == IB_USER_VERBS_CMD_MODIFY_QP && !known_bugs &&
	    ((struct ib_uverbs_modify_qp *)req)->qp_state == IBV_QPS_SQD)
		((struct ib_uverbs_modify_qp *)req)->qp_state = IBV_QPS_ERR;
	if (c->cmd == IB_USER_VERBS_CMD_POLL_CQ)
		((uint32_t *)req)[3] = R(17);
	if (c->cmd == IB_USER_VERBS_CMD_REREG_MR)
		o->badptr = 1;		/* a random start */
	if (c->len == 24)
		len = raw_post_body(o, (uint32_t *)req, c->cmd == IB_USER_VERBS_CMD_POST_SEND);
	DESC("handle %u, %zu bytes", h, len);
	err = raw_cmd(o->d->ctx->cmd_fd, c->cmd, req, len, c->resp);
	if (!err && c->kills >= 0)
		raw_forget(o->d, h);
	if (!err && c->cmd == IB_USER_VERBS_CMD_RESIZE_CQ && req[0] == (uintptr_t)resp)
		o->d->offs[o->d->noffs++ % ARRAY_SIZE(o->d->offs)] = resp[1];
	return err;
}

/* ---- raw creates: objects the library never sees ---- */
static const struct rawmake {
	const char *name;
	uint32_t cmd;
	uint16_t len, core, drv;
	int kind;
} rawmakes[] = {
	{ "raw_create_cq", IB_USER_VERBS_CMD_CREATE_CQ, sizeof(struct ib_uverbs_create_cq),
	  sizeof(struct ib_uverbs_create_cq_resp), sizeof(struct softhca_create_cq_resp), K_CQ },
	{ "raw_create_qp", IB_USER_VERBS_CMD_CREATE_QP, sizeof(struct ib_uverbs_create_qp),
	  sizeof(struct ib_uverbs_create_qp_resp), sizeof(struct softhca_create_qp_resp), K_QP },
	{ "raw_create_srq", IB_USER_VERBS_CMD_CREATE_XSRQ, sizeof(struct ib_uverbs_create_xsrq),
	  sizeof(struct ib_uverbs_create_srq_resp), sizeof(struct softhca_create_srq_resp), K_SRQ },
	{ "raw_create_ah", IB_USER_VERBS_CMD_CREATE_AH, sizeof(struct ib_uverbs_create_ah),
	  sizeof(struct ib_uverbs_create_ah_resp), sizeof(struct softhca_create_ah_resp), K_AH },
	{ "raw_reg_mr", IB_USER_VERBS_CMD_REG_MR, sizeof(struct ib_uverbs_reg_mr),
	  sizeof(struct ib_uverbs_reg_mr_resp), 0, K_MR },
	{ "raw_alloc_pd", IB_USER_VERBS_CMD_ALLOC_PD, sizeof(struct ib_uverbs_alloc_pd),
	  sizeof(struct ib_uverbs_alloc_pd_resp), 0, K_PD },
	{ "raw_open_qp", IB_USER_VERBS_CMD_OPEN_QP, sizeof(struct ib_uverbs_open_qp),
	  sizeof(struct ib_uverbs_create_qp_resp), 0, K_QP },
	{ "raw_open_xrcd", IB_USER_VERBS_CMD_OPEN_XRCD, sizeof(struct ib_uverbs_open_xrcd),
	  sizeof(struct ib_uverbs_open_xrcd_resp), 0, K_XRCD },
};

/* A handle for a raw create to name: mostly a live library object's. */
static uint32_t some_handle(struct op *o, int kind)
{
	int n, k;
	void **s = slots(o->d, kind, &n);

	k = pick(o, s, (size_t)n, 1);
	return k >= 0 && P(70) ? lib_handle(kind, s[k]) : pick_handle(o);
}

static void raw_sane(struct op *o, const struct rawmake *m, void *req)
{
	struct ib_uverbs_create_cq *cq = req;
	struct ib_uverbs_create_qp *qp = req;
	struct ib_uverbs_create_xsrq *srq = req;
	struct ib_uverbs_create_ah *ah = req;
	struct ib_uverbs_reg_mr *mr = req;
	struct ib_uverbs_open_qp *oq = req;
	struct ib_uverbs_open_xrcd *x = req;
	uint64_t addr, len;

	switch (m->cmd) {
	case IB_USER_VERBS_CMD_CREATE_CQ:
		cq->cqe = 1 + R(256);
		cq->comp_vector = 0;
		break;
	case IB_USER_VERBS_CMD_CREATE_QP:
		qp->pd_handle = some_handle(o, K_PD);
		qp->send_cq_handle = some_handle(o, K_CQ);
		qp->recv_cq_handle = some_handle(o, K_CQ);
		qp->srq_handle = some_handle(o, K_SRQ);
		qp->max_send_wr = qp->max_recv_wr = 1 + R(64);
		qp->max_send_sge = qp->max_recv_sge = 1 + R(4);
		qp->max_inline_data = R(128);
		qp->qp_type = (uint8_t)R(12);
		qp->is_srq = (uint8_t)P(20);
		break;
	case IB_USER_VERBS_CMD_CREATE_XSRQ:
		srq->srq_type = R(3);
		srq->pd_handle = some_handle(o, K_PD);
		srq->max_wr = 1 + R(64);
		srq->max_sge = 1 + R(4);
		srq->srq_limit = srq->max_num_tags = 0;
		srq->xrcd_handle = some_handle(o, K_XRCD);
		srq->cq_handle = some_handle(o, K_CQ);
		break;
	case IB_USER_VERBS_CMD_CREATE_AH:
		ah->pd_handle = some_handle(o, K_PD);
		memset(&ah->attr, 0, sizeof(ah->attr));
		ah->attr.is_global = 1;
		ah->attr.port_num = 1;
		ah->attr.grh.hop_limit = 64;
		memcpy(ah->attr.grh.dgid, &S->gid[R(2)], 16);
		break;
	case IB_USER_VERBS_CMD_REG_MR:
		if (pick_mem(o, &addr, &len)) {
			mr->start = mr->hca_va = addr;
			mr->length = len;
		}
		mr->pd_handle = some_handle(o, K_PD);
		mr->access_flags = 1 | R(8) << 1;
		break;
	case IB_USER_VERBS_CMD_OPEN_QP:
		oq->pd_handle = some_handle(o, K_XRCD);
		oq->qpn = board_num(o, BK_QP + IBV_QPT_XRC_RECV, 90);
		oq->qp_type = IBV_QPT_XRC_RECV;
		break;
	case IB_USER_VERBS_CMD_OPEN_XRCD:
		x->fd = (uint32_t)xfile[R(2)];
		x->oflags = O_CREAT;
		break;
	}
}

static int op_raw_create(struct op *o)
{
	const struct rawmake *m = &rawmakes[o->arg];
	static uint64_t resp[64];
	uint64_t req[64];
	size_t len = m->len, rlen = m->core + m->drv;
	struct dev *d = o->d;
	unsigned int slot;
	int err;

	memset(req, 0, sizeof(req));
	if (P(40))
		fill_random(o, req, len);
	if (P(60))
		raw_sane(o, m, req);
	if (m->cmd == IB_USER_VERBS_CMD_CREATE_CQ)	/* its user_handle is */
		((struct ib_uverbs_create_cq *)req)->comp_channel = -1;	/* no pointer */
	if (m->cmd == IB_USER_VERBS_CMD_REG_MR || m->cmd == IB_USER_VERBS_CMD_OPEN_XRCD)
		o->badptr = 1;			/* any start, any fd */
	if (P(20))
		len += 8 * (1 + R(2));		/* driver data: refused unless zero */
	if (P(15))
		rlen = P(50) ? m->core : R(rlen / 4) * 4;
	req[0] = (uintptr_t)resp;
	if (P(5)) {
		req[0] = WILD();
		o->badptr = 1;
	}
	DESC("%zu bytes, response %zu at %#llx", len, rlen, ULL(req[0]));
	err = raw_cmd(d->ctx->cmd_fd, m->cmd, req, len, rlen);
	if (err || req[0] != (uintptr_t)resp || rlen < m->core)
		return err;
	/* Keep at most 16: the oldest goes first. */
	slot = d->nraw++ % ARRAY_SIZE(d->raw);
	if (d->raw[slot].kind)
		raw_destroy(d->ctx->cmd_fd, d->raw[slot].kind - 1, d->raw[slot].h);
	d->raw[slot].kind = m->kind + 1;
	d->raw[slot].h = (uint32_t)resp[0];
	if (m->drv && rlen == (size_t)m->core + m->drv)
		d->offs[d->noffs++ % ARRAY_SIZE(d->offs)] = resp[m->core / 8];
	return 0;
}

/* A mapping of the uverbs fd at an offset seen in a response, or any. */
static int op_mmap(struct op *o)
{
	struct dev *d = o->d;
	int k = (int)R(ARRAY_SIZE(d->map)), prot = P(80) ? RW : (int)R(8);
	int flags = P(90) ? MAP_SHARED : MAP_PRIVATE;
	uint64_t off = P(60) ? d->offs[R(ARRAY_SIZE(d->offs))] :
		       P(50) ? (uint64_t)R(64) * 4096 : WILD();
	size_t len = P(60) ? 4096 * (1 + R(4)) : (size_t)WILD();
	void *page = (void *)(uintptr_t)to_shca_ctx(d->ctx)->ctx_page;
	void *p;

	if (d->map[k].p)
		munmap(d->map[k].p, d->map[k].len);
	d->map[k].p = NULL;
	DESC("[%d] offset %#llx len %#zx prot %d flags %#x", k, ULL(off), len, prot, flags);
	if (!mprotect(page, 4096, RW))
		o->broken = "the context page could be made writable";
	p = mmap(NULL, len, prot, flags, d->ctx->cmd_fd, (off_t)off);
	if (p == MAP_FAILED)
		return errno;
	d->map[k].p = p;
	d->map[k].len = len;
	if (prot & PROT_WRITE)
		((volatile uint32_t *)p)[R(1024)] = (uint32_t)W64();
	else if (prot & PROT_READ)
		(void)((volatile uint32_t *)p)[R(1024)];
	return 0;
}

static int op_query(struct op *o)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid g;
	uint16_t pkey;
	int what = (int)R(4), port = P(85) ? 1 : (int)R(256);
	int idx = P(70) ? 0 : (int)R(P(50) ? 300 : 65536);

	DESC("%d port %d index %d", what, port, idx);
	o->valid = o->dev == 0 && port == 1 && !idx;
	switch (what) {
	case 0: return ibv_query_device(o->d->ctx, &da);
	case 1: return ibv_query_port(o->d->ctx, (uint8_t)port, &pa);
	case 2: return ibv_query_gid(o->d->ctx, (uint8_t)port, idx, &g) ? errno : 0;
	default: return ibv_query_pkey(o->d->ctx, (uint8_t)port, idx, &pkey) ? errno : 0;
	}
}

/* Arena pages replaced or dropped under the MRs that pin the old ones. */
static int op_remap(struct op *o)
{
	size_t off = (size_t)R(ARENA / 4096) * 4096, len = 4096 * (1 + R(64));

	if (len > ARENA - off)
		len = ARENA - off;
	DESC("%#zx+%#zx", off, len);
	if (P(50))
		return madvise(arena + off, len, MADV_DONTNEED) ? errno : 0;
	return mmap(arena + off, len, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		    -1, 0) == MAP_FAILED ? errno : 0;
}

/* A child uses the inherited context: a poll, a query, a mapping. */
static int op_fork(struct op *o)
{
	int k = LIVE(o->d, cq), st;
	uint64_t req[2] = { 0, 0 }, resp[64];
	struct ibv_wc wc[4];
	pid_t pid;

	DESC("child: poll cq %d, query_qp, mmap", k);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return errno;
	if (!pid) {
		if (k >= 0)
			ibv_poll_cq(o->d->cq[k], 4, wc);
		req[0] = (uintptr_t)resp;
		req[1] = R(16);
		raw_cmd(o->d->ctx->cmd_fd, IB_USER_VERBS_CMD_QUERY_QP, req, 16,
			sizeof(struct ib_uverbs_query_qp_resp));
		mmap(NULL, 4096, RW, MAP_SHARED, o->d->ctx->cmd_fd,
		     (off_t)o->d->offs[R(ARRAY_SIZE(o->d->offs))]);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) < 0)
		return errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		o->broken = "the forked child did not exit cleanly";
	return 0;
}

/* Our numbers on the board again (other workers overwrite them). */
static int op_publish(struct op *o)
{
	int k = LIVE(o->d, qp), m = LIVE(o->d, mr);

	if (k < 0 && m < 0)
		return NOOP;
	DESC("qp %d mr %d", k, m);
	if (k >= 0)
		board_put(&o->r, BK_QP + o->d->qp[k]->qp_type, o->dev,
			  o->d->qp[k]->qp_num, 0, 0, 0);
	if (m >= 0)
		publish_mr(o, o->dev, o->d->mr[m]);
	return 0;
}

/* Raw commands take their names from their own tables (op_name()). */
#define RAW(i) { NULL, op_raw, i, 2 }
#define MAKE(i) { NULL, op_raw_create, i, 2 }
static const struct opdef {
	const char *name;
	int (*fn)(struct op *o);
	int arg, weight;
} ops[] = {
	{ "open_device", op_open_dev, 0, 2 }, { "close_device", op_close_dev, 0, 1 },
	{ "alloc_pd", op_alloc_pd, 0, 2 }, { "dealloc_pd", op_destroy, K_PD, 2 },
	{ "create_cq", op_create_cq, 0, 5 }, { "destroy_cq", op_destroy, K_CQ, 2 },
	{ "resize_cq", op_resize_cq, 0, 3 }, { "poll_cq", op_poll_cq, 0, 12 },
	{ "req_notify_cq", op_notify_cq, 0, 3 }, { "get_events", op_get_events, 0, 4 },
	{ "create_comp_channel", op_create_ch, 0, 1 },
	{ "destroy_comp_channel", op_destroy_ch, 0, 1 },
	{ "reg_mr", op_reg_mr, 0, 6 }, { "rereg_mr", op_rereg_mr, 0, 3 },
	{ "dereg_mr", op_destroy, K_MR, 3 },
	{ "create_srq", op_create_srq, 0, 4 }, { "modify_srq", op_modify_srq, 0, 2 },
	{ "query_srq", op_query_srq, 0, 1 }, { "destroy_srq", op_destroy, K_SRQ, 2 },
	{ "post_srq_recv", op_post_srq_recv, 0, 6 },
	{ "create_qp", op_create_qp, 0, 8 }, { "create_xrc_tgt", op_create_tgt, 0, 2 },
	{ "open_qp", op_open_qp, 0, 2 }, { "destroy_qp", op_destroy, K_QP, 4 },
	{ "connect_qp", op_connect, 0, 8 }, { "connect_pair", op_connect_pair, 0, 4 },
	{ "modify_qp", op_modify_qp, 0, 5 }, { "query_qp", op_query_qp, 0, 2 },
	{ "post_send", op_post_send, 0, 14 }, { "post_recv", op_post_recv, 0, 8 },
	{ "ring_wqe", op_ring_wqe, 0, 5 }, { "scribble", op_scribble, 0, 3 },
	{ "create_ah", op_create_ah, 0, 3 }, { "destroy_ah", op_destroy, K_AH, 2 },
	{ "open_xrcd", op_open_xrcd, 0, 2 }, { "close_xrcd", op_destroy, K_XRCD, 1 },
	{ "mmap", op_mmap, 0, 2 }, { "query", op_query, 0, 2 },
	{ "remap_arena", op_remap, 0, 1 }, { "fork", op_fork, 0, 1 },
	{ "publish", op_publish, 0, 2 },
	RAW(0), RAW(1), RAW(2), RAW(3), RAW(4), RAW(5), RAW(6), RAW(7), RAW(8),
	RAW(9), RAW(10), RAW(11), RAW(12), RAW(13), RAW(14), RAW(15), RAW(16),
	RAW(17), MAKE(0), MAKE(1), MAKE(2), MAKE(3), MAKE(4), MAKE(5), MAKE(6),
	MAKE(7),
};

static const char *op_name(uint32_t k)
{
	if (k >= ARRAY_SIZE(ops))
		return "?";
	if (ops[k].name)
		return ops[k].name;
	return ops[k].fn == op_raw ? rawdefs[ops[k].arg].name : rawmakes[ops[k].arg].name;
}

static int pick_op(struct op *o)
{
	static int total;
	int k, x;

	if (!total)
		for (k = 0; k < (int)ARRAY_SIZE(ops); k++)
			total += ops[k].weight;
	x = (int)R(total);
	for (k = 0; x >= ops[k].weight; k++)
		x -= ops[k].weight;
	return k;
}

/* ---- a worker ---- */
static int dev_open(int i)
{
	struct dev *d = &D[i];

	memset(d, 0, sizeof(*d));
	d->gen = LOAD(S->link_gen);
	errno = ENODEV;
	d->ctx = open_by_name(devname[i]);
	if (!d->ctx)
		return errno;
	fcntl(d->ctx->async_fd, F_SETFL, O_NONBLOCK);
	if (!ibv_query_gid(d->ctx, 1, 0, &d->gid))
		memcpy(&S->gid[i], &d->gid, sizeof(d->gid));
	d->pd[0] = ibv_alloc_pd(d->ctx);
	return d->pd[0] ? 0 : errno;
}

/* Destroy everything (raw objects first, users before what they use). */
static void dev_close(struct dev *d)
{
	static const int order[] = { K_QP, K_SRQ, K_AH, K_MR, K_CQ, K_XRCD, K_PD };
	size_t i, j;
	void **s;
	int n, k;

	d->dead = 0;
	if (!d->ctx)
		return;
	for (i = 0; i < ARRAY_SIZE(order); i++)
		for (j = 0; j < ARRAY_SIZE(d->raw); j++)
			if (d->raw[j].kind == order[i] + 1)
				raw_destroy(d->ctx->cmd_fd, order[i], d->raw[j].h);
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		s = slots(d, order[i], &n);
		for (k = 0; k < n; k++, ADD(S->w[W].beat, 1))
			if (s[k] && lib_destroy(order[i], s[k]))
				bury(s[k]);
	}
	for (i = 0; i < ARRAY_SIZE(d->ch); i++)
		if (d->ch[i] && ibv_destroy_comp_channel(d->ch[i]))
			bury(d->ch[i]);
	for (i = 0; i < ARRAY_SIZE(d->map); i++)
		if (d->map[i].p)
			munmap(d->map[i].p, d->map[i].len);
	ibv_close_device(d->ctx);
	memset(d, 0, sizeof(*d));
}

static void verdict(struct op *o, int k, uint64_t i, int err)
{
	const char *why = o->broken;
	uint32_t gen;

	if (!why && !err)
		return;
	if (!why) {
		/* The link went since the open, or is going (odd: deleting). */
		gen = LOAD(S->link_gen);
		if (err == EIO && (o->devs & 2) && (gen != D[1].gen || (gen & 1))) {
			D[1].dead = 1;	/* start it afresh */
			return;
		}
		if (err == EIO)
			why = "EIO from a device whose link was not deleted";
		else if (err == EFAULT && !o->badptr)
			why = "EFAULT though every pointer was valid";
		else if (o->valid)
			why = "a call with valid arguments failed";
		else
			return;
	}
	printf("FAIL: %s: worker %d (seed %#llx), operation #%llu %s %s(%s): %s "
	       "(link generation %u at open, %u now)\n",
	       why, W, ULL(wseed), ULL(i), devname[o->dev], op_name((uint32_t)k),
	       o->desc, errname(err), D[1].gen, LOAD(S->link_gen));
	fflush(stdout);
	klog("<3>fuzz: worker %d failed at operation #%llu\n", W, ULL(i));
	_exit(3);
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

static void worker_run(uint64_t seed, uint64_t nops)
{
	struct wstat *w = &S->w[W];
	struct recent *rc;
	uint64_t i;
	int k, err;

	wseed = seed;
	worker_memory();
	dev_open(0);
	dev_open(1);
	for (i = 0; i < nops && !LOAD(S->stop); i++, ADD(w->beat, 1)) {
		struct op op = { .r = mix64(seed ^ mix64(i + 1)) }, *o = &op;

		k = pick_op(o);
		o->arg = ops[k].arg;
		o->dev = (int)R(2);
		o->d = &D[o->dev];
		o->devs = 1 << o->dev;
		if (D[1].dead)
			dev_close(&D[1]);
		rc = &w->recent[i % NRECENT];
		o->desc = rc->desc;
		o->desc[0] = 0;
		STORE(rc->op, (uint32_t)k);
		STORE(rc->dev, (uint32_t)o->dev);
		STORE(rc->idx, i);
		STORE(w->cur, i);
		err = o->d->ctx || ops[k].fn == op_open_dev ? ops[k].fn(o) : NOOP;
		if (trace)
			printf("#%llu %s %s(%s): %s\n", ULL(i), devname[o->dev],
			       op_name((uint32_t)k), o->desc,
			       err == NOOP ? "skipped" : errname(err));
		if (err == NOOP) {
			snprintf(o->desc, DESCLEN, "no-op");
			continue;
		}
		outcome(k, err);
		ADD(S->ops, 1);
		verdict(o, k, i, err);
	}
	dev_close(&D[0]);
	dev_close(&D[1]);
}

/* ---- the parent ---- */
static uint64_t run_seed;
static int nw, nfail;
static double seen_t[MAXW], hung_t[MAXW];
static uint64_t seen[MAXW];
static pid_t linker;
static double linker_t;
static int readds, gens;
static const char *netdev2;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void spawn(int i)
{
	struct wstat *w = &S->w[i];
	pid_t pid;

	memset(w->recent, 0, sizeof(w->recent));
	w->seed = mix64(run_seed ^ mix64((uint64_t)i << 32 | (uint32_t)w->gen));
	w->killed = 0;
	w->cur = 0;
	seen[i] = LOAD(w->beat);
	seen_t[i] = now_s();
	hung_t[i] = 0;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		W = i;
		worker_run(w->seed, UINT64_MAX);
		fflush(NULL);
		exit(0);
	}
	w->pid = pid;
	gens++;
	klog("<3>fuzz: worker %d generation %d pid %d seed %#llx\n", i, w->gen, pid,
	     ULL(w->seed));
}

/* The kernel side of a stuck process: its state, wait channel and stack. */
static void show_task(pid_t pid)
{
	static const char *const files[] = { "status", "wchan", "stack" };
	char path[64], line[256];
	size_t i;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, files[i]);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (i || !strncmp(line, "State:", 6))
				printf("    %s: %s%s", files[i], line,
				       strchr(line, '\n') ? "" : "\n");
		if (f)
			fclose(f);
	}
}

static void report(int i, const char *what)
{
	struct wstat *w = &S->w[i];
	uint64_t cur = LOAD(w->cur), j;

	nfail++;
	printf("FAIL: %s: worker %d generation %d, seed %#llx (run FUZZ_SEED=%llu), "
	       "at operation #%llu\n", what, i, w->gen, ULL(w->seed),
	       ULL(run_seed), ULL(cur));
	printf("  alone: fuzz replay %#llx %llu; its last operations:\n",
	       ULL(w->seed), ULL(cur + 1));
	for (j = cur + 1 > NRECENT ? cur + 1 - NRECENT : 0; j <= cur; j++) {
		struct recent *r = &w->recent[j % NRECENT];

		if (LOAD(r->idx) == j)
			printf("  #%llu %s %s(%s)\n", ULL(j), devname[r->dev & 1],
			       op_name(r->op), r->desc);
	}
}

static void linker_end(int st)
{
	linker = 0;
	if (WIFEXITED(st) && !WEXITSTATUS(st)) {
		klog("<3>fuzz: %s added again\n", devname[1]);
		readds++;
		return;
	}
	nfail++;
	printf("FAIL: rdma link %s %s failed (status %#x, run FUZZ_SEED=%llu)\n",
	       WIFEXITED(st) && WEXITSTATUS(st) == 2 ? "add" : "delete",
	       devname[1], st, ULL(run_seed));
}

static void reap(void)
{
	char what[96];
	pid_t pid;
	int st, i;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid == linker) {
			linker_end(st);
			continue;
		}
		for (i = 0; i < nw && S->w[i].pid != pid; i++)
			;
		if (i == nw)
			continue;
		S->w[i].pid = 0;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && S->w[i].killed)
			;
		else if (WIFEXITED(st) && !WEXITSTATUS(st) && LOAD(S->stop))
			;
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
			report(i, "the worker's check failed (above)");
		else {
			if (WIFSIGNALED(st))
				snprintf(what, sizeof(what), "killed by signal %d (%s)",
					 WTERMSIG(st), strsignal(WTERMSIG(st)));
			else
				snprintf(what, sizeof(what), "exited with status %d "
					 "(a sanitizer report above?)", WEXITSTATUS(st));
			report(i, what);
		}
		if (!LOAD(S->stop)) {
			S->w[i].gen++;
			spawn(i);
		}
	}
}

/* A worker whose beat stands still for HANG_SECS is reported and killed. */
static void watchdog(double now)
{
	int i;

	for (i = 0; i < nw; i++) {
		struct wstat *w = &S->w[i];

		if (!w->pid)
			continue;
		if (LOAD(w->beat) != seen[i]) {
			seen[i] = LOAD(w->beat);
			seen_t[i] = now;
		} else if (!hung_t[i] && now - seen_t[i] > HANG_SECS) {
			report(i, "no progress for 30 s");
			show_task(w->pid);
			hung_t[i] = now;
			w->killed = 1;
			kill(w->pid, SIGKILL);
		} else if (hung_t[i] > 0 && now - hung_t[i] > 10) {
			printf("FAIL: worker %d (pid %d) does not die: stuck in the kernel\n",
			       i, w->pid);
			show_task(w->pid);
			hung_t[i] = -1;
			nfail++;
		}
	}
	if (linker && linker_t > 0 && now - linker_t > HANG_SECS) {
		printf("FAIL: rdma link delete/add of %s hangs (run FUZZ_SEED=%llu)\n",
		       devname[1], ULL(run_seed));
		show_task(linker);
		linker_t = -1;
		nfail++;
	}
}

static int run_prog(char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       !WEXITSTATUS(st) ? 0 : -1;
}

static int link_add(void)
{
	char *add[] = { "rdma", "link", "add", (char *)devname[1], "type",
			"softhca", "netdev", (char *)netdev2, NULL };

	return run_prog(add);
}

/* The second device's link deleted, and @pause_ms later added again. */
static void link_cycle(unsigned int pause_ms)
{
	char *del[] = { "rdma", "link", "delete", (char *)devname[1], NULL };

	__atomic_add_fetch(&S->link_gen, 1, __ATOMIC_SEQ_CST);
	klog("<3>fuzz: deleting %s\n", devname[1]);
	fflush(NULL);
	linker = fork();
	if (linker == 0) {
		if (run_prog(del))
			_exit(1);
		/* A context opened while the delete ran was the old device's. */
		__atomic_add_fetch(&S->link_gen, 1, __ATOMIC_SEQ_CST);
		klog("<3>fuzz: %s deleted\n", devname[1]);
		usleep(pause_ms * 1000);
		_exit(link_add() ? 2 : 0);
	}
	linker_t = now_s();
}

static int write_outcomes(const char *path)
{
	FILE *f = fopen(path, "w");
	int m = 0, e;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(ops); k++)
		for (e = 0; e < NERR; e++) {
			if (!S->outcome[k][e])
				continue;
			m++;
			if (f)
				fprintf(f, "%s:%s %llu\n", op_name((uint32_t)k),
					e == NERR - 1 ? "other" : errname(e),
					ULL(S->outcome[k][e]));
		}
	if (f)
		fclose(f);
	return m;
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static int alive(void)
{
	int i, n = linker > 0;

	for (i = 0; i < nw; i++)
		n += S->w[i].pid > 0;
	return n;
}

static int run(void)
{
	uint64_t pk, pl;
	double now, end, next_kill, next_link, stop_t;
	int kills = 0, v, m;

	run_seed = strtoull(env_or("FUZZ_SEED", "0"), NULL, 0);
	if (!run_seed)
		run_seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	nw = atoi(env_or("FUZZ_WORKERS", "3"));
	nw = nw < 1 ? 1 : nw > MAXW ? MAXW : nw;
	now = now_s();
	end = now + atof(env_or("FUZZ_SECS", "90"));
	printf("fuzz: FUZZ_SEED=%llu, %d workers, %s s, %s and %s (link of %s: %s)\n",
	       ULL(run_seed), nw, env_or("FUZZ_SECS", "90"), devname[0],
	       devname[1], devname[1], netdev2);
	fflush(stdout);
	klog("<3>fuzz: FUZZ_SEED=%llu\n", ULL(run_seed));
	pk = mix64(run_seed ^ 1);		/* kill times and victims */
	pl = mix64(run_seed ^ 2);		/* link times and pauses */
	for (v = 0; v < nw; v++)
		spawn(v);
	next_kill = now + 0.2 + rnd(&pk, 2300) / 1e3;
	next_link = now + 3 + rnd(&pl, 9000) / 1e3;
	while ((now = now_s()) < end) {
		reap();
		if (now >= next_kill) {
			v = (int)rnd(&pk, (uint64_t)nw);
			if (S->w[v].pid > 0 && !hung_t[v]) {
				S->w[v].killed = 1;
				kill(S->w[v].pid, SIGKILL);
				kills++;
			}
			next_kill = now + 0.2 + rnd(&pk, 2300) / 1e3;
		}
		if (now >= next_link && !linker) {
			link_cycle(100 + rnd(&pl, 2000));
			next_link = now + 4 + rnd(&pl, 12000) / 1e3;
		}
		watchdog(now);
		usleep(20000);
	}
	STORE(S->stop, 1);
	stop_t = now_s();
	while (alive()) {
		reap();
		watchdog(now = now_s());
		if (now - stop_t > 2 * HANG_SECS) {
			printf("FAIL: %d processes still run %d s after the stop\n",
			       alive(), 2 * HANG_SECS);
			nfail++;
			break;
		}
		usleep(20000);
	}
	if (access("/sys/class/infiniband/sh1", F_OK) && strcmp(devname[1], "sh1") == 0)
		link_add();
	m = write_outcomes(env_or("FUZZ_OUT", "/tmp/fuzz-outcomes.txt"));
	printf("NOTE: fuzz: %llu operations, %d distinct (command, errno) outcomes, "
	       "%d kills, %d link re-adds\n", ULL(S->ops), m, kills, readds);
	printf("NOTE: fuzz: FUZZ_SEED=%llu, %d worker generations, %llu completions "
	       "polled (%llu successful)\n", ULL(run_seed), gens, ULL(S->wc),
	       ULL(S->wc_ok));
	if (nfail)
		printf("fuzz: %d failures; FUZZ_SEED=%llu runs it again\n", nfail,
		       ULL(run_seed));
	return nfail ? 1 : 0;
}

int main(int argc, char **argv)
{
	int k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	devname[0] = env_or("SOFTHCA_DEV", "sh0");
	devname[1] = env_or("SOFTHCA_DEV2", "sh1");
	netdev2 = env_or("FUZZ_NETDEV2", "sv1");
	known_bugs = atoi(env_or("FUZZ_KNOWN_BUGS", "0"));
	S = mmap(NULL, sizeof(*S), RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED)
		return 2;
	memset(S, 0, sizeof(*S));
	for (k = 0; k < 2; k++)
		snprintf(xpath[k], sizeof(xpath[k]), "/tmp/fuzz-xrcd.%d.%d", getpid(), k);
	if (argc > 3 && !strcmp(argv[1], "replay")) {
		trace = 1;
		worker_run(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
		k = 0;
	} else if (argc > 1) {
		fprintf(stderr, "usage: %s [replay SEED N]\n", argv[0]);
		return 2;
	} else {
		k = run();
	}
	unlink(xpath[0]);
	unlink(xpath[1]);
	return k;
}
