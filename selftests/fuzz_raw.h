/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The verbs fuzzer's operations below the library (fuzz.c): WQEs written
 * into the rings as their producer, random words over ring headers and
 * slots, raw ib_uverbs commands on stale, random and raw handles, objects
 * created by raw commands (the library never sees them), mappings of the
 * uverbs fd, arena pages replaced under the MRs.  After fuzz_worker.h.
 */
#ifndef SOFTHCA_SELFTEST_FUZZ_RAW_H
#define SOFTHCA_SELFTEST_FUZZ_RAW_H

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
	if (c->cmd == IB_USER_VERBS_CMD_POLL_CQ)
		((uint32_t *)req)[3] = R(17);
	if (c->cmd == IB_USER_VERBS_CMD_REREG_MR)
		o->badptr = 1;		/* a random start */
	if (c->len == 24)
		len = raw_post_body(o, (uint32_t *)req, c->cmd == IB_USER_VERBS_CMD_POST_SEND);
	DESC("handle %u, %zu bytes", h, len);
	err = raw_cmd(o->d->ctx->cmd_fd, c->cmd, req, len, c->resp);
	/*
	 * ib_uverbs destroys first and writes the response last: a destroy
	 * whose response pointer is wild fails with EFAULT, its object gone
	 * all the same.  Its handle is free for the next object made, which
	 * may be the library's: evicting the raw object later would destroy
	 * that one (a library CQ's handle naming the next PD: create_qp's
	 * EINVAL, seed 1795531633581712).
	 */
	if ((!err || (err == EFAULT && o->badptr)) && c->kills >= 0)
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

#endif
